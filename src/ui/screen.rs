//! What one frame shows, copied out and laid out before drawing: the header's words, the
//! UI's state, the window of rows, the open detail, the clock and the colours. Every
//! component draws from it; nothing in it can change while a frame is drawn.

use std::time::SystemTime;

use ratatui::style::{Color, Modifier, Style};

use kscope_index_views::live::{ViewColumn, Window};

use super::detail::Detail;
use super::layout::Layout;
use super::state::UiState;

/// What the header says about the cluster and the informer.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub context: String,
    pub server: String,
    pub resource: String,
    pub scope: String,
    /// `listing 3 pages, 1500 objects`, `watching at rv 5`, `backing off`.
    pub sync: String,
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

/// Colours, or none at all when NO_COLOR is set (reverse video still marks the selection).
#[derive(Debug, Clone, Copy)]
pub struct Theme {
    pub(crate) color: bool,
}

impl Theme {
    pub(crate) fn fg(self, color: Color) -> Style {
        if self.color {
            Style::default().fg(color)
        } else {
            Style::default()
        }
    }

    pub(crate) fn title(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    pub(crate) fn dim(self) -> Style {
        self.fg(Color::DarkGray)
    }

    /// Pipeline events in the delta panel: relists, watch starts, bookmarks.
    pub(crate) fn warn(self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }

    pub(crate) fn spark(self) -> Style {
        self.fg(Color::Green)
    }

    pub(crate) fn error(self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }

    /// A row's colour by its health; standard ANSI colours, which dark and light terminal
    /// themes both map to readable shades.
    pub(crate) fn health(self, health: kscope_index_views::columns::RowHealth) -> Style {
        use kscope_index_views::columns::RowHealth;
        match health {
            RowHealth::Normal => Style::default(),
            RowHealth::Failing => self.fg(Color::Red),
            RowHealth::Pending => self.fg(Color::Yellow),
            RowHealth::Terminating => self.fg(Color::Magenta),
            RowHealth::Completed => self.dim(),
            // Bold as well, so that a Warning stands out under NO_COLOR too.
            RowHealth::Warning => self.fg(Color::Yellow).add_modifier(Modifier::BOLD),
        }
    }

    /// Rows that are not current: dimmed, with colour or without.
    pub(crate) fn stale(self) -> Style {
        self.dim().add_modifier(Modifier::DIM)
    }

    /// A row marked for a write.
    pub(crate) fn marked(self) -> Style {
        self.fg(Color::Cyan)
            .add_modifier(Modifier::BOLD | Modifier::ITALIC)
    }

    pub(crate) fn selected(self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }
}
