//! Everything a person can ask of the TUI, as one enum, and the one place input becomes an
//! action: [`map_key`], through the configured [`super::keymap::Keymap`], so the keys can be
//! tested without a terminal.

use crossterm::event::KeyEvent;

use super::state::UiState;

/// One user intent. The event loop maps keys to these; the state applies them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Quit,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    /// Sort by the next column.
    SortNext,
    /// Reverse the sort order.
    SortReverse,
    /// Open the filter bar.
    OpenFilter,
    /// A character typed into the filter bar.
    FilterChar(char),
    FilterBackspace,
    /// Keep the filter and go back to the table.
    FilterAccept,
    /// Clear the filter and go back to the table.
    FilterClear,
    /// Show or hide the delta stream and workqueue panels.
    TogglePanels,
    /// Move the keyboard focus between the table and the delta stream.
    FocusNext,
    /// Pause or resume the delta stream tail.
    TogglePause,
    ToggleHelp,
    /// Open or close the index browser.
    ToggleIndexes,
    /// Browse the next or previous index.
    NextIndex,
    PrevIndex,
    /// Filter the table by the browsed index value.
    ChooseValue,
    /// Type a filter for the delta panel.
    OpenDeltaFilter,
    ClearDeltaFilter,
    /// Open the full diff of the delta panel's selected entry.
    OpenDeltaDiff,
    /// Open the selected object's detail (YAML and history).
    OpenDetail,
    /// Switch between the detail's YAML and History tabs.
    DetailTab,
    /// Show or hide `metadata.managedFields` in the detail.
    ToggleManagedFields,
    /// Fetch the detail's object again.
    Refresh,
    /// Open the full diff of the selected history entry.
    OpenDiff,
    /// Leave the detail's current screen: diff → history → table.
    Back,
    /// Open the command bar (`:`).
    OpenCommand,
    /// A character typed into the command bar.
    CommandChar(char),
    CommandBackspace,
    /// Complete the command name being typed.
    CommandComplete,
    /// Run the typed command.
    CommandRun,
    /// Close the command bar without running anything.
    CommandCancel,
    /// Show or hide the wide columns (`kubectl get -o wide`'s).
    ToggleWide,
    /// Open what the selected row contains: a namespace's or node's pods, a deployment's
    /// replicasets, a replicaset's pods.
    DrillDown,
}

/// What the keyboard is talking to right now: the same key means different things in each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InputMode {
    #[default]
    Normal,
    Filter,
    Help,
    Indexes,
    /// Typing the delta panel's filter.
    DeltaFilter,
    /// The detail of one object over the table: YAML, history, a diff.
    Detail,
    /// Typing a command (`:`).
    Command,
}

/// The action a key asks for, from the keymap the state carries (see [`super::keymap`]).
pub fn map_key(state: &UiState, key: KeyEvent) -> Option<Action> {
    state.keymap.action(state.mode, state.focus, key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::state::Focus;
    use crossterm::event::{KeyCode, KeyModifiers};

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn same_key_differs_by_mode_and_focus() {
        let mut state = UiState::new(true);
        let q = key(KeyCode::Char('q'));
        assert_eq!(map_key(&state, q), Some(Action::Quit));
        state.mode = InputMode::Filter;
        assert_eq!(map_key(&state, q), Some(Action::FilterChar('q')));
        state.mode = InputMode::DeltaFilter;
        assert_eq!(map_key(&state, q), Some(Action::FilterChar('q')));
        state.mode = InputMode::Help;
        assert_eq!(map_key(&state, q), Some(Action::ToggleHelp));
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(map_key(&state, ctrl_c), Some(Action::Quit));
        state.mode = InputMode::Normal;
        let enter = key(KeyCode::Enter);
        state.focus = Focus::Deltas;
        assert_eq!(map_key(&state, enter), Some(Action::OpenDeltaDiff));
        assert_eq!(map_key(&state, key(KeyCode::Char('j'))), Some(Action::Down));
    }

    #[test]
    fn command_keys_type_unless_bound() {
        let mut state = UiState::new(true);
        assert_eq!(
            map_key(&state, key(KeyCode::Char(':'))),
            Some(Action::OpenCommand)
        );
        assert_eq!(
            map_key(&state, key(KeyCode::Char('w'))),
            Some(Action::ToggleWide)
        );
        state.mode = InputMode::Command;
        for (code, action) in [
            (KeyCode::Char('q'), Action::CommandChar('q')),
            (KeyCode::Char('-'), Action::CommandChar('-')),
            (KeyCode::Enter, Action::CommandRun),
            (KeyCode::Esc, Action::CommandCancel),
            (KeyCode::Tab, Action::CommandComplete),
            (KeyCode::Backspace, Action::CommandBackspace),
        ] {
            assert_eq!(map_key(&state, key(code)), Some(action));
        }
    }

    #[test]
    fn detail_keys() {
        let mut state = UiState::new(true);
        for (code, action) in [
            (KeyCode::Char('y'), Action::OpenDetail),
            (KeyCode::Enter, Action::DrillDown),
        ] {
            assert_eq!(map_key(&state, key(code)), Some(action));
        }
        state.mode = InputMode::Detail;
        for (code, action) in [
            (KeyCode::Esc, Action::Back),
            (KeyCode::Char('q'), Action::Back),
            (KeyCode::Tab, Action::DetailTab),
            (KeyCode::Char('m'), Action::ToggleManagedFields),
            (KeyCode::Char('r'), Action::Refresh),
            (KeyCode::Enter, Action::OpenDiff),
            (KeyCode::Char('G'), Action::Bottom),
        ] {
            assert_eq!(map_key(&state, key(code)), Some(action));
        }
    }
}
