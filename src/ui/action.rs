//! Everything a person can ask of the TUI, as one enum, and the keys that ask it. Input is
//! mapped here and nowhere else, so the keymap can be tested without a terminal.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

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
    Command,
}

/// The keys of the main screen, for the help overlay: (keys, what they do).
pub const KEY_HELP: &[(&str, &str)] = &[
    ("j/k ↓/↑", "move the selection (or scroll the delta stream)"),
    ("g / G", "first / last row"),
    ("PgUp/PgDn", "page up / down"),
    (
        ":",
        "command: pods nodes deploy rs ns [-n NS | -A] · :q quits",
    ),
    ("s", "sort by the next column"),
    ("S", "reverse the sort order"),
    ("/", "filter: app=web,node=n1 · app in (a,b) · !app · text"),
    ("w", "show / hide the wide columns"),
    (
        "Enter",
        "open the row: ns/node → pods, deploy → rs, rs → pods",
    ),
    ("Esc", "clear the filter, else back to the previous view"),
    ("d", "show / hide the delta stream and workqueue panels"),
    ("Tab", "move focus between the table and the delta stream"),
    ("space", "pause / resume the delta stream"),
    ("i", "index browser: ←/→ index, ↑/↓ value, Enter filters"),
    ("?", "this help"),
    ("q / Ctrl-C", "quit"),
];

/// The action a key asks for in `mode`, if any.
pub fn map_key(mode: InputMode, key: KeyEvent) -> Option<Action> {
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        return Some(Action::Quit);
    }
    match mode {
        InputMode::Command => match key.code {
            KeyCode::Esc => Some(Action::CommandCancel),
            KeyCode::Enter => Some(Action::CommandRun),
            KeyCode::Backspace => Some(Action::CommandBackspace),
            KeyCode::Tab => Some(Action::CommandComplete),
            KeyCode::Char(c) => Some(Action::CommandChar(c)),
            _ => None,
        },
        InputMode::Filter => match key.code {
            KeyCode::Esc => Some(Action::FilterClear),
            KeyCode::Enter => Some(Action::FilterAccept),
            KeyCode::Backspace => Some(Action::FilterBackspace),
            KeyCode::Char(c) => Some(Action::FilterChar(c)),
            _ => None,
        },
        InputMode::Help => match key.code {
            KeyCode::Esc | KeyCode::Char('?') | KeyCode::Char('q') => Some(Action::ToggleHelp),
            _ => None,
        },
        InputMode::Indexes => match key.code {
            KeyCode::Esc | KeyCode::Char('i') | KeyCode::Char('q') => Some(Action::ToggleIndexes),
            KeyCode::Char('j') | KeyCode::Down => Some(Action::Down),
            KeyCode::Char('k') | KeyCode::Up => Some(Action::Up),
            KeyCode::PageUp => Some(Action::PageUp),
            KeyCode::PageDown => Some(Action::PageDown),
            KeyCode::Char('g') | KeyCode::Home => Some(Action::Top),
            KeyCode::Char('G') | KeyCode::End => Some(Action::Bottom),
            KeyCode::Char('l') | KeyCode::Right | KeyCode::Tab => Some(Action::NextIndex),
            KeyCode::Char('h') | KeyCode::Left | KeyCode::BackTab => Some(Action::PrevIndex),
            KeyCode::Enter => Some(Action::ChooseValue),
            _ => None,
        },
        InputMode::Normal => match key.code {
            KeyCode::Char('q') => Some(Action::Quit),
            KeyCode::Char('j') | KeyCode::Down => Some(Action::Down),
            KeyCode::Char('k') | KeyCode::Up => Some(Action::Up),
            KeyCode::Char('g') | KeyCode::Home => Some(Action::Top),
            KeyCode::Char('G') | KeyCode::End => Some(Action::Bottom),
            KeyCode::PageUp => Some(Action::PageUp),
            KeyCode::PageDown => Some(Action::PageDown),
            KeyCode::Char('s') => Some(Action::SortNext),
            KeyCode::Char('S') => Some(Action::SortReverse),
            KeyCode::Char('/') => Some(Action::OpenFilter),
            KeyCode::Esc => Some(Action::FilterClear),
            KeyCode::Char('d') => Some(Action::TogglePanels),
            KeyCode::Tab => Some(Action::FocusNext),
            KeyCode::Char(' ') => Some(Action::TogglePause),
            KeyCode::Char('?') => Some(Action::ToggleHelp),
            KeyCode::Char('i') => Some(Action::ToggleIndexes),
            KeyCode::Char(':') => Some(Action::OpenCommand),
            KeyCode::Char('w') => Some(Action::ToggleWide),
            KeyCode::Enter => Some(Action::DrillDown),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn same_key_differs_by_mode() {
        assert_eq!(
            map_key(InputMode::Normal, key(KeyCode::Char('q'))),
            Some(Action::Quit)
        );
        assert_eq!(
            map_key(InputMode::Filter, key(KeyCode::Char('q'))),
            Some(Action::FilterChar('q'))
        );
        assert_eq!(
            map_key(InputMode::Help, key(KeyCode::Char('q'))),
            Some(Action::ToggleHelp)
        );
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(map_key(InputMode::Filter, ctrl_c), Some(Action::Quit));
    }
}
