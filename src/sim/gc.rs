//! What kube-controller-manager does after a delete: the garbage collector removes what an
//! object owns (a namespace's contents, a Deployment's ReplicaSets, a ReplicaSet's pods), and
//! the ReplicaSet controller replaces a pod deleted from under it. Both the HTTP writes and
//! the churn delete through here.

use std::sync::Arc;

use rand::Rng;

use super::manifests::{self, PodFactory, PodState};
use super::object::StoredObject;
use super::resources::Resource;
use super::store::{Key, StoreError, Txn};
use super::workload::{node_ip, pod_ip};

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
            delete_cascading(txn, r, &k, orphan)?;
        }
    }
    txn.delete(resource, key)
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
            Resource::ALL
                .into_iter()
                .filter(|r| r.namespaced())
                .flat_map(|r| {
                    txn.find(r, |k, _| k.starts_with(&prefix))
                        .into_iter()
                        .map(move |k| (r, k))
                })
                .collect()
        }
        Resource::Deployments | Resource::ReplicaSets => {
            let child = if resource == Resource::Deployments {
                Resource::ReplicaSets
            } else {
                Resource::Pods
            };
            let uid = current.uid.clone();
            txn.find(child, |_, o| o.controller_uid.as_deref() == Some(&*uid))
                .into_iter()
                .map(|k| (child, k))
                .collect()
        }
        Resource::Nodes | Resource::Pods | Resource::Secrets => Vec::new(),
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
