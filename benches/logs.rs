//! Log view cost (issue #23): following a container that writes 50,000 lines a second, and
//! searching a million kept lines.
//!
//! Follow: the sim's `--noisy-logs` app writes 50,000 lines a second; the App opens its pod's
//! log with `l` and its own readers fetch it over HTTP. This thread then does what the event
//! loop does with the log view — takes each batch the readers hand over ([`App::next_logs`])
//! and draws a 200x50 frame into a `CrosstermBackend` over `io::sink()` at most 60 times a
//! second ([`App::draw`], the table and header included) — and reads its own CPU clock around
//! each. The sim and the readers run on two other runtimes' threads. Reports the UI thread's
//! CPU per frame (draw, and draw plus the batches taken since the last frame), the lines per
//! second taken, and the resident set size over the run (the ring holds 100,000 lines).
//!
//! Search: a [`LogView`] holding 1,000,000 lines like the sim's (access, JSON and klog
//! lines), searched for a phrase in either case, an exact phrase and a phrase that matches
//! nothing; then n from the first line to a match near the end.
//!
//! `cargo bench --bench logs` runs it in full; without `--bench` (as under `cargo test
//! --all-targets`) it is a smoke run: 5,000 lines a second for a second, 20,000 lines searched.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark that cannot set up fails, with its line"
)]

use std::time::{Duration, Instant};

use kscope_client::cluster::{Cluster, NamespaceScope};
use kscope_client::logs::LogLine;
use kscope_config::{Config, LogSettings};
use kscope_resources::ResourceKind;
use kscope_sim::{NoisyLogs, Sim, SimConfig};
use kscope_ui::action::Action;
use kscope_ui::app::App;
use kscope_ui::detail::DetailController;
use kscope_ui::logs::view::LogView;
use kscope_ui::nav::ViewSpec;
use kscope_ui::table::TableStarter;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};
use serde_json::Value;

#[path = "common/cpu.rs"]
mod cpu;
use cpu::{process_cpu, thread_cpu};

const WIDTH: u16 = 200;
const HEIGHT: u16 = 50;
const FRAME: Duration = Duration::from_micros(16_667);
const PATIENCE: Duration = Duration::from_secs(60);

/// Resident set size in MiB, from /proc/self/statm (pages of 4 KiB).
fn rss_mib() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0.0);
    pages * 4096.0 / (1 << 20) as f64
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let at = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[at]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A running single-container pod that never restarted: (namespace, name, app label).
fn quiet_pod(pods: &Value) -> (String, String, String) {
    let pod = pods["items"]
        .as_array()
        .and_then(|items| {
            items.iter().find(|p| {
                let statuses = p["status"]["containerStatuses"].as_array();
                p["spec"]["containers"].as_array().map(Vec::len) == Some(1)
                    && p["metadata"]["labels"]["app"].is_string()
                    && statuses.is_some_and(|ss| {
                        ss.iter().all(|s| {
                            s["state"]["running"].is_object()
                                && s["restartCount"].as_u64() == Some(0)
                        })
                    })
            })
        })
        .expect("a running single-container pod");
    let text = |v: &Value| v.as_str().expect("string").to_string();
    (
        text(&pod["metadata"]["namespace"]),
        text(&pod["metadata"]["name"]),
        text(&pod["metadata"]["labels"]["app"]),
    )
}

async fn list_pods(cluster: &Cluster) -> Value {
    let request = http::Request::get("/api/v1/pods")
        .body(Vec::new())
        .expect("request");
    let text = cluster.client.request_text(request).await.expect("pods");
    serde_json::from_str(&text).expect("JSON")
}

struct Follow {
    frames: usize,
    draw: Vec<Duration>,
    /// All the UI thread's CPU (batches taken and frames drawn) over the frames drawn.
    per_frame: Duration,
    /// The UI thread's CPU over wall time.
    cpu_share: f64,
    lines_per_second: f64,
    rss: Vec<f64>,
    kept: usize,
}

async fn follow(cluster: Cluster, ns: &str, pod: &str, measure: Duration) -> Follow {
    let indexes = Config::built_in().expect("config").indexes;
    let detail = DetailController::new(cluster.client.clone(), None);
    let view = ViewSpec::new(ResourceKind::Pods, NamespaceScope::One(ns.to_string()));
    let mut app = App::new(
        TableStarter::new(cluster, indexes, 4096),
        view,
        false,
        detail,
    )
    .expect("app")
    .with_log_settings(LogSettings::default());
    app.apply(Action::OpenFilter);
    for c in pod.chars() {
        app.apply(Action::FilterChar(c));
    }
    app.apply(Action::FilterAccept);
    let deadline = Instant::now() + PATIENCE;
    while !app
        .table()
        .selected()
        .is_some_and(|k| k.ends_with(&format!("/{pod}")))
    {
        app.window(20);
        assert!(Instant::now() < deadline, "{pod} never listed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    app.apply(Action::OpenLogs);
    let backend = CrosstermBackend::new(std::io::sink());
    let mut terminal = Terminal::with_options(
        backend,
        TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, WIDTH, HEIGHT)),
        },
    )
    .expect("terminal");
    // Until the ring is full: the steady state, where every line taken drops one.
    let capacity = LogSettings::default().capacity;
    let kept = |app: &App| app.state().logs.as_ref().map_or(0, |v| v.ring.len());
    while kept(&app) < capacity.min(20_000) {
        assert!(
            tokio::time::timeout_at(deadline.into(), app.next_logs())
                .await
                .is_ok_and(|more| more),
            "no lines: {:?}",
            app.state().logs.as_ref().map(|v| (&v.notice, &v.sources))
        );
    }
    let taken = |app: &App| app.state().logs.as_ref().map_or(0, |v| v.ring.end());
    let (start, first_taken) = (Instant::now(), taken(&app));
    let (mut draw, mut rss) = (Vec::new(), Vec::new());
    let mut next_frame = Instant::now();
    let mut next_sample = Instant::now();
    let cpu_at_start = thread_cpu();
    while start.elapsed() < measure {
        tokio::select! {
            more = app.next_logs() => assert!(more, "the readers stopped"),
            () = tokio::time::sleep_until(next_frame.into()) => {
                let before = thread_cpu();
                app.draw(&mut terminal).expect("draws");
                draw.push(thread_cpu() - before);
                next_frame = Instant::now() + FRAME;
                if Instant::now() >= next_sample {
                    rss.push(rss_mib());
                    next_sample += Duration::from_secs(1);
                }
            }
        }
    }
    let cpu = thread_cpu() - cpu_at_start;
    let seconds = start.elapsed().as_secs_f64();
    let lines_per_second = (taken(&app) - first_taken) as f64 / seconds;
    draw.sort();
    Follow {
        frames: draw.len(),
        per_frame: cpu / u32::try_from(draw.len().max(1)).unwrap_or(u32::MAX),
        cpu_share: cpu.as_secs_f64() / seconds,
        draw,
        lines_per_second,
        rss,
        kept: kept(&app),
    }
}

/// `n` lines like the sim's: access, JSON and klog, about 130 bytes each.
fn lines(n: usize) -> Vec<LogLine> {
    (0..n)
        .map(|i| {
            let text = match i % 3 {
                0 => format!(
                    "10.64.{}.{} - - [01/Dec/2026:16:00:{:02} +0000] \"GET /api/v1/items/{i} HTTP/1.1\" 200 {} \"-\" \"Go-http-client/1.1\"",
                    i % 256,
                    i % 254 + 1,
                    i % 60,
                    i % 20_000
                ),
                1 => format!(
                    r#"{{"level":"info","ts":"2026-12-01T16:00:00Z","logger":"http","msg":"request handled","method":"POST","path":"/api/v1/orders","status":{},"duration_ms":{}}}"#,
                    if i % 97 == 0 { 500 } else { 200 },
                    i % 250
                ),
                _ => format!(
                    "I1201 16:00:00.{:06}       1 controller.go:{}] \"Reconciled\" result=\"ok\" duration=\"{}ms\"",
                    i % 1_000_000,
                    i % 400 + 100,
                    i % 250
                ),
            };
            LogLine {
                time: Some(1_767_225_600_000_000_000 + i as i64 * 20_000),
                text: if i == n - 10 {
                    format!("{text} panic: nil map NEEDLE-AT-THE-END")
                } else {
                    text
                },
                cut: false,
            }
        })
        .collect()
}

struct Search {
    what: &'static str,
    matches: usize,
    median: Duration,
    max: Duration,
    /// CPU of every thread, median.
    cpu: Duration,
}

fn search(kept: usize) -> (Vec<Search>, Duration, f64) {
    let mut view = LogView::new("pod bench/noisy".into(), "bench".into(), kept, 1000);
    let before = rss_mib();
    let all = lines(kept);
    for chunk in all.chunks(4096) {
        view.take(0, chunk.to_vec());
    }
    drop(all);
    let held = rss_mib() - before;
    let mut results = Vec::new();
    for (what, needle) in [
        ("a phrase in either case", "request handled"),
        (
            "an exact phrase (capitals)",
            "\"method\":\"POST\",\"path\":\"/api/v1/orders\",\"status\":500",
        ),
        ("no match", "zzzz-nomatch"),
    ] {
        let (mut times, mut cpus) = (Vec::new(), Vec::new());
        for _ in 0..5 {
            let (t, cpu) = (Instant::now(), process_cpu());
            view.set_search(needle);
            times.push(t.elapsed());
            cpus.push(process_cpu() - cpu);
        }
        times.sort();
        cpus.sort();
        results.push(Search {
            what,
            matches: view.search.matches.len(),
            median: percentile(&times, 0.5),
            max: times[times.len() - 1],
            cpu: percentile(&cpus, 0.5),
        });
    }
    // n from the top to the one match near the end.
    view.set_search("NEEDLE-AT-THE-END");
    view.prepare(45, 158);
    view.handle_key(&Action::Top);
    view.prepare(45, 158);
    let t = Instant::now();
    view.handle_key(&Action::NextMatch);
    let step = t.elapsed();
    assert!(view.search.current.is_some());
    (results, step, held)
}

fn machine() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "an unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load = load
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ");
    format!("{model}, {cores} cores, load average {load}")
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let rate: u32 = if full { 50_000 } else { 5_000 };
    let measure = Duration::from_secs(if full { 10 } else { 1 });
    let kept = if full { 1_000_000 } else { 20_000 };
    let runtime = |name: &str| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name(name)
            .enable_all()
            .build()
            .expect("runtime")
    };
    let sim_runtime = runtime("sim");
    let client_runtime = runtime("client");
    println!("machine: {}", machine());

    // The same seed makes the same cluster: find a quiet pod's app, then make it noisy.
    let sim_config = || SimConfig::with_size(300, 3, 2);
    let probe = sim_runtime.block_on(Sim::start(sim_config())).expect("sim");
    let config = sim_runtime.block_on(probe.kube_config()).expect("config");
    let cluster = client_runtime
        .block_on(async { Cluster::from_config(config, "bench".into()) })
        .expect("cluster");
    let (ns, pod, app) = quiet_pod(&client_runtime.block_on(list_pods(&cluster)));
    sim_runtime.block_on(probe.shutdown());
    let mut noisy = sim_config();
    noisy.noisy_logs = Some(NoisyLogs {
        app: app.clone(),
        lines_per_second: rate,
    });
    let sim = sim_runtime.block_on(Sim::start(noisy)).expect("sim");
    let config = sim_runtime.block_on(sim.kube_config()).expect("config");
    let cluster = client_runtime
        .block_on(async { Cluster::from_config(config, "bench".into()) })
        .expect("cluster");
    let followed = client_runtime.block_on(follow(cluster, &ns, &pod, measure));
    sim_runtime.block_on(sim.shutdown());
    println!(
        "follow: pod {ns}/{pod} (app {app}) writing {rate} lines/s, {:.0} s measured, {} frames of {WIDTH}x{HEIGHT}",
        measure.as_secs_f64(),
        followed.frames
    );
    println!(
        "  lines taken: {:.0}/s; kept at the end: {}",
        followed.lines_per_second, followed.kept
    );
    let draw = &followed.draw;
    println!(
        "  UI thread CPU per frame drawn: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        ms(percentile(draw, 0.5)),
        ms(percentile(draw, 0.99)),
        ms(percentile(draw, 1.0))
    );
    println!(
        "  UI thread CPU per frame, batches taken included: {:.2} ms ({:.0}% of a core)",
        ms(followed.per_frame),
        followed.cpu_share * 100.0
    );
    let rss: Vec<String> = followed.rss.iter().map(|r| format!("{r:.0}")).collect();
    println!("  RSS each second (MiB): {}", rss.join(" "));

    let (results, step, held) = search(kept);
    println!("search: {kept} kept lines ({held:.0} MiB)");
    for r in results {
        println!(
            "  {}: {} matches, median {:.1} ms, max {:.1} ms (CPU of all threads, median: {:.1} ms)",
            r.what,
            r.matches,
            ms(r.median),
            ms(r.max),
            ms(r.cpu)
        );
    }
    println!(
        "  n from the top to a match {kept} lines down: {:.1} ms",
        ms(step)
    );
}
