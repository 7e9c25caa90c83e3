//! The `pods/eviction` subresource (a policy/v1 Eviction, as `kubectl drain` posts it): the
//! pod is deleted as by a DELETE with the eviction's `deleteOptions`, unless the one
//! PodDisruptionBudget selecting it has no disruption left to give, when the answer is the
//! real server's 429. An allowed eviction spends one disruption (the budget's
//! `disruptionsAllowed` and `disruptedPods`) and marks the pod with a DisruptionTarget
//! condition, in the same write as the delete.

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

use super::body::decode_object;
use super::delete::delete_evicted;
use crate::Shared;
use crate::controllers::disruption;
use crate::http::params::Params;
use crate::http::status::{ApiError, json_body};
use crate::http::target::Target;
use crate::manifests;
use crate::resources::Resource;
use crate::store::Txn;

pub(crate) fn evict(
    shared: &Shared,
    target: &Target,
    params: &Params,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Response, ApiError> {
    let eviction = decode_object(headers, body)?;
    let name = target.name.as_deref().unwrap_or("");
    if eviction["metadata"]["name"].as_str() != Some(name) {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Eviction object",
        ));
    }
    let mut options = eviction["deleteOptions"].clone();
    shared.store.write(|txn| {
        let key = target.key(name);
        let pod = txn
            .get(Resource::Pods, &key)
            .ok_or_else(|| ApiError::not_found(Resource::Pods, name))?
            .decode()
            .map_err(|e| ApiError::internal(&e.to_string()))?;
        let dry_run = params.get("dryRun").is_some()
            || options["dryRun"].as_array().is_some_and(|d| !d.is_empty());
        // A resourceVersion precondition holds for the pod as it was asked for, before the
        // condition below changes it.
        if let Some(rv) = options["preconditions"]["resourceVersion"].as_str() {
            let current = pod["metadata"]["resourceVersion"].as_str().unwrap_or("");
            if rv != current {
                return Err(ApiError::conflict_because(
                    Resource::Pods,
                    name,
                    &format!(
                        "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {current}"
                    ),
                ));
            }
            if let Some(p) = options["preconditions"].as_object_mut() {
                p.remove("resourceVersion");
            }
        }
        if !ignores_budgets(&pod) {
            spend_budget(txn, &pod, dry_run)?;
        }
        if !dry_run {
            mark_disruption_target(txn, &key, pod)?;
        }
        delete_evicted(txn, target, name, &options, params, &shared.controllers)
    })?;
    let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201});
    let mut response = json_body(status.to_string());
    *response.status_mut() = StatusCode::CREATED;
    Ok(response)
}

/// A pod that is not running (Pending, done) or already Terminating is no disruption: its
/// budget is not asked.
fn ignores_budgets(pod: &Value) -> bool {
    matches!(
        pod["status"]["phase"].as_str(),
        Some("Pending" | "Succeeded" | "Failed")
    ) || pod["metadata"]["deletionTimestamp"].is_string()
}

fn is_ready(pod: &Value) -> bool {
    pod["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
    })
}

/// Checks `pod`'s budget (counted afresh) and, unless `dry_run`, spends one disruption.
fn spend_budget(txn: &mut Txn<'_>, pod: &Value, dry_run: bool) -> Result<(), ApiError> {
    let budgets = disruption::budgets_of(txn, pod);
    let (key, pdb) = match budgets.as_slice() {
        [] => return Ok(()),
        [one] => one,
        _ => {
            return Err(ApiError::internal(
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
            ));
        }
    };
    let internal = |e: crate::store::StoreError| ApiError::internal(&e.to_string());
    let mut status = disruption::status(txn, pdb).map_err(internal)?;
    let count = |field: &str| status[field].as_i64().unwrap_or(0);
    if !is_ready(pod) {
        // An unhealthy pod may go while the budget is met (IfHealthyBudget), or always.
        let always = pdb["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow";
        if always || count("currentHealthy") >= count("desiredHealthy") {
            return Ok(());
        }
    }
    if count("disruptionsAllowed") == 0 {
        let budget = pdb["metadata"]["name"].as_str().unwrap_or("");
        return Err(ApiError::disruption_budget(&format!(
            "The disruption budget {budget} needs {} healthy pods and has {} currently",
            count("desiredHealthy"),
            count("currentHealthy")
        )));
    }
    if dry_run {
        return Ok(());
    }
    status["disruptionsAllowed"] = json!(count("disruptionsAllowed") - 1);
    let pod_name = pod["metadata"]["name"].as_str().unwrap_or("").to_string();
    let now = manifests::timestamp(manifests::now_seconds());
    status["disruptedPods"][pod_name] = json!(now);
    txn.modify_member(Resource::PodDisruptionBudgets, key, "status", |s| {
        *s = status;
    })
    .map_err(internal)?;
    Ok(())
}

/// The DisruptionTarget condition an evicted pod gets before it is deleted.
fn mark_disruption_target(txn: &mut Txn<'_>, key: &str, mut pod: Value) -> Result<(), ApiError> {
    let now = manifests::timestamp(manifests::now_seconds());
    let condition = json!({"type": "DisruptionTarget", "status": "True", "lastProbeTime": null,
        "lastTransitionTime": now, "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"});
    match pod["status"]["conditions"].as_array_mut() {
        Some(conditions) => {
            conditions.retain(|c| c["type"] != "DisruptionTarget");
            conditions.push(condition);
        }
        None => pod["status"]["conditions"] = json!([condition]),
    }
    txn.put(Resource::Pods, key, &mut pod)
        .map_err(|e| ApiError::internal(&e.to_string()))?;
    Ok(())
}
