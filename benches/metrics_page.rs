//! Parsing a controller's /metrics page of 1 MiB (the bound for 1 MB: < 10 ms): many
//! controllers' workqueue and reconcile families, histograms included, as controller-runtime
//! renders them, read into [`kscope_index_views::metrics::Reading`].

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark that cannot set up fails, with its line"
)]

use std::fmt::Write as _;
use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kscope_index_views::metrics::parse;

const BOUNDS: [&str; 11] = [
    "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "+Inf",
];

/// A page of `controllers` controllers' families.
fn page(controllers: usize) -> String {
    let mut text = String::new();
    let family = |text: &mut String, name: &str, kind: &str| {
        let _ = writeln!(text, "# HELP {name} {name}.");
        let _ = writeln!(text, "# TYPE {name} {kind}");
    };
    family(&mut text, "workqueue_depth", "gauge");
    for c in 0..controllers {
        let _ = writeln!(
            text,
            "workqueue_depth{{controller=\"c{c}\",name=\"c{c}\",priority=\"0\"}} {c}"
        );
    }
    for name in ["workqueue_adds_total", "workqueue_retries_total"] {
        family(&mut text, name, "counter");
        for c in 0..controllers {
            let _ = writeln!(
                text,
                "{name}{{controller=\"c{c}\",name=\"c{c}\"}} {}",
                c * 7
            );
        }
    }
    family(&mut text, "controller_runtime_reconcile_total", "counter");
    for c in 0..controllers {
        for result in ["error", "requeue", "requeue_after", "success"] {
            let _ = writeln!(
                text,
                "controller_runtime_reconcile_total{{controller=\"c{c}\",result=\"{result}\"}} {c}"
            );
        }
    }
    for name in [
        "workqueue_queue_duration_seconds",
        "workqueue_work_duration_seconds",
        "controller_runtime_reconcile_time_seconds",
    ] {
        family(&mut text, name, "histogram");
        for c in 0..controllers {
            for (i, le) in BOUNDS.iter().enumerate() {
                let _ = writeln!(
                    text,
                    "{name}_bucket{{controller=\"c{c}\",le=\"{le}\"}} {}",
                    i * c
                );
            }
            let _ = writeln!(text, "{name}_sum{{controller=\"c{c}\"}} {}.5", c);
            let _ = writeln!(text, "{name}_count{{controller=\"c{c}\"}} {}", 10 * c);
        }
    }
    text
}

fn bench(c: &mut Criterion) {
    // The HELP and TYPE lines are written once: the page grows by one controller's lines
    // per controller, to at least a MiB.
    const MIB: usize = 1 << 20;
    let per_controller = page(2).len() - page(1).len();
    let text = page(MIB / per_controller + 1);
    assert!(text.len() >= MIB, "{} bytes", text.len());
    assert!(parse(&text).expect("parses").depth().is_some());
    let mut group = c.benchmark_group("metrics_page");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function(format!("parse {} KB", text.len() / 1024), |b| {
        b.iter(|| parse(black_box(&text)).expect("parses"))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
