//! A controller's own /metrics, read through the API server's pod proxy
//! (`pods/NAME:PORT/proxy/metrics`): no port-forward, and no permission beyond `pods/proxy`.
//! The pod is the one named, or a ready pod of the workload named; its port is the one
//! asked for, else a container port named `metrics` or `http-metrics`, else the
//! `prometheus.io/port` annotation, as scrape configurations find it.

use std::time::Duration;

use serde_json::Value;

use kscope_informers::lister_watcher::{BoxError, innermost_cause};

use crate::fetch::{FetchError, fetch_list, fetch_path};

/// One scrape is bounded: a controller that does not answer is said so, not waited on.
pub const SCRAPE_TIMEOUT: Duration = Duration::from_secs(5);

/// Container port names that mean "the metrics endpoint", in the order they are looked for.
const METRICS_PORT_NAMES: [&str; 2] = ["metrics", "http-metrics"];
const PORT_ANNOTATION: &str = "prometheus.io/port";

/// Why a controller's metrics could not be read. One plain line each.
#[derive(Debug, thiserror::Error)]
pub enum ScrapeError {
    #[error("{0}: kscope metrics reads a pod, Deployment, StatefulSet, DaemonSet or ReplicaSet")]
    UnsupportedKind(String),
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error("{workload} has no pods")]
    NoPods { workload: String },
    #[error(
        "pod {namespace}/{pod} is {phase}: its container is not running, so nothing serves metrics yet"
    )]
    NotRunning {
        namespace: String,
        pod: String,
        phase: String,
    },
    #[error(
        "pod {namespace}/{pod} has no metrics port: no container port named metrics or http-metrics, and no prometheus.io/port annotation; pass --port"
    )]
    NoPort { namespace: String, pod: String },
    #[error(
        "reading pod {namespace}/{pod}'s metrics needs the pods/proxy permission (get): {message}"
    )]
    Forbidden {
        namespace: String,
        pod: String,
        message: String,
    },
    #[error(
        "pod {namespace}/{pod}'s metrics endpoint answered 401 Unauthorized: it wants \
         credentials, and the API server's pod proxy strips kscope's Authorization header, so \
         a /metrics behind authentication (controller-runtime's secure metrics, \
         kube-rbac-proxy) cannot be read through it: {message}"
    )]
    Unauthorized {
        namespace: String,
        pod: String,
        message: String,
    },
    #[error(
        "the API server's proxy to pod {namespace}/{pod} port {port} failed ({code}): {message}"
    )]
    Proxy {
        namespace: String,
        pod: String,
        port: String,
        code: u16,
        message: String,
    },
    #[error("pod {namespace}/{pod}: cannot reach the API server: {}", innermost_cause(.source.as_ref()))]
    Unreachable {
        namespace: String,
        pod: String,
        #[source]
        source: BoxError,
    },
    #[error("pod {namespace}/{pod} port {port}: no answer within {}s", .waited.as_secs())]
    Silent {
        namespace: String,
        pod: String,
        port: String,
        waited: Duration,
    },
}

/// The pod and port whose /metrics is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsTarget {
    pub namespace: String,
    pub pod: String,
    pub port: String,
}

impl MetricsTarget {
    /// The pod proxy's path to the metrics page.
    pub fn path(&self) -> String {
        format!(
            "/api/v1/namespaces/{}/pods/{}:{}/proxy/metrics",
            self.namespace, self.pod, self.port
        )
    }
}

/// The workload kinds whose pods are found through their selector, by the names kubectl
/// takes for them, with their API path segment.
fn workload_resource(kind: &str) -> Option<&'static str> {
    Some(match kind.to_ascii_lowercase().as_str() {
        "deployment" | "deployments" | "deploy" | "deployment.apps" => "deployments",
        "statefulset" | "statefulsets" | "sts" | "statefulset.apps" => "statefulsets",
        "daemonset" | "daemonsets" | "ds" | "daemonset.apps" => "daemonsets",
        "replicaset" | "replicasets" | "rs" | "replicaset.apps" => "replicasets",
        _ => return None,
    })
}

fn is_pod_kind(kind: &str) -> bool {
    matches!(kind.to_ascii_lowercase().as_str(), "pod" | "pods" | "po")
}

/// Finds the pod and port to scrape for `kind/name` in `namespace`.
pub async fn find_target(
    client: &kube::Client,
    kind: &str,
    namespace: &str,
    name: &str,
    port: Option<&str>,
) -> Result<MetricsTarget, ScrapeError> {
    let pod = if is_pod_kind(kind) {
        let path = format!("/api/v1/namespaces/{namespace}/pods/{name}");
        fetch_path(client, path, format!("Pod {namespace}/{name}")).await?
    } else if let Some(resource) = workload_resource(kind) {
        let workload = format!("{kind}/{name}");
        let path = format!("/apis/apps/v1/namespaces/{namespace}/{resource}/{name}");
        let object = fetch_path(client, path, format!("{workload} in {namespace}")).await?;
        let selector = label_selector(&object["spec"]["selector"]);
        let query = form_urlencoded::Serializer::new(String::new())
            .append_pair("labelSelector", &selector)
            .finish();
        let pods = fetch_list(
            client,
            format!("/api/v1/namespaces/{namespace}/pods?{query}"),
            format!("pods of {workload}"),
        )
        .await?;
        // A ready pod serves; failing that, the first says why none does.
        let mut pods = pods;
        pods.sort_by_key(|p| !is_ready(p));
        pods.into_iter()
            .next()
            .ok_or(ScrapeError::NoPods { workload })?
    } else {
        return Err(ScrapeError::UnsupportedKind(kind.to_string()));
    };
    let pod_name = pod["metadata"]["name"].as_str().unwrap_or(name).to_string();
    let phase = pod["status"]["phase"].as_str().unwrap_or("Pending");
    if phase != "Running" {
        return Err(ScrapeError::NotRunning {
            namespace: namespace.to_string(),
            pod: pod_name,
            phase: phase.to_string(),
        });
    }
    let port = match port {
        Some(p) => p.to_string(),
        None => metrics_port(&pod).ok_or_else(|| ScrapeError::NoPort {
            namespace: namespace.to_string(),
            pod: pod_name.clone(),
        })?,
    };
    Ok(MetricsTarget {
        namespace: namespace.to_string(),
        pod: pod_name,
        port,
    })
}

fn is_ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// The port a scrape configuration would find: a named container port, else the annotation.
fn metrics_port(pod: &Value) -> Option<String> {
    let ports: Vec<&Value> = pod["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["ports"].as_array().into_iter().flatten())
        .collect();
    METRICS_PORT_NAMES
        .iter()
        .find_map(|name| {
            ports
                .iter()
                .find(|p| p["name"] == *name)
                .and_then(|p| p["containerPort"].as_u64())
        })
        .map(|n| n.to_string())
        .or_else(|| {
            pod["metadata"]["annotations"][PORT_ANNOTATION]
                .as_str()
                .filter(|p| !p.is_empty())
                .map(str::to_string)
        })
}

/// A LabelSelector as the `labelSelector` query parameter says it.
fn label_selector(selector: &Value) -> String {
    let mut parts: Vec<String> = selector["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    for e in selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let key = e["key"].as_str().unwrap_or_default();
        let values: Vec<&str> = e["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        parts.push(match e["operator"].as_str().unwrap_or_default() {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "DoesNotExist" => format!("!{key}"),
            _ => key.to_string(),
        });
    }
    parts.join(",")
}

/// GETs the target's metrics page as text, bounded by [`SCRAPE_TIMEOUT`].
pub async fn scrape(client: &kube::Client, target: &MetricsTarget) -> Result<String, ScrapeError> {
    let unreachable = |source: BoxError| ScrapeError::Unreachable {
        namespace: target.namespace.clone(),
        pod: target.pod.clone(),
        source,
    };
    let request = http::Request::get(target.path())
        .header(http::header::ACCEPT, "text/plain")
        .body(Vec::new())
        .map_err(|e| unreachable(e.into()))?;
    let Ok(answer) = tokio::time::timeout(SCRAPE_TIMEOUT, client.request_text(request)).await
    else {
        return Err(ScrapeError::Silent {
            namespace: target.namespace.clone(),
            pod: target.pod.clone(),
            port: target.port.clone(),
            waited: SCRAPE_TIMEOUT,
        });
    };
    answer.map_err(|err| match err {
        kube::Error::Api(status) if status.code == 403 => ScrapeError::Forbidden {
            namespace: target.namespace.clone(),
            pod: target.pod.clone(),
            message: status.message,
        },
        kube::Error::Api(status) if status.code == 401 => ScrapeError::Unauthorized {
            namespace: target.namespace.clone(),
            pod: target.pod.clone(),
            message: status.message,
        },
        kube::Error::Api(status) => ScrapeError::Proxy {
            namespace: target.namespace.clone(),
            pod: target.pod.clone(),
            port: target.port.clone(),
            code: status.code,
            message: status.message,
        },
        other => unreachable(other.into()),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_port_is_a_named_container_port_before_the_annotation() {
        let pod = json!({
            "metadata": {"annotations": {"prometheus.io/port": "9090"}},
            "spec": {"containers": [{"ports": [
                {"name": "http", "containerPort": 80},
                {"name": "http-metrics", "containerPort": 8443},
            ]}]},
        });
        assert_eq!(metrics_port(&pod).as_deref(), Some("8443"));
        let annotated = json!({"metadata": {"annotations": {"prometheus.io/port": "9090"}}});
        assert_eq!(metrics_port(&annotated).as_deref(), Some("9090"));
        assert_eq!(metrics_port(&json!({})), None);
    }

    #[test]
    fn selectors_read_as_the_query_parameter() {
        let s = json!({"matchLabels": {"app": "x"}, "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["a", "b"]},
            {"key": "gone", "operator": "DoesNotExist"},
        ]});
        assert_eq!(label_selector(&s), "app=x,tier in (a,b),!gone");
    }
}
