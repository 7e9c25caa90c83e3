//! The pods/proxy subresource (`pods/NAME[:PORT]/proxy/PATH`): the API server forwards the
//! request to the pod's IP and port. In the sim the demo Widget controller's pod answers on
//! its metrics port; anything else is a port nothing listens on, answered as the real
//! server's proxy transport answers a refused dial.

use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::status::ApiError;
use crate::Shared;
use crate::resources::Resource;
use crate::widgets;

pub(super) fn pod_proxy(
    shared: &Shared,
    method: &Method,
    namespace: &str,
    name_port: &str,
    path: &str,
) -> Result<Response, ApiError> {
    let (name, port) = match name_port.rsplit_once(':') {
        Some((name, port)) => (name, Some(port)),
        None => (name_port, None),
    };
    if shared.faults.read().forbids_name("pods/proxy") {
        let verb = if method == Method::GET {
            "get"
        } else {
            "create"
        };
        return Err(ApiError::rbac_forbidden_subresource(
            super::status::SIM_USER,
            Resource::Pods,
            "proxy",
            verb,
            namespace,
            name,
        ));
    }
    let pod = shared
        .store
        .get(Resource::Pods, &format!("{namespace}/{name}"))
        .ok_or_else(|| ApiError::not_found(Resource::Pods, name))?
        .decode()
        .map_err(|e| ApiError::internal(&e.to_string()))?;
    let Some(ip) = pod["status"]["podIP"].as_str().filter(|ip| !ip.is_empty()) else {
        return Err(ApiError::bad_request("address not allowed"));
    };
    // A named port is looked up among the containers' ports; no port is port 80.
    let port: u16 = match port {
        None => 80,
        Some(p) => match p.parse() {
            Ok(n) => n,
            Err(_) => pod["spec"]["containers"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|c| c["ports"].as_array().cloned().unwrap_or_default())
                .find(|cp| cp["name"] == p)
                .and_then(|cp| cp["containerPort"].as_u64())
                .and_then(|n| u16::try_from(n).ok())
                .ok_or_else(|| {
                    ApiError::service_unavailable(format!(
                        "error trying to reach service: dial tcp {ip}:{p}: unknown port"
                    ))
                })?,
        },
    };
    let refused = || {
        ApiError::service_unavailable(format!(
            "error trying to reach service: dial tcp {ip}:{port}: connect: connection refused"
        ))
    };
    let serves_metrics = namespace == widgets::NAMESPACE
        && pod["metadata"]["labels"]["control-plane"] == widgets::NAME
        && pod["status"]["phase"] == "Running"
        && port == widgets::METRICS_PORT;
    if !serves_metrics {
        return Err(refused());
    }
    if path.trim_matches('/') != "metrics" || method != Method::GET {
        // Go's http.NotFound, as the controller's metrics server answers any other path.
        return Ok((
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            "404 page not found\n",
        )
            .into_response());
    }
    let pod_uid = pod["metadata"]["uid"].as_str().unwrap_or_default();
    let text = widgets::render(&shared.widget_metrics, pod_uid).ok_or_else(refused)?;
    Ok((
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response())
}
