//! What the informer pipeline needs to know about an object: its identity and its version.
//!
//! Typed k8s-openapi objects get it through their `ObjectMeta`; kscope's compact projections
//! (src/resources/) implement it directly, so the pipeline never needs the full object.

use kube_core::Resource;

/// An object the informer pipeline can key, store and version.
pub trait Object: Send + Sync + 'static {
    /// `metadata.namespace`; `None` for cluster-scoped objects.
    fn namespace(&self) -> Option<&str>;
    /// `metadata.name`; empty when the object has none (the key function then refuses it).
    fn name(&self) -> &str;
    /// `metadata.resourceVersion`, opaque to clients except for equality.
    fn resource_version(&self) -> Option<&str>;
}

impl<K> Object for K
where
    K: Resource + Send + Sync + 'static,
{
    fn namespace(&self) -> Option<&str> {
        self.meta().namespace.as_deref()
    }

    fn name(&self) -> &str {
        self.meta().name.as_deref().unwrap_or_default()
    }

    fn resource_version(&self) -> Option<&str> {
        self.meta().resource_version.as_deref()
    }
}
