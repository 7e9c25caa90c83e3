//! The `:metrics` panel: the real controller's numbers, scraped from its /metrics through
//! the pod proxy while the panel is shown, beside kscope's own informer and workqueue —
//! labelled as kscope's, so the model is never read as the controller. The panel is plain
//! state fed by the event loop; the scraping task is the [`MetricsController`]'s, started
//! when the panel opens and stopped when it closes.

mod controller;

use std::time::{Duration, Instant};

use kscope_client::scrape::MetricsTarget;
use kscope_index_views::metrics::{MetricsHistory, parse};

use crate::action::Action;
use crate::effect::Effect;

pub use controller::{MetricsArrival, MetricsController, MetricsRequest};

/// How often the panel scrapes unless configured otherwise (`metrics.scrape`).
pub const DEFAULT_SCRAPE_INTERVAL: Duration = Duration::from_secs(2);
/// Scrapes kept for the sparklines: two minutes at the default interval. Older ones are
/// dropped, so a panel left open for hours holds no more than this.
pub const SCRAPES_KEPT: usize = 60;

/// What the scraping task found, in the order it finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scraped {
    /// The pod and port read (for a workload: the ready pod chosen).
    Resolved(MetricsTarget),
    /// Why no pod can be read yet (Pending, no metrics port, no such object): tried again
    /// on the next tick, since a Pending pod may start.
    Unresolved(String),
    /// One scrape: the page's text, or why it could not be read (403, the proxy's error).
    Page(Result<String, String>),
}

/// What the panel shows: what was asked for, the pod read, its scrapes, and the newest
/// failure while the newest attempt failed.
#[derive(Debug, Clone)]
pub struct MetricsPanel {
    /// What `:metrics` was typed on, as kubectl names it: `deployment/widget-controller -n
    /// widget-system`.
    pub asked: String,
    /// The pod and port read, once found.
    pub target: Option<MetricsTarget>,
    pub interval: Duration,
    /// The kind kscope's own informer on screen watches, for the model's side.
    pub model_kind: String,
    history: MetricsHistory,
    started: Instant,
    /// Why the newest attempt failed, in a person's words.
    pub error: Option<String>,
    /// Scrapes read, failed or not, so a test (and the title) can tell a fresh one.
    pub scrapes: u64,
}

impl MetricsPanel {
    pub fn new(asked: String, model_kind: String, interval: Duration, started: Instant) -> Self {
        Self {
            asked,
            target: None,
            interval,
            model_kind,
            history: MetricsHistory::new(SCRAPES_KEPT),
            started,
            error: None,
            scrapes: 0,
        }
    }

    /// Takes what the scraping task found, received at `at`.
    pub fn take(&mut self, scraped: Scraped, at: Instant) {
        match scraped {
            Scraped::Resolved(target) => {
                self.target = Some(target);
                self.error = None;
            }
            Scraped::Unresolved(why) => self.error = Some(why),
            Scraped::Page(page) => {
                self.scrapes += 1;
                match page.and_then(|text| read_page(&text)) {
                    Ok(reading) => {
                        let seconds = at.saturating_duration_since(self.started).as_secs_f64();
                        self.history.push(seconds, reading);
                        self.error = None;
                    }
                    Err(why) => self.error = Some(why),
                }
            }
        }
    }

    pub fn history(&self) -> &MetricsHistory {
        &self.history
    }

    /// Esc (or q) leaves; nothing else is typed here.
    pub fn handle_key(&mut self, action: &Action) -> Option<Effect> {
        match action {
            Action::Back => Some(Effect::Close),
            _ => None,
        }
    }
}

/// A page read, or why it is no metrics page: a port serving HTML or JSON answers 200 too.
/// The parser's own error points at a column of a page nobody sees, so it is said in words.
fn read_page(text: &str) -> Result<kscope_index_views::metrics::Reading, String> {
    const WHICH_PORT: &str = "is this the controller's metrics port? (:metrics --port PORT)";
    if text.trim().is_empty() {
        return Err(format!("the answer was empty: {WHICH_PORT}"));
    }
    let Ok(reading) = parse(text) else {
        let start: String = text.trim_start().chars().take(40).collect();
        let start = start.split_whitespace().collect::<Vec<_>>().join(" ");
        return Err(format!(
            "the answer is not Prometheus text (it starts {start:?}): {WHICH_PORT}"
        ));
    };
    if reading.is_empty() {
        return Err(format!("the page holds no metrics: {WHICH_PORT}"));
    }
    Ok(reading)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "# TYPE workqueue_depth gauge\nworkqueue_depth{name=\"w\"} 4\n";

    fn panel() -> (MetricsPanel, Instant) {
        let now = Instant::now();
        let panel = MetricsPanel::new(
            "pod ns/p".into(),
            "pods".into(),
            DEFAULT_SCRAPE_INTERVAL,
            now,
        );
        (panel, now)
    }

    #[test]
    fn a_page_is_read_and_a_failure_said_until_the_next_good_one() {
        let (mut panel, now) = panel();
        panel.take(Scraped::Unresolved("pod ns/p is Pending".into()), now);
        assert_eq!(panel.error.as_deref(), Some("pod ns/p is Pending"));
        panel.take(Scraped::Page(Ok(PAGE.into())), now);
        assert_eq!(panel.error, None);
        assert_eq!(panel.history().latest().and_then(|r| r.depth()), Some(4.0));
        panel.take(Scraped::Page(Err("forbidden".into())), now);
        assert_eq!(panel.error.as_deref(), Some("forbidden"));
        assert_eq!(panel.scrapes, 2);
    }

    #[test]
    fn an_html_or_empty_answer_is_no_metrics_page() {
        let (mut panel, now) = panel();
        panel.take(
            Scraped::Page(Ok("<html><body>hello</body></html>".into())),
            now,
        );
        let why = panel.error.clone().unwrap_or_default();
        assert!(
            why.starts_with("the answer is not Prometheus text (it starts \"<html><body>hello"),
            "{why}"
        );
        assert!(!why.contains('\n'), "one line: {why}");
        panel.take(Scraped::Page(Ok(String::new())), now);
        let why = panel.error.clone().unwrap_or_default();
        assert!(why.starts_with("the answer was empty"), "{why}");
        panel.take(Scraped::Page(Ok("# HELP nothing here\n".into())), now);
        let why = panel.error.clone().unwrap_or_default();
        assert!(why.starts_with("the page holds no metrics"), "{why}");
        assert!(panel.history().latest().is_none());
    }

    #[test]
    fn back_closes_and_other_keys_do_nothing() {
        let (mut panel, _) = panel();
        assert_eq!(panel.handle_key(&Action::Back), Some(Effect::Close));
        assert_eq!(panel.handle_key(&Action::Down), None);
    }
}
