//! Aggregated discovery (`apidiscovery.k8s.io/v2`): every group, version and resource in
//! one answer to `/api` or `/apis`, for clients that ask for it in Accept (kubectl does,
//! first), so they need not fetch each group-version's resource list.

use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;
use serde_json::{Value, json};

use super::Subresource;
use crate::sim::resources::Resource;

/// The media type of the answer; client-go reads it to know the form it got.
const MEDIA_TYPE: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Whether the client's preferred form is the aggregated v2 one.
pub(super) fn wanted(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .and_then(|accept| accept.split(',').next())
        .is_some_and(|first| {
            first.contains("as=APIGroupDiscoveryList")
                && first.contains("g=apidiscovery.k8s.io")
                && first.contains("v=v2")
                && !first.contains("v=v2beta1")
        })
}

fn resource(r: Resource) -> Value {
    let response_kind = json!({"group": r.group(), "version": "v1", "kind": r.kind()});
    let mut subresources = Vec::new();
    for sub in [Subresource::Status, Subresource::Scale] {
        let Some(name) = sub.name_for(r) else {
            continue;
        };
        let kind = match sub {
            Subresource::Status => response_kind.clone(),
            Subresource::Scale => json!({"group": "autoscaling", "version": "v1", "kind": "Scale"}),
        };
        subresources.push(json!({
            "subresource": name,
            "responseKind": kind,
            "verbs": ["get", "patch", "update"],
        }));
    }
    let mut out = json!({
        "resource": r.plural(),
        "responseKind": response_kind,
        "scope": if r.namespaced() { "Namespaced" } else { "Cluster" },
        "singularResource": r.singular(),
        "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
    });
    if !r.short_names().is_empty() {
        out["shortNames"] = json!(r.short_names());
    }
    if r.namespaced() {
        out["categories"] = json!(["all"]);
    }
    if !subresources.is_empty() {
        out["subresources"] = json!(subresources);
    }
    out
}

/// The list for `/api` (`core`) or `/apis` (every named group).
pub(super) fn serve(core: bool) -> Response {
    let mut groups: Vec<&str> = Resource::ALL
        .into_iter()
        .map(Resource::group)
        .filter(|g| g.is_empty() == core)
        .collect();
    groups.dedup();
    let items: Vec<Value> = groups
        .into_iter()
        .map(|group| {
            let resources: Vec<Value> = Resource::ALL
                .into_iter()
                .filter(|r| r.group() == group)
                .map(resource)
                .collect();
            let mut metadata = json!({"creationTimestamp": null});
            if !group.is_empty() {
                metadata["name"] = json!(group);
            }
            json!({
                "metadata": metadata,
                "versions": [{"version": "v1", "resources": resources, "freshness": "Current"}],
            })
        })
        .collect();
    let body = json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    });
    let mut response = Response::new(body.to_string().into());
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(MEDIA_TYPE));
    response
}
