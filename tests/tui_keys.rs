//! The built-in keymap: every key of the main screen, the filter bar and the help overlay
//! maps to the action its help line promises.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use kscope::ui::action::{Action, InputMode};
use kscope::ui::state::UiState;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// What `key` asks for in `mode`, with the table focused and the built-in keys.
fn map_key(mode: InputMode, key: KeyEvent) -> Option<Action> {
    let mut state = UiState::new(true);
    state.mode = mode;
    kscope::ui::action::map_key(&state, key)
}

#[test]
fn main_screen_keys() {
    let normal = |code| map_key(InputMode::Normal, key(code));
    for (code, action) in [
        (KeyCode::Char('j'), Action::Down),
        (KeyCode::Down, Action::Down),
        (KeyCode::Char('k'), Action::Up),
        (KeyCode::Up, Action::Up),
        (KeyCode::Char('g'), Action::Top),
        (KeyCode::Char('G'), Action::Bottom),
        (KeyCode::PageUp, Action::PageUp),
        (KeyCode::PageDown, Action::PageDown),
        (KeyCode::Char('s'), Action::SortNext),
        (KeyCode::Char('S'), Action::SortReverse),
        (KeyCode::Char('/'), Action::OpenFilter),
        (KeyCode::Esc, Action::FilterClear),
        (KeyCode::Char('d'), Action::TogglePanels),
        (KeyCode::Tab, Action::FocusNext),
        (KeyCode::Char(' '), Action::TogglePause),
        (KeyCode::Char('?'), Action::ToggleHelp),
        (KeyCode::Char('q'), Action::Quit),
        (KeyCode::Char('i'), Action::ToggleIndexes),
    ] {
        assert_eq!(normal(code), Some(action), "{code:?}");
    }
    assert_eq!(normal(KeyCode::Char('x')), None);
}

#[test]
fn filter_bar_keys_type_text() {
    let filter = |code| map_key(InputMode::Filter, key(code));
    assert_eq!(filter(KeyCode::Char('j')), Some(Action::FilterChar('j')));
    assert_eq!(filter(KeyCode::Char('/')), Some(Action::FilterChar('/')));
    assert_eq!(filter(KeyCode::Backspace), Some(Action::FilterBackspace));
    assert_eq!(filter(KeyCode::Enter), Some(Action::FilterAccept));
    assert_eq!(filter(KeyCode::Esc), Some(Action::FilterClear));
}

#[test]
fn help_closes_and_ctrl_c_always_quits() {
    assert_eq!(
        map_key(InputMode::Help, key(KeyCode::Esc)),
        Some(Action::ToggleHelp)
    );
    assert_eq!(map_key(InputMode::Help, key(KeyCode::Char('j'))), None);
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    for mode in [InputMode::Normal, InputMode::Filter, InputMode::Help] {
        assert_eq!(map_key(mode, ctrl_c), Some(Action::Quit));
    }
}

#[test]
fn index_browser_keys() {
    let browser = |code| map_key(InputMode::Indexes, key(code));
    assert_eq!(browser(KeyCode::Char('j')), Some(Action::Down));
    assert_eq!(browser(KeyCode::Right), Some(Action::NextIndex));
    assert_eq!(browser(KeyCode::Char('h')), Some(Action::PrevIndex));
    assert_eq!(browser(KeyCode::Enter), Some(Action::ChooseValue));
    assert_eq!(browser(KeyCode::Esc), Some(Action::ToggleIndexes));
}
