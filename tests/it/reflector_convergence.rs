//! The bar for the informer: once churn stops, the store holds exactly the sim's objects at
//! the same resourceVersions, whatever the sim did to the watch on the way — over real HTTP.
//!
//! Every fault class runs once per pipeline: the three FIFOs under both initial-list modes
//! (six runs), the seed cycling through three values so each class sees three seeds. That
//! is a subset of fault × pipeline × seed (54 runs would take minutes on two cores). Slow
//! pages run on lists only (the watch-list has none), a relist of held objects per FIFO.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use kscope_client::cluster::{Cluster, NamespaceScope};
use kscope_client::lister_watcher::KubeListerWatcher;
use kscope_index_views::definitions::{default_index_definitions, index_funcs};
use kscope_informers::backoff::Backoff;
use kscope_informers::fifo::FifoKind;
use kscope_informers::indexer::IndexerWriter;
use kscope_informers::informer::Notification;
use kscope_informers::object::Object;
use kscope_informers::reflector::{InitialListMode, ReflectorMetricsSnapshot};
use kscope_informers::running::{InformerConfig, RunningInformer};
use kscope_resources::{Pod, ResourceKind};
use kscope_sim::{Faults, FaultsFiredSnapshot, Resource, Sim, SimConfig, SimHandle};
use kube::api::{Api, PostParams};
use tokio::sync::oneshot;

use crate::common::wait;

const PODS: usize = 5_000;

struct Run {
    sim: SimHandle,
    informer: RunningInformer<Pod>,
    /// The handler's view, built only from notifications: key → resourceVersion.
    handler_view: oneshot::Receiver<HashMap<String, String>>,
}

/// The three FIFOs under both initial-list modes.
fn pipelines() -> Vec<(FifoKind, InitialListMode)> {
    FifoKind::ALL
        .into_iter()
        .flat_map(|fifo| {
            [InitialListMode::WatchList, InitialListMode::List].map(|mode| (fifo, mode))
        })
        .collect()
}

/// `config` with the pipeline set, and a name for messages.
fn on_pipeline(
    mut config: InformerConfig,
    (fifo, mode): (FifoKind, InitialListMode),
) -> (InformerConfig, String) {
    config.fifo = fifo;
    config.initial_list = mode;
    (config, format!("{fifo}/{mode}"))
}

/// One of three seeds per pipeline run: base, base+10, base+20.
fn seed(base: u64, run: usize) -> u64 {
    base + 10 * (run as u64 % 3)
}

async fn start_with(config: SimConfig, informer_config: InformerConfig) -> Run {
    let sim = Sim::start(config).await.expect("sim starts");
    let kube_config = sim.kube_config().await.expect("kubeconfig of the sim");
    let cluster = Cluster::from_config(kube_config, "kscope-sim".into()).expect("client");
    let lister_watcher = KubeListerWatcher::for_kind(
        &cluster,
        ResourceKind::Pods,
        &NamespaceScope::All,
        None,
        None,
    );
    let indexer = IndexerWriter::new(index_funcs::<Pod>(&default_index_definitions())).unwrap();
    let informer = RunningInformer::start(informer_config, lister_watcher, indexer);
    let mut handler = informer.informer().add_event_handler();
    let (tx, handler_view) = oneshot::channel();
    tokio::spawn(async move {
        let mut view: HashMap<String, String> = HashMap::new();
        while let Some(n) = handler.recv().await {
            match n {
                Notification::Add { obj, .. } => {
                    let key = key_of(&obj);
                    assert!(
                        view.insert(key.clone(), rv(&obj)).is_none(),
                        "add of known {key}"
                    );
                }
                Notification::Update { old, new } => {
                    assert_eq!(key_of(&old), key_of(&new));
                    assert!(
                        view.insert(key_of(&new), rv(&new)).is_some(),
                        "update of unknown"
                    );
                }
                Notification::Delete { obj } => {
                    let key = obj.key().expect("deletions are keyed").to_string();
                    assert!(view.remove(&key).is_some(), "delete of unknown {key}");
                }
            }
        }
        let _ = tx.send(view);
    });
    Run {
        sim,
        informer,
        handler_view,
    }
}

fn key_of(pod: &Pod) -> String {
    format!("{}/{}", pod.namespace().unwrap_or_default(), pod.name())
}

fn rv(pod: &Pod) -> String {
    pod.resource_version().unwrap_or_default().to_string()
}

fn store_state(informer: &RunningInformer<Pod>) -> BTreeMap<String, String> {
    informer
        .indexer()
        .list()
        .iter()
        .map(|p| (key_of(p), rv(p)))
        .collect()
}

/// Waits for the churn to end, then for the store to equal the sim's truth (while the churn
/// runs, the two may match for a moment and part again before the handlers are compared);
/// returns what the Reflector counted.
async fn assert_converges(run: Run, what: &str) -> ReflectorMetricsSnapshot {
    wait_churn_ended(&run, what).await;
    let truth = wait::until(&format!("{what}: the store converges"), || {
        let truth = run.sim.truth(Resource::Pods);
        let store = store_state(&run.informer);
        if store == truth {
            return Ok(truth);
        }
        let missing = truth.keys().filter(|k| !store.contains_key(*k)).count();
        let extra = store.keys().filter(|k| !truth.contains_key(*k)).count();
        let stale = truth
            .iter()
            .filter(|(k, v)| store.get(*k).is_some_and(|s| s != *v))
            .count();
        Err(format!(
            "{} in truth, {} in store, {missing} missing, {extra} extra, {stale} at another \
             resourceVersion; reflector {:?}",
            truth.len(),
            store.len(),
            run.informer.metrics().snapshot()
        ))
    })
    .await;
    let metrics = run.informer.metrics().snapshot();
    run.informer.shutdown().await;
    let view = run.handler_view.await.expect("handler finished");
    let view: BTreeMap<String, String> = view.into_iter().collect();
    assert_eq!(
        view, truth,
        "{what}: handlers' adds minus deletes equal the store"
    );
    eprintln!(
        "{what}: converged on {} pods; reflector {metrics:?}",
        truth.len()
    );
    run.sim.shutdown().await;
    metrics
}

async fn wait_synced(run: &Run) {
    tokio::time::timeout(wait::HANG_GUARD, run.informer.wait_for_sync(|_| false))
        .await
        .expect("synced before the hang guard")
        .expect("no fatal error");
}

/// Waits until the sim's churn has stopped (each config ends it with churn_for; a sim
/// without churn has none to wait for).
async fn wait_churn_ended(run: &Run, what: &str) {
    wait::until(&format!("{what}: the churn ends"), || {
        let churn = run.sim.churn();
        if churn.paused || churn.rate <= 0.0 {
            Ok(())
        } else {
            Err(format!("{churn:?}"))
        }
    })
    .await;
}

/// Churns until the churn ends, then, the sim's watches still being dropped and restarted,
/// waits until `happened` holds for what the sim fired and the Reflector counted, and
/// compares the store with the truth. A watch-list round makes one request where a paged
/// list makes ten, so a fault given as a ratio of requests may need more watch restarts
/// than the churn lasts to fire; and the Reflector counts a fault only once it has read the
/// answer the sim counted on sending, so both are waited on, not looked at once.
async fn churn_and_converge(
    config: SimConfig,
    informer_config: InformerConfig,
    what: &str,
    happened: impl Fn(&FaultsFiredSnapshot, &ReflectorMetricsSnapshot) -> bool,
) -> ReflectorMetricsSnapshot {
    let run = start_with(config, informer_config).await;
    wait_synced(&run).await;
    wait_churn_ended(&run, what).await;
    wait::until(
        &format!("{what}: the faults fire and the client sees them"),
        || {
            let (fired, metrics) = (run.sim.faults_fired(), run.informer.metrics().snapshot());
            if happened(&fired, &metrics) {
                Ok(())
            } else {
                Err(format!("fired {fired:?}, reflector {metrics:?}"))
            }
        },
    )
    .await;
    assert_converges(run, what).await
}

/// client-go's backoff rules at a faster pace: from 50 ms doubling to 1 s.
fn fast_backoff() -> InformerConfig {
    let mut informer_config = InformerConfig::new("pods");
    informer_config.backoff = Backoff::new(
        Duration::from_millis(50),
        Duration::from_secs(1),
        Duration::from_secs(120),
        1.0,
    );
    informer_config
}

fn churning(seed: u64, rate: f64, churn_for: Duration) -> SimConfig {
    SimConfig::with_size(PODS, 30, 8)
        .seed(seed)
        .churn(rate, Some(churn_for))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn converges_under_churn_for_several_seeds() {
    for (run, pipeline) in pipelines().into_iter().enumerate() {
        let churn_for = Duration::from_secs(3);
        let seed = seed(1, run);
        let (config, name) = on_pipeline(InformerConfig::new("pods"), pipeline);
        let metrics = churn_and_converge(
            churning(seed, 300.0, churn_for),
            config,
            &format!("{name} seed {seed}"),
            |_, _| true,
        )
        .await;
        assert_eq!(
            metrics.errors, 0,
            "{name}: no fault, no failed round: {metrics:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn converges_when_watches_are_dropped() {
    for (run, pipeline) in pipelines().into_iter().enumerate() {
        converges_when_watches_are_dropped_on(run, pipeline).await;
    }
}

async fn converges_when_watches_are_dropped_on(run: usize, pipeline: (FifoKind, InitialListMode)) {
    // Drops at least a second apart: a watch under a second that saw no pod event (the
    // churn also writes Endpoints and Events) is client-go's "very short watch", an error.
    let churn_for = Duration::from_secs(8);
    let faults = Faults {
        drop_watch_every: Some(Duration::from_millis(1500)),
        ..Faults::default()
    };
    let (config, name) = on_pipeline(InformerConfig::new("pods"), pipeline);
    // A dropped watch is a clean end of stream: re-watched from the last resourceVersion,
    // not relisted, so three drops make three more watches than lists (once the churn stops,
    // a drop within a second of a watch that saw nothing is client-go's "very short watch",
    // which does relist; the drops here are 1.5 s apart).
    let metrics = churn_and_converge(
        churning(seed(3, run), 200.0, churn_for).faults(faults),
        config,
        &format!("{name}: watch drops"),
        |fired, metrics| fired.watches_dropped >= 3 && metrics.watches >= metrics.lists + 3,
    )
    .await;
    assert_eq!(
        metrics.expired, 0,
        "{name}: no 410 without the 410 fault: {metrics:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn converges_when_watches_get_410() {
    for (run, pipeline) in pipelines().into_iter().enumerate() {
        converges_when_watches_get_410_on(run, pipeline).await;
    }
}

async fn converges_when_watches_get_410_on(run: usize, pipeline: (FifoKind, InitialListMode)) {
    let churn_for = Duration::from_secs(4);
    // The 410 is decided at each watch's start, and a watch lasts minutes: dropping watches
    // often makes enough starts for the 410s to fire (with one watch, half the runs had none).
    // Each 410 costs a backoff, which at client-go's pace (doubling to 30 s) could outlast
    // the convergence deadline after a few 410s in a row: the same rules, faster rounds.
    let faults = Faults {
        watch_gone_ratio: 0.5,
        drop_watch_every: Some(Duration::from_millis(500)),
        ..Faults::default()
    };
    let (config, name) = on_pipeline(fast_backoff(), pipeline);
    // The sim sent 410s, the Reflector read them, and each made a fresh read of the state: a
    // relist, or where the 410s hit the watch-list itself (twice in its round), the list it
    // falls back to in the same round.
    let relisted = |metrics: &ReflectorMetricsSnapshot| {
        let fell_back = pipeline.1 == InitialListMode::WatchList && metrics.list_pages > 0;
        metrics.lists > 1 || fell_back
    };
    churn_and_converge(
        churning(seed(4, run), 200.0, churn_for).faults(faults),
        config,
        &format!("{name}: watch 410s"),
        |fired, metrics| fired.watches_gone > 0 && metrics.expired > 0 && relisted(metrics),
    )
    .await;
}

/// A failed page fails the whole list, as in client-go: a ten-page list gets through only
/// about 43% of the time at these ratios. client-go's backoff (800 ms doubling to 30 s)
/// would make the first sync's time a lottery, so the rounds here back off from 50 ms to
/// 1 s: the same rules, more rounds per second.
///
/// The sim rolls its faults per request. A paged list is ten requests; a watch-list round is
/// one, and once it has streamed the state the Reflector makes a request only when a watch
/// is dropped. At one drop a second the first of 8% faults came after 4 to 24 watches (by
/// hand, three runs), and 30 s of waiting missed it about one run in twelve (0.92^30). The
/// watch-list runs drop their watches every 250 ms, but after the churn a watch that saw
/// nothing is a very short watch and backs off, so a loaded machine made only 15 requests
/// in 30 s: they also answer 10% 500s and 10% 429s. Which requests fail is the sim's seeded
/// sequence by arrival order (seeds 5, 15 and 25 fail one of their first 3–11 requests),
/// so the faults fire on every run, not on most.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn converges_with_500s_and_429s() {
    for (run, pipeline) in pipelines().into_iter().enumerate() {
        converges_with_500s_and_429s_on(run, pipeline).await;
    }
}

async fn converges_with_500s_and_429s_on(run: usize, pipeline: (FifoKind, InitialListMode)) {
    let churn_for = Duration::from_secs(4);
    let (drop_every, ratio) = match pipeline.1 {
        InitialListMode::List => (Duration::from_secs(1), 0.04),
        InitialListMode::WatchList => (Duration::from_millis(250), 0.1),
    };
    let faults = Faults {
        error_ratio: ratio,
        throttle_ratio: ratio,
        drop_watch_every: Some(drop_every),
        ..Faults::default()
    };
    let (config, name) = on_pipeline(fast_backoff(), pipeline);
    // A 429 on a watch is waited out without failing the round, so the Reflector's error
    // count may stay 0: the sim's counters say the faults fired.
    churn_and_converge(
        churning(seed(5, run), 200.0, churn_for).faults(faults),
        config,
        &format!("{name}: 500s and 429s"),
        |fired, _| fired.internal_errors + fired.throttled > 0,
    )
    .await;
}

/// Slow pages under churn with a short history: continue tokens expire mid-list (410 on
/// page 2+), so the Reflector falls back to a full list. Ten pages at 40 ms each see ~120
/// writes at 300/s, well past a 50-event history, however fast the machine lists them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn converges_with_slow_pages_and_expiring_continue_tokens() {
    // Pages are a list's: the watch-list has none.
    for (run, fifo) in FifoKind::ALL.into_iter().enumerate() {
        converges_with_slow_pages_on(run, fifo).await;
    }
}

async fn converges_with_slow_pages_on(run: usize, fifo: FifoKind) {
    let churn_for = Duration::from_secs(8);
    let faults = Faults {
        list_delay: Some(Duration::from_millis(40)),
        drop_watch_every: Some(Duration::from_secs(2)),
        history: Some(50),
        ..Faults::default()
    };
    let (config, name) = on_pipeline(InformerConfig::new("pods"), (fifo, InitialListMode::List));
    let run = start_with(
        churning(seed(6, run), 300.0, churn_for).faults(faults),
        config,
    )
    .await;
    wait_synced(&run).await;
    wait::until(
        &format!("{name}: the short history makes something expire"),
        || match run.informer.metrics().snapshot() {
            metrics if metrics.expired > 0 => Ok(()),
            metrics => Err(format!("reflector {metrics:?}")),
        },
    )
    .await;
    assert_converges(run, &format!("{name}: slow pages, short history")).await;
}

/// A relist of a quiet cluster hands on the objects the store already holds (same key, same
/// resourceVersion) instead of the copies it decoded: the store is not held twice while a
/// relist runs. Watches are dropped every 300 ms; once every new watch gets 410, the
/// Reflector relists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relist_keeps_the_objects_the_store_holds_at_the_same_resource_version() {
    for fifo in FifoKind::ALL {
        a_relist_keeps_the_held_objects_on(fifo).await;
    }
}

async fn a_relist_keeps_the_held_objects_on(fifo: FifoKind) {
    let faults = Faults {
        drop_watch_every: Some(Duration::from_millis(300)),
        ..Faults::default()
    };
    let mut config = InformerConfig::new("pods");
    config.fifo = fifo;
    let run = start_with(
        SimConfig::with_size(PODS, 30, 8)
            .seed(5)
            .faults(faults.clone()),
        config,
    )
    .await;
    wait_synced(&run).await;
    let before: HashMap<String, Arc<Pod>> = run
        .informer
        .indexer()
        .list()
        .into_iter()
        .map(|p| (key_of(&p), p))
        .collect();
    let lists_before = run.informer.metrics().snapshot().lists;
    run.sim.set_faults(Faults {
        watch_gone_ratio: 1.0,
        ..faults
    });
    wait_relisted(&run, lists_before, &format!("{fifo}: every watch 410")).await;
    run.sim.set_faults(Faults::default());
    // A pod created now comes after the last relist's list; once the store holds it and the
    // DeltaFIFO is empty, that relist has been applied.
    let namespace = before
        .keys()
        .find_map(|k| k.split_once('/'))
        .map(|(ns, _)| ns.to_string())
        .expect("namespaced pods");
    let client = run.sim.client().await.expect("a client for the sim");
    let api: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(client, &namespace);
    let mark = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "after-the-relist"},
        "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]},
    }))
    .expect("a pod");
    api.create(&PostParams::default(), &mark)
        .await
        .expect("the mark pod is created");
    let mark_key = format!("{namespace}/after-the-relist");
    wait::until(&format!("{fifo}: the mark pod arrives"), || {
        let arrived = run.informer.indexer().get_by_key(&mark_key).is_some();
        let queued = run.informer.informer().store().len();
        match (arrived, queued) {
            (true, 0) => Ok(()),
            _ => Err(format!("mark pod in the store: {arrived}, {queued} queued")),
        }
    })
    .await;
    let after = run.informer.indexer().list();
    let kept = after
        .iter()
        .filter(|p| before.get(&key_of(p)).is_some_and(|b| Arc::ptr_eq(b, p)))
        .count();
    assert_eq!(
        (kept, after.len()),
        (before.len(), before.len() + 1),
        "{fifo}: after the relist, every pod held before is the same object; reflector {:?}",
        run.informer.metrics().snapshot()
    );
    assert_converges(run, &format!("{fifo}: relist of a quiet cluster")).await;
}

/// An etcd restore: the store restarts with a new RV epoch; every RV the client holds is
/// too old, so it must relist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn converges_after_a_store_restart_with_a_new_epoch() {
    for (run, pipeline) in pipelines().into_iter().enumerate() {
        converges_after_a_new_epoch_on(run, pipeline).await;
    }
}

async fn converges_after_a_new_epoch_on(run: usize, pipeline: (FifoKind, InitialListMode)) {
    let churn_for = Duration::from_secs(4);
    let (config, name) = on_pipeline(InformerConfig::new("pods"), pipeline);
    let run = start_with(churning(seed(8, run), 200.0, churn_for), config).await;
    wait_synced(&run).await;
    // The restore ends a watch the Reflector holds (a list's watch opens after the sync).
    wait::until(&format!("{name}: the Reflector watches"), || {
        match run.informer.metrics().snapshot() {
            metrics if metrics.watches > 0 => Ok(()),
            metrics => Err(format!("reflector {metrics:?}")),
        }
    })
    .await;
    let lists_before = run.informer.metrics().snapshot().lists;
    run.sim.restart_epoch();
    wait_relisted(&run, lists_before, &format!("{name}: the restore")).await;
    assert_converges(run, &format!("{name}: epoch restart")).await;
}

/// Waits until the Reflector has listed again since it had listed `lists_before` times. A
/// list counts when it starts, a watch-list once its state has streamed.
async fn wait_relisted(run: &Run, lists_before: u64, what: &str) {
    wait::until(&format!("{what}: the Reflector relists"), || {
        match run.informer.metrics().snapshot() {
            metrics if metrics.lists > lists_before => Ok(()),
            metrics => Err(format!("reflector {metrics:?}")),
        }
    })
    .await;
}
