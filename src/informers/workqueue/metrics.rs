//! The workqueue's metrics: client-go's set (depth, adds, retries, queue latency, work duration,
//! unfinished work, longest running processor) plus kscope's own (coalesced adds, in-flight and
//! waiting counts). The queue updates them under the lock it already holds, so reading a
//! [`WorkqueueMetrics`] snapshot costs one short critical section and never stalls workers for
//! long.

use std::time::Duration;

/// Upper bounds, in seconds, of the finite histogram buckets: client-go's `1e-8 · 10^i`,
/// `i = 0..10`, i.e. 10 ns to 10 s. One more bucket counts everything above.
pub const BUCKET_BOUNDS: [f64; 10] = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1e0, 1e1];

/// A fixed-bucket histogram of durations in seconds, like the Prometheus histograms client-go
/// registers. Plain data: cloning it is the snapshot.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Histogram {
    /// Per-bucket (not cumulative) counts; the last slot is the +Inf bucket.
    counts: [u64; BUCKET_BOUNDS.len() + 1],
    count: u64,
    sum: f64,
}

impl Histogram {
    /// Records one observation.
    pub fn observe(&mut self, value: Duration) {
        let secs = value.as_secs_f64();
        let bucket = BUCKET_BOUNDS
            .iter()
            .position(|&bound| secs <= bound)
            .unwrap_or(BUCKET_BOUNDS.len());
        self.counts[bucket] += 1;
        self.count += 1;
        self.sum += secs;
    }

    /// Number of observations.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Sum of all observations, in seconds.
    pub fn sum(&self) -> f64 {
        self.sum
    }

    /// Mean observation in seconds, `None` before the first one.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum / self.count as f64)
    }

    /// Cumulative counts per bucket as `(upper bound in seconds, observations ≤ bound)`, the
    /// last with an infinite bound: the shape Prometheus exposes.
    pub fn buckets(&self) -> impl Iterator<Item = (f64, u64)> + '_ {
        BUCKET_BOUNDS
            .iter()
            .copied()
            .chain(std::iter::once(f64::INFINITY))
            .zip(self.counts.iter().scan(0u64, |acc, &c| {
                *acc += c;
                Some(*acc)
            }))
    }

    /// Estimates the `q`-quantile (0 ≤ q ≤ 1) in seconds the way Prometheus'
    /// `histogram_quantile` does: find the bucket holding the rank, interpolate linearly inside
    /// it (the first bucket starts at 0). Observations above the last bound are reported as that
    /// bound. `None` when empty or `q` is out of range.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.count == 0 || !(0.0..=1.0).contains(&q) {
            return None;
        }
        let rank = q * self.count as f64;
        let mut below = 0u64;
        for (i, &in_bucket) in self.counts.iter().enumerate() {
            let cumulative = below + in_bucket;
            if in_bucket > 0 && cumulative as f64 >= rank {
                let Some(&upper) = BUCKET_BOUNDS.get(i) else {
                    return Some(BUCKET_BOUNDS[BUCKET_BOUNDS.len() - 1]);
                };
                let lower = if i == 0 { 0.0 } else { BUCKET_BOUNDS[i - 1] };
                let fraction = (rank - below as f64) / in_bucket as f64;
                return Some(lower + (upper - lower) * fraction);
            }
            below = cumulative;
        }
        // Unreachable with count > 0, but an estimate is better than a panic.
        Some(BUCKET_BOUNDS[BUCKET_BOUNDS.len() - 1])
    }
}

/// A point-in-time copy of a queue's metrics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkqueueMetrics {
    /// Items added and not yet handed to a worker: client-go's `depth` gauge, which counts an
    /// item re-added while it is being processed too.
    pub depth: usize,
    /// Adds that made an item dirty (client-go's `adds_total`; coalesced adds are not in it).
    pub adds: u64,
    /// Adds that found the item already dirty and so changed nothing (kscope's own).
    pub coalesced_adds: u64,
    /// Rate-limited re-adds (client-go's `retries_total`).
    pub retries: u64,
    /// Time from an item becoming dirty to a worker getting it.
    pub queue_latency: Histogram,
    /// Time from a worker getting an item to its `done`.
    pub work_duration: Histogram,
    /// Sum of the ages of the items being processed right now, in seconds: large values with
    /// little work duration observed point at stuck workers.
    pub unfinished_work_seconds: f64,
    /// Age of the oldest item being processed right now, in seconds.
    pub longest_running_processor_seconds: f64,
    /// Items being processed right now.
    pub in_flight: usize,
    /// Items waiting in the delaying queue for their ready time.
    pub waiting: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn observations_land_in_le_buckets() {
        let mut h = Histogram::default();
        h.observe(Duration::from_nanos(10)); // exactly on the first bound
        h.observe(ms(5));
        h.observe(Duration::from_secs(100)); // above every bound
        let buckets: Vec<_> = h.buckets().collect();
        assert_eq!(buckets.len(), 11);
        assert_eq!(buckets[0], (1e-8, 1));
        assert_eq!(buckets[5].1, 1, "5 ms is above 1 ms");
        assert_eq!(buckets[6], (1e-2, 2));
        assert_eq!(buckets[9], (1e1, 2));
        assert_eq!(buckets[10].1, 3);
        assert_eq!(h.count(), 3);
        assert!((h.sum() - 100.005_000_01).abs() < 1e-9);
    }

    #[test]
    fn quantile_interpolates_within_bucket() {
        let mut h = Histogram::default();
        assert_eq!(h.quantile(0.5), None);
        for _ in 0..100 {
            h.observe(ms(5)); // bucket (1 ms, 10 ms]
        }
        let p50 = h.quantile(0.5).unwrap();
        assert!((p50 - (1e-3 + 9e-3 * 0.5)).abs() < 1e-12, "{p50}");
        let p100 = h.quantile(1.0).unwrap();
        assert!((p100 - 1e-2).abs() < 1e-12);
        assert_eq!(h.quantile(1.5), None);
    }

    #[test]
    fn quantile_picks_the_bucket_holding_the_rank() {
        let mut h = Histogram::default();
        for _ in 0..98 {
            h.observe(Duration::from_micros(50)); // (10 µs, 100 µs]
        }
        h.observe(ms(500)); // (100 ms, 1 s]
        h.observe(Duration::from_secs(60)); // +Inf
        let p50 = h.quantile(0.5).unwrap();
        assert!(p50 > 1e-5 && p50 <= 1e-4, "{p50}");
        let p99 = h.quantile(0.99).unwrap();
        assert!(p99 > 0.1 && p99 <= 1.0, "{p99}");
        assert_eq!(
            h.quantile(1.0),
            Some(10.0),
            "+Inf reports the last finite bound"
        );
    }
}
