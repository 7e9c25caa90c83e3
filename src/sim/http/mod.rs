//! The HTTP face of the sim: authentication, URL parsing into Kubernetes request targets,
//! and dispatch to list, watch, get and the writes.

mod aggregated;
mod crd_table;
mod discovery;
mod list;
mod logs;
mod printing;
mod proxy;
pub(crate) mod status;
mod table;
mod table_kinds;
mod watch;
pub(crate) mod write;

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, Method, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::Shared;
use super::faults::{FaultsFired, RequestFault};
use super::manifests;
use super::resources::Resource;
use super::store::Store;
use status::ApiError;

/// The server's routes: discovery, the admin endpoint, and every resource path.
pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/version", get(discovery::version))
        .route("/healthz", get(health))
        .route("/livez", get(health))
        .route("/readyz", get(health))
        .nest("/sim", super::admin::router())
        .fallback(api)
        .layer(middleware::from_fn_with_state(shared.clone(), authenticate))
        .with_state(shared)
}

/// `/healthz`, `/livez`, `/readyz`: `ok`, or with `?verbose` the checks as the real server
/// lists them. The sim is ready once it serves at all.
async fn health(uri: Uri) -> Response {
    let verbose = uri
        .query()
        .is_some_and(|q| q.split('&').any(|p| p == "verbose"));
    let body = if verbose {
        let name = uri.path().trim_start_matches('/');
        format!("[+]ping ok\n[+]log ok\n[+]etcd ok\n{name} check passed\n")
    } else {
        "ok".to_string()
    };
    ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body).into_response()
}

/// Every request needs the bearer token; without it, a 401 Status as the real server sends.
async fn authenticate(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    let mut response = match presented {
        Some(token) if constant_time_eq(token.as_bytes(), shared.token.as_bytes()) => {
            next.run(request).await
        }
        _ => ApiError::unauthorized().into_response(),
    };
    // Every answer names its audit event, as the real server's do.
    if let Ok(id) = header::HeaderValue::from_str(&manifests::uid(&mut rand::rng())) {
        response.headers_mut().insert("audit-id", id);
    }
    response
}

/// Compares without an early exit, so timing does not reveal a prefix of the token.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A subresource of one object: its status alone, or its scale (autoscaling/v1 Scale).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Subresource {
    Status,
    Scale,
    /// A pod's container log (`pods/NAME/log`).
    Log,
}

impl Subresource {
    /// The subresource `name` of `resource`, if the real server serves it.
    fn of(resource: Resource, name: &str) -> Option<Self> {
        if resource == Resource::Pods && name == "log" {
            return Some(Subresource::Log);
        }
        [Subresource::Status, Subresource::Scale]
            .into_iter()
            .find(|sub| sub.name_for(resource) == Some(name))
    }

    /// This subresource's URL segment, if `resource` has it.
    fn name_for(self, resource: Resource) -> Option<&'static str> {
        let d = resource.descriptor();
        match self {
            Subresource::Status => d.status.then_some("status"),
            Subresource::Scale => d.scale.then_some("scale"),
            Subresource::Log => (resource == Resource::Pods).then_some("log"),
        }
    }
}

/// What a resource URL names.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub resource: Resource,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub subresource: Option<Subresource>,
}

impl Target {
    /// The store key of the named object.
    pub fn key(&self, name: &str) -> String {
        match &self.namespace {
            Some(ns) if self.resource.namespaced() => format!("{ns}/{name}"),
            _ => name.to_string(),
        }
    }

    /// The key prefix a collection covers.
    pub fn prefix(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}/"),
            None => String::new(),
        }
    }
}

enum Route {
    Discovery(discovery::Doc),
    Resource(Target),
    /// `pods/NAME[:PORT]/proxy/PATH` in a namespace.
    PodProxy {
        namespace: String,
        name_port: String,
        path: String,
    },
}

fn parse_path(path: &str, store: &Store) -> Result<Route, ApiError> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let doc = |doc| Ok(Route::Discovery(doc));
    let group_version = |group: &str, version: &str| {
        discovery::GroupVersion::served(store, group, version).ok_or_else(ApiError::unknown_path)
    };
    let (group, version, rest) = match segments.as_slice() {
        ["api"] => return doc(discovery::Doc::CoreVersions),
        ["apis"] => return doc(discovery::Doc::Groups),
        ["api", "v1"] => return doc(discovery::Doc::Resources(group_version("", "v1")?)),
        ["apis", group] => {
            return doc(discovery::Doc::Group(
                discovery::served_group(store, group).ok_or_else(ApiError::unknown_path)?,
            ));
        }
        ["apis", group, version] => {
            return doc(discovery::Doc::Resources(group_version(group, version)?));
        }
        ["openapi", "v3"] => return doc(discovery::Doc::OpenApiIndex),
        ["openapi", "v3", "api", "v1"] => {
            return doc(discovery::Doc::OpenApi(group_version("", "v1")?));
        }
        ["openapi", "v3", "apis", group, version] => {
            return doc(discovery::Doc::OpenApi(group_version(group, version)?));
        }
        [
            "api",
            "v1",
            "namespaces",
            ns,
            "pods",
            name,
            "proxy",
            path @ ..,
        ] => {
            return Ok(Route::PodProxy {
                namespace: (*ns).to_string(),
                name_port: (*name).to_string(),
                path: path.join("/"),
            });
        }
        ["api", "v1", rest @ ..] => ("", "v1", rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return Err(ApiError::unknown_path()),
    };
    let resolve = |plural: &str| store.resolve_path(group, version, plural);
    let find = |plural: &str| resolve(plural).ok_or_else(ApiError::unknown_path);
    let subresource = |resource: Resource, name: &str| {
        Subresource::of(resource, name).ok_or_else(ApiError::unknown_path)
    };
    let target = match rest {
        [plural] => Target {
            resource: find(plural)?,
            namespace: None,
            name: None,
            subresource: None,
        },
        // `namespaces/NS/PLURAL` lists PLURAL in NS unless PLURAL is a subresource of the
        // namespace itself (`namespaces/NS/status`).
        ["namespaces", ns, plural] if resolve(plural).is_some_and(Resource::namespaced) => Target {
            resource: find(plural)?,
            namespace: Some((*ns).to_string()),
            name: None,
            subresource: None,
        },
        [plural, name, sub @ ..] if sub.len() <= 1 => {
            let resource = find(plural)?;
            if resource.namespaced() {
                return Err(ApiError::unknown_path());
            }
            Target {
                resource,
                namespace: None,
                name: Some((*name).to_string()),
                subresource: sub.first().map(|s| subresource(resource, s)).transpose()?,
            }
        }
        ["namespaces", ns, plural, rest @ ..] if rest.len() <= 2 => {
            let resource = find(plural)?;
            if !resource.namespaced() {
                return Err(ApiError::unknown_path());
            }
            Target {
                resource,
                namespace: Some((*ns).to_string()),
                name: rest.first().map(|n| (*n).to_string()),
                subresource: rest.get(1).map(|s| subresource(resource, s)).transpose()?,
            }
        }
        _ => return Err(ApiError::unknown_path()),
    };
    Ok(Route::Resource(target))
}

/// Query parameters, first value of each wins.
pub(crate) struct Params(HashMap<String, String>);

impl Params {
    fn from_uri(uri: &Uri) -> Result<Self, ApiError> {
        let pairs = Query::<Vec<(String, String)>>::try_from_uri(uri)
            .map_err(|e| ApiError::bad_request(format!("invalid query: {e}")))?;
        let mut map = HashMap::new();
        for (k, v) in pairs.0 {
            map.entry(k).or_insert(v);
        }
        Ok(Self(map))
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// `true`, `1` (as Go's strconv.ParseBool accepts) are true.
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.get(name), Some("true" | "1" | "True" | "TRUE" | "t"))
    }
}

async fn api(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    match handle(shared, method, uri, headers, body).await {
        Ok(response) => response,
        Err(e) => e.into_response(),
    }
}

async fn handle(
    shared: Arc<Shared>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let target = match parse_path(uri.path(), &shared.store)? {
        Route::Discovery(doc) if method == Method::GET => {
            let served = shared.store.served();
            return Ok(match doc {
                discovery::Doc::CoreVersions if aggregated::wanted(&headers) => {
                    aggregated::serve(&served, true)
                }
                discovery::Doc::Groups if aggregated::wanted(&headers) => {
                    aggregated::serve(&served, false)
                }
                doc => discovery::serve(&served, doc),
            });
        }
        Route::Discovery(_) => return Err(ApiError::method_not_allowed(method.as_str())),
        Route::PodProxy {
            namespace,
            name_port,
            path,
        } => return proxy::pod_proxy(&shared, &method, &namespace, &name_port, &path),
        Route::Resource(target) => target,
    };
    let params = Params::from_uri(&uri)?;
    let (fault, forbidden) = {
        let faults = shared.faults.read();
        (
            faults.request_fault(&shared.fault_rolls),
            faults.forbids(target.resource),
        )
    };
    if forbidden {
        return Err(ApiError::rbac_forbidden(
            target.resource,
            verb(&method, &target, &params),
            target.namespace.as_deref(),
            target.name.as_deref(),
        ));
    }
    match fault {
        RequestFault::InternalError => {
            FaultsFired::bump(&shared.fired.internal_errors);
            return Err(ApiError::internal("simulated fault"));
        }
        RequestFault::Throttle => {
            FaultsFired::bump(&shared.fired.throttled);
            return Err(ApiError::too_many_requests());
        }
        RequestFault::None => {}
    }
    let as_table = table::wants_table(&headers, &params)?;
    let metadata_only = table::wants_metadata(&headers);
    let (target, params) = named_watch(target, params, &method);
    let named = target.name.is_some();
    match (method, named, target.subresource) {
        (Method::GET, false, _) if params.flag("watch") => {
            watch::watch(shared, target, &params, as_table).await
        }
        (Method::GET, false, _) => {
            list::list(&shared, &target, &params, as_table, metadata_only).await
        }
        (Method::GET, true, Some(Subresource::Scale)) => write::get_scale(&shared, &target),
        (Method::GET, true, Some(Subresource::Log)) => logs::logs(shared, &target, &params).await,
        (method, true, Some(Subresource::Log)) => {
            Err(ApiError::method_not_allowed(method.as_str()))
        }
        (Method::GET, true, _) => list::get(&shared, &target, as_table, metadata_only),
        (Method::POST, false, _) => write::create(&shared, &target, &params, &headers, &body),
        (Method::PUT, true, _) => write::replace(&shared, &target, &params, &headers, &body),
        (Method::PATCH, true, _) => write::patch(&shared, &target, &params, &headers, &body),
        (Method::DELETE, true, None) => write::delete(&shared, &target, &params, &body),
        (Method::DELETE, false, _) => write::delete_collection(&shared, &target, &params, &body),
        (method, _, _) => Err(ApiError::method_not_allowed(method.as_str())),
    }
}

/// The legacy watch of one object (`GET .../pods/NAME?watch=true`) is a watch of its
/// collection narrowed to that name, as the real server serves it.
fn named_watch(target: Target, mut params: Params, method: &Method) -> (Target, Params) {
    let Some(name) = target
        .name
        .clone()
        .filter(|_| method == Method::GET && params.flag("watch") && target.subresource.is_none())
    else {
        return (target, params);
    };
    let by_name = format!("metadata.name={name}");
    let selector = match params.get("fieldSelector") {
        Some(other) => format!("{other},{by_name}"),
        None => by_name,
    };
    params.0.insert("fieldSelector".into(), selector);
    (
        Target {
            name: None,
            ..target
        },
        params,
    )
}

/// The RBAC verb a request needs, as an authorizer names it.
fn verb(method: &Method, target: &Target, params: &Params) -> &'static str {
    match (method, target.name.is_some()) {
        (&Method::GET, false) if params.flag("watch") => "watch",
        (&Method::GET, false) => "list",
        (&Method::GET, true) => "get",
        (&Method::POST, _) => "create",
        (&Method::PUT, _) => "update",
        (&Method::PATCH, _) => "patch",
        (&Method::DELETE, true) => "delete",
        (&Method::DELETE, false) => "deletecollection",
        _ => "access",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(path: &str) -> Option<Target> {
        match parse_path(path, &Store::new(10)) {
            Ok(Route::Resource(t)) => Some(t),
            _ => None,
        }
    }

    #[test]
    fn paths() {
        let t = target("/api/v1/namespaces/ns1/pods/p1").unwrap();
        assert_eq!(
            (t.resource, t.namespace.as_deref(), t.name.as_deref()),
            (Resource::Pods, Some("ns1"), Some("p1"))
        );
        let t = target("/api/v1/namespaces/ns1").unwrap();
        assert_eq!(
            (t.resource, t.name.as_deref()),
            (Resource::Namespaces, Some("ns1"))
        );
        let t = target("/apis/apps/v1/deployments").unwrap();
        assert_eq!((t.resource, t.namespace), (Resource::Deployments, None));
        assert!(target("/api/v1/pods/p1").is_none());
        assert!(target("/api/v1/namespaces/ns1/nodes").is_none());
        assert!(target("/api/v1/widgets").is_none());
        let t = target("/api/v1/namespaces/ns1/pods/p1/status").unwrap();
        assert_eq!(t.subresource, Some(Subresource::Status));
        let t = target("/apis/apps/v1/namespaces/ns1/deployments/d/scale").unwrap();
        assert_eq!(t.subresource, Some(Subresource::Scale));
        let t = target("/api/v1/namespaces/ns1/status").unwrap();
        assert_eq!(
            (t.resource, t.name.as_deref(), t.subresource),
            (Resource::Namespaces, Some("ns1"), Some(Subresource::Status))
        );
        assert!(target("/api/v1/namespaces/ns1/pods/p1/scale").is_none());
        assert!(target("/api/v1/namespaces/ns1/pods/p1/exec2").is_none());
    }
}
