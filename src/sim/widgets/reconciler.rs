//! The reconciler: which changes queue a Widget, the worker that takes keys off the queue,
//! and the reconcile that gives a Widget its ConfigMap and status.

use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::{Value, json};
use tokio::time::Instant;

use kscope_informers::indexer::Indexer;
use kscope_informers::informer::Notification;
use kscope_informers::keys::DeltaObject;
use kscope_informers::workqueue::RateLimitingQueue;

use crate::Shared;
use crate::manifests;
use crate::resources::Resource;
use crate::store::{StoreError, Txn};

use super::bug::WidgetBug;
use super::deployment::{NAME, running_pods};
use super::metrics::ProcessMetrics;
use super::source::Cached;

/// The label tying a ConfigMap to the Widget it was made for.
pub(super) const OWNER_LABEL: &str = "widgets.example.com/name";
/// The field manager of the controller's writes, as its managedFields name it.
pub(super) const FIELD_MANAGER: &str = NAME;

fn key_of(value: &Value) -> Option<String> {
    let meta = &value["metadata"];
    Some(format!(
        "{}/{}",
        meta["namespace"].as_str()?,
        meta["name"].as_str()?
    ))
}

/// A Widget's add, delete or spec change (its generation) queues it; status-only updates,
/// the controller's own among them, do not (controller-runtime's GenerationChangedPredicate),
/// except under the hot-loop bug, which forgot that predicate.
pub(super) fn enqueue_widget(
    queue: &RateLimitingQueue<String>,
    n: &Notification<Cached>,
    bug: WidgetBug,
) {
    let value = match n {
        Notification::Add { obj, .. } => &obj.value,
        Notification::Update { old, new } => {
            if bug != WidgetBug::Hotloop
                && old.value["metadata"]["generation"] == new.value["metadata"]["generation"]
            {
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
pub(super) fn enqueue_owner(queue: &RateLimitingQueue<String>, n: &Notification<Cached>) {
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
pub(super) async fn worker(
    shared: Arc<Shared>,
    metrics: Arc<ProcessMetrics>,
    widgets: Resource,
    caches: Caches,
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
        let bug = *shared.widget_bug.read();
        let step = Step {
            widgets,
            key: &key,
            attempt: queue.num_requeues(&key),
            bug,
            // What the controller will update from: its cache, read before its round trips.
            seen_config: caches
                .configs
                .get_by_key(&config_key(&key))
                .map(|c| c.value["metadata"]["resourceVersion"].clone()),
        };
        tokio::time::sleep(bug.reconcile_delay()).await;
        let result = shared
            .store
            .write(|txn| reconcile(txn, &caches.widgets, &step, &metrics));
        metrics.reconcile_time.lock().observe(started.elapsed());
        match result {
            Ok(()) => {
                metrics.success.fetch_add(1, Ordering::Relaxed);
                queue.forget(&key);
            }
            Err(e) => {
                if matches!(e, ReconcileError::Conflict(_)) {
                    metrics.conflicts.fetch_add(1, Ordering::Relaxed);
                }
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
    /// The error bug: what the Widget stands for cannot be reached.
    #[error("widget backend for {0} is unavailable")]
    Unavailable(String),
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

/// The controller's informer caches the worker reads.
pub(super) struct Caches {
    pub(super) widgets: Indexer<Cached>,
    pub(super) configs: Indexer<Cached>,
}

/// What one reconcile works on.
struct Step<'a> {
    widgets: Resource,
    key: &'a str,
    attempt: u32,
    bug: WidgetBug,
    /// The resourceVersion of the Widget's ConfigMap in the controller's cache.
    seen_config: Option<Value>,
}

/// The key of the ConfigMap the Widget `key` owns.
fn config_key(key: &str) -> String {
    format!("{key}-config")
}

/// Hands `fields` (a fieldsV1 set) of `object` to `manager`'s Update entry, stamped now, as
/// the API server records an update, so readers of managedFields see who wrote what.
pub(super) fn record_manager(
    object: &mut Value,
    manager: &str,
    subresource: Option<&str>,
    fields: Value,
) {
    let api_version = object["apiVersion"].as_str().unwrap_or("v1").to_string();
    let entry = manifests::managed_entry(
        manager,
        &api_version,
        &manifests::timestamp(manifests::now_seconds()),
        fields,
        subresource,
    );
    let meta = &mut object["metadata"];
    if !meta["managedFields"].is_array() {
        meta["managedFields"] = json!([]);
    }
    if let Some(all) = meta["managedFields"].as_array_mut() {
        all.retain(|e| e["manager"] != manager || e["subresource"].as_str() != subresource);
        all.push(entry);
    }
}

fn reconcile(
    txn: &mut Txn<'_>,
    cache: &Indexer<Cached>,
    step: &Step<'_>,
    metrics: &ProcessMetrics,
) -> Result<(), ReconcileError> {
    let (widgets, key, attempt) = (step.widgets, step.key, step.attempt);
    let Some((namespace, name)) = key.split_once('/') else {
        return Ok(());
    };
    let config_name = format!("{name}-config");
    let config_key = config_key(key);
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
    let failure = if step.bug == WidgetBug::Error {
        Some(ReconcileError::Unavailable(key.to_string()))
    } else if attempt < planned_failures(key, generation) {
        Some(ReconcileError::Conflict(config_name.clone()))
    } else {
        None
    };
    if let Some(error) = failure {
        let status = Status {
            ready: false,
            reason: "ReconcileError",
            message: &error.to_string(),
            now: &now,
            bug: step.bug,
        };
        set_status(txn, widgets, key, widget, &status, metrics)?;
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
                // The conflict bug's update carries the cached resourceVersion, as a
                // controller-runtime client.Update does: a newer stored one answers 409.
                if step.bug == WidgetBug::Conflict
                    && step.seen_config.as_ref() != Some(&config["metadata"]["resourceVersion"])
                {
                    return Err(ReconcileError::Conflict(config_name));
                }
                config["data"] = data;
                record_manager(&mut config, FIELD_MANAGER, None, data_fields());
                txn.put(Resource::ConfigMaps, &config_key, &mut config)?;
                metrics.writes.fetch_add(1, Ordering::Relaxed);
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
            record_manager(&mut config, FIELD_MANAGER, None, data_fields());
            txn.put(Resource::ConfigMaps, &config_key, &mut config)?;
            metrics.writes.fetch_add(1, Ordering::Relaxed);
        }
    }
    let message = format!("ConfigMap {config_name} is up to date");
    let status = Status {
        ready: true,
        reason: "Reconciled",
        message: &message,
        now: &now,
        bug: step.bug,
    };
    set_status(txn, widgets, key, widget, &status, metrics)?;
    Ok(())
}

/// The ConfigMap fields the controller sets.
fn data_fields() -> Value {
    json!({"f:data": {".": {}, "f:size": {}, "f:replicas": {}, "f:color": {}}})
}

/// The status a reconcile ends with.
struct Status<'a> {
    ready: bool,
    reason: &'a str,
    message: &'a str,
    now: &'a str,
    bug: WidgetBug,
}

/// Writes the Widget's status (phase, observedGeneration, Ready condition) if it changes;
/// the condition keeps its transition time while its status holds. The hot-loop bug also
/// stamps `lastReconcileTime` (a MicroTime), so its status always changes.
fn set_status(
    txn: &mut Txn<'_>,
    widgets: Resource,
    key: &str,
    widget: &Value,
    to: &Status<'_>,
    metrics: &ProcessMetrics,
) -> Result<(), StoreError> {
    let (ready, reason, message, now) = (to.ready, to.reason, to.message, to.now);
    let status = if ready { "True" } else { "False" };
    let previous = widget["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"));
    let transition = previous
        .filter(|c| c["status"] == status)
        .map_or(json!(now), |c| c["lastTransitionTime"].clone());
    let mut next = json!({
        "phase": if ready { "Running" } else { "Pending" },
        "observedGeneration": widget["metadata"]["generation"].as_u64().unwrap_or(1),
        "conditions": [{"type": "Ready", "status": status, "reason": reason, "message": message,
                        "lastTransitionTime": transition}],
    });
    let mut fields = json!({"f:status": {".": {}, "f:phase": {}, "f:observedGeneration": {}, "f:conditions": {}}});
    if to.bug == WidgetBug::Hotloop {
        next["lastReconcileTime"] = json!(micro_time());
        fields["f:status"]["f:lastReconcileTime"] = json!({});
    }
    // Compared with the store's current status, not the cache's, which may lag a write.
    let stored = txn.get(widgets, key).and_then(|o| o.decode().ok());
    if let Some(mut stored) = stored
        && stored["status"] != next
    {
        stored["status"] = next;
        record_manager(&mut stored, FIELD_MANAGER, Some("status"), fields);
        txn.put(widgets, key, &mut stored)?;
        metrics.writes.fetch_add(1, Ordering::Relaxed);
    }
    Ok(())
}

/// Now as a metav1.MicroTime: RFC 3339 with microseconds.
fn micro_time() -> String {
    k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S.%6fZ")
        .to_string()
}
