//! The Deployment controller: the ReplicaSet whose template is the Deployment's (created,
//! with the next revision, when there is none) is scaled to `spec.replicas`; once it is all
//! available the older ReplicaSets are scaled to zero; the status sums them up, with the
//! Available and Progressing conditions `kubectl rollout status` reads.

use serde_json::{Value, json};

use super::super::manifests;
use super::super::resources::Resource;
use super::super::store::{StoreError, Txn};
use super::{FollowUps, Work, decode, events};

const REVISION: &str = "deployment.kubernetes.io/revision";

pub(super) fn reconcile(txn: &mut Txn<'_>, key: &str) -> Result<FollowUps, StoreError> {
    let Some(stored) = txn.get(Resource::Deployments, key) else {
        return Ok(Vec::new());
    };
    let d = decode(&stored)?;
    if d["metadata"]["deletionTimestamp"].is_string() {
        return Ok(Vec::new());
    }
    let desired = d["spec"]["replicas"].as_u64().unwrap_or(1);
    let uid = stored.uid.clone();
    let owned: Vec<(String, Value)> = txn
        .scan(Resource::ReplicaSets, &format!("{key}-"))
        .into_iter()
        .filter(|(_, o)| o.controller_uid.as_deref() == Some(&*uid))
        .filter_map(|(k, o)| Some((k.to_string(), o.decode().ok()?)))
        .collect();
    let mut follow = FollowUps::new();
    let template = &d["spec"]["template"];
    let new = owned
        .iter()
        .find(|(_, rs)| same_template(&rs["spec"]["template"], template));
    let spec = |rs: &Value| rs["spec"]["replicas"].as_u64().unwrap_or(0);
    let count = |rs: &Value, field: &str| rs["status"][field].as_u64().unwrap_or(0);
    let is_new = |k: &String| new.is_some_and(|(n, _)| n == k);
    let old_spec: u64 = owned
        .iter()
        .filter(|(k, _)| !is_new(k))
        .map(|(_, rs)| spec(rs))
        .sum();
    let old_running: u64 = owned
        .iter()
        .filter(|(k, _)| !is_new(k))
        .map(|(_, rs)| count(rs, "replicas"))
        .sum();
    let recreate = d["spec"]["strategy"]["type"] == "Recreate";
    let (max_surge, max_unavailable) = limits(&d, desired);
    // What the new ReplicaSet may grow to now: Recreate waits for the old pods to be gone,
    // RollingUpdate keeps the total within desired + maxSurge.
    let allowed = |current: u64| {
        if current > desired {
            desired
        } else if recreate {
            if old_spec == 0 && old_running == 0 {
                desired
            } else {
                current
            }
        } else {
            desired.min(current + (desired + max_surge).saturating_sub(old_spec + current))
        }
    };
    let (new_key, new_rs) = match new {
        Some((k, rs)) => (k.clone(), rs.clone()),
        None => {
            let revision = owned.iter().map(|(_, rs)| revision(rs)).max().unwrap_or(0) + 1;
            let hash = manifests::template_hash(template);
            let mut rng = rand::rng();
            let now = manifests::timestamp(manifests::now_seconds());
            let mut rs = manifests::replicaset(
                &d,
                &hash,
                &manifests::uid(&mut rng),
                allowed(0) as u32,
                revision as u32,
                &now,
            );
            rs["status"] = json!({"replicas": 0, "observedGeneration": 0});
            let name = rs["metadata"]["name"].as_str().unwrap_or("").to_string();
            let namespace = rs["metadata"]["namespace"]
                .as_str()
                .unwrap_or("")
                .to_string();
            let rs_key = format!("{namespace}/{name}");
            txn.put(Resource::ReplicaSets, &rs_key, &mut rs)?;
            if allowed(0) > 0 {
                let message = format!("Scaled up replica set {name} from 0 to {}", allowed(0));
                scaling(txn, &d, &message)?;
            }
            follow.push((Work::ReplicaSet(rs_key.as_str().into()), None));
            (rs_key, rs)
        }
    };
    if d["metadata"]["annotations"][REVISION] != new_rs["metadata"]["annotations"][REVISION] {
        let revision = new_rs["metadata"]["annotations"][REVISION].clone();
        txn.modify_member(Resource::Deployments, key, "metadata", |meta| {
            meta["annotations"][REVISION] = revision;
        })?;
    }
    let new_replicas = spec(&new_rs);
    if allowed(new_replicas) != new_replicas {
        resize(txn, &d, &new_key, &new_rs, allowed(new_replicas))?;
        follow.push((Work::ReplicaSet(new_key.as_str().into()), None));
    }
    let mut total = 0;
    let mut ready = 0;
    let mut available = 0;
    for (_, rs) in &owned {
        total += count(rs, "replicas");
        ready += count(rs, "readyReplicas");
        available += count(rs, "availableReplicas");
    }
    // Old ReplicaSets shrink, oldest first: their unavailable pods freely, the available
    // ones only while desired - maxUnavailable stay available (Recreate: all at once).
    let mut removable = available.saturating_sub(desired.saturating_sub(max_unavailable));
    let mut old: Vec<&(String, Value)> = owned.iter().filter(|(k, _)| *k != new_key).collect();
    old.sort_by_key(|(_, rs)| revision(rs));
    for (rs_key, rs) in old {
        let current = spec(rs);
        if current == 0 {
            continue;
        }
        let target = if recreate {
            0
        } else {
            let unhealthy = current.saturating_sub(count(rs, "availableReplicas"));
            let healthy = (current - unhealthy).min(removable);
            removable -= healthy;
            current - unhealthy - healthy
        };
        if target != current {
            resize(txn, &d, rs_key, rs, target)?;
            follow.push((Work::ReplicaSet(rs_key.as_str().into()), None));
        }
    }
    let updated = new_rs["status"]["replicas"].as_u64().unwrap_or(0);
    let complete = updated == desired && total == desired && available >= desired;
    let now = manifests::timestamp(manifests::now_seconds());
    let new_name = new_rs["metadata"]["name"].as_str().unwrap_or("");
    let current = &d["status"];
    let condition = |kind: &str, ok: bool, reason: &str, message: String| {
        let status = if ok { "True" } else { "False" };
        // A condition keeps its transition time while its status holds.
        let previous = current["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == kind));
        let transition = previous
            .filter(|c| c["status"] == status)
            .map_or(json!(now), |c| c["lastTransitionTime"].clone());
        let update = previous
            .filter(|c| c["reason"] == reason)
            .map_or(json!(now), |c| c["lastUpdateTime"].clone());
        json!({"type": kind, "status": status, "lastUpdateTime": update,
               "lastTransitionTime": transition, "reason": reason, "message": message})
    };
    let status = json!({
        "observedGeneration": d["metadata"]["generation"].as_u64().unwrap_or(1),
        "replicas": total,
        "updatedReplicas": updated,
        "readyReplicas": ready,
        "availableReplicas": available,
        "unavailableReplicas": total.saturating_sub(available),
        "conditions": [
            if available >= desired.saturating_sub(max_unavailable) {
                condition("Available", true, "MinimumReplicasAvailable", "Deployment has minimum availability.".into())
            } else {
                condition("Available", false, "MinimumReplicasUnavailable", "Deployment does not have minimum availability.".into())
            },
            if complete {
                condition("Progressing", true, "NewReplicaSetAvailable", format!("ReplicaSet \"{new_name}\" has successfully progressed."))
            } else {
                condition("Progressing", true, "ReplicaSetUpdated", format!("ReplicaSet \"{new_name}\" is progressing."))
            },
        ],
    });
    let mut status = status;
    if let Some(s) = status.as_object_mut() {
        // The real status omits zero counts.
        s.retain(|_, v| v.as_u64() != Some(0));
    }
    if d["status"] != status {
        txn.modify_member(Resource::Deployments, key, "status", |s| *s = status)?;
    }
    Ok(follow)
}

/// Sets a ReplicaSet's replicas (and its desired-replicas annotation), recording the
/// ScalingReplicaSet event the Deployment controller does.
fn resize(
    txn: &mut Txn<'_>,
    d: &Value,
    rs_key: &str,
    rs: &Value,
    replicas: u64,
) -> Result<(), StoreError> {
    let from = rs["spec"]["replicas"].as_u64().unwrap_or(0);
    let name = rs["metadata"]["name"].as_str().unwrap_or("");
    let mut next = rs.clone();
    next["spec"]["replicas"] = json!(replicas);
    next["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] =
        json!(d["spec"]["replicas"].as_u64().unwrap_or(1).to_string());
    let generation = rs["metadata"]["generation"].as_u64().unwrap_or(1) + 1;
    next["metadata"]["generation"] = json!(generation);
    txn.put(Resource::ReplicaSets, rs_key, &mut next)?;
    let direction = if replicas > from { "up" } else { "down" };
    let message = format!("Scaled {direction} replica set {name} from {from} to {replicas}");
    scaling(txn, d, &message)
}

fn scaling(txn: &mut Txn<'_>, d: &Value, message: &str) -> Result<(), StoreError> {
    events::normal(
        txn,
        d,
        None,
        "ScalingReplicaSet",
        message,
        &events::DEPLOYMENT_CONTROLLER,
    )
}

/// maxSurge and maxUnavailable for `desired` replicas: a count or a percentage (surge
/// rounded up, unavailable down, 25% each by default), and never both zero.
fn limits(d: &Value, desired: u64) -> (u64, u64) {
    let rolling = &d["spec"]["strategy"]["rollingUpdate"];
    let resolve = |v: &Value, round_up: bool| match v {
        Value::Number(n) => n.as_u64().unwrap_or(0),
        Value::String(p) => {
            let percent = p.trim_end_matches('%').parse::<u64>().unwrap_or(25);
            let scaled = desired * percent;
            if round_up {
                scaled.div_ceil(100)
            } else {
                scaled / 100
            }
        }
        _ => {
            if round_up {
                (desired * 25).div_ceil(100)
            } else {
                desired * 25 / 100
            }
        }
    };
    let surge = resolve(&rolling["maxSurge"], true);
    let unavailable = resolve(&rolling["maxUnavailable"], false);
    if surge == 0 && unavailable == 0 {
        (0, 1)
    } else {
        (surge, unavailable)
    }
}

fn revision(rs: &Value) -> u64 {
    rs["metadata"]["annotations"][REVISION]
        .as_str()
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

/// Whether a ReplicaSet's template is the Deployment's, its pod-template-hash label aside.
fn same_template(rs_template: &Value, template: &Value) -> bool {
    let mut without = rs_template.clone();
    if let Some(labels) = without["metadata"]["labels"].as_object_mut() {
        labels.remove("pod-template-hash");
    }
    &without == template
}
