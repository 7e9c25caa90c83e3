//! `kscope metrics` against the sim's demo Widget controller: its queue read through the pod
//! proxy, rising while the slow controller falls behind, sane numbers on the healthy one, and
//! a plain message for a pod that is not running.

use std::time::{Duration, Instant};

use kscope_sim::{SimConfig, WidgetBug};
use serde_json::Value;

use crate::common::cli::kscope;
use crate::common::kubectl::Kubectl;

const CONVERGE: Duration = Duration::from_secs(90);

pub(crate) async fn sim(name: &str, bug: WidgetBug) -> Option<Kubectl> {
    let config = SimConfig::with_size(40, 3, 2)
        .widget_controller(true)
        .widget_bug(bug);
    let fx = Kubectl::start_with(name, config).await?;
    fx.ok(&[
        "rollout",
        "status",
        "deploy/widget-controller",
        "-n",
        "widget-system",
        "--timeout=90s",
    ])
    .await;
    // The pod runs before the controller in it listens: wait until its metrics are served.
    let deadline = Instant::now() + CONVERGE;
    loop {
        let (ok, _, stderr) =
            metrics(&fx, "deployment/widget-controller", "widget-system", "0s").await;
        if ok {
            break;
        }
        assert!(Instant::now() < deadline, "never served metrics: {stderr}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    Some(fx)
}

/// `kscope metrics TARGET -n NS --for FOR -o json`: (success, the report, stderr).
pub(crate) async fn metrics(
    fx: &Kubectl,
    target: &str,
    ns: &str,
    over: &str,
) -> (bool, Value, String) {
    let kubeconfig = fx.dir.join("kubeconfig");
    let out = kscope(
        &fx.dir,
        &[
            "metrics",
            target,
            "-n",
            ns,
            "--kubeconfig",
            &kubeconfig.to_string_lossy(),
            "--for",
            over,
            "-o",
            "json",
        ],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.success(), report, stderr)
}

/// Five new Widgets in one apply: five new keys the controller's queue must take.
fn widgets(batch: usize) -> String {
    (0..5)
        .map(|i| {
            format!(
                "apiVersion: example.com/v1\nkind: Widget\nmetadata: {{name: w{batch}-{i}, namespace: default}}\nspec: {{size: small}}\n"
            )
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

#[tokio::test]
async fn the_slow_controllers_queue_depth_rises_between_two_scrapes() {
    let Some(fx) = sim("metrics-slow", WidgetBug::Slow).await else {
        return;
    };
    // While kscope reads the queue twice, Widgets keep arriving faster than the one worker
    // (seconds per reconcile) takes them.
    let reading = metrics(&fx, "deployment/widget-controller", "widget-system", "6s");
    tokio::pin!(reading);
    let mut batch = 0;
    let (ok, report, stderr) = loop {
        tokio::select! {
            done = &mut reading => break done,
            () = async {
                let path = fx.file(&format!("w{batch}.yaml"), &widgets(batch));
                fx.ok(&["apply", "-f", &path]).await;
            } => batch += 1,
        }
    };
    assert!(ok, "{stderr}");
    assert!(
        batch >= 2,
        "only {batch} batches were created during the scrapes"
    );
    let before = report["rates"]["depth_before"]
        .as_f64()
        .expect("depth before");
    let after = report["rates"]["depth_after"]
        .as_f64()
        .expect("depth after");
    assert!(after > before, "depth {before} -> {after}: {report:#}");
    assert!(
        report["after"]["depth_by_priority"]["0"].is_number(),
        "the priority label is read: {report:#}"
    );
    assert_eq!(report["namespace"], "widget-system");
    assert_eq!(report["port"], "8080", "the container port named metrics");
}

#[tokio::test]
async fn the_healthy_controllers_numbers_are_sane() {
    let Some(fx) = sim("metrics-healthy", WidgetBug::None).await else {
        return;
    };
    // Wait until it has reconciled something, then read it by its pod's own name.
    let pod = fx
        .ok(&["get", "pods", "-n", "widget-system", "-o", "name"])
        .await
        .lines()
        .next()
        .expect("a controller pod")
        .to_string();
    let deadline = Instant::now() + CONVERGE;
    let report = loop {
        let (ok, report, stderr) = metrics(&fx, &pod, "widget-system", "1s").await;
        assert!(ok, "{stderr}");
        let success = report["after"]["reconciles_by_result"]["success"]
            .as_f64()
            .unwrap_or(0.0);
        if success > 0.0 {
            break report;
        }
        assert!(Instant::now() < deadline, "never reconciled: {report:#}");
    };
    let after = &report["after"];
    let rates = &report["rates"];
    // A healthy controller mostly succeeds (a start-up conflict or two may fail and retry),
    // and its error counters agree with each other.
    let success = after["reconciles_by_result"]["success"]
        .as_f64()
        .expect("success");
    let errors = after["reconciles_by_result"]["error"]
        .as_f64()
        .expect("error");
    assert!(errors < success, "{report:#}");
    assert_eq!(after["reconcile_errors_total"], errors, "{report:#}");
    assert_eq!(after["max_concurrent_reconciles"], 1.0, "{report:#}");
    let active = after["active_workers"].as_f64().expect("active workers");
    assert!((0.0..=1.0).contains(&active), "{report:#}");
    assert!(rates["seconds"].as_f64().expect("seconds") >= 1.0);
    for rate in ["adds_per_second", "retries_per_second"] {
        let r = rates[rate].as_f64().expect(rate);
        assert!(r >= 0.0 && r.is_finite(), "{rate}: {report:#}");
    }
    assert_eq!(rates["throttled"], 0.0, "{report:#}");
    assert!(
        after["raw"]
            .as_array()
            .expect("raw")
            .iter()
            .any(|r| r["name"] == "process_start_time_seconds"),
        "families kscope gives no meaning are listed raw: {report:#}"
    );
}

#[tokio::test]
async fn a_pending_pod_is_said_plainly() {
    let Some(fx) = sim("metrics-pending", WidgetBug::None).await else {
        return;
    };
    fx.ok(&[
        "run",
        "stuck",
        "--image=registry.k8s.io/pause:3.10",
        "--port=8080",
        r#"--overrides={"spec":{"nodeSelector":{"kscope.test/no-such-node":"true"}}}"#,
    ])
    .await;
    let (ok, _, stderr) = metrics(&fx, "pod/stuck", "default", "1s").await;
    assert!(!ok, "a pod that is not running exits non-zero");
    assert!(
        stderr.contains("pod default/stuck is Pending: its container is not running"),
        "{stderr}"
    );
    // A workload that is not there is named.
    let (ok, _, stderr) = metrics(&fx, "deployment/nothing", "default", "1s").await;
    assert!(!ok);
    assert!(stderr.contains("not found"), "{stderr}");
}
