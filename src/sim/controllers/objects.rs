//! What every controller reads and writes of the objects it manages: owner references, the
//! objects a controller owns, and their status.

use crate::resources::Resource;
use crate::store::{Key, Txn};

use super::work::Work;

/// The `namespace/name` key of the controlling owner of kind `kind` named in `value`.
pub(super) fn owner_key(value: &serde_json::Value, kind: &str) -> Option<Key> {
    let namespace = value["metadata"]["namespace"].as_str()?;
    value["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .find(|r| r["controller"].as_bool() == Some(true) && r["kind"] == kind)
        .and_then(|r| r["name"].as_str())
        .map(|name| Key::from(format!("{namespace}/{name}")))
}

/// The reconcile of the controller that owns `pod`, if one of these controllers does.
pub(super) fn owner_work(pod: &serde_json::Value) -> Option<Work> {
    [
        ("ReplicaSet", Work::ReplicaSet as fn(Key) -> Work),
        ("StatefulSet", Work::StatefulSet),
        ("DaemonSet", Work::DaemonSet),
        ("Job", Work::Job),
    ]
    .into_iter()
    .find_map(|(kind, work)| owner_key(pod, kind).map(work))
}

/// The objects of `resource` under `prefix` whose controller is `uid`, decoded.
pub(super) fn owned(
    txn: &Txn<'_>,
    resource: Resource,
    prefix: &str,
    uid: &str,
) -> Vec<(String, serde_json::Value)> {
    txn.scan(resource, prefix)
        .into_iter()
        .filter(|(_, o)| o.controller_uid.as_deref() == Some(uid))
        .filter_map(|(k, o)| Some((k.to_string(), o.decode().ok()?)))
        .collect()
}

/// Sets `status` of `key` unless it already is that.
pub(super) fn set_status(
    txn: &mut Txn<'_>,
    resource: Resource,
    key: &str,
    current: &serde_json::Value,
    status: serde_json::Value,
) -> Result<(), crate::store::StoreError> {
    if current["status"] != status {
        txn.modify_member(resource, key, "status", |s| *s = status)?;
    }
    Ok(())
}

pub(super) fn decode(
    object: &crate::object::StoredObject,
) -> Result<serde_json::Value, crate::store::StoreError> {
    object
        .decode()
        .map_err(|e| crate::store::StoreError::Encode(e.to_string()))
}
