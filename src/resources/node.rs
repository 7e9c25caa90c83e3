//! The node and namespace projections.

use smallvec::SmallVec;

use super::meta::{FIRST_KIND_SLOT, WireMeta, non_empty};
use super::packed::{Builder, FieldValues, PackError, Packed, Str, StrMap};
use super::time::Timestamp;
use super::{KubeResource, ResourceKind};

/// The status of a condition (`True`, `False`, `Unknown`); anything else reads as `Unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConditionStatus {
    True,
    False,
    Unknown,
}

impl ConditionStatus {
    fn parse(s: &str) -> Self {
        match s {
            "True" => Self::True,
            "False" => Self::False,
            _ => Self::Unknown,
        }
    }
}

const LABELS: usize = 1;

const KUBELET_VERSION: usize = FIRST_KIND_SLOT;
const INTERNAL_IP: usize = FIRST_KIND_SLOT + 1;
const CPU_CAPACITY: usize = FIRST_KIND_SLOT + 2;
const MEMORY_CAPACITY: usize = FIRST_KIND_SLOT + 3;
const CPU_ALLOCATABLE: usize = FIRST_KIND_SLOT + 4;
const MEMORY_ALLOCATABLE: usize = FIRST_KIND_SLOT + 5;
const EXTERNAL_IP: usize = FIRST_KIND_SLOT + 6;
const OS_IMAGE: usize = FIRST_KIND_SLOT + 7;
const KERNEL_VERSION: usize = FIRST_KIND_SLOT + 8;
const CONTAINER_RUNTIME: usize = FIRST_KIND_SLOT + 9;
const ROLES: usize = 2;
const NODE_SECTIONS: usize = 3;

/// The label prefix kubectl reads roles from (`node-role.kubernetes.io/control-plane`).
const NODE_ROLE_PREFIX: &str = "node-role.kubernetes.io/";
/// The older role label, whose value is the role.
const NODE_ROLE_LABEL: &str = "kubernetes.io/role";

/// A node as kscope stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    strings: Packed<NODE_SECTIONS>,
    created: Option<Timestamp>,
    ready: Option<ConditionStatus>,
    unschedulable: bool,
}

impl Node {
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels().get(key)
    }

    /// Roles as kubectl's ROLES column finds them, sorted and deduplicated.
    pub fn roles(&self) -> impl ExactSizeIterator<Item = &str> {
        self.strings.rows::<1>(ROLES).iter().map(|[r]| r)
    }

    /// The `Ready` condition's status; `None` when the node reports no such condition.
    pub fn ready(&self) -> Option<ConditionStatus> {
        self.ready
    }

    /// `spec.unschedulable` (cordoned).
    pub fn unschedulable(&self) -> bool {
        self.unschedulable
    }

    /// kubectl's STATUS column: `Ready`, `NotReady` or `Unknown`, then `,SchedulingDisabled`
    /// when cordoned.
    pub fn status(&self) -> &'static str {
        match (self.ready, self.unschedulable) {
            (Some(ConditionStatus::True), false) => "Ready",
            (Some(ConditionStatus::True), true) => "Ready,SchedulingDisabled",
            (Some(_), false) => "NotReady",
            (Some(_), true) => "NotReady,SchedulingDisabled",
            (None, false) => "Unknown",
            (None, true) => "Unknown,SchedulingDisabled",
        }
    }

    pub fn kubelet_version(&self) -> Option<&str> {
        non_empty(self.strings.get(KUBELET_VERSION))
    }

    /// The first `InternalIP` address.
    pub fn internal_ip(&self) -> Option<&str> {
        non_empty(self.strings.get(INTERNAL_IP))
    }

    /// The first `ExternalIP` address.
    pub fn external_ip(&self) -> Option<&str> {
        non_empty(self.strings.get(EXTERNAL_IP))
    }

    /// `status.nodeInfo.osImage` (`Ubuntu 22.04.4 LTS`).
    pub fn os_image(&self) -> Option<&str> {
        non_empty(self.strings.get(OS_IMAGE))
    }

    /// `status.nodeInfo.kernelVersion` (`uname -r`).
    pub fn kernel_version(&self) -> Option<&str> {
        non_empty(self.strings.get(KERNEL_VERSION))
    }

    /// `status.nodeInfo.containerRuntimeVersion` (`containerd://1.7.22`).
    pub fn container_runtime(&self) -> Option<&str> {
        non_empty(self.strings.get(CONTAINER_RUNTIME))
    }

    /// `status.capacity.cpu` as a quantity string (`"8"`, `"7910m"`).
    pub fn cpu_capacity(&self) -> Option<&str> {
        non_empty(self.strings.get(CPU_CAPACITY))
    }

    /// `status.capacity.memory` as a quantity string (`"32Gi"`, `"32817060Ki"`).
    pub fn memory_capacity(&self) -> Option<&str> {
        non_empty(self.strings.get(MEMORY_CAPACITY))
    }

    pub fn cpu_allocatable(&self) -> Option<&str> {
        non_empty(self.strings.get(CPU_ALLOCATABLE))
    }

    pub fn memory_allocatable(&self) -> Option<&str> {
        non_empty(self.strings.get(MEMORY_ALLOCATABLE))
    }

    fn from_wire(w: &WireNode<'_>, fields: &FieldValues<'_>) -> Result<Self, PackError> {
        let status = w.status.as_ref();
        let capacity = status.and_then(|s| s.capacity.as_ref());
        let allocatable = status.and_then(|s| s.allocatable.as_ref());
        let address = |type_: &str| {
            status
                .and_then(|s| s.addresses.as_deref())
                .unwrap_or_default()
                .iter()
                .find(|a| a.type_.as_ref().is_some_and(|t| t.as_str() == type_))
                .and_then(|a| a.address.as_ref())
        };
        let info = status.and_then(|s| s.node_info.as_ref());
        let ready = status
            .and_then(|s| s.conditions.as_deref())
            .unwrap_or_default()
            .iter()
            .find(|c| c.type_.as_ref().is_some_and(|t| t.as_str() == "Ready"))
            .map(|c| ConditionStatus::parse(c.status.as_ref().map_or("", Str::as_str)));

        let mut b = Builder::<NODE_SECTIONS>::new();
        w.metadata.push_scalars(&mut b);
        b.push_opt(info.and_then(|i| i.kubelet_version.as_ref()));
        b.push_opt(address("InternalIP"));
        b.push_opt(capacity.and_then(|r| r.cpu.as_ref()));
        b.push_opt(capacity.and_then(|r| r.memory.as_ref()));
        b.push_opt(allocatable.and_then(|r| r.cpu.as_ref()));
        b.push_opt(allocatable.and_then(|r| r.memory.as_ref()));
        b.push_opt(address("ExternalIP"));
        b.push_opt(info.and_then(|i| i.os_image.as_ref()));
        b.push_opt(info.and_then(|i| i.kernel_version.as_ref()));
        b.push_opt(info.and_then(|i| i.container_runtime_version.as_ref()));
        b.end_section();
        b.push_map(w.metadata.labels.as_ref());
        b.end_section();
        let mut roles: SmallVec<[&str; 4]> = w
            .metadata
            .labels
            .iter()
            .flat_map(StrMap::iter)
            .filter_map(|(k, v)| match k.strip_prefix(NODE_ROLE_PREFIX) {
                Some(role) => non_empty(role),
                None if k == NODE_ROLE_LABEL => non_empty(v),
                None => None,
            })
            .collect();
        roles.sort_unstable();
        roles.dedup();
        for role in roles {
            b.push(role);
        }
        b.end_section();
        b.push_field_values(fields);

        Ok(Self {
            strings: b.finish()?,
            created: w.metadata.creation_timestamp,
            ready,
            unschedulable: w.spec.as_ref().is_some_and(|s| s.unschedulable),
        })
    }
}

object_impls!(Node, ResourceKind::Nodes);

#[derive(serde::Deserialize)]
struct WireNode<'a> {
    #[serde(borrow, default)]
    metadata: WireMeta<'a>,
    spec: Option<WireNodeSpec>,
    #[serde(borrow)]
    status: Option<WireNodeStatus<'a>>,
}

#[derive(serde::Deserialize)]
struct WireNodeSpec {
    #[serde(default)]
    unschedulable: bool,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireNodeStatus<'a> {
    #[serde(borrow)]
    capacity: Option<WireResources<'a>>,
    #[serde(borrow)]
    allocatable: Option<WireResources<'a>>,
    #[serde(borrow)]
    conditions: Option<Vec<WireTyped<'a>>>,
    #[serde(borrow)]
    addresses: Option<Vec<WireTyped<'a>>>,
    #[serde(borrow)]
    node_info: Option<WireNodeInfo<'a>>,
}

#[derive(serde::Deserialize)]
struct WireResources<'a> {
    #[serde(borrow)]
    cpu: Option<Str<'a>>,
    #[serde(borrow)]
    memory: Option<Str<'a>>,
}

/// A node condition (`type`, `status`) or address (`type`, `address`).
#[derive(serde::Deserialize)]
struct WireTyped<'a> {
    #[serde(borrow, rename = "type")]
    type_: Option<Str<'a>>,
    #[serde(borrow)]
    status: Option<Str<'a>>,
    #[serde(borrow)]
    address: Option<Str<'a>>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireNodeInfo<'a> {
    #[serde(borrow)]
    kubelet_version: Option<Str<'a>>,
    #[serde(borrow)]
    os_image: Option<Str<'a>>,
    #[serde(borrow)]
    kernel_version: Option<Str<'a>>,
    #[serde(borrow)]
    container_runtime_version: Option<Str<'a>>,
}

const PHASE: usize = FIRST_KIND_SLOT;
const NAMESPACE_SECTIONS: usize = 2;

/// A namespace as kscope stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Namespace {
    strings: Packed<NAMESPACE_SECTIONS>,
    created: Option<Timestamp>,
}

impl Namespace {
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels().get(key)
    }

    /// `status.phase`: `Active` or `Terminating`.
    pub fn phase(&self) -> Option<&str> {
        non_empty(self.strings.get(PHASE))
    }

    fn from_wire(w: &WireNamespace<'_>, fields: &FieldValues<'_>) -> Result<Self, PackError> {
        let mut b = Builder::<NAMESPACE_SECTIONS>::new();
        w.metadata.push_scalars(&mut b);
        b.push_opt(w.status.as_ref().and_then(|s| s.phase.as_ref()));
        b.end_section();
        b.push_map(w.metadata.labels.as_ref());
        b.end_section();
        b.push_field_values(fields);
        Ok(Self {
            strings: b.finish()?,
            created: w.metadata.creation_timestamp,
        })
    }
}

object_impls!(Namespace, ResourceKind::Namespaces);

#[derive(serde::Deserialize)]
struct WireNamespace<'a> {
    #[serde(borrow, default)]
    metadata: WireMeta<'a>,
    #[serde(borrow)]
    status: Option<WireNamespaceStatus<'a>>,
}

#[derive(serde::Deserialize)]
struct WireNamespaceStatus<'a> {
    #[serde(borrow)]
    phase: Option<Str<'a>>,
}
