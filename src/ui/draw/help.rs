//! The help overlay: the keys of the main screen, centred over it.

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

use super::Theme;
use crate::ui::action::KEY_HELP;

pub fn draw(frame: &mut Frame, area: Rect, theme: Theme) {
    let height = u16::try_from(KEY_HELP.len() + 2).unwrap_or(u16::MAX);
    let [row] = Layout::vertical([Constraint::Length(height)])
        .flex(Flex::Center)
        .areas(area);
    let [popup] = Layout::horizontal([Constraint::Length(72)])
        .flex(Flex::Center)
        .areas(row);
    let lines: Vec<Line> = KEY_HELP
        .iter()
        .map(|(keys, what)| {
            Line::from(vec![
                Span::styled(format!("{keys:<12}"), theme.title()),
                Span::raw(*what),
            ])
        })
        .collect();
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" keys (Esc closes) ")),
        popup,
    );
}
