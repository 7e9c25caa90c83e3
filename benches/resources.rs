//! Decode time and heap held per pod: a full k8s-openapi `Pod` against kscope's projection,
//! both decoded from the realistic fixture. Heap is measured with a counting global allocator
//! (bytes requested and still live after the decode) and printed before the timings.
//!
//! `KSCOPE_DECODE_LOOP=<path>:<count>` decodes the fixture `count` times by one path and exits,
//! for `valgrind --tool=callgrind` (instruction counts repeat on a shared machine; timings do
//! not). The paths are the names of the `decode_pod` and `decode_wire` benchmarks below;
//! `KSCOPE_DECODE_POD=<file>` decodes another pod than the fixture.
//!
//! `decode_pod/projection_3_paths` decodes the pod with three JSONPath field indexes, which
//! read it a second time for only what their paths reach.
//!
//! `decode_generic` decodes a custom resource's Table row of about 3 KB into the generic
//! projection, without field indexes and with JSONPath field indexes (which read the whole
//! object into JSON to evaluate them).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark that cannot set up fails, with its line"
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};

use criterion::{Criterion, criterion_group, criterion_main};
use kscope_client::wire::{decode_list, decode_watch_line};
use kscope_index_views::definitions::{IndexDefinition, IndexSource, decode_fields, path_indexes};
use kscope_index_views::jsonpath::FieldPath;
use kscope_resources::{GenericObject, Pod, decode, decoding_with};

const FIXTURE: &[u8] = include_bytes!("../tests/fixtures/pod-realistic.json");

/// Counts live heap bytes and allocation calls.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

#[allow(unsafe_code)] // A global allocator cannot be written without it.
// SAFETY: forwards every call to the system allocator unchanged; only counts on the side.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs `f`, returning its value, the heap bytes still live afterwards, and allocation calls.
fn measure<T>(f: impl FnOnce() -> T) -> (T, isize, usize) {
    let (live, allocs) = (LIVE.load(Ordering::SeqCst), ALLOCS.load(Ordering::SeqCst));
    let value = f();
    (
        value,
        LIVE.load(Ordering::SeqCst) - live,
        ALLOCS.load(Ordering::SeqCst) - allocs,
    )
}

fn print_memory() {
    let (mut full, full_bytes, full_allocs) = measure(|| {
        Arc::new(serde_json::from_slice::<k8s_openapi::api::core::v1::Pod>(FIXTURE).unwrap())
    });
    let (_, freed, _) = measure(|| {
        if let Some(pod) = Arc::get_mut(&mut full) {
            pod.metadata.managed_fields = None;
        }
    });
    let (pod, pod_bytes, pod_allocs) = measure(|| Arc::new(decode::<Pod>(FIXTURE).unwrap()));
    println!(
        "heap held per pod, decoded from the {}-byte fixture, in an Arc:",
        FIXTURE.len()
    );
    println!(
        "  k8s-openapi Pod: {full_bytes:>6} B ({} B without managedFields), \
         {full_allocs} allocations while decoding",
        full_bytes + freed
    );
    println!(
        "  projection:      {pod_bytes:>6} B ({} B strings + offsets, {} B inline), \
         {pod_allocs} allocations while decoding",
        pod.heap_bytes(),
        std::mem::size_of::<Pod>()
    );
    drop((full, pod));

    let list = format!(
        r#"{{"kind":"PodList","metadata":{{"resourceVersion":"1"}},"items":[{}]}}"#,
        vec![std::str::from_utf8(FIXTURE).unwrap().trim(); 500].join(",")
    );
    let (page, page_bytes, _) = measure(|| decode_list::<Pod>(list.as_bytes()).unwrap());
    println!(
        "  a 500-pod list page holds {} B per pod (Vec<Arc<Pod>>)",
        page_bytes / page.items.len() as isize
    );
}

type PodPath = Box<dyn FnMut(&[u8]) -> Pod>;

/// One decode of the fixture into the projection, by each path a pod can take: `decode` is
/// kscope's own (what a watch event's object goes through).
fn pod_paths() -> Vec<(&'static str, PodPath)> {
    let mut copy = Vec::new();
    let mut copy_with_buffers = Vec::new();
    let mut buffers = simd_json::Buffers::default();
    let fields = pod_path_fields();
    vec![
        ("projection", Box::new(|json| decode::<Pod>(json).unwrap())),
        // With three JSONPath indexes: the pod read a second time for what they reach.
        (
            "projection_3_paths",
            Box::new(move |json| decoding_with(Some(&fields), || decode::<Pod>(json).unwrap())),
        ),
        // The skipping serde Deserializer alone, without serde_json's fallback: the same work as
        // `decode` on a pod it reads.
        (
            "skipping_serde",
            Box::new(|json| kscope_resources::decode::read::<Pod>(json).unwrap()),
        ),
        // The same projection with serde_json reading every byte.
        (
            "projection_reading_everything",
            Box::new(|json| serde_json::from_slice::<Pod>(json).unwrap()),
        ),
        // simd-json parses in place, so each decode copies the (shared, immutable) line first.
        (
            "simd_json",
            Box::new(move |json| {
                copy.clear();
                copy.extend_from_slice(json);
                simd_json::serde::from_slice::<Pod>(&mut copy).unwrap()
            }),
        ),
        (
            "simd_json_reused_buffers",
            Box::new(move |json| {
                copy_with_buffers.clear();
                copy_with_buffers.extend_from_slice(json);
                simd_json::serde::from_slice_with_buffers::<Pod>(
                    &mut copy_with_buffers,
                    &mut buffers,
                )
                .unwrap()
            }),
        ),
    ]
}

/// The JSONPath indexes of `projection_3_paths`: a filter, a multi-valued path, a member.
fn pod_path_fields() -> kscope_resources::FieldIndexes {
    let definitions: Vec<IndexDefinition> = [
        r#".status.conditions[?(@.type=="Ready")].status"#,
        ".spec.containers[*].image",
        ".spec.serviceAccountName",
    ]
    .iter()
    .enumerate()
    .map(|(i, p)| {
        IndexDefinition::new(
            format!("f{i}"),
            IndexSource::Path(FieldPath::parse(p).unwrap()),
        )
    })
    .collect();
    decode_fields(&path_indexes(&definitions))
}

fn watch_line() -> bytes::Bytes {
    let fixture = std::str::from_utf8(FIXTURE).unwrap().trim();
    bytes::Bytes::from(format!(r#"{{"type":"MODIFIED","object":{fixture}}}"#))
}

/// `KSCOPE_DECODE_LOOP=<path>:<count>` (see the module doc).
fn decode_loop(spec: &str) {
    let (path, count) = spec
        .split_once(':')
        .expect("KSCOPE_DECODE_LOOP=<path>:<count>");
    let count: usize = count.parse().expect("a count");
    if path == "watch_line" {
        let line = watch_line();
        for _ in 0..count {
            black_box(decode_watch_line::<Pod>(black_box(&line)).unwrap());
        }
        return;
    }
    // `KSCOPE_DECODE_POD=<file>`: another pod than the fixture (a sim pod, say).
    let pod = std::env::var("KSCOPE_DECODE_POD").map_or_else(
        |_| FIXTURE.to_vec(),
        |path| std::fs::read(path).expect("the pod's file"),
    );
    let (_, mut decode) = pod_paths()
        .into_iter()
        .find(|(name, _)| *name == path)
        .expect("a path named in pod_paths or watch_line");
    for _ in 0..count {
        black_box(decode(black_box(&pod)));
    }
}

fn bench(c: &mut Criterion) {
    if let Ok(spec) = std::env::var("KSCOPE_DECODE_LOOP") {
        decode_loop(&spec);
        std::process::exit(0);
    }
    print_memory();
    let mut group = c.benchmark_group("decode_pod");
    group.bench_function("k8s_openapi_full", |b| {
        b.iter(|| {
            serde_json::from_slice::<k8s_openapi::api::core::v1::Pod>(black_box(FIXTURE)).unwrap()
        })
    });
    for (name, mut decode) in pod_paths() {
        group.bench_function(name, |b| b.iter(|| decode(black_box(FIXTURE))));
    }
    group.finish();

    // The informer's two decode paths end to end: a list page and one watch line.
    let fixture = std::str::from_utf8(FIXTURE).unwrap().trim();
    let list = format!(
        r#"{{"kind":"PodList","metadata":{{"resourceVersion":"1","continue":"x"}},"items":[{}]}}"#,
        vec![fixture; 500].join(",")
    );
    let line = watch_line();
    let mut group = c.benchmark_group("decode_wire");
    group.bench_function("list_page_500_pods", |b| {
        b.iter(|| decode_list::<Pod>(black_box(list.as_bytes())).unwrap())
    });
    group.bench_function("watch_line", |b| {
        b.iter(|| decode_watch_line::<Pod>(black_box(&line)).unwrap())
    });
    group.finish();

    let row = widget_row();
    let paths = |paths: &[&str]| {
        let definitions: Vec<IndexDefinition> = paths
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let path = FieldPath::parse(p).unwrap();
                IndexDefinition::new(format!("f{i}"), IndexSource::Path(path))
            })
            .collect();
        decode_fields(&path_indexes(&definitions))
    };
    let one = paths(&[r#".status.conditions[?(@.type=="Ready")].status"#]);
    let three = paths(&[
        r#".status.conditions[?(@.type=="Ready")].status"#,
        ".spec.size",
        ".spec.items[*].name",
    ]);
    let mut group = c.benchmark_group("decode_generic");
    group.bench_function("widget_row_3kb", |b| {
        b.iter(|| decode::from_slice::<GenericObject>(black_box(row.as_bytes())).unwrap())
    });
    for (name, fields) in [
        ("widget_row_3kb_1_path", &one),
        ("widget_row_3kb_3_paths", &three),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                decoding_with(Some(fields), || {
                    decode::from_slice::<GenericObject>(black_box(row.as_bytes())).unwrap()
                })
            })
        });
    }
    group.finish();
}

/// A Widget's Table row (cells and the whole object) of about 3 KB.
fn widget_row() -> String {
    let items: Vec<String> = (0..24)
        .map(|i| {
            format!(
                r#"{{"name":"item-{i}","value":"{}","weight":{i}}}"#,
                "v".repeat(60)
            )
        })
        .collect();
    let row = format!(
        r#"{{"cells":["w-1","large","True","Running","3d"],"object":{{"apiVersion":"example.com/v1","kind":"Widget",
        "metadata":{{"name":"w-1","namespace":"team-a","uid":"0f8e8a52-2c1b-4f7e-9a55-3b1c2d4e5f60","resourceVersion":"123456",
        "generation":3,"creationTimestamp":"2026-01-01T00:00:00Z","labels":{{"team":"a","app":"widgets"}},
        "annotations":{{"example.com/owner":"someone@example.com"}}}},
        "spec":{{"size":"large","replicas":3,"color":"blue","items":[{}]}},
        "status":{{"phase":"Running","observedGeneration":3,"conditions":[{{"type":"Ready","status":"True",
        "reason":"Reconciled","message":"all good","lastTransitionTime":"2026-01-01T00:00:00Z"}}]}}}}}}"#,
        items.join(",")
    );
    assert!((2500..4000).contains(&row.len()), "{}", row.len());
    row
}

criterion_group!(benches, bench);
criterion_main!(benches);
