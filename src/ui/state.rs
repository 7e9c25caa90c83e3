//! The TUI's own state: modes, the filter being typed, scroll positions, the delta tail.
//! Rows live in the view; this holds only what the person did. Plain data, so it can be
//! built by hand in tests.

use std::collections::VecDeque;
use std::time::SystemTime;

use crate::index_views::live::SortSpec;
use crate::index_views::query::{ParseError, Query};
use crate::index_views::registry::ValueCount;
use crate::informers::tap::TapEntry;

use super::action::InputMode;
use super::command::CommandBar;

/// Delta lines kept for the tail; older ones are dropped.
pub const DELTA_CAPACITY: usize = 512;

/// Which panel the movement keys scroll.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Focus {
    #[default]
    Table,
    Deltas,
}

/// One tap entry as the delta panel shows it. Changed fields are worked out once, on arrival.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeltaLine {
    pub seq: u64,
    pub at: SystemTime,
    pub kind: &'static str,
    pub key: String,
    pub resource_version: String,
    /// Changed field paths, or the entry's message.
    pub detail: String,
}

impl DeltaLine {
    pub fn from_entry(entry: &TapEntry) -> Self {
        let detail = match (&entry.message, entry.changed_paths()) {
            (Some(message), _) => message.clone(),
            (None, Some(paths)) => paths.join(" "),
            (None, None) => String::new(),
        };
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
            detail,
        }
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
#[derive(Debug, Clone, Default)]
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
    /// Lines scrolled up from the newest delta.
    pub delta_scroll: usize,
    /// Tap entries the tail missed because it fell behind or was paused.
    pub skipped: u64,
    pub browser: IndexBrowser,
    /// The command bar (`:`).
    pub command: CommandBar,
    /// Wide columns shown.
    pub wide: bool,
}

impl UiState {
    pub fn new(panels: bool) -> Self {
        Self {
            panels,
            page: 1,
            ..Self::default()
        }
    }

    /// Adds a delta to the tail unless paused (then it only counts as skipped).
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
}
