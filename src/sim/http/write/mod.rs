//! Writes: create, update (PUT), patch and delete, on the main resource and its /status and
//! /scale subresources, each honouring `dryRun=All`. Each stored change bumps the global
//! resourceVersion once; a dry run or a change that changes nothing stores nothing.

mod body;
mod create;
mod defaults;
mod delete;
mod eviction;
mod field_validation;
mod managed;
mod media_type;
mod outcome;
mod patch;
mod preconditions;
mod proto;
mod replace;
mod scale;
mod update;
mod validate;

pub(crate) use create::create;
pub(crate) use delete::{delete, delete_collection};
pub(crate) use eviction::evict;
pub(crate) use patch::patch;
/// A protobuf body as JSON, for the reviews kubectl sends as protobuf.
pub(crate) use proto::decode as decode_protobuf;
pub(crate) use replace::replace;
pub(crate) use scale::get_scale;
