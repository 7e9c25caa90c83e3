//! core/v1 Events as client-go's event recorder writes them: named after the involved
//! object and the time, and a repeat of the same event (same object, reason, message and
//! source) counts up the existing one instead of adding another. The store serves each
//! under events.k8s.io/v1 too (see [`crate::event_view`]).

use serde_json::{Value, json};

use super::super::manifests;
use super::super::resources::Resource;
use super::super::store::{StoreError, Txn};

/// Who reports an event: a controller, or the kubelet on a node.
pub(super) struct Source<'a> {
    pub component: &'a str,
    pub host: Option<&'a str>,
}

pub(super) const DEPLOYMENT_CONTROLLER: Source<'static> = Source {
    component: "deployment-controller",
    host: None,
};
pub(super) const REPLICASET_CONTROLLER: Source<'static> = Source {
    component: "replicaset-controller",
    host: None,
};
pub(super) const STATEFULSET_CONTROLLER: Source<'static> = Source {
    component: "statefulset-controller",
    host: None,
};
pub(super) const DAEMONSET_CONTROLLER: Source<'static> = Source {
    component: "daemonset-controller",
    host: None,
};
pub(super) const JOB_CONTROLLER: Source<'static> = Source {
    component: "job-controller",
    host: None,
};
pub(super) const CRONJOB_CONTROLLER: Source<'static> = Source {
    component: "cronjob-controller",
    host: None,
};
pub(super) const SCHEDULER: Source<'static> = Source {
    component: "default-scheduler",
    host: None,
};

pub(super) fn kubelet(node: &str) -> Source<'_> {
    Source {
        component: "kubelet",
        host: Some(node),
    }
}

/// Records a Normal event about `object` (a decoded object with kind and apiVersion).
pub(super) fn normal(
    txn: &mut Txn<'_>,
    object: &Value,
    field_path: Option<&str>,
    reason: &str,
    message: &str,
    source: &Source<'_>,
) -> Result<(), StoreError> {
    record(txn, object, field_path, "Normal", reason, message, source)
}

/// Records a Warning event about `object`.
pub(super) fn warning(
    txn: &mut Txn<'_>,
    object: &Value,
    field_path: Option<&str>,
    reason: &str,
    message: &str,
    source: &Source<'_>,
) -> Result<(), StoreError> {
    record(txn, object, field_path, "Warning", reason, message, source)
}

fn record(
    txn: &mut Txn<'_>,
    object: &Value,
    field_path: Option<&str>,
    kind: &str,
    reason: &str,
    message: &str,
    source: &Source<'_>,
) -> Result<(), StoreError> {
    let meta = &object["metadata"];
    let namespace = meta["namespace"].as_str().unwrap_or("default");
    let name = meta["name"].as_str().unwrap_or("");
    let uid = meta["uid"].as_str().unwrap_or("");
    let now = manifests::timestamp(manifests::now_seconds());
    let same = |e: &Value| {
        e["involvedObject"]["uid"] == uid
            && e["type"] == kind
            && e["reason"] == reason
            && e["message"] == message
            && e["source"]["component"] == source.component
    };
    let existing = txn
        .scan(Resource::Events, &format!("{namespace}/{name}."))
        .into_iter()
        .find_map(|(k, e)| e.decode().ok().filter(same).map(|v| (k, v)));
    if let Some((key, mut event)) = existing {
        let count = event["count"].as_u64().unwrap_or(1);
        event["count"] = json!(count + 1);
        event["lastTimestamp"] = json!(now);
        txn.put(Resource::Events, &key, &mut event)?;
        return Ok(());
    }
    let mut involved = json!({
        "kind": object["kind"],
        "namespace": namespace,
        "name": name,
        "uid": uid,
        "apiVersion": object["apiVersion"],
        "resourceVersion": meta["resourceVersion"],
    });
    if let Some(path) = field_path {
        involved["fieldPath"] = json!(path);
    }
    let mut source_value = json!({"component": source.component});
    if let Some(host) = source.host {
        source_value["host"] = json!(host);
    }
    // The recorder names an event after its object and the time in nanoseconds; the next
    // resourceVersion stands in for the time, so names are unique and in write order.
    let event_name = format!("{name}.{:016x}", txn.next_resource_version());
    let mut event = json!({
        "kind": "Event",
        "apiVersion": "v1",
        "metadata": {
            "name": event_name,
            "namespace": namespace,
            "uid": manifests::uid(&mut rand::rng()),
            "creationTimestamp": now,
        },
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "source": source_value,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
        "type": kind,
        "eventTime": null,
        "reportingComponent": source.component,
        "reportingInstance": source.host.unwrap_or(""),
    });
    let key = format!("{namespace}/{event_name}");
    txn.put(Resource::Events, &key, &mut event)?;
    Ok(())
}
