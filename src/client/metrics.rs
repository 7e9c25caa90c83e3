//! Usage from the resource metrics API (`metrics.k8s.io/v1beta1`, metrics-server's), read
//! as `kubectl top` reads it: a pod's usage is the sum of its containers', a node's is its
//! own.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::Value;

use super::fetch::{FetchError, fetch_path_within};

/// The API's group and version, as the paths name it.
const GROUP_VERSION: &str = "metrics.k8s.io/v1beta1";

/// What the metrics API measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsageKind {
    Pods,
    Nodes,
}

/// CPU and memory in use, exact as the API sent them: nanocores and bytes, so that sums
/// round once, as kubectl's do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub cpu_nanocores: u128,
    pub memory_bytes: u128,
}

impl Usage {
    /// Millicores, rounded up as a quantity's `MilliValue` is (kubectl top's CPU).
    pub fn cpu_millicores(self) -> u128 {
        self.cpu_nanocores.div_ceil(1_000_000)
    }

    /// Whole MiB, rounded down as kubectl top prints them.
    pub fn memory_mebibytes(self) -> u128 {
        self.memory_bytes / (1 << 20)
    }

    fn add(&mut self, other: Usage) {
        self.cpu_nanocores = self.cpu_nanocores.saturating_add(other.cpu_nanocores);
        self.memory_bytes = self.memory_bytes.saturating_add(other.memory_bytes);
    }

    /// A `usage` object's `cpu` and `memory`; absent or unreadable ones count as none.
    fn read(usage: &Value) -> Self {
        let quantity = |name: &str| usage.get(name).and_then(Value::as_str).unwrap_or("0");
        Self {
            cpu_nanocores: nanos(quantity("cpu")),
            memory_bytes: kscope_units::quantity::parse(quantity("memory"))
                .map_or(0, |q| u128::try_from(q.value()).unwrap_or(0)),
        }
    }
}

/// A CPU quantity in nanocores: metrics-server writes nanocores (`12345678n`), finer than
/// the millicores a parsed quantity keeps.
fn nanos(text: &str) -> u128 {
    match text.strip_suffix('n').map(str::parse::<u128>) {
        Some(Ok(n)) => n,
        _ => kscope_units::quantity::parse(text)
            .and_then(|q| u128::try_from(q.milli()).ok())
            .map_or(0, |m| m.saturating_mul(1_000_000)),
    }
}

/// The usage of every pod (in `namespace`, or all) or node, keyed by namespace and then
/// name (nodes under the empty namespace). One GET, bounded by `timeout`.
pub async fn fetch_usage(
    client: &kube::Client,
    kind: UsageKind,
    namespace: Option<&str>,
    timeout: Duration,
) -> Result<HashMap<String, HashMap<String, Usage>>, FetchError> {
    let (path, what) = match (kind, namespace) {
        (UsageKind::Nodes, _) => (format!("/apis/{GROUP_VERSION}/nodes"), "NodeMetrics"),
        (UsageKind::Pods, Some(ns)) => (
            format!("/apis/{GROUP_VERSION}/namespaces/{ns}/pods"),
            "PodMetrics",
        ),
        (UsageKind::Pods, None) => (format!("/apis/{GROUP_VERSION}/pods"), "PodMetrics"),
    };
    let list = fetch_path_within(client, path, what.to_string(), timeout).await?;
    Ok(usage_by_object(kind, &list))
}

/// A PodMetricsList's or NodeMetricsList's usage per object.
fn usage_by_object(kind: UsageKind, list: &Value) -> HashMap<String, HashMap<String, Usage>> {
    let mut by_namespace: HashMap<String, HashMap<String, Usage>> = HashMap::new();
    let items = list.get("items").and_then(Value::as_array);
    for item in items.into_iter().flatten() {
        let meta = &item["metadata"];
        let Some(name) = meta["name"].as_str() else {
            continue;
        };
        let namespace = meta["namespace"].as_str().unwrap_or_default();
        let usage = match kind {
            UsageKind::Nodes => Usage::read(&item["usage"]),
            UsageKind::Pods => {
                let mut sum = Usage::default();
                let containers = item["containers"].as_array();
                for container in containers.into_iter().flatten() {
                    sum.add(Usage::read(&container["usage"]));
                }
                sum
            }
        };
        by_namespace
            .entry(namespace.to_string())
            .or_default()
            .insert(name.to_string(), usage);
    }
    by_namespace
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pods_sum_their_containers_and_round_once() {
        let list = json!({"items": [
            {"metadata": {"name": "web-1", "namespace": "shop"}, "containers": [
                {"name": "a", "usage": {"cpu": "1400000n", "memory": "1024Ki"}},
                {"name": "b", "usage": {"cpu": "1400000n", "memory": "1048576"}},
            ]},
            {"metadata": {"name": "n1"}, "usage": {"cpu": "250m", "memory": "3Gi"}},
        ]});
        let pods = usage_by_object(UsageKind::Pods, &list);
        let web = pods["shop"]["web-1"];
        assert_eq!(web.cpu_millicores(), 3);
        assert_eq!(web.memory_mebibytes(), 2);
        let nodes = usage_by_object(UsageKind::Nodes, &list);
        let node = nodes[""]["n1"];
        assert_eq!(node.cpu_millicores(), 250);
        assert_eq!(node.memory_mebibytes(), 3072);
    }
}
