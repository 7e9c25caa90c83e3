//! What a request URL names: discovery, an OpenAPI document, a pod proxy, or a resource (its
//! namespace, name and subresource), parsed as the real server's request info resolver does.

use crate::resources::Resource;
use crate::store::Store;

use super::status::ApiError;
use super::{discovery, openapi};

/// A subresource of one object: its status alone, or its scale (autoscaling/v1 Scale).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Subresource {
    Status,
    Scale,
    /// A pod's container log (`pods/NAME/log`).
    Log,
    /// A pod's eviction (`pods/NAME/eviction`, a policy/v1 Eviction).
    Eviction,
    /// A command in a pod's container (`pods/NAME/exec`), over a WebSocket.
    Exec,
    /// The streams of a pod's container (`pods/NAME/attach`), over a WebSocket.
    Attach,
    /// Connections to a pod's ports (`pods/NAME/portforward`), over a WebSocket.
    PortForward,
}

impl Subresource {
    /// The name in paths and RBAC rules (`pods/eviction`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Status => "status",
            Self::Scale => "scale",
            Self::Log => "log",
            Self::Eviction => "eviction",
            Self::Exec => "exec",
            Self::Attach => "attach",
            Self::PortForward => "portforward",
        }
    }
}

/// Subresources the real server has that the sim does not serve, with what uses them: a
/// client asking for one is told so, not given a 404 that reads as a missing object.
const UNSERVED: [(&str, &str, &str); 6] = [
    ("pods", "ephemeralcontainers", "kubectl debug"),
    ("pods", "binding", "binding a pod to a node"),
    ("pods", "resize", "resizing a pod's resources in place"),
    ("nodes", "proxy", "the kubelet's API through the API server"),
    ("services", "proxy", "a Service through the API server"),
    ("serviceaccounts", "token", "kubectl create token"),
];

/// The real server's subresource `name` of `resource` that the sim does not serve: a 405
/// naming it and what it is for.
fn unserved(resource: Resource, name: &str) -> Option<ApiError> {
    let plural = resource.plural();
    UNSERVED
        .iter()
        .find(|(r, sub, _)| *r == plural && *sub == name && resource.built_in())
        .map(|(r, sub, what)| ApiError::not_served(&format!("{r}/{sub}"), what))
}

/// `/api/v1/watch/...` and `/apis/GROUP/VERSION/watch/...`, the deprecated watch paths the
/// real server still serves: the same path without `watch/`, with `watch=true`.
pub(super) fn legacy_watch(uri: &axum::http::Uri) -> Option<axum::http::Uri> {
    let path = uri.path();
    let at = match path.split('/').collect::<Vec<_>>().as_slice() {
        ["", "api", version, "watch", ..] => "/api/".len() + version.len(),
        ["", "apis", group, version, "watch", ..] => {
            "/apis/".len() + group.len() + 1 + version.len()
        }
        _ => return None,
    };
    let rest = &path[at + "/watch".len()..];
    let query = match uri.query() {
        Some(q) => format!("{q}&watch=true"),
        None => "watch=true".to_string(),
    };
    format!("{}{rest}?{query}", &path[..at]).parse().ok()
}

impl Subresource {
    /// The subresource `name` of `resource`, if the real server serves it.
    fn of(resource: Resource, name: &str) -> Option<Self> {
        if resource == Resource::Pods && name == "log" {
            return Some(Subresource::Log);
        }
        if resource == Resource::Pods {
            match name {
                "eviction" => return Some(Subresource::Eviction),
                "exec" => return Some(Subresource::Exec),
                "attach" => return Some(Subresource::Attach),
                "portforward" => return Some(Subresource::PortForward),
                _ => {}
            }
        }
        [Subresource::Status, Subresource::Scale]
            .into_iter()
            .find(|sub| sub.name_for(resource) == Some(name))
    }

    /// This subresource's URL segment, if `resource` has it.
    pub(super) fn name_for(self, resource: Resource) -> Option<&'static str> {
        let d = resource.descriptor();
        match self {
            Subresource::Status => d.status.then_some("status"),
            Subresource::Scale => d.scale.then_some("scale"),
            Subresource::Log => (resource == Resource::Pods).then_some("log"),
            Subresource::Eviction => (resource == Resource::Pods).then_some("eviction"),
            Subresource::Exec => (resource == Resource::Pods).then_some("exec"),
            Subresource::Attach => (resource == Resource::Pods).then_some("attach"),
            Subresource::PortForward => (resource == Resource::Pods).then_some("portforward"),
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

pub(super) enum Route {
    Discovery(discovery::Doc),
    OpenApi(openapi::Doc),
    Resource(Target),
    /// `pods/NAME[:PORT]/proxy/PATH` in a namespace.
    PodProxy {
        namespace: String,
        name_port: String,
        path: String,
    },
}

pub(super) fn parse_path(path: &str, store: &Store) -> Result<Route, ApiError> {
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
        ["openapi", "v2"] => return Ok(Route::OpenApi(openapi::Doc::V2)),
        ["openapi", "v3"] => return Ok(Route::OpenApi(openapi::Doc::V3Index)),
        ["openapi", "v3", "api", "v1"] => {
            return Ok(Route::OpenApi(openapi::Doc::V3(group_version("", "v1")?)));
        }
        ["openapi", "v3", "apis", group, version] => {
            return Ok(Route::OpenApi(openapi::Doc::V3(group_version(
                group, version,
            )?)));
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
        Subresource::of(resource, name)
            .ok_or_else(|| unserved(resource, name).unwrap_or_else(ApiError::unknown_path))
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
        let refused = parse_path(
            "/api/v1/namespaces/ns1/pods/p1/ephemeralcontainers",
            &Store::new(10),
        );
        assert!(matches!(refused, Err(e) if e.code() == 405));
        let uri = "/api/v1/watch/namespaces/ns1/pods?labelSelector=a%3Db"
            .parse()
            .unwrap();
        assert_eq!(
            legacy_watch(&uri).unwrap().to_string(),
            "/api/v1/namespaces/ns1/pods?labelSelector=a%3Db&watch=true"
        );
        let uri = "/apis/apps/v1/watch/deployments".parse().unwrap();
        assert_eq!(
            legacy_watch(&uri).unwrap().to_string(),
            "/apis/apps/v1/deployments?watch=true"
        );
        assert!(legacy_watch(&"/api/v1/pods".parse().unwrap()).is_none());
    }
}
