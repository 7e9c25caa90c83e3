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

pub(crate) fn serve(doc: Doc) -> Response {
    let body = match doc {
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
