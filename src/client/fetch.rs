//! The full object, fetched with one GET when a person opens it: stores keep only projections.
//!
//! The body is parsed here rather than by kube's `Client::request`, which logs the whole body
//! when it does not parse — a Secret's data included.

use std::time::Duration;

use serde_json::Value;

use crate::resources::{PathError, ResourceKind};

/// A person is waiting on "loading…": past this, say the server did not answer.
const FETCH_TIMEOUT: Duration = Duration::from_secs(15);

/// Why an object could not be fetched. Messages name the object, never credentials.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("{object} not found (404): it may have just been deleted")]
    NotFound { object: String },
    #[error("{object}: forbidden (403): {message}")]
    Forbidden { object: String, message: String },
    #[error("{object}: the API server answered {code} {reason}: {message}")]
    Api {
        object: String,
        code: u16,
        reason: String,
        message: String,
    },
    #[error("{object}: cannot reach the API server: {message}")]
    Unreachable { object: String, message: String },
    #[error("{object}: malformed JSON from the API server: {message}")]
    Malformed { object: String, message: String },
    #[error(transparent)]
    Path(#[from] PathError),
}

/// GETs one object as JSON. `namespace` is ignored for cluster-scoped kinds and required for
/// namespaced ones.
pub async fn fetch_object(
    client: &kube::Client,
    kind: ResourceKind,
    namespace: Option<&str>,
    name: &str,
) -> Result<Value, FetchError> {
    let path = kind.object_path(namespace, name)?;
    let object = match namespace.filter(|_| kind.namespaced()) {
        Some(ns) => format!("{} {ns}/{name}", kind.kind()),
        None => format!("{} {name}", kind.kind()),
    };
    let request = http::Request::get(path)
        .header(http::header::ACCEPT, "application/json")
        .body(Vec::new())
        .map_err(|e| FetchError::Unreachable {
            object: object.clone(),
            message: e.to_string(),
        })?;
    let label = object.clone();
    let Ok(answer) = tokio::time::timeout(FETCH_TIMEOUT, client.request_text(request)).await else {
        return Err(FetchError::Unreachable {
            object,
            message: format!("no answer within {}s", FETCH_TIMEOUT.as_secs()),
        });
    };
    let text = answer.map_err(|err| match err {
        kube::Error::Api(status) => match status.code {
            404 => FetchError::NotFound { object },
            403 => FetchError::Forbidden {
                object,
                message: status.message,
            },
            code => FetchError::Api {
                object,
                code,
                reason: status.reason,
                message: status.message,
            },
        },
        kube::Error::FromUtf8(e) => FetchError::Malformed {
            object,
            message: e.to_string(),
        },
        other => FetchError::Unreachable {
            object,
            message: innermost_cause(&other),
        },
    })?;
    serde_json::from_str(&text).map_err(|e| FetchError::Malformed {
        object: label,
        message: e.to_string(),
    })
}

/// The innermost cause says what happened ("Connection refused"); the outer ones only wrap it.
fn innermost_cause(err: &kube::Error) -> String {
    let mut message = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        message = cause.to_string();
        source = cause.source();
    }
    message
}
