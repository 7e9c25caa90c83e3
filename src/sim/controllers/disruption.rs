//! The disruption controller: each PodDisruptionBudget's status says how many of the pods it
//! selects are healthy, how many must be, and so how many may be evicted now. The eviction
//! subresource reads it (afresh, in the eviction's own write) and spends one disruption per
//! pod it evicts, as kube-apiserver does.

use std::collections::{BTreeMap, HashSet};

use serde_json::{Value, json};

use super::super::manifests;
use super::super::resources::Resource;
use super::super::selectors::selects;
use super::super::store::{StoreError, Txn};
use super::objects::decode;
use super::pods;
use super::work::{FollowUps, Work};

/// How long an evicted pod not yet Terminating is taken as disrupted (the real
/// controller's DeletionTimeout).
const DELETION_TIMEOUT_SECONDS: i64 = 120;

/// Recomputes budget `key`'s status, written only if it changed.
pub(super) fn reconcile(txn: &mut Txn<'_>, key: &str) -> Result<FollowUps, StoreError> {
    let Some(stored) = txn.get(Resource::PodDisruptionBudgets, key) else {
        return Ok(Vec::new());
    };
    let pdb = decode(&stored)?;
    let status = status(txn, &pdb)?;
    if pdb["status"] != status {
        txn.modify_member(Resource::PodDisruptionBudgets, key, "status", |s| {
            *s = status;
        })?;
    }
    Ok(Vec::new())
}

/// The budgets whose selector takes in `pod`, to be recounted.
pub(super) fn covering(txn: &Txn<'_>, pod: &Value) -> FollowUps {
    budgets_of(txn, pod)
        .into_iter()
        .map(|(key, _)| (Work::Disruption(key.into()), None))
        .collect()
}

/// The budgets (key and decoded) in `pod`'s namespace whose selector matches its labels.
pub(crate) fn budgets_of(txn: &Txn<'_>, pod: &Value) -> Vec<(String, Value)> {
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or("");
    let labels = labels_of(pod);
    txn.scan(Resource::PodDisruptionBudgets, &format!("{namespace}/"))
        .into_iter()
        .filter_map(|(key, object)| Some((key.to_string(), decode(&object).ok()?)))
        .filter(|(_, pdb)| selects(&pdb["spec"]["selector"], &labels))
        .collect()
}

fn labels_of(pod: &Value) -> Vec<(Box<str>, Box<str>)> {
    pod["metadata"]["labels"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.as_str().into(), v.as_str().unwrap_or("").into()))
        .collect()
}

/// What `pdb`'s status is now: its pods counted from the store.
pub(crate) fn status(txn: &Txn<'_>, pdb: &Value) -> Result<Value, StoreError> {
    let namespace = pdb["metadata"]["namespace"].as_str().unwrap_or("");
    let selector = &pdb["spec"]["selector"];
    let mut selected = Vec::new();
    for (key, object) in txn.scan(Resource::Pods, &format!("{namespace}/")) {
        if selects(selector, &object.labels) {
            selected.push((key, decode(&object)?));
        }
    }
    let now = manifests::now_seconds();
    // Evicted pods not yet Terminating are still counted out, for a while.
    let disrupted: BTreeMap<String, Value> = pdb["status"]["disruptedPods"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(name, at)| {
            let pending = selected
                .iter()
                .any(|(_, p)| p["metadata"]["name"] == name.as_str() && !pods::terminating(p));
            let recent = at
                .as_str()
                .and_then(|t| t.parse::<jiff::Timestamp>().ok())
                .is_some_and(|t| t.as_second() + DELETION_TIMEOUT_SECONDS > now);
            pending && recent
        })
        .map(|(name, at)| (name.clone(), at.clone()))
        .collect();
    let healthy = selected
        .iter()
        .filter(|(_, p)| pods::is_ready(p) && !pods::terminating(p))
        .filter(|(_, p)| {
            p["metadata"]["name"]
                .as_str()
                .is_none_or(|n| !disrupted.contains_key(n))
        })
        .count() as i64;
    let spec = &pdb["spec"];
    let (expected, desired) = match (&spec["minAvailable"], &spec["maxUnavailable"]) {
        (Value::Number(n), _) => (selected.len() as i64, n.as_i64().unwrap_or(0)),
        (Value::String(p), _) => {
            let expected = scale_of(txn, &selected)?;
            (expected, percent_of(p, expected))
        }
        (_, max) => {
            let expected = scale_of(txn, &selected)?;
            let unavailable = match max {
                Value::Number(n) => n.as_i64().unwrap_or(0),
                Value::String(p) => percent_of(p, expected),
                _ => 0,
            };
            (expected, (expected - unavailable).max(0))
        }
    };
    let allowed = (healthy - desired).max(0);
    let generation = pdb["metadata"]["generation"].as_i64().unwrap_or(1);
    let (state, reason) = if allowed > 0 {
        ("True", "SufficientPods")
    } else {
        ("False", "InsufficientPods")
    };
    let previous = pdb["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "DisruptionAllowed"));
    let since = previous.filter(|c| c["status"] == state).map_or_else(
        || json!(manifests::timestamp(now)),
        |c| c["lastTransitionTime"].clone(),
    );
    let mut status = json!({
        "observedGeneration": generation,
        "disruptionsAllowed": allowed,
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "expectedPods": expected,
        "conditions": [{"type": "DisruptionAllowed", "status": state, "reason": reason,
            "message": "", "observedGeneration": generation, "lastTransitionTime": since}],
    });
    if !disrupted.is_empty() {
        status["disruptedPods"] = json!(disrupted);
    }
    Ok(status)
}

/// `N%` of `total`, rounded up, as the real controller scales percentages.
fn percent_of(text: &str, total: i64) -> i64 {
    let percent: i64 = text.trim_end_matches('%').parse().unwrap_or(0);
    (percent * total + 99) / 100
}

/// How many pods the controllers of `selected` want: the sum of their scales, each counted
/// once; a pod no controller owns counts for itself.
fn scale_of(txn: &Txn<'_>, selected: &[(crate::store::Key, Value)]) -> Result<i64, StoreError> {
    let mut seen = HashSet::new();
    let mut total = 0;
    for (_, pod) in selected {
        let owner = pod["metadata"]["ownerReferences"]
            .as_array()
            .and_then(|refs| refs.iter().find(|r| r["controller"] == true));
        let Some(owner) = owner else {
            total += 1;
            continue;
        };
        let uid = owner["uid"].as_str().unwrap_or("").to_string();
        if !seen.insert(uid) {
            continue;
        }
        let namespace = pod["metadata"]["namespace"].as_str().unwrap_or("");
        let name = owner["name"].as_str().unwrap_or("");
        let resource = match owner["kind"].as_str() {
            Some("ReplicaSet") => Resource::ReplicaSets,
            Some("StatefulSet") => Resource::StatefulSets,
            _ => {
                total += 1;
                continue;
            }
        };
        let replicas = txn
            .get(resource, &format!("{namespace}/{name}"))
            .map(|o| decode(&o))
            .transpose()?
            .and_then(|o| o["spec"]["replicas"].as_i64())
            .unwrap_or(1);
        total += replicas;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_round_up() {
        assert_eq!(percent_of("50%", 3), 2);
        assert_eq!(percent_of("10%", 10), 1);
        assert_eq!(percent_of("0%", 10), 0);
    }
}
