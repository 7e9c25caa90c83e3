//! Recording throughput (events/s through `record::format::Writer`) and bytes per event on
//! disk, for pod status churn at two zstd levels, so that the level the recorder writes at is
//! chosen by measurement (docs/benchmarks.md, issue #36: ≥ 50,000 events/s, ≤ 100 bytes per
//! event). Pod status churn: 2,000 pods of a few KB each, MODIFIED in turn, each change a
//! new resourceVersion, a restart count, a condition's transition time and a container
//! state, as a kubelet's status updates are.
//!
//! Then the scale, "an hour": 150,000 such pods listed in pages of 500, and an hour of
//! status churn at 100 changes/s (360,000 events), recorded through the recorder's own
//! `KeyframedWriter` (the store folded, keyframes by its rule) into a file whose size, bytes per
//! event and recording rate (and from it the CPU share at 1,000 events/s) are printed; the
//! time to read it to its end as `kscope replay`/`kscope sim --replay` do (`Timeline::read`);
//! and, measured by criterion, a seek: the state a list answers after moving to a point of
//! the hour, from the nearest checkpoint (< 1 s is the target).
//! `KSCOPE_BENCH_PODS` and `KSCOPE_BENCH_EVENTS` change that scale.
//!
//! Under `cargo test --bench recording` (or `-- --test`) it runs once as a smoke at 2,000 pods and
//! 6,000 events: every event written reads back, and every seek lists what a fold of the
//! recording from its start gives.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark that cannot set up fails, with its line"
)]

use std::hint::black_box;
use std::io::{BufWriter, Cursor};
use std::path::Path;
use std::time::Instant;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use kscope_informers::record::format::{BlockType, FORMAT_VERSION, Header, Reader, Record, Writer};
use kscope_informers::record::keyframed::KeyframedWriter;
use kscope_informers::record::state::State;
use kscope_sim::Timeline;
use serde_json::json;
use serde_json::value::RawValue;

const PODS: usize = 2_000;
const EVENTS: usize = 20_000;
/// zstd's fastest ordinary level and its default.
const LEVELS: [i32; 2] = [1, 3];
/// The hour's start, µs since the epoch; its changes come 10 ms apart (100 changes/s).
const HOUR_START: i64 = 1_767_225_600_000_000;
const CHANGE_EVERY: i64 = 10_000;
const PAGE: usize = 500;

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

/// Whether criterion runs each benchmark once, as a test: it measures only under `--bench`,
/// which `cargo bench` passes and `cargo test --benches` does not.
fn smoke() -> bool {
    !std::env::args().any(|a| a == "--bench") || std::env::args().any(|a| a == "--test")
}

/// Pods and events of the hour: the scale, the smoke's, or the environment's.
fn hour_scale() -> (usize, usize) {
    let knob = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    if smoke() {
        (
            knob("KSCOPE_BENCH_PODS", 2_000),
            knob("KSCOPE_BENCH_EVENTS", 6_000),
        )
    } else {
        (
            knob("KSCOPE_BENCH_PODS", 150_000),
            knob("KSCOPE_BENCH_EVENTS", 360_000),
        )
    }
}

/// The hour's records, one at a time: the list's pages, then the churn.
fn hour_records(pods: usize, events: usize) -> impl Iterator<Item = Record> {
    let pages = (0..pods).step_by(PAGE).map(move |first| Record::List {
        kind: "pods".into(),
        at: HOUR_START,
        requested: String::new(),
        continued: (first > 0).then(|| first.to_string()),
        resource_version: "1000".into(),
        next: (first + PAGE < pods).then(|| (first + PAGE).to_string()),
        items: (first..(first + PAGE).min(pods))
            .map(|i| pod(i, 1_000, 0))
            .collect(),
    });
    let churn = (0..events).map(move |n| {
        let rv = 1_001 + n as u64;
        Record::Event {
            kind: "pods".into(),
            at: HOUR_START + (n as i64 + 1) * CHANGE_EVERY,
            event_type: "MODIFIED".into(),
            resource_version: Some(rv.to_string()),
            // Pods taken 7,919 apart, so a change is rarely its pod's last one's neighbour.
            object: pod((n * 7_919) % pods, rv, (n / pods) as u64 + 1),
        }
    });
    pages.chain(churn)
}

fn raw_len(record: &Record) -> usize {
    match record {
        Record::List { items, .. } => items.iter().map(|i| i.get().len()).sum(),
        Record::Event { object, .. } => object.get().len(),
        _ => 0,
    }
}

/// Records the hour to `path` as `kscope record` writes it; prints its size and rate.
fn record_hour(path: &Path, pods: usize, events: usize) {
    let file = std::fs::File::create(path).unwrap();
    let mut writer = KeyframedWriter::create(BufWriter::new(file), &header()).unwrap();
    let mut generated = std::time::Duration::ZERO;
    let started = Instant::now();
    let mut records = hour_records(pods, events);
    loop {
        let made = Instant::now();
        let Some(record) = records.next() else { break };
        generated += made.elapsed();
        let at = record.at();
        writer.append(&record, raw_len(&record), at).unwrap();
    }
    writer.flush().unwrap();
    let recording = started.elapsed() - generated;
    let bytes = writer.written();
    writer.finish().unwrap();
    let per_event = recording.as_secs_f64() / (events + pods.div_ceil(PAGE)) as f64;
    let mut reader = Reader::new(std::fs::File::open(path).unwrap()).unwrap();
    let (blocks, damage) = reader.index().unwrap();
    assert!(damage.is_none());
    let keyframe_bytes: u64 = blocks
        .iter()
        .filter(|b| b.block_type == BlockType::Keyframe)
        .map(|b| u64::from(b.compressed_len))
        .sum();
    println!(
        "recording/hour: {pods} pods + {events} changes: {bytes} bytes ({:.1} MB, of which \
         keyframes {:.1} MB); {:.1} bytes per change, keyframes and the list included; \
         recorded (store folded, written, keyframes) at {:.0} events/s, so {:.2}% of one core \
         at 1,000 events/s",
        bytes as f64 / 1e6,
        keyframe_bytes as f64 / 1e6,
        bytes as f64 / events.max(1) as f64,
        1.0 / per_event,
        per_event * 1_000.0 * 100.0,
    );
}

/// The state a fold of the records from the start gives at `at`.
fn folded_at(pods: usize, events: usize, at: i64) -> State {
    let mut state = State::default();
    for record in hour_records(pods, events).take_while(|r| r.at() <= at) {
        state.apply(&record);
    }
    state
}

fn bench_hour(c: &mut Criterion) {
    let (pods, events) = hour_scale();
    let path = std::env::temp_dir().join(format!("kscope-bench-hour-{}.ksr", std::process::id()));
    record_hour(&path, pods, events);
    let started = Instant::now();
    let timeline = Timeline::read(&path).unwrap();
    println!(
        "recording/hour: read to its end (Timeline::read, as `kscope replay` starts) in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    std::fs::remove_file(&path).unwrap();
    assert!(timeline.damage.is_none());
    let segments = &timeline.kinds["pods"];
    assert_eq!(segments.len(), 1, "one list, then the churn");
    let segment = &segments[0];
    assert_eq!(segment.steps.len(), events);
    // Points through the hour, the last just before the end (the farthest from a checkpoint
    // is at most one checkpoint interval away, wherever it falls).
    let points: Vec<i64> = (1..=7)
        .map(|k| HOUR_START + (events as i64 * CHANGE_EVERY) * k / 7 - CHANGE_EVERY / 2)
        .collect();
    if smoke() {
        for &at in &points {
            let (objects, rv) = segment.state_after(segment.played_by(at));
            let truth = folded_at(pods, events, at);
            let want = &truth.kinds["pods"];
            assert_eq!(rv.to_string(), want.resource_version);
            assert!(
                objects.len() == want.objects.len()
                    && objects
                        .iter()
                        .zip(&want.objects)
                        .all(|((k, v), (wk, wv))| k == wk && v.get() == wv.get()),
                "the state at {at} is the fold from the start"
            );
        }
    }
    let mut group = c.benchmark_group("recording");
    group.sample_size(10);
    let mut next = 0;
    group.bench_function(
        format!("seek and fold the listed state, {pods} pods, {events} changes"),
        |b| {
            b.iter(|| {
                let at = points[next % points.len()];
                next += 1;
                black_box(segment.state_after(segment.played_by(at)))
            })
        },
    );
    group.finish();
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

criterion_group!(benches, bench, bench_hour);
criterion_main!(benches);
