//! The tables a session shows and the moves between them: the table on screen, the ones
//! parked (kept running after they were left, so going back lists nothing again), the views
//! Esc goes back to, categories (`:all`), restarts with another FIFO or a new index, and a
//! kind the server stops serving. What the moves change on screen besides the rows (the
//! mode, the filter bar, the header, the delta panel, the detail's tap) they write to the
//! [`Surface`] the app hands them.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::{broadcast, mpsc};

use kscope_client::cluster::NamespaceScope;
use kscope_client::discovery::Catalog;
use kscope_index_views::definitions::{IndexDefinition, IndexSource, Misfits};
use kscope_index_views::live::SortSpec;
use kscope_index_views::query::CLUSTER_INDEX;
use kscope_informers::fifo::{FifoKind, Handoff};
use kscope_informers::instrument::compare::merge_handoffs;
use kscope_informers::instrument::tap::TapEntry;
use kscope_informers::keys::{Key, split_meta_namespace_key};
use kscope_informers::lister_watcher::ListWatchError;
use kscope_informers::metrics::InformerMetricsSnapshot;
use kscope_informers::reflector::{ReflectorError, ReflectorPhase, ReflectorStatus};
use kscope_resources::Kind;

use super::action::InputMode;
use super::deltas::{DELTA_CAPACITY, DeltaLine, SideBySide};
use super::detail::DetailController;
use super::effect::Follow;
use super::effect::ObjectRef;
use super::favourites::Favourites;
use super::fleet_identity::{IDENTITY_BOUND, Identified, IdentityCheck};
use super::fleet_table::{self, FleetTable, describe_clusters};
use super::mixed_table::{MixedTable, describe_members};
use super::namespace_check::{Checked, NamespaceCheck};
use super::namespace_sets::{NamespaceSets, group_of};
use super::nav::{self, Category, HISTORY, ViewSpec};
use super::screen::Header;
use super::selectors::{Selected, SelectorFetcher};
use super::state::{IndexBrowser, UiState};
use super::table::{Table, TableStarter};

/// The informer's progress in a few words, for the header (its error is shown apart), with
/// how it read its initial state (`via watch-list`, or `via list: why it fell back`).
pub fn describe_sync(status: &ReflectorStatus) -> String {
    let phase = describe_phase(status);
    match &status.initial_list {
        None => phase,
        Some(initial) => match &initial.fallback_reason {
            None => format!("{phase} · via {}", initial.mode),
            Some(why) => format!("{phase} · via {} ({why})", initial.mode),
        },
    }
}

fn describe_phase(status: &ReflectorStatus) -> String {
    match &status.phase {
        ReflectorPhase::Starting => "starting".to_string(),
        ReflectorPhase::Listing { pages, objects } => {
            format!("listing: {pages} pages, {objects} objects")
        }
        ReflectorPhase::Watching => format!("watching at rv {}", status.last_sync_resource_version),
        ReflectorPhase::BackingOff => "backing off".to_string(),
    }
}

/// Below this the store being behind is the ordinary moment between an event's arrival and
/// its processing, which would only flicker in the header; the queue panel shows any lag.
const STALENESS_SHOWN: Duration = Duration::from_secs(1);

/// The header's word on a store behind what the server has shown (KEP-5647's staleness):
/// by how many resourceVersions and for how long; `None` when it is current or only just
/// behind.
pub fn describe_staleness(informer: &InformerMetricsSnapshot) -> Option<String> {
    let behind = informer.behind_for.filter(|d| *d >= STALENESS_SHOWN)?;
    Some(format!(
        "store at rv {}, {} behind for {:.0}s",
        informer.store_resource_version,
        informer.resource_version_lag(),
        behind.as_secs_f64()
    ))
}

/// The table's pipeline for the delta panel: its FIFO (and the compared one) and how its
/// informer read its initial state, with why when it fell back to a list.
pub fn describe_pipeline(
    (fifo, compare): (FifoKind, Option<FifoKind>),
    status: &ReflectorStatus,
) -> String {
    let fifos = match compare {
        Some(other) => format!("{fifo} | {other}"),
        None => fifo.to_string(),
    };
    match &status.initial_list {
        None => fifos,
        Some(initial) => match &initial.fallback_reason {
            None => format!("{fifos} · via {}", initial.mode),
            Some(why) => format!("{fifos} · via {} ({why})", initial.mode),
        },
    }
}

/// What the person sees besides the rows, which moving between tables changes: the UI's
/// state, the header, the open detail (it reads the table's tap) and the namespace
/// favourites (a namespace shown becomes one).
pub struct Surface {
    pub state: UiState,
    pub header: Header,
    pub detail: DetailController,
    pub favourites: Favourites,
    /// The cluster groups' namespace sets, and the scope each was last shown in.
    pub namespace_sets: NamespaceSets,
}

impl Surface {
    /// Opens the detail of `key` of `kind`: YAML fetched now, and its history.
    pub(crate) fn open_detail(&mut self, kind: Kind, key: &Key) {
        self.detail.open(kind, key);
        self.state.mode = InputMode::Detail;
    }
}

/// The table on screen and every other table the session keeps.
pub struct Tables {
    pub(crate) starter: TableStarter,
    pub(crate) table: Box<dyn Table>,
    /// Services' selectors, fetched for Enter on a Service.
    pub(crate) selectors: SelectorFetcher,
    /// Whether the namespaces shown exist.
    pub(crate) namespaces: NamespaceCheck,
    /// Which of a fleet's clusters are one cluster reached through two contexts.
    pub(crate) identities: IdentityCheck,
    /// Tables switched away from, oldest first, with what they show, kept running (informer,
    /// indexes, views), so that going back to one, or drilling down into a kind already
    /// listed, shows it at once instead of listing again: 150,000 pods take seconds to list.
    pub(crate) parked: Vec<(Kind, NamespaceScope, Box<dyn Table>)>,
    /// The new table's tap, subscribed to when the table was switched, for the loop.
    pub(crate) switched_taps: Option<broadcast::Receiver<Arc<TapEntry>>>,
    /// Both pipelines' handoffs, while the table runs two for the side-by-side view.
    pub(crate) handoffs: Option<mpsc::Receiver<Result<Arc<Handoff>, u64>>>,
    /// What the table shows; its `filter` is the one the view opened with.
    pub(crate) view: ViewSpec,
    /// Views Esc goes back to, newest last.
    pub(crate) history: Vec<Visit>,
    /// Watch events seen by the table when the rate was last worked out, and when.
    events_seen: u64,
    rate_since: Instant,
    /// Why the kind on screen is no longer there, once discovery stops finding it; its
    /// informer is stopped from then on.
    pub(crate) gone: Option<Gone>,
    /// The category on screen, when the table is a category's mixed table (`:all`); the
    /// view's kind is then its first kind.
    pub(crate) category: Option<Category>,
    /// How many tables may be parked (see [`PARKED`]).
    park_cap: usize,
    /// The kind whose tap the delta panel and the detail's history read.
    tapped: Option<Kind>,
    /// The generation of the CRD of the custom resource on screen when its table started:
    /// its columns are that generation's.
    crd_generation: Option<i64>,
}

/// A view left for another, as Esc brings it back.
pub(crate) struct Visit {
    pub(crate) view: ViewSpec,
    /// The category the view showed, if it was one's (`:all`).
    category: Option<Category>,
    /// The filter as typed when it was left (the view's own one, or more).
    typed: String,
    selected: Option<Key>,
}

/// Tables kept running after they were switched away from; after a category's view, as
/// many more as it had kinds, so that going back to it lists nothing again.
const PARKED: usize = 2;

/// A kind the server stopped serving while its table was open.
pub(crate) struct Gone {
    message: String,
    since: SystemTime,
}

/// Whether `kind` is known to be no longer served: discovery ran (the built-in kinds a
/// catalog holds before it, or after it failed, say nothing of discovered ones) and does not
/// find it, or the server answered its list or watch 404.
pub(crate) fn not_served(catalog: &Catalog, kind: &Kind, status: &ReflectorStatus) -> bool {
    let answered_not_found = matches!(
        status.last_error.as_deref(),
        Some(ReflectorError::ListWatch(ListWatchError::Api { status, .. })) if status.code == 404
    );
    let discovered = catalog.current().resolve_resource(CRDS).is_some();
    !catalog.serves(kind) && (discovered || answered_not_found)
}

/// The identity reads of `starter`'s fleet, none for one cluster.
fn identify_fleet(starter: &TableStarter) -> IdentityCheck {
    let clusters = starter
        .fleet()
        .iter()
        .map(|m| m.cluster().clone())
        .collect();
    IdentityCheck::start(clusters, IDENTITY_BOUND)
}

/// The resource whose changes discovery follows: served wherever discovery found more than
/// the built-in kinds.
const CRDS: &str = "customresourcedefinitions.apiextensions.k8s.io";

impl Tables {
    /// The session's first table, of `view`, started on screen.
    pub(crate) fn new(starter: TableStarter, view: ViewSpec) -> Result<Self, super::UiError> {
        let table = fleet_table::start(&starter, &view.kind, &view.scope, SortSpec::default())?;
        Ok(Self {
            selectors: SelectorFetcher::new(starter.cluster().client.clone()),
            namespaces: NamespaceCheck::new(starter.cluster().client.clone()),
            identities: identify_fleet(&starter),
            starter,
            table,
            parked: Vec::new(),
            switched_taps: None,
            handoffs: None,
            view,
            history: Vec::new(),
            events_seen: 0,
            rate_since: Instant::now(),
            gone: None,
            category: None,
            park_cap: PARKED,
            tapped: None,
            crd_generation: None,
        })
    }

    /// The namespace shown, if one is, becomes the context's favourite 1; a set's members
    /// are each checked to exist. The scope is the cluster group's last, for the next start.
    pub(crate) fn note_namespace(&mut self, ui: &mut Surface) {
        match &self.view.scope {
            NamespaceScope::One(ns) => {
                ui.favourites.used(&ui.header.context, ns);
                self.namespaces.check(ui.header.context.clone(), ns.clone());
            }
            NamespaceScope::Set(set) => {
                for ns in set.namespaces() {
                    self.namespaces.check(ui.header.context.clone(), ns.clone());
                }
            }
            NamespaceScope::All => {}
        }
        ui.namespace_sets
            .shown(&group_of(&ui.header.context), &self.view.scope);
        ui.header.favourites = ui.favourites.namespaces(&ui.header.context).to_vec();
    }

    /// The answer whether a namespace shown exists: one that does not is no favourite,
    /// and is said while it is shown.
    pub(crate) fn finish_namespace(&mut self, ui: &mut Surface, checked: Checked) {
        self.namespaces.finish(&checked);
        if !checked.missing {
            return;
        }
        ui.favourites.forget(&checked.context, &checked.namespace);
        ui.header.favourites = ui.favourites.namespaces(&ui.header.context).to_vec();
        if checked.context != ui.header.context {
            return;
        }
        match &self.view.scope {
            NamespaceScope::One(ns) if *ns == checked.namespace => {
                ui.state.command.error = Some(format!(
                    "namespace {} does not exist in context {}",
                    checked.namespace, checked.context
                ));
            }
            NamespaceScope::Set(set) if set.namespaces().contains(&checked.namespace) => {
                let missing = format!("{} missing", checked.namespace);
                if !ui.header.scope.contains(&missing) {
                    ui.header.scope = format!("{} · {missing}", ui.header.scope);
                }
                ui.state.command.error = Some(format!(
                    "namespace {} of the set does not exist in context {}: the others' rows \
                     are shown",
                    checked.namespace, checked.context
                ));
            }
            _ => {}
        }
    }

    /// A fleet cluster's identity read: each cluster it shows to be an earlier context's
    /// leaves the fleet (its informers stop, its rows go from every table, the header no
    /// longer names it), said on the message line as the start says a shared URL and CA.
    pub(crate) fn finish_identity(&mut self, ui: &mut Surface, identified: Identified) {
        let mut said = Vec::new();
        for same in self.identities.take(identified) {
            self.starter.leave_out(&same.context);
            let tables = std::iter::once(&mut self.table)
                .chain(self.parked.iter_mut().map(|(_, _, table)| table));
            for table in tables {
                let fleet = table.as_any_mut().downcast_mut::<FleetTable>();
                if let Some(removed) = fleet.and_then(|f| f.remove_member(&same.context)) {
                    tokio::spawn(removed.shutdown());
                }
            }
            said.push(format!(
                "{} reaches the same cluster as {} ({}): shown once",
                same.context, same.kept, same.how
            ));
        }
        if said.is_empty() {
            return;
        }
        if let Some((context, server)) = self.starter.fleet_label() {
            (ui.header.context, ui.header.server) = (context, server);
        }
        let said = said.join(" · ");
        ui.state.notice = Some(match ui.state.notice.take() {
            Some(notice) => format!("{notice} · {said}"),
            None => said,
        });
    }

    /// The mixed table on screen, when a category is shown.
    pub(crate) fn mixed(&self) -> Option<&MixedTable> {
        self.table.as_any().downcast_ref::<MixedTable>()
    }

    pub(crate) fn mixed_mut(&mut self) -> Option<&mut MixedTable> {
        self.table.as_any_mut().downcast_mut::<MixedTable>()
    }

    /// Whether rows need a NAMESPACE column: a namespaced kind (or a category with one)
    /// across all namespaces.
    pub(crate) fn with_namespace(&self) -> bool {
        match &self.category {
            Some(category) => {
                !matches!(self.view.scope, NamespaceScope::One(_))
                    && category.kinds.iter().any(Kind::namespaced)
            }
            None => self.view.with_namespace(),
        }
    }

    /// Brings the header up to date with the informer's status: rows not watched (or not
    /// listed yet) are stale from the first status that says so until it watches again.
    pub(crate) fn update_sync(&mut self, ui: &mut Surface, status: &ReflectorStatus) {
        ui.header.sync = describe_sync(status);
        ui.header.sync_short = None;
        let (_, informer) = self.table.informer_metrics();
        if let Some(behind) = describe_staleness(&informer) {
            ui.header.sync = format!("{} · {behind}", ui.header.sync);
        }
        ui.state.deltas.pipeline = describe_pipeline(self.table.pipelines(), status);
        ui.header.listed = status.listed;
        // Before the first list completes the rows (none, or a watch-list's part) are not
        // current either, so the header can say how long it has waited.
        let stale = status.phase != ReflectorPhase::Watching;
        // Since the informer stopped watching, as it says; else since this table saw it.
        ui.header.stale_since = match ui.header.stale_since {
            _ if !stale => None,
            seen => status
                .not_watching_since
                .or(seen)
                .or_else(|| Some(SystemTime::now())),
        };
        ui.header.undecodable = status.undecodable_in_last_list;
        // A discovered kind whose CRD was deleted: its informer stops retrying, and what
        // rows it still holds stay, shown as not current, until another command replaces the
        // table.
        let catalog = self.starter.catalog();
        if self.gone.is_none()
            && self.category.is_none()
            && not_served(catalog, &self.view.kind, status)
        {
            self.table.stop_watching();
            self.gone = Some(Gone {
                message: format!(
                    "{kind} is no longer served by the API server: its \
                     CustomResourceDefinition was deleted; stopped watching, the rows are the \
                     last seen (gone) · :{kind} once it is back",
                    kind = self.view.kind
                ),
                since: SystemTime::now(),
            });
        }
        // Parked tables of kinds gone so are stopped for good.
        let (gone, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.parked)
            .into_iter()
            .partition(|(kind, _, table)| not_served(catalog, kind, &table.status().borrow()));
        self.parked = kept;
        for (_, _, table) in gone {
            tokio::spawn(table.shutdown());
        }
        // A category's kinds gone so leave it: their rows go, their informers stop.
        let catalog = catalog.clone();
        if let Some(mixed) = self.mixed_mut() {
            for table in mixed.drop_gone(|kind, status| not_served(&catalog, kind, status)) {
                tokio::spawn(table.shutdown());
            }
        }
        // A fleet's clusters are each said to be syncing, watching, stale or down, and why.
        if let Some(fleet) = self.table.as_any().downcast_ref::<FleetTable>() {
            let said = describe_clusters(&fleet.cluster_health(SystemTime::now()));
            ui.header.sync = said.sync;
            ui.header.sync_short = Some(said.short);
            ui.header.error = said.error;
            // Each cluster says how long it has been stale; the rows of one stale are marked.
            ui.header.stale_since = None;
            return;
        }
        // A category's kinds are each said to be syncing, refused, failing, stale or gone.
        if let Some(mixed) = self.mixed() {
            let (sync, mut error) = describe_members(&mixed.member_states());
            let left_out: Vec<String> = mixed
                .left_out()
                .into_iter()
                .map(|(kind, why)| format!("{kind} left out by the filter ({why})"))
                .collect();
            if !left_out.is_empty() {
                let left_out = left_out.join(" · ");
                error = Some(match error {
                    Some(error) => format!("{error} · {left_out}"),
                    None => left_out,
                });
            }
            ui.header.sync = sync;
            ui.header.error = error;
            return;
        }
        if let Some(gone) = &self.gone {
            ui.header.resource = format!("{} (gone)", self.view.kind);
            ui.header.sync = "stopped: not served".into();
            ui.header.stale_since = Some(gone.since);
            ui.header.error = Some(gone.message.clone());
            return;
        }
        ui.header.error = status
            .last_error
            .clone()
            .map(|err| kscope_client::explain::reflector_error(&err));
    }

    /// A custom resource's table whose CRD changed since the table started (new printer
    /// columns, say) is listed again, with the columns as the CRD has them now.
    pub(crate) fn follow_crd_change(&mut self, ui: &mut Surface) -> Vec<Follow> {
        if self.category.is_some() || self.gone.is_some() {
            return Vec::new();
        }
        let now = self.starter.catalog().crd_generation(&self.view.kind);
        match (self.crd_generation, now) {
            (Some(was), Some(now)) if was != now => {
                let follow = self.restart(ui);
                // Once per change: a restart that failed says why, and is not retried.
                self.crd_generation = Some(now);
                if !follow.is_empty() {
                    ui.state.command.error = Some(format!(
                        "{} changed (CRD generation {was} → {now}): listed again with its \
                         columns as they are now",
                        self.view.kind
                    ));
                }
                follow
            }
            (None, Some(_)) => {
                self.crd_generation = now;
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    pub(crate) fn update_rate(&mut self, ui: &mut Surface) {
        let seen = self.table.watch_events();
        let elapsed = self.rate_since.elapsed().as_secs_f64();
        if elapsed > 0.0 {
            ui.header.events_per_second = seen.saturating_sub(self.events_seen) as f64 / elapsed;
        }
        self.events_seen = seen;
        self.rate_since = Instant::now();
    }

    /// Shows the deltas of the selected row's kind once the selection of a category's
    /// table moved to a row of another kind.
    pub(crate) fn follow_row_kind(&mut self, ui: &mut Surface) -> Vec<Follow> {
        if self.category.is_none() || self.tapped.as_ref() == Some(self.table.kind()) {
            return Vec::new();
        }
        self.load_deltas(ui);
        vec![Follow::Table]
    }

    /// The table on screen in `scope` (a namespace set, `:nsset`): the same kind or
    /// category. A cluster-scoped kind's rows stay as they are (the set does not apply to
    /// them, as kubectl ignores `-n`), and the scope is kept for the namespaced kinds next.
    pub(crate) fn show_scope(&mut self, ui: &mut Surface, scope: NamespaceScope) -> Vec<Follow> {
        if scope == self.view.scope {
            return Vec::new();
        }
        if let Some(category) = self.category.clone() {
            return self.show_category(ui, category, scope, true);
        }
        if !self.view.kind.namespaced() {
            self.view.scope = scope;
            self.note_namespace(ui);
            return Vec::new();
        }
        self.switch(ui, ViewSpec::new(self.view.kind.clone(), scope), true)
    }

    /// The number keys: the kind in favourite namespace `n`, or in all namespaces for 0.
    pub(crate) fn favourite_namespace(&mut self, ui: &mut Surface, n: u8) -> Vec<Follow> {
        let scope = match n {
            0 => NamespaceScope::All,
            n => match ui.header.favourites.get(usize::from(n) - 1) {
                Some(ns) => NamespaceScope::One(ns.clone()),
                None => {
                    ui.state.command.error = Some(format!(
                        "no favourite namespace {n} yet: namespaces shown with :pods -n NS or Enter on a namespace become favourites"
                    ));
                    return Vec::new();
                }
            },
        };
        if self.category.is_none() && !self.view.kind.namespaced() {
            ui.state.command.error = Some(format!(
                "{} are cluster-scoped: no namespace applies",
                self.view.kind
            ));
            return Vec::new();
        }
        self.show_scope(ui, scope)
    }

    /// Esc: first drops the filter typed over the view's own (a drill-down's `node=n1`
    /// stays), then goes back to the previous view. In the filter bar it drops the typed
    /// filter and closes the bar, never going back.
    pub(crate) fn clear_filter_or_back(&mut self, ui: &mut Surface) -> Vec<Follow> {
        let typing = ui.state.mode == InputMode::Filter;
        ui.state.mode = InputMode::Normal;
        if ui.state.filter.input != self.view.filter {
            ui.state.filter.input = self.view.filter.clone();
            return self.refilter(ui);
        }
        if typing {
            return Vec::new();
        }
        if let Some(visit) = self.history.pop() {
            let mut follow = match visit.category {
                Some(category) => self.show_category(ui, category, visit.view.scope.clone(), false),
                None => self.switch(ui, visit.view, false),
            };
            if visit.typed != self.view.filter {
                ui.state.filter.input = visit.typed;
                follow.extend(self.refilter(ui));
            }
            ui.state.table.reselect(visit.selected);
            follow
        } else if !self.view.filter.is_empty() {
            self.view.filter.clear();
            ui.state.filter.input.clear();
            self.refilter(ui)
        } else {
            Vec::new()
        }
    }

    /// Replaces the table with one showing `to`, remembering the current view for Esc when
    /// `remember`: the same table when it shows the same kind and scope, a parked one, or a
    /// new one. A new informer starts before the old one is parked: if it cannot start, the
    /// error is shown and nothing changes.
    pub(crate) fn switch(&mut self, ui: &mut Surface, to: ViewSpec, remember: bool) -> Vec<Follow> {
        // A table whose kind is gone is never reused: the kind back is a fresh informer.
        let same = to.kind == self.view.kind
            && to.scope == self.view.scope
            && self.gone.is_none()
            && self.category.is_none();
        // A category's table is taken apart (its kinds' tables parked, to be reused) once
        // the table to show is known to be there (across clusters: one of its kinds).
        let in_category = to.scope == self.view.scope
            && match self.starter.fleet() {
                [] => self
                    .mixed()
                    .is_some_and(|m| m.kinds().any(|kind| *kind == to.kind)),
                _ => self
                    .category
                    .as_ref()
                    .is_some_and(|c| c.kinds.contains(&to.kind)),
            };
        if in_category {
            self.park_members();
        }
        let parked = self
            .parked
            .iter()
            .position(|(kind, scope, _)| *kind == to.kind && *scope == to.scope);
        let table = match (same, parked) {
            (true, _) => None,
            (false, Some(at)) => {
                let (_, _, table) = self.parked.remove(at);
                Some(table)
            }
            (false, None) => {
                match fleet_table::start(&self.starter, &to.kind, &to.scope, SortSpec::default()) {
                    Ok(table) => Some(table),
                    Err(err) => {
                        ui.state.command.error = Some(err.to_string());
                        return Vec::new();
                    }
                }
            }
        };
        self.remember(ui, remember);
        self.park_members();
        if let Some(table) = table {
            let old = std::mem::replace(&mut self.table, table);
            if self.gone.is_some() || self.category.is_some() {
                // A gone kind's, or the emptied table of a category.
                tokio::spawn(old.shutdown());
            } else {
                self.parked
                    .push((self.view.kind.clone(), self.view.scope.clone(), old));
            }
            self.trim_parked();
            self.load_deltas(ui);
        }
        self.category = None;
        self.shown(ui, to)
    }

    /// Keeps the view on screen for Esc, when `remember`.
    pub(crate) fn remember(&mut self, ui: &mut Surface, remember: bool) {
        if !remember {
            return;
        }
        self.history.push(Visit {
            view: self.view.clone(),
            category: self.category.clone(),
            typed: ui.state.filter.input.clone(),
            selected: self.table.selected(),
        });
        if self.history.len() > HISTORY {
            self.history.remove(0);
        }
    }

    /// Parks the kinds' tables of the category's table on screen, if one is: across
    /// clusters, each kind's tables merged again as that kind's fleet table.
    pub(crate) fn park_members(&mut self) {
        let scope = self.view.scope.clone();
        let members = match self.category.is_some() && !self.starter.fleet().is_empty() {
            true => self
                .table
                .as_any_mut()
                .downcast_mut::<FleetTable>()
                .map(FleetTable::take_kinds),
            false => self.mixed_mut().map(MixedTable::take_members),
        };
        for (kind, table) in members.into_iter().flatten() {
            self.parked.push((kind, scope.clone(), table));
        }
    }

    /// Each cluster's table of a kind of `kinds` in `scope`, taken from the kind's parked
    /// fleet table (and, with `current`, from the fleet table on screen, of `self.view`),
    /// with its context and kind, for a fleet's category table to reuse.
    fn take_fleet_tables(
        &mut self,
        kinds: &[Kind],
        scope: &NamespaceScope,
        current: bool,
    ) -> Vec<(String, Kind, Box<dyn Table>)> {
        let mut running = Vec::new();
        let mut take = |kind: &Kind, table: &mut Box<dyn Table>| {
            if let Some(fleet) = table.as_any_mut().downcast_mut::<FleetTable>() {
                for (context, member) in fleet.take_members() {
                    running.push((context, kind.clone(), member));
                }
            }
        };
        if current {
            take(&self.view.kind.clone(), &mut self.table);
        }
        let mut kept = Vec::new();
        for (kind, parked_scope, mut table) in std::mem::take(&mut self.parked) {
            if parked_scope == *scope && kinds.contains(&kind) {
                take(&kind, &mut table);
                tokio::spawn(table.shutdown());
            } else {
                kept.push((kind, parked_scope, table));
            }
        }
        self.parked = kept;
        running
    }

    /// Stops the oldest parked tables beyond the cap.
    pub(crate) fn trim_parked(&mut self) {
        while self.parked.len() > self.park_cap {
            let (_, _, oldest) = self.parked.remove(0);
            tokio::spawn(oldest.shutdown());
        }
    }

    /// Shows every kind of `category` in `scope` in one table, remembering the current view
    /// for Esc when `remember`. Each kind's table is the one already running (on screen,
    /// in a category's table or parked) where there is one, else a new one; a kind that
    /// cannot start is named in the header, and the others show. Across clusters, each
    /// cluster's category table is merged as a kind's are, with a CLUSTER column.
    pub(crate) fn show_category(
        &mut self,
        ui: &mut Surface,
        category: Category,
        scope: NamespaceScope,
        remember: bool,
    ) -> Vec<Follow> {
        let old_scope = self.view.scope.clone();
        let single = (self.category.is_none() && self.gone.is_none() && old_scope == scope)
            .then(|| self.view.kind.clone())
            .filter(|kind| category.kinds.contains(kind));
        self.park_members();
        // Across clusters, the kind on screen is taken apart with the parked ones.
        let mut emptied = false;
        let mixed: Box<dyn Table> = match self.starter.fleet() {
            [] => {
                let kinds = category
                    .kinds
                    .iter()
                    .filter(|k| single.as_ref() != Some(*k));
                let parked = &mut self.parked;
                Box::new(MixedTable::start(
                    &self.starter,
                    category.clone(),
                    kinds,
                    &scope,
                    |kind| {
                        let at = parked
                            .iter()
                            .position(|(k, s, _)| k == kind && *s == scope)?;
                        Some(parked.remove(at).2)
                    },
                ))
            }
            _ => {
                emptied = single.is_some();
                let mut running = self.take_fleet_tables(&category.kinds, &scope, emptied);
                let table = fleet_table::start_category(
                    &self.starter,
                    &category,
                    &scope,
                    |context, kind| {
                        let at = running
                            .iter()
                            .position(|(c, k, _)| c == context && k == kind)?;
                        Some(running.swap_remove(at).2)
                    },
                );
                // A cluster's table its category no longer names.
                for (_, _, unused) in running {
                    tokio::spawn(unused.shutdown());
                }
                table
            }
        };
        self.remember(ui, remember);
        let old = std::mem::replace(&mut self.table, mixed);
        match (&single, self.category.is_some() || self.gone.is_some()) {
            _ if emptied => {
                tokio::spawn(old.shutdown());
            }
            (Some(kind), _) => {
                let kind = kind.clone();
                if let Some(mixed) = self.mixed_mut() {
                    mixed.add_member(kind, old);
                }
            }
            (None, true) => {
                tokio::spawn(old.shutdown());
            }
            (None, false) => self.parked.push((self.view.kind.clone(), old_scope, old)),
        }
        self.park_cap = self.park_cap.max(PARKED + category.kinds.len());
        self.trim_parked();
        self.load_deltas(ui);
        let first = category.kinds.first().cloned();
        self.category = Some(category);
        let kind = first.unwrap_or_else(|| self.view.kind.clone());
        self.shown(ui, ViewSpec::new(kind, scope))
    }

    /// The screen follows the table now shown, of `to`.
    pub(crate) fn shown(&mut self, ui: &mut Surface, to: ViewSpec) -> Vec<Follow> {
        self.view.scope = to.scope.clone();
        self.note_namespace(ui);
        let state = &mut ui.state;
        state.mode = InputMode::Normal;
        state.filter.input = to.filter.clone();
        state.filter.error = None;
        state.browser = IndexBrowser::default();
        (ui.header.resource, ui.header.scope) = match &self.category {
            Some(category) => {
                let namespaced = category.kinds.iter().any(Kind::namespaced);
                (
                    category.name.clone(),
                    nav::scope_label(&to.scope, namespaced),
                )
            }
            None => (to.kind.to_string(), to.scope_label()),
        };
        ui.header.starting();
        self.gone = None;
        self.crd_generation = self.starter.catalog().crd_generation(&to.kind);
        self.view = to;
        self.events_seen = self.table.watch_events();
        self.rate_since = Instant::now();
        self.follow_new_table(ui, None)
    }

    /// The table pane follows the table on screen, now another (or with another index),
    /// keeping `selected` selected once it is there; the filter as typed applies to it.
    fn follow_new_table(&mut self, ui: &mut Surface, selected: Option<Key>) -> Vec<Follow> {
        let with_namespace = self.with_namespace();
        ui.state
            .table
            .switched(self.table.as_ref(), with_namespace, selected);
        let _ = self.refilter(ui);
        vec![Follow::Table, Follow::Rows]
    }

    /// Restarts the table's informer with `fifo`, and `compare`'s pipeline beside it on the
    /// same watch stream (tables started from here on run them too). A second pipeline
    /// added to a running informer would start mid-stream, without the initial state; a
    /// restart puts both on one stream from its first event, for the price of one relist.
    /// If the new informer cannot start, the error is shown and nothing changes.
    pub(crate) fn restart_with(
        &mut self,
        ui: &mut Surface,
        fifo: FifoKind,
        compare: Option<FifoKind>,
    ) -> Vec<Follow> {
        self.starter.set_fifo(fifo, compare);
        self.restart(ui)
    }

    /// `:index`: the index goes to every table started from here on, and at once to the
    /// table on screen and the parked ones it applies to, backfilled from their stores. A
    /// JSONPath index on a discovered kind needs the objects, which the store does not keep:
    /// that table's informer is restarted (a relist), and a parked one is dropped, to start
    /// anew when it is next shown. The outcome is said in the status line.
    pub(crate) fn add_index(
        &mut self,
        ui: &mut Surface,
        definition: IndexDefinition,
    ) -> Vec<Follow> {
        let name = definition.name.clone();
        ui.state.command.error = None;
        if let Err(err) = self.starter.add_index(definition.clone()) {
            ui.state.command.error = Some(format!(":index {name}  {err}"));
            return Vec::new();
        }
        let discovery = self.starter.catalog().current();
        let relist = matches!(definition.source, IndexSource::Path(_));
        let parked = std::mem::take(&mut self.parked);
        for (kind, scope, mut table) in parked {
            let keep = !definition.applies_to(&kind, &discovery)
                || (!relist && table.add_index(definition.clone()).is_ok());
            if keep {
                self.parked.push((kind, scope, table));
            } else {
                tokio::spawn(table.shutdown());
            }
        }
        if let Some(category) = self.category.clone() {
            return self.add_category_index(ui, definition, &category, relist);
        }
        let kind = self.view.kind.clone();
        if !definition.applies_to(&kind, &discovery) {
            ui.state.command.error = Some(format!(
                ":index {name} added ({}); it does not apply to {kind}",
                definition.source
            ));
            return Vec::new();
        }
        if relist {
            let follow = self.restart(ui);
            if ui.state.command.error.is_none() {
                ui.state.command.error = Some(format!(
                    ":index {name} added: relisting {kind}, whose store keeps no object to \
                     evaluate {} on",
                    definition.source
                ));
            }
            return follow;
        }
        if let Err(err) = self.table.add_index(definition) {
            ui.state.command.error = Some(format!(":index {name}  {err}"));
            return Vec::new();
        }
        let values = self.table.value_counts(&name).len();
        ui.state.command.error = Some(format!(
            ":index {name} added to {kind} and backfilled: {values} values"
        ));
        let selected = self.table.selected();
        self.follow_new_table(ui, selected)
    }

    /// `:index` on a category's table: added to the kinds it applies to, backfilled, or
    /// relisting them all for a JSONPath index.
    pub(crate) fn add_category_index(
        &mut self,
        ui: &mut Surface,
        definition: IndexDefinition,
        category: &Category,
        relist: bool,
    ) -> Vec<Follow> {
        let name = definition.name.clone();
        let discovery = self.starter.catalog().current();
        if !category
            .kinds
            .iter()
            .any(|kind| definition.applies_to(kind, &discovery))
        {
            ui.state.command.error = Some(format!(
                ":index {name} added ({}); it applies to no kind of {}",
                definition.source, category.name
            ));
            return Vec::new();
        }
        if relist {
            let follow = self.restart(ui);
            if ui.state.command.error.is_none() {
                ui.state.command.error = Some(format!(
                    ":index {name} added: relisting the kinds of {}, whose stores keep no \
                     object to evaluate {} on",
                    category.name, definition.source
                ));
            }
            return follow;
        }
        if let Err(err) = self.table.add_index(definition) {
            ui.state.command.error = Some(format!(":index {name}  {err}"));
            return Vec::new();
        }
        let values = self.table.value_counts(&name).len();
        ui.state.command.error = Some(format!(
            ":index {name} added to the kinds of {} and backfilled: {values} values",
            category.name
        ));
        let _ = self.refilter(ui);
        vec![Follow::Table, Follow::Rows]
    }

    /// Restarts the table on screen with a new informer from the starter (a relist); a
    /// category's table with a new one for each of its kinds, keeping its filter.
    pub(crate) fn restart(&mut self, ui: &mut Surface) -> Vec<Follow> {
        if let Some(category) = self.category.clone() {
            let members = self.mixed_mut().map(MixedTable::take_members);
            for (_, table) in members.into_iter().flatten() {
                tokio::spawn(table.shutdown());
            }
            let typed = ui.state.filter.input.clone();
            let scope = self.view.scope.clone();
            let mut follow = self.show_category(ui, category, scope, false);
            ui.state.filter.input = typed;
            follow.extend(self.refilter(ui));
            return follow;
        }
        let sort = ui.state.table.sort;
        let table = match fleet_table::start(&self.starter, &self.view.kind, &self.view.scope, sort)
        {
            Ok(table) => table,
            Err(err) => {
                ui.state.command.error = Some(err.to_string());
                return Vec::new();
            }
        };
        let selected = self.table.selected();
        let old = std::mem::replace(&mut self.table, table);
        tokio::spawn(old.shutdown());
        self.crd_generation = self.starter.catalog().crd_generation(&self.view.kind);
        self.load_deltas(ui);
        ui.header.starting();
        self.events_seen = self.table.watch_events();
        self.follow_new_table(ui, selected)
    }

    /// Shows the new table's latest tap entries in the delta panel, and has the loop follow
    /// its tap from here (subscribed before the entries are read: none is missed, and
    /// [`crate::app::App::take_taps`] skips those already shown).
    pub(crate) fn load_deltas(&mut self, ui: &mut Surface) {
        self.tapped = Some(self.table.kind().clone());
        let tap = self.table.tap();
        self.switched_taps = Some(tap.subscribe());
        let entries = tap.snapshot();
        let keep = entries.len().saturating_sub(DELTA_CAPACITY);
        ui.state
            .deltas
            .replace(entries[keep..].iter().map(DeltaLine::from_entry));
        ui.detail.set_tap(tap.clone());
        // A compared table's two pipelines side by side, from their next handoffs on.
        let side_by_side = match self.table.pipelines() {
            (fifo, Some(other)) => SideBySide::new(fifo, other).ok(),
            (_, None) => None,
        };
        self.handoffs = side_by_side
            .is_some()
            .then(|| merge_handoffs(self.table.subscribe_handoffs()));
        ui.state.deltas.side_by_side = side_by_side;
    }

    /// Shows index number `current` in the browser, with its values counted now.
    pub(crate) fn browse_index(&mut self, ui: &mut Surface, current: usize) {
        let browser = &mut ui.state.browser;
        browser.current = current;
        browser.selected = 0;
        browser.values = match browser.name() {
            Some(name) => self.table.value_counts(name),
            None => Vec::new(),
        };
        browser.misfits = browser
            .name()
            .map_or_else(Misfits::default, |name| self.table.index_misfits(name));
    }

    /// Applies the filter bar's input to the table: the loop follows the rows of a view
    /// rebuilt for new index terms.
    pub(crate) fn refilter(&mut self, ui: &mut Surface) -> Vec<Follow> {
        let Some(query) = ui.state.filter.parse() else {
            return Vec::new();
        };
        match self.table.set_query(query, ui.state.table.sort) {
            Ok(true) => vec![Follow::Rows],
            Ok(false) => Vec::new(),
            Err(err) => {
                ui.state.filter.error = Some(err.to_string());
                Vec::new()
            }
        }
    }

    /// Moves the session to another cluster, whose tables `starter` starts: the same kind,
    /// or the same category as the new cluster serves it, in `last` (the scope its cluster
    /// group was last shown in) if there is one, else in all namespaces or the same set if
    /// that was the scope, else in `namespace`; `detail` is the new cluster's. The old cluster's tables
    /// stop in the background. If the new table cannot start, nothing changes and the
    /// error says why.
    pub(crate) fn move_to_cluster(
        &mut self,
        ui: &mut Surface,
        starter: TableStarter,
        namespace: &str,
        last: Option<NamespaceScope>,
        detail: DetailController,
    ) -> Result<Vec<Follow>, String> {
        let scope = match (last, &self.view.scope) {
            (Some(last), _) => last,
            (None, NamespaceScope::One(_)) => NamespaceScope::One(namespace.to_string()),
            // A set's members are looked for in the new cluster, each said if missing.
            (None, all_or_set) => all_or_set.clone(),
        };
        // A category is looked up again: the new cluster may serve other kinds in it.
        let category = match &self.category {
            Some(c) => match Category::discovered(&c.name, &starter.catalog().current()) {
                Some(found) => Some(found),
                None => return Err(format!("it serves nothing in the category {}", c.name)),
            },
            None => None,
        };
        let kind = match &category {
            Some(found) => found.kinds[0].clone(),
            None => self.view.kind.clone(),
        };
        let to = ViewSpec::new(kind, scope);
        let table = fleet_table::start(&starter, &to.kind, &to.scope, SortSpec::default())
            .map_err(|err| err.to_string())?;
        let old = std::mem::replace(&mut self.table, table);
        let stopping: Vec<_> = std::iter::once(old.shutdown())
            .chain(
                std::mem::take(&mut self.parked)
                    .into_iter()
                    .map(|(_, _, table)| table.shutdown()),
            )
            .collect();
        // The old cluster's informers stop off the loop.
        tokio::spawn(futures::future::join_all(stopping));
        self.selectors = SelectorFetcher::new(starter.cluster().client.clone());
        self.namespaces = NamespaceCheck::new(starter.cluster().client.clone());
        self.identities = identify_fleet(&starter);
        self.starter = starter;
        ui.detail = detail;
        self.history.clear();
        self.category = None;
        self.load_deltas(ui);
        let follow = self.shown(ui, to.clone());
        Ok(match category {
            // The first kind's table, just started, is one of the category's.
            Some(found) => self.show_category(ui, found, to.scope, false),
            None => follow,
        })
    }

    /// What the table shows now, with the filter as currently typed.
    pub(crate) fn current(&self, ui: &Surface) -> ViewSpec {
        ViewSpec {
            filter: ui.state.filter.input.clone(),
            ..self.view.clone()
        }
    }

    /// Enter: the selected row's contents (a namespace or node's pods, a deployment's
    /// replicasets...), or its detail when it holds nothing to open.
    /// In a category's table, Enter does what it does in the row's own kind's table.
    pub(crate) fn drill_down(&mut self, ui: &mut Surface) -> Vec<Follow> {
        let Some((kind, key)) = self.table.selected_object() else {
            return Vec::new();
        };
        // The view Enter leads from: the row's kind's, without the category's filter.
        let from = match &self.category {
            Some(_) => ViewSpec::new(kind.clone(), self.view.scope.clone()),
            None => self.current(ui),
        };
        let discovery = self.starter.catalog().current();
        if let Some(to) = nav::crd_resources(&from, &key, &discovery) {
            let to = self.in_row_cluster(to);
            return self.switch(ui, to, true);
        }
        if (kind.group(), kind.plural()) == ("", "services") {
            let (namespace, name) = split_meta_namespace_key(&key);
            if let Some(namespace) = namespace {
                ui.state.command.error =
                    Some(format!("reading service {namespace}/{name}'s selector…"));
                self.selectors.fetch(kind, namespace.into(), name.into());
                return Vec::new();
            }
        }
        match nav::drill_down(&from, &key, self.starter.indexes(), &discovery) {
            Ok(Some(to)) => {
                let to = self.in_row_cluster(to);
                self.switch(ui, to, true)
            }
            Ok(None) => {
                ui.open_detail(kind, &key);
                Vec::new()
            }
            Err(err) => {
                ui.state.command.error = Some(err.to_string());
                Vec::new()
            }
        }
    }

    /// Across clusters, the view a row leads to keeps to the row's cluster: its filter
    /// starts with a `cluster=` term.
    fn in_row_cluster(&self, mut to: ViewSpec) -> ViewSpec {
        if let Some(context) = self.table.selected_context() {
            let term = format!("{CLUSTER_INDEX}={context}");
            to.filter = match to.filter.is_empty() {
                true => term,
                false => format!("{term},{}", to.filter),
            };
        }
        to
    }

    /// `J`: the selected object's controller (its owner reference marked controller),
    /// selected in its kind's table in the object's namespace; Esc comes back.
    pub(crate) fn jump_to_owner(&mut self, ui: &mut Surface) -> Vec<Follow> {
        let (Some(row), Some((_, key))) = (self.table.selected(), self.table.selected_object())
        else {
            return Vec::new();
        };
        let Some((owner_kind, name)) = self.table.controller_owner(&row) else {
            ui.state.command.error = Some(format!("{key} has no controller"));
            return Vec::new();
        };
        let discovery = self.starter.catalog().current();
        let Ok(kind) = discovery.resolve(&owner_kind) else {
            ui.state.command.error = Some(format!(
                "{key} is controlled by {owner_kind} {name}, a kind the server does not serve"
            ));
            return Vec::new();
        };
        let (namespace, _) = split_meta_namespace_key(&key);
        let (scope, owner_key) = match namespace {
            Some(ns) if kind.namespaced() => {
                (NamespaceScope::One(ns.to_string()), format!("{ns}/{name}"))
            }
            _ => (self.view.scope.clone(), name.to_string()),
        };
        // Across clusters the owner is in the row's cluster, and its row's id names it.
        let owner_key = match self.table.selected_context() {
            Some(context) => format!("{context}/{owner_key}"),
            None => owner_key,
        };
        let to = self.in_row_cluster(ViewSpec::new(kind, scope));
        let follow = self.switch(ui, to, true);
        ui.state.table.reselect(Some(Key::from(owner_key)));
        follow
    }

    /// `object`'s row, selected in its kind's table in its namespace (Enter in the ownership
    /// tree and the hot loops); Esc comes back.
    pub(crate) fn show_object(&mut self, ui: &mut Surface, object: &ObjectRef) -> Vec<Follow> {
        let discovery = self.starter.catalog().current();
        let Ok(kind) = discovery.resolve(&object.kind) else {
            ui.state.command.error = Some(format!("{object}: a kind the server does not serve"));
            return Vec::new();
        };
        let (scope, key) = match &object.namespace {
            Some(ns) if kind.namespaced() => (
                NamespaceScope::One(ns.clone()),
                format!("{ns}/{}", object.name),
            ),
            _ => (self.view.scope.clone(), object.name.clone()),
        };
        let follow = self.switch(ui, ViewSpec::new(kind, scope), true);
        ui.state.table.reselect(Some(Key::from(key)));
        follow
    }

    /// A Service's selector arrived: its pods, through label indexes (added, and backfilled,
    /// for labels none reads); or why it selects none.
    pub(crate) fn finish_selector(&mut self, ui: &mut Surface, selected: Selected) -> Vec<Follow> {
        let Some(selected) = self.selectors.finish(selected) else {
            return Vec::new();
        };
        let service = format!("service {}/{}", selected.namespace, selected.name);
        let selector = match selected.result {
            Ok(selector) => selector,
            Err(err) => {
                ui.state.command.error = Some(format!("{service}: {err}"));
                return Vec::new();
            }
        };
        let discovery = self.starter.catalog().current();
        let (to, added) = nav::selected_pods(
            &selected.namespace,
            &selector,
            self.starter.indexes(),
            &discovery,
        );
        ui.state.command.error = None;
        let mut follow = Vec::new();
        for definition in added {
            follow.extend(self.add_index(ui, definition));
        }
        let filter = to.filter.clone();
        follow.extend(self.switch(ui, to, true));
        if ui
            .state
            .command
            .error
            .as_deref()
            .is_none_or(|e| e.starts_with(":index"))
        {
            ui.state.command.error = Some(format!("pods {service} selects: {filter}"));
        }
        follow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_names_a_store_behind_for_a_second_or_more() {
        let mut informer = InformerMetricsSnapshot {
            wire_resource_version: 120,
            store_resource_version: 117,
            behind_for: Some(Duration::from_millis(300)),
            ..InformerMetricsSnapshot::default()
        };
        assert_eq!(
            describe_staleness(&informer),
            None,
            "a moment's lag flickers"
        );
        informer.behind_for = Some(Duration::from_millis(4_400));
        assert_eq!(
            describe_staleness(&informer).as_deref(),
            Some("store at rv 117, 3 behind for 4s")
        );
        informer.behind_for = None;
        assert_eq!(describe_staleness(&informer), None);
    }
}
