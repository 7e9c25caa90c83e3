//! The delta tap: every raw watch event, every delta and every relist as it flows, kept in a
//! bounded ring and broadcast to subscribers (the delta panel, `kscope deltas`).
//!
//! Watch events keep their raw JSON, and the raw JSON of the previous event for the same key
//! while that one is still in the ring, so "what changed" is computed on demand by whoever
//! displays it, never on the Reflector's hot path.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::broadcast;

use super::diff::{Change, changed_paths, diff};
use crate::delta_fifo::DeltaType;
use crate::keys::Key;
use crate::lister_watcher::WatchEventType;

/// What a tap entry records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TapKind {
    /// A raw event from the watch stream.
    Watch(WatchEventType),
    /// A delta popped from the DeltaFIFO and applied to the Indexer.
    Delta(DeltaType),
    /// A list completed: the store is being replaced with `objects` objects.
    Relist { objects: usize },
    /// A watch started from the entry's resourceVersion.
    WatchStart,
    /// A 410 Expired/Gone: the resourceVersion is too old.
    Expired,
    /// A watch or list ended with an error, or a malformed event was skipped.
    Error,
    /// The Reflector's health changed: it backs off (WARN: why, since when, next retry), or
    /// it watches again (INFO).
    Health(HealthLevel),
}

/// How much a health entry deserves attention, as a log level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HealthLevel {
    Info,
    Warn,
}

impl HealthLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Warn => "warn",
        }
    }
}

impl TapKind {
    pub fn label(&self) -> &'static str {
        match self {
            Self::Watch(t) => t.as_str(),
            Self::Delta(t) => t.as_str(),
            Self::Relist { .. } => "RELIST",
            Self::WatchStart => "WATCH",
            Self::Expired => "EXPIRED",
            Self::Error => "ERROR",
            Self::Health(_) => "HEALTH",
        }
    }
}

/// One thing that flowed through the pipeline.
#[derive(Debug, Clone)]
pub struct TapEntry {
    /// Increasing, so a subscriber that lagged can tell how many it missed.
    pub seq: u64,
    pub at: SystemTime,
    pub kind: TapKind,
    pub key: Option<Key>,
    pub resource_version: Option<String>,
    /// The raw object of a watch event.
    pub raw: Option<Bytes>,
    /// The raw object of the previous watch event for the same key, if still kept.
    pub previous_raw: Option<Bytes>,
    pub message: Option<String>,
}

impl TapEntry {
    /// The field paths that differ from the previous version of the same key (metadata noise
    /// such as resourceVersion and managedFields left out). `None` if either version is
    /// unknown or not valid JSON.
    pub fn changed_paths(&self) -> Option<Vec<String>> {
        let new: Value = serde_json::from_slice(self.raw.as_ref()?).ok()?;
        let old: Value = serde_json::from_slice(self.previous_raw.as_ref()?).ok()?;
        Some(changed_paths(&old, &new, &is_noise))
    }
}

/// Why an entry has no full diff to show.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiffUnavailable {
    #[error("{0} entries carry no object: only watch events keep the raw JSON")]
    NoObject(&'static str),
    #[error(
        "no earlier version of this object is kept (first seen, evicted from the ring, or \
         forgotten at a relist)"
    )]
    NoPrevious,
    #[error("the recorded object is not valid JSON: {0}")]
    Malformed(String),
}

impl TapEntry {
    /// Every field that differs from the previous version of the same key, with old and new
    /// values (nothing left out: the caller decides what is noise). An addition with no
    /// earlier version is the whole object, added.
    pub fn diff(&self) -> Result<Vec<Change>, DiffUnavailable> {
        let raw = self
            .raw
            .as_ref()
            .ok_or(DiffUnavailable::NoObject(self.kind.label()))?;
        let parse = |bytes: &Bytes| {
            serde_json::from_slice::<Value>(bytes)
                .map_err(|e| DiffUnavailable::Malformed(e.to_string()))
        };
        let previous = match (&self.previous_raw, &self.kind) {
            (Some(previous), _) => parse(previous)?,
            (None, TapKind::Watch(WatchEventType::Added) | TapKind::Delta(DeltaType::Added)) => {
                Value::Object(serde_json::Map::new())
            }
            (None, _) => return Err(DiffUnavailable::NoPrevious),
        };
        Ok(diff(&previous, &parse(raw)?))
    }
}

/// Fields whose changes say nothing about the object.
fn is_noise(path: &str) -> bool {
    matches!(
        path,
        "metadata.resourceVersion" | "metadata.managedFields" | "metadata.generation"
    )
}

struct Ring {
    entries: VecDeque<Arc<TapEntry>>,
    capacity: usize,
    next_seq: u64,
    /// The newest raw object per key among the entries in the ring.
    last_raw: HashMap<Key, Bytes, foldhash::fast::RandomState>,
    /// Keys whose history is kept beyond the ring (the objects a person selected or opened),
    /// least recently asked for first.
    kept: VecDeque<KeptHistory>,
}

/// Keys whose history the tap keeps beyond its ring, and entries kept per key: bounded, so
/// a person browsing many objects, or one object changing fast, costs a fixed amount.
const KEPT_KEYS: usize = 32;
const KEPT_ENTRIES: usize = 256;

/// One key's history, kept from `since` on (or from its oldest entry, once more than
/// [`KEPT_ENTRIES`] came).
struct KeptHistory {
    key: Key,
    since: SystemTime,
    entries: VecDeque<Arc<TapEntry>>,
    /// Entries dropped for the cap: the history is then complete only from the oldest kept.
    dropped: bool,
}

/// How far back a key's history goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistorySpan {
    /// Every entry for the key since this time is kept.
    Since(SystemTime),
    /// Only what the ring still holds: its newest entries across all keys.
    Ring,
}

/// A cheap handle to one informer's tap.
#[derive(Clone)]
pub struct Tap {
    ring: Arc<Mutex<Ring>>,
    tx: broadcast::Sender<Arc<TapEntry>>,
    keep_raw: KeepRaw,
}

/// What the tap does to a raw object before keeping it: returns bytes of its own (the raw
/// object is a slice of the body frame it came in, and a kept slice would hold that whole
/// frame), masked where the kind needs it, or `None` when it cannot be kept safely. The layer
/// that knows the kinds provides it (`resources::secret::keepable_raw`): this one knows none.
pub type KeepRaw = fn(Bytes) -> Option<Bytes>;

/// What to record; the tap fills in the sequence number, the time and the previous version.
#[derive(Debug, Default)]
pub struct TapRecord {
    pub key: Option<Key>,
    pub resource_version: Option<String>,
    pub raw: Option<Bytes>,
    pub message: Option<String>,
}

impl Tap {
    /// A tap keeping the last `capacity` entries, raw objects included, each passed through
    /// `keep_raw` first.
    pub fn new(capacity: usize, keep_raw: KeepRaw) -> Self {
        let capacity = capacity.max(1);
        Self {
            ring: Arc::new(Mutex::new(Ring {
                entries: VecDeque::with_capacity(capacity),
                capacity,
                next_seq: 0,
                last_raw: HashMap::default(),
                kept: VecDeque::new(),
            })),
            tx: broadcast::channel(capacity).0,
            keep_raw,
        }
    }

    /// Keeps `record`, its raw object passed through `keep_raw` first (so a Secret's values
    /// never reach the ring, its subscribers, or what they show and print).
    pub fn record(&self, kind: TapKind, mut record: TapRecord) {
        record.raw = record.raw.and_then(self.keep_raw);
        let mut ring = self.ring.lock();
        if matches!(kind, TapKind::Relist { .. }) {
            // After a relist the previous watch event no longer tells what the store held.
            ring.last_raw.clear();
        }
        let previous_raw = match (&record.key, &record.raw) {
            (Some(key), Some(raw)) => ring.last_raw.insert(key.clone(), raw.clone()),
            _ => None,
        };
        let entry = Arc::new(TapEntry {
            seq: ring.next_seq,
            at: SystemTime::now(),
            kind,
            key: record.key,
            resource_version: record.resource_version,
            raw: record.raw,
            previous_raw,
            message: record.message,
        });
        ring.next_seq += 1;
        if ring.entries.len() == ring.capacity
            && let Some(evicted) = ring.entries.pop_front()
            && let (Some(key), Some(raw)) = (&evicted.key, &evicted.raw)
            && ring
                .last_raw
                .get(key)
                .is_some_and(|kept| kept.as_ptr() == raw.as_ptr())
        {
            ring.last_raw.remove(key);
        }
        ring.entries.push_back(entry.clone());
        if let Some(key) = &entry.key
            && let Some(kept) = ring.kept.iter_mut().find(|k| k.key == *key)
        {
            if kept.entries.len() == KEPT_ENTRIES {
                kept.entries.pop_front();
                kept.dropped = true;
            }
            kept.entries.push_back(entry.clone());
        }
        drop(ring);
        // No subscribers is fine: the ring still keeps the entry.
        let _ = self.tx.send(entry);
    }

    /// The entries kept, oldest first.
    pub fn snapshot(&self) -> Vec<Arc<TapEntry>> {
        self.ring.lock().entries.iter().cloned().collect()
    }

    /// Entry number `seq`, while the ring still keeps it.
    pub fn entry(&self, seq: u64) -> Option<Arc<TapEntry>> {
        let ring = self.ring.lock();
        let index = ring.entries.partition_point(|e| e.seq < seq);
        ring.entries.get(index).filter(|e| e.seq == seq).cloned()
    }

    /// The entries kept for one key, oldest first: an object's recent history, all of it
    /// since [`Tap::keep_history`] was asked for the key (up to a bound), else what the ring
    /// still holds.
    pub fn history(&self, key: &str) -> Vec<Arc<TapEntry>> {
        let ring = self.ring.lock();
        if let Some(kept) = ring.kept.iter().find(|k| &*k.key == key) {
            return kept.entries.iter().cloned().collect();
        }
        ring.entries
            .iter()
            .filter(|e| e.key.as_deref() == Some(key))
            .cloned()
            .collect()
    }

    /// Keeps `key`'s history from now on beyond the ring, starting with what the ring holds
    /// of it: for the object a person selects or opens, whose history the ring's newest
    /// entries of every other object would push out. The least recently asked for of
    /// [`KEPT_KEYS`] keys is let go.
    pub fn keep_history(&self, key: &str) {
        let mut ring = self.ring.lock();
        if let Some(i) = ring.kept.iter().position(|k| &*k.key == key) {
            if let Some(kept) = ring.kept.remove(i) {
                ring.kept.push_back(kept);
            }
            return;
        }
        let mut entries: VecDeque<Arc<TapEntry>> = ring
            .entries
            .iter()
            .filter(|e| e.key.as_deref() == Some(key))
            .cloned()
            .collect();
        let dropped = entries.len() > KEPT_ENTRIES;
        while entries.len() > KEPT_ENTRIES {
            entries.pop_front();
        }
        // What the ring held of the key is complete back to the ring's oldest entry.
        let since = ring.entries.front().map_or_else(SystemTime::now, |e| e.at);
        if ring.kept.len() == KEPT_KEYS {
            ring.kept.pop_front();
        }
        ring.kept.push_back(KeptHistory {
            key: key.into(),
            since,
            entries,
            dropped,
        });
    }

    /// How far back [`Tap::history`] of `key` goes.
    pub fn history_span(&self, key: &str) -> HistorySpan {
        let ring = self.ring.lock();
        match ring.kept.iter().find(|k| &*k.key == key) {
            Some(kept) if kept.dropped => {
                HistorySpan::Since(kept.entries.front().map_or(kept.since, |e| e.at))
            }
            Some(kept) => HistorySpan::Since(kept.since),
            None => HistorySpan::Ring,
        }
    }

    /// Entries from now on. A subscriber that falls behind by more than the ring's capacity
    /// is told how many it missed (`RecvError::Lagged`).
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<TapEntry>> {
        self.tx.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::record_watch;

    #[test]
    fn a_kept_key_keeps_its_history_after_the_ring_moved_on() {
        let tap = Tap::new(4, copy);
        let record = |key: &str, rv: &str| {
            tap.record(
                TapKind::Watch(WatchEventType::Modified),
                TapRecord {
                    key: Some(key.into()),
                    resource_version: Some(rv.into()),
                    raw: None,
                    message: None,
                },
            );
        };
        record("shop/web", "1");
        assert_eq!(tap.history_span("shop/web"), HistorySpan::Ring);
        tap.keep_history("shop/web");
        assert!(matches!(
            tap.history_span("shop/web"),
            HistorySpan::Since(_)
        ));
        for rv in 2..10 {
            record("shop/other", &rv.to_string());
        }
        record("shop/web", "10");
        let rvs = |key: &str| -> Vec<String> {
            tap.history(key)
                .iter()
                .filter_map(|e| e.resource_version.clone())
                .collect()
        };
        assert_eq!(
            rvs("shop/web"),
            ["1", "10"],
            "older than the ring, still kept"
        );
        assert_eq!(rvs("shop/other"), ["7", "8", "9"], "the ring alone");
        for rv in 0..KEPT_ENTRIES + 5 {
            record("shop/web", &format!("x{rv}"));
        }
        assert_eq!(tap.history("shop/web").len(), KEPT_ENTRIES, "bounded");
        for i in 0..KEPT_KEYS {
            tap.keep_history(&format!("ns/k{i}"));
        }
        assert_eq!(tap.history_span("shop/web"), HistorySpan::Ring, "let go");
    }

    /// Keeps a copy of every raw object as it is.
    fn copy(raw: Bytes) -> Option<Bytes> {
        Some(Bytes::copy_from_slice(&raw))
    }

    #[test]
    fn changed_paths_against_the_previous_version_of_the_key() {
        let tap = Tap::new(10, copy);
        record_watch(
            &tap,
            "ns/a",
            1,
            r#"{"metadata":{"resourceVersion":"1","labels":{"app":"web"}},"status":{"phase":"Pending","containerStatuses":[{"ready":false,"restartCount":0}]}}"#,
        );
        record_watch(&tap, "ns/b", 2, r#"{"metadata":{"resourceVersion":"2"}}"#);
        record_watch(
            &tap,
            "ns/a",
            3,
            r#"{"metadata":{"resourceVersion":"3","labels":{"app":"web","tier":"front"}},"status":{"phase":"Running","containerStatuses":[{"ready":true,"restartCount":0}]}}"#,
        );
        let entries = tap.snapshot();
        assert_eq!(entries.len(), 3);
        assert_eq!(
            entries[0].changed_paths(),
            None,
            "first version has nothing to compare"
        );
        assert_eq!(
            entries[2].changed_paths().unwrap(),
            [
                "metadata.labels.tier",
                "status.containerStatuses[0].ready",
                "status.phase"
            ]
        );
        assert_eq!(tap.history("ns/a").len(), 2);
    }

    #[test]
    fn full_diff_has_old_and_new_values_or_says_why_not() {
        let tap = Tap::new(10, copy);
        record_watch(&tap, "ns/a", 1, r#"{"status":{"phase":"Pending"}}"#);
        record_watch(&tap, "ns/a", 2, r#"{"status":{"phase":"Running"}}"#);
        tap.record(
            TapKind::Delta(DeltaType::Updated),
            TapRecord {
                key: Some("ns/a".into()),
                ..TapRecord::default()
            },
        );
        let entries = tap.snapshot();
        assert_eq!(entries[0].diff(), Err(DiffUnavailable::NoPrevious));
        assert_eq!(
            entries[1].diff().unwrap(),
            [Change::Changed {
                path: "status.phase".into(),
                old: "Pending".into(),
                new: "Running".into()
            }]
        );
        assert_eq!(entries[2].diff(), Err(DiffUnavailable::NoObject("Updated")));
    }

    #[test]
    fn ring_is_bounded_and_forgets_evicted_raw_objects() {
        let tap = Tap::new(2, copy);
        record_watch(&tap, "ns/a", 1, r#"{"v":1}"#);
        record_watch(&tap, "ns/b", 2, r#"{"v":2}"#);
        record_watch(&tap, "ns/c", 3, r#"{"v":3}"#);
        let entries = tap.snapshot();
        assert_eq!(entries.iter().map(|e| e.seq).collect::<Vec<_>>(), [1, 2]);
        // ns/a's raw was evicted with its entry: a new version has nothing to diff against.
        record_watch(&tap, "ns/a", 4, r#"{"v":4}"#);
        assert!(tap.snapshot()[1].previous_raw.is_none());
    }

    /// A raw object is a slice of the body frame it came in; the ring must not keep the
    /// frame alive through it.
    #[test]
    fn the_ring_keeps_a_copy_not_the_frame_a_raw_object_came_in() {
        let tap = Tap::new(10, copy);
        let frame = Bytes::from(format!("{}\n{{\"v\":1}}\n", "x".repeat(64 * 1024)));
        let raw = frame.slice(64 * 1024 + 1..frame.len() - 1);
        tap.record(
            TapKind::Watch(WatchEventType::Modified),
            TapRecord {
                key: Some(Key::from("ns/a")),
                raw: Some(raw),
                ..TapRecord::default()
            },
        );
        let kept = tap.snapshot()[0].raw.clone().unwrap();
        assert_eq!(kept, r#"{"v":1}"#);
        assert!(!frame.as_ptr_range().contains(&kept.as_ptr()));
    }

    #[test]
    fn relist_forgets_previous_versions() {
        let tap = Tap::new(10, copy);
        record_watch(&tap, "ns/a", 1, r#"{"v":1}"#);
        tap.record(TapKind::Relist { objects: 1 }, TapRecord::default());
        record_watch(&tap, "ns/a", 2, r#"{"v":2}"#);
        assert!(tap.snapshot()[2].previous_raw.is_none());
    }

    #[tokio::test]
    async fn subscribers_receive_entries_as_they_happen() {
        let tap = Tap::new(4, copy);
        let mut rx = tap.subscribe();
        record_watch(&tap, "ns/a", 1, "{}");
        let entry = rx.recv().await.unwrap();
        assert_eq!(entry.key.as_deref(), Some("ns/a"));
        assert_eq!(entry.kind.label(), "MODIFIED");
    }
}
