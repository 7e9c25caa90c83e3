//! What a simulated cluster looks like and how it misbehaves.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use super::WidgetBug;
use super::faults::Faults;

/// Configuration of one simulated API server. `Default` is a small demo cluster with no
/// churn and no faults on a free loopback port.
#[derive(Debug, Clone)]
pub struct SimConfig {
    pub pods: usize,
    /// Widgets of about 3 KB each beyond the demo's (see `crd::bulk_widgets`).
    pub widgets: usize,
    pub nodes: usize,
    /// Application namespaces; `default`, `kube-node-lease`, `kube-public` and `kube-system`
    /// always exist on top of these.
    pub namespaces: usize,
    /// Same seed, same cluster.
    pub seed: u64,
    /// Writes per second the churn applies; 0 = none.
    pub churn_rate: f64,
    /// Churn stops after this long, so a client's cache can be compared with the truth.
    pub churn_for: Option<Duration>,
    /// Seed of the churn's choices (so a churned run is reproducible too).
    pub churn_seed: u64,
    pub faults: Faults,
    /// Events kept for watches and continue tokens; older RVs get 410.
    pub history: usize,
    /// How often watches with allowWatchBookmarks=true get a BOOKMARK.
    pub bookmark_interval: Duration,
    /// How long a SPDY port-forward request waits for its second stream before it fails,
    /// as the kubelet's streaming server waits (30 s there too).
    pub stream_creation_timeout: Duration,
    pub listen: SocketAddr,
    /// Allow binding a non-loopback address.
    pub allow_remote: bool,
    /// Bearer token clients must send; random when `None`.
    pub token: Option<String>,
    /// The users the sim knows (`--users admin,viewer`), each a context of its kubeconfig;
    /// `viewer` may only read. Empty: one user, `kscope-sim`, who may do everything.
    pub users: Vec<String>,
    /// Unix seconds the generated cluster's timeline is laid out from (see
    /// `WorkloadSpec::birth`); `None` = shortly before the sim starts, so ages look like a
    /// live cluster's. Pin it where two sims must produce the same bytes.
    pub birth: Option<i64>,
    /// Keeps the CA, the serving certificate and key, and the token here across restarts;
    /// `None` makes fresh ones each start.
    pub state_dir: Option<PathBuf>,
    /// Whether controllers, the scheduler and kubelets react to client writes.
    pub controllers: bool,
    /// An app whose containers write their logs very fast.
    pub noisy_logs: Option<super::NoisyLogs>,
    /// Whether the demo's Widget controller is installed (a Deployment in `widget-system`
    /// reconciling Widgets, with /metrics through pods/proxy). Off by default: it adds a
    /// namespace, a Deployment and a pod to the generated cluster. Needs `controllers`.
    pub widget_controller: bool,
    /// How the Widget controller misbehaves (see [`WidgetBug`]); changeable at run time.
    pub widget_bug: WidgetBug,
    /// Whether the seeded StatefulSets, DaemonSets and Jobs have their pods (as their
    /// controllers would have made them), on top of the Deployments' `pods`. Off by
    /// default, so that `pods` is every pod of the cluster.
    pub workload_pods: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            pods: 1000,
            widgets: 0,
            nodes: 20,
            namespaces: 8,
            seed: 1,
            churn_rate: 0.0,
            churn_for: None,
            churn_seed: 1,
            faults: Faults::default(),
            history: 10_000,
            bookmark_interval: Duration::from_secs(60),
            stream_creation_timeout: Duration::from_secs(30),
            listen: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            allow_remote: false,
            token: None,
            users: Vec::new(),
            birth: None,
            state_dir: None,
            controllers: true,
            noisy_logs: None,
            widget_controller: false,
            widget_bug: WidgetBug::None,
            workload_pods: false,
        }
    }
}

impl SimConfig {
    /// A cluster of `pods` pods spread over `nodes` nodes and `namespaces` namespaces.
    pub fn with_size(pods: usize, nodes: usize, namespaces: usize) -> Self {
        Self {
            pods,
            nodes,
            namespaces,
            ..Self::default()
        }
    }

    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    pub fn churn(mut self, rate: f64, churn_for: Option<Duration>) -> Self {
        self.churn_rate = rate;
        self.churn_for = churn_for;
        self
    }

    pub fn faults(mut self, faults: Faults) -> Self {
        self.faults = faults;
        self
    }

    pub fn history(mut self, events: usize) -> Self {
        self.history = events;
        self
    }

    /// Pins the cluster's timeline, so the same seed gives byte-identical objects.
    pub fn born_at(mut self, unix_seconds: i64) -> Self {
        self.birth = Some(unix_seconds);
        self
    }

    /// Keeps the sim's CA, serving certificate and token in `dir` across restarts.
    pub fn state_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.state_dir = Some(dir.into());
        self
    }

    /// Installs the demo's Widget controller (see [`SimConfig::widget_controller`]).
    pub fn widget_controller(mut self, on: bool) -> Self {
        self.widget_controller = on;
        self
    }

    /// Makes the Widget controller misbehave (see [`WidgetBug`]).
    pub fn widget_bug(mut self, bug: WidgetBug) -> Self {
        self.widget_bug = bug;
        self
    }

    /// Gives the seeded StatefulSets, DaemonSets and Jobs their pods (see
    /// [`SimConfig::workload_pods`]).
    pub fn workload_pods(mut self, on: bool) -> Self {
        self.workload_pods = on;
        self
    }

    pub fn bookmark_interval(mut self, every: Duration) -> Self {
        self.bookmark_interval = every;
        self
    }

    /// See [`SimConfig::stream_creation_timeout`]; tests shorten it.
    pub fn stream_creation_timeout(mut self, timeout: Duration) -> Self {
        self.stream_creation_timeout = timeout;
        self
    }
}
