//! The deployment and replica set projections.

use super::meta::{self, Container, OwnerRef, WireMeta, WirePodTemplate, WireSelector};
use super::packed::{Builder, FieldValues, Labels, PackError, Packed};
use super::time::Timestamp;
use super::{KubeResource, ResourceKind};

const LABELS: usize = 1;
const SELECTOR: usize = 2;
const CONTAINERS: usize = 3;
const OWNERS: usize = 4;
const SECTIONS: usize = 5;

/// Replica counts of a workload, as its kubectl columns show them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Replicas {
    /// `spec.replicas` (1 when unset, the API default).
    pub desired: i32,
    /// `status.replicas`: pods that exist.
    pub current: i32,
    pub ready: i32,
    pub updated: i32,
    pub available: i32,
}

/// Pushes what both workload kinds keep, in section order (labels, selector, containers,
/// owners); the scalar section holds only the shared metadata slots.
fn build(
    w: &WireWorkload<'_>,
    fields: &FieldValues<'_>,
) -> Result<(Packed<SECTIONS>, Option<u32>), PackError> {
    let spec = w.spec.as_ref();
    let mut b = Builder::<SECTIONS>::new();
    w.metadata.push_scalars(&mut b);
    b.end_section();
    b.push_map(w.metadata.labels.as_ref());
    b.end_section();
    b.push_map(spec.and_then(|s| s.selector.as_ref()?.match_labels.as_ref()));
    b.end_section();
    meta::push_containers(&mut b, spec.and_then(|s| s.template.as_ref()?.containers()));
    b.end_section();
    let controller = w.metadata.push_owners(&mut b);
    b.end_section();
    b.push_field_values(fields);
    Ok((b.finish()?, controller))
}

impl WireWorkload<'_> {
    fn replicas(&self) -> Replicas {
        let status = self.status.as_ref();
        let count = |f: fn(&WireWorkloadStatus) -> Option<i32>| status.and_then(f).unwrap_or(0);
        Replicas {
            desired: self.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1),
            current: count(|s| s.replicas),
            ready: count(|s| s.ready_replicas),
            updated: count(|s| s.updated_replicas),
            available: count(|s| s.available_replicas),
        }
    }
}

/// Accessors both workload kinds share.
macro_rules! workload_accessors {
    ($ty:ty) => {
        impl $ty {
            pub fn label(&self, key: &str) -> Option<&str> {
                self.labels().get(key)
            }

            /// `spec.selector.matchLabels` (matchExpressions are not kept).
            pub fn selector(&self) -> Labels<'_> {
                Labels::new(self.strings.rows(SELECTOR))
            }

            pub fn replicas(&self) -> Replicas {
                self.replicas
            }

            /// Containers of the pod template (kubectl -o wide's CONTAINERS and IMAGES).
            pub fn containers(&self) -> impl ExactSizeIterator<Item = Container<'_>> {
                meta::containers(self.strings.rows(CONTAINERS))
            }

            pub fn owner_references(&self) -> impl ExactSizeIterator<Item = OwnerRef<'_>> {
                meta::owner_refs(self.strings.rows(OWNERS), self.controller)
            }

            /// The managing controller as `kind/name`, e.g. `Deployment/web`.
            pub fn controller_owner_key(&self) -> Option<&str> {
                meta::controller_owner_key(self.strings.rows(OWNERS), self.controller)
            }

            /// The managing controller as (kind, name).
            pub fn controller_owner(&self) -> Option<(&str, &str)> {
                meta::controller_owner(self.strings.rows(OWNERS), self.controller)
            }

            fn from_wire(
                w: &WireWorkload<'_>,
                fields: &FieldValues<'_>,
            ) -> Result<Self, PackError> {
                let (strings, controller) = build(w, fields)?;
                Ok(Self {
                    strings,
                    created: w.metadata.creation_timestamp,
                    controller,
                    replicas: w.replicas(),
                })
            }
        }
    };
}

/// A deployment as kscope stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deployment {
    strings: Packed<SECTIONS>,
    created: Option<Timestamp>,
    controller: Option<u32>,
    replicas: Replicas,
}

workload_accessors!(Deployment);
object_impls!(Deployment, ResourceKind::Deployments, owners);

/// A replica set as kscope stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaSet {
    strings: Packed<SECTIONS>,
    created: Option<Timestamp>,
    controller: Option<u32>,
    replicas: Replicas,
}

workload_accessors!(ReplicaSet);
object_impls!(ReplicaSet, ResourceKind::ReplicaSets, owners);

#[derive(serde::Deserialize)]
struct WireWorkload<'a> {
    #[serde(borrow, default)]
    metadata: WireMeta<'a>,
    #[serde(borrow)]
    spec: Option<WireWorkloadSpec<'a>>,
    status: Option<WireWorkloadStatus>,
}

#[derive(serde::Deserialize)]
struct WireWorkloadSpec<'a> {
    replicas: Option<i32>,
    #[serde(borrow)]
    selector: Option<WireSelector<'a>>,
    #[serde(borrow)]
    template: Option<WirePodTemplate<'a>>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireWorkloadStatus {
    replicas: Option<i32>,
    ready_replicas: Option<i32>,
    updated_replicas: Option<i32>,
    available_replicas: Option<i32>,
}
