//! The workbench views (ownership tree, hot loops, timeline) as components: here, apart
//! from the views, so the views do not import the component trait and the UI state.

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::action::Action;
use crate::component::{Component, Context};
use crate::effect::Effect;
use crate::hot::HotView;
use crate::screen::Screen;
use crate::timeline::TimelineView;
use crate::tree::TreeView;

impl Component for TreeView {
    fn handle(&mut self, action: &Action, ctx: &Context<'_>) -> Option<Effect> {
        self.handle_key(action, ctx.table_page())
    }

    fn draw(&self, frame: &mut Frame, area: Rect, screen: &Screen<'_>) {
        self.draw_into(frame, area, screen.theme());
    }
}

impl Component for HotView {
    fn handle(&mut self, action: &Action, ctx: &Context<'_>) -> Option<Effect> {
        self.handle_key(action, ctx.table_page())
    }

    fn draw(&self, frame: &mut Frame, area: Rect, screen: &Screen<'_>) {
        self.draw_into(frame, area, screen.theme());
    }
}

impl Component for TimelineView {
    fn handle(&mut self, action: &Action, ctx: &Context<'_>) -> Option<Effect> {
        self.handle_key(action, ctx.table_page())
    }

    fn draw(&self, frame: &mut Frame, area: Rect, screen: &Screen<'_>) {
        self.draw_into(frame, area, screen.theme());
    }
}
