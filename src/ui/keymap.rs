//! Terminal keys to actions: a crossterm key event becomes the configuration's [`KeySpec`],
//! looked up in the section of the mode the keyboard is talking to. The vocabulary itself
//! (actions, key specs, the [`Keymap`]) is the configuration's, in [`kscope_config::keys`].

use crossterm::event::{KeyCode as Code, KeyEvent, KeyModifiers};

use super::action::{Focus, InputMode};
use kscope_config::keys::{Action, KeyCode, KeySpec, Keymap, NamedKey, Section};

/// The spec a terminal key event matches, if it is a key kscope can bind.
pub fn spec_of(event: KeyEvent) -> Option<KeySpec> {
    let named = |key| Some(KeyCode::Named(key));
    let code = match event.code {
        Code::Char(c) => Some(KeyCode::Char(c)),
        Code::F(n) => Some(KeyCode::F(n)),
        Code::Enter => named(NamedKey::Enter),
        Code::Esc => named(NamedKey::Esc),
        Code::Tab => named(NamedKey::Tab),
        Code::BackTab => named(NamedKey::BackTab),
        Code::Backspace => named(NamedKey::Backspace),
        Code::Delete => named(NamedKey::Delete),
        Code::Insert => named(NamedKey::Insert),
        Code::Home => named(NamedKey::Home),
        Code::End => named(NamedKey::End),
        Code::PageUp => named(NamedKey::PageUp),
        Code::PageDown => named(NamedKey::PageDown),
        Code::Up => named(NamedKey::Up),
        Code::Down => named(NamedKey::Down),
        Code::Left => named(NamedKey::Left),
        Code::Right => named(NamedKey::Right),
        _ => None,
    }?;
    let has = |m| event.modifiers.contains(m);
    Some(KeySpec::pressed(
        code,
        has(KeyModifiers::CONTROL),
        has(KeyModifiers::ALT),
        has(KeyModifiers::SHIFT),
    ))
}

/// The section that maps keys in `mode`.
pub fn section_of(mode: InputMode) -> Section {
    match mode {
        InputMode::Normal => Section::Normal,
        InputMode::Filter | InputMode::DeltaFilter | InputMode::LogSearch => Section::Filter,
        InputMode::Help => Section::Help,
        // The context picker lists like the index browser and takes its keys.
        // So do the ownership tree and the hot loops.
        InputMode::Indexes
        | InputMode::Contexts
        | InputMode::Tree
        | InputMode::Hot
        | InputMode::Timeline => Section::Indexes,
        InputMode::Detail => Section::Detail,
        InputMode::Command => Section::Command,
        InputMode::Logs | InputMode::Metrics => Section::Logs,
        // The port-forward dialog is a confirm dialog with a port to choose, the container
        // picker one with a container to choose.
        InputMode::Confirm | InputMode::PortForward | InputMode::Containers => Section::Confirm,
        InputMode::Forwards => Section::Forwards,
    }
}

/// The action `event` asks for in `mode` with `focus`: on the main screen with the delta
/// panel focused, its own keys come first.
pub fn map_key(keymap: &Keymap, mode: InputMode, focus: Focus, event: KeyEvent) -> Option<Action> {
    let section = section_of(mode);
    let first = (section == Section::Normal && focus == Focus::Deltas).then_some(Section::Deltas);
    keymap.action(section, first, spec_of(event)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kscope_config::Config;

    fn spec(s: &str) -> KeySpec {
        s.parse().unwrap()
    }

    fn event(code: Code, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    #[test]
    fn events_match_specs_whatever_the_terminal_says_about_shift() {
        let from = |code, m| spec_of(event(code, m));
        assert_eq!(from(Code::Char('G'), KeyModifiers::SHIFT), Some(spec("G")));
        assert_eq!(from(Code::Char('G'), KeyModifiers::NONE), Some(spec("G")));
        assert_eq!(
            from(Code::BackTab, KeyModifiers::SHIFT),
            Some(spec("shift-tab"))
        );
        assert_eq!(
            from(Code::Char('d'), KeyModifiers::CONTROL),
            Some(spec("ctrl-d"))
        );
        assert_eq!(from(Code::PageDown, KeyModifiers::NONE), Some(spec("pgdn")));
        assert_eq!(from(Code::Up, KeyModifiers::SHIFT), Some(spec("shift-up")));
        assert_eq!(from(Code::F(3), KeyModifiers::NONE), Some(spec("f3")));
        assert_eq!(from(Code::CapsLock, KeyModifiers::NONE), None);
    }

    #[test]
    fn same_key_differs_by_mode_and_focus() {
        let keys = Config::built_in().unwrap().keys;
        let map = |mode, focus, code| map_key(&keys, mode, focus, event(code, KeyModifiers::NONE));
        let q = Code::Char('q');
        assert_eq!(map(InputMode::Normal, Focus::Table, q), Some(Action::Quit));
        assert_eq!(
            map(InputMode::Filter, Focus::Table, q),
            Some(Action::FilterChar('q'))
        );
        assert_eq!(
            map(InputMode::DeltaFilter, Focus::Table, q),
            Some(Action::FilterChar('q'))
        );
        assert_eq!(
            map(InputMode::Help, Focus::Table, q),
            Some(Action::ToggleHelp)
        );
        let ctrl_c = event(Code::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(
            map_key(&keys, InputMode::Filter, Focus::Table, ctrl_c),
            Some(Action::Quit)
        );
        assert_eq!(
            map(InputMode::Normal, Focus::Deltas, Code::Enter),
            Some(Action::OpenDeltaDiff)
        );
        assert_eq!(
            map(InputMode::Normal, Focus::Deltas, Code::Esc),
            Some(Action::ClearDeltaFilter)
        );
        assert_eq!(
            map(InputMode::Normal, Focus::Table, Code::Esc),
            Some(Action::FilterClear)
        );
        assert_eq!(
            map(InputMode::Normal, Focus::Deltas, Code::Char('j')),
            Some(Action::Down)
        );
    }

    #[test]
    fn command_and_detail_keys() {
        let keys = Config::built_in().unwrap().keys;
        let map = |mode, code| map_key(&keys, mode, Focus::Table, event(code, KeyModifiers::NONE));
        assert_eq!(
            map(InputMode::Normal, Code::Char(':')),
            Some(Action::OpenCommand)
        );
        for (code, action) in [
            (Code::Char('q'), Action::CommandChar('q')),
            (Code::Char('-'), Action::CommandChar('-')),
            (Code::Enter, Action::CommandRun),
            (Code::Esc, Action::CommandCancel),
            (Code::Tab, Action::CommandComplete),
            (Code::Backspace, Action::CommandBackspace),
        ] {
            assert_eq!(map(InputMode::Command, code), Some(action));
        }
        for (code, action) in [
            (Code::Char('y'), Action::OpenDetail),
            (Code::Char('d'), Action::Describe),
            (Code::Char('t'), Action::TogglePanels),
            (Code::Enter, Action::DrillDown),
        ] {
            assert_eq!(map(InputMode::Normal, code), Some(action));
        }
        for (code, action) in [
            (Code::Esc, Action::Back),
            (Code::Char('q'), Action::Back),
            (Code::Tab, Action::DetailTab),
            (Code::Char('m'), Action::ToggleManagedFields),
            (Code::Char('w'), Action::ToggleWrap),
            (Code::Right, Action::ScrollRight),
            (Code::Char('r'), Action::Refresh),
            (Code::Enter, Action::OpenDiff),
            (Code::Char('G'), Action::Bottom),
            (Code::Char(':'), Action::OpenCommand),
        ] {
            assert_eq!(map(InputMode::Detail, code), Some(action));
        }
    }
}
