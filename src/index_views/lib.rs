//! From stores to what people see: index definitions, queries over indexes, row models.
//! Nothing here draws; nothing here talks to the network.

pub mod columns;
pub mod definitions;
pub mod describe;
pub mod detail;
pub mod fleet;
pub mod fuzzy;
pub mod hotloops;
pub mod jsonpath;
pub mod live;
mod managed_fields;
pub mod metrics;
pub mod mixed;
pub mod owner_index;
pub mod ownership;
pub mod printer_columns;
pub mod prometheus_text;
pub mod query;
pub mod reconciles;
pub mod registry;
pub mod sorted;
pub mod timeline;
pub mod usage;
