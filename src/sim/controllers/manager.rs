//! The controller manager: the queue the HTTP handlers report client writes to, and the task
//! that reconciles what it holds, one piece of work at a time.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::Shared;
use crate::gc::Foreground;
use crate::resources::Resource;
use crate::store::{Key, Txn};

use super::objects::{owner_key, owner_work};
use super::work::{FollowUps, STEP_DELAY, Work};
use super::{
    cronjob, daemonset, deployment, disruption, endpoints, job, kubelet, namespace, nodelifecycle,
    replicaset, statefulset,
};

/// The most reconciles waiting at once; beyond it a client write's reaction is dropped (and
/// logged) rather than letting the queue grow without bound.
const MAX_PENDING: usize = 20_000;
/// How many nodes the scheduler sums at a time while the controllers are idle (a few
/// milliseconds of the store's lock).
const WARM_BATCH: usize = 50;
/// How soon a foreground deletion waiting on its dependents (Terminating pods) looks again.
const RECHECK: Duration = Duration::from_secs(1);

#[derive(Default)]
pub(super) struct Queue {
    ready: VecDeque<Work>,
    queued: HashSet<Work>,
    /// Steps due later, earliest first; `seq` keeps equal instants in order.
    pub(super) later: BinaryHeap<Reverse<(Instant, u64, Work)>>,
    seq: u64,
}

/// The controllers' queue, shared by the HTTP handlers (which report client writes) and the
/// controllers' task.
pub(crate) struct Controllers {
    /// Off, client writes get no reaction (as on a cluster without kube-controller-manager).
    enabled: AtomicBool,
    pub(super) queue: Mutex<Queue>,
    wake: Notify,
    /// Deployments a client wrote, which the churn must leave to these controllers.
    adopted: Arc<RwLock<HashSet<Key>>>,
    /// What the scheduler knows of the nodes and the pods bound to them.
    scheduler: Mutex<kubelet::Scheduler>,
}

impl Default for Controllers {
    fn default() -> Self {
        Self {
            enabled: AtomicBool::new(true),
            queue: Mutex::default(),
            wake: Notify::new(),
            adopted: Arc::default(),
            scheduler: Mutex::default(),
        }
    }
}

impl Controllers {
    /// Turns the reactions on or off; off, what is queued is dropped.
    pub(crate) fn set_enabled(&self, on: bool) {
        self.enabled.store(on, Ordering::Relaxed);
        if !on {
            *self.queue.lock() = Queue::default();
        }
    }

    /// The set of Deployments the churn must not touch.
    pub(crate) fn adopted(&self) -> Arc<RwLock<HashSet<Key>>> {
        self.adopted.clone()
    }

    /// A client created or changed `key`: the controllers that own its kind react.
    pub(crate) fn client_wrote(&self, resource: Resource, key: &str) {
        if !self.enabled.load(Ordering::Relaxed) {
            return;
        }
        let key = Key::from(key);
        let work = match resource {
            Resource::Deployments => {
                self.adopted.write().insert(key.clone());
                Work::Deployment(key)
            }
            Resource::ReplicaSets => Work::ReplicaSet(key),
            Resource::StatefulSets => Work::StatefulSet(key),
            Resource::DaemonSets => Work::DaemonSet(key),
            Resource::Nodes => {
                self.push(vec![(Work::Node(key), None)]);
                Work::Nodes
            }
            Resource::Jobs => Work::Job(key),
            Resource::CronJobs => Work::CronJob(key),
            Resource::Services => Work::Service(key),
            Resource::Pods => Work::Pod(key),
            Resource::PodDisruptionBudgets => Work::Disruption(key),
            _ => return,
        };
        self.push(vec![(work, None)]);
    }

    /// A client deleted namespace `name`, or something in it: if it is Terminating, the
    /// namespace controller deletes what is left in it, then it.
    pub(crate) fn namespace_changed(&self, name: &str) {
        self.push(vec![(Work::Namespace(Key::from(name)), None)]);
    }

    /// A client deleted `key` in the foreground: the garbage collector deletes what it owns,
    /// then it, a moment later.
    pub(crate) fn delete_in_foreground(&self, resource: Resource, key: &str) {
        let work = Work::Foreground(resource, Key::from(key));
        self.push(vec![(work, Some(STEP_DELAY))]);
    }

    /// A client deleted `pod`: if its ReplicaSet belongs to a Deployment these controllers
    /// drive, its controller makes the replacement (through the scheduler and a kubelet),
    /// and this says so; otherwise the pod is the seeded workload's to replace.
    pub(crate) fn pod_deleted(&self, txn: &Txn<'_>, pod: &serde_json::Value) -> bool {
        if !self.enabled.load(Ordering::Relaxed) {
            return false;
        }
        if let Some(work) = owner_work(pod).filter(|w| !matches!(w, Work::ReplicaSet(_))) {
            self.push(vec![(work, None)]);
            return true;
        }
        let Some(rs_key) = owner_key(pod, "ReplicaSet") else {
            return false;
        };
        let deployment = txn
            .get(Resource::ReplicaSets, &rs_key)
            .and_then(|rs| rs.decode().ok())
            .and_then(|rs| owner_key(&rs, "Deployment"));
        if !deployment.is_some_and(|d| self.adopted.read().contains(&d)) {
            return false;
        }
        self.push(vec![(Work::ReplicaSet(rs_key), None)]);
        true
    }

    /// Something other than these controllers changed pod `key` (the churn's recovery of a
    /// crash it made before a client took the Deployment over): its ReplicaSet recounts.
    pub(crate) fn pod_changed(&self, txn: &Txn<'_>, key: &str) {
        if let Some(pod) = txn.get(Resource::Pods, key).and_then(|p| p.decode().ok())
            && let Some(rs_key) = owner_key(&pod, "ReplicaSet")
        {
            self.push(vec![(Work::ReplicaSet(rs_key), None)]);
        }
    }

    /// A client deleted `pod`: its kubelet stops the containers, and says so.
    pub(crate) fn pod_killed(
        &self,
        txn: &mut Txn<'_>,
        pod: &serde_json::Value,
    ) -> Result<(), crate::store::StoreError> {
        if !self.enabled.load(Ordering::Relaxed) {
            return Ok(());
        }
        let mut follow = kubelet::kill(txn, pod)?;
        // Its room is free: the pods waiting for some try again.
        follow.extend(self.scheduler.lock().retry());
        self.push(follow);
        Ok(())
    }

    /// Queues `work`, each now or after its delay.
    fn push(&self, work: Vec<(Work, Option<Duration>)>) {
        if work.is_empty() || !self.enabled.load(Ordering::Relaxed) {
            return;
        }
        let mut queue = self.queue.lock();
        let now = Instant::now();
        for (item, delay) in work {
            if queue.queued.len() + queue.later.len() >= MAX_PENDING {
                tracing::warn!(?item, "controllers' queue is full; dropping a reconcile");
                continue;
            }
            match delay {
                None => {
                    if queue.queued.insert(item.clone()) {
                        queue.ready.push_back(item);
                    }
                }
                Some(delay) => {
                    queue.seq += 1;
                    let seq = queue.seq;
                    queue.later.push(Reverse((now + delay, seq, item)));
                }
            }
        }
        drop(queue);
        self.wake.notify_one();
    }

    /// The next piece of work due now, or when the next one falls due.
    fn next(&self) -> Result<Work, Option<Instant>> {
        let mut queue = self.queue.lock();
        let now = Instant::now();
        while let Some(Reverse((at, _, _))) = queue.later.peek() {
            if *at > now {
                break;
            }
            if let Some(Reverse((_, _, item))) = queue.later.pop()
                && queue.queued.insert(item.clone())
            {
                queue.ready.push_back(item);
            }
        }
        match queue.ready.pop_front() {
            Some(item) => {
                queue.queued.remove(&item);
                Ok(item)
            }
            None => Err(queue.later.peek().map(|Reverse((at, _, _))| *at)),
        }
    }
}

/// The controllers' task: reconciles what the queue holds until the sim shuts down.
pub(crate) async fn run(shared: Arc<Shared>) {
    let controllers = &shared.controllers;
    // The seeded CronJobs follow their schedules from the start, as on a running cluster.
    controllers.push(shared.store.write(|txn| cronjob::at_start(txn)));
    loop {
        match controllers.next() {
            Ok(work) => {
                let follow = shared.store.write(|txn| {
                    if let Work::Deployment(key) = &work
                        && txn.get(Resource::Deployments, key).is_none()
                    {
                        controllers.adopted.write().remove(key);
                    }
                    reconcile(txn, &work, &mut controllers.scheduler.lock())
                });
                controllers.push(follow);
                // One reconcile per turn, so a burst never holds the runtime.
                tokio::task::yield_now().await;
            }
            Err(due) => {
                if shared
                    .store
                    .write(|txn| controllers.scheduler.lock().warm(txn, WARM_BATCH))
                {
                    tokio::task::yield_now().await;
                    continue;
                }
                let sleep = async {
                    match due {
                        Some(at) => tokio::time::sleep_until(at).await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    () = shared.shutdown.cancelled() => return,
                    () = controllers.wake.notified() => {}
                    () = sleep => {}
                }
            }
        }
    }
}

fn reconcile(txn: &mut Txn<'_>, work: &Work, scheduler: &mut kubelet::Scheduler) -> FollowUps {
    let result = match work {
        Work::Deployment(key) => deployment::reconcile(txn, key),
        Work::ReplicaSet(key) => replicaset::reconcile(txn, key),
        Work::StatefulSet(key) => statefulset::reconcile(txn, key),
        Work::DaemonSet(key) => daemonset::reconcile(txn, key),
        Work::Job(key) => job::reconcile(txn, key),
        Work::CronJob(key) => cronjob::reconcile(txn, key),
        Work::Service(key) => endpoints::reconcile(txn, key),
        Work::Pod(key) => {
            // The budgets counting the pod recount after its step.
            let budgets = txn
                .get(Resource::Pods, key)
                .and_then(|p| p.decode().ok())
                .map(|pod| disruption::covering(txn, &pod))
                .unwrap_or_default();
            kubelet::reconcile(txn, key, scheduler).map(|mut follow| {
                follow.extend(budgets);
                follow
            })
        }
        Work::Disruption(key) => disruption::reconcile(txn, key),
        Work::Foreground(resource, key) => {
            let mut follow = Vec::new();
            let mut on_pod = |txn: &mut Txn<'_>, pod: &serde_json::Value| {
                follow.extend(kubelet::kill(txn, pod)?);
                Ok(())
            };
            match crate::gc::finish_foreground(txn, *resource, key, &mut on_pod) {
                Ok(Foreground::Done) => Ok(follow),
                Ok(Foreground::Waiting(marked)) => {
                    // The dependents marked go in the foreground in their turn; this one
                    // looks again until they are gone.
                    follow.extend(
                        marked
                            .into_iter()
                            .map(|(r, k)| (Work::Foreground(r, k), Some(STEP_DELAY))),
                    );
                    follow.push((Work::Foreground(*resource, key.clone()), Some(RECHECK)));
                    Ok(follow)
                }
                Err(e) => Err(e),
            }
        }
        Work::Namespace(name) => namespace::reconcile(txn, name),
        Work::Node(key) => nodelifecycle::reconcile(txn, key),
        // Every DaemonSet looks again, and the pods that fit nowhere try again.
        Work::Nodes => Ok(txn
            .scan(Resource::DaemonSets, "")
            .into_iter()
            .map(|(k, _)| (Work::DaemonSet(k), None))
            .chain(scheduler.retry())
            .collect()),
    };
    result.unwrap_or_else(|e| {
        tracing::warn!(?work, error = %e, "reconcile failed");
        Vec::new()
    })
}
