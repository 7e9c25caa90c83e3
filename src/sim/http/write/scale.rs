//! The /scale subresource of Deployments and ReplicaSets: an autoscaling/v1 Scale made from
//! the object, and writes of it that change `spec.replicas` and nothing else.

use axum::body::Bytes;
use axum::response::Response;
use serde_json::{Value, json};

use super::body::WriteOptions;
use super::preconditions::{check_resource_version, current_value};
use super::update;
use crate::Shared;
use crate::http::status::{ApiError, json_body};
use crate::http::target::{Subresource, Target};
use crate::store::Txn;

/// The Scale view of `object`.
pub(super) fn of(object: &Value) -> Value {
    let meta = &object["metadata"];
    let selector = object["spec"]["selector"]["matchLabels"]
        .as_object()
        .map(|labels| {
            labels
                .iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default();
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": meta["name"],
            "namespace": meta["namespace"],
            "uid": meta["uid"],
            "resourceVersion": meta["resourceVersion"],
            "creationTimestamp": meta["creationTimestamp"],
        },
        "spec": {"replicas": object["spec"]["replicas"].as_u64().unwrap_or(0)},
        "status": {
            "replicas": object["status"]["replicas"].as_u64().unwrap_or(0),
            "selector": selector,
        },
    })
}

pub(crate) fn get_scale(shared: &Shared, target: &Target) -> Result<Response, ApiError> {
    let name = target.name.as_deref().unwrap_or("");
    let object = shared
        .store
        .get(target.resource, &target.key(name))
        .ok_or_else(|| ApiError::not_found(target.resource, name))?
        .decode()
        .map_err(|e| ApiError::internal(&e.to_string()))?;
    Ok(json_body(of(&object).to_string()))
}

/// Stores the replicas `scale` asks for; answers with the new Scale.
pub(super) fn update(
    txn: &mut Txn<'_>,
    target: &Target,
    name: &str,
    options: &WriteOptions,
    scale: &Value,
) -> Result<Bytes, ApiError> {
    let resource = target.resource;
    if scale["kind"].as_str().is_some_and(|k| k != "Scale") {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({}) does not match the expected kind (Scale)",
            scale["kind"].as_str().unwrap_or("")
        )));
    }
    let replicas = match &scale["spec"]["replicas"] {
        Value::Null => 0,
        v => v.as_i64().filter(|r| *r >= 0).ok_or_else(|| {
            ApiError::invalid(
                "Scale",
                name,
                "spec.replicas",
                "FieldValueInvalid",
                &format!("{v}: must be greater than or equal to 0"),
            )
        })?,
    };
    let current = current_value(txn, target, name)?;
    check_resource_version(resource, name, scale, &current)?;
    let mut next = current.clone();
    next["spec"]["replicas"] = json!(replicas);
    let main = Target {
        subresource: None::<Subresource>,
        ..target.clone()
    };
    let stored = update::update_existing(
        txn,
        &main,
        name,
        &current,
        next,
        options,
        update::Ownership::Update,
    )?;
    let object: Value =
        serde_json::from_slice(&stored).map_err(|e| ApiError::internal(&e.to_string()))?;
    Ok(Bytes::from(of(&object).to_string()))
}
