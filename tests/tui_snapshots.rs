//! TestBackend snapshots of the TUI's screens, drawn from a fixed store, a fixed clock and
//! hand-made delta lines, so they never depend on the wall clock or a cluster.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use kscope::index_views::columns::TableRow;
use kscope::index_views::definitions::default_index_definitions;
use kscope::index_views::live::{LiveView, SortSpec, Window};
use kscope::index_views::query::Query;
use kscope::index_views::registry::IndexRegistry;
use kscope::resources::{Pod, Timestamp, decode};
use kscope::ui::action::InputMode;
use kscope::ui::app::capture;
use kscope::ui::draw::{self, Header, QueueStats, Screen};
use kscope::ui::state::{DeltaLine, Focus, UiState};
use parking_lot::Mutex;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::{Color, Modifier};

/// 2026-01-01T00:00:00Z: pods are created relative to it.
const NOW: i64 = 1_767_225_600;

fn pod(ns: &str, name: &str, app: &str, node: &str, restarts: u32, age_seconds: i64) -> Arc<Pod> {
    let created = jiff::Timestamp::from_second(NOW - age_seconds).expect("valid time");
    let json = format!(
        r#"{{"metadata":{{"name":"{name}","namespace":"{ns}","resourceVersion":"1",
            "creationTimestamp":"{created}","labels":{{"app":"{app}"}}}},
            "spec":{{"nodeName":"{node}","containers":[{{"name":"c","image":"nginx"}}]}},
            "status":{{"phase":"Running","podIP":"10.0.0.1",
            "containerStatuses":[{{"name":"c","ready":true,"restartCount":{restarts}}}]}}}}"#
    );
    Arc::new(decode(json.as_bytes()).expect("pod decodes"))
}

fn registry() -> IndexRegistry<Pod> {
    let registry = IndexRegistry::new(default_index_definitions()).expect("indexes");
    let store = registry.indexer();
    for i in 0..40 {
        let (ns, app) = if i % 3 == 0 {
            ("shop", "web")
        } else {
            ("data", "db")
        };
        let name = format!("{app}-{i:02}");
        store
            .add(pod(
                ns,
                &name,
                app,
                &format!("node-{}", i % 4),
                i % 5,
                60 * i64::from(i),
            ))
            .expect("add");
    }
    registry
}

fn view(query: &str) -> Mutex<LiveView<Pod>> {
    let query = Query::parse(query).expect("query parses");
    Mutex::new(LiveView::new(registry(), query, SortSpec::default()).expect("view"))
}

fn header() -> Header {
    Header {
        context: "kscope-demo".into(),
        server: "https://127.0.0.1:6443/".into(),
        resource: "pods".into(),
        scope: kscope::ui::ALL_NAMESPACES.into(),
        sync: "listing: 2 pages, 1000 objects".into(),
        events_per_second: 12.0,
    }
}

fn at(seconds: i64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(u64::try_from(seconds).expect("positive"))
}

fn state_with_deltas() -> UiState {
    let mut state = UiState::new(true);
    for (seq, kind, key, detail) in [
        (1, "RELIST", "", "40 objects"),
        (2, "MODIFIED", "shop/web-03", "status.phase"),
        (3, "Updated", "shop/web-03", ""),
        (4, "DELETED", "data/db-01", ""),
        (5, "Deleted", "data/db-01", ""),
    ] {
        state.push_delta(DeltaLine {
            seq,
            at: at(NOW - 10 + i64::try_from(seq).expect("small")),
            kind,
            key: key.into(),
            resource_version: format!("{}", 100 + seq),
            detail: detail.into(),
        });
    }
    state
}

fn queue() -> QueueStats {
    QueueStats {
        depth: 3,
        adds: 1200,
        coalesced_adds: 40,
        in_flight: 1,
        retries: 0,
        latency_p50: Some(0.0004),
        latency_p99: Some(0.012),
        work_p50: Some(0.00001),
        work_p99: Some(0.00002),
    }
}

/// Draws one frame of `view` with `state` at `width`x`height` and returns the text.
fn render(view: &Mutex<LiveView<Pod>>, state: &mut UiState, width: u16, height: u16) -> String {
    terminal(view, state, width, height).backend().to_string()
}

fn terminal(
    view: &Mutex<LiveView<Pod>>,
    state: &mut UiState,
    width: u16,
    height: u16,
) -> Terminal<TestBackend> {
    terminal_in(view, state, width, height, false)
}

fn terminal_in(
    view: &Mutex<LiveView<Pod>>,
    state: &mut UiState,
    width: u16,
    height: u16,
    color: bool,
) -> Terminal<TestBackend> {
    let backend = TestBackend::new(width, height);
    let mut terminal = Terminal::new(backend).expect("test terminal");
    let area = ratatui::layout::Rect::new(0, 0, width, height);
    let rows = draw::table_rows(area, state);
    let window: Window = capture(view, state, rows, Timestamp::from_seconds(NOW));
    let header = header();
    let queue = queue();
    let screen = Screen {
        state,
        header: &header,
        columns: Pod::COLUMNS,
        with_namespace: true,
        window: &window,
        queue: &queue,
        now: at(NOW),
        color,
    };
    terminal
        .draw(|frame| draw::draw(frame, &screen))
        .expect("draws");
    terminal
}

#[test]
fn main_screen_with_panels() {
    let view = view("");
    let mut state = state_with_deltas();
    state.focus = Focus::Deltas;
    insta::assert_snapshot!(render(&view, &mut state, 100, 30));
}

#[test]
fn table_only_after_moving_down_a_page() {
    let view = view("");
    let mut state = UiState::new(false);
    render(&view, &mut state, 100, 20);
    view.lock().select_position(30);
    let terminal = terminal(&view, &mut state, 100, 20);
    insta::assert_snapshot!(terminal.backend().to_string());
    // Position 30 (web-12) is the last of 16 visible rows, below the header and titles.
    let buffer = terminal.backend().buffer();
    let reversed = |y: u16| {
        buffer
            .cell((12, y))
            .is_some_and(|c| c.modifier.contains(Modifier::REVERSED))
    };
    assert!(reversed(18));
    assert!(!reversed(17));
}

#[test]
fn filter_by_index_shows_only_matching_rows_and_the_count() {
    let view = view("app=web");
    let mut state = UiState::new(false);
    state.mode = InputMode::Filter;
    state.filter.input = "app=web".into();
    state.sort = SortSpec {
        column: 3,
        descending: true,
    };
    view.lock().set_sort(state.sort);
    insta::assert_snapshot!(render(&view, &mut state, 100, 20));
}

#[test]
fn filter_parse_error_names_the_column() {
    let view = view("");
    let mut state = UiState::new(false);
    state.mode = InputMode::Filter;
    state.filter.input = "app in a".into();
    assert!(state.filter.parse().is_none());
    insta::assert_snapshot!(render(&view, &mut state, 100, 12));
}

#[test]
fn help_overlay() {
    let view = view("");
    let mut state = UiState::new(false);
    state.mode = InputMode::Help;
    insta::assert_snapshot!(render(&view, &mut state, 100, 24));
}

#[test]
fn panels_collapse_at_40x10() {
    let view = view("");
    let mut state = state_with_deltas();
    insta::assert_snapshot!(render(&view, &mut state, 40, 10));
}

#[test]
fn too_small_below_40x10() {
    let view = view("");
    let mut state = UiState::new(true);
    let text = render(&view, &mut state, 39, 10);
    assert!(text.contains("terminal too small"), "{text}");
    let text = render(&view, &mut state, 60, 9);
    assert!(text.contains("terminal too small"), "{text}");
}

#[test]
fn selection_stays_on_its_object_while_rows_move() {
    let registry = registry();
    let view = Mutex::new(
        LiveView::new(registry.clone(), Query::default(), SortSpec::default()).expect("view"),
    );
    let mut state = UiState::new(false);
    view.lock().select_position(5);
    let before = capture(&view, &mut state, 10, Timestamp::from_seconds(NOW));
    let key = view.lock().selected().cloned().expect("selected");
    // New rows sorting before the selection push it down.
    for name in ["aa-1", "aa-2", "aa-3"] {
        let p = pod("data", name, "db", "node-0", 0, 5);
        registry.indexer().add(p).expect("add");
        view.lock().apply(&format!("data/{name}").as_str().into());
    }
    let after = capture(&view, &mut state, 10, Timestamp::from_seconds(NOW));
    assert_eq!(view.lock().selected(), Some(&key));
    assert_eq!(after.selected, before.selected.map(|p| p + 3));
    let row = &after.rows[after.selected.expect("visible") - after.offset];
    assert_eq!(row.key, key);
}

#[test]
fn no_color_draws_no_colours() {
    let view = view("");
    let colours = |color: bool| {
        let mut state = state_with_deltas();
        let terminal = terminal_in(&view, &mut state, 100, 30, color);
        let buffer = terminal.backend().buffer().clone();
        buffer
            .content()
            .iter()
            .filter(|c| c.fg != Color::Reset || c.bg != Color::Reset)
            .count()
    };
    assert!(colours(true) > 0);
    assert_eq!(colours(false), 0);
}

#[test]
fn index_browser_lists_values_with_counts() {
    let view = view("");
    let mut state = UiState::new(false);
    state.mode = InputMode::Indexes;
    let registry = registry();
    state.browser.names = registry.definitions().into_iter().map(|d| d.name).collect();
    state.browser.current = state
        .browser
        .names
        .iter()
        .position(|n| n == "node")
        .expect("a node index");
    state.browser.values = registry.value_counts("node").expect("node index");
    state.browser.step(2);
    insta::assert_snapshot!(render(&view, &mut state, 100, 16));
}
