//! The demo controller's `error` and `conflict` bugs found by `kscope metrics` (the
//! `hotloop` bug is found by `kscope hotloops` and `:hot`, `slow` by the queue depth rising):
//! failed reconciles retried while the controller errs, 409s between two scrapes while a
//! second manager fights it for a field.

use std::time::{Duration, Instant};

use kscope_sim::WidgetBug;
use serde_json::Value;

use crate::common::kubectl::Kubectl;
use crate::workbench_metrics::{metrics, sim};

/// A hang guard for the waits, not a deadline the test is about.
const BOUND: Duration = Duration::from_secs(90);

const CONTROLLER: &str = "deployment/widget-controller";
const NAMESPACE: &str = "widget-system";

/// `kscope metrics` over `over`, again until its report satisfies `found`, while `meanwhile`
/// runs beside each read.
async fn read_until<F: Future<Output = ()>>(
    fx: &Kubectl,
    what: &str,
    over: &str,
    mut meanwhile: impl FnMut(usize) -> F,
    found: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + BOUND;
    let mut round = 0;
    loop {
        let (reading, ()) =
            tokio::join!(metrics(fx, CONTROLLER, NAMESPACE, over), meanwhile(round));
        let (ok, report, stderr) = reading;
        assert!(ok, "{stderr}");
        if found(&report) {
            return report;
        }
        assert!(Instant::now() < deadline, "{what}: never seen: {report:#}");
        round += 1;
    }
}

#[tokio::test]
async fn metrics_finds_the_erring_controllers_failed_and_retried_reconciles() {
    let Some(fx) = sim("bugs-error", WidgetBug::Error).await else {
        return;
    };
    // New Widgets during each read: fresh keys fail at once, and their first retries come
    // before the back-off grows past the reading.
    let report = read_until(
        &fx,
        "errors and retries",
        "3s",
        |round| {
            let fx = &fx;
            async move {
                let path = fx.file(
                    &format!("w{round}.yaml"),
                    &format!(
                        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {{name: failing-{round}, namespace: default}}\nspec: {{size: small}}\n"
                    ),
                );
                fx.ok(&["apply", "-f", &path]).await;
            }
        },
        |r| {
            r["rates"]["reconciles_per_second_by_result"]["error"]
                .as_f64()
                .unwrap_or(0.0)
                > 0.0
                && r["rates"]["retries_per_second"].as_f64().unwrap_or(0.0) > 0.0
        },
    )
    .await;
    let rates = &report["rates"]["reconciles_per_second_by_result"];
    assert_eq!(
        rates["success"].as_f64().unwrap_or(0.0),
        0.0,
        "every reconcile fails: {report:#}"
    );
    let after = &report["after"];
    assert!(
        after["reconcile_errors_total"].as_f64().unwrap_or(0.0) > 0.0,
        "{report:#}"
    );
}

#[tokio::test]
async fn metrics_finds_the_conflicting_controllers_409s() {
    let Some(fx) = sim("bugs-conflict", WidgetBug::Conflict).await else {
        return;
    };
    let report = read_until(
        &fx,
        "409s between two scrapes",
        "3s",
        |_| async {},
        |r| r["rates"]["conflicts"].as_f64().unwrap_or(0.0) > 0.0,
    )
    .await;
    assert_eq!(report["rates"]["throttled"], 0.0, "{report:#}");
}
