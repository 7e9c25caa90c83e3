//! `kscope sim`: run the simulated API server until Ctrl-C.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::faults::{FaultSpec, Faults};
use super::{Sim, SimConfig, SimError, SimHandle};
use kscope_units::duration::parse_duration;

/// Serve a simulated Kubernetes API server on loopback.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Environment:\n  KSCOPE_SIM_TOKEN  Bearer token to require (random, or the one kept in --state-dir, if \
unset). Read from the environment only, so it never shows in a process list."
)]
pub struct SimArgs {
    /// Number of pods.
    #[arg(long, default_value_t = 1000)]
    pub pods: usize,
    /// Widgets (example.com/v1) of about 3 KB each on top of the demo's, spread over the
    /// application namespaces: a large custom resource for benchmarks.
    #[arg(long, default_value_t = 0)]
    pub widgets: usize,
    /// Number of nodes.
    #[arg(long, default_value_t = 20)]
    pub nodes: usize,
    /// Number of application namespaces (default, kube-system, kube-public and
    /// kube-node-lease always exist too).
    #[arg(long, default_value_t = 8)]
    pub namespaces: usize,
    /// Seed: the same seed gives the same cluster.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Address to listen on; port 0 picks a free one.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Allow a non-loopback --listen address.
    #[arg(long)]
    pub allow_remote: bool,
    /// Serve this many independent clusters (their own seeds, CAs and tokens), with contexts
    /// kscope-sim-1 … kscope-sim-N in the kubeconfig.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub clusters: u16,
    /// Write a kubeconfig (context kscope-sim) for the sim to this file.
    #[arg(long, value_name = "FILE")]
    pub kubeconfig_out: Option<PathBuf>,
    /// Churn: writes per second (rollouts, crashes, scaling, drains).
    #[arg(long, default_value_t = 0.0, value_name = "RATE")]
    pub churn: f64,
    /// Stop the churn after this long (e.g. 30s, 5m).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub churn_for: Option<Duration>,
    /// Inject a fault: drop-watch=DURATION, watch-410=RATIO, error-500=RATIO,
    /// throttle-429=RATIO, list-delay=DURATION, history=EVENTS, forbid=RESOURCE[,RESOURCE]
    /// (403 for those resources). Repeatable.
    #[arg(long = "fault", value_name = "NAME=VALUE")]
    pub faults: Vec<FaultSpec>,
    /// Events of history kept for watches and continue tokens.
    #[arg(long, default_value_t = 10_000)]
    pub history: usize,
    /// Interval between BOOKMARK events on watches that allow them.
    #[arg(long, value_parser = parse_duration, default_value = "60s", value_name = "DURATION")]
    pub bookmark_interval: Duration,
    /// How long a `kubectl port-forward` connection's SPDY request waits for its second
    /// stream (error and data come as a pair) before it fails, as the kubelet's does.
    #[arg(long, value_parser = parse_duration, default_value = "30s", value_name = "DURATION")]
    pub stream_creation_timeout: Duration,
    /// Keep the CA, the serving certificate and key, and the token in DIR (made if missing)
    /// and reuse them at the next start, so a restarted sim is reachable with the same
    /// kubeconfig. Delete DIR/tls.crt and DIR/tls.key to have the kept CA issue a new
    /// serving certificate (a rotation). With --clusters N, cluster K > 1 keeps its own in
    /// DIR/cluster-K.
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Leave client writes alone: no controller, scheduler or kubelet reacts to them (the
    /// seeded churn still runs). For benchmarks whose own writes must stay as written.
    #[arg(long)]
    pub no_controllers: bool,
    /// The pods of app APP (their `app` label) write RATE log lines a second (default
    /// 50,000): a container too noisy to read line by line, for the log view.
    #[arg(long, value_name = "APP[=RATE]", value_parser = |s: &str| s.parse::<super::NoisyLogs>())]
    pub noisy_logs: Option<super::NoisyLogs>,
    /// Install the demo's Widget controller: a Deployment in widget-system that reconciles
    /// Widgets (owned ConfigMaps, status conditions, retries) and serves controller-runtime
    /// metrics at pods/NAME:8080/proxy/metrics.
    #[arg(long, conflicts_with = "no_controllers")]
    pub widget_controller: bool,
    /// Make the Widget controller misbehave: hotloop (rewrites a status timestamp and
    /// reconciles on its own write), conflict (a second manager fights it for a field),
    /// slow (long reconciles), error (fails and retries with back-off). Switchable at run
    /// time with PUT /sim/widget-bug {"mode": MODE}.
    #[arg(long, value_enum, value_name = "MODE", default_value_t = super::WidgetBug::None, requires = "widget_controller")]
    pub widget_bug: super::WidgetBug,
    /// Give the seeded StatefulSets, DaemonSets and Jobs their pods (on top of --pods, which
    /// are the Deployments'), so their controllers take them over as a client's.
    #[arg(long)]
    pub workload_pods: bool,
    /// Serve this recording (`kscope record`) instead of a generated cluster: read-only,
    /// lists at the state playback has reached, watches from any recorded resourceVersion at
    /// the recorded pace. Playback starts at the first list or watch.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// How much faster than recorded a --replay plays (0.5: half as fast).
    #[arg(long, default_value_t = 1.0, value_name = "X", requires = "replay")]
    pub speed: f64,
    /// Users, each a context of the kubeconfig (the first `kscope-sim`, the others
    /// `kscope-sim-NAME`): `viewer` may only get, list and watch (403 otherwise, worded as
    /// the real server's RBAC), any other name may do everything.
    #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
    pub users: Vec<String>,
    /// Bearer token to require: KSCOPE_SIM_TOKEN (see below).
    #[arg(skip = std::env::var("KSCOPE_SIM_TOKEN").ok())]
    pub token: Option<String>,
}

impl clap::builder::ValueParserFactory for FaultSpec {
    type Parser = clap::builder::ValueParser;

    fn value_parser() -> Self::Parser {
        clap::builder::ValueParser::new(|s: &str| s.parse::<FaultSpec>())
    }
}

impl SimArgs {
    /// The configuration of cluster `i` of `--clusters`: its own seed and, for a fixed
    /// port or token, the next port and its own token.
    pub fn cluster_config(&self, i: u16) -> SimConfig {
        let mut config = self.config();
        if i == 0 {
            return config;
        }
        config.seed = self.seed.wrapping_add(u64::from(i));
        config.churn_seed = config.seed;
        if config.listen.port() != 0 {
            config
                .listen
                .set_port(config.listen.port().saturating_add(i));
        }
        config.token = self.token.as_ref().map(|t| format!("{t}-{}", i + 1));
        config.state_dir = self
            .state_dir
            .as_ref()
            .map(|dir| dir.join(format!("cluster-{}", i + 1)));
        config
    }

    pub fn config(&self) -> SimConfig {
        let mut faults = Faults::default();
        for spec in &self.faults {
            faults.apply(spec);
        }
        SimConfig {
            pods: self.pods,
            widgets: self.widgets,
            nodes: self.nodes,
            namespaces: self.namespaces,
            seed: self.seed,
            churn_rate: self.churn,
            churn_for: self.churn_for,
            churn_seed: self.seed,
            faults,
            history: self.history,
            bookmark_interval: self.bookmark_interval,
            stream_creation_timeout: self.stream_creation_timeout,
            listen: self.listen,
            allow_remote: self.allow_remote,
            token: self.token.clone(),
            users: self.users.clone(),
            birth: None,
            state_dir: self.state_dir.clone(),
            controllers: !self.no_controllers,
            noisy_logs: self.noisy_logs.clone(),
            widget_controller: self.widget_controller,
            widget_bug: self.widget_bug,
            workload_pods: self.workload_pods,
        }
    }
}

/// Starts the sim, writes the kubeconfig, prints the ready line and serves until Ctrl-C.
pub async fn run(args: SimArgs) -> Result<(), SimError> {
    if let Some(path) = &args.replay {
        let config = super::replay::ReplayConfig {
            listen: args.listen,
            allow_remote: args.allow_remote,
            token: args.token.clone(),
            state_dir: args.state_dir.as_deref(),
            kubeconfig_out: args.kubeconfig_out.as_ref(),
        };
        return super::replay::run(path, args.speed, config).await;
    }
    let mut sims = Vec::new();
    for i in 0..args.clusters {
        sims.push(Sim::start(args.cluster_config(i)).await?);
    }
    let kubeconfig = match sims.as_slice() {
        [one] => one.kubeconfig_yaml().to_string(),
        many => {
            let names: Vec<String> = (1..=many.len())
                .map(|i| format!("kscope-sim-{i}"))
                .collect();
            let named: Vec<(&str, &SimHandle)> =
                names.iter().map(String::as_str).zip(many).collect();
            super::kubeconfig_for(&named)?
        }
    };
    if let Some(path) = &args.kubeconfig_out {
        super::write_kubeconfig(path, &kubeconfig)?;
    }
    for sim in &sims {
        println!("kscope sim ready at {}", sim.url());
    }
    let _ = tokio::signal::ctrl_c().await;
    for sim in sims {
        sim.shutdown().await;
    }
    Ok(())
}
