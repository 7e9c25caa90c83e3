//! Protobuf request bodies, as client-go sends built-in kinds (`kubectl create namespace`,
//! `create deployment`, `create secret`...): the `k8s\0` envelope around a `runtime.Unknown`,
//! whose `raw` bytes are decoded field by field against [`schema`] into the JSON the rest of
//! the server works on. A field the schema does not know is refused rather than dropped, so
//! nothing is stored that differs from what the client sent.

mod decode;
mod error;
mod kinds;
mod message;
mod schema;
mod unknown;
mod wire;

#[cfg(test)]
mod tests;

pub(crate) use decode::decode;
// schema.rs is generated with `use super::{Field, Label, Message, Ty}`.
use message::{Field, Label, Message, Ty};
pub(super) use unknown::{prune_unknown, unknown_fields};
