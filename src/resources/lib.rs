//! What kscope keeps of each kind: compact projections decoded straight from the API server's
//! JSON, so that a store holds ~1 KB per pod instead of a full k8s-openapi `Pod` (~81 KB).
//!
//! Each projection keeps the fields the tables, indexes and drill-downs need, packs its strings
//! into one buffer (see `packed`), and computes kubectl's derived columns (pod STATUS, READY,
//! RESTARTS; node STATUS and ROLES) once, at decode time. The full object is fetched with a GET
//! when a person opens it.

#[macro_use]
mod macros;

pub mod decode;
mod field_index;
mod generic;
mod kind;
mod meta;
mod node;
mod packed;
mod pod;
mod projection;
mod resource;
mod resource_kind;
pub mod secret;
mod time;
mod workloads;

/// What a field index or printer column reads of an object, as JSON (the decode keeps only
/// that much).
pub use field_index::reached as field_index_reached;
pub use field_index::{FieldIndex, FieldIndexes, Reach, decoding_with};
pub use generic::{
    ClientColumns, GenericObject, Health, HealthCondition, NIL_CELL, PrinterColumn,
    PrinterColumnCompiler, decoding_with_columns,
};
pub use kind::{ApiResource, ColumnDefinition, Kind};
pub use meta::{Container, ContainerResources, OwnerRef};
pub use node::{ConditionStatus, Namespace, Node};
pub use packed::{LAST_APPLIED_ANNOTATION, Labels};
pub use pod::Pod;
pub use projection::{DecodeError, decode, decode_object};
pub use resource::{BuiltIn, KubeResource};
pub use resource_kind::{PathError, ResourceKind, UnknownResource};
pub use secret::Secret;
pub use time::{Timestamp, TimestampError};
pub use workloads::{Deployment, ReplicaSet, Replicas};
