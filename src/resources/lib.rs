//! What kscope keeps of each kind: compact projections decoded straight from the API server's
//! JSON, so that a store holds ~1 KB per pod instead of a full k8s-openapi `Pod` (~81 KB).
//!
//! Each projection keeps the fields the tables, indexes and drill-downs need, packs its strings
//! into one buffer (see `packed`), and computes kubectl's derived columns (pod STATUS, READY,
//! RESTARTS; node STATUS and ROLES) once, at decode time. The full object is fetched with a GET
//! when a person opens it.

use std::fmt::{self, Debug};
use std::str::FromStr;

use serde::de::DeserializeOwned;

use kscope_informers::object::Object;

/// Implements `Object`, `KubeResource`, `Deserialize` and `heap_bytes` for a projection with
/// the shared scalar slots, a `strings: Packed<_>` field, a `LABELS` section constant in scope,
/// a `created` field and a `from_wire` fn; `owners` also forwards its `controller_owner_key`,
/// and `labels = FIELD` reads the labels from that field's packed strings instead.
macro_rules! object_impls {
    // Labels (section `LABELS`) in the packed strings of field `$shared` rather than `strings`.
    ($ty:ty, $kind:expr, owners, labels = $shared:ident) => {
        object_impls!(@object $ty, $shared, {
            fn controller_owner_key(&self) -> Option<&str> {
                <$ty>::controller_owner_key(self)
            }
        });
        impl $ty {
            /// Heap bytes of this projection's strings, its own and those it shares (its
            /// inline size is `size_of::<Self>()`).
            pub fn heap_bytes(&self) -> usize {
                self.strings.heap_bytes() + self.$shared.heap_bytes()
            }
        }

        impl $crate::BuiltIn for $ty {
            const KIND: $crate::ResourceKind = $kind;
        }
    };
    ($ty:ty, $kind:expr, owners) => {
        object_impls!($ty, $kind, {
            fn controller_owner_key(&self) -> Option<&str> {
                <$ty>::controller_owner_key(self)
            }
        });
    };
    ($ty:ty, $kind:expr) => {
        object_impls!($ty, $kind, {});
    };
    ($ty:ty, $kind:expr, { $($extra:tt)* }) => {
        object_impls!(@object $ty, { $($extra)* });

        impl $crate::BuiltIn for $ty {
            const KIND: $crate::ResourceKind = $kind;
        }
    };
    (@object $ty:ty, { $($extra:tt)* }) => {
        object_impls!(@object $ty, strings, { $($extra)* });
        object_impls!(@heap $ty);
    };
    (@object $ty:ty, $labels:ident, { $($extra:tt)* }) => {
        object_impls!(@meta $ty, $labels, { $($extra)* });

        impl<'de> ::serde::Deserialize<'de> for $ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                // With field indexes the object is read for them too (see `field_index`);
                // without, as fast as the projection alone.
                if let Some(fields) = $crate::field_index::active_fields() {
                    return $crate::field_index::decode_with_fields(
                        d,
                        &fields,
                        <$ty>::from_wire,
                    );
                }
                let wire = ::serde::Deserialize::deserialize(d)?;
                <$ty>::from_wire(&wire, &[]).map_err(<D::Error as ::serde::de::Error>::custom)
            }
        }

        impl $ty {
            /// The values of the JSONPath field index `index`, evaluated when the object
            /// was decoded.
            pub fn indexed_values(&self, index: &str) -> impl Iterator<Item = &str> {
                self.strings.indexed_values(index)
            }
        }
    };
    // All but `Deserialize`, for a projection that decodes in its own way.
    (@meta $ty:ty, { $($extra:tt)* }) => {
        object_impls!(@meta $ty, strings, { $($extra)* });
        object_impls!(@heap $ty);
    };
    (@heap $ty:ty) => {
        impl $ty {
            /// Heap bytes owned by this projection (its inline size is `size_of::<Self>()`).
            pub fn heap_bytes(&self) -> usize {
                self.strings.heap_bytes()
            }
        }
    };
    (@meta $ty:ty, $labels:ident, { $($extra:tt)* }) => {
        impl ::kscope_informers::object::Object for $ty {
            fn namespace(&self) -> Option<&str> {
                self.strings.meta_namespace()
            }

            fn name(&self) -> &str {
                self.strings.meta_name()
            }

            fn resource_version(&self) -> Option<&str> {
                self.strings.meta_resource_version()
            }
        }

        impl $crate::KubeResource for $ty {
            fn uid(&self) -> &str {
                self.strings.meta_uid()
            }

            fn labels(&self) -> $crate::Labels<'_> {
                $crate::Labels::new(self.$labels.rows(LABELS))
            }

            fn created(&self) -> Option<$crate::Timestamp> {
                self.created
            }

            $($extra)*
        }
    };
}

pub mod decode;
mod field_index;
mod generic;
mod kind;
mod meta;
mod node;
mod packed;
mod pod;
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
pub use meta::{Container, OwnerRef};
pub use node::{ConditionStatus, Namespace, Node};
pub use packed::{LAST_APPLIED_ANNOTATION, Labels};
pub use pod::Pod;
pub use secret::Secret;
pub use time::{Timestamp, TimestampError};
pub use workloads::{Deployment, ReplicaSet, Replicas};

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

    /// The managing controller as (kind, name).
    fn controller_owner(&self) -> Option<(&str, &str)> {
        self.controller_owner_key().map(meta::split_owner)
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

/// The kinds with a hand-written projection, as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResourceKind {
    Pods,
    Nodes,
    Namespaces,
    Deployments,
    ReplicaSets,
    Secrets,
}

/// A resource name kscope does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown resource type {0:?}; kscope knows pods (po), nodes (no), namespaces (ns), \
     deployments (deploy), replicasets (rs) and secrets (sec)"
)]
pub struct UnknownResource(pub String);

/// Why a URL path could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("{0} are namespaced: a namespace is needed to address one by name")]
    NamespaceRequired(String),
}

impl ResourceKind {
    pub const ALL: [ResourceKind; 6] = [
        Self::Pods,
        Self::Nodes,
        Self::Namespaces,
        Self::Deployments,
        Self::ReplicaSets,
        Self::Secrets,
    ];

    /// The `kind` field (`Pod`).
    pub const fn kind(self) -> &'static str {
        match self {
            Self::Pods => "Pod",
            Self::Nodes => "Node",
            Self::Namespaces => "Namespace",
            Self::Deployments => "Deployment",
            Self::ReplicaSets => "ReplicaSet",
            Self::Secrets => "Secret",
        }
    }

    /// The API group; `""` for the core group.
    pub const fn group(self) -> &'static str {
        match self {
            Self::Pods | Self::Nodes | Self::Namespaces | Self::Secrets => "",
            Self::Deployments | Self::ReplicaSets => "apps",
        }
    }

    pub const fn version(self) -> &'static str {
        "v1"
    }

    /// The `apiVersion` field: `v1` or `apps/v1`.
    pub const fn api_version(self) -> &'static str {
        match self.group().is_empty() {
            true => "v1",
            false => "apps/v1",
        }
    }

    /// The resource name in URLs (`pods`).
    pub const fn plural(self) -> &'static str {
        match self {
            Self::Pods => "pods",
            Self::Nodes => "nodes",
            Self::Namespaces => "namespaces",
            Self::Deployments => "deployments",
            Self::ReplicaSets => "replicasets",
            Self::Secrets => "secrets",
        }
    }

    /// kubectl's short name (`po`).
    pub const fn short_name(self) -> &'static str {
        match self {
            Self::Pods => "po",
            Self::Nodes => "no",
            Self::Namespaces => "ns",
            Self::Deployments => "deploy",
            Self::ReplicaSets => "rs",
            Self::Secrets => "sec",
        }
    }

    pub const fn namespaced(self) -> bool {
        !matches!(self, Self::Nodes | Self::Namespaces)
    }

    /// `/api/v1` or `/apis/apps/v1`.
    fn group_prefix(self) -> &'static str {
        match self.group().is_empty() {
            true => "/api/v1",
            false => "/apis/apps/v1",
        }
    }

    /// The list/watch path: across all namespaces with `None` (`/api/v1/pods`), within one
    /// with `Some` (`/api/v1/namespaces/{ns}/pods`). Cluster-scoped kinds ignore the namespace.
    /// Names and namespaces are DNS labels/subdomains, so no escaping is needed.
    pub fn list_path(self, namespace: Option<&str>) -> String {
        match namespace {
            Some(ns) if self.namespaced() => {
                format!("{}/namespaces/{ns}/{}", self.group_prefix(), self.plural())
            }
            _ => format!("{}/{}", self.group_prefix(), self.plural()),
        }
    }

    /// The path of one object (`/api/v1/namespaces/{ns}/pods/{name}`, `/api/v1/nodes/{name}`).
    pub fn object_path(self, namespace: Option<&str>, name: &str) -> Result<String, PathError> {
        match namespace {
            None if self.namespaced() => {
                Err(PathError::NamespaceRequired(self.plural().to_string()))
            }
            _ => Ok(format!("{}/{name}", self.list_path(namespace))),
        }
    }
}

impl FromStr for ResourceKind {
    type Err = UnknownResource;

    /// Accepts kubectl's names, case-insensitively: plural, singular, short name, and
    /// `plural.group` for the apps kinds (`deployments.apps`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        let (name, group) = match lower.split_once('.') {
            Some((name, group)) => (name, Some(group)),
            None => (lower.as_str(), None),
        };
        let kind = match name {
            "pods" | "pod" | "po" => Self::Pods,
            "nodes" | "node" | "no" => Self::Nodes,
            "namespaces" | "namespace" | "ns" => Self::Namespaces,
            "deployments" | "deployment" | "deploy" => Self::Deployments,
            "replicasets" | "replicaset" | "rs" => Self::ReplicaSets,
            "secrets" | "secret" | "sec" => Self::Secrets,
            _ => return Err(UnknownResource(s.to_owned())),
        };
        match group {
            Some(g) if g != kind.group() || g.is_empty() => Err(UnknownResource(s.to_owned())),
            _ => Ok(kind),
        }
    }
}

impl fmt::Display for ResourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.plural())
    }
}

/// Why an object could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("malformed {kind}: {source}")]
    Object {
        kind: &'static str,
        #[source]
        source: serde_json::Error,
    },
}

/// Decodes one object (a GET response, or a watch event's `object`), reading only what its
/// projection keeps (see [`decode`](mod@decode)).
pub fn decode<T: BuiltIn>(json: &[u8]) -> Result<T, DecodeError> {
    decode_object(json).map_err(|source| DecodeError::Object {
        kind: T::KIND.kind(),
        source,
    })
}

/// [`decode::from_slice`] into a projection: what a list item or a watch event's object goes
/// through.
pub fn decode_object<T: KubeResource>(json: &[u8]) -> Result<T, serde_json::Error> {
    decode::from_slice(json)
}
