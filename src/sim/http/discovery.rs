//! Legacy (unaggregated) discovery documents: enough for kubectl and kube's `Discovery`
//! to find the served resources, built-in and custom.

use axum::response::Response;
use serde_json::{Value, json};

use super::status::json_body;
use crate::resources::{Resource, VERBS};
use crate::store::Store;

/// One served group-version and its resources.
#[derive(Debug, Clone)]
pub(crate) struct GroupVersion {
    pub group: &'static str,
    pub version: &'static str,
    pub resources: Vec<Resource>,
}

impl GroupVersion {
    /// `group/version`, or the version alone for core.
    pub fn name(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The group-version `group`/`version`, if anything is served there.
    pub fn served(store: &Store, group: &str, version: &str) -> Option<Self> {
        served_group(store, group)?
            .into_iter()
            .find(|gv| gv.version == version)
    }
}

/// The group-versions of `served`, in the order their groups first appear (core first,
/// as the built-in kinds are listed), each group's versions in order of appearance.
pub(crate) fn group_versions(served: &[Resource]) -> Vec<GroupVersion> {
    let mut out: Vec<GroupVersion> = Vec::new();
    for r in served {
        let (group, version) = (r.group(), r.version());
        match out
            .iter_mut()
            .find(|gv| gv.group == group && gv.version == version)
        {
            Some(gv) => gv.resources.push(*r),
            None => out.push(GroupVersion {
                group,
                version,
                resources: vec![*r],
            }),
        }
    }
    out
}

/// The versions of named group `group`, if it is served.
pub(crate) fn served_group(store: &Store, group: &str) -> Option<Vec<GroupVersion>> {
    let versions: Vec<GroupVersion> = group_versions(&store.served())
        .into_iter()
        .filter(|gv| gv.group == group)
        .collect();
    (!versions.is_empty()).then_some(versions)
}

/// Which discovery document a path names.
#[derive(Debug, Clone)]
pub(crate) enum Doc {
    CoreVersions,
    Groups,
    /// One named group (`/apis/GROUP`) and its versions.
    Group(Vec<GroupVersion>),
    /// The resource list of a group-version.
    Resources(GroupVersion),
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

/// An `APIGroup` entry: its versions, the first preferred.
fn api_group(versions: &[GroupVersion]) -> Value {
    let entries: Vec<Value> = versions
        .iter()
        .map(|gv| json!({"groupVersion": gv.name(), "version": gv.version}))
        .collect();
    json!({
        "name": versions.first().map_or("", |gv| gv.group),
        "versions": entries,
        "preferredVersion": entries.first().cloned().unwrap_or(Value::Null),
    })
}

/// A resource's entry in an `APIResourceList`, and its subresources' entries.
fn api_resources(r: Resource) -> Vec<Value> {
    let d = r.descriptor();
    let mut out = vec![json!({
        "name": d.plural,
        "singularName": d.singular,
        "namespaced": d.namespaced,
        "kind": d.kind,
        "verbs": VERBS,
        "shortNames": d.short_names,
        "categories": d.categories,
    })];
    for (present, sub, kind) in [
        (d.status, "status", json!({"kind": d.kind})),
        (
            d.scale,
            "scale",
            json!({"group": "autoscaling", "version": "v1", "kind": "Scale"}),
        ),
    ] {
        if present {
            let mut entry = json!({
                "name": format!("{}/{sub}", d.plural),
                "singularName": "",
                "namespaced": d.namespaced,
                "verbs": ["get", "patch", "update"],
            });
            if let (Some(e), Some(k)) = (entry.as_object_mut(), kind.as_object()) {
                e.extend(k.clone());
            }
            out.push(entry);
        }
    }
    if d.plural == "pods" && d.group.is_empty() {
        out.push(json!({
            "name": "pods/log",
            "singularName": "",
            "namespaced": true,
            "kind": "Pod",
            "verbs": ["get"],
        }));
        out.push(json!({
            "name": "pods/eviction",
            "singularName": "",
            "namespaced": true,
            "group": "policy",
            "version": "v1",
            "kind": "Eviction",
            "verbs": ["create"],
        }));
        for (sub, kind) in [
            ("exec", "PodExecOptions"),
            ("attach", "PodAttachOptions"),
            ("portforward", "PodPortForwardOptions"),
        ] {
            out.push(json!({
                "name": format!("pods/{sub}"),
                "singularName": "",
                "namespaced": true,
                "kind": kind,
                "verbs": ["create", "get"],
            }));
        }
    }
    out
}

pub(crate) fn serve(served: &[Resource], doc: Doc) -> Response {
    let body = match doc {
        Doc::CoreVersions => json!({
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}],
        }),
        Doc::Groups => {
            let all = group_versions(served);
            let mut names: Vec<&str> = Vec::new();
            for gv in &all {
                if !names.contains(&gv.group) {
                    names.push(gv.group);
                }
            }
            let mut groups: Vec<Value> = names
                .into_iter()
                .filter(|g| !g.is_empty())
                .map(|g| {
                    let versions: Vec<GroupVersion> =
                        all.iter().filter(|gv| gv.group == g).cloned().collect();
                    api_group(&versions)
                })
                .collect();
            groups.push(super::metrics::api_group());
            json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
        }
        Doc::Group(versions) => {
            let mut group = api_group(&versions);
            group["kind"] = json!("APIGroup");
            group["apiVersion"] = json!("v1");
            group
        }
        Doc::Resources(gv) => {
            let resources: Vec<Value> = gv
                .resources
                .iter()
                .flat_map(|r| api_resources(*r))
                .collect();
            json!({
                "kind": "APIResourceList",
                "apiVersion": "v1",
                "groupVersion": gv.name(),
                "resources": resources,
            })
        }
    };
    json_body(body.to_string())
}
