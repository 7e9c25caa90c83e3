//! The controller's lifetime: installed, then run in each pod of its Deployment that runs,
//! a process with its own informers, workqueue and worker.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use parking_lot::Mutex;

use kscope_informers::indexer::IndexerWriter;
use kscope_informers::reflector::InitialListMode;
use kscope_informers::running::{InformerConfig, RunningInformer};
use kscope_informers::workqueue::{Histogram, RateLimitingQueue};

use crate::Shared;
use crate::manifests;
use crate::resources::Resource;

use super::deployment::{NAME, NAMESPACE, install, running_pods};
use super::metrics::ProcessMetrics;
use super::reconciler::{Caches, enqueue_owner, enqueue_widget, worker};
use super::source::{Cached, StoreSource};
use super::tuner;

/// How often the controller looks for the Widget CRD while it is not served.
const CRD_POLL: Duration = Duration::from_secs(1);
/// How often the controller's pod is looked for while none runs, and looked at while one
/// does.
const POD_POLL: Duration = Duration::from_secs(1);

/// Creates the controller's namespace and Deployment (the controllers then bring its pod up
/// through the scheduler and a kubelet) and runs its reconcile loop while its pod runs: a
/// pod that goes (deleted, or the Deployment scaled to 0) stops it, and the next one to run
/// starts it afresh, relisting every Widget, with its numbers at zero.
pub(crate) async fn run(shared: Arc<Shared>) {
    if let Err(e) = shared.store.write(install) {
        tracing::warn!(error = %e, "cannot install the widget controller");
        return;
    }
    shared
        .controllers
        .client_wrote(Resource::Deployments, &format!("{NAMESPACE}/{NAME}"));
    let widgets = loop {
        if let Some(r) = shared.store.resolve_path("example.com", "v1", "widgets") {
            break r;
        }
        tokio::select! {
            () = shared.shutdown.cancelled() => return,
            () = tokio::time::sleep(CRD_POLL) => {}
        }
    };
    loop {
        let pod_uid = loop {
            if let Some(uid) = running_pods(&shared).into_iter().next() {
                break uid;
            }
            tokio::select! {
                () = shared.shutdown.cancelled() => return,
                () = tokio::time::sleep(POD_POLL) => {}
            }
        };
        tracing::info!(pod_uid, "widget controller starting");
        run_process(&shared, widgets, pod_uid).await;
        *shared.widget_metrics.process.lock() = None;
        if shared.shutdown.is_cancelled() {
            return;
        }
    }
}

/// The controller process in pod `pod_uid`: informers, workqueue and worker, until the pod
/// stops running or the sim shuts down.
async fn run_process(shared: &Arc<Shared>, widgets: Resource, pod_uid: String) {
    let queue = match RateLimitingQueue::<String>::with_default_rate_limiter() {
        Ok(q) => q,
        Err(e) => {
            tracing::warn!(error = %e, "cannot make the widget controller's workqueue");
            return;
        }
    };
    let process = Arc::new(ProcessMetrics {
        pod_uid: pod_uid.clone(),
        started: manifests::now_seconds() as f64,
        queue: queue.clone(),
        success: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        reconcile_time: Mutex::new(Histogram::default()),
        active_workers: AtomicU64::new(0),
        writes: AtomicU64::new(0),
        conflicts: AtomicU64::new(0),
    });
    *shared.widget_metrics.process.lock() = Some(process.clone());
    let start = |resource: Resource| {
        // The store is read in place: a list, then a watch. It has no streamed initial
        // state, so a watch-list would only wait for a bookmark that never comes.
        let mut config = InformerConfig::new(resource.plural());
        config.initial_list = InitialListMode::List;
        RunningInformer::start(
            config,
            StoreSource {
                shared: shared.clone(),
                resource,
            },
            IndexerWriter::<Cached>::default(),
        )
    };
    let widget_informer = start(widgets);
    let configmap_informer = start(Resource::ConfigMaps);
    let mut widget_events = widget_informer.informer().add_event_handler();
    let mut configmap_events = configmap_informer.informer().add_event_handler();
    let caches = Caches {
        widgets: widget_informer.indexer().clone(),
        configs: configmap_informer.indexer().clone(),
    };
    let worker = worker(shared.clone(), process, widgets, caches, queue.clone());
    let feed = async {
        loop {
            tokio::select! {
                n = widget_events.recv() => match n {
                    Some(n) => enqueue_widget(&queue, &n, *shared.widget_bug.read()),
                    None => return,
                },
                n = configmap_events.recv() => match n {
                    Some(n) => enqueue_owner(&queue, &n),
                    None => return,
                },
            }
        }
    };
    let pod_gone = async {
        loop {
            tokio::time::sleep(POD_POLL).await;
            if !running_pods(shared).contains(&pod_uid) {
                tracing::info!(pod_uid, "widget controller's pod stopped running");
                return;
            }
        }
    };
    tokio::select! {
        () = shared.shutdown.cancelled() => {}
        () = feed => {}
        () = worker => {}
        () = pod_gone => {}
        () = tuner::run(shared.clone()) => {}
    }
    queue.shut_down();
    widget_informer.shutdown().await;
    configmap_informer.shutdown().await;
}
