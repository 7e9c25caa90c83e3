//! What the server fills in: on create, the fields it owns (uid, timestamps, generation,
//! managedFields, a fresh status); on every write, Secret normalisation.

use base64::Engine as _;
use serde_json::{Value, json};

use crate::sim::manifests::{self, fields_v1, managed_entry};
use crate::sim::resources::Resource;

/// Fills what the server owns on create: uid, timestamps, generation, managedFields and
/// the status a fresh object starts with.
pub(super) fn populate_new(resource: Resource, value: &mut Value, manager: &str) {
    let now = manifests::timestamp(manifests::now_seconds());
    let mut owned = value.clone();
    if let Some(o) = owned.as_object_mut() {
        o.remove("status");
        o.remove("kind");
        o.remove("apiVersion");
    }
    if let Some(meta) = owned["metadata"].as_object_mut() {
        for k in [
            "name",
            "namespace",
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "managedFields",
            "generation",
        ] {
            meta.remove(k);
        }
    }
    let meta = &mut value["metadata"];
    meta["uid"] = json!(manifests::uid(&mut rand::rng()));
    meta["creationTimestamp"] = json!(now);
    if let Some(m) = meta.as_object_mut() {
        m.remove("deletionTimestamp");
    }
    meta["managedFields"] = json!([managed_entry(
        manager,
        resource.api_version(),
        &now,
        fields_v1(&owned),
        None
    )]);
    value["kind"] = json!(resource.kind());
    value["apiVersion"] = json!(resource.api_version());
    match resource {
        Resource::Namespaces => {
            let name = value["metadata"]["name"].clone();
            value["metadata"]["labels"]["kubernetes.io/metadata.name"] = name;
            value["spec"] = json!({"finalizers": ["kubernetes"]});
            value["status"] = json!({"phase": "Active"});
        }
        Resource::Pods => {
            value["status"] = json!({"phase": "Pending", "qosClass": "BestEffort"});
        }
        Resource::Deployments | Resource::ReplicaSets => {
            value["metadata"]["generation"] = json!(1);
            value["status"] = json!({});
        }
        Resource::Secrets | Resource::Nodes => {}
    }
    normalize(resource, value);
}

/// What the server does on every write: a Secret's write-only stringData is folded into
/// data (base64) and its type defaults to Opaque.
pub(super) fn normalize(resource: Resource, value: &mut Value) {
    if resource != Resource::Secrets {
        return;
    }
    if let Some(Value::Object(plain)) = value.get_mut("stringData").map(Value::take) {
        for (key, v) in plain {
            let encoded =
                base64::engine::general_purpose::STANDARD.encode(v.as_str().unwrap_or_default());
            value["data"][key] = json!(encoded);
        }
    }
    if let Some(object) = value.as_object_mut() {
        object.remove("stringData");
    }
    if value["type"].as_str().is_none_or(str::is_empty) {
        value["type"] = json!("Opaque");
    }
}
