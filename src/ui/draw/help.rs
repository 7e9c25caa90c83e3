//! The help overlay: the keys bound on the main screen and with the delta panel focused,
//! then one line each for the filter bar and index browser keys that differ from the main
//! screen's, by action name (the names the `keys:` configuration uses). All from the keymap.

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

use super::Theme;
use crate::config::keys::{ACTIONS, Keymap, Section};
use crate::ui::action::Action;

/// Draws the overlay from line `scroll` on, when it is taller than `area`.
pub fn draw(frame: &mut Frame, area: Rect, keymap: &Keymap, scroll: usize, theme: Theme) {
    let key_line = |(keys, what): (String, &'static str)| {
        Line::from(vec![
            Span::styled(format!("{keys:<14}"), theme.title()),
            Span::raw(what),
        ])
    };
    let mut lines: Vec<Line> = keymap
        .help(Section::Normal)
        .into_iter()
        .map(key_line)
        .collect();
    let deltas = keymap.help(Section::Deltas);
    if !deltas.is_empty() {
        lines.push(Line::styled("delta panel focused:", theme.dim()));
        lines.extend(deltas.into_iter().map(key_line));
    }
    for (section, title) in [
        (Section::Filter, "filter bar"),
        (Section::Command, "command bar"),
        (Section::Indexes, "index browser"),
    ] {
        let own: Vec<String> = ACTIONS
            .iter()
            .filter_map(|(name, action, _)| {
                let keys = keymap.keys(section, action);
                let first = keys.first()?;
                (keys != keymap.keys(Section::Normal, action)).then(|| format!("{first} {name}"))
            })
            .collect();
        if !own.is_empty() {
            lines.push(Line::from(vec![
                Span::styled(format!("{title}: "), theme.dim()),
                Span::raw(own.join(" · ")),
            ]));
        }
    }
    let room = usize::from(area.height.saturating_sub(2)).max(1);
    let total = lines.len();
    let mut title = String::from(" keys (Esc closes) ");
    if total > room {
        let first = scroll.min(total - room);
        lines = lines.into_iter().skip(first).take(room).collect();
        let scroll_keys = [Action::Down, Action::Up]
            .iter()
            .filter_map(|a| {
                keymap
                    .keys(Section::Help, a)
                    .first()
                    .map(ToString::to_string)
            })
            .collect::<Vec<_>>()
            .join("/");
        title = format!(
            " keys {}-{} of {total} ({scroll_keys} scroll, Esc closes) ",
            first + 1,
            first + room
        );
    }
    let height = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
    let [row] = Layout::vertical([Constraint::Length(height)])
        .flex(Flex::Center)
        .areas(area);
    let [popup] = Layout::horizontal([Constraint::Length(area.width.saturating_sub(4).min(96))])
        .flex(Flex::Center)
        .areas(row);
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(title)),
        popup,
    );
}
