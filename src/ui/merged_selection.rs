//! The selection of a table merged from several members (`:all`'s kinds, a fleet's
//! clusters), whose rows arrive member by member and are rebuilt off the UI thread.

use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;

use kscope_index_views::mixed::MergedRows;
use kscope_informers::keys::Key;

use super::action::Action;
use super::layout::Scroll;
use super::table::moved_to;

#[derive(Default)]
pub(crate) struct MergedSelection {
    /// The selected row's id, unique across the members (`deployment.apps/default/web`,
    /// `prod-eu/default/web`).
    id: Mutex<Option<Key>>,
    /// Whether the user has chosen the selection. Until they do it stays on the top row, so
    /// a member whose rows arrive later and sort above the first's does not push the view
    /// down to follow whichever row happened to come first.
    chosen: AtomicBool,
}

impl MergedSelection {
    pub(crate) fn id(&self) -> Option<Key> {
        self.id.lock().clone()
    }

    /// The member whose row is selected; the first without a selection.
    pub(crate) fn member(&self, rows: &impl MergedRows) -> usize {
        self.id()
            .and_then(|id| rows.member_of(&id))
            .map_or(0, |(at, _)| at)
    }

    /// Settles the selection on `rows` as a frame shows `height` of them: the row offset
    /// the view scrolls to, and the selected id.
    pub(crate) fn follow(
        &self,
        rows: &impl MergedRows,
        scroll: &mut Scroll,
        height: usize,
    ) -> (usize, Option<Key>) {
        let mut id = self.id.lock();
        let position = id.as_deref().and_then(|id| rows.position(id));
        if (position.is_none() || !self.chosen.load(Ordering::Relaxed)) && !rows.is_empty() {
            *id = rows.id_at(scroll.offset());
        }
        let position = id.as_deref().and_then(|id| rows.position(id));
        (scroll.follow(position, height, rows.len()), id.clone())
    }

    /// Moves the selection by `action` (from `offset` when nothing is selected).
    pub(crate) fn step(&self, rows: &impl MergedRows, offset: usize, action: &Action, page: usize) {
        let mut id = self.id.lock();
        let position = id
            .as_deref()
            .and_then(|id| rows.position(id))
            .unwrap_or(offset);
        if let Some(next) = rows.id_at(moved_to(position, action, page, rows.len())) {
            *id = Some(next);
            self.chosen.store(true, Ordering::Relaxed);
        }
    }

    /// Selects the row `key` if `rows` hold it.
    pub(crate) fn select(&self, rows: &impl MergedRows, key: &Key) -> bool {
        let found = rows.position(key).is_some();
        if found {
            *self.id.lock() = Some(key.clone());
            self.chosen.store(true, Ordering::Relaxed);
        }
        found
    }
}
