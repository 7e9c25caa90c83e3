//! The delta panel: the tail of the table's tap (watch events, deltas, relists), with a
//! cursor that holds its entry while new ones arrive, a filter by key text or index value,
//! and a pause. It owns its state, handles the panel's actions and returns what the event
//! loop must do; it is sized by the layout of the frame, never by drawing.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use tokio::sync::broadcast;

use kscope_index_views::query::{Query, Term};
use kscope_informers::fifo::{FifoKind, HandedItem, Handoff};
use kscope_informers::indexer::IndexerError;
use kscope_informers::instrument::compare::{DifferenceKind, PipelineComparison, SameFifo};
use kscope_informers::instrument::tap::TapEntry;
use kscope_informers::keys::Key;

use super::action::Action;
use super::effect::Effect;
use super::line::LineEdit;

/// Delta lines kept for the tail; older ones are dropped.
pub const DELTA_CAPACITY: usize = 512;
/// Handoffs kept per pipeline in the side-by-side view; older ones are dropped.
pub const HANDOFF_CAPACITY: usize = 256;
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

/// The delta panel's filter, in the table filter's query language: plain words must be
/// substrings of the key; `NAME=VALUE` and `NAME in (A,B)` terms keep the keys that index
/// `NAME` gave for those values when the filter was made, so deltas of objects deleted since
/// still match. Entries about the informer rather than an object (relists, watch starts,
/// errors) always match, as they explain what happened to the filtered objects; bookmarks
/// do not, as they say nothing about any object.
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
        let query = match Query::parse(input) {
            Ok(query) => query,
            Err(err) => {
                self.error = Some(err.to_string());
                return;
            }
        };
        let mut keys: Option<HashSet<Key>> = None;
        for term in &query.terms {
            let (name, values) = match term {
                Term::Eq { index, value } => (index, std::slice::from_ref(value)),
                Term::In { index, values } => (index, values.as_slice()),
                other => {
                    self.error = Some(format!(
                        "{other}: the delta filter takes NAME=VALUE and NAME in (A,B) terms, \
                         which name the objects to follow"
                    ));
                    return;
                }
            };
            let mut found = HashSet::new();
            for value in values {
                match index_keys(name, value) {
                    Ok(keys) => found.extend(keys),
                    Err(err) => {
                        self.error = Some(err.to_string());
                        return;
                    }
                }
            }
            keys = Some(match keys {
                None => found,
                Some(mut kept) => {
                    kept.retain(|k| found.contains(k));
                    kept
                }
            });
        }
        self.error = None;
        self.words = query.text.split_whitespace().map(str::to_string).collect();
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
            return line.kind != "BOOKMARK" || !self.is_active();
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

/// One pop of one pipeline, as the side-by-side view shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandoffLine {
    pub seq: u64,
    /// Handed while the initial list was being processed.
    pub initial: bool,
    /// Where it differs from what the other pipeline handed, once that is known.
    pub marks: Vec<DifferenceKind>,
    /// The events it carried, in the order handed, at most [`EVENTS_KEPT`]: what the aligned
    /// rows match across the two pipelines.
    pub events: Vec<HandedEvent>,
}

/// Events of one handoff the aligned rows show at most (a relist under RealFIFO hands one
/// per object in a batch).
pub const EVENTS_KEPT: usize = 64;

/// One event a handoff carried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandedEvent {
    /// The same in both pipelines for the same watch event: `shop/web-1 @2`; a whole-store
    /// item by what it is: `relist @12`, `resync`, `bookmark @9`.
    pub id: String,
    /// How this pipeline handed it: `Updated`, `ReplacedAll 3 objects`.
    pub how: String,
}

impl HandedEvent {
    fn of(item: &HandedItem) -> Vec<Self> {
        match item {
            HandedItem::Deltas { key, deltas } => deltas
                .iter()
                .map(|d| Self {
                    id: format!("{key} @{}", d.resource_version.as_deref().unwrap_or("?")),
                    how: format!(
                        "{}{}",
                        d.delta_type.as_str(),
                        if d.tombstone { "(tombstone)" } else { "" }
                    ),
                })
                .collect(),
            HandedItem::ReplacedAll {
                resource_version,
                objects,
            } => vec![Self {
                id: format!("relist @{resource_version}"),
                how: format!("ReplacedAll {objects} objects"),
            }],
            HandedItem::SyncAll => vec![Self {
                id: "resync".into(),
                how: "SyncAll".into(),
            }],
            HandedItem::Bookmark { resource_version } => vec![Self {
                id: format!("bookmark @{resource_version}"),
                how: "Bookmark".into(),
            }],
        }
    }
}

/// One pipeline's side of an aligned row: the handoff that carried the row's event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowCell<'a> {
    pub handoff: &'a HandoffLine,
    pub how: &'a str,
    /// The handoff's first event: its marks are shown here, once.
    pub first: bool,
}

/// One event, and the handoff of each pipeline that carried it, facing each other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlignedRow<'a> {
    pub event: &'a str,
    pub sides: [Option<RowCell<'a>>; 2],
}

impl HandoffLine {
    fn of(handoff: &Handoff) -> Self {
        Self {
            seq: handoff.seq,
            initial: handoff.is_in_initial_list,
            marks: Vec::new(),
            events: handoff
                .items
                .iter()
                .flat_map(HandedEvent::of)
                .take(EVENTS_KEPT)
                .collect(),
        }
    }
}

/// Two pipelines on the same watch stream, side by side: what each pop of each hands the
/// handlers, marked where the two differ (deltas merged or not, order, how a relist or a
/// resync is delivered), so a controller author sees why a handler got what it got.
#[derive(Debug, Clone)]
pub struct SideBySide {
    /// The table's pipeline, then the compared one.
    pub fifos: [FifoKind; 2],
    /// Each pipeline's handoffs, newest last.
    pub columns: [VecDeque<HandoffLine>; 2],
    comparison: PipelineComparison,
    /// Differences found since the view started, by kind (merged, order, relist, resync).
    pub counts: [u64; 4],
    /// The newest difference, said in full.
    pub latest: Option<String>,
    /// Handoffs the view missed because it fell behind.
    pub skipped: u64,
}

const KINDS: [DifferenceKind; 4] = [
    DifferenceKind::Merged,
    DifferenceKind::Order,
    DifferenceKind::Relist,
    DifferenceKind::Resync,
];

impl SideBySide {
    pub fn new(first: FifoKind, second: FifoKind) -> Result<Self, SameFifo> {
        Ok(Self {
            fifos: [first, second],
            columns: [VecDeque::new(), VecDeque::new()],
            comparison: PipelineComparison::new(first, second)?,
            counts: [0; 4],
            latest: None,
            skipped: 0,
        })
    }

    /// Takes one pipeline's handoff, and marks the differences it shows (on it, or on the
    /// other pipeline's handoff it completes an order difference with).
    pub fn take(&mut self, handoff: &Handoff) {
        let Some(side) = self.fifos.iter().position(|f| *f == handoff.fifo) else {
            return;
        };
        let column = &mut self.columns[side];
        if column.len() == HANDOFF_CAPACITY {
            column.pop_front();
        }
        column.push_back(HandoffLine::of(handoff));
        for difference in self.comparison.observe(handoff) {
            if let Some(at) = KINDS.iter().position(|k| *k == difference.kind) {
                self.counts[at] += 1;
            }
            let Some(marked) = self.fifos.iter().position(|f| *f == difference.fifo) else {
                continue;
            };
            if let Some(line) = self.columns[marked]
                .iter_mut()
                .rev()
                .find(|l| l.seq == difference.seq)
                && !line.marks.contains(&difference.kind)
            {
                line.marks.push(difference.kind);
            }
            self.latest = Some(difference.message);
        }
    }

    /// The events both pipelines handed, one a row, each beside the handoff of each pipeline
    /// that carried it, in the first pipeline's order: a handoff that merged several events
    /// spans their rows, and the second pipeline's handoff numbers going backwards show an
    /// order difference. An event only one pipeline handed (a relist as one item against
    /// an item per object) has one side empty, placed after the last row the other matched.
    pub fn aligned(&self) -> Vec<AlignedRow<'_>> {
        let cells = |side: usize| {
            self.columns[side].iter().flat_map(|handoff| {
                handoff.events.iter().enumerate().map(move |(i, e)| {
                    (
                        e.id.as_str(),
                        RowCell {
                            handoff,
                            how: e.how.as_str(),
                            first: i == 0,
                        },
                    )
                })
            })
        };
        let mut rows: Vec<AlignedRow<'_>> = cells(0)
            .map(|(event, cell)| AlignedRow {
                event,
                sides: [Some(cell), None],
            })
            .collect();
        let mut waiting: HashMap<&str, VecDeque<usize>> = HashMap::new();
        for (i, row) in rows.iter().enumerate() {
            waiting.entry(row.event).or_default().push_back(i);
        }
        // Second-side events nothing on the first side matched, by the row they follow.
        let mut unmatched: Vec<(Option<usize>, AlignedRow<'_>)> = Vec::new();
        let mut last_matched = None;
        for (event, cell) in cells(1) {
            match waiting.get_mut(event).and_then(VecDeque::pop_front) {
                Some(i) => {
                    rows[i].sides[1] = Some(cell);
                    last_matched = Some(i);
                }
                None => unmatched.push((
                    last_matched,
                    AlignedRow {
                        event,
                        sides: [None, Some(cell)],
                    },
                )),
            }
        }
        // An order difference matches backwards: the rows they follow, in row order.
        unmatched.sort_by_key(|(after, _)| *after);
        let mut unmatched = unmatched.into_iter().peekable();
        let mut aligned = Vec::with_capacity(rows.len() + unmatched.len());
        while let Some((_, row)) = unmatched.next_if(|(after, _)| after.is_none()) {
            aligned.push(row);
        }
        for (i, row) in rows.into_iter().enumerate() {
            aligned.push(row);
            while let Some((_, row)) = unmatched.next_if(|(after, _)| *after == Some(i)) {
                aligned.push(row);
            }
        }
        aligned.extend(unmatched.map(|(_, row)| row));
        aligned
    }

    /// The differences counted so far, as `merged 1 · order 0 · relist 0 · resync 0`.
    pub fn summary(&self) -> String {
        KINDS
            .iter()
            .zip(self.counts)
            .map(|(k, n)| format!("{} {n}", k.as_str()))
            .collect::<Vec<_>>()
            .join(" · ")
    }
}

/// The delta panel's state.
#[derive(Debug, Clone, Default)]
pub struct DeltaPanel {
    /// Newest last.
    pub lines: VecDeque<DeltaLine>,
    pub cursor: DeltaCursor,
    pub filter: DeltaFilter,
    /// The filter line's cursor and history.
    pub filter_edit: LineEdit,
    pub paused: bool,
    /// Tap entries the tail missed because it fell behind or was paused.
    pub skipped: u64,
    /// The table's pipeline in a few words: its FIFO and how it read its initial state
    /// (and why, when it fell back to a list).
    pub pipeline: String,
    /// Two pipelines side by side instead of the tail, when the table runs two.
    pub side_by_side: Option<SideBySide>,
}

impl DeltaPanel {
    /// Applies a panel action (with the panel focused) for a panel of `page` lines.
    pub fn handle_key(&mut self, action: &Action, page: usize) -> Option<Effect> {
        match action {
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom => self.move_cursor(action, page),
            Action::OpenDeltaDiff => {
                return self.selected(page).map(|d| Effect::OpenEntry(d.seq));
            }
            _ => {}
        }
        None
    }

    pub fn toggle_pause(&mut self) {
        self.paused = !self.paused;
        if self.paused {
            self.skipped = 0;
        }
    }

    /// Takes this entry and every one already waiting, converting only the newest that fit.
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
                | Err(broadcast::error::TryRecvError::Lagged(n)) => self.skipped += n,
                Ok(Err(broadcast::error::RecvError::Closed)) | Err(_) => break,
            }
            next = taps.try_recv().map(Ok);
        }
        // Entries of a tap shown already, when its lines were loaded on a switch.
        if let Some(newest) = self.lines.back().map(|d| d.seq) {
            batch.retain(|entry| entry.seq > newest);
        }
        let keep = batch.len().saturating_sub(DELTA_CAPACITY);
        self.skipped += if self.paused { 0 } else { keep as u64 };
        for entry in &batch[keep..] {
            self.push(DeltaLine::from_entry(entry));
        }
    }

    /// Takes a handoff into the side-by-side view, if shown, or counts those missed. The
    /// pause does not hold it: the comparison needs every handoff of both pipelines.
    pub fn take_handoff(&mut self, handoff: Result<Arc<Handoff>, u64>) {
        let Some(view) = &mut self.side_by_side else {
            return;
        };
        match handoff {
            Ok(handoff) => view.take(&handoff),
            Err(missed) => view.skipped += missed,
        }
    }

    /// Shows `lines` (another table's) instead, following the tail again.
    pub fn replace(&mut self, lines: impl Iterator<Item = DeltaLine>) {
        self.lines = lines.collect();
        self.cursor = DeltaCursor::default();
        self.skipped = 0;
    }

    /// Adds a delta to the tail unless paused (then it only counts as skipped).
    pub fn push(&mut self, line: DeltaLine) {
        if self.paused {
            self.skipped += 1;
            return;
        }
        if self.lines.len() == DELTA_CAPACITY {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
    }

    /// The delta lines matching the filter, oldest first.
    fn matching(&self) -> Vec<&DeltaLine> {
        self.lines
            .iter()
            .filter(|d| self.filter.matches(d))
            .collect()
    }

    /// The first line and the selected line, as positions in `lines`, for `height` lines.
    fn positions(&self, lines: &[&DeltaLine], height: usize) -> (usize, Option<usize>) {
        let position = |seq: u64| {
            lines
                .partition_point(|d| d.seq < seq)
                .min(lines.len().saturating_sub(1))
        };
        let height = height.max(1);
        let Some(selected) = self.cursor.selected.filter(|_| !lines.is_empty()) else {
            let last = lines.len().checked_sub(1);
            return (lines.len().saturating_sub(height), last);
        };
        let selected = position(selected);
        let mut start = self
            .cursor
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
    pub fn window(&self, height: usize) -> DeltaWindow<'_> {
        let lines = self.matching();
        let (start, selected) = self.positions(&lines, height);
        let end = (start + height).min(lines.len());
        DeltaWindow {
            matching: lines.len(),
            newer: selected.map_or(0, |s| lines.len() - 1 - s),
            selected: selected.map(|s| s - start),
            lines: lines[start..end].to_vec(),
        }
    }

    /// The entry Enter would open: the selected one, or the newest while following; `page`
    /// is the panel's height.
    pub fn selected(&self, page: usize) -> Option<&DeltaLine> {
        let lines = self.matching();
        let (_, selected) = self.positions(&lines, page);
        selected.map(|s| lines[s])
    }

    /// Moves the cursor a panel of `page` lines shows; reaching the newest entry follows
    /// the tail again.
    pub fn move_cursor(&mut self, action: &Action, page: usize) {
        let lines = self.matching();
        let Some(last) = lines.len().checked_sub(1) else {
            return;
        };
        let page = page.max(1);
        let (start, selected) = self.positions(&lines, page);
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
            self.cursor = DeltaCursor::default();
            return;
        }
        let start = if target < start {
            target
        } else if target >= start + page {
            target + 1 - page
        } else {
            start
        };
        self.cursor = DeltaCursor {
            selected: Some(lines[target].seq),
            top: Some(lines[start].seq),
        };
    }

    /// Sets the delta filter to `input` (see [`DeltaFilter::set`]) and follows the tail.
    pub fn set_filter(
        &mut self,
        input: &str,
        index_keys: impl FnMut(&str, &str) -> Result<Vec<Key>, IndexerError>,
    ) {
        self.filter.set(input, index_keys);
        self.cursor = DeltaCursor::default();
    }

    /// Applies a key typed into the delta filter: a character or backspace refilters at once,
    /// Enter keeps the filter, Esc clears it; both close the filter line ([`Effect::Close`]).
    pub fn edit_filter(
        &mut self,
        action: &Action,
        index_keys: impl FnMut(&str, &str) -> Result<Vec<Key>, IndexerError>,
    ) -> Option<Effect> {
        let mut input = self.filter.input.clone();
        match action {
            Action::FilterClear => {
                self.clear_filter();
                Some(Effect::Close)
            }
            action => match self.filter_edit.apply(&mut input, action) {
                Some(true) => {
                    self.set_filter(&input, index_keys);
                    None
                }
                Some(false) => None,
                None => {
                    self.filter_edit.remember(&input);
                    Some(Effect::Close)
                }
            },
        }
    }

    pub fn clear_filter(&mut self) {
        self.filter.clear();
        self.cursor = DeltaCursor::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delta_line_works_out_its_changed_fields_when_first_read() {
        use kscope_informers::instrument::tap::{Tap, TapKind, TapRecord};
        use kscope_informers::lister_watcher::WatchEventType;
        let tap = Tap::new(8, kscope_resources::secret::keepable_raw);
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
            ("app", "db") => Ok(vec!["data/db-1".into()]),
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
            line(6, "BOOKMARK", ""),
        ];
        let mut filter = DeltaFilter::default();
        assert!(!filter.is_active());
        assert_eq!(matching(&filter, &lines), [1, 2, 3, 4, 5, 6]);
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
        assert_eq!(
            filter.error.as_deref(),
            Some("column 5: expected a value, the query ended")
        );
        filter.set("app=(", index_keys);
        assert!(filter.error.is_some(), "a bad term is an error");
        filter.set("app!=web", index_keys);
        assert!(
            filter
                .error
                .as_deref()
                .is_some_and(|e| e.contains("NAME=VALUE")),
            "{filter:?}"
        );
        assert_eq!(matching(&filter, &lines), [1, 2, 4], "still app=web");
        filter.set("app in (web,db)", index_keys);
        assert_eq!(filter.error, None);
        assert_eq!(matching(&filter, &lines), [1, 2, 3, 4]);
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
        use kscope_informers::delta_fifo::DeltaType;
        use kscope_informers::instrument::tap::TapKind;
        use kscope_informers::lister_watcher::WatchEventType;
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

    const PAGE: usize = 4;

    fn with_lines(count: u64) -> DeltaPanel {
        let mut state = DeltaPanel::default();
        for seq in 0..count {
            state.push(line(seq, "ADDED", &format!("ns/p-{seq}")));
        }
        state
    }

    fn shown(state: &DeltaPanel) -> (Vec<u64>, Option<usize>) {
        let window = state.window(PAGE);
        (
            window.lines.iter().map(|l| l.seq).collect(),
            window.selected,
        )
    }

    #[test]
    fn delta_cursor_follows_the_tail_until_moved_up() {
        let mut state = with_lines(10);
        assert_eq!(shown(&state), (vec![6, 7, 8, 9], Some(3)));
        state.push(line(10, "ADDED", "ns/p-10"));
        assert_eq!(shown(&state), (vec![7, 8, 9, 10], Some(3)));
        assert_eq!(state.selected(PAGE).map(|d| d.seq), Some(10));
        state.move_cursor(&Action::Up, PAGE);
        assert_eq!(shown(&state), (vec![7, 8, 9, 10], Some(2)));
        // Held: new entries neither move the view nor the selection.
        state.push(line(11, "ADDED", "ns/p-11"));
        assert_eq!(shown(&state), (vec![7, 8, 9, 10], Some(2)));
        assert_eq!(state.window(PAGE).newer, 2);
        state.move_cursor(&Action::Up, PAGE);
        state.move_cursor(&Action::Up, PAGE);
        state.move_cursor(&Action::Up, PAGE);
        assert_eq!(shown(&state), (vec![6, 7, 8, 9], Some(0)));
        state.move_cursor(&Action::PageUp, PAGE);
        assert_eq!(shown(&state), (vec![2, 3, 4, 5], Some(0)));
        state.move_cursor(&Action::Top, PAGE);
        assert_eq!(shown(&state), (vec![0, 1, 2, 3], Some(0)));
        state.move_cursor(&Action::PageDown, PAGE);
        assert_eq!(shown(&state), (vec![1, 2, 3, 4], Some(3)));
        assert_eq!(state.selected(PAGE).map(|d| d.seq), Some(4));
        // Back to the newest: following again.
        state.move_cursor(&Action::Bottom, PAGE);
        assert_eq!(state.cursor, DeltaCursor::default());
        state.push(line(12, "ADDED", "ns/p-12"));
        assert_eq!(shown(&state), (vec![9, 10, 11, 12], Some(3)));
    }

    #[test]
    fn delta_cursor_when_paused_filtered_or_evicted() {
        let mut state = with_lines(6);
        state.move_cursor(&Action::Up, PAGE);
        state.paused = true;
        state.push(line(6, "ADDED", "ns/p-6"));
        assert_eq!(state.skipped, 1);
        assert_eq!(shown(&state), (vec![2, 3, 4, 5], Some(2)));
        state.paused = false;
        // A filter starts following its newest match.
        state.set_filter("p-1", index_keys);
        assert_eq!(shown(&state), (vec![1], Some(0)));
        state.move_cursor(&Action::Up, PAGE);
        assert_eq!(state.cursor, DeltaCursor::default());
        state.clear_filter();
        // An evicted selection lands on the oldest line kept.
        state.move_cursor(&Action::Top, PAGE);
        for seq in 6..(6 + DELTA_CAPACITY as u64) {
            state.push(line(seq, "ADDED", "ns/p"));
        }
        assert_eq!(shown(&state).1, Some(0));
        assert_eq!(state.selected(PAGE).map(|d| d.seq), Some(6));
        // Nothing to select.
        let mut empty = DeltaPanel::default();
        empty.move_cursor(&Action::Up, PAGE);
        assert_eq!(shown(&empty), (vec![], None));
        assert_eq!(empty.selected(PAGE).map(|d| d.seq), None);
    }

    #[test]
    fn typing_the_delta_filter() {
        let mut state = with_lines(3);
        for c in "p-2x".chars() {
            assert_eq!(state.edit_filter(&Action::FilterChar(c), index_keys), None);
        }
        assert_eq!(state.window(PAGE).matching, 0);
        state.edit_filter(&Action::FilterBackspace, index_keys);
        assert_eq!(state.window(PAGE).matching, 1);
        assert_eq!(
            state.edit_filter(&Action::FilterAccept, index_keys),
            Some(Effect::Close)
        );
        assert_eq!(state.filter.input, "p-2");
        assert_eq!(
            state.edit_filter(&Action::FilterClear, index_keys),
            Some(Effect::Close)
        );
        assert!(!state.filter.is_active());
    }

    fn handoff(seq: u64, fifo: FifoKind, items: Vec<HandedItem>) -> Handoff {
        Handoff {
            seq,
            fifo,
            is_in_initial_list: false,
            items,
        }
    }

    fn replaced(key: &str, rv: &str) -> HandedItem {
        HandedItem::Deltas {
            key: key.into(),
            deltas: vec![kscope_informers::fifo::HandedDelta {
                delta_type: kscope_informers::delta_fifo::DeltaType::Replaced,
                resource_version: Some(rv.into()),
                tombstone: false,
            }],
        }
    }

    /// A relist handed as one item against an item per object: the events only one side
    /// handed get a row of their own with the other side empty, and the next event both
    /// handed faces itself again.
    #[test]
    fn rows_align_by_event_and_leave_a_side_empty_where_only_one_handed_it() {
        let mut view = SideBySide::new(FifoKind::Atomic, FifoKind::Real).expect("two FIFOs");
        view.take(&handoff(
            0,
            FifoKind::Atomic,
            vec![HandedItem::ReplacedAll {
                resource_version: "5".into(),
                objects: 2,
            }],
        ));
        view.take(&handoff(
            0,
            FifoKind::Real,
            vec![replaced("ns/a", "5"), replaced("ns/b", "5")],
        ));
        view.take(&handoff(1, FifoKind::Atomic, vec![replaced("ns/c", "6")]));
        view.take(&handoff(1, FifoKind::Real, vec![replaced("ns/c", "6")]));
        let rows: Vec<(&str, Option<u64>, Option<u64>)> = view
            .aligned()
            .iter()
            .map(|r| {
                let seq = |side: usize| r.sides[side].as_ref().map(|c| c.handoff.seq);
                (r.event, seq(0), seq(1))
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("ns/a @5", None, Some(0)),
                ("ns/b @5", None, Some(0)),
                ("relist @5", Some(0), None),
                ("ns/c @6", Some(1), Some(1)),
            ]
        );
        let first = view.aligned()[0].sides[1].clone().expect("real's side");
        assert_eq!((first.how, first.first), ("Replaced", true));
        assert!(!view.aligned()[1].sides[1].as_ref().is_some_and(|c| c.first));
    }
}
