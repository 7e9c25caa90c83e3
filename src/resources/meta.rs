//! The parts of `metadata` and of pod templates that several projections keep, in wire form
//! (borrowed from the JSON; every field not named here is skipped unread, see `decode`) and as
//! read-only views.

use std::borrow::Cow;

use serde::Deserialize;
use smallvec::SmallVec;

use super::packed::{Builder, Packed, Rows, Str, StrMap};
use super::time::Timestamp;

/// Scalar slots every projection starts with, in this order.
const NAME: usize = 0;
const NAMESPACE: usize = 1;
const UID: usize = 2;
const RESOURCE_VERSION: usize = 3;
/// The first kind-specific scalar slot.
pub(crate) const FIRST_KIND_SLOT: usize = 4;

/// The shared metadata slots of any projection.
impl<const N: usize> Packed<N> {
    pub(crate) fn meta_name(&self) -> &str {
        self.get(NAME)
    }

    pub(crate) fn meta_namespace(&self) -> Option<&str> {
        non_empty(self.get(NAMESPACE))
    }

    pub(crate) fn meta_uid(&self) -> &str {
        self.get(UID)
    }

    pub(crate) fn meta_resource_version(&self) -> Option<&str> {
        non_empty(self.get(RESOURCE_VERSION))
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireMeta<'a> {
    #[serde(borrow)]
    pub name: Option<Str<'a>>,
    #[serde(borrow)]
    pub namespace: Option<Str<'a>>,
    #[serde(borrow)]
    pub uid: Option<Str<'a>>,
    #[serde(borrow)]
    pub resource_version: Option<Str<'a>>,
    pub generation: Option<i64>,
    pub creation_timestamp: Option<Timestamp>,
    pub deletion_timestamp: Option<Timestamp>,
    #[serde(borrow)]
    pub labels: Option<StrMap<'a, false>>,
    #[serde(borrow)]
    pub annotations: Option<StrMap<'a, true>>,
    #[serde(borrow)]
    pub owner_references: Option<SmallVec<[WireOwner<'a>; 1]>>,
    #[serde(borrow)]
    pub finalizers: Option<SmallVec<[Str<'a>; 2]>>,
}

impl WireMeta<'_> {
    /// Pushes the shared scalar slots `NAME..FIRST_KIND_SLOT`.
    pub(crate) fn push_scalars<'b, const N: usize>(&'b self, b: &mut Builder<'b, N>) {
        b.push_opt(self.name.as_ref());
        b.push_opt(self.namespace.as_ref());
        b.push_opt(self.uid.as_ref());
        b.push_opt(self.resource_version.as_ref());
    }

    /// Pushes owner references as (`kind/name`, uid, kind) rows; returns the controller's row
    /// index. `kind/name` is the owner index's value, so indexing borrows it instead of
    /// formatting; the kind is kept apart too, because a hostile kind may hold a slash and
    /// the joined string alone cannot say where it ends.
    pub(crate) fn push_owners<'b, const N: usize>(&'b self, b: &mut Builder<'b, N>) -> Option<u32> {
        let owners = self.owner_references.as_deref().unwrap_or_default();
        let mut controller = None;
        for (i, o) in owners.iter().enumerate() {
            b.push_joined(
                o.kind.as_ref().map_or("", Str::as_str),
                "/",
                o.name.as_ref().map_or("", Str::as_str),
            );
            b.push_opt(o.uid.as_ref());
            b.push_opt(o.kind.as_ref());
            if o.controller == Some(true) && controller.is_none() {
                controller = u32::try_from(i).ok();
            }
        }
        controller
    }
}

#[derive(Deserialize)]
pub(crate) struct WireOwner<'a> {
    #[serde(borrow)]
    kind: Option<Str<'a>>,
    #[serde(borrow)]
    name: Option<Str<'a>>,
    #[serde(borrow)]
    uid: Option<Str<'a>>,
    controller: Option<bool>,
}

/// `spec.selector` of a workload; only `matchLabels` is kept.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireSelector<'a> {
    #[serde(borrow)]
    pub match_labels: Option<StrMap<'a, false>>,
}

/// A container in a pod spec or template: what the tables show (name, image), plus the init
/// container restart policy that decides whether it is a sidecar, and the CPU and memory
/// requests and limits that usage is a percentage of.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireContainer<'a> {
    #[serde(borrow)]
    pub name: Option<Str<'a>>,
    #[serde(borrow)]
    pub image: Option<Str<'a>>,
    #[serde(borrow)]
    pub restart_policy: Option<Str<'a>>,
    #[serde(borrow)]
    pub resources: Option<WireRequirements<'a>>,
}

/// `resources` of a container: its requests and limits.
#[derive(Deserialize)]
pub(crate) struct WireRequirements<'a> {
    #[serde(borrow)]
    pub requests: Option<WireCpuMemory<'a>>,
    #[serde(borrow)]
    pub limits: Option<WireCpuMemory<'a>>,
}

/// The CPU and memory quantities of a resource list, as sent.
#[derive(Deserialize)]
pub(crate) struct WireCpuMemory<'a> {
    #[serde(borrow)]
    pub cpu: Option<Str<'a>>,
    #[serde(borrow)]
    pub memory: Option<Str<'a>>,
}

/// A quantity as sent, empty when absent.
fn text<'s>(quantity: Option<&'s Str<'_>>) -> &'s str {
    quantity.map_or("", Str::as_str)
}

/// Pushes each container's requests and limits as one string, `cpu request,cpu limit,
/// memory request,memory limit` (empty where unset; a quantity holds no comma): one string
/// a container rather than four keeps a pod within its budget.
pub(crate) fn push_container_resources<const N: usize>(
    b: &mut Builder<'_, N>,
    containers: Option<&[WireContainer<'_>]>,
) {
    for c in containers.unwrap_or_default() {
        let requests = c.resources.as_ref().and_then(|r| r.requests.as_ref());
        let limits = c.resources.as_ref().and_then(|r| r.limits.as_ref());
        b.push_cow(Cow::Owned(format!(
            "{},{},{},{}",
            text(requests.and_then(|r| r.cpu.as_ref())),
            text(limits.and_then(|r| r.cpu.as_ref())),
            text(requests.and_then(|r| r.memory.as_ref())),
            text(limits.and_then(|r| r.memory.as_ref())),
        )));
    }
}

impl<'a> ContainerResources<'a> {
    /// One container's string as [`push_container_resources`] wrote it.
    pub(crate) fn read(packed: &'a str) -> Self {
        let mut parts = packed.split(',').map(non_empty);
        let mut next = || parts.next().flatten();
        Self {
            cpu_request: next(),
            cpu_limit: next(),
            memory_request: next(),
            memory_limit: next(),
        }
    }
}

/// Pushes containers as (name, image) rows.
pub(crate) fn push_containers<'b, const N: usize>(
    b: &mut Builder<'b, N>,
    containers: Option<&'b [WireContainer<'_>]>,
) {
    for c in containers.unwrap_or_default() {
        b.push_opt(c.name.as_ref());
        b.push_opt(c.image.as_ref());
    }
}

#[derive(Deserialize, Default)]
pub(crate) struct WirePodTemplate<'a> {
    #[serde(borrow)]
    pub spec: Option<WireTemplateSpec<'a>>,
}

#[derive(Deserialize, Default)]
pub(crate) struct WireTemplateSpec<'a> {
    #[serde(borrow)]
    pub containers: Option<Vec<WireContainer<'a>>>,
}

impl WirePodTemplate<'_> {
    pub(crate) fn containers(&self) -> Option<&[WireContainer<'_>]> {
        self.spec.as_ref()?.containers.as_deref()
    }
}

/// An owner reference kept by a projection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnerRef<'a> {
    pub kind: &'a str,
    pub name: &'a str,
    pub uid: &'a str,
    /// Whether this owner is the managing controller (`controller: true`).
    pub controller: bool,
}

/// The (kind, name) of a (`kind/name`, uid, kind) row: the name is what follows the kind
/// and its slash, whatever either holds.
fn kind_and_name([kind_name, _, kind]: [&str; 3]) -> (&str, &str) {
    let name = kind_name
        .get(kind.len()..)
        .and_then(|rest| rest.strip_prefix('/'))
        .unwrap_or_default();
    (kind, name)
}

/// Reads (`kind/name`, uid, kind) rows back as [`OwnerRef`]s.
pub(crate) fn owner_refs(
    rows: Rows<'_, 3>,
    controller: Option<u32>,
) -> impl ExactSizeIterator<Item = OwnerRef<'_>> {
    rows.iter().enumerate().map(move |(i, row)| {
        let (kind, name) = kind_and_name(row);
        let uid = row[1];
        OwnerRef {
            kind,
            name,
            uid,
            controller: controller.is_some_and(|c| c as usize == i),
        }
    })
}

/// The controller owner as `kind/name`, the value of the `owner` index.
pub(crate) fn controller_owner_key(rows: Rows<'_, 3>, controller: Option<u32>) -> Option<&str> {
    let c = controller? as usize;
    (c < rows.len()).then(|| rows.row(c)[0])
}

/// The controller owner as (kind, name).
pub(crate) fn controller_owner(rows: Rows<'_, 3>, controller: Option<u32>) -> Option<(&str, &str)> {
    let c = controller? as usize;
    (c < rows.len()).then(|| kind_and_name(rows.row(c)))
}

/// A container kept by a projection: its name and image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Container<'a> {
    pub name: &'a str,
    pub image: &'a str,
}

/// A container's CPU and memory requests and limits, as quantity strings (`250m`, `512Mi`);
/// `None` where unset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContainerResources<'a> {
    pub cpu_request: Option<&'a str>,
    pub cpu_limit: Option<&'a str>,
    pub memory_request: Option<&'a str>,
    pub memory_limit: Option<&'a str>,
}

pub(crate) fn containers(rows: Rows<'_, 2>) -> impl ExactSizeIterator<Item = Container<'_>> {
    rows.iter().map(|[name, image]| Container { name, image })
}

/// `Some(s)` unless `s` is empty: the API treats an empty string and an absent field alike.
pub(crate) fn non_empty(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}
