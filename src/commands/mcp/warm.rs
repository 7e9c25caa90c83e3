//! The informers `kscope mcp` answers from: one per kind, started on the kind's first use and
//! kept warm, so later questions cost the cluster nothing. Their number is bounded: past
//! it, the kind used least recently is stopped.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use parking_lot::Mutex;
use serde_json::{Value, json};

use kscope_client::cluster::NamespaceScope;
use kscope_index_views::columns::{SortKey, TableRow};
use kscope_index_views::definitions::IndexDefinition;
use kscope_index_views::ownership::{OwnershipStore, StoreOf};
use kscope_index_views::query::{FuzzyFilter, Query};
use kscope_index_views::registry::IndexRegistry;
use kscope_informers::instrument::tap::Tap;
use kscope_informers::keys::Key;
use kscope_informers::running::RunningInformer;
use kscope_resources::{
    Deployment, GenericObject, Kind, Namespace, Node, Pod, ReplicaSet, ResourceKind, Secret,
    Timestamp,
};

use super::ToolError;
use crate::commands::{Resolved, gives_up, prepare_informer};

/// How many entries each kind's tap keeps for `deltas` and `hotloops`.
const TAP_CAPACITY: usize = 4096;
/// How often a wait for a store's first rows looks at it: the store tells nobody of its
/// first object, and a table shows it within a frame anyway.
const FIRST_ROWS_POLL: Duration = Duration::from_millis(2);

/// What `list` asks of a store: already parsed, so a bad filter fails before any informer
/// starts.
pub struct Selection<'a> {
    pub query: &'a Query,
    /// Column names, as the table heads them; all of them when empty.
    pub columns: &'a [String],
    /// A column name, `-` in front for descending; by key when `None`.
    pub sort: Option<&'a str>,
    /// The rows wanted, in the sorted order: only they are formatted.
    pub page: std::ops::Range<usize>,
}

/// A page of a table: its heading, each row's key with its cells in order, and how many
/// rows the whole table has.
pub struct Rows {
    pub columns: Vec<String>,
    pub rows: Vec<(Key, Vec<String>)>,
    pub total: usize,
}

/// One warm kind, whatever its projection.
pub trait WarmKind: Send + Sync {
    fn tap(&self) -> &Tap;
    /// How many objects the store holds.
    fn len(&self) -> usize;
    fn select(&self, selection: &Selection<'_>) -> Result<Rows, ToolError>;
    /// Each index with how many values it has.
    fn indexes(&self) -> Vec<Value>;
    /// Adds an index computed from what the store keeps; the objects stored are indexed at
    /// once.
    fn add_index(&self, definition: IndexDefinition) -> Result<(), ToolError>;
    /// Why the store is not current, in `get`'s words: `("syncing", why)` before its first
    /// list is in, `("stale", why)` when the Reflector is not watching or was stopped;
    /// `None` while it watches.
    fn not_current(&self) -> Option<(&'static str, String)>;
    /// Waits until the first list is in the store, or with `first_rows` until the store
    /// holds any object (what the TUI shows first), at most `timeout`. Errors that will not
    /// go away by retrying end the wait at once, as for `kscope get`.
    fn synced(&self, first_rows: bool, timeout: Duration) -> BoxFuture<'_, Result<(), ToolError>>;
    /// Stops the informer; what still reads the store keeps its last state.
    fn stop(&self);
    /// The store as an ownership tree reads it (by its owner-uid index).
    fn ownership(&self) -> Arc<dyn OwnershipStore>;
}

struct Warm<T> {
    kind: Kind,
    scope: NamespaceScope,
    registry: IndexRegistry<T>,
    /// Shared with a wait for its sync, which must not hold the lock.
    informer: Mutex<Option<Arc<RunningInformer<T>>>>,
    tap: Tap,
}

impl<T: TableRow> Warm<T> {
    fn start(
        resolved: &Resolved,
        definitions: Vec<IndexDefinition>,
        scope: &kscope_client::cluster::ClusterArgs,
    ) -> Result<Arc<dyn WarmKind>, ToolError> {
        let tap = Tap::new(TAP_CAPACITY, kscope_resources::secret::keepable_raw);
        let args = crate::commands::InformerArgs {
            resource: resolved.kind.to_string(),
            cluster: scope.clone(),
            selector: None,
            field_selector: None,
            config: None,
            fifo: None,
            initial_list: None,
        };
        let prepared = prepare_informer::<T>(&args, resolved, Some(tap.clone()))?;
        let (registry, writer) = IndexRegistry::for_kind(resolved.kind.clone(), definitions)
            .map_err(crate::commands::CommandError::from)?;
        let informer = RunningInformer::start(prepared.config, prepared.lister_watcher, writer);
        Ok(Arc::new(Self {
            kind: resolved.kind.clone(),
            scope: prepared.scope,
            registry,
            informer: Mutex::new(Some(Arc::new(informer))),
            tap,
        }))
    }
}

impl<T: TableRow> WarmKind for Warm<T> {
    fn tap(&self) -> &Tap {
        &self.tap
    }

    fn len(&self) -> usize {
        self.registry.indexer().len()
    }

    fn select(&self, selection: &Selection<'_>) -> Result<Rows, ToolError> {
        let indexer = self.registry.indexer();
        let keys = selection
            .query
            .select(indexer)
            .map_err(crate::commands::CommandError::from)?;
        let keys = FuzzyFilter::default().filter(&selection.query.text, keys);
        let with_namespace = self.kind.namespaced() && self.scope == NamespaceScope::All;
        let all: Cow<'static, [kscope_index_views::columns::Column]> = T::columns(&self.kind);
        let mut names: Vec<String> = Vec::with_capacity(all.len() + 1);
        if with_namespace {
            names.push("NAMESPACE".into());
        }
        names.extend(all.iter().map(|c| c.name.to_string()));
        let offset = usize::from(with_namespace);
        let wanted = |name: &str| -> Result<usize, ToolError> {
            names
                .iter()
                .position(|n| n.eq_ignore_ascii_case(name))
                .ok_or_else(|| ToolError::UnknownColumn {
                    column: name.to_string(),
                    known: names.join(", "),
                })
        };
        let chosen: Vec<usize> = if selection.columns.is_empty() {
            (0..names.len()).collect()
        } else {
            selection
                .columns
                .iter()
                .map(|c| wanted(c))
                .collect::<Result<_, _>>()?
        };
        let sort = match selection.sort {
            None => None,
            Some(spec) => {
                let (descending, name) = match spec.strip_prefix('-') {
                    Some(name) => (true, name),
                    None => (false, spec),
                };
                Some((wanted(name)?, descending))
            }
        };
        let mut objects: Vec<(Key, Arc<T>)> = keys
            .into_iter()
            .filter_map(|(key, _)| indexer.get_by_key(&key).map(|o| (key, o)))
            .collect();
        match sort {
            None => objects.sort_by(|a, b| a.0.cmp(&b.0)),
            Some((column, descending)) => {
                let sort_key = |(key, object): &(Key, Arc<T>)| -> SortKey {
                    match column.checked_sub(offset) {
                        Some(c) => object.sort_key(&all, c),
                        None => SortKey::from_cell(
                            kscope_index_views::columns::ColumnKind::Text,
                            kscope_informers::keys::split_meta_namespace_key(key)
                                .0
                                .unwrap_or_default(),
                        ),
                    }
                };
                let mut keyed: Vec<(SortKey, (Key, Arc<T>))> =
                    objects.into_iter().map(|o| (sort_key(&o), o)).collect();
                keyed.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.0.cmp(&b.1.0)));
                if descending {
                    keyed.reverse();
                }
                objects = keyed.into_iter().map(|(_, o)| o).collect();
            }
        }
        let now = Timestamp::now();
        let total = objects.len();
        let rows = objects
            .into_iter()
            .skip(selection.page.start)
            .take(selection.page.len())
            .map(|(key, object)| {
                let cells = chosen
                    .iter()
                    .map(|&c| match c.checked_sub(offset) {
                        Some(c) => object.cell(&all, c, now),
                        None => object.namespace().unwrap_or_default().to_string(),
                    })
                    .collect();
                (key, cells)
            })
            .collect();
        Ok(Rows {
            columns: chosen.iter().map(|&c| names[c].clone()).collect(),
            rows,
            total,
        })
    }

    fn indexes(&self) -> Vec<Value> {
        self.registry
            .definitions()
            .iter()
            .map(|d| {
                let values = self
                    .registry
                    .value_counts(&d.name)
                    .map(|v| v.len())
                    .unwrap_or_default();
                json!({"name": d.name, "source": d.source.to_string(), "values": values})
            })
            .collect()
    }

    fn add_index(&self, definition: IndexDefinition) -> Result<(), ToolError> {
        self.registry
            .add(definition)
            .map_err(|e| crate::commands::CommandError::from(e).into())
    }

    fn not_current(&self) -> Option<(&'static str, String)> {
        let informer = self.informer.lock();
        let Some(informer) = informer.as_ref() else {
            return Some(("stale", "its informer was stopped".into()));
        };
        let status = informer.status().borrow().clone();
        let state = crate::commands::not_watching(&status)?;
        let why = match status.last_error.as_deref() {
            Some(err) => format!(
                "{state} (last error: {})",
                kscope_client::explain::reflector_error(err)
            ),
            None => state,
        };
        Some((if status.listed { "stale" } else { "syncing" }, why))
    }

    fn synced(&self, first_rows: bool, timeout: Duration) -> BoxFuture<'_, Result<(), ToolError>> {
        let informer = self.informer.lock().clone();
        let resource = self.kind.to_string();
        Box::pin(async move {
            // Once synced, a store stays readable whatever its Reflector meets since (that
            // is `not_current`'s to say).
            let Some(informer) = informer.filter(|i| !i.informer().has_synced()) else {
                return Ok(());
            };
            let indexer = self.registry.indexer();
            let first = async {
                while !first_rows || indexer.is_empty() {
                    tokio::time::sleep(FIRST_ROWS_POLL).await;
                }
            };
            let synced = async {
                tokio::select! {
                    synced = informer.wait_for_sync(gives_up) => synced,
                    () = first => Ok(()),
                }
            };
            match tokio::time::timeout(timeout, synced).await {
                Ok(Ok(())) => Ok(()),
                Ok(Err(err)) => Err(crate::commands::CommandError::Sync(err).into()),
                Err(_) => Err(crate::commands::CommandError::NotSynced {
                    resource,
                    waited: timeout,
                    last_error: informer.status().borrow().last_error.clone(),
                }
                .into()),
            }
        })
    }

    fn stop(&self) {
        if let Some(informer) = self.informer.lock().take() {
            // A wait for its sync may still hold it: that one only stops it watching.
            match Arc::try_unwrap(informer) {
                Ok(informer) => {
                    tokio::spawn(informer.shutdown());
                }
                Err(informer) => informer.stop_watching(),
            }
        }
    }

    fn ownership(&self) -> Arc<dyn OwnershipStore> {
        Arc::new(StoreOf::new(
            self.kind.kind().to_string(),
            self.registry.indexer().clone(),
        ))
    }
}

/// Starts a warm informer on `resolved.kind`, with its projection's type; its sync is
/// waited for apart ([`WarmKind::synced`]).
pub fn start(
    resolved: &Resolved,
    definitions: Vec<IndexDefinition>,
    cluster: &kscope_client::cluster::ClusterArgs,
) -> Result<Arc<dyn WarmKind>, ToolError> {
    let (r, d, c) = (resolved, definitions, cluster);
    match resolved.kind.built_in() {
        Some(ResourceKind::Pods) => Warm::<Pod>::start(r, d, c),
        Some(ResourceKind::Nodes) => Warm::<Node>::start(r, d, c),
        Some(ResourceKind::Namespaces) => Warm::<Namespace>::start(r, d, c),
        Some(ResourceKind::Deployments) => Warm::<Deployment>::start(r, d, c),
        Some(ResourceKind::ReplicaSets) => Warm::<ReplicaSet>::start(r, d, c),
        Some(ResourceKind::Secrets) => Warm::<Secret>::start(r, d, c),
        None => Warm::<GenericObject>::start(r, d, c),
    }
}

/// The warm kinds, most recently used last.
pub struct WarmKinds {
    capacity: usize,
    kinds: Mutex<Vec<(Kind, Arc<dyn WarmKind>)>>,
}

impl WarmKinds {
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            kinds: Mutex::new(Vec::new()),
        }
    }

    /// The warm informer of `kind`, marked as just used.
    pub fn get(&self, kind: &Kind) -> Option<Arc<dyn WarmKind>> {
        let mut kinds = self.kinds.lock();
        let at = kinds.iter().position(|(k, _)| k == kind)?;
        let entry = kinds.remove(at);
        let warm = entry.1.clone();
        kinds.push(entry);
        Some(warm)
    }

    /// Keeps `warm` as the most recently used, stopping the least recently used kinds past
    /// the bound (and an older informer of the same kind, started by a concurrent call).
    pub fn insert(&self, kind: Kind, warm: Arc<dyn WarmKind>) -> Arc<dyn WarmKind> {
        let mut kinds = self.kinds.lock();
        if let Some(at) = kinds.iter().position(|(k, _)| *k == kind) {
            let (_, existing) = kinds.remove(at);
            warm.stop();
            kinds.push((kind, existing.clone()));
            return existing;
        }
        kinds.push((kind, warm.clone()));
        while kinds.len() > self.capacity {
            let (stopped, oldest) = kinds.remove(0);
            tracing::info!(kind = %stopped, "mcp: stopped the least recently used informer");
            oldest.stop();
        }
        warm
    }

    /// Stops `kind`'s informer, so its next use starts it anew (after an index that only a
    /// relist can fill).
    pub fn remove(&self, kind: &Kind) {
        let mut kinds = self.kinds.lock();
        if let Some(at) = kinds.iter().position(|(k, _)| k == kind) {
            let (_, warm) = kinds.remove(at);
            warm.stop();
        }
    }

    /// Every warm kind, least recently used first.
    pub fn all(&self) -> Vec<(Kind, Arc<dyn WarmKind>)> {
        self.kinds.lock().clone()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    /// A warm kind that only records being stopped.
    struct Stoppable {
        tap: Tap,
        stopped: AtomicBool,
    }

    impl WarmKind for Stoppable {
        fn tap(&self) -> &Tap {
            &self.tap
        }
        fn len(&self) -> usize {
            0
        }
        fn select(&self, _: &Selection<'_>) -> Result<Rows, ToolError> {
            Err(ToolError::Usage("not a store".into()))
        }
        fn indexes(&self) -> Vec<Value> {
            Vec::new()
        }
        fn add_index(&self, _: IndexDefinition) -> Result<(), ToolError> {
            Err(ToolError::Usage("not a store".into()))
        }
        fn not_current(&self) -> Option<(&'static str, String)> {
            None
        }
        fn synced(&self, _: bool, _: Duration) -> BoxFuture<'_, Result<(), ToolError>> {
            Box::pin(async { Ok(()) })
        }
        fn stop(&self) {
            self.stopped.store(true, Ordering::SeqCst);
        }
        fn ownership(&self) -> Arc<dyn OwnershipStore> {
            let empty = kscope_informers::indexer::IndexerWriter::<Pod>::default();
            Arc::new(StoreOf::new("Pod", empty.reader()))
        }
    }

    fn stoppable() -> Arc<Stoppable> {
        Arc::new(Stoppable {
            tap: Tap::new(1, Some),
            stopped: AtomicBool::new(false),
        })
    }

    fn kind(kind: ResourceKind) -> Kind {
        Kind::BuiltIn(kind)
    }

    #[test]
    fn past_the_bound_the_least_recently_used_kind_stops() {
        let warm = WarmKinds::new(2);
        let (pods, nodes, secrets) = (stoppable(), stoppable(), stoppable());
        warm.insert(kind(ResourceKind::Pods), pods.clone());
        warm.insert(kind(ResourceKind::Nodes), nodes.clone());
        // Pods used again: Nodes is now the least recently used.
        assert!(warm.get(&kind(ResourceKind::Pods)).is_some());
        warm.insert(kind(ResourceKind::Secrets), secrets.clone());
        assert!(nodes.stopped.load(Ordering::SeqCst));
        assert!(!pods.stopped.load(Ordering::SeqCst) && !secrets.stopped.load(Ordering::SeqCst));
        assert!(warm.get(&kind(ResourceKind::Nodes)).is_none());
        let held: Vec<Kind> = warm.all().into_iter().map(|(k, _)| k).collect();
        assert_eq!(
            held,
            [kind(ResourceKind::Pods), kind(ResourceKind::Secrets)]
        );
    }

    #[test]
    fn a_second_start_of_a_kind_is_stopped_and_the_first_kept() {
        let warm = WarmKinds::new(4);
        let (first, second) = (stoppable(), stoppable());
        warm.insert(kind(ResourceKind::Pods), first.clone());
        let kept = warm.insert(kind(ResourceKind::Pods), second.clone());
        assert!(second.stopped.load(Ordering::SeqCst));
        assert!(!first.stopped.load(Ordering::SeqCst));
        assert!(std::ptr::addr_eq(Arc::as_ptr(&kept), Arc::as_ptr(&first)));
        assert_eq!(warm.all().len(), 1);
        warm.remove(&kind(ResourceKind::Pods));
        assert!(first.stopped.load(Ordering::SeqCst) && warm.all().is_empty());
    }
}
