//! Full objects, which stores do not keep: one fetched with a GET when a person opens it,
//! or all of a kind listed for `kscope get -o json|yaml`.
//!
//! The body is parsed here rather than by kube's `Client::request`, which logs the whole body
//! when it does not parse — a Secret's data included.

use std::time::Duration;

use serde_json::Value;

use kscope_informers::lister_watcher::{BoxError, innermost_cause};
use kscope_resources::{Kind, PathError};

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
    #[error("{what}: more than {limit} objects; narrow the list with -n, -l or --field-selector")]
    TooMany { what: String, limit: usize },
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
    fetch_path_within(client, path, object, FETCH_TIMEOUT).await
}

/// [`fetch_path`] with a bound of its own: a background poll gives up well before a person
/// would.
pub async fn fetch_path_within(
    client: &kube::Client,
    path: String,
    object: String,
    timeout: Duration,
) -> Result<Value, FetchError> {
    let request = http::Request::get(path)
        .header(http::header::ACCEPT, "application/json")
        .body(Vec::new())
        .map_err(|e| FetchError::Unreachable {
            object: object.clone(),
            source: e.into(),
        })?;
    let label = object.clone();
    let Ok(answer) = tokio::time::timeout(timeout, client.request_text(request)).await else {
        return Err(FetchError::Silent {
            object,
            waited: timeout,
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

/// The most objects [`fetch_all`] reads: a bound on what one command holds in memory.
pub const MAX_LISTED_OBJECTS: usize = 1_000_000;

/// How many objects a page of [`fetch_all`] asks for, as kubectl's chunked lists do.
const PAGE_SIZE: usize = 500;

/// What [`fetch_all`] lists: a kind, in a namespace or all, with the server-side selectors.
pub struct ListRequest<'a> {
    pub kind: &'a Kind,
    pub namespace: Option<&'a str>,
    pub label_selector: Option<&'a str>,
    pub field_selector: Option<&'a str>,
}

/// Lists every object `request` names, page by page, in the server's order, each with its
/// `apiVersion` and `kind` (a list's items may lack them; kubectl fills them in from the
/// list). At most [`MAX_LISTED_OBJECTS`].
pub async fn fetch_all(
    client: &kube::Client,
    request: &ListRequest<'_>,
) -> Result<Vec<Value>, FetchError> {
    let kind = request.kind;
    let what = kind.to_string();
    let base = kind.list_path(request.namespace.filter(|_| kind.namespaced()));
    let mut items = Vec::new();
    let mut continue_token: Option<String> = None;
    let mut restarts = LIST_RESTARTS;
    loop {
        // In a block of its own: the serializer is not Send, and a future holding it across
        // the await below could not run on a multi-threaded runtime (the MCP server's).
        let uri = {
            let mut query = form_urlencoded::Serializer::new(String::new());
            query.append_pair("limit", &PAGE_SIZE.to_string());
            if let Some(selector) = request.label_selector {
                query.append_pair("labelSelector", selector);
            }
            if let Some(selector) = request.field_selector {
                query.append_pair("fieldSelector", selector);
            }
            if let Some(token) = &continue_token {
                query.append_pair("continue", token);
            }
            format!("{base}?{}", query.finish())
        };
        let mut page = match fetch_retrying(client, uri, &what).await {
            Ok(page) => page,
            // The continue token expired mid-list: read the list again from its start.
            Err(FetchError::Api { code: 410, .. }) if continue_token.is_some() && restarts > 0 => {
                restarts -= 1;
                items.clear();
                continue_token = None;
                continue;
            }
            Err(err) => return Err(err),
        };
        let (api_version, item_kind) = list_item_type(&page, kind);
        if let Some(Value::Array(page_items)) = page.get_mut("items").map(Value::take) {
            for mut item in page_items {
                if let Some(object) = item.as_object_mut() {
                    object
                        .entry("apiVersion")
                        .or_insert_with(|| Value::String(api_version.clone()));
                    object
                        .entry("kind")
                        .or_insert_with(|| Value::String(item_kind.clone()));
                }
                items.push(item);
            }
        }
        if items.len() > MAX_LISTED_OBJECTS {
            return Err(FetchError::TooMany {
                what,
                limit: MAX_LISTED_OBJECTS,
            });
        }
        continue_token = page
            .pointer("/metadata/continue")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(str::to_string);
        if continue_token.is_none() {
            return Ok(items);
        }
    }
}

/// How many times [`fetch_all`] reads a list again when its continue token expires.
const LIST_RESTARTS: u32 = 3;

/// How many times a page is asked for again after a 429 or a 5xx, and the first wait (it
/// doubles each time): about six seconds in all at most.
const PAGE_RETRIES: u32 = 5;
const FIRST_RETRY_WAIT: Duration = Duration::from_millis(200);

/// One page, asked for again after a 429 (throttled) or a 5xx, as client-go retries them.
async fn fetch_retrying(
    client: &kube::Client,
    uri: String,
    what: &str,
) -> Result<Value, FetchError> {
    let mut wait = FIRST_RETRY_WAIT;
    let mut attempt = 0;
    loop {
        match fetch_path(client, uri.clone(), what.to_string()).await {
            Err(FetchError::Api { code, .. })
                if (code == 429 || code >= 500) && attempt < PAGE_RETRIES =>
            {
                attempt += 1;
                tokio::time::sleep(wait).await;
                wait *= 2;
            }
            other => return other,
        }
    }
}

/// The `apiVersion` and `kind` of a list's items: the list's own, less `List`, else the
/// kind's.
fn list_item_type(list: &Value, kind: &Kind) -> (String, String) {
    let api_version = list
        .get("apiVersion")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| match kind {
            Kind::Api(resource) => resource.api_version(),
            Kind::BuiltIn(k) => k.api_version().to_string(),
        });
    let item_kind = list
        .get("kind")
        .and_then(Value::as_str)
        .and_then(|k| k.strip_suffix("List"))
        .filter(|k| !k.is_empty())
        .unwrap_or(kind.kind())
        .to_string();
    (api_version, item_kind)
}
