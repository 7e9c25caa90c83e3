//! The `:metrics` panel: the real controller's numbers, scraped from its /metrics through
//! the pod proxy every few seconds while the panel is shown, beside kscope's own informer
//! and workqueue for the same kind — labelled as kscope's, so the model is never read as
//! the controller.

use std::time::{Duration, Instant};

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Sparkline};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use kscope_client::scrape::{MetricsTarget, scrape};
use kscope_index_views::metrics::{MetricsHistory, parse};

use crate::queue::QueuePanel;

/// How often the panel scrapes unless configured otherwise.
pub const DEFAULT_SCRAPE_INTERVAL: Duration = Duration::from_secs(2);
/// Scrapes kept for the sparklines: two minutes at the default interval.
pub const SCRAPES_KEPT: usize = 60;

/// The title of kscope's side: what it is, in words that cannot be mistaken.
pub const MODEL_TITLE: &str = " kscope's own informer (a model, not the controller) ";

/// One scrape's outcome, as the scraping task sends it.
pub type ScrapeOutcome = Result<String, String>;

/// What the panel shows: the pod read, its scrapes, and the last failure if the newest
/// scrape failed.
#[derive(Debug, Clone)]
pub struct MetricsPanel {
    pub target: MetricsTarget,
    pub interval: Duration,
    history: MetricsHistory,
    started: Instant,
    error: Option<String>,
}

impl MetricsPanel {
    pub fn new(target: MetricsTarget, interval: Duration) -> Self {
        Self {
            target,
            interval,
            history: MetricsHistory::new(SCRAPES_KEPT),
            started: Instant::now(),
            error: None,
        }
    }

    /// Takes one scrape's outcome, received at `at`.
    pub fn take(&mut self, outcome: ScrapeOutcome, at: Instant) {
        match outcome.and_then(|text| parse(&text).map_err(|e| e.to_string())) {
            Ok(reading) => {
                let seconds = at.saturating_duration_since(self.started).as_secs_f64();
                self.history.push(seconds, reading);
                self.error = None;
            }
            Err(why) => self.error = Some(why),
        }
    }

    pub fn history(&self) -> &MetricsHistory {
        &self.history
    }
}

/// Scrapes `target` every `interval` until the returned task is aborted — which the panel's
/// owner does when the panel is closed, so nothing is scraped while it is not shown.
pub fn spawn_scraper(
    client: kube::Client,
    target: MetricsTarget,
    interval: Duration,
    outcomes: mpsc::Sender<ScrapeOutcome>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let outcome = scrape(&client, &target).await.map_err(|e| e.to_string());
            if outcomes.send(outcome).await.is_err() {
                return;
            }
        }
    })
}

fn number(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}"))
}

fn millis(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{:.0}ms", v * 1000.0))
}

fn row(label: &str, value: String) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{label:<16}"), Style::new().fg(Color::DarkGray)),
        Span::raw(value),
    ])
}

/// Draws the controller's side and, beside it (below it when narrow), kscope's own.
pub fn draw(frame: &mut Frame, area: Rect, panel: &MetricsPanel, model: Option<&QueuePanel>) {
    let [real, own] = if area.width >= 100 {
        Layout::horizontal([Constraint::Percentage(62), Constraint::Fill(1)]).areas(area)
    } else {
        Layout::vertical([Constraint::Fill(2), Constraint::Fill(1)]).areas(area)
    };
    draw_controller(frame, real, panel);
    draw_model(frame, own, model);
}

fn draw_controller(frame: &mut Frame, area: Rect, panel: &MetricsPanel) {
    let t = &panel.target;
    let block = Block::bordered().title(format!(
        " controller's /metrics · {}/{}:{} · every {}s ",
        t.namespace,
        t.pod,
        t.port,
        panel.interval.as_secs()
    ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let latest = panel.history.latest();
    let rates = panel.history.latest_rates();
    let mut lines = Vec::new();
    if let Some(why) = &panel.error {
        lines.push(Line::styled(
            format!("last scrape failed: {why}"),
            Style::new().fg(Color::Red),
        ));
    }
    let Some(latest) = latest else {
        if panel.error.is_none() {
            lines.push(Line::raw("waiting for the first scrape…"));
        }
        frame.render_widget(Paragraph::new(lines), inner);
        return;
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
            Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD)
        } else {
            Style::new()
        }
    };
    lines.extend([
        row("queue depth", number(latest.depth())),
        row("adds/s", number(rates.and_then(|r| r.adds_per_second))),
        row(
            "retries/s",
            number(rates.and_then(|r| r.retries_per_second)),
        ),
        row("reconciles/s", by_result),
        row(
            "reconcile p50/99",
            format!(
                "{} / {}",
                millis(rates.and_then(|r| r.reconcile_p50_seconds)),
                millis(rates.and_then(|r| r.reconcile_p99_seconds))
            ),
        ),
        row(
            "workers",
            format!(
                "{} of {}",
                number(latest.active_workers),
                number(latest.max_concurrent_reconciles)
            ),
        ),
        Line::from(vec![
            Span::styled(
                format!("{:<16}", "409 / 429"),
                Style::new().fg(Color::DarkGray),
            ),
            Span::styled(
                format!("{}", latest.requests("409")),
                loud(latest.requests("409")),
            ),
            Span::raw(" / "),
            Span::styled(
                format!("{}", latest.requests("429")),
                loud(latest.requests("429")),
            ),
        ]),
    ]);
    let [text, sparks] =
        Layout::horizontal([Constraint::Length(44), Constraint::Fill(1)]).areas(inner);
    frame.render_widget(Paragraph::new(lines), text);
    if sparks.width < 12 {
        return;
    }
    let series: [(&str, Vec<f64>); 3] = [
        (
            "depth",
            panel
                .history
                .readings()
                .map(|r| r.depth().unwrap_or(0.0))
                .collect(),
        ),
        (
            "adds/s",
            panel
                .history
                .rates()
                .map(|r| r.adds_per_second.unwrap_or(0.0))
                .collect(),
        ),
        (
            "reconciles/s",
            panel
                .history
                .rates()
                .map(|r| r.reconciles_per_second())
                .collect(),
        ),
    ];
    let areas = Layout::vertical([Constraint::Fill(1); 3]).split(sparks);
    for ((label, data), area) in series.iter().zip(areas.iter()) {
        draw_spark(frame, *area, label, data);
    }
}

fn draw_spark(frame: &mut Frame, area: Rect, label: &str, data: &[f64]) {
    if area.height == 0 {
        return;
    }
    let [labels, chart] =
        Layout::horizontal([Constraint::Length(13), Constraint::Fill(1)]).areas(area);
    let data: Vec<u64> = data.iter().map(|v| v.max(0.0).round() as u64).collect();
    let max = data.iter().copied().max().unwrap_or(0);
    frame.render_widget(
        Paragraph::new(vec![
            Line::styled(label.to_string(), Style::new().fg(Color::DarkGray)),
            Line::styled(format!("≤{max}"), Style::new().fg(Color::DarkGray)),
        ]),
        labels,
    );
    let shown = &data[data.len().saturating_sub(usize::from(chart.width))..];
    frame.render_widget(Sparkline::default().data(shown).max(max.max(1)), chart);
}

fn draw_model(frame: &mut Frame, area: Rect, model: Option<&QueuePanel>) {
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
    let mut lines = vec![
        row("queue depth", q.depth.to_string()),
        row("adds/s", number(model.adds_per_second())),
        row("retries", q.retries.to_string()),
        row(
            "work p50/99",
            format!("{} / {}", millis(q.work_p50), millis(q.work_p99)),
        ),
    ];
    if let Some(i) = &model.informer {
        lines.extend([
            row("fifo", format!("{} holding {}", i.fifo, i.queued)),
            row(
                "rv lag",
                format!(
                    "{} (store at {})",
                    i.resource_version_lag, i.store_resource_version
                ),
            ),
        ]);
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
