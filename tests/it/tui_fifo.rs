//! The delta panel's pipelines: `:fifo` and its keys restart the table's informer with
//! another FIFO, or with two side by side on one watch stream; the side-by-side view marks
//! where they differ. TestBackend snapshots of a crafted stream through the real FIFOs, and
//! the real event loop over the sim.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kscope_client::cluster::Cluster;
use kscope_index_views::definitions::default_index_definitions;
use kscope_index_views::live::{LiveView, SortSpec};
use kscope_index_views::query::Query;
use kscope_index_views::registry::IndexRegistry;
use kscope_informers::delta_fifo::ReflectorStore;
use kscope_informers::fifo::{FifoKind, Handoff};
use kscope_informers::indexer::IndexerWriter;
use kscope_informers::informer::SharedIndexInformer;
use kscope_informers::instrument::compare::{DifferenceKind, TeeStore};
use kscope_resources::{Pod, Timestamp};
use kscope_sim::{Sim, SimConfig};
use kscope_ui::app::{App, Observer};
use kscope_ui::deltas::SideBySide;
use kscope_ui::draw::{self, Header, Parts};
use kscope_ui::state::UiState;
use kscope_ui::table::capture;
use parking_lot::Mutex;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use crate::common::pod::{NOW, pod};
use crate::common::tui;

/// The crafted stream through a classic and a RealFIFO pipeline fed by one TeeStore, as a
/// compared informer's Reflector feeds them: a list of web-1 and web-2, then web-1 updated
/// twice before either pipeline pops. Returns both pipelines' handoffs, classic's first.
pub(crate) async fn crafted_handoffs() -> Vec<Arc<Handoff>> {
    let (classic, classic_process) = SharedIndexInformer::<Pod>::with_fifo(
        IndexerWriter::default(),
        None,
        None,
        FifoKind::Classic,
    );
    let (real, real_process) =
        SharedIndexInformer::<Pod>::with_fifo(IndexerWriter::default(), None, None, FifoKind::Real);
    let mut receivers = [classic.subscribe_handoffs(), real.subscribe_handoffs()];
    let tee = TeeStore::new(classic.store().clone(), real.store().clone());
    tee.replace(
        vec![
            pod("shop", "web-1").rv(1).created(NOW - 600).decoded(),
            pod("shop", "web-2").rv(1).created(NOW - 600).decoded(),
        ],
        "1",
    )
    .expect("keyed");
    tee.update(pod("shop", "web-1").rv(2).created(NOW - 600).decoded())
        .expect("keyed");
    tee.update(pod("shop", "web-1").rv(3).created(NOW - 600).decoded())
        .expect("keyed");
    // Stopped with everything queued: each process loop pops it all, then ends.
    classic.stop();
    real.stop();
    classic_process.run().await;
    real_process.run().await;
    let mut handoffs = Vec::new();
    for receiver in &mut receivers {
        while let Ok(handoff) = receiver.try_recv() {
            handoffs.push(handoff);
        }
    }
    handoffs
}

pub(crate) fn render(state: &mut UiState, width: u16, height: u16) -> Terminal<TestBackend> {
    let (registry, _store) =
        IndexRegistry::<Pod>::new(default_index_definitions()).expect("indexes");
    let view =
        Mutex::new(LiveView::new(registry, Query::default(), SortSpec::default()).expect("view"));
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    let columns = view.lock().columns();
    let header = Header {
        sync: "watching at rv 3 · via watchList".into(),
        ..tui::pods_header()
    };
    let parts = Parts {
        header: &header,
        columns: &columns,
        with_namespace: true,
        now: std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(NOW as u64),
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

/// A key updated twice between two pops: one merged Deltas under classic (marked merged),
/// two items under RealFIFO, the first of them marked for the order it changes.
#[tokio::test]
async fn side_by_side_marks_a_merged_update_under_classic_and_two_items_under_real() {
    let handoffs = crafted_handoffs().await;
    let mut view = SideBySide::new(FifoKind::Classic, FifoKind::Real).expect("two FIFOs");
    for handoff in &handoffs {
        view.take(handoff);
    }
    let events = |side: usize| -> Vec<Vec<String>> {
        view.columns[side]
            .iter()
            .map(|l| {
                l.events
                    .iter()
                    .map(|e| format!("{} {}", e.id, e.how))
                    .collect()
            })
            .collect()
    };
    assert_eq!(
        events(0),
        [
            vec![
                "shop/web-1 @1 Replaced",
                "shop/web-1 @2 Updated",
                "shop/web-1 @3 Updated"
            ],
            vec!["shop/web-2 @1 Replaced"],
        ],
        "classic merges a key's deltas into one item"
    );
    assert_eq!(
        events(1),
        [
            vec!["shop/web-1 @1 Replaced", "shop/web-2 @1 Replaced"],
            vec!["shop/web-1 @2 Updated"],
            vec!["shop/web-1 @3 Updated"],
        ],
        "RealFIFO hands each event as its own item"
    );
    // Aligned by event: each row's two handoffs carried the same watch event; classic's #0
    // spans three rows, and real's numbers going back (#0 after #2) show the order change.
    let rows: Vec<(String, Option<u64>, Option<u64>)> = view
        .aligned()
        .iter()
        .map(|r| {
            let seq = |side: usize| r.sides[side].as_ref().map(|c| c.handoff.seq);
            (r.event.to_string(), seq(0), seq(1))
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("shop/web-1 @1".to_string(), Some(0), Some(0)),
            ("shop/web-1 @2".to_string(), Some(0), Some(1)),
            ("shop/web-1 @3".to_string(), Some(0), Some(2)),
            ("shop/web-2 @1".to_string(), Some(1), Some(0)),
        ]
    );
    assert!(
        view.columns[0][0].marks.contains(&DifferenceKind::Merged),
        "{view:?}"
    );
    // Classic's merged item hands web-1's Updated@2 before web-2's Replaced@1; RealFIFO
    // hands them in arrival order: the pair completes on real's side.
    let real_marks: Vec<&[DifferenceKind]> =
        view.columns[1].iter().map(|l| l.marks.as_slice()).collect();
    assert_eq!(
        real_marks,
        [&[][..], &[DifferenceKind::Order][..], &[][..]],
        "{view:?}"
    );
    assert_eq!(view.counts, [1, 1, 0, 0], "{}", view.summary());

    let mut state = UiState::new(true);
    state.deltas.pipeline = "classic | real · via watchList".into();
    state.deltas.side_by_side = Some(view);
    let terminal = render(&mut state, 160, 30);
    let shown = terminal.backend().to_string();
    insta::assert_snapshot!(shown);
    assert!(
        shown.contains("handoffs side by side · classic | real · via watchList"),
        "{shown}"
    );
    assert!(
        shown.contains("differences: merged 1 · order 1 · relist 0 · resync 0"),
        "{shown}"
    );
    assert!(
        shown.contains("shop/web-1 @1 │ #0  i Replaced ≠merged"),
        "{shown}"
    );
    assert!(shown.contains("│ #1    Updated ≠order"), "{shown}");
    assert!(
        shown.contains("≠order handed in the other order"),
        "the markers are explained: {shown}"
    );
    assert!(shown.contains("handed in opposite orders"), "{shown}");
}

/// The tail (one pipeline) says which FIFO and which initial-list mode, and why it fell
/// back when it did.
#[tokio::test]
async fn the_delta_panel_says_the_fifo_and_how_the_initial_state_was_read() {
    let mut state = UiState::new(true);
    state.deltas.pipeline = "real · via list (the watch-list failed: 403)".into();
    let shown = render(&mut state, 120, 30).backend().to_string();
    assert!(
        shown.contains("deltas · real · via list (the watch-list failed: 403)"),
        "{shown}"
    );
}

fn key(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

/// Each time a frame shows the side-by-side view of new pipelines, listed and with handoffs
/// from both, notes them and types the next key of `then` (popped from the end); ends the
/// loop when none is left, or past a deadline.
struct Driver {
    keys: futures::channel::mpsc::UnboundedSender<std::io::Result<Event>>,
    then: Vec<Event>,
    seen: Vec<(FifoKind, Option<FifoKind>, usize, usize)>,
    deadline: Instant,
}

impl Observer for Driver {
    fn drawn(&mut self, app: &App) -> bool {
        let Some(view) = &app.state().deltas.side_by_side else {
            return Instant::now() < self.deadline;
        };
        let handed = |side: usize| view.columns[side].len();
        let both_listed = app.header().listed && handed(0) > 0 && handed(1) > 0;
        let pipelines = app.table().pipelines();
        if both_listed && self.seen.last().map(|s| (s.0, s.1)) != Some(pipelines) {
            self.seen
                .push((pipelines.0, pipelines.1, handed(0), handed(1)));
            match self.then.pop() {
                Some(next) => self
                    .keys
                    .unbounded_send(Ok(next))
                    .expect("the loop listens"),
                None => return false,
            }
        }
        Instant::now() < self.deadline
    }
}

/// Over the sim through the real event loop: `:fifo classic real` restarts the table's
/// informer with two pipelines on one watch stream, and the delta panel shows both
/// pipelines' handoffs of the initial state; `p` (delta panel focused) moves on to the
/// next FIFO, keeping the side-by-side view against the FIFO it left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifo_command_and_keys_restart_the_table_with_the_pipelines_shown() {
    let sim = Sim::start(SimConfig::with_size(40, 3, 2))
        .await
        .expect("sim");
    let cluster = Cluster::from_config(sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let app = tui::AppStart::pods(cluster).panels().start();
    let (keys, events) = futures::channel::mpsc::unbounded();
    let mut typed: Vec<Event> = vec![key(KeyCode::Char(':'))];
    typed.extend("fifo classic real".chars().map(|c| key(KeyCode::Char(c))));
    typed.extend([key(KeyCode::Enter), key(KeyCode::Tab)]);
    for event in typed {
        keys.unbounded_send(Ok(event)).expect("the loop listens");
    }
    let mut driver = Driver {
        keys,
        then: vec![key(KeyCode::Char('F'))],
        seen: Vec::new(),
        deadline: Instant::now() + Duration::from_secs(90),
    };
    let mut terminal = Terminal::new(TestBackend::new(140, 40)).expect("terminal");
    tokio::time::timeout(
        Duration::from_secs(120),
        app.run(
            &mut terminal,
            events,
            futures::stream::pending(),
            &mut driver,
        ),
    )
    .await
    .expect("the loop ends")
    .expect("the loop ran");
    let pipelines: Vec<(FifoKind, Option<FifoKind>)> =
        driver.seen.iter().map(|s| (s.0, s.1)).collect();
    assert_eq!(
        pipelines,
        [
            (FifoKind::Classic, Some(FifoKind::Real)),
            (FifoKind::Real, Some(FifoKind::Classic)),
        ],
        "`:fifo classic real`, then p: {:?}",
        driver.seen
    );
    let shown = terminal.backend().to_string();
    assert!(shown.contains("classic FIFO"), "{shown}");
    assert!(shown.contains("real FIFO"), "{shown}");
    assert!(
        shown.contains("handoffs side by side · real | classic · via watchList"),
        "{shown}"
    );
    sim.shutdown().await;
}
