//! Writes: create, update (PUT), patch and delete, on the main resource and its /status and
//! /scale subresources, each honouring `dryRun=All`. Each stored change bumps the global
//! resourceVersion once; a dry run or a change that changes nothing stores nothing.

mod body;
mod defaults;
mod delete;
mod managed;
mod proto;
mod scale;
mod update;
mod validate;

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::params::Params;
use super::status::{ApiError, json_body};
use super::target::{Subresource, Target};
use crate::Shared;
use crate::crd;
use crate::manifests;
use crate::patch::{self, PatchError, PatchType};
use crate::resources::Resource;
use crate::store::Txn;
use body::WriteOptions;
pub(crate) use delete::{delete, delete_collection};
pub(crate) use scale::get_scale;
use update::Ownership;

fn respond(code: StatusCode, json: Bytes) -> Response {
    (code, json_body(json)).into_response()
}

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
    Ok(respond(StatusCode::CREATED, stored))
}

/// Creates `value` at `target` (a collection URL, or a named one for server-side apply,
/// when `applied` is the configuration its manager then owns).
fn create_in(
    txn: &mut Txn<'_>,
    target: &Target,
    options: &WriteOptions,
    value: &mut Value,
    applied: Option<&Value>,
) -> Result<Bytes, ApiError> {
    validate::check_kind(target, value)?;
    validate::check_shape(value)?;
    strict_decoding(target, options, value)?;
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
    validate::validate(resource, &name, value)?;
    defaults::populate_new(resource, value, &options.manager());
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
    Ok(stored)
}

/// A write to a CustomResourceDefinition changes what is served, in the same transaction.
fn follow_definitions(txn: &mut Txn<'_>, target: &Target, name: &str) -> Result<(), ApiError> {
    if target.resource != Resource::CustomResourceDefinitions {
        return Ok(());
    }
    let cluster = txn.cluster();
    crd::reconcile(txn, cluster, name).map_err(|e| ApiError::internal(&e.to_string()))
}

/// `fieldValidation=Strict`: the 400 a real server's strict decoding gives an object with
/// fields its kind does not declare.
/// Without Strict, the unknown fields are dropped, as decoding into typed objects drops them.
fn strict_decoding(
    target: &Target,
    options: &WriteOptions,
    value: &mut Value,
) -> Result<(), ApiError> {
    let kind = target.resource.kind();
    let version = target.resource.version();
    let unknown = match target.resource.descriptor().custom {
        Some(custom) => crd::schema::prune(value, &custom.schema, ""),
        None if !options.strict => {
            proto::prune_unknown(kind, value);
            return Ok(());
        }
        None => proto::unknown_fields(kind, value),
    };
    if !options.strict {
        return Ok(());
    }
    if unknown.is_empty() {
        return Ok(());
    }
    let fields: Vec<String> = unknown
        .iter()
        .map(|f| format!("unknown field \"{f}\""))
        .collect();
    Err(ApiError::bad_request(format!(
        "{kind} in version \"{version}\" cannot be handled as a {kind}: strict decoding error: {}",
        fields.join(", ")
    )))
}

/// Checks a body's resourceVersion precondition against the stored object.
fn check_resource_version(
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

fn current_value(txn: &Txn<'_>, target: &Target, name: &str) -> Result<Value, ApiError> {
    txn.get(target.resource, &target.key(name))
        .ok_or_else(|| ApiError::not_found(target.resource, name))?
        .decode()
        .map_err(|e| ApiError::internal(&e.to_string()))
}

pub(crate) fn replace(
    shared: &Shared,
    target: &Target,
    params: &Params,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Response, ApiError> {
    let options = WriteOptions::parse(params, headers, "UpdateOptions")?;
    let mut value = body::decode_object(headers, body)?;
    let name = target.name.as_deref().unwrap_or("");
    if target.subresource == Some(Subresource::Scale) {
        let stored = shared
            .store
            .write(|txn| scale::update(txn, target, name, &options, &value))?;
        wrote(shared, target, &options, name);
        return Ok(respond(StatusCode::OK, stored));
    }
    validate::check_kind(target, &value)?;
    validate::check_shape(&value)?;
    strict_decoding(target, &options, &mut value)?;
    if let Some(body_name) = value["metadata"]["name"].as_str().filter(|n| *n != name) {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    let stored = shared.store.write(|txn| {
        let current = current_value(txn, target, name)?;
        check_resource_version(target.resource, name, &value, &current)?;
        update::update_existing(
            txn,
            target,
            name,
            &current,
            value,
            &options,
            Ownership::Update,
        )
    })?;
    wrote(shared, target, &options, name);
    Ok(respond(StatusCode::OK, stored))
}

/// Tells the controllers a client changed `name` (a dry run changes nothing).
fn wrote(shared: &Shared, target: &Target, options: &WriteOptions, name: &str) {
    if !options.dry_run {
        shared
            .controllers
            .client_wrote(target.resource, &target.key(name));
    }
}

fn patch_error(e: PatchError) -> ApiError {
    match e {
        PatchError::Malformed(m) => ApiError::bad_request(m),
        PatchError::NotApplicable(_) => ApiError::unprocessable(),
        PatchError::Strategic(e) if e.is_bad_request() => ApiError::bad_request(e.to_string()),
        PatchError::Strategic(e) => ApiError::internal(&e.to_string()),
    }
}

pub(crate) fn patch(
    shared: &Shared,
    target: &Target,
    params: &Params,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Response, ApiError> {
    let options = WriteOptions::parse(params, headers, "PatchOptions")?;
    let kind = PatchType::from_media_type(&body::media_type(headers))
        .ok_or_else(|| ApiError::unsupported_media_type(PatchType::ACCEPTED))?;
    if kind == PatchType::Apply {
        return apply(shared, target, &options, body);
    }
    // Custom resources have no patch strategies: the real server refuses the media type.
    if kind == PatchType::Strategic && !target.resource.built_in() {
        return Err(ApiError::unsupported_media_type(
            "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
        ));
    }
    if options.force {
        return Err(ApiError::invalid(
            "PatchOptions.meta.k8s.io",
            "",
            "force",
            "FieldValueForbidden",
            "may not be specified for non-apply patch",
        ));
    }
    let name = target.name.as_deref().unwrap_or("");
    let stored = shared.store.write(|txn| {
        let current = current_value(txn, target, name)?;
        if target.subresource == Some(Subresource::Scale) {
            let mut scale = scale::of(&current);
            patch::apply(kind, &mut scale, body).map_err(patch_error)?;
            return scale::update(txn, target, name, &options, &scale);
        }
        let mut value = current.clone();
        patch::apply(kind, &mut value, body).map_err(patch_error)?;
        validate::check_shape(&value)?;
        strict_decoding(target, &options, &mut value)?;
        if value["metadata"]["name"] != current["metadata"]["name"] {
            return Err(ApiError::invalid(
                target.resource.kind(),
                name,
                "metadata.name",
                "FieldValueInvalid",
                "field is immutable",
            ));
        }
        check_resource_version(target.resource, name, &value, &current)?;
        update::update_existing(
            txn,
            target,
            name,
            &current,
            value,
            &options,
            Ownership::Update,
        )
    })?;
    wrote(shared, target, &options, name);
    Ok(respond(StatusCode::OK, stored))
}

/// Server-side apply (`application/apply-patch+yaml`): creates the object if it is not
/// there, else merges the configuration under its manager's ownership.
fn apply(
    shared: &Shared,
    target: &Target,
    options: &WriteOptions,
    body: &Bytes,
) -> Result<Response, ApiError> {
    let Some(manager) = options.manager.clone() else {
        return Err(ApiError::invalid(
            "PatchOptions.meta.k8s.io",
            "",
            "fieldManager",
            "FieldValueRequired",
            "is required for apply patch",
        ));
    };
    let mut config = body::yaml(body)?;
    if !config.is_object() {
        return Err(ApiError::bad_request(
            "error decoding YAML: the configuration is not an object",
        ));
    }
    for (field, what) in [("apiVersion", "APIVersion"), ("kind", "Kind")] {
        if config[field].as_str().is_none_or(str::is_empty) {
            return Err(ApiError::bad_request(format!("Object '{what}' is missing")));
        }
    }
    validate::check_kind(target, &config)?;
    validate::check_shape(&config)?;
    strict_decoding(target, options, &mut config)?;
    let name = target.name.as_deref().unwrap_or("");
    if let Some(given) = config["metadata"]["name"].as_str().filter(|n| *n != name) {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({given}) does not match the name on the URL ({name})"
        )));
    }
    let resource = target.resource;
    let (code, stored) = shared.store.write(|txn| {
        let Some(object) = txn.get(resource, &target.key(name)) else {
            let mut value = config.clone();
            value["metadata"]["name"] = json!(name);
            let stored = create_in(txn, target, options, &mut value, Some(&config))?;
            return Ok((StatusCode::CREATED, stored));
        };
        let current = object
            .decode()
            .map_err(|e| ApiError::internal(&e.to_string()))?;
        let merged = managed::apply(
            &current,
            &config,
            &manager,
            options.force,
            (resource.kind(), resource.group(), name),
        )?;
        let stored = update::update_existing(
            txn,
            target,
            name,
            &current,
            merged,
            options,
            Ownership::AsGiven,
        )?;
        Ok::<_, ApiError>((StatusCode::OK, stored))
    })?;
    wrote(shared, target, options, name);
    Ok(respond(code, stored))
}
