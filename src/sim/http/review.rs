//! Who am I and what may I do: SelfSubjectReview (`kubectl auth whoami`) and
//! SelfSubjectAccessReview (`kubectl auth can-i`), answered from the caller's sim user. An
//! admin may do everything; the viewer may get, list and watch.

use axum::body::Bytes;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::status::ApiError;
use crate::shared::SimUser;

/// Which review a path asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Review {
    /// `authentication.k8s.io` SelfSubjectReview, at this version.
    Whoami(&'static str),
    /// `authorization.k8s.io/v1` SelfSubjectAccessReview.
    Access,
}

/// The review a request's path names, if it names one.
pub(super) fn route(uri: &Uri) -> Option<Review> {
    match uri.path().trim_end_matches('/') {
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews" => Some(Review::Access),
        "/apis/authentication.k8s.io/v1/selfsubjectreviews" => Some(Review::Whoami("v1")),
        "/apis/authentication.k8s.io/v1beta1/selfsubjectreviews" => Some(Review::Whoami("v1beta1")),
        _ => None,
    }
}

/// Whether `verb` only reads.
pub(super) fn reads(verb: &str) -> bool {
    matches!(verb, "get" | "list" | "watch")
}

/// Answers a review for `user`, with the request's own spec echoed back as the real server
/// does (201 Created).
pub(super) fn serve(review: Review, user: &SimUser, body: &Bytes) -> Response {
    // kubectl sends its reviews as protobuf, other clients as JSON; whoami's body says
    // nothing the answer needs.
    let decoded = match body.strip_prefix(b"k8s\0") {
        Some(_) => super::write::decode_protobuf(body).map_err(|e| e.to_string()),
        None => serde_json::from_slice(body).map_err(|e| e.to_string()),
    };
    let request = match (decoded, review) {
        (Ok(value), _) => value,
        (Err(_), Review::Whoami(_)) => Value::Null,
        (Err(e), Review::Access) => {
            return ApiError::bad_request(format!("error decoding the review: {e}"))
                .into_response();
        }
    };
    let answer = match review {
        Review::Whoami(version) => json!({
            "kind": "SelfSubjectReview",
            "apiVersion": format!("authentication.k8s.io/{version}"),
            "metadata": {"creationTimestamp": null},
            "status": {"userInfo": {
                "username": user.name,
                "groups": if user.read_only {
                    json!(["viewers", "system:authenticated"])
                } else {
                    json!(["system:masters", "system:authenticated"])
                },
            }},
        }),
        Review::Access => {
            let spec = request.get("spec").cloned().unwrap_or_else(|| json!({}));
            let verb = spec
                .pointer("/resourceAttributes/verb")
                .or_else(|| spec.pointer("/nonResourceAttributes/verb"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            let allowed = !user.read_only || reads(verb);
            let reason = if allowed && user.read_only {
                format!(
                    "RBAC: allowed by ClusterRoleBinding \"view\" of ClusterRole \"view\" to User \"{}\"",
                    user.name
                )
            } else if allowed {
                "RBAC: allowed by ClusterRoleBinding \"cluster-admin\" of ClusterRole \"cluster-admin\" to Group \"system:masters\"".to_string()
            } else {
                String::new()
            };
            let mut status = json!({"allowed": allowed});
            if !reason.is_empty() {
                status["reason"] = json!(reason);
            }
            json!({
                "kind": "SelfSubjectAccessReview",
                "apiVersion": "authorization.k8s.io/v1",
                "metadata": {"creationTimestamp": null},
                "spec": spec,
                "status": status,
            })
        }
    };
    (
        StatusCode::CREATED,
        [(header::CONTENT_TYPE, "application/json")],
        answer.to_string(),
    )
        .into_response()
}
