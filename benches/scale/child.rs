//! A child process: syncs the sim's pods with one client and reports on stdout, one JSON line
//! each: `progress` every 100 ms, `synced` when the first list is in the store, `steady` once
//! the post-sync work has drained. It runs until its stdin closes (the parent ended).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::json;

use super::procfs;

/// What every client reports.
#[derive(Default)]
struct Counters {
    /// Objects delivered to the consumer: initial list and watch events.
    events: AtomicU64,
    /// The newest resourceVersion the consumer has seen, as a number.
    rv: AtomicU64,
    /// When `rv` last rose, in microseconds since the Unix epoch: the parent times a backlog
    /// drain to it, not to the progress line (up to 100 ms later) that reports it.
    rv_at: AtomicU64,
    /// Work received but not yet processed (kscope: DeltaFIFO + handler queue).
    backlog: AtomicU64,
    /// kscope: notifications queued for the handler.
    pending: AtomicU64,
    /// Objects in the store.
    objects: AtomicU64,
    errors: AtomicU64,
    relists: AtomicU64,
    /// When the consumer got its first object, in microseconds since the client started
    /// (0: not yet): the first table rows.
    first_row_us: AtomicU64,
    /// Synced: from now on progress says the bytes unread on the sockets. Walking the
    /// kernel's socket tables ten times a second cost a tenth of a sync's CPU, and only the
    /// churn steps after the sync read it.
    synced: std::sync::atomic::AtomicBool,
    /// The sim's port (from the kubeconfig): only the connections to it count as unread.
    server_port: std::sync::OnceLock<u16>,
}

fn emit(value: serde_json::Value) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    // The parent reads lines; if it is gone, there is nobody to tell.
    let _ = writeln!(out, "{value}");
    let _ = out.flush();
}

fn snapshot(kind: &str, counters: &Counters, start: Instant) -> serde_json::Value {
    let (rss, peak) = procfs::rss_and_peak("self").unwrap_or((0, 0));
    json!({
        "kind": kind,
        "t": start.elapsed().as_secs_f64(),
        "events": counters.events.load(Ordering::Relaxed),
        "rv": counters.rv.load(Ordering::Relaxed),
        "rv_at": counters.rv_at.load(Ordering::Relaxed),
        "backlog": counters.backlog.load(Ordering::Relaxed),
        "unread": match counters.server_port.get() {
            Some(&port) if counters.synced.load(Ordering::Relaxed) => {
                procfs::unread_socket_bytes(port)
            }
            _ => 0,
        },
        "objects": counters.objects.load(Ordering::Relaxed),
        "errors": counters.errors.load(Ordering::Relaxed),
        "relists": counters.relists.load(Ordering::Relaxed),
        "rss": rss,
        "peak": peak,
        "cpu": procfs::cpu_seconds(),
        "first_row_s": counters.first_row_us.load(Ordering::Relaxed) as f64 / 1e6,
    })
}

/// Microseconds since the Unix epoch: a clock the parent process shares.
pub fn unix_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

fn note_rv(counters: &Counters, rv: Option<&str>) {
    if let Some(rv) = rv.and_then(|r| r.parse::<u64>().ok())
        && counters.rv.fetch_max(rv, Ordering::Relaxed) < rv
    {
        counters.rv_at.store(unix_micros(), Ordering::Relaxed);
    }
}

pub fn main(which: &str, kubeconfig: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("cannot build a tokio runtime");
    runtime.block_on(run(which, kubeconfig));
}

async fn run(which: &str, kubeconfig: &str) {
    let start = Instant::now();
    let counters = Arc::new(Counters::default());

    // Exit when the parent closes our stdin (or dies).
    tokio::spawn(async {
        use tokio::io::AsyncReadExt;
        let mut stdin = tokio::io::stdin();
        let mut buf = [0u8; 64];
        while matches!(stdin.read(&mut buf).await, Ok(n) if n > 0) {}
        std::process::exit(0);
    });
    let reporter = {
        let counters = counters.clone();
        tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_millis(100));
            loop {
                every.tick().await;
                emit(snapshot("progress", &counters, start));
            }
        })
    };

    let kubeconfig = kube::config::Kubeconfig::read_from(kubeconfig)
        .unwrap_or_else(|e| panic!("cannot read the sim's kubeconfig {kubeconfig}: {e}"));
    let config = kube::Config::from_custom_kubeconfig(
        kubeconfig,
        &kube::config::KubeConfigOptions::default(),
    )
    .await
    .unwrap_or_else(|e| panic!("the sim's kubeconfig is not usable: {e}"));
    let port = config.cluster_url.port_u16().unwrap_or(
        if config.cluster_url.scheme_str() == Some("http") {
            80
        } else {
            443
        },
    );
    let _ = counters.server_port.set(port);

    let (sync, keep) = match which.split_once(':') {
        // Against kube-rs, whose watcher lists in pages by default: the same footing, a
        // paged list then a watch (the watch-list is the pipelines bench's).
        _ if which == "kscope" => {
            let pipeline = (
                kscope_informers::fifo::FifoKind::Classic,
                kscope_informers::reflector::InitialListMode::List,
            );
            kscope_client(config, counters.clone(), pipeline).await
        }
        // kscope-crd:FIFO:MODE, the CRD mode's Widgets through that pipeline as kscope reads
        // them (plain JSON, printer columns evaluated client-side); kscope-crd-table:FIFO:MODE
        // in the server's Table form; kscope-crd-json:FIFO:MODE as plain JSON with no cells.
        Some((client @ ("kscope-crd" | "kscope-crd-table" | "kscope-crd-json"), pipeline)) => {
            let (fifo, mode) = pipeline
                .split_once(':')
                .unwrap_or_else(|| panic!("{client}:FIFO:MODE expected, got {which:?}"));
            let fifo = fifo.parse().unwrap_or_else(|e| panic!("{e}"));
            let mode = mode.parse().unwrap_or_else(|e| panic!("{e}"));
            kscope_widgets_client(config, counters.clone(), (fifo, mode), client).await
        }
        // kscope:FIFO:MODE, one pipeline of the pipelines bench.
        Some(("kscope", pipeline)) => {
            let (fifo, mode) = pipeline
                .split_once(':')
                .unwrap_or_else(|| panic!("kscope:FIFO:MODE expected, got {which:?}"));
            let fifo = fifo.parse().unwrap_or_else(|e| panic!("{e}"));
            let mode = mode.parse().unwrap_or_else(|e| panic!("{e}"));
            kscope_client(config, counters.clone(), (fifo, mode)).await
        }
        _ => match which {
            "kube-rs" => kube_rs_client(config, counters.clone(), false).await,
            "kube-rs-crd" => kube_rs_widgets_client(config, counters.clone()).await,
            "kube-rs-lean" => kube_rs_client(config, counters.clone(), true).await,
            other => {
                panic!("unknown client {other:?}: expected kscope, kube-rs or kube-rs-lean")
            }
        },
    };
    counters.synced.store(true, Ordering::Relaxed);
    let mut synced = snapshot("synced", &counters, start);
    synced["sync_s"] = json!(sync.as_secs_f64());
    emit(synced);

    // Steady state: whatever the sync left queued has drained, then a short settle.
    while counters.backlog.load(Ordering::Relaxed) > 0 {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut steady = snapshot("steady", &counters, start);
    steady["heap_in_use"] = json!(procfs::heap_in_use());
    if let Some(report) = HEAP_REPORT.get() {
        steady["heap"] = report();
    }
    emit(steady);

    let _keep = keep;
    let _ = reporter.await;
}

/// Where a kscope pod store's heap goes, by structure (set by the pod client, read at steady).
static HEAP_REPORT: std::sync::OnceLock<Box<dyn Fn() -> serde_json::Value + Send + Sync>> =
    std::sync::OnceLock::new();

/// The heap a pod store holds, by structure, counted from its contents and table capacities
/// (requested sizes: malloc adds its header and rounding on top of each allocation).
fn pod_store_heap(
    indexer: &kscope_informers::indexer::Indexer<kscope_resources::Pod>,
) -> serde_json::Value {
    use kscope_informers::indexer::KeySet;
    use kscope_informers::keys::Key;
    use kscope_resources::Pod;
    use std::mem::size_of;
    // An Arc's allocation: its two counts, then the value.
    const ARC: usize = 16;
    let objects = indexer.list();
    let n = objects.len().max(1);
    let packed: usize = objects.iter().map(|p| p.heap_bytes()).sum();
    let inline = objects.len() * (ARC + size_of::<Pod>());
    let keys: usize = indexer.list_keys().iter().map(|k| ARC + k.len()).sum();
    drop(objects);
    let mut indexes = serde_json::Map::new();
    let mut index_total = 0;
    for name in indexer.index_names() {
        let stats = indexer.with_index(&name, |index| {
            let table = index.capacity() * (size_of::<(std::sync::Arc<str>, KeySet)>() + 1);
            let values: usize = index.keys().map(|v| ARC + v.len()).sum();
            let sets: usize = index
                .values()
                .map(|set| set.capacity() * (size_of::<Key>() + 1))
                .sum();
            let entries: usize = index.values().map(|set| set.len()).sum();
            (index.len(), table + values + sets, entries)
        });
        if let Ok((values, bytes, entries)) = stats {
            index_total += bytes;
            indexes.insert(
                name.to_string(),
                json!({"values": values, "entries": entries, "bytes_per_object": bytes as f64 / n as f64}),
            );
        }
    }
    let items_table = indexer.items_capacity() * (size_of::<(Key, std::sync::Arc<Pod>)>() + 1);
    let per = |b: usize| b as f64 / n as f64;
    json!({
        "objects": n,
        // A pod's shared template strings count in full for each pod that shares them.
        "packed_strings_shared_counted_per_pod": per(packed),
        "pod_inline_and_arc": per(inline),
        "keys": per(keys),
        "items_table": per(items_table),
        "indexes_total": per(index_total),
        "indexes": indexes,
        "sum_but_strings": per(inline + keys + items_table + index_total),
    })
}

/// Keeps a client's tasks and stores alive until the process ends.
type Keep = Box<dyn std::any::Any + Send>;

/// kscope's informer with `pipeline`'s FIFO and initial-list mode.
async fn kscope_client(
    config: kube::Config,
    counters: Arc<Counters>,
    (fifo, mode): (
        kscope_informers::fifo::FifoKind,
        kscope_informers::reflector::InitialListMode,
    ),
) -> (Duration, Keep) {
    use kscope_client::cluster::{Cluster, NamespaceScope};
    use kscope_index_views::definitions::{default_index_definitions, index_funcs};
    use kscope_informers::indexer::IndexerWriter;
    use kscope_informers::running::{InformerConfig, RunningInformer};
    use kscope_resources::{Pod, ResourceKind};

    let started = Instant::now();
    // from_config turns kube's own retries off: the Reflector backs off by itself.
    let cluster = Cluster::from_config(config, "kscope-sim".into())
        .expect("cannot build a client for the sim");
    let lister_watcher = kscope_client::lister_watcher::KubeListerWatcher::for_kind(
        &cluster,
        ResourceKind::Pods,
        &NamespaceScope::All,
        None,
        None,
    );
    let indexer = IndexerWriter::new(index_funcs::<Pod>(&default_index_definitions()))
        .expect("the default index definitions are valid");
    let mut informer_config = InformerConfig::new("pods");
    informer_config.fifo = fifo;
    informer_config.initial_list = mode;
    let informer = Arc::new(RunningInformer::start(
        informer_config,
        lister_watcher,
        indexer,
    ));
    watch_kscope_informer(&informer, &counters, started);
    informer
        .wait_for_sync(|_| false)
        .await
        .expect("kscope's informer never gives up on an error");
    let sync = started.elapsed();
    counters
        .objects
        .store(informer.indexer().len() as u64, Ordering::Relaxed);
    let reader = informer.indexer().clone();
    let _ = HEAP_REPORT.set(Box::new(move || pod_store_heap(&reader)));
    (sync, Box::new(informer))
}

/// The group, version and kind the CRD mode lists (the sim's `--widgets`).
const WIDGETS: (&str, &str, &str) = ("example.com", "v1", "Widget");

/// kscope over the Widgets as the explorer reads a discovered kind: discovery, then the
/// resource's Table form into `GenericObject`s with the default indexes, and one handler.
/// Without `table`, the objects as plain JSON (no cells): what the sim's Table printing costs.
async fn kscope_widgets_client(
    config: kube::Config,
    counters: Arc<Counters>,
    (fifo, mode): (
        kscope_informers::fifo::FifoKind,
        kscope_informers::reflector::InitialListMode,
    ),
    client: &str,
) -> (Duration, Keep) {
    use kscope_client::cluster::{Cluster, NamespaceScope};
    use kscope_client::discovery::Discovery;
    use kscope_client::lister_watcher::KubeListerWatcher;
    use kscope_index_views::definitions::{default_index_definitions, index_funcs};
    use kscope_index_views::printer_columns::KubectlPrinterColumns;
    use kscope_informers::indexer::IndexerWriter;
    use kscope_informers::running::{InformerConfig, RunningInformer};
    use kscope_resources::GenericObject;

    let started = Instant::now();
    let cluster = Cluster::from_config(config, "kscope-sim".into())
        .expect("cannot build a client for the sim");
    let discovery = Discovery::run(&cluster.client)
        .await
        .expect("discovery of the sim failed");
    let kind = discovery
        .resolve(&format!("widgets.{}", WIDGETS.0))
        .expect("the sim serves widgets.example.com");
    let lister_watcher = match client {
        "kscope-crd" => {
            KubeListerWatcher::for_kind(&cluster, kind, &NamespaceScope::All, None, None)
                .with_printer_columns(Arc::new(KubectlPrinterColumns))
        }
        "kscope-crd-table" => {
            KubeListerWatcher::for_kind(&cluster, kind, &NamespaceScope::All, None, None)
        }
        _ => KubeListerWatcher::new(cluster.client.clone(), kind.list_path(None), "widgets")
            .with_limits(cluster.limits),
    };
    let indexer = IndexerWriter::new(index_funcs::<GenericObject>(&default_index_definitions()))
        .expect("the default index definitions are valid");
    let mut informer_config = InformerConfig::new("widgets");
    informer_config.fifo = fifo;
    informer_config.initial_list = mode;
    let informer = Arc::new(RunningInformer::start(
        informer_config,
        lister_watcher,
        indexer,
    ));
    watch_kscope_informer(&informer, &counters, started);
    informer
        .wait_for_sync(|_| false)
        .await
        .expect("kscope's informer never gives up on an error");
    let sync = started.elapsed();
    counters
        .objects
        .store(informer.indexer().len() as u64, Ordering::Relaxed);
    (sync, Box::new(informer))
}

/// kube-rs's reflector over `DynamicObject`, as a Rust developer reads a custom resource
/// without generated types: the kind pinned by discovery, the default watcher.
async fn kube_rs_widgets_client(
    mut config: kube::Config,
    counters: Arc<Counters>,
) -> (Duration, Keep) {
    use kube::api::{Api, DynamicObject, GroupVersionKind};
    use kube::runtime::WatchStreamExt;
    use kube::runtime::reflector::store::Writer;
    use kube::runtime::watcher;

    let started = Instant::now();
    config.default_retry = false;
    let client = kube::Client::try_from(config).expect("cannot build a client for the sim");
    let gvk = GroupVersionKind::gvk(WIDGETS.0, WIDGETS.1, WIDGETS.2);
    let (resource, _) = kube::discovery::pinned_kind(&client, &gvk)
        .await
        .expect("the sim serves widgets.example.com");
    let writer = Writer::<DynamicObject>::new(resource.clone());
    let store = writer.as_reader();
    let api = Api::<DynamicObject>::all_with(client, &resource);
    let stream = watcher::watcher(api, watcher::Config::default())
        .default_backoff()
        .reflect(writer);
    follow_kube_rs(stream, store, counters, started).await
}

/// A handler on `informer`, as the explorer has one (it sees every object once, like the
/// stream kube-rs's reflector hands back), and the counters kept from its metrics.
fn watch_kscope_informer<T: kscope_resources::KubeResource>(
    informer: &Arc<kscope_informers::running::RunningInformer<T>>,
    counters: &Arc<Counters>,
    started: Instant,
) {
    use kscope_informers::informer::Notification;
    use kscope_informers::keys::DeltaObject;

    let mut handler = informer.informer().add_event_handler();
    {
        let counters = counters.clone();
        tokio::spawn(async move {
            while let Some(n) = handler.next().await {
                let rv = match &n {
                    Notification::Add { obj, .. } => obj.resource_version(),
                    Notification::Update { new, .. } => new.resource_version(),
                    Notification::Delete { obj } => match obj {
                        DeltaObject::Object(o) => o.resource_version(),
                        DeltaObject::Tombstone(_) => None,
                    },
                };
                note_rv(&counters, rv);
                if counters.events.fetch_add(1, Ordering::Relaxed) == 0 {
                    let at = started.elapsed().as_micros().max(1) as u64;
                    counters.first_row_us.store(at, Ordering::Relaxed);
                }
                counters
                    .pending
                    .store(handler.pending() as u64, Ordering::Relaxed);
            }
        });
    }
    {
        let counters = counters.clone();
        let informer = informer.clone();
        tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_millis(50));
            loop {
                every.tick().await;
                counters
                    .objects
                    .store(informer.indexer().len() as u64, Ordering::Relaxed);
                let fifo = informer.informer().store().len() as u64;
                let pending = counters.pending.load(Ordering::Relaxed);
                counters.backlog.store(fifo + pending, Ordering::Relaxed);
                let m = informer.metrics().snapshot();
                counters.errors.store(m.errors, Ordering::Relaxed);
                counters.relists.store(m.lists, Ordering::Relaxed);
            }
        });
    }
}

/// kube-rs's reflector over typed Pods. `lean` drops managedFields before the store, as
/// kube-rs's documentation recommends for memory (its "reflector memory" optimization guide);
/// without it, the default that most controllers run.
async fn kube_rs_client(
    mut config: kube::Config,
    counters: Arc<Counters>,
    lean: bool,
) -> (Duration, Keep) {
    use k8s_openapi::api::core::v1::Pod;
    use kube::ResourceExt;
    use kube::api::Api;
    use kube::runtime::watcher;
    use kube::runtime::{WatchStreamExt, reflector};

    let started = Instant::now();
    // Same footing as kscope: no retries inside the client; the watcher's default backoff
    // handles errors.
    config.default_retry = false;
    let client = kube::Client::try_from(config).expect("cannot build a client for the sim");
    let (store, writer) = reflector::store::<Pod>();
    let events =
        watcher::watcher(Api::<Pod>::all(client), watcher::Config::default()).default_backoff();
    // The default client has no modify stage at all, not one that does nothing.
    let events = if lean {
        futures::future::Either::Left(events.modify(|pod| pod.managed_fields_mut().clear()))
    } else {
        futures::future::Either::Right(events)
    };
    follow_kube_rs(events.reflect(writer), store, counters, started).await
}

/// Consumes a kube-rs reflector's stream into the counters, and waits until its store has
/// the first list.
async fn follow_kube_rs<K>(
    stream: impl futures::Stream<
        Item = kube::runtime::watcher::Result<kube::runtime::watcher::Event<K>>,
    > + Send
    + 'static,
    store: kube::runtime::reflector::Store<K>,
    counters: Arc<Counters>,
    started: Instant,
) -> (Duration, Keep)
where
    K: kube::Resource + Clone + Send + Sync + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone + Send + Sync,
{
    use kube::runtime::watcher::Event;
    {
        let counters = counters.clone();
        tokio::spawn(async move {
            let mut stream = std::pin::pin!(stream);
            let mut reported = 0u64;
            while let Some(item) = stream.next().await {
                match item {
                    Ok(Event::Apply(obj) | Event::Delete(obj) | Event::InitApply(obj)) => {
                        note_rv(&counters, obj.meta().resource_version.as_deref());
                        counters.events.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(Event::Init) => {
                        counters.relists.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(Event::InitDone) => {}
                    Err(e) => {
                        counters.errors.fetch_add(1, Ordering::Relaxed);
                        if reported < 5 {
                            reported += 1;
                            eprintln!("kube-rs watcher error: {e}");
                        }
                    }
                }
            }
        });
    }
    {
        let counters = counters.clone();
        let store = store.clone();
        tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_millis(50));
            loop {
                every.tick().await;
                counters
                    .objects
                    .store(store.len() as u64, Ordering::Relaxed);
            }
        });
    }
    store
        .wait_until_ready()
        .await
        .expect("the reflector's writer ended before the first list");
    let sync = started.elapsed();
    counters
        .objects
        .store(store.len() as u64, Ordering::Relaxed);
    (sync, Box::new(store))
}
