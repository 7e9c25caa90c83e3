//! What one frame shows, copied out and laid out before drawing: the header's words, the
//! UI's state, the window of rows, the open detail, the clock and the colours. Every
//! component draws from it; nothing in it can change while a frame is drawn.

use std::time::SystemTime;

use kscope_index_views::live::{ViewColumn, Window};

use super::detail::Detail;
use super::layout::Layout;
use super::state::UiState;
pub use super::theme::Theme;

/// What the header says about the cluster and the informer.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub context: String,
    pub server: String,
    pub resource: String,
    pub scope: String,
    /// `listing 3 pages, 1500 objects`, `watching at rv 5`, `backing off`.
    pub sync: String,
    /// `sync` said briefly, for a header too narrow for it: a fleet's clusters counted,
    /// the ones not watching still named.
    pub sync_short: Option<String>,
    /// A first list has reached the store: an empty table means no objects.
    pub listed: bool,
    /// Why the informer's last list or watch failed (forbidden, unreachable...), until a
    /// list succeeds.
    pub error: Option<String>,
    /// Watch events per second over the last second.
    pub events_per_second: f64,
    /// Since when the rows are not current: the informer is not watching (its first list
    /// under way, backing off after an error, or relisting), so changes since then are
    /// missing. `None` while watching.
    pub stale_since: Option<SystemTime>,
    /// Items of the last list that did not decode: the table lacks them.
    pub undecodable: u64,
    /// The filter the rows match (not what is being typed, which may not parse yet).
    pub filter: String,
    /// The context's favourite namespaces, most recently used first (keys 1–9).
    pub favourites: Vec<String>,
    /// Why the usage columns (CPU, MEM...) say `n/a`, while they do.
    pub usage: Option<String>,
    /// Writes are on for this context: the header says so in a warning colour.
    pub readwrite: bool,
}

impl Header {
    /// A new informer's table: nothing listed, nothing known to be wrong yet.
    pub fn starting(&mut self) {
        self.sync = "starting".into();
        self.sync_short = None;
        self.listed = false;
        self.error = None;
        self.stale_since = None;
        self.undecodable = 0;
        self.usage = None;
    }
}

/// Everything one frame shows, copied out and laid out before drawing.
pub struct Screen<'a> {
    pub state: &'a UiState,
    pub header: &'a Header,
    /// Where each part goes, computed for the frame's size before drawing.
    pub layout: &'a Layout,
    /// The view's columns in cell order, wide, index and NAMESPACE columns included.
    pub columns: &'a [ViewColumn],
    /// Namespaced kind in all namespaces: a NAMESPACE column from the keys.
    pub with_namespace: bool,
    pub window: &'a Window,
    /// The open detail, drawn over everything but the header.
    pub detail: Option<&'a Detail>,
    pub now: SystemTime,
    pub color: bool,
}

impl Screen<'_> {
    /// The frame's colours (none under NO_COLOR).
    pub fn theme(&self) -> Theme {
        Theme { color: self.color }
    }
}
