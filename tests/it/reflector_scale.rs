//! Tens of thousands of pods sync into the informer over real HTTP, by the watch-list (the
//! default) and by a paged list, with the protocol's counts checked: pages of 500, or one
//! watch that streams everything. The Kubernetes per-cluster limit, 150,000 pods, is the
//! scale benchmark's (`cargo bench --bench scale`, optimised, beside kube-rs's reflector):
//! in this debug build it took two minutes of CI for what 15,000 pods show as well.

use std::time::{Duration, Instant};

use kscope_client::cluster::{Cluster, NamespaceScope};
use kscope_client::lister_watcher::KubeListerWatcher;
use kscope_index_views::definitions::{default_index_definitions, index_funcs};
use kscope_informers::indexer::IndexerWriter;
use kscope_informers::reflector::{InitialListMode, InitialListStatus};
use kscope_informers::running::{InformerConfig, RunningInformer};
use kscope_resources::{Pod, ResourceKind};
use kscope_sim::{Resource, Sim, SimConfig, SimHandle};

/// Pods in the cluster: 30 pages of 500.
const PODS: usize = 15_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn syncs_15k_pods_with_default_indexes() {
    let sim = Sim::start(SimConfig::with_size(PODS, 50, 10))
        .await
        .expect("sim");
    for mode in [InitialListMode::WatchList, InitialListMode::List] {
        sync_all(&sim, mode).await;
    }
    sim.shutdown().await;
}

async fn sync_all(sim: &SimHandle, mode: InitialListMode) {
    let cluster = Cluster::from_config(sim.kube_config().await.expect("config"), "sim".into())
        .expect("client");
    let lister_watcher = KubeListerWatcher::for_kind(
        &cluster,
        ResourceKind::Pods,
        &NamespaceScope::All,
        None,
        None,
    );
    let indexer = IndexerWriter::new(index_funcs::<Pod>(&default_index_definitions())).unwrap();
    let mut config = InformerConfig::new("pods");
    config.initial_list = mode;
    let started = Instant::now();
    let informer = RunningInformer::start(config, lister_watcher, indexer);
    tokio::time::timeout(Duration::from_secs(600), informer.wait_for_sync(|_| false))
        .await
        .expect("synced in time")
        .expect("no fatal error");
    let took = started.elapsed();
    let truth = sim.truth(Resource::Pods);
    assert_eq!(informer.indexer().len(), truth.len(), "{mode}");
    assert_eq!(truth.len(), PODS);
    assert_eq!(
        informer.status().borrow().initial_list,
        Some(InitialListStatus {
            mode,
            fallback_reason: None
        }),
        "the sim serves both modes"
    );
    let metrics = informer.metrics().snapshot();
    match mode {
        InitialListMode::List => assert_eq!(
            metrics.list_pages,
            PODS.div_ceil(500) as u64,
            "pages of 500"
        ),
        InitialListMode::WatchList => {
            assert_eq!(metrics.list_pages, 0, "no list: {metrics:?}");
            assert_eq!(metrics.watches, 1, "one watch streams it all: {metrics:?}");
            assert!(
                metrics.watch_events > PODS as u64,
                "every pod, then the end bookmark: {metrics:?}"
            );
        }
    }
    let phases = informer.indexer().list_index_values("phase").unwrap();
    assert!(!phases.is_empty());
    eprintln!(
        "{mode}: synced {PODS} pods in {took:?} (this build's profile; see the scale benchmark for release numbers)"
    );
    informer.shutdown().await;
}
