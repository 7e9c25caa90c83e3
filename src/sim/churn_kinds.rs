//! The churn of the kinds around the workloads, as their controllers make it: an
//! application's Endpoints and EndpointSlice follow its pods, node Leases are renewed,
//! and a crashing container's BackOff Event counts up.

use std::sync::Arc;

use serde_json::{Value, json};

use super::manifests;
use super::object::StoredObject;
use super::resources::Resource;
use super::store::{Key, Txn};

/// The `app` label of live pod `key`, which names its Service and Endpoints.
pub(crate) fn app_of(txn: &Txn<'_>, key: &str) -> Option<String> {
    let pod = txn.get(Resource::Pods, key)?;
    label(&pod, "app")
}

fn label(object: &StoredObject, name: &str) -> Option<String> {
    object
        .labels
        .iter()
        .find(|(k, _)| &**k == name)
        .map(|(_, v)| v.to_string())
}

/// A pod as the endpoints controllers list it.
struct Member {
    ip: String,
    node: String,
    name: String,
    uid: String,
    ready: bool,
}

fn members(txn: &Txn<'_>, namespace: &str, app: &str) -> Vec<Member> {
    txn.scan(Resource::Pods, &format!("{namespace}/{app}-"))
        .into_iter()
        .filter(|(_, pod)| label(pod, "app").as_deref() == Some(app))
        .filter_map(|(key, pod)| {
            let ip = pod.fields.pod_ip.as_deref()?.to_string();
            if pod.fields.terminating {
                return None;
            }
            let ready = pod.fields.ready;
            Some(Member {
                ip,
                node: pod.fields.node_name.as_deref().unwrap_or("").to_string(),
                name: key.rsplit_once('/').map_or(&*key, |(_, n)| n).to_string(),
                uid: pod.uid.to_string(),
                ready,
            })
        })
        .collect()
}

/// Rewrites the Endpoints and EndpointSlice of `app` in `namespace` from its live pods, as
/// the endpoints and endpointslice controllers do; `false` if it has neither or nothing
/// changed.
pub(crate) fn sync_endpoints(txn: &mut Txn<'_>, namespace: &str, app: &str) -> bool {
    let pods = members(txn, namespace, app);
    let at = manifests::timestamp(manifests::now_seconds());
    let target =
        |m: &Member| json!({"kind": "Pod", "namespace": namespace, "name": m.name, "uid": m.uid});
    let mut wrote = false;
    let key = format!("{namespace}/{app}");
    if let Some(mut endpoints) = txn
        .get(Resource::Endpoints, &key)
        .and_then(|o| o.decode().ok())
    {
        let address = |m: &Member| json!({"ip": m.ip, "nodeName": m.node, "targetRef": target(m)});
        let ready: Vec<Value> = pods.iter().filter(|m| m.ready).map(address).collect();
        let not_ready: Vec<Value> = pods.iter().filter(|m| !m.ready).map(address).collect();
        let ports = endpoints["subsets"][0]["ports"].clone();
        let mut subset = json!({"ports": ports});
        if !ready.is_empty() {
            subset["addresses"] = json!(ready);
        }
        if !not_ready.is_empty() {
            subset["notReadyAddresses"] = json!(not_ready);
        }
        let subsets = if pods.is_empty() {
            json!([])
        } else {
            json!([subset])
        };
        if endpoints["subsets"] != subsets {
            endpoints["subsets"] = subsets;
            endpoints["metadata"]["annotations"]["endpoints.kubernetes.io/last-change-trigger-time"] =
                json!(at);
            wrote |= txn.put(Resource::Endpoints, &key, &mut endpoints).is_ok();
        }
    }
    let slices: Vec<(Arc<str>, Arc<StoredObject>)> = txn
        .scan(Resource::EndpointSlices, &format!("{namespace}/{app}-"))
        .into_iter()
        .filter(|(_, s)| label(s, "kubernetes.io/service-name").as_deref() == Some(app))
        .collect();
    if let Some((slice_key, slice)) = slices.first()
        && let Ok(mut slice) = slice.decode()
    {
        let endpoints: Vec<Value> = pods
            .iter()
            .map(|m| {
                json!({
                    "addresses": [m.ip],
                    "conditions": {"ready": m.ready, "serving": m.ready, "terminating": false},
                    "nodeName": m.node,
                    "targetRef": target(m),
                })
            })
            .collect();
        let endpoints = json!(endpoints);
        if slice["endpoints"] != endpoints {
            slice["endpoints"] = endpoints;
            slice["metadata"]["annotations"]["endpoints.kubernetes.io/last-change-trigger-time"] =
                json!(at);
            let generation = slice["metadata"]["generation"].as_u64().unwrap_or(1);
            slice["metadata"]["generation"] = json!(generation + 1);
            wrote |= txn
                .put(Resource::EndpointSlices, slice_key, &mut slice)
                .is_ok();
        }
    }
    wrote
}

/// The Widget `pick` chooses, if the cluster serves widgets and has any.
fn pick_widget(txn: &Txn<'_>, pick: usize) -> Option<(Resource, Key)> {
    let widgets = txn
        .custom_resources()
        .iter()
        .copied()
        .find(|r| r.plural() == "widgets" && r.group() == "example.com")?;
    let keys = txn.find(widgets, |_, _| true);
    let key = keys.get(pick % keys.len().max(1))?.clone();
    Some((widgets, key))
}

/// With no Widget controller running, the churn stands in for one: a Widget's Ready
/// condition (and phase) flips, the demo custom resource's status moving. `false` if the
/// cluster has no widgets.
pub(crate) fn flip_widget(txn: &mut Txn<'_>, pick: usize) -> bool {
    let Some((widgets, key)) = pick_widget(txn, pick) else {
        return false;
    };
    matches!(
        txn.modify_member(widgets, &key, "status", |status| {
            let ready = status["conditions"][0]["status"] == "True";
            let at = manifests::timestamp(manifests::now_seconds());
            *status = crate::crd::widget_status(!ready, &at);
        }),
        Ok(Some(_))
    )
}

/// With the Widget controller running, the status is its to write: the churn edits a
/// Widget's spec instead, as its owner would (`replicas` set to 1–5, the generation moving),
/// and the controller reconciles the change. `false` if the cluster has no widgets.
pub(crate) fn edit_widget(txn: &mut Txn<'_>, pick: usize, replicas: u64) -> bool {
    let Some((widgets, key)) = pick_widget(txn, pick) else {
        return false;
    };
    let Some(mut widget) = txn.get(widgets, &key).and_then(|w| w.decode().ok()) else {
        return false;
    };
    if widget["spec"]["replicas"] == replicas {
        return false;
    }
    widget["spec"]["replicas"] = json!(replicas);
    let generation = widget["metadata"]["generation"].as_u64().unwrap_or(1);
    widget["metadata"]["generation"] = json!(generation + 1);
    txn.put(widgets, &key, &mut widget).is_ok()
}

/// The kubelet of `node` renews its Lease; `false` if the node has none.
pub(crate) fn renew_node_lease(txn: &mut Txn<'_>, node: &str) -> bool {
    let key = format!("kube-node-lease/{node}");
    matches!(
        txn.modify_member(Resource::Leases, &key, "spec", |spec| {
            let now = manifests::timestamp(manifests::now_seconds());
            spec["renewTime"] = json!(format!("{}.000000Z", now.trim_end_matches('Z')));
        }),
        Ok(Some(_))
    )
}

/// The kubelet reports that pod `key`'s container `app` is backing off: its BackOff
/// Event counts up, or is created on the first crash.
pub(crate) fn record_back_off(txn: &mut Txn<'_>, key: &str) -> bool {
    let Some(pod) = txn.get(Resource::Pods, key) else {
        return false;
    };
    let (namespace, name) = key.split_once('/').unwrap_or(("", key));
    let message = format!(
        "Back-off restarting failed container app in pod {name}_{namespace}({})",
        pod.uid
    );
    record_app_event(txn, key, "Warning", "BackOff", &message)
}

/// The kubelet reports that pod `key`'s container `app` failed its liveness probe and was
/// killed to be restarted: the Unhealthy and Killing Events, each counting up.
pub(crate) fn record_liveness_kill(txn: &mut Txn<'_>, key: &str) -> bool {
    record_app_event(
        txn,
        key,
        "Warning",
        "Unhealthy",
        "Liveness probe failed: HTTP probe failed with statuscode: 503",
    ) && record_app_event(
        txn,
        key,
        "Normal",
        "Killing",
        "Container app failed liveness probe, will be restarted",
    )
}

/// Whether pod `key`'s app is one whose crashes are liveness failures: the caches, whose
/// probe times out under load before they die.
pub(crate) fn fails_liveness(txn: &Txn<'_>, key: &str) -> bool {
    app_of(txn, key).is_some_and(|app| app.ends_with("-cache") || app.contains("-cache-"))
}

/// A kubelet Event about pod `key`'s container `app`: the one with the same reason and
/// message counts up, or it is created.
fn record_app_event(
    txn: &mut Txn<'_>,
    key: &str,
    type_: &str,
    reason: &str,
    message: &str,
) -> bool {
    let Some((namespace, name)) = key.split_once('/') else {
        return false;
    };
    let Some(pod) = txn.get(Resource::Pods, key) else {
        return false;
    };
    let now = manifests::timestamp(manifests::now_seconds());
    let existing = txn
        .scan(Resource::Events, &format!("{namespace}/{name}."))
        .into_iter()
        .find_map(|(k, e)| {
            let v = e.decode().ok()?;
            (v["reason"] == reason
                && v["message"] == message
                && v["involvedObject"]["uid"] == *pod.uid)
                .then_some((k, v))
        });
    match existing {
        Some((event_key, mut event)) => {
            let count = event["count"].as_u64().unwrap_or(1);
            event["count"] = json!(count + 1);
            event["lastTimestamp"] = json!(now);
            txn.put(Resource::Events, &event_key, &mut event).is_ok()
        }
        None => {
            let event_name = format!("{name}.{:016x}", txn.next_resource_version());
            let mut event = json!({
                "kind": "Event",
                "apiVersion": "v1",
                "metadata": {"name": event_name, "namespace": namespace, "uid": manifests::uid(&mut rand::rng()), "creationTimestamp": now},
                "involvedObject": {"kind": "Pod", "namespace": namespace, "name": name, "uid": &*pod.uid, "apiVersion": "v1", "fieldPath": "spec.containers{app}"},
                "reason": reason,
                "message": message,
                "source": {"component": "kubelet", "host": pod.fields.node_name.as_deref().unwrap_or("")},
                "firstTimestamp": now,
                "lastTimestamp": now,
                "count": 1,
                "type": type_,
                "eventTime": null,
                "reportingComponent": "kubelet",
                "reportingInstance": pod.fields.node_name.as_deref().unwrap_or(""),
            });
            txn.put(
                Resource::Events,
                &format!("{namespace}/{event_name}"),
                &mut event,
            )
            .is_ok()
        }
    }
}

/// Counts Deployment `key`'s ReplicaSets' status from their live pods (Terminating ones no
/// longer count), then its own from theirs, as their controllers do; an object whose counts
/// did not move is not written.
pub(crate) fn recount_deployment(txn: &mut Txn<'_>, key: &str) {
    let Some(Ok(mut deployment)) = txn.get(Resource::Deployments, key).map(|d| d.decode()) else {
        return;
    };
    let uid = deployment["metadata"]["uid"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let sets: Vec<(Key, Arc<StoredObject>)> = txn
        .scan(Resource::ReplicaSets, &format!("{key}-"))
        .into_iter()
        .filter(|(_, rs)| rs.controller_uid.as_deref() == Some(uid.as_str()))
        .collect();
    let (mut replicas, mut ready, mut updated) = (0, 0, (0, 0));
    for (rs_key, stored) in sets {
        let Ok(mut rs) = stored.decode() else {
            continue;
        };
        // Ready or not, of each of its pods not Terminating.
        let live: Vec<bool> = txn
            .scan(Resource::Pods, &format!("{rs_key}-"))
            .into_iter()
            .filter(|(_, pod)| pod.controller_uid.as_deref() == Some(&*stored.uid))
            .filter(|(_, pod)| !pod.fields.terminating)
            .map(|(_, pod)| pod.fields.ready)
            .collect();
        let rs_ready = live.iter().filter(|ready| **ready).count() as u32;
        let before = rs["status"].clone();
        rs["status"]["replicas"] = json!(live.len());
        rs["status"]["fullyLabeledReplicas"] = json!(live.len());
        manifests::count_ready(&mut rs, rs_ready);
        if rs["status"] != before {
            let status = rs["status"].take();
            let _ = txn.modify_member(Resource::ReplicaSets, &rs_key, "status", |s| *s = status);
        }
        replicas += live.len();
        ready += rs_ready;
        // The newest revision's pods are the updated ones.
        let revision = rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
            .as_str()
            .and_then(|r| r.parse::<u64>().ok())
            .unwrap_or(0);
        if revision >= updated.0 {
            updated = (revision, live.len());
        }
    }
    let before = deployment["status"].clone();
    deployment["status"]["replicas"] = json!(replicas);
    deployment["status"]["updatedReplicas"] = json!(updated.1);
    manifests::count_ready(&mut deployment, ready);
    let available = |status: &Value| {
        status["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().position(|c| c["type"] == "Available"))
            .map(|at| (at, status["conditions"][at]["status"].clone()))
    };
    if let Some((at, now)) = available(&deployment["status"])
        && available(&before).is_some_and(|(_, was)| was != now)
    {
        let time = json!(manifests::timestamp(manifests::now_seconds()));
        deployment["status"]["conditions"][at]["lastUpdateTime"] = time.clone();
        deployment["status"]["conditions"][at]["lastTransitionTime"] = time;
    }
    if deployment["status"] != before {
        let status = deployment["status"].take();
        let _ = txn.modify_member(Resource::Deployments, key, "status", |s| *s = status);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Key, Store};
    use crate::workload::{WorkloadSpec, generate};

    fn cluster() -> Store {
        cluster_of(60)
    }

    fn cluster_of(pods: usize) -> Store {
        let spec = WorkloadSpec {
            pods,
            nodes: 3,
            namespaces: 2,
            seed: 11,
            birth: 1_741_944_000,
            workload_pods: false,
        };
        let store = Store::new(1000);
        store.load(
            generate(&spec, 1)
                .unwrap()
                .into_iter()
                .map(|g| (g.resource, Key::from(g.key), g.rv, g.object)),
        );
        store
    }

    fn ips(value: &Value) -> Vec<String> {
        let mut ips: Vec<String> = value["subsets"][0]["addresses"]
            .as_array()
            .into_iter()
            .flatten()
            .chain(
                value["subsets"][0]["notReadyAddresses"]
                    .as_array()
                    .into_iter()
                    .flatten(),
            )
            .map(|a| a["ip"].as_str().unwrap().to_string())
            .collect();
        ips.sort();
        ips
    }

    #[test]
    fn endpoints_follow_a_deleted_pod() {
        let store = cluster();
        store.write(|txn| {
            let (key, pod) = txn
                .scan(Resource::Pods, "")
                .into_iter()
                .find(|(_, p)| p.fields.pod_ip.is_some())
                .unwrap();
            let ip = pod.fields.pod_ip.as_deref().unwrap().to_string();
            let app = app_of(txn, &key).unwrap();
            let namespace = key.split_once('/').unwrap().0.to_string();
            let endpoints_key = format!("{namespace}/{app}");
            let before = txn
                .get(Resource::Endpoints, &endpoints_key)
                .unwrap()
                .decode()
                .unwrap();
            assert!(ips(&before).contains(&ip));
            txn.delete(Resource::Pods, &key).unwrap();
            assert!(sync_endpoints(txn, &namespace, &app));
            let after = txn
                .get(Resource::Endpoints, &endpoints_key)
                .unwrap()
                .decode()
                .unwrap();
            assert!(!ips(&after).contains(&ip), "{after}");
            assert_eq!(ips(&after).len() + 1, ips(&before).len());
            let slice = txn
                .scan(Resource::EndpointSlices, &format!("{namespace}/{app}-"))
                .into_iter()
                .find(|(_, s)| label(s, "kubernetes.io/service-name").as_deref() == Some(&*app))
                .unwrap()
                .1
                .decode()
                .unwrap();
            assert!(!slice.to_string().contains(&format!("\"{ip}\"")));
            // Nothing changed since: nothing written.
            assert!(!sync_endpoints(txn, &namespace, &app));
        });
    }

    #[test]
    fn back_off_events_count_up() {
        let store = cluster();
        store.write(|txn| {
            let (key, _) = txn.scan(Resource::Pods, "").into_iter().next().unwrap();
            assert!(record_back_off(txn, &key));
            assert!(record_back_off(txn, &key));
            let (ns, name) = key.split_once('/').unwrap();
            let events: Vec<Value> = txn
                .scan(Resource::Events, &format!("{ns}/{name}."))
                .into_iter()
                .map(|(_, e)| e.decode().unwrap())
                .filter(|e| e["reason"] == "BackOff" && e["involvedObject"]["name"] == name)
                .collect();
            assert_eq!(events.len(), 1);
            assert!(events[0]["count"].as_u64().unwrap() >= 2);
            let node = txn.find(Resource::Nodes, |_, _| true)[0].to_string();
            assert!(renew_node_lease(txn, &node));
        });
    }

    #[test]
    fn a_cache_crash_is_a_liveness_kill() {
        // Enough applications that each namespace has its cache.
        let store = cluster_of(400);
        store.write(|txn| {
            let pods = txn.scan(Resource::Pods, "");
            let (cache, _) = pods
                .iter()
                .find(|(k, _)| fails_liveness(txn, k))
                .expect("a cache pod");
            assert!(app_of(txn, cache).unwrap().contains("-cache"));
            assert!(pods.iter().any(|(k, _)| !fails_liveness(txn, k)));
            assert!(record_liveness_kill(txn, cache));
            assert!(record_liveness_kill(txn, cache));
            let (ns, name) = cache.split_once('/').unwrap();
            let mut reasons: Vec<(String, u64)> = txn
                .scan(Resource::Events, &format!("{ns}/{name}."))
                .into_iter()
                .map(|(_, e)| e.decode().unwrap())
                .filter(|e| e["involvedObject"]["name"] == name)
                .map(|e| {
                    (
                        format!(
                            "{} {}",
                            e["reason"].as_str().unwrap(),
                            e["message"].as_str().unwrap()
                        ),
                        e["count"].as_u64().unwrap(),
                    )
                })
                .filter(|(r, _)| r.starts_with("Unhealthy") || r.starts_with("Killing"))
                .collect();
            reasons.sort();
            assert_eq!(
                reasons,
                [
                    (
                        "Killing Container app failed liveness probe, will be restarted"
                            .to_string(),
                        2
                    ),
                    (
                        "Unhealthy Liveness probe failed: HTTP probe failed with statuscode: 503"
                            .to_string(),
                        2
                    ),
                ]
            );
        });
    }
}
