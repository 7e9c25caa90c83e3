//! What kube-controller-manager does after a delete: the garbage collector removes what an
//! object owns (a Deployment's ReplicaSets, a ReplicaSet's pods), and
//! the ReplicaSet controller replaces a pod deleted from under it. Both the HTTP writes and
//! the churn delete through here.

use std::sync::Arc;

use rand::Rng;

use super::manifests::{self, PodFactory, PodState};
use super::manifests::{node_ip, pod_ip};
use super::object::StoredObject;
use super::resources::Resource;
use super::store::{Key, StoreError, Txn};

/// Deletes an object and, unless orphaning, what it owns. Returns the object's last state
/// (at the delete's resourceVersion), or `None` if it did not exist.
pub(crate) fn delete_cascading(
    txn: &mut Txn<'_>,
    resource: Resource,
    key: &str,
    orphan: bool,
) -> Result<Option<Arc<StoredObject>>, StoreError> {
    let Some(current) = txn.get(resource, key) else {
        return Ok(None);
    };
    if !orphan {
        for (r, k) in dependents(txn, resource, key, &current) {
            delete_dependent(txn, r, &k)?;
        }
    }
    txn.delete(resource, key)
}

/// Deletes what an object being deleted owns: one with finalizers is only marked as being
/// deleted, and goes when its finalizers are removed.
pub(crate) fn delete_dependent(
    txn: &mut Txn<'_>,
    resource: Resource,
    key: &str,
) -> Result<(), StoreError> {
    let Some(object) = txn.get(resource, key) else {
        return Ok(());
    };
    let mut value = object.decode().map_err(encode_error)?;
    if resource == Resource::Pods && only_job_tracking(&value) {
        // The Job controller lets go of a deleted Job's pods: its finalizer is removed and
        // the pod goes.
        if let Some(meta) = value["metadata"].as_object_mut() {
            meta.remove("finalizers");
        }
        txn.put(resource, key, &mut value)?;
    }
    if has_finalizers(&value) {
        mark_deleting(txn, resource, key)?;
        return Ok(());
    }
    delete_cascading(txn, resource, key, false).map(drop)
}

fn encode_error(e: serde_json::Error) -> StoreError {
    StoreError::Encode(e.to_string())
}

/// The Job controller's finalizer on the pods it has not counted yet.
pub(crate) const JOB_TRACKING: &str = "batch.kubernetes.io/job-tracking";

fn only_job_tracking(value: &serde_json::Value) -> bool {
    value["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| !f.is_empty() && f.iter().all(|f| f == JOB_TRACKING))
}

pub(crate) fn has_finalizers(value: &serde_json::Value) -> bool {
    value["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| !f.is_empty())
}

/// The object with `metadata.deletionTimestamp` set (a namespace also goes Terminating), as a
/// graceful delete leaves it; unchanged if it already was being deleted.
pub(crate) fn deleting(mut value: serde_json::Value, resource: Resource) -> serde_json::Value {
    if value["metadata"]["deletionTimestamp"].is_string() {
        return value;
    }
    value["metadata"]["deletionTimestamp"] =
        serde_json::json!(manifests::timestamp(manifests::now_seconds()));
    value["metadata"]["deletionGracePeriodSeconds"] = serde_json::json!(0);
    if resource == Resource::Namespaces {
        value["status"]["phase"] = serde_json::json!("Terminating");
    }
    value
}

/// Marks `key` as being deleted (see [`deleting`]).
pub(crate) fn mark_deleting(
    txn: &mut Txn<'_>,
    resource: Resource,
    key: &str,
) -> Result<Option<Arc<StoredObject>>, StoreError> {
    let Some(object) = txn.get(resource, key) else {
        return Ok(None);
    };
    let value = object.decode().map_err(encode_error)?;
    if value["metadata"]["deletionTimestamp"].is_string() {
        return Ok(Some(object));
    }
    let mut value = deleting(value, resource);
    txn.put(resource, key, &mut value).map(Some)
}

/// The finalizer of an object being deleted in the foreground, until its dependents are gone.
pub(crate) const FOREGROUND_DELETION: &str = "foregroundDeletion";

/// Whether objects of `resource` can have dependents the garbage collector deletes.
pub(crate) fn owns_dependents(resource: Resource) -> bool {
    !children(resource).is_empty()
}

/// The kinds whose objects an object of `resource` controls.
fn children(resource: Resource) -> &'static [Resource] {
    match resource {
        Resource::Deployments => &[Resource::ReplicaSets],
        Resource::ReplicaSets | Resource::Jobs => &[Resource::Pods],
        Resource::StatefulSets | Resource::DaemonSets => {
            &[Resource::Pods, Resource::ControllerRevisions]
        }
        Resource::CronJobs => &[Resource::Jobs],
        Resource::Services => &[Resource::EndpointSlices],
        _ => &[],
    }
}

/// The garbage collector's foreground deletion of `key` (marked with
/// [`FOREGROUND_DELETION`]): its dependents are deleted, then it is.
pub(crate) fn finish_foreground(
    txn: &mut Txn<'_>,
    resource: Resource,
    key: &str,
) -> Result<(), StoreError> {
    let Some(current) = txn.get(resource, key) else {
        return Ok(());
    };
    let value = current.decode().map_err(encode_error)?;
    let marked = value["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| f.iter().any(|f| f == FOREGROUND_DELETION));
    if !marked {
        return Ok(());
    }
    for (r, k) in dependents(txn, resource, key, &current) {
        delete_dependent(txn, r, &k)?;
    }
    txn.delete(resource, key).map(drop)
}

/// What the garbage collector would delete with `current`.
fn dependents(
    txn: &Txn<'_>,
    resource: Resource,
    key: &str,
    current: &StoredObject,
) -> Vec<(Resource, Key)> {
    match resource {
        Resource::Namespaces => {
            let prefix = format!("{key}/");
            txn.served()
                .into_iter()
                .filter(|r| r.namespaced())
                .flat_map(|r| {
                    txn.find(r, |k, _| k.starts_with(&prefix))
                        .into_iter()
                        .map(move |k| (r, k))
                })
                .collect()
        }
        _ => {
            let uid = current.uid.clone();
            // Dependents share their owner's namespace.
            let prefix = key
                .split_once('/')
                .map_or(String::new(), |(ns, _)| format!("{ns}/"));
            children(resource)
                .iter()
                .flat_map(|&child| {
                    txn.scan(child, &prefix)
                        .into_iter()
                        .filter(|(_, o)| o.controller_uid.as_deref() == Some(&*uid))
                        .map(move |(k, _)| (child, k))
                        .collect::<Vec<_>>()
                })
                .collect()
        }
    }
}

/// What the ReplicaSet controller does when one of its pods is deleted: a replacement from
/// the template, so deleting a Deployment's pod looks as it does on a cluster.
pub(crate) fn replace_deleted_pod(
    txn: &mut Txn<'_>,
    namespace: &str,
    owner_uid: &str,
) -> Result<(), StoreError> {
    let Some((rs_key, rs)) = txn
        .scan(Resource::ReplicaSets, &format!("{namespace}/"))
        .into_iter()
        .find(|(_, o)| &*o.uid == owner_uid)
    else {
        return Ok(());
    };
    let rs = rs.decode().map_err(|e| StoreError::Encode(e.to_string()))?;
    let desired = rs["spec"]["replicas"].as_u64().unwrap_or(0) as usize;
    let current = txn
        .scan(Resource::Pods, &format!("{rs_key}-"))
        .iter()
        .filter(|(_, o)| o.controller_uid.as_deref() == Some(owner_uid))
        .count();
    let nodes = txn.find(Resource::Nodes, |_, _| true);
    if current >= desired || nodes.is_empty() {
        return Ok(());
    }
    let mut rng = rand::rng();
    let node = &nodes[rng.random_range(0..nodes.len())];
    let rs_name = rs["metadata"]["name"].as_str().unwrap_or("pod");
    let name = format!("{rs_name}-{}", manifests::safe_suffix(&mut rng, 5));
    let uid = manifests::uid(&mut rng);
    let ip = pod_ip(rng.random_range(3_000_000..4_000_000));
    let mut pod = PodFactory::new(&rs).pod(
        &mut rng,
        &name,
        &uid,
        node,
        &node_ip(node),
        &ip,
        manifests::now_seconds(),
        PodState::Running,
    );
    txn.put(Resource::Pods, &format!("{namespace}/{name}"), &mut pod)?;
    Ok(())
}
