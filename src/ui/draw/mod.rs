//! Drawing: pure functions from an immutable [`Screen`] to a frame. Nothing here locks,
//! awaits or reads a clock; `now` comes in with the screen, so tests are deterministic.

pub(crate) mod contexts;
pub(crate) mod detail;
pub(crate) mod header;
pub(crate) mod help;
pub(crate) mod indexes;
pub(crate) mod logs;
pub(crate) mod panels;
pub(crate) mod table;

use std::time::SystemTime;

use ratatui::backend::Backend;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::{Frame, Terminal};

use kscope_index_views::live::{ViewColumn, Window};

use super::action::{Action, Focus, InputMode};
use super::command::{self, CommandBar};
use super::component::Component;
use super::detail::Detail;
use super::layout::{Layout, MIN_HEIGHT, MIN_WIDTH};
use super::line::LineEdit;
use super::state::{FilterBar, UiState};
use kscope_config::keys::Section;

/// What the header says about the cluster and the informer.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub context: String,
    pub server: String,
    pub resource: String,
    pub scope: String,
    /// `listing 3 pages, 1500 objects`, `watching at rv 5`, `backing off`.
    pub sync: String,
    /// A first list has reached the store: an empty table means no objects.
    pub listed: bool,
    /// Why the informer's last list or watch failed (forbidden, unreachable...), until a
    /// list succeeds.
    pub error: Option<String>,
    /// Watch events per second over the last second.
    pub events_per_second: f64,
    /// Since when the rows are not current: the informer has listed but is not watching
    /// (backing off after an error, or relisting), so changes since then are missing. `None`
    /// while watching, and before the first list (there are no rows to distrust).
    pub stale_since: Option<SystemTime>,
    /// Items of the last list that did not decode: the table lacks them.
    pub undecodable: u64,
    /// The filter the rows match (not what is being typed, which may not parse yet).
    pub filter: String,
    /// The context's favourite namespaces, most recently used first (keys 1–9).
    pub favourites: Vec<String>,
}

impl Header {
    /// A new informer's table: nothing listed, nothing known to be wrong yet.
    pub fn starting(&mut self) {
        self.sync = "starting".into();
        self.listed = false;
        self.error = None;
        self.stale_since = None;
        self.undecodable = 0;
    }
}

/// Everything one frame shows, copied out and laid out before drawing.
pub struct Screen<'a> {
    pub state: &'a UiState,
    pub header: &'a Header,
    /// Where each part goes, computed for the frame's size before drawing.
    pub layout: &'a Layout,
    /// The view's columns in cell order, wide, index and NAMESPACE columns included.
    pub columns: &'a [ViewColumn],
    /// Namespaced kind in all namespaces: a NAMESPACE column from the keys.
    pub with_namespace: bool,
    pub window: &'a Window,
    /// The open detail, drawn over everything but the header.
    pub detail: Option<&'a Detail>,
    pub now: SystemTime,
    pub color: bool,
}

impl Screen<'_> {
    /// The frame's colours (none under NO_COLOR).
    pub fn theme(&self) -> Theme {
        Theme { color: self.color }
    }
}

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
    let layout = Layout::new(terminal.get_frame().area(), state.panels);
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

/// Colours, or none at all when NO_COLOR is set (reverse video still marks the selection).
#[derive(Debug, Clone, Copy)]
pub struct Theme {
    color: bool,
}

impl Theme {
    fn fg(self, color: Color) -> Style {
        if self.color {
            Style::default().fg(color)
        } else {
            Style::default()
        }
    }

    fn title(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    fn dim(self) -> Style {
        self.fg(Color::DarkGray)
    }

    /// Pipeline events in the delta panel: relists, watch starts, bookmarks.
    fn warn(self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }

    fn spark(self) -> Style {
        self.fg(Color::Green)
    }

    fn error(self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }

    /// A row's colour by its health; standard ANSI colours, which dark and light terminal
    /// themes both map to readable shades.
    fn health(self, health: kscope_index_views::columns::RowHealth) -> Style {
        use kscope_index_views::columns::RowHealth;
        match health {
            RowHealth::Normal => Style::default(),
            RowHealth::Failing => self.fg(Color::Red),
            RowHealth::Pending => self.fg(Color::Yellow),
            RowHealth::Terminating => self.fg(Color::Magenta),
            RowHealth::Completed => self.dim(),
            // Bold as well, so that a Warning stands out under NO_COLOR too.
            RowHealth::Warning => self.fg(Color::Yellow).add_modifier(Modifier::BOLD),
        }
    }

    /// Rows that are not current: dimmed, with colour or without.
    fn stale(self) -> Style {
        self.dim().add_modifier(Modifier::DIM)
    }

    fn selected(self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }
}

/// True when NO_COLOR asks for no colours (any non-empty value, per no-color.org).
pub fn no_color_requested() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Draws one frame: the whole screen, overlays included. The event loop and the snapshot
/// tests both draw through this.
pub fn draw(frame: &mut Frame, screen: &Screen) {
    let theme = Theme {
        color: screen.color,
    };
    let Some(areas) = screen.layout.areas else {
        frame.render_widget(
            Paragraph::new(format!("terminal too small: need {MIN_WIDTH}x{MIN_HEIGHT}")),
            frame.area(),
        );
        return;
    };
    header::draw(frame, areas.header, screen, theme);
    screen.state.table.draw(frame, areas.table, screen);
    if let Some(panels) = areas.panels {
        panels::draw(frame, panels, screen);
    }
    draw_status(frame, areas.status, screen, areas.panels.is_some(), theme);
    if let Some(overlay) = screen.state.overlay() {
        overlay.draw(frame, areas.table, screen);
    }
    if let Some(view) = &screen.state.logs {
        view.draw(frame, areas.detail, screen);
    }
    if let Some(detail) = screen.detail {
        detail.draw(frame, areas.detail, screen);
    }
}

/// A line being typed, as it fits in `width`: the cursor shown on its character (or after
/// the text), a long line scrolled to keep it on screen.
fn typed_spans(text: &str, edit: &LineEdit, width: usize, theme: Theme) -> Vec<Span<'static>> {
    let shown = edit.visible(text, width);
    let at = match shown.at {
        Some(c) => Span::styled(c.to_string(), theme.selected()),
        None => Span::styled("█", theme.dim()),
    };
    vec![Span::raw(shown.before), at, Span::raw(shown.after)]
}

/// The bottom line: the command bar while typing a command (with a hint) or after one failed,
/// the delta panel's filter or the table's filter bar while typing or when a filter is set,
/// else a key hint.
fn draw_status(frame: &mut Frame, area: Rect, screen: &Screen, panels: bool, theme: Theme) {
    let state = screen.state;
    if state.mode == InputMode::Command {
        state.command.draw(frame, area, screen);
    } else if let Some(error) = &state.command.error {
        let line = Line::from(Span::styled(error.clone(), theme.error()));
        frame.render_widget(Paragraph::new(line), area);
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
pub(crate) fn command_line(frame: &mut Frame, area: Rect, bar: &CommandBar, screen: &Screen) {
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
pub(crate) fn filter_line(frame: &mut Frame, area: Rect, filter: &FilterBar, screen: &Screen) {
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
            format!("  {} matches", screen.window.total),
            theme.dim(),
        )),
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The most used keys as bound now (`? help  q quit  : command  / filter …`), as many as fit
/// in `width`, with the delta panel's own first while it is shown and has focus.
fn key_hint(state: &UiState, panels: bool, width: usize) -> String {
    let mut hints: Vec<(Section, &[Action], &str)> = Vec::new();
    if panels && state.focus == Focus::Deltas {
        hints.push((Section::Deltas, &[Action::OpenDeltaFilter], "filter deltas"));
        hints.push((Section::Deltas, &[Action::OpenDeltaDiff], "diff"));
    }
    hints.extend([
        (Section::Normal, &[Action::ToggleHelp][..], "help"),
        (Section::Normal, &[Action::Quit], "quit"),
        (Section::Normal, &[Action::OpenCommand], "command"),
        (Section::Normal, &[Action::OpenFilter], "filter"),
        (Section::Normal, &[Action::Describe], "describe"),
        (
            Section::Normal,
            &[Action::SortNext, Action::SortReverse],
            "sort",
        ),
        (Section::Normal, &[Action::ToggleWide], "wide"),
        (Section::Normal, &[Action::TogglePanels], "panels"),
    ]);
    let mut line = String::new();
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

/// `1.2ms`, `340µs`, `-` when unknown.
fn seconds(value: Option<f64>) -> String {
    match value {
        None => "-".into(),
        Some(s) if s >= 1.0 => format!("{s:.1}s"),
        Some(s) if s >= 1e-3 => format!("{:.1}ms", s * 1e3),
        Some(s) => format!("{:.0}µs", s * 1e6),
    }
}
