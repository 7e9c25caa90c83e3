//! TestBackend snapshots of the bottom panels: the delta tail with its cursor, filter and
//! pipeline events, and the workqueue with adds/s and sparklines, at a comfortable size and
//! at the smallest ones. Fixed clock, hand-made deltas and queue samples.

use crate::common::tmux;

use std::time::{Duration, Instant, SystemTime};

use kscope_index_views::definitions::default_index_definitions;
use kscope_index_views::live::{LiveView, SortSpec};
use kscope_index_views::query::Query;
use kscope_index_views::registry::IndexRegistry;
use kscope_informers::indexer::IndexerWriter;
use kscope_resources::{Pod, Timestamp};
use kscope_ui::action::Focus;
use kscope_ui::action::{Action, InputMode};
use kscope_ui::deltas::DeltaLine;
use kscope_ui::draw::{self, Header, Parts};
use kscope_ui::layout::Layout;
use kscope_ui::queue::QueueStats;
use kscope_ui::state::UiState;
use kscope_ui::table::capture;
use parking_lot::Mutex;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

use tmux::Session;

use crate::common::pod::{NOW, pod};
use crate::common::tui;

/// shop/web-1, shop/web-2 (app=web) and data/db-1 (app=db).
fn registry() -> (IndexRegistry<Pod>, IndexerWriter<Pod>) {
    let (registry, store) = IndexRegistry::new(default_index_definitions()).expect("indexes");
    for (ns, name, app) in [
        ("shop", "web-1", "web"),
        ("shop", "web-2", "web"),
        ("data", "db-1", "db"),
    ] {
        store
            .add(pod(ns, name).app(app).created(NOW - 600).decoded())
            .expect("add");
    }
    (registry, store)
}

fn at(seconds_ago: i64) -> SystemTime {
    SystemTime::UNIX_EPOCH
        + Duration::from_secs(u64::try_from(NOW - seconds_ago).expect("positive"))
}

fn delta(seq: u64, kind: &'static str, key: &str, detail: &str) -> DeltaLine {
    DeltaLine {
        seq,
        at: at(40 - i64::try_from(seq).expect("small")),
        kind,
        key: key.into(),
        resource_version: (500 + seq).to_string(),
        detail: detail.into(),
    }
}

/// A watch that expires (410), relists and restarts between ordinary changes; web-3 is not
/// in the store (deleted before the filter is made).
fn state_with_deltas() -> UiState {
    let mut state = UiState::new(true);
    for line in [
        delta(1, "WATCH", "", "from rv 500"),
        delta(2, "MODIFIED", "shop/web-1", "status.phase"),
        delta(3, "MODIFIED", "data/db-1", "metadata.labels.app"),
        delta(4, "DELETED", "shop/web-3", ""),
        delta(5, "EXPIRED", "", "too old resource version: 500 (510)"),
        delta(6, "RELIST", "", "3 objects"),
        delta(7, "Replaced", "shop/web-1", ""),
        delta(8, "Replaced", "shop/web-2", ""),
        delta(9, "Replaced", "data/db-1", ""),
        delta(10, "WATCH", "", "from rv 512"),
        delta(11, "BOOKMARK", "", ""),
        delta(12, "MODIFIED", "shop/web-2", "spec.nodeName status.podIP"),
    ] {
        state.deltas.push(line);
    }
    state
}

fn queue() -> QueueStats {
    QueueStats {
        depth: 4,
        adds: 1800,
        coalesced_adds: 35,
        in_flight: 2,
        retries: 1,
        latency_p50: Some(0.0004),
        latency_p99: Some(0.012),
        work_p50: Some(0.00003),
        work_p99: Some(0.0009),
    }
}

/// A minute of a queue that speeds up then drains: adds/s 0, 3, 6, … and depth rising.
fn sample_queue(state: &mut UiState) {
    let start = Instant::now();
    let mut adds = 0;
    for second in 0..=60u64 {
        state.queue.sample(
            adds,
            usize::try_from(second % 20).expect("small"),
            start + Duration::from_secs(second),
        );
        adds += (second % 30) * 3;
    }
}

fn render(state: &mut UiState, width: u16, height: u16) -> Terminal<TestBackend> {
    let (registry, _store) = registry();
    let view =
        Mutex::new(LiveView::new(registry, Query::default(), SortSpec::default()).expect("view"));
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    let columns = view.lock().columns();
    let header = Header {
        sync: "watching at rv 512".into(),
        sync_short: None,
        events_per_second: 3.0,
        ..tui::pods_header()
    };
    state.queue.stats = queue();
    let parts = Parts {
        header: &header,
        columns: &columns,
        with_namespace: true,
        now: at(0),
        color: true,
    };
    draw::frame(&mut terminal, state, None, &parts, |state, rows| {
        capture(
            &view,
            &mut state.table.scroll,
            rows,
            Timestamp::from_seconds(NOW),
        )
    })
    .expect("draws");
    terminal
}

/// The delta panel's lines in a `width`x`height` frame with the panels on.
fn page(width: u16, height: u16) -> usize {
    Layout::new(ratatui::layout::Rect::new(0, 0, width, height), true).delta_rows()
}

fn text(terminal: &Terminal<TestBackend>) -> String {
    terminal.backend().to_string()
}

/// The row whose text contains `needle`, and whether its cell at `x` is reversed.
fn row_of(buffer: &Buffer, needle: &str) -> Option<u16> {
    (0..buffer.area.height).find(|&y| {
        let line: String = (0..buffer.area.width)
            .filter_map(|x| buffer.cell((x, y)).map(|c| c.symbol().to_string()))
            .collect();
        line.contains(needle)
    })
}

fn reversed(buffer: &Buffer, y: u16) -> bool {
    buffer
        .cell((3, y))
        .is_some_and(|c| c.modifier.contains(Modifier::REVERSED))
}

fn fg(buffer: &Buffer, needle: &str) -> Option<Color> {
    let y = row_of(buffer, needle)?;
    buffer.cell((1, y)).map(|c| c.fg)
}

#[test]
fn delta_selection_held_while_new_entries_arrive() {
    let mut state = state_with_deltas();
    state.focus = Focus::Deltas;
    render(&mut state, 100, 30);
    // From the newest (seq 12) up past the bookmark to the watch restart.
    for _ in 0..2 {
        state.deltas.move_cursor(&Action::Up, page(100, 30));
    }
    state.deltas.push(delta(13, "ADDED", "shop/web-4", ""));
    let terminal = render(&mut state, 100, 30);
    insta::assert_snapshot!(text(&terminal));
    let buffer = terminal.backend().buffer();
    let selected = row_of(buffer, "WATCH     rv 510").expect("the selected line is shown");
    assert!(reversed(buffer, selected));
    let newest = row_of(buffer, "shop/web-2 rv 512").expect("shown");
    assert!(!reversed(buffer, newest));
    assert_eq!(
        state.deltas.selected(page(100, 30)).map(|d| d.seq),
        Some(10)
    );
}

#[test]
fn delta_filter_by_index_value_keeps_the_set_it_was_made_with() {
    let mut state = state_with_deltas();
    state.focus = Focus::Deltas;
    let (_registry, indexer) = registry();
    state.mode = InputMode::DeltaFilter;
    for c in "app=web".chars() {
        state
            .deltas
            .edit_filter(&Action::FilterChar(c), |n, v| indexer.index_keys(n, v));
    }
    // shop/web-1 is deleted after the filter is made: its deltas still match.
    assert!(indexer.remove("shop/web-1").is_some());
    state.deltas.push(delta(13, "DELETED", "shop/web-1", ""));
    state.deltas.push(delta(14, "ADDED", "shop/web-9", ""));
    let terminal = render(&mut state, 100, 30);
    insta::assert_snapshot!(text(&terminal));
    let shown = text(&terminal);
    assert!(shown.contains("[app=web] 9/14"), "{shown}");
    assert!(
        !shown.contains("BOOKMARK"),
        "a bookmark is no object's: {shown}"
    );
    assert!(!shown.contains("data/db-1"), "{shown}");
    assert!(!shown.contains("web-9"), "{shown}");
}

#[test]
fn delta_filter_error_is_in_the_status_line() {
    let mut state = state_with_deltas();
    state.mode = InputMode::DeltaFilter;
    let (registry, _store) = registry();
    state
        .deltas
        .set_filter("team=a", |n, v| registry.indexer().index_keys(n, v));
    let shown = text(&render(&mut state, 100, 30));
    assert!(
        shown.contains("deltas: team=a█  index with name team does not exist"),
        "{shown}"
    );
}

#[test]
fn relists_410s_watch_restarts_and_bookmarks_stand_out() {
    let mut state = state_with_deltas();
    let terminal = render(&mut state, 100, 30);
    insta::assert_snapshot!(text(&terminal));
    let buffer = terminal.backend().buffer();
    assert_eq!(fg(buffer, "EXPIRED"), Some(Color::Red));
    assert_eq!(fg(buffer, "RELIST"), Some(Color::Yellow));
    assert_eq!(fg(buffer, "BOOKMARK"), Some(Color::Yellow));
    assert_eq!(fg(buffer, "WATCH     rv 510"), Some(Color::Yellow));
    assert_eq!(fg(buffer, "Replaced shop/web-2"), Some(Color::Cyan));
}

#[test]
fn workqueue_with_sparklines_and_adds_per_second() {
    let mut state = state_with_deltas();
    sample_queue(&mut state);
    let shown = text(&render(&mut state, 120, 30));
    insta::assert_snapshot!(shown);
    assert!(shown.contains("adds/s    87.0"), "{shown}");
    assert!(shown.contains("work      30µs/900µs"), "{shown}");
}

/// The informer's numbers sit under the workqueue's: its FIFO and what it holds, how long
/// a pop takes to process, and how far the store is behind the wire.
#[test]
fn the_informer_beside_the_workqueue() {
    let mut state = state_with_deltas();
    sample_queue(&mut state);
    state.queue.informer = Some(kscope_ui::queue::InformerStats {
        fifo: "real",
        queued: 12,
        processing_p50: Some(0.00004),
        processing_p99: Some(0.0012),
        store_resource_version: 5120,
        resource_version_lag: 3,
        behind_for: Some(2.5),
    });
    let shown = text(&render(&mut state, 120, 36));
    insta::assert_snapshot!(shown);
    assert!(shown.contains("fifo      real 12"), "{shown}");
    assert!(shown.contains("process   40µs/1.2ms"), "{shown}");
    assert!(shown.contains("rv lag    3 (at 5120)"), "{shown}");
    assert!(shown.contains("behind    2.5s"), "{shown}");
}

#[test]
fn panels_at_60x20() {
    let mut state = state_with_deltas();
    sample_queue(&mut state);
    insta::assert_snapshot!(text(&render(&mut state, 60, 20)));
}

#[test]
fn panels_collapse_at_40x10() {
    let mut state = state_with_deltas();
    sample_queue(&mut state);
    state.focus = Focus::Deltas;
    let shown = text(&render(&mut state, 40, 10));
    insta::assert_snapshot!(shown);
    assert_eq!(page(40, 10), 0, "no delta panel");
    assert!(!shown.contains("deltas"), "{shown}");
}

/// The delta panel's title line.
fn delta_title(screen: &str) -> &str {
    screen
        .lines()
        .find(|l| l.starts_with('┌') && l.contains("deltas "))
        .unwrap_or("")
}

/// End to end in a real terminal: the user's `keys:` apply, the delta panel's cursor and
/// filter work through the event loop, and the workqueue panel gets its adds/s from the tick.
#[test]
fn demo_delta_cursor_filter_and_rebound_keys() {
    if crate::common::tools::required("tmux", "to run kscope in a real terminal").is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("kscope-tui-panels-{}", std::process::id()));
    let config = dir.join("config").join("kscope");
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::write(
        config.join("config.yaml"),
        "keys:\n  normal:\n    quit: [x]\n  deltas:\n    open-delta-filter: [Z]\n",
    )
    .expect("config");
    let command = format!(
        "env XDG_STATE_HOME={0}/state XDG_CONFIG_HOME={0}/config {1} --demo",
        dir.display(),
        env!("CARGO_BIN_EXE_kscope")
    );
    let session = Session::start(format!("kscope-panels-{}", std::process::id()), &command);

    // Closed on a first run: t opens the panels.
    session.wait_for("the first list", |s| s.contains("watching at rv"));
    session.keys(&["t"]);
    session.wait_for("the delta panel and a rate", |s| {
        s.contains("watching at rv") && s.contains("adds/s") && !s.contains("adds/s    -")
    });
    session.keys(&["Tab"]);
    session.wait_for("the delta keys in the hint", |s| {
        s.contains("Z filter deltas  enter diff") && s.contains("x quit")
    });
    session.keys(&["k", "k"]);
    session.wait_for("the cursor held", |s| delta_title(s).contains("newer"));
    session.keys(&["G"]);
    session.wait_for("following again", |s| !delta_title(s).contains("newer"));
    session.keys(&["Z", "zzz-no-such-key", "Enter"]);
    session.wait_for("the filter in the title", |s| {
        delta_title(s).contains("[zzz-no-such-key]")
    });
    session.keys(&["Escape"]);
    session.wait_for("the filter cleared", |s| {
        !delta_title(s).contains("zzz") && delta_title(s).starts_with("┌ ▶ deltas (focused)")
    });

    // q is no longer bound; x quits. Keys are read in order: the help that `?` opens after
    // `q` shows only if q did not quit.
    session.keys(&["q", "?"]);
    session.wait_for("the help after q", |s| s.contains("keys 1-"));
    assert!(session.alive(), "q quit");
    session.keys(&["Escape"]);
    session.wait_for("the help closed", |s| !s.contains("keys 1-"));
    session.keys(&["x"]);
    session.wait_exit("x");
    let _ = std::fs::remove_dir_all(dir);
}
