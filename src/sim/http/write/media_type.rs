//! What a request body is, by its Content-Type: read by the body decoders, the patch types
//! and field validation alike.

use axum::http::{HeaderMap, header};

/// The Content-Type's media type without parameters; JSON when absent.
pub(super) fn media_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|m| m.trim().to_ascii_lowercase())
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| "application/json".to_string())
}
