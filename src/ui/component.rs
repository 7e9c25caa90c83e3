//! One trait for every mode of the TUI: a component takes the actions typed in its mode and
//! returns what the app must do ([`Effect`]), and draws itself from `&self` into the area the
//! frame's layout gives it. The app owns the loop and the routing; a new mode is a new
//! component, its state in [`crate::state::UiState`] and a line in
//! [`crate::state::UiState::component_mut`].

use ratatui::Frame;
use ratatui::layout::Rect;

use super::action::{Action, InputMode};
use super::draw::Screen;
use super::effect::Effect;
use super::layout::Layout;
use super::table::Table;

/// What a component may read of the app while it handles an action: nothing it could
/// change.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    /// The mode the action was typed in: a component serving two (the log view and its
    /// search bar, the delta panel and its filter line) tells them apart by it.
    pub mode: InputMode,
    /// The table on screen: its rows, indexes and columns.
    pub table: &'a dyn Table,
    /// The last frame's layout: each component's page size is its area's.
    pub layout: &'a Layout,
    /// Whether the table's rows show a NAMESPACE column.
    pub with_namespace: bool,
}

impl Context<'_> {
    /// The table's page: what PgUp/PgDn move by in the table and in overlays drawn over it.
    pub fn table_page(&self) -> usize {
        self.layout.table_rows().max(1)
    }
}

/// A mode's state, keys and drawing.
pub trait Component {
    /// One action typed in this component's mode: `None` when it was handled here, else
    /// what the app must do ([`Effect::Pass`]: the main screen's action, not this one's).
    fn handle(&mut self, action: &Action, ctx: &Context<'_>) -> Option<Effect>;

    /// Draws the component into `area` of `frame`, from its own state and the frame's
    /// immutable [`Screen`]. Nothing here locks, awaits or reads a clock.
    fn draw(&self, frame: &mut Frame, area: Rect, screen: &Screen<'_>);
}
