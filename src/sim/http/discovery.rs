//! Legacy (unaggregated) discovery documents: enough for kubectl and kube's `Discovery`
//! to find the served resources.

use axum::response::Response;
use serde_json::{Value, json};

use super::status::json_body;
use crate::sim::resources::Resource;

/// Which discovery document a path names.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Doc {
    CoreVersions,
    Groups,
    AppsGroup,
    /// The resource list of a group ("" = core).
    Resources(&'static str),
    /// The OpenAPI v3 index of group-versions.
    OpenApiIndex,
    /// The OpenAPI v3 document of a group ("" = core).
    OpenApi(&'static str),
}

pub(crate) async fn version() -> Response {
    json_body(
        json!({
            "major": "1",
            "minor": "32",
            "emulationMajor": "1",
            "emulationMinor": "32",
            "gitVersion": "v1.32.3-kscope-sim",
            "gitCommit": "0000000000000000000000000000000000000000",
            "gitTreeState": "clean",
            "buildDate": "2025-03-14T00:00:00Z",
            "goVersion": "go1.23.6",
            "compiler": "gc",
            "platform": "linux/amd64",
        })
        .to_string(),
    )
}

fn apps_group() -> Value {
    json!({
        "name": "apps",
        "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
        "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"},
    })
}

/// The OpenAPI v3 document of a group: only what kubectl reads, namely that PATCH of each
/// kind accepts `fieldValidation`, so it leaves validation to the server instead of
/// downloading schemas for client-side validation.
fn openapi(group: &str) -> Value {
    let mut paths = serde_json::Map::new();
    for r in Resource::ALL.into_iter().filter(|r| r.group() == group) {
        let base = if group.is_empty() {
            "/api/v1".to_string()
        } else {
            format!("/apis/{group}/v1")
        };
        let path = if r.namespaced() {
            format!("{base}/namespaces/{{namespace}}/{}/{{name}}", r.plural())
        } else {
            format!("{base}/{}/{{name}}", r.plural())
        };
        let query = |name: &str| json!({"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": true}});
        paths.insert(
            path,
            json!({"patch": {
                "operationId": format!("patch{}", r.kind()),
                "x-kubernetes-action": "patch",
                "x-kubernetes-group-version-kind": {"group": group, "version": "v1", "kind": r.kind()},
                "parameters": [query("dryRun"), query("fieldManager"), query("fieldValidation"), query("force")],
                "responses": {"200": {"description": "OK"}},
            }}),
        );
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.3"},
        "paths": paths,
        "components": {"schemas": {}},
    })
}

pub(crate) fn serve(doc: Doc) -> Response {
    let body = match doc {
        Doc::OpenApiIndex => json!({"paths": {
            "api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=kscope-sim-1"},
            "apis/apps/v1": {"serverRelativeURL": "/openapi/v3/apis/apps/v1?hash=kscope-sim-1"},
        }}),
        Doc::OpenApi(group) => openapi(group),
        Doc::CoreVersions => json!({
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}],
        }),
        Doc::Groups => {
            json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": [apps_group()]})
        }
        Doc::AppsGroup => {
            let mut group = apps_group();
            group["kind"] = json!("APIGroup");
            group["apiVersion"] = json!("v1");
            group
        }
        Doc::Resources(group) => {
            let resources: Vec<Value> = Resource::ALL
                .into_iter()
                .filter(|r| r.group() == group)
                .map(|r| {
                    json!({
                        "name": r.plural(),
                        "singularName": r.singular(),
                        "namespaced": r.namespaced(),
                        "kind": r.kind(),
                        "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
                        "shortNames": r.short_names(),
                        "categories": if r.namespaced() { json!(["all"]) } else { json!([]) },
                    })
                })
                .collect();
            let group_version = if group.is_empty() {
                "v1".to_string()
            } else {
                format!("{group}/v1")
            };
            json!({
                "kind": "APIResourceList",
                "apiVersion": "v1",
                "groupVersion": group_version,
                "resources": resources,
            })
        }
    };
    json_body(body.to_string())
}
