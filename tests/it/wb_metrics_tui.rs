//! `:metrics` in the TUI against the sim's demo Widget controller: typed on the
//! controller's Deployment it scrapes a ready pod through the pod proxy while shown (the
//! slow controller's queue depth seen rising between scrapes) and stops when Esc closes it;
//! on a Pending pod it says so plainly; TestBackend snapshots of the panel at 160x45 and
//! 80x24 from pages fed by hand, so that nothing on them changes between runs.

use std::time::{Duration, Instant, SystemTime};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kscope_client::cluster::{Cluster, NamespaceScope};
use kscope_client::scrape::MetricsTarget;
use kscope_index_views::live::Window;
use kscope_resources::ResourceKind;
use kscope_sim::{SimConfig, WidgetBug};
use kscope_ui::action::{Action, InputMode};
use kscope_ui::app::App;
use kscope_ui::draw::{self, Parts};
use kscope_ui::metrics::{DEFAULT_SCRAPE_INTERVAL, MetricsPanel, Scraped};
use kscope_ui::nav::ViewSpec;
use kscope_ui::state::UiState;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use crate::common::kubectl::Kubectl;
use crate::common::tui::{self, AppStart};

/// A hang guard for waits on the sim and the scrapes, not a deadline the test is about.
const BOUND: Duration = Duration::from_secs(90);

/// A sim with the Widget controller misbehaving as `bug`, its Deployment rolled out.
async fn sim(name: &str, bug: WidgetBug) -> Option<(Kubectl, Cluster)> {
    let config = SimConfig::with_size(20, 2, 1)
        .widget_controller(true)
        .widget_bug(bug);
    let fx = Kubectl::start_with(name, config).await?;
    fx.ok(&[
        "rollout",
        "status",
        "deploy/widget-controller",
        "-n",
        "widget-system",
        "--timeout=90s",
    ])
    .await;
    let cluster = Cluster::from_config(fx.sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    Some((fx, cluster))
}

fn key(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

/// Types `line` into the command bar as keys and runs it.
fn command(app: &mut App, line: &str) {
    app.handle_event(&key(KeyCode::Char(':')));
    for c in line.chars() {
        app.handle_event(&key(KeyCode::Char(c)));
    }
    app.handle_event(&key(KeyCode::Enter));
}

/// Selects the row of `name` by filtering the table to it.
async fn select(app: &mut App, name: &str) {
    app.apply(Action::OpenFilter);
    for c in name.chars() {
        app.apply(Action::FilterChar(c));
    }
    app.apply(Action::FilterAccept);
    let suffix = format!("/{name}");
    tui::wait_rows(app, name, |app, _| {
        app.table()
            .selected()
            .is_some_and(|key| key.ends_with(&suffix))
    })
    .await;
}

/// Takes the panel's scrapes until `ok` holds of it.
async fn wait_panel(app: &mut App, what: &str, ok: impl Fn(&MetricsPanel) -> bool) {
    let deadline = Instant::now() + BOUND;
    loop {
        let panel = app.state().metrics.as_ref().expect("the panel is open");
        if ok(panel) {
            return;
        }
        let waited = tokio::time::timeout_at(deadline.into(), app.next_metrics()).await;
        let panel = app.state().metrics.as_ref().expect("the panel is open");
        assert!(
            waited.is_ok_and(|more| more),
            "timed out waiting for {what}: {:?}, {} scrapes, depths {:?}",
            panel.error,
            panel.scrapes,
            depths(panel)
        );
    }
}

fn depths(panel: &MetricsPanel) -> Vec<f64> {
    panel
        .history()
        .readings()
        .filter_map(|r| r.depth())
        .collect()
}

fn screen(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    app.draw(&mut terminal).expect("draws");
    terminal.backend().to_string()
}

/// Creates Widgets in `default` one after another until aborted: more keys than the slow
/// controller's one worker takes.
fn keep_creating_widgets(client: kube::Client) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        for i in 0.. {
            let body = format!(
                r#"{{"apiVersion":"example.com/v1","kind":"Widget","metadata":{{"name":"w-{i}"}},"spec":{{"size":"small"}}}}"#
            );
            let request = http::Request::post("/apis/example.com/v1/namespaces/default/widgets")
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(body.into_bytes())
                .expect("request");
            // A refused create only means one key fewer; the test waits on the depth.
            let _ = client.request_text(request).await;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_on_the_slow_controllers_deployment_shows_its_queue_rising_until_esc() {
    // Held to the end: the sim lives as long as its fixture.
    let Some((_fx, cluster)) = sim("wb-metrics-slow", WidgetBug::Slow).await else {
        return;
    };
    let view = ViewSpec::new(
        ResourceKind::Deployments,
        NamespaceScope::One("widget-system".into()),
    );
    let mut app = AppStart::new(cluster.clone(), view).start();
    select(&mut app, "widget-controller").await;
    assert!(
        !app.metrics_scraping(),
        "nothing is scraped before :metrics"
    );
    command(&mut app, "metrics");
    assert_eq!(
        app.state().mode,
        InputMode::Metrics,
        "{:?}",
        app.state().command.error
    );
    assert!(app.metrics_scraping());

    let creating = keep_creating_widgets(cluster.client.clone());
    // Two scrapes apart, the depth grew: Widgets arrive faster than the worker takes them.
    wait_panel(
        &mut app,
        "the queue depth rising between two scrapes",
        |panel| depths(panel).windows(2).any(|w| w[1] > w[0]),
    )
    .await;
    creating.abort();

    let panel = app.state().metrics.as_ref().expect("open");
    let target = panel.target.clone().expect("the pod read");
    assert_eq!(target.namespace, "widget-system");
    assert!(target.pod.starts_with("widget-controller-"), "{target:?}");
    assert_eq!(target.port, "8080", "the container port named metrics");
    let shown = screen(&mut app, 160, 45);
    for wanted in [
        ":metrics deployment/widget-controller -n widget-system · pod widget-controller-",
        "the controller's own /metrics",
        "keys waiting for a worker",
        "kscope's own informer (a model, not the controller)",
        "kscope's reflector and workqueue on deployments",
    ] {
        assert!(shown.contains(wanted), "lacks {wanted:?}:\n{shown}");
    }

    // Esc leaves, and the scraping stops with the panel.
    app.handle_event(&key(KeyCode::Esc));
    assert_eq!(app.state().mode, InputMode::Normal);
    assert!(app.state().metrics.is_none());
    assert!(
        !app.metrics_scraping(),
        "nothing is scraped once the panel is gone"
    );
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_on_a_pending_pod_says_so_plainly() {
    let Some(fx) = Kubectl::start_with("wb-metrics-pending", SimConfig::with_size(10, 2, 1)).await
    else {
        return;
    };
    fx.ok(&[
        "run",
        "stuck",
        "--image=registry.k8s.io/pause:3.10",
        "--port=8080",
        r#"--overrides={"spec":{"nodeSelector":{"kscope.test/no-such-node":"true"}}}"#,
    ])
    .await;
    let cluster = Cluster::from_config(fx.sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let view = ViewSpec::new(ResourceKind::Pods, NamespaceScope::One("default".into()));
    let mut app = AppStart::new(cluster, view).start();
    select(&mut app, "stuck").await;
    command(&mut app, "metrics --port 8080");
    wait_panel(&mut app, "the Pending message", |panel| {
        panel.error.is_some()
    })
    .await;
    let panel = app.state().metrics.as_ref().expect("open");
    let said = panel.error.clone().unwrap_or_default();
    assert!(
        said.contains("pod default/stuck is Pending: its container is not running"),
        "{said}"
    );
    assert!(panel.target.is_none());
    let shown = screen(&mut app, 160, 45);
    assert!(shown.contains("pod default/stuck is Pending"), "{shown}");
    assert!(shown.contains("nothing read yet"), "{shown}");
    app.handle_event(&key(KeyCode::Esc));
    assert!(!app.metrics_scraping());
    app.shutdown().await;
}

/// A page as the demo controller serves it, with the queue at `depth`.
fn page(depth: u32, adds: u32, conflicts: u32) -> String {
    format!(
        "# TYPE workqueue_depth gauge
workqueue_depth{{controller=\"widget\",name=\"widget\",priority=\"0\"}} {depth}
# TYPE workqueue_adds_total counter
workqueue_adds_total{{controller=\"widget\",name=\"widget\"}} {adds}
# TYPE workqueue_longest_running_processor_seconds gauge
workqueue_longest_running_processor_seconds{{controller=\"widget\",name=\"widget\"}} 1.5
# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{{controller=\"widget\",result=\"success\"}} {adds}
# TYPE controller_runtime_reconcile_time_seconds histogram
controller_runtime_reconcile_time_seconds_bucket{{controller=\"widget\",le=\"0.5\"}} {adds}
controller_runtime_reconcile_time_seconds_bucket{{controller=\"widget\",le=\"2\"}} {adds}
controller_runtime_reconcile_time_seconds_bucket{{controller=\"widget\",le=\"+Inf\"}} {adds}
controller_runtime_reconcile_time_seconds_sum{{controller=\"widget\"}} 1
controller_runtime_reconcile_time_seconds_count{{controller=\"widget\"}} {adds}
# TYPE controller_runtime_active_workers gauge
controller_runtime_active_workers{{controller=\"widget\"}} 1
# TYPE controller_runtime_max_concurrent_reconciles gauge
controller_runtime_max_concurrent_reconciles{{controller=\"widget\"}} 1
# TYPE rest_client_requests_total counter
rest_client_requests_total{{code=\"200\",method=\"GET\"}} 40
rest_client_requests_total{{code=\"409\",method=\"PUT\"}} {conflicts}
# TYPE process_start_time_seconds gauge
process_start_time_seconds 1.7e9
"
    )
}

/// The panel after five scrapes two seconds apart, the queue growing by 3 each time.
fn fed_panel() -> MetricsPanel {
    let start = Instant::now();
    let mut panel = MetricsPanel::new(
        "deployment/widget-controller -n widget-system".into(),
        "deployments".into(),
        DEFAULT_SCRAPE_INTERVAL,
        start,
    );
    panel.take(
        Scraped::Resolved(MetricsTarget {
            namespace: "widget-system".into(),
            pod: "widget-controller-7d4b9-abcde".into(),
            port: "8080".into(),
        }),
        start,
    );
    for i in 0..5u32 {
        let at = start + Duration::from_secs(2 * u64::from(i) + 2);
        panel.take(Scraped::Page(Ok(page(3 * i, 10 * i, i))), at);
    }
    panel
}

/// The whole screen with `panel` open, drawn as the app draws it.
fn render(panel: MetricsPanel, width: u16, height: u16) -> String {
    let mut state = UiState::new(false);
    state.mode = InputMode::Metrics;
    state.metrics = Some(panel);
    let header = tui::header("deployments", "widget-system");
    let parts = Parts {
        header: &header,
        columns: &[],
        with_namespace: false,
        now: SystemTime::UNIX_EPOCH,
        color: false,
    };
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    draw::frame(&mut terminal, &mut state, None, &parts, |_, _| Window {
        offset: 0,
        total: 0,
        rows: Vec::new(),
        selected: None,
    })
    .expect("draws");
    terminal.backend().to_string()
}

#[test]
fn metrics_panel_at_160x45() {
    let shown = render(fed_panel(), 160, 45);
    for wanted in [
        "depth             12.0  keys waiting for a worker",
        "adds/s            5.0  keys queued",
        "per second        success 5.0",
        "409=4",
        "≤12",
        "process_start_time_seconds",
        "kscope's own informer (a model, not the controller)",
    ] {
        assert!(shown.contains(wanted), "lacks {wanted:?}:\n{shown}");
    }
    insta::assert_snapshot!(shown);
}

#[test]
fn metrics_panel_at_80x24() {
    let shown = render(fed_panel(), 80, 24);
    for wanted in [
        ":metrics deployment/widget-controller -n widget-system · pod widget-contro",
        "scraped every 2s, only while shown · 5 scrapes",
        "depth             12.0",
        "by code           200=40 409=4",
        "409 / 429 since   +1 / +0",
        "kscope's own informer (a model, not the controller)",
    ] {
        assert!(shown.contains(wanted), "lacks {wanted:?}:\n{shown}");
    }
    insta::assert_snapshot!(shown);
}

#[test]
fn metrics_panel_of_a_forbidden_proxy_at_80x24() {
    let mut panel = fed_panel();
    panel.take(
        Scraped::Page(Err(
            "reading pod widget-system/widget-controller-7d4b9-abcde's metrics needs the \
             pods/proxy permission (get): forbidden"
                .into(),
        )),
        Instant::now(),
    );
    let shown = render(panel, 80, 24);
    assert!(shown.contains("needs the"), "{shown}");
    insta::assert_snapshot!(shown);
}

/// The informer's staleness against a real server: what it records as the newest
/// resourceVersion seen is at least what a list had just shown, and once everything is
/// processed the store is at it, not behind for any time, and the header says nothing of it.
/// A write moves both on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_catches_up_with_the_newest_resource_version_the_server_showed() {
    let sim = kscope_sim::Sim::start(SimConfig::with_size(30, 2, 1))
        .await
        .expect("sim");
    let cluster = Cluster::from_config(sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let list_rv = |text: &str| -> u64 {
        let list: serde_json::Value = serde_json::from_str(text).expect("JSON");
        list["metadata"]["resourceVersion"]
            .as_str()
            .and_then(|rv| rv.parse().ok())
            .expect("the sim's resourceVersions are integers")
    };
    let get = http::Request::get("/api/v1/pods?limit=1")
        .body(Vec::new())
        .expect("request");
    // Listed before the informer starts: its own list shows at least this.
    let shown = list_rv(&cluster.client.request_text(get).await.expect("list"));
    let mut app = AppStart::pods(cluster.clone()).start();
    let caught_up = |app: &App, at_least: u64| {
        let (_, informer) = app.table().informer_metrics();
        informer.wire_resource_version >= at_least
            && informer.store_resource_version == informer.wire_resource_version
            && informer.behind_for.is_none()
    };
    tui::wait_rows(
        &mut app,
        "the store at the list's resourceVersion",
        |app, _| caught_up(app, shown),
    )
    .await;
    assert!(
        !app.header().sync.contains("behind"),
        "{}",
        app.header().sync
    );

    let pod = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"fresh","namespace":"default"},"spec":{"containers":[{"name":"c","image":"pause"}]}}"#;
    let create = http::Request::post("/api/v1/namespaces/default/pods")
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(pod.as_bytes().to_vec())
        .expect("request");
    let created: serde_json::Value =
        serde_json::from_str(&cluster.client.request_text(create).await.expect("create"))
            .expect("JSON");
    let written: u64 = created["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|rv| rv.parse().ok())
        .expect("an integer resourceVersion");
    tui::wait_rows(
        &mut app,
        "the store at the write's resourceVersion",
        |app, _| caught_up(app, written),
    )
    .await;
    app.shutdown().await;
    sim.shutdown().await;
}
