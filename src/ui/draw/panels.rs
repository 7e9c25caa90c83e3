//! The bottom panels: the delta stream tail (left) and the view's workqueue (right).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Sparkline};

use super::{Screen, Theme, seconds};
use crate::resources::Timestamp;
use crate::ui::action::Focus;
use crate::ui::deltas::{DeltaClass, DeltaLine};
use crate::ui::queue::QueuePanel;

/// The workqueue box takes this share of the width, within these bounds: wide enough for
/// its numbers, and at most what a full minute of sparkline needs.
const QUEUE_MIN_WIDTH: u16 = 30;
const QUEUE_MAX_WIDTH: u16 = 92;
/// The numbers column inside the workqueue box.
const STATS_WIDTH: u16 = 22;
/// A sparkline's label column, and the narrowest sparkline worth drawing.
const SPARK_LABEL: u16 = 7;
const SPARK_MIN: u16 = 8;

pub fn draw(frame: &mut Frame, area: Rect, screen: &Screen, theme: Theme) {
    let queue_width = (area.width * 9 / 20).clamp(QUEUE_MIN_WIDTH, QUEUE_MAX_WIDTH);
    let [deltas, queue] =
        Layout::horizontal([Constraint::Min(20), Constraint::Length(queue_width)]).areas(area);
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
    let state = &screen.state.deltas;
    let focused = screen.state.focus == Focus::Deltas;
    let height = usize::from(area.height.saturating_sub(2));
    let window = state.window(height);
    let mut title = String::from(" deltas ");
    if state.paused {
        title.push_str(&format!("(paused, {} skipped) ", state.skipped));
    }
    if state.filter.is_active() {
        title.push_str(&format!(
            "[{}] {}/{} ",
            state.filter.input,
            window.matching,
            state.lines.len()
        ));
    }
    if state.cursor.selected.is_some() {
        title.push_str(&format!("↓{} newer ", window.newer));
    }
    let mut block = Block::bordered().title(title);
    if focused {
        block = block.border_style(theme.title());
    }
    let lines: Vec<Line> = window
        .lines
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let (kind, detail) = match d.class() {
                DeltaClass::Object => (theme.title(), Style::default()),
                DeltaClass::Pipeline => (theme.warn(), theme.warn()),
                DeltaClass::Trouble => (theme.error(), theme.error()),
            };
            let line = Line::from(vec![
                Span::styled(format!("{:<8}", d.kind), kind),
                Span::raw(format!(" {} ", d.key)),
                Span::styled(
                    format!("rv {} {} ", d.resource_version, age(d, screen.now)),
                    theme.dim(),
                ),
                Span::styled(d.detail.text().to_string(), detail),
            ]);
            if focused && window.selected == Some(i) {
                line.style(theme.selected())
            } else {
                line
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

fn draw_queue(frame: &mut Frame, area: Rect, screen: &Screen, theme: Theme) {
    let panel = &screen.state.queue;
    let q = &panel.stats;
    let rate = panel
        .adds_per_second()
        .map_or_else(|| "-".to_string(), |r| format!("{r:.1}"));
    let row = |label: &str, value: String| {
        Line::from(vec![
            Span::styled(format!("{label:<10}"), theme.dim()),
            Span::raw(value),
        ])
    };
    // Most telling first: a short box cuts the last lines.
    let mut lines = vec![
        row("depth", q.depth.to_string()),
        row("adds/s", rate),
        row(
            "latency",
            format!("{}/{}", seconds(q.latency_p50), seconds(q.latency_p99)),
        ),
        row(
            "work",
            format!("{}/{}", seconds(q.work_p50), seconds(q.work_p99)),
        ),
        row("in flight", q.in_flight.to_string()),
        row("retries", q.retries.to_string()),
        row("coalesced", q.coalesced_adds.to_string()),
    ];
    if let Some(i) = &panel.informer {
        lines.extend([
            row("fifo", format!("{} {}", i.fifo, i.queued)),
            row(
                "process",
                format!(
                    "{}/{}",
                    seconds(i.processing_p50),
                    seconds(i.processing_p99)
                ),
            ),
            row(
                "rv lag",
                format!(
                    "{} (at {})",
                    i.resource_version_lag, i.store_resource_version
                ),
            ),
        ]);
    }
    let block = Block::bordered().title(" workqueue p50/p99 ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [stats, _, sparks] = Layout::horizontal([
        Constraint::Length(STATS_WIDTH),
        Constraint::Length(1),
        Constraint::Fill(1),
    ])
    .areas(inner);
    frame.render_widget(Paragraph::new(lines), stats);
    if sparks.width >= SPARK_LABEL + SPARK_MIN {
        draw_sparklines(frame, sparks, panel, theme);
    }
}

/// Adds per second over the top half, depth over the bottom, newest on the right.
fn draw_sparklines(frame: &mut Frame, area: Rect, panel: &QueuePanel, theme: Theme) {
    let [adds, depth] = Layout::vertical([Constraint::Fill(1), Constraint::Fill(1)]).areas(area);
    let adds_data: Vec<u64> = panel
        .samples()
        .iter()
        .map(|s| s.adds_per_second.round() as u64)
        .collect();
    let depth_data: Vec<u64> = panel
        .samples()
        .iter()
        .map(|s| u64::try_from(s.depth).unwrap_or(u64::MAX))
        .collect();
    for (label, data, area) in [("adds/s", adds_data, adds), ("depth", depth_data, depth)] {
        if area.height == 0 {
            continue;
        }
        let [labels, chart] =
            Layout::horizontal([Constraint::Length(SPARK_LABEL), Constraint::Fill(1)]).areas(area);
        let max = data.iter().copied().max();
        let mut text = vec![Line::styled(label, theme.dim())];
        if let Some(max) = max {
            text.push(Line::styled(format!("≤{max}"), theme.dim()));
        }
        frame.render_widget(Paragraph::new(text), labels);
        let shown = &data[data.len().saturating_sub(usize::from(chart.width))..];
        frame.render_widget(
            Sparkline::default()
                .data(shown)
                .max(max.unwrap_or(0).max(1))
                .style(theme.spark()),
            chart,
        );
    }
}
