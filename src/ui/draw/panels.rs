//! The bottom panels: the delta stream tail (left) and the view's workqueue (right).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use super::{Screen, Theme, seconds};
use crate::resources::Timestamp;
use crate::ui::state::{DeltaLine, Focus};

const QUEUE_WIDTH: u16 = 28;

pub fn draw(frame: &mut Frame, area: Rect, screen: &Screen, theme: Theme) {
    let [deltas, queue] =
        Layout::horizontal([Constraint::Min(20), Constraint::Length(QUEUE_WIDTH)]).areas(area);
    draw_deltas(frame, deltas, screen, theme);
    draw_queue(frame, queue, screen, theme);
}

fn age(line: &DeltaLine, now: std::time::SystemTime) -> String {
    let secs = now
        .duration_since(line.at)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    Timestamp::from_seconds(0).human_since(Timestamp::from_seconds(secs))
}

fn draw_deltas(frame: &mut Frame, area: Rect, screen: &Screen, theme: Theme) {
    let state = screen.state;
    let mut title = String::from(" deltas ");
    if state.paused {
        title.push_str(&format!("(paused, {} skipped) ", state.skipped));
    } else if state.delta_scroll > 0 {
        title.push_str(&format!("(scrolled up {}) ", state.delta_scroll));
    }
    let mut block = Block::bordered().title(title);
    if state.focus == Focus::Deltas {
        block = block.border_style(theme.title());
    }
    let height = usize::from(area.height.saturating_sub(2));
    let end = state.deltas.len().saturating_sub(state.delta_scroll);
    let start = end.saturating_sub(height);
    let lines: Vec<Line> = state
        .deltas
        .range(start..end)
        .map(|d| {
            Line::from(vec![
                Span::styled(format!("{:<8}", d.kind), theme.title()),
                Span::raw(format!(" {} ", d.key)),
                Span::styled(
                    format!("rv {} {} ", d.resource_version, age(d, screen.now)),
                    theme.dim(),
                ),
                Span::raw(d.detail.clone()),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

fn draw_queue(frame: &mut Frame, area: Rect, screen: &Screen, _theme: Theme) {
    let q = screen.queue;
    let lines = vec![
        Line::raw(format!("depth      {}", q.depth)),
        Line::raw(format!("adds       {}", q.adds)),
        Line::raw(format!("coalesced  {}", q.coalesced_adds)),
        Line::raw(format!("in flight  {}", q.in_flight)),
        Line::raw(format!("retries    {}", q.retries)),
        Line::raw(format!(
            "latency    {} / {}",
            seconds(q.latency_p50),
            seconds(q.latency_p99)
        )),
        Line::raw(format!("work p99   {}", seconds(q.work_p99))),
    ];
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" workqueue p50/p99 ")),
        area,
    );
}
