//! The log view: below the header, the lines laid out for this frame (only those), each
//! tagged and coloured by its pod and container when there are several, matches of the
//! search highlighted; a line of where each stream stands, and the search bar.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use unicode_width::UnicodeWidthChar;

use super::text::typed_spans;
use crate::action::InputMode;
use crate::component::{Component, Context};
use crate::effect::Effect;
use crate::logs::view::{LogView, SourceState};
use crate::screen::{Screen, Theme};
use kscope_config::keys::{Action, Keymap, Section};

/// Source colours, in turn; standard ANSI colours, readable on dark and light themes.
const PALETTE: [Color; 8] = [
    Color::Cyan,
    Color::Green,
    Color::Yellow,
    Color::Magenta,
    Color::Blue,
    Color::LightRed,
    Color::LightGreen,
    Color::LightMagenta,
];

/// Draws the log view in `area` (below the header); `typing` while the search bar is open.
pub fn draw(
    frame: &mut Frame,
    area: Rect,
    view: &LogView,
    keymap: &Keymap,
    typing: bool,
    theme: Theme,
) {
    let block = Block::bordered()
        .title(Span::styled(title(view), theme.title()))
        .title_bottom(Span::styled(key_hint(keymap), theme.dim()));
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    let [streams, content, bar] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(inner);
    frame.render_widget(Paragraph::new(streams_line(view, theme)), streams);
    if let Some(picker) = &view.picker {
        let choices =
            std::iter::once("all containers".to_string()).chain(picker.containers.iter().cloned());
        let lines: Vec<Line> = choices
            .enumerate()
            .map(|(i, choice)| {
                let style = if i == picker.selected {
                    theme.selected()
                } else {
                    Style::default()
                };
                Line::from(Span::styled(format!(" {choice} "), style))
            })
            .collect();
        let mut all = vec![Line::from(Span::styled(
            format!(
                "pod {} has {} containers:",
                picker.pod,
                picker.containers.len()
            ),
            theme.title(),
        ))];
        all.extend(lines);
        frame.render_widget(Paragraph::new(all), content);
    } else {
        frame.render_widget(
            Paragraph::new(log_lines(view, content.width, theme)),
            content,
        );
    }
    frame.render_widget(
        Paragraph::new(bar_line(view, typing, bar.width, theme)),
        bar,
    );
    if view.help {
        super::help::draw_keys(
            frame,
            inner,
            " log keys (Esc closes) ",
            &log_help(keymap),
            theme,
        );
    }
}

/// What a key does in the log view, where that differs from its words on the main screen
/// (`g` is the oldest kept line here, not the first row).
fn log_words(action: &Action) -> Option<&'static str> {
    Some(match action {
        Action::Back => "close the log view (an open search is cleared first)",
        Action::Up | Action::Down => "scroll a line (pauses following)",
        Action::PageUp | Action::PageDown => "scroll a page (pauses following)",
        Action::Top => "the oldest line kept (pauses following)",
        Action::Bottom => "the newest line, following again",
        Action::ChooseValue => "choose the container (in the container list)",
        Action::OpenLogSearch => "search the lines (a capital makes it exact)",
        Action::NextMatch => "the next match",
        Action::PrevMatch => "the previous match",
        Action::ToggleLogFilter => "show only the lines that match the search",
        Action::ToggleTimestamps => "show when each line was written",
        Action::ToggleWrap => "wrap long lines",
        Action::TogglePrevious => "the previous (terminated) container's log",
        Action::SaveLogs => "save the lines kept to a file",
        Action::ToggleHelp => "these keys",
        _ => return None,
    })
}

/// The log view's keys as bound, each with what it does there.
fn log_help(keymap: &Keymap) -> Vec<(String, String)> {
    keymap
        .help(Section::Logs)
        .into_iter()
        .zip(
            kscope_config::keys::ACTIONS
                .iter()
                .filter(|(_, a, _)| !keymap.keys(Section::Logs, a).is_empty()),
        )
        .map(|((keys, what), (_, action, _))| (keys, log_words(action).unwrap_or(what).to_string()))
        .collect()
}

/// ` pod shop/web-1 · following · 1,234 lines · tail 1000 `.
fn title(view: &LogView) -> String {
    let mut parts = vec![view.title.clone()];
    // A previous instance's log is whole when it comes: there is nothing to follow.
    if view.previous {
        parts.push("previous instance".into());
    } else {
        parts.push(
            if view.follow {
                "following"
            } else {
                "paused (End follows)"
            }
            .into(),
        );
    }
    let lines = if view.filter {
        format!(
            "{} of {}",
            view.search.matches.len(),
            super::text::counted(view.ring.len(), "line", "lines")
        )
    } else {
        super::text::counted(view.ring.len(), "line", "lines")
    };
    parts.push(lines);
    parts.push(view.range.label(view.tail_lines));
    if view.wrap {
        parts.push("wrap".into());
    }
    format!(" {} ", parts.join(" · "))
}

fn key_hint(keymap: &Keymap) -> String {
    let hints: [(&Action, &str); 9] = [
        (&Action::ToggleHelp, "keys"),
        (&Action::OpenLogSearch, "search"),
        (&Action::ToggleLogFilter, "filter"),
        (&Action::ToggleTimestamps, "time"),
        (&Action::ToggleWrap, "wrap"),
        (&Action::TogglePrevious, "previous"),
        (
            &Action::LogRange(kscope_config::keys::LogRange::Since(60)),
            "since",
        ),
        (&Action::SaveLogs, "save"),
        (&Action::Back, "back"),
    ];
    let parts: Vec<String> = hints
        .iter()
        .filter_map(|(action, what)| {
            let keys = keymap.keys(Section::Logs, action);
            keys.first().map(|k| format!("{k} {what}"))
        })
        .collect();
    format!(" {} ", parts.join("  "))
}

/// Where each stream stands, or why there is nothing: `[web-1/app] streaming  [web-2/app] ended`.
fn streams_line(view: &LogView, theme: Theme) -> Line<'static> {
    if let Some(notice) = &view.notice {
        let style = if notice.starts_with("saved to") {
            theme.dim()
        } else {
            theme.error()
        };
        return Line::from(Span::styled(notice.clone(), style));
    }
    if view.sources.is_empty() {
        return Line::from(Span::styled(
            "finding the pods and containers…",
            theme.dim(),
        ));
    }
    let mut spans = Vec::new();
    for (i, source) in view.sources.iter().enumerate() {
        if !spans.is_empty() {
            spans.push(Span::raw("  "));
        }
        let name = if source.tag.is_empty() {
            source.container.clone()
        } else {
            source.tag.clone()
        };
        spans.push(Span::styled(name, source_style(i, theme)));
        let (state, style) = match &source.state {
            SourceState::Connecting => ("connecting…".to_string(), theme.dim()),
            SourceState::Streaming => ("streaming".to_string(), theme.dim()),
            SourceState::Reconnecting { attempt, why } => {
                (format!("reconnecting ({attempt}): {why}"), theme.warn())
            }
            SourceState::Ended(why) => (format!("ended: {why}"), theme.warn()),
            SourceState::Failed(why) => (why.clone(), theme.error()),
        };
        spans.push(Span::styled(format!(" {state}"), style));
    }
    Line::from(spans)
}

fn source_style(source: usize, theme: Theme) -> Style {
    theme.fg(PALETTE[source % PALETTE.len()])
}

/// The search bar while typing; else the search in force and its matches.
fn bar_line(view: &LogView, typing: bool, width: u16, theme: Theme) -> Line<'static> {
    let search = &view.search;
    let mut spans = vec![Span::styled("/", theme.title())];
    if typing {
        let room = usize::from(width).saturating_sub(20);
        spans.extend(typed_spans(&search.input, &search.edit, room, theme));
    } else if search.matcher.is_some() {
        spans.push(Span::raw(search.input.clone()));
    } else {
        return Line::from(Span::styled(
            "/ to search · n/N next/previous match · f only matching lines",
            theme.dim(),
        ));
    }
    if search.matcher.is_some() {
        let at = search
            .current
            .map(|c| search.matches.partition_point(|&m| m < c) + 1);
        let count = match at {
            Some(at) => format!("  match {at} of {}", search.matches.len()),
            None => format!(
                "  {}",
                super::text::counted(search.matches.len(), "match", "matches")
            ),
        };
        spans.push(Span::styled(count, theme.dim()));
    }
    Line::from(spans)
}

/// The laid-out lines as screen rows of `width`.
fn log_lines(view: &LogView, width: u16, theme: Theme) -> Vec<Line<'static>> {
    let width = usize::from(width);
    let mut rows = Vec::new();
    let highlight = if theme.color {
        Style::default()
            .bg(Color::Yellow)
            .fg(Color::Black)
            .add_modifier(Modifier::BOLD)
    } else {
        Style::default().add_modifier(Modifier::REVERSED)
    };
    for &(id, _) in &view.shown {
        let Some(line) = view.ring.get(id) else {
            continue;
        };
        let current = view.search.current == Some(id);
        let mut spans: Vec<(String, Style)> = Vec::new();
        if let Some(time) = view.time_label(line) {
            spans.push((time, theme.dim()));
        }
        let tag = view.tag(line);
        if !tag.is_empty() {
            spans.push((
                format!("{tag} "),
                source_style(usize::from(line.source), theme),
            ));
        }
        let text_style = if current {
            Style::default().add_modifier(Modifier::UNDERLINED)
        } else {
            Style::default()
        };
        let text = &*line.text;
        let mut at = 0;
        if let Some(matcher) = &view.search.matcher {
            for found in matcher.find_all(text) {
                // A match ends on a character boundary: it is valid UTF-8 text matched.
                let (Some(before), Some(hit)) =
                    (text.get(at..found.start), text.get(found.clone()))
                else {
                    continue;
                };
                spans.push((before.to_string(), text_style));
                spans.push((hit.to_string(), highlight));
                at = found.end;
            }
        }
        spans.push((text[at..].to_string(), text_style));
        if line.cut {
            spans.push(("…[cut]".to_string(), theme.dim()));
        }
        rows.extend(fit(spans, width, view.wrap, theme));
    }
    rows
}

/// One log line as rows of `width` cells: wrapped, or cut with `›` at the edge. Control
/// characters (tabs, escape sequences) are shown as spaces and `?`, never sent to the
/// terminal.
fn fit(spans: Vec<(String, Style)>, width: usize, wrap: bool, theme: Theme) -> Vec<Line<'static>> {
    let width = width.max(1);
    let mut rows = Vec::new();
    let mut row: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    for (text, style) in spans {
        let mut piece = String::new();
        for c in text.chars() {
            let c = match c {
                '\t' => ' ',
                c if c.is_control() => '?',
                c => c,
            };
            let w = c.width().unwrap_or(0);
            if used + w > width {
                if !wrap {
                    // The last cell says the line goes on.
                    while used + 1 > width {
                        let Some(last) = piece.pop() else { break };
                        used -= last.width().unwrap_or(0);
                    }
                    row.push(Span::styled(std::mem::take(&mut piece), style));
                    row.push(Span::styled("›", theme.dim()));
                    rows.push(Line::from(row));
                    return rows;
                }
                row.push(Span::styled(std::mem::take(&mut piece), style));
                rows.push(Line::from(std::mem::take(&mut row)));
                used = 0;
            }
            piece.push(c);
            used += w;
        }
        if !piece.is_empty() {
            row.push(Span::styled(piece, style));
        }
    }
    rows.push(Line::from(row));
    rows
}

/// The log view and its search bar ([`InputMode::LogSearch`]).
impl Component for LogView {
    fn handle(&mut self, action: &Action, ctx: &Context<'_>) -> Option<Effect> {
        match ctx.mode {
            InputMode::LogSearch => self.handle_search(action),
            _ => self.handle_key(action),
        }
    }

    fn draw(&self, frame: &mut Frame, area: Rect, screen: &Screen<'_>) {
        let typing = screen.state.mode == InputMode::LogSearch;
        draw(
            frame,
            area,
            self,
            &screen.state.keymap,
            typing,
            screen.theme(),
        );
    }
}
