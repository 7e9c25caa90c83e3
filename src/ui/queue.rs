//! The workqueue panel: the view's workqueue numbers as of the last frame, and its last
//! minute for the sparklines. The event loop feeds it (numbers before each frame, a sample
//! on each clock tick); drawing reads it through `&self`.

use std::collections::VecDeque;
use std::time::Instant;

use kscope_informers::fifo::FifoKind;
use kscope_informers::metrics::InformerMetricsSnapshot;
use kscope_informers::workqueue::WorkqueueMetrics;

/// Seconds of workqueue history the sparklines show.
pub const QUEUE_HISTORY: usize = 60;

/// One second of the workqueue, for the sparklines.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueueSample {
    pub adds_per_second: f64,
    pub depth: usize,
}

/// Workqueue numbers as the panel shows them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueueStats {
    pub depth: usize,
    pub adds: u64,
    pub coalesced_adds: u64,
    pub in_flight: usize,
    pub retries: u64,
    /// Seconds.
    pub latency_p50: Option<f64>,
    pub latency_p99: Option<f64>,
    pub work_p50: Option<f64>,
    pub work_p99: Option<f64>,
}

impl From<&WorkqueueMetrics> for QueueStats {
    fn from(m: &WorkqueueMetrics) -> Self {
        Self {
            depth: m.depth,
            adds: m.adds,
            coalesced_adds: m.coalesced_adds,
            in_flight: m.in_flight,
            retries: m.retries,
            latency_p50: m.queue_latency.quantile(0.5),
            latency_p99: m.queue_latency.quantile(0.99),
            work_p50: m.work_duration.quantile(0.5),
            work_p99: m.work_duration.quantile(0.99),
        }
    }
}

/// The informer's numbers beside the view's workqueue: which FIFO, what it holds, how long a
/// pop takes to process, and how far the store's resourceVersion is behind the wire's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InformerStats {
    pub fifo: &'static str,
    pub queued: u64,
    /// Seconds.
    pub processing_p50: Option<f64>,
    pub processing_p99: Option<f64>,
    pub store_resource_version: u64,
    pub resource_version_lag: u64,
    /// Seconds the store has been behind the newest resourceVersion the server showed.
    pub behind_for: Option<f64>,
}

impl InformerStats {
    pub fn new(fifo: FifoKind, m: &InformerMetricsSnapshot) -> Self {
        Self {
            fifo: fifo.as_str(),
            queued: m.queued_items,
            processing_p50: m.latency_quantile(0.5).map(|d| d.as_secs_f64()),
            processing_p99: m.latency_quantile(0.99).map(|d| d.as_secs_f64()),
            store_resource_version: m.store_resource_version,
            resource_version_lag: m.resource_version_lag(),
            behind_for: m.behind_for.map(|d| d.as_secs_f64()),
        }
    }
}

/// The panel: the newest numbers, and the last [`QUEUE_HISTORY`] samples taken on the clock
/// tick, the rate coming from the adds counter's growth between two samples.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueuePanel {
    /// The numbers of the next frame.
    pub stats: QueueStats,
    /// The informer's, when known.
    pub informer: Option<InformerStats>,
    /// Oldest first.
    samples: VecDeque<QueueSample>,
    last: Option<(u64, Instant)>,
}

impl QueuePanel {
    /// Takes the queue's numbers for the next frame.
    pub fn show(&mut self, metrics: &WorkqueueMetrics) {
        self.stats = QueueStats::from(metrics);
    }

    /// Records the counter `adds` and `depth` at `at`. The first sample after a (re)start
    /// only sets the baseline.
    pub fn sample(&mut self, adds: u64, depth: usize, at: Instant) {
        if let Some((before, then)) = self.last {
            let elapsed = at.saturating_duration_since(then).as_secs_f64();
            let adds_per_second = if elapsed > 0.0 {
                adds.saturating_sub(before) as f64 / elapsed
            } else {
                0.0
            };
            if self.samples.len() == QUEUE_HISTORY {
                self.samples.pop_front();
            }
            self.samples.push_back(QueueSample {
                adds_per_second,
                depth,
            });
        }
        self.last = Some((adds, at));
    }

    /// Forgets the baseline: the view (and so the queue and its counters) was replaced.
    pub fn restart(&mut self) {
        self.last = None;
    }

    /// Oldest first.
    pub fn samples(&self) -> &VecDeque<QueueSample> {
        &self.samples
    }

    /// The newest rate, if two samples were taken.
    pub fn adds_per_second(&self) -> Option<f64> {
        self.samples.back().map(|s| s.adds_per_second)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_history_rates_and_bounds() {
        let start = Instant::now();
        let at = |s: u64| start + std::time::Duration::from_millis(s * 1000);
        let mut panel = QueuePanel::default();
        panel.sample(100, 3, at(0));
        assert_eq!(panel.adds_per_second(), None);
        panel.sample(130, 5, at(1));
        panel.sample(130, 0, at(3));
        assert_eq!(
            panel.samples().iter().copied().collect::<Vec<_>>(),
            [
                QueueSample {
                    adds_per_second: 30.0,
                    depth: 5
                },
                QueueSample {
                    adds_per_second: 0.0,
                    depth: 0
                }
            ]
        );
        // A replaced queue starts from its own counter.
        panel.restart();
        panel.sample(7, 1, at(4));
        assert_eq!(panel.samples().len(), 2);
        for s in 5..100 {
            panel.sample(7 + s, 1, at(s));
        }
        assert_eq!(panel.samples().len(), QUEUE_HISTORY);
        assert_eq!(panel.adds_per_second(), Some(1.0));
    }
}
