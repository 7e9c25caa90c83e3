//! The DaemonSet controller: one pod on each node whose labels match the template's
//! nodeSelector, tied to its node by required node affinity (the scheduler then binds it
//! there), none elsewhere. A rolling update replaces pods of an older template, at most
//! maxUnavailable (1 by default) unready at a time.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::super::manifests;
use super::super::resources::Resource;
use super::super::store::{StoreError, Txn};
use super::objects::{decode, owned, set_status};
use super::work::{BURST, FollowUps, STEP_DELAY, Work};
use super::{events, kubelet, pods, revisions};

pub(super) fn reconcile(txn: &mut Txn<'_>, key: &str) -> Result<FollowUps, StoreError> {
    let Some(stored) = txn.get(Resource::DaemonSets, key) else {
        return Ok(Vec::new());
    };
    let ds = decode(&stored)?;
    if ds["metadata"]["deletionTimestamp"].is_string() {
        return Ok(Vec::new());
    }
    let (_, hash, _) = revisions::current(txn, &ds)?;
    let generation = ds["metadata"]["generation"].as_u64().unwrap_or(1);
    let selector: Vec<(String, String)> = ds["spec"]["template"]["spec"]["nodeSelector"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                .collect()
        })
        .unwrap_or_default();
    let nodes = txn.find(Resource::Nodes, |_, node| {
        selector.iter().all(|(k, v)| {
            node.labels
                .iter()
                .any(|(lk, lv)| **lk == **k && **lv == **v)
        })
    });
    let mut on_node: HashMap<String, Vec<(String, Value)>> = HashMap::new();
    let mut misplaced = Vec::new();
    for (pod_key, pod) in owned(txn, Resource::Pods, &format!("{key}-"), &stored.uid) {
        if pods::terminating(&pod) {
            continue;
        }
        let node = kubelet::required_node_names(&pod)
            .and_then(|n| n.into_iter().next())
            .or_else(|| pod["spec"]["nodeName"].as_str().map(str::to_string))
            .unwrap_or_default();
        if nodes.iter().any(|n| **n == *node) {
            on_node.entry(node).or_default().push((pod_key, pod));
        } else {
            misplaced.push((pod_key, pod));
        }
    }
    let mut follow = FollowUps::new();
    let mut created = 0;
    for node in &nodes {
        if on_node.contains_key(&**node) {
            continue;
        }
        if created == BURST {
            follow.push((Work::DaemonSet(key.into()), None));
            break;
        }
        if txn.namespace_terminating(key) {
            break;
        }
        let pod_key = create_pod(txn, &ds, node, &hash, generation)?;
        follow.push((Work::Pod(pod_key.as_str().into()), Some(STEP_DELAY)));
        created += 1;
    }
    // A node with two pods (a client's doing) keeps the oldest.
    for pods_here in on_node.values_mut() {
        pods_here.sort_by(|a, b| {
            a.1["metadata"]["creationTimestamp"]
                .as_str()
                .cmp(&b.1["metadata"]["creationTimestamp"].as_str())
        });
        misplaced.extend(pods_here.drain(1..));
    }
    for (pod_key, pod) in &misplaced {
        follow.extend(delete_pod(txn, &ds, pod_key, pod)?);
    }
    // Rolling update: replace pods of older templates while few enough are unavailable.
    let max_unavailable = max_unavailable(&ds, nodes.len() as u64);
    let unavailable = nodes
        .iter()
        .filter(|n| {
            on_node
                .get(&***n)
                .and_then(|p| p.first())
                .is_none_or(|(_, p)| !pods::is_ready(p))
        })
        .count() as u64;
    let mut budget = max_unavailable.saturating_sub(unavailable);
    if ds["spec"]["updateStrategy"]["type"] != "OnDelete" {
        for (pod_key, pod) in on_node.values().filter_map(|p| p.first()) {
            if budget == 0 {
                break;
            }
            if pod["metadata"]["labels"]["controller-revision-hash"] != hash.as_str()
                && pods::is_ready(pod)
            {
                follow.extend(delete_pod(txn, &ds, pod_key, pod)?);
                budget -= 1;
                follow.push((Work::DaemonSet(key.into()), Some(STEP_DELAY)));
            }
        }
    }
    let live: Vec<Value> = owned(txn, Resource::Pods, &format!("{key}-"), &stored.uid)
        .into_iter()
        .map(|(_, p)| p)
        .filter(|p| !pods::terminating(p))
        .collect();
    let scheduled = live
        .iter()
        .filter(|p| {
            p["spec"]["nodeName"]
                .as_str()
                .is_some_and(|n| !n.is_empty())
        })
        .count();
    let ready = live.iter().filter(|p| pods::is_ready(p)).count();
    let updated = live
        .iter()
        .filter(|p| p["metadata"]["labels"]["controller-revision-hash"] == hash.as_str())
        .count();
    let desired = nodes.len();
    let mut status = json!({
        "currentNumberScheduled": scheduled,
        "desiredNumberScheduled": desired,
        "numberMisscheduled": 0,
        "numberReady": ready,
        "numberAvailable": ready,
        "numberUnavailable": desired.saturating_sub(ready),
        "updatedNumberScheduled": updated,
        "observedGeneration": generation,
    });
    if let Some(s) = status.as_object_mut() {
        // As the real status, the optional counts are left out at zero.
        for k in [
            "numberAvailable",
            "numberUnavailable",
            "updatedNumberScheduled",
        ] {
            if s.get(k).and_then(Value::as_u64) == Some(0) {
                s.remove(k);
            }
        }
    }
    set_status(txn, Resource::DaemonSets, key, &ds, status)?;
    Ok(follow)
}

fn create_pod(
    txn: &mut Txn<'_>,
    ds: &Value,
    node: &str,
    hash: &str,
    generation: u64,
) -> Result<String, StoreError> {
    let name = ds["metadata"]["name"].as_str().unwrap_or("");
    let namespace = ds["metadata"]["namespace"].as_str().unwrap_or("");
    let pod_name = format!("{name}-{}", manifests::safe_suffix(&mut rand::rng(), 5));
    let template = manifests::daemon_pod_template(&ds["spec"]["template"], node);
    let labels = [
        ("controller-revision-hash", hash.to_string()),
        ("pod-template-generation", generation.to_string()),
    ];
    let mut pod = pods::from_template(ds, &template, &pod_name, &labels);
    kubelet::unscheduled(&mut pod);
    let pod_key = format!("{namespace}/{pod_name}");
    txn.put(Resource::Pods, &pod_key, &mut pod)?;
    events::normal(
        txn,
        ds,
        None,
        "SuccessfulCreate",
        &format!("Created pod: {pod_name}"),
        &events::DAEMONSET_CONTROLLER,
    )?;
    Ok(pod_key)
}

fn delete_pod(
    txn: &mut Txn<'_>,
    ds: &Value,
    pod_key: &str,
    pod: &Value,
) -> Result<FollowUps, StoreError> {
    let follow = kubelet::delete(txn, Resource::Pods, pod_key)?;
    let pod_name = pod["metadata"]["name"].as_str().unwrap_or("");
    events::normal(
        txn,
        ds,
        None,
        "SuccessfulDelete",
        &format!("Deleted pod: {pod_name}"),
        &events::DAEMONSET_CONTROLLER,
    )?;
    Ok(follow)
}

/// The rolling update's maxUnavailable over `nodes` nodes: a count or a percentage
/// (rounded up, and at least one).
fn max_unavailable(ds: &Value, nodes: u64) -> u64 {
    match &ds["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"] {
        Value::Number(n) => n.as_u64().unwrap_or(1),
        Value::String(p) => p
            .trim_end_matches('%')
            .parse::<u64>()
            .map_or(1, |p| (nodes * p).div_ceil(100)),
        _ => 1,
    }
    .max(1)
}
