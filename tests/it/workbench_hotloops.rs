//! The controller author's workbench against the sim: the demo Widget controller's bugs
//! (switched at start and at run time) and `kscope hotloops` finding the self-triggering one
//! and nothing on the healthy controller; the other bugs seen through its metrics.

use std::time::{Duration, Instant};

use kscope_sim::{SimConfig, WidgetBug};
use serde_json::Value;

use crate::common::cli::kscope;
use crate::common::kubectl::Kubectl;

const CONVERGE: Duration = Duration::from_secs(90);

async fn sim(name: &str, bug: WidgetBug) -> Option<Kubectl> {
    let config = SimConfig::with_size(40, 3, 2)
        .widget_controller(true)
        .widget_bug(bug);
    Kubectl::start_with(name, config).await
}

async fn widgets(fx: &Kubectl) -> Vec<Value> {
    let out = fx.ok(&["get", "widgets", "-A", "-o", "json"]).await;
    let all: Value = serde_json::from_str(&out).expect("json");
    all["items"].as_array().cloned().unwrap_or_default()
}

/// Waits until some Widget's status carries the hot loop's stamp.
async fn wait_stamped(fx: &Kubectl) {
    let deadline = Instant::now() + CONVERGE;
    while !widgets(fx)
        .await
        .iter()
        .any(|w| w["status"]["lastReconcileTime"].is_string())
    {
        assert!(Instant::now() < deadline, "no Widget was ever stamped");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The controller's metrics, as `name value` pairs, once its pod serves them.
async fn metrics(fx: &Kubectl) -> Option<String> {
    let pods = fx
        .ok(&["get", "pods", "-n", "widget-system", "-o", "name"])
        .await;
    let pod = pods.lines().next()?.trim_start_matches("pod/").to_string();
    let path = format!("/api/v1/namespaces/widget-system/pods/{pod}:8080/proxy/metrics");
    let (ok, out, _) = fx.run(&["get", "--raw", &path]).await;
    ok.then_some(out)
}

fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or(0.0)
}

/// Waits until the metric `series` reaches `at_least`.
async fn wait_metric(fx: &Kubectl, series: &str, at_least: f64) {
    let deadline = Instant::now() + CONVERGE;
    loop {
        if let Some(text) = metrics(fx).await
            && sample(&text, series) >= at_least
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{series} never reached {at_least}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

async fn hotloops(fx: &Kubectl) -> (bool, Value, String) {
    let kubeconfig = fx.dir.join("kubeconfig");
    let out = kscope(
        &fx.dir,
        &[
            "hotloops",
            "--kubeconfig",
            &kubeconfig.to_string_lossy(),
            "-A",
            "--for",
            "20s",
            "-o",
            "json",
        ],
    )
    .await;
    let report = serde_json::from_slice(&out.stdout).expect("hotloops prints JSON");
    (
        out.status.success(),
        report,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_loop_found(ok: bool, report: &Value, stderr: &str) {
    assert!(!ok, "a loop exits non-zero: {report:#}");
    assert!(
        stderr.contains("hot loop found: widget-controller"),
        "{stderr}"
    );
    let found = &report["loops"][0];
    assert_eq!(found["manager"], "widget-controller", "{report:#}");
    let fields = found["fields"].as_array().expect("fields");
    assert!(
        fields.iter().any(|f| f == "status.lastReconcileTime"),
        "{report:#}"
    );
}

#[tokio::test]
async fn hotloops_flags_the_self_triggering_widget_controller() {
    let Some(fx) = sim("hotloop", WidgetBug::Hotloop).await else {
        return;
    };
    wait_stamped(&fx).await;
    let (ok, report, stderr) = hotloops(&fx).await;
    assert_loop_found(ok, &report, &stderr);
}

#[tokio::test]
async fn hotloops_reports_none_on_the_healthy_controller_then_finds_the_bug_switched_on() {
    let Some(fx) = sim("healthy", WidgetBug::None).await else {
        return;
    };
    wait_metric(
        &fx,
        "controller_runtime_reconcile_total{controller=\"widget\",result=\"success\"}",
        1.0,
    )
    .await;
    let (ok, report, stderr) = hotloops(&fx).await;
    assert!(ok, "healthy: {stderr} {report:#}");
    assert_eq!(report["loops"], serde_json::json!([]), "{report:#}");

    let body = fx.file("bug.json", r#"{"mode": "hotloop"}"#);
    fx.ok(&["replace", "--raw", "/sim/widget-bug", "-f", &body])
        .await;
    // The loop starts at the next change that queues a Widget.
    let first = widgets(&fx).await.into_iter().next().expect("a Widget");
    let (namespace, name) = (
        first["metadata"]["namespace"].as_str().expect("namespace"),
        first["metadata"]["name"].as_str().expect("name"),
    );
    fx.ok(&[
        "patch",
        "widgets",
        "-n",
        namespace,
        name,
        "--type=merge",
        "-p",
        r#"{"spec":{"size":"large","color":"red"}}"#,
    ])
    .await;
    wait_stamped(&fx).await;
    let (ok, report, stderr) = hotloops(&fx).await;
    assert_loop_found(ok, &report, &stderr);
}

#[tokio::test]
async fn the_other_bugs_show_in_the_controllers_metrics() {
    let Some(fx) = sim("others", WidgetBug::Error).await else {
        return;
    };
    // error: every reconcile fails and is retried with back-off.
    wait_metric(
        &fx,
        "workqueue_retries_total{controller=\"widget\",name=\"widget\"}",
        5.0,
    )
    .await;
    wait_metric(
        &fx,
        "controller_runtime_reconcile_errors_total{controller=\"widget\"}",
        5.0,
    )
    .await;
    // slow: the worker sits in long reconciles while Widgets queue up behind it.
    let body = fx.file("slow.json", r#"{"mode": "slow"}"#);
    fx.ok(&["replace", "--raw", "/sim/widget-bug", "-f", &body])
        .await;
    wait_metric(
        &fx,
        "workqueue_longest_running_processor_seconds{controller=\"widget\",name=\"widget\"}",
        1.0,
    )
    .await;
    wait_metric(
        &fx,
        "workqueue_depth{controller=\"widget\",name=\"widget\",priority=\"0\"}",
        1.0,
    )
    .await;
    // conflict: a second manager fights for data.color; stale updates meet 409s.
    const CONFLICTS: &str =
        "rest_client_requests_total{code=\"409\",host=\"10.96.0.1:443\",method=\"PUT\"}";
    let before = sample(&metrics(&fx).await.expect("metrics"), CONFLICTS);
    let body = fx.file("conflict.json", r#"{"mode": "conflict"}"#);
    fx.ok(&["replace", "--raw", "/sim/widget-bug", "-f", &body])
        .await;
    wait_metric(&fx, CONFLICTS, before + 1.0).await;
    let out = fx
        .ok(&[
            "get",
            "configmaps",
            "-A",
            "-l",
            "widgets.example.com/name",
            "-o",
            "json",
            "--show-managed-fields",
        ])
        .await;
    let configs: Value = serde_json::from_str(&out).expect("json");
    let managers: Vec<&str> = configs["items"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| {
            c["metadata"]["managedFields"]
                .as_array()
                .into_iter()
                .flatten()
        })
        .filter_map(|e| e["manager"].as_str())
        .collect();
    assert!(managers.contains(&"widget-tuner"), "{managers:?}");
}
