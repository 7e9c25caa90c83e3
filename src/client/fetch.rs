//! The full object, fetched with one GET when a person opens it: stores keep only projections.
//!
//! The body is parsed here rather than by kube's `Client::request`, which logs the whole body
//! when it does not parse — a Secret's data included.

use std::time::Duration;

use serde_json::Value;

use crate::informers::lister_watcher::{BoxError, innermost_cause};
use crate::resources::{Kind, PathError};

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
    #[error("{object}: cannot reach the API server: {}", innermost_cause(.source.as_ref()))]
    Unreachable {
        object: String,
        #[source]
        source: BoxError,
    },
    #[error("{object}: no answer from the API server within {}s", .waited.as_secs())]
    Silent { object: String, waited: Duration },
    #[error("{object}: malformed JSON from the API server: {source}")]
    Malformed {
        object: String,
        #[source]
        source: BoxError,
    },
    #[error(transparent)]
    Path(#[from] PathError),
}

/// GETs one object as JSON. `namespace` is ignored for cluster-scoped kinds and required for
/// namespaced ones.
pub async fn fetch_object(
    client: &kube::Client,
    kind: impl Into<Kind>,
    namespace: Option<&str>,
    name: &str,
) -> Result<Value, FetchError> {
    let kind = kind.into();
    let path = kind.object_path(namespace, name)?;
    let object = match namespace.filter(|_| kind.namespaced()) {
        Some(ns) => format!("{} {ns}/{name}", kind.kind()),
        None => format!("{} {name}", kind.kind()),
    };
    fetch_path(client, path, object).await
}

/// GETs a list (`uri` with its query) and returns its items; `what` names it in errors
/// ("events of Pod shop/web"). Lists are read whole: the describe's lists are an object's
/// Events and the few objects it owns, and the server pages nothing a selector does not
/// already narrow.
pub async fn fetch_list(
    client: &kube::Client,
    uri: String,
    what: String,
) -> Result<Vec<Value>, FetchError> {
    let mut list = fetch_path(client, uri, what).await?;
    Ok(match list.get_mut("items").map(Value::take) {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    })
}

/// One GET of `path` whose answer is JSON, bounded by [`FETCH_TIMEOUT`]; `object` names it
/// in errors (`Pod shop/web`).
pub async fn fetch_path(
    client: &kube::Client,
    path: String,
    object: String,
) -> Result<Value, FetchError> {
    let request = http::Request::get(path)
        .header(http::header::ACCEPT, "application/json")
        .body(Vec::new())
        .map_err(|e| FetchError::Unreachable {
            object: object.clone(),
            source: e.into(),
        })?;
    let label = object.clone();
    let Ok(answer) = tokio::time::timeout(FETCH_TIMEOUT, client.request_text(request)).await else {
        return Err(FetchError::Silent {
            object,
            waited: FETCH_TIMEOUT,
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
            source: e.into(),
        },
        other => FetchError::Unreachable {
            object,
            source: other.into(),
        },
    })?;
    serde_json::from_str(&text).map_err(|e| FetchError::Malformed {
        object: label,
        source: e.into(),
    })
}
