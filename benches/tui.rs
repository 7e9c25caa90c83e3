//! TUI frame cost (issues #6 and #25): the App on 150,000 simulated pods with 1,000 changes per
//! second, run by its own event loop (`App::run`) with keys sent through a channel as the
//! terminal's events and frames drawn into a 200x50 `CrosstermBackend` over `io::sink()` (so
//! ratatui's diff and the escape encoding count). An `Observer` in the loop times each step
//! on the UI thread (wall and thread CPU clock) and tells the script when a frame shows a
//! keystroke's result. Measures the UI thread's CPU per frame, the process CPU per second
//! split by runtime (the sim and the client run on separate Tokio runtimes with named
//! threads), the longest UI-thread stall while re-sorting and typing fuzzy text, and
//! keystroke-to-drawn latency, the wait for the next frame included.
//!
//! `cargo bench --bench tui` runs it in full (`KSCOPE_TUI_PODS` changes the size) and writes
//! its block into docs/benchmarks.md (`KSCOPE_TUI_NO_DOCS` to skip). Without `--bench` (as
//! under `cargo test --all-targets`) it is a smoke run: 2,000 pods, 100 changes a second, one
//! second of frames, nothing asserted about time.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark that cannot set up fails, with its line"
)]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kscope_client::cluster::{Cluster, NamespaceScope};
use kscope_client::discovery::{Catalog, Discovery};
use kscope_config::Config;
use kscope_index_views::live::SortSpec;
use kscope_resources::ResourceKind;
use kscope_sim::{Sim, SimConfig, SimHandle};
use kscope_ui::app::{App, Observer, Step};
use kscope_ui::detail::DetailController;
use kscope_ui::nav::ViewSpec;
use kscope_ui::table::TableStarter;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};
use tokio::sync::oneshot;

#[path = "common/cpu.rs"]
mod cpu;
use cpu::{process_cpu, thread_cpu};

const WIDTH: u16 = 200;
const HEIGHT: u16 = 50;
const CHURN: f64 = 1_000.0;
/// The smoke run's churn: unoptimised, the full rate would only make it slow.
const SMOKE_CHURN: f64 = 100.0;
/// As `kscope_ui::run` sizes it.
const TAP_CAPACITY: usize = 4096;
/// Longest wait for an asynchronous result (a fuzzy search, a relist) before giving up on it.
const PATIENCE: Duration = Duration::from_secs(120);

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

/// Mean, p50, p99 and max of some durations, as table cells.
fn cells(samples: &[Duration]) -> String {
    if samples.is_empty() {
        return "- | - | - | -".into();
    }
    let mut sorted = samples.to_vec();
    sorted.sort();
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
    let mean = sorted.iter().sum::<Duration>() / sorted.len() as u32;
    format!(
        "{:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms",
        ms(mean),
        ms(at(0.5)),
        ms(at(0.99)),
        ms(sorted[sorted.len() - 1])
    )
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

/// What the observer saw of the loop, shared with the script that types (both run on the UI
/// thread, in one task).
#[derive(Default)]
struct Seen {
    /// The app as of the last frame.
    listed: bool,
    rows: usize,
    watch_events: u64,
    resource: String,
    text: String,
    sort: SortSpec,
    detail_fetched: bool,
    /// An app label's value of middling frequency, and the name of a pod on screen, once
    /// listed: what the script types.
    app_value: String,
    pod_name: String,
    /// While recording: each step's (kind, wall, UI-thread CPU).
    steps: Option<Vec<Timed>>,
    /// The condition a keystroke waits for, when it was sent, and who to tell once a frame
    /// shows it.
    waiting: Option<Waiting>,
}

struct Waiting {
    ready: Box<dyn Fn(&App) -> bool>,
    tell: oneshot::Sender<Instant>,
}

/// One step of the loop on the UI thread: what it was, its wall time, the thread's CPU time
/// in it, and the time the thread spent runnable but waiting for a core (the kernel's
/// schedstat): on a loaded machine a step can take long without waiting on anything of
/// kscope's.
#[derive(Clone, Copy)]
struct Timed {
    step: Step,
    wall: Duration,
    cpu: Duration,
    runnable: Duration,
    /// Times the thread blocked (a lock parked it, a read waited) and major page faults.
    blocked: i64,
    faults: i64,
}

impl Timed {
    /// The wall time not spent waiting for a core: work, and waits on locks or I/O.
    fn own(&self) -> Duration {
        self.wall.saturating_sub(self.runnable)
    }
}

/// The calling thread's time spent runnable but not running, from
/// /proc/thread-self/schedstat (zero where the kernel does not keep it).
fn runqueue_wait() -> Duration {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse().ok())
        .map_or(Duration::ZERO, Duration::from_nanos)
}

/// The calling thread's voluntary context switches and major page faults so far.
#[allow(unsafe_code)] // libc: getrusage has no safe std API.
fn blocks_and_faults() -> (i64, i64) {
    // SAFETY: an all-zero rusage is a valid value, and getrusage only writes into it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable rusage; RUSAGE_THREAD is supported on Linux.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    if rc != 0 {
        return (0, 0);
    }
    (usage.ru_nvcsw, usage.ru_majflt)
}

/// The benchmark's view into the real loop.
struct Watcher {
    seen: Rc<RefCell<Seen>>,
    step_started: Option<(Instant, Duration, Duration, (i64, i64))>,
}

impl Observer for Watcher {
    fn started(&mut self) {
        self.step_started = Some((
            Instant::now(),
            thread_cpu(),
            runqueue_wait(),
            blocks_and_faults(),
        ));
    }

    fn finished(&mut self, step: Step) {
        if let Some((wall, cpu, runnable, (blocked, faults))) = self.step_started.take()
            && let Some(steps) = &mut self.seen.borrow_mut().steps
        {
            steps.push(Timed {
                step,
                wall: wall.elapsed(),
                cpu: thread_cpu() - cpu,
                runnable: runqueue_wait().saturating_sub(runnable),
                blocked: blocks_and_faults().0 - blocked,
                faults: blocks_and_faults().1 - faults,
            });
        }
    }

    fn drawn(&mut self, app: &App) -> bool {
        let mut seen = self.seen.borrow_mut();
        seen.listed = app.header().listed;
        seen.rows = app.rows();
        seen.watch_events = app.table().watch_events();
        seen.resource.clone_from(&app.header().resource);
        seen.text = app.table().text();
        seen.sort = app.table().shown_sort();
        seen.detail_fetched = app.detail_fetched();
        if seen.listed && seen.app_value.is_empty() {
            let values = app.table().value_counts("app");
            if let Some(v) = values.get(values.len() / 2) {
                seen.app_value = v.value.to_string();
            }
        }
        if seen.listed
            && seen.pod_name.is_empty()
            && let Some(key) = app.table().selected()
        {
            seen.pod_name = key.rsplit('/').next().unwrap_or_default().to_string();
        }
        if seen.waiting.as_ref().is_some_and(|w| (w.ready)(app))
            && let Some(waiting) = seen.waiting.take()
        {
            // The script may have given up waiting.
            let _ = waiting.tell.send(Instant::now());
        }
        true
    }
}

/// One keystroke's cost until a frame showed its result.
struct Latency {
    what: String,
    wall: Duration,
    cpu: Duration,
    rows: usize,
}

/// Types into the real loop and waits on what its frames show.
struct Script {
    keys: futures::channel::mpsc::UnboundedSender<std::io::Result<Event>>,
    seen: Rc<RefCell<Seen>>,
}

impl Script {
    fn send(&self, code: KeyCode) {
        let modifiers = if matches!(code, KeyCode::Char(c) if c.is_ascii_uppercase()) {
            KeyModifiers::SHIFT
        } else {
            KeyModifiers::NONE
        };
        let event = Event::Key(KeyEvent::new(code, modifiers));
        self.keys.unbounded_send(Ok(event)).expect("the loop runs");
    }

    /// Sends `code` and waits for the first frame for which `ready` holds: the time from the
    /// key to that frame, the wait for the next frame included.
    async fn press(
        &self,
        code: KeyCode,
        what: &str,
        ready: impl Fn(&App) -> bool + 'static,
    ) -> Latency {
        let (tell, told) = oneshot::channel();
        self.seen.borrow_mut().waiting = Some(Waiting {
            ready: Box::new(ready),
            tell,
        });
        let (wall, cpu) = (Instant::now(), thread_cpu());
        self.send(code);
        let what = match tokio::time::timeout(PATIENCE, told).await {
            Ok(Ok(_)) => what.to_string(),
            _ => format!("{what} (gave up)"),
        };
        Latency {
            what,
            wall: wall.elapsed(),
            cpu: thread_cpu() - cpu,
            rows: self.seen.borrow().rows,
        }
    }

    /// A key whose result is whatever the next frame shows.
    async fn next_frame(&self, code: KeyCode, what: &str) -> Latency {
        self.press(code, what, |_| true).await
    }

    async fn until(&self, ready: impl Fn(&Seen) -> bool, what: &str) {
        let deadline = Instant::now() + PATIENCE;
        while !ready(&self.seen.borrow()) {
            assert!(Instant::now() < deadline, "{what}: gave up");
            tokio::time::sleep(Duration::from_millis(5)).await;
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
    load: String,
}

/// The longest steps of the loop while re-sorting and typing fuzzy text.
struct Stalls {
    rounds: usize,
    typed: String,
    steps: Vec<Timed>,
}

async fn script(s: Script, sim: &SimHandle, pods: usize, measure: Duration, full: bool) -> Report {
    let started = Instant::now();
    s.until(
        |seen| seen.listed && seen.rows >= pods * 9 / 10,
        "pods synced",
    )
    .await;
    let sync = started.elapsed();
    // Settle until the watch delivers: a list slower than the sim's history (10,000 events,
    // 10 s of churn) gets 410 Expired and relists before it watches.
    let before = s.seen.borrow().watch_events;
    s.until(|seen| seen.watch_events > before, "the watch delivers")
        .await;

    // Frames under churn, no input.
    let events = s.seen.borrow().watch_events;
    let writes = sim.position().rv;
    let (process, groups, ui, wall) = (
        process_cpu(),
        cpu_by_thread_group(),
        thread_cpu(),
        Instant::now(),
    );
    s.seen.borrow_mut().steps = Some(Vec::new());
    tokio::time::sleep(measure).await;
    let steps = s.seen.borrow_mut().steps.take().unwrap_or_default();
    let seconds = wall.elapsed().as_secs_f64();
    let draws = steps.iter().filter(|t| t.step == Step::Draw);
    let frames = Frames {
        seconds,
        draw_wall: draws.clone().map(|t| t.wall).collect(),
        draw_cpu: draws.map(|t| t.cpu).collect(),
        ui_cpu: thread_cpu() - ui,
        process_cpu: process_cpu() - process,
        groups: cpu_by_thread_group()
            .into_iter()
            .map(|(g, cpu)| {
                let before = groups.get(&g).copied().unwrap_or_default();
                (g, cpu.saturating_sub(before))
            })
            .collect(),
        pod_events: s.seen.borrow().watch_events - events,
        sim_writes: sim.position().rv - writes,
        load: load_average(),
    };

    // Stalls: re-sorting and typing fuzzy text under churn, as fast as a person types.
    let typed = fuzzy_text(&s).await;
    s.seen.borrow_mut().steps = Some(Vec::new());
    let stall_end = Instant::now() + measure;
    let mut rounds = 0;
    while Instant::now() < stall_end {
        s.send(KeyCode::Char('s'));
        tokio::time::sleep(Duration::from_millis(100)).await;
        s.send(KeyCode::Char('/'));
        for c in typed.chars() {
            s.send(KeyCode::Char(c));
            tokio::time::sleep(Duration::from_millis(40)).await;
        }
        s.send(KeyCode::Esc);
        tokio::time::sleep(Duration::from_millis(100)).await;
        rounds += 1;
    }
    let steps = s.seen.borrow_mut().steps.take().unwrap_or_default();
    let stalls = Stalls {
        rounds,
        typed: typed.clone(),
        steps,
    };
    // Back to the first column, ascending, and every row.
    while s.seen.borrow().sort != SortSpec::default() {
        s.send(KeyCode::Char('s'));
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // Keystrokes, each after a moment of ordinary frames.
    let pause = Duration::from_millis(if full { 300 } else { 20 });
    let mut keys = Vec::new();
    for (code, what) in [
        (KeyCode::Char('j'), "j (down)"),
        (KeyCode::Char('G'), "G (last row)"),
        (KeyCode::Char('g'), "g (first row)"),
        (KeyCode::PageDown, "PgDn"),
    ] {
        tokio::time::sleep(pause).await;
        keys.push(s.next_frame(code, what).await);
    }
    for column in 1..=2 {
        tokio::time::sleep(pause).await;
        let want = SortSpec {
            column,
            descending: false,
        };
        keys.push(
            s.press(
                KeyCode::Char('s'),
                "s (rows re-sorted by the next column)",
                move |app| app.table().shown_sort() == want,
            )
            .await,
        );
    }
    tokio::time::sleep(pause).await;
    let app_value = s.seen.borrow().app_value.clone();
    for c in format!("/app={app_value}").chars() {
        keys.push(
            s.next_frame(KeyCode::Char(c), &format!("/app= '{c}'"))
                .await,
        );
    }
    tokio::time::sleep(pause).await;
    keys.push(
        s.press(KeyCode::Esc, "Esc (clear app= filter)", |app| {
            app.table().text().is_empty() && app.current().filter.is_empty()
        })
        .await,
    );
    tokio::time::sleep(pause).await;
    keys.push(s.next_frame(KeyCode::Char('/'), "/ (open filter)").await);
    for (i, c) in typed.char_indices() {
        let text = typed[..i + c.len_utf8()].to_string();
        let what = format!("fuzzy '{text}'");
        keys.push(
            s.press(KeyCode::Char(c), &what, move |app| {
                app.table().text() == text
            })
            .await,
        );
    }
    tokio::time::sleep(pause).await;
    keys.push(
        s.press(KeyCode::Esc, "Esc (clear fuzzy filter)", |app| {
            app.table().text().is_empty()
        })
        .await,
    );
    tokio::time::sleep(pause).await;
    keys.push(
        s.press(
            KeyCode::Char('y'),
            "y (detail YAML shown)",
            App::detail_fetched,
        )
        .await,
    );
    tokio::time::sleep(pause).await;
    keys.push(s.next_frame(KeyCode::Esc, "Esc (close detail)").await);
    let mut switches = Vec::new();
    for (name, kind) in [("nodes", "nodes"), ("pods", "pods"), ("all -A", "all")] {
        tokio::time::sleep(pause).await;
        s.send(KeyCode::Char(':'));
        for c in name.chars() {
            s.send(KeyCode::Char(c));
        }
        let kind = kind.to_string();
        let listed_since = Instant::now();
        let latency = s
            .press(KeyCode::Enter, &format!(":{name} Enter"), move |app| {
                app.header().resource == kind && app.rows() > 0
            })
            .await;
        s.until(|seen| seen.listed, "the new table listed").await;
        switches.push((latency, listed_since.elapsed()));
    }
    // Frames of `:all -A` under churn: every pod among the category's other kinds' rows.
    let (process, wall) = (process_cpu(), Instant::now());
    s.seen.borrow_mut().steps = Some(Vec::new());
    tokio::time::sleep(measure).await;
    let steps = s.seen.borrow_mut().steps.take().unwrap_or_default();
    let all_frames = AllFrames {
        seconds: wall.elapsed().as_secs_f64(),
        draw_cpu: steps
            .iter()
            .filter(|t| t.step == Step::Draw)
            .map(|t| t.cpu)
            .collect(),
        process_cpu: process_cpu() - process,
        rows: s.seen.borrow().rows,
    };
    s.send(KeyCode::Char('q'));
    Report {
        pods,
        sync,
        frames,
        stalls,
        keys,
        switches,
        all_frames,
    }
}

/// A piece of the name of a pod on screen, to type as fuzzy text.
async fn fuzzy_text(s: &Script) -> String {
    s.until(|seen| !seen.pod_name.is_empty(), "a pod on screen")
        .await;
    let name = s.seen.borrow().pod_name.clone();
    let chars: Vec<char> = name.chars().collect();
    chars[chars.len().saturating_sub(5)..].iter().collect()
}

async fn bench(sim: &SimHandle, config: kube::Config, pods: usize, measure: Duration, full: bool) {
    let cluster = Cluster::from_config(config, "tui-bench".into()).expect("cluster");
    let indexes = Config::built_in().expect("built-in config").indexes;
    let detail = DetailController::new(cluster.client.clone(), None);
    // Discovered kinds, so that `:all` names the sim's categories.
    let discovery = Discovery::run(&cluster.client).await.expect("discovers");
    let app = App::new(
        TableStarter::new(cluster, indexes, TAP_CAPACITY).with_catalog(Catalog::new(discovery)),
        ViewSpec::new(ResourceKind::Pods, NamespaceScope::All),
        true,
        detail,
    )
    .expect("app");
    let mut terminal = Terminal::with_options(
        CrosstermBackend::new(std::io::sink()),
        TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, WIDTH, HEIGHT)),
        },
    )
    .expect("terminal");
    let seen = Rc::new(RefCell::new(Seen::default()));
    let (keys, events) = futures::channel::mpsc::unbounded();
    let mut watcher = Watcher {
        seen: seen.clone(),
        step_started: None,
    };
    let script = script(Script { keys, seen }, sim, pods, measure, full);
    let (ran, report) = tokio::join!(
        app.run(
            &mut terminal,
            events,
            futures::stream::pending(),
            &mut watcher
        ),
        script
    );
    ran.expect("the loop ran");
    let block = report.render();
    println!("{block}");
    if full && std::env::var_os("KSCOPE_TUI_NO_DOCS").is_none() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/benchmarks.md");
        match write_docs(&path, &block) {
            Ok(()) => println!("tui: results written to {}", path.display()),
            Err(e) => eprintln!("tui: could not update {}: {e}", path.display()),
        }
    }
}

struct Report {
    pods: usize,
    sync: Duration,
    frames: Frames,
    stalls: Stalls,
    keys: Vec<Latency>,
    switches: Vec<(Latency, Duration)>,
    all_frames: AllFrames,
}

/// Frames of the `:all -A` table under churn: its rows are rebuilt off the UI thread.
struct AllFrames {
    seconds: f64,
    draw_cpu: Vec<Duration>,
    process_cpu: Duration,
    rows: usize,
}

impl Report {
    fn render(&self) -> String {
        use std::fmt::Write;
        let f = &self.frames;
        let mut out = String::new();
        let n = f.draw_cpu.len().max(1);
        let _ = writeln!(
            out,
            "{} pods, {WIDTH}x{HEIGHT}, panels on, through the real event loop; synced in {:.1} s.\n",
            self.pods,
            self.sync.as_secs_f64()
        );
        let _ = writeln!(
            out,
            "Frames under churn (no input): {} in {:.1} s ({:.1} fps), load average {}; the sim \
             wrote {:.0} objects/s, the pod informer received {:.0} watch events/s.\n",
            f.draw_cpu.len(),
            f.seconds,
            f.draw_cpu.len() as f64 / f.seconds,
            f.load,
            f.sim_writes as f64 / f.seconds,
            f.pod_events as f64 / f.seconds,
        );
        let _ = writeln!(
            out,
            "| per frame | mean | p50 | p99 | max |\n|---|---:|---:|---:|---:|"
        );
        let _ = writeln!(out, "| draw, UI-thread CPU | {} |", cells(&f.draw_cpu));
        let _ = writeln!(out, "| draw, wall | {} |", cells(&f.draw_wall));
        let _ = writeln!(
            out,
            "| all UI-thread CPU (wakes, tap intake, draws) / frames | {:.2} ms | | | |\n",
            ms(f.ui_cpu) / n as f64
        );
        let groups: Vec<String> = f
            .groups
            .iter()
            .map(|(g, cpu)| format!("{g} {:.0}", ms(*cpu) / f.seconds))
            .collect();
        let _ = writeln!(
            out,
            "Process CPU {:.0} ms/s (by thread: {} ms/s).\n",
            ms(f.process_cpu) / f.seconds,
            groups.join(", ")
        );
        let st = &self.stalls;
        let walls: Vec<Duration> = st.steps.iter().map(|t| t.wall).collect();
        let owns: Vec<Duration> = st.steps.iter().map(Timed::own).collect();
        let describe = |t: Option<&Timed>| {
            t.map_or("-".into(), |t| {
                format!(
                    "a {} step: {:.2} ms wall, {:.2} ms CPU, {:.2} ms waiting for a core, \
                     blocked {} times, {} major page faults",
                    format!("{:?}", t.step).to_lowercase(),
                    ms(t.wall),
                    ms(t.cpu),
                    ms(t.runnable),
                    t.blocked,
                    t.faults
                )
            })
        };
        let _ = writeln!(
            out,
            "UI-thread stalls while re-sorting and typing fuzzy text under churn ({} rounds of \
             `s`, `/{}` typed at 40 ms a key, Esc), {} steps of the loop:\n\n\
             - wall: {}; the longest was {}.\n\
             - wall less the waits for a core (work, and waits on locks): {}; the longest was \
             {}.\n",
            st.rounds,
            st.typed,
            walls.len(),
            stats(&walls),
            describe(st.steps.iter().max_by_key(|t| t.wall)),
            stats(&owns),
            describe(st.steps.iter().max_by_key(|t| t.own())),
        );
        let mut own: Vec<&Timed> = st.steps.iter().collect();
        own.sort_by_key(|t| std::cmp::Reverse(t.own()));
        let _ = writeln!(
            out,
            "The five longest, wall less waits for a core: {}.\n",
            own.iter()
                .take(5)
                .map(|t| format!(
                    "{:?} {:.2} ms ({:.2} CPU, blocked {}, faults {})",
                    t.step,
                    ms(t.own()),
                    ms(t.cpu),
                    t.blocked,
                    t.faults
                ))
                .collect::<Vec<_>>()
                .join("; ")
        );
        let _ = writeln!(
            out,
            "Keystroke to the first frame showing its result, the wait for that frame included:\n"
        );
        let _ = writeln!(
            out,
            "| keystroke | wall ms | UI CPU ms | rows |\n|---|---:|---:|---:|"
        );
        for k in self.keys.iter().chain(self.switches.iter().map(|(k, _)| k)) {
            let _ = writeln!(
                out,
                "| {} | {:.2} | {:.2} | {} |",
                k.what,
                ms(k.wall),
                ms(k.cpu),
                k.rows
            );
        }
        for (k, listed) in &self.switches {
            let _ = writeln!(out, "\n{}: listed after {:.0} ms.", k.what, ms(*listed));
        }
        let a = &self.all_frames;
        let _ = writeln!(
            out,
            "\n`:all -A` under churn ({} rows): {} frames in {:.1} s, draw UI-thread CPU {}; \
             process CPU {:.0} ms/s (the mixed rows' rebuilds included).",
            a.rows,
            a.draw_cpu.len(),
            a.seconds,
            stats(&a.draw_cpu),
            ms(a.process_cpu) / a.seconds.max(f64::EPSILON)
        );
        out
    }
}

const BEGIN: &str = "<!-- tui:begin (written by `cargo bench --bench tui`) -->";
const END: &str = "<!-- tui:end -->";

/// Replaces the block between the markers (or appends one) with this run's.
fn write_docs(path: &Path, block: &str) -> std::io::Result<()> {
    let existing = std::fs::read_to_string(path).unwrap_or_default();
    let section = format!(
        "{BEGIN}\nLatest run: {}, on {}.\n\n{block}{END}",
        jiff::Timestamp::now()
            .round(jiff::Unit::Second)
            .unwrap_or(jiff::Timestamp::now()),
        machine()
    );
    let updated = match (existing.find(BEGIN), existing.find(END)) {
        (Some(b), Some(e)) if e > b => {
            format!("{}{section}{}", &existing[..b], &existing[e + END.len()..])
        }
        _ => format!("{existing}\n## TUI frame cost\n\n{section}\n"),
    };
    std::fs::write(path, updated)
}

/// The CPU model and how many cores this process may use.
fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map_or("an unknown CPU", str::trim)
        .to_string();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{model}, {cores} cores")
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
