//! A category's table (`:all`): one table whose rows are of every member kind, as `kubectl
//! get all` lists them. Each member is an ordinary kind's table, with its informer, indexes
//! and views, taken from those already running where it can be (nothing is listed twice)
//! and given back when another view replaces this one. The rows on screen are a snapshot
//! the [`MixedWorker`] rebuilds off the UI thread; a kind refused or failing shows no rows
//! and is named in the header, while the others list.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tokio::sync::{broadcast, watch};
use tokio::task::JoinHandle;

use kscope_client::cluster::NamespaceScope;
use kscope_client::discovery::Discovery;
use kscope_index_views::definitions::{IndexDefinition, Misfits};
use kscope_index_views::fleet::ClusterRows;
use kscope_index_views::live::{SortSpec, ViewColumn, Window};
use kscope_index_views::mixed::{
    self, MemberInput, MemberRows, MergedRows, MixedRows, MixedWorker,
};
use kscope_index_views::query::{Query, QueryError};
use kscope_index_views::registry::ValueCount;
use kscope_informers::fifo::{FifoKind, Handoff};
use kscope_informers::indexer::IndexerError;
use kscope_informers::instrument::tap::Tap;
use kscope_informers::keys::Key;
use kscope_informers::lister_watcher::ListWatchError;
use kscope_informers::metrics::InformerMetricsSnapshot;
use kscope_informers::reflector::{ReflectorError, ReflectorPhase, ReflectorStatus};
use kscope_informers::workqueue::WorkqueueMetrics;
use kscope_resources::{Kind, ResourceKind, Timestamp};

use super::UiError;
use super::action::Action;
use super::layout::Scroll;
use super::merged_selection::MergedSelection;
use super::nav::Category;
use super::table::{Table, TableStarter};

/// One member kind of a mixed table.
struct Member {
    kind: Kind,
    /// The `kubectl get all` row prefix (`deployment.apps`).
    label: Arc<str>,
    table: Box<dyn Table>,
    /// Why the filter leaves this kind out (an index it does not have).
    left_out: Option<String>,
}

impl Member {
    fn input(&self) -> MemberInput {
        MemberInput {
            label: self.label.clone(),
            rows: match self.left_out {
                None => self.table.member_rows(),
                Some(_) => None,
            },
            version: Some(self.table.version()),
        }
    }
}

/// How a member kind is doing, for the header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemberState {
    /// Listing, or not started yet.
    Syncing,
    Watching,
    /// The server answers 403: its rows are missing; the others list.
    Refused(String),
    /// Listed, but no longer watching: rows as last seen.
    Stale,
    /// No longer served (its CustomResourceDefinition deleted): its rows are gone from the
    /// table and nothing watches it.
    Gone,
    /// Could not start, or failing otherwise.
    Failing(String),
}

/// What a member's informer status says about it.
pub fn member_state(status: &ReflectorStatus) -> MemberState {
    let refused = match status.last_error.as_deref() {
        Some(ReflectorError::ListWatch(ListWatchError::Api { status, .. })) => {
            (status.code == 403).then(|| format!("{} {}", status.code, status.reason))
        }
        _ => None,
    };
    match (refused, &status.phase) {
        (Some(why), _) => MemberState::Refused(why),
        (None, ReflectorPhase::Watching) => MemberState::Watching,
        (None, _) if status.listed => MemberState::Stale,
        (None, _) => match &status.last_error {
            Some(err) => MemberState::Failing(err.to_string()),
            None => MemberState::Syncing,
        },
    }
}

/// The header's account of the members: what is synced, and (apart, as an error) which
/// kinds are refused or failing and which are stale.
pub fn describe_members(members: &[(String, MemberState)]) -> (String, Option<String>) {
    let named = |wanted: fn(&MemberState) -> bool| -> Vec<&str> {
        members
            .iter()
            .filter(|(_, s)| wanted(s))
            .map(|(k, _)| k.as_str())
            .collect()
    };
    let watching = named(|s| *s == MemberState::Watching).len();
    let syncing = named(|s| *s == MemberState::Syncing);
    let mut sync = format!("{} kinds, {watching} watching", members.len());
    if !syncing.is_empty() {
        sync.push_str(&format!(" · syncing {}", syncing.join(", ")));
    }
    let mut problems = Vec::new();
    for (kind, state) in members {
        match state {
            MemberState::Refused(why) => problems.push(format!("{kind} refused ({why})")),
            MemberState::Failing(why) => problems.push(format!("{kind} failing: {why}")),
            MemberState::Stale => problems.push(format!("{kind} stale (not watching)")),
            MemberState::Gone => problems.push(format!(
                "{kind} gone: no longer served (its CustomResourceDefinition was deleted), \
                 its rows removed"
            )),
            MemberState::Syncing | MemberState::Watching => {}
        }
    }
    let error =
        (!problems.is_empty()).then(|| format!("{}; the other kinds list", problems.join(" · ")));
    (sync, error)
}

/// The status a mixed table reports as its own: listed once every member that is not
/// refused has listed, watching once all of those watch, so that the header marks the
/// table stale while any of them is.
fn combined(statuses: &[ReflectorStatus]) -> ReflectorStatus {
    let active: Vec<&ReflectorStatus> = statuses
        .iter()
        .filter(|s| !matches!(member_state(s), MemberState::Refused(_)))
        .collect();
    let phase = if active.iter().all(|s| s.phase == ReflectorPhase::Watching) {
        ReflectorPhase::Watching
    } else if active.iter().any(|s| s.phase == ReflectorPhase::BackingOff) {
        ReflectorPhase::BackingOff
    } else {
        ReflectorPhase::Starting
    };
    ReflectorStatus {
        phase,
        listed: active.iter().all(|s| s.listed),
        not_watching_since: active.iter().filter_map(|s| s.not_watching_since).min(),
        undecodable_in_last_list: active.iter().map(|s| s.undecodable_in_last_list).sum(),
        // Across clusters, why a cluster's category is not current (unreachable, say).
        last_error: active.iter().find_map(|s| s.last_error.clone()),
        ..ReflectorStatus::default()
    }
}

/// A category's table. See the module documentation.
pub struct MixedTable {
    category: Category,
    members: Vec<Member>,
    /// Kinds of the category that could not start, with why.
    failed: Vec<(Kind, String)>,
    /// Kinds of the category no longer served since the table opened.
    gone: Vec<Kind>,
    discovery: Arc<Discovery>,
    worker: MixedWorker,
    selection: MergedSelection,
    status: watch::Receiver<ReflectorStatus>,
    /// Where the members' combined status goes, whatever the members are.
    status_tx: Arc<watch::Sender<ReflectorStatus>>,
    status_task: JoinHandle<()>,
    /// What the table answers for its kind and tap while it has no member (none started).
    idle_kind: Kind,
    idle_tap: Tap,
}

impl MixedTable {
    /// A table of `members` (one running table per kind), sorted by `sort`; `failed` are the
    /// category's kinds that did not start. Must run inside a Tokio runtime.
    pub fn new(
        category: Category,
        members: Vec<(Kind, Box<dyn Table>)>,
        failed: Vec<(Kind, String)>,
        discovery: Arc<Discovery>,
        sort: SortSpec,
    ) -> Self {
        let members: Vec<Member> = members
            .into_iter()
            .map(|(kind, table)| Member {
                label: kind.name_prefix().into(),
                kind,
                table,
                left_out: None,
            })
            .collect();
        let worker = MixedWorker::start(members.iter().map(Member::input).collect(), sort);
        let (status_tx, status) = watch::channel(ReflectorStatus::default());
        let status_tx = Arc::new(status_tx);
        let status_task = follow_statuses(&members, status_tx.clone());
        let idle_kind = category
            .kinds
            .first()
            .cloned()
            .unwrap_or_else(|| ResourceKind::Pods.into());
        Self {
            category,
            members,
            failed,
            gone: Vec::new(),
            discovery,
            worker,
            selection: MergedSelection::default(),
            status,
            status_tx,
            status_task,
            idle_kind,
            idle_tap: Tap::new(1, kscope_resources::secret::keepable_raw),
        }
    }

    /// `category`'s table of `kinds` in `scope`: each kind's table the one `running` gives
    /// back where it runs already (nothing is listed twice), else a new one from `starter`;
    /// a kind that cannot start is named in the header. Must run inside a Tokio runtime.
    pub fn start<'k>(
        starter: &TableStarter,
        category: Category,
        kinds: impl Iterator<Item = &'k Kind>,
        scope: &NamespaceScope,
        mut running: impl FnMut(&Kind) -> Option<Box<dyn Table>>,
    ) -> Self {
        let mut members: Vec<(Kind, Box<dyn Table>)> = Vec::new();
        let mut failed = Vec::new();
        for kind in kinds {
            let table = match running(kind) {
                Some(table) => Ok(table),
                None => starter.start(kind, scope, SortSpec::default()),
            };
            match table {
                Ok(table) => members.push((kind.clone(), table)),
                Err(err) => failed.push((kind.clone(), err.to_string())),
            }
        }
        let discovery = starter.catalog().current();
        Self::new(category, members, failed, discovery, SortSpec::default())
    }

    /// Adds a running table of `kind` (the one on screen before), in the category's order.
    pub fn add_member(&mut self, kind: Kind, table: Box<dyn Table>) {
        self.members.push(Member {
            label: kind.name_prefix().into(),
            kind,
            table,
            left_out: None,
        });
        let kinds = &self.category.kinds;
        self.members
            .sort_by_key(|m| kinds.iter().position(|k| *k == m.kind));
        self.refresh_inputs();
        self.status_task.abort();
        self.status_task = follow_statuses(&self.members, self.status_tx.clone());
    }

    pub fn category(&self) -> &Category {
        &self.category
    }

    /// The kinds of the running members.
    pub fn kinds(&self) -> impl Iterator<Item = &Kind> {
        self.members.iter().map(|m| &m.kind)
    }

    /// Each kind of the category, as the header names it, and how it is doing.
    pub fn member_states(&self) -> Vec<(String, MemberState)> {
        self.members
            .iter()
            .map(|m| (m.kind.to_string(), member_state(&m.table.status().borrow())))
            .chain(
                self.failed
                    .iter()
                    .map(|(kind, why)| (kind.to_string(), MemberState::Failing(why.clone()))),
            )
            .chain(
                self.gone
                    .iter()
                    .map(|kind| (kind.to_string(), MemberState::Gone)),
            )
            .collect()
    }

    /// Takes out the members `gone` says are no longer served, their rows with them, and
    /// gives back their tables to be stopped; the header names them from then on.
    pub fn drop_gone(
        &mut self,
        gone: impl Fn(&Kind, &ReflectorStatus) -> bool,
    ) -> Vec<Box<dyn Table>> {
        // Asked every frame: nothing moves unless a member is gone.
        if !self
            .members
            .iter()
            .any(|m| gone(&m.kind, &m.table.status().borrow()))
        {
            return Vec::new();
        }
        let (dropped, kept): (Vec<Member>, Vec<Member>) = std::mem::take(&mut self.members)
            .into_iter()
            .partition(|m| gone(&m.kind, &m.table.status().borrow()));
        self.members = kept;
        self.refresh_inputs();
        self.status_task.abort();
        self.status_task = follow_statuses(&self.members, self.status_tx.clone());
        dropped
            .into_iter()
            .map(|m| {
                self.gone.push(m.kind);
                m.table
            })
            .collect()
    }

    /// The kinds the current filter leaves out, with why.
    pub fn left_out(&self) -> Vec<(String, String)> {
        self.members
            .iter()
            .filter_map(|m| Some((m.kind.to_string(), m.left_out.clone()?)))
            .collect()
    }

    /// Gives the member tables back, with their kinds, for other views to use.
    pub fn take_members(&mut self) -> Vec<(Kind, Box<dyn Table>)> {
        let members = std::mem::take(&mut self.members);
        self.worker.set_members(Vec::new());
        members.into_iter().map(|m| (m.kind, m.table)).collect()
    }

    fn snapshot(&self) -> Arc<MixedRows> {
        self.worker.snapshot()
    }

    /// The member whose row is selected (the first without a selection); `None` without
    /// members.
    fn current_member(&self) -> Option<&Member> {
        let at = self.selection.member(&*self.snapshot());
        self.members.get(at).or_else(|| self.members.first())
    }

    fn refresh_inputs(&self) {
        self.worker
            .set_members(self.members.iter().map(Member::input).collect());
    }
}

/// Keeps `tx` at the combined status of `members`, from a task: a new task for new members
/// sends on the same channel, so whoever holds its receiver goes on reading it.
fn follow_statuses(members: &[Member], tx: Arc<watch::Sender<ReflectorStatus>>) -> JoinHandle<()> {
    follow_combined(members.iter().map(|m| m.table.status()).collect(), tx)
}

/// Keeps `tx` at the combined status of `statuses` (a category's kinds, a fleet's
/// clusters), from a task.
pub(crate) fn follow_combined(
    statuses: Vec<watch::Receiver<ReflectorStatus>>,
    tx: Arc<watch::Sender<ReflectorStatus>>,
) -> JoinHandle<()> {
    let mut receivers: Vec<Option<watch::Receiver<ReflectorStatus>>> =
        statuses.into_iter().map(Some).collect();
    let read =
        |receivers: &mut [Option<watch::Receiver<ReflectorStatus>>]| -> Vec<ReflectorStatus> {
            receivers
                .iter_mut()
                .flatten()
                .map(|r| r.borrow_and_update().clone())
                .collect()
        };
    tx.send_replace(combined(&read(&mut receivers)));
    tokio::spawn(async move {
        loop {
            mixed::any_changed(&mut receivers).await;
            if receivers.iter().all(Option::is_none) {
                return;
            }
            tx.send_replace(combined(&read(&mut receivers)));
        }
    })
}

impl Table for MixedTable {
    /// The selected row's kind: the one whose deltas the panel shows.
    fn kind(&self) -> &Kind {
        self.current_member().map_or(&self.idle_kind, |m| &m.kind)
    }

    fn capture(&self, scroll: &mut Scroll, height: usize, now: Timestamp) -> Window {
        let rows = self.snapshot();
        let (offset, selected) = self.selection.follow(&*rows, scroll, height);
        rows.window(offset, height, now, selected.as_deref())
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
        let selector = self
            .members
            .iter()
            .find(|m| m.left_out.is_none())
            .map_or_else(Query::default, |m| m.table.applied().selector());
        Query {
            text: self.text(),
            ..selector
        }
    }

    fn rows(&self) -> usize {
        self.snapshot().len()
    }

    fn shown_sort(&self) -> SortSpec {
        self.snapshot().sort()
    }

    fn columns(&self) -> Vec<ViewColumn> {
        mixed::columns()
    }

    fn move_selection(&self, offset: usize, action: &Action, page: usize) {
        self.selection.step(&*self.snapshot(), offset, action, page);
    }

    fn sort(&self) -> SortSpec {
        self.worker.sort()
    }

    fn set_sort(&self, sort: SortSpec) {
        self.worker.set_sort(sort);
    }

    /// Each member takes the filter; a kind that cannot (no index of that name) is left
    /// out, and the filter is an error only when no kind can take it.
    fn set_query(&mut self, query: Query, _sort: SortSpec) -> Result<bool, QueryError> {
        let mut first_error = None;
        let mut rebuilt = false;
        for member in &mut self.members {
            let sort = member.table.sort();
            match member.table.set_query(query.clone(), sort) {
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
        self.refresh_inputs();
        match first_error {
            Some(err) if self.members.iter().all(|m| m.left_out.is_some()) => Err(err),
            _ => Ok(rebuilt),
        }
    }

    fn index_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
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

    /// Adds the index to the members it applies to. A JSONPath index needs a relist, which
    /// the app does by starting the category again.
    fn add_index(&mut self, definition: IndexDefinition) -> Result<(), UiError> {
        for member in &mut self.members {
            if definition.applies_to(&member.kind, &self.discovery) {
                member.table.add_index(definition.clone())?;
            }
        }
        self.refresh_inputs();
        Ok(())
    }

    /// Every member's counts of the index's values, added up.
    fn value_counts(&self, name: &str) -> Vec<ValueCount> {
        ValueCount::summed(self.members.iter().flat_map(|m| m.table.value_counts(name)))
    }

    /// The delta panel shows the selected row's kind: its keys.
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
        let stopping: Vec<_> = self
            .take_members()
            .into_iter()
            .map(|(_, table)| table.shutdown())
            .collect();
        Box::pin(async move {
            futures::future::join_all(stopping).await;
        })
    }

    fn object_of(&self, id: &Key) -> Option<(Kind, Key)> {
        let (at, key) = self.snapshot().member_of(id)?;
        Some((self.members.get(at)?.kind.clone(), key))
    }

    fn member_rows(&self) -> Option<Arc<dyn MemberRows>> {
        None
    }

    /// A category's rows on one cluster of several (`:all` across clusters).
    fn cluster_rows(&self) -> Option<Arc<dyn ClusterRows>> {
        Some(Arc::new(self.worker.latest()))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

impl Drop for MixedTable {
    fn drop(&mut self) {
        self.status_task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_names_refused_stale_and_syncing_kinds() {
        let members = vec![
            ("pods".to_string(), MemberState::Watching),
            ("services".to_string(), MemberState::Syncing),
            (
                "deployments".to_string(),
                MemberState::Refused("403 Forbidden".into()),
            ),
            ("jobs.batch".to_string(), MemberState::Stale),
        ];
        let (sync, error) = describe_members(&members);
        assert_eq!(sync, "4 kinds, 1 watching · syncing services");
        assert_eq!(
            error.as_deref(),
            Some(
                "deployments refused (403 Forbidden) · jobs.batch stale (not watching); the \
                 other kinds list"
            )
        );
        assert_eq!(
            describe_members(&members[..1]),
            ("1 kinds, 1 watching".to_string(), None)
        );
    }

    #[test]
    fn the_table_is_watching_once_every_member_is() {
        let watching = ReflectorStatus {
            phase: ReflectorPhase::Watching,
            listed: true,
            ..ReflectorStatus::default()
        };
        let starting = ReflectorStatus::default();
        let both = combined(&[watching.clone(), starting]);
        assert!(!both.listed);
        assert_eq!(both.phase, ReflectorPhase::Starting);
        assert_eq!(
            combined(std::slice::from_ref(&watching)).phase,
            ReflectorPhase::Watching
        );
        assert_eq!(member_state(&watching), MemberState::Watching);
    }
}
