//! Aggregated discovery (`apidiscovery.k8s.io/v2`): every group, version and resource in
//! one answer to `/api` or `/apis`, for clients that ask for it in Accept (kubectl does,
//! first), so they need not fetch each group-version's resource list.

use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;
use serde_json::{Value, json};

use super::discovery::group_versions;
use super::target::Subresource;
use crate::resources::{Resource, VERBS};

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
    let d = r.descriptor();
    let response_kind = json!({"group": d.group, "version": d.version, "kind": d.kind});
    let mut subresources = Vec::new();
    for sub in [
        Subresource::Status,
        Subresource::Scale,
        Subresource::Log,
        Subresource::Eviction,
        Subresource::Exec,
        Subresource::Attach,
        Subresource::PortForward,
    ] {
        let Some(name) = sub.name_for(r) else {
            continue;
        };
        let (kind, verbs) = match sub {
            Subresource::Status => (response_kind.clone(), json!(["get", "patch", "update"])),
            Subresource::Scale => (
                json!({"group": "autoscaling", "version": "v1", "kind": "Scale"}),
                json!(["get", "patch", "update"]),
            ),
            // A log is plain text, of no kind.
            Subresource::Log => (
                json!({"group": "", "version": "", "kind": ""}),
                json!(["get"]),
            ),
            Subresource::Eviction => (
                json!({"group": "policy", "version": "v1", "kind": "Eviction"}),
                json!(["create"]),
            ),
            Subresource::Exec => (
                json!({"group": "", "version": "v1", "kind": "PodExecOptions"}),
                json!(["create", "get"]),
            ),
            Subresource::Attach => (
                json!({"group": "", "version": "v1", "kind": "PodAttachOptions"}),
                json!(["create", "get"]),
            ),
            Subresource::PortForward => (
                json!({"group": "", "version": "v1", "kind": "PodPortForwardOptions"}),
                json!(["create", "get"]),
            ),
        };
        subresources.push(json!({
            "subresource": name,
            "responseKind": kind,
            "verbs": verbs,
        }));
    }
    let mut out = json!({
        "resource": d.plural,
        "responseKind": response_kind,
        "scope": if d.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": d.singular,
        "verbs": VERBS,
    });
    if !d.short_names.is_empty() {
        out["shortNames"] = json!(d.short_names);
    }
    if !d.categories.is_empty() {
        out["categories"] = json!(d.categories);
    }
    if !subresources.is_empty() {
        out["subresources"] = json!(subresources);
    }
    out
}

/// The list for `/api` (`core`) or `/apis` (every named group), of the `served` resources.
pub(super) fn serve(served: &[Resource], core: bool) -> Response {
    let all = group_versions(served);
    let mut groups: Vec<&str> = Vec::new();
    for gv in all.iter().filter(|gv| gv.group.is_empty() == core) {
        if !groups.contains(&gv.group) {
            groups.push(gv.group);
        }
    }
    let mut items: Vec<Value> = groups
        .into_iter()
        .map(|group| {
            let versions: Vec<Value> = all
                .iter()
                .filter(|gv| gv.group == group)
                .map(|gv| {
                    let resources: Vec<Value> = gv.resources.iter().map(|r| resource(*r)).collect();
                    json!({"version": gv.version, "resources": resources, "freshness": "Current"})
                })
                .collect();
            let mut metadata = json!({"creationTimestamp": null});
            if !group.is_empty() {
                metadata["name"] = json!(group);
            }
            json!({"metadata": metadata, "versions": versions})
        })
        .collect();
    if !core {
        items.push(super::metrics::aggregated_group());
    }
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
