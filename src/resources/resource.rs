//! The traits every projection implements: what the stores, indexes and tables read of any
//! kind, and the compile-time kind of a hand-written projection.

use std::fmt::Debug;

use serde::de::DeserializeOwned;

use kscope_informers::object::Object;

use crate::resource_kind::ResourceKind;
use crate::{Labels, Timestamp};

/// A kind kscope lists and watches, stored as its projection.
pub trait KubeResource: Object + DeserializeOwned + Clone + Debug {
    fn uid(&self) -> &str;

    /// `metadata.labels`, sorted by key.
    fn labels(&self) -> Labels<'_>;

    /// `metadata.creationTimestamp`.
    fn created(&self) -> Option<Timestamp>;

    /// The managing controller as `kind/name`, for kinds that keep owner references.
    fn controller_owner_key(&self) -> Option<&str> {
        None
    }

    /// The managing controller as (kind, name), kept apart as the object has them.
    fn controller_owner(&self) -> Option<(&str, &str)> {
        None
    }

    /// kubectl's AGE column: time since creation, or `<unknown>`.
    fn age(&self, now: Timestamp) -> String {
        match self.created() {
            Some(created) => created.human_since(now),
            None => "<unknown>".to_owned(),
        }
    }
}

/// A projection written for one kind, which it knows at compile time.
pub trait BuiltIn: KubeResource {
    /// Which kind this is: its API coordinates and URL paths.
    const KIND: ResourceKind;
}
