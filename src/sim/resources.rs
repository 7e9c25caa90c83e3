//! The resource types the simulated server serves, with the names discovery and URLs use.
//!
//! A [`Resource`] is a small handle: the built-in kinds are fixed descriptors (see
//! [`super::kinds`]), and the custom resources a cluster's CustomResourceDefinitions
//! register get handles of their own at runtime. Everything that serves a resource (list,
//! watch, writes, Tables, selectors, discovery) reads its [`Descriptor`], so a custom
//! resource is served by the same code as a built-in one.

use std::collections::HashMap;
use std::sync::LazyLock;

use parking_lot::RwLock;

pub use super::descriptor::{Column, CustomSchema, Descriptor, ScalePaths, VERBS};
use super::kinds::{BUILT_IN, COUNT};

/// One served resource type: an index into the built-in descriptors, or past them into
/// the registered custom ones. Equal handles name the same storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Resource(u16);

/// At most this many custom descriptors are ever made in one process: each registration
/// or change of a CRD's names, columns or schema makes one, and they live as long as the
/// process does (handles to them are `Copy` and kept in events and requests).
const MAX_CUSTOM_DESCRIPTORS: usize = 4096;

/// The custom resources of every cluster in the process: their current descriptors, by
/// handle, and the handle of each (cluster, group, version, plural), kept when a CRD is
/// deleted and created again so that its storage slot is reused.
#[derive(Default)]
struct CustomRegistry {
    current: Vec<&'static Descriptor>,
    handles: HashMap<(u64, String, String, String), Resource>,
    made: usize,
}

static CUSTOM: LazyLock<RwLock<CustomRegistry>> = LazyLock::new(Default::default);

/// Why a custom resource could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("too many custom resource registrations in this process (at most {0})")]
    Full(usize),
}

impl Resource {
    /// The built-in kinds, in the order of [`BUILT_IN`].
    pub const ALL: [Resource; COUNT] = {
        let mut all = [Resource(0); COUNT];
        let mut i = 0;
        while i < all.len() {
            all[i] = Resource(i as u16);
            i += 1;
        }
        all
    };

    /// Position in per-resource tables.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    /// Whether this is one of the built-in kinds.
    pub fn built_in(self) -> bool {
        self.index() < BUILT_IN.len()
    }

    pub fn descriptor(self) -> &'static Descriptor {
        if let Some(d) = BUILT_IN.get(self.index()) {
            return d;
        }
        let registry = CUSTOM.read();
        // Handles are only made by `register`, so the slot exists.
        registry
            .current
            .get(self.index() - BUILT_IN.len())
            .copied()
            .unwrap_or(&BUILT_IN[0])
    }

    pub fn plural(self) -> &'static str {
        self.descriptor().plural
    }

    pub fn singular(self) -> &'static str {
        self.descriptor().singular
    }

    pub fn kind(self) -> &'static str {
        self.descriptor().kind
    }

    pub fn list_kind(self) -> &'static str {
        self.descriptor().list_kind
    }

    pub fn group(self) -> &'static str {
        self.descriptor().group
    }

    pub fn version(self) -> &'static str {
        self.descriptor().version
    }

    /// `group/version`, or the version alone for core.
    pub fn api_version(self) -> &'static str {
        self.descriptor().api_version
    }

    pub fn namespaced(self) -> bool {
        self.descriptor().namespaced
    }

    pub fn short_names(self) -> &'static [&'static str] {
        self.descriptor().short_names
    }

    /// Resolves a built-in kind's URL group, version and plural.
    pub fn built_in_at(group: &str, version: &str, plural: &str) -> Option<Resource> {
        Resource::ALL.into_iter().find(|r| {
            let d = r.descriptor();
            d.version == version && d.group == group && d.plural == plural
        })
    }

    /// Resolves a built-in plural or singular name (as the admin endpoint and `truth`
    /// accept); the core group's wins where two groups share a name (events).
    pub fn from_name(name: &str) -> Option<Resource> {
        Resource::ALL
            .into_iter()
            .find(|r| r.plural() == name || r.singular() == name)
    }

    /// Registers (or updates) the custom resource `descriptor` of cluster `cluster`,
    /// returning its handle: the same one for the same group, version and plural.
    pub fn register(cluster: u64, descriptor: Descriptor) -> Result<Resource, RegistryError> {
        let mut registry = CUSTOM.write();
        let key = (
            cluster,
            descriptor.group.to_string(),
            descriptor.version.to_string(),
            descriptor.plural.to_string(),
        );
        let existing = registry.handles.get(&key).copied();
        if let Some(r) = existing
            && let Some(current) = registry.current.get(r.index() - BUILT_IN.len())
            && **current == descriptor
        {
            return Ok(r);
        }
        if registry.made >= MAX_CUSTOM_DESCRIPTORS {
            return Err(RegistryError::Full(MAX_CUSTOM_DESCRIPTORS));
        }
        registry.made += 1;
        let leaked: &'static Descriptor = Box::leak(Box::new(descriptor));
        match existing {
            Some(r) => {
                let slot = r.index() - BUILT_IN.len();
                if let Some(current) = registry.current.get_mut(slot) {
                    *current = leaked;
                }
                Ok(r)
            }
            None => {
                let id = u16::try_from(BUILT_IN.len() + registry.current.len())
                    .map_err(|_| RegistryError::Full(MAX_CUSTOM_DESCRIPTORS))?;
                registry.current.push(leaked);
                let r = Resource(id);
                registry.handles.insert(key, r);
                Ok(r)
            }
        }
    }
}

/// Makes a string live as long as the process, for a custom descriptor (counted by
/// [`MAX_CUSTOM_DESCRIPTORS`] with the descriptor it belongs to).
pub fn leak_str(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

/// [`leak_str`] for a list.
pub fn leak_strs(items: &[String]) -> &'static [&'static str] {
    let strs: Vec<&'static str> = items.iter().map(|s| leak_str(s)).collect();
    Box::leak(strs.into_boxed_slice())
}

/// Handles of the built-in kinds, each the index of its descriptor in [`BUILT_IN`].
#[allow(non_upper_case_globals)]
impl Resource {
    pub const Namespaces: Resource = Resource(0);
    pub const Nodes: Resource = Resource(1);
    pub const Pods: Resource = Resource(2);
    pub const Deployments: Resource = Resource(3);
    pub const ReplicaSets: Resource = Resource(4);
    pub const Secrets: Resource = Resource(5);
    pub const Services: Resource = Resource(6);
    pub const Endpoints: Resource = Resource(7);
    pub const ConfigMaps: Resource = Resource(8);
    pub const Events: Resource = Resource(9);
    pub const ServiceAccounts: Resource = Resource(10);
    pub const PersistentVolumeClaims: Resource = Resource(11);
    pub const PersistentVolumes: Resource = Resource(12);
    pub const EndpointSlices: Resource = Resource(13);
    pub const StatefulSets: Resource = Resource(14);
    pub const DaemonSets: Resource = Resource(15);
    pub const ControllerRevisions: Resource = Resource(16);
    pub const Jobs: Resource = Resource(17);
    pub const CronJobs: Resource = Resource(18);
    pub const Leases: Resource = Resource(19);
    pub const EventsV1: Resource = Resource(20);
    pub const Ingresses: Resource = Resource(21);
    pub const PodDisruptionBudgets: Resource = Resource(22);
    pub const HorizontalPodAutoscalers: Resource = Resource(23);
    pub const CustomResourceDefinitions: Resource = Resource(24);
}

impl std::fmt::Display for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.plural())
    }
}

impl serde::Serialize for Resource {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.plural())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_only_in_their_group() {
        assert_eq!(
            Resource::built_in_at("", "v1", "pods"),
            Some(Resource::Pods)
        );
        assert_eq!(
            Resource::built_in_at("apps", "v1", "replicasets"),
            Some(Resource::ReplicaSets)
        );
        assert_eq!(Resource::built_in_at("apps", "v1", "pods"), None);
        assert_eq!(Resource::built_in_at("", "v1", "deployments"), None);
        assert_eq!(Resource::built_in_at("", "v2", "pods"), None);
        assert_eq!(
            Resource::built_in_at("autoscaling", "v2", "horizontalpodautoscalers"),
            Some(Resource::HorizontalPodAutoscalers)
        );
        for r in Resource::ALL {
            assert_eq!(r.descriptor().plural, BUILT_IN[r.index()].plural);
        }
    }

    #[test]
    fn custom_handles_are_per_cluster_and_reused() {
        let widget = |short: &'static [&'static str]| Descriptor {
            group: "example.com",
            version: "v1",
            api_version: "example.com/v1",
            plural: "gadgets",
            singular: "gadget",
            kind: "Gadget",
            list_kind: "GadgetList",
            short_names: short,
            categories: &[],
            namespaced: true,
            status: false,
            scale: false,
            columns: &[],
            fields: &[],
            custom: None,
        };
        let a = Resource::register(u64::MAX, widget(&[])).unwrap();
        let again = Resource::register(u64::MAX, widget(&["gd"])).unwrap();
        assert_eq!(a, again);
        assert_eq!(a.short_names(), ["gd"]);
        let other = Resource::register(u64::MAX - 1, widget(&[])).unwrap();
        assert_ne!(a, other);
        assert!(!a.built_in());
        assert_eq!(a.api_version(), "example.com/v1");
    }
}
