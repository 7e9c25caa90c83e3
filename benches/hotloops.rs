//! Hot-loop detection cost: 1,000 synthetic watch events (one second at 1,000 events/s)
//! decoded from JSON and fed to the detector, over 500 pod-sized objects written by a mix of
//! managers: half rewriting their own status timestamp, half answering another manager.
//! The time per 1,000 events is the share of a core the detector takes at 1,000 events/s
//! (the bound: < 5%). Before measuring, fifteen seconds of that stream must have
//! flagged the managers rewriting their own status (the bound: flagged within 15 s), and
//! not the one answering another.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark that cannot set up fails, with its line"
)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kscope_index_views::hotloops::{EventKind, HotLoopDetector};
use serde_json::json;

const OBJECTS: usize = 500;
const EVENTS: usize = 1_000;

/// The `n`th version of object `i`, written by `manager` at `stamp`.
fn object(i: usize, n: usize, manager: &str) -> Vec<u8> {
    let containers: Vec<_> = (0..3)
        .map(|c| json!({"name": format!("c{c}"), "image": "registry.example.com/app:v1.2.3",
            "ports": [{"containerPort": 8080 + c}], "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}))
        .collect();
    serde_json::to_vec(&json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("pod-{i}"), "namespace": format!("ns-{}", i % 10), "uid": format!("uid-{i}"),
            "resourceVersion": format!("{}", n * OBJECTS + i),
            "labels": {"app": format!("app-{}", i % 20), "tier": "web"},
            "managedFields": [
                {"manager": "kube-controller-manager", "operation": "Update", "time": "2026-01-01T00:00:00Z",
                 "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}, "f:tier": {}}}, "f:spec": {"f:containers": {}}}},
                {"manager": manager, "operation": "Update", "subresource": "status", "time": format!("2026-01-01T00:00:{:02}Z", n % 60),
                 "fieldsV1": {"f:status": {"f:lastReconcileTime": {}, "f:phase": {}}}}
            ]},
        "spec": {"containers": containers, "nodeName": format!("node-{}", i % 20)},
        "status": {"phase": "Running", "lastReconcileTime": format!("2026-01-01T00:00:00.{n:06}Z"),
            "conditions": [{"type": "Ready", "status": "True"}]},
    }))
    .unwrap()
}

/// The manager of the `n`th version of object `i`: the even objects' writer always
/// rewrites what it wrote itself; the odd ones alternate with another manager.
fn manager(i: usize, n: usize) -> &'static str {
    if i.is_multiple_of(2) || n.is_multiple_of(2) {
        "ctl"
    } else {
        "other"
    }
}

/// Fifteen seconds at 1,000 events/s: the self-triggering manager is flagged by then.
fn flags_within_fifteen_seconds() {
    let mut d = HotLoopDetector::new();
    for i in 0..OBJECTS {
        let v = serde_json::from_slice(&object(i, 0, "ctl")).unwrap();
        d.observe("Pod", EventKind::Added, &v, 0);
    }
    let per_object = EVENTS / OBJECTS;
    for second in 0..15 {
        for e in 0..EVENTS {
            let (i, n) = (e % OBJECTS, second * per_object + e / OBJECTS + 1);
            let v: serde_json::Value =
                serde_json::from_slice(&object(i, n, manager(i, n))).unwrap();
            d.observe("Pod", EventKind::Modified, &v, second as u64);
        }
    }
    let loops: Vec<String> = d.report(14).loops.into_iter().map(|l| l.manager).collect();
    assert_eq!(
        loops,
        ["ctl"],
        "flagged within 15 s, and only the self-triggering one"
    );
}

fn bench(c: &mut Criterion) {
    flags_within_fifteen_seconds();
    let adds: Vec<Vec<u8>> = (0..OBJECTS).map(|i| object(i, 0, "ctl")).collect();
    let events: Vec<Vec<u8>> = (0..EVENTS)
        .map(|e| {
            let i = e % OBJECTS;
            let n = e / OBJECTS + 1;
            object(i, n, manager(i, n))
        })
        .collect();
    let mut group = c.benchmark_group("hotloops");
    group.throughput(Throughput::Elements(EVENTS as u64));
    group.sample_size(20);
    group.bench_function("1,000 MODIFIED events, decoded and detected", |b| {
        b.iter_batched(
            || {
                let mut d = HotLoopDetector::new();
                for raw in &adds {
                    let v = serde_json::from_slice(raw).unwrap();
                    d.observe("Pod", EventKind::Added, &v, 0);
                }
                d
            },
            |mut d| {
                for (e, raw) in events.iter().enumerate() {
                    let v: serde_json::Value = serde_json::from_slice(raw).unwrap();
                    d.observe("Pod", EventKind::Modified, &v, (e / 100) as u64);
                }
                black_box(d.report(10))
            },
            criterion::BatchSize::LargeInput,
        );
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
