//! Keeping the served custom resources in step with the stored CRDs, in the write that
//! changed them.

use crate::resources::{RegistryError, Resource};
use crate::store::{StoreError, Txn};

use super::definition::{CLEANUP_FINALIZER, descriptor};

/// Why the served resources could not be brought in step with the CRDs.
#[derive(Debug, thiserror::Error)]
pub enum CrdError {
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The served custom resource defined by CRD `name`, if any.
fn served_by(txn: &Txn<'_>, name: &str) -> Option<Resource> {
    txn.custom_resources()
        .iter()
        .copied()
        .find(|r| r.descriptor().custom.is_some_and(|c| c.definition == name))
}

/// Brings the served custom resources in step with CRD `name` as stored now: registered
/// (or re-registered with changed names, columns or schema) while it exists, and once it
/// is being deleted its objects deleted, its resource no longer served, and the CRD gone.
pub fn reconcile(txn: &mut Txn<'_>, cluster: u64, name: &str) -> Result<(), CrdError> {
    let current = txn
        .get(Resource::CustomResourceDefinitions, name)
        .and_then(|o| o.decode().ok());
    let before = served_by(txn, name);
    match current {
        Some(crd) if !crd["metadata"]["deletionTimestamp"].is_string() => {
            let Some(d) = descriptor(name, &crd) else {
                return Ok(());
            };
            let resource = Resource::register(cluster, d)?;
            if let Some(old) = before.filter(|old| *old != resource) {
                remove_all(txn, old)?;
            }
            txn.serve(resource);
        }
        Some(mut crd) => {
            if let Some(old) = before {
                remove_all(txn, old)?;
            }
            if let Some(finalizers) = crd["metadata"]["finalizers"].as_array_mut() {
                finalizers.retain(|f| f != CLEANUP_FINALIZER);
                if finalizers.is_empty() {
                    txn.delete(Resource::CustomResourceDefinitions, name)?;
                } else {
                    txn.put(Resource::CustomResourceDefinitions, name, &mut crd)?;
                }
            }
        }
        None => {
            if let Some(old) = before {
                remove_all(txn, old)?;
            }
        }
    }
    Ok(())
}

/// Deletes every object of `resource` (watchers see each DELETED) and stops serving it.
fn remove_all(txn: &mut Txn<'_>, resource: Resource) -> Result<(), StoreError> {
    for key in txn.find(resource, |_, _| true) {
        txn.delete(resource, &key)?;
    }
    txn.unserve(resource);
    Ok(())
}
