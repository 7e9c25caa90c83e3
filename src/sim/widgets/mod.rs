//! The demo's Widget controller: a Deployment in `widget-system` whose pod runs a real
//! reconcile loop, as a controller-runtime operator does. kscope's own informers (a
//! Reflector, DeltaFIFO and Indexer over the sim's store) watch Widgets and ConfigMaps and
//! feed a rate-limited workqueue; each reconcile gives a Widget its owned ConfigMap and sets
//! its status from it. Some reconciles fail (a deterministic share of generations meet an
//! update conflict once or twice) and are retried with the queue's back-off. The pod serves
//! the queue's and the reconciler's metrics in the Prometheus text format under
//! controller-runtime's names, read through the pods/proxy subresource.

mod metrics;
mod source;

use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::time::Instant;

use kscope_informers::indexer::{Indexer, IndexerWriter};
use kscope_informers::informer::Notification;
use kscope_informers::keys::DeltaObject;
use kscope_informers::reflector::InitialListMode;
use kscope_informers::running::{InformerConfig, RunningInformer};
use kscope_informers::workqueue::{Histogram, RateLimitingQueue};

use super::Shared;
use super::manifests;
use super::resources::Resource;
use super::store::{StoreError, Txn};
pub(crate) use metrics::render;
use source::{Cached, StoreSource};

/// Where the controller runs.
pub(crate) const NAMESPACE: &str = "widget-system";
pub(crate) const NAME: &str = "widget-controller";
/// The port its pod serves /metrics on (controller-runtime's `--metrics-bind-address`).
pub(crate) const METRICS_PORT: u16 = 8080;
/// The controller's name in its metrics' labels.
const CONTROLLER: &str = "widget";
/// How often the controller looks for the Widget CRD while it is not served.
const CRD_POLL: Duration = Duration::from_secs(1);
/// The label tying a ConfigMap to the Widget it was made for.
const OWNER_LABEL: &str = "widgets.example.com/name";

/// How often the controller's pod is looked for while none runs, and looked at while one
/// does.
const POD_POLL: Duration = Duration::from_secs(1);

/// What the controller's /metrics reads: the running controller process's numbers.
#[derive(Default)]
pub(crate) struct WidgetMetrics {
    process: Mutex<Option<Arc<ProcessMetrics>>>,
}

/// One run of the controller, in one pod: its numbers start at zero, as a restarted
/// process's do.
struct ProcessMetrics {
    /// The pod it runs in: only that pod's port serves these.
    pod_uid: String,
    /// When it started, in seconds since the Unix epoch (`process_start_time_seconds`).
    started: f64,
    queue: RateLimitingQueue<String>,
    success: AtomicU64,
    errors: AtomicU64,
    reconcile_time: Mutex<Histogram>,
    active_workers: AtomicU64,
}

impl WidgetMetrics {
    /// Whether the controller runs (in some pod).
    pub(crate) fn runs(&self) -> bool {
        self.process.lock().is_some()
    }

    /// The numbers of the controller running in the pod `pod_uid`, if one runs there.
    fn of(&self, pod_uid: &str) -> Option<Arc<ProcessMetrics>> {
        self.process
            .lock()
            .as_ref()
            .filter(|p| p.pod_uid == pod_uid)
            .cloned()
    }
}

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

/// The uids of the controller's pods that are Running and not being deleted, oldest first.
fn running_pods(shared: &Shared) -> Vec<String> {
    shared.store.write(|txn| {
        txn.scan(Resource::Pods, &format!("{NAMESPACE}/"))
            .into_iter()
            .filter_map(|(_, pod)| pod.decode().ok())
            .filter(|pod| {
                pod["metadata"]["labels"]["control-plane"] == NAME
                    && pod["status"]["phase"] == "Running"
                    && !pod["metadata"]["deletionTimestamp"].is_string()
            })
            .filter_map(|pod| pod["metadata"]["uid"].as_str().map(str::to_string))
            .collect()
    })
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
    let cache = widget_informer.indexer().clone();
    let worker = worker(shared.clone(), process, widgets, cache, queue.clone());
    let feed = async {
        loop {
            tokio::select! {
                n = widget_events.recv() => match n {
                    Some(n) => enqueue_widget(&queue, &n),
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
    }
    queue.shut_down();
    widget_informer.shutdown().await;
    configmap_informer.shutdown().await;
}

fn key_of(value: &Value) -> Option<String> {
    let meta = &value["metadata"];
    Some(format!(
        "{}/{}",
        meta["namespace"].as_str()?,
        meta["name"].as_str()?
    ))
}

/// A Widget's add, delete or spec change (its generation) queues it; status-only updates,
/// the controller's own among them, do not (controller-runtime's GenerationChangedPredicate).
fn enqueue_widget(queue: &RateLimitingQueue<String>, n: &Notification<Cached>) {
    let value = match n {
        Notification::Add { obj, .. } => &obj.value,
        Notification::Update { old, new } => {
            if old.value["metadata"]["generation"] == new.value["metadata"]["generation"] {
                return;
            }
            &new.value
        }
        Notification::Delete { obj } => match obj {
            DeltaObject::Object(o) => &o.value,
            DeltaObject::Tombstone(t) => match t.obj.as_ref() {
                Some(o) => &o.value,
                None => return,
            },
        },
    };
    if let Some(key) = key_of(value) {
        queue.add(key);
    }
}

/// A change to a ConfigMap a Widget owns queues that Widget.
fn enqueue_owner(queue: &RateLimitingQueue<String>, n: &Notification<Cached>) {
    let value = match n {
        Notification::Add { obj, .. } => &obj.value,
        Notification::Update { new, .. } => &new.value,
        Notification::Delete { obj } => match obj {
            DeltaObject::Object(o) => &o.value,
            DeltaObject::Tombstone(t) => match t.obj.as_ref() {
                Some(o) => &o.value,
                None => return,
            },
        },
    };
    let meta = &value["metadata"];
    let owner = meta["ownerReferences"].as_array().and_then(|refs| {
        refs.iter()
            .find(|r| r["kind"] == "Widget" && r["controller"] == true)
    });
    if let (Some(owner), Some(ns)) = (owner, meta["namespace"].as_str())
        && let Some(name) = owner["name"].as_str()
    {
        queue.add(format!("{ns}/{name}"));
    }
}

/// The one worker (MaxConcurrentReconciles 1): takes a key, reconciles it, and forgets it or
/// re-adds it rate-limited.
async fn worker(
    shared: Arc<Shared>,
    metrics: Arc<ProcessMetrics>,
    widgets: Resource,
    cache: Indexer<Cached>,
    queue: RateLimitingQueue<String>,
) {
    while let Some(key) = queue.get().await {
        // A process whose pod is gone reconciles nothing more, however soon after it went.
        if !running_pods(&shared).contains(&metrics.pod_uid) {
            queue.done(&key);
            return;
        }
        metrics.active_workers.store(1, Ordering::Relaxed);
        let started = Instant::now();
        let attempt = queue.num_requeues(&key);
        let result = shared
            .store
            .write(|txn| reconcile(txn, widgets, &cache, &key, attempt));
        metrics.reconcile_time.lock().observe(started.elapsed());
        match result {
            Ok(()) => {
                metrics.success.fetch_add(1, Ordering::Relaxed);
                queue.forget(&key);
            }
            Err(e) => {
                tracing::debug!(%key, error = %e, "widget reconcile failed; retrying");
                metrics.errors.fetch_add(1, Ordering::Relaxed);
                queue.add_rate_limited(key.clone());
            }
        }
        queue.done(&key);
        metrics.active_workers.store(0, Ordering::Relaxed);
    }
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
enum ReconcileError {
    /// The deterministic transient failure: the write met a newer version.
    #[error(
        "Operation cannot be fulfilled on configmaps \"{0}\": the object has been modified; please apply your changes to the latest version and try again"
    )]
    Conflict(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// How many times the reconcile of generation `generation` of `key` fails before it goes
/// through: none for most, one or two for some.
fn planned_failures(key: &str, generation: u64) -> u32 {
    let mut h = std::hash::DefaultHasher::new();
    (key, generation).hash(&mut h);
    [0, 0, 1, 2][(h.finish() % 4) as usize]
}

fn reconcile(
    txn: &mut Txn<'_>,
    widgets: Resource,
    cache: &Indexer<Cached>,
    key: &str,
    attempt: u32,
) -> Result<(), ReconcileError> {
    let Some((namespace, name)) = key.split_once('/') else {
        return Ok(());
    };
    let config_name = format!("{name}-config");
    let config_key = format!("{namespace}/{config_name}");
    let Some(widget) = cache.get_by_key(key) else {
        // Gone: what it owned goes too.
        let owned = txn
            .get(Resource::ConfigMaps, &config_key)
            .and_then(|c| c.decode().ok())
            .is_some_and(|c| c["metadata"]["labels"][OWNER_LABEL] == name);
        if owned {
            txn.delete(Resource::ConfigMaps, &config_key)?;
        }
        return Ok(());
    };
    let widget = &widget.value;
    if widget["metadata"]["deletionTimestamp"].is_string() {
        return Ok(());
    }
    let generation = widget["metadata"]["generation"].as_u64().unwrap_or(1);
    let now = manifests::timestamp(manifests::now_seconds());
    if attempt < planned_failures(key, generation) {
        let error = ReconcileError::Conflict(config_name);
        set_status(
            txn,
            widgets,
            key,
            widget,
            false,
            "ReconcileError",
            &error.to_string(),
            &now,
        )?;
        return Err(error);
    }
    let spec = &widget["spec"];
    let data = json!({
        "size": spec["size"].as_str().unwrap_or("small"),
        "replicas": spec["replicas"].as_u64().unwrap_or(1).to_string(),
        "color": spec["color"].as_str().unwrap_or("blue"),
    });
    let current = txn
        .get(Resource::ConfigMaps, &config_key)
        .map(|c| c.decode())
        .transpose()
        .map_err(|e| StoreError::Encode(e.to_string()))?;
    match current {
        Some(mut config) => {
            if config["data"] != data {
                config["data"] = data;
                txn.put(Resource::ConfigMaps, &config_key, &mut config)?;
            }
        }
        None => {
            let mut config = json!({
                "kind": "ConfigMap",
                "apiVersion": "v1",
                "metadata": {
                    "name": config_name, "namespace": namespace,
                    "uid": manifests::uid(&mut rand::rng()), "creationTimestamp": now,
                    "labels": {OWNER_LABEL: name, "app.kubernetes.io/managed-by": NAME},
                    "ownerReferences": [{
                        "apiVersion": "example.com/v1", "kind": "Widget", "name": name,
                        "uid": widget["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true,
                    }],
                },
                "data": data,
            });
            txn.put(Resource::ConfigMaps, &config_key, &mut config)?;
        }
    }
    let message = format!("ConfigMap {config_name} is up to date");
    set_status(
        txn,
        widgets,
        key,
        widget,
        true,
        "Reconciled",
        &message,
        &now,
    )?;
    Ok(())
}

/// Writes the Widget's status (phase, observedGeneration, Ready condition) if it changes;
/// the condition keeps its transition time while its status holds.
#[allow(clippy::too_many_arguments)]
fn set_status(
    txn: &mut Txn<'_>,
    widgets: Resource,
    key: &str,
    widget: &Value,
    ready: bool,
    reason: &str,
    message: &str,
    now: &str,
) -> Result<(), StoreError> {
    let status = if ready { "True" } else { "False" };
    let previous = widget["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"));
    let transition = previous
        .filter(|c| c["status"] == status)
        .map_or(json!(now), |c| c["lastTransitionTime"].clone());
    let next = json!({
        "phase": if ready { "Running" } else { "Pending" },
        "observedGeneration": widget["metadata"]["generation"].as_u64().unwrap_or(1),
        "conditions": [{"type": "Ready", "status": status, "reason": reason, "message": message,
                        "lastTransitionTime": transition}],
    });
    // Compared with the store's current status, not the cache's, which may lag a write.
    let stored = txn
        .get(widgets, key)
        .and_then(|o| o.decode().ok())
        .map(|w| w["status"].clone());
    if stored.is_some_and(|s| s != next) {
        txn.modify_member(widgets, key, "status", |s| *s = next)?;
    }
    Ok(())
}

/// The controller's namespace and Deployment, written as its installer's `kubectl apply`
/// would; the Deployment controller takes it from there.
fn install(txn: &mut Txn<'_>) -> Result<(), StoreError> {
    let now = manifests::timestamp(manifests::now_seconds());
    let mut rng = rand::rng();
    if txn.get(Resource::Namespaces, NAMESPACE).is_none() {
        let mut ns = manifests::namespace(
            NAMESPACE,
            &manifests::uid(&mut rng),
            &now,
            json!({"kubernetes.io/metadata.name": NAMESPACE, "control-plane": NAME}),
        );
        txn.put(Resource::Namespaces, NAMESPACE, &mut ns)?;
    }
    let key = format!("{NAMESPACE}/{NAME}");
    if txn.get(Resource::Deployments, &key).is_some() {
        return Ok(());
    }
    let labels = json!({"app.kubernetes.io/name": NAME, "control-plane": NAME});
    let mut deployment = json!({
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "metadata": {
            "name": NAME, "namespace": NAMESPACE, "uid": manifests::uid(&mut rng),
            "creationTimestamp": now, "generation": 1, "labels": labels,
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "template": {
                "metadata": {"labels": labels, "annotations": {"kubectl.kubernetes.io/default-container": "manager"}},
                "spec": {
                    "containers": [{
                        "name": "manager",
                        "image": "registry.example.com/widget-controller:v0.4.2",
                        "args": ["--leader-elect", format!("--metrics-bind-address=:{METRICS_PORT}"), "--health-probe-bind-address=:8081"],
                        "ports": [{"name": "metrics", "containerPort": METRICS_PORT, "protocol": "TCP"}],
                        "resources": {"requests": {"cpu": "10m", "memory": "64Mi"}, "limits": {"cpu": "500m", "memory": "128Mi"}},
                        "imagePullPolicy": "IfNotPresent",
                        "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File",
                    }],
                    "serviceAccountName": NAME,
                    "restartPolicy": "Always",
                    "terminationGracePeriodSeconds": 10,
                    "dnsPolicy": "ClusterFirst",
                    "schedulerName": "default-scheduler",
                    "securityContext": {"runAsNonRoot": true},
                },
            },
        },
        "status": {},
    });
    txn.put(Resource::Deployments, &key, &mut deployment)?;
    Ok(())
}
