//! The informer's own metrics, as client-go 1.36 publishes them (informer_queued_items,
//! informer_processing_latency_seconds, informer_store_resource_version), plus the lag between
//! the newest resourceVersion the FIFO was handed and the newest the store has applied —
//! in resourceVersions and in seconds (KEP-5647's staleness: how long the store has been
//! behind what the server has shown).
//!
//! Every counter is an atomic written where the value changes, so a display reads a
//! [`InformerMetricsSnapshot`] each frame without taking the queue's lock; the staleness
//! clock is a short list behind its own small lock, never the queue's.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// Wire resourceVersions seen within this of the one before share its time: the staleness
/// clock is this precise, and a burst of events costs one entry.
const STALENESS_GRAIN: Duration = Duration::from_millis(10);
/// Entries of the staleness clock kept at most; past this the newest entry takes the newer
/// resourceVersions, keeping its (older) time, so the lag in seconds is never understated.
const STALENESS_KEPT: usize = 1024;

/// Upper bounds of the processing-latency buckets: powers of four from 1 µs to about 4 s (a
/// last bucket takes everything slower).
pub const LATENCY_BUCKETS: [Duration; 12] = [
    Duration::from_micros(1),
    Duration::from_micros(4),
    Duration::from_micros(16),
    Duration::from_micros(64),
    Duration::from_micros(256),
    Duration::from_micros(1_024),
    Duration::from_micros(4_096),
    Duration::from_micros(16_384),
    Duration::from_micros(65_536),
    Duration::from_micros(262_144),
    Duration::from_micros(1_048_576),
    Duration::from_micros(4_194_304),
];

/// Counters shared by a FIFO (which knows what was queued) and the process loop (which knows
/// what was applied).
#[derive(Debug, Default)]
pub struct InformerMetrics {
    /// Items in the queue, popped items not yet processed included.
    queued_items: AtomicU64,
    /// Pops processed, and items (keys or in-order deltas) they carried.
    pops: AtomicU64,
    popped_items: AtomicU64,
    latency_buckets: [AtomicU64; LATENCY_BUCKETS.len() + 1],
    latency_sum_nanos: AtomicU64,
    /// The newest resourceVersion handed to the FIFO (events, lists, bookmarks).
    wire_resource_version: AtomicU64,
    /// The newest resourceVersion the store has applied.
    store_resource_version: AtomicU64,
    /// Wire resourceVersions the store has not applied yet, oldest first, each with when it
    /// was first seen: the oldest says since when the store is behind.
    unapplied: Mutex<VecDeque<(u64, Instant)>>,
}

/// A plain copy of [`InformerMetrics`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InformerMetricsSnapshot {
    pub queued_items: u64,
    pub pops: u64,
    pub popped_items: u64,
    /// Counts per bucket of [`LATENCY_BUCKETS`], and a last one for slower pops.
    pub latency_buckets: Vec<u64>,
    pub latency_sum: Duration,
    /// 0 until an integer resourceVersion was seen.
    pub wire_resource_version: u64,
    pub store_resource_version: u64,
    /// How long the store has been behind the newest resourceVersion seen: since the oldest
    /// one it has not applied reached the informer. `None` when it is not behind (or no
    /// integer resourceVersion was seen).
    pub behind_for: Option<Duration>,
}

impl InformerMetricsSnapshot {
    /// How many resourceVersions the store is behind what reached the informer.
    pub fn resource_version_lag(&self) -> u64 {
        self.wire_resource_version
            .saturating_sub(self.store_resource_version)
    }

    /// The upper bound of the bucket holding the `q` quantile (0..=1) of processing
    /// latencies; `None` without pops, or when it lies past the last bound.
    pub fn latency_quantile(&self, q: f64) -> Option<Duration> {
        let total: u64 = self.latency_buckets.iter().sum();
        if total == 0 {
            return None;
        }
        let rank = ((total as f64) * q.clamp(0.0, 1.0)).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, count) in self.latency_buckets.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return LATENCY_BUCKETS.get(i).copied();
            }
        }
        None
    }

    pub fn mean_latency(&self) -> Option<Duration> {
        (self.pops > 0).then(|| self.latency_sum / self.pops.min(u64::from(u32::MAX)) as u32)
    }
}

/// A resourceVersion as a number, where it is one. RVs are opaque by contract, but every
/// API server in use (and the sim) sends etcd revisions, which compare as integers; a
/// non-integer one is not compared at all: no lag is claimed for it, in RVs or seconds.
fn as_number(resource_version: &str) -> Option<u64> {
    resource_version.parse().ok()
}

impl InformerMetrics {
    pub(crate) fn set_queued(&self, n: usize) {
        self.queued_items.store(n as u64, Ordering::Relaxed);
    }

    pub(crate) fn saw_on_wire(&self, resource_version: Option<&str>) {
        self.saw_on_wire_at(resource_version, Instant::now());
    }

    /// A resourceVersion reached the informer at `at`: newer than any before, it starts
    /// (or joins) the staleness clock.
    fn saw_on_wire_at(&self, resource_version: Option<&str>, at: Instant) {
        let Some(rv) = resource_version.and_then(as_number) else {
            return;
        };
        let was = self.wire_resource_version.fetch_max(rv, Ordering::Relaxed);
        if rv <= was || rv <= self.store_resource_version.load(Ordering::Relaxed) {
            return;
        }
        let mut unapplied = self.unapplied.lock();
        let full = unapplied.len() >= STALENESS_KEPT;
        match unapplied.back_mut() {
            Some((newest, seen))
                if full || at.saturating_duration_since(*seen) < STALENESS_GRAIN =>
            {
                *newest = (*newest).max(rv);
            }
            _ => unapplied.push_back((rv, at)),
        }
    }

    pub(crate) fn applied(&self, resource_version: Option<&str>) {
        if let Some(rv) = resource_version.and_then(as_number) {
            self.store_at(rv);
        }
    }

    /// Nothing is queued or in flight: the store holds everything handed to the FIFO, so it
    /// is at the newest resourceVersion seen (a list's or a bookmark's carries no object).
    pub(crate) fn caught_up(&self) {
        self.store_at(self.wire_resource_version.load(Ordering::Relaxed));
    }

    /// The store is at `rv`: what it has applied leaves the staleness clock.
    fn store_at(&self, rv: u64) {
        let store = self
            .store_resource_version
            .fetch_max(rv, Ordering::Relaxed)
            .max(rv);
        let mut unapplied = self.unapplied.lock();
        while unapplied.front().is_some_and(|(seen, _)| *seen <= store) {
            unapplied.pop_front();
        }
    }

    pub(crate) fn observe_pop(&self, items: usize, took: Duration) {
        self.pops.fetch_add(1, Ordering::Relaxed);
        self.popped_items.fetch_add(items as u64, Ordering::Relaxed);
        let bucket = LATENCY_BUCKETS
            .iter()
            .position(|bound| took <= *bound)
            .unwrap_or(LATENCY_BUCKETS.len());
        self.latency_buckets[bucket].fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.latency_sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> InformerMetricsSnapshot {
        self.snapshot_at(Instant::now())
    }

    /// The numbers as of `now` (what the staleness clock is read against).
    pub fn snapshot_at(&self, now: Instant) -> InformerMetricsSnapshot {
        let store = self.store_resource_version.load(Ordering::Relaxed);
        // An entry the store passed while it was being added is not staleness.
        let behind_for = self
            .unapplied
            .lock()
            .iter()
            .find(|(rv, _)| *rv > store)
            .map(|(_, seen)| now.saturating_duration_since(*seen));
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        InformerMetricsSnapshot {
            queued_items: get(&self.queued_items),
            pops: get(&self.pops),
            popped_items: get(&self.popped_items),
            latency_buckets: self.latency_buckets.iter().map(get).collect(),
            latency_sum: Duration::from_nanos(get(&self.latency_sum_nanos)),
            wire_resource_version: get(&self.wire_resource_version),
            store_resource_version: get(&self.store_resource_version),
            behind_for,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_lands_in_its_bucket_and_quantiles_read_bounds() {
        let m = InformerMetrics::default();
        assert_eq!(m.snapshot().latency_quantile(0.5), None);
        for _ in 0..9 {
            m.observe_pop(1, Duration::from_micros(3));
        }
        m.observe_pop(5, Duration::from_millis(3));
        let s = m.snapshot();
        assert_eq!((s.pops, s.popped_items), (10, 14));
        assert_eq!(s.latency_buckets[1], 9);
        assert_eq!(s.latency_buckets[6], 1);
        assert_eq!(s.latency_quantile(0.5), Some(Duration::from_micros(4)));
        assert_eq!(s.latency_quantile(0.99), Some(Duration::from_micros(4_096)));
        m.observe_pop(1, Duration::from_secs(60));
        assert_eq!(
            m.snapshot().latency_quantile(1.0),
            None,
            "past the last bound"
        );
    }

    #[test]
    fn lag_is_what_reached_the_fifo_minus_what_the_store_applied() {
        let m = InformerMetrics::default();
        m.saw_on_wire(Some("10"));
        m.saw_on_wire(Some("not-a-number"));
        m.saw_on_wire(Some("7"));
        m.applied(Some("4"));
        assert_eq!(m.snapshot().resource_version_lag(), 6);
        m.caught_up();
        let s = m.snapshot();
        assert_eq!(
            (s.store_resource_version, s.resource_version_lag()),
            (10, 0)
        );
    }

    #[test]
    fn the_store_is_behind_since_the_oldest_resource_version_it_has_not_applied() {
        let m = InformerMetrics::default();
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        assert_eq!(m.snapshot_at(t0).behind_for, None);
        m.saw_on_wire_at(Some("10"), at(0));
        m.saw_on_wire_at(Some("12"), at(5));
        m.saw_on_wire_at(Some("15"), at(500));
        // An older or opaque resourceVersion moves nothing.
        m.saw_on_wire_at(Some("11"), at(600));
        m.saw_on_wire_at(Some("opaque"), at(600));
        let s = m.snapshot_at(at(1_000));
        assert_eq!(s.resource_version_lag(), 15);
        assert_eq!(s.behind_for, Some(Duration::from_millis(1_000)));
        // 10 and 12 shared a grain: applying 10 alone leaves the store behind since then.
        m.applied(Some("10"));
        assert_eq!(
            m.snapshot_at(at(1_000)).behind_for,
            Some(Duration::from_millis(1_000))
        );
        m.applied(Some("12"));
        let s = m.snapshot_at(at(1_000));
        assert_eq!(
            (s.resource_version_lag(), s.behind_for),
            (3, Some(Duration::from_millis(500)))
        );
        m.caught_up();
        let s = m.snapshot_at(at(2_000));
        assert_eq!((s.resource_version_lag(), s.behind_for), (0, None));
    }

    #[test]
    fn the_staleness_clock_is_bounded_and_never_understates() {
        let m = InformerMetrics::default();
        let t0 = Instant::now();
        for i in 0..(STALENESS_KEPT as u64 * 3) {
            let rv = (i + 1).to_string();
            m.saw_on_wire_at(Some(&rv), t0 + STALENESS_GRAIN * u32::try_from(i).unwrap());
        }
        assert_eq!(m.unapplied.lock().len(), STALENESS_KEPT);
        let now = t0 + Duration::from_secs(100);
        m.applied(Some(&(STALENESS_KEPT as u64 * 2).to_string()));
        // The newest entry holds everything past the bound, with the time of its first.
        let behind = m.snapshot_at(now).behind_for.expect("behind");
        let last_kept = STALENESS_GRAIN * u32::try_from(STALENESS_KEPT - 1).unwrap();
        assert_eq!(behind, Duration::from_secs(100) - last_kept);
    }
}
