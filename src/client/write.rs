//! Writes a person asks for from the TUI: delete, patch, create and evict one object, each
//! optionally as a server-side dry run. Errors are typed by what the person must be told
//! (forbidden, changed meanwhile, refused by a disruption budget), and carry the server's
//! own words; request bodies are never part of an error.

use std::time::Duration;

use serde_json::{Value, json};

use kscope_informers::lister_watcher::{BoxError, innermost_cause};
use kscope_resources::{Kind, PathError};

/// A person is waiting on the confirm dialog: past this, say the server did not answer.
const WRITE_TIMEOUT: Duration = Duration::from_secs(15);

/// One object a write is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub kind: Kind,
    /// `None` for a cluster-scoped kind.
    pub namespace: Option<String>,
    pub name: String,
}

impl Target {
    /// `Pod shop/web-1`, `Node n1`: how messages and the audit log name it.
    pub fn label(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{} {ns}/{}", self.kind.kind(), self.name),
            None => format!("{} {}", self.kind.kind(), self.name),
        }
    }

    fn path(&self) -> Result<String, PathError> {
        self.kind.object_path(self.namespace.as_deref(), &self.name)
    }
}

/// Why a write was not done. Messages say it in plain words, with the server's reason.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// 403: RBAC says no. The server's message names the user, verb and resource.
    #[error("not allowed: {message}")]
    Forbidden { message: String },
    #[error("{object} is gone (404): it may have just been deleted")]
    NotFound { object: String },
    /// 409: someone else changed it first (a resourceVersion precondition failed).
    #[error("{object} was changed by someone else meanwhile (409): {message}")]
    Conflict { object: String, message: String },
    /// 422: the server refused the new object.
    #[error("{object} is invalid (422): {message}")]
    Invalid { object: String, message: String },
    /// 429: an eviction a PodDisruptionBudget does not allow now, or throttling.
    #[error("{object} refused (429): {message}")]
    TooManyRequests { object: String, message: String },
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

impl WriteError {
    /// The HTTP status the server answered, when it answered one.
    pub fn code(&self) -> Option<u16> {
        match self {
            Self::Forbidden { .. } => Some(403),
            Self::NotFound { .. } => Some(404),
            Self::Conflict { .. } => Some(409),
            Self::Invalid { .. } => Some(422),
            Self::TooManyRequests { .. } => Some(429),
            Self::Api { code, .. } => Some(*code),
            Self::Unreachable { .. } | Self::Silent { .. } | Self::Malformed { .. } => None,
            Self::Path(_) => None,
        }
    }
}

/// DeleteOptions as a person chooses them in the confirm dialog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeleteOptions {
    /// `None`: the object's own (a pod's terminationGracePeriodSeconds).
    pub grace_period_seconds: Option<i64>,
    /// `Background` (kubectl's default), `Foreground` or `Orphan`.
    pub propagation: Propagation,
    pub dry_run: bool,
}

/// What happens to an object's dependents when it is deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Propagation {
    /// The object goes now, the garbage collector deletes its dependents after it.
    #[default]
    Background,
    /// The dependents go first; the object stays (with a finalizer) until they are gone.
    Foreground,
    /// The dependents are kept, their owner reference removed.
    Orphan,
}

impl Propagation {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Background => "Background",
            Self::Foreground => "Foreground",
            Self::Orphan => "Orphan",
        }
    }
}

/// DELETEs `target`; returns what the server answered (the object, marked for deletion or
/// as it was, or a Status).
pub async fn delete(
    client: &kube::Client,
    target: &Target,
    options: DeleteOptions,
) -> Result<Value, WriteError> {
    let mut body = json!({
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        "propagationPolicy": options.propagation.as_str(),
    });
    if let Some(grace) = options.grace_period_seconds {
        body["gracePeriodSeconds"] = json!(grace);
    }
    if options.dry_run {
        body["dryRun"] = json!(["All"]);
    }
    let uri = target.path()?;
    send(
        client,
        http::Method::DELETE,
        uri,
        "application/json",
        &body,
        target.label(),
    )
    .await
}

/// How a patch body is read, as kubectl's `--type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// RFC 7386 JSON merge patch.
    Merge,
    /// Kubernetes' strategic merge patch (lists merged by their keys).
    Strategic,
    /// RFC 6902 JSON patch: operations on paths, as `kubectl rollout undo` sends.
    Json,
}

impl PatchType {
    fn content_type(self) -> &'static str {
        match self {
            Self::Merge => "application/merge-patch+json",
            Self::Strategic => "application/strategic-merge-patch+json",
            Self::Json => "application/json-patch+json",
        }
    }
}

/// PATCHes `target` (or its `subresource`, as `scale`); returns the object as patched.
pub async fn patch(
    client: &kube::Client,
    target: &Target,
    patch_type: PatchType,
    body: &Value,
    dry_run: bool,
) -> Result<Value, WriteError> {
    let uri = with_dry_run(target.path()?, dry_run);
    send(
        client,
        http::Method::PATCH,
        uri,
        patch_type.content_type(),
        body,
        target.label(),
    )
    .await
}

/// POSTs `object` to `list_path` (`/apis/batch/v1/namespaces/shop/jobs`); returns the
/// object created.
pub async fn create(
    client: &kube::Client,
    list_path: &str,
    object: &Value,
    dry_run: bool,
) -> Result<Value, WriteError> {
    let uri = with_dry_run(list_path.to_string(), dry_run);
    let text = |pointer: &str| {
        object
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let label = format!(
        "{} {}/{}",
        text("/kind"),
        text("/metadata/namespace"),
        text("/metadata/name")
    );
    send(
        client,
        http::Method::POST,
        uri,
        "application/json",
        object,
        label,
    )
    .await
}

/// Evicts pod `namespace/name` through the Eviction API, which a PodDisruptionBudget may
/// refuse with a 429 saying why.
pub async fn evict(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    dry_run: bool,
) -> Result<Value, WriteError> {
    let mut body = json!({
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": name, "namespace": namespace},
    });
    if dry_run {
        body["deleteOptions"] = json!({"dryRun": ["All"]});
    }
    let uri = format!("/api/v1/namespaces/{namespace}/pods/{name}/eviction");
    send(
        client,
        http::Method::POST,
        uri,
        "application/json",
        &body,
        format!("Pod {namespace}/{name}"),
    )
    .await
}

fn with_dry_run(uri: String, dry_run: bool) -> String {
    if dry_run {
        format!("{uri}?dryRun=All")
    } else {
        uri
    }
}

/// One request with a JSON body whose answer is JSON, bounded by [`WRITE_TIMEOUT`].
async fn send(
    client: &kube::Client,
    method: http::Method,
    uri: String,
    content_type: &str,
    body: &Value,
    object: String,
) -> Result<Value, WriteError> {
    let unreachable = |object: &str, source: BoxError| WriteError::Unreachable {
        object: object.to_string(),
        source,
    };
    let body = serde_json::to_vec(body).map_err(|e| unreachable(&object, e.into()))?;
    let request = http::Request::builder()
        .method(method)
        .uri(uri)
        .header(http::header::ACCEPT, "application/json")
        .header(http::header::CONTENT_TYPE, content_type)
        .body(body)
        .map_err(|e| unreachable(&object, e.into()))?;
    let Ok(answer) = tokio::time::timeout(WRITE_TIMEOUT, client.request_text(request)).await else {
        return Err(WriteError::Silent {
            object,
            waited: WRITE_TIMEOUT,
        });
    };
    let text = answer.map_err(|err| match err {
        kube::Error::Api(status) => match status.code {
            403 => WriteError::Forbidden {
                message: status.message,
            },
            404 => WriteError::NotFound {
                object: object.clone(),
            },
            409 => WriteError::Conflict {
                object: object.clone(),
                message: status.message,
            },
            422 => WriteError::Invalid {
                object: object.clone(),
                message: status.message,
            },
            429 => WriteError::TooManyRequests {
                object: object.clone(),
                message: status.message,
            },
            code => WriteError::Api {
                object: object.clone(),
                code,
                reason: status.reason,
                message: status.message,
            },
        },
        other => unreachable(&object, other.into()),
    })?;
    serde_json::from_str(&text).map_err(|e| WriteError::Malformed {
        object,
        source: e.into(),
    })
}

/// Asks the server whether the caller may `verb` the `resource` of `group` (in `namespace`,
/// or anywhere): a SelfSubjectAccessReview, as `kubectl auth can-i` sends. A subresource is
/// written as kubectl takes it, `pods/exec`. Returns whether it may, and the server's
/// reason (empty when it gives none).
pub async fn can_i(
    client: &kube::Client,
    verb: &str,
    group: &str,
    resource: &str,
    namespace: Option<&str>,
) -> Result<(bool, String), WriteError> {
    let mut attributes = json!({"verb": verb, "group": group});
    match resource.split_once('/') {
        Some((resource, subresource)) => {
            attributes["resource"] = json!(resource);
            attributes["subresource"] = json!(subresource);
        }
        None => attributes["resource"] = json!(resource),
    }
    if let Some(namespace) = namespace {
        attributes["namespace"] = json!(namespace);
    }
    let review = json!({
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": attributes},
    });
    let answer = send(
        client,
        http::Method::POST,
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews".into(),
        "application/json",
        &review,
        format!("may I {verb} {resource}"),
    )
    .await?;
    let allowed = answer.pointer("/status/allowed").and_then(Value::as_bool) == Some(true);
    let reason = answer
        .pointer("/status/reason")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    Ok((allowed, reason))
}

/// The caller's user name, as `kubectl auth whoami` asks it (a SelfSubjectReview), so a
/// refusal can name who may not.
pub async fn whoami(client: &kube::Client) -> Result<String, WriteError> {
    let review = json!({
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "SelfSubjectReview",
    });
    let answer = send(
        client,
        http::Method::POST,
        "/apis/authentication.k8s.io/v1/selfsubjectreviews".into(),
        "application/json",
        &review,
        "who am I".into(),
    )
    .await?;
    Ok(answer
        .pointer("/status/userInfo/username")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string())
}
