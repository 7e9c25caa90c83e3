//! The detail overlay: one object described as `kubectl describe` does and as YAML, fetched
//! on demand, and its history of tap entries with each entry's full diff.
//!
//! [`Detail`] is plain state that draws and tests build by hand; [`DetailController`] owns the
//! open detail and runs its fetches as background tasks whose results come back through a
//! channel the event loop listens to, so opening or refreshing never blocks a frame.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use serde_json::Value;
use tokio::sync::mpsc;

use kscope_client::fetch::FetchError;
use kscope_index_views::describe;
use kscope_index_views::detail::{
    DiffDoc, Freshness, HistoryRow, YamlDoc, diff_doc, history_row, history_rows, yaml,
};
use kscope_informers::instrument::tap::{DiffUnavailable, HistorySpan, Tap, TapEntry, TapKind};
use kscope_informers::keys::split_meta_namespace_key;
use kscope_resources::Kind;

use super::action::Action;
use super::effect::Effect;
use super::text_search::{Searched, TextSearch};

/// Which object the detail shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetailTarget {
    pub kind: Kind,
    /// `namespace/name`, or `name` for cluster-scoped kinds: the store key.
    pub key: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DetailTab {
    /// `kubectl describe`, ending with the object's Events.
    Describe,
    #[default]
    Yaml,
    History,
}

/// How often an open describe is fetched again, so its status and Events stay live.
pub const DESCRIBE_REFRESH: std::time::Duration = std::time::Duration::from_secs(5);

/// Where the GET of the object stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchState {
    /// A fetch is running; an earlier result, if any, stays on screen meanwhile.
    Loading {
        since: SystemTime,
    },
    Loaded {
        resource_version: String,
        at: SystemTime,
    },
    Failed {
        error: String,
        at: SystemTime,
    },
}

/// One tap entry's full diff, opened from the history or the delta panel.
#[derive(Debug, Clone)]
pub struct DiffScreen {
    /// The entry opened.
    pub row: HistoryRow,
    /// For a delta, the kind of the watch event whose object the diff comes from.
    pub via: Option<&'static str>,
    pub doc: Result<DiffDoc, DiffUnavailable>,
    pub scroll: usize,
    /// The entry the diff is computed from, to recompute it when managedFields are toggled.
    source: Arc<TapEntry>,
}

/// The open detail view.
#[derive(Debug, Clone)]
pub struct Detail {
    pub target: DetailTarget,
    pub tab: DetailTab,
    pub fetch: FetchState,
    pub yaml: YamlDoc,
    pub show_managed_fields: bool,
    /// First YAML line shown.
    pub yaml_scroll: usize,
    /// The describe text, a line each, made off the UI thread with the fetch.
    pub describe: Vec<String>,
    pub describe_scroll: usize,
    /// Columns scrolled off the left of the describe, YAML and diff; ignored when wrapping.
    pub hscroll: usize,
    /// Long lines wrap instead of being cut.
    pub wrap: bool,
    /// Newest first.
    pub history: Vec<HistoryRow>,
    /// How far back the history goes.
    pub history_span: HistorySpan,
    pub history_selected: usize,
    pub diff: Option<DiffScreen>,
    /// Opened on a diff from the delta panel: Esc goes back to the table the panel is
    /// under, not to this object's history (never asked for).
    pub diff_from_panel: bool,
    /// The detail's key list is shown over it.
    pub help: bool,
    /// `/` over the describe, YAML or diff shown.
    pub search: TextSearch,
    /// What the last key did that the text does not show (where a save went), until the
    /// next key.
    pub notice: Option<String>,
    /// Content lines shown last frame: the page for PgUp/PgDn and the end for G.
    pub page: usize,
    /// Content columns shown last frame: a sideways scroll stops once the widest line's
    /// end is in view.
    pub columns: usize,
    /// The last fetched object, kept to re-render when managedFields are toggled.
    object: Option<Value>,
    /// Newest first, as `history`.
    entries: Vec<Arc<TapEntry>>,
}

impl Detail {
    /// A detail waiting for its first fetch.
    pub fn new(target: DetailTarget, now: SystemTime) -> Self {
        Self {
            target,
            tab: DetailTab::Yaml,
            fetch: FetchState::Loading { since: now },
            yaml: YamlDoc::default(),
            show_managed_fields: false,
            yaml_scroll: 0,
            describe: Vec::new(),
            describe_scroll: 0,
            hscroll: 0,
            wrap: false,
            history: Vec::new(),
            history_span: HistorySpan::Ring,
            history_selected: 0,
            diff: None,
            diff_from_panel: false,
            help: false,
            search: TextSearch::default(),
            notice: None,
            page: 1,
            columns: 80,
            object: None,
            entries: Vec::new(),
        }
    }

    /// A detail waiting for its first fetch, showing `tab`.
    pub fn on_tab(target: DetailTarget, tab: DetailTab, now: SystemTime) -> Self {
        Self {
            tab,
            ..Self::new(target, now)
        }
    }

    /// The fetched object against kscope's cached copy: its last writer, and how far the
    /// cache's resourceVersion is from the one fetched. `None` before a fetch succeeds.
    pub fn freshness(&self) -> Option<Freshness> {
        self.object
            .as_ref()
            .map(|object| Freshness::of(object, &self.entries))
    }

    /// The fetched object and its describe, shown from now on.
    pub fn loaded_with(&mut self, object: Value, describe: Vec<String>, at: SystemTime) {
        self.describe = describe;
        self.loaded(object, at);
    }

    /// The fetched object, shown from now on.
    pub fn loaded(&mut self, object: Value, at: SystemTime) {
        match yaml(&object, self.show_managed_fields) {
            Ok(doc) => {
                self.fetch = FetchState::Loaded {
                    resource_version: object
                        .pointer("/metadata/resourceVersion")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    at,
                };
                self.yaml = doc;
                self.object = Some(object);
                self.clamp();
            }
            Err(err) => self.failed(err.to_string(), at),
        }
    }

    /// The fetch failed: say why instead of the YAML.
    pub fn failed(&mut self, error: String, at: SystemTime) {
        self.fetch = FetchState::Failed { error, at };
        self.yaml = YamlDoc::default();
        self.describe = Vec::new();
        self.object = None;
        self.yaml_scroll = 0;
        self.describe_scroll = 0;
    }

    /// Like [`Detail::set_history`], but keeps the rows when no entry came or went: the
    /// history is re-read every frame and changed paths are worth computing only once.
    pub fn sync_history(&mut self, entries: Vec<Arc<TapEntry>>) {
        let newest = |e: Option<&Arc<TapEntry>>| e.map(|e| e.seq);
        if entries.len() != self.entries.len()
            || newest(entries.last()) != newest(self.entries.first())
        {
            self.set_history(entries);
        }
    }

    /// The object's tap entries, oldest first (as [`Tap::history`] returns them).
    pub fn set_history(&mut self, mut entries: Vec<Arc<TapEntry>>) {
        entries.reverse();
        let selected = self.history.get(self.history_selected).map(|row| row.seq);
        self.history = history_rows(&entries);
        self.entries = entries;
        self.history_selected = selected
            .and_then(|seq| self.history.iter().position(|row| row.seq == seq))
            .unwrap_or(0);
    }

    /// Opens the diff of the selected history entry.
    pub fn open_diff(&mut self) {
        if let Some(entry) = self.entries.get(self.history_selected).cloned() {
            self.show_diff(entry);
        }
    }

    /// Shows the full diff of `entry`, from this history or from the delta panel, and
    /// selects it in the history when it is there (so Esc lands on it). A delta carries no
    /// object: its diff is that of the watch event that brought the same resourceVersion.
    pub fn show_diff(&mut self, entry: Arc<TapEntry>) {
        if let Some(i) = self.entries.iter().position(|e| e.seq == entry.seq) {
            self.history_selected = i;
            self.tab = DetailTab::History;
        }
        let via = self.watch_event_of(&entry);
        let source = via.clone().unwrap_or_else(|| entry.clone());
        self.diff = Some(DiffScreen {
            row: history_row(&entry),
            via: via.map(|e| e.kind.label()),
            doc: diff_doc(&source, self.show_managed_fields),
            scroll: 0,
            source,
        });
    }

    /// The watch event of this history that carried the object a delta applied.
    fn watch_event_of(&self, delta: &TapEntry) -> Option<Arc<TapEntry>> {
        if !matches!(delta.kind, TapKind::Delta(_)) || delta.resource_version.is_none() {
            return None;
        }
        self.entries
            .iter()
            .find(|e| {
                matches!(e.kind, TapKind::Watch(_))
                    && e.raw.is_some()
                    && e.resource_version == delta.resource_version
            })
            .cloned()
    }

    /// Applies one action; says whether the owner must close or refresh the detail.
    pub fn apply(&mut self, action: &Action) -> Option<Effect> {
        if self.help {
            if matches!(action, Action::ToggleHelp | Action::Back) {
                self.help = false;
            }
            return None;
        }
        self.notice = None;
        if self.search.typing {
            let lines = shown_text(self.diff.as_ref(), self.tab, &self.describe, &self.yaml);
            if let Searched::Show(line) = self.search.type_key(action, &lines, self.top()) {
                self.show_line(line);
            }
            return None;
        }
        match action {
            Action::ToggleHelp => self.help = true,
            // Esc clears a search before it leaves anything.
            Action::Back if self.search.active() => self.search.clear(),
            Action::OpenTextSearch if self.diff.is_none() && self.tab == DetailTab::History => {
                self.notice = Some("/ searches the Describe, YAML and diffs".into());
            }
            Action::OpenTextSearch => self.search.open(),
            Action::NextMatch | Action::PrevMatch => {
                if let Searched::Show(line) = self.search.step(*action == Action::NextMatch) {
                    self.show_line(line);
                }
            }
            Action::SaveText => return Some(Effect::Save),
            Action::Back if self.diff.is_some() && !self.diff_from_panel => self.diff = None,
            Action::Back => return Some(Effect::Close),
            Action::DetailTab if self.diff.is_none() => {
                self.tab = match self.tab {
                    DetailTab::Describe => DetailTab::Yaml,
                    DetailTab::Yaml => DetailTab::History,
                    DetailTab::History => DetailTab::Describe,
                };
                self.hscroll = 0;
            }
            Action::ScrollLeft => self.hscroll = self.hscroll.saturating_sub(HSCROLL_STEP),
            Action::ScrollRight if !self.wrap => {
                let end = self.widest().saturating_sub(self.columns);
                self.hscroll = (self.hscroll + HSCROLL_STEP).min(end);
            }
            Action::ToggleWrap => {
                self.wrap = !self.wrap;
                self.hscroll = 0;
            }
            Action::ToggleManagedFields => self.toggle_managed_fields(),
            Action::Refresh => return Some(Effect::Refresh),
            Action::OpenDiff if self.diff.is_none() && self.tab == DetailTab::History => {
                self.open_diff();
            }
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom => self.scroll(action),
            _ => {}
        }
        None
    }

    /// The first line of the text shown.
    fn top(&self) -> usize {
        match (&self.diff, self.tab) {
            (Some(diff), _) => diff.scroll,
            (None, DetailTab::Describe) => self.describe_scroll,
            (None, _) => self.yaml_scroll,
        }
    }

    /// Scrolls the text shown so that `line` is near the top.
    fn show_line(&mut self, line: usize) {
        let top = line.saturating_sub(2);
        match (&mut self.diff, self.tab) {
            (Some(diff), _) => diff.scroll = top,
            (None, DetailTab::Describe) => self.describe_scroll = top,
            (None, _) => self.yaml_scroll = top,
        }
        self.clamp();
    }

    /// Searches the text shown again (fetched again, another tab, managedFields toggled),
    /// as each frame does.
    pub fn sync_search(&mut self) {
        if self.search.active() {
            let lines = shown_text(self.diff.as_ref(), self.tab, &self.describe, &self.yaml);
            self.search.find(&lines);
        }
    }

    /// The text shown, as saved: the YAML (`yaml`), else the describe or the diff (`txt`);
    /// none on the History tab.
    pub fn saved_text(&self) -> Option<(String, &'static str)> {
        let lines = shown_text(self.diff.as_ref(), self.tab, &self.describe, &self.yaml);
        if lines.is_empty() {
            return None;
        }
        let extension = match (&self.diff, self.tab) {
            (None, DetailTab::Yaml) => "yaml",
            _ => "txt",
        };
        let mut text = lines.join("\n");
        text.push('\n');
        Some((text, extension))
    }

    fn toggle_managed_fields(&mut self) {
        self.show_managed_fields = !self.show_managed_fields;
        if let Some(object) = &self.object
            && let Ok(doc) = yaml(object, self.show_managed_fields)
        {
            self.yaml = doc;
        }
        if let Some(diff) = &mut self.diff {
            diff.doc = diff_doc(&diff.source, self.show_managed_fields);
            diff.scroll = 0;
        }
        self.clamp();
    }

    fn scroll(&mut self, action: &Action) {
        let page = self.page;
        if let Some(diff) = &mut self.diff {
            let lines = diff.doc.as_ref().map_or(0, |d| d.lines.len());
            diff.scroll = step(diff.scroll, scroll_end(lines, page) + 1, page, action);
        } else if self.tab == DetailTab::History {
            self.history_selected = step(self.history_selected, self.history.len(), page, action);
        } else if self.tab == DetailTab::Describe {
            let end = scroll_end(self.describe.len(), page);
            self.describe_scroll = step(self.describe_scroll, end + 1, page, action);
        } else {
            let end = scroll_end(self.yaml.lines.len(), page);
            self.yaml_scroll = step(self.yaml_scroll, end + 1, page, action);
        }
    }

    /// Sets the text's width from the columns the content had last frame.
    pub fn set_columns(&mut self, columns: usize) {
        self.columns = columns.max(1);
    }

    /// Sets the page size from the rows the content had last frame, keeping scrolls in range.
    pub fn set_page(&mut self, rows: usize) {
        self.page = rows.max(1);
        self.clamp();
    }

    /// The widest line of the text shown, in characters: how far it scrolls sideways.
    fn widest(&self) -> usize {
        let width = |lines: &mut dyn Iterator<Item = usize>| lines.max().unwrap_or(0);
        match (&self.diff, self.tab) {
            (Some(diff), _) => diff.doc.as_ref().map_or(0, |d| {
                width(&mut d.lines.iter().map(|l| {
                    l.path.chars().count()
                        + l.old.as_ref().map_or(0, |o| o.chars().count())
                        + l.new.as_ref().map_or(0, |n| n.chars().count())
                        + 6
                }))
            }),
            (None, DetailTab::Describe) => {
                width(&mut self.describe.iter().map(|l| l.chars().count()))
            }
            (None, DetailTab::Yaml) => {
                width(&mut self.yaml.lines.iter().map(|l| l.chars().count()))
            }
            (None, DetailTab::History) => 0,
        }
    }

    fn clamp(&mut self) {
        self.yaml_scroll = self
            .yaml_scroll
            .min(scroll_end(self.yaml.lines.len(), self.page));
        self.describe_scroll = self
            .describe_scroll
            .min(scroll_end(self.describe.len(), self.page));
        self.history_selected = self
            .history_selected
            .min(self.history.len().saturating_sub(1));
        let page = self.page;
        if let Some(diff) = &mut self.diff {
            let lines = diff.doc.as_ref().map_or(0, |d| d.lines.len());
            diff.scroll = diff.scroll.min(scroll_end(lines, page));
        }
    }
}

/// The lines of the text shown, as searched and saved: a diff's as drawn (`~ path: old →
/// new`); none for the History tab.
pub fn shown_text<'a>(
    diff: Option<&DiffScreen>,
    tab: DetailTab,
    describe: &'a [String],
    yaml: &'a YamlDoc,
) -> Cow<'a, [String]> {
    match (diff, tab) {
        (Some(diff), _) => Cow::Owned(diff.doc.as_ref().map_or_else(
            |_| Vec::new(),
            |doc| doc.lines.iter().map(diff_text).collect(),
        )),
        (None, DetailTab::Describe) => Cow::Borrowed(describe),
        (None, DetailTab::Yaml) => Cow::Borrowed(&yaml.lines),
        (None, DetailTab::History) => Cow::Borrowed(&[]),
    }
}

/// One diff line as drawn.
pub fn diff_text(line: &kscope_index_views::detail::DiffLine) -> String {
    use kscope_index_views::detail::DiffSign;
    let sign = match line.sign {
        DiffSign::Added => '+',
        DiffSign::Removed => '-',
        DiffSign::Changed => '~',
    };
    let mut text = format!("{sign} {}: ", line.path);
    if let Some(old) = &line.old {
        text.push_str(old);
    }
    if line.old.is_some() && line.new.is_some() {
        text.push_str(" → ");
    }
    if let Some(new) = &line.new {
        text.push_str(new);
    }
    text
}

/// Columns a sideways scroll moves.
const HSCROLL_STEP: usize = 8;

/// `position` moved by `action` within `0..len`.
fn step(position: usize, len: usize, page: usize, action: &Action) -> usize {
    let last = len.saturating_sub(1);
    match action {
        Action::Up => position.saturating_sub(1),
        Action::Down => position + 1,
        Action::PageUp => position.saturating_sub(page),
        Action::PageDown => position + page,
        Action::Top => 0,
        _ => last,
    }
    .min(last)
}

/// The last first-line that still fills a page.
fn scroll_end(lines: usize, page: usize) -> usize {
    lines.saturating_sub(page)
}

/// A finished fetch, sent back to the event loop.
#[derive(Debug)]
pub struct Fetched {
    generation: u64,
    at: SystemTime,
    result: Result<(Value, Vec<String>), FetchError>,
}

/// Owns the open detail (if any) and fetches its object in the background.
pub struct DetailController {
    client: kube::Client,
    tap: Option<Tap>,
    open: Option<Detail>,
    /// Counts fetches, so the result of one made for an earlier object or refresh is dropped.
    generation: u64,
    /// When the last fetch started and whether it is still running: an open describe is
    /// fetched again [`DESCRIBE_REFRESH`] after the last one ended.
    fetched_at: Option<SystemTime>,
    in_flight: bool,
    tx: mpsc::UnboundedSender<Fetched>,
    rx: mpsc::UnboundedReceiver<Fetched>,
    /// Where Ctrl-S saves; `None`: `objects` in kscope's state directory.
    save_dir: Option<PathBuf>,
}

impl DetailController {
    /// `tap` is the tap of the informer whose rows the detail opens from, for the history.
    pub fn new(client: kube::Client, tap: Option<Tap>) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Self {
            client,
            tap,
            open: None,
            generation: 0,
            fetched_at: None,
            in_flight: false,
            tx,
            rx,
            save_dir: None,
        }
    }

    /// Saves the YAML or describe (Ctrl-S) in `dir` instead of the state directory.
    pub fn set_save_dir(&mut self, dir: PathBuf) {
        self.save_dir = Some(dir);
    }

    /// A controller for another cluster's `client` (`:ctx`), saving where this one does.
    pub fn for_client(&self, client: kube::Client) -> Self {
        let mut next = Self::new(client, None);
        next.save_dir = self.save_dir.clone();
        next
    }

    /// Reads history from `tap` from now on (the tap of the table now shown).
    pub fn set_tap(&mut self, tap: Tap) {
        self.tap = Some(tap);
    }

    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// Closes the open detail: a view opened from it takes its place.
    pub fn close(&mut self) {
        self.open = None;
    }

    /// A search is being typed in the open detail: keys are typed, as in the filter bar.
    pub fn searching(&self) -> bool {
        self.open.as_ref().is_some_and(|d| d.search.typing)
    }

    /// Whether the open detail shows a finished fetch (its object, or why it failed).
    pub fn fetched_shown(&self) -> bool {
        self.open
            .as_ref()
            .is_some_and(|d| !matches!(d.fetch, FetchState::Loading { .. }))
    }

    /// Opens the detail of `key` on its YAML and starts fetching it. Must run inside a
    /// Tokio runtime.
    pub fn open(&mut self, kind: impl Into<Kind>, key: &str) {
        self.open_on(kind, key, DetailTab::Yaml);
    }

    /// Opens the detail of `key` on `tab` and starts fetching it.
    pub fn open_on(&mut self, kind: impl Into<Kind>, key: &str, tab: DetailTab) {
        let target = DetailTarget {
            kind: kind.into(),
            key: key.to_owned(),
        };
        if let Some(tap) = &self.tap {
            tap.keep_history(key);
        }
        self.open = Some(Detail::on_tab(target, tab, SystemTime::now()));
        self.refresh();
    }

    /// Opens the detail of the object a tap entry (from the delta panel) is about, on that
    /// entry's full diff. Returns false for entries about no object (relists, errors).
    pub fn open_entry(&mut self, kind: impl Into<Kind>, entry: Arc<TapEntry>) -> bool {
        let Some(key) = entry.key.clone() else {
            return false;
        };
        self.open(kind, &key);
        if let Some(detail) = &mut self.open {
            detail.show_diff(entry);
            detail.diff_from_panel = true;
        }
        true
    }

    /// Opens the full diff of tap entry `seq` (the delta panel's selection). False when the
    /// tap no longer keeps it or it is about no object.
    pub fn open_seq(&mut self, kind: impl Into<Kind>, seq: u64) -> bool {
        match self.tap.as_ref().and_then(|tap| tap.entry(seq)) {
            Some(entry) => self.open_entry(kind, entry),
            None => false,
        }
    }

    /// Applies one action to the open detail; returns false once the detail is closed.
    pub fn apply(&mut self, action: &Action) -> bool {
        let Some(detail) = &mut self.open else {
            return false;
        };
        match detail.apply(action) {
            Some(Effect::Close) => {
                self.open = None;
                false
            }
            Some(Effect::Refresh) => {
                self.refresh();
                true
            }
            Some(Effect::Save) => {
                let dir = self.save_dir.clone().unwrap_or_else(save_dir);
                detail.notice = Some(save(detail, &dir));
                true
            }
            _ => true,
        }
    }

    /// Re-reads the history and fetches the object again in a background task (nothing
    /// when no detail is open).
    pub fn refresh(&mut self) {
        let Some(detail) = &mut self.open else {
            return;
        };
        if let Some(tap) = &self.tap {
            detail.set_history(tap.history(&detail.target.key));
            detail.history_span = tap.history_span(&detail.target.key);
        }
        let now = SystemTime::now();
        detail.fetch = FetchState::Loading { since: now };
        self.generation += 1;
        self.fetched_at = Some(now);
        self.in_flight = true;
        let generation = self.generation;
        let client = self.client.clone();
        let tx = self.tx.clone();
        let target = detail.target.clone();
        tokio::spawn(async move {
            let result = fetch_described(&client, &target).await;
            // The receiver lives as long as the controller; if it is gone, nobody waits.
            let _ = tx.send(Fetched {
                generation,
                at: SystemTime::now(),
                result,
            });
        });
    }

    /// Fetches an open describe again once [`DESCRIBE_REFRESH`] has passed since the last
    /// fetch, so its status and Events stay current while a person reads it.
    fn refresh_describe_when_due(&mut self, now: SystemTime) {
        let due = self
            .fetched_at
            .is_none_or(|at| now.duration_since(at).unwrap_or_default() >= DESCRIBE_REFRESH);
        let describing = self
            .open
            .as_ref()
            .is_some_and(|d| d.tab == DetailTab::Describe && d.diff.is_none());
        if describing && due && !self.in_flight {
            self.refresh();
        }
    }

    /// The next finished fetch. Cancel-safe, for the event loop's `select!`.
    pub async fn fetched(&mut self) -> Option<Fetched> {
        self.rx.recv().await
    }

    /// Shows a finished fetch, unless the detail moved on since it started.
    pub fn finish(&mut self, fetched: Fetched) {
        if fetched.generation != self.generation {
            return;
        }
        self.in_flight = false;
        self.fetched_at = Some(fetched.at);
        if let Some(detail) = &mut self.open {
            match fetched.result {
                Ok((object, describe)) => detail.loaded_with(object, describe, fetched.at),
                Err(err) => detail.failed(err.to_string(), fetched.at),
            }
        }
    }

    /// The open detail, with its history brought up to date: what a frame draws.
    pub fn screen(&mut self) -> Option<&mut Detail> {
        self.refresh_describe_when_due(SystemTime::now());
        let detail = self.open.as_mut()?;
        if let Some(tap) = &self.tap {
            detail.sync_history(tap.history(&detail.target.key));
            detail.history_span = tap.history_span(&detail.target.key);
        }
        detail.sync_search();
        Some(detail)
    }
}

/// Where Ctrl-S saves by default: `objects` in kscope's state directory, else in the
/// temporary directory.
fn save_dir() -> PathBuf {
    kscope_config::state_dir()
        .unwrap_or_else(|| std::env::temp_dir().join("kscope"))
        .join("objects")
}

/// Writes the text `detail` shows to `kind-namespace-name-time.yaml` (or `.txt`) in `dir`,
/// and says where, or why not, in a person's words. A few kilobytes: written at once.
fn save(detail: &Detail, dir: &std::path::Path) -> String {
    let Some((text, extension)) = detail.saved_text() else {
        return "nothing to save here: Tab to the Describe or YAML".into();
    };
    let name: String = format!(
        "{}-{}",
        detail.target.kind.kind().to_lowercase(),
        detail.target.key.replace('/', "-")
    )
    .chars()
    .map(|c| {
        if c.is_ascii_alphanumeric() || matches!(c, '-' | '.') {
            c
        } else {
            '_'
        }
    })
    .collect();
    let stamp = jiff::Timestamp::now().strftime("%Y%m%dT%H%M%SZ");
    let path = dir.join(format!("{name}-{stamp}.{extension}"));
    match std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, text)) {
        Ok(()) => format!("saved to {}", path.display()),
        Err(err) => format!("cannot save to {}: {err}", path.display()),
    }
}

/// Fetches the object and its describe (see [`describe::fetch_described`]).
async fn fetch_described(
    client: &kube::Client,
    target: &DetailTarget,
) -> Result<(Value, Vec<String>), FetchError> {
    let (namespace, name) = split_meta_namespace_key(&target.key);
    let path = target.kind.object_path(namespace, name)?;
    let label = match namespace.filter(|_| target.kind.namespaced()) {
        Some(ns) => format!("{} {ns}/{name}", target.kind.kind()),
        None => format!("{} {name}", target.kind.kind()),
    };
    describe::fetch_described(client, path, label).await
}
