//! CustomResourceDefinitions (apiextensions.k8s.io/v1): what makes one valid, what the
//! server fills in (names, the cleanup finalizer, the NamesAccepted and Established
//! conditions), and keeping the served custom resources in step with the stored CRDs, in
//! the write that changed them: a CRD created or updated registers its resource (names,
//! scope, printer columns, schema of its storage version), one being deleted takes its
//! custom resources with it and stops being served.
//!
//! Only the storage version of a CRD is served (no conversion between versions).

pub mod schema;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

use super::manifests;
use super::object::StoredObject;
use super::resources::{
    Column, CustomSchema, Descriptor, RegistryError, Resource, leak_str, leak_strs,
};
use super::store::{Key, StoreError, Txn};
use schema::FieldError;

/// The finalizer the real server puts on every CRD so that its objects go first.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// Why the served resources could not be brought in step with the CRDs.
#[derive(Debug, thiserror::Error)]
pub enum CrdError {
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn text<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    path.iter().fold(v, |v, k| &v[*k]).as_str().unwrap_or("")
}

/// A lowercase RFC 1123 label, as plural and singular names must be.
fn is_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// The storage version's entry in `spec.versions`.
fn storage_version(crd: &Value) -> Option<&Value> {
    crd["spec"]["versions"]
        .as_array()?
        .iter()
        .find(|v| v["storage"] == true)
}

/// The checks the real server makes on a CRD (422 on any).
pub fn validate_definition(name: &str, crd: &Value) -> Vec<FieldError> {
    let mut out = Vec::new();
    let spec = &crd["spec"];
    let group = text(spec, &["group"]);
    let plural = text(spec, &["names", "plural"]);
    let kind = text(spec, &["names", "kind"]);
    let invalid = |field: &str, value: &str, detail: &str| FieldError {
        field: field.to_string(),
        reason: "FieldValueInvalid",
        short: "Invalid value",
        detail: format!("{value:?}: {detail}"),
    };
    let required = |field: &str, detail: &str| FieldError {
        field: field.to_string(),
        reason: "FieldValueRequired",
        short: "Required value",
        detail: detail.to_string(),
    };
    if group.is_empty() {
        out.push(required("spec.group", ""));
    } else if !group.contains('.') {
        out.push(invalid(
            "spec.group",
            group,
            "should be a domain with at least one dot",
        ));
    }
    if plural.is_empty() {
        out.push(required("spec.names.plural", ""));
    } else if !is_label(plural) {
        out.push(invalid(
            "spec.names.plural",
            plural,
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        ));
    }
    let singular = text(spec, &["names", "singular"]);
    if !singular.is_empty() && !is_label(singular) {
        out.push(invalid(
            "spec.names.singular",
            singular,
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        ));
    }
    if kind.is_empty() {
        out.push(required("spec.names.kind", ""));
    }
    if !group.is_empty() && !plural.is_empty() && name != format!("{plural}.{group}") {
        out.push(invalid(
            "metadata.name",
            name,
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    match text(spec, &["scope"]) {
        "Namespaced" | "Cluster" => {}
        other => out.push(FieldError {
            field: "spec.scope".into(),
            reason: "FieldValueNotSupported",
            short: "Unsupported value",
            detail: format!("{other:?}: supported values: \"Cluster\", \"Namespaced\""),
        }),
    }
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    if versions.is_empty() {
        out.push(invalid(
            "spec.versions",
            "null",
            "must have exactly one version marked as storage version",
        ));
    } else if versions.iter().filter(|v| v["storage"] == true).count() != 1 {
        out.push(invalid(
            "spec.versions",
            &Value::Array(versions.clone()).to_string(),
            "must have exactly one version marked as storage version",
        ));
    }
    for (i, v) in versions.iter().enumerate() {
        let at = format!("spec.versions[{i}]");
        if text(v, &["name"]).is_empty() {
            out.push(required(&format!("{at}.name"), ""));
        }
        let root = &v["schema"]["openAPIV3Schema"];
        if root.is_null() {
            out.push(required(
                &format!("{at}.schema.openAPIV3Schema"),
                "schemas are required",
            ));
        } else {
            schema::check_structural(root, &format!("{at}.schema.openAPIV3Schema"), &mut out);
        }
        for (j, c) in v["additionalPrinterColumns"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let col = format!("{at}.additionalPrinterColumns[{j}]");
            if text(c, &["name"]).is_empty() {
                out.push(required(&format!("{col}.name"), ""));
            }
            if text(c, &["jsonPath"]).is_empty() {
                out.push(required(&format!("{col}.jsonPath"), ""));
            }
            let t = text(c, &["type"]);
            if !matches!(t, "integer" | "number" | "string" | "boolean" | "date") {
                out.push(FieldError {
                    field: format!("{col}.type"),
                    reason: "FieldValueNotSupported",
                    short: "Unsupported value",
                    detail: format!(
                        "{t:?}: supported values: \"boolean\", \"date\", \"integer\", \"number\", \"string\""
                    ),
                });
            }
        }
    }
    out
}

/// What the server fills in on a new CRD: the names it derives, the cleanup finalizer,
/// and (as its naming and establishing controllers do at once) the status.
pub fn populate_new(crd: &mut Value) {
    let kind = text(crd, &["spec", "names", "kind"]).to_string();
    let names = &mut crd["spec"]["names"];
    if text(names, &["singular"]).is_empty() {
        names["singular"] = json!(kind.to_lowercase());
    }
    if text(names, &["listKind"]).is_empty() {
        names["listKind"] = json!(format!("{kind}List"));
    }
    if crd["spec"]["conversion"].is_null() {
        crd["spec"]["conversion"] = json!({"strategy": "None"});
    }
    let finalizers = crd["metadata"]["finalizers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if !finalizers.iter().any(|f| f == CLEANUP_FINALIZER) {
        let mut all = finalizers;
        all.push(json!(CLEANUP_FINALIZER));
        crd["metadata"]["finalizers"] = json!(all);
    }
    set_status(crd);
}

/// The status a CRD whose names are accepted has.
fn set_status(crd: &mut Value) {
    let at = crd["metadata"]["creationTimestamp"].clone();
    let stored: Vec<Value> = storage_version(crd)
        .map(|v| v["name"].clone())
        .into_iter()
        .collect();
    crd["status"] = json!({
        "acceptedNames": crd["spec"]["names"],
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "lastTransitionTime": at, "reason": "NoConflicts", "message": "no conflicts found"},
            {"type": "Established", "status": "True", "lastTransitionTime": at, "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"},
        ],
        "storedVersions": stored,
    });
}

/// The descriptor of a CRD's storage version.
fn descriptor(name: &str, crd: &Value) -> Option<Descriptor> {
    let spec = &crd["spec"];
    let version = storage_version(crd)?;
    let group = text(spec, &["group"]);
    let v = text(version, &["name"]);
    let kind = text(spec, &["names", "kind"]);
    let strings = |field: &str| -> Vec<String> {
        spec["names"][field]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut columns = vec![Column {
        json_path: "",
        ..Column::new("Name", "string", "Name must be unique within a namespace.")
    }];
    let declared = version["additionalPrinterColumns"].as_array();
    let printer = declared.cloned().unwrap_or_else(|| {
        vec![json!({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"})]
    });
    for c in printer {
        columns.push(Column {
            name: leak_str(text(&c, &["name"])),
            type_: leak_str(text(&c, &["type"])),
            format: leak_str(text(&c, &["format"])),
            priority: c["priority"].as_u64().map_or(0, |p| p.min(255) as u8),
            description: leak_str(text(&c, &["description"])),
            json_path: leak_str(text(&c, &["jsonPath"])),
        });
    }
    let singular = match text(spec, &["names", "singular"]) {
        "" => kind.to_lowercase(),
        s => s.to_string(),
    };
    let list_kind = match text(spec, &["names", "listKind"]) {
        "" => format!("{kind}List"),
        s => s.to_string(),
    };
    Some(Descriptor {
        group: leak_str(group),
        version: leak_str(v),
        api_version: leak_str(&format!("{group}/{v}")),
        plural: leak_str(text(spec, &["names", "plural"])),
        singular: leak_str(&singular),
        kind: leak_str(kind),
        list_kind: leak_str(&list_kind),
        short_names: leak_strs(&strings("shortNames")),
        categories: leak_strs(&strings("categories")),
        namespaced: text(spec, &["scope"]) == "Namespaced",
        status: version["subresources"]["status"].is_object(),
        scale: false,
        columns: Box::leak(columns.into_boxed_slice()),
        fields: &[],
        custom: Some(Box::leak(Box::new(CustomSchema {
            definition: leak_str(name),
            schema: version["schema"]["openAPIV3Schema"].clone(),
        }))),
    })
}

/// The served custom resource defined by CRD `name`, if any.
fn served_by(txn: &Txn<'_>, name: &str) -> Option<Resource> {
    txn.custom_resources()
        .iter()
        .copied()
        .find(|r| r.descriptor().custom.is_some_and(|c| c.definition == name))
}

/// Brings the served custom resources in step with CRD `name` as stored now: registered
/// (or re-registered with changed names, columns or schema) while it exists, and once it
/// is being deleted its objects deleted, its resource no longer served, and the CRD gone.
pub fn reconcile(txn: &mut Txn<'_>, cluster: u64, name: &str) -> Result<(), CrdError> {
    let current = txn
        .get(Resource::CustomResourceDefinitions, name)
        .and_then(|o| o.decode().ok());
    let before = served_by(txn, name);
    match current {
        Some(crd) if !crd["metadata"]["deletionTimestamp"].is_string() => {
            let Some(d) = descriptor(name, &crd) else {
                return Ok(());
            };
            let resource = Resource::register(cluster, d)?;
            if let Some(old) = before.filter(|old| *old != resource) {
                remove_all(txn, old)?;
            }
            txn.serve(resource);
        }
        Some(mut crd) => {
            if let Some(old) = before {
                remove_all(txn, old)?;
            }
            if let Some(finalizers) = crd["metadata"]["finalizers"].as_array_mut() {
                finalizers.retain(|f| f != CLEANUP_FINALIZER);
                if finalizers.is_empty() {
                    txn.delete(Resource::CustomResourceDefinitions, name)?;
                } else {
                    txn.put(Resource::CustomResourceDefinitions, name, &mut crd)?;
                }
            }
        }
        None => {
            if let Some(old) = before {
                remove_all(txn, old)?;
            }
        }
    }
    Ok(())
}

/// Deletes every object of `resource` (watchers see each DELETED) and stops serving it.
fn remove_all(txn: &mut Txn<'_>, resource: Resource) -> Result<(), StoreError> {
    for key in txn.find(resource, |_, _| true) {
        txn.delete(resource, &key)?;
    }
    txn.unserve(resource);
    Ok(())
}

/// A seeded object: its resource, key, resourceVersion and encoded form.
pub type Seeded = (Resource, Key, u64, StoredObject);

/// The demo cluster's CRDs, registered for `cluster`, with their objects numbered from
/// `first_rv`: two Widgets in each of `namespaces` and three ClusterPolicies. Returns the
/// resources to serve and the objects to load.
pub fn demo(
    cluster: u64,
    namespaces: &[String],
    seed: u64,
    born: i64,
    first_rv: u64,
) -> Result<(Vec<Resource>, Vec<Seeded>), CrdError> {
    let mut rng = StdRng::seed_from_u64(seed ^ DEMO_STREAM);
    let created = manifests::timestamp(born);
    let uids = [manifests::uid(&mut rng), manifests::uid(&mut rng)];
    let definitions = demo_definitions(&created, [&uids[0], &uids[1]]);
    let mut rv = first_rv;
    let mut out = Vec::new();
    let mut served = Vec::new();
    let mut push = |resource: Resource, key: String, mut value: Value| -> Result<(), CrdError> {
        value["metadata"]["resourceVersion"] = json!(rv.to_string());
        let object = StoredObject::encode(&value)
            .map_err(|e| CrdError::Store(StoreError::Encode(e.to_string())))?;
        out.push((resource, Key::from(key), rv, object));
        rv += 1;
        Ok(())
    };
    for crd in &definitions {
        let name = text(crd, &["metadata", "name"]).to_string();
        push(
            Resource::CustomResourceDefinitions,
            name.clone(),
            crd.clone(),
        )?;
        if let Some(d) = descriptor(&name, crd) {
            served.push(Resource::register(cluster, d)?);
        }
    }
    let &[widgets, policies] = served.as_slice() else {
        return Ok((served, out));
    };
    for (i, ns) in namespaces.iter().enumerate() {
        let team = ns.split('-').next().unwrap_or("platform");
        for j in 0..2 {
            let name = format!("{team}-widget-{j}");
            let at = manifests::timestamp(born + 86_400 + (i * 2 + j) as i64 * 311);
            let ready = rng.random_bool(0.8);
            let size = ["small", "medium", "large"][rng.random_range(0..3)];
            let color = ["blue", "green", "red"][rng.random_range(0..3)];
            let value = json!({
                "apiVersion": "example.com/v1",
                "kind": "Widget",
                "metadata": {"name": name, "namespace": ns, "uid": manifests::uid(&mut rng), "creationTimestamp": at, "generation": 1, "labels": {"team": team}},
                "spec": {"size": size, "replicas": rng.random_range(1..6), "color": color},
                "status": widget_status(ready, &at),
            });
            push(widgets, format!("{ns}/{name}"), value)?;
        }
    }
    for (name, action, rules) in [
        ("require-team-label", "enforce", ["metadata.labels.team"]),
        ("restrict-registries", "audit", ["registry.example.com/*"]),
        (
            "deny-privileged",
            "enforce",
            ["securityContext.privileged=false"],
        ),
    ] {
        let value = json!({
            "apiVersion": "example.com/v1",
            "kind": "ClusterPolicy",
            "metadata": {"name": name, "uid": manifests::uid(&mut rng), "creationTimestamp": created, "generation": 1},
            "spec": {"action": action, "rules": rules, "priority": 100},
        });
        push(policies, name.to_string(), value)?;
    }
    Ok((served, out))
}

/// `count` Widgets of about 3 KB each (24 `spec.settings` of ~100 bytes make most of it),
/// spread over `namespaces` and numbered from `first_rv`: a custom resource as large as a
/// cluster's pods, for the scale benchmark's CRD mode.
pub fn bulk_widgets(
    widgets: Resource,
    namespaces: &[String],
    count: usize,
    seed: u64,
    born: i64,
    first_rv: u64,
) -> Result<Vec<Seeded>, CrdError> {
    let mut rng = StdRng::seed_from_u64(seed ^ BULK_STREAM);
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let ns = namespaces
            .get(i % namespaces.len().max(1))
            .map_or("default", String::as_str);
        let team = ns.split('-').next().unwrap_or("platform");
        let name = format!("{team}-bulk-{i:06}");
        let at = manifests::timestamp(born + (i as i64 % 86_400));
        let settings: serde_json::Map<String, Value> = (0..24)
            .map(|k| {
                let value = format!(
                    "https://{team}-svc-{:04}.{ns}.svc.cluster.local:{}/v1/settings/{k}?token={:016x}",
                    rng.random_range(0..10_000),
                    rng.random_range(1024..65_535),
                    rng.random::<u64>(),
                );
                (format!("setting-{k:02}"), json!(value))
            })
            .collect();
        let rv = first_rv + i as u64;
        let tier = ["gold", "silver", "bronze"][i % 3];
        let size = ["small", "medium", "large"][rng.random_range(0..3)];
        let value = json!({
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": name, "namespace": ns, "uid": manifests::uid(&mut rng), "resourceVersion": rv.to_string(), "creationTimestamp": at, "generation": 1, "labels": {"team": team, "app.kubernetes.io/name": "bulk", "tier": tier}},
            "spec": {"size": size, "replicas": rng.random_range(1..6), "color": "blue", "settings": settings},
            "status": widget_status(rng.random_bool(0.8), &at),
        });
        let object = StoredObject::encode(&value)
            .map_err(|e| CrdError::Store(StoreError::Encode(e.to_string())))?;
        out.push((widgets, Key::from(format!("{ns}/{name}")), rv, object));
    }
    Ok(out)
}

/// Mixed into the seed for the bulk Widgets' random stream.
const BULK_STREAM: u64 = 0xb01c_b01c_b01c_b01c;

/// Mixed into the seed for the demo custom resources' random stream.
const DEMO_STREAM: u64 = 0xc2d0_de70_c2d0_de70;

/// A Widget's status: its Ready condition and phase.
pub fn widget_status(ready: bool, at: &str) -> Value {
    let (status, reason, phase) = if ready {
        ("True", "Reconciled", "Running")
    } else {
        ("False", "Progressing", "Pending")
    };
    json!({
        "phase": phase,
        "observedGeneration": 1,
        "conditions": [{"type": "Ready", "status": status, "reason": reason, "message": format!("widget is {}", phase.to_lowercase()), "lastTransitionTime": at}],
    })
}

/// The demo cluster's CRDs: namespaced `widgets.example.com` (with a status subresource
/// and printer columns) and cluster-scoped `clusterpolicies.example.com`.
fn demo_definitions(created: &str, uids: [&str; 2]) -> [Value; 2] {
    let widget_schema = json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["size"],
                "properties": {
                    "size": {"type": "string", "enum": ["small", "medium", "large"]},
                    "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
                    "color": {"type": "string", "default": "blue"},
                    "settings": {"type": "object", "additionalProperties": {"type": "string"}},
                },
            },
            "status": {
                "type": "object",
                "properties": {
                    "phase": {"type": "string"},
                    "observedGeneration": {"type": "integer"},
                    "conditions": {"type": "array", "items": {
                        "type": "object",
                        "required": ["type", "status"],
                        "properties": {
                            "type": {"type": "string"},
                            "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
                            "reason": {"type": "string"},
                            "message": {"type": "string"},
                            "lastTransitionTime": {"type": "string"},
                        },
                    }},
                },
            },
        },
    });
    let policy_schema = json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["action"],
                "properties": {
                    "action": {"type": "string", "enum": ["audit", "enforce"]},
                    "rules": {"type": "array", "items": {"type": "string"}},
                    "priority": {"type": "integer", "default": 100},
                },
            },
        },
    });
    let crd = |name: &str, uid: &str, spec: Value| {
        let mut v = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": name, "uid": uid, "creationTimestamp": created, "generation": 1},
            "spec": spec,
        });
        populate_new(&mut v);
        v
    };
    [
        crd(
            "widgets.example.com",
            uids[0],
            json!({
                "group": "example.com",
                "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"], "categories": ["all"]},
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": widget_schema},
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [
                        {"name": "Size", "type": "string", "jsonPath": ".spec.size"},
                        {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[0].status"},
                        {"name": "Phase", "type": "string", "jsonPath": ".status.phase", "priority": 1},
                        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                    ],
                }],
            }),
        ),
        crd(
            "clusterpolicies.example.com",
            uids[1],
            json!({
                "group": "example.com",
                "scope": "Cluster",
                "names": {"plural": "clusterpolicies", "singular": "clusterpolicy", "kind": "ClusterPolicy", "shortNames": ["cpol"]},
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": policy_schema},
                    "additionalPrinterColumns": [
                        {"name": "Action", "type": "string", "jsonPath": ".spec.action"},
                        {"name": "Priority", "type": "integer", "jsonPath": ".spec.priority"},
                        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                    ],
                }],
            }),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bulk_widgets_are_about_3_kb_each_with_distinct_keys_and_versions() {
        let namespaces = ["payments-prod".to_string(), "search-dev".to_string()];
        let (served, _) = demo(u64::MAX - 7, &namespaces, 1, 1_700_000_000, 1).unwrap();
        let widgets = served[0];
        assert_eq!(widgets.plural(), "widgets");
        let bulk = bulk_widgets(widgets, &namespaces, 50, 1, 1_700_000_000, 100).unwrap();
        assert_eq!(bulk.len(), 50);
        let keys: std::collections::HashSet<_> = bulk.iter().map(|b| b.1.clone()).collect();
        assert_eq!(keys.len(), 50);
        for (i, (resource, key, rv, object)) in bulk.iter().enumerate() {
            assert_eq!(*resource, widgets);
            assert_eq!(*rv, 100 + i as u64);
            let size = object.json.len();
            assert!((2_500..=3_500).contains(&size), "{key}: {size} bytes");
            let value: Value = serde_json::from_slice(&object.json).unwrap();
            assert_eq!(value["metadata"]["resourceVersion"], json!(rv.to_string()));
            assert_eq!(value["spec"]["settings"].as_object().unwrap().len(), 24);
        }
    }
}
