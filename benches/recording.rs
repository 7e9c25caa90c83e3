//! Recording throughput (events/s through `record::format::Writer`) and bytes per event on
//! disk, for pod status churn at two zstd levels, so that the level the recorder writes at is
//! chosen by measurement (docs/benchmarks.md, issue #36: ≥ 50,000 events/s, ≤ 100 bytes per
//! event). Pod status churn: 2,000 pods of a few KB each, MODIFIED in turn, each change a
//! new resourceVersion, a restart count, a condition's transition time and a container
//! state, as a kubelet's status updates are.
//!
//! Under `cargo test --benches` it runs once as a smoke: every event written reads back.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark that cannot set up fails, with its line"
)]

use std::hint::black_box;
use std::io::Cursor;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use kscope_informers::record::format::{FORMAT_VERSION, Header, Reader, Record, Writer};
use serde_json::json;
use serde_json::value::RawValue;

const PODS: usize = 2_000;
const EVENTS: usize = 20_000;
/// zstd's fastest ordinary level and its default.
const LEVELS: [i32; 2] = [1, 3];

fn header() -> Header {
    Header {
        format_version: FORMAT_VERSION,
        kscope_version: "bench".into(),
        context: None,
        server: "https://127.0.0.1:6443".into(),
        kinds: vec!["pods".into()],
        namespace: None,
        start_time: "2026-01-01T00:00:00Z".into(),
    }
}

/// Pod `i` at resourceVersion `rv`, after `restarts` restarts: the shape a Deployment's pod
/// has on a real cluster (labels, owner, managedFields, one container with probes, status).
fn pod(i: usize, rv: u64, restarts: u64) -> Box<RawValue> {
    let ns = format!("team-{}", i % 20);
    let name = format!("checkout-{:08x}-{:05x}", i / 10, i * 7919);
    let at = format!(
        "2026-01-01T{:02}:{:02}:{:02}Z",
        (rv / 3600) % 24,
        (rv / 60) % 60,
        rv % 60
    );
    let ready = restarts.is_multiple_of(2);
    let ready_status = if ready { "True" } else { "False" };
    let object = json!({
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {
            "name": name, "namespace": ns, "uid": format!("{:08x}-7d1c-4b2a-9f3e-{:012x}", i, i * 31),
            "resourceVersion": rv.to_string(), "generation": 1,
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {"app": "checkout", "pod-template-hash": format!("{:08x}", i / 10), "team": ns},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "name": format!("checkout-{:08x}", i / 10), "uid": format!("{:08x}-aaaa-bbbb-cccc-{:012x}", i / 10, i),
                "controller": true, "blockOwnerDeletion": true}],
            "managedFields": [
                {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
                 "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}},
                   "f:ownerReferences": {".": {}}}, "f:spec": {"f:containers": {}}}},
                {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": at,
                 "fieldsType": "FieldsV1", "subresource": "status",
                 "fieldsV1": {"f:status": {"f:conditions": {}, "f:containerStatuses": {}, "f:podIP": {}}}}
            ]
        },
        "spec": {
            "nodeName": format!("node-{}", i % 50), "serviceAccountName": "default",
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
            "containers": [{
                "name": "app", "image": "registry.example.com/checkout:v1.42.0",
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10},
                "livenessProbe": {"httpGet": {"path": "/livez", "port": 8080}, "periodSeconds": 10},
                "terminationMessagePath": "/dev/termination-log", "imagePullPolicy": "IfNotPresent"
            }],
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            ]
        },
        "status": {
            "phase": "Running", "qosClass": "Burstable",
            "hostIP": format!("10.0.{}.{}", i % 50, 10), "podIP": format!("10.244.{}.{}", i / 250, i % 250),
            "startTime": "2026-01-01T00:00:00Z",
            "conditions": [
                {"type": "Initialized", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"},
                {"type": "Ready", "status": ready_status, "lastTransitionTime": at},
                {"type": "ContainersReady", "status": ready_status, "lastTransitionTime": at},
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
            ],
            "containerStatuses": [{
                "name": "app", "ready": ready, "restartCount": restarts, "started": true,
                "image": "registry.example.com/checkout:v1.42.0",
                "imageID": "registry.example.com/checkout@sha256:4f2a9c0d7e1b3a5c6d8e9f0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4",
                "containerID": format!("containerd://{:064x}", rv),
                "state": {"running": {"startedAt": at}},
                "lastState": if restarts == 0 { json!({}) } else {
                    json!({"terminated": {"exitCode": 137, "reason": "OOMKilled", "finishedAt": at}})
                }
            }]
        }
    });
    RawValue::from_string(object.to_string()).unwrap()
}

/// `EVENTS` MODIFIED events of pod status churn, the pods taken in turn, 1 ms apart.
fn churn() -> Vec<Record> {
    (0..EVENTS)
        .map(|n| {
            let rv = 1_000 + n as u64;
            Record::Event {
                kind: "pods".into(),
                at: 1_767_225_600_000_000 + n as i64 * 1_000,
                event_type: "MODIFIED".into(),
                resource_version: Some(rv.to_string()),
                object: pod(n % PODS, rv, (n / PODS) as u64),
            }
        })
        .collect()
}

fn write(events: &[Record], level: i32) -> Vec<u8> {
    let mut writer = Writer::with_level(Vec::new(), &header(), level).unwrap();
    for event in events {
        writer.append(event).unwrap();
    }
    writer.finish().unwrap()
}

fn bench(c: &mut Criterion) {
    let events = churn();
    let raw: usize = events
        .iter()
        .map(|e| match e {
            Record::Event { object, .. } => object.get().len(),
            _ => 0,
        })
        .sum();
    for level in LEVELS {
        let file = write(&events, level);
        let mut reader = Reader::new(Cursor::new(&file)).unwrap();
        let mut read = 0;
        while let Some((_, records)) = reader.next_block().unwrap() {
            read += records.len();
        }
        assert_eq!(read, events.len(), "level {level}: every event reads back");
        println!(
            "recording/level {level}: {} bytes for {} events of {} raw bytes each: {:.1} bytes per event",
            file.len(),
            events.len(),
            raw / events.len(),
            file.len() as f64 / events.len() as f64,
        );
    }

    let mut group = c.benchmark_group("recording");
    group.throughput(Throughput::Elements(EVENTS as u64));
    group.sample_size(10);
    for level in LEVELS {
        group.bench_function(format!("pod status churn, zstd level {level}"), |b| {
            b.iter_batched(
                || Writer::with_level(Vec::new(), &header(), level).unwrap(),
                |mut writer| {
                    for event in &events {
                        writer.append(event).unwrap();
                    }
                    black_box(writer.finish().unwrap())
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
