//! The help overlay: every key bound on the main screen, with the delta panel focused, and
//! in the filter bar, command bar and index browser where they differ from the main
//! screen's, each with what it does in words; then every command with its other names. All
//! from the keymap and the command table, wrapped to the overlay's width.

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

use crate::action::Action;
use crate::command;
use crate::component::{Component, Context};
use crate::effect::Effect;
use crate::screen::{Screen, Theme};
use crate::state::Help;
use kscope_config::keys::{ACTIONS, Keymap, Section};

/// The keys every input line shares, listed once.
const LINE_EDITING: &[Action] = &[
    Action::FilterBackspace,
    Action::CommandBackspace,
    Action::LineLeft,
    Action::LineRight,
    Action::LineStart,
    Action::LineEnd,
    Action::LineDelete,
    Action::LineDeleteWord,
    Action::LineDeleteToStart,
    Action::LineHistoryPrevious,
    Action::LineHistoryNext,
];

/// Width of the keys column.
const KEYS: usize = 14;
/// The overlay's widest.
const MAX_WIDTH: u16 = 120;

/// Words of `text` in lines of at most `width` characters (a longer word gets a line of
/// its own, cut by the frame).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let needed = if line.is_empty() { 0 } else { 1 } + word.chars().count();
        if !line.is_empty() && line.chars().count() + needed > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
}

/// The overlay's lines for a frame `width` wide inside its border.
fn lines(
    keymap: &Keymap,
    commands: &[String],
    forbidden: &[(Action, String)],
    width: usize,
    theme: Theme,
) -> Vec<Line<'static>> {
    let text_width = width.saturating_sub(KEYS).max(10);
    let mut lines: Vec<Line> = Vec::new();
    let entry = |lines: &mut Vec<Line>, keys: String, what: &str, dim: bool| {
        for (i, part) in wrap(what, text_width).into_iter().enumerate() {
            let keys = if i == 0 { keys.clone() } else { String::new() };
            // Keys as wide as the column still get a space before their words.
            let keys = format!("{keys:<w$} ", w = KEYS - 1);
            lines.push(if dim {
                Line::styled(format!("{keys}{part}"), theme.dim())
            } else {
                Line::from(vec![Span::styled(keys, theme.title()), Span::raw(part)])
            });
        }
    };
    let listed = commands.join(" · ");
    let commands = format!(
        "command line: {} [-n NS | -A]",
        commands
            .iter()
            .filter(|c| !c.starts_with("quit"))
            .map(|c| c.split(' ').next().unwrap_or_default())
            .collect::<Vec<_>>()
            .join(" ")
    );
    // As in k9s: on the main screen a key is a command, never the start of a search.
    let rule = "On the main screen each key is a command: type text after / (filter) or : \
                (command); a letter that is no key says so.";
    for part in wrap(rule, width.max(10)) {
        lines.push(Line::styled(part, theme.dim()));
    }
    let sort_by = sort_by_entry(keymap);
    for (section, title) in [
        (Section::Normal, None),
        (Section::Deltas, Some("with the delta panel focused")),
        (Section::Filter, Some("in the filter bar")),
        (Section::Command, Some("in the command bar")),
        (
            Section::Indexes,
            Some("in the index browser and the :ctx picker"),
        ),
        (
            Section::Logs,
            Some("in the log view (l on a pod or workload)"),
        ),
    ] {
        let own: Vec<(String, String, bool)> = ACTIONS
            .iter()
            .filter(|(_, action, _)| !LINE_EDITING.contains(action))
            // Favourites 2–9 are said with 1.
            .filter(|(_, action, _)| !matches!(action, Action::FavouriteNamespace(2..)))
            .filter_map(|(_, action, what)| {
                // The per-column sort keys are one entry, where the first of them is.
                if let Action::SortBy(_) = action {
                    let first = ACTIONS
                        .iter()
                        .find_map(|(_, a, _)| matches!(a, Action::SortBy(_)).then_some(a));
                    return sort_by
                        .as_ref()
                        .filter(|_| section == Section::Normal && first == Some(action))
                        .map(|(keys, what)| (keys.clone(), what.clone(), false));
                }
                let keys = keymap.keys(section, action);
                let inherited = matches!(
                    section,
                    Section::Filter | Section::Command | Section::Indexes | Section::Logs
                ) && keys == keymap.keys(Section::Normal, action);
                if keys.is_empty() || inherited {
                    return None;
                }
                let keys: Vec<String> = keys.iter().map(ToString::to_string).collect();
                let what = if *action == Action::OpenCommand {
                    commands.as_str()
                } else {
                    what
                };
                // A write the server says this user may not do: dimmed, with its reason.
                let denied = forbidden
                    .iter()
                    .find(|(a, _)| a == action && section == Section::Normal);
                Some(match denied {
                    Some((_, why)) => {
                        (keys.join(" "), format!("{what} (not allowed: {why})"), true)
                    }
                    None => (keys.join(" "), what.to_string(), false),
                })
            })
            .collect();
        if own.is_empty() {
            continue;
        }
        if let Some(title) = title {
            lines.push(Line::styled(format!("{title}:"), theme.dim()));
        }
        for (keys, what, dim) in own {
            entry(&mut lines, keys, &what, dim);
        }
    }
    // The line-editing keys, the same in every bar, as one entry.
    let editing: Vec<String> = LINE_EDITING
        .iter()
        .filter_map(|action| {
            let (_, _, what) = ACTIONS.iter().find(|(_, a, _)| a == action)?;
            let keys: Vec<String> = keymap
                .keys(Section::Filter, action)
                .iter()
                .map(ToString::to_string)
                .collect();
            (!keys.is_empty()).then(|| format!("{} {what}", keys.join("/")))
        })
        .fold(Vec::new(), |mut kept, entry| {
            // Backspace is one action per bar, with the same key and words.
            if !kept.contains(&entry) {
                kept.push(entry);
            }
            kept
        });
    if !editing.is_empty() {
        lines.push(Line::styled(
            "editing a line (filter, command):",
            theme.dim(),
        ));
        entry(&mut lines, String::new(), &editing.join(" · "), false);
    }
    lines.push(Line::styled("commands (after :):", theme.dim()));
    entry(&mut lines, String::new(), &listed, false);
    lines
}

/// The per-column sort keys as one help entry (`N A S …`, `sort by NAME (N) · …`), or none
/// when none is bound.
fn sort_by_entry(keymap: &Keymap) -> Option<(String, String)> {
    let bound: Vec<(String, &str)> = ACTIONS
        .iter()
        .filter_map(|(_, action, _)| match action {
            Action::SortBy(title) => keymap
                .keys(Section::Normal, action)
                .first()
                .map(|key| (key.to_string(), *title)),
            _ => None,
        })
        .collect();
    if bound.is_empty() {
        return None;
    }
    let keys = bound.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>();
    let columns = bound
        .iter()
        .map(|(k, title)| format!("{k} {title}"))
        .collect::<Vec<_>>();
    Some((
        keys.join(""),
        format!(
            "sort by a column the table has: {}; the same key again reverses",
            columns.join(" · ")
        ),
    ))
}

/// A frame this wide shows the help in two columns when one would not fit its height.
const TWO_COLUMNS_FROM: u16 = 150;

/// Draws the overlay from line `scroll` on, when it is taller than `area`; on a wide frame
/// in two columns first, so that the whole help fits where it can. `commands` are the names
/// command mode takes (see [`crate::command::listed`]).
pub fn draw(
    frame: &mut Frame,
    area: Rect,
    keymap: &Keymap,
    commands: &[String],
    forbidden: &[(Action, String)],
    scroll: usize,
    theme: Theme,
) {
    let room = usize::from(area.height.saturating_sub(2)).max(1);
    // Laid out in `columns` columns: the popup's width, and the lines at that column width.
    let layout = |columns: u16| {
        let popup_width = area.width.saturating_sub(4).min(columns * MAX_WIDTH);
        let column_width = usize::from(popup_width.saturating_sub(1 + columns) / columns);
        let lines = lines(keymap, commands, forbidden, column_width, theme);
        (popup_width, lines)
    };
    // A wide terminal reads keys that do not fit in one column in two, so twice as many
    // fit before scrolling.
    let (mut columns, (mut popup_width, mut lines)): (u16, _) = (1, layout(1));
    if lines.len() > room && area.width >= TWO_COLUMNS_FROM {
        columns = 2;
        (popup_width, lines) = layout(2);
    }
    let total = lines.len();
    let shown = room * usize::from(columns);
    let mut title = String::from(" keys (Esc closes) ");
    if total > shown {
        let first = scroll.min(total - shown);
        lines = lines.into_iter().skip(first).take(shown).collect();
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
            first + shown
        );
    }
    let per_column = lines.len().div_ceil(usize::from(columns)).max(1);
    let height = u16::try_from(per_column + 2).unwrap_or(u16::MAX);
    let popup = centred(area, popup_width, height);
    let block = Block::bordered().title(title);
    let inner = block.inner(popup);
    frame.render_widget(Clear, popup);
    frame.render_widget(block, popup);
    if columns == 1 {
        frame.render_widget(Paragraph::new(lines), inner);
        return;
    }
    let right = lines.split_off(per_column.min(lines.len()));
    let [l, _, r] = Layout::horizontal([
        Constraint::Fill(1),
        Constraint::Length(1),
        Constraint::Fill(1),
    ])
    .areas(inner);
    frame.render_widget(Paragraph::new(lines), l);
    frame.render_widget(Paragraph::new(right), r);
}

/// A popup of keys and what they do, over `area`: as wide as its longest entry needs (the
/// frame allowing), its words wrapped where the frame is narrower, never cut.
pub fn draw_keys(
    frame: &mut Frame,
    area: Rect,
    title: &str,
    entries: &[(String, String)],
    theme: Theme,
) {
    let keys_width = entries
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0)
        + 2;
    let longest = entries
        .iter()
        .map(|(_, w)| w.chars().count())
        .max()
        .unwrap_or(0);
    let wanted = (keys_width + longest).max(title.chars().count()) + 2;
    let width = u16::try_from(wanted)
        .unwrap_or(u16::MAX)
        .min(area.width.saturating_sub(4).max(20));
    let text_width = usize::from(width.saturating_sub(2))
        .saturating_sub(keys_width)
        .max(10);
    let mut lines: Vec<Line> = Vec::new();
    for (keys, what) in entries {
        for (i, part) in wrap(what, text_width).into_iter().enumerate() {
            let keys = if i == 0 { keys.as_str() } else { "" };
            lines.push(Line::from(vec![
                Span::styled(format!("{keys:<keys_width$}"), theme.title()),
                Span::raw(part),
            ]));
        }
    }
    let height = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
    let popup = centred(area, width, height);
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(title.to_string())),
        popup,
    );
}

/// A `width` × `height` rectangle in the middle of `area`.
fn centred(area: Rect, width: u16, height: u16) -> Rect {
    let [row] = Layout::vertical([Constraint::Length(height)])
        .flex(Flex::Center)
        .areas(area);
    let [popup] = Layout::horizontal([Constraint::Length(width)])
        .flex(Flex::Center)
        .areas(row);
    popup
}

impl Component for Help {
    fn handle(&mut self, action: &Action, ctx: &Context<'_>) -> Option<Effect> {
        self.handle_key(action, ctx.table_page())
    }

    /// Over the whole frame, header included: the keys need the room.
    fn draw(&self, frame: &mut Frame, _: Rect, screen: &Screen<'_>) {
        let state = screen.state;
        draw(
            frame,
            frame.area(),
            &state.keymap,
            &command::listed(&state.command.discovery),
            &state.forbidden,
            self.scroll,
            screen.theme(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_wrap_to_the_width() {
        assert_eq!(wrap("a bb ccc dddd", 6), ["a bb", "ccc", "dddd"]);
        assert_eq!(wrap("short", 80), ["short"]);
        assert_eq!(
            wrap("averyveryverylongword x", 5),
            ["averyveryverylongword", "x"]
        );
    }

    /// A write the server forbids is dimmed in help, with the server's reason; the others
    /// are not.
    #[test]
    fn a_forbidden_write_is_dimmed_with_its_reason() {
        let keymap = kscope_config::Config::built_in().unwrap().keys;
        let theme = Theme { color: true };
        let forbidden = [(Action::Delete, "your user may not delete pods".to_string())];
        let lines = lines(&keymap, &[], &forbidden, 300, theme);
        let text = |l: &Line| {
            l.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>()
        };
        let delete = lines
            .iter()
            .find(|l| text(l).contains("(not allowed: your user may not delete pods)"))
            .expect("the delete key's line");
        assert!(text(delete).starts_with("ctrl-d"), "{}", text(delete));
        assert_eq!(delete.style, theme.dim());
        let kill = lines
            .iter()
            .find(|l| text(l).starts_with("ctrl-k"))
            .expect("the kill key's line");
        assert!(!text(kill).contains("not allowed"));
        assert_ne!(kill.style, theme.dim());
    }
}
