//! What the controllers queue and a reconcile hands back, and the pace of their steps.

use std::time::Duration;

use crate::resources::Resource;
use crate::store::Key;

/// How long each pod step (scheduling, creating containers, starting them) takes: short, so
/// a cascade is over in a second or two, and long enough to be seen.
pub(super) const STEP_DELAY: Duration = Duration::from_millis(250);
/// The most pods a ReplicaSet creates or deletes in one reconcile (the real controller's
/// burst is 500); the rest follow in the next reconciles.
pub(super) const BURST: usize = 500;

/// One thing to reconcile.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum Work {
    Deployment(Key),
    ReplicaSet(Key),
    StatefulSet(Key),
    DaemonSet(Key),
    Job(Key),
    CronJob(Key),
    /// The endpoints and EndpointSlice controllers' work for a Service.
    Service(Key),
    /// The scheduler or kubelet's next step for a pod.
    Pod(Key),
    /// The garbage collector's foreground deletion of an owner.
    Foreground(Resource, Key),
    /// A node came, changed or went: every DaemonSet looks again, and the pods waiting
    /// for room try again.
    Nodes,
    /// The disruption controller's recount of a PodDisruptionBudget.
    Disruption(Key),
    /// The node lifecycle controller's work for a node: its unschedulable taint.
    Node(Key),
    /// The namespace controller's work for a namespace (named by its key).
    Namespace(Key),
}

/// Follow-up work a reconcile asks for.
pub(super) type FollowUps = Vec<(Work, Option<Duration>)>;
