//! Two pipelines on one watch stream: a [`TeeStore`] feeds every Reflector call to two FIFOs,
//! and a [`PipelineComparison`] reads both informers' [`Handoff`]s and says where what they
//! hand a controller differs: deltas merged or not, their order, and how a relist or a resync
//! is delivered.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::{broadcast, mpsc};

use crate::delta_fifo::{DeltaType, Listed, ReflectorStore};
use crate::fifo::{FifoKind, HandedDelta, HandedItem, Handoff};
use crate::keys::{Key, KeyError};

/// Deliveries kept per pipeline while waiting for the other to hand the same one; past it
/// the oldest half is forgotten (the order check then skips them).
const UNMATCHED_CAP: usize = 100_000;

/// Feeds every Reflector call to both stores, `first` first.
#[derive(Clone)]
pub struct TeeStore<A, B> {
    first: A,
    second: B,
}

impl<A, B> TeeStore<A, B> {
    pub fn new(first: A, second: B) -> Self {
        Self { first, second }
    }
}

impl<T, A, B> ReflectorStore<T> for TeeStore<A, B>
where
    A: ReflectorStore<T>,
    B: ReflectorStore<T>,
{
    fn add(&self, obj: Arc<T>) -> Result<(), KeyError> {
        self.first.add(obj.clone())?;
        self.second.add(obj)
    }

    fn update(&self, obj: Arc<T>) -> Result<(), KeyError> {
        self.first.update(obj.clone())?;
        self.second.update(obj)
    }

    fn delete(&self, obj: Arc<T>) -> Result<(), KeyError> {
        self.first.delete(obj.clone())?;
        self.second.delete(obj)
    }

    fn replace(&self, list: Vec<Arc<T>>, resource_version: &str) -> Result<(), KeyError> {
        self.first.replace(list.clone(), resource_version)?;
        self.second.replace(list, resource_version)
    }

    fn resync(&self) -> Result<(), KeyError> {
        self.first.resync()?;
        self.second.resync()
    }

    fn bookmark(&self, resource_version: &str) {
        self.first.bookmark(resource_version);
        self.second.bookmark(resource_version);
    }

    fn known_copy(&self, key: &str, obj: &T) -> Option<Arc<T>> {
        self.first.known_copy(key, obj)
    }

    /// Only if both stream: otherwise both are handed the whole state at once.
    fn streams_listed(&self) -> bool {
        self.first.streams_listed() && self.second.streams_listed()
    }

    fn add_listed(&self, objs: Vec<(Key, Arc<T>)>) {
        self.first.add_listed(objs.clone());
        self.second.add_listed(objs);
    }

    fn finish_listed(&self, listed: &Listed, resource_version: &str) {
        self.first.finish_listed(listed, resource_version);
        self.second.finish_listed(listed, resource_version);
    }

    fn knows_nothing(&self) -> bool {
        self.first.knows_nothing() && self.second.knows_nothing()
    }
}

/// Handoffs kept between the pipelines' broadcasts and the one reader of [`merge_handoffs`].
const MERGED_HANDOFFS: usize = 1024;

/// One channel fed by every receiver, for a reader of both pipelines at once: a handoff, or
/// how many a lagging receiver missed. Each receiver's task ends when its informer stops or
/// the channel's reader goes away.
pub fn merge_handoffs(
    receivers: Vec<broadcast::Receiver<Arc<Handoff>>>,
) -> mpsc::Receiver<Result<Arc<Handoff>, u64>> {
    let (tx, rx) = mpsc::channel(MERGED_HANDOFFS);
    for mut receiver in receivers {
        let tx = tx.clone();
        tokio::spawn(async move {
            loop {
                let next = match receiver.recv().await {
                    Ok(handoff) => Ok(handoff),
                    Err(broadcast::error::RecvError::Lagged(missed)) => Err(missed),
                    Err(broadcast::error::RecvError::Closed) => return,
                };
                if tx.send(next).await.is_err() {
                    return;
                }
            }
        });
    }
    rx
}

/// What kind of difference a [`Difference`] marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DifferenceKind {
    /// Several deltas of one key handed as one item (classic) where the other hands each.
    Merged,
    /// Two deliveries handed in opposite orders by the two pipelines.
    Order,
    /// A relist handed as one ReplacedAll where the other hands an item per object.
    Relist,
    /// A resync handed as one SyncAll where the other hands a Sync per key.
    Resync,
}

impl DifferenceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Merged => "merged",
            Self::Order => "order",
            Self::Relist => "relist",
            Self::Resync => "resync",
        }
    }
}

/// One place where the two pipelines hand a controller different things.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    pub kind: DifferenceKind,
    /// The pipeline whose handoff shows it.
    pub fifo: FifoKind,
    /// That handoff's sequence number.
    pub seq: u64,
    pub key: Option<Key>,
    pub message: String,
}

/// One object delta as both pipelines would name it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct DeliveryId {
    key: Key,
    delta_type: DeltaType,
    resource_version: Option<String>,
}

impl DeliveryId {
    fn of(key: &Key, delta: &HandedDelta) -> Self {
        Self {
            key: key.clone(),
            delta_type: delta.delta_type,
            resource_version: delta.resource_version.clone(),
        }
    }

    fn describe(&self) -> String {
        format!(
            "{} {}@{}",
            self.delta_type.as_str(),
            self.key,
            self.resource_version.as_deref().unwrap_or("?")
        )
    }
}

/// A delivery both pipelines made, with its position in each.
#[derive(Debug, Clone)]
struct Matched {
    id: DeliveryId,
    index: [u64; 2],
}

/// Reads the handoffs of two informers with different FIFOs, in any interleaving, and marks
/// their differences.
#[derive(Debug, Clone)]
pub struct PipelineComparison {
    kinds: [FifoKind; 2],
    next_index: [u64; 2],
    unmatched: [HashMap<DeliveryId, u64>; 2],
    last_matched: Option<Matched>,
}

/// Two pipelines of the same kind hand the same things: nothing to compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("both pipelines are {0}: compare two different FIFOs")]
pub struct SameFifo(pub FifoKind);

fn describe_deltas(deltas: &[HandedDelta]) -> String {
    deltas
        .iter()
        .map(|d| {
            format!(
                "{}@{}{}",
                d.delta_type.as_str(),
                d.resource_version.as_deref().unwrap_or("?"),
                if d.tombstone { " (tombstone)" } else { "" }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl PipelineComparison {
    pub fn new(first: FifoKind, second: FifoKind) -> Result<Self, SameFifo> {
        if first == second {
            return Err(SameFifo(first));
        }
        Ok(Self {
            kinds: [first, second],
            next_index: [0; 2],
            unmatched: [HashMap::new(), HashMap::new()],
            last_matched: None,
        })
    }

    /// The differences `handoff` shows against what the other pipeline handed (or will:
    /// an order difference is marked on whichever handoff completes the pair). A handoff of
    /// neither compared FIFO shows none.
    pub fn observe(&mut self, handoff: &Handoff) -> Vec<Difference> {
        let Some(side) = self.kinds.iter().position(|k| *k == handoff.fifo) else {
            return Vec::new();
        };
        let other = self.kinds[1 - side];
        let mut found = Vec::new();
        let mark = |kind, key: Option<&Key>, message: String| Difference {
            kind,
            fifo: handoff.fifo,
            seq: handoff.seq,
            key: key.cloned(),
            message,
        };
        for item in &handoff.items {
            match item {
                HandedItem::Deltas { key, deltas } => {
                    if deltas.len() > 1 && other != FifoKind::Classic {
                        found.push(mark(
                            DifferenceKind::Merged,
                            Some(key),
                            format!(
                                "{key}: {} deltas handed as one item ({}); {other} hands each as its own item",
                                deltas.len(),
                                describe_deltas(deltas)
                            ),
                        ));
                    }
                    for delta in deltas {
                        // Against an atomic pipeline, a relist's and a resync's per-object
                        // items have no counterpart to be ordered against.
                        let whole_store_there = other == FifoKind::Atomic
                            && (matches!(delta.delta_type, DeltaType::Replaced | DeltaType::Sync)
                                || delta.tombstone);
                        if whole_store_there {
                            continue;
                        }
                        if let Some(difference) = self.deliver(side, DeliveryId::of(key, delta)) {
                            found.push(mark(DifferenceKind::Order, Some(key), difference));
                        }
                    }
                }
                HandedItem::ReplacedAll {
                    resource_version,
                    objects,
                } => found.push(mark(
                    DifferenceKind::Relist,
                    None,
                    format!(
                        "relist at resourceVersion {resource_version}: one ReplacedAll of {objects} objects; {other} hands a Replaced item per object and a Deleted tombstone per object the list lacks"
                    ),
                )),
                HandedItem::SyncAll => found.push(mark(
                    DifferenceKind::Resync,
                    None,
                    format!(
                        "resync: one SyncAll (an update of every stored object to itself); {other} hands a Sync item per key with nothing queued"
                    ),
                )),
                HandedItem::Bookmark { .. } => {}
            }
        }
        found
    }

    /// Records a delivery on `side`; once both sides made it, checks its order against the
    /// delivery matched before it.
    fn deliver(&mut self, side: usize, id: DeliveryId) -> Option<String> {
        let index = self.next_index[side];
        self.next_index[side] += 1;
        let other_index = self.unmatched[1 - side].remove(&id);
        let Some(other_index) = other_index else {
            let mine = &mut self.unmatched[side];
            if mine.len() >= UNMATCHED_CAP {
                let cut = index.saturating_sub(UNMATCHED_CAP as u64 / 2);
                mine.retain(|_, i| *i >= cut);
            }
            mine.insert(id, index);
            return None;
        };
        let mut indices = [0; 2];
        indices[side] = index;
        indices[1 - side] = other_index;
        let matched = Matched { id, index: indices };
        let previous = self.last_matched.replace(matched.clone())?;
        let first_before = previous.index[0] < matched.index[0];
        let second_before = previous.index[1] < matched.index[1];
        if first_before == second_before {
            return None;
        }
        let (a, b) = (previous.id.describe(), matched.id.describe());
        let (earlier_first, earlier_second) = if first_before { (&a, &b) } else { (&b, &a) };
        Some(format!(
            "{a} and {b} are handed in opposite orders: {} hands {earlier_first} first, {} hands {earlier_second} first",
            self.kinds[0], self.kinds[1]
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indexer::IndexerWriter;
    use crate::informer::SharedIndexInformer;
    use crate::testing::{TestObj, obj};

    /// Feeds `feed` to two pipelines through a tee before either pops, then runs both and
    /// returns their handoffs and the differences found reading them in turn.
    async fn compare(
        first: FifoKind,
        second: FifoKind,
        feed: impl FnOnce(&dyn ReflectorStore<TestObj>),
    ) -> (Vec<Handoff>, Vec<Handoff>, Vec<Difference>) {
        let (a, a_loop) =
            SharedIndexInformer::with_fifo(IndexerWriter::default(), None, None, first);
        let (b, b_loop) =
            SharedIndexInformer::with_fifo(IndexerWriter::default(), None, None, second);
        let (mut a_rx, mut b_rx) = (a.subscribe_handoffs(), b.subscribe_handoffs());
        let tee = TeeStore::new(a.store().clone(), b.store().clone());
        feed(&tee);
        a.stop();
        b.stop();
        a_loop.run().await;
        b_loop.run().await;
        let drain = |rx: &mut tokio::sync::broadcast::Receiver<Arc<Handoff>>| {
            let mut out = Vec::new();
            while let Ok(h) = rx.try_recv() {
                out.push((*h).clone());
            }
            out
        };
        let (a_handoffs, b_handoffs) = (drain(&mut a_rx), drain(&mut b_rx));
        let mut comparison = PipelineComparison::new(first, second).unwrap();
        let mut differences = Vec::new();
        for h in a_handoffs.iter().chain(&b_handoffs) {
            differences.extend(comparison.observe(h));
        }
        let store = |i: &SharedIndexInformer<TestObj>| {
            let mut all: Vec<(String, String)> = i
                .indexer()
                .list()
                .iter()
                .map(|o| (o.name.clone(), o.resource_version.clone()))
                .collect();
            all.sort();
            all
        };
        assert_eq!(store(&a), store(&b), "both stores end alike");
        (a_handoffs, b_handoffs, differences)
    }

    fn items(h: &Handoff) -> usize {
        h.items.len()
    }

    /// The crafted stream: ns/a updated twice between two pops.
    #[tokio::test]
    async fn a_key_updated_twice_between_pops_is_one_merged_item_under_classic_two_under_real() {
        let (classic, real, differences) = compare(FifoKind::Classic, FifoKind::Real, |s| {
            s.replace(vec![obj("ns/a", 1, ""), obj("ns/b", 1, "")], "1")
                .unwrap();
            s.update(obj("ns/a", 2, "")).unwrap();
            s.update(obj("ns/b", 3, "")).unwrap();
            s.update(obj("ns/a", 4, "")).unwrap();
        })
        .await;
        assert_eq!(classic.len(), 2, "one handoff per key: {classic:#?}");
        assert_eq!(
            classic[0].items,
            [HandedItem::Deltas {
                key: "ns/a".into(),
                deltas: ["Replaced", "Updated", "Updated"]
                    .iter()
                    .zip(["1", "2", "4"])
                    .map(|(t, rv)| HandedDelta {
                        delta_type: match *t {
                            "Replaced" => DeltaType::Replaced,
                            _ => DeltaType::Updated,
                        },
                        resource_version: Some(rv.into()),
                        tombstone: false,
                    })
                    .collect()
            }]
        );
        let real_items: usize = real.iter().map(items).sum();
        assert_eq!(real_items, 5, "every event its own item: {real:#?}");
        let kinds: Vec<(DifferenceKind, FifoKind, Option<&str>)> = differences
            .iter()
            .map(|d| (d.kind, d.fifo, d.key.as_deref()))
            .collect();
        assert_eq!(
            kinds,
            [
                (DifferenceKind::Merged, FifoKind::Classic, Some("ns/a")),
                (DifferenceKind::Merged, FifoKind::Classic, Some("ns/b")),
                (DifferenceKind::Order, FifoKind::Real, Some("ns/a")),
                (DifferenceKind::Order, FifoKind::Real, Some("ns/a")),
            ],
            "{differences:#?}"
        );
        assert!(
            differences[0]
                .message
                .contains("3 deltas handed as one item"),
            "{}",
            differences[0].message
        );
        assert_eq!(
            differences[3].message,
            "Updated ns/b@3 and Updated ns/a@4 are handed in opposite orders: classic hands \
             Updated ns/a@4 first, real hands Updated ns/b@3 first"
        );
    }

    /// A relist and a resync: Replaced items and tombstones under real, one ReplacedAll and
    /// one SyncAll under atomic.
    #[tokio::test]
    async fn relists_and_resyncs_are_single_items_under_atomic() {
        let (real, atomic, differences) = compare(FifoKind::Real, FifoKind::Atomic, |s| {
            s.replace(vec![obj("ns/a", 1, ""), obj("ns/b", 2, "")], "2")
                .unwrap();
        })
        .await;
        assert_eq!(real.iter().map(items).sum::<usize>(), 2);
        assert_eq!(atomic.len(), 1);
        assert_eq!(
            atomic[0].items,
            [HandedItem::ReplacedAll {
                resource_version: "2".into(),
                objects: 2
            }]
        );
        assert_eq!(differences.len(), 1);
        assert_eq!(differences[0].kind, DifferenceKind::Relist);
        assert_eq!(differences[0].fifo, FifoKind::Atomic);

        // A resync needs a store that holds something: run the feed against processed ones.
        let (a, a_loop) =
            SharedIndexInformer::with_fifo(IndexerWriter::default(), None, None, FifoKind::Real);
        let (b, b_loop) =
            SharedIndexInformer::with_fifo(IndexerWriter::default(), None, None, FifoKind::Atomic);
        let (mut a_rx, mut b_rx) = (a.subscribe_handoffs(), b.subscribe_handoffs());
        let tee = TeeStore::new(a.store().clone(), b.store().clone());
        let (a_run, b_run) = (tokio::spawn(a_loop.run()), tokio::spawn(b_loop.run()));
        tee.replace(vec![obj("ns/a", 1, "")], "1").unwrap();
        assert!(a.wait_for_sync().await && b.wait_for_sync().await);
        while a.indexer().is_empty() || b.indexer().is_empty() {
            tokio::task::yield_now().await;
        }
        tee.resync().unwrap();
        a.stop();
        b.stop();
        a_run.await.unwrap();
        b_run.await.unwrap();
        let mut comparison = PipelineComparison::new(FifoKind::Real, FifoKind::Atomic).unwrap();
        let mut found = Vec::new();
        for rx in [&mut a_rx, &mut b_rx] {
            while let Ok(h) = rx.try_recv() {
                found.extend(comparison.observe(&h).into_iter().map(|d| d.kind));
            }
        }
        assert_eq!(found, [DifferenceKind::Relist, DifferenceKind::Resync]);
    }

    #[test]
    fn a_pipeline_is_not_compared_with_itself() {
        assert_eq!(
            PipelineComparison::new(FifoKind::Real, FifoKind::Real).unwrap_err(),
            SameFifo(FifoKind::Real)
        );
    }
}
