//! The controller's /metrics: its workqueue's and reconciler's numbers in the Prometheus
//! text format (0.0.4), under the names and labels controller-runtime registers. The queue's
//! depth carries the `priority` label of controller-runtime's priority queue (every item
//! here at the default priority, 0), and client-go's `rest_client_requests_total` shows the
//! writes and their 409s.

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

use kscope_informers::workqueue::{Histogram, RateLimitingQueue};

/// The controller's name in its metrics' labels.
const CONTROLLER: &str = "widget";
/// The API server as the controller's client reaches it: the `kubernetes` Service.
const API_HOST: &str = "10.96.0.1:443";

/// What the controller's /metrics reads: the running controller process's numbers.
#[derive(Default)]
pub(crate) struct WidgetMetrics {
    pub(super) process: Mutex<Option<Arc<ProcessMetrics>>>,
}

/// One run of the controller, in one pod: its numbers start at zero, as a restarted
/// process's do.
pub(super) struct ProcessMetrics {
    /// The pod it runs in: only that pod's port serves these.
    pub(super) pod_uid: String,
    /// When it started, in seconds since the Unix epoch (`process_start_time_seconds`).
    pub(super) started: f64,
    pub(super) queue: RateLimitingQueue<String>,
    pub(super) success: AtomicU64,
    pub(super) errors: AtomicU64,
    pub(super) reconcile_time: Mutex<Histogram>,
    pub(super) active_workers: AtomicU64,
    /// The controller's writes the API server took (200) and refused as stale (409).
    pub(super) writes: AtomicU64,
    pub(super) conflicts: AtomicU64,
}

impl WidgetMetrics {
    /// Whether the controller runs (in some pod).
    pub(crate) fn runs(&self) -> bool {
        self.process.lock().is_some()
    }

    /// The numbers of the controller running in the pod `pod_uid`, if one runs there.
    fn of(&self, pod_uid: &str) -> Option<Arc<ProcessMetrics>> {
        self.process
            .lock()
            .as_ref()
            .filter(|p| p.pod_uid == pod_uid)
            .cloned()
    }
}

/// The exposition of the controller running in the pod `pod_uid`, or `None` if none runs
/// there (nothing listens on the port).
pub(crate) fn render(metrics: &WidgetMetrics, pod_uid: &str) -> Option<String> {
    let metrics = metrics.of(pod_uid)?;
    let queue = metrics.queue.metrics();
    let queue_labels = format!("controller=\"{CONTROLLER}\",name=\"{CONTROLLER}\"");
    let labels = format!("controller=\"{CONTROLLER}\"");
    let mut text = String::new();
    let mut add = |name: &str, kind: &str, help: &str, samples: &[String]| {
        let _ = writeln!(text, "# HELP {name} {help}");
        let _ = writeln!(text, "# TYPE {name} {kind}");
        for s in samples {
            let _ = writeln!(text, "{s}");
        }
    };
    add(
        "controller_runtime_active_workers",
        "gauge",
        "Number of currently used workers per controller",
        &[format!(
            "controller_runtime_active_workers{{{labels}}} {}",
            metrics.active_workers.load(Ordering::Relaxed)
        )],
    );
    add(
        "controller_runtime_max_concurrent_reconciles",
        "gauge",
        "Maximum number of concurrent reconciles per controller",
        &[format!(
            "controller_runtime_max_concurrent_reconciles{{{labels}}} 1"
        )],
    );
    let success = metrics.success.load(Ordering::Relaxed);
    let errors = metrics.errors.load(Ordering::Relaxed);
    add(
        "controller_runtime_reconcile_errors_total",
        "counter",
        "Total number of reconciliation errors per controller",
        &[format!(
            "controller_runtime_reconcile_errors_total{{{labels}}} {errors}"
        )],
    );
    add(
        "controller_runtime_reconcile_time_seconds",
        "histogram",
        "Length of time per reconciliation per controller",
        &histogram(
            "controller_runtime_reconcile_time_seconds",
            &labels,
            &metrics.reconcile_time.lock(),
        ),
    );
    add(
        "controller_runtime_reconcile_total",
        "counter",
        "Total number of reconciliations per controller",
        &[
            format!("controller_runtime_reconcile_total{{{labels},result=\"error\"}} {errors}"),
            format!("controller_runtime_reconcile_total{{{labels},result=\"requeue\"}} 0"),
            format!("controller_runtime_reconcile_total{{{labels},result=\"requeue_after\"}} 0"),
            format!("controller_runtime_reconcile_total{{{labels},result=\"success\"}} {success}"),
        ],
    );
    add(
        "process_start_time_seconds",
        "gauge",
        "Start time of the process since unix epoch in seconds.",
        &[format!(
            "process_start_time_seconds {}",
            number(metrics.started)
        )],
    );
    add(
        "rest_client_requests_total",
        "counter",
        "Number of HTTP requests, partitioned by status code, method, and host.",
        &[
            format!(
                "rest_client_requests_total{{code=\"200\",host=\"{API_HOST}\",method=\"PUT\"}} {}",
                metrics.writes.load(Ordering::Relaxed)
            ),
            format!(
                "rest_client_requests_total{{code=\"409\",host=\"{API_HOST}\",method=\"PUT\"}} {}",
                metrics.conflicts.load(Ordering::Relaxed)
            ),
        ],
    );
    add(
        "workqueue_adds_total",
        "counter",
        "Total number of adds handled by workqueue",
        &[format!(
            "workqueue_adds_total{{{queue_labels}}} {}",
            queue.adds
        )],
    );
    add(
        "workqueue_depth",
        "gauge",
        "Current depth of workqueue",
        &[format!(
            "workqueue_depth{{{queue_labels},priority=\"0\"}} {}",
            queue.depth
        )],
    );
    add(
        "workqueue_longest_running_processor_seconds",
        "gauge",
        "How many seconds has the longest running processor for workqueue been running.",
        &[format!(
            "workqueue_longest_running_processor_seconds{{{queue_labels}}} {}",
            number(queue.longest_running_processor_seconds)
        )],
    );
    add(
        "workqueue_queue_duration_seconds",
        "histogram",
        "How long in seconds an item stays in workqueue before being requested",
        &histogram(
            "workqueue_queue_duration_seconds",
            &queue_labels,
            &queue.queue_latency,
        ),
    );
    add(
        "workqueue_retries_total",
        "counter",
        "Total number of retries handled by workqueue",
        &[format!(
            "workqueue_retries_total{{{queue_labels}}} {}",
            queue.retries
        )],
    );
    add(
        "workqueue_unfinished_work_seconds",
        "gauge",
        "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
        &[format!(
            "workqueue_unfinished_work_seconds{{{queue_labels}}} {}",
            number(queue.unfinished_work_seconds)
        )],
    );
    add(
        "workqueue_work_duration_seconds",
        "histogram",
        "How long in seconds processing an item from workqueue takes.",
        &histogram(
            "workqueue_work_duration_seconds",
            &queue_labels,
            &queue.work_duration,
        ),
    );
    Some(text)
}

/// A histogram's `_bucket`, `_sum` and `_count` samples.
fn histogram(name: &str, labels: &str, h: &Histogram) -> Vec<String> {
    let mut samples: Vec<String> = h
        .buckets()
        .map(|(bound, count)| {
            format!(
                "{name}_bucket{{{labels},le=\"{}\"}} {count}",
                bound_label(bound)
            )
        })
        .collect();
    samples.push(format!("{name}_sum{{{labels}}} {}", number(h.sum())));
    samples.push(format!("{name}_count{{{labels}}} {}", h.count()));
    samples
}

/// A bucket bound as Go's Prometheus client prints it: `1e-08`, `0.001`, `1`, `+Inf`.
fn bound_label(bound: f64) -> String {
    if bound.is_infinite() {
        return "+Inf".to_string();
    }
    if bound < 1e-4 {
        let exponent = bound.log10().round() as i32;
        return format!("1e-{:02}", -exponent);
    }
    number(bound)
}

/// A sample value: integers without a fraction, as the Go client prints them.
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_print_as_the_go_client_does() {
        assert_eq!(bound_label(1e-8), "1e-08");
        assert_eq!(bound_label(1e-3), "0.001");
        assert_eq!(bound_label(1.0), "1");
        assert_eq!(bound_label(10.0), "10");
        assert_eq!(bound_label(f64::INFINITY), "+Inf");
        assert_eq!(number(0.25), "0.25");
    }
}
