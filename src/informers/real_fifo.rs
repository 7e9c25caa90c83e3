//! client-go's RealFIFO (InOrderInformers, GA in 1.36) and, with atomic events, its AtomicFIFO
//! (beta in 1.36): every event is queued in the order it arrived, with no per-key merging.
//!
//! A Replace is delivered as a Deleted tombstone for every queued or known key the list lacks,
//! then a Replaced item per listed object (RealFIFO), or as one ReplacedAll item the process
//! loop reconciles against the store (AtomicFIFO). A resync is Sync items for the known keys
//! with nothing queued (RealFIFO), or one SyncAll (AtomicFIFO). Pops can take a batch: up to
//! `batch_size` items in a row with distinct keys, never across the end of the first list and
//! never a whole-store item, as InOrderInformersBatchProcess does.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use super::delta_fifo::{Delta, Deltas, FifoClosed, Hasher, Listed, ReflectorStore};
use super::fifo_core::{FifoCore, Locked, Queue, keyed};
use super::indexer::Indexer;
use super::keys::{DeletedFinalStateUnknown, DeltaObject, Key, KeyError, meta_namespace_key};
use super::metrics::InformerMetrics;
use super::object::Object;

/// client-go's default batch size for PopBatch.
pub const DEFAULT_BATCH_SIZE: usize = 1000;

/// One item a pop hands the process loop.
#[derive(Debug)]
pub enum FifoItem<T> {
    /// Deltas of one key: all those queued since the key was last popped (classic), or
    /// exactly one (in order).
    Deltas { key: Key, deltas: Deltas<T> },
    /// A whole relist, to reconcile against the store (AtomicFIFO).
    ReplacedAll {
        resource_version: String,
        objects: Vec<(Key, Arc<T>)>,
    },
    /// A resync of everything in the store (AtomicFIFO).
    SyncAll,
    /// The store is at this resourceVersion once what came before is applied (AtomicFIFO).
    Bookmark { resource_version: String },
}

/// The items in arrival order, and how many popped ones are still being processed (an
/// AtomicFIFO processes without the lock).
struct RealQueue<T> {
    items: VecDeque<FifoItem<T>>,
    in_flight: usize,
}

impl<T> Queue for RealQueue<T> {
    /// Items queued, and popped items still being processed.
    fn len(&self) -> usize {
        self.items.len() + self.in_flight
    }
}

/// The RealFIFO, or with `atomic` the AtomicFIFO. Cloning is cheap and shares the queue.
pub struct RealFifo<T> {
    core: FifoCore<RealQueue<T>>,
    /// The store a RealFIFO's Replace and Resync reconcile against. An AtomicFIFO never
    /// consults it for them (the process loop reconciles a ReplacedAll against the store);
    /// both use it only for [`ReflectorStore::known_copy`].
    known_objects: Indexer<T>,
    atomic: bool,
}

impl<T> Clone for RealFifo<T> {
    fn clone(&self) -> Self {
        Self {
            core: self.core.clone(),
            known_objects: self.known_objects.clone(),
            atomic: self.atomic,
        }
    }
}

/// The key an in-order item names, if it names one.
fn item_key<T>(item: &FifoItem<T>) -> Option<&Key> {
    match item {
        FifoItem::Deltas { key, .. } => Some(key),
        _ => None,
    }
}

impl<T: Object> RealFifo<T> {
    /// A RealFIFO reconciling relists and resyncs against `known_objects` (the informer's
    /// store), as client-go requires of it.
    pub fn new(known_objects: Indexer<T>, metrics: Arc<InformerMetrics>) -> Self {
        Self::build(known_objects, false, metrics)
    }

    /// An AtomicFIFO: relists, resyncs and bookmarks are single items. `store` is read only
    /// to hand a relist the copies it already holds.
    pub fn atomic(store: Indexer<T>, metrics: Arc<InformerMetrics>) -> Self {
        Self::build(store, true, metrics)
    }

    fn build(known_objects: Indexer<T>, atomic: bool, metrics: Arc<InformerMetrics>) -> Self {
        let queue = RealQueue {
            items: VecDeque::new(),
            in_flight: 0,
        };
        Self {
            core: FifoCore::new(queue, metrics),
            known_objects,
            atomic,
        }
    }

    pub fn is_atomic(&self) -> bool {
        self.atomic
    }

    fn push_locked(&self, state: &mut Locked<RealQueue<T>>, item: FifoItem<T>) {
        state.queue.items.push_back(item);
        self.core.queued_locked(state);
    }

    fn push_delta_locked(&self, state: &mut Locked<RealQueue<T>>, key: Key, delta: Delta<T>) {
        self.push_locked(
            state,
            FifoItem::Deltas {
                key,
                deltas: vec![delta],
            },
        );
    }

    fn queue_change(&self, obj: Arc<T>, delta: fn(Arc<T>) -> Delta<T>) -> Result<(), KeyError> {
        let key = meta_namespace_key(obj.as_ref())?;
        self.core.metrics().saw_on_wire(obj.resource_version());
        let mut state = self.core.lock();
        self.core.mark_populated_locked(&mut state);
        self.push_delta_locked(&mut state, key, delta(obj));
        Ok(())
    }

    /// Waits for the head item and hands it, or with `batch_size` > 1 a batch of items, to
    /// `process` with whether they belong to the first list. A RealFIFO processes with the
    /// queue lock held (its Replace reads the store); an AtomicFIFO releases it, as with
    /// client-go's UnlockWhileProcessingFIFO, so a long ReplacedAll does not stall the
    /// Reflector. Items left at close are still popped; then `FifoClosed`.
    pub async fn pop<R>(
        &self,
        batch_size: usize,
        process: impl FnOnce(Vec<FifoItem<T>>, bool) -> R,
    ) -> Result<R, FifoClosed> {
        let (mut state, batch) = self
            .core
            .pop(|state| {
                (!state.queue.items.is_empty()).then(|| take_batch(state, batch_size.max(1)))
            })
            .await?;
        let is_in_initial_list = !state.has_synced();
        let n = batch.len();
        state.queue.in_flight += n;
        let result = if self.atomic {
            drop(state);
            let result = process(batch, is_in_initial_list);
            state = self.core.lock();
            result
        } else {
            process(batch, is_in_initial_list)
        };
        state.queue.in_flight -= n;
        self.core.popped_locked(&mut state, n);
        Ok(result)
    }

    pub fn close(&self) {
        self.core.close();
    }

    pub fn is_closed(&self) -> bool {
        self.core.is_closed()
    }

    pub fn has_synced(&self) -> bool {
        self.core.has_synced()
    }

    pub async fn wait_for_sync(&self) -> bool {
        self.core.wait_for_sync().await
    }

    /// Items queued, and popped items still being processed.
    pub fn len(&self) -> usize {
        self.core.lock().queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The keys of the queued items in pop order, a key once per item naming it.
    pub fn list_keys(&self) -> Vec<Key> {
        self.core
            .lock()
            .queue
            .items
            .iter()
            .filter_map(item_key)
            .cloned()
            .collect()
    }

    pub fn last_replace_resource_version(&self) -> Option<String> {
        self.core.last_replace_resource_version()
    }

    /// client-go's reconcileReplacement: a tombstone for each queued key the list lacks
    /// (unless its last queued item is a deletion), then for each known key the list lacks
    /// and nothing queued names, then a Replaced item per listed object.
    fn reconcile_locked(&self, state: &mut Locked<RealQueue<T>>, keyed: Vec<(Key, Arc<T>)>) {
        let listed: HashSet<Key, Hasher> = keyed.iter().map(|(k, _)| k.clone()).collect();
        self.delete_missing_locked(state, |key| listed.contains(key));
        for (key, obj) in keyed {
            self.push_delta_locked(state, key, Delta::Replaced(obj));
        }
    }

    /// The tombstones of [`RealFifo::reconcile_locked`], queued; returns how many.
    fn delete_missing_locked(
        &self,
        state: &mut Locked<RealQueue<T>>,
        listed: impl Fn(&str) -> bool,
    ) -> usize {
        let mut queued_order: Vec<Key> = Vec::new();
        let mut last_queued: HashMap<Key, Option<&Delta<T>>, Hasher> = HashMap::default();
        for item in &state.queue.items {
            if let FifoItem::Deltas { key, deltas } = item {
                if !last_queued.contains_key(key) {
                    queued_order.push(key.clone());
                }
                last_queued.insert(key.clone(), deltas.last());
            }
        }
        let mut tombstones: Vec<DeletedFinalStateUnknown<T>> = Vec::new();
        for key in &queued_order {
            if listed(key) {
                continue;
            }
            let last = last_queued.get(key).copied().flatten();
            if last.is_some_and(|d| matches!(d, Delta::Deleted(_))) {
                continue;
            }
            tombstones.push(DeletedFinalStateUnknown {
                key: key.clone(),
                obj: last.and_then(|d| d.object().cloned()),
            });
        }
        for key in self.known_objects.list_keys() {
            if listed(&key) || last_queued.contains_key(&key) {
                continue;
            }
            let obj = self.known_objects.get_by_key(&key);
            tombstones.push(DeletedFinalStateUnknown { key, obj });
        }
        drop(last_queued);
        let deletions = tombstones.len();
        for tombstone in tombstones {
            let key = tombstone.key.clone();
            self.push_delta_locked(
                state,
                key,
                Delta::Deleted(DeltaObject::Tombstone(tombstone)),
            );
        }
        deletions
    }
}

/// Up to `batch_size` items from the head: consecutive in-order deltas with distinct keys,
/// not past the first list's end; a whole-store item (ReplacedAll, SyncAll, Bookmark) only
/// alone.
fn take_batch<T>(state: &mut Locked<RealQueue<T>>, batch_size: usize) -> Vec<FifoItem<T>> {
    let mut len = 0;
    let mut keys: HashSet<&Key, Hasher> = HashSet::default();
    for item in state.queue.items.iter().take(batch_size) {
        if state.initial_population_count > 0 && len >= state.initial_population_count {
            break;
        }
        match item_key(item) {
            None => {
                if len == 0 {
                    len = 1;
                }
                break;
            }
            Some(key) => {
                if !keys.insert(key) {
                    break;
                }
                len += 1;
            }
        }
    }
    drop(keys);
    state.queue.items.drain(..len).collect()
}

impl<T: Object> ReflectorStore<T> for RealFifo<T> {
    fn add(&self, obj: Arc<T>) -> Result<(), KeyError> {
        self.queue_change(obj, Delta::Added)
    }

    fn update(&self, obj: Arc<T>) -> Result<(), KeyError> {
        self.queue_change(obj, Delta::Updated)
    }

    /// Queued whatever the store knows: in order, nothing is dropped.
    fn delete(&self, obj: Arc<T>) -> Result<(), KeyError> {
        self.queue_change(obj, |o| Delta::Deleted(DeltaObject::Object(o)))
    }

    fn replace(&self, list: Vec<Arc<T>>, resource_version: &str) -> Result<(), KeyError> {
        let keyed = keyed(list)?;
        self.core.metrics().saw_on_wire(Some(resource_version));
        let mut state = self.core.lock();
        if self.atomic {
            self.push_locked(
                &mut state,
                FifoItem::ReplacedAll {
                    resource_version: resource_version.to_string(),
                    objects: keyed,
                },
            );
        } else {
            self.reconcile_locked(&mut state, keyed);
        }
        let initial_population_count = state.queue.items.len();
        self.core
            .replaced_locked(&mut state, resource_version, initial_population_count);
        Ok(())
    }

    /// One SyncAll (atomic), or a Sync item for every known key nothing queued names.
    fn resync(&self) -> Result<(), KeyError> {
        let mut state = self.core.lock();
        if self.atomic {
            self.push_locked(&mut state, FifoItem::SyncAll);
            return Ok(());
        }
        let known = &self.known_objects;
        let queued: HashSet<Key, Hasher> = state
            .queue
            .items
            .iter()
            .filter_map(item_key)
            .cloned()
            .collect();
        for key in known.list_keys() {
            if queued.contains(&key) {
                continue;
            }
            if let Some(obj) = known.get_by_key(&key) {
                self.push_delta_locked(&mut state, key, Delta::Sync(obj));
            }
        }
        Ok(())
    }

    /// A RealFIFO queues a watch-list's objects as they arrive; an AtomicFIFO's relist is one
    /// item, which exists only once the whole state is in.
    fn streams_listed(&self) -> bool {
        !self.atomic
    }

    fn knows_nothing(&self) -> bool {
        self.core.lock().queue.is_empty() && self.known_objects.is_empty()
    }

    fn add_listed(&self, objs: Vec<(Key, Arc<T>)>) {
        let mut state = self.core.lock();
        for (key, obj) in objs {
            self.core.metrics().saw_on_wire(obj.resource_version());
            if !state.populated {
                state.initial_population_count += 1;
            }
            self.push_delta_locked(&mut state, key, Delta::Replaced(obj));
        }
    }

    /// The deletions come after the listed objects here (a Replace queues them first): they
    /// are known only once the stream has ended.
    fn finish_listed(&self, listed: &Listed, resource_version: &str) {
        self.core.finish_listed(listed, resource_version, |state| {
            self.delete_missing_locked(state, |key| listed.contains(key))
        });
    }

    /// An AtomicFIFO queues the bookmark so the store's resourceVersion moves in order; a
    /// RealFIFO only notes it was seen.
    fn bookmark(&self, resource_version: &str) {
        self.core.metrics().saw_on_wire(Some(resource_version));
        let mut state = self.core.lock();
        if self.atomic {
            self.push_locked(
                &mut state,
                FifoItem::Bookmark {
                    resource_version: resource_version.to_string(),
                },
            );
        } else if state.queue.is_empty() {
            self.core.metrics().caught_up();
        }
    }

    fn known_copy(&self, key: &str, obj: &T) -> Option<Arc<T>> {
        self.known_objects.copy_at_resource_version(key, obj)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::indexer::IndexerWriter;
    use crate::testing::{TestObj, keyed, obj};

    /// An item as `key:Type:rv` (`:tombstone` for an inferred deletion), or a whole-store
    /// item by its type.
    fn describe(item: &FifoItem<TestObj>) -> String {
        match item {
            FifoItem::Deltas { key, deltas } => deltas
                .iter()
                .map(|d| {
                    let rv = d
                        .object()
                        .map_or("?".to_string(), |o| o.resource_version.clone());
                    let tomb = if d.is_tombstone() { ":tombstone" } else { "" };
                    format!("{key}:{}:{rv}{tomb}", d.delta_type().as_str())
                })
                .collect::<Vec<_>>()
                .join(","),
            FifoItem::ReplacedAll {
                resource_version,
                objects,
            } => {
                let listed: Vec<String> = objects
                    .iter()
                    .map(|(k, o)| format!("{k}@{}", o.resource_version))
                    .collect();
                format!("ReplacedAll:{resource_version}:[{}]", listed.join(","))
            }
            FifoItem::SyncAll => "SyncAll".into(),
            FifoItem::Bookmark { resource_version } => format!("Bookmark:{resource_version}"),
        }
    }

    fn real(known: &[Arc<TestObj>]) -> RealFifo<TestObj> {
        let indexer = IndexerWriter::default();
        for o in known {
            indexer.add(o.clone()).unwrap();
        }
        RealFifo::new(indexer.reader(), Arc::default())
    }

    fn atomic() -> RealFifo<TestObj> {
        RealFifo::atomic(IndexerWriter::default().reader(), Arc::default())
    }

    /// Pops everything one item at a time.
    async fn drain(fifo: &RealFifo<TestObj>) -> Vec<String> {
        let mut out = Vec::new();
        while !fifo.is_empty() {
            out.extend(
                fifo.pop(1, |items, _| items.iter().map(describe).collect::<Vec<_>>())
                    .await
                    .unwrap(),
            );
        }
        out
    }

    /// Pops everything in batches of up to `size`.
    async fn batches(fifo: &RealFifo<TestObj>, size: usize) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        while !fifo.is_empty() {
            out.push(
                fifo.pop(size, |items, _| items.iter().map(describe).collect())
                    .await
                    .unwrap(),
            );
        }
        out
    }

    #[tokio::test]
    async fn every_event_is_its_own_item_in_arrival_order() {
        let fifo = real(&[]);
        fifo.add(obj("ns/a", 1, "")).unwrap();
        fifo.add(obj("ns/b", 2, "")).unwrap();
        fifo.update(obj("ns/a", 3, "")).unwrap();
        fifo.delete(obj("ns/a", 3, "")).unwrap();
        assert_eq!(fifo.len(), 4);
        assert_eq!(
            fifo.list_keys(),
            ["ns/a", "ns/b", "ns/a", "ns/a"].map(Key::from)
        );
        assert_eq!(
            drain(&fifo).await,
            [
                "ns/a:Added:1",
                "ns/b:Added:2",
                "ns/a:Updated:3",
                "ns/a:Deleted:3"
            ]
        );
    }

    /// client-go's TestRealFIFOW_ReplaceMakesDeletionsForObjectsOnlyInQueue.
    #[tokio::test]
    async fn replace_makes_deletions_for_objects_only_in_the_queue() {
        type Case = (
            &'static str,
            fn(&RealFifo<TestObj>),
            &'static [&'static str],
        );
        let cases: [Case; 5] = [
            (
                "added then replaced without it",
                |f| {
                    f.add(obj("ns/foo", 2, "")).unwrap();
                    f.replace(vec![], "0").unwrap();
                },
                &["ns/foo:Added:2", "ns/foo:Deleted:2:tombstone"],
            ),
            (
                "a queued delete is the only delete",
                |f| {
                    f.add(obj("ns/foo", 2, "")).unwrap();
                    f.delete(obj("ns/foo", 2, "")).unwrap();
                    f.replace(vec![], "0").unwrap();
                },
                &["ns/foo:Added:2", "ns/foo:Deleted:2"],
            ),
            (
                "replaced twice then gone: one delete",
                |f| {
                    f.add(obj("ns/foo", 2, "")).unwrap();
                    f.replace(vec![obj("ns/foo", 2, "")], "0").unwrap();
                    f.replace(vec![obj("ns/foo", 2, "")], "0").unwrap();
                    f.replace(vec![], "0").unwrap();
                },
                &[
                    "ns/foo:Added:2",
                    "ns/foo:Replaced:2",
                    "ns/foo:Replaced:2",
                    "ns/foo:Deleted:2:tombstone",
                ],
            ),
            (
                "two replaces without it: one delete",
                |f| {
                    f.add(obj("ns/foo", 2, "")).unwrap();
                    f.replace(vec![], "0").unwrap();
                    f.replace(vec![], "1").unwrap();
                },
                &["ns/foo:Added:2", "ns/foo:Deleted:2:tombstone"],
            ),
            (
                "added, deleted, added again: the tombstone carries the last",
                |f| {
                    f.add(obj("ns/foo", 2, "")).unwrap();
                    f.delete(obj("ns/foo", 2, "")).unwrap();
                    f.add(obj("ns/foo", 3, "")).unwrap();
                    f.replace(vec![], "0").unwrap();
                },
                &[
                    "ns/foo:Added:2",
                    "ns/foo:Deleted:2",
                    "ns/foo:Added:3",
                    "ns/foo:Deleted:3:tombstone",
                ],
            ),
        ];
        for (name, ops, expected) in cases {
            let fifo = real(&[]);
            ops(&fifo);
            assert_eq!(drain(&fifo).await, expected, "{name}");
        }
        // Without atomic events a bookmark queues nothing.
        let fifo = real(&[]);
        fifo.bookmark("123");
        fifo.replace(vec![], "0").unwrap();
        assert!(fifo.is_empty());
    }

    /// client-go's TestRealFIFO_ReplaceMakesDeletions: deletions of known keys come before
    /// the listed objects.
    #[tokio::test]
    async fn replace_makes_deletions_of_known_keys_before_the_listed_objects() {
        let known = [
            obj("ns/foo", 5, ""),
            obj("ns/bar", 6, ""),
            obj("ns/baz", 7, ""),
        ];

        let fifo = real(&known);
        fifo.delete(obj("ns/baz", 10, "")).unwrap();
        fifo.replace(vec![obj("ns/foo", 5, "")], "0").unwrap();
        assert_eq!(
            drain(&fifo).await,
            [
                "ns/baz:Deleted:10",
                "ns/bar:Deleted:6:tombstone",
                "ns/foo:Replaced:5"
            ]
        );

        let fifo = real(&known);
        fifo.add(obj("ns/baz", 10, "")).unwrap();
        fifo.replace(vec![obj("ns/foo", 5, "")], "0").unwrap();
        assert_eq!(
            drain(&fifo).await,
            [
                "ns/baz:Added:10",
                "ns/baz:Deleted:10:tombstone",
                "ns/bar:Deleted:6:tombstone",
                "ns/foo:Replaced:5"
            ]
        );

        let fifo = real(&known);
        fifo.delete(obj("ns/bar", 6, "")).unwrap();
        fifo.add(obj("ns/bar", 100, "")).unwrap();
        fifo.replace(vec![obj("ns/foo", 5, "")], "0").unwrap();
        assert_eq!(
            drain(&fifo).await,
            [
                "ns/bar:Deleted:6",
                "ns/bar:Added:100",
                "ns/bar:Deleted:100:tombstone",
                "ns/baz:Deleted:7:tombstone",
                "ns/foo:Replaced:5"
            ]
        );

        // A second Replace sees the first one's items still queued.
        let fifo = real(&known);
        fifo.replace(vec![obj("ns/bar", 100, ""), obj("ns/foo", 5, "")], "0")
            .unwrap();
        fifo.replace(vec![obj("ns/foo", 5, "")], "0").unwrap();
        assert_eq!(
            drain(&fifo).await,
            [
                "ns/baz:Deleted:7:tombstone",
                "ns/bar:Replaced:100",
                "ns/foo:Replaced:5",
                "ns/bar:Deleted:100:tombstone",
                "ns/foo:Replaced:5"
            ]
        );

        // With nothing known, only the queue is reconciled.
        let fifo = real(&[]);
        fifo.add(obj("ns/baz", 10, "")).unwrap();
        fifo.replace(vec![obj("ns/foo", 5, "")], "0").unwrap();
        assert_eq!(
            drain(&fifo).await,
            [
                "ns/baz:Added:10",
                "ns/baz:Deleted:10:tombstone",
                "ns/foo:Replaced:5"
            ]
        );
    }

    /// client-go's TestRealFIFO_UpdateResyncRace and TestRealFIFO_Resync.
    #[tokio::test]
    async fn resync_skips_keys_with_queued_items() {
        let fifo = real(&[obj("ns/foo", 5, "")]);
        fifo.update(obj("ns/foo", 6, "")).unwrap();
        fifo.resync().unwrap();
        assert_eq!(drain(&fifo).await, ["ns/foo:Updated:6"]);

        let fifo = real(&[obj("ns/foo", 5, ""), obj("ns/bar", 6, "")]);
        fifo.resync().unwrap();
        let mut synced = drain(&fifo).await;
        synced.sort();
        assert_eq!(synced, ["ns/bar:Sync:6", "ns/foo:Sync:5"]);
    }

    /// client-go's TestRealFIFO_HasSyncedCorrectOnDeletion: the first list's deletions count
    /// towards it, and every item of it is popped as initial.
    #[tokio::test]
    async fn has_synced_once_the_first_list_and_its_deletions_are_popped() {
        let fifo = real(&[
            obj("ns/foo", 5, ""),
            obj("ns/bar", 6, ""),
            obj("ns/baz", 7, ""),
        ]);
        fifo.replace(vec![obj("ns/foo", 5, "")], "0").unwrap();
        let mut popped = Vec::new();
        for _ in 0..3 {
            assert!(!fifo.has_synced());
            let (item, initial) = fifo
                .pop(1, |items, initial| (describe(&items[0]), initial))
                .await
                .unwrap();
            assert!(initial, "{item} is of the first list");
            popped.push(item);
        }
        assert!(fifo.has_synced());
        assert!(fifo.wait_for_sync().await);
        popped[..2].sort();
        assert_eq!(
            popped,
            [
                "ns/bar:Deleted:6:tombstone",
                "ns/baz:Deleted:7:tombstone",
                "ns/foo:Replaced:5"
            ]
        );
        fifo.add(obj("ns/new", 8, "")).unwrap();
        let initial = fifo.pop(1, |_, initial| initial).await.unwrap();
        assert!(!initial);
    }

    /// client-go's TestRealFIFO_PopMultipleDeltaInBatch: a batch ends at the first list's
    /// end, at a key already in it, or at the batch size.
    #[tokio::test]
    async fn batches_split_at_the_first_list_a_repeated_key_and_the_size() {
        const UNLIMITED: usize = 999_999;
        let (o1, o2, o3, o4) = (
            obj("ns/foo1", 5, ""),
            obj("ns/foo2", 5, ""),
            obj("ns/foo3", 5, ""),
            obj("ns/foo4", 5, ""),
        );
        type Case<'a> = (
            &'a str,
            Vec<Arc<TestObj>>,
            Vec<Arc<TestObj>>,
            usize,
            Vec<Vec<&'a str>>,
        );
        let cases: Vec<Case> = vec![
            (
                "unique items in one batch",
                vec![o1.clone(), o2.clone(), o3.clone()],
                vec![],
                UNLIMITED,
                vec![vec![
                    "ns/foo1:Replaced:5",
                    "ns/foo2:Replaced:5",
                    "ns/foo3:Replaced:5",
                ]],
            ),
            (
                "split at the first list's end",
                vec![o1.clone(), o2.clone()],
                vec![o3.clone(), o4.clone()],
                2,
                vec![
                    vec!["ns/foo1:Replaced:5", "ns/foo2:Replaced:5"],
                    vec!["ns/foo3:Updated:5", "ns/foo4:Updated:5"],
                ],
            ),
            (
                "one key updated twice: separate batches",
                vec![o1.clone()],
                vec![o1.clone(), o1.clone()],
                UNLIMITED,
                vec![
                    vec!["ns/foo1:Replaced:5"],
                    vec!["ns/foo1:Updated:5"],
                    vec!["ns/foo1:Updated:5"],
                ],
            ),
            (
                "a repeated key starts the next batch",
                vec![o1.clone(), o2.clone(), o3.clone()],
                vec![o2.clone()],
                UNLIMITED,
                vec![
                    vec![
                        "ns/foo1:Replaced:5",
                        "ns/foo2:Replaced:5",
                        "ns/foo3:Replaced:5",
                    ],
                    vec!["ns/foo2:Updated:5"],
                ],
            ),
            (
                "the batch size splits the first list",
                vec![o1.clone(), o2.clone(), o3.clone()],
                vec![],
                2,
                vec![
                    vec!["ns/foo1:Replaced:5", "ns/foo2:Replaced:5"],
                    vec!["ns/foo3:Replaced:5"],
                ],
            ),
            (
                "the batch size splits later updates",
                vec![],
                vec![o1.clone(), o2.clone(), o3.clone()],
                2,
                vec![
                    vec!["ns/foo1:Updated:5", "ns/foo2:Updated:5"],
                    vec!["ns/foo3:Updated:5"],
                ],
            ),
            (
                "first list and later items never share a batch",
                vec![o1.clone(), o2.clone(), o3.clone()],
                vec![o4.clone()],
                2,
                vec![
                    vec!["ns/foo1:Replaced:5", "ns/foo2:Replaced:5"],
                    vec!["ns/foo3:Replaced:5"],
                    vec!["ns/foo4:Updated:5"],
                ],
            ),
        ];
        for (name, initial, updates, size, expected) in cases {
            let fifo = real(&[]);
            fifo.replace(initial, "0").unwrap();
            for o in updates {
                fifo.update(o).unwrap();
            }
            assert_eq!(batches(&fifo, size).await, expected, "{name}");
        }
    }

    /// client-go's TestRealFIFO_ReplaceAtomic and TestRealFIFO_ResyncAtomic.
    #[tokio::test]
    async fn atomic_replace_resync_and_bookmark_are_single_items_in_order() {
        let fifo = atomic();
        fifo.replace(vec![], "123").unwrap();
        assert_eq!(drain(&fifo).await, ["ReplacedAll:123:[]"]);

        let fifo = atomic();
        fifo.add(obj("ns/foo", 2, "")).unwrap();
        fifo.replace(vec![obj("ns/foo", 2, "")], "10").unwrap();
        fifo.replace(vec![obj("ns/foo", 2, "")], "20").unwrap();
        fifo.replace(vec![], "56").unwrap();
        assert_eq!(
            drain(&fifo).await,
            [
                "ns/foo:Added:2",
                "ReplacedAll:10:[ns/foo@2]",
                "ReplacedAll:20:[ns/foo@2]",
                "ReplacedAll:56:[]"
            ]
        );

        let fifo = atomic();
        fifo.bookmark("123");
        fifo.replace(vec![], "1234").unwrap();
        assert_eq!(drain(&fifo).await, ["Bookmark:123", "ReplacedAll:1234:[]"]);

        let fifo = atomic();
        fifo.add(obj("ns/foo", 2, "")).unwrap();
        fifo.resync().unwrap();
        assert_eq!(drain(&fifo).await, ["ns/foo:Added:2", "SyncAll"]);
    }

    /// A whole-store item is never batched with deltas, and counts as one item of the first
    /// list.
    #[tokio::test]
    async fn atomic_whole_store_items_pop_alone() {
        let fifo = atomic();
        fifo.add(obj("ns/a", 1, "")).unwrap();
        fifo.add(obj("ns/b", 2, "")).unwrap();
        fifo.replace(vec![obj("ns/a", 3, "")], "3").unwrap();
        fifo.add(obj("ns/c", 4, "")).unwrap();
        fifo.resync().unwrap();
        assert_eq!(
            batches(&fifo, 100).await,
            [
                vec!["ns/a:Added:1", "ns/b:Added:2"],
                vec!["ReplacedAll:3:[ns/a@3]"],
                vec!["ns/c:Added:4"],
                vec!["SyncAll"],
            ]
        );
        assert!(fifo.has_synced());
    }

    /// An atomic FIFO processes without the queue lock: the Reflector can queue while a pop
    /// is being processed, and the in-flight item still counts as queued.
    #[tokio::test]
    async fn atomic_pop_releases_the_lock_while_processing() {
        let fifo = atomic();
        fifo.replace(vec![obj("ns/a", 1, "")], "1").unwrap();
        let queued_meanwhile = fifo
            .pop(1, |_, _| {
                fifo.add(obj("ns/b", 2, "")).unwrap();
                fifo.len()
            })
            .await
            .unwrap();
        assert_eq!(queued_meanwhile, 2, "one in flight, one queued");
        assert_eq!(drain(&fifo).await, ["ns/b:Added:2"]);
    }

    /// client-go's TestRealFIFO_PopShouldUnblockWhenClosed.
    #[tokio::test(start_paused = true)]
    async fn pop_waits_for_an_item_and_close_ends_after_draining() {
        let fifo = real(&[]);
        let popper = {
            let fifo = fifo.clone();
            tokio::spawn(async move { fifo.pop(1, |items, _| describe(&items[0])).await })
        };
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(!popper.is_finished());
        fifo.add(obj("ns/a", 1, "")).unwrap();
        assert_eq!(popper.await.unwrap().unwrap(), "ns/a:Added:1");
        fifo.add(obj("ns/b", 2, "")).unwrap();
        fifo.close();
        assert!(fifo.is_closed());
        assert_eq!(drain(&fifo).await, ["ns/b:Added:2"]);
        assert_eq!(fifo.pop(1, |_, _| ()).await, Err(FifoClosed));
    }

    /// A streamed state: Replaced items as they arrive, the deletions at the end marker.
    #[tokio::test]
    async fn a_streamed_first_list_queues_deletions_at_its_end() {
        let fifo = real(&[obj("ns/stale", 1, "")]);
        assert!(fifo.streams_listed());
        assert!(!atomic().streams_listed(), "a ReplacedAll is one item");
        fifo.add_listed(vec![keyed("ns/a", 2, "")]);
        let first = fifo
            .pop(10, |items, initial| (items.len(), initial))
            .await
            .unwrap();
        assert_eq!(first, (1, true));
        assert!(!fifo.has_synced());
        fifo.add_listed(vec![keyed("ns/b", 3, "")]);
        assert!(!fifo.knows_nothing(), "the store knows ns/stale");
        let listed = Listed::Keys(["ns/a", "ns/b"].into_iter().map(Key::from).collect());
        fifo.finish_listed(&listed, "5");
        assert!(!fifo.has_synced());
        assert_eq!(
            drain(&fifo).await,
            ["ns/b:Replaced:3", "ns/stale:Deleted:1:tombstone"]
        );
        assert!(fifo.has_synced());
    }

    /// Into an empty store, a streamed state that lacks nothing queues no deletion and
    /// syncs once its items are popped.
    #[tokio::test]
    async fn a_first_streamed_list_into_an_empty_store_queues_no_deletions() {
        let fifo = real(&[]);
        assert!(fifo.knows_nothing());
        fifo.add_listed(vec![keyed("ns/a", 2, ""), keyed("ns/b", 3, "")]);
        assert!(!fifo.knows_nothing(), "it has items queued");
        fifo.finish_listed(&Listed::AllStreamedExcept(Default::default()), "5");
        assert!(!fifo.has_synced());
        assert_eq!(drain(&fifo).await, ["ns/a:Replaced:2", "ns/b:Replaced:3"]);
        assert!(fifo.has_synced());
    }

    #[tokio::test]
    async fn queued_items_and_lag_are_counted() {
        let metrics = Arc::new(InformerMetrics::default());
        let fifo = RealFifo::new(
            IndexerWriter::<TestObj>::default().reader(),
            metrics.clone(),
        );
        fifo.replace(vec![obj("ns/a", 4, "")], "5").unwrap();
        fifo.add(obj("ns/b", 7, "")).unwrap();
        let s = metrics.snapshot();
        assert_eq!((s.queued_items, s.wire_resource_version), (2, 7));
        drain(&fifo).await;
        let s = metrics.snapshot();
        assert_eq!((s.queued_items, s.resource_version_lag()), (0, 0));
    }

    /// Fed a list and an event, the store is behind (for some time) until both are
    /// processed; a bookmark with nothing queued leaves it current.
    #[tokio::test]
    async fn the_store_is_behind_until_what_reached_the_fifo_is_processed() {
        let metrics = Arc::new(InformerMetrics::default());
        let fifo = RealFifo::new(
            IndexerWriter::<TestObj>::default().reader(),
            metrics.clone(),
        );
        assert_eq!(metrics.snapshot().behind_for, None);
        fifo.replace(vec![obj("ns/a", 4, "")], "5").unwrap();
        fifo.add(obj("ns/b", 7, "")).unwrap();
        assert!(metrics.snapshot().behind_for.is_some());
        drain(&fifo).await;
        assert_eq!(metrics.snapshot().behind_for, None);
        fifo.bookmark("9");
        let s = metrics.snapshot();
        assert_eq!(
            (
                s.store_resource_version,
                s.resource_version_lag(),
                s.behind_for
            ),
            (9, 0, None)
        );
    }

    #[tokio::test]
    async fn objects_without_a_name_are_refused() {
        let fifo = real(&[]);
        assert_eq!(fifo.add(obj("ns/", 1, "")), Err(KeyError::MissingName));
        assert_eq!(
            fifo.replace(vec![obj("", 1, "")], "1"),
            Err(KeyError::MissingName)
        );
        assert!(fifo.is_empty());
    }
}
