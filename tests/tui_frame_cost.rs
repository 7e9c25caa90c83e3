//! What one frame costs on a large view: 150,000 pods, a change applied between frames, the
//! selection moved, the visible window copied out and drawn. Prints the numbers; the bound
//! asserted is loose because tests run unoptimised on shared machines.

use std::sync::Arc;
use std::time::{Duration, Instant};

use kscope::index_views::definitions::default_index_definitions;
use kscope::index_views::live::{LiveView, SortSpec};
use kscope::index_views::query::Query;
use kscope::index_views::registry::IndexRegistry;
use kscope::resources::{Pod, Timestamp, decode};
use kscope::ui::app::capture;
use kscope::ui::draw::{self, Header, QueueStats, Screen};
use kscope::ui::state::UiState;
use parking_lot::Mutex;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const PODS: usize = 150_000;
const NOW: i64 = 1_767_225_600;

fn pod(i: usize, restarts: usize) -> Arc<Pod> {
    let json = format!(
        r#"{{"metadata":{{"name":"pod-{i:06}","namespace":"ns-{}","resourceVersion":"{restarts}",
            "creationTimestamp":"2025-12-01T00:00:00Z","labels":{{"app":"app-{}"}}}},
            "spec":{{"nodeName":"node-{}","containers":[{{"name":"c","image":"nginx"}}]}},
            "status":{{"phase":"Running","containerStatuses":[{{"name":"c","ready":true,"restartCount":{restarts}}}]}}}}"#,
        i % 30,
        i % 500,
        i % 100
    );
    Arc::new(decode(json.as_bytes()).expect("pod decodes"))
}

#[test]
fn frame_and_keystroke_cost_at_150k_pods() {
    let registry = IndexRegistry::<Pod>::new(default_index_definitions()).expect("indexes");
    for i in 0..PODS {
        registry.indexer().add(pod(i, 0)).expect("add");
    }
    let view = Mutex::new(
        LiveView::new(registry.clone(), Query::default(), SortSpec::default()).expect("view"),
    );
    let mut state = UiState::new(true);
    let mut terminal = Terminal::new(TestBackend::new(160, 50)).expect("terminal");
    let header = Header {
        context: "bench".into(),
        server: "https://127.0.0.1".into(),
        resource: "pods".into(),
        scope: kscope::ui::ALL_NAMESPACES.into(),
        sync: "watching".into(),
        listed: true,
        error: None,
        events_per_second: 1000.0,
    };
    let queue = QueueStats::default();
    let area = ratatui::layout::Rect::new(0, 0, 160, 50);
    let rows = draw::table_rows(area, &state);
    let columns = view.lock().columns();

    let frames = 120;
    let mut frame_time = Duration::ZERO;
    let mut worst = Duration::ZERO;
    for frame in 0..frames {
        // 1,000 changes per second at 60 frames per second: about 17 between frames.
        for change in 0..17 {
            let i = (frame * 17 + change) * 7919 % PODS;
            registry
                .indexer()
                .update(pod(i, frame + 1))
                .expect("update");
            view.lock()
                .apply(&Arc::from(format!("ns-{}/pod-{i:06}", i % 30)));
        }
        let started = Instant::now();
        {
            let mut v = view.lock();
            let next = v.selected_position().map_or(0, |p| p + 1);
            v.select_position(next);
        }
        let window = capture(&view, &mut state, rows, Timestamp::from_seconds(NOW));
        let screen = Screen {
            state: &state,
            header: &header,
            columns: &columns,
            with_namespace: true,
            window: &window,
            queue: &queue,
            now: std::time::SystemTime::now(),
            color: true,
        };
        terminal.draw(|f| draw::draw(f, &screen)).expect("draws");
        let took = started.elapsed();
        frame_time += took;
        worst = worst.max(took);
    }
    let started = Instant::now();
    let filtered = LiveView::new(
        registry.clone(),
        Query::parse("app=app-7").expect("query"),
        SortSpec::default(),
    )
    .expect("filtered view");
    let filter_keystroke = started.elapsed();
    let started = Instant::now();
    let cleared = LiveView::new(registry.clone(), Query::default(), SortSpec::default())
        .expect("unfiltered view");
    let clear_keystroke = started.elapsed();
    let mean = frame_time / frames as u32;
    println!(
        "{PODS} pods: keystroke + frame mean {mean:?}, worst {worst:?}; \
         index filter rebuild {filter_keystroke:?} ({} rows); clearing it {clear_keystroke:?}",
        filtered.len()
    );
    assert_eq!(cleared.len(), PODS);
    assert_eq!(filtered.len(), PODS / 500);
    assert!(mean < Duration::from_millis(50), "mean frame {mean:?}");
}
