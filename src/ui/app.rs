//! The event loop: input, row changes, tap entries, signals and a clock tick wake it; each
//! action goes to the component of the mode it was typed in, which returns what the app must
//! do, and the app returns what the loop must follow. A frame is laid out, its window copied
//! out, then drawn from immutable state, at most 60 times a second and only when something
//! changed. The loop is generic over its event source and backend, so tests and the TUI
//! benchmark drive this loop, not a copy of it.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crossterm::event::{Event, KeyEventKind};
use futures::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::layout::Rect;
use tokio::sync::{broadcast, mpsc};
use tokio::time;

use kscope_client::cluster::NamespaceScope;
use kscope_client::write::Target;
use kscope_config::keys::Keymap;
use kscope_config::keys::Section;
use kscope_config::{ActionSettings, LogSettings, WriteSettings, WriteSource};
use kscope_index_views::live::Window;
use kscope_informers::fifo::{FifoKind, Handoff};
use kscope_informers::instrument::tap::TapEntry;
use kscope_informers::keys::split_meta_namespace_key;
use kscope_informers::reflector::ReflectorStatus;
use kscope_resources::{ResourceKind, Timestamp};

use super::UiError;
use super::action::{Action, Focus, InputMode};
use super::command::{self, Command, SetCommand};
use super::component::{Component, Context, component_mut};
use super::containers::{ContainerReads, ContainersRead};
use super::contexts::{Connected, ContextPicker, ContextSwitcher};
use super::detail::{DetailController, DetailTab, Fetched};
use super::draw::{self, Header, Parts};
use super::edit::{self, EditRequest};
use super::effect::{Effect, Follow, ObjectRef};
use super::favourites::Favourites;
use super::fleet_identity::Identified;
use super::hot::{HotView, HotWatch};
use super::keymap::map_key;
use super::layout::Layout;
use super::logs::{Arrival, LogController, LogTarget};
use super::metrics::{DEFAULT_SCRAPE_INTERVAL, MetricsArrival, MetricsController, MetricsRequest};
use super::namespace_check::Checked;
use super::namespace_sets::{NamespaceSets, group_of};
use super::nav::Category;
use super::nav::ViewSpec;
use super::playback::{self, Playback};
use super::portforward::{ForwardController, ForwardEvent, ForwardOf};
use super::queue::InformerStats;
use super::record::RecordToggle;
use super::remembered::Remembered;
use super::selectors::Selected;
use super::session::{Ended, SessionKind, SessionRequest};
use super::state::UiState;
use super::table::{Table, TableStarter};
pub use super::tables::describe_sync;
use super::tables::{Surface, Tables};
use super::timeline::{TimelineView, TimelineWatch};
use super::tree::{TreeView, TreeWatch};
use super::writes::{
    ConfirmDialog, Plan, Verb, WriteController, WriteEvent, check_targets, read_only_refusal,
};

/// At most 60 frames per second.
pub const FRAME: Duration = Duration::from_micros(16_667);
/// Ages and the event rate change with time alone.
const TICK: Duration = Duration::from_secs(1);

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
    Metrics(MetricsArrival),
    Context(Box<Connected>),
    Selector(Selected),
    Namespace(Checked),
    Identity(Identified),
    Write(WriteEvent),
    /// A store the ownership tree reads changed.
    Tree,
    Cascade,
    /// The hot loops' detector took a watch event.
    Hot,
    Forward(ForwardEvent),
    Containers(ContainersRead),
    /// The timeline took an arrival; true when it changed.
    Timeline(bool),
    Signal,
    Closed(Closed),
}

/// A background notifier whose sender went away.
enum Closed {
    Rows,
    Status,
    Taps,
}

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
    /// The table on screen and the ones kept, and the moves between them.
    tables: Tables,
    /// What the person sees besides the rows.
    ui: Surface,
    /// The log view's readers; the view itself is in the state.
    logs: LogController,
    /// The `:metrics` panel's scraping task; the panel itself is in the state.
    metrics: MetricsController,
    /// The kube contexts `:ctx` switches between.
    contexts: ContextSwitcher,
    color: bool,
    /// The last frame's layout: the page sizes of the movement keys.
    layout: Layout,
    /// Whether the panels are open, kept for the next run.
    remembered: Remembered,
    /// The confirm dialog's reads and the writes.
    writes: WriteController,
    /// Which contexts may be written to, and the command line's say (`--readwrite`,
    /// `--readonly`) over the configuration's.
    write_settings: WriteSettings,
    write_flag: Option<bool>,
    /// Why the context on screen is read-only or not.
    write_source: WriteSource,
    /// Where `c` copies to: the terminal's clipboard (OSC 52) in the TUI, nowhere in tests.
    clipboard: Option<Clipboard>,
    /// Whether writes are allowed, and the shell's commands.
    actions: ActionSettings,
    /// A shell or attach asked for, until the terminal's owner takes it.
    session: Option<SessionRequest>,
    /// An edit asked for, until the terminal's owner takes it.
    edit: Option<EditRequest>,
    /// The ownership tree's informers, while it is open; the tree itself is in the state.
    tree: Option<TreeWatch>,
    /// The hot loops' informers and detector, while the view is open.
    hot: Option<HotWatch>,
    /// The playback controls, when the cluster is a recording served.
    playback: Option<Arc<dyn Playback>>,
    /// The port-forwards running, and the reads of the dialog's ports.
    forwards: ForwardController,
    /// Across clusters: the context whose client the detail and the log view read, once
    /// a row sent them to it.
    row_cluster: Option<String>,
    /// The timeline's informers and read, while the view is open.
    timeline: Option<TimelineWatch>,
    /// The container picker's reads of the pod.
    container_reads: ContainerReads,
    /// The ownership tree's informers a delete's dialog counts the dependents from, while
    /// they list; with the dialog's plan id and the objects deleted.
    cascade: Option<TreeWatch>,
    cascade_of: (u64, Vec<ObjectRef>),
    /// The object whose detail the command line was opened over (`:` in the detail): the
    /// commands about one object (`:timeline`) read it instead of the table's selection.
    command_over: Option<(kscope_resources::Kind, Arc<str>)>,
    /// The recording `ctrl-r` or `:record` started, while it runs.
    record: RecordToggle,
}

/// Why [`App::run_until`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The person quit, the input ended, a signal came, or the observer said so.
    Quit,
    /// A session waits in [`App::take_session`] for the terminal.
    Handover,
}

/// Sets the clipboard to a text.
pub type Clipboard = Arc<dyn Fn(&str) -> io::Result<()> + Send + Sync>;

impl App {
    /// Starts the table of `view` (and its filter). Must run inside a Tokio runtime.
    pub fn new(
        starter: TableStarter,
        view: ViewSpec,
        panels: bool,
        mut detail: DetailController,
    ) -> Result<Self, UiError> {
        let logs = LogController::new(starter.cluster().client.clone(), LogSettings::default());
        let metrics =
            MetricsController::new(starter.cluster().client.clone(), DEFAULT_SCRAPE_INTERVAL);
        let writes = WriteController::new(
            starter.cluster().client.clone(),
            starter.cluster().context.clone(),
        );
        let forwards = ForwardController::new(
            starter.cluster().client.clone(),
            starter.cluster().context.clone(),
        );
        let header = Header {
            context: starter.cluster().context.clone(),
            server: starter.cluster().server.clone(),
            resource: view.kind.to_string(),
            scope: view.scope_label(),
            sync: String::new(),
            sync_short: None,
            listed: false,
            error: None,
            events_per_second: 0.0,
            stale_since: None,
            undecodable: 0,
            filter: String::new(),
            favourites: Vec::new(),
            usage: None,
            readwrite: false,
        };
        // Across clusters the header names them all.
        let header = match starter.fleet_label() {
            None => header,
            Some((context, server)) => Header {
                context,
                server,
                ..header
            },
        };
        let contexts =
            ContextSwitcher::single(starter.cluster().context.clone(), starter.cluster().clone());
        let tables = Tables::new(starter, view)?;
        detail.set_tap(tables.table.tap().clone());
        let mut app = Self {
            tables,
            ui: Surface {
                state: UiState::new(panels),
                header,
                detail,
                favourites: Favourites::default(),
                namespace_sets: NamespaceSets::default(),
            },
            contexts,
            logs,
            metrics,
            color: !draw::no_color_requested(),
            layout: Layout::new(Rect::default(), panels),
            remembered: Remembered::default(),
            writes,
            write_settings: WriteSettings::default(),
            write_flag: None,
            write_source: WriteSource::Default,
            clipboard: None,
            actions: ActionSettings::default(),
            session: None,
            edit: None,
            tree: None,
            hot: None,
            playback: None,
            forwards,
            timeline: None,
            container_reads: ContainerReads::default(),
            cascade: None,
            cascade_of: (0, Vec::new()),
            command_over: None,
            row_cluster: None,
            record: RecordToggle::default(),
        };
        app.ui.state.filter.input = app.tables.view.filter.clone();
        // The loop follows the table it starts with; nothing to follow yet.
        let _ = app.tables.refilter(&mut app.ui);
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
        self.ui.favourites = favourites;
        self.tables.note_namespace(&mut self.ui);
        self
    }

    /// Keeps the cluster groups' namespace sets and last scopes in `sets` (the file under the
    /// XDG state directory) instead of in memory only. With `restore`, the table opens in
    /// the scope its group was last shown in: the person asked for none (`-n`, `-A`).
    pub fn with_namespace_sets(mut self, mut sets: NamespaceSets, restore: bool) -> Self {
        if let Some(problem) = sets.take_problem() {
            self.ui.state.command.error = Some(problem);
        }
        let last = sets.last(&group_of(&self.ui.header.context));
        self.ui.namespace_sets = sets;
        match last.filter(|_| restore) {
            Some(scope) => {
                let _ = self.tables.show_scope(&mut self.ui, scope);
            }
            None => self.tables.note_namespace(&mut self.ui),
        }
        self
    }

    /// Opens the panels as they were when the person left (closed on a first run), and
    /// keeps `t`'s choice in `remembered` for the next run.
    pub fn with_remembered(mut self, remembered: Remembered) -> Self {
        self.ui.state.panels = remembered.panels();
        self.layout = Layout::new(self.layout.area, self.ui.state.panels);
        self.remembered = remembered;
        self
    }

    /// The next finished `:ctx` connection. Cancel-safe, for the event loop's `select!`.
    pub async fn context_connected(&mut self) -> Option<Connected> {
        self.contexts.connected().await
    }

    /// Plays a recording: the replay keys and `:seek` drive `playback`, the header says
    /// where it is.
    pub fn with_playback(mut self, playback: Arc<dyn Playback>) -> Self {
        self.ui.state.recording = Some(playback::describe(&playback.status()));
        self.playback = Some(playback);
        self
    }

    /// The playback controls; on a live cluster, `None` and a notice that there is
    /// nothing to play.
    fn playback(&mut self) -> Option<Arc<dyn Playback>> {
        if self.playback.is_none() {
            self.ui.state.notice =
                Some("not a recording: kscope replay FILE plays one".to_string());
        }
        self.playback.clone()
    }

    /// A replay key: play or pause, faster or slower, one event.
    fn control_playback(&mut self, action: &Action) {
        let Some(playback) = self.playback() else {
            return;
        };
        let status = playback.status();
        match action {
            Action::ReplayPlayPause => playback.set_paused(!status.paused),
            Action::ReplayFaster => playback.set_speed(playback::next_speed(status.speed, true)),
            Action::ReplaySlower => playback.set_speed(playback::next_speed(status.speed, false)),
            Action::ReplayStep if !playback.step() => {
                self.ui.state.notice = Some("the end of the recording".to_string());
            }
            _ => {}
        }
        self.ui.state.recording = Some(playback::describe(&playback.status()));
    }

    /// `:seek TIME|rv=N`.
    fn seek_playback(&mut self, to: &str) {
        let Some(playback) = self.playback() else {
            return;
        };
        let moved = playback::parse_seek(to, playback.status().at).and_then(|to| playback.seek(to));
        if let Err(err) = moved {
            self.ui.state.command.error = Some(format!(":seek {to}  {err}"));
        }
        self.ui.state.recording = Some(playback::describe(&playback.status()));
    }

    /// Starts with `notice` on the message line, until the first key (as a command's
    /// message is).
    pub fn with_notice(mut self, notice: String) -> Self {
        // Dim, not an error's red: the demo's `kubectl` hint is news, not a failure.
        self.ui.state.notice = Some(notice);
        self
    }

    /// Saves the detail's YAML or describe (Ctrl-S) in `dir`, not the state directory.
    pub fn with_save_dir(mut self, dir: std::path::PathBuf) -> Self {
        self.ui.detail.set_save_dir(dir);
        self
    }

    /// Copies (`c`) through `clipboard`.
    pub fn with_clipboard(mut self, clipboard: Clipboard) -> Self {
        self.clipboard = Some(clipboard);
        self
    }

    /// Puts `text` on the clipboard, saying what was copied (`what`) or why not.
    fn copy(&mut self, text: &str, what: &str) {
        let state = &mut self.ui.state;
        match &self.clipboard {
            Some(clipboard) => match clipboard(text) {
                Ok(()) => state.notice = Some(format!("copied {what} to the clipboard")),
                Err(err) => state.command.error = Some(format!("copy: {err}")),
            },
            None => state.command.error = Some("copy: no terminal to copy through".into()),
        }
    }

    /// `c` in a detail: the YAML or describe text shown (a Secret's values are masked in
    /// it, so none is ever copied).
    fn copy_detail(&mut self) {
        let Some(detail) = self.ui.detail.screen() else {
            return;
        };
        let (text, what) = match detail.tab {
            DetailTab::Describe => (detail.describe.join("\n"), "the describe text"),
            DetailTab::Yaml => (detail.yaml.lines.join("\n"), "the YAML"),
            DetailTab::History => return,
        };
        if !text.is_empty() {
            self.copy(&text, what);
        }
    }

    /// Lets the write keys write where `settings` (the configuration's) and `flag` (the
    /// command line's `--readwrite` / `--readonly`) say; read-only everywhere otherwise.
    pub fn with_writes(mut self, settings: WriteSettings, flag: Option<bool>) -> Self {
        self.write_settings = settings;
        self.write_flag = flag;
        self.follow_write_mode();
        self
    }

    /// The context on screen's write mode, into the header.
    fn follow_write_mode(&mut self) {
        let (on, source) = self
            .write_settings
            .for_context(&self.ui.header.context, self.write_flag);
        // Across clusters writes stay off: the write path knows one client, not each row's.
        self.ui.header.readwrite = on && self.tables.starter.fleet().is_empty();
        self.write_source = source;
    }

    /// Waits for the next answer of a write or its dialog's reads and takes it, as the
    /// event loop does; false when none can come.
    pub async fn next_write(&mut self) -> bool {
        match self.writes.next().await {
            Some(event) => {
                self.take_write(event);
                true
            }
            None => false,
        }
    }

    /// A write's answer: the dialog's facts, a drain's progress, or how it ended.
    fn take_write(&mut self, event: WriteEvent) {
        let state = &mut self.ui.state;
        match event {
            WriteEvent::Prepared { id, prepared } => state.confirm.prepared(id, prepared),
            WriteEvent::Checked { id, dry_run } => state.confirm.checked(id, dry_run),
            WriteEvent::Progress(line) => state.notice = Some(line),
            WriteEvent::Done(Ok(line)) => state.notice = Some(line),
            WriteEvent::Done(Err(line)) => state.command.error = Some(line),
            WriteEvent::Access {
                kind,
                namespace,
                forbidden,
            } => {
                let shown = &self.tables.view;
                if kind == *self.tables.table.kind()
                    && namespace.as_deref() == shown.scope.namespace()
                {
                    state.forbidden = forbidden;
                }
            }
        }
    }

    /// A table opened: with writes on, asks the server which write keys this user may use
    /// on it (see [`WriteController::review`]).
    fn review_access(&mut self) {
        self.ui.state.forbidden.clear();
        if self.ui.header.readwrite {
            let namespace = self.tables.view.scope.namespace().map(str::to_string);
            self.writes.review(self.tables.table.kind(), namespace);
        }
    }

    /// A write key on the main screen: in read-only mode, how to turn writes on; else the
    /// confirm dialog for the marked rows (or the selected one), its facts asked for.
    fn start_write(&mut self, action: &Action) -> Vec<Follow> {
        let Some(verb) = Verb::of(action) else {
            return Vec::new();
        };
        if !self.ui.header.readwrite {
            let key = self
                .ui
                .state
                .keymap
                .keys(Section::Normal, action)
                .first()
                .map_or_else(|| verb.to_string(), ToString::to_string);
            self.ui.state.command.error = Some(read_only_refusal(
                &key,
                verb,
                &self.ui.header.context,
                self.write_source,
            ));
            return Vec::new();
        }
        if let Some(refusal) = self.denied(action) {
            self.ui.state.command.error = Some(refusal);
            return Vec::new();
        }
        let kind = self.tables.table.kind().clone();
        let keys: Vec<kscope_informers::keys::Key> = if self.ui.state.table.marks.is_empty() {
            match self.tables.table.selected_object() {
                Some((kind, key)) => return self.confirm(verb, vec![target(kind, &key)]),
                None => Vec::new(),
            }
        } else {
            self.ui.state.table.marks.iter().cloned().collect()
        };
        let targets = keys.iter().map(|key| target(kind.clone(), key)).collect();
        self.confirm(verb, targets)
    }

    /// What `action`'s key says when the server's access review for the table shown said
    /// no: who may not do what, and that nothing was sent.
    fn denied(&self, action: &Action) -> Option<String> {
        let state = &self.ui.state;
        let (_, why) = state.forbidden.iter().find(|(a, _)| a == action)?;
        let key = state
            .keymap
            .keys(Section::Normal, action)
            .first()
            .map_or_else(String::new, ToString::to_string);
        Some(format!("{key}: {why}; nothing was sent"))
    }

    /// Opens the confirm dialog of `verb` on `targets`.
    fn confirm(&mut self, verb: Verb, targets: Vec<Target>) -> Vec<Follow> {
        if targets.is_empty() {
            return Vec::new();
        }
        if matches!(
            verb,
            Verb::Drain | Verb::Scale | Verb::TriggerJob | Verb::RolloutUndo | Verb::SetImage
        ) && targets.len() > 1
        {
            self.ui.state.command.error = Some(format!("{verb} acts on one row at a time"));
            return Vec::new();
        }
        if let Err(why) = check_targets(verb, &targets) {
            self.ui.state.command.error = Some(why);
            return Vec::new();
        }
        let plan = self.writes.prepare(verb, targets);
        if matches!(verb, Verb::Delete | Verb::Kill) {
            self.watch_cascade(&plan);
        }
        self.ui.state.confirm = ConfirmDialog::open(plan);
        self.ui.state.mode = InputMode::Confirm;
        Vec::new()
    }

    /// A delete's dialog: starts the ownership tree's informers (the kinds `x` watches) in
    /// the targets' namespace, so the dialog can say what their cascade takes with them.
    fn watch_cascade(&mut self, plan: &Plan) {
        let Some(first) = plan.targets.first() else {
            return;
        };
        let same = plan.targets.iter().all(|t| t.namespace == first.namespace);
        let scope = match &first.namespace {
            Some(ns) if same => NamespaceScope::One(ns.clone()),
            _ => NamespaceScope::All,
        };
        let discovery = self.tables.starter.catalog().current();
        let kinds = [first.kind.clone()];
        match TreeWatch::start(self.tables.starter.cluster(), &kinds, &discovery, &scope) {
            Ok(watch) => {
                let roots = plan
                    .targets
                    .iter()
                    .map(|t| ObjectRef {
                        kind: t.kind.kind().to_string(),
                        namespace: t.namespace.clone(),
                        name: t.name.clone(),
                    })
                    .collect();
                self.cascade = Some(watch);
                self.cascade_of = (plan.id, roots);
            }
            // The dry run still asks the server; the dialog says the count is unknown.
            Err(err) => self.ui.state.notice = Some(format!("dependents not counted: {err}")),
        }
    }

    /// The delete dialog's dependents as the stores have them now; the informers stop once
    /// every kind has listed, or once the dialog is another's.
    fn refresh_cascade(&mut self) {
        let Some(watch) = &self.cascade else {
            return;
        };
        let (id, roots) = &self.cascade_of;
        let open = self.ui.state.confirm.plan.as_ref().map(|p| p.id) == Some(*id);
        if !open {
            self.cascade = None;
            return;
        }
        let dependents = watch.dependents(roots);
        let complete = dependents.complete;
        self.ui.state.confirm.dependents(*id, dependents);
        if complete {
            self.cascade = None;
        }
    }

    /// The dialog said yes: the write goes, the marks are spent.
    fn confirmed(&mut self) {
        self.cascade = None;
        let dialog = std::mem::take(&mut self.ui.state.confirm);
        self.ui.state.mode = InputMode::Normal;
        let replicas = dialog.replicas();
        if let Some(plan) = dialog.plan {
            self.ui.state.notice = Some(format!("{}…", plan.verb));
            self.ui.state.table.marks.clear();
            self.writes.execute(plan, replicas);
        }
    }

    /// `F` on the selected row: the port-forward dialog of a pod or Service, its ports
    /// read in the background. Allowed read-only: see [`super::portforward`].
    fn open_forward(&mut self) {
        let Some((kind, key)) = self.tables.table.selected_object() else {
            return;
        };
        let (namespace, name) = split_meta_namespace_key(&key);
        let (namespace, name) = (namespace.unwrap_or("default").to_string(), name.to_string());
        let of = if kind == ResourceKind::Pods {
            ForwardOf::Pod { namespace, name }
        } else if (kind.group(), kind.plural()) == ("", "services") {
            ForwardOf::Service { namespace, name }
        } else {
            self.ui.state.command.error = Some("port-forward needs a pod or service row".into());
            return;
        };
        self.ui.state.port_forward = self.forwards.prepare(of);
        self.ui.state.mode = InputMode::PortForward;
    }

    /// `F` on the container picker's row: the port-forward dialog of that container, which
    /// offers only its ports.
    fn forward_container(&mut self) {
        let Some(picker) = self.ui.state.containers.take() else {
            return;
        };
        let Some(container) = picker.chosen().map(str::to_string) else {
            return;
        };
        let of = ForwardOf::Container {
            namespace: picker.namespace,
            pod: picker.pod,
            container,
        };
        self.ui.state.port_forward = self.forwards.prepare(of);
        self.ui.state.mode = InputMode::PortForward;
    }

    /// The port-forward dialog said yes: listen and forward, or say why not.
    fn start_forward(&mut self) {
        let dialog = std::mem::take(&mut self.ui.state.port_forward);
        self.ui.state.mode = InputMode::Normal;
        let Some((choice, local)) = dialog.chosen() else {
            return;
        };
        let mut to = format!("{}/{}:{}", choice.namespace, choice.pod, choice.port);
        if choice.of_container {
            to = format!("{to} ({})", choice.container);
        }
        let started = match self.forwards.start(choice.clone(), local) {
            // The default offered was taken meanwhile: a free one, as the dialog promised.
            Err(_) if !dialog.typed() => self.forwards.start(choice, 0),
            started => started,
        };
        match started {
            Ok(addr) => {
                self.ui.state.notice =
                    Some(format!("forwarding {addr} → {to} · :pf lists the forwards"));
            }
            Err(err) => self.ui.state.command.error = Some(format!("port-forward: {err}")),
        }
    }

    /// A port-forward's news: the dialog's ports; a forward that ended shows in `:pf`.
    fn take_forward(&mut self, event: ForwardEvent) {
        match event {
            ForwardEvent::Prepared { id, result } => {
                self.ui.state.port_forward.prepared(id, result);
            }
            ForwardEvent::Ended => {
                if self.ui.state.mode == InputMode::Forwards {
                    self.ui.state.forwards.show(self.forwards.rows());
                }
            }
        }
    }

    /// Uses `keymap` (the configuration's) instead of the built-in keys.
    pub fn with_keymap(mut self, keymap: Keymap) -> Self {
        self.ui.state.keymap = Arc::new(keymap);
        self
    }

    /// Allows writes, and opens shells, as `settings` (the configuration's) say.
    pub fn with_actions(mut self, settings: ActionSettings) -> Self {
        self.actions = settings;
        self
    }

    /// Whether actions that change the cluster may run: the one place that says so.
    fn writes_allowed(&self) -> bool {
        self.ui.header.readwrite
    }

    /// The shell or attach asked for, for the terminal's owner to run.
    pub fn take_session(&mut self) -> Option<SessionRequest> {
        self.session.take()
    }

    /// The edit asked for, for the terminal's owner to run.
    pub fn take_edit(&mut self) -> Option<EditRequest> {
        self.edit.take()
    }

    /// `e` on `key` of `kind` (the selected row's, or the detail's object), typed in
    /// `section`: refused for a Secret and in read-only mode, else the loop hands the
    /// terminal to the editor.
    fn ask_edit(
        &mut self,
        kind: kscope_resources::Kind,
        key: &str,
        section: Section,
    ) -> Vec<Follow> {
        let target = target(kind, key);
        if let Some(why) = edit::secret_refusal(&target) {
            self.tell(Err(why));
            return Vec::new();
        }
        if !self.writes_allowed() {
            let key = self
                .ui
                .state
                .keymap
                .keys(section, &Action::Edit)
                .first()
                .map_or_else(|| "edit".to_string(), ToString::to_string);
            let why = read_only_refusal(&key, "edit", &self.ui.header.context, self.write_source);
            self.tell(Err(why));
            return Vec::new();
        }
        self.edit = Some(EditRequest {
            client: self.tables.starter.cluster().client.clone(),
            context: self.ui.header.context.clone(),
            target,
        });
        vec![Follow::Handover]
    }

    /// Says how an edit ended, and reads the detail's object again when one is open.
    pub fn edit_ended(&mut self, outcome: edit::Outcome) {
        self.tell(outcome);
        self.ui.detail.refresh();
    }

    /// A message where the person looks: the open detail's bottom line, else the status
    /// line (`Err` in the error's colour).
    fn tell(&mut self, message: Result<String, String>) {
        if self.ui.state.mode == InputMode::Detail
            && let Some(detail) = self.ui.detail.screen()
        {
            detail.notice = Some(message.unwrap_or_else(|why| why));
            return;
        }
        match message {
            Ok(line) => self.ui.state.notice = Some(line),
            Err(line) => self.ui.state.command.error = Some(line),
        }
    }

    /// Says on the status line how the session ended.
    pub fn session_ended(&mut self, ended: &Ended) {
        if ended.is_failure() {
            self.ui.state.command.error = Some(ended.message());
        } else {
            self.ui.state.notice = Some(ended.message());
        }
    }

    /// Scrapes a controller's /metrics every `interval` (the configuration's
    /// `metrics.scrape`) while `:metrics` shows it.
    pub fn with_scrape_interval(mut self, interval: std::time::Duration) -> Self {
        self.metrics =
            MetricsController::new(self.tables.starter.cluster().client.clone(), interval);
        self
    }

    /// Waits for the `:metrics` panel's next scrape (or word on its pod) and takes it, as
    /// the event loop does; false when none can come.
    pub async fn next_metrics(&mut self) -> bool {
        match self.metrics.arrived().await {
            Some(arrival) => {
                self.metrics.take(self.ui.state.metrics.as_mut(), arrival);
                true
            }
            None => false,
        }
    }

    /// Whether a controller's /metrics is being scraped: only while `:metrics` is shown.
    pub fn metrics_scraping(&self) -> bool {
        self.metrics.scraping()
    }

    /// `:metrics` on the selected row: a pod, or a workload whose ready pod is read.
    fn open_metrics(&mut self, port: Option<String>) -> Vec<Follow> {
        let Some((kind, key)) = self.tables.table.selected_object() else {
            self.ui.state.command.error =
                Some(":metrics reads the selected pod or workload: select a row first".into());
            return Vec::new();
        };
        let (namespace, name) = split_meta_namespace_key(&key);
        let readable = kind == ResourceKind::Pods
            || matches!(
                (kind.group(), kind.plural()),
                (
                    "apps",
                    "deployments" | "replicasets" | "statefulsets" | "daemonsets"
                )
            );
        let Some(namespace) = namespace.filter(|_| readable) else {
            self.ui.state.command.error = Some(format!(
                ":metrics reads a pod, Deployment, StatefulSet, DaemonSet or ReplicaSet, not {}",
                kind.plural()
            ));
            return Vec::new();
        };
        let request = MetricsRequest {
            kind: kind.kind().to_lowercase(),
            namespace: namespace.to_string(),
            name: name.to_string(),
            port,
            model_kind: self.tables.table.kind().to_string(),
        };
        self.ui.state.metrics = Some(self.metrics.open(request));
        self.ui.state.mode = InputMode::Metrics;
        Vec::new()
    }

    /// Keeps and asks for logs as `settings` (the configuration's) say.
    pub fn with_log_settings(mut self, settings: LogSettings) -> Self {
        self.logs = LogController::new(self.tables.starter.cluster().client.clone(), settings);
        self
    }

    /// Waits for the log view's next batch (or stream change) and takes it, as the event
    /// loop does; false when none can come.
    pub async fn next_logs(&mut self) -> bool {
        match self.logs.arrived().await {
            Some(arrival) => {
                self.logs.take(self.ui.state.logs.as_mut(), arrival);
                true
            }
            None => false,
        }
    }

    /// What the table shows now, with the filter as currently typed.
    pub fn current(&self) -> ViewSpec {
        self.tables.current(&self.ui)
    }

    /// The category shown, when the table is a category's (`:all`).
    pub fn category(&self) -> Option<&Category> {
        self.tables.category.as_ref()
    }

    /// The views Esc goes back to, newest last.
    pub fn history(&self) -> Vec<&ViewSpec> {
        self.tables
            .history
            .iter()
            .map(|visit| &visit.view)
            .collect()
    }

    pub fn state(&self) -> &UiState {
        &self.ui.state
    }

    pub fn header(&self) -> &Header {
        &self.ui.header
    }

    pub fn table(&self) -> &dyn Table {
        self.tables.table.as_ref()
    }

    /// Rows in the view on screen.
    pub fn rows(&self) -> usize {
        self.tables.table.rows()
    }

    /// Whether an object's detail is open and its fetch has come back.
    pub fn detail_fetched(&self) -> bool {
        self.ui.detail.fetched_shown()
    }

    /// The layout of the last frame (or of the size given to [`App::resize`]).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Lays the screen out for a terminal of `area`: page sizes follow it.
    pub fn resize(&mut self, area: Rect) {
        self.layout = Layout::new(area, self.ui.state.panels);
    }

    /// Copies out the `height` rows on screen, selecting the first when nothing is (or the
    /// row selected before, once it is back).
    pub fn window(&mut self, height: usize) -> Window {
        self.ui
            .state
            .table
            .window(self.tables.table.as_ref(), height, Timestamp::now())
    }

    /// Brings the header up to date with the informer's status (see
    /// [`Tables::update_sync`]), as each frame does.
    pub fn update_sync(&mut self, status: &ReflectorStatus) {
        self.tables.update_sync(&mut self.ui, status);
    }

    /// Lists a custom resource's table again once its CRD changed, as each tick does.
    pub fn follow_crd_change(&mut self) -> Vec<Follow> {
        self.tables.follow_crd_change(&mut self.ui)
    }

    /// Runs until the person quits (or the events end, a signal comes, or `observer` says
    /// so), then stops the tables' informers. Input and signals come from outside and the
    /// loop's clock is Tokio's, so tests drive all three (`tokio::time::pause`).
    pub async fn run<B, E, S>(
        mut self,
        terminal: &mut Terminal<B>,
        events: E,
        signals: S,
        observer: &mut impl Observer,
    ) -> Result<(), UiError>
    where
        B: Backend,
        UiError: From<B::Error>,
        E: Stream<Item = io::Result<Event>> + Unpin,
        S: Stream<Item = ()> + Unpin,
    {
        let (mut events, mut signals) = (events, signals);
        let result = loop {
            match self
                .run_until(terminal, &mut events, &mut signals, observer)
                .await
            {
                Ok(Stop::Handover) => {
                    // Only the TUI's own lifecycle (`run.rs`) owns a real terminal to hand over.
                    if self.take_session().is_some() {
                        self.ui.state.command.error =
                            Some("a shell needs the terminal kscope runs in".to_string());
                    }
                    if self.take_edit().is_some() {
                        self.ui.state.command.error =
                            Some("an edit needs the terminal kscope runs in".to_string());
                    }
                }
                other => break other.map(|_| ()),
            }
        };
        self.shutdown().await;
        result
    }

    /// Runs the loop until the person quits or a session needs the terminal; the tables keep
    /// running, so the loop can run again after the session.
    pub async fn run_until<B, E, S>(
        &mut self,
        terminal: &mut Terminal<B>,
        events: E,
        signals: S,
        observer: &mut impl Observer,
    ) -> Result<Stop, UiError>
    where
        B: Backend,
        UiError: From<B::Error>,
        E: Stream<Item = io::Result<Event>> + Unpin,
        S: Stream<Item = ()> + Unpin,
    {
        self.event_loop(terminal, events, signals, observer).await
    }

    /// Stops the tables' informers.
    pub async fn shutdown(self) {
        if let Some(err) = self.record.shutdown().await {
            tracing::error!("{err}");
        }
        self.tables.table.shutdown().await;
        for (_, _, table) in self.tables.parked {
            table.shutdown().await;
        }
    }

    async fn event_loop<B, E, S>(
        &mut self,
        terminal: &mut Terminal<B>,
        mut events: E,
        mut signals: S,
        observer: &mut impl Observer,
    ) -> Result<Stop, UiError>
    where
        B: Backend,
        UiError: From<B::Error>,
        E: Stream<Item = io::Result<Event>> + Unpin,
        S: Stream<Item = ()> + Unpin,
    {
        let mut version = self.tables.table.version();
        let mut status = self.tables.table.status();
        let mut taps = self.tables.table.tap().subscribe();
        let mut tick = time::interval(TICK);
        // A sender that is gone would wake the loop at once forever: stop listening to it.
        let (mut rows_open, mut status_open, mut taps_open) = (true, true, true);
        let mut dirty = true;
        let mut last_draw: Option<time::Instant> = None;
        self.review_access();
        loop {
            let next_frame = last_draw.map_or_else(time::Instant::now, |t| t + FRAME);
            if dirty && time::Instant::now() >= next_frame {
                // Every frame reads the status: the resourceVersion moves without waking
                // this loop, and a wake-up for the other fields only asks for a frame.
                observer.started();
                self.update_sync(&status.borrow_and_update());
                self.draw(terminal)?;
                dirty = false;
                last_draw = Some(time::Instant::now());
                observer.finished(Step::Draw);
                if !observer.drawn(self) {
                    return Ok(Stop::Quit);
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
                Some(fetched) = self.ui.detail.fetched() => Wake::Fetched(fetched),
                handoff = next_handoff(&mut self.tables.handoffs) => Wake::Handoff(handoff),
                Some(arrival) = self.logs.arrived() => Wake::Logs(arrival),
                Some(arrival) = self.metrics.arrived() => Wake::Metrics(arrival),
                Some(connected) = self.contexts.connected() => Wake::Context(Box::new(connected)),
                Some(selected) = self.tables.selectors.selected() => Wake::Selector(selected),
                Some(checked) = self.tables.namespaces.checked() => Wake::Namespace(checked),
                Some(identified) = self.tables.identities.identified() => Wake::Identity(identified),
                Some(event) = self.writes.next() => Wake::Write(event),
                () = tree_changed(&mut self.tree) => Wake::Tree,
                () = tree_changed(&mut self.cascade) => Wake::Cascade,
                () = hot_next(&mut self.hot) => Wake::Hot,
                Some(event) = self.forwards.next() => Wake::Forward(event),
                Some(read) = self.container_reads.next() => Wake::Containers(read),
                changed = timeline_next(&mut self.timeline) => Wake::Timeline(changed),
                Some(()) = signals.next() => Wake::Signal,
                _ = tick.tick() => Wake::Tick,
                _ = time::sleep_until(next_frame), if dirty => Wake::Frame,
            };
            observer.started();
            let step = match &wake {
                Wake::Input(_) => Step::Input,
                Wake::Tap(_) => Step::Taps,
                _ => Step::Other,
            };
            let mut follow = Vec::new();
            match wake {
                Wake::Input(None) | Wake::Signal => return Ok(Stop::Quit),
                Wake::Input(Some(event)) => {
                    follow = self.handle_event(&event);
                    dirty = true;
                }
                Wake::Rows | Wake::Status => dirty = true,
                Wake::Tap(entry) => {
                    self.take_taps(entry, &mut taps);
                    dirty |= self.ui.state.panels;
                }
                Wake::Handoff(Some(handoff)) => {
                    self.ui.state.deltas.take_handoff(handoff);
                    dirty |= self.ui.state.panels;
                }
                Wake::Handoff(None) => self.tables.handoffs = None,
                Wake::Tick => {
                    follow = self.follow_crd_change();
                    self.tables.update_rate(&mut self.ui);
                    let queue = self.tables.table.queue_metrics();
                    self.ui
                        .state
                        .queue
                        .sample(queue.adds, queue.depth, Instant::now());
                    self.ui.state.queue.show(&queue);
                    self.refresh_hot();
                    self.refresh_record();
                    dirty = true;
                }
                Wake::Frame => {}
                Wake::Fetched(fetched) => {
                    self.ui.detail.finish(fetched);
                    dirty = true;
                }
                Wake::Logs(arrival) => {
                    self.logs.take(self.ui.state.logs.as_mut(), arrival);
                    dirty = true;
                }
                Wake::Metrics(arrival) => {
                    self.metrics.take(self.ui.state.metrics.as_mut(), arrival);
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
                Wake::Namespace(checked) => {
                    self.tables.finish_namespace(&mut self.ui, checked);
                    dirty = true;
                }
                Wake::Identity(identified) => {
                    self.tables.finish_identity(&mut self.ui, identified);
                    dirty = true;
                }
                Wake::Write(event) => {
                    self.take_write(event);
                    dirty = true;
                }
                // Marked stale: the next frame rebuilds it, once for every change since.
                Wake::Tree => dirty = true,
                Wake::Cascade => {
                    self.refresh_cascade();
                    dirty = true;
                }
                // The report is read each tick: a write stream needs no frame per event.
                Wake::Hot => {}
                Wake::Forward(event) => {
                    self.take_forward(event);
                    dirty = true;
                }
                Wake::Containers(read) => {
                    follow = self.take_containers(read);
                    dirty = true;
                }
                Wake::Timeline(changed) => {
                    if changed {
                        self.refresh_timeline();
                        dirty = true;
                    }
                }
                Wake::Closed(Closed::Rows) => rows_open = false,
                Wake::Closed(Closed::Status) => status_open = false,
                Wake::Closed(Closed::Taps) => taps_open = false,
            }
            observer.finished(step);
            for follow in follow {
                match follow {
                    Follow::Quit => return Ok(Stop::Quit),
                    Follow::Handover => return Ok(Stop::Handover),
                    Follow::Table => {
                        self.review_access();
                        if let Some(switched) = self.tables.switched_taps.take() {
                            taps = switched;
                            taps_open = true;
                        }
                        status_open = true;
                        status = self.tables.table.status();
                        status.mark_unchanged();
                    }
                    Follow::Rows => {
                        rows_open = true;
                        version = self.tables.table.version();
                        self.ui.state.queue.restart();
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
                self.ui.state.command.error = None;
                self.ui.state.notice = None;
                let state = &self.ui.state;
                // A search typed in the detail takes the filter bar's keys.
                let mode = match state.mode {
                    InputMode::Detail if self.ui.detail.searching() => InputMode::Filter,
                    // A set image's image is typed with the filter bar's keys.
                    InputMode::Confirm if state.confirm.typing() => InputMode::Filter,
                    mode => mode,
                };
                match map_key(&state.keymap, mode, state.focus, *key) {
                    Some(action) => self.apply(action),
                    None => {
                        self.ui.state.notice = unbound_notice(state.mode, key);
                        Vec::new()
                    }
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
        self.ui.state.deltas.take_taps(first, taps);
    }

    /// Draws one frame (see [`draw::frame`]) and keeps its layout for the next keys.
    pub fn draw<B: Backend>(&mut self, terminal: &mut Terminal<B>) -> Result<(), UiError>
    where
        UiError: From<B::Error>,
    {
        if let (Some(watch), Some(view)) = (self.tree.as_mut(), self.ui.state.tree.as_mut()) {
            watch.refresh_if_stale(view);
        }
        self.ui.state.queue.show(&self.tables.table.queue_metrics());
        let (fifo, informer) = self.tables.table.informer_metrics();
        self.ui.state.queue.informer = Some(InformerStats::new(fifo, &informer));
        self.ui.header.filter = self.tables.table.applied().to_string();
        self.ui.header.usage = self.tables.table.usage_unavailable();
        if let Some(playback) = &self.playback {
            self.ui.state.recording = Some(playback::describe(&playback.status()));
        }
        if self.ui.state.mode == InputMode::Forwards {
            self.ui.state.forwards.show(self.forwards.rows());
        }
        let columns = self.tables.table.columns();
        let parts = Parts {
            header: &self.ui.header,
            columns: &columns,
            with_namespace: self.tables.with_namespace(),
            now: SystemTime::now(),
            color: self.color,
        };
        let table = &self.tables.table;
        self.layout = draw::frame(
            terminal,
            &mut self.ui.state,
            self.ui.detail.screen(),
            &parts,
            |state, rows| state.table.window(table.as_ref(), rows, Timestamp::now()),
        )?;
        Ok(())
    }

    /// Waits for the open detail's fetch and shows it, as the event loop does when one
    /// finishes; false when no fetch can finish any more.
    pub async fn finish_fetch(&mut self) -> bool {
        match self.ui.detail.fetched().await {
            Some(fetched) => {
                self.ui.detail.finish(fetched);
                true
            }
            None => false,
        }
    }

    /// Applies one action in the mode in force: the mode's component handles it, and the
    /// app does what the component's effect asks. Returns what the loop must follow.
    pub fn apply(&mut self, action: Action) -> Vec<Follow> {
        if action == Action::Quit {
            return vec![Follow::Quit];
        }
        let mode = self.ui.state.mode;
        match mode {
            InputMode::Normal => return self.apply_normal(action),
            InputMode::Detail if action == Action::Copy => {
                self.copy_detail();
                return Vec::new();
            }
            InputMode::Detail if action == Action::OpenCommand => {
                self.command_over = self
                    .ui
                    .detail
                    .screen()
                    .map(|d| (d.target.kind.clone(), Arc::from(d.target.key.as_str())));
                self.open_command();
                return Vec::new();
            }
            InputMode::Detail if action == Action::Edit => {
                let Some(detail) = self.ui.detail.screen() else {
                    return Vec::new();
                };
                let (kind, key) = (detail.target.kind.clone(), detail.target.key.clone());
                return self.ask_edit(kind, &key, Section::Detail);
            }
            InputMode::Detail => {
                if !self.ui.detail.apply(&action) {
                    self.ui.state.mode = InputMode::Normal;
                }
                return Vec::new();
            }
            // What discovery found last: a CRD created meanwhile is a command.
            InputMode::Command => {
                self.ui.state.command.discovery = self.tables.starter.catalog().current()
            }
            _ => {}
        }
        let ctx = Context {
            mode,
            table: self.tables.table.as_ref(),
            layout: &self.layout,
            with_namespace: self.tables.with_namespace(),
        };
        let effect = match component_mut(&mut self.ui.state, mode) {
            Some(component) => component.handle(&action, &ctx),
            // The log view's mode with no log view: nothing to type to.
            None => Some(Effect::Close),
        };
        self.follow_effect(mode, effect, action)
    }

    /// Across clusters, the detail and the log view read the selected row's cluster: moved
    /// to its client when the row is another cluster's than the last one opened.
    fn follow_row_cluster(&mut self) {
        let Some(context) = self.tables.table.selected_context() else {
            return;
        };
        if self.row_cluster.as_deref() == Some(context.as_str()) {
            return;
        }
        let fleet = self.tables.starter.fleet();
        let Some(member) = fleet.iter().find(|m| m.cluster().context == context) else {
            return;
        };
        let client = member.cluster().client.clone();
        self.ui.detail = self.ui.detail.for_client(client.clone());
        self.ui.detail.set_tap(self.tables.table.tap().clone());
        self.logs = self.logs.for_client(client);
        self.row_cluster = Some(context);
    }

    /// `l` (or `p` for the previous instances) on the selected row: a pod's log, or the
    /// logs of every pod a workload selects.
    fn open_logs(&mut self, previous: bool) -> Vec<Follow> {
        let Some((kind, key)) = self.tables.table.selected_object() else {
            return Vec::new();
        };
        self.follow_row_cluster();
        let (namespace, name) = split_meta_namespace_key(&key);
        let Some(namespace) = namespace.map(str::to_string) else {
            self.ui.state.command.error = Some(format!("{} have no logs", kind.plural()));
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
                    self.ui.state.command.error = Some(err.to_string());
                    return Vec::new();
                }
            }
        } else {
            self.ui.state.command.error = Some(format!("{} have no logs", kind.plural()));
            return Vec::new();
        };
        self.ui.state.logs = Some(self.logs.open(target, previous));
        self.ui.state.mode = InputMode::Logs;
        Vec::new()
    }

    /// Asks for a shell or attach on the selected pod, once writes are allowed: the loop
    /// then hands the terminal over.
    fn ask_session(&mut self, kind: SessionKind) -> Vec<Follow> {
        let verb = match kind {
            SessionKind::Shell(_) => "a shell",
            SessionKind::Attach => "attach",
        };
        if !self.writes_allowed() {
            self.ui.state.command.error = Some(format!(
                "{verb} is a write: start kscope with --readwrite (or readwrite: true in the config)"
            ));
            return Vec::new();
        }
        let action = match kind {
            SessionKind::Shell(_) => Action::OpenShell,
            SessionKind::Attach => Action::Attach,
        };
        if let Some(refusal) = self.denied(&action) {
            self.ui.state.command.error = Some(refusal);
            return Vec::new();
        }
        let Some((kind_shown, key)) = self.tables.table.selected_object() else {
            return Vec::new();
        };
        if kind_shown != ResourceKind::Pods {
            self.ui.state.command.error = Some(format!("{verb} needs a pod row"));
            return Vec::new();
        }
        let (namespace, name) = split_meta_namespace_key(&key);
        self.ui.state.containers = Some(self.container_reads.read(
            self.tables.starter.cluster().client.clone(),
            namespace.unwrap_or("default").to_string(),
            name.to_string(),
            kind,
        ));
        self.ui.state.mode = InputMode::Containers;
        Vec::new()
    }

    /// The picker's pod was read: a pod with one container opens at once, one that cannot
    /// be read says why; with several, the picker asks.
    fn take_containers(&mut self, read: ContainersRead) -> Vec<Follow> {
        let Some(picker) = self.ui.state.containers.as_mut() else {
            return Vec::new();
        };
        if !picker.read(read) {
            return Vec::new();
        }
        if let Some(Err(why)) = &picker.choices {
            self.ui.state.command.error = Some(why.clone());
            self.ui.state.containers = None;
            self.ui.state.mode = InputMode::Normal;
            return Vec::new();
        }
        if picker.single() {
            return self.start_session();
        }
        Vec::new()
    }

    /// The picker's container chosen: the loop hands the terminal to its session.
    fn start_session(&mut self) -> Vec<Follow> {
        self.ui.state.mode = InputMode::Normal;
        let Some(picker) = self.ui.state.containers.take() else {
            return Vec::new();
        };
        let Some(container) = picker.chosen().map(str::to_string) else {
            return Vec::new();
        };
        self.session = Some(SessionRequest {
            client: self.tables.starter.cluster().client.clone(),
            namespace: picker.namespace,
            pod: picker.pod,
            container: Some(container),
            kind: picker.kind,
        });
        vec![Follow::Handover]
    }

    /// Waits for the container picker's read and takes it, as the event loop does; the
    /// follows it asks for (a handover when the pod has one container).
    pub async fn next_containers(&mut self) -> Option<Vec<Follow>> {
        let read = self.container_reads.next().await?;
        Some(self.take_containers(read))
    }

    /// Does what the component of `mode` asks with `effect`; `action` is the one it
    /// handled.
    fn follow_effect(
        &mut self,
        mode: InputMode,
        effect: Option<Effect>,
        action: Action,
    ) -> Vec<Follow> {
        match effect {
            None => Vec::new(),
            // The command line opened over the detail closes back onto it.
            Some(Effect::Close)
                if mode == InputMode::Command
                    && self.command_over.take().is_some()
                    && self.ui.detail.is_open() =>
            {
                self.ui.state.mode = InputMode::Detail;
                Vec::new()
            }
            Some(Effect::Close) => {
                if let Some(mut view) = self.ui.state.logs.take_if(|_| mode == InputMode::Logs) {
                    self.logs.follow(&mut view, &Effect::Close);
                }
                if matches!(mode, InputMode::Tree | InputMode::Hot | InputMode::Timeline) {
                    self.close_workbench();
                }
                if mode == InputMode::Containers {
                    self.ui.state.containers = None;
                }
                if mode == InputMode::Confirm {
                    self.cascade = None;
                }
                // Nothing is scraped while the panel is not shown.
                if self
                    .ui
                    .state
                    .metrics
                    .take_if(|_| mode == InputMode::Metrics)
                    .is_some()
                {
                    self.metrics.stop();
                }
                self.ui.state.mode = InputMode::Normal;
                Vec::new()
            }
            Some(Effect::ShowObject(object)) => {
                self.close_workbench();
                self.ui.state.mode = InputMode::Normal;
                self.tables.show_object(&mut self.ui, &object)
            }
            Some(Effect::Write) => {
                self.confirmed();
                Vec::new()
            }
            Some(Effect::StartSession) => self.start_session(),
            Some(Effect::ForwardContainer) => {
                self.forward_container();
                Vec::new()
            }
            Some(Effect::StartForward) => {
                self.start_forward();
                Vec::new()
            }
            Some(Effect::StopForward(id)) => {
                if let Some(row) = self.forwards.stop(id) {
                    self.ui.state.notice = Some(format!(
                        "stopped the port-forward {} → {}:{}",
                        row.local, row.pod, row.port
                    ));
                }
                self.ui.state.forwards.show(self.forwards.rows());
                Vec::new()
            }
            Some(Effect::Check) => {
                if let Some(plan) = &self.ui.state.confirm.plan {
                    self.writes.check(plan);
                }
                Vec::new()
            }
            Some(Effect::Mode(mode)) => {
                self.ui.state.mode = mode;
                Vec::new()
            }
            Some(Effect::Pass) => self.apply_normal(action),
            Some(Effect::Refilter) => self.tables.refilter(&mut self.ui),
            Some(Effect::ClearFilter) => self.tables.clear_filter_or_back(&mut self.ui),
            Some(Effect::Run(input)) => {
                self.ui.state.mode = InputMode::Normal;
                // Run over the detail, the command is about its object; what the command
                // shows takes the detail's place.
                let over = self.command_over.take();
                if over.is_some() {
                    self.ui.detail.close();
                }
                self.run_command(&input, over)
            }
            Some(Effect::Browse(index)) => {
                self.tables.browse_index(&mut self.ui, index);
                Vec::new()
            }
            Some(Effect::Filter(query)) => {
                self.ui.state.filter.input = query;
                self.ui.state.mode = InputMode::Normal;
                self.tables.refilter(&mut self.ui)
            }
            Some(Effect::OpenEntry(seq)) => {
                // The panel shows the tap of the table's kind (a mixed table's selected row's).
                if self
                    .ui
                    .detail
                    .open_seq(self.tables.table.kind().clone(), seq)
                {
                    self.ui.state.mode = InputMode::Detail;
                }
                Vec::new()
            }
            Some(effect @ (Effect::Refresh | Effect::Save)) => {
                // The log view's: read again, or save what it keeps.
                if let Some(view) = self.ui.state.logs.as_mut() {
                    self.logs.follow(view, &effect);
                }
                Vec::new()
            }
            Some(Effect::SwitchContext(context)) => {
                self.ui.state.mode = InputMode::Normal;
                self.switch_context(context);
                Vec::new()
            }
        }
    }

    /// Starts connecting to `context`; the tables switch once it answers
    /// ([`App::finish_context`]), and until then the old cluster stays on screen.
    fn switch_context(&mut self, context: String) {
        self.contexts.request(&mut self.ui, context);
    }

    /// A `:ctx` connection finished: the tables move to the new cluster (see
    /// [`ContextSwitcher::switch`]), and the log readers and selector fetches follow them;
    /// on failure nothing changes but the message saying why.
    pub fn finish_context(&mut self, connected: Connected) -> Vec<Follow> {
        match self
            .contexts
            .switch(connected, &mut self.tables, &mut self.ui)
        {
            Some((client, follow)) => {
                self.row_cluster = None;
                self.logs = self.logs.for_client(client.clone());
                self.metrics = self.metrics.for_client(client.clone());
                self.writes = self
                    .writes
                    .for_client(client.clone(), self.ui.header.context.clone());
                let elsewhere = self
                    .forwards
                    .set_client(client.clone(), self.ui.header.context.clone());
                let kept = match elsewhere {
                    0 => None,
                    1 => Some("1 port-forward keeps running in its own context".to_string()),
                    n => Some(format!(
                        "{n} port-forwards keep running in their own contexts"
                    )),
                };
                if let Some(kept) = kept {
                    // After the switch's own line, which the status line shows.
                    let said = self.ui.state.command.error.take();
                    self.ui.state.command.error = Some(match said {
                        Some(said) => format!("{said}; {kept} · :pf lists them"),
                        None => format!("{kept} · :pf lists them"),
                    });
                }
                self.follow_write_mode();
                follow
            }
            None => Vec::new(),
        }
    }

    /// The main screen's actions: movement goes to the focused panel, the table's own keys
    /// to the table, and the rest are the screen's.
    fn apply_normal(&mut self, action: Action) -> Vec<Follow> {
        let ctx = Context {
            mode: InputMode::Normal,
            table: self.tables.table.as_ref(),
            layout: &self.layout,
            with_namespace: self.tables.with_namespace(),
        };
        let deltas_focused = self.ui.state.panels && self.ui.state.focus == Focus::Deltas;
        if deltas_focused && (is_movement(&action) || action == Action::OpenDeltaDiff) {
            let effect = self.ui.state.deltas.handle(&action, &ctx);
            return self.follow_effect(InputMode::Normal, effect, action);
        }
        let handled = self.ui.state.table.handle(&action, &ctx).is_none();
        // In a category's table the panels follow the selected row's kind.
        let mut follow = self.tables.follow_row_kind(&mut self.ui);
        if handled {
            // The selected object's history is kept beyond the tap's ring from now on.
            if let Some((_, key)) = self.tables.table.selected_object() {
                self.tables.table.tap().keep_history(&key);
            }
        } else {
            follow.extend(self.apply_screen(action));
        }
        follow
    }

    /// The main screen's keys that belong to no component: they open a mode or a panel,
    /// or what the selected row holds.
    fn apply_screen(&mut self, action: Action) -> Vec<Follow> {
        let state = &mut self.ui.state;
        match action {
            Action::DrillDown => {
                self.follow_row_cluster();
                return self.tables.drill_down(&mut self.ui);
            }
            Action::JumpToOwner => return self.tables.jump_to_owner(&mut self.ui),
            Action::OpenTree => self.open_tree(),
            Action::OpenHot => self.open_hot(),
            Action::ToggleRecord => self.toggle_record(None),
            Action::OpenDetail => {
                if let Some((kind, key)) = self.tables.table.selected_object() {
                    self.follow_row_cluster();
                    self.ui.open_detail(kind, &key);
                }
            }
            Action::Describe => {
                if let Some((kind, key)) = self.tables.table.selected_object() {
                    self.follow_row_cluster();
                    self.ui.detail.open_on(kind, &key, DetailTab::Describe);
                    self.ui.state.mode = InputMode::Detail;
                }
            }
            Action::FilterClear => return self.tables.clear_filter_or_back(&mut self.ui),
            Action::OpenLogs => return self.open_logs(false),
            Action::OpenPreviousLogs => return self.open_logs(true),
            Action::OpenShell => {
                let kind = SessionKind::Shell(self.actions.shell.clone());
                return self.ask_session(kind);
            }
            Action::Attach => return self.ask_session(SessionKind::Attach),
            Action::PortForward => self.open_forward(),
            Action::OpenDeltaFilter => state.mode = InputMode::DeltaFilter,
            Action::ClearDeltaFilter if !state.deltas.filter.input.is_empty() => {
                state.deltas.clear_filter();
            }
            // With no delta filter to clear, Esc clears the table's, whichever pane has focus.
            Action::ClearDeltaFilter => return self.tables.clear_filter_or_back(&mut self.ui),
            Action::OpenFilter => state.mode = InputMode::Filter,
            Action::OpenCommand => self.open_command(),
            Action::FavouriteNamespace(n) => {
                return self.tables.favourite_namespace(&mut self.ui, n);
            }
            Action::TogglePanels => {
                state.panels = !state.panels;
                state.focus = Focus::Table;
                self.layout = Layout::new(self.layout.area, state.panels);
                self.remembered.set_panels(state.panels);
            }
            Action::FocusNext => {
                state.focus = match state.focus {
                    Focus::Table if state.panels => Focus::Deltas,
                    _ => Focus::Table,
                };
            }
            Action::TogglePause => state.deltas.toggle_pause(),
            Action::NextFifo => {
                let (fifo, compare) = self.tables.table.pipelines();
                let at = FifoKind::ALL.iter().position(|f| *f == fifo).unwrap_or(0);
                let next = FifoKind::ALL[(at + 1) % FifoKind::ALL.len()];
                // Side by side stays on, against the FIFO just left if it was the other.
                let compare = compare.map(|c| if c == next { fifo } else { c });
                return self.tables.restart_with(&mut self.ui, next, compare);
            }
            Action::ToggleSideBySide => {
                let (fifo, compare) = self.tables.table.pipelines();
                let compare = match (compare, fifo) {
                    (Some(_), _) => None,
                    (None, FifoKind::Classic) => Some(FifoKind::Real),
                    (None, _) => Some(FifoKind::Classic),
                };
                return self.tables.restart_with(&mut self.ui, fifo, compare);
            }
            Action::ToggleIndexes => {
                state.mode = InputMode::Indexes;
                state.browser.names = self.tables.table.index_names();
                let current = state.browser.current;
                self.tables.browse_index(&mut self.ui, current);
            }
            Action::ToggleHelp => state.mode = InputMode::Help,
            Action::SortBy(title) => state.notice = Some(format!("no {title} column here")),
            Action::Edit => {
                if let Some((kind, key)) = self.tables.table.selected_object() {
                    return self.ask_edit(kind, &key, Section::Normal);
                }
            }
            Action::Copy => {
                if let Some((_, key)) = self.tables.table.selected_object() {
                    let (_, name) = split_meta_namespace_key(&key);
                    let name = name.to_string();
                    self.copy(&name, &name);
                }
            }
            Action::Delete
            | Action::Kill
            | Action::Restart
            | Action::Scale
            | Action::RolloutUndo
            | Action::SetImage
            | Action::Cordon
            | Action::Drain
            | Action::Suspend
            | Action::TriggerJob => return self.start_write(&action),
            Action::ReplayPlayPause
            | Action::ReplayFaster
            | Action::ReplaySlower
            | Action::ReplayStep => self.control_playback(&action),
            _ => {}
        }
        Vec::new()
    }

    /// `:` opens the command line.
    fn open_command(&mut self) {
        let state = &mut self.ui.state;
        state.mode = InputMode::Command;
        state.command.input.clear();
        // For `:ctx NAME<Tab>`; a kubeconfig that cannot be read completes nothing
        // (`:ctx` says why).
        state.command.contexts = self
            .contexts
            .contexts()
            .map(|(names, _)| names)
            .unwrap_or_default();
        // For `:nsset NAME<Tab>`.
        let group = group_of(&self.ui.header.context);
        let sets = self.ui.namespace_sets.sets(&group);
        state.command.namespace_sets = sets.into_iter().filter_map(|s| s.name).collect();
    }

    /// `x` (or `:tree`): the selected row's ownership tree, read from informers started now
    /// on the kinds it can hold (the row's, its controller's, and the workload kinds) in
    /// the row's namespace; they stop when the tree closes.
    fn open_tree(&mut self) {
        let table = self.tables.table.as_ref();
        let (Some(row), Some((kind, key))) = (table.selected(), table.selected_object()) else {
            self.ui.state.command.error = Some("tree: select a row first".into());
            return;
        };
        let discovery = self.tables.starter.catalog().current();
        let mut first = vec![kind.clone()];
        if let Some(owner) = table
            .controller_owner(&row)
            .and_then(|(owner, _)| discovery.resolve(&owner).ok())
        {
            first.push(owner);
        }
        let (namespace, name) = split_meta_namespace_key(&key);
        let scope = match namespace {
            Some(ns) => NamespaceScope::One(ns.to_string()),
            None => NamespaceScope::All,
        };
        match TreeWatch::start(self.tables.starter.cluster(), &first, &discovery, &scope) {
            Ok(mut watch) => {
                let mut view = TreeView::new(ObjectRef {
                    kind: kind.kind().to_string(),
                    namespace: namespace.map(str::to_string),
                    name: name.to_string(),
                });
                watch.refresh(&mut view);
                self.tree = Some(watch);
                self.ui.state.tree = Some(view);
                self.ui.state.mode = InputMode::Tree;
            }
            Err(err) => self.ui.state.command.error = Some(format!("tree: {err}")),
        }
    }

    /// Waits (at most `patience`) for a change to the open tree's stores and marks the tree
    /// stale, as the event loop does: the next frame drawn rebuilds it. False when none
    /// came.
    pub async fn next_tree_change(&mut self, patience: Duration) -> bool {
        tokio::time::timeout(patience, tree_changed(&mut self.tree))
            .await
            .is_ok()
    }

    /// `H` (or `:hot`): the field managers and objects by write rate, from informers
    /// started now on the hot-loop kinds and the table's, in the table's scope; they stop
    /// when the view closes.
    fn open_hot(&mut self) {
        let discovery = self.tables.starter.catalog().current();
        let first = [self.tables.table.kind().clone()];
        let scope = self.tables.view.scope.clone();
        match HotWatch::start(self.tables.starter.cluster(), &first, &discovery, &scope) {
            Ok((watch, kinds)) => {
                let mut view = HotView::new(kinds);
                watch.report_into(&mut view);
                self.hot = Some(watch);
                self.ui.state.hot = Some(view);
                self.ui.state.mode = InputMode::Hot;
            }
            Err(err) => self.ui.state.command.error = Some(format!("hot: {err}")),
        }
    }

    /// `ctrl-r` or `:record`: stops the recording under way, or starts one of the kinds on
    /// screen in the table's scope, to `output` or a new file under the state directory.
    fn toggle_record(&mut self, output: Option<PathBuf>) {
        if output.is_none() && self.stop_record() {
            return;
        }
        let kinds = match &self.tables.category {
            Some(category) => category.kinds.clone(),
            None => vec![self.tables.table.kind().clone()],
        };
        let scope = self.tables.view.scope.clone();
        match self.record.start(
            self.tables.starter.cluster(),
            &kinds,
            scope.namespace(),
            output,
        ) {
            Ok(said) => self.ui.state.notice = Some(said),
            Err(err) => self.ui.state.command.error = Some(format!("record: {err}")),
        }
        self.refresh_record();
    }

    /// Stops the recording under way (the next ticks say how it ended); `false` when none.
    fn stop_record(&mut self) -> bool {
        let stopped = self.record.stop();
        if stopped {
            self.ui.state.recorder = None;
            self.ui.state.notice = Some("finishing the recording...".into());
        }
        stopped
    }

    /// The recording's size and rate into the header, and how a stop or a failure ended.
    fn refresh_record(&mut self) {
        let news = self.record.tick(Instant::now());
        self.ui.state.recorder = news.header;
        if let Some(notice) = news.notice {
            self.ui.state.notice = Some(notice);
        }
        if let Some(error) = news.error {
            self.ui.state.command.error = Some(format!("record: {error}"));
        }
    }

    /// Reads the detector's report into the open view.
    fn refresh_hot(&mut self) {
        if let (Some(watch), Some(view)) = (&self.hot, self.ui.state.hot.as_mut()) {
            watch.report_into(view);
        }
    }

    /// Takes the hot loops' watch events for `patience` into the detector and reads its
    /// report, as the event loop does over a tick.
    pub async fn watch_hot(&mut self, patience: Duration) {
        let _ = tokio::time::timeout(patience, async {
            loop {
                hot_next(&mut self.hot).await;
            }
        })
        .await;
        self.refresh_hot();
    }

    /// `:timeline`: the timeline of `over` (the detail's object) or of the selected row, from
    /// informers started now on its kind and on Events in its namespace, and one read of
    /// it; they stop when the view closes.
    fn open_timeline(&mut self, over: Option<(kscope_resources::Kind, Arc<str>)>) {
        let Some((kind, key)) = over.or_else(|| self.tables.table.selected_object()) else {
            self.ui.state.command.error = Some("timeline: select a row first".into());
            return;
        };
        let discovery = self.tables.starter.catalog().current();
        let (namespace, name) = split_meta_namespace_key(&key);
        let of = ObjectRef {
            kind: kind.kind().to_string(),
            namespace: namespace.map(str::to_string),
            name: name.to_string(),
        };
        match TimelineWatch::start(self.tables.starter.cluster(), &kind, &discovery, &of) {
            Ok(watch) => {
                self.timeline = Some(watch);
                self.ui.state.timeline = Some(TimelineView::new(of));
                self.ui.state.mode = InputMode::Timeline;
            }
            Err(err) => self.ui.state.command.error = Some(format!("timeline: {err}")),
        }
    }

    /// Reads the timeline into the open view.
    fn refresh_timeline(&mut self) {
        if let (Some(watch), Some(view)) = (&self.timeline, self.ui.state.timeline.as_mut()) {
            watch.refresh(view);
        }
    }

    /// Waits (at most `patience`) for an arrival that changes the open timeline and reads
    /// it into the view, as the event loop does; false when none came.
    pub async fn next_timeline_change(&mut self, patience: Duration) -> bool {
        let changed = tokio::time::timeout(patience, async {
            while !timeline_next(&mut self.timeline).await {}
        })
        .await;
        match changed {
            Ok(()) => {
                self.refresh_timeline();
                true
            }
            Err(_) => false,
        }
    }

    /// The workbench views close: their informers stop.
    fn close_workbench(&mut self) {
        self.tree = None;
        self.ui.state.tree = None;
        self.hot = None;
        self.ui.state.hot = None;
        self.timeline = None;
        self.ui.state.timeline = None;
    }

    /// Waits (at most `patience`) for the Service selector asked for by Enter and follows
    /// it, as the event loop does; false when none came.
    pub async fn next_selector(&mut self, patience: Duration) -> bool {
        match tokio::time::timeout(patience, self.tables.selectors.selected()).await {
            Ok(Some(selected)) => {
                self.finish_selector(selected);
                true
            }
            _ => false,
        }
    }

    /// Waits (at most `patience`) for the answer whether a namespace shown exists and takes
    /// it, as the event loop does; false when none came.
    pub async fn next_namespace_check(&mut self, patience: Duration) -> bool {
        match tokio::time::timeout(patience, self.tables.namespaces.checked()).await {
            Ok(Some(checked)) => {
                self.tables.finish_namespace(&mut self.ui, checked);
                true
            }
            _ => false,
        }
    }

    /// A Service's selector arrived: its pods (see [`Tables::finish_selector`]), as the
    /// event loop does.
    pub fn finish_selector(&mut self, selected: Selected) -> Vec<Follow> {
        self.tables.finish_selector(&mut self.ui, selected)
    }

    /// Runs a command line typed after `:`; an error is shown and changes nothing.
    /// `over`: the object whose detail the command line was opened over.
    fn run_command(
        &mut self,
        input: &str,
        over: Option<(kscope_resources::Kind, Arc<str>)>,
    ) -> Vec<Follow> {
        match command::parse(input, &self.ui.state.command.discovery) {
            Ok(Command::Quit) => vec![Follow::Quit],
            Ok(Command::Seek(to)) => {
                self.seek_playback(&to);
                Vec::new()
            }
            Ok(Command::Fifo { fifo, compare }) => {
                self.tables.restart_with(&mut self.ui, fifo, compare)
            }
            Ok(Command::Index(definition)) => self.tables.add_index(&mut self.ui, definition),
            Ok(Command::Tree) => {
                self.open_tree();
                Vec::new()
            }
            Ok(Command::Hot) => {
                self.open_hot();
                Vec::new()
            }
            Ok(Command::Forwards) => {
                self.ui.state.forwards.show(self.forwards.rows());
                self.ui.state.mode = InputMode::Forwards;
                Vec::new()
            }
            Ok(Command::Metrics { port }) => self.open_metrics(port),
            Ok(Command::Record(file)) => {
                self.toggle_record(file.map(PathBuf::from));
                Vec::new()
            }
            Ok(Command::RecordStop) => {
                if !self.stop_record() {
                    self.ui.state.command.error = Some(":record stop  nothing is recording".into());
                }
                Vec::new()
            }
            Ok(Command::Timeline) => {
                self.open_timeline(over);
                Vec::new()
            }
            Ok(Command::Context(Some(context))) => {
                self.switch_context(context);
                Vec::new()
            }
            Ok(Command::Context(None)) => {
                match self.contexts.contexts() {
                    Ok((names, _)) => {
                        let current = Some(self.ui.header.context.clone());
                        self.ui.state.contexts = ContextPicker::new(names, current);
                        self.ui.state.mode = InputMode::Contexts;
                    }
                    Err(err) => self.ui.state.command.error = Some(format!(":ctx  {err}")),
                }
                Vec::new()
            }
            Ok(Command::NamespaceSet(asked)) => self.namespace_set(asked),
            Ok(Command::Show { kind, scope }) => {
                let scope = scope.unwrap_or_else(|| self.tables.view.scope.clone());
                let to = ViewSpec::new(kind, scope);
                let shown = self.tables.category.is_none() && self.tables.gone.is_none();
                if shown && to.kind == self.tables.view.kind && to.scope == self.tables.view.scope {
                    // Already shown: the command asks for all of it again.
                    self.tables.view.filter.clear();
                    self.ui.state.filter.input.clear();
                    self.tables.refilter(&mut self.ui)
                } else {
                    self.tables.switch(&mut self.ui, to, true)
                }
            }
            Ok(Command::ShowCategory { category, scope }) => {
                let scope = scope.unwrap_or_else(|| self.tables.view.scope.clone());
                if self.tables.category.as_ref() == Some(&category)
                    && scope == self.tables.view.scope
                {
                    self.tables.view.filter.clear();
                    self.ui.state.filter.input.clear();
                    self.tables.refilter(&mut self.ui)
                } else {
                    self.tables
                        .show_category(&mut self.ui, category, scope, true)
                }
            }
            Err(err) => {
                self.ui.state.command.error = Some(format!(":{}  {err}", input.trim()));
                Vec::new()
            }
        }
    }
}

impl App {
    /// `:nsset`: the cluster group's namespace sets listed, one shown, saved and shown, or
    /// deleted; what was done is said in the message line.
    fn namespace_set(&mut self, asked: SetCommand) -> Vec<Follow> {
        let group = group_of(&self.ui.header.context);
        let sets = &mut self.ui.namespace_sets;
        let say = |ui: &mut Surface, said: String| ui.state.command.error = Some(said);
        match asked {
            SetCommand::List => {
                let saved: Vec<String> = sets.sets(&group).iter().map(|s| s.to_string()).collect();
                let said = match saved.is_empty() {
                    true => {
                        format!("no namespace sets for {group} yet: :nsset NAME a,b,c saves one")
                    }
                    false => format!("namespace sets for {group}: {}", saved.join(" · ")),
                };
                say(&mut self.ui, said);
                Vec::new()
            }
            SetCommand::Show(name) => match sets.get(&group, &name) {
                Some(scope) => self.tables.show_scope(&mut self.ui, scope),
                None => {
                    let said = format!(
                        ":nsset {name}  no such set for {group}: :nsset lists them, :nsset {name} a,b,c saves it"
                    );
                    say(&mut self.ui, said);
                    Vec::new()
                }
            },
            SetCommand::Save { name, namespaces } => {
                let scope = sets.save(&group, &name, namespaces);
                let said = format!("namespace set {name} saved for {group}");
                // Said unless showing the set failed, which says why instead.
                self.ui.state.command.error = None;
                let follow = self.tables.show_scope(&mut self.ui, scope);
                if self.ui.state.command.error.is_none() {
                    say(&mut self.ui, said);
                }
                follow
            }
            SetCommand::Delete(name) => {
                let said = match sets.delete(&group, &name) {
                    true => format!("namespace set {name} deleted for {group}"),
                    false => format!(":nsset -d {name}  no such set for {group}"),
                };
                say(&mut self.ui, said);
                Vec::new()
            }
        }
    }
}

/// The write target of a row: its kind, namespace and name.
fn target(kind: kscope_resources::Kind, key: &str) -> Target {
    let (namespace, name) = split_meta_namespace_key(key);
    Target {
        kind,
        namespace: namespace.map(str::to_string),
        name: name.to_string(),
    }
}

/// The next change to the ownership tree's stores, or never while no tree is open.
async fn tree_changed(tree: &mut Option<TreeWatch>) {
    match tree {
        Some(watch) => watch.changed().await,
        None => std::future::pending().await,
    }
}

/// The hot loops' next watch event taken, or never while the view is closed.
async fn hot_next(hot: &mut Option<HotWatch>) {
    match hot {
        Some(watch) => watch.next().await,
        None => std::future::pending().await,
    }
}

/// Whether the timeline's next arrival changed it, or never while the view is closed.
async fn timeline_next(timeline: &mut Option<TimelineWatch>) -> bool {
    match timeline {
        Some(watch) => watch.next().await,
        None => std::future::pending().await,
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

/// What the status line says of a letter that is no key on the main screen. As in k9s, keys
/// there are commands, never the start of a search: a name typed with the table focused
/// runs each letter that is bound and skips the others, and this says where text goes.
fn unbound_notice(mode: InputMode, key: &crossterm::event::KeyEvent) -> Option<String> {
    use crossterm::event::{KeyCode, KeyModifiers};
    let plain = !key
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
    match key.code {
        KeyCode::Char(c) if plain && mode == InputMode::Normal && !c.is_whitespace() => Some(
            format!("{c} is not a key here: / filters the rows by text, ? lists the keys"),
        ),
        _ => None,
    }
}
