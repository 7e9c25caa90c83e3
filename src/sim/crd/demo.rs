//! The demo cluster's CRDs and custom resources, and the bulk Widgets of the scale benchmark.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

use crate::manifests;
use crate::object::StoredObject;
use crate::resources::Resource;
use crate::store::{Key, StoreError};

use super::definition::{descriptor, populate_new, text};
use super::serving::CrdError;

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
