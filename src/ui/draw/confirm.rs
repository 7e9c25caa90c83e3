//! The confirm dialog of a write, over the table: what will happen, the server's dry-run
//! answer, and the buttons.

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};

use kscope_config::keys::{Keymap, Section};

use crate::action::Action;
use crate::component::{Component, Context};
use crate::effect::Effect;
use crate::screen::Screen;
use crate::writes::{ConfirmDialog, LineStyle};

impl Component for ConfirmDialog {
    fn handle(&mut self, action: &Action, _: &Context<'_>) -> Option<Effect> {
        self.handle_key(action)
    }

    fn draw(&self, frame: &mut Frame, area: Rect, screen: &Screen<'_>) {
        let theme = screen.theme();
        let mut lines: Vec<Line> = self
            .lines()
            .into_iter()
            .map(|(text, style)| match style {
                LineStyle::Plain => Line::raw(text),
                LineStyle::Dim => Line::styled(text, theme.dim()),
                LineStyle::Error => Line::styled(text, theme.error()),
            })
            .collect();
        // While an image is typed, the dialog's own line says which keys work.
        if !self.typing() {
            let hint = key_hint(&screen.state.keymap, self.cascades());
            lines.push(Line::styled(hint, theme.dim()));
        }
        let width = area.width.min(100);
        let inner = usize::from(width.saturating_sub(2)).max(1);
        // Wrapped lines: each takes its width's worth of rows.
        let rows: usize = lines.iter().map(|l| l.width().div_ceil(inner).max(1)).sum();
        let height = u16::try_from(rows + 2).unwrap_or(u16::MAX).min(area.height);
        let [column] = Layout::horizontal([Constraint::Length(width)])
            .flex(Flex::Center)
            .areas(area);
        let [popup] = Layout::vertical([Constraint::Length(height)])
            .flex(Flex::Center)
            .areas(column);
        let title = self
            .plan
            .as_ref()
            .map(|p| format!(" confirm: {} ", p.verb))
            .unwrap_or_default();
        frame.render_widget(Clear, popup);
        frame.render_widget(
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .block(Block::bordered().title(title).border_style(theme.warn())),
            popup,
        );
    }
}

/// The dialog's keys, as bound: `y do it · n/esc cancel · tab move · enter the button with >`,
/// and a delete's `c cascade`.
fn key_hint(keymap: &Keymap, cascades: bool) -> String {
    [
        (Action::ConfirmYes, "do it"),
        (Action::ConfirmNo, "cancel"),
        (Action::ConfirmSwitch, "move"),
        (Action::ChooseValue, "the button with >"),
        (Action::ConfirmCascade, "cascade"),
    ]
    .iter()
    .filter(|(action, _)| cascades || *action != Action::ConfirmCascade)
    .filter_map(|(action, what)| {
        let keys = keymap.keys(Section::Confirm, action);
        let shown: Vec<String> = keys.iter().take(2).map(ToString::to_string).collect();
        (!shown.is_empty()).then(|| format!("{} {what}", shown.join("/")))
    })
    .collect::<Vec<_>>()
    .join(" · ")
}
