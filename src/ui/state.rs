//! The TUI's own state: modes, the filter being typed, scroll positions, the delta tail with
//! its cursor and filter, the workqueue's last minute, and the keymap in force.
//! Rows live in the view; this holds only what the person did. Plain data, so it can be
//! built by hand in tests.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, OnceLock};
use std::time::{Instant, SystemTime};

use crate::config::Config;
use crate::config::keys::Keymap;
use crate::index_views::live::SortSpec;
use crate::index_views::query::{ParseError, Query};
use crate::index_views::registry::ValueCount;
use crate::informers::indexer::IndexerError;
use crate::informers::keys::Key;
use crate::informers::tap::TapEntry;

use super::action::{Action, Focus, InputMode};
use super::command::CommandBar;

/// Delta lines kept for the tail; older ones are dropped.
pub const DELTA_CAPACITY: usize = 512;
/// Seconds of workqueue history the sparklines show.
pub const QUEUE_HISTORY: usize = 60;

/// One tap entry as the delta panel shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeltaLine {
    pub seq: u64,
    pub at: SystemTime,
    pub kind: &'static str,
    pub key: String,
    pub resource_version: String,
    /// Changed field paths, or the entry's message.
    pub detail: DeltaDetail,
}

/// A delta line's detail, worked out the first time the line is drawn: finding the changed
/// fields parses two versions of the object, too dear for each of ~1,000 entries a second
/// when a dozen are on screen.
#[derive(Debug, Clone, Default)]
pub struct DeltaDetail {
    entry: Option<Arc<TapEntry>>,
    text: OnceLock<String>,
}

impl DeltaDetail {
    fn of(entry: Arc<TapEntry>) -> Self {
        Self {
            entry: Some(entry),
            text: OnceLock::new(),
        }
    }

    /// The entry's message, else its changed field paths (empty when unknown).
    pub fn text(&self) -> &str {
        self.text.get_or_init(|| {
            let Some(entry) = &self.entry else {
                return String::new();
            };
            match (&entry.message, entry.changed_paths()) {
                (Some(message), _) => message.clone(),
                (None, Some(paths)) => paths.join(" "),
                (None, None) => String::new(),
            }
        })
    }
}

impl From<String> for DeltaDetail {
    fn from(text: String) -> Self {
        Self {
            entry: None,
            text: OnceLock::from(text),
        }
    }
}

impl From<&str> for DeltaDetail {
    fn from(text: &str) -> Self {
        Self::from(text.to_string())
    }
}

impl PartialEq for DeltaDetail {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text()
    }
}

impl Eq for DeltaDetail {}

impl DeltaLine {
    pub fn from_entry(entry: &Arc<TapEntry>) -> Self {
        Self {
            seq: entry.seq,
            at: entry.at,
            kind: entry.kind.label(),
            key: entry
                .key
                .as_ref()
                .map(|k| k.to_string())
                .unwrap_or_default(),
            resource_version: entry.resource_version.clone().unwrap_or_default(),
            detail: DeltaDetail::of(entry.clone()),
        }
    }
}

/// How a delta line stands out: pipeline events (relists, watch starts, bookmarks) and
/// trouble (410s, errors) are not changes to one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeltaClass {
    Object,
    Pipeline,
    Trouble,
}

impl DeltaLine {
    /// Worked out from the tap's labels (see `TapKind::label`).
    pub fn class(&self) -> DeltaClass {
        match self.kind {
            "RELIST" | "WATCH" | "BOOKMARK" => DeltaClass::Pipeline,
            "EXPIRED" | "ERROR" => DeltaClass::Trouble,
            _ => DeltaClass::Object,
        }
    }
}

/// The delta panel's filter: plain words must be substrings of the key; `NAME=VALUE` terms
/// keep the keys that index `NAME` gave for `VALUE` when the filter was made, so deltas of
/// objects deleted since still match. Entries without a key (relists, watch starts, errors)
/// always match: they explain what happened to the filtered objects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeltaFilter {
    pub input: String,
    /// Why the input cannot be used; the previous filter stays in force meanwhile.
    pub error: Option<String>,
    words: Vec<String>,
    /// Keys in every term's value set; `None` without terms.
    keys: Option<HashSet<Key>>,
}

impl DeltaFilter {
    /// Takes `input`, looking index terms up with `index_keys(name, value)`. On an error the
    /// previous filter is kept and `error` says why.
    pub fn set(
        &mut self,
        input: &str,
        mut index_keys: impl FnMut(&str, &str) -> Result<Vec<Key>, IndexerError>,
    ) {
        self.input = input.to_string();
        let mut words = Vec::new();
        let mut keys: Option<HashSet<Key>> = None;
        for token in input.split([' ', ',']).filter(|t| !t.is_empty()) {
            let Some((name, value)) = token.split_once('=') else {
                words.push(token.to_string());
                continue;
            };
            if name.is_empty() || value.is_empty() {
                self.error = Some(format!("{token}: expected NAME=VALUE"));
                return;
            }
            let found = match index_keys(name, value) {
                Ok(found) => found,
                Err(err) => {
                    self.error = Some(err.to_string());
                    return;
                }
            };
            keys = Some(match keys {
                None => found.into_iter().collect(),
                Some(mut kept) => {
                    let found: HashSet<Key> = found.into_iter().collect();
                    kept.retain(|k| found.contains(k));
                    kept
                }
            });
        }
        self.error = None;
        self.words = words;
        self.keys = keys;
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }

    pub fn is_active(&self) -> bool {
        !self.words.is_empty() || self.keys.is_some()
    }

    pub fn matches(&self, line: &DeltaLine) -> bool {
        if line.key.is_empty() {
            return true;
        }
        self.words.iter().all(|w| line.key.contains(w.as_str()))
            && self
                .keys
                .as_ref()
                .is_none_or(|keys| keys.contains(line.key.as_str()))
    }
}

/// The delta panel's cursor, by sequence number so it stays on its entry as new ones arrive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeltaCursor {
    /// `None` follows the newest entry.
    pub selected: Option<u64>,
    /// The first line shown while not following.
    top: Option<u64>,
}

/// What the delta panel shows in `height` lines: the matching lines in view and which of them
/// is selected.
#[derive(Debug)]
pub struct DeltaWindow<'a> {
    pub lines: Vec<&'a DeltaLine>,
    /// Index into `lines`.
    pub selected: Option<usize>,
    /// Lines matching the filter, and how many of those are newer than the selection.
    pub matching: usize,
    pub newer: usize,
}

/// One second of the workqueue, for the sparklines.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueueSample {
    pub adds_per_second: f64,
    pub depth: usize,
}

/// The last [`QUEUE_HISTORY`] samples of the view's workqueue, taken on the clock tick; the
/// rate comes from the adds counter's growth between two samples.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueueHistory {
    /// Oldest first.
    pub samples: VecDeque<QueueSample>,
    last: Option<(u64, Instant)>,
}

impl QueueHistory {
    /// Records the counter `adds` and `depth` at `at`. The first sample after a (re)start
    /// only sets the baseline.
    pub fn sample(&mut self, adds: u64, depth: usize, at: Instant) {
        if let Some((before, then)) = self.last {
            let elapsed = at.saturating_duration_since(then).as_secs_f64();
            let adds_per_second = if elapsed > 0.0 {
                adds.saturating_sub(before) as f64 / elapsed
            } else {
                0.0
            };
            if self.samples.len() == QUEUE_HISTORY {
                self.samples.pop_front();
            }
            self.samples.push_back(QueueSample {
                adds_per_second,
                depth,
            });
        }
        self.last = Some((adds, at));
    }

    /// Forgets the baseline: the view (and so the queue and its counters) was replaced.
    pub fn restart(&mut self) {
        self.last = None;
    }

    /// The newest rate, if two samples were taken.
    pub fn adds_per_second(&self) -> Option<f64> {
        self.samples.back().map(|s| s.adds_per_second)
    }
}

/// The filter bar: what is typed and whether it parses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilterBar {
    pub input: String,
    /// Why the input cannot be used (a parse error names its column).
    pub error: Option<String>,
}

impl FilterBar {
    /// Parses the input; on failure records the error and returns `None`.
    pub fn parse(&mut self) -> Option<Query> {
        match Query::parse(&self.input) {
            Ok(query) => {
                self.error = None;
                Some(query)
            }
            Err(ParseError { column, message }) => {
                self.error = Some(format!("column {column}: {message}"));
                None
            }
        }
    }
}

/// The index browser: one index's values with their counts, most frequent first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexBrowser {
    pub names: Vec<String>,
    /// Which of `names` is shown.
    pub current: usize,
    pub values: Vec<ValueCount>,
    pub selected: usize,
}

impl IndexBrowser {
    pub fn name(&self) -> Option<&str> {
        self.names.get(self.current).map(String::as_str)
    }

    /// Moves the value selection by `delta`, clamped to the list.
    pub fn step(&mut self, delta: isize) {
        let last = self.values.len().saturating_sub(1);
        self.selected = self.selected.saturating_add_signed(delta).min(last);
    }
}

/// Everything the person changed, apart from the rows themselves.
#[derive(Debug, Clone)]
pub struct UiState {
    pub mode: InputMode,
    pub filter: FilterBar,
    pub sort: SortSpec,
    /// Position of the first visible table row.
    pub offset: usize,
    /// Rows the table showed last frame: the page size for PgUp/PgDn.
    pub page: usize,
    pub panels: bool,
    pub focus: Focus,
    pub paused: bool,
    /// Newest last.
    pub deltas: VecDeque<DeltaLine>,
    pub delta_cursor: DeltaCursor,
    pub delta_filter: DeltaFilter,
    /// Lines the delta panel showed last frame: its page size.
    pub delta_rows: usize,
    /// Tap entries the tail missed because it fell behind or was paused.
    pub skipped: u64,
    pub browser: IndexBrowser,
    pub queue: QueueHistory,
    pub keymap: Arc<Keymap>,
    /// The command bar (`:`).
    pub command: CommandBar,
    /// Wide columns shown.
    pub wide: bool,
    /// First line of the help overlay shown, when it is taller than the screen.
    pub help_scroll: usize,
}

impl UiState {
    /// State with the built-in keymap (the configuration's replaces it in [`super::run`]).
    pub fn new(panels: bool) -> Self {
        Self {
            mode: InputMode::default(),
            filter: FilterBar::default(),
            sort: SortSpec::default(),
            offset: 0,
            page: 1,
            panels,
            focus: Focus::default(),
            paused: false,
            deltas: VecDeque::new(),
            delta_cursor: DeltaCursor::default(),
            delta_filter: DeltaFilter::default(),
            delta_rows: 1,
            skipped: 0,
            browser: IndexBrowser::default(),
            queue: QueueHistory::default(),
            keymap: Arc::new(built_in_keymap()),
            command: CommandBar::default(),
            wide: false,
            help_scroll: 0,
        }
    }

    /// Adds a delta to the tail unless paused (then it only counts as skipped).
    /// Shows `lines` (another table's) instead, following the tail again.
    pub fn replace_deltas(&mut self, lines: impl Iterator<Item = DeltaLine>) {
        self.deltas = lines.collect();
        self.delta_cursor = DeltaCursor::default();
        self.skipped = 0;
    }

    pub fn push_delta(&mut self, line: DeltaLine) {
        if self.paused {
            self.skipped += 1;
            return;
        }
        if self.deltas.len() == DELTA_CAPACITY {
            self.deltas.pop_front();
        }
        self.deltas.push_back(line);
    }

    /// The delta lines matching the filter, oldest first.
    fn matching_deltas(&self) -> Vec<&DeltaLine> {
        self.deltas
            .iter()
            .filter(|d| self.delta_filter.matches(d))
            .collect()
    }

    /// The first line and the selected line, as positions in `lines`, for `height` lines.
    fn delta_positions(&self, lines: &[&DeltaLine], height: usize) -> (usize, Option<usize>) {
        let position = |seq: u64| {
            lines
                .partition_point(|d| d.seq < seq)
                .min(lines.len().saturating_sub(1))
        };
        let height = height.max(1);
        let Some(selected) = self.delta_cursor.selected.filter(|_| !lines.is_empty()) else {
            let last = lines.len().checked_sub(1);
            return (lines.len().saturating_sub(height), last);
        };
        let selected = position(selected);
        let mut start = self
            .delta_cursor
            .top
            .map_or(0, position)
            .min(lines.len().saturating_sub(height));
        if selected < start {
            start = selected;
        } else if selected >= start + height {
            start = selected + 1 - height;
        }
        (start, Some(selected))
    }

    /// What the delta panel shows in `height` lines.
    pub fn delta_window(&self, height: usize) -> DeltaWindow<'_> {
        let lines = self.matching_deltas();
        let (start, selected) = self.delta_positions(&lines, height);
        let end = (start + height).min(lines.len());
        DeltaWindow {
            matching: lines.len(),
            newer: selected.map_or(0, |s| lines.len() - 1 - s),
            selected: selected.map(|s| s - start),
            lines: lines[start..end].to_vec(),
        }
    }

    /// The entry Enter would open: the selected one, or the newest while following.
    pub fn selected_delta(&self) -> Option<&DeltaLine> {
        let lines = self.matching_deltas();
        let (_, selected) = self.delta_positions(&lines, self.delta_rows);
        selected.map(|s| lines[s])
    }

    /// Moves the delta panel's cursor; reaching the newest entry follows the tail again.
    pub fn move_delta_cursor(&mut self, action: &Action) {
        let lines = self.matching_deltas();
        let Some(last) = lines.len().checked_sub(1) else {
            return;
        };
        let page = self.delta_rows.max(1);
        let (start, selected) = self.delta_positions(&lines, page);
        let current = selected.unwrap_or(last);
        let target = match action {
            Action::Up => current.saturating_sub(1),
            Action::Down => current + 1,
            Action::PageUp => current.saturating_sub(page),
            Action::PageDown => current + page,
            Action::Top => 0,
            _ => last,
        };
        if target >= last {
            self.delta_cursor = DeltaCursor::default();
            return;
        }
        let start = if target < start {
            target
        } else if target >= start + page {
            target + 1 - page
        } else {
            start
        };
        self.delta_cursor = DeltaCursor {
            selected: Some(lines[target].seq),
            top: Some(lines[start].seq),
        };
    }

    /// Sets the delta filter to `input` (see [`DeltaFilter::set`]) and follows the tail.
    pub fn set_delta_filter(
        &mut self,
        input: &str,
        index_keys: impl FnMut(&str, &str) -> Result<Vec<Key>, IndexerError>,
    ) {
        self.delta_filter.set(input, index_keys);
        self.delta_cursor = DeltaCursor::default();
    }

    /// Applies a key typed into the delta filter: a character or backspace refilters at once,
    /// Enter keeps the filter, Esc clears it; both return to the main screen.
    pub fn edit_delta_filter(
        &mut self,
        action: &Action,
        index_keys: impl FnMut(&str, &str) -> Result<Vec<Key>, IndexerError>,
    ) {
        let mut input = self.delta_filter.input.clone();
        match action {
            Action::FilterChar(c) => input.push(*c),
            Action::FilterBackspace => {
                input.pop();
            }
            Action::FilterClear => {
                self.clear_delta_filter();
                self.mode = InputMode::Normal;
                return;
            }
            _ => {
                self.mode = InputMode::Normal;
                return;
            }
        }
        self.set_delta_filter(&input, index_keys);
    }

    pub fn clear_delta_filter(&mut self) {
        self.delta_filter.clear();
        self.delta_cursor = DeltaCursor::default();
    }

    /// The first visible row that keeps `selected` on screen, moving as little as possible.
    pub fn follow(&mut self, selected: Option<usize>, height: usize, total: usize) -> usize {
        if let Some(pos) = selected {
            if pos < self.offset {
                self.offset = pos;
            } else if height > 0 && pos >= self.offset + height {
                self.offset = pos + 1 - height;
            }
        }
        self.offset = self.offset.min(total.saturating_sub(height));
        self.page = height.max(1);
        self.offset
    }
}

/// The keys of the built-in configuration. It is part of the binary and a unit test parses
/// it, so failing here is a build defect, not a user error.
fn built_in_keymap() -> Keymap {
    Config::built_in()
        .map(|c| c.keys)
        .expect("the built-in config/kscope.yaml is valid")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_moves_only_to_keep_the_selection_visible() {
        let mut state = UiState::new(false);
        assert_eq!(state.follow(Some(3), 10, 100), 0);
        assert_eq!(state.follow(Some(12), 10, 100), 3);
        assert_eq!(state.follow(Some(8), 10, 100), 3);
        assert_eq!(state.follow(Some(1), 10, 100), 1);
        assert_eq!(state.follow(Some(1), 10, 5), 0);
    }

    #[test]
    fn filter_errors_name_the_column() {
        let mut bar = FilterBar {
            input: "app in a".into(),
            error: None,
        };
        assert!(bar.parse().is_none());
        assert!(bar.error.as_deref().is_some_and(|e| e.contains("column 8")));
        bar.input = "app=web api".into();
        assert_eq!(bar.parse().map(|q| q.text), Some("api".to_string()));
        assert_eq!(bar.error, None);
    }

    #[test]
    fn a_delta_line_works_out_its_changed_fields_when_first_read() {
        use crate::informers::lister_watcher::WatchEventType;
        use crate::informers::tap::{Tap, TapKind, TapRecord};
        let tap = Tap::new(8);
        for (rv, phase) in [("1", "Pending"), ("2", "Running")] {
            let raw = format!(
                r#"{{"metadata":{{"name":"web","resourceVersion":"{rv}"}},"status":{{"phase":"{phase}"}}}}"#
            );
            tap.record(
                TapKind::Watch(WatchEventType::Modified),
                TapRecord {
                    key: Some("shop/web".into()),
                    resource_version: Some(rv.into()),
                    raw: Some(bytes::Bytes::from(raw)),
                    message: None,
                },
            );
        }
        let entries = tap.snapshot();
        let line = DeltaLine::from_entry(&entries[1]);
        assert_eq!(line.detail.text(), "status.phase");
        assert_eq!(line.detail, DeltaDetail::from("status.phase"));
        assert_eq!(DeltaLine::from_entry(&entries[0]).detail.text(), "");
    }

    fn line(seq: u64, kind: &'static str, key: &str) -> DeltaLine {
        DeltaLine {
            seq,
            at: SystemTime::UNIX_EPOCH,
            kind,
            key: key.into(),
            resource_version: seq.to_string(),
            detail: DeltaDetail::default(),
        }
    }

    /// `app` index: web → shop/web-1, shop/web-2; db → data/db-1. Anything else is unknown.
    fn index_keys(name: &str, value: &str) -> Result<Vec<Key>, IndexerError> {
        match (name, value) {
            ("app", "web") => Ok(vec!["shop/web-1".into(), "shop/web-2".into()]),
            ("app", _) => Ok(Vec::new()),
            ("namespace", "shop") => Ok(vec!["shop/web-1".into(), "shop/web-2".into()]),
            ("namespace", _) => Ok(Vec::new()),
            _ => Err(IndexerError::UnknownIndex(name.into())),
        }
    }

    fn matching(filter: &DeltaFilter, lines: &[DeltaLine]) -> Vec<u64> {
        lines
            .iter()
            .filter(|l| filter.matches(l))
            .map(|l| l.seq)
            .collect()
    }

    #[test]
    fn delta_filter_by_text_and_by_index_value_set() {
        let lines = [
            line(1, "RELIST", ""),
            line(2, "ADDED", "shop/web-1"),
            line(3, "ADDED", "data/db-1"),
            line(4, "DELETED", "shop/web-2"),
            line(5, "ADDED", "shop/web-3"),
        ];
        let mut filter = DeltaFilter::default();
        assert!(!filter.is_active());
        assert_eq!(matching(&filter, &lines), [1, 2, 3, 4, 5]);
        filter.set("web", index_keys);
        assert_eq!(matching(&filter, &lines), [1, 2, 4, 5]);
        // The value set is taken now: web-3 was not in it, web-2 was (deleted later or not).
        filter.set("app=web", index_keys);
        assert_eq!(matching(&filter, &lines), [1, 2, 4]);
        filter.set("app=web 2", index_keys);
        assert_eq!(matching(&filter, &lines), [1, 4]);
        filter.set("app=web,namespace=shop", index_keys);
        assert_eq!(matching(&filter, &lines), [1, 2, 4]);
        filter.set("app=db namespace=shop", index_keys);
        assert_eq!(matching(&filter, &lines), [1]);
        // A bad term keeps the previous filter and says why.
        filter.set("app=web", index_keys);
        filter.set("team=a", index_keys);
        assert_eq!(filter.input, "team=a");
        assert_eq!(
            filter.error.as_deref(),
            Some("index with name team does not exist")
        );
        assert_eq!(matching(&filter, &lines), [1, 2, 4]);
        filter.set("app=", index_keys);
        assert_eq!(filter.error.as_deref(), Some("app=: expected NAME=VALUE"));
        filter.clear();
        assert_eq!(filter, DeltaFilter::default());
    }

    #[test]
    fn pipeline_and_trouble_lines_stand_out() {
        assert_eq!(line(1, "RELIST", "").class(), DeltaClass::Pipeline);
        assert_eq!(line(1, "WATCH", "").class(), DeltaClass::Pipeline);
        assert_eq!(line(1, "BOOKMARK", "").class(), DeltaClass::Pipeline);
        assert_eq!(line(1, "EXPIRED", "").class(), DeltaClass::Trouble);
        assert_eq!(line(1, "ERROR", "").class(), DeltaClass::Trouble);
        assert_eq!(line(1, "MODIFIED", "a/b").class(), DeltaClass::Object);
        assert_eq!(line(1, "Replaced", "a/b").class(), DeltaClass::Object);
        use crate::informers::delta_fifo::DeltaType;
        use crate::informers::lister_watcher::WatchEventType;
        use crate::informers::tap::TapKind;
        for (kind, class) in [
            (TapKind::Relist { objects: 3 }, DeltaClass::Pipeline),
            (TapKind::WatchStart, DeltaClass::Pipeline),
            (
                TapKind::Watch(WatchEventType::Bookmark),
                DeltaClass::Pipeline,
            ),
            (TapKind::Expired, DeltaClass::Trouble),
            (TapKind::Error, DeltaClass::Trouble),
            (TapKind::Watch(WatchEventType::Error), DeltaClass::Trouble),
            (TapKind::Delta(DeltaType::Sync), DeltaClass::Object),
        ] {
            assert_eq!(line(1, kind.label(), "").class(), class, "{kind:?}");
        }
    }

    fn with_lines(count: u64) -> UiState {
        let mut state = UiState::new(true);
        state.delta_rows = 4;
        for seq in 0..count {
            state.push_delta(line(seq, "ADDED", &format!("ns/p-{seq}")));
        }
        state
    }

    fn shown(state: &UiState) -> (Vec<u64>, Option<usize>) {
        let window = state.delta_window(state.delta_rows);
        (
            window.lines.iter().map(|l| l.seq).collect(),
            window.selected,
        )
    }

    #[test]
    fn delta_cursor_follows_the_tail_until_moved_up() {
        let mut state = with_lines(10);
        assert_eq!(shown(&state), (vec![6, 7, 8, 9], Some(3)));
        state.push_delta(line(10, "ADDED", "ns/p-10"));
        assert_eq!(shown(&state), (vec![7, 8, 9, 10], Some(3)));
        assert_eq!(state.selected_delta().map(|d| d.seq), Some(10));
        state.move_delta_cursor(&Action::Up);
        assert_eq!(shown(&state), (vec![7, 8, 9, 10], Some(2)));
        // Held: new entries neither move the view nor the selection.
        state.push_delta(line(11, "ADDED", "ns/p-11"));
        assert_eq!(shown(&state), (vec![7, 8, 9, 10], Some(2)));
        assert_eq!(state.delta_window(4).newer, 2);
        state.move_delta_cursor(&Action::Up);
        state.move_delta_cursor(&Action::Up);
        state.move_delta_cursor(&Action::Up);
        assert_eq!(shown(&state), (vec![6, 7, 8, 9], Some(0)));
        state.move_delta_cursor(&Action::PageUp);
        assert_eq!(shown(&state), (vec![2, 3, 4, 5], Some(0)));
        state.move_delta_cursor(&Action::Top);
        assert_eq!(shown(&state), (vec![0, 1, 2, 3], Some(0)));
        state.move_delta_cursor(&Action::PageDown);
        assert_eq!(shown(&state), (vec![1, 2, 3, 4], Some(3)));
        assert_eq!(state.selected_delta().map(|d| d.seq), Some(4));
        // Back to the newest: following again.
        state.move_delta_cursor(&Action::Bottom);
        assert_eq!(state.delta_cursor, DeltaCursor::default());
        state.push_delta(line(12, "ADDED", "ns/p-12"));
        assert_eq!(shown(&state), (vec![9, 10, 11, 12], Some(3)));
    }

    #[test]
    fn delta_cursor_when_paused_filtered_or_evicted() {
        let mut state = with_lines(6);
        state.move_delta_cursor(&Action::Up);
        state.paused = true;
        state.push_delta(line(6, "ADDED", "ns/p-6"));
        assert_eq!(state.skipped, 1);
        assert_eq!(shown(&state), (vec![2, 3, 4, 5], Some(2)));
        state.paused = false;
        // A filter starts following its newest match.
        state.set_delta_filter("p-1", index_keys);
        assert_eq!(shown(&state), (vec![1], Some(0)));
        state.move_delta_cursor(&Action::Up);
        assert_eq!(state.delta_cursor, DeltaCursor::default());
        state.clear_delta_filter();
        // An evicted selection lands on the oldest line kept.
        state.move_delta_cursor(&Action::Top);
        for seq in 6..(6 + DELTA_CAPACITY as u64) {
            state.push_delta(line(seq, "ADDED", "ns/p"));
        }
        assert_eq!(shown(&state).1, Some(0));
        assert_eq!(state.selected_delta().map(|d| d.seq), Some(6));
        // Nothing to select.
        let mut empty = UiState::new(true);
        empty.move_delta_cursor(&Action::Up);
        assert_eq!(shown(&empty), (vec![], None));
        assert_eq!(empty.selected_delta().map(|d| d.seq), None);
    }

    #[test]
    fn typing_the_delta_filter() {
        let mut state = with_lines(3);
        state.mode = InputMode::DeltaFilter;
        for c in "p-2x".chars() {
            state.edit_delta_filter(&Action::FilterChar(c), index_keys);
        }
        assert_eq!(state.delta_window(4).matching, 0);
        state.edit_delta_filter(&Action::FilterBackspace, index_keys);
        assert_eq!(state.delta_window(4).matching, 1);
        state.edit_delta_filter(&Action::FilterAccept, index_keys);
        assert_eq!(state.mode, InputMode::Normal);
        assert_eq!(state.delta_filter.input, "p-2");
        state.mode = InputMode::DeltaFilter;
        state.edit_delta_filter(&Action::FilterClear, index_keys);
        assert_eq!(state.mode, InputMode::Normal);
        assert!(!state.delta_filter.is_active());
    }

    #[test]
    fn queue_history_rates_and_bounds() {
        let start = Instant::now();
        let at = |s: u64| start + std::time::Duration::from_millis(s * 1000);
        let mut history = QueueHistory::default();
        history.sample(100, 3, at(0));
        assert_eq!(history.adds_per_second(), None);
        history.sample(130, 5, at(1));
        history.sample(130, 0, at(3));
        assert_eq!(
            history.samples.iter().copied().collect::<Vec<_>>(),
            [
                QueueSample {
                    adds_per_second: 30.0,
                    depth: 5
                },
                QueueSample {
                    adds_per_second: 0.0,
                    depth: 0
                }
            ]
        );
        // A replaced queue starts from its own counter.
        history.restart();
        history.sample(7, 1, at(4));
        assert_eq!(history.samples.len(), 2);
        for s in 5..100 {
            history.sample(7 + s, 1, at(s));
        }
        assert_eq!(history.samples.len(), QUEUE_HISTORY);
        assert_eq!(history.adds_per_second(), Some(1.0));
    }
}
