//! Patch: JSON, merge and strategic merge patches of an object or its /scale, and
//! server-side apply.

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::json;

use crate::Shared;
use crate::http::params::Params;
use crate::http::status::ApiError;
use crate::http::target::{Subresource, Target};
use crate::patch::{self, PatchError, PatchType};

use super::body::{self, WriteOptions};
use super::create::create_in;
use super::field_validation::{self, FieldValidation};
use super::media_type::media_type;
use super::outcome::{respond, wrote};
use super::preconditions::{check_resource_version, current_value};
use super::update::{self, Ownership};
use super::{managed, scale, validate};

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
    let kind = PatchType::from_media_type(&media_type(headers))
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
    let mut warnings = Vec::new();
    let stored = shared.store.write(|txn| {
        let current = current_value(txn, target, name)?;
        if target.subresource == Some(Subresource::Scale) {
            let mut scale = scale::of(target.resource, &current);
            patch::apply(kind, &mut scale, body).map_err(patch_error)?;
            return scale::update(txn, target, name, &options, &scale);
        }
        let mut value = current.clone();
        patch::apply(kind, &mut value, body).map_err(patch_error)?;
        validate::check_shape(&value)?;
        // The patch is decoded strictly, then the patched object: what either finds is
        // judged together. A refusal shows the patched object as it was before its unknown
        // fields went.
        let mut strict = field_validation::patch_body(kind, body);
        let unpruned = (options.validation == FieldValidation::Strict).then(|| value.clone());
        strict.add_unknown(field_validation::drop_unknown(target, &mut value));
        warnings = options.validation.on_patch(strict, || match kind {
            PatchType::Strategic => serde_json::from_slice(body)
                .map(|patch| validate::go_print(&patch))
                .unwrap_or_default(),
            _ => unpruned.unwrap_or_default().to_string(),
        })?;
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
    Ok(field_validation::with_warnings(
        respond(StatusCode::OK, stored),
        &warnings,
    ))
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
    let config = body::yaml(body)?;
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
    field_validation::typed_apply_configuration(target, &config)?;
    let name = target.name.as_deref().unwrap_or("");
    if let Some(given) = config["metadata"]["name"].as_str().filter(|n| *n != name) {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({given}) does not match the name on the URL ({name})"
        )));
    }
    // Repeated keys are looked at once the configuration is applied (an apply's own error,
    // a conflict, comes first), before anything is written.
    let repeated = field_validation::repeated_yaml_keys(body);
    let mut warnings = Vec::new();
    let resource = target.resource;
    let (code, stored) = shared.store.write(|txn| {
        let Some(object) = txn.get(resource, &target.key(name)) else {
            warnings = options.validation.on_apply(repeated.clone())?;
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
        warnings = options.validation.on_apply(repeated.clone())?;
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
    Ok(field_validation::with_warnings(
        respond(code, stored),
        &warnings,
    ))
}
