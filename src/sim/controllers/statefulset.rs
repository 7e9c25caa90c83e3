//! The StatefulSet controller: pods named `NAME-0` … `NAME-(N-1)`, each with its claims from
//! the volume claim templates. Under OrderedReady (the default) a pod is created only once
//! every lower ordinal is Running and ready, scale-down removes the highest ordinal first,
//! one at a time, and a rolling update replaces pods from the highest ordinal down; under
//! Parallel they all go at once. The status counts pods per revision, as `kubectl rollout
//! status sts/NAME` reads it.

use serde_json::{Value, json};

use super::super::manifests;
use super::super::resources::Resource;
use super::super::store::{StoreError, Txn};
use super::objects::{decode, owned, set_status};
use super::work::{FollowUps, STEP_DELAY, Work};
use super::{events, kubelet, pods, revisions};

const REVISION_LABEL: &str = "controller-revision-hash";

pub(super) fn reconcile(txn: &mut Txn<'_>, key: &str) -> Result<FollowUps, StoreError> {
    let Some(stored) = txn.get(Resource::StatefulSets, key) else {
        return Ok(Vec::new());
    };
    let sts = decode(&stored)?;
    if sts["metadata"]["deletionTimestamp"].is_string() {
        return Ok(Vec::new());
    }
    let name = sts["metadata"]["name"].as_str().unwrap_or("").to_string();
    let replicas = sts["spec"]["replicas"].as_u64().unwrap_or(1);
    let parallel = sts["spec"]["podManagementPolicy"] == "Parallel";
    let partition = sts["spec"]["updateStrategy"]["rollingUpdate"]["partition"]
        .as_u64()
        .unwrap_or(0);
    let on_delete = sts["spec"]["updateStrategy"]["type"] == "OnDelete";
    let (update_revision, _, _) = revisions::current(txn, &sts)?;
    let mut by_ordinal: Vec<(u64, String, Value)> =
        owned(txn, Resource::Pods, &format!("{key}-"), &stored.uid)
            .into_iter()
            .filter_map(|(k, p)| {
                let ordinal = p["metadata"]["name"]
                    .as_str()?
                    .strip_prefix(&format!("{name}-"))?
                    .parse()
                    .ok()?;
                Some((ordinal, k, p))
            })
            .collect();
    by_ordinal.sort_by_key(|(o, _, _)| *o);
    let healthy = |p: &Value| pods::is_ready(p) && !pods::terminating(p);
    let mut follow = FollowUps::new();
    // Create the missing ordinals, in order.
    for ordinal in 0..replicas {
        if by_ordinal.iter().any(|(o, _, _)| *o == ordinal) {
            continue;
        }
        let lower_ready = by_ordinal
            .iter()
            .filter(|(o, _, _)| *o < ordinal)
            .all(|(_, _, p)| healthy(p))
            && by_ordinal.iter().filter(|(o, _, _)| *o < ordinal).count() as u64 == ordinal;
        if (!parallel && !lower_ready) || txn.namespace_terminating(key) {
            break;
        }
        let pod_key = create_pod(txn, &sts, ordinal, &update_revision)?;
        follow.push((Work::Pod(pod_key.as_str().into()), Some(STEP_DELAY)));
        if !parallel {
            break;
        }
    }
    let all_healthy = by_ordinal.iter().all(|(_, _, p)| healthy(p));
    // Scale down, highest ordinal first.
    let extra: Vec<&(u64, String, Value)> = by_ordinal
        .iter()
        .rev()
        .filter(|(o, _, p)| *o >= replicas && !pods::terminating(p))
        .collect();
    for (_, pod_key, pod) in extra.iter().take(if parallel { extra.len() } else { 1 }) {
        if !parallel && !all_healthy && pods::is_ready(pod) {
            break;
        }
        follow.extend(delete_pod(txn, &sts, pod_key, pod)?);
        follow.push((Work::StatefulSet(key.into()), Some(STEP_DELAY)));
    }
    // A rolling update replaces the highest ordinal not yet at the update revision, once
    // every pod is ready.
    let complete = by_ordinal.len() as u64 == replicas && all_healthy;
    if !on_delete && complete {
        let stale = by_ordinal.iter().rev().find(|(o, _, p)| {
            *o >= partition && p["metadata"]["labels"][REVISION_LABEL] != update_revision.as_str()
        });
        if let Some((_, pod_key, pod)) = stale {
            follow.extend(delete_pod(txn, &sts, pod_key, pod)?);
            follow.push((Work::StatefulSet(key.into()), Some(STEP_DELAY)));
        }
    }
    // The status, from what is there now.
    let live: Vec<Value> = owned(txn, Resource::Pods, &format!("{key}-"), &stored.uid)
        .into_iter()
        .map(|(_, p)| p)
        .collect();
    let at = |revision: &str| {
        live.iter()
            .filter(|p| p["metadata"]["labels"][REVISION_LABEL] == revision)
            .count()
    };
    let updated = at(&update_revision);
    let ready = live.iter().filter(|p| pods::is_ready(p)).count();
    let previous_current = sts["status"]["currentRevision"]
        .as_str()
        .unwrap_or(&update_revision)
        .to_string();
    let current_revision = if updated as u64 == replicas && ready as u64 == replicas {
        update_revision.clone()
    } else {
        previous_current
    };
    let status = json!({
        "observedGeneration": sts["metadata"]["generation"].as_u64().unwrap_or(1),
        "replicas": live.len(),
        "readyReplicas": ready,
        "currentReplicas": at(&current_revision),
        "updatedReplicas": updated,
        "availableReplicas": ready,
        "currentRevision": current_revision,
        "updateRevision": update_revision,
        "collisionCount": 0,
    });
    let mut status = status;
    if let Some(s) = status.as_object_mut() {
        // The real status omits zero counts.
        s.retain(|k, v| k == "replicas" || k == "collisionCount" || v.as_u64() != Some(0));
    }
    let current = decode(&txn.get(Resource::StatefulSets, key).unwrap_or(stored))?;
    set_status(txn, Resource::StatefulSets, key, &current, status)?;
    Ok(follow)
}

/// Creates pod `ordinal` (and its claims) at `revision`, with the events the controller
/// records; returns its key.
fn create_pod(
    txn: &mut Txn<'_>,
    sts: &Value,
    ordinal: u64,
    revision: &str,
) -> Result<String, StoreError> {
    let name = sts["metadata"]["name"].as_str().unwrap_or("");
    let namespace = sts["metadata"]["namespace"].as_str().unwrap_or("");
    let pod_name = format!("{name}-{ordinal}");
    for claim in sts["spec"]["volumeClaimTemplates"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let claim_name = claim["metadata"]["name"].as_str().unwrap_or("data");
        let pvc_name = format!("{claim_name}-{pod_name}");
        let pvc_key = format!("{namespace}/{pvc_name}");
        if txn
            .get(Resource::PersistentVolumeClaims, &pvc_key)
            .is_none()
        {
            let mut pvc = claim_for(sts, claim, &pvc_name);
            txn.put(Resource::PersistentVolumeClaims, &pvc_key, &mut pvc)?;
            events::normal(
                txn,
                sts,
                None,
                "SuccessfulCreate",
                &format!("create Claim {pvc_name} Pod {pod_name} in StatefulSet {name} success"),
                &events::STATEFULSET_CONTROLLER,
            )?;
        }
    }
    let template = manifests::stateful_pod_template(sts, &pod_name);
    let labels = manifests::stateful_pod_labels(revision, &pod_name, ordinal);
    let mut pod = pods::from_template(sts, &template, &pod_name, &labels);
    kubelet::unscheduled(&mut pod);
    let pod_key = format!("{namespace}/{pod_name}");
    txn.put(Resource::Pods, &pod_key, &mut pod)?;
    events::normal(
        txn,
        sts,
        None,
        "SuccessfulCreate",
        &format!("create Pod {pod_name} in StatefulSet {name} successful"),
        &events::STATEFULSET_CONTROLLER,
    )?;
    Ok(pod_key)
}

fn delete_pod(
    txn: &mut Txn<'_>,
    sts: &Value,
    pod_key: &str,
    pod: &Value,
) -> Result<FollowUps, StoreError> {
    let follow = kubelet::delete(txn, Resource::Pods, pod_key)?;
    let name = sts["metadata"]["name"].as_str().unwrap_or("");
    let pod_name = pod["metadata"]["name"].as_str().unwrap_or("");
    events::normal(
        txn,
        sts,
        None,
        "SuccessfulDelete",
        &format!("delete Pod {pod_name} in StatefulSet {name} successful"),
        &events::STATEFULSET_CONTROLLER,
    )?;
    Ok(follow)
}

/// A claim from a volume claim template, bound at once (the sim has no provisioner to wait
/// for); it outlives the pod, as the default retention policy keeps it.
fn claim_for(sts: &Value, claim: &Value, pvc_name: &str) -> Value {
    let namespace = sts["metadata"]["namespace"].as_str().unwrap_or("");
    let now = manifests::timestamp(manifests::now_seconds());
    let mut labels = sts["spec"]["selector"]["matchLabels"].clone();
    if let (Some(l), Some(extra)) = (
        labels.as_object_mut(),
        claim["metadata"]["labels"].as_object(),
    ) {
        l.extend(extra.clone());
    }
    let mut spec = claim["spec"].clone();
    if spec["volumeMode"].is_null() {
        spec["volumeMode"] = json!("Filesystem");
    }
    let uid = manifests::uid(&mut rand::rng());
    spec["volumeName"] = json!(format!("pvc-{uid}"));
    json!({
        "kind": "PersistentVolumeClaim",
        "apiVersion": "v1",
        "metadata": {
            "name": pvc_name, "namespace": namespace, "uid": uid,
            "creationTimestamp": now, "labels": labels,
            "annotations": {"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes"},
            "finalizers": ["kubernetes.io/pvc-protection"],
        },
        "spec": spec,
        "status": {
            "phase": "Bound",
            "accessModes": claim["spec"]["accessModes"],
            "capacity": {"storage": claim["spec"]["resources"]["requests"]["storage"]},
        },
    })
}
