//! Object keys (`namespace/name`, or `name` when cluster-scoped) and the tombstone that a
//! DeltaFIFO emits when it learns of a deletion without seeing the final state.

use std::sync::Arc;

use super::object::Object;

/// A store key. Shared, because the same key sits in the store, in every index set it belongs
/// to and in the queues.
pub type Key = Arc<str>;

/// Why an object could not be keyed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("object has no metadata.name")]
    MissingName,
}

/// client-go's `MetaNamespaceKeyFunc`: `namespace/name`, or `name` for cluster-scoped objects.
pub fn meta_namespace_key<T: Object + ?Sized>(obj: &T) -> Result<Key, KeyError> {
    let name = obj.name();
    if name.is_empty() {
        return Err(KeyError::MissingName);
    }
    Ok(match obj.namespace() {
        Some(ns) if !ns.is_empty() => {
            let mut key = String::with_capacity(ns.len() + 1 + name.len());
            key.push_str(ns);
            key.push('/');
            key.push_str(name);
            Key::from(key)
        }
        _ => Key::from(name),
    })
}

/// Splits a key back into namespace (if any) and name.
pub fn split_meta_namespace_key(key: &str) -> (Option<&str>, &str) {
    match key.split_once('/') {
        Some((ns, name)) => (Some(ns), name),
        None => (None, key),
    }
}

/// client-go's `DeletedFinalStateUnknown`: an object was deleted while we were not watching
/// (found missing from a relist), so its final state is unknown. It carries the last state
/// we knew, if we knew any.
#[derive(Debug)]
pub struct DeletedFinalStateUnknown<T> {
    pub key: Key,
    pub obj: Option<Arc<T>>,
}

impl<T> Clone for DeletedFinalStateUnknown<T> {
    fn clone(&self) -> Self {
        Self {
            key: self.key.clone(),
            obj: self.obj.clone(),
        }
    }
}

/// What a delta or a delete notification carries: the object, or a tombstone for it.
#[derive(Debug)]
pub enum DeltaObject<T> {
    Object(Arc<T>),
    Tombstone(DeletedFinalStateUnknown<T>),
}

impl<T> Clone for DeltaObject<T> {
    fn clone(&self) -> Self {
        match self {
            Self::Object(obj) => Self::Object(obj.clone()),
            Self::Tombstone(t) => Self::Tombstone(t.clone()),
        }
    }
}

impl<T: Object> DeltaObject<T> {
    /// client-go's `DeletionHandlingMetaNamespaceKeyFunc`: a tombstone keys by its stored key.
    pub fn key(&self) -> Result<Key, KeyError> {
        match self {
            Self::Object(obj) => meta_namespace_key(obj.as_ref()),
            Self::Tombstone(t) => Ok(t.key.clone()),
        }
    }
}

impl<T> DeltaObject<T> {
    /// The object itself, or the last state a tombstone knew.
    pub fn object(&self) -> Option<&Arc<T>> {
        match self {
            Self::Object(obj) => Some(obj),
            Self::Tombstone(t) => t.obj.as_ref(),
        }
    }

    pub fn is_tombstone(&self) -> bool {
        matches!(self, Self::Tombstone(_))
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{Namespace, Pod};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    fn pod(ns: &str, name: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                namespace: Some(ns.into()),
                name: Some(name.into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn namespaced_and_cluster_scoped_keys() {
        assert_eq!(
            &*meta_namespace_key(&pod("ns1", "pod1")).unwrap(),
            "ns1/pod1"
        );
        let ns = Namespace {
            metadata: ObjectMeta {
                name: Some("kube-system".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        assert_eq!(&*meta_namespace_key(&ns).unwrap(), "kube-system");
        assert_eq!(
            meta_namespace_key(&Pod::default()),
            Err(KeyError::MissingName)
        );
    }

    #[test]
    fn tombstone_keys_by_its_stored_key() {
        let tombstone = DeltaObject::<Pod>::Tombstone(DeletedFinalStateUnknown {
            key: "ns1/gone".into(),
            obj: Some(Arc::new(pod("ns1", "other-name"))),
        });
        assert_eq!(&*tombstone.key().unwrap(), "ns1/gone");
        assert!(tombstone.is_tombstone());
    }

    #[test]
    fn split_key() {
        assert_eq!(split_meta_namespace_key("a/b"), (Some("a"), "b"));
        assert_eq!(split_meta_namespace_key("node-1"), (None, "node-1"));
    }
}
