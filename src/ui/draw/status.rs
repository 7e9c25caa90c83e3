//! The bottom line: the command bar, the filter bars, a message, or a key hint.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use kscope_config::keys::Section;

use super::text::typed_spans;
use crate::action::{Action, Focus, InputMode};
use crate::command::{self, CommandBar};
use crate::component::{Component, Context};
use crate::effect::Effect;
use crate::screen::{Screen, Theme};
use crate::state::{FilterBar, UiState};

/// The bottom line: the command bar while typing a command (with a hint) or after one failed,
/// the delta panel's filter or the table's filter bar while typing or when a filter is set,
/// else a key hint.
pub(crate) fn draw_status(
    frame: &mut Frame,
    area: Rect,
    screen: &Screen,
    panels: bool,
    theme: Theme,
) {
    let state = screen.state;
    if state.mode == InputMode::Command {
        state.command.draw(frame, area, screen);
    } else if let Some(error) = &state.command.error {
        let line = Line::from(Span::styled(error.clone(), theme.error()));
        frame.render_widget(Paragraph::new(line), area);
    } else if let Some(notice) = state
        .notice
        .as_ref()
        .filter(|_| state.mode == InputMode::Normal)
    {
        frame.render_widget(
            Paragraph::new(Span::styled(notice.clone(), theme.dim())),
            area,
        );
    } else if state.mode == InputMode::DeltaFilter {
        delta_filter_line(frame, area, screen);
    } else if state.mode == InputMode::Filter || !state.filter.input.is_empty() {
        state.filter.draw(frame, area, screen);
    } else {
        let hint = key_hint(state, panels, usize::from(area.width));
        frame.render_widget(Paragraph::new(Span::styled(hint, theme.dim())), area);
    }
}

/// Room for what is typed in a line of `area`, leaving some for the hint or error after it.
fn typing_width(area: Rect) -> usize {
    usize::from(area.width).saturating_sub(10) * 2 / 3
}

/// The command line being typed, with a hint of what it takes.
fn command_line(frame: &mut Frame, area: Rect, bar: &CommandBar, screen: &Screen) {
    let theme = screen.theme();
    let mut spans = vec![Span::styled(":", theme.title())];
    spans.extend(typed_spans(
        &bar.input,
        &bar.edit,
        typing_width(area),
        theme,
    ));
    spans.push(Span::styled(
        format!("  {}", command::hint(&bar.input, &bar.discovery)),
        theme.dim(),
    ));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The delta panel's filter line being typed, and whether it parses.
fn delta_filter_line(frame: &mut Frame, area: Rect, screen: &Screen) {
    let theme = screen.theme();
    let panel = &screen.state.deltas;
    let deltas = &panel.filter;
    let mut spans = vec![Span::styled("deltas: ", theme.title())];
    spans.extend(typed_spans(
        &deltas.input,
        &panel.filter_edit,
        typing_width(area),
        theme,
    ));
    match &deltas.error {
        Some(error) => spans.push(Span::styled(format!("  {error}"), theme.error())),
        None => spans.push(Span::styled(
            "  text in the key · NAME=VALUE by index",
            theme.dim(),
        )),
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The table's filter: being typed, or the one kept; its error, or how many rows match.
fn filter_line(frame: &mut Frame, area: Rect, filter: &FilterBar, screen: &Screen) {
    let theme = screen.theme();
    let mut spans = vec![Span::styled("/", theme.title())];
    if screen.state.mode == InputMode::Filter {
        spans.extend(typed_spans(
            &filter.input,
            &filter.edit,
            typing_width(area),
            theme,
        ));
    } else {
        spans.push(Span::raw(filter.input.clone()));
    }
    match &filter.error {
        Some(error) => spans.push(Span::styled(format!("  {error}"), theme.error())),
        None => spans.push(Span::styled(
            format!(
                "  {}",
                super::text::counted(screen.window.total, "match", "matches")
            ),
            theme.dim(),
        )),
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The keys that work in the focused pane, as bound now, as many as fit in `width`: with
/// the panels shown the line starts by naming the pane (`▶ deltas`), and the delta panel's
/// line offers its own keys, not the table's.
fn key_hint(state: &UiState, panels: bool, width: usize) -> String {
    let mut hints: Vec<(Section, &[Action], &str)> = Vec::new();
    let mut line = String::new();
    if panels && state.focus == Focus::Deltas {
        line.push_str("▶ deltas");
        hints.extend([
            (
                Section::Deltas,
                &[Action::OpenDeltaFilter][..],
                "filter deltas",
            ),
            (Section::Deltas, &[Action::OpenDeltaDiff], "diff"),
            (Section::Normal, &[Action::TogglePause], "pause"),
            (Section::Normal, &[Action::FocusNext], "table"),
            (Section::Normal, &[Action::ToggleHelp], "help"),
            (Section::Normal, &[Action::Quit], "quit"),
            (Section::Deltas, &[Action::ClearDeltaFilter], "clear filter"),
            (Section::Deltas, &[Action::NextFifo], "next FIFO"),
            (Section::Deltas, &[Action::ToggleSideBySide], "side by side"),
        ]);
    } else {
        if panels {
            line.push_str("▶ table");
        }
        hints.extend([
            (Section::Normal, &[Action::ToggleHelp][..], "help"),
            (Section::Normal, &[Action::Quit], "quit"),
            (Section::Normal, &[Action::OpenCommand], "command"),
            (Section::Normal, &[Action::OpenFilter], "filter"),
        ]);
        if panels {
            hints.push((Section::Normal, &[Action::FocusNext], "deltas"));
        }
        hints.extend([
            (Section::Normal, &[Action::Describe][..], "describe"),
            (Section::Normal, &[Action::SortNext], "sort"),
            (Section::Normal, &[Action::ToggleWide], "wide"),
            (Section::Normal, &[Action::TogglePanels], "panels"),
        ]);
    }
    for hint in hints.into_iter().filter_map(|(section, actions, what)| {
        let keys: Vec<String> = actions
            .iter()
            .filter_map(|a| {
                state
                    .keymap
                    .keys(section, a)
                    .first()
                    .map(ToString::to_string)
            })
            .collect();
        (!keys.is_empty()).then(|| format!("{} {what}", keys.join("/")))
    }) {
        // Whole hints only: the ones that do not fit are left out.
        let needed = if line.is_empty() { 0 } else { 2 } + hint.chars().count();
        if line.chars().count() + needed > width {
            continue;
        }
        if !line.is_empty() {
            line.push_str("  ");
        }
        line.push_str(&hint);
    }
    line
}

impl Component for FilterBar {
    fn handle(&mut self, action: &Action, _: &Context<'_>) -> Option<Effect> {
        self.handle_key(action)
    }

    /// The filter as typed (or as kept), and whether it parses.
    fn draw(&self, frame: &mut Frame, area: Rect, screen: &Screen<'_>) {
        filter_line(frame, area, self, screen);
    }
}

impl Component for CommandBar {
    fn handle(&mut self, action: &Action, _: &Context<'_>) -> Option<Effect> {
        self.handle_key(action)
    }

    /// The line being typed, with a hint of what it takes.
    fn draw(&self, frame: &mut Frame, area: Rect, screen: &Screen<'_>) {
        command_line(frame, area, self, screen);
    }
}
