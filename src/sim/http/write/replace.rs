//! Update (PUT) of an object or its /scale.

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use crate::Shared;
use crate::http::params::Params;
use crate::http::status::ApiError;
use crate::http::target::{Subresource, Target};

use super::body::{self, WriteOptions};
use super::outcome::{respond, wrote};
use super::preconditions::{check_resource_version, current_value};
use super::scale;
use super::update::{self, Ownership};
use super::{field_validation, validate};

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
    let strict = field_validation::object_body(target, headers, body, &mut value);
    let warnings = options.validation.on_decode(target, strict)?;
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
    Ok(field_validation::with_warnings(
        respond(StatusCode::OK, stored),
        &warnings,
    ))
}
