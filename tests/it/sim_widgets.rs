//! The demo's Widget controller, read as a person would with kubectl: its Deployment comes
//! up through the sim's controllers, every Widget gets its ConfigMap and a Ready status,
//! and its /metrics, read through the pods/proxy subresource, parse as Prometheus text under
//! controller-runtime's names and move as Widgets change. A port nothing listens on and the
//! `forbid=pods/proxy` fault answer as a real server does.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kscope_sim::{FaultSpec, SimConfig};
use serde_json::Value;

use crate::common::kubectl::Kubectl;

const CONVERGE: Duration = Duration::from_secs(90);

/// The metric families the controller must serve, as controller-runtime names them.
const FAMILIES: [&str; 11] = [
    "workqueue_depth",
    "workqueue_adds_total",
    "workqueue_queue_duration_seconds",
    "workqueue_work_duration_seconds",
    "workqueue_retries_total",
    "workqueue_unfinished_work_seconds",
    "workqueue_longest_running_processor_seconds",
    "controller_runtime_reconcile_total",
    "controller_runtime_reconcile_errors_total",
    "controller_runtime_reconcile_time_seconds",
    "controller_runtime_active_workers",
];

async fn json(fx: &Kubectl, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    serde_json::from_str(&fx.ok(&all).await).expect("kubectl prints JSON")
}

/// Parses the Prometheus text format strictly: every family has HELP and TYPE before its
/// samples, every sample line is `name{labels} value` with a float value. Returns each
/// sample (name with labels) and its value, and each family's type.
fn parse(text: &str) -> (BTreeMap<String, f64>, BTreeMap<String, String>) {
    let mut samples = BTreeMap::new();
    let mut types = BTreeMap::new();
    let mut helped = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').expect("HELP name text");
            assert!(!help.is_empty(), "{line}");
            helped.push(name.to_string());
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("TYPE name kind");
            assert!(["counter", "gauge", "histogram"].contains(&kind), "{line}");
            assert!(
                helped.contains(&name.to_string()),
                "TYPE before HELP: {line}"
            );
            types.insert(name.to_string(), kind.to_string());
        } else {
            let (series, value) = line.rsplit_once(' ').expect("sample value");
            let value: f64 = value
                .parse()
                .unwrap_or_else(|_| panic!("not a number: {line}"));
            let name = series.split('{').next().expect("name");
            let family = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| {
                    name.strip_suffix(s)
                        .filter(|f| types.get(*f).is_some_and(|t| t == "histogram"))
                })
                .unwrap_or(name);
            assert!(types.contains_key(family), "sample before its TYPE: {line}");
            if series.contains('{') {
                assert!(series.ends_with('}'), "{line}");
            }
            samples.insert(series.to_string(), value);
        }
    }
    (samples, types)
}

async fn metrics(fx: &Kubectl, pod: &str) -> BTreeMap<String, f64> {
    let path = format!("/api/v1/namespaces/widget-system/pods/{pod}:8080/proxy/metrics");
    let text = fx.ok(&["get", "--raw", &path]).await;
    let (samples, types) = parse(&text);
    for family in FAMILIES {
        assert!(types.contains_key(family), "{family} missing:\n{text}");
    }
    assert_eq!(types["workqueue_queue_duration_seconds"], "histogram");
    assert_eq!(types["controller_runtime_reconcile_total"], "counter");
    samples
}

fn value(samples: &BTreeMap<String, f64>, series: &str) -> f64 {
    *samples
        .get(series)
        .unwrap_or_else(|| panic!("{series} missing: {samples:#?}"))
}

const ADDS: &str = "workqueue_adds_total{controller=\"widget\",name=\"widget\"}";
const RETRIES: &str = "workqueue_retries_total{controller=\"widget\",name=\"widget\"}";
const SUCCESS: &str =
    "controller_runtime_reconcile_total{controller=\"widget\",result=\"success\"}";
const ERRORS: &str = "controller_runtime_reconcile_errors_total{controller=\"widget\"}";

/// Polls until every Widget has its ConfigMap and a Ready status for its generation.
async fn wait_reconciled(fx: &Kubectl) -> Vec<Value> {
    let deadline = Instant::now() + CONVERGE;
    loop {
        let widgets = json(fx, &["get", "widgets", "-A"]).await["items"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let configs = json(
            fx,
            &["get", "configmaps", "-A", "-l", "widgets.example.com/name"],
        )
        .await;
        let configs = configs["items"].as_array().cloned().unwrap_or_default();
        let done = !widgets.is_empty()
            && widgets.iter().all(|w| {
                let ready = w["status"]["conditions"][0]["status"] == "True";
                let observed = w["status"]["observedGeneration"] == w["metadata"]["generation"];
                let config = format!("{}-config", w["metadata"]["name"].as_str().unwrap_or(""));
                let has = configs.iter().any(|c| {
                    c["metadata"]["name"] == config.as_str()
                        && c["metadata"]["namespace"] == w["metadata"]["namespace"]
                        && c["data"]["size"] == w["spec"]["size"]
                });
                ready && observed && has
            });
        if done {
            return widgets;
        }
        assert!(
            Instant::now() < deadline,
            "widgets never all reconciled: {widgets:#?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test]
async fn widget_controller_reconciles_and_serves_metrics() {
    let config = SimConfig::with_size(40, 3, 2).widget_controller(true);
    let Some(fx) = Kubectl::start_with("widgets", config).await else {
        return;
    };
    fx.ok(&[
        "rollout",
        "status",
        "deploy/widget-controller",
        "-n",
        "widget-system",
        "--timeout=90s",
    ])
    .await;
    let pods = json(
        &fx,
        &[
            "get",
            "pods",
            "-n",
            "widget-system",
            "-l",
            "control-plane=widget-controller",
        ],
    )
    .await;
    let pod = pods["items"][0]["metadata"]["name"]
        .as_str()
        .expect("controller pod")
        .to_string();

    let widgets = wait_reconciled(&fx).await;
    let before = metrics(&fx, &pod).await;
    assert!(
        value(&before, SUCCESS) >= widgets.len() as f64,
        "{before:#?}"
    );
    assert_eq!(
        value(
            &before,
            "controller_runtime_active_workers{controller=\"widget\"}"
        ),
        0.0
    );
    assert!(
        value(
            &before,
            "workqueue_queue_duration_seconds_count{controller=\"widget\",name=\"widget\"}"
        ) >= 1.0
    );
    assert_eq!(
        value(
            &before,
            "workqueue_queue_duration_seconds_bucket{controller=\"widget\",name=\"widget\",le=\"+Inf\"}"
        ),
        value(
            &before,
            "workqueue_queue_duration_seconds_count{controller=\"widget\",name=\"widget\"}"
        )
    );

    // A new Widget: it gets its ConfigMap, owned by it, and the counters move.
    let path = fx.file(
        "widget.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: fresh, namespace: default}\nspec: {size: large, replicas: 3}\n",
    );
    fx.ok(&["apply", "-f", &path]).await;
    wait_reconciled(&fx).await;
    let config = json(&fx, &["get", "configmap/fresh-config", "-n", "default"]).await;
    assert_eq!(config["data"]["replicas"], "3");
    assert_eq!(config["metadata"]["ownerReferences"][0]["kind"], "Widget");
    let after = metrics(&fx, &pod).await;
    assert!(
        value(&after, ADDS) > value(&before, ADDS),
        "adds did not move"
    );
    assert!(
        value(&after, SUCCESS) > value(&before, SUCCESS),
        "reconciles did not move"
    );

    // Spec changes, one generation at a time: some reconciles fail and are retried (each
    // error is one rate-limited retry), and every one is reconciled in the end.
    for replicas in 1..=8 {
        let patch = format!(r#"{{"spec":{{"replicas":{replicas}}}}}"#);
        fx.ok(&[
            "patch",
            "widget/fresh",
            "-n",
            "default",
            "--type=merge",
            "-p",
            &patch,
        ])
        .await;
        let reconciled = wait_reconciled(&fx).await;
        assert!(reconciled.iter().any(|w| w["metadata"]["name"] == "fresh"));
    }
    let later = metrics(&fx, &pod).await;
    assert!(
        value(&later, ERRORS) > 0.0,
        "no reconcile ever failed: {later:#?}"
    );
    assert_eq!(value(&later, ERRORS), value(&later, RETRIES));
    assert_eq!(
        value(
            &later,
            "controller_runtime_reconcile_total{controller=\"widget\",result=\"error\"}"
        ),
        value(&later, ERRORS)
    );
    let config = json(&fx, &["get", "configmap/fresh-config", "-n", "default"]).await;
    assert_eq!(config["data"]["replicas"], "8");

    // Deleting the Widget takes its ConfigMap.
    fx.ok(&["delete", "widget/fresh", "-n", "default"]).await;
    let deadline = Instant::now() + CONVERGE;
    while fx
        .run(&["get", "configmap/fresh-config", "-n", "default"])
        .await
        .0
    {
        assert!(Instant::now() < deadline, "fresh-config never went");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    // A port nothing listens on, and a path the metrics server does not serve.
    let ip = json(&fx, &["get", "pod", &pod, "-n", "widget-system"]).await["status"]["podIP"]
        .as_str()
        .expect("pod IP")
        .to_string();
    let (ok, _, err) = fx
        .run(&[
            "get",
            "--raw",
            &format!("/api/v1/namespaces/widget-system/pods/{pod}:9999/proxy/metrics"),
        ])
        .await;
    assert!(!ok);
    assert!(
        err.contains(&format!(
            "error trying to reach service: dial tcp {ip}:9999: connect: connection refused"
        )),
        "{err}"
    );
    let (ok, _, err) = fx
        .run(&[
            "get",
            "--raw",
            &format!("/api/v1/namespaces/widget-system/pods/{pod}:8080/proxy/nothing"),
        ])
        .await;
    assert!(!ok && err.contains("NotFound"), "{err}");
    let (ok, _, err) = fx
        .run(&[
            "get",
            "--raw",
            "/api/v1/namespaces/widget-system/pods/nosuch:8080/proxy/metrics",
        ])
        .await;
    assert!(!ok && err.contains("pods \"nosuch\" not found"), "{err}");

    // RBAC refusing pods/proxy.
    let mut faults = fx.sim.faults();
    faults.apply(&"forbid=pods/proxy".parse::<FaultSpec>().expect("fault"));
    fx.sim.set_faults(faults);
    let (ok, _, err) = fx
        .run(&[
            "get",
            "--raw",
            &format!("/api/v1/namespaces/widget-system/pods/{pod}:8080/proxy/metrics"),
        ])
        .await;
    assert!(!ok);
    assert!(
        err.contains(&format!("pods \"{pod}\" is forbidden: User \"kscope-sim\" cannot get resource \"pods/proxy\" in API group \"\" in the namespace \"widget-system\"")),
        "{err}"
    );
    // Reads of pods themselves are still allowed.
    fx.ok(&["get", "pod", &pod, "-n", "widget-system"]).await;
}

/// The controller's one pod, once the Deployment has it running.
async fn controller_pod(fx: &Kubectl) -> String {
    fx.ok(&[
        "rollout",
        "status",
        "deploy/widget-controller",
        "-n",
        "widget-system",
        "--timeout=90s",
    ])
    .await;
    let pods = json(
        fx,
        &[
            "get",
            "pods",
            "-n",
            "widget-system",
            "-l",
            "control-plane=widget-controller",
            "--field-selector=status.phase=Running",
        ],
    )
    .await;
    pods["items"][0]["metadata"]["name"]
        .as_str()
        .expect("a running controller pod")
        .to_string()
}

/// The controller runs in its pod: scaled to 0, nothing reconciles a new Widget and no port
/// serves metrics; scaled back, the new pod's controller lists every Widget again,
/// reconciles the one it missed, and its numbers start afresh (a later process start time).
#[tokio::test]
async fn the_widget_controller_stops_with_its_pod_and_starts_afresh_in_the_next() {
    let config = SimConfig::with_size(40, 3, 2).widget_controller(true);
    let Some(fx) = Kubectl::start_with("widgets-restart", config).await else {
        return;
    };
    let first = controller_pod(&fx).await;
    wait_reconciled(&fx).await;
    let started = value(&metrics(&fx, &first).await, "process_start_time_seconds");

    let scale = |replicas: &'static str| {
        [
            "scale",
            "deploy/widget-controller",
            "-n",
            "widget-system",
            replicas,
        ]
    };
    fx.ok(&scale("--replicas=0")).await;
    let deadline = Instant::now() + CONVERGE;
    while fx
        .run(&["get", "pod", &first, "-n", "widget-system"])
        .await
        .0
    {
        assert!(Instant::now() < deadline, "the controller pod never went");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let path = fx.file(
        "late.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: late, namespace: default}\nspec: {size: small}\n",
    );
    fx.ok(&["apply", "-f", &path]).await;
    // Three of the controller's pod polls: a running controller would have reconciled it.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (exists, _, _) = fx
        .run(&["get", "configmap/late-config", "-n", "default"])
        .await;
    assert!(!exists, "a Widget was reconciled with no controller pod");
    let late = json(&fx, &["get", "widget/late", "-n", "default"]).await;
    assert!(late["status"].is_null(), "{late:#}");

    fx.ok(&scale("--replicas=1")).await;
    let second = controller_pod(&fx).await;
    assert_ne!(second, first);
    wait_reconciled(&fx).await;
    let config = json(&fx, &["get", "configmap/late-config", "-n", "default"]).await;
    assert_eq!(config["data"]["size"], "small");
    let restarted = metrics(&fx, &second).await;
    assert!(
        value(&restarted, "process_start_time_seconds") > started,
        "the new pod's process started at {} (the old one at {started})",
        value(&restarted, "process_start_time_seconds")
    );
}
