//! Churn: a realistic stream of writes at a set rate — rollouts (a new ReplicaSet, pods
//! replaced one by one), crashing and recovering containers, scaling, node drains. Each
//! action is planned as a queue of single writes, and each write is one resourceVersion, so
//! the rate is exact in writes per second.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::time::Instant;

use super::Shared;
use super::http::write::delete_cascading;
use super::manifests::{self, PodFactory, PodState};
use super::resources::Resource;
use super::store::Txn;
use super::workload::{node_slot, pod_ip};

/// The churn's run-time settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ChurnSettings {
    /// Writes per second.
    pub rate: f64,
    pub paused: bool,
}

/// Pod IPs for churned pods start here, clear of the generated ones.
const CHURN_IP_BASE: u64 = 2_000_000;
/// A drain evicts at most this many pods, so one drain does not monopolise the churn.
const MAX_DRAINED_PODS: usize = 100;
/// The longest a single wake-up may write, so a high rate never starves readers.
const MAX_WRITES_PER_TICK: usize = 2_000;

/// A pod to create (or re-render) from its ReplicaSet's template.
#[derive(Debug, Clone)]
struct NewPod {
    namespace: String,
    rs_name: String,
    name: String,
    uid: String,
    node: String,
    node_ip: String,
    ip: String,
    created: i64,
}

/// One write.
#[derive(Debug, Clone)]
enum Op {
    CreatePod(NewPod),
    MarkRunning(NewPod),
    DeletePod(String),
    Crash(String),
    Recover(String),
    ScaleReplicaSet(String, u64),
    ScaleDeployment(String, u64),
    UpdateTemplate {
        deployment: String,
        version: String,
    },
    CreateReplicaSet {
        deployment: String,
        hash: String,
        replicas: u64,
    },
    Cordon(String, bool),
}

pub(crate) async fn run(shared: Arc<Shared>, seed: u64, churn_for: Option<Duration>) {
    let mut churn = Churn {
        rng: StdRng::seed_from_u64(seed),
        plan: VecDeque::new(),
        deployments: Vec::new(),
        nodes: Vec::new(),
        cordoned: HashSet::new(),
        actions: 0,
        next_ip: CHURN_IP_BASE,
    };
    let mut settings = shared.churn.subscribe();
    let mut stop_at = churn_for.map(|d| Instant::now() + d);
    let mut owed = 0.0f64;
    let mut last = Instant::now();
    loop {
        let current = *settings.borrow_and_update();
        let stop = async {
            match stop_at {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        if current.paused || current.rate <= 0.0 {
            tokio::select! {
                changed = settings.changed() => if changed.is_err() { return },
                () = shared.shutdown.cancelled() => return,
                () = stop => {
                    stop_at = None;
                    shared.churn.send_modify(|c| c.paused = true);
                }
            }
            last = Instant::now();
            owed = 0.0;
            continue;
        }
        let tick = Duration::from_secs_f64((1.0 / current.rate).clamp(0.005, 1.0));
        tokio::select! {
            () = tokio::time::sleep(tick) => {}
            changed = settings.changed() => if changed.is_err() { return } else { continue },
            () = shared.shutdown.cancelled() => return,
            () = stop => {
                stop_at = None;
                shared.churn.send_modify(|c| c.paused = true);
                continue;
            }
        }
        let now = Instant::now();
        owed += (now - last).as_secs_f64() * current.rate;
        last = now;
        let writes = (owed.floor() as usize).min(MAX_WRITES_PER_TICK);
        owed -= owed.floor();
        if writes > 0 {
            shared.store.write(|txn| churn.apply(txn, writes));
        }
    }
}

struct Churn {
    rng: StdRng,
    plan: VecDeque<Op>,
    deployments: Vec<String>,
    nodes: Vec<String>,
    cordoned: HashSet<String>,
    actions: u64,
    next_ip: u64,
}

impl Churn {
    /// Performs `writes` writes, planning new actions as the queue empties. Ops whose target
    /// vanished write nothing; the number of tries is bounded so that a cluster with nothing
    /// to churn never spins under the store's lock.
    fn apply(&mut self, txn: &mut Txn<'_>, writes: usize) {
        let mut done = 0;
        let mut tries = writes * 8 + 64;
        while done < writes && tries > 0 {
            tries -= 1;
            let Some(op) = self.plan.pop_front() else {
                self.plan_action(txn);
                continue;
            };
            if self.perform(txn, op) {
                done += 1;
            }
        }
    }

    fn refresh(&mut self, txn: &Txn<'_>) {
        if self.actions.is_multiple_of(256) || self.deployments.is_empty() || self.nodes.is_empty()
        {
            self.deployments = txn
                .find(Resource::Deployments, |_, _| true)
                .iter()
                .map(|k| k.to_string())
                .collect();
            self.nodes = txn
                .find(Resource::Nodes, |_, _| true)
                .iter()
                .map(|k| k.to_string())
                .collect();
        }
        self.actions += 1;
    }

    fn plan_action(&mut self, txn: &Txn<'_>) {
        self.refresh(txn);
        if self.deployments.is_empty() {
            return;
        }
        let deployment = self.deployments[self.rng.random_range(0..self.deployments.len())].clone();
        let roll: f64 = self.rng.random();
        if roll < 0.45 {
            self.plan_crash(txn, &deployment);
        } else if roll < 0.75 {
            self.plan_scale(txn, &deployment);
        } else if roll < 0.95 {
            self.plan_rollout(txn, &deployment);
        } else {
            self.plan_drain(txn);
        }
    }

    /// The ReplicaSet a Deployment currently rolls out (highest revision) and its pods.
    fn current_replicaset(&self, txn: &Txn<'_>, deployment: &str) -> Option<(String, Vec<String>)> {
        let d = txn.get(Resource::Deployments, deployment)?;
        let uid = d.uid.clone();
        let revision = |key: &str| {
            txn.get(Resource::ReplicaSets, key)
                .and_then(|rs| rs.decode().ok())
                .and_then(|v| {
                    v["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
                        .as_str()
                        .and_then(|r| r.parse::<u64>().ok())
                })
                .unwrap_or(0)
        };
        let rs = txn
            .scan(Resource::ReplicaSets, &format!("{deployment}-"))
            .into_iter()
            .filter(|(_, o)| o.controller_uid.as_deref() == Some(&*uid))
            .map(|(k, _)| k.to_string())
            .max_by_key(|k| revision(k))?;
        let rs_obj = txn.get(Resource::ReplicaSets, &rs)?;
        let pods = txn
            .scan(Resource::Pods, &format!("{rs}-"))
            .into_iter()
            .filter(|(_, o)| o.controller_uid.as_deref() == Some(&*rs_obj.uid))
            .map(|(k, _)| k.to_string())
            .collect();
        Some((rs, pods))
    }

    fn new_pod(&mut self, rs_key: &str) -> NewPod {
        let (namespace, rs_name) = rs_key.split_once('/').unwrap_or(("default", rs_key));
        let schedulable: Vec<&String> = self
            .nodes
            .iter()
            .filter(|n| !self.cordoned.contains(*n))
            .collect();
        let node = if schedulable.is_empty() {
            node_slot(0).name
        } else {
            schedulable[self.rng.random_range(0..schedulable.len())].clone()
        };
        let node_ip = node_ip(&node);
        self.next_ip += 1;
        NewPod {
            namespace: namespace.to_string(),
            rs_name: rs_name.to_string(),
            name: format!("{rs_name}-{}", manifests::safe_suffix(&mut self.rng, 5)),
            uid: manifests::uid(&mut self.rng),
            node,
            node_ip,
            ip: pod_ip(self.next_ip),
            created: manifests::now_seconds(),
        }
    }

    fn plan_crash(&mut self, txn: &Txn<'_>, deployment: &str) {
        let Some((_, pods)) = self.current_replicaset(txn, deployment) else {
            return;
        };
        if pods.is_empty() {
            return;
        }
        let pod = pods[self.rng.random_range(0..pods.len())].clone();
        self.plan.push_back(Op::Crash(pod.clone()));
        self.plan.push_back(Op::Recover(pod));
    }

    fn plan_scale(&mut self, txn: &Txn<'_>, deployment: &str) {
        let Some((rs, pods)) = self.current_replicaset(txn, deployment) else {
            return;
        };
        let current = pods.len() as u64;
        let step = self.rng.random_range(1..=3u64);
        let target = if current > step && self.rng.random_bool(0.5) {
            current - step
        } else {
            current + step
        };
        self.plan
            .push_back(Op::ScaleDeployment(deployment.to_string(), target));
        self.plan.push_back(Op::ScaleReplicaSet(rs.clone(), target));
        if target > current {
            for _ in current..target {
                let pod = self.new_pod(&rs);
                self.plan.push_back(Op::CreatePod(pod.clone()));
                self.plan.push_back(Op::MarkRunning(pod));
            }
        } else {
            for pod in pods.iter().take((current - target) as usize) {
                self.plan.push_back(Op::DeletePod(pod.clone()));
            }
        }
    }

    fn plan_rollout(&mut self, txn: &Txn<'_>, deployment: &str) {
        let Some((old_rs, pods)) = self.current_replicaset(txn, deployment) else {
            return;
        };
        let (namespace, name) = deployment.split_once('/').unwrap_or(("", deployment));
        let hash = manifests::safe_suffix(&mut self.rng, 10);
        let new_rs = format!("{namespace}/{name}-{hash}");
        let version = format!(
            "{}.{}.{}",
            self.rng.random_range(1..4),
            self.rng.random_range(0..30),
            self.rng.random_range(0..10)
        );
        let replicas = pods.len() as u64;
        self.plan.push_back(Op::UpdateTemplate {
            deployment: deployment.to_string(),
            version,
        });
        self.plan.push_back(Op::CreateReplicaSet {
            deployment: deployment.to_string(),
            hash,
            replicas,
        });
        for old in &pods {
            let pod = self.new_pod(&new_rs);
            self.plan.push_back(Op::CreatePod(pod.clone()));
            self.plan.push_back(Op::MarkRunning(pod));
            self.plan.push_back(Op::DeletePod(old.clone()));
        }
        self.plan.push_back(Op::ScaleReplicaSet(old_rs, 0));
    }

    fn plan_drain(&mut self, txn: &Txn<'_>) {
        if self.nodes.len() < 2 {
            return;
        }
        let node = self.nodes[self.rng.random_range(0..self.nodes.len())].clone();
        let on_node: Vec<(String, String)> = txn
            .find(Resource::Pods, |_, o| {
                o.fields.node_name.as_deref() == Some(node.as_str())
            })
            .into_iter()
            .take(MAX_DRAINED_PODS)
            .filter_map(|key| {
                let pod = txn.get(Resource::Pods, &key)?.decode().ok()?;
                let rs = pod["metadata"]["ownerReferences"][0]["name"]
                    .as_str()?
                    .to_string();
                let ns = pod["metadata"]["namespace"].as_str()?.to_string();
                Some((key.to_string(), format!("{ns}/{rs}")))
            })
            .collect();
        self.cordoned.insert(node.clone());
        self.plan.push_back(Op::Cordon(node.clone(), true));
        for (pod_key, rs_key) in on_node {
            self.plan.push_back(Op::DeletePod(pod_key));
            let pod = self.new_pod(&rs_key);
            self.plan.push_back(Op::CreatePod(pod.clone()));
            self.plan.push_back(Op::MarkRunning(pod));
        }
        self.plan.push_back(Op::Cordon(node, false));
    }

    /// Performs one write; `false` when its target is gone (nothing written).
    fn perform(&mut self, txn: &mut Txn<'_>, op: Op) -> bool {
        match op {
            Op::CreatePod(pod) => put_pod(txn, &pod, PodState::Pending, &mut self.rng),
            Op::MarkRunning(pod) => {
                let key = format!("{}/{}", pod.namespace, pod.name);
                if txn.get(Resource::Pods, &key).is_none() {
                    return false;
                }
                put_pod(txn, &pod, PodState::Running, &mut self.rng)
            }
            Op::DeletePod(key) => delete_cascading(txn, Resource::Pods, &key, false)
                .ok()
                .flatten()
                .is_some(),
            Op::Crash(key) => modify(txn, Resource::Pods, &key, |pod| crash(pod, &mut self.rng)),
            Op::Recover(key) => modify(txn, Resource::Pods, &key, recover),
            Op::ScaleReplicaSet(key, replicas) => modify(txn, Resource::ReplicaSets, &key, |rs| {
                set_replicas(rs, replicas)
            }),
            Op::ScaleDeployment(key, replicas) => modify(txn, Resource::Deployments, &key, |d| {
                set_replicas(d, replicas);
                bump_generation(d);
            }),
            Op::UpdateTemplate {
                deployment,
                version,
            } => modify(txn, Resource::Deployments, &deployment, |d| {
                update_template(d, &version)
            }),
            Op::CreateReplicaSet {
                deployment,
                hash,
                replicas,
            } => create_replicaset(txn, &deployment, &hash, replicas, &mut self.rng),
            Op::Cordon(node, on) => {
                if !on {
                    self.cordoned.remove(&node);
                }
                modify(txn, Resource::Nodes, &node, |n| cordon(n, on))
            }
        }
    }
}

/// The InternalIP of a generated node, from its name (`ip-10-a-b-c...`).
pub(crate) fn node_ip(node: &str) -> String {
    node.strip_prefix("ip-")
        .and_then(|rest| rest.split('.').next())
        .map(|ip| ip.replace('-', "."))
        .unwrap_or_else(|| "10.0.0.1".to_string())
}

fn put_pod(txn: &mut Txn<'_>, pod: &NewPod, state: PodState, rng: &mut StdRng) -> bool {
    let rs_key = format!("{}/{}", pod.namespace, pod.rs_name);
    let Some(rs) = txn
        .get(Resource::ReplicaSets, &rs_key)
        .and_then(|r| r.decode().ok())
    else {
        return false;
    };
    let mut value = PodFactory::new(&rs).pod(
        rng,
        &pod.name,
        &pod.uid,
        &pod.node,
        &pod.node_ip,
        &pod.ip,
        pod.created,
        state,
    );
    txn.put(
        Resource::Pods,
        &format!("{}/{}", pod.namespace, pod.name),
        &mut value,
    )
    .is_ok()
}

/// Read-modify-write of one object; `false` if it no longer exists.
fn modify(txn: &mut Txn<'_>, resource: Resource, key: &str, f: impl FnOnce(&mut Value)) -> bool {
    let Some(mut value) = txn.get(resource, key).and_then(|o| o.decode().ok()) else {
        return false;
    };
    f(&mut value);
    txn.put(resource, key, &mut value).is_ok()
}

fn now() -> String {
    manifests::timestamp(manifests::now_seconds())
}

fn set_condition(pod: &mut Value, types: &[&str], ok: bool) {
    let at = now();
    if let Some(conditions) = pod["status"]["conditions"].as_array_mut() {
        for c in conditions
            .iter_mut()
            .filter(|c| c["type"].as_str().is_some_and(|t| types.contains(&t)))
        {
            c["status"] = json!(if ok { "True" } else { "False" });
            c["lastTransitionTime"] = json!(at);
        }
    }
}

/// The app container dies and waits in CrashLoopBackOff.
fn crash(pod: &mut Value, rng: &mut StdRng) {
    let at = now();
    let (exit_code, reason) = if rng.random_bool(0.3) {
        (137, "OOMKilled")
    } else {
        (1, "Error")
    };
    let name = pod["metadata"]["name"].as_str().unwrap_or("").to_string();
    if let Some(status) = pod["status"]["containerStatuses"]
        .as_array_mut()
        .and_then(|s| s.first_mut())
    {
        let restarts = status["restartCount"].as_u64().unwrap_or(0) + 1;
        status["lastState"] = json!({"terminated": {
            "exitCode": exit_code, "reason": reason,
            "startedAt": status["state"]["running"]["startedAt"].clone(),
            "finishedAt": at,
            "containerID": status["containerID"].clone(),
        }});
        status["state"] = json!({"waiting": {"reason": "CrashLoopBackOff", "message": format!("back-off 10s restarting failed container=app pod={name}")}});
        status["restartCount"] = json!(restarts);
        status["ready"] = json!(false);
        status["started"] = json!(false);
    }
    set_condition(pod, &["Ready", "ContainersReady"], false);
}

/// The app container is running and ready again.
fn recover(pod: &mut Value) {
    let at = now();
    if let Some(status) = pod["status"]["containerStatuses"]
        .as_array_mut()
        .and_then(|s| s.first_mut())
    {
        status["state"] = json!({"running": {"startedAt": at}});
        status["ready"] = json!(true);
        status["started"] = json!(true);
    }
    set_condition(pod, &["Ready", "ContainersReady"], true);
}

fn set_replicas(obj: &mut Value, replicas: u64) {
    obj["spec"]["replicas"] = json!(replicas);
    for field in [
        "replicas",
        "readyReplicas",
        "availableReplicas",
        "fullyLabeledReplicas",
        "updatedReplicas",
    ] {
        if !obj["status"][field].is_null() || field == "replicas" {
            obj["status"][field] = json!(replicas);
        }
    }
}

fn bump_generation(obj: &mut Value) {
    let generation = obj["metadata"]["generation"].as_u64().unwrap_or(1) + 1;
    obj["metadata"]["generation"] = json!(generation);
    obj["status"]["observedGeneration"] = json!(generation);
}

/// A new image version and revision: what `kubectl set image` and the controller do.
fn update_template(deployment: &mut Value, version: &str) {
    if let Some(image) = deployment["spec"]["template"]["spec"]["containers"][0]["image"].as_str() {
        let base = image.rsplit_once(':').map_or(image, |(b, _)| b).to_string();
        deployment["spec"]["template"]["spec"]["containers"][0]["image"] =
            json!(format!("{base}:{version}"));
    }
    deployment["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/version"] =
        json!(version);
    let revision = deployment["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
        .as_str()
        .and_then(|r| r.parse::<u64>().ok())
        .unwrap_or(1)
        + 1;
    deployment["metadata"]["annotations"]["deployment.kubernetes.io/revision"] =
        json!(revision.to_string());
    bump_generation(deployment);
}

fn create_replicaset(
    txn: &mut Txn<'_>,
    deployment: &str,
    hash: &str,
    replicas: u64,
    rng: &mut StdRng,
) -> bool {
    let Some(d) = txn
        .get(Resource::Deployments, deployment)
        .and_then(|o| o.decode().ok())
    else {
        return false;
    };
    let revision = d["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
        .as_str()
        .and_then(|r| r.parse::<u32>().ok())
        .unwrap_or(1);
    let mut rs = manifests::replicaset(
        &d,
        hash,
        &manifests::uid(rng),
        replicas as u32,
        revision,
        &now(),
    );
    let key = format!(
        "{}/{}",
        rs["metadata"]["namespace"].as_str().unwrap_or(""),
        rs["metadata"]["name"].as_str().unwrap_or("")
    );
    txn.put(Resource::ReplicaSets, &key, &mut rs).is_ok()
}

fn cordon(node: &mut Value, on: bool) {
    if on {
        node["spec"]["unschedulable"] = json!(true);
        node["spec"]["taints"] = json!([{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": now()}]);
    } else if let Some(spec) = node["spec"].as_object_mut() {
        spec.remove("unschedulable");
        spec.remove("taints");
    }
}
