//! ControllerRevisions, the template history of StatefulSets and DaemonSets: each distinct
//! template gets one, named after its owner and the template's hash and numbered in order.

use serde_json::{Value, json};

use super::super::manifests;
use super::super::resources::Resource;
use super::super::store::{StoreError, Txn};
use super::objects::owned;

/// The revision of `owner`'s current template: `(name, hash, number)`, made if there is none.
pub(super) fn current(
    txn: &mut Txn<'_>,
    owner: &Value,
) -> Result<(String, String, u64), StoreError> {
    let meta = &owner["metadata"];
    let namespace = meta["namespace"].as_str().unwrap_or("");
    let name = meta["name"].as_str().unwrap_or("");
    let uid = meta["uid"].as_str().unwrap_or("");
    let template = &owner["spec"]["template"];
    let hash = manifests::template_hash(template);
    let revision_name = format!("{name}-{hash}");
    let revisions = owned(
        txn,
        Resource::ControllerRevisions,
        &format!("{namespace}/{name}-"),
        uid,
    );
    if let Some((_, existing)) = revisions
        .iter()
        .find(|(_, r)| r["metadata"]["name"] == revision_name.as_str())
    {
        return Ok((
            revision_name,
            hash,
            existing["revision"].as_u64().unwrap_or(1),
        ));
    }
    let number = revisions
        .iter()
        .filter_map(|(_, r)| r["revision"].as_u64())
        .max()
        .unwrap_or(0)
        + 1;
    let now = manifests::timestamp(manifests::now_seconds());
    let mut labels = template["metadata"]["labels"].clone();
    if !labels.is_object() {
        labels = json!({});
    }
    labels["controller.kubernetes.io/hash"] = json!(hash);
    let mut revision = json!({
        "kind": "ControllerRevision",
        "apiVersion": "apps/v1",
        "metadata": {
            "name": revision_name,
            "namespace": namespace,
            "uid": manifests::uid(&mut rand::rng()),
            "creationTimestamp": now,
            "labels": labels,
            "ownerReferences": [{
                "apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": name,
                "uid": uid, "controller": true, "blockOwnerDeletion": true,
            }],
        },
        "data": {"spec": {"template": {
            "$patch": "replace", "metadata": template["metadata"], "spec": template["spec"],
        }}},
        "revision": number,
    });
    txn.put(
        Resource::ControllerRevisions,
        &format!("{namespace}/{revision_name}"),
        &mut revision,
    )?;
    Ok((revision_name, hash, number))
}
