//! Ownership tree cost (issue #35, item 4: ≤ 10 ms for any object at 150k objects): stores of
//! Deployments, ReplicaSets and Pods (each Deployment with one ReplicaSet of 13 pods, one
//! Deployment with 2,000 pods) and an empty store of a custom kind, each with the owner-uid
//! index every store gets; then a Deployment's tree down, a pod's chain up, the big
//! Deployment's tree down, and what `x` redraws on a frame after a change: the view's whole
//! rebuild (find the object, its owners up and dependents down, the lines) of a pod and of
//! the big Deployment.
//!
//! `cargo bench --bench tree` runs it at 150,000 objects (`KSCOPE_TREE_OBJECTS` to change);
//! without `--bench` (as under `cargo test --benches`) it is a smoke run on 3,000 objects.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark that cannot set up fails, with its line"
)]

use std::hint::black_box;
use std::sync::Arc;

use criterion::Criterion;
use kscope_index_views::definitions::{default_index_definitions, index_funcs};
use kscope_index_views::ownership::{Forest, StoreOf};
use kscope_informers::indexer::{Indexer, IndexerWriter};
use kscope_resources::{Deployment, GenericObject, Pod, ReplicaSet, decode};
use kscope_ui::effect::ObjectRef;
use kscope_ui::tree::TreeView;
use serde_json::{Value, json};

const PODS_PER_SET: usize = 13;
const BIG_PODS: usize = 2_000;

/// The namespace of family `d`: owners and dependents share one.
fn namespace(d: usize) -> String {
    format!("ns-{}", d % 7)
}

fn meta(ns: &str, name: &str, uid: &str, owner: Option<(&str, &str, &str)>) -> Value {
    let mut m = json!({"name": name, "namespace": ns, "uid": uid,
        "resourceVersion": "1", "labels": {"app": name}});
    if let Some((kind, owner_name, owner_uid)) = owner {
        m["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": kind, "name": owner_name,
            "uid": owner_uid, "controller": true, "blockOwnerDeletion": true}]);
    }
    m
}

/// A workload's wire form; `owner` as (kind, name, uid).
fn workload(
    ns: &str,
    kind: &str,
    name: &str,
    uid: &str,
    owner: Option<(&str, &str, &str)>,
) -> Vec<u8> {
    serde_json::to_vec(
        &json!({"apiVersion": "apps/v1", "kind": kind, "metadata": meta(ns, name, uid, owner),
        "spec": {"replicas": PODS_PER_SET, "selector": {"matchLabels": {"app": name}},
            "template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}},
        "status": {"replicas": PODS_PER_SET, "readyReplicas": PODS_PER_SET}}),
    )
    .unwrap()
}

fn pod(ns: &str, name: &str, uid: &str, owner: (&str, &str, &str)) -> Vec<u8> {
    serde_json::to_vec(
        &json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta(ns, name, uid, Some(owner)),
        "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "nginx:1.27"}]},
        "status": {"phase": "Running", "containerStatuses": [{"name": "app", "ready": true,
            "restartCount": 0, "state": {"running": {}}}]}}),
    )
    .unwrap()
}

fn writer<T: kscope_index_views::columns::TableRow>() -> IndexerWriter<T> {
    IndexerWriter::new(index_funcs::<T>(&default_index_definitions())).unwrap()
}

struct Cluster {
    forest: Forest,
    deployments: Indexer<Deployment>,
    pods: Indexer<Pod>,
}

/// `objects` objects: Deployments, their ReplicaSets and pods, plus the big Deployment.
fn cluster(objects: usize) -> Cluster {
    let deployments = writer::<Deployment>();
    let sets = writer::<ReplicaSet>();
    let pods = writer::<Pod>();
    let per = PODS_PER_SET + 2;
    let count = objects.saturating_sub(BIG_PODS + 2) / per;
    let add_family = |d: usize, pod_count: usize| {
        let ns = namespace(d);
        let (dn, du) = (format!("app-{d}"), format!("d-{d}"));
        let (rn, ru) = (format!("app-{d}-5d8f"), format!("r-{d}"));
        deployments
            .add(Arc::new(
                decode(&workload(&ns, "Deployment", &dn, &du, None)).unwrap(),
            ))
            .unwrap();
        sets.add(Arc::new(
            decode(&workload(
                &ns,
                "ReplicaSet",
                &rn,
                &ru,
                Some(("Deployment", &dn, &du)),
            ))
            .unwrap(),
        ))
        .unwrap();
        for p in 0..pod_count {
            let (pn, pu) = (format!("{rn}-{p}"), format!("p-{d}-{p}"));
            pods.add(Arc::new(
                decode(&pod(&ns, &pn, &pu, ("ReplicaSet", &rn, &ru))).unwrap(),
            ))
            .unwrap();
        }
    };
    for d in 0..count {
        add_family(d, PODS_PER_SET);
    }
    add_family(count, BIG_PODS);
    let widgets = writer::<GenericObject>();
    let mut forest = Forest::new();
    forest.add(Arc::new(StoreOf::new("Deployment", deployments.reader())));
    forest.add(Arc::new(StoreOf::new("ReplicaSet", sets.reader())));
    forest.add(Arc::new(StoreOf::new("Pod", pods.reader())));
    forest.add(Arc::new(StoreOf::new("Widget", widgets.reader())));
    Cluster {
        forest,
        deployments: deployments.reader(),
        pods: pods.reader(),
    }
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let objects = std::env::var("KSCOPE_TREE_OBJECTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if full { 150_000 } else { 3_000 });
    let c = cluster(objects);
    let total = c.deployments.len() * 2 + c.pods.len();
    eprintln!("tree: {total} objects in the stores");
    let middle = c.deployments.len() / 2;
    let deployment_key = format!("{}/app-{middle}", namespace(middle));
    let big = c.deployments.len() - 1;
    let big_key = format!("{}/app-{big}", namespace(big));
    let pod_name = format!("app-{middle}-5d8f-3");
    let pod_key = format!("{}/{pod_name}", namespace(middle));
    let find = |key: &str, kind: &str| {
        let (ns, name) = key.split_once('/').unwrap();
        c.forest.find(kind, Some(ns), name).unwrap()
    };
    let deployment = find(&deployment_key, "Deployment");
    let big_deployment = find(&big_key, "Deployment");
    let pod_node = find(&pod_key, "Pod");
    assert_eq!(
        c.forest.descendants(deployment.clone()).len(),
        PODS_PER_SET + 2
    );
    assert_eq!(c.forest.ancestors(pod_node.clone()).len(), 3);
    assert_eq!(
        c.forest.descendants(big_deployment.clone()).len(),
        BIG_PODS + 2
    );

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group(format!("tree at {total} objects"));
    group.sample_size(20);
    group.bench_function("a Deployment down (1 ReplicaSet, 13 pods)", |b| {
        b.iter(|| black_box(c.forest.descendants(deployment.clone())))
    });
    group.bench_function("a pod up to its Deployment", |b| {
        b.iter(|| black_box(c.forest.ancestors(pod_node.clone())))
    });
    group.bench_function("a Deployment of 2,000 pods down", |b| {
        b.iter(|| black_box(c.forest.descendants(big_deployment.clone())))
    });
    let view_of = |kind: &str, key: &str| {
        let (ns, name) = key.split_once('/').unwrap();
        TreeView::new(ObjectRef {
            kind: kind.into(),
            namespace: Some(ns.into()),
            name: name.into(),
        })
    };
    for (what, kind, key, lines) in [
        ("the view's rebuild of a pod's tree", "Pod", &pod_key, 3),
        (
            "the view's rebuild of the 2,000 pods' Deployment",
            "Deployment",
            &big_key,
            BIG_PODS + 2,
        ),
    ] {
        let mut view = view_of(kind, key);
        view.refresh(&c.forest, (4, 4));
        assert_eq!(view.lines.len(), lines, "{what}");
        group.bench_function(what, |b| {
            b.iter(|| {
                view.refresh(&c.forest, (4, 4));
                black_box(view.lines.len())
            })
        });
    }
    group.finish();
    criterion.final_summary();
}
