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

use super::deployment::{NAME, running_pods};
use super::metrics::ProcessMetrics;
use super::source::Cached;

/// The label tying a ConfigMap to the Widget it was made for.
const OWNER_LABEL: &str = "widgets.example.com/name";

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
pub(super) fn enqueue_widget(queue: &RateLimitingQueue<String>, n: &Notification<Cached>) {
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
