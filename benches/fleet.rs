//! Fleet benchmark (issue #37): the TUI's pods table across many simulated clusters, run
//! by its own event loop in a child process (so its memory is its own), against the same
//! clusters synced one at a time.
//!
//! The clusters: one `kscope sim` process serving all but one of them (`--clusters N-1`),
//! and one more sim process alone, on a fixed port with its state kept, so that it can be
//! killed and started again mid-run. Each cluster has `KSCOPE_FLEET_PODS` pods and a little
//! churn (`KSCOPE_FLEET_CHURN` writes/s each), so the watch has something to deliver.
//!
//! 1. Alone: a child runs the App on one cluster's pods until its first list is in and it
//!    watches; it says when the first rows were drawn, when it was synced and its RSS. One
//!    child per cluster, one at a time.
//! 2. Together: a child runs the App across every cluster (`--context` each), pressing `j`
//!    every 100 ms from the start and timing each key to the next frame. Once synced, the
//!    lone sim is killed, and started again 5 s later; the child reports, second by second,
//!    its rows, whether they are current, its frame times and key times, until it has
//!    converged and 5 s more have passed.
//!
//! `cargo bench --bench fleet` runs 20 clusters of 50,000 pods (`KSCOPE_FLEET_CLUSTERS`,
//! `KSCOPE_FLEET_PODS` change it). Without `--bench` (as under `cargo test --all-targets`) a
//! smoke run: 3 clusters of 300 pods, nothing asserted about time.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark that cannot set up fails, with its line"
)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

#[path = "fleet/child.rs"]
mod child;

/// The lone sim's context in the merged kubeconfig.
const LONE: &str = "kscope-sim-lone";
/// How long a sim may take to load its clusters, or a child to sync, before the run fails.
const PATIENCE: Duration = Duration::from_secs(900);

/// One line a child prints: its state at `t` seconds since it started the App.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tick {
    pub t: f64,
    pub rows: usize,
    /// Every cluster's first list is in, every one watches, and the rows are at least 99% of
    /// the pods the clusters were made with (churn deletes and makes pods), or the merged
    /// table's cap.
    pub current: bool,
    /// When the first frame with rows was drawn, once it was.
    pub first_rows: Option<f64>,
    /// When the table was first current.
    pub synced: Option<f64>,
    pub rss: u64,
    /// The child's RSS before the App started: the runtime and the binary.
    pub rss_base: u64,
    /// The child's CPU time (user and system, s) when the table was first current.
    pub synced_cpu: Option<f64>,
    pub watch_events: u64,
    /// Since the last tick: each frame's drawing time and each key's time to the next frame
    /// (ms).
    pub draws: Vec<f64>,
    pub keys: Vec<f64>,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--child") {
        let kubeconfig = args
            .get(at + 1)
            .expect("--child KUBECONFIG PODS CONTEXT...");
        let pods = args.get(at + 2).and_then(|p| p.parse().ok()).expect("PODS");
        child::main(Path::new(kubeconfig), pods, &args[at + 3..]);
        return;
    }
    let full = args.iter().any(|a| a == "--bench");
    let number = |name: &str, full_value: usize, smoke: usize| -> usize {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(if full { full_value } else { smoke })
    };
    let clusters = number("KSCOPE_FLEET_CLUSTERS", 20, 3).max(2);
    let pods = number("KSCOPE_FLEET_PODS", 50_000, 300);
    let churn = number("KSCOPE_FLEET_CHURN", 20, 5);
    run(clusters, pods, churn);
}

/// A sim process and where it keeps its state.
struct SimProcess {
    child: Child,
}

impl Drop for SimProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `kscope sim` with `args` and waits for `clusters` ready lines.
fn start_sim(dir: &Path, args: &[String], clusters: usize) -> SimProcess {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kscope"))
        .arg("sim")
        .args(args)
        .env("XDG_STATE_HOME", dir.join("state"))
        .env_remove("KSCOPE_SIM_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kscope sim starts");
    let stdout = child.stdout.take().expect("stdout");
    let started = Instant::now();
    let ready = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .filter(|l| l.starts_with("kscope sim ready at"))
        .take(clusters)
        .count();
    assert_eq!(ready, clusters, "the sim said ready for every cluster");
    assert!(started.elapsed() < PATIENCE, "the sim loaded in time");
    SimProcess { child }
}

/// A free loopback port, for the lone sim to keep across its restart.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// One kubeconfig holding both sims' contexts, the lone sim's renamed to [`LONE`]
/// (JSON, which every YAML reader reads).
fn merge_kubeconfigs(rest: &Path, lone: &Path, out: &Path) -> Vec<String> {
    use kube::config::Kubeconfig;
    let mut merged = Kubeconfig::read_from(rest).expect("the sims' kubeconfig");
    let mut lone = Kubeconfig::read_from(lone).expect("the lone sim's kubeconfig");
    for named in &mut lone.clusters {
        named.name = LONE.into();
    }
    for named in &mut lone.auth_infos {
        named.name = LONE.into();
    }
    for named in &mut lone.contexts {
        named.name = LONE.into();
        if let Some(context) = &mut named.context {
            context.cluster = LONE.into();
            context.user = Some(LONE.into());
        }
    }
    merged.clusters.append(&mut lone.clusters);
    merged.auth_infos.append(&mut lone.auth_infos);
    merged.contexts.append(&mut lone.contexts);
    let contexts = merged.contexts.iter().map(|c| c.name.clone()).collect();
    std::fs::write(out, serde_json::to_vec(&merged).expect("serialises")).expect("writes");
    contexts
}

/// A running child and its reports.
struct Client {
    child: Child,
    lines: std::io::Lines<BufReader<ChildStdout>>,
}

impl Client {
    /// A child on `contexts`, each cluster of `pods` pods.
    fn start(kubeconfig: &Path, pods: usize, contexts: &[String]) -> Self {
        let mut child = Command::new(std::env::current_exe().expect("this binary"))
            .arg("--child")
            .arg(kubeconfig)
            .arg(pods.to_string())
            .args(contexts)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the child starts");
        let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        Self { child, lines }
    }

    fn next(&mut self) -> Tick {
        let line = self
            .lines
            .next()
            .expect("the child reports until told to stop")
            .expect("reads");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("bad child line {line:?}: {e}"))
    }

    /// Ticks until `done` holds for one, every tick kept.
    fn until(&mut self, ticks: &mut Vec<Tick>, done: impl Fn(&Tick) -> bool) {
        loop {
            let tick = self.next();
            assert!(
                tick.t < PATIENCE.as_secs_f64(),
                "the child gave up: {tick:?}"
            );
            let stop = done(&tick);
            ticks.push(tick);
            if stop {
                return;
            }
        }
    }

    fn stop(mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

fn run(clusters: usize, pods: usize, churn: usize) {
    let dir = std::env::temp_dir().join(format!("kscope-fleet-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let sized = |extra: &[&str]| -> Vec<String> {
        let mut args = vec![
            "--pods".to_string(),
            pods.to_string(),
            "--nodes".into(),
            (pods / 300 + 1).to_string(),
            "--churn".into(),
            churn.to_string(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    let started = Instant::now();
    let rest_config = dir.join("rest.kubeconfig");
    let rest = start_sim(
        &dir,
        &sized(&[
            "--clusters",
            &(clusters - 1).to_string(),
            "--kubeconfig-out",
            rest_config.to_str().expect("utf-8"),
        ]),
        clusters - 1,
    );
    let lone_config = dir.join("lone.kubeconfig");
    let listen = format!("127.0.0.1:{}", free_port());
    let lone_args = sized(&[
        "--seed",
        "1000",
        "--listen",
        &listen,
        "--state-dir",
        dir.join("lone").to_str().expect("utf-8"),
        "--kubeconfig-out",
        lone_config.to_str().expect("utf-8"),
    ]);
    let lone = start_sim(&dir, &lone_args, 1);
    let kubeconfig = dir.join("kubeconfig");
    let contexts = merge_kubeconfigs(&rest_config, &lone_config, &kubeconfig);
    println!(
        "fleet: {clusters} clusters x {pods} pods loaded in {:.1} s, churn {churn}/s each",
        started.elapsed().as_secs_f64()
    );

    let sims_cpu = || cpu(&rest.child.id().to_string()) + cpu(&lone.child.id().to_string());
    let mut alone = Vec::new();
    let mut alone_sims_cpu = 0.0;
    for context in &contexts {
        let before = sims_cpu();
        let mut client = Client::start(&kubeconfig, pods, std::slice::from_ref(context));
        let mut ticks = Vec::new();
        client.until(&mut ticks, |t| t.synced.is_some());
        alone_sims_cpu += sims_cpu() - before;
        client.stop();
        let last = ticks.pop().expect("a tick");
        say(&format!("alone {context}"), &last);
        alone.push(last);
    }

    let before = sims_cpu();
    let mut client = Client::start(&kubeconfig, pods, &contexts);
    let mut syncing = Vec::new();
    client.until(&mut syncing, |t| t.synced.is_some());
    let together_sims_cpu = sims_cpu() - before;
    let synced = syncing.last().cloned().expect("a tick");
    say("together", &synced);
    let mut steady = Vec::new();
    client.until(&mut steady, |t| t.t > synced.t + 5.0);
    drop(lone);
    let mut down = Vec::new();
    client.until(&mut down, |t| t.t > synced.t + 10.0);
    let lone = start_sim(&dir, &lone_args, 1);
    // The ticks the child wrote while the sim loaded wait in the pipe: the restart is at
    // the first tick written after it.
    let restarted = Instant::now();
    client.until(&mut down, |_| {
        restarted.elapsed() > Duration::from_millis(900)
    });
    let restart_t = down.last().map_or(f64::NAN, |t| t.t);
    let mut back = Vec::new();
    client.until(&mut back, |t| t.current);
    let converged = back.last().map_or(f64::NAN, |t| t.t - restart_t);
    let until = back.last().map_or(f64::NAN, |t| t.t + 5.0);
    client.until(&mut back, |t| t.t > until);
    client.stop();
    drop((lone, rest));
    let _ = std::fs::remove_dir_all(&dir);

    let report = Report {
        clusters,
        pods,
        churn,
        alone,
        synced,
        syncing,
        steady,
        down,
        back,
        converged,
        sims_cpu: (alone_sims_cpu, together_sims_cpu),
    };
    println!("{}", report.render());
}

/// Prints how a child synced, as soon as it did.
fn say(what: &str, synced: &Tick) {
    println!(
        "fleet: {what}: first rows {:.2} s, synced {:.2} s, {} rows, RSS +{:.0} MiB",
        synced.first_rows.unwrap_or(f64::NAN),
        synced.synced.unwrap_or(f64::NAN),
        synced.rows,
        mib(synced.rss.saturating_sub(synced.rss_base)),
    );
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1 << 20)
}

struct Report {
    clusters: usize,
    pods: usize,
    churn: usize,
    alone: Vec<Tick>,
    synced: Tick,
    syncing: Vec<Tick>,
    steady: Vec<Tick>,
    down: Vec<Tick>,
    back: Vec<Tick>,
    converged: f64,
    /// The sims' CPU time (s) while the children synced: every cluster alone, summed; and
    /// all together. Read as the ticks arrive, so each span is a tick (1 s) long at most.
    sims_cpu: (f64, f64),
}

/// p50, p99 and the maximum of `samples` (ms).
fn spread(samples: impl Iterator<Item = f64>) -> String {
    let mut all: Vec<f64> = samples.collect();
    if all.is_empty() {
        return "none".into();
    }
    all.sort_by(f64::total_cmp);
    let at = |q: f64| all[((all.len() - 1) as f64 * q).round() as usize];
    format!(
        "p50 {:.1} / p99 {:.1} / max {:.1} ms ({})",
        at(0.5),
        at(0.99),
        all[all.len() - 1],
        all.len()
    )
}

/// Watch events per second over `ticks`.
fn event_rate(ticks: &[Tick]) -> f64 {
    match (ticks.first(), ticks.last()) {
        (Some(a), Some(b)) if b.t > a.t => (b.watch_events - a.watch_events) as f64 / (b.t - a.t),
        _ => f64::NAN,
    }
}

impl Report {
    fn render(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let slowest = self
            .alone
            .iter()
            .filter_map(|t| t.synced)
            .fold(0.0, f64::max);
        let alone_rss: u64 = self
            .alone
            .iter()
            .map(|t| t.rss.saturating_sub(t.rss_base))
            .sum();
        let fleet_rss = self.synced.rss.saturating_sub(self.synced.rss_base);
        let _ = writeln!(
            out,
            "{} clusters x {} pods, {} writes/s each; {}",
            self.clusters,
            self.pods,
            self.churn,
            machine()
        );
        let _ = writeln!(out, "| | measured |\n|---|---|");
        let mut row = |what: &str, value: String| {
            let _ = writeln!(out, "| {what} | {value} |");
        };
        row(
            "first rows, all clusters at once",
            format!("{:.2} s", self.synced.first_rows.unwrap_or(f64::NAN)),
        );
        row(
            "all synced together / slowest alone",
            format!(
                "{:.2} s / {slowest:.2} s ({:.2}x)",
                self.synced.synced.unwrap_or(f64::NAN),
                self.synced.synced.unwrap_or(f64::NAN) / slowest
            ),
        );
        let alone_cpu: f64 = self.alone.iter().filter_map(|t| t.synced_cpu).sum();
        let fleet_cpu = self.synced.synced_cpu.unwrap_or(f64::NAN);
        let per_pod = |seconds: f64, rows: usize| seconds * 1e6 / rows.max(1) as f64;
        let alone_rows: usize = self.alone.iter().map(|t| t.rows).sum();
        row(
            "client CPU to sync together / sum of alone",
            format!(
                "{fleet_cpu:.2} s / {alone_cpu:.2} s ({:.2}x; {:.1} / {:.1} µs a pod)",
                fleet_cpu / alone_cpu,
                per_pod(fleet_cpu, self.synced.rows),
                per_pod(alone_cpu, alone_rows)
            ),
        );
        row(
            "sims' CPU while syncing together / sum of alone",
            format!("{:.2} s / {:.2} s", self.sims_cpu.1, self.sims_cpu.0),
        );
        row(
            "rows together / sum of alone",
            format!("{} / {alone_rows}", self.synced.rows),
        );
        row(
            "RSS growth together / sum of alone",
            format!(
                "{:.0} MiB / {:.0} MiB ({:.2}x)",
                mib(fleet_rss),
                mib(alone_rss),
                fleet_rss as f64 / alone_rss.max(1) as f64
            ),
        );
        row(
            "bytes per pod together",
            format!("{:.0} B", fleet_rss as f64 / self.synced.rows.max(1) as f64),
        );
        let phases = [
            ("while syncing", &self.syncing),
            ("synced, steady 5 s", &self.steady),
            ("one cluster killed, until it serves again", &self.down),
            ("restarted until converged, and 5 s", &self.back),
        ];
        for (phase, ticks) in phases {
            row(
                &format!("keystroke to frame, {phase}"),
                spread(ticks.iter().flat_map(|t| t.keys.iter().copied())),
            );
            row(
                &format!("frame drawing, {phase}"),
                spread(ticks.iter().flat_map(|t| t.draws.iter().copied())),
            );
            row(
                &format!("watch events/s, {phase}"),
                format!("{:.0}", event_rate(ticks)),
            );
        }
        row(
            "killed cluster converged after its restart",
            format!("{:.1} s", self.converged),
        );
        out
    }
}

/// Cores, memory and load, for the report.
fn machine() -> String {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    format!(
        "{} cores, load {}",
        std::thread::available_parallelism().map_or(0, usize::from),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    )
}

/// Writes one tick as a line of JSON to stdout (the child's side).
pub fn emit(tick: &Tick) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer(&mut out, tick);
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

/// CPU time (user and system, s) of process `pid` ("self" for this one), from /proc: its
/// 14th and 15th fields, in USER_HZ, which Linux fixes at 100 for /proc.
pub fn cpu(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The command name (field 2) may hold spaces: count from after its closing parenthesis.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks = |at: usize| {
        fields
            .get(at)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (ticks(11) + ticks(12)) as f64 / 100.0
}

/// This process's resident set, from /proc.
pub fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        })
        .map_or(0, |kib| kib * 1024)
}
