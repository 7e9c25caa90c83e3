//! The server's routes, authentication, and the dispatch of a resource request to list,
//! watch, get and the writes.

use std::sync::Arc;

use axum::Extension;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::Shared;
use crate::faults::{FaultsFired, RequestFault};
use crate::manifests;
use crate::shared::SimUser;

use super::exec::{self, Upgrade};
use super::params::Params;
use super::status::ApiError;
use super::target::{self, Route, Subresource, Target, parse_path};
use super::{
    aggregated, discovery, list, logs, metrics, openapi, portforward, proxy, review, table, watch,
    write,
};

/// The server's routes: discovery, the admin endpoint, and every resource path.
pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/version", get(discovery::version))
        .route("/healthz", get(health))
        .route("/livez", get(health))
        .route("/readyz", get(health))
        .nest("/sim", crate::admin::router())
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

/// Every request needs a user's bearer token; without one, a 401 Status as the real server
/// sends. The user goes with the request, for its RBAC.
async fn authenticate(
    State(shared): State<Arc<Shared>>,
    mut request: Request,
    next: Next,
) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    let user = presented.and_then(|token| {
        shared
            .users
            .iter()
            .find(|u| constant_time_eq(token.as_bytes(), u.token.as_bytes()))
    });
    let mut response = match user {
        Some(user) => {
            request.extensions_mut().insert(user.clone());
            next.run(request).await
        }
        None => ApiError::unauthorized().into_response(),
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

async fn api(
    State(shared): State<Arc<Shared>>,
    Extension(user): Extension<SimUser>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    upgrade: Upgrade,
    body: Bytes,
) -> Response {
    if let Some(review) = review::route(&uri) {
        return match method {
            Method::POST => review::serve(review, &user, &body),
            method => ApiError::method_not_allowed(method.as_str()).into_response(),
        };
    }
    match handle(shared, &user, method, uri, headers, upgrade, body).await {
        Ok(response) => response,
        Err(e) => e.into_response(),
    }
}

async fn handle(
    shared: Arc<Shared>,
    user: &SimUser,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    upgrade: Upgrade,
    body: Bytes,
) -> Result<Response, ApiError> {
    let uri = target::legacy_watch(&uri).unwrap_or(uri);
    if let Some(path) = metrics::route(uri.path()) {
        return metrics::serve(&shared, &method, path?, &uri);
    }
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
        Route::OpenApi(doc) if method == Method::GET => {
            return Ok(openapi::serve(&shared.store.served(), doc, &headers));
        }
        Route::Discovery(_) | Route::OpenApi(_) => {
            return Err(ApiError::method_not_allowed(method.as_str()));
        }
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
    let verb = verb(&method, &target, &params);
    let denied = user.read_only && !review::reads(verb);
    if let (true, Some(subresource), Some(namespace), Some(name)) = (
        denied,
        target.subresource,
        target.namespace.as_deref(),
        target.name.as_deref(),
    ) {
        return Err(ApiError::rbac_forbidden_subresource(
            &user.name,
            target.resource,
            subresource.name(),
            verb,
            namespace,
            name,
        ));
    }
    if forbidden || denied {
        return Err(ApiError::rbac_forbidden(
            &user.name,
            target.resource,
            verb,
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
        (Method::POST, true, Some(Subresource::Eviction)) => {
            write::evict(&shared, &target, &params, &headers, &body)
        }
        (
            Method::GET | Method::POST,
            true,
            Some(sub @ (Subresource::Exec | Subresource::Attach)),
        ) => {
            let kind = if sub == Subresource::Exec {
                exec::Kind::Exec
            } else {
                exec::Kind::Attach
            };
            exec::serve(shared, &target, kind, &uri, &headers, upgrade)
        }
        (Method::GET | Method::POST, true, Some(Subresource::PortForward)) => {
            portforward::serve(shared, &target, &uri, &headers, upgrade)
        }
        (
            method,
            true,
            Some(
                Subresource::Log | Subresource::Eviction | Subresource::Exec | Subresource::Attach,
            ),
        ) => Err(ApiError::method_not_allowed(method.as_str())),
        (Method::GET, true, _) => list::get(&shared, &target, as_table, metadata_only),
        (Method::POST, false, _) => write::create(&shared, &target, &params, &headers, &body),
        (Method::PUT, true, _) => write::replace(&shared, &target, &params, &headers, &body),
        (Method::PATCH, true, _) => write::patch(&shared, &target, &params, &headers, &body),
        (Method::DELETE, true, None) => write::delete(&shared, &target, &params, &headers, &body),
        (Method::DELETE, false, _) => {
            write::delete_collection(&shared, &target, &params, &headers, &body)
        }
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
    // A WebSocket upgrade to exec, attach or port-forward is a GET, but the real server
    // (AuthorizePodWebsocketUpgradeCreatePermission, on since 1.31) asks for `create`, so a
    // user who may only read gets no shell.
    if matches!(
        target.subresource,
        Some(Subresource::Exec | Subresource::Attach | Subresource::PortForward)
    ) {
        return "create";
    }
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
