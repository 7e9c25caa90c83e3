//! Draws the `:metrics` panel: the controller's own numbers, with what each family means, and
//! sparklines over the kept scrapes; beside them (below them when narrow) kscope's own
//! informer and workqueue on the kind it watches, titled so that it cannot be mistaken for
//! the controller.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Sparkline, Wrap};

use kscope_index_views::metrics::{Rates, Reading};

use crate::action::Action;
use crate::component::{Component, Context};
use crate::effect::Effect;
use crate::metrics::MetricsPanel;
use crate::queue::QueuePanel;
use crate::screen::{Screen, Theme};

/// The title of kscope's side: what it is, in words that cannot be mistaken.
pub const MODEL_TITLE: &str = " kscope's own informer (a model, not the controller) ";

/// Width of a row's label.
const LABEL: usize = 18;

impl Component for MetricsPanel {
    fn handle(&mut self, action: &Action, _ctx: &Context<'_>) -> Option<Effect> {
        self.handle_key(action)
    }

    fn draw(&self, frame: &mut Frame, area: Rect, screen: &Screen<'_>) {
        draw(frame, area, self, Some(&screen.state.queue), screen.theme());
    }
}

fn number(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}"))
}

fn millis(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{:.0}ms", v * 1000.0))
}

fn row(theme: Theme, label: &str, value: String, meaning: &str) -> Line<'static> {
    let mut spans = vec![
        Span::styled(format!("{label:<LABEL$}"), theme.fg(Color::DarkGray)),
        Span::raw(value),
    ];
    if !meaning.is_empty() {
        spans.push(Span::styled(
            format!("  {meaning}"),
            theme.fg(Color::DarkGray),
        ));
    }
    Line::from(spans)
}

fn heading(theme: Theme, text: &str) -> Line<'static> {
    Line::styled(text.to_string(), theme.title())
}

/// Draws the panel over `area`: a title naming what was asked for and the pod read, the
/// newest failure in plain words, then both sides.
pub fn draw(
    frame: &mut Frame,
    area: Rect,
    panel: &MetricsPanel,
    model: Option<&QueuePanel>,
    theme: Theme,
) {
    // A workload's pod is named (it was chosen); a pod's own name is not said twice.
    let read = match &panel.target {
        None => "finding its pod".to_string(),
        Some(t) if panel.asked.starts_with(&format!("pod/{} ", t.pod)) => {
            format!("port {}", t.port)
        }
        Some(t) => format!("pod {}:{}", t.pod, t.port),
    };
    let block = Block::bordered()
        .title(Span::styled(
            format!(" :metrics {} · {read} ", panel.asked),
            theme.title(),
        ))
        .title_bottom(Span::styled(
            format!(
                " esc back · scraped every {}s, only while shown · {} scrapes ",
                panel.interval.as_secs_f64(),
                panel.scrapes
            ),
            theme.dim(),
        ));
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    let (message, body) = match &panel.error {
        Some(why) => {
            let text = Paragraph::new(Line::styled(why.clone(), theme.fg(Color::Red)))
                .wrap(Wrap { trim: true });
            let chars = u16::try_from(why.chars().count()).unwrap_or(u16::MAX);
            let rows = chars.div_ceil(inner.width.max(1)).min(inner.height / 2);
            let [message, body] =
                Layout::vertical([Constraint::Length(rows), Constraint::Fill(1)]).areas(inner);
            (Some((text, message)), body)
        }
        None => (None, inner),
    };
    if let Some((text, at)) = message {
        frame.render_widget(text, at);
    }
    let [real, own] = if body.width >= 120 {
        Layout::horizontal([Constraint::Percentage(64), Constraint::Fill(1)]).areas(body)
    } else {
        Layout::vertical([Constraint::Fill(3), Constraint::Length(6)]).areas(body)
    };
    draw_controller(frame, real, panel, theme);
    draw_model(frame, own, panel, model, theme);
}

/// The families kscope gives meaning, newest scrape and rates since the one before.
/// `compact` (a short panel) leaves out the headings and what each number means, so that the
/// API requests (409s, 429s) still show at 80x24.
fn controller_lines(
    latest: &Reading,
    rates: Option<&Rates>,
    theme: Theme,
    compact: bool,
) -> Vec<Line<'static>> {
    let row = |theme, label: &str, value, meaning: &str| {
        row(theme, label, value, if compact { "" } else { meaning })
    };
    let section = |lines: &mut Vec<Line<'static>>, text: &str| {
        if !compact {
            lines.push(heading(theme, text));
        }
    };
    let by_result = rates.map_or_else(
        || "-".to_string(),
        |r| {
            r.reconciles_per_second_by_result
                .iter()
                .map(|(k, v)| format!("{k} {v:.1}"))
                .collect::<Vec<_>>()
                .join("  ")
        },
    );
    let loud = |n: f64| {
        if n > 0.0 {
            theme.fg(Color::Yellow).add_modifier(Modifier::BOLD)
        } else {
            Style::new()
        }
    };
    let codes = latest
        .requests_by_code
        .iter()
        .map(|(code, n)| {
            Span::styled(
                format!("{code}={n} "),
                loud(if code == "409" || code == "429" {
                    *n
                } else {
                    0.0
                }),
            )
        })
        .collect::<Vec<_>>();
    let mut lines = Vec::new();
    section(&mut lines, "workqueue (controller-runtime / client-go)");
    lines.extend([
        row(
            theme,
            "depth",
            number(latest.depth()),
            "keys waiting for a worker",
        ),
        row(
            theme,
            "adds/s",
            number(rates.and_then(|r| r.adds_per_second)),
            "keys queued",
        ),
        row(
            theme,
            "retries/s",
            number(rates.and_then(|r| r.retries_per_second)),
            "rate-limited requeues",
        ),
        row(
            theme,
            "wait p50/p99",
            p50_p99(
                rates.and_then(|r| r.queue_p50_seconds),
                rates.and_then(|r| r.queue_p99_seconds),
            ),
            "queued until picked",
        ),
        row(
            theme,
            "longest running",
            latest
                .longest_running_processor_seconds
                .map_or_else(|| "-".to_string(), |s| format!("{s:.1}s")),
            "oldest key in a worker",
        ),
    ]);
    section(&mut lines, "reconciles (controller_runtime_reconcile_*)");
    lines.extend([
        row(theme, "per second", by_result, ""),
        row(
            theme,
            "time p50/p99",
            p50_p99(
                rates.and_then(|r| r.reconcile_p50_seconds),
                rates.and_then(|r| r.reconcile_p99_seconds),
            ),
            "",
        ),
        row(
            theme,
            "errors",
            number(latest.reconcile_errors_total),
            "total since start",
        ),
        row(
            theme,
            "workers",
            format!(
                "{} of {}",
                number(latest.active_workers),
                number(latest.max_concurrent_reconciles)
            ),
            "busy of max",
        ),
    ]);
    section(
        &mut lines,
        "API requests (rest_client_requests_total by code)",
    );
    let mut requests = vec![Span::styled(
        format!("{:<LABEL$}", "by code"),
        theme.fg(Color::DarkGray),
    )];
    if codes.is_empty() {
        requests.push(Span::raw("-"));
    }
    requests.extend(codes);
    lines.push(Line::from(requests));
    lines.push(Line::from(vec![
        Span::styled(
            format!("{:<LABEL$}", "409 / 429 since"),
            theme.fg(Color::DarkGray),
        ),
        Span::styled(
            format!("+{}", rates.map_or(0.0, |r| r.conflicts)),
            loud(rates.map_or(0.0, |r| r.conflicts)),
        ),
        Span::raw(" / "),
        Span::styled(
            format!("+{}", rates.map_or(0.0, |r| r.throttled)),
            loud(rates.map_or(0.0, |r| r.throttled)),
        ),
        Span::styled(
            if compact {
                ""
            } else {
                "  conflicts / throttled"
            },
            theme.fg(Color::DarkGray),
        ),
    ]));
    if !latest.informer.is_empty() {
        section(&mut lines, "informers (client-go, KEP-5647)");
        for (series, value) in &latest.informer {
            lines.push(row(theme, series, value.to_string(), ""));
        }
    }
    if !latest.raw.is_empty() {
        let mut names: Vec<&str> = latest.raw.iter().map(|r| r.name.as_str()).collect();
        names.dedup();
        section(&mut lines, "other families, raw");
        lines.push(Line::styled(names.join(" "), theme.fg(Color::DarkGray)));
    }
    lines
}

fn draw_controller(frame: &mut Frame, area: Rect, panel: &MetricsPanel, theme: Theme) {
    let block = Block::bordered().title(" the controller's own /metrics ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(latest) = panel.history().latest() else {
        let waiting = if panel.error.is_some() {
            "nothing read yet"
        } else {
            "waiting for the first scrape…"
        };
        frame.render_widget(Paragraph::new(waiting), inner);
        return;
    };
    // The full list is 16 lines and more; shorter panels show the numbers without words.
    let compact = inner.height < 18;
    let lines = controller_lines(latest, panel.history().latest_rates(), theme, compact);
    // Sparklines need room beside the text; a narrow panel shows the numbers alone.
    let (text, sparks) = if inner.width >= 90 {
        let [text, sparks] =
            Layout::horizontal([Constraint::Length(62), Constraint::Fill(1)]).areas(inner);
        (text, Some(sparks))
    } else {
        (inner, None)
    };
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), text);
    let Some(sparks) = sparks else {
        return;
    };
    let history = panel.history();
    let series: [(&str, Vec<f64>); 3] = [
        (
            "depth",
            history
                .readings()
                .map(|r| r.depth().unwrap_or(0.0))
                .collect(),
        ),
        (
            "adds/s",
            history
                .rates()
                .map(|r| r.adds_per_second.unwrap_or(0.0))
                .collect(),
        ),
        (
            "reconciles/s",
            history.rates().map(Rates::reconciles_per_second).collect(),
        ),
    ];
    let areas = Layout::vertical([Constraint::Length(3); 3]).split(sparks);
    for ((label, data), area) in series.iter().zip(areas.iter()) {
        draw_spark(frame, *area, label, data, theme);
    }
}

fn draw_spark(frame: &mut Frame, area: Rect, label: &str, data: &[f64], theme: Theme) {
    if area.height < 2 {
        return;
    }
    let [labels, chart] =
        Layout::horizontal([Constraint::Length(13), Constraint::Fill(1)]).areas(area);
    let data: Vec<u64> = data.iter().map(|v| v.max(0.0).round() as u64).collect();
    let max = data.iter().copied().max().unwrap_or(0);
    frame.render_widget(
        Paragraph::new(vec![
            Line::styled(label.to_string(), theme.fg(Color::DarkGray)),
            Line::styled(format!("≤{max}"), theme.fg(Color::DarkGray)),
        ]),
        labels,
    );
    let shown = &data[data.len().saturating_sub(usize::from(chart.width))..];
    frame.render_widget(Sparkline::default().data(shown).max(max.max(1)), chart);
}

fn draw_model(
    frame: &mut Frame,
    area: Rect,
    panel: &MetricsPanel,
    model: Option<&QueuePanel>,
    theme: Theme,
) {
    let block = Block::bordered().title(MODEL_TITLE);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(model) = model else {
        frame.render_widget(
            Paragraph::new("kscope has no informer on this kind open"),
            inner,
        );
        return;
    };
    let q = &model.stats;
    let mut lines = vec![Line::styled(
        format!("kscope's reflector and workqueue on {}", panel.model_kind),
        theme.dim(),
    )];
    lines.extend([
        row(theme, "queue depth", q.depth.to_string(), ""),
        row(theme, "adds/s", number(model.adds_per_second()), ""),
        row(
            theme,
            "work p50/99",
            format!("{} / {}", millis(q.work_p50), millis(q.work_p99)),
            "",
        ),
    ]);
    if let Some(i) = &model.informer {
        lines.extend([
            row(
                theme,
                "fifo",
                format!("{} holding {}", i.fifo, i.queued),
                "",
            ),
            row(
                theme,
                "rv lag",
                format!(
                    "{} (store at {})",
                    i.resource_version_lag, i.store_resource_version
                ),
                "",
            ),
        ]);
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// Two quantiles as "p50 / p99", in milliseconds, a dash for one not known yet.
fn p50_p99(p50: Option<f64>, p99: Option<f64>) -> String {
    format!("{} / {}", millis(p50), millis(p99))
}
