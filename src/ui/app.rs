//! The event loop: input, row changes, tap entries and a clock tick wake it; actions update
//! the state; a frame is drawn from a copied window at most 60 times a second, and only when
//! something changed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use crossterm::event::{self, Event, KeyEventKind};
use parking_lot::Mutex;
use ratatui::DefaultTerminal;
use tokio::sync::{broadcast, mpsc};

use crate::index_views::columns::TableRow;
use crate::index_views::live::{LiveView, SortSpec, ViewWorker, Window};
use crate::index_views::query::{Query, Term};
use crate::index_views::registry::IndexRegistry;
use crate::informers::controller::RunningInformer;
use crate::informers::reflector::{ReflectorPhase, ReflectorStatus};
use crate::informers::tap::{Tap, TapEntry};
use crate::resources::{Pod, ResourceKind, Timestamp};

use super::UiError;
use super::action::{Action, InputMode, map_key};
use super::detail::{DetailController, Fetched};
use super::draw::{self, Header, QueueStats, Screen};
use super::keymap::Keymap;
use super::state::{DELTA_CAPACITY, DeltaLine, Focus, UiState};

/// At most 60 frames per second.
const FRAME: Duration = Duration::from_micros(16_667);
/// Ages and the event rate change with time alone.
const TICK: Duration = Duration::from_secs(1);

/// Makes sure the selection is in the view, scrolls to keep it visible, and copies out the
/// rows that fit: the view's lock is held only for this copy.
pub fn capture<T: TableRow>(
    view: &Mutex<LiveView<T>>,
    state: &mut UiState,
    height: usize,
    now: Timestamp,
) -> Window {
    let mut view = view.lock();
    if view.selected_position().is_none() && !view.is_empty() {
        view.select_position(state.offset);
    }
    let offset = state.follow(view.selected_position(), height, view.len());
    view.window(offset, height, now)
}

/// The informer's state in a few words, for the header.
pub fn describe_sync(status: &ReflectorStatus) -> String {
    let phase = match &status.phase {
        ReflectorPhase::Starting => "starting".to_string(),
        ReflectorPhase::Listing { pages, objects } => {
            format!("listing: {pages} pages, {objects} objects")
        }
        ReflectorPhase::Watching => format!("watching at rv {}", status.last_sync_resource_version),
        ReflectorPhase::BackingOff => "backing off".to_string(),
    };
    match &status.last_error {
        Some(err) => format!("{phase} · error: {err}"),
        None => phase,
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

/// The running TUI over one pod informer.
pub struct App<'a> {
    informer: &'a RunningInformer<Pod>,
    registry: IndexRegistry<Pod>,
    /// The unfiltered view, kept current even while a filter is on, so clearing the filter
    /// is instant rather than a rebuild of every row.
    base: ViewWorker<Pod>,
    /// The view of the filter's index terms, when it has any.
    filtered: Option<(Vec<Term>, ViewWorker<Pod>)>,
    /// Set when the worker was replaced, so the loop watches the new one's version.
    rebuilt: bool,
    state: UiState,
    header: Header,
    detail: DetailController,
    color: bool,
    quit: bool,
    events_seen: u64,
    rate_since: Instant,
}

impl<'a> App<'a> {
    pub fn new(
        informer: &'a RunningInformer<Pod>,
        registry: IndexRegistry<Pod>,
        header: Header,
        panels: bool,
        detail: DetailController,
    ) -> Result<Self, UiError> {
        let worker = ViewWorker::start(
            informer.informer(),
            registry.clone(),
            Query::default(),
            SortSpec::default(),
        )?;
        Ok(Self {
            informer,
            registry,
            base: worker,
            filtered: None,
            rebuilt: false,
            state: UiState::new(panels),
            header,
            detail,
            color: !draw::no_color_requested(),
            quit: false,
            events_seen: 0,
            rate_since: Instant::now(),
        })
    }

    /// Uses `keymap` (the configuration's) instead of the built-in keys.
    pub fn with_keymap(mut self, keymap: Keymap) -> Self {
        self.state.keymap = Arc::new(keymap);
        self
    }

    /// The view on screen.
    fn worker(&self) -> &ViewWorker<Pod> {
        self.filtered.as_ref().map_or(&self.base, |(_, w)| w)
    }

    /// Runs until the person quits. Input is read on its own thread, which ends with the loop.
    pub async fn run(mut self, terminal: &mut DefaultTerminal, tap: &Tap) -> Result<(), UiError> {
        let (input_tx, mut input) = mpsc::unbounded_channel();
        let stop = Arc::new(AtomicBool::new(false));
        let reader_stop = stop.clone();
        let reader = std::thread::spawn(move || read_input(&input_tx, &reader_stop));
        let result = self.event_loop(terminal, tap, &mut input).await;
        stop.store(true, Ordering::Relaxed);
        // The reader polls with a short timeout, so this returns promptly.
        let _ = reader.join();
        result
    }

    async fn event_loop(
        &mut self,
        terminal: &mut DefaultTerminal,
        tap: &Tap,
        input: &mut mpsc::UnboundedReceiver<std::io::Result<Event>>,
    ) -> Result<(), UiError> {
        let mut version = self.worker().version();
        let mut status = self.informer.status();
        let mut taps = tap.subscribe();
        let mut tick = tokio::time::interval(TICK);
        // A sender that is gone would wake the loop at once forever: stop listening to it.
        let (mut rows_open, mut status_open, mut taps_open) = (true, true, true);
        let mut dirty = true;
        let mut last_draw: Option<Instant> = None;
        self.header.sync = describe_sync(&status.borrow_and_update());
        while !self.quit {
            let next_frame = last_draw.map_or_else(Instant::now, |t| t + FRAME);
            if dirty && Instant::now() >= next_frame {
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
                    if key.kind != KeyEventKind::Release
                        && let Some(action) = map_key(&self.state, key)
                    {
                        self.apply(action);
                    }
                    dirty = true;
                }
                Wake::Input(Some(_)) => dirty = true,
                Wake::Rows => dirty = true,
                Wake::Status => {
                    self.header.sync = describe_sync(&status.borrow_and_update());
                    dirty = true;
                }
                Wake::Tap(entry) => {
                    self.take_taps(entry, &mut taps);
                    dirty |= self.state.panels;
                }
                Wake::Tick => {
                    self.update_rate();
                    let queue = self.worker().queue_metrics();
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
            if self.rebuilt {
                rows_open = true;
                version = self.worker().version();
                self.rebuilt = false;
                self.state.queue.restart();
            }
        }
        Ok(())
    }

    /// Takes this entry and every one already waiting, converting only the newest that fit.
    fn take_taps(
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
        let keep = batch.len().saturating_sub(DELTA_CAPACITY);
        self.state.skipped += if self.state.paused { 0 } else { keep as u64 };
        for entry in &batch[keep..] {
            self.state.push_delta(DeltaLine::from_entry(entry));
        }
    }

    fn update_rate(&mut self) {
        let seen = self.informer.metrics().snapshot().watch_events;
        let elapsed = self.rate_since.elapsed().as_secs_f64();
        if elapsed > 0.0 {
            self.header.events_per_second = seen.saturating_sub(self.events_seen) as f64 / elapsed;
        }
        self.events_seen = seen;
        self.rate_since = Instant::now();
    }

    fn draw(&mut self, terminal: &mut DefaultTerminal) -> Result<(), UiError> {
        let area = terminal.size()?;
        let height = draw::table_rows(area.into(), &self.state);
        self.state.delta_rows = draw::delta_rows(area.into(), &self.state);
        let view = self.worker().view().clone();
        let window = capture(&view, &mut self.state, height, Timestamp::now());
        let queue = QueueStats::from(&self.worker().queue_metrics());
        let detail = self.detail.screen(area.into());
        let screen = Screen {
            state: &self.state,
            header: &self.header,
            columns: Pod::COLUMNS,
            with_namespace: self.header.scope == super::ALL_NAMESPACES,
            window: &window,
            queue: &queue,
            now: SystemTime::now(),
            color: self.color,
        };
        terminal.draw(|frame| {
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

    /// Applies one action: UI state here, selection and sort on the view.
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
                } else if state.panels && state.focus == Focus::Deltas {
                    state.move_delta_cursor(&action);
                } else {
                    let worker = self.filtered.as_ref().map_or(&self.base, |(_, w)| w);
                    move_selection(&mut worker.view().lock(), state, &action);
                }
            }
            Action::SortNext => {
                let columns = Pod::COLUMNS;
                let next = (1..=columns.len())
                    .map(|step| (state.sort.column + step) % columns.len())
                    .find(|&i| !columns[i].wide)
                    .unwrap_or(0);
                state.sort = SortSpec {
                    column: next,
                    descending: false,
                };
                self.sort_views();
            }
            Action::SortReverse => {
                state.sort.descending = !state.sort.descending;
                self.sort_views();
            }
            Action::FilterChar(_)
            | Action::FilterBackspace
            | Action::FilterAccept
            | Action::FilterClear
                if state.mode == InputMode::DeltaFilter =>
            {
                let indexer = self.registry.indexer();
                state.edit_delta_filter(&action, |name, value| indexer.index_keys(name, value));
            }
            Action::OpenDeltaFilter => state.mode = InputMode::DeltaFilter,
            Action::ClearDeltaFilter => state.clear_delta_filter(),
            Action::OpenDeltaDiff => {
                if let Some(seq) = state.selected_delta().map(|d| d.seq)
                    && self.detail.open_seq(ResourceKind::Pods, seq)
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
            Action::FilterClear => {
                state.mode = InputMode::Normal;
                state.filter.input.clear();
                self.refilter();
            }
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
                    state.browser.names = self
                        .registry
                        .definitions()
                        .into_iter()
                        .map(|d| d.name)
                        .collect();
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
            Action::OpenDetail => {
                let worker = self.filtered.as_ref().map_or(&self.base, |(_, w)| w);
                let selected = worker.view().lock().selected().cloned();
                if let Some(key) = selected {
                    self.detail.open(ResourceKind::Pods, &key);
                    state.mode = InputMode::Detail;
                }
            }
            Action::DetailTab
            | Action::ToggleManagedFields
            | Action::Refresh
            | Action::OpenDiff
            | Action::Back => {}
            Action::ToggleHelp => {
                state.mode = match state.mode {
                    InputMode::Help => InputMode::Normal,
                    _ => InputMode::Help,
                };
            }
        }
    }

    /// Shows index number `current` in the browser, with its values counted now.
    fn browse_index(&mut self, current: usize) {
        let browser = &mut self.state.browser;
        browser.current = current;
        browser.selected = 0;
        browser.values = match browser.name() {
            Some(name) => self.registry.value_counts(name).unwrap_or_default(),
            None => Vec::new(),
        };
    }

    /// Sorts every live view the same way, so switching between them keeps the order.
    fn sort_views(&self) {
        let sort = self.state.sort;
        self.base.view().lock().set_sort(sort);
        if let Some((_, worker)) = &self.filtered {
            worker.view().lock().set_sort(sort);
        }
    }

    /// Applies the filter bar's input: index terms rebuild the view from the indexes (only
    /// when they changed); free text narrows it off this thread.
    fn refilter(&mut self) {
        let Some(query) = self.state.filter.parse() else {
            return;
        };
        let current: &[Term] = self.filtered.as_ref().map_or(&[], |(t, _)| t);
        if query.terms != current {
            let selected = self.worker().view().lock().selected().cloned();
            if query.terms.is_empty() {
                self.filtered = None;
            } else {
                let terms_only = Query {
                    terms: query.terms.clone(),
                    text: String::new(),
                };
                match ViewWorker::start(
                    self.informer.informer(),
                    self.registry.clone(),
                    terms_only,
                    self.state.sort,
                ) {
                    Ok(worker) => self.filtered = Some((query.terms, worker)),
                    Err(err) => {
                        self.state.filter.error = Some(err.to_string());
                        return;
                    }
                }
            }
            self.worker().view().lock().select(selected);
            self.rebuilt = true;
        }
        self.worker().set_text(&query.text);
    }
}

fn move_selection<T: TableRow>(view: &mut LiveView<T>, state: &UiState, action: &Action) {
    let position = view.selected_position().unwrap_or(state.offset);
    let target = match action {
        Action::Up => position.saturating_sub(1),
        Action::Down => position + 1,
        Action::PageUp => position.saturating_sub(state.page),
        Action::PageDown => position + state.page,
        Action::Top => 0,
        _ => view.len().saturating_sub(1),
    };
    view.select_position(target);
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
