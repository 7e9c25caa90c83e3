//! The resource types the simulated server serves, with the names discovery and URLs use.

use serde::Serialize;

/// One served resource type. The set is closed: the sim serves what kscope and kubectl's
/// everyday commands need, nothing more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Resource {
    Namespaces,
    Nodes,
    Pods,
    Deployments,
    ReplicaSets,
    Secrets,
}

impl Resource {
    pub const ALL: [Resource; 6] = [
        Resource::Namespaces,
        Resource::Nodes,
        Resource::Pods,
        Resource::Deployments,
        Resource::ReplicaSets,
        Resource::Secrets,
    ];

    /// Position in per-resource arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn plural(self) -> &'static str {
        match self {
            Resource::Namespaces => "namespaces",
            Resource::Nodes => "nodes",
            Resource::Pods => "pods",
            Resource::Deployments => "deployments",
            Resource::ReplicaSets => "replicasets",
            Resource::Secrets => "secrets",
        }
    }

    pub fn singular(self) -> &'static str {
        match self {
            Resource::Namespaces => "namespace",
            Resource::Nodes => "node",
            Resource::Pods => "pod",
            Resource::Deployments => "deployment",
            Resource::ReplicaSets => "replicaset",
            Resource::Secrets => "secret",
        }
    }

    pub fn kind(self) -> &'static str {
        match self {
            Resource::Namespaces => "Namespace",
            Resource::Nodes => "Node",
            Resource::Pods => "Pod",
            Resource::Deployments => "Deployment",
            Resource::ReplicaSets => "ReplicaSet",
            Resource::Secrets => "Secret",
        }
    }

    pub fn list_kind(self) -> &'static str {
        match self {
            Resource::Namespaces => "NamespaceList",
            Resource::Nodes => "NodeList",
            Resource::Pods => "PodList",
            Resource::Deployments => "DeploymentList",
            Resource::ReplicaSets => "ReplicaSetList",
            Resource::Secrets => "SecretList",
        }
    }

    /// API group: "" for core.
    pub fn group(self) -> &'static str {
        match self {
            Resource::Deployments | Resource::ReplicaSets => "apps",
            _ => "",
        }
    }

    pub fn api_version(self) -> &'static str {
        match self {
            Resource::Deployments | Resource::ReplicaSets => "apps/v1",
            _ => "v1",
        }
    }

    pub fn namespaced(self) -> bool {
        !matches!(self, Resource::Namespaces | Resource::Nodes)
    }

    pub fn short_names(self) -> &'static [&'static str] {
        match self {
            Resource::Namespaces => &["ns"],
            Resource::Nodes => &["no"],
            Resource::Pods => &["po"],
            Resource::Deployments => &["deploy"],
            Resource::ReplicaSets => &["rs"],
            Resource::Secrets => &[],
        }
    }

    /// Resolves a URL's group, version and plural; `None` is the real server's 404.
    pub fn from_path(group: &str, version: &str, plural: &str) -> Option<Resource> {
        Resource::ALL
            .into_iter()
            .find(|r| version == "v1" && r.group() == group && r.plural() == plural)
    }

    /// Resolves a plural or singular name, as the admin endpoint and `truth` accept.
    pub fn from_name(name: &str) -> Option<Resource> {
        Resource::ALL
            .into_iter()
            .find(|r| r.plural() == name || r.singular() == name)
    }
}

impl std::fmt::Display for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.plural())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_only_in_their_group() {
        assert_eq!(Resource::from_path("", "v1", "pods"), Some(Resource::Pods));
        assert_eq!(
            Resource::from_path("apps", "v1", "replicasets"),
            Some(Resource::ReplicaSets)
        );
        assert_eq!(Resource::from_path("apps", "v1", "pods"), None);
        assert_eq!(Resource::from_path("", "v1", "deployments"), None);
        assert_eq!(Resource::from_path("", "v2", "pods"), None);
    }
}
