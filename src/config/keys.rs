//! The key and action vocabulary of the `keys:` configuration: the actions a key can name,
//! key specs (`j`, `ctrl-d`, `shift-tab`) and the [`Keymap`] built from the sections. It
//! knows no terminal library and no UI type, so the configuration is checked (by `kscope
//! get` as by the TUI) without the UI; the UI turns terminal events into [`KeySpec`]s.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use super::ConfigError;

/// One user intent. The event loop maps keys to these; the state applies them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Quit,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    /// Sort by the next column.
    SortNext,
    /// Reverse the sort order.
    SortReverse,
    /// Sort by the column of this title (k9s's shift-letter keys); again reverses it.
    SortBy(&'static str),
    /// Open the filter bar.
    OpenFilter,
    /// A character typed into the filter bar.
    FilterChar(char),
    FilterBackspace,
    /// Keep the filter and go back to the table.
    FilterAccept,
    /// Clear the filter and go back to the table.
    FilterClear,
    /// Show or hide the delta stream and workqueue panels.
    TogglePanels,
    /// Move the keyboard focus between the table and the delta stream.
    FocusNext,
    /// Pause or resume the delta stream tail.
    TogglePause,
    ToggleHelp,
    /// Open or close the index browser.
    ToggleIndexes,
    /// Browse the next or previous index.
    NextIndex,
    PrevIndex,
    /// Filter the table by the browsed index value.
    ChooseValue,
    /// Mark or unmark the context selected in the `:ctx` picker: Enter then opens the
    /// marked contexts as one fleet, as `:ctx a,b` does.
    MarkContext,
    /// Type a filter for the delta panel.
    OpenDeltaFilter,
    ClearDeltaFilter,
    /// Open the full diff of the delta panel's selected entry.
    OpenDeltaDiff,
    /// Restart the table's informer with the next FIFO (classic, real, atomic).
    NextFifo,
    /// Show two pipelines side by side in the delta panel, or one again.
    ToggleSideBySide,
    /// Open the selected object's detail (YAML and history).
    OpenDetail,
    /// Open the selected object's detail on its describe (`kubectl describe`).
    Describe,
    /// Switch between the detail's Describe, YAML and History tabs.
    DetailTab,
    /// Scroll the detail's text sideways, for lines wider than the screen.
    ScrollLeft,
    ScrollRight,
    /// Wrap the detail's long lines instead of cutting them.
    ToggleWrap,
    /// Show or hide `metadata.managedFields` in the detail.
    ToggleManagedFields,
    /// Fetch the detail's object again.
    Refresh,
    /// Open the full diff of the selected history entry.
    OpenDiff,
    /// Leave the detail's current screen: diff → history → table.
    Back,
    /// Open the command bar (`:`).
    OpenCommand,
    /// Line editing in the filter, delta filter and command bars: the cursor one character
    /// left or right, to the start or end; delete the character under the cursor, the word
    /// before it, everything before it; the previous or next line kept.
    LineLeft,
    LineRight,
    LineStart,
    LineEnd,
    LineDelete,
    LineDeleteWord,
    LineDeleteToStart,
    LineHistoryPrevious,
    LineHistoryNext,
    /// A character typed into the command bar.
    CommandChar(char),
    CommandBackspace,
    /// Complete the command name being typed.
    CommandComplete,
    /// Run the typed command.
    CommandRun,
    /// Close the command bar without running anything.
    CommandCancel,
    /// Show or hide the wide columns (`kubectl get -o wide`'s).
    ToggleWide,
    /// Open what the selected row contains: a namespace's, node's or Service's pods, a
    /// deployment's replicasets, a workload's pods, a CronJob's Jobs.
    DrillDown,
    /// Show the selected object's controller (a pod's ReplicaSet, a ReplicaSet's
    /// Deployment), selected in its kind's table: the owner reference followed up.
    JumpToOwner,
    /// The selected object's ownership tree: its owners up to the root and what it owns
    /// down through ownerReferences, each with its health, kept live.
    OpenTree,
    /// The field managers and objects by write rate, self-triggering loops flagged.
    OpenHot,
    /// Show the kind in favourite namespace N (1–9, the most recently used first), or in
    /// all namespaces (0), as k9s's number keys.
    FavouriteNamespace(u8),
    /// The selected pod's log (a container picker when it has several), or all the pods of
    /// the selected workload, interleaved.
    OpenLogs,
    /// The same, for the previous (terminated) instance of each container.
    OpenPreviousLogs,
    /// An interactive shell in the selected pod's container (a write: it needs read-write).
    OpenShell,
    /// Attach to the selected pod's container, as `kubectl attach -it` (a write too).
    Attach,
    /// Type a search in the log view.
    OpenLogSearch,
    /// The next or previous line matching the search.
    NextMatch,
    PrevMatch,
    /// Show only the lines that match the search, or all again.
    ToggleLogFilter,
    ToggleTimestamps,
    /// Switch between the current and the previous instance of the containers.
    TogglePrevious,
    /// Ask for another part of the log.
    LogRange(LogRange),
    /// Save the lines kept (or matching) to a file.
    SaveLogs,
    /// Type a search in the detail's describe, YAML or diff.
    OpenTextSearch,
    /// Save the detail's YAML or describe to a file.
    SaveText,
    /// Mark or unmark the selected row: the write actions act on the marked rows when
    /// there are any, as k9s's space does.
    Mark,
    /// Delete the selected (or marked) objects, gracefully, after a confirm.
    Delete,
    /// Delete them with no grace period (`kubectl delete --grace-period=0 --force`).
    Kill,
    /// `kubectl rollout restart` a Deployment, StatefulSet or DaemonSet.
    Restart,
    /// Set the replicas of a Deployment, StatefulSet or ReplicaSet.
    Scale,
    /// `kubectl rollout undo` a Deployment, StatefulSet or DaemonSet: back to the previous
    /// revision's pod template.
    RolloutUndo,
    /// `kubectl set image` one container of a Deployment, StatefulSet or DaemonSet.
    SetImage,
    /// Cordon a node, or uncordon a cordoned one.
    Cordon,
    /// Cordon a node and evict its pods through the Eviction API.
    Drain,
    /// Suspend a CronJob, or resume a suspended one.
    Suspend,
    /// Create a Job from a CronJob's template now (`kubectl create job --from=cronjob/X`).
    TriggerJob,
    /// Copy the selected row's name (in a detail, its YAML or describe text) to the
    /// clipboard, by OSC 52.
    Copy,
    /// Edit the selected object (or the detail's) in `$EDITOR`, as `kubectl edit`.
    Edit,
    /// In a recording played (`kscope replay FILE`): play or pause it.
    ReplayPlayPause,
    /// Play the recording faster or slower, through 0.1× to 100×.
    ReplayFaster,
    ReplaySlower,
    /// Pause and play the recording's next event.
    ReplayStep,
    /// Start recording what is on screen to a file (`:record`), or stop and finish it.
    ToggleRecord,
    /// In the confirm dialog: accept, or cancel.
    ConfirmYes,
    ConfirmNo,
    /// In the confirm dialog: move between its buttons.
    ConfirmSwitch,
    /// In a delete's confirm dialog: the next cascade (Background, Foreground, Orphan).
    ConfirmCascade,
    /// In the confirm dialog: a digit or Backspace in its number input.
    ConfirmChar(char),
    ConfirmBackspace,
    /// Forward a local port to one of the selected pod's or Service's ports (kubectl
    /// port-forward), after a dialog that picks the port.
    PortForward,
    /// In the `:pf` list: stop the selected port-forward.
    StopForward,
}

/// Which part of the log to ask for, as k9s's 0–5 keys choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LogRange {
    /// The newest lines (the configuration's `tailLines`).
    Tail,
    /// The lines written in the last this many seconds.
    Since(u32),
    /// Everything the kubelet still keeps.
    All,
}

impl LogRange {
    pub fn label(self, tail: u64) -> String {
        match self {
            Self::Tail => format!("tail {tail}"),
            Self::Since(s) if s % 3600 == 0 => format!("since {}h", s / 3600),
            Self::Since(s) if s % 60 == 0 => format!("since {}m", s / 60),
            Self::Since(s) => format!("since {s}s"),
            Self::All => "all".into(),
        }
    }
}

/// Every action a key can name: (name in the `keys:` section, action, help line). Adding an
/// action is one line here and its default keys in `config/kscope.yaml`.
pub const ACTIONS: &[(&str, Action, &str)] = &[
    ("quit", Action::Quit, "quit (Ctrl-C always quits)"),
    ("up", Action::Up, "move the selection up"),
    ("down", Action::Down, "move the selection down"),
    ("page-up", Action::PageUp, "page up"),
    ("page-down", Action::PageDown, "page down"),
    ("top", Action::Top, "first row"),
    (
        "bottom",
        Action::Bottom,
        "last row (delta panel: follow the newest)",
    ),
    ("sort-next", Action::SortNext, "sort by the next column"),
    (
        "sort-reverse",
        Action::SortReverse,
        "reverse the sort order",
    ),
    ("sort-name", Action::SortBy("NAME"), "sort by NAME"),
    ("sort-age", Action::SortBy("AGE"), "sort by AGE"),
    ("sort-status", Action::SortBy("STATUS"), "sort by STATUS"),
    ("sort-ready", Action::SortBy("READY"), "sort by READY"),
    (
        "sort-restarts",
        Action::SortBy("RESTARTS"),
        "sort by RESTARTS",
    ),
    ("sort-cpu", Action::SortBy("CPU"), "sort by CPU"),
    ("sort-mem", Action::SortBy("MEM"), "sort by MEM"),
    ("sort-ip", Action::SortBy("IP"), "sort by IP"),
    ("sort-node", Action::SortBy("NODE"), "sort by NODE"),
    (
        "open-filter",
        Action::OpenFilter,
        "filter: app=web,node=n1 · app in (a,b) · !app · text",
    ),
    (
        "filter-backspace",
        Action::FilterBackspace,
        "delete a character",
    ),
    (
        "filter-accept",
        Action::FilterAccept,
        "keep the filter and return",
    ),
    (
        "filter-clear",
        Action::FilterClear,
        "clear the filter, else back to the previous view",
    ),
    (
        "toggle-panels",
        Action::TogglePanels,
        "show / hide the delta and workqueue panels",
    ),
    (
        "focus-next",
        Action::FocusNext,
        "move focus between the table and the delta panel",
    ),
    (
        "toggle-pause",
        Action::TogglePause,
        "pause / resume the delta stream",
    ),
    ("toggle-help", Action::ToggleHelp, "this help"),
    ("toggle-indexes", Action::ToggleIndexes, "index browser"),
    ("next-index", Action::NextIndex, "browse the next index"),
    ("prev-index", Action::PrevIndex, "browse the previous index"),
    (
        "choose-value",
        Action::ChooseValue,
        "filter the table by the value",
    ),
    (
        "mark-context",
        Action::MarkContext,
        "mark / unmark a context (:ctx); enter opens the marked ones as one fleet",
    ),
    (
        "open-delta-filter",
        Action::OpenDeltaFilter,
        "filter deltas: text in the key · app=web (index)",
    ),
    (
        "clear-delta-filter",
        Action::ClearDeltaFilter,
        "clear the delta filter",
    ),
    (
        "open-delta-diff",
        Action::OpenDeltaDiff,
        "show the selected delta's full diff",
    ),
    (
        "next-fifo",
        Action::NextFifo,
        "restart the informer with the next FIFO",
    ),
    (
        "toggle-side-by-side",
        Action::ToggleSideBySide,
        "two pipelines side by side, marking where they differ",
    ),
    (
        "open-detail",
        Action::OpenDetail,
        "open the selected object: YAML and history",
    ),
    (
        "describe",
        Action::Describe,
        "describe the selected object, as kubectl describe, with its Events",
    ),
    (
        "detail-tab",
        Action::DetailTab,
        "switch between the Describe, YAML and History tabs",
    ),
    ("scroll-left", Action::ScrollLeft, "scroll long lines left"),
    (
        "scroll-right",
        Action::ScrollRight,
        "scroll long lines right",
    ),
    ("toggle-wrap", Action::ToggleWrap, "wrap / cut long lines"),
    (
        "toggle-managed-fields",
        Action::ToggleManagedFields,
        "show / hide metadata.managedFields",
    ),
    ("refresh", Action::Refresh, "fetch the object again"),
    (
        "open-diff",
        Action::OpenDiff,
        "full diff of the selected history entry",
    ),
    ("back", Action::Back, "back: diff → history → table"),
    (
        "open-command",
        Action::OpenCommand,
        "command line: switch the table (:pods, :deploy -n web …) · :q quits",
    ),
    ("cursor-left", Action::LineLeft, "move the cursor left"),
    ("cursor-right", Action::LineRight, "move the cursor right"),
    ("line-start", Action::LineStart, "to the start of the line"),
    ("line-end", Action::LineEnd, "to the end of the line"),
    (
        "delete-forward",
        Action::LineDelete,
        "delete the character under the cursor",
    ),
    (
        "delete-word",
        Action::LineDeleteWord,
        "delete the word before the cursor",
    ),
    (
        "delete-to-start",
        Action::LineDeleteToStart,
        "delete everything before the cursor",
    ),
    (
        "history-previous",
        Action::LineHistoryPrevious,
        "the previous line typed",
    ),
    (
        "history-next",
        Action::LineHistoryNext,
        "the next line typed",
    ),
    (
        "command-backspace",
        Action::CommandBackspace,
        "delete a character",
    ),
    (
        "command-complete",
        Action::CommandComplete,
        "complete the command name",
    ),
    ("command-run", Action::CommandRun, "run the command"),
    (
        "command-cancel",
        Action::CommandCancel,
        "close the command bar",
    ),
    (
        "toggle-wide",
        Action::ToggleWide,
        "show / hide the wide columns",
    ),
    (
        "drill-down",
        Action::DrillDown,
        "open the row: ns/node/svc → pods, deploy → rs, rs/sts/ds/job → pods, cj → jobs, else detail",
    ),
    (
        "jump-to-owner",
        Action::JumpToOwner,
        "show the row's controller (pod → rs → deploy), selected in its table",
    ),
    (
        "tree",
        Action::OpenTree,
        "the row's ownership tree: owners up to the root, what it owns below (:tree)",
    ),
    (
        "hot",
        Action::OpenHot,
        "field managers and objects by write rate, hot loops flagged (:hot)",
    ),
    (
        "logs",
        Action::OpenLogs,
        "logs of the pod, or of all the pods of a deployment or replicaset",
    ),
    (
        "previous-logs",
        Action::OpenPreviousLogs,
        "logs of the previous (crashed) container instances",
    ),
    (
        "shell",
        Action::OpenShell,
        "a shell in the pod's container (read-write only)",
    ),
    (
        "attach",
        Action::Attach,
        "attach to the pod's container (read-write only)",
    ),
    ("log-search", Action::OpenLogSearch, "search the log"),
    ("next-match", Action::NextMatch, "next match"),
    ("prev-match", Action::PrevMatch, "previous match"),
    (
        "log-filter",
        Action::ToggleLogFilter,
        "show only matching lines / all lines",
    ),
    (
        "log-timestamps",
        Action::ToggleTimestamps,
        "show / hide timestamps",
    ),
    (
        "log-previous",
        Action::TogglePrevious,
        "previous / current container instances",
    ),
    (
        "log-tail",
        Action::LogRange(LogRange::Tail),
        "the newest lines",
    ),
    (
        "log-since-1m",
        Action::LogRange(LogRange::Since(60)),
        "the last minute",
    ),
    (
        "log-since-5m",
        Action::LogRange(LogRange::Since(300)),
        "the last 5 minutes",
    ),
    (
        "log-since-15m",
        Action::LogRange(LogRange::Since(900)),
        "the last 15 minutes",
    ),
    (
        "log-since-1h",
        Action::LogRange(LogRange::Since(3600)),
        "the last hour",
    ),
    (
        "log-all",
        Action::LogRange(LogRange::All),
        "everything the kubelet keeps",
    ),
    ("log-save", Action::SaveLogs, "save the lines to a file"),
    ("mark", Action::Mark, "mark / unmark the row for a write"),
    (
        "delete",
        Action::Delete,
        "delete (graceful) the row or the marked rows",
    ),
    ("kill", Action::Kill, "delete at once: grace period 0"),
    (
        "restart",
        Action::Restart,
        "rollout restart a deploy, sts or ds",
    ),
    ("scale", Action::Scale, "scale a deploy, sts or rs"),
    (
        "rollout-undo",
        Action::RolloutUndo,
        "rollout undo a deploy, sts or ds: the previous revision",
    ),
    (
        "set-image",
        Action::SetImage,
        "set the image of a deploy, sts or ds container",
    ),
    ("cordon", Action::Cordon, "cordon a node, or uncordon it"),
    (
        "drain",
        Action::Drain,
        "drain a node (evictions honour PDBs)",
    ),
    (
        "suspend",
        Action::Suspend,
        "suspend a cronjob, or resume it",
    ),
    (
        "trigger-job",
        Action::TriggerJob,
        "run a job from a cronjob now",
    ),
    (
        "copy",
        Action::Copy,
        "copy the name (detail: its text), OSC 52",
    ),
    (
        "edit",
        Action::Edit,
        "edit the object in $EDITOR, as kubectl edit",
    ),
    (
        "replay-play-pause",
        Action::ReplayPlayPause,
        "replay: play / pause (:seek 10:32:05 or :seek rv=N moves)",
    ),
    (
        "replay-faster",
        Action::ReplayFaster,
        "replay: faster (to 100×)",
    ),
    (
        "replay-slower",
        Action::ReplaySlower,
        "replay: slower (to 0.1×)",
    ),
    (
        "replay-step",
        Action::ReplayStep,
        "replay: pause, play one event",
    ),
    (
        "toggle-record",
        Action::ToggleRecord,
        "record the kind on screen to a file (:record [FILE]), or stop",
    ),
    ("confirm-yes", Action::ConfirmYes, "do it"),
    ("confirm-no", Action::ConfirmNo, "cancel"),
    (
        "confirm-switch",
        Action::ConfirmSwitch,
        "move between the buttons",
    ),
    (
        "confirm-cascade",
        Action::ConfirmCascade,
        "a delete's cascade: background, foreground, orphan",
    ),
    (
        "confirm-backspace",
        Action::ConfirmBackspace,
        "delete a digit of the number",
    ),
    (
        "port-forward",
        Action::PortForward,
        "port-forward to the pod or service on 127.0.0.1 (:pf lists)",
    ),
    (
        "stop-forward",
        Action::StopForward,
        "stop the selected port-forward",
    ),
    (
        "detail-search",
        Action::OpenTextSearch,
        "search the describe, YAML or diff (n/N next/previous, Esc clears)",
    ),
    (
        "detail-save",
        Action::SaveText,
        "save the YAML or describe to a file (the status line says where)",
    ),
    (
        "namespace-0",
        Action::FavouriteNamespace(0),
        "all namespaces",
    ),
    (
        "namespace-1",
        Action::FavouriteNamespace(1),
        "favourite namespaces: 1 the last one shown, 2–9 the ones before it",
    ),
    (
        "namespace-2",
        Action::FavouriteNamespace(2),
        "favourite namespace 2",
    ),
    (
        "namespace-3",
        Action::FavouriteNamespace(3),
        "favourite namespace 3",
    ),
    (
        "namespace-4",
        Action::FavouriteNamespace(4),
        "favourite namespace 4",
    ),
    (
        "namespace-5",
        Action::FavouriteNamespace(5),
        "favourite namespace 5",
    ),
    (
        "namespace-6",
        Action::FavouriteNamespace(6),
        "favourite namespace 6",
    ),
    (
        "namespace-7",
        Action::FavouriteNamespace(7),
        "favourite namespace 7",
    ),
    (
        "namespace-8",
        Action::FavouriteNamespace(8),
        "favourite namespace 8",
    ),
    (
        "namespace-9",
        Action::FavouriteNamespace(9),
        "favourite namespace 9",
    ),
];

/// The action named `name` in the configuration.
pub fn action_named(name: &str) -> Option<&'static Action> {
    ACTIONS.iter().find(|(n, ..)| *n == name).map(|(_, a, _)| a)
}

/// The name and help line of `action`, if a key can be bound to it.
pub fn describe(action: &Action) -> Option<(&'static str, &'static str)> {
    ACTIONS
        .iter()
        .find(|(_, a, _)| a == action)
        .map(|(n, _, h)| (*n, *h))
}

/// A group of bindings under `keys:`; which one applies depends on the mode and focus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Section {
    /// The main screen.
    Normal,
    /// The main screen with the delta panel focused: looked up before `normal`.
    Deltas,
    /// Typing a filter (table or delta panel); unbound plain keys type text.
    Filter,
    Help,
    Indexes,
    /// The detail of one object: YAML, history, a diff.
    Detail,
    /// Typing a command (`:`); unbound plain keys type text.
    Command,
    /// The log view.
    Logs,
    /// The confirm dialog of a write; unbound digits type its number. The port-forward
    /// dialog takes its keys too.
    Confirm,
    /// The list of port-forwards (`:pf`).
    Forwards,
}

impl Section {
    pub fn name(self) -> &'static str {
        match self {
            Self::Normal => "normal",
            Self::Deltas => "deltas",
            Self::Filter => "filter",
            Self::Help => "help",
            Self::Indexes => "indexes",
            Self::Detail => "detail",
            Self::Command => "command",
            Self::Logs => "logs",
            Self::Confirm => "confirm",
            Self::Forwards => "forwards",
        }
    }
}

/// One key as written in the configuration: a key code and its modifiers. Letters carry
/// their case instead of SHIFT, because terminals disagree on whether they report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeySpec {
    code: KeyCode,
    modifiers: u8,
}

/// A key, with an order for stable iteration and error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyCode {
    Char(char),
    F(u8),
    Named(NamedKey),
}

/// The keys that are not characters or function keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NamedKey {
    Enter,
    Esc,
    Tab,
    BackTab,
    Backspace,
    Delete,
    Insert,
    Home,
    End,
    PageUp,
    PageDown,
    Up,
    Down,
    Left,
    Right,
}

/// Names of the non-character keys, first name is the one shown.
const NAMED: &[(&[&str], NamedKey)] = &[
    (&["enter", "return"], NamedKey::Enter),
    (&["esc", "escape"], NamedKey::Esc),
    (&["tab"], NamedKey::Tab),
    (&["backtab"], NamedKey::BackTab),
    (&["backspace"], NamedKey::Backspace),
    (&["delete", "del"], NamedKey::Delete),
    (&["insert", "ins"], NamedKey::Insert),
    (&["home"], NamedKey::Home),
    (&["end"], NamedKey::End),
    (&["pgup", "pageup"], NamedKey::PageUp),
    (&["pgdn", "pagedown"], NamedKey::PageDown),
    (&["up"], NamedKey::Up),
    (&["down"], NamedKey::Down),
    (&["left"], NamedKey::Left),
    (&["right"], NamedKey::Right),
];

const CTRL: u8 = 1;
const ALT: u8 = 2;
const SHIFT: u8 = 4;

impl KeySpec {
    /// The spec of a key pressed with these modifiers. Characters carry their case instead
    /// of SHIFT and BackTab says it for Tab, because terminals disagree on whether they
    /// report it.
    pub fn pressed(code: KeyCode, ctrl: bool, alt: bool, shift: bool) -> Self {
        let mut modifiers = 0;
        if ctrl {
            modifiers |= CTRL;
        }
        if alt {
            modifiers |= ALT;
        }
        if shift && !matches!(code, KeyCode::Char(_) | KeyCode::Named(NamedKey::BackTab)) {
            modifiers |= SHIFT;
        }
        Self { code, modifiers }
    }

    fn ctrl_c() -> Self {
        Self {
            code: KeyCode::Char('c'),
            modifiers: CTRL,
        }
    }
}

impl FromStr for KeySpec {
    type Err = String;

    /// `j`, `G`, `?`, `-`, `space`, `enter`, `f5`, `ctrl-d`, `alt-x`, `shift-tab`, `shift-j`.
    fn from_str(spec: &str) -> Result<Self, String> {
        let mut rest = spec;
        let mut modifiers = 0;
        while rest.chars().count() > 1 {
            let lower = rest.to_ascii_lowercase();
            let (bit, len) = if lower.starts_with("ctrl-") {
                (CTRL, 5)
            } else if lower.starts_with("alt-") {
                (ALT, 4)
            } else if lower.starts_with("shift-") {
                (SHIFT, 6)
            } else {
                break;
            };
            modifiers |= bit;
            rest = &rest[len..];
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (None, _) => return Err(format!("empty key in {spec:?}")),
            (Some(c), None) => {
                if modifiers & SHIFT != 0 && c.is_alphabetic() {
                    modifiers &= !SHIFT;
                    KeyCode::Char(c.to_uppercase().next().unwrap_or(c))
                } else {
                    KeyCode::Char(c)
                }
            }
            _ => {
                let mut lower = rest.to_ascii_lowercase();
                if lower == "tab" && modifiers & SHIFT != 0 {
                    modifiers &= !SHIFT;
                    lower = "backtab".into();
                }
                if lower == "space" {
                    KeyCode::Char(' ')
                } else if let Some(n) = lower.strip_prefix('f').and_then(|n| n.parse::<u8>().ok())
                    && (1..=24).contains(&n)
                {
                    KeyCode::F(n)
                } else if let Some((_, key)) = NAMED
                    .iter()
                    .find(|(names, _)| names.contains(&lower.as_str()))
                {
                    KeyCode::Named(*key)
                } else {
                    return Err(format!(
                        "unknown key {spec:?}; expected a character, space, enter, esc, tab, \
                         backtab, backspace, delete, insert, home, end, pgup, pgdn, up, down, \
                         left, right or f1..f24, optionally after ctrl-, alt- or shift-"
                    ));
                }
            }
        };
        Ok(Self { code, modifiers })
    }
}

impl fmt::Display for KeySpec {
    /// The spec as it would be written in the configuration.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        for (bit, name) in [(CTRL, "ctrl-"), (ALT, "alt-"), (SHIFT, "shift-")] {
            if self.modifiers & bit != 0 {
                f.write_str(name)?;
            }
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::F(n) => write!(f, "f{n}"),
            KeyCode::Named(key) => {
                let name = NAMED
                    .iter()
                    .find(|(_, named)| *named == key)
                    .and_then(|(names, _)| names.first())
                    .unwrap_or(&"?");
                f.write_str(name)
            }
        }
    }
}

/// Where a binding was written, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub file: String,
    pub line: u64,
    pub column: u64,
}

/// An action's keys in one section, in the order they were written.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Bound {
    action: Action,
    keys: Vec<(KeySpec, Origin)>,
    /// Which merged file set it: a later file's key wins over an earlier file's.
    layer: usize,
}

/// The keys of every section: what each key asks for, and what the help overlay lists.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Keymap {
    /// Per section, each bound action with its keys, in the order written.
    sections: BTreeMap<Section, Vec<(Action, Vec<KeySpec>)>>,
}

/// Collects the configuration's `keys:` sections, file by file: a file that lists an action
/// replaces that action's keys in that section. Keeps where each key was written for errors.
#[derive(Debug, Default)]
pub struct KeymapBuilder {
    sections: BTreeMap<Section, Vec<Bound>>,
    layers: usize,
}

impl KeymapBuilder {
    /// Starts a new file's bindings: a key they bind is taken from an earlier file's
    /// binding of it.
    pub fn next_layer(&mut self) {
        self.layers += 1;
    }

    /// Binds `action` (a name from [`ACTIONS`]) in `section` to `keys`, replacing its keys.
    /// `at` is where the action name was written; each key comes with its own place.
    pub fn bind(
        &mut self,
        section: Section,
        action: &str,
        at: Origin,
        keys: Vec<(String, Origin)>,
    ) -> Result<(), ConfigError> {
        let key_path = |suffix: &str| format!("keys.{}.{action}{suffix}", section.name());
        let Some(resolved) = action_named(action) else {
            return Err(invalid(
                &at,
                key_path(""),
                format!(
                    "unknown action; expected one of {}",
                    ACTIONS
                        .iter()
                        .map(|(n, ..)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        };
        let mut parsed = Vec::with_capacity(keys.len());
        for (text, origin) in keys {
            let spec = text
                .parse::<KeySpec>()
                .map_err(|message| invalid(&origin, key_path(""), message))?;
            if spec == KeySpec::ctrl_c() && *resolved != Action::Quit {
                return Err(invalid(
                    &origin,
                    key_path(""),
                    "ctrl-c always quits and cannot be bound".into(),
                ));
            }
            if !parsed.iter().any(|(s, _)| *s == spec) {
                parsed.push((spec, origin));
            }
        }
        let bound = Bound {
            action: resolved.clone(),
            keys: parsed,
            layer: self.layers,
        };
        let list = self.sections.entry(section).or_default();
        match list.iter_mut().find(|b| b.action == *resolved) {
            Some(existing) => *existing = bound,
            None => list.push(bound),
        }
        Ok(())
    }

    /// The keymap, or an error naming the later binding of a key bound to two actions in one
    /// section.
    pub fn build(mut self) -> Result<Keymap, ConfigError> {
        // A later file's key wins over an earlier file's binding of it to another action
        // (a user's `sort-reverse: [S]` over the built-in sort-status), so an older file
        // keeps loading; only one file binding a key twice is an error.
        for list in self.sections.values_mut() {
            let mut newest: BTreeMap<KeySpec, usize> = BTreeMap::new();
            for bound in list.iter() {
                for (spec, _) in &bound.keys {
                    let layer = newest.entry(*spec).or_insert(bound.layer);
                    *layer = (*layer).max(bound.layer);
                }
            }
            for bound in list.iter_mut() {
                bound
                    .keys
                    .retain(|(spec, _)| newest.get(spec).is_none_or(|&l| l == bound.layer));
            }
        }
        for (section, list) in &self.sections {
            let mut seen: BTreeMap<KeySpec, (&Bound, &Origin)> = BTreeMap::new();
            for bound in list {
                for (spec, origin) in &bound.keys {
                    let Some(&(other, other_origin)) = seen.get(spec) else {
                        seen.insert(*spec, (bound, origin));
                        continue;
                    };
                    let later = (bound.layer, origin.line, origin.column)
                        > (other.layer, other_origin.line, other_origin.column);
                    let (here, at, there) = if later {
                        (bound, origin, other)
                    } else {
                        (other, other_origin, bound)
                    };
                    let name = |b: &Bound| describe(&b.action).map_or("?", |(n, _)| n);
                    return Err(invalid(
                        at,
                        format!("keys.{}.{}", section.name(), name(here)),
                        format!(
                            "{spec} is also bound to {} in {}",
                            name(there),
                            section.name()
                        ),
                    ));
                }
            }
        }
        let sections = self
            .sections
            .into_iter()
            .map(|(section, list)| {
                let list = list
                    .into_iter()
                    .map(|b| (b.action, b.keys.into_iter().map(|(s, _)| s).collect()))
                    .collect();
                (section, list)
            })
            .collect();
        Ok(Keymap { sections })
    }
}

impl Keymap {
    /// The action `spec` asks for in `section`, looking in `first` before (the delta
    /// panel's keys over the main screen's). Ctrl-C always quits; in the typing sections, a
    /// plain character nobody bound is typed.
    pub fn action(
        &self,
        section: Section,
        first: Option<Section>,
        spec: KeySpec,
    ) -> Option<Action> {
        if spec == KeySpec::ctrl_c() {
            return Some(Action::Quit);
        }
        let plain = spec.modifiers & (CTRL | ALT) == 0;
        let typed = match (section, spec.code) {
            (Section::Filter, KeyCode::Char(c)) if plain => Some(Action::FilterChar(c)),
            (Section::Command, KeyCode::Char(c)) if plain => Some(Action::CommandChar(c)),
            (Section::Confirm, KeyCode::Char(c)) if plain && c.is_ascii_digit() => {
                Some(Action::ConfirmChar(c))
            }
            _ => None,
        };
        first
            .and_then(|first| self.lookup(first, spec))
            .or_else(|| self.lookup(section, spec))
            .or(typed)
    }

    fn lookup(&self, section: Section, spec: KeySpec) -> Option<Action> {
        self.sections
            .get(&section)?
            .iter()
            .find(|(_, keys)| keys.contains(&spec))
            .map(|(action, _)| action.clone())
    }

    /// The keys bound to `action` in `section`, as written (`j`, `down`).
    pub fn keys(&self, section: Section, action: &Action) -> Vec<KeySpec> {
        self.sections
            .get(&section)
            .and_then(|list| list.iter().find(|(a, _)| a == action))
            .map(|(_, keys)| keys.clone())
            .unwrap_or_default()
    }

    /// For the help overlay: each action bound in `section` with its keys and help line, in
    /// the order of [`ACTIONS`].
    pub fn help(&self, section: Section) -> Vec<(String, &'static str)> {
        ACTIONS
            .iter()
            .filter_map(|(_, action, help)| {
                let keys = self.keys(section, action);
                (!keys.is_empty()).then(|| {
                    let keys: Vec<String> = keys.iter().map(ToString::to_string).collect();
                    (keys.join(" "), *help)
                })
            })
            .collect()
    }
}

fn invalid(at: &Origin, key: String, message: String) -> ConfigError {
    ConfigError::Invalid {
        file: at.file.clone(),
        line: at.line,
        column: at.column,
        key: Some(key),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> KeySpec {
        s.parse().unwrap()
    }

    #[test]
    fn key_specs_parse_and_print_back() {
        for (text, shown) in [
            ("j", "j"),
            ("G", "G"),
            ("?", "?"),
            ("-", "-"),
            ("space", "space"),
            ("Enter", "enter"),
            ("return", "enter"),
            ("escape", "esc"),
            ("pageup", "pgup"),
            ("pgdn", "pgdn"),
            ("ctrl-c", "ctrl-c"),
            ("ctrl-alt-x", "ctrl-alt-x"),
            ("shift-tab", "backtab"),
            ("shift-j", "J"),
            ("shift-up", "shift-up"),
            ("f5", "f5"),
        ] {
            assert_eq!(spec(text).to_string(), shown, "{text}");
        }
        for bad in ["", "ctrl-", "pageupp", "f0", "f25", "hyper-x"] {
            assert!(bad.parse::<KeySpec>().is_err(), "{bad:?}");
        }
    }
}
