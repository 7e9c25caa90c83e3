//! Request bodies: the media types a real server decodes objects from (JSON, YAML, and the
//! protobuf client-go sends for built-in kinds), and the write options every verb takes.

use axum::body::Bytes;
use axum::http::{HeaderMap, header};
use serde_json::Value;

use crate::http::params::Params;
use crate::http::status::ApiError;

use super::field_validation::FieldValidation;
use super::media_type::media_type;

const OBJECT_MEDIA_TYPES: &str =
    "application/json, application/yaml, application/vnd.kubernetes.protobuf";

/// An object body as JSON, whatever it was sent as.
pub(super) fn decode_object(headers: &HeaderMap, body: &Bytes) -> Result<Value, ApiError> {
    let value: Value = match media_type(headers).as_str() {
        "application/json" => serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!("couldn't get version/kind; json parse error: {e}"))
        })?,
        "application/yaml" => yaml(body)?,
        "application/vnd.kubernetes.protobuf" => super::proto::decode(body).map_err(|e| {
            ApiError::bad_request(format!("the body of the request could not be decoded: {e}"))
        })?,
        _ => return Err(ApiError::unsupported_media_type(OBJECT_MEDIA_TYPES)),
    };
    if !value.is_object() {
        return Err(ApiError::bad_request(
            "couldn't get version/kind; json parse error: expected a JSON object",
        ));
    }
    Ok(value)
}

/// A YAML document (an apply configuration or a YAML object body) as JSON, decoded as the
/// real server first decodes it: leniently, the last of repeated keys winning (its strict
/// pass then reports them, see [`super::field_validation`]).
pub(super) fn yaml(body: &[u8]) -> Result<Value, ApiError> {
    let text = std::str::from_utf8(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
    serde_saphyr::from_str_with_options::<Value>(text, super::field_validation::keep_every_key())
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))
}

/// The options of a create, update, patch or delete that the sim honours.
#[derive(Debug, Clone, Default)]
pub(super) struct WriteOptions {
    /// `dryRun=All`: everything but the write.
    pub dry_run: bool,
    /// The field manager the change is recorded under.
    pub manager: Option<String>,
    /// Server-side apply takes fields other managers own.
    pub force: bool,
    /// What strict decoding's findings make of the write (`fieldValidation`).
    pub validation: FieldValidation,
    /// The client's program, the manager when none is given (`kubectl`, `python`...).
    user_agent: Option<String>,
}

impl WriteOptions {
    /// Reads the query; `options_kind` (CreateOptions, UpdateOptions...) names the 422.
    pub fn parse(
        params: &Params,
        headers: &HeaderMap,
        options_kind: &str,
    ) -> Result<Self, ApiError> {
        let dry_run = match params.get("dryRun") {
            None => false,
            Some("All") => true,
            Some(other) => return Err(unsupported_dry_run(options_kind, other)),
        };
        Ok(Self {
            dry_run,
            manager: params.get("fieldManager").map(str::to_string),
            force: params.flag("force"),
            validation: FieldValidation::parse(params, options_kind)?,
            user_agent: headers
                .get(header::USER_AGENT)
                .and_then(|v| v.to_str().ok())
                .and_then(|ua| ua.split('/').next())
                .filter(|program| !program.is_empty())
                .map(str::to_string),
        })
    }

    /// The manager to record: the one given, else the client's program as its user agent
    /// names it, as a real server derives it.
    pub fn manager(&self) -> String {
        self.manager
            .clone()
            .or_else(|| self.user_agent.clone())
            .unwrap_or_else(|| "unknown".to_string())
    }
}

pub(super) fn unsupported_dry_run(options_kind: &str, value: &str) -> ApiError {
    ApiError::invalid(
        &format!("{options_kind}.meta.k8s.io"),
        "",
        "dryRun",
        "FieldValueNotSupported",
        &format!("[]string{{\"{value}\"}}: supported values: \"All\""),
    )
}
