//! Writes: create, replace, merge/strategic-merge patch and delete (cascading through
//! ownerReferences and namespaces, as the garbage collector and namespace controller would).
//! Each stored change bumps the global resourceVersion once.

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::status::{ApiError, json_body};
use super::{Params, Target};
use crate::sim::Shared;
use crate::sim::gc::{delete_cascading, replace_deleted_pod};
use crate::sim::manifests::{self, fields_v1, managed_entry};
use crate::sim::resources::Resource;
use crate::sim::store::{StoreError, Txn};
use crate::sim::workload::SYSTEM_NAMESPACES;

/// Bodies must be JSON. Protobuf (client-go's default for built-in kinds) gets a 415,
/// on which client-go falls back to JSON.
fn check_json(headers: &HeaderMap) -> Result<(), ApiError> {
    let media = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json");
    match media.split(';').next().unwrap_or("").trim() {
        "application/json" | "" => Ok(()),
        _ => Err(ApiError::unsupported_media_type("application/json")),
    }
}

fn parse_body(body: &Bytes) -> Result<Value, ApiError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!("couldn't get version/kind; json parse error: {e}"))
    })?;
    if !value.is_object() {
        return Err(ApiError::bad_request(
            "couldn't get version/kind; json parse error: expected a JSON object",
        ));
    }
    Ok(value)
}

/// The structural checks decoding into typed objects does on the real server: metadata,
/// spec and status are objects, labels and annotations are maps of strings.
fn check_shape(value: &Value) -> Result<(), ApiError> {
    let wrong = |field: &str, want: &str| {
        ApiError::bad_request(format!(
            "json: cannot unmarshal {} into Go struct field {field} of type {want}",
            json_type(field_value(value, field))
        ))
    };
    if !value.is_object() {
        return Err(ApiError::bad_request(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            json_type(value)
        )));
    }
    for field in ["metadata", "spec", "status"] {
        let v = &value[field];
        if !(v.is_null() || v.is_object()) {
            return Err(wrong(field, "object"));
        }
    }
    for field in ["labels", "annotations"] {
        let v = &value["metadata"][field];
        let ok = v.is_null()
            || v.as_object()
                .is_some_and(|m| m.values().all(|x| x.is_string()));
        if !ok {
            return Err(wrong(&format!("metadata.{field}"), "map[string]string"));
        }
    }
    Ok(())
}

fn field_value<'a>(value: &'a Value, path: &str) -> &'a Value {
    path.split('.').fold(value, |v, k| &v[k])
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn check_kind(target: &Target, value: &Value) -> Result<(), ApiError> {
    let r = target.resource;
    if let Some(kind) = value["kind"].as_str().filter(|k| *k != r.kind()) {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({kind}) does not match the expected kind ({})",
            r.kind()
        )));
    }
    if let Some(av) = value["apiVersion"]
        .as_str()
        .filter(|v| *v != r.api_version())
    {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({av}) does not match the expected API version ({})",
            r.api_version()
        )));
    }
    Ok(())
}

/// DNS-1123 label (namespaces) or subdomain (everything else).
fn validate_name(resource: Resource, name: &str) -> Result<(), ApiError> {
    let label = resource == Resource::Namespaces;
    let max = if label { 63 } else { 253 };
    let ok_char =
        |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || (!label && c == '.');
    let alnum = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if name.len() <= max
        && name.chars().all(ok_char)
        && alnum(name.chars().next())
        && alnum(name.chars().last())
    {
        return Ok(());
    }
    let what = if label {
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
    } else {
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
    };
    Err(ApiError::invalid(
        resource.kind(),
        name,
        "metadata.name",
        "FieldValueInvalid",
        &format!("\"{name}\": {what}"),
    ))
}

/// The per-kind validation the real server would fail with 422.
fn validate(resource: Resource, name: &str, value: &Value) -> Result<(), ApiError> {
    validate_name(resource, name)?;
    let required =
        |field: &str| ApiError::invalid(resource.kind(), name, field, "FieldValueRequired", "");
    match resource {
        Resource::Pods => {
            let containers = value["spec"]["containers"]
                .as_array()
                .filter(|c| !c.is_empty())
                .ok_or_else(|| required("spec.containers"))?;
            for (i, c) in containers.iter().enumerate() {
                if c["name"].as_str().is_none_or(str::is_empty) {
                    return Err(required(&format!("spec.containers[{i}].name")));
                }
                if c["image"].as_str().is_none_or(str::is_empty) {
                    return Err(required(&format!("spec.containers[{i}].image")));
                }
            }
        }
        Resource::Deployments | Resource::ReplicaSets => {
            let selector = value["spec"]["selector"]["matchLabels"]
                .as_object()
                .ok_or_else(|| required("spec.selector"))?;
            let labels = &value["spec"]["template"]["metadata"]["labels"];
            if selector.iter().any(|(k, v)| &labels[k] != v) {
                return Err(ApiError::invalid(
                    resource.kind(),
                    name,
                    "spec.template.metadata.labels",
                    "FieldValueInvalid",
                    &format!("{labels}: `selector` does not match template `labels`"),
                ));
            }
            if value["spec"]["template"]["spec"]["containers"]
                .as_array()
                .is_none_or(Vec::is_empty)
            {
                return Err(required("spec.template.spec.containers"));
            }
        }
        Resource::Secrets => {
            let not_base64 = value["data"].as_object().and_then(|data| {
                data.iter().find(|(_, v)| {
                    v.as_str().is_none_or(|s| {
                        base64::engine::general_purpose::STANDARD.decode(s).is_err()
                    })
                })
            });
            if let Some((key, _)) = not_base64 {
                return Err(ApiError::invalid(
                    resource.kind(),
                    name,
                    &format!("data[{key}]"),
                    "FieldValueInvalid",
                    "illegal base64 data",
                ));
            }
        }
        Resource::Namespaces | Resource::Nodes => {}
    }
    Ok(())
}

fn store_error(e: StoreError) -> ApiError {
    e.into()
}

fn manager(params: &Params, default: &str) -> String {
    params.get("fieldManager").unwrap_or(default).to_string()
}

/// Fills what the server owns on create: uid, timestamps, generation, managedFields and
/// the status a fresh object starts with.
fn populate_new(resource: Resource, value: &mut Value, manager: &str) {
    let now = manifests::timestamp(manifests::now_seconds());
    let mut owned = value.clone();
    if let Some(o) = owned.as_object_mut() {
        o.remove("status");
        o.remove("kind");
        o.remove("apiVersion");
    }
    if let Some(meta) = owned["metadata"].as_object_mut() {
        for k in [
            "name",
            "namespace",
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "managedFields",
            "generation",
        ] {
            meta.remove(k);
        }
    }
    let meta = &mut value["metadata"];
    meta["uid"] = json!(manifests::uid(&mut rand::rng()));
    meta["creationTimestamp"] = json!(now);
    if let Some(m) = meta.as_object_mut() {
        m.remove("deletionTimestamp");
    }
    meta["managedFields"] = json!([managed_entry(
        manager,
        resource.api_version(),
        &now,
        fields_v1(&owned),
        None
    )]);
    value["kind"] = json!(resource.kind());
    value["apiVersion"] = json!(resource.api_version());
    match resource {
        Resource::Namespaces => {
            let name = value["metadata"]["name"].clone();
            value["metadata"]["labels"]["kubernetes.io/metadata.name"] = name;
            value["spec"] = json!({"finalizers": ["kubernetes"]});
            value["status"] = json!({"phase": "Active"});
        }
        Resource::Pods => {
            value["status"] = json!({"phase": "Pending", "qosClass": "BestEffort"});
        }
        Resource::Deployments | Resource::ReplicaSets => {
            value["metadata"]["generation"] = json!(1);
            value["status"] = json!({});
        }
        Resource::Secrets | Resource::Nodes => {}
    }
    normalize(resource, value);
}

/// What the server does on every write: a Secret's write-only stringData is folded into
/// data (base64) and its type defaults to Opaque.
fn normalize(resource: Resource, value: &mut Value) {
    if resource != Resource::Secrets {
        return;
    }
    if let Some(Value::Object(plain)) = value.get_mut("stringData").map(Value::take) {
        for (key, v) in plain {
            let encoded =
                base64::engine::general_purpose::STANDARD.encode(v.as_str().unwrap_or_default());
            value["data"][key] = json!(encoded);
        }
    }
    if let Some(object) = value.as_object_mut() {
        object.remove("stringData");
    }
    if value["type"].as_str().is_none_or(str::is_empty) {
        value["type"] = json!("Opaque");
    }
}

fn namespace_exists(txn: &Txn<'_>, target: &Target) -> Result<(), ApiError> {
    match &target.namespace {
        Some(ns) if target.resource.namespaced() && txn.get(Resource::Namespaces, ns).is_none() => {
            Err(ApiError::not_found(Resource::Namespaces, ns))
        }
        _ => Ok(()),
    }
}

fn respond(code: StatusCode, json: Bytes) -> Response {
    (code, json_body(json)).into_response()
}

pub(crate) fn create(
    shared: &Shared,
    target: &Target,
    params: &Params,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Response, ApiError> {
    check_json(headers)?;
    let mut value = parse_body(body)?;
    check_kind(target, &value)?;
    check_shape(&value)?;
    let resource = target.resource;
    if !value["metadata"].is_object() {
        value["metadata"] = json!({});
    }
    if resource.namespaced() {
        let ns = target.namespace.as_deref().ok_or_else(|| {
            ApiError::bad_request("the server could not find the requested resource")
        })?;
        if let Some(body_ns) = value["metadata"]["namespace"].as_str().filter(|n| *n != ns) {
            return Err(ApiError::bad_request(format!(
                "the namespace of the provided object ({body_ns}) does not match the namespace sent on the request ({ns})"
            )));
        }
        value["metadata"]["namespace"] = json!(ns);
    }
    let name = match (
        value["metadata"]["name"].as_str(),
        value["metadata"]["generateName"].as_str(),
    ) {
        (Some(name), _) if !name.is_empty() => name.to_string(),
        (_, Some(prefix)) if !prefix.is_empty() => {
            format!("{prefix}{}", manifests::safe_suffix(&mut rand::rng(), 5))
        }
        _ => {
            return Err(ApiError::invalid(
                resource.kind(),
                "",
                "metadata.name",
                "FieldValueRequired",
                "name or generateName is required",
            ));
        }
    };
    value["metadata"]["name"] = json!(name);
    validate(resource, &name, &value)?;
    populate_new(resource, &mut value, &manager(params, "unknown"));
    let key = target.key(&name);
    let dry_run = params.get("dryRun").is_some();
    let stored = shared.store.write(|txn| {
        namespace_exists(txn, target)?;
        if txn.get(resource, &key).is_some() {
            return Err(ApiError::already_exists(resource, &name));
        }
        if dry_run {
            return Ok(Bytes::from(value.to_string()));
        }
        txn.put(resource, &key, &mut value)
            .map(|o| o.json.clone())
            .map_err(store_error)
    })?;
    Ok(respond(StatusCode::CREATED, stored))
}

/// Checks a body's resourceVersion precondition against the stored object.
fn check_precondition(
    resource: Resource,
    name: &str,
    value: &Value,
    current: &Value,
) -> Result<(), ApiError> {
    match value["metadata"]["resourceVersion"].as_str() {
        Some(rv)
            if !rv.is_empty() && Some(rv) != current["metadata"]["resourceVersion"].as_str() =>
        {
            Err(ApiError::conflict(resource, name))
        }
        _ => Ok(()),
    }
}

/// Stores `value` as the new state of an existing object, keeping what clients may not
/// change (identity, creation time, status on the main resource) and bumping generation
/// when the spec changed.
fn update_existing(
    txn: &mut Txn<'_>,
    target: &Target,
    name: &str,
    current: &Value,
    mut value: Value,
) -> Result<Bytes, ApiError> {
    let resource = target.resource;
    normalize(resource, &mut value);
    validate(resource, name, &value)?;
    for field in [
        "uid",
        "creationTimestamp",
        "managedFields",
        "name",
        "namespace",
    ] {
        if current["metadata"][field].is_null() {
            continue;
        }
        value["metadata"][field] = current["metadata"][field].clone();
    }
    value["kind"] = json!(resource.kind());
    value["apiVersion"] = json!(resource.api_version());
    if !current["status"].is_null() {
        value["status"] = current["status"].clone();
    }
    if let Some(generation) = current["metadata"]["generation"].as_u64() {
        let bumped = if value["spec"] != current["spec"] {
            generation + 1
        } else {
            generation
        };
        value["metadata"]["generation"] = json!(bumped);
    }
    txn.put(resource, &target.key(name), &mut value)
        .map(|o| o.json.clone())
        .map_err(store_error)
}

fn current_value(txn: &Txn<'_>, target: &Target, name: &str) -> Result<Value, ApiError> {
    txn.get(target.resource, &target.key(name))
        .ok_or_else(|| ApiError::not_found(target.resource, name))?
        .decode()
        .map_err(|e| ApiError::internal(&e.to_string()))
}

pub(crate) fn replace(
    shared: &Shared,
    target: &Target,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Response, ApiError> {
    check_json(headers)?;
    let value = parse_body(body)?;
    check_kind(target, &value)?;
    check_shape(&value)?;
    let name = target.name.as_deref().unwrap_or("");
    if let Some(body_name) = value["metadata"]["name"].as_str().filter(|n| *n != name) {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    let stored = shared.store.write(|txn| {
        let current = current_value(txn, target, name)?;
        check_precondition(target.resource, name, &value, &current)?;
        update_existing(txn, target, name, &current, value)
    })?;
    Ok(respond(StatusCode::OK, stored))
}

/// RFC 7386 JSON merge patch. Strategic merge patches of maps (labels, annotations) are the
/// same operation, so both content types use it.
fn merge_patch(target: &mut Value, patch: &Value) {
    match patch {
        Value::Object(patch_map) => {
            if !target.is_object() {
                *target = Value::Object(Map::new());
            }
            if let Value::Object(map) = target {
                for (k, v) in patch_map {
                    if v.is_null() {
                        map.remove(k);
                    } else {
                        merge_patch(map.entry(k.clone()).or_insert(Value::Null), v);
                    }
                }
            }
        }
        other => *target = other.clone(),
    }
}

pub(crate) fn patch(
    shared: &Shared,
    target: &Target,
    _params: &Params,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Response, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let media = content_type.split(';').next().unwrap_or("").trim();
    if !matches!(
        media,
        "application/merge-patch+json" | "application/strategic-merge-patch+json"
    ) {
        return Err(ApiError::unsupported_media_type(
            "application/merge-patch+json, application/strategic-merge-patch+json",
        ));
    }
    let patch: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
    let name = target.name.as_deref().unwrap_or("");
    let stored = shared.store.write(|txn| {
        let current = current_value(txn, target, name)?;
        check_precondition(target.resource, name, &patch, &current)?;
        let mut value = current.clone();
        merge_patch(&mut value, &patch);
        check_shape(&value)?;
        if value["metadata"]["name"] != current["metadata"]["name"] {
            return Err(ApiError::invalid(
                target.resource.kind(),
                name,
                "metadata.name",
                "FieldValueInvalid",
                "field is immutable",
            ));
        }
        let resource = target.resource;
        normalize(resource, &mut value);
        validate(resource, name, &value)?;
        if value["spec"] != current["spec"]
            && let Some(g) = current["metadata"]["generation"].as_u64()
        {
            value["metadata"]["generation"] = json!(g + 1);
        }
        txn.put(resource, &target.key(name), &mut value)
            .map(|o| o.json.clone())
            .map_err(store_error)
    })?;
    Ok(respond(StatusCode::OK, stored))
}

pub(crate) fn delete(
    shared: &Shared,
    target: &Target,
    params: &Params,
    body: &Bytes,
) -> Result<Response, ApiError> {
    let options: Value = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding DeleteOptions: {e}")))?
    };
    let policy = params
        .get("propagationPolicy")
        .or(options["propagationPolicy"].as_str())
        .unwrap_or("Background");
    let orphan = policy == "Orphan";
    let name = target.name.as_deref().unwrap_or("");
    let resource = target.resource;
    if resource == Resource::Namespaces
        && SYSTEM_NAMESPACES.contains(&name)
        && name != "kube-node-lease"
    {
        return Err(ApiError::forbidden(
            resource,
            name,
            "this namespace may not be deleted",
        ));
    }
    let stored = shared.store.write(|txn| {
        let key = target.key(name);
        let owner = match resource {
            Resource::Pods => txn
                .get(resource, &key)
                .and_then(|o| o.controller_uid.clone()),
            _ => None,
        };
        let deleted = delete_cascading(txn, resource, &key, orphan)?
            .ok_or_else(|| ApiError::not_found(resource, name))?;
        if let (Some(owner), Some(namespace)) = (owner, target.namespace.as_deref()) {
            replace_deleted_pod(txn, namespace, &owner)?;
        }
        Ok::<_, ApiError>(deleted.json.clone())
    })?;
    Ok(respond(StatusCode::OK, stored))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_patch_sets_and_removes() {
        let mut v = json!({"metadata": {"labels": {"a": "1", "b": "2"}}});
        merge_patch(
            &mut v,
            &json!({"metadata": {"labels": {"a": null, "c": "3"}}}),
        );
        assert_eq!(v, json!({"metadata": {"labels": {"b": "2", "c": "3"}}}));
    }

    #[test]
    fn names_are_validated() {
        assert!(validate_name(Resource::Pods, "web-1.a").is_ok());
        assert!(validate_name(Resource::Namespaces, "web.a").is_err());
        assert_eq!(
            validate_name(Resource::Pods, "Web")
                .unwrap_err()
                .to_status()["code"],
            422
        );
    }
}
