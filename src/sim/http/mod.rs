//! The HTTP face of the sim: authentication, URL parsing into Kubernetes request targets,
//! and dispatch to list, watch, get and the writes.

mod aggregated;
mod crd_table;
mod discovery;
mod exec;
mod list;
mod logs;
mod metrics;
mod openapi;
mod params;
mod pod_ports;
mod portforward;
mod portforward_spdy;
mod printing;
mod proxy;
mod review;
mod router;
pub(crate) mod status;
mod table;
mod table_kinds;
mod target;
mod watch;
pub(crate) mod write;

pub(crate) use router::router;
