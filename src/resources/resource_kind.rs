//! The kinds with a hand-written projection: their API coordinates, kubectl's names for
//! them, and their URL paths.

use std::fmt;
use std::str::FromStr;

/// The kinds with a hand-written projection, as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResourceKind {
    Pods,
    Nodes,
    Namespaces,
    Deployments,
    ReplicaSets,
    Secrets,
}

/// A resource name kscope does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown resource type {0:?}; kscope knows pods (po), nodes (no), namespaces (ns), \
     deployments (deploy), replicasets (rs) and secrets (sec)"
)]
pub struct UnknownResource(pub String);

/// Why a URL path could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("{0} are namespaced: a namespace is needed to address one by name")]
    NamespaceRequired(String),
}

impl ResourceKind {
    pub const ALL: [ResourceKind; 6] = [
        Self::Pods,
        Self::Nodes,
        Self::Namespaces,
        Self::Deployments,
        Self::ReplicaSets,
        Self::Secrets,
    ];

    /// The `kind` field (`Pod`).
    pub const fn kind(self) -> &'static str {
        match self {
            Self::Pods => "Pod",
            Self::Nodes => "Node",
            Self::Namespaces => "Namespace",
            Self::Deployments => "Deployment",
            Self::ReplicaSets => "ReplicaSet",
            Self::Secrets => "Secret",
        }
    }

    /// The API group; `""` for the core group.
    pub const fn group(self) -> &'static str {
        match self {
            Self::Pods | Self::Nodes | Self::Namespaces | Self::Secrets => "",
            Self::Deployments | Self::ReplicaSets => "apps",
        }
    }

    pub const fn version(self) -> &'static str {
        "v1"
    }

    /// The `apiVersion` field: `v1` or `apps/v1`.
    pub const fn api_version(self) -> &'static str {
        match self.group().is_empty() {
            true => "v1",
            false => "apps/v1",
        }
    }

    /// The resource name in URLs (`pods`).
    pub const fn plural(self) -> &'static str {
        match self {
            Self::Pods => "pods",
            Self::Nodes => "nodes",
            Self::Namespaces => "namespaces",
            Self::Deployments => "deployments",
            Self::ReplicaSets => "replicasets",
            Self::Secrets => "secrets",
        }
    }

    /// kubectl's short name (`po`).
    pub const fn short_name(self) -> &'static str {
        match self {
            Self::Pods => "po",
            Self::Nodes => "no",
            Self::Namespaces => "ns",
            Self::Deployments => "deploy",
            Self::ReplicaSets => "rs",
            Self::Secrets => "sec",
        }
    }

    pub const fn namespaced(self) -> bool {
        !matches!(self, Self::Nodes | Self::Namespaces)
    }

    /// `/api/v1` or `/apis/apps/v1`.
    fn group_prefix(self) -> &'static str {
        match self.group().is_empty() {
            true => "/api/v1",
            false => "/apis/apps/v1",
        }
    }

    /// The list/watch path: across all namespaces with `None` (`/api/v1/pods`), within one
    /// with `Some` (`/api/v1/namespaces/{ns}/pods`). Cluster-scoped kinds ignore the namespace.
    /// Names and namespaces are DNS labels/subdomains, so no escaping is needed.
    pub fn list_path(self, namespace: Option<&str>) -> String {
        match namespace {
            Some(ns) if self.namespaced() => {
                format!("{}/namespaces/{ns}/{}", self.group_prefix(), self.plural())
            }
            _ => format!("{}/{}", self.group_prefix(), self.plural()),
        }
    }

    /// The path of one object (`/api/v1/namespaces/{ns}/pods/{name}`, `/api/v1/nodes/{name}`).
    pub fn object_path(self, namespace: Option<&str>, name: &str) -> Result<String, PathError> {
        match namespace {
            None if self.namespaced() => {
                Err(PathError::NamespaceRequired(self.plural().to_string()))
            }
            _ => Ok(format!("{}/{name}", self.list_path(namespace))),
        }
    }
}

impl FromStr for ResourceKind {
    type Err = UnknownResource;

    /// Accepts kubectl's names, case-insensitively: plural, singular, short name, and
    /// `plural.group` for the apps kinds (`deployments.apps`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        let (name, group) = match lower.split_once('.') {
            Some((name, group)) => (name, Some(group)),
            None => (lower.as_str(), None),
        };
        let kind = match name {
            "pods" | "pod" | "po" => Self::Pods,
            "nodes" | "node" | "no" => Self::Nodes,
            "namespaces" | "namespace" | "ns" => Self::Namespaces,
            "deployments" | "deployment" | "deploy" => Self::Deployments,
            "replicasets" | "replicaset" | "rs" => Self::ReplicaSets,
            "secrets" | "secret" | "sec" => Self::Secrets,
            _ => return Err(UnknownResource(s.to_owned())),
        };
        match group {
            Some(g) if g != kind.group() || g.is_empty() => Err(UnknownResource(s.to_owned())),
            _ => Ok(kind),
        }
    }
}

impl fmt::Display for ResourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.plural())
    }
}
