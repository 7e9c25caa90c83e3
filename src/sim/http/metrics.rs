//! The resource metrics API (`metrics.k8s.io/v1beta1`), as metrics-server serves it through
//! the aggregator: PodMetrics and NodeMetrics, so `kubectl top pods/nodes` work.
//!
//! Usage is computed on request from the pod and the time, never stored: each container has
//! a level of its requests, a slow wave and a jitter that changes every scrape window, so
//! it moves as a real one does. A crash-looping container's memory climbs towards its limit
//! and falls at each (virtual) restart; the noisy app's CPU is well over its request. A
//! node's usage is its running pods' plus what the system takes.

use std::collections::{BTreeMap, HashMap};
use std::f64::consts::TAU;
use std::sync::Arc;

use axum::http::{Method, Uri};
use axum::response::Response;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::Shared;
use crate::manifests;
use crate::object::StoredObject;
use crate::resources::Resource;
use crate::selectors::LabelSelector;
use crate::store::ReadAt;

use super::params::Params;
use super::status::{ApiError, json_body};

const GROUP: &str = "metrics.k8s.io";
const VERSION: &str = "v1beta1";
const GROUP_VERSION: &str = "metrics.k8s.io/v1beta1";

/// metrics-server's scrape resolution: usage is constant within a window, new in the next.
const WINDOW_SECONDS: i64 = 15;

/// A request under `/apis/metrics.k8s.io`.
pub(super) enum MetricsPath {
    Group,
    Resources,
    Nodes(Option<String>),
    /// Pods of one namespace, or (`None`) of all.
    Pods(Option<String>, Option<String>),
}

/// The metrics API's paths; `None` for every other one.
pub(super) fn route(path: &str) -> Option<Result<MetricsPath, ApiError>> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let rest = match segments.as_slice() {
        ["apis", GROUP] => return Some(Ok(MetricsPath::Group)),
        ["apis", GROUP, VERSION] => return Some(Ok(MetricsPath::Resources)),
        ["apis", GROUP, VERSION, rest @ ..] => rest,
        ["apis", GROUP, ..] => return Some(Err(ApiError::unknown_path())),
        _ => return None,
    };
    let owned = |s: &&str| Some(s.to_string());
    Some(match rest {
        ["nodes"] => Ok(MetricsPath::Nodes(None)),
        ["nodes", name] => Ok(MetricsPath::Nodes(owned(name))),
        ["pods"] => Ok(MetricsPath::Pods(None, None)),
        ["namespaces", ns, "pods"] => Ok(MetricsPath::Pods(owned(ns), None)),
        ["namespaces", ns, "pods", name] => Ok(MetricsPath::Pods(owned(ns), owned(name))),
        _ => Err(ApiError::unknown_path()),
    })
}

/// The group as `/apis` lists it.
pub(super) fn api_group() -> Value {
    let version = json!({"groupVersion": GROUP_VERSION, "version": VERSION});
    json!({"name": GROUP, "versions": [version], "preferredVersion": version})
}

/// The group as aggregated discovery (`apidiscovery.k8s.io/v2`) lists it.
pub(super) fn aggregated_group() -> Value {
    let resource = |plural: &str, singular: &str, kind: &str, scope: &str| {
        json!({
            "resource": plural,
            "responseKind": {"group": GROUP, "version": VERSION, "kind": kind},
            "scope": scope,
            "singularResource": singular,
            "verbs": ["get", "list"],
        })
    };
    json!({
        "metadata": {"name": GROUP, "creationTimestamp": null},
        "versions": [{
            "version": VERSION,
            "resources": [
                resource("nodes", "", "NodeMetrics", "Cluster"),
                resource("pods", "", "PodMetrics", "Namespaced"),
            ],
            "freshness": "Current",
        }],
    })
}

pub(super) fn serve(
    shared: &Arc<Shared>,
    method: &Method,
    path: MetricsPath,
    uri: &Uri,
) -> Result<Response, ApiError> {
    if method != Method::GET {
        return Err(ApiError::method_not_allowed(method.as_str()));
    }
    let params = Params::from_uri(uri)?;
    // metrics-server serves get and list only.
    if params.flag("watch") {
        return Err(ApiError::method_not_allowed("watch"));
    }
    let selector = LabelSelector::parse(params.get("labelSelector").unwrap_or(""))
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    if let Some(refused) = forbidden(shared, &path) {
        return Ok(refused);
    }
    let now = now_window();
    let body = match path {
        MetricsPath::Group => {
            let mut group = api_group();
            group["kind"] = json!("APIGroup");
            group["apiVersion"] = json!("v1");
            group
        }
        MetricsPath::Resources => {
            let resource = |name: &str, kind: &str, namespaced: bool| json!({"name": name, "singularName": "", "namespaced": namespaced, "kind": kind, "verbs": ["get", "list"]});
            json!({
                "kind": "APIResourceList",
                "apiVersion": "v1",
                "groupVersion": GROUP_VERSION,
                "resources": [resource("nodes", "NodeMetrics", false), resource("pods", "PodMetrics", true)],
            })
        }
        MetricsPath::Pods(namespace, name) => {
            let noisy = shared.noisy_logs.as_ref().map(|n| n.app.as_str());
            let prefix = namespace.as_deref().map(|ns| format!("{ns}/"));
            let pods = running(shared, Resource::Pods, prefix.as_deref().unwrap_or(""))?;
            let items: Vec<Value> = pods
                .iter()
                .filter(|p| selector.matches(&p.labels))
                .filter_map(|p| PodView::read(p))
                .filter(|p| name.as_ref().is_none_or(|n| *n == p.metadata.name))
                .map(|p| p.metrics(now, noisy))
                .collect();
            match name {
                Some(name) => single(items, "pods", &name)?,
                None => list("PodMetricsList", items),
            }
        }
        MetricsPath::Nodes(name) => {
            let nodes = running(shared, Resource::Nodes, "")?;
            let noisy = shared.noisy_logs.as_ref().map(|n| n.app.as_str());
            let mut used: HashMap<String, Usage> = HashMap::new();
            for pod in running(shared, Resource::Pods, "")? {
                let on = pod.fields.node_name.as_deref().unwrap_or("");
                if name.as_ref().is_some_and(|n| n != on) {
                    continue;
                }
                if let Some(view) = PodView::read(&pod) {
                    let total = used.entry(on.to_string()).or_default();
                    for (_, usage) in view.usage(now, noisy) {
                        total.add(usage);
                    }
                }
            }
            let items: Vec<Value> = nodes
                .iter()
                .filter(|n| selector.matches(&n.labels))
                .filter_map(|n| NodeView::read(n))
                .filter(|n| name.as_ref().is_none_or(|m| *m == n.metadata.name))
                .map(|n| {
                    let pods = used.get(&n.metadata.name).copied().unwrap_or_default();
                    n.metrics(now, pods)
                })
                .collect();
            match name {
                Some(name) => single(items, "nodes", &name)?,
                None => list("NodeMetricsList", items),
            }
        }
    };
    Ok(json_body(body.to_string()))
}

/// The user the sim serves, as RBAC names it in a refusal.
const SIM_USER: &str = "kscope-sim";

/// A 403 as RBAC words it, when a `forbidden` fault names the path's resource
/// (`pods.metrics.k8s.io`, `nodes.metrics.k8s.io`): a user allowed the pods but not their
/// usage, as many are.
fn forbidden(shared: &Shared, path: &MetricsPath) -> Option<Response> {
    let (plural, namespace, name) = match path {
        MetricsPath::Nodes(name) => ("nodes", None, name.as_deref()),
        MetricsPath::Pods(namespace, name) => ("pods", namespace.as_deref(), name.as_deref()),
        MetricsPath::Group | MetricsPath::Resources => return None,
    };
    let qualified = format!("{plural}.{GROUP}");
    if !shared.faults.read().forbids_name(&qualified) {
        return None;
    }
    let verb = if name.is_some() { "get" } else { "list" };
    let subject = match name {
        Some(name) => format!("{qualified} \"{name}\""),
        None => qualified,
    };
    let scope = match namespace {
        Some(ns) => format!("in the namespace \"{ns}\""),
        None => "at the cluster scope".to_string(),
    };
    let mut details = json!({"group": GROUP, "kind": plural});
    if let Some(name) = name {
        details["name"] = json!(name);
    }
    let status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": format!(
            "{subject} is forbidden: User \"{SIM_USER}\" cannot {verb} resource \"{plural}\" \
             in API group \"{GROUP}\" {scope}"
        ),
        "reason": "Forbidden",
        "details": details,
        "code": 403,
    });
    let mut response = json_body(status.to_string());
    *response.status_mut() = axum::http::StatusCode::FORBIDDEN;
    Some(response)
}

/// The objects of `resource` under `prefix` now; of pods, the running ones (metrics-server
/// has nothing of a pod before its containers start or after they end).
fn running(
    shared: &Shared,
    resource: Resource,
    prefix: &str,
) -> Result<Vec<Arc<StoredObject>>, ApiError> {
    let pods = resource == Resource::Pods;
    let page = shared
        .store
        .list(resource, ReadAt::Latest, prefix, None, None, &|_, o| {
            !pods || o.fields.phase.as_deref() == Some("Running")
        })
        .map_err(|e| ApiError::internal(&e.to_string()))?;
    Ok(page.items)
}

fn list(kind: &str, items: Vec<Value>) -> Value {
    json!({"kind": kind, "apiVersion": GROUP_VERSION, "metadata": {}, "items": items})
}

fn single(items: Vec<Value>, plural: &str, name: &str) -> Result<Value, ApiError> {
    let mut item = items
        .into_iter()
        .next()
        .ok_or_else(|| ApiError::not_found_in(GROUP, plural, name))?;
    item["kind"] = json!(if plural == "pods" {
        "PodMetrics"
    } else {
        "NodeMetrics"
    });
    item["apiVersion"] = json!(GROUP_VERSION);
    Ok(item)
}

/// The start of the current scrape window, in Unix seconds.
fn now_window() -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    now - now.rem_euclid(WINDOW_SECONDS)
}

/// CPU in nanocores and memory in bytes.
#[derive(Debug, Clone, Copy, Default)]
struct Usage {
    cpu_nano: u64,
    memory: u64,
}

impl Usage {
    fn add(&mut self, other: Usage) {
        self.cpu_nano += other.cpu_nano;
        self.memory += other.memory;
    }

    /// As metrics-server writes it: nanocores and KiB.
    fn to_json(self) -> Value {
        json!({"cpu": format!("{}n", self.cpu_nano), "memory": format!("{}Ki", self.memory / 1024)})
    }
}

/// The parts of a pod its usage depends on, read without decoding the rest.
#[derive(Deserialize, Default)]
#[serde(default)]
struct PodView {
    metadata: Meta,
    spec: PodSpecView,
    status: PodStatusView,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Meta {
    name: String,
    namespace: String,
    uid: String,
    labels: BTreeMap<String, String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct PodSpecView {
    containers: Vec<ContainerView>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ContainerView {
    name: String,
    resources: ResourcesView,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ResourcesView {
    requests: BTreeMap<String, Value>,
    limits: BTreeMap<String, Value>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct PodStatusView {
    container_statuses: Vec<ContainerStatusView>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct ContainerStatusView {
    name: String,
    restart_count: u64,
    state: Value,
    last_state: Value,
}

impl ContainerStatusView {
    /// Restarting after crashes (or being killed for its memory).
    fn crash_looping(&self) -> bool {
        self.restart_count > 0
            && (self.state["waiting"]["reason"] == "CrashLoopBackOff"
                || matches!(
                    self.last_state["terminated"]["reason"].as_str(),
                    Some("OOMKilled" | "Error")
                ))
    }
}

/// A quantity of `map` in thousandths of its unit.
fn milli(map: &BTreeMap<String, Value>, name: &str) -> Option<u64> {
    let text = match map.get(name)? {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    kscope_units::quantity::parse(&text).and_then(|q| u64::try_from(q.milli()).ok())
}

impl PodView {
    fn read(stored: &StoredObject) -> Option<PodView> {
        serde_json::from_slice(&stored.json).ok()
    }

    /// Whether the pod is the noisy app's (its `app` or `app.kubernetes.io/name` label).
    fn is_noisy(&self, noisy: Option<&str>) -> bool {
        noisy.is_some_and(|app| {
            ["app", "app.kubernetes.io/name"]
                .iter()
                .any(|k| self.metadata.labels.get(*k).is_some_and(|v| v == app))
        })
    }

    /// Each container's usage in the window starting at `now`.
    fn usage(&self, now: i64, noisy: Option<&str>) -> Vec<(&str, Usage)> {
        let noisy = self.is_noisy(noisy);
        let pod = hash(self.metadata.uid.as_bytes());
        self.spec
            .containers
            .iter()
            .map(|c| {
                let crashing = self
                    .status
                    .container_statuses
                    .iter()
                    .any(|s| s.name == c.name && s.crash_looping());
                let seed = mix(pod ^ hash(c.name.as_bytes()));
                let usage = container_usage(seed, &c.resources, now, noisy, crashing);
                (c.name.as_str(), usage)
            })
            .collect()
    }

    fn metrics(&self, now: i64, noisy: Option<&str>) -> Value {
        let containers: Vec<Value> = self
            .usage(now, noisy)
            .into_iter()
            .map(|(name, usage)| json!({"name": name, "usage": usage.to_json()}))
            .collect();
        json!({
            "metadata": {
                "name": self.metadata.name,
                "namespace": self.metadata.namespace,
                "creationTimestamp": manifests::timestamp(now + WINDOW_SECONDS),
                "labels": self.metadata.labels,
            },
            "timestamp": manifests::timestamp(now),
            "window": format!("{WINDOW_SECONDS}s"),
            "containers": containers,
        })
    }
}

/// One container's usage: a level between a sixth and two thirds of its request, a wave of
/// a few minutes and a jitter per window; the noisy app's CPU runs at one and a half times
/// its request; a crash-looping container's memory climbs to near its limit over five
/// minutes, then starts again.
fn container_usage(
    seed: u64,
    resources: &ResourcesView,
    now: i64,
    noisy: bool,
    crashing: bool,
) -> Usage {
    let cpu_request = milli(&resources.requests, "cpu").unwrap_or(100);
    let memory_request =
        milli(&resources.requests, "memory").map_or(64 << 20, |m| (m / 1000).max(1 << 20));
    let memory_limit = milli(&resources.limits, "memory").map_or(2 * memory_request, |m| m / 1000);
    let period = 240.0 + (seed % 600) as f64;
    let wave = (TAU * (now as f64 / period + unit(seed >> 3))).sin();
    let jitter = unit(mix(seed ^ now as u64)) - 0.5;
    let level = if noisy {
        1.5 + 0.25 * wave + 0.2 * jitter
    } else {
        (0.15 + 0.5 * unit(seed >> 7) + 0.12 * wave + 0.08 * jitter).max(0.02)
    };
    // Requests are in millicores; usage in nanocores.
    let cpu_nano = (cpu_request as f64 * level * 1e6) as u64;
    let memory = if crashing {
        const CYCLE: i64 = 300;
        let into = (now + (seed % CYCLE as u64) as i64).rem_euclid(CYCLE);
        memory_limit as f64 * (0.35 + 0.6 * into as f64 / CYCLE as f64)
    } else {
        memory_request as f64 * (0.45 + 0.35 * unit(seed >> 13) + 0.04 * wave)
    };
    Usage {
        cpu_nano,
        memory: memory as u64,
    }
}

/// The parts of a node its metrics need.
#[derive(Deserialize, Default)]
#[serde(default)]
struct NodeView {
    metadata: Meta,
    status: NodeStatusView,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct NodeStatusView {
    capacity: BTreeMap<String, Value>,
}

impl NodeView {
    fn read(stored: &StoredObject) -> Option<NodeView> {
        serde_json::from_slice(&stored.json).ok()
    }

    /// Its pods' usage plus the system's: the kubelet, the runtime and the kernel take
    /// about a tenth of a core and 700 MiB, more on a larger machine, moving a little.
    fn metrics(&self, now: i64, pods: Usage) -> Value {
        let seed = mix(hash(self.metadata.name.as_bytes()));
        let cores = milli(&self.status.capacity, "cpu").unwrap_or(2_000) / 1000;
        let memory = milli(&self.status.capacity, "memory").map_or(8 << 30, |m| m / 1000);
        let wave = (TAU * (now as f64 / 420.0 + unit(seed))).sin();
        let mut usage = Usage {
            cpu_nano: ((100.0 + 15.0 * cores as f64) * (1.0 + 0.2 * wave) * 1e6) as u64,
            memory: (700 << 20) + memory / 50,
        };
        usage.add(pods);
        json!({
            "metadata": {
                "name": self.metadata.name,
                "creationTimestamp": manifests::timestamp(now + WINDOW_SECONDS),
                "labels": self.metadata.labels,
            },
            "timestamp": manifests::timestamp(now),
            "window": format!("{WINDOW_SECONDS}s"),
            "usage": usage.to_json(),
        })
    }
}

/// FNV-1a: a fixed hash, so the same pod moves the same way in every run.
fn hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// splitmix64's finaliser: spreads a seed's bits.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A number in [0, 1) from a hash.
fn unit(h: u64) -> f64 {
    (h >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resources(cpu: &str, memory: &str, limit: &str) -> ResourcesView {
        let map = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), json!(v)))
                .collect()
        };
        ResourcesView {
            requests: map(&[("cpu", cpu), ("memory", memory)]),
            limits: map(&[("memory", limit)]),
        }
    }

    #[test]
    fn usage_moves_with_the_window_and_keeps_to_its_kind() {
        let r = resources("250m", "512Mi", "1Gi");
        let at = |now, noisy, crashing| container_usage(42, &r, now, noisy, crashing);
        assert_eq!(
            at(1_000_005, false, false).cpu_nano,
            at(1_000_005, false, false).cpu_nano
        );
        assert_ne!(
            at(1_000_005, false, false).cpu_nano,
            at(1_000_020, false, false).cpu_nano
        );
        for now in (0..40).map(|i| 1_700_000_000 + i * WINDOW_SECONDS) {
            let quiet = at(now, false, false);
            assert!(quiet.cpu_nano < 250_000_000, "{quiet:?}");
            assert!(at(now, true, false).cpu_nano > 250_000_000);
            assert!(quiet.memory < 512 << 20);
        }
        // A crash-looping container's memory climbs, window after window, until it restarts.
        let climbs = (0..20)
            .map(|i| at(1_700_000_000 + i * WINDOW_SECONDS, false, true).memory)
            .collect::<Vec<_>>()
            .windows(2)
            .filter(|w| w[1] > w[0])
            .count();
        assert!(climbs >= 17, "{climbs}");
    }
}
