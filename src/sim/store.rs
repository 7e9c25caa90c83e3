//! The versioned object store: etcd's model in miniature. One global resourceVersion bumped by
//! every write, a version chain per key (MVCC) so that paginated lists are served at one
//! snapshot, and an event log whose length is the history window for watches and continue
//! tokens. Anything older than the window is compacted away and answered with 410.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::RwLock;
use serde_json::Value;
use smallvec::SmallVec;
use tokio::sync::watch;

use super::event_view;
use super::object::StoredObject;
use super::resources::Resource;

/// `namespace/name`, or `name` for cluster-scoped objects; sorts like etcd keys do.
pub type Key = Arc<str>;

/// Resource versions jump to the next multiple of this on an epoch restart, so every RV a
/// client kept from before is older than the new history.
const EPOCH_STRIDE: u64 = 1_000_000_000;

/// Numbers the stores of a process, so each cluster's custom resources are its own.
static INSTANCES: AtomicU64 = AtomicU64::new(0);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One write as watchers see it. `previous` lets a filtered watch turn a change that enters
/// or leaves its selector into ADDED or DELETED, as the real watch cache does.
#[derive(Debug)]
pub struct Event {
    pub rv: u64,
    pub resource: Resource,
    pub event_type: EventType,
    pub key: Key,
    pub object: Arc<StoredObject>,
    pub previous: Option<Arc<StoredObject>>,
}

/// Where the store is: the epoch (bumped by a restart) and the newest resourceVersion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub epoch: u64,
    pub rv: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The requested version was compacted away (410 Expired).
    #[error("too old resource version: {requested} ({oldest})")]
    TooOld { requested: u64, oldest: u64 },
    /// The requested version is newer than anything written yet.
    #[error("too large resource version: {requested}, current: {current}")]
    TooNew { requested: u64, current: u64 },
    #[error("failed to encode object: {0}")]
    Encode(String),
}

#[derive(Debug, Clone)]
struct Version {
    rv: u64,
    object: Option<Arc<StoredObject>>,
}

/// Versions of one key, oldest first; `None` marks a deletion kept until compaction.
#[derive(Debug, Clone, Default)]
struct Chain(SmallVec<[Version; 1]>);

impl Chain {
    fn latest(&self) -> Option<&Version> {
        self.0.last()
    }

    fn at(&self, rv: u64) -> Option<&Arc<StoredObject>> {
        self.0
            .iter()
            .rev()
            .find(|v| v.rv <= rv)
            .and_then(|v| v.object.as_ref())
    }

    /// Drops versions no snapshot at or after `compacted` can see. Returns whether the
    /// chain is now empty of anything worth keeping.
    fn compact(&mut self, compacted: u64) -> bool {
        if let Some(keep) = self.0.iter().rposition(|v| v.rv <= compacted) {
            self.0.drain(..keep);
        }
        self.0.len() == 1 && self.0[0].object.is_none() && self.0[0].rv <= compacted
    }
}

/// The version chains of one resource: found by hashing for the reads and writes of each
/// write (a B-tree lookup compares keys that share long prefixes, through a pointer each),
/// and kept in key order beside for lists and scans.
#[derive(Default)]
struct Table {
    chains: HashMap<Key, Chain, foldhash::fast::RandomState>,
    order: BTreeSet<Key>,
}

impl Table {
    fn insert(&mut self, key: Key, chain: Chain) {
        self.order.insert(key.clone());
        self.chains.insert(key, chain);
    }

    fn remove(&mut self, key: &str) {
        self.order.remove(key);
        self.chains.remove(key);
    }

    /// Keys under `prefix` from `from` on, in order, with their chains.
    fn range<'a>(
        &'a self,
        from: &'a str,
        prefix: &'a str,
    ) -> impl Iterator<Item = (&'a Key, &'a Chain)> + 'a {
        self.order
            .range::<str, _>((Bound::Included(from), Bound::Unbounded))
            .take_while(move |k| k.starts_with(prefix))
            .filter_map(|k| Some((k, self.chains.get(k)?)))
    }

    fn latest(&self, key: &str) -> Option<Arc<StoredObject>> {
        self.chains
            .get(key)
            .and_then(Chain::latest)
            .and_then(|v| v.object.clone())
    }
}

/// One page of a list at a snapshot.
#[derive(Debug)]
pub struct Page {
    pub rv: u64,
    pub items: Vec<Arc<StoredObject>>,
    /// Where the next page starts, if more items match.
    pub next_key: Option<Key>,
}

/// What a list reads from.
#[derive(Debug, Clone, Copy)]
pub enum ReadAt {
    Latest,
    /// Exactly this snapshot (continue tokens, Exact, or limit with an RV).
    Exact(u64),
    /// Anything at least this new; served from the latest state.
    NotOlderThan(u64),
}

struct State {
    /// The store's [`Store::instance`], for writes that register custom resources.
    instance: u64,
    rv: u64,
    epoch: u64,
    compacted: u64,
    /// By [`Resource::index`]; grown when a custom resource is first written.
    tables: Vec<Table>,
    /// The custom resources this cluster's CRDs currently serve.
    custom: Vec<Resource>,
    log: VecDeque<Arc<Event>>,
    history_limit: usize,
    /// Live pods by `spec.nodeName`, so that a drain finds a node's pods without a scan of
    /// every pod.
    pods_by_node: HashMap<Box<str>, BTreeSet<Key>>,
    /// Live objects by the uid of each owner they name, so that the garbage collector finds
    /// an owner's dependents without a scan of every object in its namespace.
    dependents: HashMap<Arc<str>, BTreeSet<(Resource, Key)>>,
}

impl State {
    /// Moves `key` of `resource` in the owner index from the owners of `before` to those of
    /// `after`.
    fn index_owners(
        &mut self,
        resource: Resource,
        key: &Key,
        before: Option<&StoredObject>,
        after: Option<&StoredObject>,
    ) {
        fn owners(o: Option<&StoredObject>) -> &[Arc<str>] {
            o.map_or(&[], |o| &o.owner_uids)
        }
        let (old, new) = (owners(before), owners(after));
        if old == new {
            return;
        }
        for uid in old.iter().filter(|uid| !new.contains(uid)) {
            if let Some(keys) = self.dependents.get_mut(uid) {
                keys.remove(&(resource, key.clone()));
                if keys.is_empty() {
                    self.dependents.remove(uid);
                }
            }
        }
        for uid in new.iter().filter(|uid| !old.contains(uid)) {
            self.dependents
                .entry(uid.clone())
                .or_default()
                .insert((resource, key.clone()));
        }
    }

    /// Moves `key` in the node index from the node of `before` to the node of `after`.
    fn index_pod(
        &mut self,
        key: &Key,
        before: Option<&StoredObject>,
        after: Option<&StoredObject>,
    ) {
        let node = |o: Option<&StoredObject>| o.and_then(|o| o.fields.node_name.clone());
        let (old, new) = (node(before), node(after));
        if old == new {
            return;
        }
        if let Some(old) = old
            && let Some(keys) = self.pods_by_node.get_mut(&old)
        {
            keys.remove(key);
            if keys.is_empty() {
                self.pods_by_node.remove(&old);
            }
        }
        if let Some(new) = new {
            self.pods_by_node
                .entry(new)
                .or_default()
                .insert(key.clone());
        }
    }
}

impl State {
    fn table(&self, resource: Resource) -> Option<&Table> {
        self.tables.get(resource.index())
    }

    fn table_mut(&mut self, resource: Resource) -> &mut Table {
        let i = resource.index();
        if self.tables.len() <= i {
            self.tables.resize_with(i + 1, Table::default);
        }
        &mut self.tables[i]
    }

    fn compact_to_limit(&mut self) {
        while self.log.len() > self.history_limit {
            let Some(event) = self.log.pop_front() else {
                break;
            };
            self.compacted = event.rv;
            let Some(table) = self.tables.get_mut(event.resource.index()) else {
                continue;
            };
            if table
                .chains
                .get_mut(&event.key)
                .is_some_and(|chain| chain.compact(event.rv))
            {
                table.remove(&event.key);
            }
        }
    }

    fn resolve(&self, at: ReadAt) -> Result<u64, StoreError> {
        match at {
            ReadAt::Latest => Ok(self.rv),
            ReadAt::NotOlderThan(rv) if rv <= self.rv => Ok(self.rv),
            ReadAt::Exact(rv) if rv < self.compacted => Err(StoreError::TooOld {
                requested: rv,
                oldest: self.compacted,
            }),
            ReadAt::Exact(rv) if rv <= self.rv => Ok(rv),
            ReadAt::NotOlderThan(rv) | ReadAt::Exact(rv) => Err(StoreError::TooNew {
                requested: rv,
                current: self.rv,
            }),
        }
    }
}

/// The shared store. Reads take a read lock for as long as it takes to clone `Arc`s.
pub struct Store {
    /// Which store of the process this is (see [`Resource::register`]).
    instance: u64,
    state: RwLock<State>,
    changes: watch::Sender<Position>,
}

impl Store {
    pub fn new(history_limit: usize) -> Self {
        let (changes, _) = watch::channel(Position { epoch: 0, rv: 0 });
        let instance = INSTANCES.fetch_add(1, Ordering::Relaxed);
        Self {
            instance,
            state: RwLock::new(State {
                instance,
                rv: 0,
                epoch: 0,
                compacted: 0,
                tables: std::iter::repeat_with(Table::default)
                    .take(Resource::ALL.len())
                    .collect(),
                custom: Vec::new(),
                log: VecDeque::new(),
                history_limit: history_limit.max(1),
                pods_by_node: HashMap::new(),
                dependents: HashMap::new(),
            }),
            changes,
        }
    }

    /// Loads an initial population without history, as if etcd had compacted up to it.
    /// Each object must already carry its resourceVersion, strictly increasing from `rv()+1`.
    pub fn load(&self, objects: impl IntoIterator<Item = (Resource, Key, u64, StoredObject)>) {
        let mut state = self.state.write();
        for (resource, key, rv, object) in objects {
            // An Event is loaded under both Event APIs (see [`event_view`]).
            if let Some(other) = event_view::other(resource)
                && let Some(view) = event_view::convert(resource, &object)
            {
                state.table_mut(other).insert(
                    key.clone(),
                    Chain(SmallVec::from_buf([Version {
                        rv,
                        object: Some(Arc::new(view)),
                    }])),
                );
            }
            state.rv = state.rv.max(rv);
            if resource == Resource::Pods {
                state.index_pod(&key, None, Some(&object));
            }
            state.index_owners(resource, &key, None, Some(&object));
            state.table_mut(resource).insert(
                key,
                Chain(SmallVec::from_buf([Version {
                    rv,
                    object: Some(Arc::new(object)),
                }])),
            );
        }
        state.compacted = state.rv;
        let position = Position {
            epoch: state.epoch,
            rv: state.rv,
        };
        drop(state);
        self.changes.send_replace(position);
    }

    /// Which store of the process this is, the cluster its custom resources belong to.
    pub fn instance(&self) -> u64 {
        self.instance
    }

    /// Every resource served now, built-in and custom.
    pub fn served(&self) -> Vec<Resource> {
        let mut all: Vec<Resource> = Resource::ALL.to_vec();
        all.extend(self.state.read().custom.iter().copied());
        all
    }

    /// Resolves a URL's group, version and plural among the built-in kinds and the
    /// custom resources served now; `None` is the real server's 404.
    pub fn resolve_path(&self, group: &str, version: &str, plural: &str) -> Option<Resource> {
        Resource::built_in_at(group, version, plural).or_else(|| {
            self.state.read().custom.iter().copied().find(|r| {
                let d = r.descriptor();
                d.group == group && d.version == version && d.plural == plural
            })
        })
    }

    pub fn position(&self) -> Position {
        let state = self.state.read();
        Position {
            epoch: state.epoch,
            rv: state.rv,
        }
    }

    /// The oldest resourceVersion still served exactly.
    pub fn compacted(&self) -> u64 {
        self.state.read().compacted
    }

    pub fn subscribe(&self) -> watch::Receiver<Position> {
        self.changes.subscribe()
    }

    pub fn set_history_limit(&self, limit: usize) {
        let mut state = self.state.write();
        state.history_limit = limit.max(1);
        state.compact_to_limit();
    }

    /// The current version of one object.
    pub fn get(&self, resource: Resource, key: &str) -> Option<Arc<StoredObject>> {
        self.state.read().table(resource)?.latest(key)
    }

    /// Lists keys under `prefix` from `start` (inclusive) at one snapshot, up to `limit`
    /// matching items.
    pub fn list(
        &self,
        resource: Resource,
        at: ReadAt,
        prefix: &str,
        start: Option<&str>,
        limit: Option<usize>,
        filter: &dyn Fn(&str, &StoredObject) -> bool,
    ) -> Result<Page, StoreError> {
        let state = self.state.read();
        let rv = state.resolve(at)?;
        let from = match start {
            Some(s) if s > prefix => s,
            _ => prefix,
        };
        let limit = limit.unwrap_or(usize::MAX);
        let mut items = Vec::with_capacity(limit.min(1024));
        let mut next_key = None;
        let empty = Table::default();
        let table = state.table(resource).unwrap_or(&empty);
        for (key, chain) in table.range(from, prefix) {
            let Some(object) = chain.at(rv) else {
                continue;
            };
            if !filter(key, object) {
                continue;
            }
            if items.len() == limit {
                next_key = Some(key.clone());
                break;
            }
            items.push(object.clone());
        }
        Ok(Page {
            rv,
            items,
            next_key,
        })
    }

    /// Events with resourceVersion above `after`, at most `max`, or `TooOld` when the
    /// history no longer reaches back that far.
    pub fn events_after(&self, after: u64, max: usize) -> Result<Vec<Arc<Event>>, StoreError> {
        let state = self.state.read();
        if after < state.compacted {
            return Err(StoreError::TooOld {
                requested: after,
                oldest: state.compacted,
            });
        }
        let first = state.log.partition_point(|e| e.rv <= after);
        Ok(state.log.range(first..).take(max).cloned().collect())
    }

    /// Applies writes atomically; each `put` or `delete` inside bumps the resourceVersion.
    pub fn write<T>(&self, f: impl FnOnce(&mut Txn<'_>) -> T) -> T {
        let mut state = self.state.write();
        let before = state.rv;
        let result = f(&mut Txn { state: &mut state });
        let position = Position {
            epoch: state.epoch,
            rv: state.rv,
        };
        drop(state);
        if position.rv != before {
            self.changes.send_replace(position);
        }
        result
    }

    /// As after an etcd restore: the resourceVersion jumps, all history is dropped, so
    /// every older RV is now too old and clients must relist. Open watches end.
    pub fn restart_epoch(&self) -> Position {
        let mut state = self.state.write();
        state.epoch += 1;
        state.rv = (state.rv / EPOCH_STRIDE + 1) * EPOCH_STRIDE;
        state.compacted = state.rv;
        state.log.clear();
        let compacted = state.compacted;
        for table in &mut state.tables {
            table.chains.retain(|_, chain| !chain.compact(compacted));
            let Table { chains, order } = table;
            order.retain(|key| chains.contains_key(key));
        }
        let position = Position {
            epoch: state.epoch,
            rv: state.rv,
        };
        drop(state);
        self.changes.send_replace(position);
        position
    }

    /// The current state as key → resourceVersion, to compare a client's cache with.
    pub fn truth(&self, resource: Resource) -> BTreeMap<String, String> {
        let state = self.state.read();
        let Some(table) = state.table(resource) else {
            return BTreeMap::new();
        };
        table
            .range("", "")
            .filter_map(|(key, chain)| {
                let v = chain.latest()?;
                v.object.as_ref()?;
                Some((key.to_string(), v.rv.to_string()))
            })
            .collect()
    }

    /// Number of live objects per resource.
    pub fn count(&self, resource: Resource) -> usize {
        let state = self.state.read();
        state.table(resource).map_or(0, |table| {
            table
                .chains
                .values()
                .filter(|c| c.latest().is_some_and(|v| v.object.is_some()))
                .count()
        })
    }
}

/// A write transaction over the locked store.
pub struct Txn<'a> {
    state: &'a mut State,
}

impl Txn<'_> {
    pub fn get(&self, resource: Resource, key: &str) -> Option<Arc<StoredObject>> {
        self.state.table(resource)?.latest(key)
    }

    /// Whether the namespace of `key` (`namespace/name`) is being deleted, where the API
    /// server's NamespaceLifecycle admission refuses new content (403): a controller's create
    /// there fails, so the sim's controllers and churn make nothing in it.
    pub fn namespace_terminating(&self, key: &str) -> bool {
        let namespace = key.split_once('/').map_or(key, |(ns, _)| ns);
        self.get(Resource::Namespaces, namespace)
            .and_then(|ns| ns.decode().ok())
            .is_some_and(|ns| ns["metadata"]["deletionTimestamp"].is_string())
    }

    /// The [`Store::instance`] of the store written to.
    pub fn cluster(&self) -> u64 {
        self.state.instance
    }

    /// The custom resources served now.
    pub fn custom_resources(&self) -> &[Resource] {
        &self.state.custom
    }

    /// Starts serving custom resource `resource` (no-op if it is served).
    pub fn serve(&mut self, resource: Resource) {
        if !self.state.custom.contains(&resource) {
            self.state.custom.push(resource);
        }
    }

    /// Stops serving custom resource `resource`; its objects must be deleted first.
    pub fn unserve(&mut self, resource: Resource) {
        self.state.custom.retain(|r| *r != resource);
    }

    /// Every resource served now, built-in and custom.
    pub fn served(&self) -> Vec<Resource> {
        let mut all: Vec<Resource> = Resource::ALL.to_vec();
        all.extend(self.state.custom.iter().copied());
        all
    }

    /// Live keys of `resource` whose object satisfies `pred`.
    pub fn find(&self, resource: Resource, pred: impl Fn(&str, &StoredObject) -> bool) -> Vec<Key> {
        let Some(table) = self.state.table(resource) else {
            return Vec::new();
        };
        table
            .range("", "")
            .filter(|(key, chain)| {
                chain
                    .latest()
                    .and_then(|v| v.object.as_ref())
                    .is_some_and(|o| pred(key, o))
            })
            .map(|(key, _)| key.clone())
            .collect()
    }

    /// The live objects naming `uid` in their ownerReferences, by resource then key, served
    /// or not.
    pub fn dependents_of(&self, uid: &str) -> Vec<(Resource, Key)> {
        self.state
            .dependents
            .get(uid)
            .map(|keys| keys.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Keys of the live pods on `node`, in key order.
    pub fn pods_on_node(&self, node: &str) -> Vec<Key> {
        self.state
            .pods_by_node
            .get(node)
            .map(|keys| keys.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// How many live pods are bound to `node`.
    pub fn pod_count_on_node(&self, node: &str) -> usize {
        self.state.pods_by_node.get(node).map_or(0, BTreeSet::len)
    }

    /// Live objects whose key starts with `prefix`, in key order.
    pub fn scan(&self, resource: Resource, prefix: &str) -> Vec<(Key, Arc<StoredObject>)> {
        let Some(table) = self.state.table(resource) else {
            return Vec::new();
        };
        table
            .range(prefix, prefix)
            .filter_map(|(k, chain)| Some((k.clone(), chain.latest()?.object.clone()?)))
            .collect()
    }

    /// Creates or replaces `key`, stamping the new resourceVersion into `value`.
    pub fn put(
        &mut self,
        resource: Resource,
        key: &str,
        value: &mut Value,
    ) -> Result<Arc<StoredObject>, StoreError> {
        let rv = self.state.rv + 1;
        let Some(metadata) = value.get_mut("metadata").and_then(Value::as_object_mut) else {
            return Err(StoreError::Encode("metadata is not an object".into()));
        };
        metadata.insert("resourceVersion".into(), Value::String(rv.to_string()));
        let object = StoredObject::encode(value).map_err(|e| StoreError::Encode(e.to_string()))?;
        Ok(self.put_object(resource, key, object))
    }

    /// Creates or replaces `key` with an object already encoded at the resourceVersion
    /// returned by [`Txn::next_resource_version`].
    pub fn put_object(
        &mut self,
        resource: Resource,
        key: &str,
        object: StoredObject,
    ) -> Arc<StoredObject> {
        let rv = self.state.rv + 1;
        let object = Arc::new(object);
        let previous = self.get(resource, key);
        let event_type = if previous.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.record(
            resource,
            key,
            rv,
            Some(object.clone()),
            event_type,
            object.clone(),
            previous,
        );
        object
    }

    /// The resourceVersion the next write gets.
    pub fn next_resource_version(&self) -> u64 {
        self.state.rv + 1
    }

    /// Read-modify-write of one top-level member of `key` (see
    /// [`StoredObject::with_member`]); `None` if `key` does not exist.
    pub fn modify_member(
        &mut self,
        resource: Resource,
        key: &str,
        member: &str,
        f: impl FnOnce(&mut Value),
    ) -> Result<Option<Arc<StoredObject>>, StoreError> {
        self.rewrite(resource, key, EventType::Modified, |previous, rv| {
            previous.with_member(member, rv, f)
        })
    }

    /// Deletes `key`; the DELETED event carries the last state stamped with the delete's
    /// resourceVersion, as the real server sends it.
    pub fn delete(
        &mut self,
        resource: Resource,
        key: &str,
    ) -> Result<Option<Arc<StoredObject>>, StoreError> {
        self.rewrite(resource, key, EventType::Deleted, |previous, rv| {
            previous.with_resource_version(rv)
        })
    }

    /// Records the next version of existing `key`, made from its current one at the next
    /// resourceVersion (a DELETED event's object, the key then gone); `None` if `key` does
    /// not exist.
    fn rewrite(
        &mut self,
        resource: Resource,
        key: &str,
        event_type: EventType,
        next: impl FnOnce(&StoredObject, u64) -> Result<StoredObject, serde_json::Error>,
    ) -> Result<Option<Arc<StoredObject>>, StoreError> {
        let Some(previous) = self.get(resource, key) else {
            return Ok(None);
        };
        let rv = self.state.rv + 1;
        let object = Arc::new(next(&previous, rv).map_err(|e| StoreError::Encode(e.to_string()))?);
        let version = (event_type != EventType::Deleted).then(|| object.clone());
        self.record(
            resource,
            key,
            rv,
            version,
            event_type,
            object.clone(),
            Some(previous),
        );
        Ok(Some(object))
    }

    /// Records a change, and for an Event the same change of the other Event API's view
    /// of it at the same resourceVersion (see [`event_view`]).
    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        resource: Resource,
        key: &str,
        rv: u64,
        version: Option<Arc<StoredObject>>,
        event_type: EventType,
        object: Arc<StoredObject>,
        previous: Option<Arc<StoredObject>>,
    ) {
        if let Some(other) = event_view::other(resource) {
            let converted = event_view::convert(resource, &object).map(Arc::new);
            let previous = self.get(other, key);
            if let Some(mirror) = converted {
                let event_type = match (event_type, &previous) {
                    (EventType::Deleted, _) => EventType::Deleted,
                    (_, Some(_)) => EventType::Modified,
                    (_, None) => EventType::Added,
                };
                let version = version.is_some().then(|| mirror.clone());
                if version.is_some() || previous.is_some() {
                    self.record_one(other, key, rv, version, event_type, mirror, previous);
                }
            }
        }
        self.record_one(resource, key, rv, version, event_type, object, previous);
    }

    #[allow(clippy::too_many_arguments)]
    fn record_one(
        &mut self,
        resource: Resource,
        key: &str,
        rv: u64,
        version: Option<Arc<StoredObject>>,
        event_type: EventType,
        object: Arc<StoredObject>,
        previous: Option<Arc<StoredObject>>,
    ) {
        let state = &mut *self.state;
        state.rv = rv;
        let table = state.table_mut(resource);
        let new = Version {
            rv,
            object: version.clone(),
        };
        // The stored key, shared by the event.
        let stored = table.chains.get_key_value(key).map(|(k, _)| k.clone());
        let key: Key = match stored.and_then(|k| Some((table.chains.get_mut(&k)?, k))) {
            Some((chain, k)) => {
                chain.0.push(new);
                k
            }
            None => {
                let k = Key::from(key);
                table.insert(k.clone(), Chain(SmallVec::from_buf([new])));
                k
            }
        };
        if resource == Resource::Pods {
            state.index_pod(&key, previous.as_deref(), version.as_deref());
        }
        state.index_owners(resource, &key, previous.as_deref(), version.as_deref());
        state.log.push_back(Arc::new(Event {
            rv,
            resource,
            event_type,
            key,
            object,
            previous,
        }));
        state.compact_to_limit();
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(name: &str) -> Value {
        json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": name, "namespace": "ns"}})
    }

    fn keys(page: &Page) -> Vec<String> {
        page.items
            .iter()
            .map(|o| {
                let v = o.decode().unwrap();
                v["metadata"]["name"].as_str().unwrap().to_string()
            })
            .collect()
    }

    #[test]
    fn the_owner_index_follows_every_write() {
        let store = Store::new(100);
        let owned = |name: &str, owners: &[&str]| {
            let refs: Vec<Value> = owners
                .iter()
                .map(|uid| json!({"apiVersion": "v1", "kind": "Pod", "name": "x", "uid": uid}))
                .collect();
            let mut cm = json!({"kind": "ConfigMap", "apiVersion": "v1",
                "metadata": {"name": name, "namespace": "ns", "ownerReferences": refs}});
            if owners.is_empty() {
                cm["metadata"]
                    .as_object_mut()
                    .unwrap()
                    .remove("ownerReferences");
            }
            cm
        };
        let of = |uid: &str| {
            store.write(|t| {
                t.dependents_of(uid)
                    .into_iter()
                    .map(|(_, k)| k.to_string())
                    .collect::<Vec<_>>()
            })
        };
        store.write(|t| {
            t.put(Resource::ConfigMaps, "ns/a", &mut owned("a", &["u1", "u2"]))
                .unwrap();
            t.put(Resource::ConfigMaps, "ns/b", &mut owned("b", &["u1"]))
                .unwrap();
        });
        assert_eq!(of("u1"), ["ns/a", "ns/b"]);
        assert_eq!(of("u2"), ["ns/a"]);
        // A reference dropped, then the last one: the index lets go of the key.
        store.write(|t| {
            t.put(Resource::ConfigMaps, "ns/a", &mut owned("a", &["u2"]))
                .unwrap();
            t.put(Resource::ConfigMaps, "ns/b", &mut owned("b", &[]))
                .unwrap();
        });
        assert_eq!(of("u1"), Vec::<String>::new());
        assert_eq!(of("u2"), ["ns/a"]);
        store.write(|t| t.delete(Resource::ConfigMaps, "ns/a").unwrap());
        assert_eq!(of("u2"), Vec::<String>::new());
    }

    #[test]
    fn pages_stay_at_their_snapshot() {
        let store = Store::new(100);
        store.write(|t| {
            for name in ["a", "b", "c"] {
                t.put(Resource::Pods, &format!("ns/{name}"), &mut pod(name))
                    .unwrap();
            }
        });
        let all = |_: &str, _: &StoredObject| true;
        let first = store
            .list(Resource::Pods, ReadAt::Latest, "ns/", None, Some(2), &all)
            .unwrap();
        assert_eq!(keys(&first), ["a", "b"]);
        store.write(|t| {
            t.delete(Resource::Pods, "ns/c").unwrap();
            t.put(Resource::Pods, "ns/d", &mut pod("d")).unwrap();
        });
        let second = store
            .list(
                Resource::Pods,
                ReadAt::Exact(first.rv),
                "ns/",
                first.next_key.as_deref(),
                Some(2),
                &all,
            )
            .unwrap();
        assert_eq!(keys(&second), ["c"]);
        assert!(second.next_key.is_none());
        let latest = store
            .list(Resource::Pods, ReadAt::Latest, "ns/", None, None, &all)
            .unwrap();
        assert_eq!(keys(&latest), ["a", "b", "d"]);
    }

    #[test]
    fn history_window_compacts_and_expires() {
        let store = Store::new(2);
        for i in 0..5 {
            store.write(|t| t.put(Resource::Pods, "ns/a", &mut pod("a")).unwrap());
            assert!(i < 2 || store.compacted() > 0);
        }
        assert_eq!(store.compacted(), 3);
        assert!(matches!(
            store.events_after(1, 10),
            Err(StoreError::TooOld {
                requested: 1,
                oldest: 3
            })
        ));
        assert_eq!(store.events_after(3, 10).unwrap().len(), 2);
        let position = store.restart_epoch();
        assert_eq!(position.rv, EPOCH_STRIDE);
        assert!(store.events_after(5, 10).is_err());
        assert_eq!(store.truth(Resource::Pods).len(), 1);
    }

    #[test]
    fn deleted_event_carries_the_last_state_at_the_delete_rv() {
        let store = Store::new(100);
        let mut tricky = pod("b");
        // The same text elsewhere (b is written at resourceVersion 2) makes the splice
        // ambiguous, so that version takes the decode path.
        tricky["spec"] = json!({"resourceVersion": "2"});
        store.write(|t| {
            t.put(Resource::Pods, "ns/a", &mut pod("a")).unwrap();
            t.put(Resource::Pods, "ns/b", &mut tricky).unwrap();
        });
        store.write(|t| {
            t.delete(Resource::Pods, "ns/a").unwrap();
            t.delete(Resource::Pods, "ns/b").unwrap();
        });
        let events = store.events_after(2, 10).unwrap();
        for (event, (name, rv)) in events.iter().zip([("a", "3"), ("b", "4")]) {
            assert_eq!(event.event_type, EventType::Deleted);
            let last = event.object.decode().unwrap();
            assert_eq!(last["metadata"]["name"], name);
            assert_eq!(last["metadata"]["resourceVersion"], rv);
            let again = event
                .object
                .with_resource_version(10)
                .unwrap()
                .decode()
                .unwrap();
            assert_eq!(again["metadata"]["resourceVersion"], "10");
            assert_eq!(again["metadata"]["name"], name);
        }
        assert_eq!(
            events[1].object.decode().unwrap()["spec"]["resourceVersion"],
            "2"
        );
    }
}
