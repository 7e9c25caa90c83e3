//! The port-forward dialog (`F`) and the list of forwards (`:pf`), over the table. The list
//! draws the snapshot the app took before the frame; nothing here reads a counter.

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph};

use kscope_config::keys::{Keymap, Section};
use kscope_units::bytes;

use crate::action::Action;
use crate::component::{Component, Context};
use crate::effect::Effect;
use crate::portforward::{ForwardDialog, ForwardList, ForwardRow, ForwardState, PortChoice};
use crate::screen::Screen;
use crate::theme::Theme;

/// `keys what` for each action bound in `section`, joined: the key hints of both overlays.
pub(super) fn hint(keymap: &Keymap, section: Section, actions: &[(Action, &str)]) -> String {
    actions
        .iter()
        .filter_map(|(action, what)| {
            let keys = keymap.keys(section, action);
            let shown: Vec<String> = keys.iter().take(2).map(ToString::to_string).collect();
            (!shown.is_empty()).then(|| format!("{} {what}", shown.join("/")))
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// A dialog's choices of `what` (a port, a container): a word while they are read, the
/// error if they cannot be, else a title over the lines, the selected one highlighted.
pub(super) fn choice_lines(
    what: &str,
    choices: Option<Result<Vec<String>, &str>>,
    selected: usize,
    theme: Theme,
) -> Vec<Line<'static>> {
    match choices {
        None => vec![Line::styled(format!("reading its {what}s…"), theme.dim())],
        Some(Err(why)) => vec![Line::styled(why.to_string(), theme.error())],
        Some(Ok(texts)) => std::iter::once(Line::styled(what.to_string(), theme.title()))
            .chain(texts.into_iter().enumerate().map(|(i, text)| {
                let line = Line::raw(text);
                if i == selected {
                    line.style(theme.selected())
                } else {
                    line
                }
            }))
            .collect(),
    }
}

/// A popup `width` x `height` (at most the area's) in the middle of `area`.
pub(super) fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let [column] = Layout::horizontal([Constraint::Length(width.min(area.width))])
        .flex(Flex::Center)
        .areas(area);
    let [popup] = Layout::vertical([Constraint::Length(height.min(area.height))])
        .flex(Flex::Center)
        .areas(column);
    popup
}

impl Component for ForwardDialog {
    fn handle(&mut self, action: &Action, _: &Context<'_>) -> Option<Effect> {
        self.handle_key(action)
    }

    fn draw(&self, frame: &mut Frame, area: Rect, screen: &Screen<'_>) {
        let theme = screen.theme();
        let choices = self.choices.as_ref().map(|read| {
            read.as_ref()
                .map(|ports| {
                    ports
                        .iter()
                        .enumerate()
                        .map(|(i, choice)| {
                            let mark = if i == self.selected { ">" } else { " " };
                            format!("{mark} {}", choice.label())
                        })
                        .collect()
                })
                .map_err(String::as_str)
        });
        let mut lines = match &self.open {
            Some(open) => typed_lines(open, &self.local, self.chosen().is_some(), theme),
            None => choice_lines("port", choices, self.selected, theme),
        };
        // A typed port has no list to move in.
        let mut keys = Vec::new();
        let digits = if self.open.is_some() {
            " · digits: the port"
        } else {
            keys.push((Action::Down, "port"));
            " · digits: local port"
        };
        keys.extend([
            (Action::ConfirmYes, "forward"),
            (Action::ConfirmNo, "cancel"),
        ]);
        if self.open.is_none() && matches!(self.choices, Some(Ok(_))) {
            lines.push(Line::raw(""));
            let local = format!("local   127.0.0.1:{}_", self.local);
            lines.push(match self.chosen() {
                Some(_) => Line::raw(local),
                None => Line::styled(format!("{local}  (1-65535)"), theme.error()),
            });
        }
        lines.push(Line::styled(
            hint(&screen.state.keymap, Section::Confirm, &keys) + digits,
            theme.dim(),
        ));
        let height = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
        let popup = centered(area, 72, height);
        frame.render_widget(Clear, popup);
        frame.render_widget(
            Paragraph::new(lines).block(
                Block::bordered()
                    .title(format!(" port-forward {} ", self.what))
                    .border_style(theme.warn()),
            ),
            popup,
        );
    }
}

/// The dialog of a container that declares no ports: it says so, and the port is typed.
fn typed_lines(open: &PortChoice, typed: &str, valid: bool, theme: Theme) -> Vec<Line<'static>> {
    let port = format!("port    {typed}_");
    vec![
        Line::styled(
            format!(
                "container {} declares no ports: type its server's port",
                open.container
            ),
            theme.warn(),
        ),
        Line::raw(""),
        if valid {
            Line::raw(port)
        } else {
            Line::styled(format!("{port}  (1-65535)"), theme.error())
        },
        Line::raw("local   127.0.0.1: the same port, or a free one if taken"),
    ]
}

/// One row of the list (the pod's column takes what the others leave), and why it is not
/// active, or what refused its last connection, on a line of its own below.
fn row_text(row: &ForwardRow, context_width: usize, pod_width: usize) -> (String, Option<String>) {
    let (context, pod) = (cut(&row.context, context_width), cut(&row.pod, pod_width));
    let (state, why) = match &row.state {
        ForwardState::Active => (
            "active",
            row.last_error
                .as_ref()
                .map(|e| format!("last refused: {e}")),
        ),
        ForwardState::PodGone(why) => ("gone", Some(why.clone())),
        ForwardState::Failed(why) => ("failed", Some(why.clone())),
    };
    let line = format!(
        "{context:<context_width$} {pod:<pod_width$} {:>5} {:<15} {:>7} {:>8} {:>8} {state}",
        row.port,
        row.local.to_string(),
        format!("{}/{}", row.open, row.total),
        bytes::binary(row.bytes_in),
        bytes::binary(row.bytes_out),
    );
    (line, why.map(|why| format!("  {why}")))
}

/// `text` in at most `width` characters, an ellipsis at the end of one cut.
fn cut(text: &str, width: usize) -> String {
    let mut shown: String = text.chars().take(width).collect();
    if text.chars().count() > width && width > 0 {
        shown.pop();
        shown.push('…');
    }
    shown
}

/// The context column's widest.
const CONTEXT_WIDTH: usize = 24;
/// The columns' width after POD: port, local address, connections, bytes, state.
const FIXED: usize = 1 + 5 + 1 + 15 + 1 + 7 + 1 + 8 + 1 + 8 + 1 + 6;
/// The pod column's widest.
const POD_WIDTH: usize = 40;

impl Component for ForwardList {
    fn handle(&mut self, action: &Action, ctx: &Context<'_>) -> Option<Effect> {
        self.handle_key(action, ctx.table_page())
    }

    fn draw(&self, frame: &mut Frame, area: Rect, screen: &Screen<'_>) {
        let theme = screen.theme();
        let inner = usize::from(area.width.saturating_sub(2));
        // Each forward's context: forwards outlive a `:ctx` switch.
        let context_width = self
            .rows
            .iter()
            .map(|r| r.context.chars().count())
            .max()
            .unwrap_or(0)
            .clamp(7, CONTEXT_WIDTH);
        let pod_width = inner
            .saturating_sub(FIXED + context_width + 1)
            .clamp(8, POD_WIDTH);
        let mut lines = vec![Line::styled(
            format!(
                "{:<context_width$} {:<pod_width$} {:>5} {:<15} {:>7} {:>8} {:>8} STATE",
                "CONTEXT", "POD", "PORT", "LOCAL", "CONN", "IN", "OUT"
            ),
            theme.title(),
        )];
        if self.rows.is_empty() {
            lines.push(Line::styled(
                "no port-forwards: F on a pod or service starts one",
                theme.dim(),
            ));
        }
        let height = usize::from(area.height.saturating_sub(4)).max(1);
        let first = (self.selected + 1).saturating_sub(height);
        for (i, row) in self.rows.iter().enumerate().skip(first).take(height) {
            let (text, why) = row_text(row, context_width, pod_width);
            let line = Line::raw(text);
            lines.push(if i == self.selected {
                line.style(theme.selected())
            } else {
                line
            });
            if let Some(why) = why {
                lines.push(Line::styled(why, theme.error()));
            }
        }
        lines.push(Line::styled(
            hint(
                &screen.state.keymap,
                Section::Forwards,
                &[(Action::StopForward, "stop"), (Action::Back, "back")],
            ),
            theme.dim(),
        ));
        let height = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
        let popup = centered(area, area.width, height);
        frame.render_widget(Clear, popup);
        frame.render_widget(
            Paragraph::new(lines)
                .block(Block::bordered().title(format!(" port-forwards ({}) ", self.rows.len()))),
            popup,
        );
    }
}
