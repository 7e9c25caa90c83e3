//! The index browser: an index's values and how many objects have each, over the table.

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph};

use crate::action::Action;
use crate::component::{Component, Context};
use crate::effect::Effect;
use crate::screen::{Screen, Theme};
use crate::state::IndexBrowser;

pub fn draw(frame: &mut Frame, area: Rect, browser: &IndexBrowser, theme: Theme) {
    let [popup] = Layout::horizontal([Constraint::Length(64)])
        .flex(Flex::Center)
        .areas(area);
    let title = format!(
        " index {} ({}/{}) ←/→ · Enter filters ",
        browser.name().unwrap_or("-"),
        browser.current + 1,
        browser.names.len()
    );
    let height = usize::from(popup.height.saturating_sub(2));
    let value_width = usize::from(popup.width.saturating_sub(2 + 9));
    // Scroll so the selected value stays in view.
    let first = (browser.selected + 1).saturating_sub(height);
    let lines: Vec<Line> = browser
        .values
        .iter()
        .enumerate()
        .skip(first)
        .take(height)
        .map(|(i, v)| {
            let line = Line::raw(format!("{:<value_width$} {:>8}", v.value, v.count));
            if i == browser.selected {
                line.style(theme.selected())
            } else {
                line
            }
        })
        .collect();
    let mut block = Block::bordered().title(title);
    if browser.misfits.count > 0 {
        block = block.title_bottom(format!(
            " {}{} left out: the path does not fit them (see the log) ",
            browser.misfits.count,
            if browser.misfits.more { "+" } else { "" }
        ));
    }
    frame.render_widget(Clear, popup);
    frame.render_widget(Paragraph::new(lines).block(block), popup);
}

impl Component for IndexBrowser {
    fn handle(&mut self, action: &Action, ctx: &Context<'_>) -> Option<Effect> {
        self.handle_key(action, ctx.table_page())
    }

    fn draw(&self, frame: &mut Frame, area: Rect, screen: &Screen<'_>) {
        draw(frame, area, self, screen.theme());
    }
}
