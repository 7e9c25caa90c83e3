//! The endpoints and EndpointSlice controllers: a Service with a selector gets an Endpoints
//! object and an EndpointSlice listing the pods it selects that have an IP, ready ones as
//! addresses, the others as not ready. Each reconcile writes only what changed.

use serde_json::{Map, Value, json};

use super::super::manifests;
use super::super::resources::Resource;
use super::super::store::{StoreError, Txn};
use super::objects::decode;
use super::pods;
use super::work::{FollowUps, Work};

const SERVICE_NAME: &str = "kubernetes.io/service-name";
const MANAGED_BY: &str = "endpointslice.kubernetes.io/managed-by";
const SLICE_CONTROLLER: &str = "endpointslice-controller.k8s.io";

/// Reconciles of the Services in `pod`'s namespace whose selectors match its labels.
pub(super) fn services_selecting(txn: &Txn<'_>, pod: &Value) -> FollowUps {
    let Some(namespace) = pod["metadata"]["namespace"].as_str() else {
        return Vec::new();
    };
    let labels = &pod["metadata"]["labels"];
    txn.scan(Resource::Services, &format!("{namespace}/"))
        .into_iter()
        .filter_map(|(key, svc)| {
            let svc = svc.decode().ok()?;
            let selector = svc["spec"]["selector"].as_object()?;
            (!selector.is_empty() && selects(selector, labels))
                .then_some((Work::Service(key), None))
        })
        .collect()
}

fn selects(selector: &Map<String, Value>, labels: &Value) -> bool {
    selector.iter().all(|(k, v)| &labels[k] == v)
}

pub(super) fn reconcile(txn: &mut Txn<'_>, key: &str) -> Result<FollowUps, StoreError> {
    let Some(stored) = txn.get(Resource::Services, key) else {
        // A deleted Service's Endpoints go with it (its slices go with their owner).
        txn.delete(Resource::Endpoints, key)?;
        return Ok(Vec::new());
    };
    let svc = decode(&stored)?;
    let Some(selector) = svc["spec"]["selector"]
        .as_object()
        .filter(|s| !s.is_empty())
    else {
        // Without a selector the endpoints are the user's to write.
        return Ok(Vec::new());
    };
    let namespace = svc["metadata"]["namespace"].as_str().unwrap_or("");
    let name = svc["metadata"]["name"].as_str().unwrap_or("");
    let selected: Vec<Value> = txn
        .scan(Resource::Pods, &format!("{namespace}/"))
        .into_iter()
        .filter_map(|(_, p)| p.decode().ok())
        .filter(|p| selects(selector, &p["metadata"]["labels"]))
        .filter(|p| !pods::finished(p))
        .filter(|p| {
            p["status"]["podIP"]
                .as_str()
                .is_some_and(|ip| !ip.is_empty())
        })
        .collect();
    // The Endpoints controller drops a Terminating pod; the EndpointSlice controller keeps
    // it, marked terminating, so that a proxy can drain it.
    let (terminating, selected): (Vec<Value>, Vec<Value>) =
        selected.into_iter().partition(pods::terminating);
    let ports: Vec<Value> = svc["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let mut port = json!({
                "port": target_port(p, selected.first().or(terminating.first())),
                "protocol": p["protocol"].as_str().unwrap_or("TCP"),
            });
            if let Some(n) = p["name"].as_str().filter(|n| !n.is_empty()) {
                port["name"] = json!(n);
            }
            port
        })
        .collect();
    let target = |p: &Value| json!({"kind": "Pod", "namespace": namespace, "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]});
    let address = |p: &Value| {
        let mut address = json!({"ip": p["status"]["podIP"], "nodeName": p["spec"]["nodeName"], "targetRef": target(p)});
        // A pod named in the Service's domain (a StatefulSet's) is addressed by hostname too.
        if let Some(host) = p["spec"]["hostname"].as_str().filter(|h| !h.is_empty())
            && p["spec"]["subdomain"].as_str() == Some(name)
        {
            address["hostname"] = json!(host);
        }
        address
    };
    let ready: Vec<Value> = selected
        .iter()
        .filter(|p| pods::is_ready(p))
        .map(address)
        .collect();
    let not_ready: Vec<Value> = selected
        .iter()
        .filter(|p| !pods::is_ready(p))
        .map(address)
        .collect();
    let mut subset = json!({"ports": ports});
    if !ready.is_empty() {
        subset["addresses"] = json!(ready);
    }
    if !not_ready.is_empty() {
        subset["notReadyAddresses"] = json!(not_ready);
    }
    let subsets = if selected.is_empty() {
        json!([])
    } else {
        json!([subset])
    };
    let now = manifests::timestamp(manifests::now_seconds());
    let mut labels = svc["metadata"]["labels"].clone();
    if !labels.is_object() {
        labels = json!({});
    }
    match txn.get(Resource::Endpoints, key) {
        Some(existing) => {
            let existing = decode(&existing)?;
            if existing["subsets"] != subsets {
                let mut next = existing;
                next["subsets"] = subsets;
                next["metadata"]["annotations"]["endpoints.kubernetes.io/last-change-trigger-time"] =
                    json!(now);
                txn.put(Resource::Endpoints, key, &mut next)?;
            }
        }
        None => {
            let mut endpoints = json!({
                "kind": "Endpoints",
                "apiVersion": "v1",
                "metadata": {
                    "name": name, "namespace": namespace,
                    "uid": manifests::uid(&mut rand::rng()), "creationTimestamp": now,
                    "labels": labels,
                    "annotations": {"endpoints.kubernetes.io/last-change-trigger-time": now},
                },
                "subsets": subsets,
            });
            txn.put(Resource::Endpoints, key, &mut endpoints)?;
        }
    }
    let endpoints: Vec<Value> = selected
        .iter()
        .chain(&terminating)
        .map(|p| {
            // Serving is the pod's readiness; ready is that of a pod not terminating.
            let serving = pods::is_ready(p);
            let terminating = pods::terminating(p);
            json!({
                "addresses": [p["status"]["podIP"]],
                "conditions": {"ready": serving && !terminating, "serving": serving, "terminating": terminating},
                "nodeName": p["spec"]["nodeName"],
                "targetRef": target(p),
            })
        })
        .collect();
    let slice = txn
        .scan(Resource::EndpointSlices, &format!("{namespace}/{name}-"))
        .into_iter()
        .find(|(_, s)| s.controller_uid.as_deref() == Some(&*stored.uid));
    match slice {
        Some((slice_key, existing)) => {
            let existing = decode(&existing)?;
            if existing["endpoints"] != json!(endpoints) || existing["ports"] != json!(ports) {
                let mut next = existing;
                next["endpoints"] = json!(endpoints);
                next["ports"] = json!(ports);
                let generation = next["metadata"]["generation"].as_u64().unwrap_or(1) + 1;
                next["metadata"]["generation"] = json!(generation);
                next["metadata"]["annotations"]["endpoints.kubernetes.io/last-change-trigger-time"] =
                    json!(now);
                txn.put(Resource::EndpointSlices, &slice_key, &mut next)?;
            }
        }
        None => {
            let slice_name = format!("{name}-{}", manifests::safe_suffix(&mut rand::rng(), 5));
            labels[SERVICE_NAME] = json!(name);
            labels[MANAGED_BY] = json!(SLICE_CONTROLLER);
            let mut slice = json!({
                "kind": "EndpointSlice",
                "apiVersion": "discovery.k8s.io/v1",
                "metadata": {
                    "name": slice_name, "generateName": format!("{name}-"), "namespace": namespace,
                    "uid": manifests::uid(&mut rand::rng()), "creationTimestamp": now,
                    "generation": 1, "labels": labels,
                    "annotations": {"endpoints.kubernetes.io/last-change-trigger-time": now},
                    "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": name,
                        "uid": &*stored.uid, "controller": true, "blockOwnerDeletion": true}],
                },
                "addressType": "IPv4",
                "endpoints": endpoints,
                "ports": ports,
            });
            txn.put(
                Resource::EndpointSlices,
                &format!("{namespace}/{slice_name}"),
                &mut slice,
            )?;
        }
    }
    Ok(Vec::new())
}

/// The port a Service port sends to: its targetPort as a number, a named one looked up in
/// a selected pod's containers, or the port itself.
fn target_port(port: &Value, pod: Option<&Value>) -> Value {
    match &port["targetPort"] {
        Value::Number(n) => json!(n),
        Value::String(name) => pod
            .and_then(|p| p["spec"]["containers"].as_array())
            .into_iter()
            .flatten()
            .flat_map(|c| c["ports"].as_array().cloned().unwrap_or_default())
            .find(|p| p["name"] == name.as_str())
            .map_or_else(|| port["port"].clone(), |p| p["containerPort"].clone()),
        _ => port["port"].clone(),
    }
}
