//! Pods made from a workload's template, as kube-controller-manager's pod control makes
//! them: the template's labels and spec, the owner as controller, and nothing the scheduler
//! or kubelet fills in (they follow, each in its own write).

use serde_json::{Value, json};

use super::super::manifests::{self, fields_v1, managed_entry};

/// A new pod `name` of `owner` (a decoded object with kind and apiVersion) from `template`,
/// with `labels` added to the template's.
pub(super) fn from_template(
    owner: &Value,
    template: &Value,
    name: &str,
    labels: &[(&str, String)],
) -> Value {
    let meta = &owner["metadata"];
    let now = manifests::timestamp(manifests::now_seconds());
    let mut pod_labels = template["metadata"]["labels"].clone();
    if !pod_labels.is_object() {
        pod_labels = json!({});
    }
    for (k, v) in labels {
        pod_labels[*k] = json!(v);
    }
    let mut metadata = json!({
        "name": name,
        "namespace": meta["namespace"],
        "uid": manifests::uid(&mut rand::rng()),
        "creationTimestamp": now,
        "labels": pod_labels,
        "ownerReferences": [{
            "apiVersion": owner["apiVersion"],
            "kind": owner["kind"],
            "name": meta["name"],
            "uid": meta["uid"],
            "controller": true,
            "blockOwnerDeletion": true,
        }],
    });
    if owner["kind"] != "StatefulSet" {
        metadata["generateName"] = json!(format!("{}-", meta["name"].as_str().unwrap_or("")));
    }
    if let Some(annotations) = template["metadata"]["annotations"]
        .as_object()
        .filter(|a| !a.is_empty())
    {
        metadata["annotations"] = json!(annotations);
    }
    let mut spec = template["spec"].clone();
    if spec["tolerations"].is_null() {
        spec["tolerations"] = json!([
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        ]);
    }
    for (field, value) in [
        ("priority", json!(0)),
        ("enableServiceLinks", json!(true)),
        ("preemptionPolicy", json!("PreemptLowerPriority")),
        ("serviceAccountName", json!("default")),
        ("serviceAccount", json!("default")),
    ] {
        if spec[field].is_null() {
            spec[field] = value;
        }
    }
    let mut owned = json!({"f:metadata": fields_v1(&metadata), "f:spec": fields_v1(&spec)});
    if let Some(m) = owned["f:metadata"].as_object_mut() {
        for k in ["f:name", "f:namespace", "f:uid", "f:creationTimestamp"] {
            m.remove(k);
        }
    }
    metadata["managedFields"] = json!([managed_entry(
        "kube-controller-manager",
        "v1",
        &now,
        owned,
        None
    )]);
    json!({
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": metadata,
        "spec": spec,
        "status": {"phase": "Pending", "qosClass": "BestEffort"},
    })
}

/// Whether a pod is done: its phase is Succeeded or Failed.
pub(super) fn finished(pod: &Value) -> bool {
    matches!(
        pod["status"]["phase"].as_str(),
        Some("Succeeded" | "Failed")
    )
}

/// Whether a pod's Ready condition is True.
pub(super) fn is_ready(pod: &Value) -> bool {
    pod["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
    })
}

/// Whether a pod is being deleted.
pub(super) fn terminating(pod: &Value) -> bool {
    pod["metadata"]["deletionTimestamp"].is_string()
}

/// The exit code of a container the kubelet killed (SIGKILL).
pub(super) const KILLED_EXIT: i64 = 137;

/// The number that follows the first `word` in `script`.
pub(super) fn number_after(script: &str, word: &str) -> Option<f64> {
    let (_, rest) = script.split_once(word)?;
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    digits.parse().ok()
}

pub(super) fn container_specs(pod: &Value) -> Vec<Value> {
    pod["spec"]["containers"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Sets the pod's conditions from its containers' readiness (or completion).
pub(super) fn set_conditions(pod: &mut Value, now: &str) {
    let statuses = pod["status"]["containerStatuses"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let finished = finished(pod);
    let ready = !finished && !statuses.is_empty() && statuses.iter().all(|s| s["ready"] == true);
    let previous = pod["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let condition = |kind: &str, ok: bool, reason: Option<&str>, message: Option<&str>| {
        let status = if ok { "True" } else { "False" };
        let transition = previous
            .iter()
            .find(|c| c["type"] == kind && c["status"] == status)
            .map_or(json!(now), |c| c["lastTransitionTime"].clone());
        let mut c = json!({"type": kind, "status": status, "lastProbeTime": null, "lastTransitionTime": transition});
        if let Some(reason) = reason {
            c["reason"] = json!(reason);
        }
        if let Some(message) = message {
            c["message"] = json!(message);
        }
        c
    };
    let unready: Vec<String> = statuses
        .iter()
        .filter(|s| s["ready"] != true)
        .filter_map(|s| s["name"].as_str().map(str::to_string))
        .collect();
    let message = format!("containers with unready status: [{}]", unready.join(" "));
    let ended = if pod["status"]["phase"] == "Failed" {
        "PodFailed"
    } else {
        "PodCompleted"
    };
    let (reason, message) = if finished {
        (Some(ended), None)
    } else if ready {
        (None, None)
    } else {
        (Some("ContainersNotReady"), Some(message.as_str()))
    };
    let mut conditions = vec![
        condition("PodReadyToStartContainers", !finished, None, None),
        condition("Initialized", true, finished.then_some(ended), None),
        condition("Ready", ready, reason, message),
        condition("ContainersReady", ready, reason, message),
        condition("PodScheduled", true, None, None),
    ];
    // Those others set (an eviction's DisruptionTarget) stay.
    let own = |c: &Value| conditions.iter().any(|o| o["type"] == c["type"]);
    let kept: Vec<Value> = previous.iter().filter(|c| !own(c)).cloned().collect();
    conditions.extend(kept);
    pod["status"]["conditions"] = json!(conditions);
}
