//! The hot loops in the TUI (`H`, `:hot`) against the sim's Widget controller: its
//! self-triggering bug flagged with the field that keeps changing, the healthy controller
//! not; snapshots of a report at 160x45 and 80x24 through the app's own frame, the fields
//! that keep changing shown at both.

use std::time::{Duration, Instant, SystemTime};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kscope_client::cluster::Cluster;
use kscope_index_views::hotloops::{HotLoop, HotObject, HotReport, WINDOW_SECONDS};
use kscope_index_views::live::Window;
use kscope_sim::{SimConfig, WidgetBug};
use kscope_ui::action::{Action, InputMode};
use kscope_ui::app::App;
use kscope_ui::draw::{self, Parts};
use kscope_ui::hot::HotView;
use kscope_ui::state::UiState;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use crate::common::kubectl::Kubectl;
use crate::common::tui::{self, AppStart, wait_rows};

/// A hang guard for the waits, not a deadline the test is about.
const BOUND: Duration = Duration::from_secs(120);

async fn app_on(name: &str, bug: WidgetBug) -> Option<(Kubectl, App)> {
    let config = SimConfig::with_size(10, 2, 1)
        .widget_controller(true)
        .widget_bug(bug);
    let fx = Kubectl::start_with(name, config).await?;
    let cluster = Cluster::from_config(fx.sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let mut app = AppStart::pods(cluster).discovered().await.start();
    wait_rows(&mut app, "pods", |_, w| w.total > 0).await;
    Some((fx, app))
}

fn press(app: &mut App, code: KeyCode) {
    app.handle_event(&Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

/// Feeds the detector, a second at a time, until the view's report satisfies `ok`.
async fn wait_hot(app: &mut App, what: &str, ok: impl Fn(&HotView) -> bool) -> HotView {
    let deadline = Instant::now() + BOUND;
    loop {
        app.watch_hot(Duration::from_secs(1)).await;
        let view = app.state().hot.clone().expect("the view is open");
        if ok(&view) {
            return view;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: never seen: {:#?}",
            view.report
        );
    }
}

fn widget_writes(view: &HotView) -> bool {
    view.report
        .objects
        .iter()
        .any(|o| o.manager == "widget-controller" && o.kind.starts_with("widgets"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hot_flags_the_self_triggering_widget_controller() {
    let Some((_fx, mut app)) = app_on("wb-hot-loop", WidgetBug::Hotloop).await else {
        return;
    };
    press(&mut app, KeyCode::Char('H'));
    assert_eq!(app.state().mode, InputMode::Hot);
    let view = wait_hot(&mut app, "the widget controller's loop", |v| {
        v.report
            .loops
            .iter()
            .any(|l| l.manager == "widget-controller")
    })
    .await;
    let found = &view.report.loops[0];
    assert!(
        found.fields.iter().any(|f| f == "status.lastReconcileTime"),
        "{found:?}"
    );
    let stamped = view
        .report
        .objects
        .iter()
        .find(|o| o.manager == "widget-controller" && o.self_triggered_per_second > 0.0)
        .expect("a Widget it keeps rewriting");
    assert!(stamped.status_writes > 0, "{stamped:?}");
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.state().mode, InputMode::Normal);
    assert!(app.state().hot.is_none(), "Esc closes the view");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hot_flags_nothing_on_the_healthy_widget_controller() {
    let Some((fx, mut app)) = app_on("wb-hot-healthy", WidgetBug::None).await else {
        return;
    };
    app.apply(Action::OpenCommand);
    for c in "hot".chars() {
        app.apply(Action::CommandChar(c));
    }
    app.apply(Action::CommandRun);
    assert_eq!(app.state().mode, InputMode::Hot);
    // A spec change the controller reconciles: its status writes follow.
    let widget = wait_widget(&fx).await;
    fx.ok(&[
        "patch",
        "widgets",
        "-n",
        &widget.0,
        &widget.1,
        "--type=merge",
        "-p",
        r#"{"spec":{"size":"large"}}"#,
    ])
    .await;
    // Its writes are seen, and a whole window more is watched after them.
    let seen = wait_hot(&mut app, "the widget controller's writes", widget_writes).await;
    let view = wait_hot(&mut app, "a window watched", |v| {
        v.seconds >= seen.seconds + WINDOW_SECONDS
    })
    .await;
    assert!(view.report.loops.is_empty(), "{:#?}", view.report);
    app.shutdown().await;
}

/// The namespace and name of a Widget the controller reconciled (its status stamped).
async fn wait_widget(fx: &Kubectl) -> (String, String) {
    let deadline = Instant::now() + BOUND;
    loop {
        let out = fx.ok(&["get", "widgets", "-A", "-o", "json"]).await;
        let all: serde_json::Value = serde_json::from_str(&out).expect("json");
        let reconciled = all["items"].as_array().and_then(|items| {
            items
                .iter()
                .find(|w| w["status"].is_object())
                .map(|w| w["metadata"].clone())
        });
        if let Some(meta) = reconciled {
            let text = |k: &str| meta[k].as_str().unwrap_or_default().to_string();
            return (text("namespace"), text("name"));
        }
        assert!(
            Instant::now() < deadline,
            "no Widget was reconciled: {all:#}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

fn report() -> HotReport {
    let object = |manager: &str, name: &str, rate: f64, own: bool| HotObject {
        manager: manager.into(),
        kind: "widgets.example.com".into(),
        namespace: "default".into(),
        name: name.into(),
        writes_per_second: rate,
        self_triggered_per_second: if own { rate } else { 0.0 },
        status_writes: (rate * 10.0) as u64,
        spec_writes: u64::from(!own),
        fields: if own {
            vec!["status.lastReconcileTime".into()]
        } else {
            Vec::new()
        },
        preceded_by: vec![if own {
            format!("{manager} (itself)")
        } else {
            "kubectl-client-side-apply (itself)".into()
        }],
    };
    HotReport {
        objects: vec![
            object("widget-controller", "gadget", 2.0, true),
            object("widget-controller", "gizmo", 1.9, true),
            object("kubectl-patch", "gizmo", 0.1, false),
        ],
        loops: vec![HotLoop {
            manager: "widget-controller".into(),
            self_triggered_per_second: 3.9,
            fields: vec!["status.lastReconcileTime".into()],
        }],
    }
}

#[test]
fn hot_view_at_160x45_and_80x24() {
    for (width, height) in [(160, 45), (80, 24)] {
        let mut state = UiState::new(false);
        state.mode = InputMode::Hot;
        let mut view = HotView::new(vec!["widgets".into(), "pods".into()]);
        view.report = report();
        view.seconds = 42;
        view.selected = 1;
        state.hot = Some(view);
        let header = tui::pods_header();
        let parts = Parts {
            header: &header,
            columns: &[],
            with_namespace: true,
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
        let text = terminal.backend().to_string();
        // The loop's line, and each object of the looping manager with its changed field.
        let fields = text
            .lines()
            .filter(|l| l.contains("status.lastReconcileTime"))
            .count();
        assert_eq!(
            fields, 3,
            "the changed fields show at {width}x{height}: {text}"
        );
        insta::assert_snapshot!(format!("hot_view_{width}x{height}"), text);
    }
}
