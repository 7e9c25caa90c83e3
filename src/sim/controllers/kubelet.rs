//! The scheduler and the kubelets: an unscheduled pod is bound to the least loaded node that
//! fits its nodeSelector, then its node's kubelet pulls the images and creates the
//! containers (ContainerCreating), then starts them (Running and ready). One step per
//! reconcile, each after a short delay.

use std::time::Duration;

use rand::Rng;
use serde_json::{Value, json};

use super::super::manifests;
use super::super::resources::Resource;
use super::super::store::{StoreError, Txn};
use super::super::workload::{node_ip, pod_ip};
use super::{FollowUps, STEP_DELAY, Work, decode, events, owner_key};

/// How long an unschedulable pod waits before the scheduler tries it again.
const UNSCHEDULABLE_RETRY: Duration = Duration::from_secs(5);
/// Pod IPs of the controllers' pods are drawn from here, clear of the seeded and churned ones.
const POD_IP_RANGE: std::ops::Range<u64> = 4_000_000..4_194_304;

/// Strips what the scheduler and kubelet fill in from a freshly made pod.
pub(super) fn unscheduled(pod: &mut Value) {
    if let Some(spec) = pod["spec"].as_object_mut() {
        spec.remove("nodeName");
    }
    pod["status"] = json!({"phase": "Pending", "qosClass": "Burstable"});
    if let Some(managed) = pod["metadata"]["managedFields"].as_array_mut() {
        managed.retain(|m| m["manager"] != "kubelet");
    }
}

/// How far along a pod is: unscheduled 0, scheduled 1, creating containers 2, running but
/// not ready 3, ready 4.
pub(super) fn progress(pod: &Value) -> u8 {
    if is_ready(pod) {
        4
    } else if pod["status"]["phase"] == "Running" {
        3
    } else if pod["status"]["containerStatuses"].is_array() {
        2
    } else if pod["spec"]["nodeName"]
        .as_str()
        .is_some_and(|n| !n.is_empty())
    {
        1
    } else {
        0
    }
}

pub(super) fn is_ready(pod: &Value) -> bool {
    pod["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
    })
}

fn containers(pod: &Value) -> Vec<(String, String)> {
    pod["spec"]["containers"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    (
                        c["name"].as_str().unwrap_or("").to_string(),
                        c["image"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The kubelet stops a pod's containers: a Killing event for each started one.
pub(super) fn kill(txn: &mut Txn<'_>, pod: &Value) -> Result<(), StoreError> {
    let Some(node) = pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) else {
        return Ok(());
    };
    if progress(pod) < 3 {
        return Ok(());
    }
    for (name, _) in containers(pod) {
        events::normal(
            txn,
            pod,
            Some(&format!("spec.containers{{{name}}}")),
            "Killing",
            &format!("Stopping container {name}"),
            &events::kubelet(node),
        )?;
    }
    Ok(())
}

/// The next step for pod `key`.
pub(super) fn reconcile(txn: &mut Txn<'_>, key: &str) -> Result<FollowUps, StoreError> {
    let Some(stored) = txn.get(Resource::Pods, key) else {
        return Ok(Vec::new());
    };
    let mut pod = decode(&stored)?;
    if pod["metadata"]["deletionTimestamp"].is_string() {
        return Ok(Vec::new());
    }
    let now = manifests::timestamp(manifests::now_seconds());
    let condition = |t: &str| json!({"type": t, "status": "True", "lastProbeTime": null, "lastTransitionTime": now});
    let again = vec![(Work::Pod(key.into()), Some(STEP_DELAY))];
    match progress(&pod) {
        0 => {
            let Some(node) = pick_node(txn, &pod) else {
                let nodes = txn.find(Resource::Nodes, |_, _| true).len();
                let message = format!(
                    "0/{nodes} nodes are available: {nodes} node(s) didn't match Pod's node affinity/selector. preemption: 0/{nodes} nodes are available: {nodes} Preemption is not helpful for scheduling."
                );
                // Written once, not at every retry: only a new reason is news.
                if pod["status"]["conditions"][0]["message"] != message.as_str() {
                    pod["status"]["conditions"] = json!([{
                        "type": "PodScheduled", "status": "False", "lastProbeTime": null,
                        "lastTransitionTime": now, "reason": "Unschedulable", "message": message,
                    }]);
                    txn.put(Resource::Pods, key, &mut pod)?;
                }
                return Ok(vec![(Work::Pod(key.into()), Some(UNSCHEDULABLE_RETRY))]);
            };
            pod["spec"]["nodeName"] = json!(node);
            pod["status"]["conditions"] = json!([condition("PodScheduled")]);
            txn.put(Resource::Pods, key, &mut pod)?;
            let namespace = pod["metadata"]["namespace"].as_str().unwrap_or("");
            let name = pod["metadata"]["name"].as_str().unwrap_or("");
            let message = format!("Successfully assigned {namespace}/{name} to {node}");
            events::normal(txn, &pod, None, "Scheduled", &message, &events::SCHEDULER)?;
            Ok(again)
        }
        1 => {
            let node = pod["spec"]["nodeName"].as_str().unwrap_or("").to_string();
            let host_ip = node_ip(&node);
            let statuses: Vec<Value> = containers(&pod)
                .iter()
                .map(|(name, image)| {
                    json!({
                        "name": name, "image": image, "imageID": "", "ready": false,
                        "restartCount": 0, "started": false,
                        "state": {"waiting": {"reason": "ContainerCreating"}}, "lastState": {},
                    })
                })
                .collect();
            let status = &mut pod["status"];
            status["hostIP"] = json!(host_ip);
            status["hostIPs"] = json!([{"ip": host_ip}]);
            status["startTime"] = json!(now);
            status["containerStatuses"] = json!(statuses);
            status["conditions"] = json!([
                {"type": "PodReadyToStartContainers", "status": "False", "lastProbeTime": null, "lastTransitionTime": now},
                condition("Initialized"),
                {"type": "Ready", "status": "False", "lastProbeTime": null, "lastTransitionTime": now, "reason": "ContainersNotReady", "message": "containers with unready status"},
                {"type": "ContainersReady", "status": "False", "lastProbeTime": null, "lastTransitionTime": now, "reason": "ContainersNotReady", "message": "containers with unready status"},
                condition("PodScheduled"),
            ]);
            txn.put(Resource::Pods, key, &mut pod)?;
            let source = events::kubelet(&node);
            for (name, image) in containers(&pod) {
                let path = format!("spec.containers{{{name}}}");
                let pulling = format!("Pulling image \"{image}\"");
                events::normal(txn, &pod, Some(&path), "Pulling", &pulling, &source)?;
                let pulled = format!(
                    "Successfully pulled image \"{image}\" in 1.204s (1.204s including waiting). Image size: 28815021 bytes."
                );
                events::normal(txn, &pod, Some(&path), "Pulled", &pulled, &source)?;
            }
            Ok(again)
        }
        2 => {
            let node = pod["spec"]["nodeName"].as_str().unwrap_or("").to_string();
            let mut rng = rand::rng();
            let ip = pod_ip(rng.random_range(POD_IP_RANGE));
            let statuses: Vec<Value> = containers(&pod)
                .iter()
                .map(|(name, image)| json!({
                    "name": name, "image": image,
                    "imageID": format!("{}@sha256:{}", image.split(':').next().unwrap_or(image), manifests::hex(&mut rng, 64)),
                    "containerID": format!("containerd://{}", manifests::hex(&mut rng, 64)),
                    "ready": true, "restartCount": 0, "started": true,
                    "state": {"running": {"startedAt": now}}, "lastState": {},
                }))
                .collect();
            let status = &mut pod["status"];
            status["phase"] = json!("Running");
            status["podIP"] = json!(ip);
            status["podIPs"] = json!([{"ip": ip}]);
            status["containerStatuses"] = json!(statuses);
            status["conditions"] = json!([
                condition("PodReadyToStartContainers"),
                condition("Initialized"),
                condition("Ready"),
                condition("ContainersReady"),
                condition("PodScheduled"),
            ]);
            txn.put(Resource::Pods, key, &mut pod)?;
            let source = events::kubelet(&node);
            for (name, _) in containers(&pod) {
                let path = format!("spec.containers{{{name}}}");
                let created = format!("Created container: {name}");
                events::normal(txn, &pod, Some(&path), "Created", &created, &source)?;
                let started = format!("Started container {name}");
                events::normal(txn, &pod, Some(&path), "Started", &started, &source)?;
            }
            Ok(owner_key(&pod, "ReplicaSet")
                .map(|rs| vec![(Work::ReplicaSet(rs), None)])
                .unwrap_or_default())
        }
        _ => Ok(Vec::new()),
    }
}

/// The least loaded schedulable node whose labels satisfy the pod's nodeSelector.
fn pick_node(txn: &Txn<'_>, pod: &Value) -> Option<String> {
    let selector: Vec<(&str, &str)> = pod["spec"]["nodeSelector"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or("")))
                .collect()
        })
        .unwrap_or_default();
    let fits = |_: &str, node: &super::super::object::StoredObject| {
        let cordoned = node
            .json
            .windows(UNSCHEDULABLE.len())
            .any(|w| w == UNSCHEDULABLE);
        !cordoned
            && selector.iter().all(|(k, v)| {
                node.labels
                    .iter()
                    .any(|(lk, lv)| &**lk == *k && &**lv == *v)
            })
    };
    txn.find(Resource::Nodes, fits)
        .into_iter()
        .min_by_key(|node| txn.pod_count_on_node(node))
        .map(|node| node.to_string())
}

/// How a cordoned node's spec reads in its JSON.
const UNSCHEDULABLE: &[u8] = b"\"unschedulable\":true";
