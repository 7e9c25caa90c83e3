//! One frame: the layout, the window of rows copied out, then every part drawn from the
//! immutable [`Screen`].

use std::time::SystemTime;

use ratatui::backend::Backend;
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::{Frame, Terminal};

use kscope_index_views::live::{ViewColumn, Window};

use super::{header, panels, status};
use crate::component::{Component, overlay};
use crate::detail::Detail;
use crate::layout::{Layout, MIN_HEIGHT, MIN_WIDTH};
use crate::screen::{Header, Screen};
use crate::state::UiState;

/// What a frame shows besides the UI's state, the rows and the detail.
pub struct Parts<'a> {
    pub header: &'a Header,
    pub columns: &'a [ViewColumn],
    pub with_namespace: bool,
    pub now: SystemTime,
    pub color: bool,
}

/// One frame, as the event loop draws it (and the snapshot tests, through the same code):
/// lays the terminal's area out, copies the window of rows that fits out of the view with
/// `window` (the only moment a view's lock is held), sizes the detail's page, then renders
/// from immutable state. Returns the layout, for the page sizes of the next keys.
pub fn frame<B: Backend>(
    terminal: &mut Terminal<B>,
    state: &mut UiState,
    detail: Option<&mut Detail>,
    parts: &Parts,
    window: impl FnOnce(&mut UiState, usize) -> Window,
) -> Result<Layout, B::Error> {
    // The area the draw will render into: resized first, as the draw itself would.
    terminal.autoresize()?;
    let area = terminal.get_frame().area();
    let header_rows = header::rows(parts.header, area.width, parts.now);
    let layout = Layout::with_header(area, state.panels, header_rows);
    let window = window(state, layout.table_rows());
    let detail = detail.map(|detail| {
        detail.set_page(layout.detail_rows());
        detail.set_columns(layout.detail_columns());
        &*detail
    });
    if let Some(logs) = &mut state.logs {
        let (rows, width) = layout.log_size();
        logs.prepare(rows, width);
    }
    let screen = Screen {
        state,
        header: parts.header,
        layout: &layout,
        columns: parts.columns,
        with_namespace: parts.with_namespace,
        window: &window,
        detail,
        now: parts.now,
        color: parts.color,
    };
    terminal.draw(|f| draw(f, &screen))?;
    Ok(layout)
}

/// True when NO_COLOR asks for no colours (any non-empty value, per no-color.org).
pub fn no_color_requested() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Draws one frame: the whole screen, overlays included. The event loop and the snapshot
/// tests both draw through this.
pub fn draw(frame: &mut Frame, screen: &Screen) {
    let theme = screen.theme();
    let Some(areas) = screen.layout.areas else {
        // Wrapped: at 20x5 one line would cut off the size it needs.
        let area = frame.area();
        frame.render_widget(
            Paragraph::new(format!(
                "terminal too small: {}x{}, need {MIN_WIDTH}x{MIN_HEIGHT}",
                area.width, area.height
            ))
            .wrap(Wrap { trim: true }),
            area,
        );
        return;
    };
    header::draw(frame, areas.header, screen, theme);
    screen.state.table.draw(frame, areas.table, screen);
    if let Some(panels) = areas.panels {
        panels::draw(frame, panels, screen);
    }
    status::draw_status(frame, areas.status, screen, areas.panels.is_some(), theme);
    if let Some(overlay) = overlay(screen.state) {
        overlay.draw(frame, areas.table, screen);
    }
    if let Some(view) = &screen.state.logs {
        view.draw(frame, areas.detail, screen);
    }
    if let Some(panel) = &screen.state.metrics {
        panel.draw(frame, areas.detail, screen);
    }
    if let Some(detail) = screen.detail {
        detail.draw(frame, areas.detail, screen);
    }
}
