//! TUI frame cost (issue #6): the App on 150,000 simulated pods with 1,000 changes per second,
//! drawn into a 200x50 `CrosstermBackend` over `io::sink()` (so ratatui's diff and the escape
//! encoding count), as the event loop would: woken by row changes and tap entries, at most 60
//! frames a second. Measures the UI thread's CPU per frame (thread CPU clock) and its wall
//! time, the process CPU per second split by runtime (the sim and the client run on separate
//! Tokio runtimes with named threads), and keystroke-to-updated-screen latency for the keys
//! issue #6 names.
//!
//! `cargo bench --bench tui` runs it in full (`KSCOPE_TUI_PODS` changes the size). Without
//! `--bench` (as under `cargo test --all-targets`) it is a smoke run: 2,000 pods, 100 changes a
//! second, one second of frames, nothing asserted about time.

use std::collections::BTreeMap;
use std::io::Sink;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use kscope::client::cluster::{Cluster, NamespaceScope};
use kscope::config::Config;
use kscope::informers::tap::TapEntry;
use kscope::resources::ResourceKind;
use kscope::sim::{Sim, SimConfig, SimHandle};
use kscope::ui::app::App;
use kscope::ui::detail::DetailController;
use kscope::ui::keymap::map_key;
use kscope::ui::nav::ViewSpec;
use kscope::ui::table::TableStarter;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};
use tokio::sync::broadcast;

/// The event loop's frame interval (60 fps).
const FRAME: Duration = Duration::from_micros(16_667);
const WIDTH: u16 = 200;
const HEIGHT: u16 = 50;
const CHURN: f64 = 1_000.0;
/// The smoke run's churn: unoptimised, the full rate would only make it slow.
const SMOKE_CHURN: f64 = 100.0;
/// As `kscope::ui::run` sizes it.
const TAP_CAPACITY: usize = 4096;
/// Longest wait for an asynchronous result (a fuzzy search, a relist) before giving up on it.
const PATIENCE: Duration = Duration::from_secs(120);

type Term = Terminal<CrosstermBackend<Sink>>;

#[allow(unsafe_code)] // libc: the thread CPU clock has no safe std API.
fn clock(id: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock ids used are supported on Linux.
    let rc = unsafe { libc::clock_gettime(id, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// CPU time of the calling thread: the UI thread's, as the loop runs on the main thread.
fn thread_cpu() -> Duration {
    clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn process_cpu() -> Duration {
    clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// CPU time of this process's threads, summed by name: `sim` and `client` are the two
/// runtimes' threads (workers and blocking pool), `ui` the main thread.
#[allow(unsafe_code)] // libc: sysconf for the clock tick.
fn cpu_by_thread_group() -> BTreeMap<String, Duration> {
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    let main = std::process::id().to_string();
    let mut groups = BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return groups;
    };
    for task in tasks.flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let name = &stat[open + 1..close];
        // Fields after the name start at field 3 (state); utime and stime are 14 and 15.
        let fields: Vec<&str> = stat[close + 2..].split(' ').collect();
        let parse = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
        let (Some(utime), Some(stime)) = (parse(11), parse(12)) else {
            continue;
        };
        let group = if task.file_name().to_string_lossy() == main {
            "ui"
        } else if name.starts_with("sim") {
            "sim"
        } else if name.starts_with("client") {
            "client"
        } else {
            "other"
        };
        *groups.entry(group.to_string()).or_insert(Duration::ZERO) +=
            Duration::from_millis((utime + stime) * 1000 / ticks);
    }
    groups
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Mean, p50, p99 and max of some durations, in ms.
fn stats(samples: &[Duration]) -> String {
    if samples.is_empty() {
        return "no samples".into();
    }
    let mut sorted = samples.to_vec();
    sorted.sort();
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
    let mean = sorted.iter().sum::<Duration>() / sorted.len() as u32;
    format!(
        "mean {:.2} / p50 {:.2} / p99 {:.2} / max {:.2} ms",
        ms(mean),
        ms(at(0.5)),
        ms(at(0.99)),
        ms(sorted[sorted.len() - 1])
    )
}

/// One keystroke's cost until its updated screen was drawn.
struct Latency {
    what: String,
    wall: Duration,
    cpu: Duration,
    rows: usize,
}

/// A stopwatch on both clocks.
struct Watch {
    wall: Instant,
    cpu: Duration,
}

impl Watch {
    fn start() -> Self {
        Self {
            wall: Instant::now(),
            cpu: thread_cpu(),
        }
    }

    fn stop(&self, what: impl Into<String>, rows: usize) -> Latency {
        Latency {
            what: what.into(),
            wall: self.wall.elapsed(),
            cpu: thread_cpu() - self.cpu,
            rows,
        }
    }
}

/// What the frame phase measured.
struct Frames {
    seconds: f64,
    draw_cpu: Vec<Duration>,
    draw_wall: Vec<Duration>,
    /// The UI thread's CPU over the phase, wakes and tap intake included.
    ui_cpu: Duration,
    process_cpu: Duration,
    groups: BTreeMap<String, Duration>,
    pod_events: u64,
    sim_writes: u64,
}

struct Bench {
    app: App,
    terminal: Term,
    taps: broadcast::Receiver<Arc<TapEntry>>,
    /// Whether a frame is due (something changed since the last one).
    dirty: bool,
    last_draw: Option<Instant>,
    /// While measuring stalls: the wall time of every step the UI thread took (a key
    /// applied, a frame drawn, tap entries taken in).
    stalls: Option<Vec<Duration>>,
}

impl Bench {
    /// One frame, as the event loop draws it.
    fn draw(&mut self) {
        let started = Instant::now();
        self.app
            .draw(&mut self.terminal)
            .expect("draws into a sink");
        if let Some(stalls) = &mut self.stalls {
            stalls.push(started.elapsed());
        }
        self.dirty = false;
        self.last_draw = Some(Instant::now());
    }

    fn rows(&mut self) -> usize {
        self.app.window(1).total
    }

    /// Runs the event loop's wake-and-draw cycle for `length` (no input), recording each
    /// frame's draw when `frames` is given.
    async fn run_loop(&mut self, length: Duration, mut frames: Option<&mut Frames>) {
        let mut version = self.app.table().version();
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        let end = Instant::now() + length;
        while Instant::now() < end {
            let next_frame = self.last_draw.map_or_else(Instant::now, |t| t + FRAME);
            if self.dirty && Instant::now() >= next_frame {
                let watch = Watch::start();
                self.draw();
                if let Some(frames) = frames.as_deref_mut() {
                    frames.draw_cpu.push(thread_cpu() - watch.cpu);
                    frames.draw_wall.push(watch.wall.elapsed());
                }
                continue;
            }
            tokio::select! {
                changed = version.changed() => {
                    if changed.is_err() {
                        version = self.app.table().version();
                    }
                    self.dirty = true;
                }
                entry = self.taps.recv() => {
                    let started = Instant::now();
                    self.app.take_taps(entry, &mut self.taps);
                    if let Some(stalls) = &mut self.stalls {
                        stalls.push(started.elapsed());
                    }
                    self.dirty = true;
                }
                _ = tick.tick() => self.dirty = true,
                _ = tokio::time::sleep_until(end.into()) => {}
                _ = tokio::time::sleep_until(next_frame.into()), if self.dirty => {}
            }
        }
    }

    fn key(&mut self, code: KeyCode) {
        self.dirty = true;
        let modifiers = if matches!(code, KeyCode::Char(c) if c.is_ascii_uppercase()) {
            KeyModifiers::SHIFT
        } else {
            KeyModifiers::NONE
        };
        let started = Instant::now();
        let state = self.app.state();
        if let Some(action) = map_key(
            &state.keymap,
            state.mode,
            state.focus,
            KeyEvent::new(code, modifiers),
        ) {
            self.app.apply(action);
        }
        if let Some(stalls) = &mut self.stalls {
            stalls.push(started.elapsed());
        }
    }

    /// A key whose result is ready once applied: apply, then draw.
    fn press(&mut self, code: KeyCode, what: &str) -> Latency {
        let watch = Watch::start();
        self.key(code);
        self.draw();
        let rows = self.rows();
        watch.stop(what, rows)
    }

    /// Types `text` one key at a time, each applied and drawn.
    fn type_text(&mut self, text: &str, what: &str) -> Vec<Latency> {
        text.chars()
            .map(|c| self.press(KeyCode::Char(c), &format!("{what} '{c}'")))
            .collect()
    }

    /// A key whose rows come later: apply, draw, then wait for `ready` and draw again.
    async fn press_until(
        &mut self,
        code: KeyCode,
        what: &str,
        ready: impl Fn(&mut Self) -> bool,
    ) -> Latency {
        let watch = Watch::start();
        self.key(code);
        self.draw();
        let deadline = Instant::now() + PATIENCE;
        // As the event loop: woken by a row change, a frame at most every FRAME.
        while !ready(self) {
            if Instant::now() > deadline {
                return watch.stop(format!("{what} (gave up)"), self.rows());
            }
            let mut version = self.app.table().version();
            tokio::select! {
                _ = version.changed() => {}
                _ = tokio::time::sleep(FRAME) => {}
            }
            let next_frame = self.last_draw.map_or_else(Instant::now, |t| t + FRAME);
            tokio::time::sleep_until(next_frame.into()).await;
            if ready(self) {
                break;
            }
            self.draw();
        }
        self.draw();
        let rows = self.rows();
        watch.stop(what, rows)
    }

    /// Types free text one key at a time; each key's time runs until the view shows the
    /// fuzzy result for the text so far.
    async fn type_fuzzy(&mut self, text: &str) -> Vec<Latency> {
        let mut latencies = Vec::new();
        for (i, c) in text.char_indices() {
            let typed = text[..i + c.len_utf8()].to_string();
            latencies.push(
                self.press_until(KeyCode::Char(c), &format!("fuzzy '{typed}'"), |b| {
                    b.app.table().text() == typed
                })
                .await,
            );
        }
        latencies
    }

    /// `:name` Enter: the time until the first frame showing rows of the new kind.
    async fn switch(&mut self, name: &str, kind: &str) -> (Latency, Duration) {
        self.key(KeyCode::Char(':'));
        for c in name.chars() {
            self.key(KeyCode::Char(c));
        }
        let watch = Watch::start();
        let latency = self
            .press_until(KeyCode::Enter, &format!(":{name} Enter"), |b| {
                b.app.header().resource == kind && b.rows() > 0
            })
            .await;
        // The event loop follows the new table's tap from the switch on; so does this one.
        self.taps = self.app.table().tap().subscribe();
        let deadline = Instant::now() + PATIENCE;
        loop {
            let status = self.app.table().status().borrow().clone();
            self.app.update_sync(&status);
            if status.listed || Instant::now() > deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        (latency, watch.wall.elapsed())
    }
}

async fn bench(sim: &SimHandle, config: kube::Config, pods: usize, measure: Duration, full: bool) {
    let cluster = Cluster::from_config(config, "tui-bench".into()).expect("cluster");
    let indexes = Config::built_in().expect("built-in config").indexes;
    let detail = DetailController::new(cluster.client.clone(), None);
    let started = Instant::now();
    let app = App::new(
        TableStarter::new(cluster, indexes, TAP_CAPACITY),
        ViewSpec::new(ResourceKind::Pods, NamespaceScope::All),
        true,
        detail,
    )
    .expect("app");
    let taps = app.table().tap().subscribe();
    let terminal = Terminal::with_options(
        CrosstermBackend::new(std::io::sink()),
        TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, WIDTH, HEIGHT)),
        },
    )
    .expect("terminal");
    let mut b = Bench {
        app,
        terminal,
        taps,
        dirty: true,
        last_draw: None,
        stalls: None,
    };
    loop {
        let status = b.app.table().status().borrow().clone();
        b.app.update_sync(&status);
        if status.listed && b.rows() >= pods * 9 / 10 {
            break;
        }
        assert!(started.elapsed() < PATIENCE, "pods never synced");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let sync = started.elapsed();
    // Settle until the watch delivers: a list slower than the sim's history (10,000 events,
    // 10 s of churn) gets 410 Expired and relists before it watches.
    let settle = Duration::from_secs(2).min(measure);
    loop {
        let before = b.app.table().watch_events();
        b.run_loop(settle, None).await;
        if b.app.table().watch_events() > before {
            break;
        }
        assert!(started.elapsed() < PATIENCE, "the watch never delivered");
    }

    // Frames under churn.
    let mut frames = Frames {
        seconds: 0.0,
        draw_cpu: Vec::new(),
        draw_wall: Vec::new(),
        ui_cpu: Duration::ZERO,
        process_cpu: Duration::ZERO,
        groups: BTreeMap::new(),
        pod_events: 0,
        sim_writes: 0,
    };
    let events = b.app.table().watch_events();
    let writes = sim.position().rv;
    let (process, groups, ui, wall) = (
        process_cpu(),
        cpu_by_thread_group(),
        thread_cpu(),
        Instant::now(),
    );
    b.run_loop(measure, Some(&mut frames)).await;
    frames.seconds = wall.elapsed().as_secs_f64();
    frames.ui_cpu = thread_cpu() - ui;
    frames.process_cpu = process_cpu() - process;
    frames.groups = cpu_by_thread_group()
        .into_iter()
        .map(|(g, cpu)| {
            let before = groups.get(&g).copied().unwrap_or_default();
            (g, cpu.saturating_sub(before))
        })
        .collect();
    frames.pod_events = b.app.table().watch_events() - events;
    frames.sim_writes = sim.position().rv - writes;
    let load = load_average();

    // Stalls: re-sorting and typing fuzzy text under churn, frames drawn as they come.
    let fuzzy_text = {
        let window = b.app.window(usize::from(HEIGHT));
        let key = window
            .rows
            .get(window.rows.len() / 3)
            .map(|r| r.key.to_string())
            .expect("rows on screen");
        let name = key.rsplit('/').next().unwrap_or_default().to_string();
        name.chars()
            .rev()
            .take(5)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<String>()
    };
    b.stalls = Some(Vec::new());
    let stall_end = Instant::now() + measure;
    let mut rounds = 0;
    while Instant::now() < stall_end {
        b.key(KeyCode::Char('s'));
        b.run_loop(Duration::from_millis(100), None).await;
        b.key(KeyCode::Char('/'));
        for c in fuzzy_text.chars() {
            b.key(KeyCode::Char(c));
            b.run_loop(Duration::from_millis(40), None).await;
        }
        b.key(KeyCode::Esc);
        b.run_loop(Duration::from_millis(100), None).await;
        rounds += 1;
    }
    let stalls = b.stalls.take().unwrap_or_default();

    // Keystrokes, each after a moment of ordinary frames.
    let pause = Duration::from_millis(if full { 300 } else { 20 });
    let mut keys = Vec::new();
    for (code, what) in [
        (KeyCode::Char('j'), "j (down)"),
        (KeyCode::Char('G'), "G (last row)"),
        (KeyCode::Char('g'), "g (first row)"),
        (KeyCode::PageDown, "PgDn"),
        (KeyCode::Char('s'), "s (sort by next column)"),
        (KeyCode::Char('s'), "s (sort by next column)"),
    ] {
        b.run_loop(pause, None).await;
        keys.push(b.press(code, what));
    }
    let app_value = {
        let values = b.app.table().value_counts("app");
        values
            .get(values.len() / 2)
            .map(|v| v.value.to_string())
            .expect("pods have app labels")
    };
    b.run_loop(pause, None).await;
    keys.extend(b.type_text(&format!("/app={app_value}"), "/app="));
    b.run_loop(pause, None).await;
    // Back to every row: no index view, and no text left from the chars before `=`.
    keys.push(
        b.press_until(KeyCode::Esc, "Esc (clear app= filter)", |b| {
            b.app.table().text().is_empty()
        })
        .await,
    );
    // Free text: a piece of the name of a pod on screen, typed char by char.
    let fuzzy = {
        let window = b.app.window(usize::from(HEIGHT));
        let key = window
            .rows
            .get(window.rows.len() / 2)
            .map(|r| r.key.to_string())
            .expect("rows on screen");
        let name = key.rsplit('/').next().unwrap_or_default();
        name.chars()
            .rev()
            .take(6)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<String>()
    };
    b.run_loop(pause, None).await;
    keys.push(b.press(KeyCode::Char('/'), "/ (open filter)"));
    keys.extend(b.type_fuzzy(&fuzzy).await);
    b.run_loop(pause, None).await;
    keys.push(
        b.press_until(KeyCode::Esc, "Esc (clear fuzzy filter)", |b| {
            b.app.table().text().is_empty()
        })
        .await,
    );
    b.run_loop(pause, None).await;
    let watch = Watch::start();
    b.key(KeyCode::Char('y'));
    b.draw();
    if b.app.finish_fetch().await {
        b.draw();
    }
    keys.push(watch.stop("y (detail YAML shown)", b.rows()));
    b.run_loop(pause, None).await;
    keys.push(b.press(KeyCode::Esc, "Esc (close detail)"));
    b.run_loop(pause, None).await;
    let (nodes, nodes_listed) = b.switch("nodes", "nodes").await;
    b.run_loop(pause, None).await;
    let (pods_back, pods_listed) = b.switch("pods", "pods").await;

    println!(
        "stalls: {rounds} rounds of s, /{fuzzy_text} typed, Esc; {} UI-thread steps: {}",
        stalls.len(),
        stats(&stalls)
    );
    print_report(
        pods,
        sync,
        &frames,
        &load,
        &keys,
        [(nodes, nodes_listed), (pods_back, pods_listed)],
    );
}

fn print_report(
    pods: usize,
    sync: Duration,
    frames: &Frames,
    load: &str,
    keys: &[Latency],
    switches: [(Latency, Duration); 2],
) {
    let n = frames.draw_cpu.len().max(1);
    println!(
        "tui: {pods} pods, {WIDTH}x{HEIGHT}, panels on; synced in {:.1} s",
        sync.as_secs_f64()
    );
    println!(
        "frames: {} in {:.1} s ({:.1} fps), load average {load}",
        frames.draw_cpu.len(),
        frames.seconds,
        frames.draw_cpu.len() as f64 / frames.seconds
    );
    println!("  draw CPU (UI thread): {}", stats(&frames.draw_cpu));
    println!("  draw wall:            {}", stats(&frames.draw_wall));
    println!(
        "  UI thread CPU incl. wakes and tap intake: {:.2} ms per frame, {:.0} ms/s",
        ms(frames.ui_cpu) / n as f64,
        ms(frames.ui_cpu) / frames.seconds
    );
    let groups: Vec<String> = frames
        .groups
        .iter()
        .map(|(g, cpu)| format!("{g} {:.0}", ms(*cpu) / frames.seconds))
        .collect();
    println!(
        "  process CPU {:.0} ms/s (by thread: {} ms/s)",
        ms(frames.process_cpu) / frames.seconds,
        groups.join(", ")
    );
    println!(
        "  churn delivered: {:.0} pod watch events/s at the informer, {:.0} writes/s at the sim",
        frames.pod_events as f64 / frames.seconds,
        frames.sim_writes as f64 / frames.seconds
    );
    println!("| keystroke | wall ms | UI CPU ms | rows |");
    println!("|---|---:|---:|---:|");
    for k in keys.iter().chain(switches.iter().map(|(k, _)| k)) {
        println!(
            "| {} | {:.2} | {:.2} | {} |",
            k.what,
            ms(k.wall),
            ms(k.cpu),
            k.rows
        );
    }
    for (k, listed) in &switches {
        println!("{}: listed after {:.0} ms", k.what, ms(*listed));
    }
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let pods: usize = std::env::var("KSCOPE_TUI_PODS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if full { 150_000 } else { 2_000 });
    let measure = Duration::from_secs(if full { 10 } else { 1 });
    let churn = if full { CHURN } else { SMOKE_CHURN };
    let runtime = |name: &str| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name(name)
            .enable_all()
            .build()
            .expect("runtime")
    };
    // Two runtimes, so each thread's CPU can be told apart: the sim's and the client's.
    let sim_runtime = runtime("sim");
    let client_runtime = runtime("client");
    let started = Instant::now();
    let sim = sim_runtime
        .block_on(Sim::start(
            SimConfig::with_size(pods, pods / 300 + 1, 100).churn(churn, None),
        ))
        .expect("sim");
    println!(
        "sim: {pods} pods loaded in {:.1} s, churn {churn}/s",
        started.elapsed().as_secs_f64()
    );
    let config = sim_runtime.block_on(sim.kube_config()).expect("config");
    client_runtime.block_on(bench(&sim, config, pods, measure, full));
    sim_runtime.block_on(sim.shutdown());
}
