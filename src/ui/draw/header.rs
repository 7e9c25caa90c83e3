//! Two header lines: where we are connected, and what the informer is doing (and why it
//! fails, when it does).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{Screen, Theme};

pub fn draw(frame: &mut Frame, area: Rect, screen: &Screen, theme: Theme) {
    let h = screen.header;
    let first = Line::from(vec![
        Span::styled("kscope ", theme.title()),
        Span::raw(format!("ctx {} ", h.context)),
        Span::styled(h.server.clone(), theme.dim()),
    ]);
    let mut second = vec![
        Span::styled(h.resource.clone(), theme.title()),
        Span::raw(format!(
            " [{}] {} rows · {} · {:.0} ev/s",
            h.scope, screen.window.total, h.sync, h.events_per_second
        )),
    ];
    if let Some(error) = &h.error {
        second.push(Span::styled(format!(" · {error}"), theme.error()));
    }
    let second = Line::from(second);
    frame.render_widget(Paragraph::new(vec![first, second]), area);
}
