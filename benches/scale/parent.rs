//! The orchestrating process: starts `kscope sim` per size, runs each client in a child
//! process, drives the sim's churn through its admin endpoint, and prints the table.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

use super::procfs;
use super::verdict::{CoreShares, CoreTicks, Step, UNREAD_SLACK, Verdict};

#[path = "crd.rs"]
mod crd;
#[path = "heap.rs"]
mod heap;
#[path = "pipelines.rs"]
mod pipelines;

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
const MIB: f64 = 1024.0 * 1024.0;
/// kscope, kube-rs's reflector as most controllers run it, and as kube-rs's documentation
/// recommends for memory (managedFields dropped before the store).
const CLIENTS: [&str; 3] = ["kscope", "kube-rs", "kube-rs-lean"];
/// The kube-rs clients kscope is compared with, each in a table of its own.
const BASELINES: [&str; 2] = ["kube-rs", "kube-rs-lean"];
/// The sim's watch history, in events: room for a client that falls behind, so it lags
/// instead of relisting at once, and for the backlog drain.
const HISTORY: u64 = 200_000;

struct Plan {
    full: bool,
    sizes: Vec<usize>,
    /// Churn steps, writes per second at the sim.
    rates: Vec<f64>,
    warmup: Duration,
    window: Duration,
    /// Writes queued in the watch history for the backlog drain (see [`drain`]).
    drain_writes: u64,
    /// Backlog drains per client and size; the median is reported. One drain varies by ±20%
    /// from run to run on this machine, more than the differences it is meant to show, and a
    /// two-second kscope drain is more exposed to a passing slowdown than an eleven-second one.
    drain_runs: usize,
    sync_timeout: Duration,
    mem_cap: u64,
    /// CPUs for the sim and for the client under test, when the machine has two or more and
    /// `taskset` is there (`KSCOPE_SCALE_NO_PIN=1` turns it off).
    pin: Option<(usize, usize)>,
}

/// The sim on the first CPU, the client on the second: then the sim's serving and churn
/// never take the client's CPU, nor the reverse (other processes still share both).
fn cpu_pinning() -> Option<(usize, usize)> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let taskset = std::process::Command::new("taskset")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    (cores >= 2 && taskset && std::env::var_os("KSCOPE_SCALE_NO_PIN").is_none()).then_some((0, 1))
}

/// `program` run on `cpu` only, if given.
fn command_on(cpu: Option<usize>, program: &Path) -> Command {
    match cpu {
        Some(cpu) => {
            let mut command = Command::new("taskset");
            command.args(["-c", &cpu.to_string()]).arg(program);
            command
        }
        None => Command::new(program),
    }
}

impl Plan {
    fn new(full: bool) -> Self {
        let sizes = std::env::var("KSCOPE_SCALE_SIZES")
            .ok()
            .map(|s| {
                s.split(',')
                    .map(|n| n.trim().replace('_', "").parse::<usize>())
                    .collect::<Result<Vec<_>, _>>()
                    .expect("KSCOPE_SCALE_SIZES must be comma-separated pod counts")
            })
            .unwrap_or_else(|| {
                if full {
                    vec![10_000, 50_000, 150_000]
                } else {
                    vec![200]
                }
            });
        let pin = cpu_pinning();
        let mem_cap = std::env::var("KSCOPE_SCALE_MEM_CAP_GB")
            .ok()
            .map(|g| {
                (g.parse::<f64>()
                    .expect("KSCOPE_SCALE_MEM_CAP_GB must be a number")
                    * GIB) as u64
            })
            .unwrap_or((14.0 * GIB) as u64);
        if full {
            Self {
                full,
                sizes,
                // 20k between 16k and 24k: the sim tops out around there on one core, so a
                // coarser step hid where each side's limit is.
                rates: vec![
                    1_000.0, 2_000.0, 4_000.0, 6_000.0, 8_000.0, 12_000.0, 16_000.0, 20_000.0,
                    24_000.0, 32_000.0, 48_000.0, 64_000.0,
                ],
                warmup: Duration::from_secs(2),
                window: Duration::from_secs(5),
                // Within the sim's 200,000-event history, and several seconds of work for
                // either client.
                drain_writes: 150_000,
                drain_runs: 5,
                sync_timeout: Duration::from_secs(600),
                mem_cap,
                pin,
            }
        } else {
            Self {
                full,
                sizes,
                rates: vec![100.0],
                warmup: Duration::from_millis(500),
                window: Duration::from_secs(1),
                drain_writes: 500,
                drain_runs: 3,
                sync_timeout: Duration::from_secs(60),
                mem_cap,
                pin,
            }
        }
    }
}

pub fn main(full: bool) {
    let plan = Plan::new(full);
    if !full {
        println!(
            "scale: smoke run only ({} pods, every client); run `cargo bench --bench scale` for \
             the benchmark",
            plan.sizes
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(",")
        );
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("cannot build a tokio runtime");
    let started = Instant::now();
    // KSCOPE_SCALE_HEAP=1: where a kscope pod store's memory goes, nothing else.
    if full && std::env::var_os("KSCOPE_SCALE_HEAP").is_some() {
        println!("{}", runtime.block_on(heap::run(&plan)));
        return;
    }
    // KSCOPE_SCALE_CRD=1: the CRD mode only (its sizes are Widgets).
    let crd_only = full && std::env::var_os("KSCOPE_SCALE_CRD").is_some();
    if !full || crd_only {
        let table = runtime.block_on(crd::run(&plan));
        println!("{table}");
        if crd_only {
            println!("scale: total {:.0} s", started.elapsed().as_secs_f64());
            return;
        }
    }
    // KSCOPE_SCALE_PIPELINES=1: kscope's pipelines against each other and the wire only.
    let pipelines_only = full && std::env::var_os("KSCOPE_SCALE_PIPELINES").is_some();
    if !full || pipelines_only {
        let table = runtime.block_on(pipelines::run(&plan));
        println!("{table}");
        if pipelines_only {
            println!("scale: total {:.0} s", started.elapsed().as_secs_f64());
            return;
        }
    }
    let results = runtime.block_on(run(&plan));
    let table = render(&results, &plan);
    println!("{table}");
    println!("scale: total {:.0} s", started.elapsed().as_secs_f64());
    if plan.full && std::env::var_os("KSCOPE_SCALE_NO_DOCS").is_none() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/benchmarks.md");
        match write_docs(&path, &table) {
            Ok(()) => println!("scale: results written to {}", path.display()),
            Err(e) => eprintln!("scale: could not update {}: {e}", path.display()),
        }
    }
    if !plan.full {
        for size in &results {
            for c in &size.clients {
                assert!(
                    c.failure.is_none() && c.objects == c.expected,
                    "smoke run: {} synced {} of {} pods ({:?})",
                    c.name,
                    c.objects,
                    c.expected,
                    c.failure
                );
            }
        }
    }
}

#[derive(Debug, Default)]
struct ClientResult {
    name: String,
    /// Pods in the sim while this client synced (earlier churn changes the count a little).
    expected: u64,
    objects: u64,
    sync_s: f64,
    /// From the client's start to its first object, as the synced line reports it.
    first_row_s: f64,
    cpu_sync: f64,
    peak: u64,
    steady_rss: u64,
    /// RSS, pods in store and events processed when the client's last drain ended: what the
    /// churn and the drains did to memory that the steady RSS after sync does not show.
    end_rss: u64,
    end_objects: u64,
    end_events: f64,
    steps: Vec<Step>,
    /// Every backlog drain, in the order run.
    drains: Vec<Drain>,
    cpu_total: f64,
    failure: Option<String>,
}

/// A backlog drained at full speed (see [`drain`]).
#[derive(Debug, Clone)]
struct Drain {
    /// Pod events the client processed while catching up.
    events: f64,
    seconds: f64,
    /// The client's CPU use while catching up, in cores.
    cpu: f64,
    /// Where the client's pinned core's time went over the drain, if pinned.
    core: Option<CoreShares>,
}

impl Drain {
    fn rate(&self) -> f64 {
        self.events / self.seconds.max(1e-3)
    }

    fn cpu_per_event(&self) -> f64 {
        self.cpu * self.seconds / self.events.max(1.0)
    }
}

/// kscope's drain rate over kube-rs's, round by round (see [`drain_rounds`]).
fn paired_ratios(k: &ClientResult, r: &ClientResult) -> Vec<f64> {
    k.drains
        .iter()
        .zip(&r.drains)
        .map(|(a, b)| a.rate() / b.rate().max(1e-3))
        .collect()
}

impl ClientResult {
    /// The drain with the median rate: the one reported.
    fn drain(&self) -> Option<&Drain> {
        let mut by_rate: Vec<&Drain> = self.drains.iter().collect();
        by_rate.sort_by(|a, b| a.rate().total_cmp(&b.rate()));
        by_rate.get(by_rate.len() / 2).copied()
    }

    fn best(&self) -> Option<&Step> {
        self.steps
            .iter()
            .filter(|s| s.kept_up())
            .max_by(|a, b| a.sim_rate.total_cmp(&b.sim_rate))
    }

    fn fell_behind(&self) -> Option<&Step> {
        self.steps.iter().find(|s| s.verdict() == Verdict::Behind)
    }
}

struct SizeResult {
    pods: usize,
    sim_start_s: f64,
    clients: Vec<ClientResult>,
    /// 1-minute load averages sampled around each client's run.
    loads: Vec<f64>,
}

async fn run(plan: &Plan) -> Vec<SizeResult> {
    let mut out = Vec::new();
    for &pods in &plan.sizes {
        let began = Instant::now();
        let sim = SimProc::start(pods, plan).await;
        let sim_start_s = began.elapsed().as_secs_f64();
        eprintln!("scale: sim with {pods} pods ready in {sim_start_s:.1} s");
        let mut loads: Vec<f64> = procfs::load_average().into_iter().collect();
        let mut runs = Vec::new();
        for name in CLIENTS {
            runs.push(start_client(name, &sim, pods, plan).await);
            loads.extend(procfs::load_average());
        }
        drain_rounds(&mut runs, &sim, pods, plan).await;
        let mut clients = Vec::new();
        for (child, mut result) in runs {
            if result.peak == 0 {
                result.peak = num(&child.latest, "peak") as u64;
            }
            result.cpu_total = num(&child.latest, "cpu");
            result.end_rss = num(&child.latest, "rss") as u64;
            result.end_objects = num(&child.latest, "objects") as u64;
            result.end_events = num(&child.latest, "events");
            child.stop().await;
            eprintln!("scale: {pods} pods, {}: {result:?}", result.name);
            clients.push(result);
        }
        loads.extend(procfs::load_average());
        sim.stop().await;
        out.push(SizeResult {
            pods,
            sim_start_s,
            clients,
            loads,
        });
    }
    out
}

/// `kscope sim` in its own process.
struct SimProc {
    child: Child,
    kubeconfig: PathBuf,
    admin: kube::Client,
}

impl SimProc {
    async fn start(pods: usize, plan: &Plan) -> Self {
        Self::start_with_widgets(pods, 0, plan).await
    }

    /// A sim with `widgets` bulk Widgets (about 3 KB each) besides its pods.
    async fn start_with_widgets(pods: usize, widgets: usize, plan: &Plan) -> Self {
        let kubeconfig = std::env::temp_dir().join(format!(
            "kscope-scale-{}-{pods}-{widgets}.kubeconfig",
            std::process::id()
        ));
        let nodes = (pods / 50).max(3);
        let namespaces = (pods / 3_000).clamp(2, 100);
        let mut child = command_on(
            plan.pin.map(|p| p.0),
            Path::new(env!("CARGO_BIN_EXE_kscope")),
        )
        .arg("sim")
        .args(["--pods", &pods.to_string()])
        .args(["--widgets", &widgets.to_string()])
        .args(["--nodes", &nodes.to_string()])
        .args(["--namespaces", &namespaces.to_string()])
        .args(["--seed", "1"])
        .args(["--history", &HISTORY.to_string()])
        // The bench's own writes (restoring the pod count, marks) must stay as written.
        .arg("--no-controllers")
        .arg("--kubeconfig-out")
        .arg(&kubeconfig)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("cannot start `kscope sim`");
        let stdout = child.stdout.take().expect("the sim's stdout is piped");
        let mut lines = BufReader::new(stdout).lines();
        let ready = tokio::time::timeout(plan.sync_timeout, async {
            while let Ok(Some(line)) = lines.next_line().await {
                if line.starts_with("kscope sim ready at") {
                    return true;
                }
            }
            false
        })
        .await;
        assert!(
            matches!(ready, Ok(true)),
            "`kscope sim --pods {pods}` did not print its ready line"
        );
        // Keep draining its stdout so it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let admin = client_for(&kubeconfig).await;
        Self {
            child,
            kubeconfig,
            admin,
        }
    }

    async fn admin(&self, method: &str, path: &str, body: Vec<u8>) -> Value {
        let request = http::Request::builder()
            .method(method)
            .uri(path)
            .header("content-type", "application/json")
            .body(body)
            .expect("a valid admin request");
        let text = self
            .admin
            .request_text(request)
            .await
            .unwrap_or_else(|e| panic!("sim admin {method} {path} failed: {e}"));
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("sim admin {method} {path} answered non-JSON ({e}): {text}"))
    }

    /// The sim's newest resourceVersion.
    async fn rv(&self) -> u64 {
        let state = self.admin("GET", "/sim/state", Vec::new()).await;
        state["resourceVersion"]
            .as_str()
            .and_then(|rv| rv.parse().ok())
            .unwrap_or_else(|| panic!("sim state without a numeric resourceVersion: {state}"))
    }

    /// Pods in the sim now.
    async fn pods(&self) -> u64 {
        self.count("pods").await
    }

    /// Objects of `resource` (`plural` or `plural.group`) in the sim now.
    async fn count(&self, resource: &str) -> u64 {
        let state = self.admin("GET", "/sim/state", Vec::new()).await;
        state["counts"][resource]
            .as_u64()
            .unwrap_or_else(|| panic!("sim state without a count of {resource}: {state}"))
    }

    /// Creates a pod and returns its resourceVersion: a pod event newer than every write
    /// before it, which both clients see (the sim's newest resourceVersion may belong to a
    /// ReplicaSet they never see). A new key, not a change to an existing pod: kscope's
    /// DeltaFIFO queues a change to a key it already holds at that key's place in the queue,
    /// so a marked existing pod could be processed before the backlog queued behind it; a
    /// new key goes last.
    async fn mark(&self) -> Result<u64, String> {
        use k8s_openapi::api::core::v1::Pod;
        use kube::api::{Api, ListParams, PostParams};
        let all: Api<Pod> = Api::all(self.admin.clone());
        let list = all
            .list(&ListParams::default().limit(1))
            .await
            .map_err(|e| format!("listing a pod for its namespace: {e}"))?;
        let namespace = list
            .items
            .first()
            .and_then(|p| p.metadata.namespace.clone())
            .ok_or("no pod with a namespace to mark beside")?;
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"generateName": "scale-mark-", "labels": {"app": "scale-mark"}},
            "spec": {"containers": [{"name": "mark", "image": "registry.k8s.io/pause:3.10"}]},
        }))
        .map_err(|e| format!("the mark pod: {e}"))?;
        let created = Api::<Pod>::namespaced(self.admin.clone(), &namespace)
            .create(&PostParams::default(), &pod)
            .await
            .map_err(|e| format!("creating a mark pod in {namespace}: {e}"))?;
        created
            .metadata
            .resource_version
            .and_then(|rv| rv.parse().ok())
            .ok_or_else(|| "the mark pod has no numeric resourceVersion".into())
    }

    /// Deletes the newest pods until `target` are left (the churn's additions), so that each
    /// client syncs as many pods as the one before it. The sim's ReplicaSet controller
    /// replaces a deleted pod its ReplicaSet still wants, as a cluster's does, so each
    /// ReplicaSet is first scaled down by the pods about to go (its Deployment is left as
    /// the churn set it: only the pod count matters here). The writes are in the watch
    /// history like any change: a parked client catches up on them before its next drain,
    /// untimed.
    async fn restore_pods(&self, target: u64) -> Result<(), String> {
        use std::collections::BTreeMap;

        use k8s_openapi::api::apps::v1::ReplicaSet;
        use k8s_openapi::api::core::v1::Pod;
        use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
        let count = self.pods().await;
        if count < target {
            return self.fill_pods(target - count).await;
        }
        let surplus = (count - target) as usize;
        if surplus == 0 {
            return Ok(());
        }
        let all: Api<Pod> = Api::all(self.admin.clone());
        let mut pods = Vec::new();
        let mut params = ListParams::default().limit(500);
        loop {
            let page = all
                .list_metadata(&params)
                .await
                .map_err(|e| format!("listing pods: {e}"))?;
            pods.extend(page.items.into_iter().filter_map(|p| {
                let owner = p
                    .metadata
                    .owner_references
                    .unwrap_or_default()
                    .into_iter()
                    .find(|o| o.kind == "ReplicaSet")
                    .map(|o| o.name);
                let created = p.metadata.creation_timestamp.map(|t| t.0);
                Some((created, p.metadata.namespace?, p.metadata.name?, owner))
            }));
            match page.metadata.continue_.filter(|c| !c.is_empty()) {
                Some(token) => params = params.continue_token(&token),
                None => break,
            }
        }
        // Pods per ReplicaSet now, and the newest `surplus` pods grouped by theirs.
        let mut owned: BTreeMap<(String, String), usize> = BTreeMap::new();
        for (_, namespace, _, owner) in &pods {
            if let Some(owner) = owner {
                *owned.entry((namespace.clone(), owner.clone())).or_default() += 1;
            }
        }
        pods.sort_by_key(|pod| std::cmp::Reverse(pod.0));
        let mut going: BTreeMap<(String, Option<String>), Vec<String>> = BTreeMap::new();
        for (_, namespace, name, owner) in pods.into_iter().take(surplus) {
            going.entry((namespace, owner)).or_default().push(name);
        }
        let now = DeleteParams {
            grace_period_seconds: Some(0),
            ..DeleteParams::default()
        };
        for ((namespace, owner), names) in going {
            if let Some(owner) = owner {
                let left = owned
                    .get(&(namespace.clone(), owner.clone()))
                    .copied()
                    .unwrap_or_default()
                    .saturating_sub(names.len());
                let scale = serde_json::json!({ "spec": { "replicas": left } });
                Api::<ReplicaSet>::namespaced(self.admin.clone(), &namespace)
                    .patch(&owner, &PatchParams::default(), &Patch::Merge(&scale))
                    .await
                    .map_err(|e| format!("scaling {namespace}/{owner} to {left}: {e}"))?;
            }
            let pods = Api::<Pod>::namespaced(self.admin.clone(), &namespace);
            for name in names {
                pods.delete(&name, &now)
                    .await
                    .map_err(|e| format!("deleting {namespace}/{name}: {e}"))?;
            }
        }
        let left = self.pods().await;
        eprintln!("scale: deleted the {surplus} pods the churn added; {left} pods left");
        if left > target {
            return Err(format!("{left} pods left, not {target}"));
        }
        Ok(())
    }

    /// Creates `missing` pods (the churn scaled some ReplicaSets down), owned by nothing so
    /// that no controller of the sim's acts on them, beside the first pod's namespace.
    async fn fill_pods(&self, missing: u64) -> Result<(), String> {
        use k8s_openapi::api::core::v1::Pod;
        use kube::api::{Api, ListParams, PostParams};
        let first = Api::<Pod>::all(self.admin.clone())
            .list(&ListParams::default().limit(1))
            .await
            .map_err(|e| format!("listing a pod for its namespace: {e}"))?;
        let namespace = first
            .items
            .first()
            .and_then(|p| p.metadata.namespace.clone())
            .ok_or("no pod with a namespace to fill beside")?;
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"generateName": "scale-fill-", "labels": {"app": "scale-fill"}},
            "spec": {"containers": [{"name": "fill", "image": "registry.k8s.io/pause:3.10"}]},
        }))
        .map_err(|e| format!("the fill pod: {e}"))?;
        let pods = Api::<Pod>::namespaced(self.admin.clone(), &namespace);
        for _ in 0..missing {
            pods.create(&PostParams::default(), &pod)
                .await
                .map_err(|e| format!("creating a fill pod in {namespace}: {e}"))?;
        }
        eprintln!("scale: created {missing} pods the churn had taken away");
        Ok(())
    }

    async fn set_churn(&self, rate: f64) {
        let body = serde_json::json!({ "rate": rate, "paused": false }).to_string();
        self.admin("PUT", "/sim/churn", body.into_bytes()).await;
    }

    async fn stop(mut self) {
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
        let _ = std::fs::remove_file(&self.kubeconfig);
    }
}

async fn client_for(kubeconfig: &Path) -> kube::Client {
    let kc = kube::config::Kubeconfig::read_from(kubeconfig)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", kubeconfig.display()));
    let config =
        kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
            .await
            .unwrap_or_else(|e| panic!("the sim's kubeconfig is not usable: {e}"));
    kube::Client::try_from(config).expect("cannot build an admin client for the sim")
}

/// A client in its own process (this binary with `--child`).
struct ChildProc {
    child: Child,
    pid: String,
    lines: mpsc::UnboundedReceiver<Value>,
    /// The newest `progress` line.
    latest: Value,
    mem_cap: u64,
}

impl ChildProc {
    fn spawn(name: &str, kubeconfig: &Path, mem_cap: u64, cpu: Option<usize>) -> Self {
        let exe = std::env::current_exe().expect("cannot find this benchmark's executable");
        let mut child = command_on(cpu, &exe)
            .args(["--child", name, "--kubeconfig"])
            .arg(kubeconfig)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("cannot start the benchmark's child process");
        let pid = child
            .id()
            .map(|p| p.to_string())
            .expect("a just-started child has a pid");
        let stdout = child.stdout.take().expect("the child's stdout is piped");
        let (tx, lines) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                match serde_json::from_str::<Value>(&line) {
                    Ok(v) => {
                        if tx.send(v).is_err() {
                            return;
                        }
                    }
                    Err(e) => eprintln!("scale: ignoring a child's non-JSON line ({e}): {line}"),
                }
            }
        });
        Self {
            child,
            pid,
            lines,
            latest: Value::Null,
            mem_cap,
        }
    }

    /// Reads lines until one of `kind` arrives or `deadline`; `Err` if the child died or went
    /// over the memory cap (then it is killed).
    async fn pump(
        &mut self,
        kind: Option<&str>,
        deadline: Instant,
    ) -> Result<Option<Value>, String> {
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            let next = tokio::time::timeout(
                (deadline - now).min(Duration::from_millis(300)),
                self.lines.recv(),
            )
            .await;
            if let Some((rss, _)) = procfs::rss_and_peak(&self.pid)
                && rss > self.mem_cap
            {
                self.kill();
                return Err(format!(
                    "stopped at {:.1} GiB RSS (the cap) with {} pods in its store after {:.0} s",
                    rss as f64 / GIB,
                    self.latest["objects"],
                    self.latest["t"].as_f64().unwrap_or(0.0)
                ));
            }
            match next {
                Err(_) => {}
                Ok(None) => {
                    let status = self.child.wait().await;
                    return Err(format!(
                        "exited ({status:?}) at {:.1} GiB peak RSS with {} pods in its store",
                        self.latest["peak"].as_f64().unwrap_or(0.0) / GIB,
                        self.latest["objects"]
                    ));
                }
                Ok(Some(v)) => {
                    let k = v["kind"].as_str().unwrap_or_default().to_string();
                    if k == "progress" {
                        self.latest = v;
                    } else if Some(k.as_str()) == kind {
                        return Ok(Some(v));
                    }
                }
            }
        }
    }

    async fn wait_for(&mut self, kind: &str, timeout: Duration) -> Result<Value, String> {
        match self.pump(Some(kind), Instant::now() + timeout).await? {
            Some(v) => Ok(v),
            None => {
                self.kill();
                Err(format!(
                    "no `{kind}` within {} s ({} pods in its store)",
                    timeout.as_secs(),
                    self.latest["objects"]
                ))
            }
        }
    }

    async fn sleep(&mut self, d: Duration) -> Result<(), String> {
        self.pump(None, Instant::now() + d).await.map(|_| ())
    }

    /// Stops (`SIGSTOP`) or resumes (`SIGCONT`) the child.
    #[allow(unsafe_code)] // libc: kill(2) has no safe std API for SIGSTOP/SIGCONT.
    fn signal(&self, signal: libc::c_int) -> Result<(), String> {
        let pid = self
            .child
            .id()
            .and_then(|p| libc::pid_t::try_from(p).ok())
            .ok_or("the child has exited")?;
        // SAFETY: kill(2) has no memory effects on this process; the pid is our own child's,
        // not yet reaped.
        if unsafe { libc::kill(pid, signal) } == 0 {
            Ok(())
        } else {
            Err(format!(
                "kill({pid}, {signal}): {}",
                std::io::Error::last_os_error()
            ))
        }
    }

    /// Kills a child that failed, so that it takes no CPU from the drains still to run.
    fn kill(&mut self) {
        let _ = self.child.start_kill();
    }

    async fn stop(mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }
}

fn num(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or(0.0)
}

/// Starts a client, syncs it and runs the churn ladder; the child is left stopped
/// (`SIGSTOP`) for [`drain_rounds`], or dead if it failed.
async fn start_client(
    name: &str,
    sim: &SimProc,
    pods: usize,
    plan: &Plan,
) -> (ChildProc, ClientResult) {
    let mut result = ClientResult {
        name: name.to_string(),
        ..ClientResult::default()
    };
    sim.set_churn(0.0).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    // The earlier clients' churn grew the sim: each client syncs the same number of pods.
    if let Err(failure) = sim.restore_pods(pods as u64).await {
        eprintln!("scale: could not bring the sim back to {pods} pods: {failure}");
    }
    result.expected = sim.pods().await;
    // Leave room for the sim and the rest of the machine.
    let available = procfs::mem_available().unwrap_or(u64::MAX);
    let mem_cap = plan
        .mem_cap
        .min(available.saturating_sub((1.5 * GIB) as u64));
    let mut child = ChildProc::spawn(name, &sim.kubeconfig, mem_cap, plan.pin.map(|p| p.1));
    let outcome = measure(&mut child, &mut result, sim, pods, plan).await;
    sim.set_churn(0.0).await;
    let parked = match outcome {
        Ok(()) => child.signal(libc::SIGSTOP),
        Err(failure) => Err(failure),
    };
    if let Err(failure) = parked {
        child.kill();
        result.failure = Some(failure);
    }
    (child, result)
}

/// Backlog drains in rounds: each round drains every client once, one at a time, the others
/// stopped. Taking turns spreads a slow stretch of the machine over both clients instead of
/// over all of one client's drains, and round `i` of one client pairs with round `i` of the
/// other (see [`paired_ratios`]). A client catches up on the other's backlog, untimed, at the
/// start of its own drain; the first time, that may be a relist (its watch fell out of the
/// sim's history while the other client ran its ladder).
async fn drain_rounds(
    runs: &mut [(ChildProc, ClientResult)],
    sim: &SimProc,
    pods: usize,
    plan: &Plan,
) {
    for _ in 0..plan.drain_runs {
        for (child, result) in runs.iter_mut() {
            if result.failure.is_some() {
                continue;
            }
            let outcome = async {
                child.signal(libc::SIGCONT)?;
                let run = drain(child, sim, plan).await?;
                child.signal(libc::SIGSTOP)?;
                Ok::<_, String>(run)
            }
            .await;
            match outcome {
                Ok(run) => {
                    eprintln!("scale: {pods} pods, {}: {run:?}", result.name);
                    result.drains.push(run);
                }
                Err(failure) => {
                    child.kill();
                    result.failure = Some(failure);
                }
            }
        }
    }
}

async fn measure(
    child: &mut ChildProc,
    result: &mut ClientResult,
    sim: &SimProc,
    pods: usize,
    plan: &Plan,
) -> Result<(), String> {
    let synced = child.wait_for("synced", plan.sync_timeout).await?;
    result.sync_s = num(&synced, "sync_s");
    result.cpu_sync = num(&synced, "cpu");
    result.objects = num(&synced, "objects") as u64;
    let steady = child.wait_for("steady", plan.sync_timeout).await?;
    result.steady_rss = num(&steady, "rss") as u64;
    // Set by the handler's first object, which may come just after the synced line.
    result.first_row_s = num(&steady, "first_row_s");
    result.peak = num(&steady, "peak") as u64;
    if result.objects != result.expected {
        eprintln!(
            "scale: {} synced {} objects, the sim has {} pods",
            result.name, result.objects, result.expected
        );
    }

    for &target in &plan.rates {
        sim.set_churn(target).await;
        child.sleep(plan.warmup).await?;
        let (sim_a, t_a) = (sim.rv().await, Instant::now());
        let a = child.latest.clone();
        child.sleep(plan.window).await?;
        let (sim_b, t_b) = (sim.rv().await, Instant::now());
        let b = child.latest.clone();
        let dt = (t_b - t_a).as_secs_f64();
        let sim_rate = (sim_b.saturating_sub(sim_a)) as f64 / dt;
        let client_dt = (num(&b, "t") - num(&a, "t")).max(1e-3);
        let client_rate = (num(&b, "events") - num(&a, "events")) / client_dt;
        let client_cpu = (num(&b, "cpu") - num(&a, "cpu")) / client_dt;
        let lag_start = sim_a as i64 - num(&a, "rv") as i64;
        let lag_end = sim_b as i64 - num(&b, "rv") as i64;
        let backlog = num(&b, "backlog") as u64;
        let unread = num(&b, "unread") as u64;
        let relisted = num(&b, "relists") > num(&a, "relists");
        let step = Step {
            target,
            sim_rate,
            client_rate,
            client_cpu,
            seconds: dt,
            lag_start,
            lag_end,
            backlog,
            unread,
            relisted,
            sim_saturated: sim_rate < 0.8 * target,
        };
        eprintln!(
            "scale: {pods} pods, {}: {:?} {step:?}",
            result.name,
            step.verdict()
        );
        let stop = !step.kept_up() || step.sim_saturated;
        result.steps.push(step);
        if stop {
            break;
        }
    }
    sim.set_churn(0.0).await;
    child.sleep(Duration::from_millis(500)).await
}

/// Backlog drain: how many events per second a client processes when the sim is not the
/// limit. The caller has stopped every other client. This one is stopped (`SIGSTOP`) while
/// the sim writes `plan.drain_writes` changes into its watch history as fast as it can, then
/// resumed: the sim then only copies logged events into the open watch, and the client's
/// catch-up rate is what it can process on its one core. It is timed from the resume to when
/// the child saw the pod created after the backlog (its `rv_at`, on the wall clock both
/// processes share). A relist or an error on the way is a failure: the drain must be the
/// watch's.
async fn drain(child: &mut ChildProc, sim: &SimProc, plan: &Plan) -> Result<Drain, String> {
    let deadline = Instant::now() + plan.sync_timeout;
    let catch_up = async |child: &mut ChildProc, rv: u64| -> Result<(), String> {
        while (num(&child.latest, "rv") as u64) < rv {
            if Instant::now() > deadline {
                return Err(format!(
                    "did not reach resourceVersion {rv} within {} s",
                    plan.sync_timeout.as_secs()
                ));
            }
            child.sleep(Duration::from_millis(10)).await?;
        }
        Ok(())
    };
    // Twice: after a relist the first mark may come in the list, anywhere in its order;
    // the second is then a watch event queued behind all of it.
    for _ in 0..2 {
        let settled = sim.mark().await?;
        catch_up(child, settled).await?;
    }
    child.signal(libc::SIGSTOP)?;
    let start_rv = sim.rv().await;
    sim.set_churn(1_000_000.0).await;
    let mut written = 0;
    while written < plan.drain_writes && Instant::now() < deadline {
        // Reads the lines the child wrote before it stopped, so none is taken for one after.
        child.sleep(Duration::from_millis(20)).await?;
        written = sim.rv().await - start_rv;
    }
    sim.set_churn(0.0).await;
    let stopped = child.latest.clone();
    let marked = sim.mark().await;
    // Read while the client is stopped, so that none of its drain falls before.
    let core_before = core_reading(child, plan);
    child.signal(libc::SIGCONT)?;
    let resumed = Instant::now();
    let resumed_at = super::child::unix_micros() as f64;
    let marked = marked?;
    if written < plan.drain_writes {
        return Err(format!(
            "the sim wrote only {written} of {} changes for the drain",
            plan.drain_writes
        ));
    }
    if marked - start_rv >= HISTORY {
        return Err(format!(
            "a backlog of {} changes does not fit the sim's history of {HISTORY}",
            marked - start_rv
        ));
    }
    catch_up(child, marked).await?;
    let core_after = core_reading(child, plan);
    let seen_at = super::child::unix_micros() as f64;
    let last = &child.latest;
    // To when the child reached the mark, not to the progress line that says so.
    let (seconds, tail) = match (num(last, "rv_at") - resumed_at) / 1e6 {
        caught_up if caught_up > 0.0 => (caught_up, (seen_at - resumed_at) / 1e6 - caught_up),
        _ => (resumed.elapsed().as_secs_f64(), 0.0),
    };
    // The core was read up to ~0.1 s after the end (the progress line's period), while the
    // client waited to be seen: that tail, in ticks, is taken off as idle time.
    let tail_ticks = (tail.max(0.0) * 100.0).round() as u64;
    let core = core_before
        .zip(core_after)
        .and_then(|((core_a, client_a), (core_b, client_b))| {
            CoreShares::split(
                core_b.since(core_a),
                client_b.saturating_sub(client_a),
                tail_ticks,
            )
        });
    for counter in ["relists", "errors"] {
        if num(last, counter) > num(&stopped, counter) {
            return Err(format!("{counter} went up during the drain"));
        }
    }
    Ok(Drain {
        events: num(last, "events") - num(&stopped, "events"),
        seconds,
        cpu: (num(last, "cpu") - num(&stopped, "cpu")) / seconds.max(1e-3),
        core,
    })
}

/// The client's pinned core's ticks and the client's own CPU ticks, read together; `None`
/// when the client is not pinned (its CPU then is not one core's).
fn core_reading(child: &ChildProc, plan: &Plan) -> Option<(CoreTicks, u64)> {
    let (_, cpu) = plan.pin?;
    Some((procfs::cpu_times(cpu)?, procfs::cpu_ticks(&child.pid)?))
}

fn mib(bytes: u64) -> String {
    format!("{:.0}", bytes as f64 / MIB)
}

fn ratio(k: f64, r: f64) -> String {
    if k > 0.0 && r > 0.0 {
        format!("{:.2}", k / r)
    } else {
        "–".into()
    }
}

/// `low–high` of the sampled load averages.
fn load_range(loads: &[f64]) -> String {
    let low = loads.iter().copied().fold(f64::INFINITY, f64::min);
    let high = loads.iter().copied().fold(0.0, f64::max);
    if loads.is_empty() {
        "unknown".into()
    } else {
        format!("{low:.1}–{high:.1}")
    }
}

fn render(results: &[SizeResult], plan: &Plan) -> String {
    let mut s = String::new();
    for size in results {
        for baseline in BASELINES {
            render_pair(&mut s, size, baseline);
        }
    }
    s.push_str(&legend(plan));
    s
}

/// One size's table: kscope beside the kube-rs client `baseline`.
fn render_pair(s: &mut String, size: &SizeResult, baseline: &str) {
    let find = |n: &str| size.clients.iter().find(|c| c.name == n);
    let (Some(k), Some(r)) = (find("kscope"), find(baseline)) else {
        return;
    };
    {
        s.push_str(&format!(
            "\n### {} pods, kscope and {} (sim ready in {:.0} s; load average {})\n\n| | kscope | {baseline} | kscope/{baseline} |\n|---|---:|---:|---:|\n",
            size.pods,
            match baseline {
                "kube-rs-lean" => "kube-rs with managedFields dropped before its store",
                _ => "kube-rs's reflector as it comes",
            },
            size.sim_start_s,
            load_range(&size.loads)
        ));
        let mut row = |name: &str, a: String, b: String, q: String| {
            s.push_str(&format!("| {name} | {a} | {b} | {q} |\n"));
        };
        let synced = |c: &ClientResult| c.sync_s > 0.0;
        let val = |c: &ClientResult, f: &dyn Fn(&ClientResult) -> String| {
            if synced(c) { f(c) } else { "–".into() }
        };
        row(
            "pods in store / in sim",
            val(k, &|c| format!("{} / {}", c.objects, c.expected)),
            val(r, &|c| format!("{} / {}", c.objects, c.expected)),
            String::new(),
        );
        row(
            "time to synced (s)",
            val(k, &|c| format!("{:.2}", c.sync_s)),
            val(r, &|c| format!("{:.2}", c.sync_s)),
            ratio(k.sync_s, r.sync_s),
        );
        row(
            "CPU to synced (s)",
            val(k, &|c| format!("{:.2}", c.cpu_sync)),
            val(r, &|c| format!("{:.2}", c.cpu_sync)),
            ratio(k.cpu_sync, r.cpu_sync),
        );
        row(
            "time to synced per pod (µs)",
            val(k, &|c| {
                format!("{:.1}", c.sync_s * 1e6 / c.objects.max(1) as f64)
            }),
            val(r, &|c| {
                format!("{:.1}", c.sync_s * 1e6 / c.objects.max(1) as f64)
            }),
            String::new(),
        );
        row(
            "peak RSS (MiB)",
            mib(k.peak),
            mib(r.peak),
            ratio(k.peak as f64, r.peak as f64),
        );
        row(
            "peak RSS per pod in store (KiB)",
            val(k, &|c| {
                format!("{:.2}", c.peak as f64 / 1024.0 / c.objects.max(1) as f64)
            }),
            val(r, &|c| {
                format!("{:.2}", c.peak as f64 / 1024.0 / c.objects.max(1) as f64)
            }),
            String::new(),
        );
        row(
            "steady RSS after sync (MiB)",
            val(k, &|c| mib(c.steady_rss)),
            val(r, &|c| mib(c.steady_rss)),
            ratio(k.steady_rss as f64, r.steady_rss as f64),
        );
        let end = |c: &ClientResult| {
            format!(
                "{} ({} pods, {:.0} events)",
                mib(c.end_rss),
                c.end_objects,
                c.end_events
            )
        };
        row(
            "RSS after the churn and the drains (MiB)",
            val(k, &end),
            val(r, &end),
            ratio(k.end_rss as f64, r.end_rss as f64),
        );
        let best = |c: &ClientResult| {
            c.best().map_or("–".into(), |b| {
                format!("{:.0} ({:.0} ev/s)", b.sim_rate, b.client_rate)
            })
        };
        // A ladder kscope ended without falling behind says only that its limit is higher.
        let kept = ratio(
            k.best().map_or(0.0, |b| b.sim_rate),
            r.best().map_or(0.0, |b| b.sim_rate),
        );
        let kept = match (k.fell_behind(), r.fell_behind()) {
            _ if kept == "–" => kept,
            (None, Some(_)) => format!("≥ {kept}"),
            (None, None) => format!("{kept} (neither fell behind)"),
            _ => kept,
        };
        row(
            "churn kept up: sim writes/s (client pod events/s)",
            best(k),
            best(r),
            kept,
        );
        let behind = |c: &ClientResult| match (c.fell_behind(), c.steps.last()) {
            (Some(b), _) => format!("behind at {:.0} w/s ({})", b.sim_rate, why_behind(b, true)),
            (None, Some(last)) if last.verdict() == Verdict::SimBound => format!(
                "sim-bound at {:.0} w/s: lag {}→{} while the client idled at {:.0}% CPU with \
                 nothing queued and {:.0} KiB unread",
                last.sim_rate,
                last.lag_start,
                last.lag_end,
                last.client_cpu * 100.0,
                last.unread as f64 / 1024.0
            ),
            (None, Some(last)) if last.sim_saturated => {
                format!("kept up; sim topped out at {:.0} w/s", last.sim_rate)
            }
            (None, Some(_)) => "kept up with every step".into(),
            (None, None) => "–".into(),
        };
        // CPU per event at the highest rate both sustained: what a client's own ceiling would
        // be if it had a core to itself (the sim shares the machine's cores with it).
        let common = |c: &ClientResult, limit: f64| {
            c.steps
                .iter()
                .filter(|st| st.kept_up() && st.sim_rate <= limit + 1.0)
                .max_by(|a, b| a.sim_rate.total_cmp(&b.sim_rate))
                .filter(|st| st.client_rate > 0.0 && st.client_cpu > 0.0)
                .map(|st| st.client_cpu / st.client_rate * 1e6)
        };
        let limit = r
            .best()
            .map_or(0.0, |b| b.sim_rate)
            .min(k.best().map_or(0.0, |b| b.sim_rate));
        let (ck, cr) = (common(k, limit), common(r, limit));
        let show = |c: Option<f64>| {
            c.map_or("–".into(), |us| {
                format!("{us:.0} µs (≈{:.0} ev/s per core)", 1e6 / us)
            })
        };
        row(
            "churn CPU per event",
            show(ck),
            show(cr),
            match (ck, cr) {
                (Some(a), Some(b)) => format!("{:.2} (capacity ×{:.1})", a / b, b / a),
                _ => "–".into(),
            },
        );
        row("under more churn", behind(k), behind(r), String::new());
        let drained = |c: &ClientResult| {
            c.drain().map_or("–".into(), |d| {
                let rates: Vec<String> = c
                    .drains
                    .iter()
                    .map(|r| format!("{:.0}", r.rate()))
                    .collect();
                format!(
                    "{:.0} ev/s ({:.0} events in {:.1} s, {:.0}% CPU, {:.0} µs per event; \
                     median of {} drains: {} ev/s)",
                    d.rate(),
                    d.events,
                    d.seconds,
                    d.cpu * 100.0,
                    d.cpu_per_event() * 1e6,
                    c.drains.len(),
                    rates.join(", ")
                )
            })
        };
        row(
            "backlog drain: pod events/s with the sim not the limit",
            drained(k),
            drained(r),
            ratio(
                k.drain().map_or(0.0, Drain::rate),
                r.drain().map_or(0.0, Drain::rate),
            ),
        );
        let shares = |c: &ClientResult| {
            let each: Vec<String> = c
                .drains
                .iter()
                .filter_map(|d| {
                    d.core.map(|s| {
                        let [client, others, interrupts, steal, idle] = s.percents();
                        format!("{client}/{others}/{interrupts}/{steal}/{idle}")
                    })
                })
                .collect();
            if each.is_empty() {
                "–".to_string()
            } else {
                each.join(", ")
            }
        };
        row(
            "its core in each drain: the client / other processes / interrupts / steal / idle (%)",
            shares(k),
            shares(r),
            String::new(),
        );
        let mut paired = paired_ratios(k, r);
        if !paired.is_empty() {
            let listed: Vec<String> = paired.iter().map(|q| format!("{q:.2}")).collect();
            paired.sort_by(f64::total_cmp);
            row(
                &format!("backlog drain, round by round (kscope/{baseline})"),
                String::new(),
                String::new(),
                format!(
                    "{} (median {:.2})",
                    listed.join(", "),
                    paired[paired.len() / 2]
                ),
            );
        }
        row(
            "CPU total incl. churn (s)",
            format!("{:.1}", k.cpu_total),
            format!("{:.1}", r.cpu_total),
            String::new(),
        );
        for c in [k, r] {
            if let Some(f) = &c.failure {
                s.push_str(&format!("\n{}: {f}\n", c.name));
            }
        }
        s.push_str(
            "\nChurn steps (target w/s → sim w/s made, client pod events/s, lag in RVs at \
             window start→end, backlog queued in the client + bytes unread on its sockets at \
             end):\n\n",
        );
        for c in [k, r] {
            let steps: Vec<String> = c
                .steps
                .iter()
                .map(|st| {
                    format!(
                        "{:.0}→{:.0} w/s, {:.0} ev/s at {:.0}% CPU, lag {}→{}, backlog {} + {:.0} KiB unread{}{}",
                        st.target,
                        st.sim_rate,
                        st.client_rate,
                        st.client_cpu * 100.0,
                        st.lag_start,
                        st.lag_end,
                        st.backlog,
                        st.unread as f64 / 1024.0,
                        if st.relisted { ", RELISTED" } else { "" },
                        match st.verdict() {
                            Verdict::KeptUp => String::new(),
                            Verdict::SimBound => ", SIM-BOUND".into(),
                            Verdict::Behind => format!(", BEHIND ({})", why_behind(st, false)),
                        }
                    )
                })
                .collect();
            s.push_str(&format!("- {}: {}\n", c.name, steps.join("; ")));
        }
    }
}

/// Why a client was behind in `step`: what waited for it, and, with `lag`, its lag and CPU.
fn why_behind(step: &Step, lag: bool) -> String {
    let mut why = Vec::new();
    if step.unread > UNREAD_SLACK {
        why.push(format!("{:.1} MiB unread", step.unread as f64 / MIB));
    }
    if step.relisted {
        why.push("relisted".into());
    }
    if step.backlog > 0 {
        why.push(format!("{} events queued", step.backlog));
    }
    if lag || why.is_empty() {
        why.push(format!(
            "lag {}→{} at {:.0}% CPU",
            step.lag_start,
            step.lag_end,
            step.client_cpu * 100.0
        ));
    }
    why.join("; ")
}

/// What the tables measure, once after them.
fn legend(plan: &Plan) -> String {
    format!(
        "\nChurn steps: {:?} writes/s, {} s warm-up + {} s window each; a client keeps up when \
         its lag behind the sim's newest resourceVersion stays under ~1.5 s of writes and does \
         not grow, with nothing relisted, queued in it or unread on its sockets to the sim \
         (at most {} KiB, about one of the sim's watch writes); it is BEHIND when it relisted, \
         work waited for it (queued, or more than that unread: behind on the wire whatever its \
         CPU), or its lag grew while it used half a core or more; a growing lag with nothing \
         queued or unread and under half a core of client CPU is the sim's limit (SIM-BOUND), \
         not the client's. Backlog drain: the client is stopped \
         (SIGSTOP) while the sim writes {} changes into its watch history as fast as it can, \
         then resumed; pod events/s from the resume until it has a pod created after the \
         backlog. {} rounds; in each, every client drains once while the others are stopped, \
         so the clients take turns; the median drain is reported, and the ratio of each \
         round's pair. CPU total includes catching up on the other client's drains. Memory \
         cap per client: {:.1} GiB. {}\n",
        plan.rates,
        plan.warmup.as_secs_f64(),
        plan.window.as_secs_f64(),
        UNREAD_SLACK / 1024,
        plan.drain_writes,
        plan.drain_runs,
        plan.mem_cap as f64 / GIB,
        match plan.pin {
            Some((sim, client)) => format!(
                "CPUs: the sim pinned to CPU {sim}, each client to CPU {client} (taskset); other \
                 processes on the machine still share both. For each drain, CPU {client}'s ticks \
                 from /proc/stat from the resume to the drain's end, split into disjoint parts \
                 that add up to 100%: the client (its own CPU ticks, at most the core's \
                 user+system: a kernel without IRQ time accounting charges interrupts served \
                 while the client ran to the client as well), other processes, interrupts (irq and softirq; on loopback \
                 these include the sim's TCP sends that the client's ACKs release), steal by \
                 the hypervisor, and idle."
            ),
            None => "CPUs: not pinned; the sim and the client share the machine's cores.".into(),
        }
    )
}

const BEGIN: &str = "<!-- scale:begin (written by `cargo bench --bench scale`) -->";
const END: &str = "<!-- scale:end -->";

fn write_docs(path: &Path, table: &str) -> std::io::Result<()> {
    let existing = std::fs::read_to_string(path).unwrap_or_else(|_| {
        format!("# Benchmarks\n\n## Scale: kscope against kube-rs's reflector\n\n{BEGIN}\n{END}\n")
    });
    let section = format!(
        "{BEGIN}\nLatest run: {}, on {}.\n{table}\n{END}",
        jiff::Timestamp::now()
            .round(jiff::Unit::Second)
            .unwrap_or(jiff::Timestamp::now()),
        procfs::machine()
    );
    let updated = match (existing.find(BEGIN), existing.find(END)) {
        (Some(b), Some(e)) if e > b => {
            format!("{}{section}{}", &existing[..b], &existing[e + END.len()..])
        }
        _ => format!("{existing}\n{section}\n"),
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, updated)
}
