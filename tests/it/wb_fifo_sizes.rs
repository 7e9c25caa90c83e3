//! The side-by-side FIFO view (issue #35 item 7) at the workbench's two screen sizes,
//! 160x45 and 80x24: the rows facing each other carry the same watch event, and every
//! marker is explained, at both — at 80x24 the workqueue box and the newest difference's
//! sentence give way so that the newest rows show with their markers.

use kscope_informers::fifo::FifoKind;
use kscope_ui::deltas::SideBySide;
use kscope_ui::state::UiState;

use crate::tui_fifo::{crafted_handoffs, render};

#[tokio::test]
async fn side_by_side_at_160x45_and_80x24() {
    let handoffs = crafted_handoffs().await;
    for (width, height) in [(160, 45), (80, 24)] {
        let mut view = SideBySide::new(FifoKind::Classic, FifoKind::Real).expect("two FIFOs");
        for handoff in &handoffs {
            view.take(handoff);
        }
        let mut state = UiState::new(true);
        state.deltas.pipeline = "classic | real · via watchList".into();
        state.deltas.side_by_side = Some(view);
        let shown = render(&mut state, width, height).backend().to_string();
        // Each event row shown has both FIFOs' handoffs of it facing each other; at 160x45
        // all four events are shown, at 80x24 the newest.
        let rows: Vec<&str> = shown.lines().filter(|l| l.contains("│shop/web-")).collect();
        let expected = if height >= 45 { 4 } else { 2 };
        assert_eq!(rows.len(), expected, "{width}x{height}: {shown}");
        for row in &rows {
            assert_eq!(row.matches(" │ #").count(), 2, "{row}");
        }
        for marker in ["≠merged", "≠order", "≠relist", "≠resync"] {
            assert!(
                shown
                    .lines()
                    .any(|l| l.contains(marker) && !l.contains("│shop/")),
                "{marker} is explained at {width}x{height}: {shown}"
            );
        }
        insta::assert_snapshot!(format!("side_by_side_{width}x{height}"), shown);
    }
}
