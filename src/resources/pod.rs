//! The pod projection: what the pod table, its indexes and its drill-downs need, ~1 KB a pod.

use std::borrow::Cow;
use std::sync::{Arc, LazyLock};

use serde::de::IgnoredAny;
use smallvec::SmallVec;

use super::meta::{
    self, Container, ContainerResources, FIRST_KIND_SLOT, OwnerRef, WireContainer, WireMeta,
    non_empty,
};
use super::packed::{Builder, FieldValues, Interner, Labels, PackError, Packed, Str};
use super::time::Timestamp;
use super::{KubeResource, ResourceKind};

const NODE_NAME: usize = FIRST_KIND_SLOT;
const PHASE: usize = FIRST_KIND_SLOT + 1;
const POD_IP: usize = FIRST_KIND_SLOT + 2;
const HOST_IP: usize = FIRST_KIND_SLOT + 3;
const STATUS: usize = FIRST_KIND_SLOT + 4;
const NOMINATED_NODE: usize = FIRST_KIND_SLOT + 5;

/// A pod's own strings: the scalars, then its annotations (often per pod, such as a CNI's).
const ANNOTATIONS: usize = 1;
const OWN_SECTIONS: usize = 2;

// The sections of a pod's template strings (see `Pod::template`).
const LABELS: usize = 0;
const OWNERS: usize = 1;
const CONTAINERS: usize = 2;
const INIT_CONTAINERS: usize = 3;
const CONTAINER_RESOURCES: usize = 4;
const TEMPLATE_SECTIONS: usize = 5;

/// The template strings of every pod decoded in this process, shared between equal ones.
static TEMPLATES: LazyLock<Interner<TEMPLATE_SECTIONS>> = LazyLock::new(Interner::default);

/// A pod as kscope stores it.
///
/// Annotations are kept except `kubectl.kubernetes.io/last-applied-configuration`, which is
/// dropped (often larger than everything else together); open the full object for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pod {
    /// The pod's own strings: name, uid, node, IPs, status, annotations.
    strings: Packed<OWN_SECTIONS>,
    /// Labels, owners and containers, which the pods of one template share: one allocation
    /// for all of them (about half a pod's strings), not a copy each.
    template: Arc<Packed<TEMPLATE_SECTIONS>>,
    created: Option<Timestamp>,
    deleted: Option<Timestamp>,
    last_restart: Option<Timestamp>,
    controller: Option<u32>,
    restarts: u32,
    ready: u16,
    total: u16,
    /// Readiness gates whose condition is True, and all of them (kubectl's READINESS GATES).
    gates_ready: u16,
    gates_total: u16,
}

impl Pod {
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels().get(key)
    }

    /// Annotations, without `kubectl.kubernetes.io/last-applied-configuration`.
    pub fn annotations(&self) -> Labels<'_> {
        Labels::new(self.strings.rows(ANNOTATIONS))
    }

    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations().get(key)
    }

    pub fn owner_references(&self) -> impl ExactSizeIterator<Item = OwnerRef<'_>> {
        meta::owner_refs(self.template.rows(OWNERS), self.controller)
    }

    /// The managing controller as `kind/name`, e.g. `ReplicaSet/web-7d9f8c6b5d`.
    pub fn controller_owner_key(&self) -> Option<&str> {
        meta::controller_owner_key(self.template.rows(OWNERS), self.controller)
    }

    /// The managing controller as (kind, name).
    pub fn controller_owner(&self) -> Option<(&str, &str)> {
        meta::controller_owner(self.template.rows(OWNERS), self.controller)
    }

    /// `spec.nodeName`; `None` until scheduled.
    pub fn node_name(&self) -> Option<&str> {
        non_empty(self.strings.get(NODE_NAME))
    }

    /// `status.phase` as sent (`Pending`, `Running`, `Succeeded`, `Failed`, `Unknown`).
    pub fn phase(&self) -> Option<&str> {
        non_empty(self.strings.get(PHASE))
    }

    /// kubectl's STATUS column (`Running`, `CrashLoopBackOff`, `Init:0/1`, `Terminating`, ...),
    /// computed at decode time by a port of kubectl's `printPod`.
    pub fn status(&self) -> &str {
        self.strings.get(STATUS)
    }

    /// Ready containers, as in kubectl's READY column (`ready/total`).
    pub fn ready_containers(&self) -> u16 {
        self.ready
    }

    /// App containers plus sidecars (restartable init containers), READY's denominator.
    pub fn total_containers(&self) -> u16 {
        self.total
    }

    /// kubectl's RESTARTS: the sum of restart counts of the containers it counts.
    pub fn restarts(&self) -> u32 {
        self.restarts
    }

    /// When the most recently restarted counted container last terminated.
    pub fn last_restart(&self) -> Option<Timestamp> {
        self.last_restart
    }

    /// kubectl's RESTARTS cell: `0`, or `3 (5m ago)` when the last restart time is known.
    pub fn restarts_column(&self, now: Timestamp) -> String {
        match self.last_restart {
            Some(at) if self.restarts != 0 => {
                format!("{} ({} ago)", self.restarts, at.human_since(now))
            }
            _ => self.restarts.to_string(),
        }
    }

    pub fn containers(&self) -> impl ExactSizeIterator<Item = Container<'_>> {
        meta::containers(self.template.rows(CONTAINERS))
    }

    pub fn init_containers(&self) -> impl ExactSizeIterator<Item = Container<'_>> {
        meta::containers(self.template.rows(INIT_CONTAINERS))
    }

    /// Each app container's CPU and memory requests and limits, in spec order.
    pub fn container_resources(&self) -> impl ExactSizeIterator<Item = ContainerResources<'_>> {
        self.template
            .rows::<1>(CONTAINER_RESOURCES)
            .iter()
            .map(|[packed]| ContainerResources::read(packed))
    }

    /// `status.nominatedNodeName`: where the scheduler means to place the pod once the pods
    /// it preempts are gone.
    pub fn nominated_node(&self) -> Option<&str> {
        non_empty(self.strings.get(NOMINATED_NODE))
    }

    /// kubectl's READINESS GATES: `(true, total)` of the pod's readiness gates, `None`
    /// without any.
    pub fn readiness_gates(&self) -> Option<(u16, u16)> {
        (self.gates_total > 0).then_some((self.gates_ready, self.gates_total))
    }

    /// `status.podIP` (the first of `podIPs`).
    pub fn pod_ip(&self) -> Option<&str> {
        non_empty(self.strings.get(POD_IP))
    }

    pub fn host_ip(&self) -> Option<&str> {
        non_empty(self.strings.get(HOST_IP))
    }

    /// `metadata.deletionTimestamp`: set once the pod is being deleted.
    pub fn deleted(&self) -> Option<Timestamp> {
        self.deleted
    }

    fn from_wire(w: &WirePod<'_>, fields: &FieldValues<'_>) -> Result<Self, PackError> {
        let spec = w.spec.as_deref();
        let status = w.status.as_deref();
        let summary = summarize(&w.metadata, spec, status);

        let mut own = Builder::<OWN_SECTIONS>::new();
        w.metadata.push_scalars(&mut own);
        own.push_opt(spec.and_then(|s| s.node_name.as_ref()));
        own.push_opt(status.and_then(|s| s.phase.as_ref()));
        own.push_opt(status.and_then(|s| s.pod_ip.as_ref()));
        own.push_opt(status.and_then(|s| s.host_ip.as_ref()));
        own.push_cow(summary.reason);
        own.push_opt(status.and_then(|s| s.nominated_node_name.as_ref()));
        own.end_section();
        own.push_map(w.metadata.annotations.as_ref());
        own.end_section();
        own.push_field_values(fields);
        let mut b = Builder::<TEMPLATE_SECTIONS>::new();
        b.push_map(w.metadata.labels.as_ref());
        b.end_section();
        let controller = w.metadata.push_owners(&mut b);
        b.end_section();
        meta::push_containers(&mut b, spec.and_then(|s| s.containers.as_deref()));
        b.end_section();
        meta::push_containers(&mut b, spec.and_then(|s| s.init_containers.as_deref()));
        b.end_section();
        meta::push_container_resources(&mut b, spec.and_then(|s| s.containers.as_deref()));
        b.end_section();
        let (gates_ready, gates_total) = readiness_gates(spec, status);

        Ok(Self {
            strings: own.finish()?,
            template: b.finish_interned(&TEMPLATES)?,
            created: w.metadata.creation_timestamp,
            deleted: w.metadata.deletion_timestamp,
            last_restart: summary.last_restart,
            controller,
            restarts: u32::try_from(summary.restarts.max(0)).unwrap_or(u32::MAX),
            ready: u16::try_from(summary.ready).unwrap_or(u16::MAX),
            total: u16::try_from(summary.total).unwrap_or(u16::MAX),
            gates_ready,
            gates_total,
        })
    }
}

object_impls!(Pod, ResourceKind::Pods, owners, labels = template);

/// A pod as decoded from the wire. Its lists are read into inline vectors sized for a typical
/// pod (five conditions, one or two containers, one owner): no allocation and no regrowth per
/// list. Init containers, usually absent, are plain vectors, which take no room then. The three
/// sections are boxed: serde's derive moves a struct by value at each level it returns
/// through, and a pod's ~2.8 KB moved that way cost more than three allocations.
#[derive(serde::Deserialize)]
struct WirePod<'a> {
    #[serde(borrow, default)]
    metadata: Box<WireMeta<'a>>,
    #[serde(borrow)]
    spec: Option<Box<WirePodSpec<'a>>>,
    #[serde(borrow)]
    status: Option<Box<WirePodStatus<'a>>>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct WirePodSpec<'a> {
    #[serde(borrow)]
    node_name: Option<Str<'a>>,
    #[serde(borrow)]
    containers: Option<SmallVec<[WireContainer<'a>; 2]>>,
    #[serde(borrow)]
    init_containers: Option<Vec<WireContainer<'a>>>,
    #[serde(borrow)]
    readiness_gates: Option<Vec<WireReadinessGate<'a>>>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireReadinessGate<'a> {
    #[serde(borrow)]
    condition_type: Option<Str<'a>>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct WirePodStatus<'a> {
    #[serde(borrow)]
    phase: Option<Str<'a>>,
    #[serde(borrow)]
    reason: Option<Str<'a>>,
    #[serde(borrow, rename = "podIP")]
    pod_ip: Option<Str<'a>>,
    #[serde(borrow, rename = "hostIP")]
    host_ip: Option<Str<'a>>,
    #[serde(borrow)]
    nominated_node_name: Option<Str<'a>>,
    #[serde(borrow)]
    conditions: Option<SmallVec<[WireCondition<'a>; 6]>>,
    #[serde(borrow)]
    container_statuses: Option<SmallVec<[WireContainerStatus<'a>; 2]>>,
    #[serde(borrow)]
    init_container_statuses: Option<Vec<WireContainerStatus<'a>>>,
}

#[derive(serde::Deserialize)]
struct WireCondition<'a> {
    #[serde(borrow, rename = "type")]
    type_: Option<Str<'a>>,
    #[serde(borrow)]
    status: Option<Str<'a>>,
    #[serde(borrow)]
    reason: Option<Str<'a>>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireContainerStatus<'a> {
    #[serde(borrow)]
    name: Option<Str<'a>>,
    #[serde(default)]
    ready: bool,
    #[serde(default)]
    restart_count: i64,
    started: Option<bool>,
    #[serde(borrow)]
    state: Option<WireState<'a>>,
    #[serde(borrow)]
    last_state: Option<WireState<'a>>,
}

#[derive(serde::Deserialize)]
struct WireState<'a> {
    #[serde(borrow)]
    waiting: Option<WireWaiting<'a>>,
    running: Option<IgnoredAny>,
    #[serde(borrow)]
    terminated: Option<WireTerminated<'a>>,
}

#[derive(serde::Deserialize)]
struct WireWaiting<'a> {
    #[serde(borrow)]
    reason: Option<Str<'a>>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireTerminated<'a> {
    #[serde(borrow)]
    reason: Option<Str<'a>>,
    #[serde(default)]
    exit_code: i64,
    #[serde(default)]
    signal: i64,
    finished_at: Option<Timestamp>,
}

fn text<'b>(s: &'b Option<Str<'_>>) -> &'b str {
    s.as_ref().map_or("", Str::as_str)
}

impl<'a> WireContainerStatus<'a> {
    fn waiting_reason(&self) -> &str {
        let waiting = self.state.as_ref().and_then(|s| s.waiting.as_ref());
        waiting.map_or("", |w| text(&w.reason))
    }

    fn terminated(&self) -> Option<&WireTerminated<'a>> {
        self.state.as_ref()?.terminated.as_ref()
    }

    fn running(&self) -> bool {
        self.state.as_ref().is_some_and(|s| s.running.is_some())
    }

    /// When the previous run ended (`lastState.terminated.finishedAt`).
    fn last_finished(&self) -> Option<Timestamp> {
        self.last_state.as_ref()?.terminated.as_ref()?.finished_at
    }
}

/// The READY, STATUS and RESTARTS columns of one pod.
struct Summary<'b> {
    reason: Cow<'b, str>,
    ready: u32,
    total: u32,
    /// Summed with saturation: the counts are the server's, and a wrapped sum showed 0.
    restarts: i64,
    last_restart: Option<Timestamp>,
}

fn later(a: Option<Timestamp>, b: Option<Timestamp>) -> Option<Timestamp> {
    a.max(b)
}

fn condition_is(conditions: &[WireCondition<'_>], type_: &str, status: &str) -> bool {
    conditions
        .iter()
        .any(|c| text(&c.type_) == type_ && text(&c.status) == status)
}

/// The pod's readiness gates whose condition is True (the first condition of that type, as
/// kubectl reads it), and how many gates it has.
fn readiness_gates(
    spec: Option<&WirePodSpec<'_>>,
    status: Option<&WirePodStatus<'_>>,
) -> (u16, u16) {
    let gates = spec
        .and_then(|s| s.readiness_gates.as_deref())
        .unwrap_or_default();
    let conditions = status
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    let ready = gates
        .iter()
        .filter(|g| {
            conditions
                .iter()
                .find(|c| text(&c.type_) == text(&g.condition_type))
                .is_some_and(|c| text(&c.status) == "True")
        })
        .count();
    let count = |n: usize| u16::try_from(n).unwrap_or(u16::MAX);
    (count(ready), count(gates.len()))
}

/// A port of kubectl's `printPod` (k8s.io/kubernetes pkg/printers/internalversion), for the
/// READY, STATUS and RESTARTS columns, including sidecar (restartable init) containers.
fn summarize<'b>(
    meta: &WireMeta<'_>,
    spec: Option<&'b WirePodSpec<'_>>,
    status: Option<&'b WirePodStatus<'_>>,
) -> Summary<'b> {
    let containers = spec
        .and_then(|s| s.containers.as_deref())
        .unwrap_or_default();
    let init_specs = spec
        .and_then(|s| s.init_containers.as_deref())
        .unwrap_or_default();
    let conditions = status
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    let statuses = status
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or_default();
    let init_statuses = status
        .and_then(|s| s.init_container_statuses.as_deref())
        .unwrap_or_default();
    let phase = status.map_or("", |s| text(&s.phase));
    let pod_reason = status.map_or("", |s| text(&s.reason));

    let is_sidecar = |c: &WireContainer<'_>| text(&c.restart_policy) == "Always";
    // Go looks the spec up in a map by name: the last container of that name wins.
    let sidecar_named = |name: &str| {
        init_specs
            .iter()
            .rev()
            .find(|c| text(&c.name) == name)
            .is_some_and(is_sidecar)
    };

    let mut s = Summary {
        reason: Cow::Borrowed(if pod_reason.is_empty() {
            phase
        } else {
            pod_reason
        }),
        ready: 0,
        total: (containers.len() + init_specs.iter().filter(|c| is_sidecar(c)).count()) as u32,
        restarts: 0,
        last_restart: None,
    };
    if conditions
        .iter()
        .any(|c| text(&c.type_) == "PodScheduled" && text(&c.reason) == "SchedulingGated")
    {
        s.reason = Cow::Borrowed("SchedulingGated");
    }

    let mut sidecar_restarts: i64 = 0;
    let mut sidecar_last_restart = None;
    let mut initializing = false;
    for (i, c) in init_statuses.iter().enumerate() {
        s.restarts = s.restarts.saturating_add(c.restart_count);
        s.last_restart = later(s.last_restart, c.last_finished());
        let sidecar = sidecar_named(text(&c.name));
        if sidecar {
            sidecar_restarts = sidecar_restarts.saturating_add(c.restart_count);
            sidecar_last_restart = later(sidecar_last_restart, c.last_finished());
        }
        let terminated = c.terminated();
        if terminated.is_some_and(|t| t.exit_code == 0) {
            continue;
        }
        if sidecar && c.started == Some(true) {
            if c.ready {
                s.ready += 1;
            }
            continue;
        }
        let waiting = c.waiting_reason();
        s.reason = Cow::Owned(match terminated {
            Some(t) if text(&t.reason).is_empty() && t.signal != 0 => {
                format!("Init:Signal:{}", t.signal)
            }
            Some(t) if text(&t.reason).is_empty() => format!("Init:ExitCode:{}", t.exit_code),
            Some(t) => format!("Init:{}", text(&t.reason)),
            None if !waiting.is_empty() && waiting != "PodInitializing" => {
                format!("Init:{waiting}")
            }
            None => format!("Init:{i}/{}", init_specs.len()),
        });
        initializing = true;
        break;
    }

    if !initializing || condition_is(conditions, "Initialized", "True") {
        s.restarts = sidecar_restarts;
        s.last_restart = sidecar_last_restart;
        let mut has_running = false;
        for c in statuses.iter().rev() {
            s.restarts = s.restarts.saturating_add(c.restart_count);
            s.last_restart = later(s.last_restart, c.last_finished());
            let waiting = c.waiting_reason();
            match c.terminated() {
                _ if !waiting.is_empty() => s.reason = Cow::Borrowed(waiting),
                Some(t) if !text(&t.reason).is_empty() => s.reason = Cow::Borrowed(text(&t.reason)),
                Some(t) if t.signal != 0 => s.reason = Cow::Owned(format!("Signal:{}", t.signal)),
                Some(t) => s.reason = Cow::Owned(format!("ExitCode:{}", t.exit_code)),
                None if c.ready && c.running() => {
                    has_running = true;
                    s.ready += 1;
                }
                None => {}
            }
        }
        if s.reason == "Completed" && has_running {
            s.reason = Cow::Borrowed(if condition_is(conditions, "Ready", "True") {
                "Running"
            } else {
                "NotReady"
            });
        }
    }

    if meta.deletion_timestamp.is_some() {
        if pod_reason == "NodeLost" {
            s.reason = Cow::Borrowed("Unknown");
        } else if phase != "Failed" && phase != "Succeeded" {
            s.reason = Cow::Borrowed("Terminating");
        }
    }
    s
}
