//! The node lifecycle controller's taint for a cordoned node: `kubectl cordon` only sets
//! `spec.unschedulable`, and the controller then adds `node.kubernetes.io/unschedulable`
//! (NoSchedule), removing it on uncordon, so clients that read taints see the cordon as on
//! a real cluster.

use serde_json::{Value, json};

use super::super::manifests;
use super::super::resources::Resource;
use super::super::store::{StoreError, Txn};
use super::objects::decode;
use super::work::{FollowUps, Work};

/// The taint a cordoned node carries.
const UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";

/// Keeps node `key`'s unschedulable taint in step with its `spec.unschedulable`.
pub(super) fn reconcile(txn: &mut Txn<'_>, key: &str) -> Result<FollowUps, StoreError> {
    let Some(stored) = txn.get(Resource::Nodes, key) else {
        return Ok(Vec::new());
    };
    let mut node = decode(&stored)?;
    let cordoned = node["spec"]["unschedulable"] == true;
    let mut taints = node["spec"]["taints"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let tainted = taints.iter().any(|t| t["key"] == UNSCHEDULABLE);
    if cordoned == tainted {
        return Ok(Vec::new());
    }
    if cordoned {
        let now = manifests::timestamp(manifests::now_seconds());
        taints.push(json!({"key": UNSCHEDULABLE, "effect": "NoSchedule", "timeAdded": now}));
    } else {
        taints.retain(|t| t["key"] != UNSCHEDULABLE);
    }
    match node["spec"].as_object_mut() {
        Some(spec) if taints.is_empty() => {
            spec.remove("taints");
        }
        _ => node["spec"]["taints"] = Value::Array(taints),
    }
    txn.put(Resource::Nodes, key, &mut node)?;
    // The scheduler and the DaemonSets look at the node as it now is.
    Ok(vec![(Work::Nodes, None)])
}

#[cfg(test)]
mod tests {
    use super::super::super::store::Store;
    use super::*;

    fn taints(store: &Store) -> Value {
        let node = store.get(Resource::Nodes, "n1").expect("node");
        decode(&node).expect("decodes")["spec"]["taints"].clone()
    }

    #[test]
    fn a_cordon_adds_the_taint_and_an_uncordon_removes_only_it() {
        let store = Store::new(100);
        let other = json!({"key": "dedicated", "value": "gpu", "effect": "NoSchedule"});
        let mut node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "spec": {"unschedulable": true, "taints": [other.clone()]}});
        store
            .write(|txn| txn.put(Resource::Nodes, "n1", &mut node).map(drop))
            .expect("put");
        store.write(|txn| reconcile(txn, "n1")).expect("reconcile");
        let cordoned = taints(&store);
        assert_eq!(cordoned[0], other);
        assert_eq!(cordoned[1]["key"], UNSCHEDULABLE);
        assert_eq!(cordoned[1]["effect"], "NoSchedule");
        // Looked at again, nothing changes.
        let rv = store.position().rv;
        store.write(|txn| reconcile(txn, "n1")).expect("reconcile");
        assert_eq!(store.position().rv, rv);
        store
            .write(|txn| {
                txn.modify_member(Resource::Nodes, "n1", "spec", |s| {
                    s["unschedulable"] = json!(false);
                })
                .map(drop)
            })
            .expect("uncordon");
        store.write(|txn| reconcile(txn, "n1")).expect("reconcile");
        assert_eq!(taints(&store), json!([other]));
    }
}
