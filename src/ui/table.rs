//! The table on screen, for any kind: one informer, its index registry, and the live views
//! over it. The event loop holds a `Box<dyn Table>`, so switching kinds swaps one value and
//! the loop itself stays free of type parameters.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::{broadcast, watch};

use kscope_client::cluster::{Cluster, NamespaceScope};
use kscope_client::discovery::{Catalog, CatalogWatch};
use kscope_client::lister_watcher::KubeListerWatcher;
use kscope_config::InformerSettings;
use kscope_index_views::columns::TableRow;
use kscope_index_views::definitions::{
    IndexDefinition, Misfits, PathIndex, decode_fields, indexes_for, namespaces_term, path_indexes,
};
use kscope_index_views::fleet::ClusterRows;
use kscope_index_views::live::{LiveView, SortSpec, ViewColumn, ViewWorker, Window};
use kscope_index_views::mixed::{MemberRows, ViewRows};
use kscope_index_views::printer_columns::KubectlPrinterColumns;
use kscope_index_views::query::{Query, QueryError, Term};
use kscope_index_views::registry::{IndexRegistry, ValueCount};
use kscope_index_views::usage::{UsageFeed, UsagePoller, UsageSettings};
use kscope_informers::fifo::{FifoKind, Handoff};
use kscope_informers::indexer::{IndexerError, IndexerWriter};
use kscope_informers::informer::SharedIndexInformer;
use kscope_informers::instrument::tap::Tap;
use kscope_informers::keys::Key;
use kscope_informers::metrics::InformerMetricsSnapshot;
use kscope_informers::reflector::ReflectorStatus;
use kscope_informers::running::{InformerConfig, RunningInformer};
use kscope_informers::workqueue::WorkqueueMetrics;
use kscope_resources::{
    Deployment, FieldIndex, GenericObject, Kind, Namespace, Node, Pod, ReplicaSet, ResourceKind,
    Secret, Timestamp,
};

use super::UiError;
use super::action::Action;
use super::layout::Scroll;

/// What the event loop asks of the table, whatever its kind.
pub trait Table {
    fn kind(&self) -> &Kind;

    /// Copies out the rows that fit in `height`, scrolled to keep the selection visible.
    fn capture(&self, scroll: &mut Scroll, height: usize, now: Timestamp) -> Window;

    /// Bumped when the rows on screen may have changed; a new receiver after `set_query`
    /// replaced the view.
    fn version(&self) -> watch::Receiver<u64>;

    /// The informer's list/watch progress and last error.
    fn status(&self) -> watch::Receiver<ReflectorStatus>;

    /// Watch events received so far, for the events-per-second rate.
    fn watch_events(&self) -> u64;

    /// The on-screen view's workqueue.
    fn queue_metrics(&self) -> WorkqueueMetrics;

    /// The informer's own numbers (its FIFO's queue, processing latency, resourceVersions)
    /// and which FIFO it runs.
    fn informer_metrics(&self) -> (FifoKind, InformerMetricsSnapshot);

    /// The free text narrowing the view on screen: the typed text once its fuzzy search's
    /// result is applied (so a caller can tell when a keystroke's rows are in).
    fn text(&self) -> String;

    /// The filter the rows on screen match: the index terms of the view on screen and the
    /// text whose fuzzy pass is in, whatever is typed meanwhile.
    fn applied(&self) -> Query;

    /// Rows in the view on screen.
    fn rows(&self) -> usize;

    /// The order the rows on screen show: the sort asked for once its re-sort is in.
    fn shown_sort(&self) -> SortSpec;

    /// Every column of the rows, wide and index columns included, in cell order.
    fn columns(&self) -> Vec<ViewColumn>;

    /// Moves the selection for a movement action; `page` rows for PgUp/PgDn. With nothing
    /// selected it moves from `offset`, the first visible row.
    fn move_selection(&self, offset: usize, action: &Action, page: usize);

    /// How the rows are sorted now.
    fn sort(&self) -> SortSpec;

    fn set_sort(&self, sort: SortSpec);

    /// Shows the rows matching `query`. Index terms rebuild the view from the indexes when
    /// they changed (returns true then: watch the new `version`); free text narrows it off
    /// the UI thread.
    fn set_query(&mut self, query: Query, sort: SortSpec) -> Result<bool, QueryError>;

    fn index_names(&self) -> Vec<String>;

    /// Objects left out of JSONPath index `name` because its path does not fit them.
    fn index_misfits(&self, name: &str) -> Misfits;

    /// Adds an index to the running informer's store, backfilled from the objects it holds,
    /// and rebuilds the views so that they show its column. A JSONPath index cannot be
    /// backfilled (the store keeps no object to evaluate it on): restart the table instead.
    fn add_index(&mut self, definition: IndexDefinition) -> Result<(), UiError>;

    /// An index's values with their counts, most frequent first.
    fn value_counts(&self, name: &str) -> Vec<ValueCount>;

    /// The keys an index files under `value` (the delta panel's `name=value` filter).
    fn index_keys(&self, name: &str, value: &str) -> Result<Vec<Key>, IndexerError>;

    /// The key of the selected row.
    fn selected(&self) -> Option<Key>;

    /// Selects the row of `key` if it is in the view; says whether it was.
    fn select_key(&self, key: &Key) -> bool;

    /// (kind, name) of the controller owning the object of `key`, if it has one: kept apart,
    /// since a kind may hold a `/`.
    fn controller_owner(&self, key: &Key) -> Option<(String, String)>;

    /// The tap of this table's informer: its watch events and deltas, for the delta panel
    /// and the detail's history. Each table has its own, so a kind's entries never mix
    /// with another's.
    fn tap(&self) -> &Tap;

    /// The FIFO this table's informer runs, and the one a second pipeline on the same
    /// watch stream runs, if the table was started to compare two.
    fn pipelines(&self) -> (FifoKind, Option<FifoKind>);

    /// What each pop hands the handlers, per pipeline (the table's first). Only a compared
    /// table's: an informer with no subscriber spends nothing describing its handoffs.
    fn subscribe_handoffs(&self) -> Vec<broadcast::Receiver<Arc<Handoff>>>;

    /// Stops the informer's list and watch for good, keeping the rows: the kind is no
    /// longer served. A table stopped so is never reused.
    fn stop_watching(&self);

    /// Why the usage columns say `n/a`, while they do; `None` for a table without them.
    fn usage_unavailable(&self) -> Option<String> {
        None
    }

    /// Stops the views and the informer; the future ends when the informer's tasks have.
    fn shutdown(self: Box<Self>) -> Pin<Box<dyn Future<Output = ()> + Send>>;

    /// The selected row's object: its kind and its key in that kind's store (a mixed
    /// table's rows are of several kinds).
    fn selected_object(&self) -> Option<(Kind, Key)> {
        self.object_of(&self.selected()?)
    }

    /// The object of the row `key`: its kind and its key in that kind's store, which a
    /// merged table's row keys are not.
    fn object_of(&self, key: &Key) -> Option<(Kind, Key)> {
        Some((self.kind().clone(), key.clone()))
    }

    /// The rows of the view on screen, for a mixed table to read off the UI thread; `None`
    /// for a table that is itself mixed.
    fn member_rows(&self) -> Option<Arc<dyn MemberRows>>;

    /// The rows of the view on screen with their sort entries, for a table across clusters
    /// to merge off the UI thread; `None` for a table that merges rows itself.
    fn cluster_rows(&self) -> Option<Arc<dyn ClusterRows>> {
        None
    }

    /// The context of the selected row's cluster, when the table shows several.
    fn selected_context(&self) -> Option<String> {
        None
    }

    /// The concrete table, for the app to reach a mixed table's members.
    fn as_any(&self) -> &dyn Any;

    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// A kind's table: its informer, registry, and an unfiltered and a filtered view.
pub struct ResourceTable<T> {
    kind: Kind,
    informer: RunningInformer<T>,
    registry: IndexRegistry<T>,
    /// The unfiltered view, kept current even while a filter is on, so clearing the filter
    /// is instant rather than a rebuild of every row.
    base: ViewWorker<T>,
    /// The view of the filter's index terms, when it has any.
    filtered: Option<(Query, ViewWorker<T>)>,
    tap: Tap,
    /// The second pipeline of a compared table, fed the same watch stream.
    compared: Option<SharedIndexInformer<T>>,
    /// The JSONPath indexes its objects are decoded with, counting the objects they miss.
    paths: Vec<Arc<PathIndex>>,
    /// Reads the usage its views show (pods, nodes), while the table lives.
    _usage: Option<UsagePoller>,
    /// A namespace set's `namespace in (a,b)`, under every view: the informer lists all
    /// namespaces, and the set's rows are the union of its members' index entries.
    scope: Option<Term>,
}

/// The term keeping the rows of a set's namespaces, through whichever of `indexes` reads
/// the namespace field; `None` for one namespace, all of them, or a cluster-scoped kind
/// (which a set does not apply to, as kubectl ignores `-n` for one).
fn scope_term(
    kind: &Kind,
    scope: &NamespaceScope,
    indexes: &[IndexDefinition],
) -> Result<Option<Term>, UiError> {
    match scope.members().filter(|_| kind.namespaced()) {
        Some(members) => namespaces_term(members, indexes)
            .map(Some)
            .ok_or(UiError::NoNamespaceIndex),
        None => Ok(None),
    }
}

impl<T: TableRow> ResourceTable<T> {
    /// Starts an informer on `kind`, stored as `T`, with the configured indexes that apply
    /// to it, and its base view.
    pub fn start(
        starter: &TableStarter,
        kind: &Kind,
        scope: &NamespaceScope,
        sort: SortSpec,
    ) -> Result<Self, UiError> {
        let indexes = indexes_for(kind, &starter.indexes, &starter.catalog.current());
        let scope_term = scope_term(kind, scope, &indexes)?;
        let paths = path_indexes(&indexes);
        let (registry, writer) = IndexRegistry::<T>::for_kind(kind.clone(), indexes)?;
        let usage = starter.usage_feed::<T>(kind, scope);
        let registry = match &usage {
            Some((feed, _)) => registry.with_usage(feed.clone()),
            None => registry,
        };
        let tap = Tap::new(starter.tap_capacity, kscope_resources::secret::keepable_raw);
        let mut config = InformerConfig::new(kind.to_string());
        config.tap = Some(tap.clone());
        config.fifo = starter.pipeline.fifo;
        config.initial_list = starter.pipeline.initial_list;
        let lister_watcher =
            KubeListerWatcher::for_kind(&starter.cluster, kind.clone(), scope, None, None)
                .with_field_indexes(decode_fields(&paths))
                .with_printer_columns(Arc::new(KubectlPrinterColumns));
        let (informer, compared) = match starter.compare {
            // The second store is never viewed: it needs no indexes.
            Some(other) => {
                let (informer, second) = RunningInformer::start_compared(
                    config,
                    lister_watcher,
                    writer,
                    other,
                    IndexerWriter::default(),
                );
                (informer, Some(second))
            }
            None => (RunningInformer::start(config, lister_watcher, writer), None),
        };
        let base = ViewWorker::start(
            informer.informer(),
            registry.clone(),
            within(&scope_term, Query::default()),
            sort,
        )?;
        Ok(Self {
            kind: kind.clone(),
            informer,
            registry,
            base,
            filtered: None,
            tap,
            compared,
            paths,
            _usage: usage.map(|(_, poller)| poller),
            scope: scope_term,
        })
    }

    /// The view on screen.
    fn worker(&self) -> &ViewWorker<T> {
        self.filtered.as_ref().map_or(&self.base, |(_, w)| w)
    }

    /// The view on screen and the store, for a table merging rows to read.
    fn view_rows(&self) -> ViewRows<T> {
        let view = self.worker().view().clone();
        let indexer = self.informer.indexer().clone();
        ViewRows::new(view, indexer, &self.kind)
    }
}

impl<T: TableRow> Table for ResourceTable<T> {
    fn kind(&self) -> &Kind {
        &self.kind
    }

    fn capture(&self, scroll: &mut Scroll, height: usize, now: Timestamp) -> Window {
        capture(self.worker().view(), scroll, height, now)
    }

    fn version(&self) -> watch::Receiver<u64> {
        self.worker().version()
    }

    fn status(&self) -> watch::Receiver<ReflectorStatus> {
        self.informer.status()
    }

    fn watch_events(&self) -> u64 {
        self.informer.metrics().snapshot().watch_events
    }

    fn queue_metrics(&self) -> WorkqueueMetrics {
        self.worker().queue_metrics()
    }

    fn informer_metrics(&self) -> (FifoKind, InformerMetricsSnapshot) {
        (self.informer.fifo_kind(), self.informer.informer_metrics())
    }

    fn text(&self) -> String {
        self.worker().view().lock().text().to_string()
    }

    fn applied(&self) -> Query {
        Query {
            text: self.text(),
            ..self
                .filtered
                .as_ref()
                .map_or_else(Query::default, |(selector, _)| selector.clone())
        }
    }

    fn rows(&self) -> usize {
        self.worker().view().lock().len()
    }

    fn shown_sort(&self) -> SortSpec {
        self.worker().view().lock().sort()
    }

    fn columns(&self) -> Vec<ViewColumn> {
        self.base.view().lock().columns()
    }

    fn move_selection(&self, offset: usize, action: &Action, page: usize) {
        move_selection(&mut self.worker().view().lock(), offset, action, page);
    }

    fn sort(&self) -> SortSpec {
        self.base.sort()
    }

    /// Sorts every live view the same way, so switching between them keeps the order; each
    /// re-sorts on its own job thread.
    fn set_sort(&self, sort: SortSpec) {
        self.base.set_sort(sort);
        if let Some((_, worker)) = &self.filtered {
            worker.set_sort(sort);
        }
    }

    fn set_query(&mut self, query: Query, sort: SortSpec) -> Result<bool, QueryError> {
        let names = self.index_names();
        let query = query.resolve_inverted(|name| names.iter().any(|n| n == name));
        let selector = query.selector();
        let rebuilt = self
            .filtered
            .as_ref()
            .map_or(!selector.is_empty(), |(current, _)| *current != selector);
        if rebuilt {
            let selected = self.selected();
            if selector.is_empty() {
                self.filtered = None;
            } else {
                let worker = ViewWorker::start(
                    self.informer.informer(),
                    self.registry.clone(),
                    within(&self.scope, selector.clone()),
                    sort,
                )?;
                self.filtered = Some((selector, worker));
            }
            self.worker().view().lock().select(selected);
        }
        self.worker().set_text(&query.text);
        Ok(rebuilt)
    }

    fn index_names(&self) -> Vec<String> {
        self.registry
            .definitions()
            .into_iter()
            .map(|d| d.name)
            .collect()
    }

    fn index_misfits(&self, name: &str) -> Misfits {
        let indexer = self.informer.indexer();
        self.paths
            .iter()
            .filter(|p| p.name() == name)
            .map(|p| p.misfits(|key| indexer.contains_key(key)))
            .sum()
    }

    fn add_index(&mut self, definition: IndexDefinition) -> Result<(), UiError> {
        self.registry.add(definition)?;
        // A view's index columns are fixed when it is built.
        let sort = self.base.sort();
        let text = self.text();
        let informer = self.informer.informer();
        let base = within(&self.scope, Query::default());
        self.base = ViewWorker::start(informer, self.registry.clone(), base, sort)?;
        if let Some((selector, _)) = self.filtered.take() {
            let scoped = within(&self.scope, selector.clone());
            let worker = ViewWorker::start(informer, self.registry.clone(), scoped, sort)?;
            self.filtered = Some((selector, worker));
        }
        self.worker().set_text(&text);
        Ok(())
    }

    fn value_counts(&self, name: &str) -> Vec<ValueCount> {
        self.registry.value_counts(name).unwrap_or_default()
    }

    fn index_keys(&self, name: &str, value: &str) -> Result<Vec<Key>, IndexerError> {
        self.registry.indexer().index_keys(name, value)
    }

    fn controller_owner(&self, key: &Key) -> Option<(String, String)> {
        let object = self.informer.indexer().get_by_key(key)?;
        let (kind, name) = object.controller_owner()?;
        Some((kind.to_string(), name.to_string()))
    }

    fn selected(&self) -> Option<Key> {
        self.worker().view().lock().selected().cloned()
    }

    fn select_key(&self, key: &Key) -> bool {
        let mut view = self.worker().view().lock();
        let previous = view.selected().cloned();
        view.select(Some(key.clone()));
        let found = view.selected_position().is_some();
        if !found {
            view.select(previous);
        }
        found
    }

    fn tap(&self) -> &Tap {
        &self.tap
    }

    fn pipelines(&self) -> (FifoKind, Option<FifoKind>) {
        (
            self.informer.fifo_kind(),
            self.compared.as_ref().map(SharedIndexInformer::fifo_kind),
        )
    }

    fn subscribe_handoffs(&self) -> Vec<broadcast::Receiver<Arc<Handoff>>> {
        match &self.compared {
            Some(second) => vec![
                self.informer.informer().subscribe_handoffs(),
                second.subscribe_handoffs(),
            ],
            None => Vec::new(),
        }
    }

    fn stop_watching(&self) {
        self.informer.stop_watching();
    }

    fn usage_unavailable(&self) -> Option<String> {
        self.registry.usage().and_then(|feed| feed.unavailable())
    }

    fn shutdown(self: Box<Self>) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        let Self { informer, .. } = *self;
        Box::pin(informer.shutdown())
    }

    fn member_rows(&self) -> Option<Arc<dyn MemberRows>> {
        Some(Arc::new(self.view_rows()))
    }

    fn cluster_rows(&self) -> Option<Arc<dyn ClusterRows>> {
        Some(Arc::new(self.view_rows()))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// `query` kept to the namespace set's `scope` term, when the table has one.
fn within(scope: &Option<Term>, mut query: Query) -> Query {
    if let Some(term) = scope {
        query.terms.insert(0, term.clone());
    }
    query
}

/// The fewest entries a fleet member's tap keeps: enough for the delta panel's screen and
/// an object's recent history, whatever the number of clusters.
const FLEET_TAP_FLOOR: usize = 512;

/// Starts tables on one cluster, all with the configured indexes, each with a tap keeping
/// its latest `tap_capacity` entries.
pub struct TableStarter {
    cluster: Cluster,
    indexes: Vec<IndexDefinition>,
    tap_capacity: usize,
    pipeline: InformerSettings,
    catalog: Catalog,
    /// Keeps `catalog` current while this starter is in use (after a context switch).
    _catalog_watch: Option<CatalogWatch>,
    /// A second pipeline's FIFO, run beside each new table's on the same watch stream.
    compare: Option<FifoKind>,
    /// How the usage columns are read; `None`: they are not.
    usage: Option<UsageSettings>,
    /// One starter per cluster when the TUI shows several at once (`--context a --context
    /// b`): each table is then one per cluster, merged. Empty for one cluster.
    fleet: Vec<TableStarter>,
}

impl TableStarter {
    /// A starter knowing only the built-in kinds until [`TableStarter::with_catalog`].
    pub fn new(cluster: Cluster, indexes: Vec<IndexDefinition>, tap_capacity: usize) -> Self {
        Self {
            cluster,
            indexes,
            tap_capacity,
            pipeline: InformerSettings::default(),
            catalog: Catalog::default(),
            _catalog_watch: None,
            compare: None,
            usage: None,
            fleet: Vec::new(),
        }
    }

    /// Tables across `clusters` (two or more), each cluster's informers its own, with what
    /// it serves discovered in the background; this starter stands for the first cluster
    /// wherever one is needed (`:ctx`, the workbench views).
    ///
    /// The tap's entries are shared out: each cluster's keeps `tap_capacity / N` (at least
    /// `FLEET_TAP_FLOOR`), so twenty clusters do not keep twenty rings of raw objects
    /// (4,096 entries of a 3 KB pod are 12 MB a cluster).
    pub fn for_fleet(mut self, clusters: Vec<Cluster>) -> Self {
        let share = (self.tap_capacity / clusters.len().max(1)).max(FLEET_TAP_FLOOR);
        let members: Vec<TableStarter> = clusters
            .into_iter()
            .map(|cluster| {
                let (catalog, watch) = Catalog::discover_in_background(&cluster);
                let mut member = self.for_cluster(cluster, catalog, watch);
                member.tap_capacity = member.tap_capacity.min(share);
                member
            })
            .collect();
        if let Some(first) = members.first() {
            self.cluster = first.cluster.clone();
            self.catalog = first.catalog.clone();
        }
        self.fleet = members;
        self
    }

    /// A fleet's starters, one per cluster; empty for one cluster.
    pub fn fleet(&self) -> &[TableStarter] {
        &self.fleet
    }

    /// Tables started from here on leave out `context`'s cluster (another context of the
    /// fleet reaches it).
    pub fn leave_out(&mut self, context: &str) {
        self.fleet.retain(|m| m.cluster.context != context);
    }

    /// What the header names across a fleet, instead of one context and server: the
    /// contexts, and the clusters counted. `None` for one cluster.
    pub fn fleet_label(&self) -> Option<(String, String)> {
        let contexts: Vec<&str> = self
            .fleet
            .iter()
            .map(|m| m.cluster.context.as_str())
            .collect();
        (!contexts.is_empty()).then(|| (contexts.join(","), format!("{} clusters", contexts.len())))
    }

    /// Uses `catalog` (what discovery found, kept current) for the kinds commands name.
    pub fn with_catalog(mut self, catalog: Catalog) -> Self {
        self.catalog = catalog;
        self
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Reads usage for the pod and node tables started from here on this way (the
    /// configuration's `metrics:`).
    pub fn with_usage(mut self, usage: UsageSettings) -> Self {
        self.usage = Some(usage).filter(|u| !u.poll.is_zero());
        self
    }

    /// The usage feed of a new table of `kind` in `scope`, reading already, when its rows
    /// have usage columns and reading is on.
    fn usage_feed<T: TableRow>(
        &self,
        kind: &Kind,
        scope: &NamespaceScope,
    ) -> Option<(Arc<UsageFeed>, UsagePoller)> {
        let settings = self.usage.filter(|_| !T::usage_columns().is_empty())?;
        let feed = UsageFeed::for_kind(kind)?;
        let namespace = scope.namespace().map(str::to_string);
        let poller = feed.poll(self.cluster.client.clone(), namespace, settings);
        Some((feed, poller))
    }

    /// Starts informers with this FIFO and initial-list mode (the configuration's
    /// `informers:`) instead of the defaults.
    pub fn with_pipeline(mut self, pipeline: InformerSettings) -> Self {
        self.pipeline = pipeline;
        self
    }

    /// Tables started from here on run `fifo`, and beside it `compare`'s on the same watch
    /// stream when given (`:fifo`).
    pub fn set_fifo(&mut self, fifo: FifoKind, compare: Option<FifoKind>) {
        self.pipeline.fifo = fifo;
        self.compare = compare;
        for member in &mut self.fleet {
            member.set_fifo(fifo, compare);
        }
    }

    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// The same indexes, tap size and pipeline on another cluster (after `:ctx`), with what
    /// that cluster serves, kept current by `watch`.
    pub fn for_cluster(&self, cluster: Cluster, catalog: Catalog, watch: CatalogWatch) -> Self {
        Self {
            cluster,
            indexes: self.indexes.clone(),
            tap_capacity: self.tap_capacity,
            pipeline: self.pipeline,
            compare: self.compare,
            usage: self.usage,
            catalog,
            _catalog_watch: Some(watch),
            fleet: Vec::new(),
        }
    }

    /// The configured index definitions, all kinds together.
    pub fn indexes(&self) -> &[IndexDefinition] {
        &self.indexes
    }

    /// Adds an index for the tables started from here on (`:index`); a name in use is an
    /// error.
    pub fn add_index(&mut self, definition: IndexDefinition) -> Result<(), IndexerError> {
        if self.indexes.iter().any(|d| d.name == definition.name) {
            return Err(IndexerError::IndexConflict(definition.name));
        }
        for member in &mut self.fleet {
            member.add_index(definition.clone())?;
        }
        self.indexes.push(definition);
        Ok(())
    }

    /// Starts an informer and an unfiltered view of `kind` in `scope`: a hand-written
    /// projection's for a built-in kind, the generic one for any other.
    pub fn start(
        &self,
        kind: &Kind,
        scope: &NamespaceScope,
        sort: SortSpec,
    ) -> Result<Box<dyn Table>, UiError> {
        use ResourceKind as K;
        Ok(match kind.built_in() {
            Some(K::Pods) => Box::new(ResourceTable::<Pod>::start(self, kind, scope, sort)?),
            Some(K::Nodes) => Box::new(ResourceTable::<Node>::start(self, kind, scope, sort)?),
            Some(K::Namespaces) => {
                Box::new(ResourceTable::<Namespace>::start(self, kind, scope, sort)?)
            }
            Some(K::Deployments) => {
                Box::new(ResourceTable::<Deployment>::start(self, kind, scope, sort)?)
            }
            Some(K::ReplicaSets) => {
                Box::new(ResourceTable::<ReplicaSet>::start(self, kind, scope, sort)?)
            }
            Some(K::Secrets) => Box::new(ResourceTable::<Secret>::start(self, kind, scope, sort)?),
            None => Box::new(ResourceTable::<GenericObject>::start(
                self, kind, scope, sort,
            )?),
        })
    }
}

/// Makes sure the selection is in the view, scrolls to keep it visible, and copies out the
/// rows that fit: the view's lock is held only for this copy.
pub fn capture<T: TableRow>(
    view: &Mutex<LiveView<T>>,
    scroll: &mut Scroll,
    height: usize,
    now: Timestamp,
) -> Window {
    let mut view = view.lock();
    if view.selected_position().is_none() && !view.is_empty() {
        view.select_position(scroll.offset());
    }
    let offset = scroll.follow(view.selected_position(), height, view.len());
    view.window(offset, height, now)
}

/// Moves the selection of `view` for a movement action.
pub fn move_selection<T: TableRow>(
    view: &mut LiveView<T>,
    offset: usize,
    action: &Action,
    page: usize,
) {
    let position = view.selected_position().unwrap_or(offset);
    view.select_position(moved_to(position, action, page, view.len()));
}

/// Where a movement action takes the selection from `position`, `page` rows to a page, in
/// `len` rows (the caller clamps it).
pub fn moved_to(position: usize, action: &Action, page: usize, len: usize) -> usize {
    match action {
        Action::Up => position.saturating_sub(1),
        Action::Down => position + 1,
        Action::PageUp => position.saturating_sub(page),
        Action::PageDown => position + page,
        Action::Top => 0,
        _ => len.saturating_sub(1),
    }
}
