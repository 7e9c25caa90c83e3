//! The event loop: input, row changes, tap entries, signals and a clock tick wake it; each
//! action goes to the component of the mode it was typed in, which returns what the app must
//! do, and the app returns what the loop must follow. A frame is laid out, its window copied
//! out, then drawn from immutable state, at most 60 times a second and only when something
//! changed. The loop is generic over its event source and backend, so tests and the TUI
//! benchmark drive this loop, not a copy of it.

use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crossterm::event::{Event, KeyEventKind};
use futures::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::layout::Rect;
use tokio::sync::{broadcast, mpsc};

use kscope_client::cluster::NamespaceScope;
use kscope_client::discovery::Catalog;
use kscope_config::LogSettings;
use kscope_config::keys::Keymap;
use kscope_index_views::definitions::{IndexDefinition, IndexSource, Misfits};
use kscope_index_views::live::{SortSpec, Window};
use kscope_informers::fifo::{FifoKind, Handoff};
use kscope_informers::instrument::compare::merge_handoffs;
use kscope_informers::instrument::tap::TapEntry;
use kscope_informers::keys::{Key, split_meta_namespace_key};
use kscope_informers::lister_watcher::ListWatchError;
use kscope_informers::reflector::{ReflectorError, ReflectorPhase, ReflectorStatus};
use kscope_resources::{Kind, ResourceKind, Timestamp};

use super::UiError;
use super::action::{Action, Focus, InputMode};
use super::command::{self, Command};
use super::contexts::{Connected, ContextPicker, ContextSwitcher, Switched};
use super::deltas::{DELTA_CAPACITY, DeltaLine, SideBySide};
use super::detail::{DetailController, DetailTab, Fetched};
use super::draw::{self, Header, Parts};
use super::effect::{Effect, Follow};
use super::favourites::Favourites;
use super::keymap::map_key;
use super::layout::Layout;
use super::logs::{Arrival, LogController, LogFollow, LogTarget};
use super::mixed_table::{MixedTable, describe_members};
use super::nav::Category;
use super::nav::{self, HISTORY, ViewSpec};
use super::queue::InformerStats;
use super::selectors::{Selected, SelectorFetcher};
use super::state::{IndexBrowser, UiState};
use super::table::{Table, TableStarter};

/// At most 60 frames per second.
pub const FRAME: Duration = Duration::from_micros(16_667);
/// Ages and the event rate change with time alone.
const TICK: Duration = Duration::from_secs(1);

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

/// What woke the loop.
enum Wake {
    Input(Option<Event>),
    Rows,
    Status,
    Tap(Result<Arc<TapEntry>, broadcast::error::RecvError>),
    /// A compared table's handoff (or how many were missed); `None` once its pipelines stop.
    Handoff(Option<Result<Arc<Handoff>, u64>>),
    Tick,
    Frame,
    Fetched(Fetched),
    Logs(Arrival),
    Context(Box<Connected>),
    Selector(Selected),
    Signal,
    Closed(Closed),
}

/// A background notifier whose sender went away.
enum Closed {
    Rows,
    Status,
    Taps,
}

/// A view left for another, as Esc brings it back.
struct Visit {
    view: ViewSpec,
    /// The category the view showed, if it was one's (`:all`).
    category: Option<Category>,
    /// The filter as typed when it was left (the view's own one, or more).
    typed: String,
    selected: Option<Key>,
}

/// Tables kept running after they were switched away from; after a category's view, as
/// many more as it had kinds, so that going back to it lists nothing again.
const PARKED: usize = 2;

/// One thing the loop did on its thread between two waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// A frame laid out, copied out and drawn.
    Draw,
    /// A terminal event handled (a key's action applied).
    Input,
    /// Tap entries taken into the delta panel.
    Taps,
    /// Anything else: a row or status change, the clock tick, a finished fetch.
    Other,
}

/// Watches the real loop from inside, for the benchmark and tests: told when each step
/// starts and ends (on the loop's thread, so it can read that thread's CPU clock), and shown
/// the app after each frame, which is how it tells that a keystroke's result is on screen.
pub trait Observer {
    fn started(&mut self) {}
    fn finished(&mut self, _step: Step) {}
    /// After each frame, with the app as drawn; false ends the loop.
    fn drawn(&mut self, _app: &App) -> bool {
        true
    }
}

/// Watches nothing: the TUI as people run it.
impl Observer for () {}

/// The running TUI: one table at a time, swapped by commands and drill-downs.
pub struct App {
    starter: TableStarter,
    table: Box<dyn Table>,
    /// Tables switched away from, oldest first, with what they show, kept running (informer,
    /// indexes, views), so that going back to one, or drilling down into a kind already
    /// listed, shows it at once instead of listing again: 150,000 pods take seconds to list.
    parked: Vec<(Kind, NamespaceScope, Box<dyn Table>)>,
    /// The new table's tap, subscribed to when the table was switched, for the loop.
    switched_taps: Option<broadcast::Receiver<Arc<TapEntry>>>,
    /// Both pipelines' handoffs, while the table runs two for the side-by-side view.
    handoffs: Option<mpsc::Receiver<Result<Arc<Handoff>, u64>>>,
    /// What the table shows; its `filter` is the one the view opened with.
    view: ViewSpec,
    /// Views Esc goes back to, newest last.
    history: Vec<Visit>,
    state: UiState,
    header: Header,
    detail: DetailController,
    /// The log view's readers; the view itself is in the state.
    logs: LogController,
    /// The kube contexts `:ctx` switches between.
    contexts: ContextSwitcher,
    /// Services' selectors, fetched for Enter.
    selectors: SelectorFetcher,
    /// Each context's last namespaces, for the number keys.
    favourites: Favourites,
    color: bool,
    /// The last frame's layout: the page sizes of the movement keys.
    layout: Layout,
    events_seen: u64,
    rate_since: Instant,
    /// Why the kind on screen is no longer there, once discovery stops finding it; its
    /// informer is stopped from then on.
    gone: Option<Gone>,
    /// The category on screen, when the table is a category's mixed table (`:all`); the
    /// view's kind is then its first kind.
    category: Option<Category>,
    /// How many tables may be parked (see [`PARKED`]).
    park_cap: usize,
    /// The kind whose tap the delta panel and the detail's history read.
    tapped: Option<Kind>,
    /// The generation of the CRD of the custom resource on screen when its table started:
    /// its columns are that generation's.
    crd_generation: Option<i64>,
}

/// A kind the server stopped serving while its table was open.
struct Gone {
    message: String,
    since: SystemTime,
}

/// Whether `kind` is known to be no longer served: discovery ran (the built-in kinds a
/// catalog holds before it, or after it failed, say nothing of discovered ones) and does not
/// find it, or the server answered its list or watch 404.
fn not_served(catalog: &Catalog, kind: &Kind, status: &ReflectorStatus) -> bool {
    let answered_not_found = matches!(
        status.last_error.as_deref(),
        Some(ReflectorError::ListWatch(ListWatchError::Api { status, .. })) if status.code == 404
    );
    let discovered = catalog.current().resolve_resource(CRDS).is_some();
    !catalog.serves(kind) && (discovered || answered_not_found)
}

/// The resource whose changes discovery follows: served wherever discovery found more than
/// the built-in kinds.
const CRDS: &str = "customresourcedefinitions.apiextensions.k8s.io";

impl App {
    /// Starts the table of `view` (and its filter). Must run inside a Tokio runtime.
    pub fn new(
        starter: TableStarter,
        view: ViewSpec,
        panels: bool,
        mut detail: DetailController,
    ) -> Result<Self, UiError> {
        let table = starter.start(&view.kind, &view.scope, SortSpec::default())?;
        let logs = LogController::new(starter.cluster().client.clone(), LogSettings::default());
        let selectors = SelectorFetcher::new(starter.cluster().client.clone());
        detail.set_tap(table.tap().clone());
        let header = Header {
            context: starter.cluster().context.clone(),
            server: starter.cluster().server.clone(),
            resource: view.kind.to_string(),
            scope: view.scope_label(),
            sync: String::new(),
            listed: false,
            error: None,
            events_per_second: 0.0,
            stale_since: None,
            undecodable: 0,
            filter: String::new(),
            favourites: Vec::new(),
        };
        let contexts =
            ContextSwitcher::single(starter.cluster().context.clone(), starter.cluster().clone());
        let mut app = Self {
            contexts,
            selectors,
            favourites: Favourites::default(),
            starter,
            table,
            parked: Vec::new(),
            switched_taps: None,
            handoffs: None,
            view,
            history: Vec::new(),
            state: UiState::new(panels),
            header,
            detail,
            logs,
            color: !draw::no_color_requested(),
            layout: Layout::new(Rect::default(), panels),
            events_seen: 0,
            rate_since: Instant::now(),
            gone: None,
            category: None,
            park_cap: PARKED,
            tapped: None,
            crd_generation: None,
        };
        app.state.filter.input = app.view.filter.clone();
        // The loop follows the table it starts with; nothing to follow yet.
        let _ = app.refilter();
        Ok(app)
    }

    /// Switches between these contexts on `:ctx` (the kubeconfig's, or the demo's clusters)
    /// instead of only the one it started on.
    pub fn with_contexts(mut self, contexts: ContextSwitcher) -> Self {
        self.contexts = contexts;
        self
    }

    /// Remembers namespace favourites in these (the file under the XDG state directory)
    /// instead of in memory only.
    pub fn with_favourites(mut self, favourites: Favourites) -> Self {
        self.favourites = favourites;
        self.note_namespace();
        self
    }

    /// The namespace shown, if one is, becomes the context's favourite 1.
    fn note_namespace(&mut self) {
        if let NamespaceScope::One(ns) = &self.view.scope {
            self.favourites.used(&self.header.context, ns);
        }
        self.header.favourites = self.favourites.namespaces(&self.header.context).to_vec();
    }

    /// The next finished `:ctx` connection. Cancel-safe, for the event loop's `select!`.
    pub async fn context_connected(&mut self) -> Option<Connected> {
        self.contexts.connected().await
    }

    /// Starts with `notice` on the message line, until the first key (as a command's
    /// message is).
    pub fn with_notice(mut self, notice: String) -> Self {
        self.state.command.error = Some(notice);
        self
    }

    /// Uses `keymap` (the configuration's) instead of the built-in keys.
    pub fn with_keymap(mut self, keymap: Keymap) -> Self {
        self.state.keymap = Arc::new(keymap);
        self
    }

    /// Keeps and asks for logs as `settings` (the configuration's) say.
    pub fn with_log_settings(mut self, settings: LogSettings) -> Self {
        self.logs = LogController::new(self.starter.cluster().client.clone(), settings);
        self
    }

    /// Waits for the log view's next batch (or stream change) and takes it, as the event
    /// loop does; false when none can come.
    pub async fn next_logs(&mut self) -> bool {
        match self.logs.arrived().await {
            Some(arrival) => {
                self.logs.take(self.state.logs.as_mut(), arrival);
                true
            }
            None => false,
        }
    }

    /// What the table shows now, with the filter as currently typed.
    pub fn current(&self) -> ViewSpec {
        ViewSpec {
            filter: self.state.filter.input.clone(),
            ..self.view.clone()
        }
    }

    /// The category shown, when the table is a category's (`:all`).
    pub fn category(&self) -> Option<&Category> {
        self.category.as_ref()
    }

    /// The mixed table on screen, when a category is shown.
    fn mixed(&self) -> Option<&MixedTable> {
        self.table.as_any().downcast_ref::<MixedTable>()
    }

    fn mixed_mut(&mut self) -> Option<&mut MixedTable> {
        self.table.as_any_mut().downcast_mut::<MixedTable>()
    }

    /// Whether rows need a NAMESPACE column: a namespaced kind (or a category with one)
    /// across all namespaces.
    fn with_namespace(&self) -> bool {
        match &self.category {
            Some(category) => {
                self.view.scope == NamespaceScope::All
                    && category.kinds.iter().any(Kind::namespaced)
            }
            None => self.view.with_namespace(),
        }
    }

    /// The views Esc goes back to, newest last.
    pub fn history(&self) -> Vec<&ViewSpec> {
        self.history.iter().map(|visit| &visit.view).collect()
    }

    pub fn state(&self) -> &UiState {
        &self.state
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    pub fn table(&self) -> &dyn Table {
        self.table.as_ref()
    }

    /// Rows in the view on screen.
    pub fn rows(&self) -> usize {
        self.table.rows()
    }

    /// Whether an object's detail is open and its fetch has come back.
    pub fn detail_fetched(&self) -> bool {
        self.detail.fetched_shown()
    }

    /// The layout of the last frame (or of the size given to [`App::resize`]).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Lays the screen out for a terminal of `area`: page sizes follow it.
    pub fn resize(&mut self, area: Rect) {
        self.layout = Layout::new(area, self.state.panels);
    }

    /// Copies out the `height` rows on screen, selecting the first when nothing is (or the
    /// row selected before, once it is back).
    pub fn window(&mut self, height: usize) -> Window {
        self.state
            .table
            .window(self.table.as_ref(), height, Timestamp::now())
    }

    /// Brings the header up to date with the informer's status: rows listed but not
    /// watched are stale from the first status that says so until it watches again.
    pub fn update_sync(&mut self, status: &ReflectorStatus) {
        self.header.sync = describe_sync(status);
        self.state.deltas.pipeline = describe_pipeline(self.table.pipelines(), status);
        self.header.listed = status.listed;
        let stale = status.listed && status.phase != ReflectorPhase::Watching;
        // Since the informer stopped watching, as it says; else since this table saw it.
        self.header.stale_since = match self.header.stale_since {
            _ if !stale => None,
            seen => status
                .not_watching_since
                .or(seen)
                .or_else(|| Some(SystemTime::now())),
        };
        self.header.undecodable = status.undecodable_in_last_list;
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
            self.header.sync = sync;
            self.header.error = error;
            return;
        }
        if let Some(gone) = &self.gone {
            self.header.resource = format!("{} (gone)", self.view.kind);
            self.header.sync = "stopped: not served".into();
            self.header.stale_since = Some(gone.since);
            self.header.error = Some(gone.message.clone());
            return;
        }
        self.header.error = status
            .last_error
            .clone()
            .map(|err| kscope_client::explain::reflector_error(&err));
    }

    /// Runs until the person quits (or the events end, or `observer` says so), then stops
    /// the tables' informers.
    pub async fn run<B, E>(
        mut self,
        terminal: &mut Terminal<B>,
        events: E,
        observer: &mut impl Observer,
    ) -> Result<(), UiError>
    where
        B: Backend,
        UiError: From<B::Error>,
        E: Stream<Item = io::Result<Event>> + Unpin,
    {
        let result = self.event_loop(terminal, events, observer).await;
        self.table.shutdown().await;
        for (_, _, table) in self.parked {
            table.shutdown().await;
        }
        result
    }

    async fn event_loop<B, E>(
        &mut self,
        terminal: &mut Terminal<B>,
        mut events: E,
        observer: &mut impl Observer,
    ) -> Result<(), UiError>
    where
        B: Backend,
        UiError: From<B::Error>,
        E: Stream<Item = io::Result<Event>> + Unpin,
    {
        let mut version = self.table.version();
        let mut status = self.table.status();
        let mut taps = self.table.tap().subscribe();
        let mut tick = tokio::time::interval(TICK);
        let mut signals = Signals::new()?;
        // A sender that is gone would wake the loop at once forever: stop listening to it.
        let (mut rows_open, mut status_open, mut taps_open) = (true, true, true);
        let mut dirty = true;
        let mut last_draw: Option<Instant> = None;
        loop {
            let next_frame = last_draw.map_or_else(Instant::now, |t| t + FRAME);
            if dirty && Instant::now() >= next_frame {
                // Every frame reads the status: the resourceVersion moves without waking
                // this loop, and a wake-up for the other fields only asks for a frame.
                observer.started();
                self.update_sync(&status.borrow_and_update());
                self.draw(terminal)?;
                dirty = false;
                last_draw = Some(Instant::now());
                observer.finished(Step::Draw);
                if !observer.drawn(self) {
                    return Ok(());
                }
                continue;
            }
            let wake = tokio::select! {
                ev = events.next() => Wake::Input(ev.transpose()?),
                r = version.changed(), if rows_open => match r {
                    Ok(()) => Wake::Rows,
                    Err(_) => Wake::Closed(Closed::Rows),
                },
                r = status.changed(), if status_open => match r {
                    Ok(()) => Wake::Status,
                    Err(_) => Wake::Closed(Closed::Status),
                },
                entry = taps.recv(), if taps_open => match entry {
                    Err(broadcast::error::RecvError::Closed) => Wake::Closed(Closed::Taps),
                    entry => Wake::Tap(entry),
                },
                Some(fetched) = self.detail.fetched() => Wake::Fetched(fetched),
                handoff = next_handoff(&mut self.handoffs) => Wake::Handoff(handoff),
                Some(arrival) = self.logs.arrived() => Wake::Logs(arrival),
                Some(connected) = self.contexts.connected() => Wake::Context(Box::new(connected)),
                Some(selected) = self.selectors.selected() => Wake::Selector(selected),
                () = signals.recv() => Wake::Signal,
                _ = tick.tick() => Wake::Tick,
                _ = tokio::time::sleep_until(next_frame.into()), if dirty => Wake::Frame,
            };
            observer.started();
            let step = match &wake {
                Wake::Input(_) => Step::Input,
                Wake::Tap(_) => Step::Taps,
                _ => Step::Other,
            };
            let mut follow = Vec::new();
            match wake {
                Wake::Input(None) | Wake::Signal => return Ok(()),
                Wake::Input(Some(event)) => {
                    follow = self.handle_event(&event);
                    dirty = true;
                }
                Wake::Rows | Wake::Status => dirty = true,
                Wake::Tap(entry) => {
                    self.take_taps(entry, &mut taps);
                    dirty |= self.state.panels;
                }
                Wake::Handoff(Some(handoff)) => {
                    self.state.deltas.take_handoff(handoff);
                    dirty |= self.state.panels;
                }
                Wake::Handoff(None) => self.handoffs = None,
                Wake::Tick => {
                    follow = self.follow_crd_change();
                    self.update_rate();
                    let queue = self.table.queue_metrics();
                    self.state
                        .queue
                        .sample(queue.adds, queue.depth, Instant::now());
                    self.state.queue.show(&queue);
                    dirty = true;
                }
                Wake::Frame => {}
                Wake::Fetched(fetched) => {
                    self.detail.finish(fetched);
                    dirty = true;
                }
                Wake::Logs(arrival) => {
                    self.logs.take(self.state.logs.as_mut(), arrival);
                    dirty = true;
                }
                Wake::Context(connected) => {
                    follow = self.finish_context(*connected);
                    dirty = true;
                }
                Wake::Selector(selected) => {
                    follow = self.finish_selector(selected);
                    dirty = true;
                }
                Wake::Closed(Closed::Rows) => rows_open = false,
                Wake::Closed(Closed::Status) => status_open = false,
                Wake::Closed(Closed::Taps) => taps_open = false,
            }
            observer.finished(step);
            for follow in follow {
                match follow {
                    Follow::Quit => return Ok(()),
                    Follow::Table => {
                        if let Some(switched) = self.switched_taps.take() {
                            taps = switched;
                            taps_open = true;
                        }
                        status_open = true;
                        status = self.table.status();
                        status.mark_unchanged();
                    }
                    Follow::Rows => {
                        rows_open = true;
                        version = self.table.version();
                        self.state.queue.restart();
                    }
                }
            }
        }
    }

    /// A terminal event: a key maps to an action of the mode in force (an error shown
    /// stays until the next key); a resize lays the screen out again.
    pub fn handle_event(&mut self, event: &Event) -> Vec<Follow> {
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => {
                self.state.command.error = None;
                let state = &self.state;
                match map_key(&state.keymap, state.mode, state.focus, *key) {
                    Some(action) => self.apply(action),
                    None => Vec::new(),
                }
            }
            Event::Resize(width, height) => {
                self.resize(Rect::new(0, 0, *width, *height));
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// Takes this entry and every one already waiting into the delta panel.
    pub fn take_taps(
        &mut self,
        first: Result<Arc<TapEntry>, broadcast::error::RecvError>,
        taps: &mut broadcast::Receiver<Arc<TapEntry>>,
    ) {
        self.state.deltas.take_taps(first, taps);
    }

    /// A custom resource's table whose CRD changed since the table started (new printer
    /// columns, say) is listed again, with the columns as the CRD has them now.
    pub fn follow_crd_change(&mut self) -> Vec<Follow> {
        if self.category.is_some() || self.gone.is_some() {
            return Vec::new();
        }
        let now = self.starter.catalog().crd_generation(&self.view.kind);
        match (self.crd_generation, now) {
            (Some(was), Some(now)) if was != now => {
                let follow = self.restart();
                // Once per change: a restart that failed says why, and is not retried.
                self.crd_generation = Some(now);
                if !follow.is_empty() {
                    self.state.command.error = Some(format!(
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

    fn update_rate(&mut self) {
        let seen = self.table.watch_events();
        let elapsed = self.rate_since.elapsed().as_secs_f64();
        if elapsed > 0.0 {
            self.header.events_per_second = seen.saturating_sub(self.events_seen) as f64 / elapsed;
        }
        self.events_seen = seen;
        self.rate_since = Instant::now();
    }

    /// Draws one frame (see [`draw::frame`]) and keeps its layout for the next keys.
    pub fn draw<B: Backend>(&mut self, terminal: &mut Terminal<B>) -> Result<(), UiError>
    where
        UiError: From<B::Error>,
    {
        self.state.queue.show(&self.table.queue_metrics());
        let (fifo, informer) = self.table.informer_metrics();
        self.state.queue.informer = Some(InformerStats::new(fifo, &informer));
        self.header.filter = self.table.applied().to_string();
        let columns = self.table.columns();
        let parts = Parts {
            header: &self.header,
            columns: &columns,
            with_namespace: self.with_namespace(),
            now: SystemTime::now(),
            color: self.color,
        };
        let table = &self.table;
        self.layout = draw::frame(
            terminal,
            &mut self.state,
            self.detail.screen(),
            &parts,
            |state, rows| state.table.window(table.as_ref(), rows, Timestamp::now()),
        )?;
        Ok(())
    }

    /// Waits for the open detail's fetch and shows it, as the event loop does when one
    /// finishes; false when no fetch can finish any more.
    pub async fn finish_fetch(&mut self) -> bool {
        match self.detail.fetched().await {
            Some(fetched) => {
                self.detail.finish(fetched);
                true
            }
            None => false,
        }
    }

    /// The table's page: what PgUp/PgDn move by.
    fn page(&self) -> usize {
        self.layout.table_rows().max(1)
    }

    /// Applies one action in the mode in force; returns what the loop must follow.
    pub fn apply(&mut self, action: Action) -> Vec<Follow> {
        if action == Action::Quit {
            return vec![Follow::Quit];
        }
        match self.state.mode {
            InputMode::Logs => self.apply_logs(&action),
            InputMode::LogSearch => {
                let effect = self
                    .state
                    .logs
                    .as_mut()
                    .and_then(|v| v.handle_search(&action));
                if effect == Some(Effect::Close) {
                    self.state.mode = InputMode::Logs;
                }
                Vec::new()
            }
            InputMode::Detail => self.apply_detail(&action),
            InputMode::Help => self.apply_help(action),
            InputMode::Indexes => self.apply_indexes(action),
            InputMode::Filter => self.apply_filter(action),
            InputMode::DeltaFilter => {
                let table = &self.table;
                let effect = self
                    .state
                    .deltas
                    .edit_filter(&action, |name, value| table.index_keys(name, value));
                if effect == Some(Effect::Close) {
                    self.state.mode = InputMode::Normal;
                }
                Vec::new()
            }
            InputMode::Command => self.apply_command(action),
            InputMode::Contexts => {
                let effect = self.state.contexts.handle(&action);
                self.follow_effect(effect, action)
            }
            InputMode::Normal => self.apply_normal(action),
        }
    }

    fn apply_logs(&mut self, action: &Action) -> Vec<Follow> {
        let Some(view) = self.state.logs.as_mut() else {
            self.state.mode = InputMode::Normal;
            return Vec::new();
        };
        match self.logs.apply(view, action) {
            LogFollow::Open => {}
            LogFollow::Search => self.state.mode = InputMode::LogSearch,
            LogFollow::Closed => {
                self.state.logs = None;
                self.state.mode = InputMode::Normal;
            }
        }
        Vec::new()
    }

    /// `l` (or `p` for the previous instances) on the selected row: a pod's log, or the
    /// logs of every pod a workload selects.
    fn open_logs(&mut self, previous: bool) -> Vec<Follow> {
        let Some((kind, key)) = self.table.selected_object() else {
            return Vec::new();
        };
        let (namespace, name) = split_meta_namespace_key(&key);
        let Some(namespace) = namespace.map(str::to_string) else {
            self.state.command.error = Some(format!("{} have no logs", kind.plural()));
            return Vec::new();
        };
        // Pods, and the workloads whose spec.selector picks their pods.
        let workload = matches!(
            (kind.group(), kind.plural()),
            (
                "apps",
                "deployments" | "replicasets" | "statefulsets" | "daemonsets"
            ) | ("batch", "jobs")
        );
        let target = if kind == ResourceKind::Pods {
            LogTarget::Pod {
                namespace,
                name: name.to_string(),
            }
        } else if workload {
            match kind.object_path(Some(&namespace), name) {
                Ok(path) => LogTarget::Workload {
                    what: format!("{} {namespace}/{name}", kind.kind().to_lowercase()),
                    namespace,
                    path,
                },
                Err(err) => {
                    self.state.command.error = Some(err.to_string());
                    return Vec::new();
                }
            }
        } else {
            self.state.command.error = Some(format!("{} have no logs", kind.plural()));
            return Vec::new();
        };
        self.state.logs = Some(self.logs.open(target, previous));
        self.state.mode = InputMode::Logs;
        Vec::new()
    }

    fn apply_detail(&mut self, action: &Action) -> Vec<Follow> {
        if !self.detail.apply(action) {
            self.state.mode = InputMode::Normal;
        }
        Vec::new()
    }

    /// The help overlay's keys; an action bound there that it does not know is the main
    /// screen's, as with every overlay.
    fn apply_help(&mut self, action: Action) -> Vec<Follow> {
        let page = self.page();
        let effect = self.state.help.handle(&action, page);
        self.follow_effect(effect, action)
    }

    fn apply_indexes(&mut self, action: Action) -> Vec<Follow> {
        let page = self.page();
        let effect = self.state.browser.handle(&action, page);
        self.follow_effect(effect, action)
    }

    fn apply_filter(&mut self, action: Action) -> Vec<Follow> {
        let effect = self.state.filter.handle(action.clone());
        self.follow_effect(effect, action)
    }

    fn apply_command(&mut self, action: Action) -> Vec<Follow> {
        // What discovery found last: a CRD created meanwhile is a command.
        self.state.command.discovery = self.starter.catalog().current();
        let effect = self.state.command.handle(action.clone());
        self.follow_effect(effect, action)
    }

    /// Does what a component's `effect` asks; `action` is the one it handled.
    fn follow_effect(&mut self, effect: Option<Effect>, action: Action) -> Vec<Follow> {
        match effect {
            None => Vec::new(),
            Some(Effect::Close) => {
                self.state.mode = InputMode::Normal;
                Vec::new()
            }
            Some(Effect::Pass) => self.apply_normal(action),
            Some(Effect::Refilter) => self.refilter(),
            Some(Effect::ClearFilter) => self.clear_filter_or_back(),
            Some(Effect::Run(input)) => {
                self.state.mode = InputMode::Normal;
                self.run_command(&input)
            }
            Some(Effect::Browse(index)) => {
                self.browse_index(index);
                Vec::new()
            }
            Some(Effect::Filter(query)) => {
                self.state.filter.input = query;
                self.state.mode = InputMode::Normal;
                self.refilter()
            }
            Some(Effect::OpenEntry(seq)) => {
                // The panel shows the tap of the table's kind (a mixed table's selected row's).
                if self.detail.open_seq(self.table.kind().clone(), seq) {
                    self.state.mode = InputMode::Detail;
                }
                Vec::new()
            }
            Some(Effect::Refresh | Effect::Save) => Vec::new(),
            Some(Effect::SwitchContext(context)) => {
                self.state.mode = InputMode::Normal;
                self.switch_context(context);
                Vec::new()
            }
        }
    }

    /// Starts connecting to `context`; the tables switch once it answers
    /// ([`App::finish_context`]), and until then the old cluster stays on screen.
    fn switch_context(&mut self, context: String) {
        if context == self.header.context {
            self.state.command.error = Some(format!("already on context {context}"));
            return;
        }
        self.state.command.error = Some(format!("connecting to context {context}…"));
        self.contexts.connect(context);
    }

    /// A `:ctx` connection finished: on success every table of the old cluster stops (in
    /// the background) and the same kind, or the same category (`:all`) as the new cluster
    /// serves it, shows from the new one, in all namespaces if that was the scope, else in
    /// the new context's namespace; on failure nothing changes but the message saying why.
    pub fn finish_context(&mut self, connected: Connected) -> Vec<Follow> {
        let Some((context, result)) = self.contexts.finish(connected) else {
            return Vec::new();
        };
        let Switched {
            cluster,
            catalog,
            catalog_watch,
            discovery_error,
        } = match result {
            Ok(switched) => switched,
            Err(err) => {
                self.state.command.error = Some(format!("context {context}: {err}"));
                return Vec::new();
            }
        };
        let starter = self
            .starter
            .for_cluster(cluster.clone(), catalog, catalog_watch);
        let scope = match &self.view.scope {
            NamespaceScope::All => NamespaceScope::All,
            NamespaceScope::One(_) => NamespaceScope::One(cluster.default_namespace.clone()),
        };
        // A category is looked up again: the new cluster may serve other kinds in it.
        let category = self.category.as_ref().map(|c| {
            (
                c.name.clone(),
                Category::discovered(&c.name, &starter.catalog().current()),
            )
        });
        let kind = match &category {
            Some((_, Some(found))) => found.kinds[0].clone(),
            Some((name, None)) => {
                self.state.command.error = Some(format!(
                    "context {context}: it serves nothing in the category {name}"
                ));
                return Vec::new();
            }
            None => self.view.kind.clone(),
        };
        let to = ViewSpec::new(kind, scope);
        let table = match starter.start(&to.kind, &to.scope, SortSpec::default()) {
            Ok(table) => table,
            Err(err) => {
                self.state.command.error = Some(format!("context {context}: {err}"));
                return Vec::new();
            }
        };
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
        self.starter = starter;
        self.detail = DetailController::new(cluster.client.clone(), None);
        self.logs = self.logs.for_client(cluster.client.clone());
        self.selectors = SelectorFetcher::new(cluster.client.clone());
        self.history.clear();
        self.header.context = cluster.context.clone();
        self.header.server = cluster.server.clone();
        self.state.command.error = Some(match discovery_error {
            None => format!("switched to context {context}"),
            Some(err) => format!("switched to context {context}; only the built-in kinds: {err}"),
        });
        self.category = None;
        self.load_deltas();
        let follow = self.shown(to.clone());
        match category {
            // The first kind's table, just started, is one of the category's.
            Some((_, Some(found))) => self.show_category(found, to.scope, false),
            _ => follow,
        }
    }

    /// The main screen's actions: movement goes to the focused panel, the table's own keys
    /// to the table, and the rest are the screen's.
    fn apply_normal(&mut self, action: Action) -> Vec<Follow> {
        let deltas_focused = self.state.panels && self.state.focus == Focus::Deltas;
        if deltas_focused && (is_movement(&action) || action == Action::OpenDeltaDiff) {
            let page = self.layout.delta_rows();
            let effect = self.state.deltas.handle(&action, page);
            return self.follow_effect(effect, action);
        }
        let (page, with_namespace) = (self.page(), self.with_namespace());
        let table = self.table.as_ref();
        let handled = self
            .state
            .table
            .handle(&action, table, page, with_namespace)
            .is_none();
        // In a category's table the panels follow the selected row's kind.
        let mut follow = self.follow_row_kind();
        if handled {
            // The selected object's history is kept beyond the tap's ring from now on.
            if let Some((_, key)) = self.table.selected_object() {
                self.table.tap().keep_history(&key);
            }
        } else {
            follow.extend(self.apply_screen(action));
        }
        follow
    }

    /// Shows the deltas of the selected row's kind once the selection of a category's
    /// table moved to a row of another kind.
    fn follow_row_kind(&mut self) -> Vec<Follow> {
        if self.category.is_none() || self.tapped.as_ref() == Some(self.table.kind()) {
            return Vec::new();
        }
        self.load_deltas();
        vec![Follow::Table]
    }

    /// The main screen's keys that belong to no component: they open a mode or a panel,
    /// or what the selected row holds.
    fn apply_screen(&mut self, action: Action) -> Vec<Follow> {
        let state = &mut self.state;
        match action {
            Action::DrillDown => return self.drill_down(),
            Action::JumpToOwner => return self.jump_to_owner(),
            Action::OpenDetail => {
                if let Some((kind, key)) = self.table.selected_object() {
                    return self.open_detail(kind, &key);
                }
            }
            Action::Describe => {
                if let Some((kind, key)) = self.table.selected_object() {
                    self.detail.open_on(kind, &key, DetailTab::Describe);
                    self.state.mode = InputMode::Detail;
                }
            }
            Action::FilterClear => return self.clear_filter_or_back(),
            Action::OpenLogs => return self.open_logs(false),
            Action::OpenPreviousLogs => return self.open_logs(true),
            Action::OpenDeltaFilter => state.mode = InputMode::DeltaFilter,
            Action::ClearDeltaFilter => state.deltas.clear_filter(),
            Action::OpenFilter => state.mode = InputMode::Filter,
            Action::OpenCommand => {
                state.mode = InputMode::Command;
                state.command.input.clear();
            }
            Action::FavouriteNamespace(n) => return self.favourite_namespace(n),
            Action::TogglePanels => {
                state.panels = !state.panels;
                state.focus = Focus::Table;
                self.layout = Layout::new(self.layout.area, state.panels);
            }
            Action::FocusNext => {
                state.focus = match state.focus {
                    Focus::Table if state.panels => Focus::Deltas,
                    _ => Focus::Table,
                };
            }
            Action::TogglePause => state.deltas.toggle_pause(),
            Action::NextFifo => {
                let (fifo, compare) = self.table.pipelines();
                let at = FifoKind::ALL.iter().position(|f| *f == fifo).unwrap_or(0);
                let next = FifoKind::ALL[(at + 1) % FifoKind::ALL.len()];
                // Side by side stays on, against the FIFO just left if it was the other.
                let compare = compare.map(|c| if c == next { fifo } else { c });
                return self.restart_with(next, compare);
            }
            Action::ToggleSideBySide => {
                let (fifo, compare) = self.table.pipelines();
                let compare = match (compare, fifo) {
                    (Some(_), _) => None,
                    (None, FifoKind::Classic) => Some(FifoKind::Real),
                    (None, _) => Some(FifoKind::Classic),
                };
                return self.restart_with(fifo, compare);
            }
            Action::ToggleIndexes => {
                state.mode = InputMode::Indexes;
                state.browser.names = self.table.index_names();
                let current = state.browser.current;
                self.browse_index(current);
            }
            Action::ToggleHelp => state.mode = InputMode::Help,
            _ => {}
        }
        Vec::new()
    }

    /// Enter: the selected row's contents (a namespace or node's pods, a deployment's
    /// replicasets...), or its detail when it holds nothing to open.
    /// In a category's table, Enter does what it does in the row's own kind's table.
    fn drill_down(&mut self) -> Vec<Follow> {
        let Some((kind, key)) = self.table.selected_object() else {
            return Vec::new();
        };
        // The view Enter leads from: the row's kind's, without the category's filter.
        let from = match &self.category {
            Some(_) => ViewSpec::new(kind.clone(), self.view.scope.clone()),
            None => self.current(),
        };
        let discovery = self.starter.catalog().current();
        if let Some(to) = nav::crd_resources(&from, &key, &discovery) {
            return self.switch(to, true);
        }
        if (kind.group(), kind.plural()) == ("", "services") {
            let (namespace, name) = split_meta_namespace_key(&key);
            if let Some(namespace) = namespace {
                self.state.command.error =
                    Some(format!("reading service {namespace}/{name}'s selector…"));
                self.selectors.fetch(kind, namespace.into(), name.into());
                return Vec::new();
            }
        }
        match nav::drill_down(&from, &key, self.starter.indexes(), &discovery) {
            Ok(Some(to)) => self.switch(to, true),
            Ok(None) => self.open_detail(kind, &key),
            Err(err) => {
                self.state.command.error = Some(err.to_string());
                Vec::new()
            }
        }
    }

    /// `J`: the selected object's controller (its owner reference marked controller),
    /// selected in its kind's table in the object's namespace; Esc comes back.
    fn jump_to_owner(&mut self) -> Vec<Follow> {
        let (Some(row), Some((_, key))) = (self.table.selected(), self.table.selected_object())
        else {
            return Vec::new();
        };
        let Some(owner) = self.table.controller_owner(&row) else {
            self.state.command.error = Some(format!("{key} has no controller"));
            return Vec::new();
        };
        let Some((kind, name)) = owner.split_once('/') else {
            return Vec::new();
        };
        let discovery = self.starter.catalog().current();
        let Ok(kind) = discovery.resolve(kind) else {
            self.state.command.error = Some(format!(
                "{key} is controlled by {owner}, a kind the server does not serve"
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
        let follow = self.switch(ViewSpec::new(kind, scope), true);
        self.state.table.reselect(Some(Key::from(owner_key)));
        follow
    }

    /// A Service's selector arrived: its pods, through label indexes (added, and backfilled,
    /// for labels none reads); or why it selects none.
    pub fn finish_selector(&mut self, selected: Selected) -> Vec<Follow> {
        let Some(selected) = self.selectors.finish(selected) else {
            return Vec::new();
        };
        let service = format!("service {}/{}", selected.namespace, selected.name);
        let selector = match selected.result {
            Ok(selector) => selector,
            Err(err) => {
                self.state.command.error = Some(format!("{service}: {err}"));
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
        self.state.command.error = None;
        let mut follow = Vec::new();
        for definition in added {
            follow.extend(self.add_index(definition));
        }
        let filter = to.filter.clone();
        follow.extend(self.switch(to, true));
        if self
            .state
            .command
            .error
            .as_deref()
            .is_none_or(|e| e.starts_with(":index"))
        {
            self.state.command.error = Some(format!("pods {service} selects: {filter}"));
        }
        follow
    }

    /// Waits (at most `patience`) for the Service selector asked for by Enter and follows
    /// it, as the event loop does; false when none came.
    pub async fn next_selector(&mut self, patience: Duration) -> bool {
        match tokio::time::timeout(patience, self.selectors.selected()).await {
            Ok(Some(selected)) => {
                self.finish_selector(selected);
                true
            }
            _ => false,
        }
    }

    /// The number keys: the kind in favourite namespace `n`, or in all namespaces for 0.
    fn favourite_namespace(&mut self, n: u8) -> Vec<Follow> {
        let scope = match n {
            0 => NamespaceScope::All,
            n => match self.header.favourites.get(usize::from(n) - 1) {
                Some(ns) => NamespaceScope::One(ns.clone()),
                None => {
                    self.state.command.error = Some(format!(
                        "no favourite namespace {n} yet: namespaces shown with :pods -n NS or Enter on a namespace become favourites"
                    ));
                    return Vec::new();
                }
            },
        };
        if let Some(category) = self.category.clone() {
            if scope == self.view.scope {
                return Vec::new();
            }
            return self.show_category(category, scope, true);
        }
        if !self.view.kind.namespaced() {
            self.state.command.error = Some(format!(
                "{} are cluster-scoped: no namespace applies",
                self.view.kind
            ));
            return Vec::new();
        }
        if scope == self.view.scope {
            return Vec::new();
        }
        self.switch(ViewSpec::new(self.view.kind.clone(), scope), true)
    }

    /// Opens the detail of `key` of `kind`: YAML fetched now, and its history.
    fn open_detail(&mut self, kind: Kind, key: &Key) -> Vec<Follow> {
        self.detail.open(kind, key);
        self.state.mode = InputMode::Detail;
        Vec::new()
    }

    /// Runs a command line typed after `:`; an error is shown and changes nothing.
    fn run_command(&mut self, input: &str) -> Vec<Follow> {
        match command::parse(input, &self.state.command.discovery) {
            Ok(Command::Quit) => vec![Follow::Quit],
            Ok(Command::Fifo { fifo, compare }) => self.restart_with(fifo, compare),
            Ok(Command::Index(definition)) => self.add_index(definition),
            Ok(Command::Context(Some(context))) => {
                self.switch_context(context);
                Vec::new()
            }
            Ok(Command::Context(None)) => {
                match self.contexts.contexts() {
                    Ok((names, _)) => {
                        let current = Some(self.header.context.clone());
                        self.state.contexts = ContextPicker::new(names, current);
                        self.state.mode = InputMode::Contexts;
                    }
                    Err(err) => self.state.command.error = Some(format!(":ctx  {err}")),
                }
                Vec::new()
            }
            Ok(Command::Show { kind, scope }) => {
                let scope = scope.unwrap_or_else(|| self.view.scope.clone());
                let to = ViewSpec::new(kind, scope);
                let shown = self.category.is_none() && self.gone.is_none();
                if shown && to.kind == self.view.kind && to.scope == self.view.scope {
                    // Already shown: the command asks for all of it again.
                    self.view.filter.clear();
                    self.state.filter.input.clear();
                    self.refilter()
                } else {
                    self.switch(to, true)
                }
            }
            Ok(Command::ShowCategory { category, scope }) => {
                let scope = scope.unwrap_or_else(|| self.view.scope.clone());
                if self.category.as_ref() == Some(&category) && scope == self.view.scope {
                    self.view.filter.clear();
                    self.state.filter.input.clear();
                    self.refilter()
                } else {
                    self.show_category(category, scope, true)
                }
            }
            Err(err) => {
                self.state.command.error = Some(format!(":{}  {err}", input.trim()));
                Vec::new()
            }
        }
    }

    /// Esc: first drops the filter typed over the view's own (a drill-down's `node=n1`
    /// stays), then goes back to the previous view. In the filter bar it drops the typed
    /// filter and closes the bar, never going back.
    fn clear_filter_or_back(&mut self) -> Vec<Follow> {
        let typing = self.state.mode == InputMode::Filter;
        self.state.mode = InputMode::Normal;
        if self.state.filter.input != self.view.filter {
            self.state.filter.input = self.view.filter.clone();
            return self.refilter();
        }
        if typing {
            return Vec::new();
        }
        if let Some(visit) = self.history.pop() {
            let mut follow = match visit.category {
                Some(category) => self.show_category(category, visit.view.scope.clone(), false),
                None => self.switch(visit.view, false),
            };
            if visit.typed != self.view.filter {
                self.state.filter.input = visit.typed;
                follow.extend(self.refilter());
            }
            self.state.table.reselect(visit.selected);
            follow
        } else if !self.view.filter.is_empty() {
            self.view.filter.clear();
            self.state.filter.input.clear();
            self.refilter()
        } else {
            Vec::new()
        }
    }

    /// Replaces the table with one showing `to`, remembering the current view for Esc when
    /// `remember`: the same table when it shows the same kind and scope, a parked one, or a
    /// new one. A new informer starts before the old one is parked: if it cannot start, the
    /// error is shown and nothing changes.
    fn switch(&mut self, to: ViewSpec, remember: bool) -> Vec<Follow> {
        // A table whose kind is gone is never reused: the kind back is a fresh informer.
        let same = to.kind == self.view.kind
            && to.scope == self.view.scope
            && self.gone.is_none()
            && self.category.is_none();
        // A category's table is taken apart (its kinds' tables parked, to be reused) once
        // the table to show is known to be there.
        let in_category = to.scope == self.view.scope
            && self
                .mixed()
                .is_some_and(|m| m.kinds().any(|kind| *kind == to.kind));
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
            (false, None) => match self.starter.start(&to.kind, &to.scope, SortSpec::default()) {
                Ok(table) => Some(table),
                Err(err) => {
                    self.state.command.error = Some(err.to_string());
                    return Vec::new();
                }
            },
        };
        self.remember(remember);
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
            self.load_deltas();
        }
        self.category = None;
        self.shown(to)
    }

    /// Keeps the view on screen for Esc, when `remember`.
    fn remember(&mut self, remember: bool) {
        if !remember {
            return;
        }
        self.history.push(Visit {
            view: self.view.clone(),
            category: self.category.clone(),
            typed: self.state.filter.input.clone(),
            selected: self.table.selected(),
        });
        if self.history.len() > HISTORY {
            self.history.remove(0);
        }
    }

    /// Parks the kinds' tables of the category's table on screen, if one is.
    fn park_members(&mut self) {
        let scope = self.view.scope.clone();
        let members = self.mixed_mut().map(MixedTable::take_members);
        for (kind, table) in members.into_iter().flatten() {
            self.parked.push((kind, scope.clone(), table));
        }
    }

    /// Stops the oldest parked tables beyond the cap.
    fn trim_parked(&mut self) {
        while self.parked.len() > self.park_cap {
            let (_, _, oldest) = self.parked.remove(0);
            tokio::spawn(oldest.shutdown());
        }
    }

    /// Shows every kind of `category` in `scope` in one table, remembering the current view
    /// for Esc when `remember`. Each kind's table is the one already running (on screen,
    /// in a category's table or parked) where there is one, else a new one; a kind that
    /// cannot start is named in the header, and the others show.
    fn show_category(
        &mut self,
        category: Category,
        scope: NamespaceScope,
        remember: bool,
    ) -> Vec<Follow> {
        let old_scope = self.view.scope.clone();
        let single = (self.category.is_none() && self.gone.is_none() && old_scope == scope)
            .then(|| self.view.kind.clone())
            .filter(|kind| category.kinds.contains(kind));
        self.park_members();
        let mut members: Vec<(Kind, Box<dyn Table>)> = Vec::new();
        let mut failed = Vec::new();
        for kind in &category.kinds {
            if single.as_ref() == Some(kind) {
                continue;
            }
            let parked = self
                .parked
                .iter()
                .position(|(k, s, _)| k == kind && *s == scope);
            match parked {
                Some(at) => members.push((kind.clone(), self.parked.remove(at).2)),
                None => match self.starter.start(kind, &scope, SortSpec::default()) {
                    Ok(table) => members.push((kind.clone(), table)),
                    Err(err) => failed.push((kind.clone(), err.to_string())),
                },
            }
        }
        self.remember(remember);
        let discovery = self.starter.catalog().current();
        let mixed = MixedTable::new(
            category.clone(),
            members,
            failed,
            discovery,
            SortSpec::default(),
        );
        let old = std::mem::replace(&mut self.table, Box::new(mixed));
        match (&single, self.category.is_some() || self.gone.is_some()) {
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
        self.load_deltas();
        let first = category.kinds.first().cloned();
        self.category = Some(category);
        let kind = first.unwrap_or_else(|| self.view.kind.clone());
        self.shown(ViewSpec::new(kind, scope))
    }

    /// The screen follows the table now shown, of `to`.
    fn shown(&mut self, to: ViewSpec) -> Vec<Follow> {
        self.view.scope = to.scope.clone();
        self.note_namespace();
        let state = &mut self.state;
        state.mode = InputMode::Normal;
        state.filter.input = to.filter.clone();
        state.filter.error = None;
        state.browser = IndexBrowser::default();
        (self.header.resource, self.header.scope) = match &self.category {
            Some(category) => {
                let namespaced = category.kinds.iter().any(Kind::namespaced);
                let scope = match (&to.scope, namespaced) {
                    (_, false) => "cluster".to_string(),
                    (NamespaceScope::All, true) => super::nav::ALL_NAMESPACES.to_string(),
                    (NamespaceScope::One(ns), true) => format!("namespace {ns}"),
                };
                (category.name.clone(), scope)
            }
            None => (to.kind.to_string(), to.scope_label()),
        };
        self.header.sync = "starting".into();
        self.header.listed = false;
        self.header.error = None;
        self.header.stale_since = None;
        self.header.undecodable = 0;
        self.gone = None;
        self.crd_generation = self.starter.catalog().crd_generation(&to.kind);
        self.view = to;
        self.events_seen = self.table.watch_events();
        self.rate_since = Instant::now();
        let with_namespace = self.with_namespace();
        self.state
            .table
            .switched(self.table.as_ref(), with_namespace, None);
        let _ = self.refilter();
        vec![Follow::Table, Follow::Rows]
    }

    /// Restarts the table's informer with `fifo`, and `compare`'s pipeline beside it on the
    /// same watch stream (tables started from here on run them too). A second pipeline
    /// added to a running informer would start mid-stream, without the initial state; a
    /// restart puts both on one stream from its first event, for the price of one relist.
    /// If the new informer cannot start, the error is shown and nothing changes.
    fn restart_with(&mut self, fifo: FifoKind, compare: Option<FifoKind>) -> Vec<Follow> {
        self.starter.set_fifo(fifo, compare);
        self.restart()
    }

    /// `:index`: the index goes to every table started from here on, and at once to the
    /// table on screen and the parked ones it applies to, backfilled from their stores. A
    /// JSONPath index on a discovered kind needs the objects, which the store does not keep:
    /// that table's informer is restarted (a relist), and a parked one is dropped, to start
    /// anew when it is next shown. The outcome is said in the status line.
    fn add_index(&mut self, definition: IndexDefinition) -> Vec<Follow> {
        let name = definition.name.clone();
        self.state.command.error = None;
        if let Err(err) = self.starter.add_index(definition.clone()) {
            self.state.command.error = Some(format!(":index {name}  {err}"));
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
            return self.add_category_index(definition, &category, relist);
        }
        let kind = self.view.kind.clone();
        if !definition.applies_to(&kind, &discovery) {
            self.state.command.error = Some(format!(
                ":index {name} added ({}); it does not apply to {kind}",
                definition.source
            ));
            return Vec::new();
        }
        if relist {
            let follow = self.restart();
            if self.state.command.error.is_none() {
                self.state.command.error = Some(format!(
                    ":index {name} added: relisting {kind}, whose store keeps no object to \
                     evaluate {} on",
                    definition.source
                ));
            }
            return follow;
        }
        if let Err(err) = self.table.add_index(definition) {
            self.state.command.error = Some(format!(":index {name}  {err}"));
            return Vec::new();
        }
        let values = self.table.value_counts(&name).len();
        self.state.command.error = Some(format!(
            ":index {name} added to {kind} and backfilled: {values} values"
        ));
        let with_namespace = self.with_namespace();
        let selected = self.table.selected();
        self.state
            .table
            .switched(self.table.as_ref(), with_namespace, selected);
        let _ = self.refilter();
        vec![Follow::Table, Follow::Rows]
    }

    /// `:index` on a category's table: added to the kinds it applies to, backfilled, or
    /// relisting them all for a JSONPath index.
    fn add_category_index(
        &mut self,
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
            self.state.command.error = Some(format!(
                ":index {name} added ({}); it applies to no kind of {}",
                definition.source, category.name
            ));
            return Vec::new();
        }
        if relist {
            let follow = self.restart();
            if self.state.command.error.is_none() {
                self.state.command.error = Some(format!(
                    ":index {name} added: relisting the kinds of {}, whose stores keep no \
                     object to evaluate {} on",
                    category.name, definition.source
                ));
            }
            return follow;
        }
        if let Err(err) = self.table.add_index(definition) {
            self.state.command.error = Some(format!(":index {name}  {err}"));
            return Vec::new();
        }
        let values = self.table.value_counts(&name).len();
        self.state.command.error = Some(format!(
            ":index {name} added to the kinds of {} and backfilled: {values} values",
            category.name
        ));
        let _ = self.refilter();
        vec![Follow::Table, Follow::Rows]
    }

    /// Restarts the table on screen with a new informer from the starter (a relist); a
    /// category's table with a new one for each of its kinds, keeping its filter.
    fn restart(&mut self) -> Vec<Follow> {
        if let Some(category) = self.category.clone() {
            let members = self.mixed_mut().map(MixedTable::take_members);
            for (_, table) in members.into_iter().flatten() {
                tokio::spawn(table.shutdown());
            }
            let typed = self.state.filter.input.clone();
            let scope = self.view.scope.clone();
            let mut follow = self.show_category(category, scope, false);
            self.state.filter.input = typed;
            follow.extend(self.refilter());
            return follow;
        }
        let sort = self.state.table.sort;
        let table = match self.starter.start(&self.view.kind, &self.view.scope, sort) {
            Ok(table) => table,
            Err(err) => {
                self.state.command.error = Some(err.to_string());
                return Vec::new();
            }
        };
        let selected = self.table.selected();
        let old = std::mem::replace(&mut self.table, table);
        tokio::spawn(old.shutdown());
        self.crd_generation = self.starter.catalog().crd_generation(&self.view.kind);
        self.load_deltas();
        self.header.sync = "starting".into();
        self.header.listed = false;
        self.header.error = None;
        self.header.stale_since = None;
        self.events_seen = self.table.watch_events();
        let with_namespace = self.with_namespace();
        self.state
            .table
            .switched(self.table.as_ref(), with_namespace, selected);
        let _ = self.refilter();
        vec![Follow::Table, Follow::Rows]
    }

    /// Shows the new table's latest tap entries in the delta panel, and has the loop follow
    /// its tap from here (subscribed before the entries are read: none is missed, and
    /// [`App::take_taps`] skips those already shown).
    fn load_deltas(&mut self) {
        self.tapped = Some(self.table.kind().clone());
        let tap = self.table.tap();
        self.switched_taps = Some(tap.subscribe());
        let entries = tap.snapshot();
        let keep = entries.len().saturating_sub(DELTA_CAPACITY);
        self.state
            .deltas
            .replace(entries[keep..].iter().map(DeltaLine::from_entry));
        self.detail.set_tap(tap.clone());
        // A compared table's two pipelines side by side, from their next handoffs on.
        let side_by_side = match self.table.pipelines() {
            (fifo, Some(other)) => SideBySide::new(fifo, other).ok(),
            (_, None) => None,
        };
        self.handoffs = side_by_side
            .is_some()
            .then(|| merge_handoffs(self.table.subscribe_handoffs()));
        self.state.deltas.side_by_side = side_by_side;
    }

    /// Shows index number `current` in the browser, with its values counted now.
    fn browse_index(&mut self, current: usize) {
        let browser = &mut self.state.browser;
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
    fn refilter(&mut self) -> Vec<Follow> {
        let Some(query) = self.state.filter.parse() else {
            return Vec::new();
        };
        match self.table.set_query(query, self.state.table.sort) {
            Ok(true) => vec![Follow::Rows],
            Ok(false) => Vec::new(),
            Err(err) => {
                self.state.filter.error = Some(err.to_string());
                Vec::new()
            }
        }
    }
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

/// The next handoff of a compared table, or never without one.
async fn next_handoff(
    handoffs: &mut Option<mpsc::Receiver<Result<Arc<Handoff>, u64>>>,
) -> Option<Result<Arc<Handoff>, u64>> {
    match handoffs {
        Some(receiver) => receiver.recv().await,
        None => std::future::pending().await,
    }
}

/// The keys that move a selection or a scroll position.
fn is_movement(action: &Action) -> bool {
    matches!(
        action,
        Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom
    )
}

/// SIGTERM, SIGINT and SIGHUP end the loop like `q`, so the terminal is restored on the way
/// out (Ctrl-C itself arrives as a key in raw mode; SIGINT comes from `kill -INT`).
struct Signals {
    term: tokio::signal::unix::Signal,
    interrupt: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Self {
            term: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    /// The next signal. Cancel-safe, for the loop's `select!`.
    async fn recv(&mut self) {
        tokio::select! {
            _ = self.term.recv() => {}
            _ = self.interrupt.recv() => {}
            _ = self.hangup.recv() => {}
        }
    }
}
