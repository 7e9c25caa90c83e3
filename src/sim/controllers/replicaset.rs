//! The ReplicaSet controller: as many pods as `spec.replicas` asks (new ones unscheduled,
//! for the scheduler), extras deleted (those not ready first), and a status that counts
//! what is ready; its Deployment is reconciled after each change.

use serde_json::{Value, json};

use super::super::manifests::{self, PodFactory, PodState};
use super::super::resources::Resource;
use super::super::selectors::selects;
use super::super::store::{StoreError, Txn};
use super::objects::{decode, owner_key};
use super::work::{BURST, FollowUps, STEP_DELAY, Work};
use super::{events, kubelet, pods};

pub(super) fn reconcile(txn: &mut Txn<'_>, key: &str) -> Result<FollowUps, StoreError> {
    let Some(stored) = txn.get(Resource::ReplicaSets, key) else {
        return Ok(Vec::new());
    };
    let rs = decode(&stored)?;
    if rs["metadata"]["deletionTimestamp"].is_string() {
        return Ok(Vec::new());
    }
    let uid = stored.uid.clone();
    let desired = rs["spec"]["replicas"].as_u64().unwrap_or(1) as usize;
    let mut pods = claim_pods(txn, key, &rs, &uid)?;
    let mut follow = FollowUps::new();
    if pods.len() < desired && !txn.namespace_terminating(key) {
        let factory = PodFactory::new(&rs);
        let mut rng = rand::rng();
        let rs_name = rs["metadata"]["name"].as_str().unwrap_or("pod");
        let namespace = rs["metadata"]["namespace"].as_str().unwrap_or("default");
        for _ in 0..(desired - pods.len()).min(BURST) {
            let name = format!("{rs_name}-{}", manifests::safe_suffix(&mut rng, 5));
            let pod_key = format!("{namespace}/{name}");
            if txn.get(Resource::Pods, &pod_key).is_some() {
                continue;
            }
            let uid = manifests::uid(&mut rng);
            let mut pod = factory.pod(
                &mut rng,
                &name,
                &uid,
                "",
                "",
                "",
                manifests::now_seconds(),
                PodState::Pending,
            );
            kubelet::unscheduled(&mut pod);
            txn.put(Resource::Pods, &pod_key, &mut pod)?;
            events::normal(
                txn,
                &rs,
                None,
                "SuccessfulCreate",
                &format!("Created pod: {name}"),
                &events::REPLICASET_CONTROLLER,
            )?;
            follow.push((Work::Pod(pod_key.as_str().into()), Some(STEP_DELAY)));
            pods.push((pod_key, pod));
        }
        if desired > pods.len() {
            follow.push((Work::ReplicaSet(key.into()), None));
        }
    } else if pods.len() > desired {
        // The least far along go first, as the real controller's ranking does.
        pods.sort_by_key(|(_, p)| (kubelet::progress(p), std::cmp::Reverse(created(p))));
        let extra: Vec<(String, Value)> = pods.drain(..(pods.len() - desired).min(BURST)).collect();
        for (pod_key, pod) in extra {
            follow.extend(kubelet::delete(txn, Resource::Pods, &pod_key)?);
            let name = pod["metadata"]["name"].as_str().unwrap_or("");
            events::normal(
                txn,
                &rs,
                None,
                "SuccessfulDelete",
                &format!("Deleted pod: {name}"),
                &events::REPLICASET_CONTROLLER,
            )?;
        }
        if pods.len() > desired {
            follow.push((Work::ReplicaSet(key.into()), None));
        }
    }
    let ready = pods.iter().filter(|(_, p)| pods::is_ready(p)).count();
    let min_ready = rs["spec"]["minReadySeconds"].as_i64().unwrap_or(0);
    let (available, soonest) = availability(pods.iter().map(|(_, p)| p), min_ready);
    if let Some(wait) = soonest {
        // Looked at again when the next ready pod has been ready long enough.
        follow.push((Work::ReplicaSet(key.into()), Some(wait)));
    }
    let status = json!({
        "replicas": pods.len(),
        "fullyLabeledReplicas": pods.len(),
        "readyReplicas": ready,
        "availableReplicas": available,
        "observedGeneration": rs["metadata"]["generation"].as_u64().unwrap_or(1),
    });
    let current = txn
        .get(Resource::ReplicaSets, key)
        .map(|o| decode(&o))
        .transpose()?;
    if current.is_some_and(|c| c["status"] != status) {
        txn.modify_member(Resource::ReplicaSets, key, "status", |s| *s = status)?;
    }
    if let Some(owner) = owner_key(&rs, "Deployment") {
        follow.push((Work::Deployment(owner), None));
    }
    Ok(follow)
}

/// How many of `pods` are available: Ready for at least `min_ready` seconds (the ReplicaSet's
/// minReadySeconds), by their Ready condition's transition time; and how long until the next
/// ready one is, if one is not yet.
fn availability<'a>(
    pods: impl Iterator<Item = &'a Value>,
    min_ready: i64,
) -> (usize, Option<std::time::Duration>) {
    let now = jiff::Timestamp::now().as_second();
    let mut available = 0;
    let mut soonest: Option<i64> = None;
    for pod in pods.filter(|p| pods::is_ready(p)) {
        let since = pod["status"]["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
            .and_then(|c| c["lastTransitionTime"].as_str())
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())
            .map_or(now, |t| t.as_second());
        let left = since + min_ready - now;
        if min_ready <= 0 || left <= 0 {
            available += 1;
        } else {
            soonest = Some(soonest.map_or(left, |s| s.min(left)));
        }
    }
    let wait = soonest.map(|s| std::time::Duration::from_secs(s.unsigned_abs()));
    (available, wait)
}

/// The live pods of ReplicaSet `key` (controller uid `uid`) in its namespace, after it
/// adopted the orphans its selector matches (a controller reference added, each its own
/// write), as the real controller claims pods: so the pods an orphaning delete of its
/// predecessor left count, and are not made again.
fn claim_pods(
    txn: &mut Txn<'_>,
    key: &str,
    rs: &Value,
    uid: &str,
) -> Result<Vec<(String, Value)>, StoreError> {
    let namespace = key.split_once('/').map_or("", |(ns, _)| ns);
    let selector = &rs["spec"]["selector"];
    let mut pods = Vec::new();
    for (pod_key, object) in txn.scan(Resource::Pods, &format!("{namespace}/")) {
        let ours = object.controller_uid.as_deref() == Some(uid);
        let orphan = object.controller_uid.is_none() && selects(selector, &object.labels);
        if !ours && !orphan {
            continue;
        }
        let mut pod = decode(&object)?;
        if pods::terminating(&pod) {
            continue;
        }
        if orphan {
            add_controller(&mut pod, rs, uid);
            txn.put(Resource::Pods, &pod_key, &mut pod)?;
        }
        pods.push((pod_key.to_string(), pod));
    }
    Ok(pods)
}

/// Makes `owner` (a decoded object with kind and apiVersion, of uid `uid`) the controller
/// of `value`, which adopts it.
pub(super) fn add_controller(value: &mut Value, owner: &Value, uid: &str) {
    let reference = json!({
        "apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
        "uid": uid, "controller": true, "blockOwnerDeletion": true,
    });
    match value["metadata"]["ownerReferences"].as_array_mut() {
        Some(refs) => refs.push(reference),
        None => value["metadata"]["ownerReferences"] = json!([reference]),
    }
}

fn created(pod: &Value) -> String {
    pod["metadata"]["creationTimestamp"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::super::super::store::Store;
    use super::*;

    /// A ReplicaSet short of pods makes them, unless its namespace is being deleted, where
    /// the API server would refuse each create.
    #[test]
    fn no_pods_are_made_in_a_terminating_namespace() {
        let store = Store::new(100);
        let rs = |ns: &str| {
            json!({
                "kind": "ReplicaSet", "apiVersion": "apps/v1",
                "metadata": {"name": "web-5d8f", "namespace": ns, "uid": format!("uid-{ns}"), "generation": 1},
                "spec": {
                    "replicas": 2,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
                    },
                },
            })
        };
        store.write(|txn| {
            for (ns, deleting) in [("live", false), ("doomed", true)] {
                let mut namespace =
                    json!({"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": ns}});
                if deleting {
                    namespace["metadata"]["deletionTimestamp"] = json!("2026-12-01T22:00:00Z");
                }
                txn.put(Resource::Namespaces, ns, &mut namespace).unwrap();
                txn.put(
                    Resource::ReplicaSets,
                    &format!("{ns}/web-5d8f"),
                    &mut rs(ns),
                )
                .unwrap();
            }
        });
        let pods_in = |ns: &str| {
            store.write(|txn| {
                reconcile(txn, &format!("{ns}/web-5d8f")).unwrap();
                txn.scan(Resource::Pods, &format!("{ns}/")).len()
            })
        };
        assert_eq!(pods_in("live"), 2);
        assert_eq!(pods_in("doomed"), 0);
    }
}
