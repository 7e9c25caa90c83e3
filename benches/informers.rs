//! Informer core at the scale of the Kubernetes per-cluster limit: 150,000 objects with three
//! indexes (namespace, node, label app), and a fourth (`phase`-like, sets of 45,000+ keys) for
//! deletes and re-adds. Targets (2 cores): by_index of ~1,000 keys < 50 µs, Indexer updates
//! ≥ 1,000,000/s, DeltaFIFO add+pop ≥ 500,000/s.
//!
//! `pipeline_churn`: the churn a whole informer absorbs, per FIFO, with no server to wait
//! on. 150,000 realistic pods (the fixture's, renamed) are listed from memory; each sample
//! then streams 10,000 MODIFIED watch lines through the real decode, Reflector, FIFO, store
//! with the 5 default indexes and one handler, and ends when the handler has seen them all.
//! The scale bench's churn ladder cannot rank the FIFOs: the sim writes slower than any of
//! them reads.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark that cannot set up fails, with its line"
)]

use std::borrow::Cow;
use std::hint::black_box;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use kscope_informers::delta_fifo::{DeltaFifo, ReflectorStore};
use kscope_informers::indexer::{IndexFunc, IndexerWriter, index_func};
use kscope_informers::lister_watcher::{
    ListPage, ListParams, ListWatchError, ListerWatcher, WatchParams, WatchStream,
};
use kscope_informers::object::Object;
use smallvec::smallvec;

const PODS: usize = 150_000;
const APPS: usize = 150;
const NODES: usize = 500;
const NAMESPACES: usize = 50;

/// Shaped like a compact pod projection: identity plus the fields the indexes read.
struct BenchPod {
    namespace: String,
    name: String,
    resource_version: String,
    app: String,
    node: String,
}

impl Object for BenchPod {
    fn namespace(&self) -> Option<&str> {
        Some(&self.namespace)
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn resource_version(&self) -> Option<&str> {
        Some(&self.resource_version)
    }
}

fn pod(i: usize, rv: usize, app_shift: usize) -> Arc<BenchPod> {
    Arc::new(BenchPod {
        namespace: format!("team-{}", i % NAMESPACES),
        name: format!("web-{i:06}-7f9c8d6b5-x2k4p"),
        resource_version: rv.to_string(),
        app: format!("app-{}", (i + app_shift) % APPS),
        node: format!("node-{:04}", i % NODES),
    })
}

fn indexes() -> Vec<(&'static str, IndexFunc<BenchPod>)> {
    vec![
        (
            "namespace",
            index_func(|p: &BenchPod| Ok(smallvec![Cow::Borrowed(p.namespace.as_str())])),
        ),
        (
            "node",
            index_func(|p: &BenchPod| Ok(smallvec![Cow::Borrowed(p.node.as_str())])),
        ),
        (
            "app",
            index_func(|p: &BenchPod| Ok(smallvec![Cow::Borrowed(p.app.as_str())])),
        ),
    ]
}

fn populated() -> IndexerWriter<BenchPod> {
    let indexer = IndexerWriter::new(indexes()).expect("distinct index names");
    for i in 0..PODS {
        indexer.add(pod(i, i, 0)).expect("named pod");
    }
    indexer
}

fn indexer_benches(c: &mut Criterion) {
    let indexer = populated();
    assert_eq!(
        indexer.index_keys("app", "app-7").unwrap().len(),
        PODS / APPS
    );

    let mut group = c.benchmark_group("indexer_150k");
    group.bench_function("index_keys_1000", |b| {
        b.iter(|| black_box(indexer.index_keys("app", black_box("app-7")).unwrap()))
    });
    group.bench_function("by_index_1000_objects", |b| {
        b.iter(|| black_box(indexer.by_index("app", black_box("app-7")).unwrap()))
    });

    // Updates as a watch delivers them: most keep their index values (status changes), some
    // move (relabels, rescheduling).
    let same_values: Vec<_> = (0..PODS).map(|i| pod(i, PODS + i, 0)).collect();
    let moved_values: Vec<_> = (0..PODS).map(|i| pod(i, 2 * PODS + i, 1)).collect();
    group.throughput(Throughput::Elements(10_000));
    let mut next = 0usize;
    group.bench_function("update_unchanged_index_values", |b| {
        b.iter(|| {
            for _ in 0..10_000 {
                indexer.update(same_values[next % PODS].clone()).unwrap();
                next += 1;
            }
        })
    });
    let mut flip = 0usize;
    group.bench_function("update_moving_app_index_value", |b| {
        b.iter(|| {
            for _ in 0..10_000 {
                let source = if (flip / PODS).is_multiple_of(2) {
                    &moved_values
                } else {
                    &same_values
                };
                indexer.update(source[flip % PODS].clone()).unwrap();
                flip += 1;
            }
        })
    });
    group.finish();

    // Pods deleted and created again under the same names, as a rollout does: every index
    // set is left and joined, and one index (like `phase`) has sets of 45,000 to 60,000 keys.
    let mut with_phase = indexes();
    with_phase.push((
        "phase",
        index_func(|p: &BenchPod| {
            // The last digit of the pod's number: sets of 60,000, 45,000 and 45,000 keys.
            let phase = match p.name.as_bytes()[9] % 3 {
                0 => "Running",
                1 => "Pending",
                _ => "Succeeded",
            };
            Ok(smallvec![Cow::Borrowed(phase)])
        }),
    ));
    let indexer = IndexerWriter::new(with_phase).expect("distinct index names");
    for i in 0..PODS {
        indexer.add(pod(i, i, 0)).expect("named pod");
    }
    let recreated: Vec<_> = (0..PODS).map(|i| pod(i, PODS + i, 0)).collect();
    let keys: Vec<String> = recreated
        .iter()
        .map(|p| format!("{}/{}", p.namespace, p.name))
        .collect();
    let mut group = c.benchmark_group("indexer_150k_four_indexes");
    group.throughput(Throughput::Elements(10_000));
    let mut next = 0usize;
    group.bench_function("delete_then_add", |b| {
        b.iter(|| {
            for _ in 0..10_000 {
                indexer.remove(&keys[next % PODS]);
                indexer.add(recreated[next % PODS].clone()).unwrap();
                next += 7919;
            }
        })
    });
    group.finish();
}

fn delta_fifo_benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let objects: Vec<_> = (0..PODS).map(|i| pod(i, i, 0)).collect();
    let mut group = c.benchmark_group("delta_fifo");
    group.throughput(Throughput::Elements(PODS as u64));
    group.bench_function("add_then_pop_150k", |b| {
        b.iter_batched(
            || DeltaFifo::<BenchPod>::new(Some(IndexerWriter::default().reader())),
            |fifo| {
                runtime.block_on(async {
                    for obj in &objects {
                        fifo.add(obj.clone()).unwrap();
                    }
                    for _ in 0..PODS {
                        fifo.pop(|_, deltas, _| black_box(deltas.len()))
                            .await
                            .unwrap();
                    }
                })
            },
            BatchSize::PerIteration,
        )
    });
    group.bench_function("replace_150k_into_known_150k", |b| {
        let known = populated();
        b.iter_batched(
            || DeltaFifo::new(Some(known.clone())),
            |fifo| fifo.replace(objects.clone(), "1").unwrap(),
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

/// A server held in memory: the list is `pods`, the one watch the lines sent on `lines`
/// (a later watch waits forever, as an idle one would).
struct ReplayServer {
    pods: Vec<Arc<kscope_resources::Pod>>,
    lines: parking_lot::Mutex<Option<tokio::sync::mpsc::Receiver<bytes::Bytes>>>,
}

impl ListerWatcher<kscope_resources::Pod> for ReplayServer {
    async fn list(
        &self,
        _: &ListParams,
    ) -> Result<ListPage<kscope_resources::Pod>, ListWatchError> {
        Ok(ListPage {
            items: self.pods.clone(),
            resource_version: "1".into(),
            continue_token: None,
            malformed: Vec::new(),
        })
    }

    async fn watch(
        &self,
        _: &WatchParams,
    ) -> Result<WatchStream<kscope_resources::Pod>, ListWatchError> {
        use futures::StreamExt;
        let Some(lines) = self.lines.lock().take() else {
            return Ok(futures::stream::pending().boxed());
        };
        Ok(futures::stream::unfold(lines, |mut lines| async move {
            let line = lines.recv().await?;
            Some((kscope_client::wire::decode_watch_line(&line), lines))
        })
        .boxed())
    }
}

/// The realistic fixture as pod `i` of 150,000 at resourceVersion `rv`, one watch line.
fn pod_line(fixture: &serde_json::Value, i: usize, rv: usize) -> bytes::Bytes {
    let mut pod = fixture.clone();
    let meta = &mut pod["metadata"];
    meta["name"] = format!("checkout-api-7d9f8c6b5d-{i:06}").into();
    meta["namespace"] = format!("team-{}", i % NAMESPACES).into();
    meta["uid"] = format!("3f1c2a9e-8b7d-4c6e-9a1f-{i:012}").into();
    meta["resourceVersion"] = rv.to_string().into();
    pod["spec"]["nodeName"] = format!("node-{:04}", i % NODES).into();
    let mut line =
        serde_json::to_vec(&serde_json::json!({"type": "MODIFIED", "object": pod})).unwrap();
    line.push(b'\n');
    line.into()
}

fn pipeline_churn_benches(c: &mut Criterion) {
    use futures::StreamExt;
    use kscope_index_views::definitions::{default_index_definitions, index_funcs};
    use kscope_informers::fifo::FifoKind;
    use kscope_informers::reflector::InitialListMode;
    use kscope_informers::running::{InformerConfig, RunningInformer};
    use kscope_resources::Pod;

    const BATCH: usize = 10_000;
    let fixture: serde_json::Value = serde_json::from_slice(
        &std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/pod-realistic.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let pods: Vec<Arc<Pod>> = (0..PODS)
        .map(|i| {
            let line = pod_line(&fixture, i, 1);
            match kscope_client::wire::decode_watch_line::<Pod>(&line)
                .unwrap()
                .event
            {
                kscope_informers::lister_watcher::WatchEvent::Modified(pod) => pod,
                _ => unreachable!("a MODIFIED line"),
            }
        })
        .collect();
    // The lines of one sample, 10,000 pods spread over the store, at resourceVersions after
    // `from`: made before the sample's clock starts.
    let lines = |from: usize| -> Vec<bytes::Bytes> {
        (0..BATCH)
            .map(|i| pod_line(&fixture, (i * 15) % PODS, from + i))
            .collect()
    };
    let mut next_rv = 2;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut group = c.benchmark_group("pipeline_churn_150k");
    group.throughput(Throughput::Elements(BATCH as u64));
    group.sample_size(10);
    for fifo in [FifoKind::Classic, FifoKind::Real, FifoKind::Atomic] {
        let (feed, watched) = tokio::sync::mpsc::channel(1024);
        let server = ReplayServer {
            pods: pods.clone(),
            lines: parking_lot::Mutex::new(Some(watched)),
        };
        let mut config = InformerConfig::new("pods");
        config.fifo = fifo;
        config.initial_list = InitialListMode::List;
        let (informer, mut handler) = runtime.block_on(async {
            let writer =
                IndexerWriter::new(index_funcs::<Pod>(&default_index_definitions())).unwrap();
            let informer = RunningInformer::start(config, server, writer);
            let mut handler = informer.informer().add_event_handler();
            informer.wait_for_sync(|_| false).await.unwrap();
            for _ in 0..PODS {
                handler.next().await.unwrap();
            }
            (informer, handler)
        });
        group.bench_function(format!("{fifo}_modified"), |b| {
            b.iter_custom(|iters| {
                let mut took = std::time::Duration::ZERO;
                for _ in 0..iters {
                    let lines = lines(next_rv);
                    next_rv += BATCH;
                    runtime.block_on(async {
                        let started = std::time::Instant::now();
                        let send = async {
                            for line in lines {
                                feed.send(line).await.unwrap();
                            }
                        };
                        let seen = async {
                            for _ in 0..BATCH {
                                handler.next().await.unwrap();
                            }
                        };
                        futures::join!(send, seen);
                        took += started.elapsed();
                    });
                }
                took
            });
        });
        drop(informer);
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = indexer_benches, delta_fifo_benches, pipeline_churn_benches
}
criterion_main!(benches);
