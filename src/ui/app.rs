//! The event loop: input, row changes, tap entries and a clock tick wake it; actions update
//! the state; a frame is drawn from a copied window at most 60 times a second, and only when
//! something changed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use crossterm::event::{self, Event, KeyEventKind};
use ratatui::backend::Backend;
use ratatui::{DefaultTerminal, Terminal};
use tokio::sync::{broadcast, mpsc};

use crate::cluster::NamespaceScope;
use crate::commands::CommandError;
use crate::index_views::live::{SortSpec, Window};
use crate::informers::keys::Key;
use crate::informers::reflector::{ReflectorPhase, ReflectorStatus};
use crate::informers::tap::TapEntry;
use crate::resources::{ResourceKind, Timestamp};

use super::UiError;
use super::action::{Action, Focus, InputMode};
use super::command::{self, Command};
use super::detail::{DetailController, Fetched};
use super::draw::{self, Header, QueueStats, Screen};
use super::keymap::map_key;
use super::layout::Layout;
use super::nav::{self, HISTORY, ViewSpec};
use super::state::{DELTA_CAPACITY, DeltaLine, IndexBrowser, UiState};
use super::table::{Table, TableStarter};
use crate::config::keys::Keymap;

/// At most 60 frames per second.
const FRAME: Duration = Duration::from_micros(16_667);
/// Ages and the event rate change with time alone.
const TICK: Duration = Duration::from_secs(1);

/// The informer's progress in a few words, for the header (its error is shown apart).
pub fn describe_sync(status: &ReflectorStatus) -> String {
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
    Tick,
    Frame,
    Fetched(Fetched),
    Closed(Stream),
}

/// A background notifier whose sender went away.
enum Stream {
    Rows,
    Status,
    Taps,
}

/// A view left for another, as Esc brings it back.
struct Visit {
    view: ViewSpec,
    /// The filter as typed when it was left (the view's own one, or more).
    typed: String,
    selected: Option<Key>,
}

/// Tables kept running after they were switched away from.
const PARKED: usize = 2;

/// The running TUI: one table at a time, swapped by commands and drill-downs.
pub struct App {
    starter: TableStarter,
    table: Box<dyn Table>,
    /// Tables switched away from, oldest first, with what they show, kept running (informer,
    /// indexes, views), so that going back to one, or drilling down into a kind already
    /// listed, shows it at once instead of listing again: 150,000 pods take seconds to list.
    parked: Vec<(ResourceKind, NamespaceScope, Box<dyn Table>)>,
    /// The new table's tap, subscribed to when the table was switched, for the loop.
    switched_taps: Option<broadcast::Receiver<Arc<TapEntry>>>,
    /// What the table shows; its `filter` is the one the view opened with.
    view: ViewSpec,
    /// Views Esc goes back to, newest last.
    history: Vec<Visit>,
    /// The row to select once it shows up in a view gone back to; any movement forgets it.
    reselect: Option<Key>,
    /// Set when the view on screen was replaced, so the loop watches the new one's version.
    rebuilt: bool,
    /// Set when the table was replaced, so the loop watches the new informer's status.
    switched: bool,
    state: UiState,
    header: Header,
    detail: DetailController,
    color: bool,
    quit: bool,
    events_seen: u64,
    rate_since: Instant,
}

impl App {
    /// Starts the table of `view` (and its filter). Must run inside a Tokio runtime.
    pub fn new(
        starter: TableStarter,
        view: ViewSpec,
        panels: bool,
        mut detail: DetailController,
    ) -> Result<Self, UiError> {
        let table = starter.start(view.kind, &view.scope, SortSpec::default())?;
        detail.set_tap(table.tap().clone());
        let header = Header {
            context: starter.cluster().context.clone(),
            server: starter.cluster().server.clone(),
            resource: view.kind.plural().to_string(),
            scope: view.scope_label(),
            sync: String::new(),
            listed: false,
            error: None,
            events_per_second: 0.0,
        };
        let mut app = Self {
            starter,
            table,
            parked: Vec::new(),
            switched_taps: None,
            view,
            history: Vec::new(),
            reselect: None,
            rebuilt: false,
            switched: false,
            state: UiState::new(panels),
            header,
            detail,
            color: !draw::no_color_requested(),
            quit: false,
            events_seen: 0,
            rate_since: Instant::now(),
        };
        app.state.filter.input = app.view.filter.clone();
        app.refilter();
        Ok(app)
    }

    /// Uses `keymap` (the configuration's) instead of the built-in keys.
    pub fn with_keymap(mut self, keymap: Keymap) -> Self {
        self.state.keymap = Arc::new(keymap);
        self
    }

    /// What the table shows now, with the filter as currently typed.
    pub fn current(&self) -> ViewSpec {
        ViewSpec {
            filter: self.state.filter.input.clone(),
            ..self.view.clone()
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

    /// Whether a command or key asked to quit.
    pub fn quitting(&self) -> bool {
        self.quit
    }

    /// Copies out the `height` rows on screen, selecting the first when nothing is (or the
    /// row selected before, once it is back).
    pub fn window(&mut self, height: usize) -> Window {
        if let Some(key) = &self.reselect
            && self.table.select_key(key)
        {
            self.reselect = None;
        }
        self.table
            .capture(&mut self.state, height, Timestamp::now())
    }

    /// Brings the header up to date with the informer's status.
    pub fn update_sync(&mut self, status: &ReflectorStatus) {
        self.header.sync = describe_sync(status);
        self.header.listed = status.listed;
        self.header.error = status
            .last_error
            .clone()
            .map(|err| CommandError::Sync(err).to_string());
    }

    /// Runs until the person quits, then stops the table's informer. Input is read on its own
    /// thread, which ends with the loop.
    pub async fn run(mut self, terminal: &mut DefaultTerminal) -> Result<(), UiError> {
        let (input_tx, mut input) = mpsc::unbounded_channel();
        let stop = Arc::new(AtomicBool::new(false));
        let reader_stop = stop.clone();
        let reader = std::thread::spawn(move || read_input(&input_tx, &reader_stop));
        let result = self.event_loop(terminal, &mut input).await;
        stop.store(true, Ordering::Relaxed);
        // The reader polls with a short timeout, so this returns promptly.
        let _ = reader.join();
        self.table.shutdown().await;
        for (_, _, table) in self.parked {
            table.shutdown().await;
        }
        result
    }

    async fn event_loop(
        &mut self,
        terminal: &mut DefaultTerminal,
        input: &mut mpsc::UnboundedReceiver<std::io::Result<Event>>,
    ) -> Result<(), UiError> {
        let mut version = self.table.version();
        let mut status = self.table.status();
        let mut taps = self.table.tap().subscribe();
        let mut tick = tokio::time::interval(TICK);
        // A sender that is gone would wake the loop at once forever: stop listening to it.
        let (mut rows_open, mut status_open, mut taps_open) = (true, true, true);
        let mut dirty = true;
        let mut last_draw: Option<Instant> = None;
        while !self.quit {
            let next_frame = last_draw.map_or_else(Instant::now, |t| t + FRAME);
            if dirty && Instant::now() >= next_frame {
                // Every frame reads the status: the resourceVersion moves without waking
                // this loop, and a wake-up for the other fields only asks for a frame.
                self.update_sync(&status.borrow_and_update());
                self.draw(terminal)?;
                dirty = false;
                last_draw = Some(Instant::now());
                continue;
            }
            let wake = tokio::select! {
                ev = input.recv() => Wake::Input(ev.transpose()?),
                r = version.changed(), if rows_open => match r {
                    Ok(()) => Wake::Rows,
                    Err(_) => Wake::Closed(Stream::Rows),
                },
                r = status.changed(), if status_open => match r {
                    Ok(()) => Wake::Status,
                    Err(_) => Wake::Closed(Stream::Status),
                },
                entry = taps.recv(), if taps_open => match entry {
                    Err(broadcast::error::RecvError::Closed) => Wake::Closed(Stream::Taps),
                    entry => Wake::Tap(entry),
                },
                Some(fetched) = self.detail.fetched() => Wake::Fetched(fetched),
                _ = tick.tick() => Wake::Tick,
                _ = tokio::time::sleep_until(next_frame.into()), if dirty => Wake::Frame,
            };
            match wake {
                Wake::Input(None) => break,
                Wake::Input(Some(Event::Key(key))) => {
                    if key.kind != KeyEventKind::Release {
                        // An error is shown until the next key.
                        self.state.command.error = None;
                        if let Some(action) =
                            map_key(&self.state.keymap, self.state.mode, self.state.focus, key)
                        {
                            self.apply(action);
                        }
                    }
                    dirty = true;
                }
                Wake::Input(Some(_)) => dirty = true,
                Wake::Rows | Wake::Status => dirty = true,
                Wake::Tap(entry) => {
                    self.take_taps(entry, &mut taps);
                    dirty |= self.state.panels;
                }
                Wake::Tick => {
                    self.update_rate();
                    let queue = self.table.queue_metrics();
                    self.state
                        .queue
                        .sample(queue.adds, queue.depth, Instant::now());
                    dirty = true;
                }
                Wake::Frame => {}
                Wake::Fetched(fetched) => {
                    self.detail.finish(fetched);
                    dirty = true;
                }
                Wake::Closed(Stream::Rows) => rows_open = false,
                Wake::Closed(Stream::Status) => status_open = false,
                Wake::Closed(Stream::Taps) => taps_open = false,
            }
            if self.switched {
                if let Some(switched) = self.switched_taps.take() {
                    taps = switched;
                    taps_open = true;
                }
                status_open = true;
                status = self.table.status();
                status.mark_unchanged();
                dirty = true;
                self.switched = false;
            }
            if self.rebuilt {
                rows_open = true;
                version = self.table.version();
                self.rebuilt = false;
                self.state.queue.restart();
            }
        }
        Ok(())
    }

    /// Takes this entry and every one already waiting, converting only the newest that fit.
    /// Public for the TUI benchmark, which runs its own copy of the loop.
    pub fn take_taps(
        &mut self,
        first: Result<Arc<TapEntry>, broadcast::error::RecvError>,
        taps: &mut broadcast::Receiver<Arc<TapEntry>>,
    ) {
        let mut batch = Vec::new();
        let mut next = Ok(first);
        loop {
            match next {
                Ok(Ok(entry)) => batch.push(entry),
                Ok(Err(broadcast::error::RecvError::Lagged(n)))
                | Err(broadcast::error::TryRecvError::Lagged(n)) => self.state.skipped += n,
                Ok(Err(broadcast::error::RecvError::Closed)) | Err(_) => break,
            }
            next = taps.try_recv().map(Ok);
        }
        // Entries of a tap shown already, when its lines were loaded on a switch.
        if let Some(newest) = self.state.deltas.back().map(|d| d.seq) {
            batch.retain(|entry| entry.seq > newest);
        }
        let keep = batch.len().saturating_sub(DELTA_CAPACITY);
        self.state.skipped += if self.state.paused { 0 } else { keep as u64 };
        for entry in &batch[keep..] {
            self.state.push_delta(DeltaLine::from_entry(entry));
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

    /// Draws one frame: copies out the visible window and renders it. Generic over the
    /// backend so a benchmark can draw into a sink with the terminal's diffing and escapes.
    pub fn draw<B: Backend>(&mut self, terminal: &mut Terminal<B>) -> Result<(), UiError>
    where
        UiError: From<B::Error>,
    {
        let queue = QueueStats::from(&self.table.queue_metrics());
        let columns = self.table.columns();
        terminal.draw(|frame| {
            // The frame's area is the terminal's size, already read by the draw.
            let area = frame.area();
            let layout = Layout::new(area, self.state.panels);
            let height = layout.table_rows();
            self.state.delta_rows = layout.delta_rows();
            let window = self.window(height);
            let detail = self.detail.screen(area);
            let screen = Screen {
                state: &self.state,
                header: &self.header,
                columns: &columns,
                with_namespace: self.view.with_namespace(),
                window: &window,
                queue: &queue,
                now: SystemTime::now(),
                color: self.color,
            };
            draw::draw(frame, &screen);
            if let Some(detail) = detail {
                draw::detail::draw(
                    frame,
                    detail,
                    &screen.state.keymap,
                    screen.now,
                    screen.color,
                );
            }
        })?;
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

    /// Applies one action: UI state here, selection and sort on the table.
    pub fn apply(&mut self, action: Action) {
        if self.state.mode == InputMode::Detail && action != Action::Quit {
            if !self.detail.apply(&action) {
                self.state.mode = InputMode::Normal;
            }
            return;
        }
        let state = &mut self.state;
        match action {
            Action::Quit => self.quit = true,
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom => {
                if state.mode == InputMode::Indexes {
                    browse(state, &action);
                } else if state.mode == InputMode::Help {
                    state.help_scroll = scroll_help(state.help_scroll, state.page, &action);
                } else if state.panels && state.focus == Focus::Deltas {
                    state.move_delta_cursor(&action);
                } else {
                    self.reselect = None;
                    self.table.move_selection(state, &action);
                }
            }
            Action::SortNext => {
                let shown = draw::shown(
                    &self.table.columns(),
                    state.wide,
                    self.view.with_namespace(),
                );
                let next = shown
                    .iter()
                    .position(|&i| i == state.sort.column)
                    .and_then(|at| shown.get((at + 1) % shown.len()))
                    .copied()
                    .unwrap_or_default();
                state.sort = SortSpec {
                    column: next,
                    descending: false,
                };
                self.table.set_sort(state.sort);
            }
            Action::SortReverse => {
                state.sort.descending = !state.sort.descending;
                self.table.set_sort(state.sort);
            }
            Action::ToggleWide => {
                state.wide = !state.wide;
                self.keep_sort_shown();
            }
            Action::FilterChar(_)
            | Action::FilterBackspace
            | Action::FilterAccept
            | Action::FilterClear
                if state.mode == InputMode::DeltaFilter =>
            {
                let table = &self.table;
                state.edit_delta_filter(&action, |name, value| table.index_keys(name, value));
            }
            Action::OpenDeltaFilter => state.mode = InputMode::DeltaFilter,
            Action::ClearDeltaFilter => state.clear_delta_filter(),
            Action::OpenDeltaDiff => {
                if let Some(seq) = state.selected_delta().map(|d| d.seq)
                    && self.detail.open_seq(self.view.kind, seq)
                {
                    state.mode = InputMode::Detail;
                }
            }
            Action::OpenFilter => state.mode = InputMode::Filter,
            Action::FilterChar(c) => {
                state.filter.input.push(c);
                self.refilter();
            }
            Action::FilterBackspace => {
                state.filter.input.pop();
                self.refilter();
            }
            Action::FilterAccept => state.mode = InputMode::Normal,
            Action::FilterClear => self.clear_filter_or_back(),
            Action::OpenCommand => {
                state.mode = InputMode::Command;
                state.command.input.clear();
            }
            Action::CommandChar(c) => state.command.input.push(c),
            Action::CommandBackspace => {
                if state.command.input.pop().is_none() {
                    state.mode = InputMode::Normal;
                }
            }
            Action::CommandComplete => {
                if let Some(completed) = command::complete(&state.command.input) {
                    state.command.input = completed;
                }
            }
            Action::CommandCancel => {
                state.mode = InputMode::Normal;
                state.command.input.clear();
            }
            Action::CommandRun => {
                state.mode = InputMode::Normal;
                let input = std::mem::take(&mut state.command.input);
                self.run_command(&input);
            }
            Action::DrillDown => {
                let Some(key) = self.table.selected() else {
                    return;
                };
                match nav::drill_down(&self.current(), &key, self.starter.indexes()) {
                    Ok(Some(to)) => self.switch(to, true),
                    // A pod holds nothing to open: Enter shows its detail.
                    Ok(None) => self.open_detail(&key),
                    Err(err) => self.state.command.error = Some(err.to_string()),
                }
            }
            Action::OpenDetail => {
                if let Some(key) = self.table.selected() {
                    self.open_detail(&key);
                }
            }
            Action::DetailTab
            | Action::ToggleManagedFields
            | Action::Refresh
            | Action::OpenDiff
            | Action::Back => {}
            Action::TogglePanels => {
                state.panels = !state.panels;
                state.focus = Focus::Table;
            }
            Action::FocusNext => {
                state.focus = match state.focus {
                    Focus::Table if state.panels => Focus::Deltas,
                    _ => Focus::Table,
                };
            }
            Action::TogglePause => {
                state.paused = !state.paused;
                if state.paused {
                    state.skipped = 0;
                }
            }
            Action::ToggleIndexes => {
                if state.mode == InputMode::Indexes {
                    state.mode = InputMode::Normal;
                } else {
                    state.mode = InputMode::Indexes;
                    state.browser.names = self.table.index_names();
                    let current = state.browser.current;
                    self.browse_index(current);
                }
            }
            Action::NextIndex | Action::PrevIndex => {
                let count = state.browser.names.len().max(1);
                let step = if action == Action::NextIndex {
                    1
                } else {
                    count - 1
                };
                let next = (state.browser.current + step) % count;
                self.browse_index(next);
            }
            Action::ChooseValue => {
                let browser = &state.browser;
                if let (Some(name), Some(value)) =
                    (browser.name(), browser.values.get(browser.selected))
                {
                    state.filter.input = format!("{name}={}", value.value);
                    state.mode = InputMode::Normal;
                    self.refilter();
                }
            }
            Action::ToggleHelp => {
                state.help_scroll = 0;
                state.mode = match state.mode {
                    InputMode::Help => InputMode::Normal,
                    _ => InputMode::Help,
                };
            }
        }
    }

    /// Opens the detail of `key` in the table's kind: YAML fetched now, and its history.
    fn open_detail(&mut self, key: &Key) {
        self.detail.open(self.view.kind, key);
        self.state.mode = InputMode::Detail;
    }

    /// Runs a command line typed after `:`; an error is shown and changes nothing.
    fn run_command(&mut self, input: &str) {
        match command::parse(input) {
            Ok(Command::Quit) => self.quit = true,
            Ok(Command::Show { kind, scope }) => {
                let scope = scope.unwrap_or_else(|| self.view.scope.clone());
                let to = ViewSpec::new(kind, scope);
                if to.kind == self.view.kind && to.scope == self.view.scope {
                    // Already shown: the command asks for all of it again.
                    self.view.filter.clear();
                    self.state.filter.input.clear();
                    self.refilter();
                } else {
                    self.switch(to, true);
                }
            }
            Err(err) => self.state.command.error = Some(format!(":{}  {err}", input.trim())),
        }
    }

    /// Esc: first drops the filter typed over the view's own (a drill-down's `node=n1`
    /// stays), then goes back to the previous view. In the filter bar it drops the typed
    /// filter and closes the bar, never going back.
    fn clear_filter_or_back(&mut self) {
        let typing = self.state.mode == InputMode::Filter;
        self.state.mode = InputMode::Normal;
        if self.state.filter.input != self.view.filter {
            self.state.filter.input = self.view.filter.clone();
            self.refilter();
        } else if !typing {
            if let Some(visit) = self.history.pop() {
                self.switch(visit.view, false);
                if visit.typed != self.view.filter {
                    self.state.filter.input = visit.typed;
                    self.refilter();
                }
                self.reselect = visit.selected;
            } else if !self.view.filter.is_empty() {
                self.view.filter.clear();
                self.state.filter.input.clear();
                self.refilter();
            }
        }
    }

    /// Replaces the table with one showing `to`, remembering the current view for Esc when
    /// `remember`: the same table when it shows the same kind and scope, a parked one, or a
    /// new one. A new informer starts before the old one is parked: if it cannot start, the
    /// error is shown and nothing changes.
    fn switch(&mut self, to: ViewSpec, remember: bool) {
        let same = to.kind == self.view.kind && to.scope == self.view.scope;
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
            (false, None) => match self.starter.start(to.kind, &to.scope, SortSpec::default()) {
                Ok(table) => Some(table),
                Err(err) => {
                    self.state.command.error = Some(err.to_string());
                    return;
                }
            },
        };
        if remember {
            self.history.push(Visit {
                view: self.view.clone(),
                typed: self.state.filter.input.clone(),
                selected: self.table.selected(),
            });
            if self.history.len() > HISTORY {
                self.history.remove(0);
            }
        }
        if let Some(table) = table {
            let old = std::mem::replace(&mut self.table, table);
            self.parked
                .push((self.view.kind, self.view.scope.clone(), old));
            if self.parked.len() > PARKED {
                let (_, _, oldest) = self.parked.remove(0);
                tokio::spawn(oldest.shutdown());
            }
            self.load_deltas();
        }
        self.reselect = None;
        let state = &mut self.state;
        state.mode = InputMode::Normal;
        // A table kept running keeps its order.
        state.sort = self.table.sort();
        state.offset = 0;
        state.filter.input = to.filter.clone();
        state.filter.error = None;
        state.browser = IndexBrowser::default();
        self.header.resource = to.kind.plural().to_string();
        self.header.scope = to.scope_label();
        self.header.sync = "starting".into();
        self.header.listed = false;
        self.header.error = None;
        self.view = to;
        self.events_seen = self.table.watch_events();
        self.rate_since = Instant::now();
        self.switched = true;
        self.rebuilt = true;
        self.keep_sort_shown();
        self.refilter();
    }

    /// Sorts by the first column again when the sort column is not shown (a wide column
    /// out of wide mode, NAMESPACE in one namespace).
    fn keep_sort_shown(&mut self) {
        let shown = draw::shown(
            &self.table.columns(),
            self.state.wide,
            self.view.with_namespace(),
        );
        if !shown.contains(&self.state.sort.column) {
            self.state.sort = SortSpec::default();
            self.table.set_sort(self.state.sort);
        }
    }

    /// Shows the new table's latest tap entries in the delta panel, and has the loop follow
    /// its tap from here (subscribed before the entries are read: none is missed, and
    /// [`App::take_taps`] skips those already shown).
    fn load_deltas(&mut self) {
        let tap = self.table.tap();
        self.switched_taps = Some(tap.subscribe());
        let entries = tap.snapshot();
        let keep = entries.len().saturating_sub(DELTA_CAPACITY);
        self.state
            .replace_deltas(entries[keep..].iter().map(DeltaLine::from_entry));
        self.detail.set_tap(tap.clone());
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
    }

    /// Applies the filter bar's input to the table.
    fn refilter(&mut self) {
        let Some(query) = self.state.filter.parse() else {
            return;
        };
        match self.table.set_query(query, self.state.sort) {
            Ok(rebuilt) => self.rebuilt |= rebuilt,
            Err(err) => self.state.filter.error = Some(err.to_string()),
        }
    }
}

fn browse(state: &mut UiState, action: &Action) {
    let page = isize::try_from(state.page).unwrap_or(isize::MAX);
    match action {
        Action::Up => state.browser.step(-1),
        Action::Down => state.browser.step(1),
        Action::PageUp => state.browser.step(-page),
        Action::PageDown => state.browser.step(page),
        Action::Top => state.browser.selected = 0,
        _ => state.browser.step(isize::MAX),
    }
}

/// The help overlay's first line after a movement key; drawing clamps it to the last page.
fn scroll_help(scroll: usize, page: usize, action: &Action) -> usize {
    match action {
        Action::Up => scroll.saturating_sub(1),
        Action::Down => scroll + 1,
        Action::PageUp => scroll.saturating_sub(page),
        Action::PageDown => scroll + page,
        Action::Top => 0,
        _ => usize::MAX,
    }
}

/// Polls the terminal for input and forwards it until `stop` is set or the loop is gone.
fn read_input(tx: &mpsc::UnboundedSender<std::io::Result<Event>>, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let event = match event::poll(Duration::from_millis(50)) {
            Ok(false) => continue,
            Ok(true) => event::read(),
            Err(err) => Err(err),
        };
        let failed = event.is_err();
        if tx.send(event).is_err() || failed {
            return;
        }
    }
}
