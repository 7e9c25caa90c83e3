//! The `:ctx` picker: the kubeconfig's contexts over the table, the current one starred,
//! those marked to open together as a fleet ticked.

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph};

use crate::action::Action;
use crate::component::{Component, Context};
use crate::contexts::ContextPicker;
use crate::effect::Effect;
use crate::screen::{Screen, Theme};

pub fn draw(frame: &mut Frame, area: Rect, picker: &ContextPicker, theme: Theme) {
    let [popup] = Layout::horizontal([Constraint::Length(area.width.min(64))])
        .flex(Flex::Center)
        .areas(area);
    let height = usize::from(popup.height.saturating_sub(2));
    let title = match picker.marked.len() {
        0 => format!(
            " contexts ({}) · Space marks · Enter switches · Esc ",
            picker.names.len()
        ),
        marked => format!(
            " contexts ({}) · {marked} marked · Enter opens them together · Esc ",
            picker.names.len()
        ),
    };
    let lines: Vec<Line> = if picker.names.is_empty() {
        vec![Line::styled("the kubeconfig has no contexts", theme.dim())]
    } else {
        // Scroll so the selected context stays in view.
        let first = (picker.selected + 1).saturating_sub(height);
        picker
            .names
            .iter()
            .enumerate()
            .skip(first)
            .take(height)
            .map(|(i, name)| {
                let current = picker.current.as_deref() == Some(name.as_str());
                let marked = picker.marked.contains(&i);
                let line = Line::raw(format!(
                    "{}{} {name}",
                    if current { "*" } else { " " },
                    if marked { "✓" } else { " " }
                ));
                let line = if marked {
                    line.patch_style(theme.marked())
                } else {
                    line
                };
                if i == picker.selected {
                    line.patch_style(theme.selected())
                } else {
                    line
                }
            })
            .collect()
    };
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(title)),
        popup,
    );
}

impl Component for ContextPicker {
    fn handle(&mut self, action: &Action, _: &Context<'_>) -> Option<Effect> {
        self.handle_key(action)
    }

    fn draw(&self, frame: &mut Frame, area: Rect, screen: &Screen<'_>) {
        draw(frame, area, self, screen.theme());
    }
}
