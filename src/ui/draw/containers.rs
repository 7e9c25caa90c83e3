//! The container picker of a shell or attach, over the table.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph};

use kscope_config::keys::Section;

use super::portforward::{centered, choice_lines, hint};
use crate::action::Action;
use crate::component::{Component, Context};
use crate::containers::ContainerPicker;
use crate::effect::Effect;
use crate::screen::Screen;

impl Component for ContainerPicker {
    fn handle(&mut self, action: &Action, _: &Context<'_>) -> Option<Effect> {
        self.handle_key(action)
    }

    fn draw(&self, frame: &mut Frame, area: Rect, screen: &Screen<'_>) {
        let theme = screen.theme();
        let choices = self
            .choices
            .as_ref()
            .map(|read| read.as_ref().map(|_| self.lines()).map_err(String::as_str));
        let mut lines = choice_lines("container", choices, self.selected, theme);
        lines.push(Line::styled(
            hint(
                &screen.state.keymap,
                Section::Confirm,
                &[
                    (Action::Down, "container"),
                    (Action::ChooseValue, "open"),
                    (Action::PortForward, "port-forward"),
                    (Action::ConfirmNo, "cancel"),
                ],
            ),
            theme.dim(),
        ));
        let height = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
        let popup = centered(area, 72, height);
        frame.render_widget(Clear, popup);
        frame.render_widget(
            Paragraph::new(lines).block(
                Block::bordered()
                    .title(format!(" {}: which container? ", self.what()))
                    .border_style(theme.warn()),
            ),
            popup,
        );
    }
}
