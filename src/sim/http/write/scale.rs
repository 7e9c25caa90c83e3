//! The /scale subresource of Deployments, ReplicaSets, StatefulSets and the custom resources
//! that declare `subresources.scale`: an autoscaling/v1 Scale made from the object, and
//! writes of it that change the replicas and nothing else.

use axum::body::Bytes;
use axum::response::Response;
use serde_json::{Value, json};

use super::body::WriteOptions;
use super::preconditions::{check_resource_version, current_value};
use super::update;
use crate::Shared;
use crate::http::status::{ApiError, json_body};
use crate::http::target::{Subresource, Target};
use crate::resources::{Resource, ScalePaths};
use crate::store::Txn;

/// The Scale view of `object`, a `resource`: `spec.replicas`, `status.replicas` and the
/// selector's labels of a built-in kind, or where a custom resource's
/// `subresources.scale` points.
pub(super) fn of(resource: Resource, object: &Value) -> Value {
    let meta = &object["metadata"];
    let (spec_replicas, status_replicas, selector) = match scale_paths(resource) {
        Some(paths) => (
            at(object, &paths.spec_replicas),
            at(object, &paths.status_replicas),
            paths
                .label_selector
                .as_deref()
                .and_then(|p| at(object, p).as_str())
                .unwrap_or("")
                .to_string(),
        ),
        None => (
            &object["spec"]["replicas"],
            &object["status"]["replicas"],
            object["spec"]["selector"]["matchLabels"]
                .as_object()
                .map(|labels| {
                    labels
                        .iter()
                        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .unwrap_or_default(),
        ),
    };
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
        "spec": {"replicas": spec_replicas.as_u64().unwrap_or(0)},
        "status": {
            "replicas": status_replicas.as_u64().unwrap_or(0),
            "selector": selector,
        },
    })
}

fn scale_paths(resource: Resource) -> Option<&'static ScalePaths> {
    resource.descriptor().custom?.scale.as_ref()
}

/// The member of `object` at a simple JSON path (`.spec.replicas`); null if absent.
fn at<'a>(object: &'a Value, path: &str) -> &'a Value {
    path.split('.')
        .filter(|s| !s.is_empty())
        .fold(object, |v, segment| &v[segment])
}

/// Sets the member at `path`, making the objects on the way.
fn set_at(object: &mut Value, path: &str, value: Value) {
    let mut here = object;
    for segment in path.split('.').filter(|s| !s.is_empty()) {
        if !here.is_object() {
            *here = json!({});
        }
        here = &mut here[segment];
    }
    *here = value;
}

pub(crate) fn get_scale(shared: &Shared, target: &Target) -> Result<Response, ApiError> {
    let name = target.name.as_deref().unwrap_or("");
    let object = shared
        .store
        .get(target.resource, &target.key(name))
        .ok_or_else(|| ApiError::not_found(target.resource, name))?
        .decode()
        .map_err(|e| ApiError::internal(&e.to_string()))?;
    Ok(json_body(of(target.resource, &object).to_string()))
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
    let spec_path = scale_paths(resource).map_or(".spec.replicas", |p| &p.spec_replicas);
    set_at(&mut next, spec_path, json!(replicas));
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
    Ok(Bytes::from(of(resource, &object).to_string()))
}
