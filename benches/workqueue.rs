//! Workqueue throughput: add → get → done cycles over 150,000 distinct `Arc<str>` keys (the
//! Kubernetes per-cluster pod limit), with one worker and with several sharing the queue.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark that cannot set up fails, with its line"
)]

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kscope_informers::workqueue::Queue;

const KEYS: usize = 150_000;

fn keys() -> Vec<Arc<str>> {
    (0..KEYS)
        .map(|i| Arc::from(format!("namespace-{}/pod-{i:06}", i % 50)))
        .collect()
}

fn bench(c: &mut Criterion) {
    let keys = keys();
    let mut group = c.benchmark_group("workqueue");
    group.throughput(Throughput::Elements(KEYS as u64));
    group.sample_size(20);

    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    // One queue reused across iterations: the steady state of a long-lived controller queue.
    let q = Queue::new();
    group.bench_function("1 worker, add all then get+done", |b| {
        b.iter(|| {
            rt.block_on(async {
                for key in &keys {
                    q.add(key.clone());
                }
                for _ in 0..KEYS {
                    if let Some(item) = q.get().await {
                        q.done(black_box(&item));
                    }
                }
            })
        })
    });
    group.bench_function("1 worker, add+get+done per key", |b| {
        b.iter(|| {
            rt.block_on(async {
                for key in &keys {
                    q.add(key.clone());
                    if let Some(item) = q.get().await {
                        q.done(black_box(&item));
                    }
                }
            })
        })
    });

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("runtime");
    for workers in [2, 4] {
        group.bench_function(format!("{workers} workers + 1 producer, drained"), |b| {
            b.iter(|| {
                rt.block_on(async {
                    let q = Queue::new();
                    let handles: Vec<_> = (0..workers)
                        .map(|_| {
                            let q = q.clone();
                            tokio::spawn(async move {
                                while let Some(item) = q.get().await {
                                    q.done(black_box(&item));
                                }
                            })
                        })
                        .collect();
                    for key in &keys {
                        q.add(key.clone());
                    }
                    q.shut_down_with_drain().await;
                    for handle in handles {
                        handle.await.expect("worker");
                    }
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
