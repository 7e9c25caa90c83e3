//! Errors as the real server writes them: `metav1.Status` objects with the same reasons,
//! messages and details, so clients' error handling is exercised for real.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::crd::schema::FieldError;
use crate::resources::Resource;
use crate::store::StoreError;

/// The user RBAC messages name: the sim's token stands for it.
pub(crate) const SIM_USER: &str = "kscope-sim";

/// An API error answered as a Status object.
#[derive(Debug, Clone)]
pub struct ApiError {
    code: u16,
    reason: &'static str,
    message: String,
    details: Option<Value>,
    retry_after: Option<u64>,
    /// `metadata.continue` of the Status: where an inconsistent list may go on from.
    list_continue: Option<String>,
}

impl ApiError {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: None,
            retry_after: None,
            list_continue: None,
        }
    }

    fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// An error the server's code returns without a Status of its own: `ErrorToAPIStatus`
    /// gives it `code` and no reason.
    pub fn unclassified(code: u16, message: impl Into<String>) -> Self {
        Self::new(code, "", message)
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    pub fn forbidden(resource: Resource, name: &str, why: &str) -> Self {
        Self::new(
            403,
            "Forbidden",
            format!("{} \"{name}\" is forbidden: {why}", resource.plural()),
        )
        .with_details(json!({"name": name, "kind": resource.plural()}))
    }

    /// 403 as RBAC words it for `verb` on `resource`, for the sim's own user.
    pub fn rbac_forbidden(
        user: &str,
        resource: Resource,
        verb: &str,
        namespace: Option<&str>,
        name: Option<&str>,
    ) -> Self {
        let qualified = match resource.group() {
            "" => resource.plural().to_string(),
            group => format!("{}.{group}", resource.plural()),
        };
        let subject = match name {
            Some(name) => format!("{qualified} \"{name}\""),
            None => qualified,
        };
        let scope = match namespace {
            Some(ns) => format!("in the namespace \"{ns}\""),
            None => "at the cluster scope".to_string(),
        };
        let mut details = json!({"kind": resource.plural()});
        if let Some(name) = name {
            details["name"] = json!(name);
        }
        if !resource.group().is_empty() {
            details["group"] = json!(resource.group());
        }
        Self::new(
            403,
            "Forbidden",
            format!(
                "{subject} is forbidden: User \"{user}\" cannot {verb} resource \"{}\" in \
                 API group \"{}\" {scope}",
                resource.plural(),
                resource.group()
            ),
        )
        .with_details(details)
    }

    /// 503 as the API server's proxy answers when it cannot reach the backend.
    pub fn service_unavailable(message: impl Into<String>) -> Self {
        Self::new(503, "ServiceUnavailable", message)
    }

    /// 403 for a subresource RBAC refuses (`pods/proxy`).
    pub fn rbac_forbidden_subresource(
        user: &str,
        resource: Resource,
        subresource: &str,
        verb: &str,
        namespace: &str,
        name: &str,
    ) -> Self {
        // `deployments.apps "web"`, as the real server names an object outside the core group.
        let qualified = match resource.group() {
            "" => resource.plural().to_string(),
            group => format!("{}.{group}", resource.plural()),
        };
        Self::new(
            403,
            "Forbidden",
            format!(
                "{qualified} \"{name}\" is forbidden: User \"{user}\" cannot {verb} resource \"{}/{subresource}\" in API group \"{}\" in the namespace \"{namespace}\"",
                resource.plural(),
                resource.group(),
            ),
        )
        .with_details(json!({"name": name, "kind": resource.plural()}))
    }

    pub fn not_found(resource: Resource, name: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", resource.plural()),
        )
        .with_details(json!({"name": name, "group": resource.group(), "kind": resource.plural()}))
    }

    /// An object of a resource the sim serves apart from its store (`pods.metrics.k8s.io`).
    pub fn not_found_in(group: &str, plural: &str, name: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{plural}.{group} \"{name}\" not found"),
        )
        .with_details(json!({"name": name, "group": group, "kind": plural}))
    }

    /// A path the server does not serve at all.
    pub fn unknown_path() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
        .with_details(json!({}))
    }

    /// A part of the real API the sim does not serve, named, with what it is for.
    pub fn not_served(feature: &str, used_by: &str) -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            format!("{feature} ({used_by}) is not served by the simulated API server"),
        )
        .with_details(json!({"kind": feature}))
    }

    pub fn method_not_allowed(method: &str) -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            format!("the server does not allow this method on the requested resource ({method})"),
        )
        .with_details(json!({}))
    }

    pub fn already_exists(resource: Resource, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", resource.plural()),
        )
        .with_details(json!({"name": name, "group": resource.group(), "kind": resource.plural()}))
    }

    pub fn conflict(resource: Resource, name: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; \
                 please apply your changes to the latest version and try again",
                resource.plural()
            ),
        )
        .with_details(json!({"name": name, "group": resource.group(), "kind": resource.plural()}))
    }

    /// 409 for a failed precondition or a write that cannot be made as asked.
    pub fn conflict_because(resource: Resource, name: &str, why: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                resource.plural()
            ),
        )
        .with_details(json!({"name": name, "group": resource.group(), "kind": resource.plural()}))
    }

    /// 409 for a server-side apply that would take fields other managers own.
    pub fn apply_conflict(message: String, details: Value) -> Self {
        Self::new(409, "Conflict", message).with_details(details)
    }

    /// 403 for content created in a namespace being deleted.
    pub fn namespace_terminating(resource: Resource, name: &str, namespace: &str) -> Self {
        Self::new(
            403,
            "Forbidden",
            format!(
                "{} \"{name}\" is forbidden: unable to create new content in namespace \
                 {namespace} because it is being terminated",
                resource.plural()
            ),
        )
        .with_details(json!({
            "name": name,
            "kind": resource.plural(),
            "causes": [{
                "reason": "NamespaceTerminating",
                "message": format!("namespace {namespace} is being terminated"),
                "field": "metadata.namespace",
            }],
        }))
    }

    /// 422 with no field cause, as a JSON patch that fails against the object gets.
    pub fn unprocessable() -> Self {
        Self::new(
            422,
            "Invalid",
            "the server rejected our request due to an error in our request",
        )
        .with_details(json!({}))
    }

    /// 410 for an expired resourceVersion or continue token.
    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// 410 for an expired continue token; `next` is the token that continues the list from
    /// where it was, at the newest state.
    pub fn continue_expired(next: String) -> Self {
        let mut e = Self::expired(
            "The provided continue parameter is too old to display a consistent list result. \
             You can start a new list without the continue parameter, or use the continue token \
             in this response to retrieve the remainder of the results. Continuing with the \
             provided token results in an inconsistent list - objects that were created, \
             modified, or deleted between the time the first chunk was returned and now may show \
             up in the list.",
        );
        e.list_continue = Some(next);
        e
    }

    /// 406: the client accepts none of the forms this path is served in.
    pub fn not_acceptable(served: &str) -> Self {
        Self::new(
            406,
            "NotAcceptable",
            format!("only the following media types are accepted: {served}"),
        )
        .with_details(json!({}))
    }

    /// 415; `accepted` lists the media types this request could have used.
    pub fn unsupported_media_type(accepted: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {accepted}"
            ),
        )
        .with_details(json!({}))
    }

    /// 422 with one field cause, as validation failures look. `kind` is group-qualified
    /// (`Deployment.apps`) outside the core group, as the server names it in the message;
    /// the details carry the kind and the group apart.
    pub fn invalid(kind: &str, name: &str, field: &str, cause: &str, detail: &str) -> Self {
        let (reason, short) = match cause {
            "FieldValueRequired" => (cause, "Required value"),
            "FieldValueNotSupported" => (cause, "Unsupported value"),
            "FieldValueForbidden" => (cause, "Forbidden"),
            _ => (cause, "Invalid value"),
        };
        let message = if detail.is_empty() {
            format!("{kind} \"{name}\" is invalid: {field}: {short}")
        } else {
            format!("{kind} \"{name}\" is invalid: {field}: {short}: {detail}")
        };
        let cause_message = if detail.is_empty() {
            short.to_string()
        } else {
            format!("{short}: {detail}")
        };
        let causes = json!([{"reason": reason, "message": cause_message, "field": field}]);
        Self::new(422, "Invalid", message).with_details(invalid_details(kind, name, causes))
    }

    /// 422 with every field error, as validation of a custom resource or a CRD reports
    /// them: one cause each, the message listing them (in brackets when several).
    pub fn invalid_all(kind: &str, name: &str, errors: &[FieldError]) -> Self {
        let rendered: Vec<String> = errors.iter().map(FieldError::render).collect();
        let listed = match rendered.as_slice() {
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        let causes: Vec<Value> = errors
            .iter()
            .map(|e| {
                let message = if e.detail.is_empty() {
                    e.short.to_string()
                } else {
                    format!("{}: {}", e.short, e.detail)
                };
                json!({"reason": e.reason, "message": message, "field": e.field})
            })
            .collect();
        Self::new(
            422,
            "Invalid",
            format!("{kind} \"{name}\" is invalid: {listed}"),
        )
        .with_details(invalid_details(kind, name, json!(causes)))
    }

    pub fn too_many_requests() -> Self {
        let mut e = Self::new(
            429,
            "TooManyRequests",
            "Too many requests, please try again later.",
        )
        .with_details(json!({"retryAfterSeconds": 1}));
        e.retry_after = Some(1);
        e
    }

    /// 429 for an eviction a PodDisruptionBudget forbids, as the eviction subresource words
    /// it: no Retry-After, and the budget's shortfall as a `DisruptionBudget` cause.
    pub fn disruption_budget(cause: &str) -> Self {
        Self::new(
            429,
            "TooManyRequests",
            "Cannot evict pod as it would violate the pod's disruption budget.",
        )
        .with_details(json!({"causes": [{"reason": "DisruptionBudget", "message": cause}]}))
    }

    pub fn internal(message: &str) -> Self {
        Self::new(
            500,
            "InternalError",
            format!("Internal error occurred: {message}"),
        )
        .with_details(json!({"causes": [{"message": message}]}))
    }

    /// 504 for a resourceVersion the server has not reached, as kube-apiserver's watch cache
    /// answers it (`storage.NewTooLargeResourceVersionError`: a Timeout whose cause says why).
    pub fn too_large_rv(requested: u64, current: u64) -> Self {
        Self::new(
            504,
            "Timeout",
            format!("Timeout: Too large resource version: {requested}, current: {current}"),
        )
        .with_details(json!({
            "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
            "retryAfterSeconds": 1
        }))
    }

    /// The HTTP status code.
    pub fn code(&self) -> u16 {
        self.code
    }

    /// The Status object.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if self.reason.is_empty()
            && let Some(fields) = status.as_object_mut()
        {
            fields.remove("reason");
        }
        if let Some(details) = &self.details {
            status["details"] = details.clone();
        }
        if let Some(token) = &self.list_continue {
            status["metadata"]["continue"] = json!(token);
        }
        status
    }
}

/// A 422's details: `Kind.group` split into its kind and group (which the server leaves out
/// in the core group).
fn invalid_details(kind: &str, name: &str, causes: Value) -> Value {
    let (kind, group) = kind.split_once('.').unwrap_or((kind, ""));
    let mut details = json!({"name": name, "kind": kind, "causes": causes});
    if !group.is_empty() {
        details["group"] = json!(group);
    }
    details
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::TooOld { .. } => ApiError::expired(e.to_string()),
            StoreError::TooNew { requested, current } => ApiError::too_large_rv(requested, current),
            StoreError::Encode(m) => ApiError::internal(&m),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (code, json_body(self.to_status().to_string())).into_response();
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

/// A body with the JSON content type every API answer carries.
pub fn json_body(body: impl Into<axum::body::Body>) -> Response {
    let mut response = Response::new(body.into());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
