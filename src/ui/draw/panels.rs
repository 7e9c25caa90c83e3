//! The bottom panels: the delta stream tail (left) and the view's workqueue (right).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Sparkline};

use super::text::seconds;
use crate::action::{Action, Focus, InputMode};
use crate::component::{Component, Context};
use crate::deltas::{DeltaClass, DeltaLine, DeltaPanel, RowCell, SideBySide};
use crate::effect::Effect;
use crate::queue::QueuePanel;
use crate::screen::{Screen, Theme};
use kscope_resources::Timestamp;

/// The workqueue box takes this share of the width, within these bounds: wide enough for
/// its numbers, and at most what a full minute of sparkline needs.
const QUEUE_MIN_WIDTH: u16 = 30;
const QUEUE_MAX_WIDTH: u16 = 92;
/// The numbers column inside the workqueue box.
const STATS_WIDTH: u16 = 22;
/// A sparkline's label column, and the narrowest sparkline worth drawing.
const SPARK_LABEL: u16 = 7;
const SPARK_MIN: u16 = 8;

/// Below this width the workqueue box gives way to the side-by-side view whole.
const SIDE_BY_SIDE_ALONE: u16 = 120;

pub fn draw(frame: &mut Frame, area: Rect, screen: &Screen) {
    // Two columns of handoffs need the width more than the queue's sparklines do: on a
    // narrow screen (80x24), all of it, so each side's markers show.
    let queue_width = match screen.state.deltas.side_by_side {
        Some(_) if area.width < SIDE_BY_SIDE_ALONE => 0,
        Some(_) => QUEUE_MIN_WIDTH,
        None => (area.width * 9 / 20).clamp(QUEUE_MIN_WIDTH, QUEUE_MAX_WIDTH),
    };
    let [deltas, queue] =
        Layout::horizontal([Constraint::Min(20), Constraint::Length(queue_width)]).areas(area);
    screen.state.deltas.draw(frame, deltas, screen);
    if queue.width > 0 {
        screen.state.queue.draw(frame, queue, screen);
    }
}

/// Columns of changed fields a line must have room for after its key and resourceVersion;
/// with less, they come before the key, so that a narrow panel (80x24) still shows them.
const CHANGED_FIELDS_ROOM: usize = 16;

/// The delta panel's legend, longest first: the first that fits the border is shown.
const DELTA_LEGENDS: [&str; 3] = [
    " UPPERCASE = watch event off the wire (ADDED MODIFIED DELETED BOOKMARK) · Capitalised = \
     delta the informer applied (Added Updated Deleted Replaced Sync) ",
    " ADDED MODIFIED… = watch event · Added Updated Replaced Sync… = delta applied ",
    " ADDED = watch event · Added = delta applied ",
];

/// The side-by-side view's rows and markers, explained; longest first as [`DELTA_LEGENDS`].
const HANDOFF_LEGENDS: [&str; 4] = [
    "a row is one event; each side: #n the handoff that carried it (i: in the initial list), \
     — not handed as this event · ≠merged a key's deltas in one item · ≠order handed in the \
     other order · ≠relist / ≠resync a relist / resync as one item",
    "row = one event · #n the handoff that carried it (i: initial list; —: none) · ≠merged a \
     key's deltas as one item · ≠order handed in another order · ≠relist/≠resync as one item",
    "row = event · #n handoff (i: initial; —: none) · ≠merged deltas in one item · ≠order \
     other order · ≠relist/≠resync as one item",
    "row = event · #n handoff · i initial · ≠ differs",
];

/// The longest of `legends` that fits `width` columns (the last one otherwise, cut).
fn legend(legends: &[&'static str], width: u16) -> &'static str {
    legends
        .iter()
        .find(|l| l.chars().count() <= usize::from(width))
        .or(legends.last())
        .copied()
        .unwrap_or_default()
}

fn age(line: &DeltaLine, now: std::time::SystemTime) -> String {
    let secs = now
        .duration_since(line.at)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    Timestamp::from_seconds(0).human_since(Timestamp::from_seconds(secs))
}

/// The delta stream's tail, or two pipelines' handoffs side by side.
pub(crate) fn draw_deltas(frame: &mut Frame, area: Rect, state: &DeltaPanel, screen: &Screen) {
    let theme = screen.theme();
    let focused = screen.state.focus == Focus::Deltas;
    if let Some(view) = &state.side_by_side {
        draw_side_by_side(frame, area, view, &state.pipeline, focused, theme);
        return;
    }
    let height = usize::from(area.height.saturating_sub(2));
    let window = state.window(height);
    // Said in words too, not only by the border's colour (NO_COLOR has none).
    let mut title = String::from(if focused {
        " ▶ deltas (focused) "
    } else {
        " deltas "
    });
    if !state.pipeline.is_empty() {
        title.push_str(&format!("· {} ", state.pipeline));
    }
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
    let mut block = Block::bordered().title(title).title_bottom(Span::styled(
        legend(&DELTA_LEGENDS, area.width.saturating_sub(2)),
        theme.dim(),
    ));
    if focused {
        block = block.border_style(theme.title());
    }
    let inner_width = usize::from(area.width.saturating_sub(2));
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
            let kind = Span::styled(format!("{:<8}", d.kind), kind);
            let key = Span::raw(format!(" {} ", d.key));
            let rv = Span::styled(
                format!("rv {} {} ", d.resource_version, age(d, screen.now)),
                theme.dim(),
            );
            let text = d.detail.text();
            let before = kind.width() + key.width() + rv.width();
            let line = if before + CHANGED_FIELDS_ROOM <= inner_width || text.is_empty() {
                Line::from(vec![kind, key, rv, Span::styled(text.to_string(), detail)])
            } else {
                // Narrow: what changed first, then whose, then when.
                let text = Span::styled(format!(" {text} ·"), detail);
                let key = Span::raw(if d.key.is_empty() {
                    " ".to_string()
                } else {
                    format!(" {} ", d.key)
                });
                Line::from(vec![kind, text, key, rv])
            };
            if focused && window.selected == Some(i) {
                line.style(theme.selected())
            } else {
                line
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// Two pipelines' handoffs in two columns, newest at the bottom, a difference marked on the
/// handoff that shows it (`≠merged`); the differences counted, and the newest said in
/// full, on the last two lines.
fn draw_side_by_side(
    frame: &mut Frame,
    area: Rect,
    view: &SideBySide,
    pipeline: &str,
    focused: bool,
    theme: Theme,
) {
    let marker = if focused { "▶ " } else { "" };
    let mut title = format!(" {marker}handoffs side by side · {pipeline} ");
    if view.skipped > 0 {
        title.push_str(&format!("({} skipped) ", view.skipped));
    }
    let mut block = Block::bordered().title(title);
    if focused {
        block = block.border_style(theme.title());
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    // A short panel (80x24) too short for every row keeps them for the handoffs: the
    // newest difference's sentence gives way, its count stays. A taller one scrolls.
    let rows = view.aligned().len() + 1;
    let latest_lines = if inner.height < SHORT_PANEL && usize::from(inner.height) < rows + 4 {
        1
    } else {
        2
    };
    let [columns, latest, markers] = Layout::vertical([
        Constraint::Fill(1),
        Constraint::Length(latest_lines),
        Constraint::Length(2),
    ])
    .areas(inner);
    // Two lines of legend: the longest that fits in them, wrapped.
    frame.render_widget(
        Paragraph::new(Line::styled(
            legend(
                &HANDOFF_LEGENDS,
                markers.width.saturating_mul(2).saturating_sub(8),
            ),
            theme.dim(),
        ))
        .wrap(ratatui::widgets::Wrap { trim: true }),
        markers,
    );
    draw_aligned(frame, columns, view, theme);
    let latest_text = view
        .latest
        .as_deref()
        .unwrap_or("no difference yet: both handed the same");
    frame.render_widget(
        Paragraph::new(vec![
            Line::styled(format!("differences: {}", view.summary()), theme.warn()),
            Line::styled(latest_text.to_string(), theme.warn()),
        ]),
        latest,
    );
}

/// Inside heights below which the side-by-side view may say the newest difference in one
/// line.
const SHORT_PANEL: u16 = 10;

/// `text` cut or padded to `width` columns.
fn fit(text: &str, width: usize) -> String {
    let cut: String = text.chars().take(width).collect();
    format!("{cut:<width$}")
}

/// The events as rows, each pipeline's handoff that carried it facing the other's, newest
/// at the bottom: `shop/web-1 @2 │ #0 i Updated ≠merged │ #1 Updated ≠order`.
fn draw_aligned(frame: &mut Frame, area: Rect, view: &SideBySide, theme: Theme) {
    let rows = view.aligned();
    let height = usize::from(area.height.saturating_sub(1));
    let shown = &rows[rows.len().saturating_sub(height)..];
    let width = usize::from(area.width);
    let event_width = shown
        .iter()
        .map(|r| r.event.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(5, (width / 3).max(5));
    let cell_width = width.saturating_sub(event_width + 6) / 2;
    let bar = || Span::styled(" │ ", theme.dim());
    let mut lines = vec![Line::from(vec![
        Span::styled(fit("event", event_width), theme.title()),
        bar(),
        Span::styled(
            fit(&format!("{} FIFO", view.fifos[0]), cell_width),
            theme.title(),
        ),
        bar(),
        Span::styled(format!("{} FIFO", view.fifos[1]), theme.title()),
    ])];
    for row in shown {
        let mut spans = vec![Span::raw(fit(row.event, event_width))];
        for (side, cell) in row.sides.iter().enumerate() {
            spans.push(bar());
            let cell_spans = cell.as_ref().map_or_else(
                || vec![Span::styled("—".to_string(), theme.dim())],
                |cell| handoff_cell(cell, theme),
            );
            if side == 0 {
                // Padded to the column, so the second side starts where its title does.
                let used: usize = cell_spans.iter().map(|s| s.content.chars().count()).sum();
                spans.extend(cell_spans);
                spans.push(Span::raw(" ".repeat(cell_width.saturating_sub(used))));
            } else {
                spans.extend(cell_spans);
            }
        }
        lines.push(Line::from(spans));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

/// One side of a row: the handoff's number (`i` when in the initial list), how it handed
/// the event, and on the handoff's first event the differences marked on it.
fn handoff_cell(cell: &RowCell<'_>, theme: Theme) -> Vec<Span<'static>> {
    let handoff = cell.handoff;
    let mut spans = vec![
        Span::styled(
            format!(
                "#{:<3}{} ",
                handoff.seq,
                if handoff.initial { "i" } else { " " }
            ),
            theme.dim(),
        ),
        Span::raw(cell.how.to_string()),
    ];
    if cell.first {
        for mark in &handoff.marks {
            spans.push(Span::styled(format!(" ≠{}", mark.as_str()), theme.warn()));
        }
    }
    spans
}

/// The view's workqueue and the informer's FIFO: numbers, then sparklines where they fit.
pub(crate) fn draw_queue(frame: &mut Frame, area: Rect, panel: &QueuePanel, screen: &Screen) {
    let theme = screen.theme();
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
            row("behind", seconds(i.behind_for)),
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

/// The panel takes the movement keys while focused, and the keys of its filter line while
/// one is typed ([`InputMode::DeltaFilter`]).
impl Component for DeltaPanel {
    fn handle(&mut self, action: &Action, ctx: &Context<'_>) -> Option<Effect> {
        match ctx.mode {
            InputMode::DeltaFilter => {
                let table = ctx.table;
                self.edit_filter(action, |name, value| table.index_keys(name, value))
            }
            _ => self.handle_key(action, ctx.layout.delta_rows()),
        }
    }

    fn draw(&self, frame: &mut Frame, area: Rect, screen: &Screen<'_>) {
        draw_deltas(frame, area, self, screen);
    }
}

/// Read-only: the panel has no keys of its own, so everything typed with it on screen is
/// the main screen's.
impl Component for QueuePanel {
    fn handle(&mut self, _: &Action, _: &Context<'_>) -> Option<Effect> {
        Some(Effect::Pass)
    }

    fn draw(&self, frame: &mut Frame, area: Rect, screen: &Screen<'_>) {
        draw_queue(frame, area, self, screen);
    }
}
