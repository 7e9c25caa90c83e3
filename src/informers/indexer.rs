//! client-go's Indexer (thread-safe store with secondary indices).
//!
//! Objects are stored by key as `Arc<T>`. Named index functions map an object to zero or more
//! values; `indices[name][value]` is the set of keys having that value, so a lookup such as
//! `app=web` is a hash probe instead of a scan. One [`IndexerWriter`] (owned by the informer's
//! processing loop) changes the store; any number of cheap [`Indexer`] clones read it.

use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::RwLock;
use smallvec::SmallVec;

use super::keys::{DeltaObject, Key, KeyError, meta_namespace_key};
use super::object::Object;

type Hasher = foldhash::fast::RandomState;

/// A key as the store holds it, in an index set: hashed and compared by the address of its
/// one allocation, which the store's table and every index set share (see
/// [`IndexerWriter::insert`]). Growing a set of 150,000 keys then rehashes addresses instead
/// of reading every key's text from wherever it lies in memory, and a probe compares two
/// words instead of two strings.
#[derive(Debug, Clone)]
struct HeldKey(Key);

impl std::hash::Hash for HeldKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_usize(Arc::as_ptr(&self.0).cast::<u8>() as usize);
    }
}

impl PartialEq for HeldKey {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for HeldKey {}

/// The set of keys that share one index value. It holds the store's own key allocations, so
/// it answers for a key as the store holds it ([`IndexView::held`]), not for any string
/// with the same text.
#[derive(Debug, Default)]
pub struct KeySet(HashSet<HeldKey, Hasher>);

impl KeySet {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Entries the set has room for (for memory accounting in benches).
    pub fn capacity(&self) -> usize {
        self.0.capacity()
    }

    pub fn iter(&self) -> KeySetIter<'_> {
        KeySetIter(self.0.iter())
    }

    /// Whether the set holds `key`, a key as the store holds it (from this store's
    /// [`Indexer::list_keys`], an index set or [`IndexView::held`], while the store still
    /// holds its object).
    pub fn contains(&self, key: &Key) -> bool {
        self.0.contains(&HeldKey(key.clone()))
    }

    fn insert(&mut self, key: &Key) {
        self.0.insert(HeldKey(key.clone()));
    }

    fn remove(&mut self, key: &Key) {
        self.0.remove(&HeldKey(key.clone()));
    }
}

impl<'a> IntoIterator for &'a KeySet {
    type Item = &'a Key;
    type IntoIter = KeySetIter<'a>;

    fn into_iter(self) -> KeySetIter<'a> {
        KeySetIter(self.0.iter())
    }
}

/// The keys of a [`KeySet`], in no order.
pub struct KeySetIter<'a>(std::collections::hash_set::Iter<'a, HeldKey>);

impl<'a> Iterator for KeySetIter<'a> {
    type Item = &'a Key;

    fn next(&mut self) -> Option<&'a Key> {
        self.0.next().map(|held| &held.0)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

/// One index: value → the keys having it.
pub type Index = HashMap<Arc<str>, KeySet, Hasher>;

/// One index under the store's read lock, with the store's keys to look a key up by its text
/// ([`IndexView::held`]): what [`Indexer::with_index`] hands its closure.
pub struct IndexView<'a, T> {
    index: &'a Index,
    items: &'a HashMap<Key, Arc<T>, Hasher>,
}

impl<'a, T> IndexView<'a, T> {
    /// The store's own key for `key`, if it holds an object under it: the key index sets
    /// answer for.
    pub fn held(&self, key: &str) -> Option<&'a Key> {
        self.items.get_key_value(key).map(|(held, _)| held)
    }
}

impl<T> Deref for IndexView<'_, T> {
    type Target = Index;

    fn deref(&self) -> &Index {
        self.index
    }
}

/// The values an index function returns for one object. Almost always a single value that
/// borrows from the object, so computing it allocates nothing.
pub type IndexValues<'a> = SmallVec<[Cow<'a, str>; 2]>;

/// Why an index function could not compute values for an object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct IndexFuncError(pub String);

/// A named index function. It may fail for an object: client-go panics then; we leave the
/// object out of that index, log its key and count it (see [`Indexer::index_func_errors`]).
pub type IndexFunc<T> =
    Arc<dyn for<'a> Fn(&'a T) -> Result<IndexValues<'a>, IndexFuncError> + Send + Sync>;

/// Wraps a closure as an [`IndexFunc`]; passing the closure through this function lets the
/// compiler see that the returned values may borrow from the object.
pub fn index_func<T, F>(f: F) -> IndexFunc<T>
where
    F: for<'a> Fn(&'a T) -> Result<IndexValues<'a>, IndexFuncError> + Send + Sync + 'static,
{
    Arc::new(f)
}

/// Errors of Indexer queries and index registration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexerError {
    #[error("index with name {0} does not exist")]
    UnknownIndex(String),
    #[error("indexer conflict: an index named {0} already exists")]
    IndexConflict(String),
    #[error(transparent)]
    Key(#[from] KeyError),
}

struct StoreState<T> {
    items: HashMap<Key, Arc<T>, Hasher>,
    indexers: HashMap<Arc<str>, IndexFunc<T>, Hasher>,
    indices: HashMap<Arc<str>, Index, Hasher>,
}

/// The read side of a thread-safe store with named multi-valued indices. Cloning is cheap and
/// shares the store; nothing through it changes the objects (see [`IndexerWriter`]).
pub struct Indexer<T> {
    state: Arc<RwLock<StoreState<T>>>,
    index_func_errors: Arc<AtomicU64>,
}

impl<T> Clone for Indexer<T> {
    fn clone(&self) -> Self {
        Self {
            state: self.state.clone(),
            index_func_errors: self.index_func_errors.clone(),
        }
    }
}

/// The only handle that changes a store: one per store, not `Clone`. The informer's
/// processing loop owns it once started; before that, whoever preloads a warm start does.
/// Reads go through [`Deref`] to the [`Indexer`], and [`IndexerWriter::reader`] hands out
/// read handles.
pub struct IndexerWriter<T> {
    indexer: Indexer<T>,
}

impl<T: Object> Default for IndexerWriter<T> {
    fn default() -> Self {
        Self {
            indexer: Indexer {
                state: Arc::new(RwLock::new(StoreState {
                    items: HashMap::default(),
                    indexers: HashMap::default(),
                    indices: HashMap::default(),
                })),
                index_func_errors: Arc::new(AtomicU64::new(0)),
            },
        }
    }
}

impl<T> Deref for IndexerWriter<T> {
    type Target = Indexer<T>;

    fn deref(&self) -> &Indexer<T> {
        &self.indexer
    }
}

impl<T: Object> IndexerWriter<T> {
    /// A store with the given named index functions. Two indexes with one name conflict.
    pub fn new(
        indexers: impl IntoIterator<Item = (impl Into<Arc<str>>, IndexFunc<T>)>,
    ) -> Result<Self, IndexerError> {
        let writer = Self::default();
        writer.add_indexers(indexers)?;
        Ok(writer)
    }

    /// A read handle on this store.
    pub fn reader(&self) -> Indexer<T> {
        self.indexer.clone()
    }

    /// Inserts or replaces the object under its key.
    pub fn add(&self, obj: Arc<T>) -> Result<(), IndexerError> {
        let key = meta_namespace_key(obj.as_ref())?;
        self.insert(key, obj);
        Ok(())
    }

    /// Same as [`IndexerWriter::add`]: a store does not distinguish add from update.
    pub fn update(&self, obj: Arc<T>) -> Result<(), IndexerError> {
        self.add(obj)
    }

    /// Deletes by the object's key; a tombstone deletes by its stored key.
    pub fn delete(&self, obj: &DeltaObject<T>) -> Result<(), IndexerError> {
        let key = obj.key()?;
        self.remove(&key);
        Ok(())
    }

    /// Inserts or replaces under `key`, returning the previous object. A replaced object's
    /// index sets get the key the store already holds, not the caller's copy: every set then
    /// shares one allocation per key, and a later removal from a set finds its key by pointer
    /// instead of comparing the text.
    pub fn insert(&self, key: Key, obj: Arc<T>) -> Option<Arc<T>> {
        let indexer = &self.indexer;
        let mut state = indexer.state.write();
        let (key, old) = match state.items.entry(key) {
            Entry::Occupied(mut held) => (held.key().clone(), Some(held.insert(obj.clone()))),
            Entry::Vacant(new) => {
                let key = new.key().clone();
                new.insert(obj.clone());
                (key, None)
            }
        };
        indexer.update_indices(&mut state, old.as_deref(), Some(&obj), &key);
        old
    }

    /// Removes `key`, returning the object it held.
    pub fn remove(&self, key: &str) -> Option<Arc<T>> {
        let indexer = &self.indexer;
        let mut state = indexer.state.write();
        let (key, old) = state.items.remove_entry(key)?;
        indexer.update_indices(&mut state, Some(&old), None, &key);
        Some(old)
    }
}

impl<T: Object> Indexer<T> {
    /// Adds indexes, at any time: existing objects are indexed at once (backfill). Either all
    /// are added or, on a name conflict, none. A read handle may do this: an index is a view
    /// of the objects, and adding one changes none of them.
    pub fn add_indexers(
        &self,
        indexers: impl IntoIterator<Item = (impl Into<Arc<str>>, IndexFunc<T>)>,
    ) -> Result<(), IndexerError> {
        let new: Vec<(Arc<str>, IndexFunc<T>)> =
            indexers.into_iter().map(|(n, f)| (n.into(), f)).collect();
        let mut state = self.state.write();
        let mut seen = HashSet::<&str>::new();
        for (name, _) in &new {
            if state.indexers.contains_key(name) || !seen.insert(name) {
                return Err(IndexerError::IndexConflict(name.to_string()));
            }
        }
        let StoreState {
            items,
            indexers,
            indices,
        } = &mut *state;
        for (name, func) in new {
            let mut index = Index::default();
            for (key, obj) in items.iter() {
                let values = self.compute(&func, &name, key, obj);
                for value in values {
                    add_key_to_index(&mut index, value, key);
                }
            }
            indices.insert(name.clone(), index);
            indexers.insert(name, func);
        }
        Ok(())
    }

    pub fn get_by_key(&self, key: &str) -> Option<Arc<T>> {
        self.state.read().items.get(key).cloned()
    }

    /// The object held under `key` if it is at `obj`'s resourceVersion: a resourceVersion
    /// names one state of an object, so a relist can hand on the copy held instead of the
    /// one it just decoded (what the FIFOs' [`ReflectorStore::known_copy`] answers).
    ///
    /// [`ReflectorStore::known_copy`]: crate::delta_fifo::ReflectorStore::known_copy
    pub(crate) fn copy_at_resource_version(&self, key: &str, obj: &T) -> Option<Arc<T>> {
        if self.is_empty() {
            return None;
        }
        let rv = obj.resource_version().filter(|rv| !rv.is_empty())?;
        self.get_by_key(key)
            .filter(|held| held.resource_version() == Some(rv))
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.state.read().items.contains_key(key)
    }

    pub fn len(&self) -> usize {
        self.state.read().items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Entries the key → object table has room for (for memory accounting in benches).
    pub fn items_capacity(&self) -> usize {
        self.state.read().items.capacity()
    }

    pub fn list(&self) -> Vec<Arc<T>> {
        self.state.read().items.values().cloned().collect()
    }

    pub fn list_keys(&self) -> Vec<Key> {
        self.state.read().items.keys().cloned().collect()
    }

    /// Objects that share at least one value of index `name` with `obj`.
    pub fn index(&self, name: &str, obj: &T) -> Result<Vec<Arc<T>>, IndexerError> {
        let state = self.state.read();
        let func = state
            .indexers
            .get(name)
            .ok_or_else(|| IndexerError::UnknownIndex(name.to_string()))?;
        let index = state.indices.get(name);
        let values = func(obj).unwrap_or_default();
        let mut keys: HashSet<&Key, Hasher> = HashSet::default();
        for value in &values {
            if let Some(set) = index.and_then(|i| i.get(value.as_ref())) {
                keys.extend(set.iter());
            }
        }
        Ok(keys
            .into_iter()
            .filter_map(|k| state.items.get(k).cloned())
            .collect())
    }

    /// Keys whose index `name` has `value`: client-go's `IndexKeys`.
    pub fn index_keys(&self, name: &str, value: &str) -> Result<Vec<Key>, IndexerError> {
        self.with_index_set(name, value, |set| {
            set.map(|s| s.iter().cloned().collect()).unwrap_or_default()
        })
    }

    /// Objects whose index `name` has `value`: client-go's `ByIndex`.
    pub fn by_index(&self, name: &str, value: &str) -> Result<Vec<Arc<T>>, IndexerError> {
        let state = self.state.read();
        let index = state
            .indices
            .get(name)
            .ok_or_else(|| IndexerError::UnknownIndex(name.to_string()))?;
        Ok(index
            .get(value)
            .map(|set| {
                set.iter()
                    .filter_map(|k| state.items.get(k).cloned())
                    .collect()
            })
            .unwrap_or_default())
    }

    /// Runs `f` on the key set of `name`=`value` under the read lock, without copying it: the
    /// building block for set algebra (intersections, counts) over indexes.
    pub fn with_index_set<R>(
        &self,
        name: &str,
        value: &str,
        f: impl FnOnce(Option<&KeySet>) -> R,
    ) -> Result<R, IndexerError> {
        let state = self.state.read();
        let index = state
            .indices
            .get(name)
            .ok_or_else(|| IndexerError::UnknownIndex(name.to_string()))?;
        Ok(f(index.get(value)))
    }

    /// Runs `f` on the whole of index `name` (value → keys) under the read lock: for queries
    /// over every value of an index, such as "objects with no value".
    pub fn with_index<R>(
        &self,
        name: &str,
        f: impl FnOnce(IndexView<'_, T>) -> R,
    ) -> Result<R, IndexerError> {
        let state = self.state.read();
        let index = state
            .indices
            .get(name)
            .ok_or_else(|| IndexerError::UnknownIndex(name.to_string()))?;
        Ok(f(IndexView {
            index,
            items: &state.items,
        }))
    }

    /// Every value index `name` currently has; values whose key set emptied are gone.
    pub fn list_index_values(&self, name: &str) -> Result<Vec<Arc<str>>, IndexerError> {
        let state = self.state.read();
        let index = state
            .indices
            .get(name)
            .ok_or_else(|| IndexerError::UnknownIndex(name.to_string()))?;
        Ok(index.keys().cloned().collect())
    }

    /// The names of the registered indexes.
    pub fn index_names(&self) -> Vec<Arc<str>> {
        self.state.read().indexers.keys().cloned().collect()
    }

    /// How many times an index function failed for an object (the object was left out).
    pub fn index_func_errors(&self) -> u64 {
        self.index_func_errors.load(Ordering::Relaxed)
    }

    /// The values `func` gives `obj`; none if it fails (counted and logged). Inlined, with
    /// the failure out of line: it runs five times per object applied, and the failure path's
    /// arguments (the index name and key, for the log) cost a call frame each time.
    #[inline(always)]
    fn compute<'a>(
        &self,
        func: &IndexFunc<T>,
        name: &str,
        key: &str,
        obj: &'a T,
    ) -> IndexValues<'a> {
        match func(obj) {
            Ok(values) => values,
            Err(err) => self.index_func_failed(name, key, &err),
        }
    }

    #[cold]
    #[inline(never)]
    fn index_func_failed<'a>(
        &self,
        name: &str,
        key: &str,
        err: &IndexFuncError,
    ) -> IndexValues<'a> {
        self.index_func_errors.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(index = name, key, error = %err, "index function failed; object left out of the index");
        IndexValues::new()
    }

    /// client-go's `updateIndices`: recompute old and new values, skip the common case of one
    /// unchanged value, move the key from old value sets to new ones, drop emptied sets.
    fn update_indices(
        &self,
        state: &mut StoreState<T>,
        old: Option<&T>,
        new: Option<&T>,
        key: &Key,
    ) {
        let StoreState {
            indexers, indices, ..
        } = state;
        for (name, func) in indexers.iter() {
            // An old object whose function failed was never indexed: nothing to remove.
            let old_values = old.map(|o| func(o).unwrap_or_default()).unwrap_or_default();
            let new_values = new
                .map(|n| self.compute(func, name, key, n))
                .unwrap_or_default();
            if old_values.len() == 1 && new_values.len() == 1 && old_values[0] == new_values[0] {
                continue;
            }
            let index = indices.entry(name.clone()).or_default();
            for value in &old_values {
                if let Some(set) = index.get_mut(value.as_ref()) {
                    set.remove(key);
                    if set.is_empty() {
                        index.remove(value.as_ref());
                    }
                }
            }
            for value in new_values {
                add_key_to_index(index, value, key);
            }
        }
    }
}

/// Adds the store's key `key` to the set of `value`.
fn add_key_to_index(index: &mut Index, value: Cow<'_, str>, key: &Key) {
    if let Some(set) = index.get_mut(value.as_ref()) {
        set.insert(key);
    } else {
        let mut set = KeySet::default();
        set.insert(key);
        index.insert(Arc::from(value.as_ref()), set);
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use smallvec::smallvec;

    use super::*;

    fn pod(ns: &str, name: &str, labels: &[(&str, &str)]) -> Arc<Pod> {
        Arc::new(Pod {
            metadata: ObjectMeta {
                namespace: Some(ns.into()),
                name: Some(name.into()),
                labels: Some(
                    labels
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect(),
                ),
                ..Default::default()
            },
            ..Default::default()
        })
    }

    fn label_index(label: &'static str) -> IndexFunc<Pod> {
        index_func(move |p: &Pod| {
            Ok(p.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(label))
                .map(|v| smallvec![Cow::Borrowed(v.as_str())])
                .unwrap_or_default())
        })
    }

    fn sorted(mut keys: Vec<Key>) -> Vec<String> {
        keys.sort();
        keys.iter().map(|k| k.to_string()).collect()
    }

    /// client-go's custom-index example (tools/cache/index_test.go, example_test.go).
    #[test]
    fn client_go_custom_index_example() {
        let indexer = IndexerWriter::new([("app", label_index("app"))]).unwrap();
        indexer.add(pod("ns1", "pod1", &[("app", "l1")])).unwrap();
        indexer.add(pod("ns2", "pod2", &[("app", "l2")])).unwrap();
        assert_eq!(
            sorted(indexer.index_keys("app", "l1").unwrap()),
            ["ns1/pod1"]
        );
        assert_eq!(
            sorted(indexer.index_keys("app", "l2").unwrap()),
            ["ns2/pod2"]
        );
        let by_index = indexer.by_index("app", "l1").unwrap();
        assert_eq!(by_index.len(), 1);
        assert_eq!(by_index[0].metadata.name.as_deref(), Some("pod1"));
    }

    /// Index sets hold the store's own key: an update keeps it, so sets still find the
    /// object; after a delete and a new add they answer for the new key, not the old one,
    /// and the view looks a key's text up to the one they answer for.
    #[test]
    fn index_sets_answer_for_the_key_the_store_holds() {
        let indexer = IndexerWriter::new([("app", label_index("app"))]).unwrap();
        indexer.add(pod("ns", "a", &[("app", "web")])).unwrap();
        let first = indexer.list_keys().remove(0);
        indexer.update(pod("ns", "a", &[("app", "db")])).unwrap();
        indexer.update(pod("ns", "a", &[("app", "web")])).unwrap();
        let held = |indexer: &IndexerWriter<Pod>| {
            indexer
                .with_index("app", |index| {
                    let held = index.held("ns/a").cloned();
                    let set = index.get("web");
                    (held, set.map(|s| s.len()), set.map(|s| s.contains(&first)))
                })
                .unwrap()
        };
        let (key, len, has_first) = held(&indexer);
        assert!(
            key.is_some_and(|k| Arc::ptr_eq(&k, &first)),
            "updates keep the key"
        );
        assert_eq!((len, has_first), (Some(1), Some(true)));

        indexer.remove("ns/a");
        indexer.add(pod("ns", "a", &[("app", "web")])).unwrap();
        let (key, len, has_first) = held(&indexer);
        let key = key.expect("the store holds ns/a again");
        assert!(!Arc::ptr_eq(&key, &first), "a new add makes a new key");
        assert_eq!((len, has_first), (Some(1), Some(false)));
        let has_new = indexer
            .with_index("app", |index| {
                index.get("web").is_some_and(|s| s.contains(&key))
            })
            .unwrap();
        assert!(has_new);
        assert_eq!(sorted(indexer.index_keys("app", "web").unwrap()), ["ns/a"]);
    }

    #[test]
    fn update_moves_key_and_drops_empty_sets() {
        let indexer = IndexerWriter::new([("app", label_index("app"))]).unwrap();
        indexer.add(pod("ns", "a", &[("app", "web")])).unwrap();
        indexer.add(pod("ns", "b", &[("app", "web")])).unwrap();
        indexer.update(pod("ns", "a", &[("app", "db")])).unwrap();
        assert_eq!(sorted(indexer.index_keys("app", "web").unwrap()), ["ns/b"]);
        assert_eq!(sorted(indexer.index_keys("app", "db").unwrap()), ["ns/a"]);
        indexer.update(pod("ns", "b", &[])).unwrap();
        let mut values = indexer.list_index_values("app").unwrap();
        values.sort();
        assert_eq!(values, vec![Arc::<str>::from("db")]);
        indexer
            .delete(&DeltaObject::Object(pod("ns", "a", &[("app", "db")])))
            .unwrap();
        assert!(indexer.list_index_values("app").unwrap().is_empty());
        assert_eq!(indexer.len(), 1);
    }

    #[test]
    fn index_sets_share_the_key_the_store_holds() {
        let indexer = IndexerWriter::new([("app", label_index("app"))]).unwrap();
        indexer.add(pod("ns", "a", &[("app", "web")])).unwrap();
        // Each event brings its own copy of the key; the sets keep the store's.
        indexer.update(pod("ns", "a", &[("app", "db")])).unwrap();
        let held = indexer.list_keys();
        let in_set = indexer.index_keys("app", "db").unwrap();
        assert!(Arc::ptr_eq(&held[0], &in_set[0]));
    }

    #[test]
    fn multi_valued_index_and_index_query() {
        // Index by every label value, so one object appears under several values.
        let all_values = index_func(|p: &Pod| {
            Ok(p.metadata
                .labels
                .iter()
                .flatten()
                .map(|(_, v)| Cow::Borrowed(v.as_str()))
                .collect())
        });
        let indexer = IndexerWriter::new([("values", all_values)]).unwrap();
        indexer
            .add(pod("ns", "a", &[("app", "web"), ("tier", "front")]))
            .unwrap();
        indexer.add(pod("ns", "b", &[("tier", "front")])).unwrap();
        indexer.add(pod("ns", "c", &[("app", "web")])).unwrap();
        assert_eq!(
            sorted(indexer.index_keys("values", "front").unwrap()),
            ["ns/a", "ns/b"]
        );
        let probe = pod("x", "y", &[("app", "web"), ("tier", "front")]);
        let mut related: Vec<String> = indexer
            .index("values", &probe)
            .unwrap()
            .iter()
            .map(|p| p.metadata.name.clone().unwrap_or_default())
            .collect();
        related.sort();
        assert_eq!(related, ["a", "b", "c"]);
        indexer
            .update(pod("ns", "a", &[("app", "web"), ("tier", "back")]))
            .unwrap();
        assert_eq!(
            sorted(indexer.index_keys("values", "front").unwrap()),
            ["ns/b"]
        );
        assert_eq!(
            sorted(indexer.index_keys("values", "back").unwrap()),
            ["ns/a"]
        );
    }

    #[test]
    fn unknown_index_is_an_error() {
        let indexer = IndexerWriter::<Pod>::default();
        assert_eq!(
            indexer.index_keys("nope", "x"),
            Err(IndexerError::UnknownIndex("nope".into()))
        );
        assert!(indexer.by_index("nope", "x").is_err());
        assert!(indexer.list_index_values("nope").is_err());
        assert!(indexer.index("nope", &pod("a", "b", &[])).is_err());
    }

    #[test]
    fn adding_an_index_after_start_backfills_it() {
        let indexer = IndexerWriter::new([("app", label_index("app"))]).unwrap();
        indexer
            .add(pod("ns", "a", &[("app", "web"), ("team", "blue")]))
            .unwrap();
        indexer.add(pod("ns", "b", &[("team", "red")])).unwrap();
        indexer
            .add_indexers([("team", label_index("team"))])
            .unwrap();
        assert_eq!(
            sorted(indexer.index_keys("team", "blue").unwrap()),
            ["ns/a"]
        );
        assert_eq!(sorted(indexer.index_keys("team", "red").unwrap()), ["ns/b"]);
        assert_eq!(
            indexer.add_indexers([("app", label_index("app"))]),
            Err(IndexerError::IndexConflict("app".into()))
        );
    }

    #[test]
    fn failing_index_function_leaves_object_out_and_counts() {
        let strict =
            index_func(
                |p: &Pod| match p.metadata.labels.as_ref().and_then(|l| l.get("app")) {
                    Some(v) => Ok(smallvec![Cow::Borrowed(v.as_str())]),
                    None => Err(IndexFuncError("no app label".into())),
                },
            );
        let indexer = IndexerWriter::new([("app", strict)]).unwrap();
        indexer.add(pod("ns", "good", &[("app", "web")])).unwrap();
        indexer.add(pod("ns", "bad", &[])).unwrap();
        assert_eq!(indexer.len(), 2);
        assert_eq!(indexer.index_func_errors(), 1);
        assert_eq!(
            sorted(indexer.index_keys("app", "web").unwrap()),
            ["ns/good"]
        );
        // The bad object gains a label: it joins the index; losing it again leaves it out.
        indexer.update(pod("ns", "bad", &[("app", "web")])).unwrap();
        assert_eq!(
            sorted(indexer.index_keys("app", "web").unwrap()),
            ["ns/bad", "ns/good"]
        );
        indexer.update(pod("ns", "bad", &[])).unwrap();
        assert_eq!(
            sorted(indexer.index_keys("app", "web").unwrap()),
            ["ns/good"]
        );
        assert_eq!(indexer.index_func_errors(), 2);
    }
}
