//! A kind's table across several clusters (`kscope --context a --context b`): one ordinary
//! table per cluster, each with its own informer, indexes and views, all started at once;
//! their rows merged into one table with a CLUSTER column first by the [`FleetWorker`], off
//! the UI thread. A cluster that is slow, unreachable or refuses the kind shows no rows (or
//! its last ones, marked stale) and is named in the header, while the others list.

use std::any::Any;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::sync::{broadcast, watch};
use tokio::task::JoinHandle;

use kscope_client::cluster::NamespaceScope;
use kscope_client::fleet::Trouble;
use kscope_index_views::definitions::{IndexDefinition, Misfits};
use kscope_index_views::fleet::{self, ClusterInput, FleetRows, FleetWorker};
use kscope_index_views::live::{SortSpec, ViewColumn, Window};
use kscope_index_views::mixed::{MemberRows, MergedRows};
use kscope_index_views::query::{CLUSTER_INDEX, ClusterFilter, Query, QueryError};
use kscope_index_views::registry::ValueCount;
use kscope_informers::fifo::{FifoKind, Handoff};
use kscope_informers::indexer::IndexerError;
use kscope_informers::instrument::tap::Tap;
use kscope_informers::keys::Key;
use kscope_informers::metrics::InformerMetricsSnapshot;
use kscope_informers::reflector::{ReflectorPhase, ReflectorStatus};
use kscope_informers::workqueue::WorkqueueMetrics;
use kscope_resources::{Kind, ResourceKind, Timestamp};

use super::UiError;
use super::action::Action;
use super::layout::Scroll;
use super::merged_selection::MergedSelection;
use super::mixed_table::{MixedTable, follow_combined};
use super::nav::Category;
use super::table::{Table, TableStarter};

/// Starts a table of `kind`: across every cluster of a fleet starter, each cluster's table
/// sorted by the same column (less CLUSTER); else the starter's own.
pub fn start(
    starter: &TableStarter,
    kind: &Kind,
    scope: &NamespaceScope,
    sort: SortSpec,
) -> Result<Box<dyn Table>, UiError> {
    if starter.fleet().is_empty() {
        return starter.start(kind, scope, sort);
    }
    let members = starter
        .fleet()
        .iter()
        .map(|m| {
            let table = m.start(kind, scope, fleet::member_sort(sort))?;
            Ok((m.cluster().context.clone(), table))
        })
        .collect::<Result<Vec<_>, UiError>>()?;
    Ok(Box::new(FleetTable::new(kind.clone(), members, sort)))
}

/// Starts a category's table (`:all`) across every cluster of a fleet starter: on each
/// cluster the category's table of the kinds it puts in the category (the first cluster's,
/// until its discovery has answered), merged as a kind's tables are, with a CLUSTER column.
/// A cluster's kind table that `running` gives back (by context and kind: one parked) is
/// used instead of starting one. Must run inside a Tokio runtime.
pub fn start_category(
    starter: &TableStarter,
    category: &Category,
    scope: &NamespaceScope,
    mut running: impl FnMut(&str, &Kind) -> Option<Box<dyn Table>>,
) -> Box<dyn Table> {
    let members = starter
        .fleet()
        .iter()
        .map(|m| {
            let own = Category::discovered(&category.name, &m.catalog().current())
                .unwrap_or_else(|| category.clone());
            let kinds = own.kinds.clone();
            let context = &m.cluster().context;
            let mixed =
                MixedTable::start(m, own, kinds.iter(), scope, |kind| running(context, kind));
            (
                m.cluster().context.clone(),
                Box::new(mixed) as Box<dyn Table>,
            )
        })
        .collect();
    let first = category.kinds.first().cloned();
    let kind = first.unwrap_or_else(|| ResourceKind::Pods.into());
    Box::new(FleetTable::new(kind, members, SortSpec::default()))
}

/// Running tables by context, one per cluster.
pub type ClusterTables = Vec<(String, Box<dyn Table>)>;

/// One cluster of a fleet table.
struct Member {
    context: Arc<str>,
    table: Box<dyn Table>,
    /// The `cluster=` terms leave it out, or its view cannot take the filter (why).
    left_out: Option<String>,
}

impl Member {
    fn input(&self) -> ClusterInput {
        ClusterInput {
            cluster: self.context.clone(),
            rows: match self.left_out {
                None => self.table.cluster_rows(),
                Some(_) => None,
            },
            version: Some(self.table.version()),
        }
    }
}

/// How one cluster is doing, for the header and its rows' CLUSTER cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClusterHealth {
    /// Its first list under way.
    Syncing,
    Watching,
    /// Listed, not watching since this long: its rows are the last seen.
    Stale(Duration, Option<Trouble>),
    /// Never listed, and why not: unreachable, forbidden, the kind not served, failing.
    Down(Trouble),
}

impl ClusterHealth {
    /// What a cluster's informer status says, at `now`.
    pub fn of(status: &ReflectorStatus, now: SystemTime) -> Self {
        let trouble = status.last_error.as_deref().map(Trouble::of);
        match (&status.phase, status.listed, trouble) {
            (ReflectorPhase::Watching, _, _) => Self::Watching,
            (_, true, trouble) => {
                let since = status.not_watching_since.unwrap_or(now);
                Self::Stale(now.duration_since(since).unwrap_or_default(), trouble)
            }
            (_, false, Some(trouble)) => Self::Down(trouble),
            (_, false, None) => Self::Syncing,
        }
    }

    /// The header's words: `watching`, `stale 12s (unreachable)`, `forbidden`.
    pub fn words(&self) -> String {
        match self {
            Self::Stale(for_how_long, Some(trouble)) => {
                format!("stale {} ({})", age(*for_how_long), trouble.word())
            }
            _ => self.brief_words(),
        }
    }

    /// The words without why a cluster is stale (the header's error says it): `stale 12s`.
    pub fn brief_words(&self) -> String {
        match self {
            Self::Syncing => "syncing".into(),
            Self::Watching => "watching".into(),
            Self::Stale(for_how_long, _) => format!("stale {}", age(*for_how_long)),
            Self::Down(trouble) => trouble.word().into(),
        }
    }

    /// Whether the header says it apart, as an error.
    pub fn is_trouble(&self) -> bool {
        matches!(self, Self::Stale(..) | Self::Down(_))
    }
}

/// What the header says of a fleet's clusters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClustersSaid {
    /// Each cluster and its state: `3 clusters: a watching · b stale 12s (unreachable) · …`.
    pub sync: String,
    /// For a header too narrow for `sync`: the clusters counted, every one not watching
    /// still named, so what needs a look is never cut (`3 clusters · 2 watching · b stale
    /// 12s`).
    pub short: String,
    /// The troubled clusters again, saying the others list.
    pub error: Option<String>,
}

/// The header's account of a fleet's clusters: each one's state, briefly too, and the
/// troubled ones again as an error.
pub fn describe_clusters(clusters: &[(String, ClusterHealth)]) -> ClustersSaid {
    let sync = clusters
        .iter()
        .map(|(context, health)| format!("{context} {}", health.words()))
        .collect::<Vec<_>>()
        .join(" · ");
    let watching = clusters
        .iter()
        .filter(|(_, h)| *h == ClusterHealth::Watching)
        .count();
    let mut short = vec![
        format!("{} clusters", clusters.len()),
        format!("{watching} watching"),
    ];
    short.extend(
        clusters
            .iter()
            .filter(|(_, h)| *h != ClusterHealth::Watching)
            .map(|(context, health)| format!("{context} {}", health.brief_words())),
    );
    let troubled: Vec<String> = clusters
        .iter()
        .filter(|(_, h)| h.is_trouble())
        .map(|(context, health)| format!("{context} {}", health.words()))
        .collect();
    ClustersSaid {
        sync: format!("{} clusters: {sync}", clusters.len()),
        short: short.join(" · "),
        error: (!troubled.is_empty())
            .then(|| format!("{}; the other clusters list", troubled.join(" · "))),
    }
}

/// How long, as the table's AGE says it: `12s`, `3m`.
fn age(how_long: Duration) -> String {
    Timestamp::from_seconds(0).human_since(Timestamp::from_seconds(
        i64::try_from(how_long.as_secs()).unwrap_or(i64::MAX),
    ))
}

/// Each member's position, by its context.
fn positions(members: &[Member]) -> HashMap<Arc<str>, usize> {
    members
        .iter()
        .enumerate()
        .map(|(at, m)| (m.context.clone(), at))
        .collect()
}

/// Keeps `tx` at the combined status of `members`, from a task: a new task for new members
/// sends on the same channel, so whoever holds its receiver goes on reading it.
fn follow_statuses(members: &[Member], tx: Arc<watch::Sender<ReflectorStatus>>) -> JoinHandle<()> {
    follow_combined(members.iter().map(|m| m.table.status()).collect(), tx)
}

/// A kind's table across clusters. See the module documentation.
pub struct FleetTable {
    kind: Kind,
    members: Vec<Member>,
    /// Each cluster's position among `members`: the `cluster` index, so a `cluster=` term
    /// picks stores by a lookup per value, before any row is read.
    by_cluster: HashMap<Arc<str>, usize>,
    worker: FleetWorker,
    /// The filter last asked for, `cluster=` terms included.
    query: Query,
    selection: MergedSelection,
    status: watch::Receiver<ReflectorStatus>,
    /// Where the members' combined status goes, whatever the members are.
    status_tx: Arc<watch::Sender<ReflectorStatus>>,
    status_task: JoinHandle<()>,
    /// What the table answers for its tap without a cluster (none given).
    idle_tap: Tap,
}

impl FleetTable {
    /// A table of `members` (one running table of `kind` per cluster, by context), sorted
    /// by `sort`. Must run inside a Tokio runtime.
    pub fn new(kind: Kind, members: ClusterTables, sort: SortSpec) -> Self {
        let mut members: Vec<Member> = members
            .into_iter()
            .map(|(context, table)| Member {
                context: context.into(),
                table,
                left_out: None,
            })
            .collect();
        members.sort_by(|a, b| a.context.cmp(&b.context));
        let by_cluster = positions(&members);
        let worker = FleetWorker::start(members.iter().map(Member::input).collect(), sort);
        let (status_tx, status) = watch::channel(ReflectorStatus::default());
        let status_tx = Arc::new(status_tx);
        let status_task = follow_statuses(&members, status_tx.clone());
        Self {
            kind,
            members,
            by_cluster,
            worker,
            query: Query::default(),
            selection: MergedSelection::default(),
            status,
            status_tx,
            status_task,
            idle_tap: Tap::new(1, kscope_resources::secret::keepable_raw),
        }
    }

    /// Each cluster, by context, and how it is doing at `now`.
    pub fn cluster_health(&self, now: SystemTime) -> Vec<(String, ClusterHealth)> {
        self.members
            .iter()
            .map(|m| {
                let health = ClusterHealth::of(&m.table.status().borrow(), now);
                (m.context.to_string(), health)
            })
            .collect()
    }

    /// Takes `context`'s cluster out of the table (found to be another member's cluster),
    /// giving back its table to stop; the rows merged from here on are the others'.
    pub fn remove_member(&mut self, context: &str) -> Option<Box<dyn Table>> {
        let at = self.members.iter().position(|m| &*m.context == context)?;
        let removed = self.members.remove(at);
        self.by_cluster = positions(&self.members);
        self.refresh_inputs();
        self.status_task.abort();
        self.status_task = follow_statuses(&self.members, self.status_tx.clone());
        Some(removed.table)
    }

    /// Gives every cluster's table back, by context, leaving this one empty: a parked
    /// kind's fleet table taken apart for a category's tables to reuse.
    pub fn take_members(&mut self) -> ClusterTables {
        let members = std::mem::take(&mut self.members);
        self.by_cluster.clear();
        self.refresh_inputs();
        self.status_task.abort();
        members
            .into_iter()
            .map(|m| (m.context.to_string(), m.table))
            .collect()
    }

    /// A category's fleet table (each cluster's table a [`MixedTable`]) taken apart: each
    /// kind's tables across the clusters, merged again as that kind's fleet table, to park
    /// and reuse. A kind some cluster does not hold is stopped in the background, as it
    /// could not show every cluster. Empty for a kind's fleet table.
    pub fn take_kinds(&mut self) -> Vec<(Kind, Box<dyn Table>)> {
        let is_category = self
            .members
            .iter()
            .all(|m| m.table.as_any().is::<MixedTable>());
        if !is_category || self.members.is_empty() {
            return Vec::new();
        }
        let clusters = self.members.len();
        let mut kinds: Vec<(Kind, ClusterTables)> = Vec::new();
        for (context, mut table) in self.take_members() {
            let Some(mixed) = table.as_any_mut().downcast_mut::<MixedTable>() else {
                continue;
            };
            for (kind, table) in mixed.take_members() {
                match kinds.iter_mut().find(|(k, _)| *k == kind) {
                    Some((_, tables)) => tables.push((context.clone(), table)),
                    None => kinds.push((kind, vec![(context.clone(), table)])),
                }
            }
        }
        let mut whole = Vec::new();
        for (kind, tables) in kinds {
            if tables.len() == clusters {
                let fleet = FleetTable::new(kind.clone(), tables, SortSpec::default());
                whole.push((kind, Box::new(fleet) as Box<dyn Table>));
            } else {
                for (_, table) in tables {
                    tokio::spawn(table.shutdown());
                }
            }
        }
        whole
    }

    fn snapshot(&self) -> Arc<FleetRows> {
        self.worker.snapshot()
    }

    /// The member whose row is selected (the first without a selection).
    fn current_member(&self) -> Option<&Member> {
        let at = self.selection.member(&*self.snapshot());
        self.members.get(at).or_else(|| self.members.first())
    }

    fn refresh_inputs(&self) {
        self.worker
            .set_members(self.members.iter().map(Member::input).collect());
    }

    /// The clusters `filter` admits, found in the `cluster` index: each value a term names
    /// is one lookup; a negated term admits the others.
    fn admitted(&self, filter: &ClusterFilter) -> Vec<bool> {
        let mut admitted = vec![false; self.members.len()];
        for (context, &at) in &self.by_cluster {
            admitted[at] = filter.admits(context);
        }
        admitted
    }
}

impl Table for FleetTable {
    /// The selected row's kind: a category's rows are of several.
    fn kind(&self) -> &Kind {
        self.current_member().map_or(&self.kind, |m| m.table.kind())
    }

    /// The rows of a cluster that is not watching lead with `CLUSTER (stale)`.
    fn capture(&self, scroll: &mut Scroll, height: usize, now: Timestamp) -> Window {
        let rows = self.snapshot();
        let (offset, selected) = self.selection.follow(&*rows, scroll, height);
        let stale: Vec<bool> = self
            .members
            .iter()
            .map(|m| {
                let status = m.table.status();
                let status = status.borrow();
                status.listed && status.phase != ReflectorPhase::Watching
            })
            .collect();
        rows.window(offset, height, now, selected.as_deref(), |at| {
            let context = self.members.get(at).map_or("", |m| &m.context);
            match stale.get(at) {
                Some(true) => format!("{context} (stale)"),
                _ => context.to_string(),
            }
        })
    }

    fn version(&self) -> watch::Receiver<u64> {
        self.worker.version()
    }

    fn status(&self) -> watch::Receiver<ReflectorStatus> {
        self.status.clone()
    }

    fn watch_events(&self) -> u64 {
        self.members.iter().map(|m| m.table.watch_events()).sum()
    }

    fn queue_metrics(&self) -> WorkqueueMetrics {
        self.current_member()
            .map(|m| m.table.queue_metrics())
            .unwrap_or_default()
    }

    fn informer_metrics(&self) -> (FifoKind, InformerMetricsSnapshot) {
        self.current_member().map_or_else(
            || (FifoKind::default(), InformerMetricsSnapshot::default()),
            |m| m.table.informer_metrics(),
        )
    }

    fn text(&self) -> String {
        self.snapshot().text().unwrap_or_default().to_string()
    }

    fn applied(&self) -> Query {
        Query {
            text: self.text(),
            ..self.query.selector()
        }
    }

    fn rows(&self) -> usize {
        self.snapshot().len()
    }

    /// The merged order once every cluster's view shows the matching one: until then the
    /// merge read some cluster's rows in its old order.
    fn shown_sort(&self) -> SortSpec {
        let merged = self.snapshot().sort();
        let behind = self
            .members
            .iter()
            .map(|m| m.table.shown_sort())
            .find(|shown| *shown != fleet::member_sort(merged));
        match behind {
            None => merged,
            Some(shown) => SortSpec {
                column: shown.column + 1,
                ..shown
            },
        }
    }

    fn columns(&self) -> Vec<ViewColumn> {
        let first = self.members.first().map(|m| m.table.columns());
        fleet::columns(first.unwrap_or_default())
    }

    fn move_selection(&self, offset: usize, action: &Action, page: usize) {
        self.selection.step(&*self.snapshot(), offset, action, page);
    }

    fn sort(&self) -> SortSpec {
        self.worker.sort()
    }

    /// Each cluster re-sorts its own rows by the column (less CLUSTER); the merge follows.
    fn set_sort(&self, sort: SortSpec) {
        for member in &self.members {
            member.table.set_sort(fleet::member_sort(sort));
        }
        self.worker.set_sort(sort);
    }

    /// `cluster=` terms pick the clusters; every other term and the text go to each
    /// picked cluster's table. A cluster whose table cannot take the filter is left out,
    /// and the filter is an error only when no picked cluster can.
    fn set_query(&mut self, query: Query, sort: SortSpec) -> Result<bool, QueryError> {
        let (clusters, rest) = query.clone().split_clusters();
        let admitted = self.admitted(&clusters);
        let mut first_error = None;
        let mut rebuilt = false;
        for (member, admitted) in self.members.iter_mut().zip(admitted) {
            if !admitted {
                member.left_out = Some(format!("{CLUSTER_INDEX} terms"));
                continue;
            }
            match member
                .table
                .set_query(rest.clone(), fleet::member_sort(sort))
            {
                Ok(new_view) => {
                    rebuilt |= new_view;
                    member.left_out = None;
                }
                Err(err) => {
                    member.left_out = Some(err.to_string());
                    first_error.get_or_insert(err);
                }
            }
        }
        rebuilt |= query.selector() != self.query.selector();
        self.query = query;
        self.refresh_inputs();
        match first_error {
            Some(err) if self.members.iter().all(|m| m.left_out.is_some()) => Err(err),
            _ => Ok(rebuilt),
        }
    }

    fn index_names(&self) -> Vec<String> {
        let mut names = vec![CLUSTER_INDEX.to_string()];
        for name in self.members.iter().flat_map(|m| m.table.index_names()) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }

    fn index_misfits(&self, name: &str) -> Misfits {
        self.members
            .iter()
            .map(|m| m.table.index_misfits(name))
            .sum()
    }

    fn add_index(&mut self, definition: IndexDefinition) -> Result<(), UiError> {
        for member in &mut self.members {
            member.table.add_index(definition.clone())?;
        }
        self.refresh_inputs();
        Ok(())
    }

    /// The `cluster` index counts each cluster's rows shown; any other adds up the
    /// clusters' counts of its values.
    fn value_counts(&self, name: &str) -> Vec<ValueCount> {
        if name == CLUSTER_INDEX {
            let snapshot = self.snapshot();
            let counts = snapshot.counts().map(|(cluster, count)| ValueCount {
                value: cluster.clone(),
                count,
            });
            ValueCount::summed(counts)
        } else {
            ValueCount::summed(self.members.iter().flat_map(|m| m.table.value_counts(name)))
        }
    }

    /// The delta panel shows the selected row's cluster: its keys.
    fn index_keys(&self, name: &str, value: &str) -> Result<Vec<Key>, IndexerError> {
        match self.current_member() {
            Some(m) => m.table.index_keys(name, value),
            None => Ok(Vec::new()),
        }
    }

    fn selected(&self) -> Option<Key> {
        self.selection.id()
    }

    fn select_key(&self, key: &Key) -> bool {
        self.selection.select(&*self.snapshot(), key)
    }

    fn controller_owner(&self, key: &Key) -> Option<(String, String)> {
        let (at, key) = self.snapshot().member_of(key)?;
        self.members.get(at)?.table.controller_owner(&key)
    }

    fn tap(&self) -> &Tap {
        self.current_member()
            .map_or(&self.idle_tap, |m| m.table.tap())
    }

    fn pipelines(&self) -> (FifoKind, Option<FifoKind>) {
        self.current_member()
            .map_or((FifoKind::default(), None), |m| m.table.pipelines())
    }

    fn subscribe_handoffs(&self) -> Vec<broadcast::Receiver<Arc<Handoff>>> {
        self.current_member()
            .map_or_else(Vec::new, |m| m.table.subscribe_handoffs())
    }

    fn stop_watching(&self) {
        for member in &self.members {
            member.table.stop_watching();
        }
    }

    fn shutdown(mut self: Box<Self>) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        self.status_task.abort();
        let stopping: Vec<_> = std::mem::take(&mut self.members)
            .into_iter()
            .map(|m| m.table.shutdown())
            .collect();
        Box::pin(async move {
            futures::future::join_all(stopping).await;
        })
    }

    /// The row's object, as its own cluster's table names it.
    fn object_of(&self, id: &Key) -> Option<(Kind, Key)> {
        let (at, key) = self.snapshot().member_of(id)?;
        self.members.get(at)?.table.object_of(&key)
    }

    fn selected_context(&self) -> Option<String> {
        let id = self.selection.id()?;
        let (at, _) = self.snapshot().member_of(&id)?;
        Some(self.members.get(at)?.context.to_string())
    }

    fn member_rows(&self) -> Option<Arc<dyn MemberRows>> {
        None
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

impl Drop for FleetTable {
    fn drop(&mut self) {
        self.status_task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kscope_informers::lister_watcher::ListWatchError;
    use kscope_informers::reflector::ReflectorError;

    fn refused() -> Arc<ReflectorError> {
        Arc::new(ReflectorError::ListWatch(ListWatchError::Transport {
            verb: "list",
            resource: "pods".into(),
            source: "connection refused".into(),
            connection_refused: true,
        }))
    }

    #[test]
    fn each_cluster_is_said_watching_syncing_stale_for_how_long_or_down() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1000);
        let watching = ReflectorStatus {
            phase: ReflectorPhase::Watching,
            listed: true,
            ..ReflectorStatus::default()
        };
        let stale = ReflectorStatus {
            phase: ReflectorPhase::BackingOff,
            listed: true,
            not_watching_since: Some(now - Duration::from_secs(90)),
            last_error: Some(refused()),
            ..ReflectorStatus::default()
        };
        let down = ReflectorStatus {
            phase: ReflectorPhase::BackingOff,
            last_error: Some(refused()),
            ..ReflectorStatus::default()
        };
        let clusters: Vec<(String, ClusterHealth)> = [
            ("a", &watching),
            ("b", &stale),
            ("c", &down),
            ("d", &ReflectorStatus::default()),
        ]
        .into_iter()
        .map(|(c, s)| (c.to_string(), ClusterHealth::of(s, now)))
        .collect();
        let said = describe_clusters(&clusters);
        assert_eq!(
            said.sync,
            "4 clusters: a watching · b stale 90s (unreachable) · c unreachable · d syncing"
        );
        assert_eq!(
            said.short,
            "4 clusters · 1 watching · b stale 90s · c unreachable · d syncing"
        );
        assert_eq!(
            said.error.as_deref(),
            Some("b stale 90s (unreachable) · c unreachable; the other clusters list")
        );
    }
}
