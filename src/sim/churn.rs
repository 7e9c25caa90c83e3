//! Churn: a realistic stream of writes at a set rate — rollouts (a new ReplicaSet, pods
//! replaced one by one), crashing and recovering containers, scaling, node drains. Each
//! action is planned as a queue of single writes, and each write is one resourceVersion, so
//! the rate is exact in writes per second.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use parking_lot::RwLock;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::time::Instant;

use super::Shared;
use super::capacity;
use super::churn_kinds;
use super::controllers::{next_stop, stop_containers};
use super::gc::{self, PodDeletion, delete_cascading};
use super::manifests::{self, PodFactory, PodState};
use super::manifests::{node_ip, pod_ip};
use super::object::{SelectableFields, StoredObject};
use super::resources::Resource;
use super::store::{Key, Txn};
use super::workload::node_slot;

/// The churn's run-time settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ChurnSettings {
    /// Writes per second.
    pub rate: f64,
    pub paused: bool,
}

/// Pod IPs for churned pods start here, clear of the generated ones.
const CHURN_IP_BASE: u64 = 2_000_000;
/// Mixed into the churn seed for the follow-up writes' random stream.
const SIDE_STREAM: u64 = 0x51de_51de_51de_51de;
/// A drain evicts at most this many pods, so one drain does not monopolise the churn.
const MAX_DRAINED_PODS: usize = 100;
/// The longest a single wake-up may write, so a high rate never starves readers.
const MAX_WRITES_PER_TICK: usize = 2_000;
/// ReplicaSets whose pod templates (and revisions) are kept for scaling, rollouts and drains.
const MAX_CACHED_REPLICASETS: usize = 32_768;
/// How soon a kubelet acts on what it sees of a Terminating pod (the delete, its containers
/// stopped), so watchers see each state for a moment.
const KUBELET_LAG: Duration = Duration::from_secs(1);

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

impl NewPod {
    /// This pod rendered through its ReplicaSet's factory as a JSON tree (the slow way, for
    /// when no template is cached).
    fn render(&self, factory: &PodFactory, rng: &mut impl Rng, state: PodState) -> Value {
        factory.pod(
            rng,
            &self.name,
            &self.uid,
            &self.node,
            &self.node_ip,
            &self.ip,
            self.created,
            state,
        )
    }
}

/// The little of a pod a drain needs, decoded without building the rest.
#[derive(Deserialize)]
struct PodOwner {
    metadata: PodOwnerMeta,
}

#[derive(Deserialize)]
struct PodOwnerMeta {
    namespace: String,
    #[serde(rename = "ownerReferences", default)]
    owner_references: Vec<OwnerName>,
}

#[derive(Deserialize)]
struct OwnerName {
    name: String,
}

/// One write.
#[derive(Debug, Clone)]
enum Op {
    CreatePod(NewPod),
    MarkRunning(NewPod),
    /// A pod's delete: Terminating for its grace period (what a real cluster's deletes do).
    DeletePod(String),
    /// Its kubelet's sync of a Terminating pod: the containers due to stop are reported
    /// terminated (with the pod's terminal phase once none runs), and a pod whose
    /// containers all stopped is removed.
    SyncTerminating(String),
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
        side: StdRng::seed_from_u64(seed ^ SIDE_STREAM),
        plan: VecDeque::new(),
        deployments: Vec::new(),
        nodes: Vec::new(),
        pod_cidrs: HashMap::new(),
        cordoned: HashSet::new(),
        actions: 0,
        next_ip: CHURN_IP_BASE,
        pods: PodCache::default(),
        revisions: Revisions::default(),
        adopted: shared.controllers.adopted(),
        shared: shared.clone(),
        terminating: BinaryHeap::new(),
        terminating_keys: HashSet::new(),
        stale: HashSet::new(),
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
    /// The follow-up writes' own stream (see [`Churn::perform`]).
    side: StdRng,
    plan: VecDeque<Op>,
    deployments: Vec<Key>,
    nodes: Vec<Key>,
    /// The addresses of each node's podCIDR, which the IPs of the pods made on it come from.
    pod_cidrs: HashMap<Key, capacity::ChurnAddresses>,
    cordoned: HashSet<String>,
    actions: u64,
    next_ip: u64,
    /// Pod factories and templates by ReplicaSet.
    pods: PodCache,
    revisions: Revisions,
    /// Deployments a client wrote: the controllers drive them, so the churn leaves them be.
    adopted: Arc<RwLock<HashSet<Key>>>,
    /// For telling the controllers of a recovery in a Deployment they drive.
    shared: Arc<Shared>,
    /// The pods the churn deleted that are Terminating, by when their kubelet next syncs
    /// them (the churn plays their kubelets).
    terminating: BinaryHeap<Reverse<(Instant, String)>>,
    terminating_keys: HashSet<String>,
    /// The Deployments whose pods or ReplicaSets this batch changed, recounted at its end.
    stale: HashSet<String>,
}

impl Churn {
    /// Performs `writes` writes, planning new actions as the queue empties. Ops whose target
    /// vanished write nothing; the number of tries is bounded so that a cluster with nothing
    /// to churn never spins under the store's lock.
    fn apply(&mut self, txn: &mut Txn<'_>, writes: usize) {
        let mut done = 0;
        let mut tries = writes * 8 + 64;
        let now = Instant::now();
        while done < writes && tries > 0 {
            tries -= 1;
            // The Terminating pods due a kubelet sync go first, as their kubelets would.
            let due = self
                .terminating
                .peek()
                .is_some_and(|Reverse((at, _))| *at <= now);
            let next = if due {
                self.terminating
                    .pop()
                    .map(|Reverse((_, key))| Op::SyncTerminating(key))
            } else {
                self.plan.pop_front()
            };
            let Some(op) = next else {
                self.plan_action(txn);
                continue;
            };
            // Every store write counts, the follow-ups' too, so the rate is the store's.
            let before = txn.next_resource_version();
            if self.perform(txn, op) {
                done += (txn.next_resource_version() - before).max(1) as usize;
            }
        }
        // The churn plays the controllers of the Deployments it drives: their status and
        // their ReplicaSets' follow the pods, as READY does in a real cluster.
        let adopted = self.adopted.read();
        for deployment in self.stale.drain() {
            if !adopted.contains(deployment.as_str()) {
                churn_kinds::recount_deployment(txn, &deployment);
            }
        }
    }

    fn refresh(&mut self, txn: &Txn<'_>) {
        if self.actions.is_multiple_of(256) || self.deployments.is_empty() || self.nodes.is_empty()
        {
            self.deployments = txn.find(Resource::Deployments, |_, _| true);
            self.nodes = txn.find(Resource::Nodes, |_, _| true);
            // A node's podCIDR never changes: each is read once.
            for node in &self.nodes {
                if !self.pod_cidrs.contains_key(node)
                    && let Some(cidr) = txn
                        .get(Resource::Nodes, node)
                        .and_then(|n| n.decode().ok())
                        .and_then(|n| {
                            n["spec"]["podCIDR"]
                                .as_str()
                                .and_then(capacity::ChurnAddresses::new)
                        })
                {
                    self.pod_cidrs.insert(node.clone(), cidr);
                }
            }
        }
        self.actions += 1;
    }

    fn plan_action(&mut self, txn: &Txn<'_>) {
        self.refresh(txn);
        if self.deployments.is_empty() {
            return;
        }
        let deployment = self.deployments[self.rng.random_range(0..self.deployments.len())].clone();
        if self.adopted.read().contains(&deployment) {
            return;
        }
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
    fn current_replicaset(
        &mut self,
        txn: &Txn<'_>,
        deployment: &str,
    ) -> Option<(String, Vec<String>)> {
        let d = txn.get(Resource::Deployments, deployment)?;
        let uid = d.uid.clone();
        let owned: Vec<_> = txn
            .scan(Resource::ReplicaSets, &format!("{deployment}-"))
            .into_iter()
            .filter(|(_, o)| o.controller_uid.as_deref() == Some(&*uid))
            .collect();
        let (rs, rs_obj) = owned
            .into_iter()
            .max_by_key(|(key, rs)| self.revisions.revision(key, rs))?;
        let pods = txn
            .scan(Resource::Pods, &format!("{rs}-"))
            .into_iter()
            .filter(|(_, o)| o.controller_uid.as_deref() == Some(&*rs_obj.uid))
            .map(|(k, _)| k.to_string())
            .filter(|k| !self.terminating_keys.contains(k))
            .collect();
        Some((rs.to_string(), pods))
    }

    /// A random schedulable node: a few draws find one unless most nodes are cordoned, so
    /// the node list is not filtered for every new pod.
    fn schedulable_node(&mut self) -> String {
        for _ in 0..8 {
            let Some(node) = self
                .nodes
                .get(self.rng.random_range(0..self.nodes.len().max(1)))
            else {
                break;
            };
            if !self.cordoned.contains(&**node) {
                return node.to_string();
            }
        }
        let schedulable: Vec<&Key> = self
            .nodes
            .iter()
            .filter(|n| !self.cordoned.contains(&***n))
            .collect();
        if schedulable.is_empty() {
            node_slot(0).name
        } else {
            schedulable[self.rng.random_range(0..schedulable.len())].to_string()
        }
    }

    fn new_pod(&mut self, txn: &Txn<'_>, rs_key: &str) -> NewPod {
        let (namespace, rs_name) = rs_key.split_once('/').unwrap_or(("default", rs_key));
        let node = self.schedulable_node();
        let node_ip = node_ip(&node);
        self.next_ip += 1;
        // In use on the node: its pods' addresses, and those of the pods planned for it.
        let plan = &self.plan;
        let in_use = || {
            let planned = plan.iter().filter_map(|op| match op {
                Op::CreatePod(p) if p.node == node => Some(p.ip.clone()),
                _ => None,
            });
            txn.pods_on_node(&node)
                .iter()
                .filter_map(|key| txn.get(Resource::Pods, key))
                .filter_map(|p| p.fields.pod_ip.as_deref().map(str::to_string))
                .chain(planned)
                .collect::<Vec<String>>()
        };
        let ip = self
            .pod_cidrs
            .get_mut(node.as_str())
            .and_then(|addresses| addresses.next(in_use))
            .unwrap_or_else(|| pod_ip(self.next_ip));
        NewPod {
            namespace: namespace.to_string(),
            rs_name: rs_name.to_string(),
            name: format!("{rs_name}-{}", manifests::safe_suffix(&mut self.rng, 5)),
            uid: manifests::uid(&mut self.rng),
            node,
            node_ip,
            ip,
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
                let pod = self.new_pod(txn, &rs);
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
        let mut version = format!(
            "{}.{}.{}",
            self.rng.random_range(1..4),
            self.rng.random_range(0..30),
            self.rng.random_range(0..10)
        );
        // A rollout to the version already running would make a second ReplicaSet with the
        // same template, which the Deployment controller never does.
        let running = txn
            .get(Resource::Deployments, deployment)
            .and_then(|d| d.decode().ok())
            .and_then(|d| {
                d["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/version"]
                    .as_str()
                    .map(str::to_string)
            });
        if running.as_deref() == Some(version.as_str()) {
            version.push_str("-1");
        }
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
            let pod = self.new_pod(txn, &new_rs);
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
            .pods_on_node(&node)
            .into_iter()
            .filter(|key| !self.terminating_keys.contains(&**key))
            .take(MAX_DRAINED_PODS)
            .filter_map(|key| {
                let pod = txn.get(Resource::Pods, &key)?;
                let rs = owning_replicaset(txn, &key, &pod)?;
                Some((key.to_string(), rs))
            })
            .collect();
        self.cordoned.insert(node.to_string());
        self.plan.push_back(Op::Cordon(node.to_string(), true));
        for (pod_key, rs_key) in on_node {
            self.plan.push_back(Op::DeletePod(pod_key));
            let pod = self.new_pod(txn, &rs_key);
            self.plan.push_back(Op::CreatePod(pod.clone()));
            self.plan.push_back(Op::MarkRunning(pod));
        }
        self.plan.push_back(Op::Cordon(node.to_string(), false));
    }

    /// Performs one change; `false` when its target is gone (nothing written). A change
    /// to a pod is followed at once by what other controllers make of it (its app's
    /// Endpoints and EndpointSlice, a BackOff Event), and now and then a node Lease is
    /// renewed or a Widget's status moves. Those follow-up writes count in the churn rate
    /// but draw on their own random stream, so the pods' changes are the same sequence as
    /// without them.
    /// Whether `op` (planned before a client took its Deployment over) touches a Deployment
    /// the controllers now drive.
    fn touches_adopted(&self, op: &Op) -> bool {
        let adopted = self.adopted.read();
        if adopted.is_empty() || matches!(op, Op::SyncTerminating(_)) {
            // A Terminating pod's removal is its kubelet's, whoever drives its Deployment.
            return false;
        }
        deployment_of(op).is_some_and(|d| adopted.contains(d.as_str()))
    }

    fn perform(&mut self, txn: &mut Txn<'_>, op: Op) -> bool {
        if self.touches_adopted(&op) {
            // Of what was planned only a recovery still happens (a crash must not stay), and
            // the pod's ReplicaSet controller recounts.
            let Op::Recover(key) = op else {
                return false;
            };
            let done = modify_status(txn, &key, recover);
            if done {
                self.shared.controllers.pod_changed(txn, &key);
            }
            return done;
        }
        let pod = match &op {
            Op::CreatePod(p) | Op::MarkRunning(p) => Some(format!("{}/{}", p.namespace, p.name)),
            Op::DeletePod(key) | Op::Crash(key) | Op::Recover(key) => Some(key.clone()),
            // Terminating, it already left its app's endpoints: nothing to sync.
            _ => None,
        };
        let app_before = pod.as_deref().and_then(|key| churn_kinds::app_of(txn, key));
        let crashed = matches!(op, Op::Crash(_)).then(|| pod.clone()).flatten();
        let deployment = deployment_of(&op);
        let done = self.perform_one(txn, op);
        if done && let Some(deployment) = deployment {
            self.stale.insert(deployment);
        }
        if done && let Some(key) = pod {
            let app = app_before.or_else(|| churn_kinds::app_of(txn, &key));
            if let (Some(app), Some((namespace, _))) = (app, key.split_once('/')) {
                churn_kinds::sync_endpoints(txn, namespace, &app);
            }
            if let Some(crashed) = crashed {
                if churn_kinds::fails_liveness(txn, &crashed) {
                    churn_kinds::record_liveness_kill(txn, &crashed);
                }
                churn_kinds::record_back_off(txn, &crashed);
            }
        }
        if done {
            if !self.nodes.is_empty() && self.side.random_bool(0.125) {
                let node = &self.nodes[self.side.random_range(0..self.nodes.len())];
                churn_kinds::renew_node_lease(txn, node);
            }
            if self.side.random_bool(0.05) {
                let pick = self.side.random_range(0..usize::MAX);
                if self.shared.widget_metrics.runs() {
                    churn_kinds::edit_widget(txn, pick, self.side.random_range(1..=5));
                } else {
                    churn_kinds::flip_widget(txn, pick);
                }
            }
        }
        done
    }

    /// Deletes pod `key` with its grace period: Terminating until its kubelet has stopped
    /// its containers (see [`Op::SyncTerminating`]); a pod with none goes at once.
    fn delete_pod(&mut self, txn: &mut Txn<'_>, key: String) -> bool {
        if self.terminating_keys.contains(&key) {
            return false;
        }
        match gc::delete_pod(txn, &key, None, &mut |_, _| Ok(())) {
            Ok(Some(PodDeletion::Terminating { object, .. })) => {
                let first_stop = object.decode().ok().and_then(|p| next_stop(&p));
                self.terminating_keys.insert(key.clone());
                self.sync_later(key, first_stop);
                true
            }
            Ok(Some(PodDeletion::Gone(_))) => true,
            Ok(None) | Err(_) => false,
        }
    }

    /// Its kubelet's next sync of Terminating pod `key`: when its next container stops
    /// (`at`, Unix ms), and never sooner than [`KUBELET_LAG`] from now.
    fn sync_later(&mut self, key: String, at: Option<i64>) {
        let after = at.map_or(0, |at| at - now_ms()).max(0).unsigned_abs();
        let wait = Duration::from_millis(after).max(KUBELET_LAG);
        self.terminating.push(Reverse((Instant::now() + wait, key)));
    }

    /// A kubelet's sync of Terminating pod `key`, as the controllers' kubelets do it: the
    /// containers due are stopped and reported (one write), and once none runs the pod is
    /// removed at the next sync (another), so watchers see how it ended before it goes.
    fn sync_terminating(&mut self, txn: &mut Txn<'_>, key: String) -> bool {
        if !self.terminating_keys.contains(&key) {
            return false;
        }
        let Some(mut pod) = txn.get(Resource::Pods, &key).and_then(|o| o.decode().ok()) else {
            self.terminating_keys.remove(&key);
            return false;
        };
        if stop_containers(&mut pod, now_ms()) {
            let written = txn.put(Resource::Pods, &key, &mut pod).is_ok();
            let next = next_stop(&pod);
            self.sync_later(key, next);
            return written;
        }
        if let Some(at) = next_stop(&pod) {
            self.sync_later(key, Some(at));
            return false;
        }
        self.terminating_keys.remove(&key);
        delete_cascading(txn, Resource::Pods, &key, false)
            .ok()
            .flatten()
            .is_some()
    }

    fn perform_one(&mut self, txn: &mut Txn<'_>, op: Op) -> bool {
        match op {
            Op::CreatePod(pod) => {
                put_pod(txn, &mut self.pods, &pod, PodState::Pending, &mut self.rng)
            }
            Op::MarkRunning(pod) => {
                let key = format!("{}/{}", pod.namespace, pod.name);
                if txn.get(Resource::Pods, &key).is_none() {
                    return false;
                }
                put_pod(txn, &mut self.pods, &pod, PodState::Running, &mut self.rng)
            }
            Op::DeletePod(key) => self.delete_pod(txn, key),
            Op::SyncTerminating(key) => self.sync_terminating(txn, key),
            Op::Crash(key) => {
                let name = key.split_once('/').map_or(key.as_str(), |(_, n)| n);
                let liveness = churn_kinds::fails_liveness(txn, &key);
                modify_status(txn, &key, |status| {
                    crash(status, name, liveness, &mut self.rng)
                })
            }
            Op::Recover(key) => modify_status(txn, &key, recover),
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

/// The Deployment whose pods or ReplicaSets `op` changes.
fn deployment_of(op: &Op) -> Option<String> {
    // Pods are named `<replicaset>-<suffix>`, ReplicaSets `<deployment>-<hash>`.
    let parent = |key: &str| key.rsplit_once('-').map(|(p, _)| p.to_string());
    match op {
        Op::CreatePod(p) | Op::MarkRunning(p) => parent(&format!("{}/{}", p.namespace, p.rs_name)),
        Op::DeletePod(key) | Op::SyncTerminating(key) | Op::Crash(key) | Op::Recover(key) => {
            parent(key).and_then(|rs| parent(&rs))
        }
        Op::ScaleReplicaSet(key, _) => parent(key),
        Op::ScaleDeployment(key, _) => Some(key.clone()),
        Op::UpdateTemplate { deployment, .. } | Op::CreateReplicaSet { deployment, .. } => {
            Some(deployment.clone())
        }
        Op::Cordon(..) => None,
    }
}

/// The key of the ReplicaSet that owns pod `key`. A ReplicaSet names its pods
/// `<its name>-<suffix>`, so the name is tried first (checked against the pod's controller
/// uid); otherwise the owner reference is decoded.
fn owning_replicaset(txn: &Txn<'_>, key: &str, pod: &StoredObject) -> Option<String> {
    if let Some((rs, _)) = key.rsplit_once('-')
        && let Some(owner) = txn.get(Resource::ReplicaSets, rs)
        && pod.controller_uid.as_deref() == Some(&*owner.uid)
    {
        return Some(rs.to_string());
    }
    let owner: PodOwner = serde_json::from_slice(&pod.json).ok()?;
    let rs = owner.metadata.owner_references.into_iter().next()?.name;
    Some(format!("{}/{rs}", owner.metadata.namespace))
}

/// Drops one entry (the first in hash order, so in effect a random one) from a full cache.
/// Clearing it all instead, as before, made a cluster with more ReplicaSets than the cache
/// holds render every pod the slow way again from time to time, and the churn rate collapsed.
fn make_room<K: Clone + Eq + std::hash::Hash, V>(cache: &mut HashMap<K, V>) {
    if cache.len() >= MAX_CACHED_REPLICASETS
        && let Some(victim) = cache.keys().next().cloned()
    {
        cache.remove(&victim);
    }
}

/// ReplicaSet revisions (the `deployment.kubernetes.io/revision` annotation) by key, checked
/// against the uid: the annotation never changes while a ReplicaSet lives, and decoding every
/// old ReplicaSet of a Deployment for each action made the churn slower the longer it ran.
#[derive(Default)]
struct Revisions(HashMap<Key, (Arc<str>, u64)>);

impl Revisions {
    fn revision(&mut self, key: &Key, rs: &StoredObject) -> u64 {
        if let Some((uid, revision)) = self.0.get(key)
            && *uid == rs.uid
        {
            return *revision;
        }
        let revision = rs
            .decode()
            .ok()
            .and_then(|v| {
                v["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
                    .as_str()
                    .and_then(|r| r.parse::<u64>().ok())
            })
            .unwrap_or(0);
        make_room(&mut self.0);
        self.0.insert(key.clone(), (rs.uid.clone(), revision));
        revision
    }
}

/// Pod templates by ReplicaSet key, checked against the ReplicaSet's uid (a ReplicaSet's pod
/// template never changes; a rollout makes a new ReplicaSet). Each entry holds about twice a
/// pod's JSON (~20 KB for the realistic pods), so the cache stays under ~700 MB.
#[derive(Default)]
struct PodCache(HashMap<String, ReplicaSetPods>);

/// The templates of one ReplicaSet's pods, both states made at its first pod: a drain or a
/// scale-up touches many ReplicaSets once or twice each, and a template costs no more to
/// make than one pod rendered through [`PodFactory`].
struct ReplicaSetPods {
    uid: Arc<str>,
    pending: Option<PodTemplate>,
    running: Option<PodTemplate>,
}

/// Renders and writes `pod` from its ReplicaSet's cached [`PodTemplate`]; `false` if the
/// ReplicaSet is gone. A pod whose values a template cannot hold is rendered through
/// [`PodFactory`].
fn put_pod(
    txn: &mut Txn<'_>,
    cache: &mut PodCache,
    pod: &NewPod,
    state: PodState,
    rng: &mut StdRng,
) -> bool {
    let rs_key = format!("{}/{}", pod.namespace, pod.rs_name);
    let Some(rs) = txn.get(Resource::ReplicaSets, &rs_key) else {
        return false;
    };
    let key = format!("{}/{}", pod.namespace, pod.name);
    if state == PodState::Pending && txn.namespace_terminating(&key) {
        return false;
    }
    let cached = cache.0.get(&rs_key).filter(|c| c.uid == rs.uid);
    let templates = match cached {
        Some(templates) => templates,
        None => {
            let Ok(value) = rs.decode() else {
                return false;
            };
            let factory = PodFactory::new(&value);
            make_room(&mut cache.0);
            let templates = ReplicaSetPods {
                uid: rs.uid.clone(),
                pending: PodTemplate::new(&factory, PodState::Pending),
                running: PodTemplate::new(&factory, PodState::Running),
            };
            cache
                .0
                .entry(rs_key.clone())
                .insert_entry(templates)
                .into_mut()
        }
    };
    let template = match state {
        PodState::Pending => templates.pending.as_ref(),
        PodState::Running => templates.running.as_ref(),
        PodState::CrashLoop { .. } | PodState::Succeeded { .. } => None,
    };
    let rendered = template.and_then(|t| t.render(pod, txn.next_resource_version(), rng));
    if let Some(object) = rendered {
        txn.put_object(Resource::Pods, &key, object);
        return true;
    }
    let Ok(value) = rs.decode() else {
        return false;
    };
    let mut value = pod.render(&PodFactory::new(&value), rng, state);
    txn.put(Resource::Pods, &key, &mut value).is_ok()
}

/// Where a pod's own values go in a [`PodTemplate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hole {
    Name,
    Uid,
    Node,
    HostIp,
    PodIp,
    Created,
    Started,
    Ready,
    Digest,
    ResourceVersion,
}

/// Marker values a template is rendered with, each found again in its JSON text.
const MARKERS: [(&str, Hole); 10] = [
    ("~~name~~", Hole::Name),
    ("~~uid~~", Hole::Uid),
    ("~~node~~", Hole::Node),
    ("~~hostip~~", Hole::HostIp),
    ("~~podip~~", Hole::PodIp),
    ("2000-01-01T00:00:00Z", Hole::Created),
    ("2000-01-01T00:00:07Z", Hole::Started),
    ("2000-01-01T00:00:24Z", Hole::Ready),
    // A digest drawn from an all-zero random source.
    (
        "0000000000000000000000000000000000000000000000000000000000000000",
        Hole::Digest,
    ),
    ("~~rv~~", Hole::ResourceVersion),
];
/// `2000-01-01T00:00:00Z`: the creation time the markers' timestamps follow from.
const MARKER_CREATED: i64 = 946_684_800;

/// A random source that always draws zero, so that digests render as a marker.
struct Zeros;

impl rand::RngCore for Zeros {
    fn next_u32(&mut self) -> u32 {
        0
    }

    fn next_u64(&mut self) -> u64 {
        0
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        dest.fill(0);
    }
}

/// The pods of one ReplicaSet in one state as JSON text cut where each pod's own values go:
/// rendered once through [`PodFactory`] with marker values, then filled per pod, instead
/// of building, encoding and dropping a tree of JSON values for every write.
struct PodTemplate {
    /// Literal text; `holes[i]` goes between `parts[i]` and `parts[i + 1]`.
    parts: Vec<Vec<u8>>,
    holes: Vec<Hole>,
    /// The marker pod as stored: labels, owner and phase are those of every pod.
    like: StoredObject,
    running: bool,
}

impl PodTemplate {
    fn new(factory: &PodFactory, state: PodState) -> Option<Self> {
        let marker = |hole| MARKERS.iter().find(|(_, h)| *h == hole).map(|(m, _)| *m);
        let mut value = factory.pod(
            &mut Zeros,
            marker(Hole::Name)?,
            marker(Hole::Uid)?,
            marker(Hole::Node)?,
            marker(Hole::HostIp)?,
            marker(Hole::PodIp)?,
            MARKER_CREATED,
            state,
        );
        value["metadata"]["resourceVersion"] = Value::String(marker(Hole::ResourceVersion)?.into());
        let like = StoredObject::encode(&value).ok()?;
        // Every marker's places in one pass each, in text order.
        let mut found: Vec<(usize, usize, Hole)> = MARKERS
            .iter()
            .flat_map(|(m, h)| {
                memchr::memmem::find_iter(&like.json, m.as_bytes()).map(|at| (at, m.len(), *h))
            })
            .collect();
        found.sort_by_key(|(at, _, _)| *at);
        let (mut parts, mut holes) = (Vec::new(), Vec::new());
        let mut from = 0;
        for (at, len, hole) in found {
            if at < from {
                continue;
            }
            parts.push(like.json[from..at].to_vec());
            holes.push(hole);
            from = at + len;
        }
        parts.push(like.json[from..].to_vec());
        // Only its labels, owner and phase are needed from here on.
        let mut like = like;
        like.json = Bytes::new();
        // Exactly one resourceVersion, so that the stored object knows where it is.
        (holes
            .iter()
            .filter(|h| **h == Hole::ResourceVersion)
            .count()
            == 1)
            .then_some(Self {
                parts,
                holes,
                like,
                running: state != PodState::Pending,
            })
    }

    /// `pod` at resourceVersion `rv`; `None` if one of its values would need escaping.
    fn render(&self, pod: &NewPod, rv: u64, rng: &mut StdRng) -> Option<StoredObject> {
        let plain = |s: &str| {
            s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._:".contains(&b))
        };
        if ![&pod.name, &pod.uid, &pod.node, &pod.node_ip, &pod.ip]
            .iter()
            .all(|s| plain(s))
        {
            return None;
        }
        let times = [
            manifests::timestamp(pod.created),
            manifests::timestamp(pod.created + 7),
            manifests::timestamp(pod.created + 24),
        ];
        let rv = rv.to_string();
        let size = self.parts.iter().map(Vec::len).sum::<usize>() + 64 * self.holes.len();
        let mut json = Vec::with_capacity(size);
        let mut rv_span = (0, 0);
        for (part, hole) in self
            .parts
            .iter()
            .zip(self.holes.iter().map(Some).chain([None]))
        {
            json.extend_from_slice(part);
            let value: &str = match hole {
                None => break,
                Some(Hole::Name) => &pod.name,
                Some(Hole::Uid) => &pod.uid,
                Some(Hole::Node) => &pod.node,
                Some(Hole::HostIp) => &pod.node_ip,
                Some(Hole::PodIp) => &pod.ip,
                Some(Hole::Created) => &times[0],
                Some(Hole::Started) => &times[1],
                Some(Hole::Ready) => &times[2],
                Some(Hole::Digest) => {
                    json.extend_from_slice(manifests::hex(rng, 64).as_bytes());
                    continue;
                }
                Some(Hole::ResourceVersion) => {
                    rv_span = (json.len(), json.len() + rv.len());
                    &rv
                }
            };
            json.extend_from_slice(value.as_bytes());
        }
        let fields = SelectableFields {
            node_name: Some(pod.node.as_str().into()),
            phase: self.like.fields.phase.clone(),
            pod_ip: self.running.then(|| pod.ip.as_str().into()),
            ready: self.like.fields.ready,
            terminating: self.like.fields.terminating,
        };
        Some(StoredObject::from_encoded(
            json,
            rv_span,
            &self.like,
            pod.uid.as_str().into(),
            fields,
        ))
    }
}

/// Read-modify-write of one object; `false` if it no longer exists.
fn modify(txn: &mut Txn<'_>, resource: Resource, key: &str, f: impl FnOnce(&mut Value)) -> bool {
    let Some(mut value) = txn.get(resource, key).and_then(|o| o.decode().ok()) else {
        return false;
    };
    f(&mut value);
    txn.put(resource, key, &mut value).is_ok()
}

/// Read-modify-write of a pod's status alone: the rest of its JSON is kept as it is.
fn modify_status(txn: &mut Txn<'_>, key: &str, f: impl FnOnce(&mut Value)) -> bool {
    matches!(
        txn.modify_member(Resource::Pods, key, "status", f),
        Ok(Some(_))
    )
}

fn now_ms() -> i64 {
    jiff::Timestamp::now().as_millisecond()
}

fn now() -> String {
    manifests::timestamp(manifests::now_seconds())
}

fn set_condition(status: &mut Value, types: &[&str], ok: bool) {
    let at = now();
    if let Some(conditions) = status["conditions"].as_array_mut() {
        for c in conditions
            .iter_mut()
            .filter(|c| c["type"].as_str().is_some_and(|t| types.contains(&t)))
        {
            c["status"] = json!(if ok { "True" } else { "False" });
            c["lastTransitionTime"] = json!(at);
        }
    }
}

/// The app container of pod `name` dies and waits in CrashLoopBackOff.
/// Pod `name`'s app container crashes: out of memory or an error, or (`liveness`) killed
/// by the kubelet for failing its liveness probe.
fn crash(pod_status: &mut Value, name: &str, liveness: bool, rng: &mut StdRng) {
    let at = now();
    let (exit_code, reason) = match rng.random_bool(0.3) {
        _ if liveness => (137, "Error"),
        true => (137, "OOMKilled"),
        false => (1, "Error"),
    };
    if let Some(status) = pod_status["containerStatuses"]
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
    set_condition(pod_status, &["Ready", "ContainersReady"], false);
}

/// The app container is running and ready again.
fn recover(pod_status: &mut Value) {
    let at = now();
    if let Some(status) = pod_status["containerStatuses"]
        .as_array_mut()
        .and_then(|s| s.first_mut())
    {
        status["state"] = json!({"running": {"startedAt": at}});
        status["ready"] = json!(true);
        status["started"] = json!(true);
    }
    set_condition(pod_status, &["Ready", "ContainersReady"], true);
}

/// A scale sets the spec alone: the status is counted from the pods at the batch's end.
fn set_replicas(obj: &mut Value, replicas: u64) {
    obj["spec"]["replicas"] = json!(replicas);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{WorkloadSpec, generate};

    /// A pod filled into a template is the pod `PodFactory` renders, but for its random
    /// digests.
    #[test]
    fn template_renders_what_the_factory_renders() {
        let spec = WorkloadSpec {
            pods: 20,
            nodes: 3,
            namespaces: 1,
            seed: 7,
            birth: 1_741_944_000,
            workload_pods: false,
        };
        let generated = generate(&spec, 1).unwrap();
        let rs = generated
            .iter()
            .find(|g| g.resource == Resource::ReplicaSets)
            .unwrap()
            .object
            .decode()
            .unwrap();
        let pod = NewPod {
            namespace: "ns".into(),
            rs_name: "rs".into(),
            name: "web-7d9f8c6b5d-x2k4p".into(),
            uid: "0b8f2c1e-3d4a-4f5b-9c6d-7e8f9a0b1c2d".into(),
            node: "ip-10-0-1-17.ec2.internal".into(),
            node_ip: "10.0.1.17".into(),
            ip: "10.200.3.4".into(),
            created: 1_741_944_067,
        };
        let digests = |v: &mut Value| {
            for status in v["status"]["containerStatuses"].as_array_mut().unwrap() {
                for field in ["imageID", "containerID"] {
                    if let Some(s) = status[field].as_str() {
                        status[field] = json!(s.len());
                    }
                }
            }
        };
        for state in [PodState::Pending, PodState::Running] {
            let template = PodTemplate::new(&PodFactory::new(&rs), state).unwrap();
            let mut rng = StdRng::seed_from_u64(1);
            let object = template.render(&pod, 42, &mut rng).unwrap();
            let mut got = object.decode().unwrap();
            let mut want = pod.render(&PodFactory::new(&rs), &mut rng, state);
            want["metadata"]["resourceVersion"] = json!("42");
            digests(&mut got);
            digests(&mut want);
            assert_eq!(got, want, "{state:?}");
            let fresh = StoredObject::encode(&want).unwrap();
            assert_eq!(object.fields, fresh.fields);
            assert_eq!(object.labels, fresh.labels);
            assert_eq!(object.uid, fresh.uid);
            assert_eq!(object.controller_uid, fresh.controller_uid);
            let restamped = object.with_resource_version(43).unwrap().decode().unwrap();
            assert_eq!(restamped["metadata"]["resourceVersion"], "43");
        }
    }
}
