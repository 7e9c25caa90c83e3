//! The pipelines over real HTTP against the sim: the watch-list as the initial list,
//! its fallback to list when the server refuses it, and `kscope deltas --compare` showing
//! what two FIFOs hand a controller for the same watch stream.

use std::time::Duration;

use kscope_client::cluster::{Cluster, NamespaceScope};
use kscope_client::lister_watcher::KubeListerWatcher;
use kscope_informers::fifo::FifoKind;
use kscope_informers::indexer::IndexerWriter;
use kscope_informers::reflector::InitialListMode;
use kscope_informers::running::{InformerConfig, RunningInformer};
use kscope_resources::{Pod, ResourceKind};
use kscope_sim::{Faults, Resource, Sim, SimConfig, SimHandle};
use serde_json::Value;

use crate::common::cli::{kscope, temp_dir};
use crate::common::wait;

async fn informer_on(sim: &SimHandle, config: InformerConfig) -> RunningInformer<Pod> {
    let kube_config = sim.kube_config().await.expect("kubeconfig of the sim");
    let cluster = Cluster::from_config(kube_config, "kscope-sim".into()).expect("client");
    let lister_watcher = KubeListerWatcher::for_kind(
        &cluster,
        ResourceKind::Pods,
        &NamespaceScope::All,
        None,
        None,
    );
    RunningInformer::start(config, lister_watcher, IndexerWriter::default())
}

/// Waits (bounded) for the store to hold exactly the sim's pods.
async fn converged(sim: &SimHandle, informer: &RunningInformer<Pod>, what: &str) {
    use kscope_informers::object::Object;
    wait::until(&format!("{what}: the store converges"), || {
        let truth = sim.truth(Resource::Pods);
        let store: std::collections::BTreeMap<String, String> = informer
            .indexer()
            .list()
            .iter()
            .map(|p| {
                (
                    format!("{}/{}", p.namespace().unwrap_or_default(), p.name()),
                    p.resource_version().unwrap_or_default().to_string(),
                )
            })
            .collect();
        if store == truth {
            return Ok(());
        }
        Err(format!(
            "{} pods in the store, {} in the sim; {:?}",
            store.len(),
            truth.len(),
            informer.status().borrow()
        ))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watch_list_needs_no_list_request() {
    let sim = Sim::start(SimConfig::with_size(2_000, 10, 4).seed(3))
        .await
        .expect("sim starts");
    for fifo in FifoKind::ALL {
        let mut config = InformerConfig::new("pods");
        config.fifo = fifo;
        config.initial_list = InitialListMode::WatchList;
        let informer = informer_on(&sim, config).await;
        tokio::time::timeout(Duration::from_secs(60), informer.wait_for_sync(|_| false))
            .await
            .expect("synced within a minute")
            .expect("no fatal error");
        converged(&sim, &informer, fifo.as_str()).await;
        let status = informer.status().borrow().clone();
        let initial = status.initial_list.expect("an initial list happened");
        assert_eq!(
            initial.mode,
            InitialListMode::WatchList,
            "{fifo}: {initial:?}"
        );
        assert_eq!(initial.fallback_reason, None);
        let metrics = informer.metrics().snapshot();
        assert_eq!(
            (metrics.list_pages, metrics.watches),
            (0, 1),
            "{fifo}: one watch, no list request: {metrics:?}"
        );
        let informer_metrics = informer.informer_metrics();
        assert_eq!(informer_metrics.queued_items, 0, "{fifo}");
        assert_eq!(informer_metrics.resource_version_lag(), 0, "{fifo}");
        assert!(informer_metrics.store_resource_version > 0, "{fifo}");
        informer.shutdown().await;
    }
    sim.shutdown().await;
}

/// A server with the WatchList feature off refuses sendInitialEvents with 422: the Reflector
/// lists instead, records why, and converges as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_watch_list_falls_back_to_list_and_says_why() {
    let faults = Faults {
        refuse_watch_list: true,
        ..Faults::default()
    };
    let sim = Sim::start(
        SimConfig::with_size(1_000, 10, 4)
            .seed(4)
            .churn(100.0, Some(Duration::from_secs(2)))
            .faults(faults),
    )
    .await
    .expect("sim starts");
    let mut config = InformerConfig::new("pods");
    config.initial_list = InitialListMode::WatchList;
    let informer = informer_on(&sim, config).await;
    tokio::time::timeout(Duration::from_secs(60), informer.wait_for_sync(|_| false))
        .await
        .expect("synced within a minute")
        .expect("no fatal error");
    let initial = informer
        .status()
        .borrow()
        .initial_list
        .clone()
        .expect("an initial list happened");
    assert_eq!(initial.mode, InitialListMode::List);
    let reason = initial.fallback_reason.expect("a reason");
    assert!(
        reason.contains("422") && reason.contains("WatchList feature gate"),
        "{reason}"
    );
    assert!(informer.metrics().snapshot().list_pages > 0);
    // Compared once the churn has ended: during it, store and truth may match for a moment.
    wait::until("the churn ends", || match sim.churn() {
        churn if churn.paused => Ok(()),
        churn => Err(format!("{churn:?}")),
    })
    .await;
    converged(&sim, &informer, "after the fallback").await;
    informer.shutdown().await;
    sim.shutdown().await;
}

/// Runs `kscope deltas pods ARGS --for DURATION` against `sim`; its JSON lines.
async fn deltas(name: &str, sim: &SimHandle, args: &[&str]) -> (std::process::Output, Vec<Value>) {
    let dir = temp_dir(name);
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(&kubeconfig, sim.kubeconfig_yaml()).expect("write kubeconfig");
    let kubeconfig = kubeconfig.display().to_string();
    let mut all = vec!["deltas", "pods", "-A", "--kubeconfig", &kubeconfig];
    all.extend_from_slice(args);
    let output = kscope(&dir, &all).await;
    let lines = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    (output, lines)
}

fn of_source<'a>(lines: &'a [Value], source: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["source"] == source).collect()
}

/// The initial state of a quiet cluster: RealFIFO hands a Replaced item per pod (in
/// batches), AtomicFIFO one ReplacedAll; the comparison marks the relist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deltas_compare_marks_how_each_pipeline_delivers_a_relist() {
    let sim = Sim::start(SimConfig::with_size(50, 2, 2).seed(6))
        .await
        .expect("sim starts");
    let (output, lines) = deltas(
        "compare-atomic",
        &sim,
        &[
            "--fifo",
            "real",
            "--compare",
            "atomic",
            "--initial-list",
            "watchList",
            "--for",
            "3s",
        ],
    )
    .await;
    assert!(output.status.success(), "{output:?}");
    let handoffs = of_source(&lines, "handoff");
    let real_items: usize = handoffs
        .iter()
        .filter(|h| h["fifo"] == "real")
        .map(|h| h["items"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(real_items, 50, "a Replaced item per pod");
    let atomic: Vec<&&Value> = handoffs.iter().filter(|h| h["fifo"] == "atomic").collect();
    assert_eq!(atomic.len(), 1, "{atomic:?}");
    assert_eq!(atomic[0]["items"][0]["type"], "ReplacedAll");
    assert_eq!(atomic[0]["items"][0]["objects"], 50);
    assert_eq!(atomic[0]["initial"], true);
    let differences = of_source(&lines, "compare");
    assert_eq!(differences.len(), 1, "{differences:?}");
    assert_eq!(differences[0]["type"], "relist");
    assert_eq!(differences[0]["fifo"], "atomic");
    sim.shutdown().await;
}

/// Under churn, classic hands each key once per pop with whatever queued for it, real hands
/// every event: both print their handoffs, and the same pipeline twice is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deltas_compare_prints_both_pipelines_handoffs() {
    let sim = Sim::start(
        SimConfig::with_size(200, 4, 2)
            .seed(7)
            .churn(100.0, Some(Duration::from_secs(2))),
    )
    .await
    .expect("sim starts");
    let (output, lines) = deltas(
        "compare-real",
        &sim,
        &["--fifo", "classic", "--compare", "real", "--for", "3s"],
    )
    .await;
    assert!(output.status.success(), "{output:?}");
    let handoffs = of_source(&lines, "handoff");
    let count = |fifo: &str| -> usize {
        handoffs
            .iter()
            .filter(|h| h["fifo"] == fifo)
            .flat_map(|h| h["items"].as_array().into_iter().flatten())
            .map(|i| i["deltas"].as_array().map_or(0, Vec::len))
            .sum()
    };
    // Every event reaches both; real never merges.
    assert_eq!(count("classic"), count("real"), "both hand every delta");
    assert!(count("real") > 200, "the list and the churn");
    for h in handoffs.iter().filter(|h| h["fifo"] == "real") {
        for item in h["items"].as_array().expect("items") {
            assert_eq!(item["deltas"].as_array().map(Vec::len), Some(1), "{h}");
        }
    }
    for d in of_source(&lines, "compare") {
        assert!(
            (d["type"] == "merged" && d["fifo"] == "classic") || d["type"] == "order",
            "{d}"
        );
    }

    let (output, _) = deltas(
        "compare-same",
        &sim,
        &["--fifo", "real", "--compare", "real", "--for", "1s"],
    )
    .await;
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("both pipelines are real"), "{stderr}");
    sim.shutdown().await;
}
