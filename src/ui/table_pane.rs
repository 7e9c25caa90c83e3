//! The table component: how the rows on screen are ordered, scrolled and widened, and the
//! keys that change that. The rows themselves stay in the view behind [`Table`]; this holds
//! only what the person chose.

use std::collections::BTreeSet;

use kscope_index_views::live::{SortSpec, ViewColumn, Window};
use kscope_informers::keys::Key;
use kscope_resources::Timestamp;

use super::action::Action;
use super::effect::Effect;
use super::layout::Scroll;
use super::table::Table;

/// The columns on screen, in screen order, as positions in `columns`: CLUSTER first across
/// clusters, then NAMESPACE when the view spans namespaces, then the narrow ones as `kubectl
/// get` shows them without `-o wide`, or all of them in wide mode; never an index column
/// with no value anywhere. Sorting cycles through these.
pub fn shown(columns: &[ViewColumn], wide: bool, with_namespace: bool) -> Vec<usize> {
    let cluster = columns.iter().position(|c| c.cluster);
    let namespace = columns
        .iter()
        .position(|c| c.namespace)
        .filter(|_| with_namespace);
    let listed = |c: &ViewColumn| !c.cluster && !c.namespace && !c.empty && (wide || !c.wide);
    cluster
        .into_iter()
        .chain(namespace)
        .chain((0..columns.len()).filter(|&i| listed(&columns[i])))
        .collect()
}

/// The main table's own state. Plain data, so tests can set it up by hand; [`TablePane::handle`]
/// changes the sort through the table too.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TablePane {
    /// The order asked for (the rows show it once their re-sort is in).
    pub sort: SortSpec,
    /// Whether kubectl's wide columns are shown.
    pub wide: bool,
    pub scroll: Scroll,
    /// The row to select once it shows up in a view gone back to; any movement forgets it.
    reselect: Option<Key>,
    /// The rows marked (`m`): the write keys act on these when there are any.
    pub marks: BTreeSet<Key>,
}

impl TablePane {
    /// Sorts `table` by `sort`.
    pub fn set_sort(&mut self, table: &dyn Table, sort: SortSpec) {
        self.sort = sort;
        table.set_sort(sort);
    }

    /// A key for the table, `page` rows to a page: movement moves the selection, the sort
    /// keys re-sort by the next shown column, by a column named, or reverse the order, the
    /// wide key toggles the wide columns. Anything else is the main screen's (a column this
    /// table lacks too).
    pub fn handle_key(
        &mut self,
        action: &Action,
        table: &dyn Table,
        page: usize,
        with_namespace: bool,
    ) -> Option<Effect> {
        match action {
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom => {
                self.reselect = None;
                table.move_selection(self.scroll.offset(), action, page);
            }
            Action::SortNext => {
                let shown = shown(&table.columns(), self.wide, with_namespace);
                let next = shown
                    .iter()
                    .position(|&i| i == self.sort.column)
                    .and_then(|at| shown.get((at + 1) % shown.len()))
                    .copied()
                    .unwrap_or_default();
                let sort = SortSpec {
                    column: next,
                    descending: false,
                };
                self.set_sort(table, sort);
            }
            Action::SortReverse => {
                let sort = SortSpec {
                    descending: !self.sort.descending,
                    ..self.sort
                };
                self.set_sort(table, sort);
            }
            Action::SortBy(title) => {
                let columns = table.columns();
                // A wide column (a pod's IP, NODE) is shown to be sorted by, as k9s shows it.
                let Some(column) = columns
                    .iter()
                    .position(|c| c.name == *title && !c.namespace && !c.empty)
                else {
                    // The screen says that this table has no such column.
                    return Some(Effect::Pass);
                };
                if columns[column].wide {
                    self.wide = true;
                }
                let descending = self.sort.column == column && !self.sort.descending;
                self.set_sort(table, SortSpec { column, descending });
            }
            Action::Mark => {
                if let Some(key) = table.selected()
                    && !self.marks.remove(&key)
                {
                    self.marks.insert(key);
                }
                // As k9s: marking moves on, so a run of rows is marked key by key.
                table.move_selection(self.scroll.offset(), &Action::Down, page);
            }
            Action::ToggleWide => {
                self.wide = !self.wide;
                self.keep_sort_shown(table, with_namespace);
            }
            _ => return Some(Effect::Pass),
        }
        None
    }

    /// Another table is on screen: its own order (a table kept running keeps it), from the
    /// top, selecting `reselect` once that row shows up.
    pub fn switched(&mut self, table: &dyn Table, with_namespace: bool, reselect: Option<Key>) {
        self.sort = table.sort();
        self.scroll.reset();
        self.reselect = reselect;
        self.marks.clear();
        self.keep_sort_shown(table, with_namespace);
    }

    /// Selects `key` once it shows up (a view gone back to).
    pub fn reselect(&mut self, key: Option<Key>) {
        self.reselect = key;
    }

    /// Sorts by the first column again when the sort column is not shown (a wide column
    /// out of wide mode, NAMESPACE in one namespace).
    fn keep_sort_shown(&mut self, table: &dyn Table, with_namespace: bool) {
        if !shown(&table.columns(), self.wide, with_namespace).contains(&self.sort.column) {
            self.set_sort(table, SortSpec::default());
        }
    }

    /// Copies out the `height` rows of `table` on screen, selecting the row to reselect once
    /// it is there, or the first visible one when nothing is selected.
    pub fn window(&mut self, table: &dyn Table, height: usize, now: Timestamp) -> Window {
        if let Some(key) = self.reselect.as_ref()
            && table.select_key(key)
        {
            self.reselect = None;
        }
        table.capture(&mut self.scroll, height, now)
    }
}
