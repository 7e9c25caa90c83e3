//! Frames drawn on a large view while changes apply between them: the selection moves one row
//! per frame, the window copied out follows it, and index filters rebuild to the right rows.
//! What a frame costs is measured by `cargo bench --bench tui`, not here.

use std::sync::Arc;

use kscope_index_views::definitions::default_index_definitions;
use kscope_index_views::live::{LiveView, SortSpec};
use kscope_index_views::query::Query;
use kscope_index_views::registry::IndexRegistry;
use kscope_resources::{Pod, Timestamp};
use kscope_ui::draw::{self, Header, Screen};
use kscope_ui::layout::Layout;
use kscope_ui::state::UiState;
use kscope_ui::table::capture;
use parking_lot::Mutex;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use crate::common::pod::{NOW, pod};
use crate::common::tui;

const PODS: usize = 15_000;

/// Pod `i` of [`PODS`], spread over 30 namespaces, 500 apps and 100 nodes, its container
/// restarted `restarts` times (also its resourceVersion: each update a new one).
fn member(i: usize, restarts: u32) -> Arc<Pod> {
    pod(&format!("ns-{}", i % 30), &format!("pod-{i:06}"))
        .rv(u64::from(restarts))
        .app(&format!("app-{}", i % 500))
        .node(&format!("node-{}", i % 100))
        .restarts(restarts)
        .created(NOW - 31 * 86_400)
        .decoded()
}

#[test]
fn frames_follow_the_selection_while_rows_change() {
    let (registry, store) =
        IndexRegistry::<Pod>::new(default_index_definitions()).expect("indexes");
    for i in 0..PODS {
        store.add(member(i, 0)).expect("add");
    }
    let view = Mutex::new(
        LiveView::new(registry.clone(), Query::default(), SortSpec::default()).expect("view"),
    );
    let mut state = UiState::new(true);
    let mut terminal = Terminal::new(TestBackend::new(160, 50)).expect("terminal");
    let header = Header {
        context: "bench".into(),
        server: "https://127.0.0.1".into(),
        sync: "watching".into(),
        events_per_second: 1000.0,
        ..tui::pods_header()
    };
    let area = ratatui::layout::Rect::new(0, 0, 160, 50);
    let rows = Layout::new(area, state.panels).table_rows();
    let columns = view.lock().columns();

    let frames = 120;
    for frame in 0..frames {
        // 1,000 changes per second at 60 frames per second: about 17 between frames.
        for change in 0..17 {
            let i = (frame * 17 + change) * 7919 % PODS;
            store
                .update(member(i, u32::try_from(frame).expect("few frames") + 1))
                .expect("update");
            view.lock()
                .apply(&Arc::from(format!("ns-{}/pod-{i:06}", i % 30)));
        }
        {
            let mut v = view.lock();
            let next = v.selected_position().map_or(0, |p| p + 1);
            v.select_position(next);
        }
        let window = capture(
            &view,
            &mut state.table.scroll,
            rows,
            Timestamp::from_seconds(NOW),
        );
        assert_eq!(window.total, PODS);
        assert_eq!(window.selected, Some(frame), "one row down per frame");
        assert_eq!(window.rows.len(), rows);
        let shown = window.selected.expect("selected") - window.offset;
        assert!(shown < rows, "the selection is on screen");
        let layout = Layout::new(area, state.panels);
        let screen = Screen {
            state: &state,
            header: &header,
            layout: &layout,
            columns: &columns,
            with_namespace: true,
            window: &window,
            detail: None,
            now: std::time::SystemTime::now(),
            color: true,
        };
        terminal.draw(|f| draw::draw(f, &screen)).expect("draws");
        let drawn = format!("{:?}", terminal.backend().buffer());
        assert!(drawn.contains(window.rows[shown].key.rsplit('/').next().expect("name")));
    }
    let filtered = LiveView::new(
        registry.clone(),
        Query::parse("app=app-7").expect("query"),
        SortSpec::default(),
    )
    .expect("filtered view");
    let cleared = LiveView::new(registry.clone(), Query::default(), SortSpec::default())
        .expect("unfiltered view");
    assert_eq!(cleared.len(), PODS);
    assert_eq!(filtered.len(), PODS / 500);
}
