//! Create (POST), and the create a server-side apply makes of an object that is not there.

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

use crate::Shared;
use crate::http::params::Params;
use crate::http::status::ApiError;
use crate::http::target::Target;
use crate::manifests;
use crate::resources::Resource;
use crate::store::Txn;

use super::body::{self, WriteOptions};
use super::outcome::{follow_definitions, respond};
use super::{defaults, field_validation, managed, validate};

/// Refuses content in a namespace that does not exist or is being deleted.
fn namespace_accepts(txn: &Txn<'_>, target: &Target, name: &str) -> Result<(), ApiError> {
    let Some(ns) = target
        .namespace
        .as_deref()
        .filter(|_| target.resource.namespaced())
    else {
        return Ok(());
    };
    if txn.get(Resource::Namespaces, ns).is_none() {
        return Err(ApiError::not_found(Resource::Namespaces, ns));
    }
    if txn.namespace_terminating(ns) {
        return Err(ApiError::namespace_terminating(target.resource, name, ns));
    }
    Ok(())
}

pub(crate) fn create(
    shared: &Shared,
    target: &Target,
    params: &Params,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Response, ApiError> {
    let options = WriteOptions::parse(params, headers, "CreateOptions")?;
    let mut value = body::decode_object(headers, body)?;
    validate::check_kind(target, &value)?;
    validate::check_shape(&value)?;
    let strict = field_validation::object_body(target, headers, body, &mut value);
    let warnings = options.validation.on_decode(target, strict)?;
    let stored = shared
        .store
        .write(|txn| create_in(txn, target, &options, &mut value, None))?;
    if !options.dry_run
        && let Some(name) = value["metadata"]["name"].as_str()
    {
        shared
            .controllers
            .client_wrote(target.resource, &target.key(name));
    }
    Ok(field_validation::with_warnings(
        respond(StatusCode::CREATED, stored),
        &warnings,
    ))
}

/// Creates `value` at `target` (a collection URL, or a named one for server-side apply,
/// when `applied` is the configuration its manager then owns). The caller has checked its
/// kind and shape and judged its fields (see [`field_validation`]), each its own way.
pub(super) fn create_in(
    txn: &mut Txn<'_>,
    target: &Target,
    options: &WriteOptions,
    value: &mut Value,
    applied: Option<&Value>,
) -> Result<Bytes, ApiError> {
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
    if let Some(meta) = value["metadata"].as_object_mut() {
        meta.remove("resourceVersion");
    }
    // The server defaults what it decoded, then validates the result.
    defaults::populate_new(resource, value, &options.manager());
    validate::validate(resource, &name, value)?;
    if resource == Resource::Services {
        defaults::allocate_cluster_ip(&mut value["spec"], &cluster_ips(txn));
    }
    if let Some(config) = applied {
        managed::applied_on_create(value, config, &options.manager());
    }
    namespace_accepts(txn, target, &name)?;
    let key = target.key(&name);
    if txn.get(resource, &key).is_some() {
        return Err(ApiError::already_exists(resource, &name));
    }
    if options.dry_run {
        return Ok(Bytes::from(value.to_string()));
    }
    let stored = txn.put(resource, &key, value)?.json.clone();
    follow_definitions(txn, target, &name)?;
    if resource == Resource::Namespaces {
        crate::controllers::namespace::furnish(txn, &name)?;
    }
    Ok(stored)
}

/// The ClusterIPs Services hold, which a new one's must not repeat.
fn cluster_ips(txn: &Txn<'_>) -> Vec<String> {
    txn.scan(Resource::Services, "")
        .into_iter()
        .filter_map(|(_, object)| object.decode().ok())
        .filter_map(|service| service["spec"]["clusterIP"].as_str().map(str::to_string))
        .collect()
}
