//! `kubectl describe` for the object a person opened: the same sections, fields and layout
//! kubectl prints (ported from kubectl's describers, for the kinds people describe daily, and
//! its generic describer for every other kind), ending with the object's Events.
//!
//! Describing needs more than the object: its Events, and for some kinds the objects kubectl
//! also reads (a Deployment's ReplicaSets, a ReplicaSet's pods, a node's pods, a Service's
//! EndpointSlices). [`related`] says which lists to GET; the caller fetches them and calls
//! [`describe`] with what came back. A Secret's values are never printed: only their sizes.

mod apps;
mod context;
mod describer;
mod fetch;
mod generic;
mod node;
mod pod;
mod printer;
mod service;
mod sources;
mod writer;

#[cfg(test)]
mod tests;

pub use describer::describe;
pub use fetch::fetch_described;
pub use sources::{DescribeSources, ListRequest, events_request, related};
