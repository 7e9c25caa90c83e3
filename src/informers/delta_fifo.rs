//! client-go's DeltaFIFO: a queue of keys, each holding the ordered deltas seen for that object.
//!
//! The Reflector writes into it (through [`ReflectorStore`]); the informer pops one key at a
//! time and applies all its deltas to the Indexer while the queue lock is held, so a concurrent
//! Replace always sees the Indexer and the queue in agreement.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

pub use super::fifo_core::{FifoClosed, Hasher, Listed};
use super::fifo_core::{FifoCore, Locked, Queue, keyed};
use super::indexer::Indexer;
use super::keys::{DeletedFinalStateUnknown, DeltaObject, Key, KeyError, meta_namespace_key};
use super::metrics::InformerMetrics;
use super::object::Object;

/// The kind of change a delta records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeltaType {
    Added,
    Updated,
    Deleted,
    /// The object was in a relist (emitted instead of Sync, as with `EmitDeltaTypeReplaced`).
    Replaced,
    /// A periodic resync of an object already known.
    Sync,
    /// A whole relist in one item (AtomicFIFO).
    ReplacedAll,
    /// A resync of the whole store in one item (AtomicFIFO).
    SyncAll,
    /// A bookmark queued in order (AtomicFIFO).
    Bookmark,
}

impl DeltaType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "Added",
            Self::Updated => "Updated",
            Self::Deleted => "Deleted",
            Self::Replaced => "Replaced",
            Self::Sync => "Sync",
            Self::ReplacedAll => "ReplacedAll",
            Self::SyncAll => "SyncAll",
            Self::Bookmark => "Bookmark",
        }
    }
}

/// One change to one object. Only a deletion can carry a tombstone.
#[derive(Debug)]
pub enum Delta<T> {
    Added(Arc<T>),
    Updated(Arc<T>),
    Deleted(DeltaObject<T>),
    Replaced(Arc<T>),
    Sync(Arc<T>),
}

impl<T> Clone for Delta<T> {
    fn clone(&self) -> Self {
        match self {
            Self::Added(o) => Self::Added(o.clone()),
            Self::Updated(o) => Self::Updated(o.clone()),
            Self::Deleted(o) => Self::Deleted(o.clone()),
            Self::Replaced(o) => Self::Replaced(o.clone()),
            Self::Sync(o) => Self::Sync(o.clone()),
        }
    }
}

impl<T> Delta<T> {
    pub fn delta_type(&self) -> DeltaType {
        match self {
            Self::Added(_) => DeltaType::Added,
            Self::Updated(_) => DeltaType::Updated,
            Self::Deleted(_) => DeltaType::Deleted,
            Self::Replaced(_) => DeltaType::Replaced,
            Self::Sync(_) => DeltaType::Sync,
        }
    }

    /// A deletion inferred from a relist rather than seen.
    pub fn is_tombstone(&self) -> bool {
        matches!(self, Self::Deleted(DeltaObject::Tombstone(_)))
    }

    /// The object, or for a tombstone the last state it knew.
    pub fn object(&self) -> Option<&Arc<T>> {
        match self {
            Self::Added(o) | Self::Updated(o) | Self::Replaced(o) | Self::Sync(o) => Some(o),
            Self::Deleted(DeltaObject::Object(o)) => Some(o),
            Self::Deleted(DeltaObject::Tombstone(t)) => t.obj.as_ref(),
        }
    }
}

/// The deltas of one key, oldest first.
pub type Deltas<T> = Vec<Delta<T>>;

/// What the Reflector calls on the store it feeds. Mirrors the part of client-go's `Store`
/// interface that a Reflector uses.
pub trait ReflectorStore<T>: Send + Sync {
    fn add(&self, obj: Arc<T>) -> Result<(), KeyError>;
    fn update(&self, obj: Arc<T>) -> Result<(), KeyError>;
    fn delete(&self, obj: Arc<T>) -> Result<(), KeyError>;
    /// A successful list: `list` is the whole truth as of `resource_version`.
    fn replace(&self, list: Vec<Arc<T>>, resource_version: &str) -> Result<(), KeyError>;
    fn resync(&self) -> Result<(), KeyError>;

    /// A watch bookmark moved the resourceVersion on without a change.
    fn bookmark(&self, _resource_version: &str) {}

    /// Whether this store takes a watch-list's initial state object by object as it streams
    /// in ([`ReflectorStore::add_listed`], then [`ReflectorStore::finish_listed`]), so the
    /// store fills before the stream ends. Otherwise the Reflector gathers the state and
    /// calls [`ReflectorStore::replace`] at its end, as client-go does.
    fn streams_listed(&self) -> bool {
        false
    }

    /// Objects of a watch-list's initial state that arrived together, in order and with the
    /// keys the Reflector made for them, queued now as a Replace would queue them: one call
    /// per batch, so the process loop is woken once for it rather than once per object, and
    /// one key per object shared by the queue, the store and the Reflector's listed set.
    /// Called only when [`ReflectorStore::streams_listed`].
    fn add_listed(&self, _objs: Vec<(Key, Arc<T>)>) {}

    /// The streamed initial state is complete at `resource_version` and holds the keys
    /// `listed`: the deletions a Replace would make are queued, and the first one counts
    /// the store as populated. Called only when [`ReflectorStore::streams_listed`].
    fn finish_listed(&self, _listed: &Listed, _resource_version: &str) {}

    /// Whether the store knows no object and has nothing queued: a watch-list's state that
    /// begins streaming then needs no set of its keys ([`Listed::AllStreamedExcept`]). Only
    /// the Reflector feeding it adds to it, so the answer holds until the state has ended.
    fn knows_nothing(&self) -> bool {
        false
    }

    /// The object the store already holds under `key` (`obj`'s) at `obj`'s resourceVersion, if
    /// any. A resourceVersion names one state of an object, so a relist can hand that one on
    /// instead of the copy it just decoded, and a relist of a large, quiet cluster does not
    /// hold the whole store twice until Replace has been applied. Not part of client-go.
    fn known_copy(&self, _key: &str, _obj: &T) -> Option<Arc<T>> {
        None
    }
}

/// client-go's `items` and `queue`: each key's deltas, and the keys in pop order.
struct DeltaQueue<T> {
    items: HashMap<Key, Deltas<T>, Hasher>,
    keys: VecDeque<Key>,
}

impl<T> Queue for DeltaQueue<T> {
    fn len(&self) -> usize {
        self.keys.len()
    }
}

/// The DeltaFIFO. Cloning is cheap and shares the queue.
pub struct DeltaFifo<T> {
    core: FifoCore<DeltaQueue<T>>,
    /// The Indexer the popped deltas are applied to: client-go's `knownObjects`.
    known_objects: Option<Indexer<T>>,
}

impl<T> Clone for DeltaFifo<T> {
    fn clone(&self) -> Self {
        Self {
            core: self.core.clone(),
            known_objects: self.known_objects.clone(),
        }
    }
}

impl<T: Object> DeltaFifo<T> {
    /// A DeltaFIFO whose deletion detection and resyncs consult `known_objects` (normally the
    /// informer's Indexer). Without it, deletes of keys not queued are dropped and resync
    /// does nothing, as in client-go.
    pub fn new(known_objects: Option<Indexer<T>>) -> Self {
        Self::with_metrics(known_objects, Arc::default())
    }

    /// As [`DeltaFifo::new`], counting what is queued and seen into `metrics`.
    pub fn with_metrics(known_objects: Option<Indexer<T>>, metrics: Arc<InformerMetrics>) -> Self {
        let queue = DeltaQueue {
            items: HashMap::default(),
            keys: VecDeque::new(),
        };
        Self {
            core: FifoCore::new(queue, metrics),
            known_objects,
        }
    }

    /// Appends `delta` to the key's deltas (queueing the key if new), then dedups the tail.
    fn queue_action_locked(&self, state: &mut Locked<DeltaQueue<T>>, key: Key, delta: Delta<T>) {
        let queue = &mut state.queue;
        match queue.items.get_mut(&key) {
            Some(deltas) => {
                deltas.push(delta);
                dedup_deltas(deltas);
            }
            None => {
                queue.keys.push_back(key.clone());
                queue.items.insert(key, vec![delta]);
            }
        }
        self.core.queued_locked(state);
    }

    /// Waits for the head key and hands all its deltas to `process`, with whether the key
    /// belonged to the first list (`is_in_initial_list`). `process` runs with the queue lock
    /// held, as in client-go: it must not call back into this DeltaFIFO. Items left when the
    /// queue is closed are still popped; then `FifoClosed`.
    pub async fn pop<R>(
        &self,
        process: impl FnOnce(Key, Deltas<T>, bool) -> R,
    ) -> Result<R, FifoClosed> {
        let (mut state, key) = self.core.pop(|state| state.queue.keys.pop_front()).await?;
        let is_in_initial_list = !state.has_synced();
        let deltas = state.queue.items.remove(&key).unwrap_or_default();
        let result = process(key, deltas, is_in_initial_list);
        self.core.popped_locked(&mut state, 1);
        Ok(result)
    }

    /// Stops blocking pops once the queue is empty.
    pub fn close(&self) {
        self.core.close();
    }

    pub fn is_closed(&self) -> bool {
        self.core.is_closed()
    }

    /// client-go's HasSynced: the first Replace (or any add/update/delete) happened and every
    /// item it queued has been popped.
    pub fn has_synced(&self) -> bool {
        self.core.has_synced()
    }

    /// Resolves once [`DeltaFifo::has_synced`] is true, or at close if it never becomes so.
    pub async fn wait_for_sync(&self) -> bool {
        self.core.wait_for_sync().await
    }

    /// Number of keys queued.
    pub fn len(&self) -> usize {
        self.core.lock().queue.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The queued keys, in pop order.
    pub fn list_keys(&self) -> Vec<Key> {
        self.core.lock().queue.keys.iter().cloned().collect()
    }

    /// A copy of the deltas queued for `key`.
    pub fn get_by_key(&self, key: &str) -> Option<Deltas<T>> {
        self.core.lock().queue.items.get(key).cloned()
    }

    /// The resourceVersion of the last Replace, for display.
    pub fn last_replace_resource_version(&self) -> Option<String> {
        self.core.last_replace_resource_version()
    }
}

impl<T: Object> DeltaFifo<T> {
    /// Add and Update: queue the delta and count the queue as populated.
    fn queue_change(&self, obj: Arc<T>, delta: fn(Arc<T>) -> Delta<T>) -> Result<(), KeyError> {
        let key = meta_namespace_key(obj.as_ref())?;
        self.core.metrics().saw_on_wire(obj.resource_version());
        let mut state = self.core.lock();
        self.core.mark_populated_locked(&mut state);
        self.queue_action_locked(&mut state, key, delta(obj));
        Ok(())
    }
}

impl<T: Object> ReflectorStore<T> for DeltaFifo<T> {
    fn add(&self, obj: Arc<T>) -> Result<(), KeyError> {
        self.queue_change(obj, Delta::Added)
    }

    fn update(&self, obj: Arc<T>) -> Result<(), KeyError> {
        self.queue_change(obj, Delta::Updated)
    }

    /// A delete of a key known neither to the queue nor to knownObjects is ignored: there is
    /// nothing a consumer could have seen to delete.
    fn delete(&self, obj: Arc<T>) -> Result<(), KeyError> {
        let key = meta_namespace_key(obj.as_ref())?;
        self.core.metrics().saw_on_wire(obj.resource_version());
        let mut state = self.core.lock();
        self.core.mark_populated_locked(&mut state);
        let queued = state.queue.items.contains_key(&key);
        let known = self
            .known_objects
            .as_ref()
            .is_some_and(|k| k.contains_key(&key));
        if !queued && !known {
            return Ok(());
        }
        self.queue_action_locked(&mut state, key, Delta::Deleted(DeltaObject::Object(obj)));
        Ok(())
    }

    /// From knownObjects: what the informer has applied (a queued delta may be newer, but
    /// then its resourceVersion differs).
    fn known_copy(&self, key: &str, obj: &T) -> Option<Arc<T>> {
        self.known_objects
            .as_ref()?
            .copy_at_resource_version(key, obj)
    }

    /// A Replaced delta per listed object; a tombstone for every queued key missing from the
    /// list, and for every known key missing from the list and not queued.
    fn replace(&self, list: Vec<Arc<T>>, resource_version: &str) -> Result<(), KeyError> {
        let keyed = keyed(list)?;
        self.core.metrics().saw_on_wire(Some(resource_version));
        let mut state = self.core.lock();
        let mut listed: HashSet<Key, Hasher> =
            HashSet::with_capacity_and_hasher(keyed.len(), Hasher::default());
        for (key, obj) in keyed {
            listed.insert(key.clone());
            self.queue_action_locked(&mut state, key, Delta::Replaced(obj));
        }

        let queued_deletions = self.delete_missing_locked(&mut state, |key| listed.contains(key));

        if state.queue.keys.is_empty() {
            self.core.metrics().caught_up();
        }
        let initial_population_count = listed.len() + queued_deletions;
        self.core
            .replaced_locked(&mut state, resource_version, initial_population_count);
        Ok(())
    }

    /// Nothing is queued for a bookmark: with nothing queued either, the store is at it.
    fn bookmark(&self, resource_version: &str) {
        self.core.metrics().saw_on_wire(Some(resource_version));
        if self.core.lock().queue.keys.is_empty() {
            self.core.metrics().caught_up();
        }
    }

    fn streams_listed(&self) -> bool {
        true
    }

    fn knows_nothing(&self) -> bool {
        self.core.lock().queue.items.is_empty()
            && self.known_objects.as_ref().is_none_or(|k| k.is_empty())
    }

    /// A Replaced delta now; a key new to the queue before the first list is complete
    /// counts towards the initial population.
    fn add_listed(&self, objs: Vec<(Key, Arc<T>)>) {
        let mut state = self.core.lock();
        for (key, obj) in objs {
            self.core.metrics().saw_on_wire(obj.resource_version());
            if !state.populated && !state.queue.items.contains_key(&key) {
                state.initial_population_count += 1;
            }
            self.queue_action_locked(&mut state, key, Delta::Replaced(obj));
        }
    }

    /// The deletions of [`ReflectorStore::replace`] for what the streamed state lacked.
    fn finish_listed(&self, listed: &Listed, resource_version: &str) {
        self.core.finish_listed(listed, resource_version, |state| {
            self.delete_missing_locked(state, |key| listed.contains(key))
        });
    }

    /// A Sync delta for every known key that has nothing queued: a queued delta is newer
    /// than what the resync would say.
    fn resync(&self) -> Result<(), KeyError> {
        let Some(known) = &self.known_objects else {
            return Ok(());
        };
        let mut state = self.core.lock();
        for key in known.list_keys() {
            if state.queue.items.contains_key(&key) {
                continue;
            }
            if let Some(obj) = known.get_by_key(&key) {
                self.queue_action_locked(&mut state, key, Delta::Sync(obj));
            }
        }
        Ok(())
    }
}

impl<T: Object> DeltaFifo<T> {
    /// A tombstone for every queued key missing from `listed`, and for every known key
    /// missing from it and not queued. Returns how many were queued.
    fn delete_missing_locked(
        &self,
        state: &mut Locked<DeltaQueue<T>>,
        listed: impl Fn(&str) -> bool,
    ) -> usize {
        let mut queued_deletions = 0;
        let missing_queued: Vec<(Key, Option<Arc<T>>)> = state
            .queue
            .items
            .iter()
            .filter(|(key, _)| !listed(key))
            .map(|(key, deltas)| (key.clone(), deltas.last().and_then(|d| d.object().cloned())))
            .collect();
        for (key, obj) in missing_queued {
            queued_deletions += 1;
            let tombstone = DeletedFinalStateUnknown {
                key: key.clone(),
                obj,
            };
            self.queue_action_locked(
                state,
                key,
                Delta::Deleted(DeltaObject::Tombstone(tombstone)),
            );
        }

        if let Some(known) = &self.known_objects {
            for key in known.list_keys() {
                if listed(&key) || state.queue.items.contains_key(&key) {
                    continue;
                }
                let obj = known.get_by_key(&key);
                queued_deletions += 1;
                let tombstone = DeletedFinalStateUnknown {
                    key: key.clone(),
                    obj,
                };
                self.queue_action_locked(
                    state,
                    key,
                    Delta::Deleted(DeltaObject::Tombstone(tombstone)),
                );
            }
        }
        queued_deletions
    }
}

/// client-go's `dedupDeltas`: only the last two deltas are compared, and only two deletions in
/// a row merge, keeping the one that is not a tombstone (the older one if neither is).
fn dedup_deltas<T>(deltas: &mut Deltas<T>) {
    let n = deltas.len();
    if n < 2 {
        return;
    }
    let (Delta::Deleted(older), Delta::Deleted(_)) = (&deltas[n - 2], &deltas[n - 1]) else {
        return;
    };
    if older.is_tombstone() {
        deltas.swap_remove(n - 2);
    } else {
        deltas.pop();
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::indexer::IndexerWriter;
    use crate::testing::{TestObj, keyed, obj};

    /// A compact picture of a key's deltas: type, rv (or "?" for an unknown final state) and
    /// whether it is a tombstone.
    fn describe(deltas: &Deltas<TestObj>) -> Vec<String> {
        deltas
            .iter()
            .map(|d| {
                let rv = d
                    .object()
                    .map_or("?".to_string(), |o| o.resource_version.clone());
                let tomb = matches!(d, Delta::Deleted(DeltaObject::Tombstone(_)));
                format!(
                    "{}:{}{}",
                    d.delta_type().as_str(),
                    rv,
                    if tomb { ":tombstone" } else { "" }
                )
            })
            .collect()
    }

    async fn pop_one(fifo: &DeltaFifo<TestObj>) -> (String, Vec<String>, bool) {
        fifo.pop(|key, deltas, initial| (key.to_string(), describe(&deltas), initial))
            .await
            .unwrap()
    }

    async fn drain(fifo: &DeltaFifo<TestObj>) -> Vec<(String, Vec<String>, bool)> {
        let mut out = Vec::new();
        while !fifo.is_empty() {
            out.push(pop_one(fifo).await);
        }
        out
    }

    #[tokio::test]
    async fn deltas_accumulate_per_key_in_order() {
        let fifo = DeltaFifo::new(None);
        fifo.add(obj("ns/a", 1, "x")).unwrap();
        fifo.add(obj("ns/b", 2, "x")).unwrap();
        fifo.update(obj("ns/a", 3, "y")).unwrap();
        fifo.delete(obj("ns/a", 3, "y")).unwrap();
        assert_eq!(fifo.len(), 2);
        assert_eq!(
            drain(&fifo).await,
            vec![
                (
                    "ns/a".into(),
                    vec!["Added:1".into(), "Updated:3".into(), "Deleted:3".into()],
                    false
                ),
                ("ns/b".into(), vec!["Added:2".into()], false),
            ]
        );
    }

    #[tokio::test]
    async fn delete_of_unknown_key_is_ignored() {
        let indexer = IndexerWriter::default();
        let fifo = DeltaFifo::new(Some(indexer.reader()));
        fifo.delete(obj("ns/ghost", 1, "")).unwrap();
        assert!(fifo.is_empty());
        indexer.add(obj("ns/known", 1, "")).unwrap();
        fifo.delete(obj("ns/known", 2, "")).unwrap();
        assert_eq!(fifo.list_keys(), vec![Key::from("ns/known")]);
    }

    #[test]
    fn known_copy_is_the_held_object_at_the_same_resource_version() {
        let indexer: IndexerWriter<TestObj> = IndexerWriter::default();
        let fifo = DeltaFifo::new(Some(indexer.reader()));
        assert!(
            fifo.known_copy("ns/a", &obj("ns/a", 1, "")).is_none(),
            "nothing held"
        );
        let held = obj("ns/a", 1, "");
        indexer.add(held.clone()).unwrap();
        let copy = fifo
            .known_copy("ns/a", &obj("ns/a", 1, ""))
            .expect("held at rv 1");
        assert!(Arc::ptr_eq(&copy, &held));
        assert!(
            fifo.known_copy("ns/a", &obj("ns/a", 2, "")).is_none(),
            "another state"
        );
        assert!(
            fifo.known_copy("ns/b", &obj("ns/b", 1, "")).is_none(),
            "another key"
        );
        assert!(
            DeltaFifo::<TestObj>::new(None)
                .known_copy("ns/a", &held)
                .is_none(),
            "no knownObjects"
        );
    }

    #[tokio::test]
    async fn double_delete_dedup_keeps_the_non_tombstone() {
        let indexer = IndexerWriter::default();
        indexer.add(obj("ns/a", 1, "")).unwrap();
        indexer.add(obj("ns/b", 1, "")).unwrap();
        let fifo = DeltaFifo::new(Some(indexer.reader()));
        // A real delete, then a relist lacking the object: the tombstone collapses into it.
        fifo.delete(obj("ns/a", 2, "")).unwrap();
        fifo.replace(vec![obj("ns/b", 1, "")], "10").unwrap();
        let a = fifo.get_by_key("ns/a").unwrap();
        assert_eq!(describe(&a), vec!["Deleted:2"]);
        // A tombstone first, then a real delete: the real one replaces it.
        let fifo = DeltaFifo::new(Some(indexer.reader()));
        fifo.replace(vec![obj("ns/a", 1, "")], "10").unwrap();
        drain(&fifo).await;
        fifo.replace(vec![], "11").unwrap();
        fifo.delete(obj("ns/b", 3, "")).unwrap();
        assert_eq!(
            describe(&fifo.get_by_key("ns/b").unwrap()),
            vec!["Deleted:3"]
        );
        // Anything other than two deletions in a row never merges.
        fifo.add(obj("ns/c", 4, "")).unwrap();
        fifo.add(obj("ns/c", 4, "")).unwrap();
        assert_eq!(
            describe(&fifo.get_by_key("ns/c").unwrap()),
            vec!["Added:4", "Added:4"]
        );
    }

    #[tokio::test]
    async fn replace_makes_tombstones_for_queued_and_known_keys_missing_from_the_list() {
        let indexer = IndexerWriter::default();
        indexer.add(obj("ns/known-kept", 1, "")).unwrap();
        indexer.add(obj("ns/known-gone", 2, "")).unwrap();
        indexer.add(obj("ns/known-and-queued", 3, "")).unwrap();
        let fifo = DeltaFifo::new(Some(indexer.reader()));
        fifo.add(obj("ns/queued-gone", 4, "")).unwrap();
        fifo.update(obj("ns/known-and-queued", 5, "")).unwrap();

        fifo.replace(vec![obj("ns/known-kept", 6, ""), obj("ns/new", 7, "")], "7")
            .unwrap();

        let mut popped = drain(&fifo).await;
        popped.sort();
        let expect: Vec<(String, Vec<String>)> = vec![
            (
                "ns/known-and-queued".into(),
                vec!["Updated:5".into(), "Deleted:5:tombstone".into()],
            ),
            ("ns/known-gone".into(), vec!["Deleted:2:tombstone".into()]),
            ("ns/known-kept".into(), vec!["Replaced:6".into()]),
            ("ns/new".into(), vec!["Replaced:7".into()]),
            (
                "ns/queued-gone".into(),
                vec!["Added:4".into(), "Deleted:4:tombstone".into()],
            ),
        ];
        assert_eq!(
            popped
                .iter()
                .map(|(k, d, _)| (k.clone(), d.clone()))
                .collect::<Vec<_>>(),
            expect
        );
        assert_eq!(fifo.last_replace_resource_version().as_deref(), Some("7"));
    }

    #[tokio::test]
    async fn has_synced_after_the_initial_population_is_popped() {
        let fifo = DeltaFifo::new(Some(IndexerWriter::default().reader()));
        assert!(!fifo.has_synced());
        fifo.replace(vec![obj("ns/a", 1, ""), obj("ns/b", 2, "")], "2")
            .unwrap();
        fifo.add(obj("ns/c", 3, "")).unwrap();
        assert!(!fifo.has_synced());
        let (_, _, first) = pop_one(&fifo).await;
        assert!(first && !fifo.has_synced());
        let (_, _, second) = pop_one(&fifo).await;
        assert!(second);
        assert!(fifo.has_synced());
        assert!(fifo.wait_for_sync().await);
        let (key, _, third) = pop_one(&fifo).await;
        assert_eq!((key.as_str(), third), ("ns/c", false));
        // A later Replace does not reset the initial population.
        fifo.replace(vec![obj("ns/a", 4, "")], "4").unwrap();
        assert!(fifo.has_synced());
    }

    /// A watch-list's state queued as it streams: popped keys count towards the first list,
    /// which is complete (and its deletions queued) only at the end marker.
    #[tokio::test]
    async fn a_streamed_first_list_syncs_at_its_end_with_its_deletions() {
        let indexer = IndexerWriter::default();
        indexer.add(obj("ns/stale", 1, "")).unwrap();
        let fifo = DeltaFifo::new(Some(indexer.reader()));
        assert!(fifo.streams_listed());
        fifo.add_listed(vec![keyed("ns/a", 2, "")]);
        fifo.add_listed(vec![keyed("ns/b", 3, "")]);
        let (key, _, initial) = pop_one(&fifo).await;
        assert_eq!((key.as_str(), initial), ("ns/a", true));
        assert!(!fifo.has_synced(), "the stream has not ended");
        fifo.add_listed(vec![keyed("ns/a", 4, "")]);
        assert!(!fifo.knows_nothing(), "the store knows ns/stale");
        let listed = Listed::Keys(["ns/a", "ns/b"].into_iter().map(Key::from).collect());
        fifo.finish_listed(&listed, "5");
        assert_eq!(fifo.last_replace_resource_version().as_deref(), Some("5"));
        let mut rest = drain(&fifo).await;
        rest.sort();
        assert_eq!(
            rest,
            [
                ("ns/a".into(), vec!["Replaced:4".into()], true),
                ("ns/b".into(), vec!["Replaced:3".into()], true),
                ("ns/stale".into(), vec!["Deleted:1:tombstone".into()], true),
            ]
        );
        assert!(fifo.has_synced());
    }

    /// A first sync into an empty store keeps no set of the streamed keys: only a key deleted
    /// while the state streamed, and not added again, gets a deletion at the end marker.
    #[tokio::test]
    async fn a_first_streamed_list_into_an_empty_store_deletes_only_what_it_saw_go() {
        let indexer = IndexerWriter::default();
        let fifo = DeltaFifo::new(Some(indexer.reader()));
        assert!(fifo.knows_nothing());
        fifo.add_listed(vec![
            keyed("ns/a", 2, ""),
            keyed("ns/b", 3, ""),
            keyed("ns/c", 4, ""),
        ]);
        let (key, _, _) = pop_one(&fifo).await;
        assert_eq!(key.as_str(), "ns/a");
        let mut listed = Listed::AllStreamedExcept(Default::default());
        for key in ["ns/a", "ns/b", "ns/c"] {
            listed.streamed(&Key::from(key));
        }
        assert!(listed.lacks_nothing());
        listed.unlisted(&Key::from("ns/a"));
        listed.unlisted(&Key::from("ns/c"));
        listed.streamed(&Key::from("ns/c"));
        assert!(!listed.lacks_nothing());
        assert!(listed.contains("ns/b") && listed.contains("ns/c") && !listed.contains("ns/a"));
        // ns/a was popped (an indexer would hold it); here only the queue holds b and c, so
        // nothing is deleted for a: the test indexer is empty.
        indexer.add(obj("ns/a", 2, "")).unwrap();
        fifo.finish_listed(&listed, "5");
        let mut rest = drain(&fifo).await;
        rest.sort();
        assert_eq!(
            rest,
            [
                ("ns/a".into(), vec!["Deleted:2:tombstone".into()], true),
                ("ns/b".into(), vec!["Replaced:3".into()], true),
                ("ns/c".into(), vec!["Replaced:4".into()], true),
            ]
        );
        assert!(fifo.has_synced());
    }

    #[tokio::test]
    async fn an_empty_first_list_is_synced_at_once() {
        let fifo = DeltaFifo::<TestObj>::new(Some(IndexerWriter::default().reader()));
        fifo.replace(vec![], "1").unwrap();
        assert!(fifo.has_synced());
        assert!(fifo.wait_for_sync().await);
    }

    #[tokio::test]
    async fn resync_skips_keys_with_queued_deltas() {
        let indexer = IndexerWriter::default();
        indexer.add(obj("ns/idle", 1, "")).unwrap();
        indexer.add(obj("ns/busy", 2, "")).unwrap();
        let fifo = DeltaFifo::new(Some(indexer.reader()));
        fifo.update(obj("ns/busy", 3, "")).unwrap();
        fifo.resync().unwrap();
        let mut popped = drain(&fifo).await;
        popped.sort();
        assert_eq!(popped[0].0, "ns/busy");
        assert_eq!(popped[0].1, vec!["Updated:3"]);
        assert_eq!(popped[1].0, "ns/idle");
        assert_eq!(popped[1].1, vec!["Sync:1"]);
        // Without knownObjects a resync has nothing to say.
        let fifo = DeltaFifo::<TestObj>::new(None);
        fifo.resync().unwrap();
        assert!(fifo.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn pop_waits_for_an_item_and_close_ends_after_draining() {
        let fifo = DeltaFifo::<TestObj>::new(None);
        let popper = {
            let fifo = fifo.clone();
            tokio::spawn(async move { pop_one(&fifo).await.0 })
        };
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(!popper.is_finished());
        fifo.add(obj("ns/a", 1, "")).unwrap();
        assert_eq!(popper.await.unwrap(), "ns/a");

        fifo.add(obj("ns/b", 2, "")).unwrap();
        fifo.close();
        assert!(fifo.is_closed());
        assert_eq!(pop_one(&fifo).await.0, "ns/b");
        assert_eq!(fifo.pop(|_, _, _| ()).await, Err(FifoClosed));
    }

    /// Queueing wakes a pop only when one waits: a key queued from another thread, at any
    /// moment relative to the pop going to sleep, must still be popped without a later close.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_pop_on_another_thread_never_misses_a_queued_key() {
        use std::sync::atomic::{AtomicU64, Ordering};
        const BURSTS: u64 = 5_000;
        let fifo = DeltaFifo::<TestObj>::new(None);
        let popped = Arc::new(AtomicU64::new(0));
        let popper = {
            let (fifo, popped) = (fifo.clone(), popped.clone());
            tokio::spawn(async move {
                while fifo.pop(|_, _, _| ()).await.is_ok() {
                    popped.fetch_add(1, Ordering::SeqCst);
                }
            })
        };
        let mut queued = 0;
        for burst in 0..BURSTS {
            for _ in 0..=burst % 3 {
                fifo.add(obj(&format!("ns/p{queued}"), queued, "")).unwrap();
                queued += 1;
            }
            let caught_up = async {
                while popped.load(Ordering::SeqCst) < queued {
                    tokio::task::yield_now().await;
                }
            };
            let waited = tokio::time::timeout(Duration::from_secs(10), caught_up).await;
            assert!(waited.is_ok(), "key {queued} was never popped");
        }
        fifo.close();
        popper.await.unwrap();
    }

    #[tokio::test]
    async fn objects_without_a_name_are_refused() {
        let fifo = DeltaFifo::<TestObj>::new(None);
        assert_eq!(fifo.add(obj("ns/", 1, "")), Err(KeyError::MissingName));
        assert_eq!(
            fifo.replace(vec![obj("", 1, "")], "1"),
            Err(KeyError::MissingName)
        );
        assert!(fifo.is_empty());
    }
}
