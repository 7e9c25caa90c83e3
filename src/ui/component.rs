//! One trait for every mode of the TUI: a component takes the actions typed in its mode and
//! returns what the app must do ([`Effect`]), and draws itself from `&self` into the area the
//! frame's layout gives it. The app owns the loop and the routing; a new mode is a new
//! component, its state in [`crate::state::UiState`] and a line in
//! [`crate::state::UiState::component_mut`].

use ratatui::Frame;
use ratatui::layout::Rect;

use super::action::{Action, InputMode};
use super::effect::Effect;
use super::layout::Layout;
use super::screen::Screen;
use super::state::UiState;
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

/// The component that takes the keys typed in `mode`; `None` for the main screen's (the
/// table's and the app's own) and the detail's (the app holds it, with its fetches), and
/// for a log, tree, hot-loop or timeline mode with no view.
pub fn component_mut(state: &mut UiState, mode: InputMode) -> Option<&mut dyn Component> {
    match mode {
        InputMode::Filter => Some(&mut state.filter),
        InputMode::Help => Some(&mut state.help),
        InputMode::Indexes => Some(&mut state.browser),
        InputMode::DeltaFilter => Some(&mut state.deltas),
        InputMode::Command => Some(&mut state.command),
        InputMode::Contexts => Some(&mut state.contexts),
        InputMode::Confirm => Some(&mut state.confirm),
        InputMode::Tree => state.tree.as_mut().map(|view| view as &mut dyn Component),
        InputMode::Hot => state.hot.as_mut().map(|view| view as &mut dyn Component),
        InputMode::PortForward => Some(&mut state.port_forward),
        InputMode::Forwards => Some(&mut state.forwards),
        InputMode::Containers => state
            .containers
            .as_mut()
            .map(|picker| picker as &mut dyn Component),
        InputMode::Timeline => state
            .timeline
            .as_mut()
            .map(|view| view as &mut dyn Component),
        InputMode::Logs | InputMode::LogSearch => {
            state.logs.as_mut().map(|view| view as &mut dyn Component)
        }
        InputMode::Metrics => state
            .metrics
            .as_mut()
            .map(|panel| panel as &mut dyn Component),
        InputMode::Normal | InputMode::Detail => None,
    }
}

/// The overlay drawn over the table in the mode in force, if the mode has one.
pub fn overlay(state: &UiState) -> Option<&dyn Component> {
    match state.mode {
        InputMode::Help => Some(&state.help),
        InputMode::Indexes => Some(&state.browser),
        InputMode::Contexts => Some(&state.contexts),
        InputMode::Confirm => Some(&state.confirm),
        InputMode::Tree => state.tree.as_ref().map(|view| view as &dyn Component),
        InputMode::Hot => state.hot.as_ref().map(|view| view as &dyn Component),
        InputMode::PortForward => Some(&state.port_forward),
        InputMode::Forwards => Some(&state.forwards),
        InputMode::Containers => state
            .containers
            .as_ref()
            .map(|picker| picker as &dyn Component),
        InputMode::Timeline => state.timeline.as_ref().map(|view| view as &dyn Component),
        InputMode::Normal
        | InputMode::Filter
        | InputMode::DeltaFilter
        | InputMode::Detail
        | InputMode::Command
        | InputMode::Logs
        | InputMode::LogSearch
        | InputMode::Metrics => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each typing mode's keys go to its own component, overlays are drawn for theirs only,
    /// and a log mode with no log view has no component (the app closes it).
    #[test]
    fn each_mode_routes_to_its_component() {
        let mut state = UiState::new(true);
        for mode in [
            InputMode::Filter,
            InputMode::Help,
            InputMode::Indexes,
            InputMode::DeltaFilter,
            InputMode::Command,
            InputMode::Contexts,
            InputMode::Confirm,
            InputMode::PortForward,
            InputMode::Forwards,
        ] {
            assert!(component_mut(&mut state, mode).is_some(), "{mode:?}");
        }
        for mode in [
            InputMode::Normal,
            InputMode::Detail,
            InputMode::Logs,
            InputMode::LogSearch,
            InputMode::Metrics,
        ] {
            assert!(component_mut(&mut state, mode).is_none(), "{mode:?}");
        }
        assert!(overlay(&state).is_none());
        for mode in [
            InputMode::Help,
            InputMode::Indexes,
            InputMode::Contexts,
            InputMode::Confirm,
            InputMode::PortForward,
            InputMode::Forwards,
        ] {
            state.mode = mode;
            assert!(overlay(&state).is_some(), "{mode:?}");
        }
        state.mode = InputMode::Filter;
        assert!(overlay(&state).is_none());
    }
}
