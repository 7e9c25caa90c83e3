//! The fleet benchmark's client: the App on the pods of one or more clusters, run by its
//! own event loop into a 200x50 terminal over `io::sink()`, a `j` pressed every 100 ms,
//! and a line of JSON a second saying what its frames showed. Exits when its stdin closes.

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kscope_client::cluster::{Cluster, NamespaceScope};
use kscope_config::Config;
use kscope_index_views::mixed::ROW_CAP;
use kscope_resources::ResourceKind;
use kscope_ui::app::{App, Observer, Step};
use kscope_ui::detail::DetailController;
use kscope_ui::nav::ViewSpec;
use kscope_ui::table::TableStarter;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};

use super::{Tick, cpu, emit, rss};

/// As `kscope_ui::run` sizes it.
const TAP_CAPACITY: usize = 4096;

pub fn main(kubeconfig: &Path, pods: usize, contexts: &[String]) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    // A merged table holds at most ROW_CAP rows (and says the rest are left out).
    let expected = (pods * contexts.len() * 99 / 100).min(ROW_CAP);
    runtime.block_on(run(kubeconfig, expected, contexts));
}

/// What the loop's frames showed since the last tick.
#[derive(Default)]
struct Seen {
    rows: usize,
    current: bool,
    watch_events: u64,
    first_rows: Option<Instant>,
    synced: Option<Instant>,
    synced_cpu: Option<f64>,
    draws: Vec<f64>,
    keys: Vec<f64>,
    /// When the last key was sent, until a frame is drawn after it.
    key_sent: Option<Instant>,
    step_started: Option<Instant>,
}

/// The loop's observer, and the rows that make a table synced.
struct Watcher(Rc<RefCell<Seen>>, usize);

impl Observer for Watcher {
    fn started(&mut self) {
        self.0.borrow_mut().step_started = Some(Instant::now());
    }

    fn finished(&mut self, step: Step) {
        let mut seen = self.0.borrow_mut();
        if let (Step::Draw, Some(at)) = (step, seen.step_started.take()) {
            seen.draws.push(at.elapsed().as_secs_f64() * 1e3);
        }
    }

    fn drawn(&mut self, app: &App) -> bool {
        let mut seen = self.0.borrow_mut();
        let now = Instant::now();
        seen.rows = app.rows();
        seen.watch_events = app.table().watch_events();
        let header = app.header();
        seen.current = header.listed && header.stale_since.is_none() && seen.rows >= self.1;
        if seen.rows > 0 && seen.first_rows.is_none() {
            seen.first_rows = Some(now);
        }
        if seen.current && seen.synced.is_none() {
            seen.synced = Some(now);
            seen.synced_cpu = Some(cpu("self"));
        }
        if let Some(sent) = seen.key_sent.take() {
            seen.keys.push(now.duration_since(sent).as_secs_f64() * 1e3);
        }
        true
    }
}

async fn clusters(kubeconfig: &Path, contexts: &[String]) -> Vec<Cluster> {
    let file = kube::config::Kubeconfig::read_from(kubeconfig).expect("the kubeconfig");
    let mut clusters = Vec::new();
    for context in contexts {
        let options = kube::config::KubeConfigOptions {
            context: Some(context.clone()),
            ..Default::default()
        };
        let config = kube::Config::from_custom_kubeconfig(file.clone(), &options)
            .await
            .expect("a usable context");
        clusters.push(Cluster::from_config(config, context.clone()).expect("a client"));
    }
    clusters
}

async fn run(kubeconfig: &Path, expected: usize, contexts: &[String]) {
    // Exit when the parent closes stdin (or dies).
    tokio::spawn(async {
        use tokio::io::AsyncReadExt;
        let mut stdin = tokio::io::stdin();
        let mut buf = [0u8; 64];
        while matches!(stdin.read(&mut buf).await, Ok(n) if n > 0) {}
        std::process::exit(0);
    });
    let clusters = clusters(kubeconfig, contexts).await;
    let first = clusters.first().cloned().expect("a context");
    let indexes = Config::built_in().expect("built-in config").indexes;
    let detail = DetailController::new(first.client.clone(), None);
    let mut starter = TableStarter::new(first, indexes, TAP_CAPACITY);
    if clusters.len() > 1 {
        starter = starter.for_fleet(clusters);
    }
    let rss_base = rss();
    let started = Instant::now();
    let app = App::new(
        starter,
        ViewSpec::new(ResourceKind::Pods, NamespaceScope::All),
        false,
        detail,
    )
    .expect("app");
    let mut terminal = Terminal::with_options(
        CrosstermBackend::new(std::io::sink()),
        TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, 200, 50)),
        },
    )
    .expect("terminal");
    let seen = Rc::new(RefCell::new(Seen::default()));
    let (keys, events) = futures::channel::mpsc::unbounded();
    let mut watcher = Watcher(seen.clone(), expected);
    let script = async {
        let mut press = tokio::time::interval(Duration::from_millis(100));
        let mut report = Instant::now();
        loop {
            press.tick().await;
            if seen.borrow().key_sent.is_none() {
                seen.borrow_mut().key_sent = Some(Instant::now());
                let key = KeyEvent::new(KeyCode::Char('j'), KeyModifiers::NONE);
                if keys.unbounded_send(Ok(Event::Key(key))).is_err() {
                    return;
                }
            }
            if report.elapsed() >= Duration::from_secs(1) {
                report = Instant::now();
                let mut seen = seen.borrow_mut();
                let since = |at: Option<Instant>| at.map(|at| (at - started).as_secs_f64());
                emit(&Tick {
                    t: started.elapsed().as_secs_f64(),
                    rows: seen.rows,
                    current: seen.current,
                    first_rows: since(seen.first_rows),
                    synced: since(seen.synced),
                    rss: rss(),
                    rss_base,
                    synced_cpu: seen.synced_cpu,
                    watch_events: seen.watch_events,
                    draws: std::mem::take(&mut seen.draws),
                    keys: std::mem::take(&mut seen.keys),
                });
            }
        }
    };
    let (ran, ()) = tokio::join!(
        app.run(
            &mut terminal,
            events,
            futures::stream::pending(),
            &mut watcher
        ),
        script
    );
    ran.expect("the loop ran");
}
