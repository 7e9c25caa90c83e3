//! Discovery: every resource the API server serves, CRDs included, and the resolution of a
//! name typed by a person (`svc`, `deploy.apps`, `widgets.v1.example.com`) as kubectl
//! resolves it.
//!
//! The aggregated form (`apidiscovery.k8s.io/v2`, two requests: `/api` and `/apis`) is asked
//! for first, as kubectl does; a server that answers in the legacy form gets the legacy
//! walk: `/api`, `/apis`, then every group version's `APIResourceList`, concurrently. The
//! whole of it is bounded by one timeout.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::future::try_join_all;
use parking_lot::RwLock;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

use super::cluster::{Cluster, NamespaceScope};
use super::lister_watcher::KubeListerWatcher;
use kscope_informers::indexer::IndexerWriter;
use kscope_informers::instrument::tap::{Tap, TapKind};
use kscope_informers::lister_watcher::{BoxError, innermost_cause};
use kscope_informers::object::Object;
use kscope_informers::running::{InformerConfig, RunningInformer};
use kscope_resources::{ApiResource, GenericObject, Kind, ResourceKind};

/// The longest discovery may take, all requests together.
pub const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(10);

const AGGREGATED_ACCEPT: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";

/// Why discovery failed.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    #[error("discovery: GET {path}: {}", innermost_cause(.source.as_ref()))]
    Request {
        path: String,
        #[source]
        source: BoxError,
    },
    #[error("discovery: GET {path}: malformed answer: {source}")]
    Malformed {
        path: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("discovery took longer than {}s", .0.as_secs())]
    Timeout(Duration),
}

/// A name that resolves to no resource, or to a subresource.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the server doesn't have a resource type {0:?}")]
pub struct UnknownName(pub String);

/// Every resource the server serves, in kubectl's priority order: the core group first,
/// then the groups in the order the server lists them, each group's preferred version
/// first. Resolution takes the first match in this order, as kubectl's priority mapper does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovery {
    resources: Vec<Arc<ApiResource>>,
}

/// What kscope knows without asking: the built-in kinds.
impl Default for Discovery {
    fn default() -> Self {
        Self::built_ins()
    }
}

impl Discovery {
    /// Discovers what `client`'s server serves, within [`DISCOVERY_TIMEOUT`].
    pub async fn run(client: &kube::Client) -> Result<Self, DiscoveryError> {
        Self::run_within(client, DISCOVERY_TIMEOUT).await
    }

    pub async fn run_within(
        client: &kube::Client,
        timeout: Duration,
    ) -> Result<Self, DiscoveryError> {
        tokio::time::timeout(timeout, discover(client))
            .await
            .map_err(|_| DiscoveryError::Timeout(timeout))?
    }

    /// A discovery of these resources, in this order.
    pub fn from_resources(resources: Vec<Arc<ApiResource>>) -> Self {
        Self { resources }
    }

    /// The built-in kinds alone: what kscope shows when discovery fails.
    pub fn built_ins() -> Self {
        Self::from_resources(
            ResourceKind::ALL
                .into_iter()
                .map(|k| {
                    Arc::new(ApiResource::new(
                        k.group(),
                        k.version(),
                        k.plural(),
                        k.kind().to_lowercase(),
                        k.kind(),
                        k.namespaced(),
                        vec![k.short_name().to_string()],
                        Vec::new(),
                        ["get", "list", "watch"].map(String::from).to_vec(),
                    ))
                })
                .collect(),
        )
    }

    pub fn resources(&self) -> &[Arc<ApiResource>] {
        &self.resources
    }

    /// The resources in each group's preferred version only: what a list of commands shows.
    pub fn preferred(&self) -> Vec<&Arc<ApiResource>> {
        let mut seen: Vec<(&str, &str)> = Vec::new();
        let mut out = Vec::new();
        for r in &self.resources {
            let first_version = self
                .resources
                .iter()
                .find(|o| o.group == r.group)
                .map(|o| o.version.as_str());
            if first_version == Some(r.version.as_str())
                && !seen.contains(&(r.group.as_str(), r.plural.as_str()))
            {
                seen.push((&r.group, &r.plural));
                out.push(r);
            }
        }
        out
    }

    /// Resolves `name` as kubectl does: `resource`, `resource.group` or
    /// `resource.version.group`, where `resource` is a plural, a singular, a short name or a
    /// kind, case-insensitively. Of several matches the first in priority order wins.
    pub fn resolve(&self, name: &str) -> Result<Kind, UnknownName> {
        self.resolve_resource(name)
            .map(|r| Kind::of(r.clone()))
            .ok_or_else(|| UnknownName(name.trim().to_string()))
    }

    /// The resource [`Discovery::resolve`] gives, as discovered.
    pub fn resolve_resource(&self, name: &str) -> Option<&Arc<ApiResource>> {
        let lower = name.trim().to_ascii_lowercase();
        if lower.is_empty() || lower.contains('/') {
            return None;
        }
        // `widgets.v1.example.com` is tried as resource.version.group first, then as
        // resource.group with group `v1.example.com`, as kubectl's ParseResourceArg does.
        let mut candidates: Vec<(&str, Option<&str>, Option<&str>)> = Vec::new();
        match lower.split_once('.') {
            None => candidates.push((&lower, None, None)),
            Some((resource, rest)) => {
                if let Some((version, group)) = rest.split_once('.') {
                    candidates.push((resource, Some(version), Some(group)));
                }
                candidates.push((resource, None, Some(rest)));
            }
        }
        candidates
            .into_iter()
            .find_map(|(resource, version, group)| {
                let in_scope = |r: &&Arc<ApiResource>| {
                    group.is_none_or(|g| r.group == g) && version.is_none_or(|v| r.version == v)
                };
                // Short names are expanded first, then plural, singular and kind are matched.
                let short = self.resources.iter().filter(in_scope).find(|r| {
                    r.short_names
                        .iter()
                        .any(|s| s.eq_ignore_ascii_case(resource))
                });
                short.or_else(|| {
                    self.resources.iter().filter(in_scope).find(|r| {
                        r.plural == resource
                            || r.singular.eq_ignore_ascii_case(resource)
                            || r.kind.eq_ignore_ascii_case(resource)
                    })
                })
            })
    }

    /// The resources in `category` (`all`), in priority order, each once.
    pub fn category(&self, category: &str) -> Vec<&Arc<ApiResource>> {
        let lower = category.to_ascii_lowercase();
        self.preferred()
            .into_iter()
            .filter(|r| r.categories.contains(&lower))
            .collect()
    }
}

/// What the server serves, as last discovered, shared: command mode reads it, and
/// [`Catalog::keep_current`] replaces it whenever CustomResourceDefinitions change.
#[derive(Clone, Default)]
pub struct Catalog {
    discovery: Arc<RwLock<Arc<Discovery>>>,
    /// Each CRD's `metadata.generation` by CRD name (`widgets.example.com`), as last seen:
    /// it moves when the spec does, printer columns included.
    crd_generations: Arc<RwLock<HashMap<String, i64>>>,
}

/// After a CRD changes, how long to wait for more changes before discovering again.
const SETTLE: Duration = Duration::from_millis(200);

impl Catalog {
    pub fn new(discovery: Discovery) -> Self {
        Self {
            discovery: Arc::new(RwLock::new(Arc::new(discovery))),
            crd_generations: Arc::default(),
        }
    }

    /// The discovery in force now.
    pub fn current(&self) -> Arc<Discovery> {
        self.discovery.read().clone()
    }

    pub fn replace(&self, discovery: Discovery) {
        *self.discovery.write() = Arc::new(discovery);
    }

    /// The generation of the CRD that defines `kind`, if it is a custom resource whose CRD
    /// has been seen: a table showing it with columns read at another generation is out of
    /// date.
    pub fn crd_generation(&self, kind: &Kind) -> Option<i64> {
        let Kind::Api(resource) = kind else {
            return None;
        };
        let name = format!("{}.{}", resource.plural, resource.group);
        self.crd_generations.read().get(&name).copied()
    }

    /// Whether `kind` is still served (a built-in kind always is, as far as kscope knows).
    pub fn serves(&self, kind: &Kind) -> bool {
        match kind {
            Kind::BuiltIn(_) => true,
            Kind::Api(resource) => self.current().resources().iter().any(|r| r == resource),
        }
    }

    /// Discovers what `cluster` serves (only the built-in kinds if that fails, with the
    /// error), then keeps it current: a watch on CustomResourceDefinitions discovers again
    /// after each change. The returned guard stops the watch when dropped.
    pub async fn keep_current(cluster: &Cluster) -> (Self, CatalogWatch, Option<DiscoveryError>) {
        let (discovery, error) = match Discovery::run(&cluster.client).await {
            Ok(d) => (d, None),
            Err(e) => (Discovery::built_ins(), Some(e)),
        };
        let catalog = Self::new(discovery);
        let task = tokio::spawn(catalog.clone().follow_crds(cluster.clone()));
        (catalog, CatalogWatch { task: Some(task) }, error)
    }

    /// Only the built-in kinds until discovery answers, in the background, then kept
    /// current as [`Catalog::keep_current`] keeps it: one cluster of several that is slow or
    /// unreachable then holds up no other's first rows.
    pub fn discover_in_background(cluster: &Cluster) -> (Self, CatalogWatch) {
        let catalog = Self::new(Discovery::built_ins());
        let following = catalog.clone();
        let cluster = cluster.clone();
        let task = tokio::spawn(async move {
            match Discovery::run(&cluster.client).await {
                Ok(discovery) => following.replace(discovery),
                Err(err) => {
                    tracing::warn!(context = %cluster.context, error = %err, "discovery failed: only the built-in kinds");
                }
            }
            following.follow_crds(cluster).await;
        });
        (catalog, CatalogWatch { task: Some(task) })
    }

    /// Watches CustomResourceDefinitions (if the server serves them) and discovers again
    /// after each change, settled for [`SETTLE`].
    async fn follow_crds(self, cluster: Cluster) {
        let crds = self
            .current()
            .resolve("customresourcedefinitions.apiextensions.k8s.io");
        let Ok(crds @ Kind::Api(_)) = crds else {
            return;
        };
        let tap = Tap::new(64, kscope_resources::secret::keepable_raw);
        let mut entries = tap.subscribe();
        let mut config = InformerConfig::new(crds.to_string());
        config.tap = Some(tap);
        let lister_watcher =
            KubeListerWatcher::for_kind(&cluster, crds, &NamespaceScope::All, None, None);
        let store = IndexerWriter::<GenericObject>::default();
        let held = store.reader();
        let _informer = RunningInformer::start(config, lister_watcher, store);
        loop {
            // A watch event changes the CRDs; missed entries may have been one. Entries
            // that come while the changes settle count too.
            let mut changed = match entries.recv().await {
                Ok(entry) => matches!(entry.kind, TapKind::Watch(_)),
                Err(RecvError::Lagged(_)) => true,
                Err(RecvError::Closed) => return,
            };
            tokio::time::sleep(SETTLE).await;
            loop {
                match entries.try_recv() {
                    Ok(entry) => changed |= matches!(entry.kind, TapKind::Watch(_)),
                    Err(TryRecvError::Lagged(_)) => changed = true,
                    Err(TryRecvError::Empty | TryRecvError::Closed) => break,
                }
            }
            *self.crd_generations.write() = held
                .list()
                .iter()
                .filter_map(|crd| Some((crd.name().to_string(), crd.generation()?)))
                .collect();
            if !changed {
                continue;
            }
            match Discovery::run(&cluster.client).await {
                Ok(discovery) => self.replace(discovery),
                Err(e) => tracing::warn!(error = %e, "rediscovery after a CRD change failed"),
            }
        }
    }
}

/// The task keeping a [`Catalog`] current; dropping it stops the task and its watch.
pub struct CatalogWatch {
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for CatalogWatch {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

async fn get<T: DeserializeOwned>(
    client: &kube::Client,
    path: &str,
    accept: &str,
) -> Result<T, DiscoveryError> {
    let request = http::Request::get(path)
        .header(http::header::ACCEPT, accept)
        .body(Vec::new())
        .map_err(|e| DiscoveryError::Request {
            path: path.to_string(),
            source: e.into(),
        })?;
    let text = client
        .request_text(request)
        .await
        .map_err(|e| DiscoveryError::Request {
            path: path.to_string(),
            source: e.into(),
        })?;
    serde_json::from_str(&text).map_err(|source| DiscoveryError::Malformed {
        path: path.to_string(),
        source,
    })
}

/// `/api` or `/apis` in whichever form the server chose.
#[derive(Deserialize)]
struct Root {
    #[serde(default)]
    kind: String,
    /// Aggregated: every group with its versions and resources.
    #[serde(default)]
    items: Vec<AggregatedGroup>,
    /// Legacy `/api`: the core versions.
    #[serde(default)]
    versions: Vec<String>,
    /// Legacy `/apis`: the groups and their versions.
    #[serde(default)]
    groups: Vec<LegacyGroup>,
}

#[derive(Deserialize)]
struct AggregatedGroup {
    #[serde(default)]
    metadata: GroupMeta,
    #[serde(default)]
    versions: Vec<AggregatedVersion>,
}

#[derive(Deserialize, Default)]
struct GroupMeta {
    #[serde(default)]
    name: String,
}

#[derive(Deserialize)]
struct AggregatedVersion {
    version: String,
    #[serde(default)]
    resources: Vec<AggregatedResource>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AggregatedResource {
    resource: String,
    #[serde(default)]
    response_kind: Option<ResponseKind>,
    #[serde(default)]
    scope: String,
    #[serde(default)]
    singular_resource: String,
    #[serde(default)]
    verbs: Vec<String>,
    #[serde(default)]
    short_names: Vec<String>,
    #[serde(default)]
    categories: Vec<String>,
}

#[derive(Deserialize)]
struct ResponseKind {
    #[serde(default)]
    kind: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LegacyGroup {
    name: String,
    #[serde(default)]
    versions: Vec<GroupVersionEntry>,
    #[serde(default)]
    preferred_version: Option<GroupVersionEntry>,
}

#[derive(Deserialize, Clone)]
struct GroupVersionEntry {
    version: String,
}

#[derive(Deserialize)]
struct ResourceList {
    #[serde(default)]
    resources: Vec<LegacyResource>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LegacyResource {
    name: String,
    #[serde(default)]
    singular_name: String,
    #[serde(default)]
    namespaced: bool,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    verbs: Vec<String>,
    #[serde(default)]
    short_names: Vec<String>,
    #[serde(default)]
    categories: Vec<String>,
}

async fn discover(client: &kube::Client) -> Result<Discovery, DiscoveryError> {
    let (core, groups) = tokio::try_join!(
        get::<Root>(client, "/api", AGGREGATED_ACCEPT),
        get::<Root>(client, "/apis", AGGREGATED_ACCEPT),
    )?;
    let aggregated = |root: &Root| root.kind == "APIGroupDiscoveryList";
    if aggregated(&core) && aggregated(&groups) {
        let resources = core
            .items
            .into_iter()
            .chain(groups.items)
            .flat_map(from_aggregated)
            .collect();
        return Ok(Discovery::from_resources(resources));
    }
    legacy(client, core, groups).await
}

fn from_aggregated(group: AggregatedGroup) -> Vec<Arc<ApiResource>> {
    let name = group.metadata.name;
    group
        .versions
        .into_iter()
        .flat_map(|v| {
            let name = name.clone();
            v.resources.into_iter().map(move |r| {
                let kind = r.response_kind.map(|k| k.kind).unwrap_or_default();
                Arc::new(ApiResource::new(
                    name.clone(),
                    v.version.clone(),
                    r.resource,
                    singular_or_kind(r.singular_resource, &kind),
                    kind,
                    r.scope == "Namespaced",
                    r.short_names,
                    r.categories,
                    r.verbs,
                ))
            })
        })
        .collect()
}

/// Old servers leave `singularName` empty; kubectl then uses the lowercased kind.
fn singular_or_kind(singular: String, kind: &str) -> String {
    if singular.is_empty() {
        kind.to_lowercase()
    } else {
        singular
    }
}

/// The legacy walk: the core versions and every group version (preferred first), each
/// resource list fetched concurrently.
async fn legacy(
    client: &kube::Client,
    core: Root,
    groups: Root,
) -> Result<Discovery, DiscoveryError> {
    let core_versions = match core.versions.is_empty() {
        true => {
            get::<Root>(client, "/api", "application/json")
                .await?
                .versions
        }
        false => core.versions,
    };
    let groups = match groups.groups.is_empty() {
        true => {
            get::<Root>(client, "/apis", "application/json")
                .await?
                .groups
        }
        false => groups.groups,
    };
    let mut group_versions: Vec<(String, String)> = core_versions
        .into_iter()
        .map(|v| (String::new(), v))
        .collect();
    for group in groups {
        let preferred = group.preferred_version.map(|p| p.version);
        let mut versions: Vec<String> = group.versions.into_iter().map(|v| v.version).collect();
        if let Some(at) = preferred
            .as_ref()
            .and_then(|p| versions.iter().position(|v| v == p))
        {
            let first = versions.remove(at);
            versions.insert(0, first);
        }
        group_versions.extend(versions.into_iter().map(|v| (group.name.clone(), v)));
    }
    let lists = try_join_all(group_versions.iter().map(|(group, version)| {
        let path = match group.is_empty() {
            true => format!("/api/{version}"),
            false => format!("/apis/{group}/{version}"),
        };
        async move { get::<ResourceList>(client, &path, "application/json").await }
    }))
    .await?;
    let resources = group_versions
        .into_iter()
        .zip(lists)
        .flat_map(|((group, version), list)| {
            list.resources
                .into_iter()
                .filter(|r| !r.name.contains('/'))
                .map(move |r| {
                    Arc::new(ApiResource::new(
                        group.clone(),
                        version.clone(),
                        r.name,
                        singular_or_kind(r.singular_name, &r.kind),
                        r.kind,
                        r.namespaced,
                        r.short_names,
                        r.categories,
                        r.verbs,
                    ))
                })
        })
        .collect();
    Ok(Discovery::from_resources(resources))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(
        group: &str,
        version: &str,
        plural: &str,
        kind: &str,
        short: &[&str],
    ) -> Arc<ApiResource> {
        Arc::new(ApiResource::new(
            group,
            version,
            plural,
            kind.to_lowercase(),
            kind,
            true,
            short.iter().map(|s| s.to_string()).collect(),
            vec!["all".into()],
            vec!["list".into(), "watch".into()],
        ))
    }

    fn discovery() -> Discovery {
        Discovery::from_resources(vec![
            resource("", "v1", "services", "Service", &["svc"]),
            resource("", "v1", "events", "Event", &["ev"]),
            resource("", "v1", "pods", "Pod", &["po"]),
            resource("apps", "v1", "deployments", "Deployment", &["deploy"]),
            resource("events.k8s.io", "v1", "events", "Event", &["ev"]),
            resource("example.com", "v1", "widgets", "Widget", &["wd"]),
            resource("example.com", "v1beta1", "widgets", "Widget", &["wd"]),
            resource("other.io", "v1", "widgets", "Widget", &[]),
        ])
    }

    #[test]
    fn names_resolve_as_kubectl_resolves_them() {
        let d = discovery();
        let of = |name: &str| {
            d.resolve_resource(name)
                .map(|r| format!("{}/{}/{}", r.group, r.version, r.plural))
        };
        for name in ["svc", "services", "service", "Service", "SVC"] {
            assert_eq!(of(name).as_deref(), Some("/v1/services"), "{name}");
        }
        assert_eq!(of("deploy.apps").as_deref(), Some("apps/v1/deployments"));
        assert_eq!(
            of("deployments.apps").as_deref(),
            Some("apps/v1/deployments")
        );
        assert_eq!(of("deploy.extensions"), None);
        // Core first, then the groups in the server's order.
        assert_eq!(of("events").as_deref(), Some("/v1/events"));
        assert_eq!(of("ev").as_deref(), Some("/v1/events"));
        assert_eq!(
            of("events.events.k8s.io").as_deref(),
            Some("events.k8s.io/v1/events")
        );
        assert_eq!(of("widgets").as_deref(), Some("example.com/v1/widgets"));
        assert_eq!(of("wd").as_deref(), Some("example.com/v1/widgets"));
        assert_eq!(
            of("widgets.example.com").as_deref(),
            Some("example.com/v1/widgets")
        );
        assert_eq!(
            of("widgets.v1beta1.example.com").as_deref(),
            Some("example.com/v1beta1/widgets")
        );
        assert_eq!(
            of("widgets.other.io").as_deref(),
            Some("other.io/v1/widgets")
        );
        assert_eq!(of("pods/log"), None);
        assert_eq!(of("nothing"), None);
        assert_eq!(d.resolve("po").unwrap(), ResourceKind::Pods);
        assert!(matches!(d.resolve("svc"), Ok(Kind::Api(_))));
        assert_eq!(d.preferred().len(), 7, "widgets v1beta1 is not preferred");
        assert_eq!(d.category("all").len(), 7);
    }

    /// A server answering only the legacy form: `/api`, `/apis`, then each group version,
    /// the preferred one first whatever order the group lists its versions in.
    #[tokio::test]
    async fn the_legacy_walk_fetches_every_group_version() {
        let answer = |path: &str| -> Option<&'static str> {
            Some(match path {
                "/api" => r#"{"kind":"APIVersions","versions":["v1"]}"#,
                "/apis" => {
                    r#"{"kind":"APIGroupList","groups":[{"name":"example.com",
                    "versions":[{"groupVersion":"example.com/v1beta1","version":"v1beta1"},
                    {"groupVersion":"example.com/v1","version":"v1"}],
                    "preferredVersion":{"groupVersion":"example.com/v1","version":"v1"}}]}"#
                }
                "/api/v1" => {
                    r#"{"kind":"APIResourceList","groupVersion":"v1","resources":[
                    {"name":"services","singularName":"service","namespaced":true,"kind":"Service",
                     "verbs":["get","list","watch"],"shortNames":["svc"],"categories":["all"]},
                    {"name":"services/status","singularName":"","namespaced":true,"kind":"Service",
                     "verbs":["get"]}]}"#
                }
                "/apis/example.com/v1" => {
                    r#"{"kind":"APIResourceList","resources":[
                    {"name":"widgets","singularName":"","namespaced":true,"kind":"Widget",
                     "verbs":["list","watch"]}]}"#
                }
                "/apis/example.com/v1beta1" => {
                    r#"{"kind":"APIResourceList","resources":[
                    {"name":"widgets","singularName":"widget","namespaced":true,"kind":"Widget",
                     "verbs":["list"]}]}"#
                }
                _ => return None,
            })
        };
        let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
            let body = answer(request.uri().path());
            async move {
                let (status, body) = match body {
                    Some(body) => (200, body),
                    None => (404, r#"{"kind":"Status","code":404}"#),
                };
                http::Response::builder()
                    .status(status)
                    .body(http_body_util::Full::new(bytes::Bytes::from_static(
                        body.as_bytes(),
                    )))
            }
        });
        let client = kube::Client::new(service, "default");
        let discovery = Discovery::run(&client).await.expect("discovers");
        let listed: Vec<String> = discovery
            .resources()
            .iter()
            .map(|r| format!("{}/{}/{} {}", r.group, r.version, r.plural, r.singular))
            .collect();
        assert_eq!(
            listed,
            [
                "/v1/services service",
                "example.com/v1/widgets widget",
                "example.com/v1beta1/widgets widget"
            ],
            "subresources skipped, the preferred version first, singulars from the kind"
        );
        assert_eq!(
            discovery
                .resolve_resource("widgets")
                .map(|r| r.version.as_str()),
            Some("v1")
        );
        assert!(
            discovery
                .resolve_resource("svc")
                .is_some_and(|r| r.listable())
        );
    }
}
