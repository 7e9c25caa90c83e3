//! The main table, built from the copied window only: never more rows than fit. An empty
//! table says why it is empty: the informer's error, a filter, or no objects yet.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, Wrap};

use super::{Screen, Theme};
use crate::ui::table_pane::shown;

/// Columns are not narrowed below this many characters.
const MIN_COLUMN: usize = 6;

/// Narrows the widest columns until the row fits in `width` (with one space between
/// columns), sparing the first `keep` (NAMESPACE, NAME) until the others are down to
/// `MIN_COLUMN`: an image or selector is cut before the name that identifies the row.
fn fit(widths: &mut [usize], width: usize, keep: usize) {
    let total = |w: &[usize]| w.iter().sum::<usize>() + w.len().saturating_sub(1);
    let mut over = total(widths).saturating_sub(width);
    while over > 0 {
        let widest = |from: usize| {
            (from..widths.len())
                .filter(|&i| widths[i] > MIN_COLUMN)
                .max_by_key(|&i| (widths[i], i))
        };
        let Some(i) = widest(keep.min(widths.len())).or_else(|| widest(0)) else {
            return;
        };
        widths[i] -= 1;
        over -= 1;
    }
}

/// Why there are no rows, for the empty table's body.
fn empty_message(screen: &Screen, theme: Theme) -> Line<'static> {
    let h = screen.header;
    match &h.error {
        Some(error) => Line::from(Span::styled(format!("error: {error}"), theme.error())),
        None if !screen.state.filter.input.is_empty() => {
            Line::from(Span::styled("nothing matches the filter", theme.dim()))
        }
        None if !h.listed => Line::from(Span::styled(
            format!("waiting for the first list of {}…", h.resource),
            theme.dim(),
        )),
        None => Line::from(Span::styled(
            format!("no {} in {}", h.resource, h.scope),
            theme.dim(),
        )),
    }
}

pub fn draw(frame: &mut Frame, area: Rect, screen: &Screen, theme: Theme) {
    let pane = &screen.state.table;
    let shown = shown(screen.columns, pane.wide, screen.with_namespace);
    let sort = pane.sort;
    let mut titles: Vec<String> = Vec::with_capacity(shown.len());
    for &i in &shown {
        let arrow = match (sort.column == i, sort.descending) {
            (false, _) => "",
            (true, false) => "↑",
            (true, true) => "↓",
        };
        titles.push(format!("{}{arrow}", screen.columns[i].name));
    }
    // Widths from the titles and the visible rows only.
    let mut widths: Vec<usize> = titles.iter().map(|t| t.chars().count()).collect();
    let rows: Vec<Vec<&str>> = screen
        .window
        .rows
        .iter()
        .map(|row| {
            shown
                .iter()
                .map(|&i| row.cells.get(i).map_or("", String::as_str))
                .collect()
        })
        .collect();
    for cells in &rows {
        for (w, cell) in widths.iter_mut().zip(cells) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let keep = usize::from(screen.with_namespace) + 1;
    fit(&mut widths, usize::from(area.width), keep);
    let selected = screen.window.selected;
    let stale = screen.header.stale_since.is_some();
    let table_rows = rows.into_iter().enumerate().map(|(i, cells)| {
        let row = Row::new(cells.into_iter().map(|c| Cell::from(c.to_string())));
        let style = match (stale, selected == Some(screen.window.offset + i)) {
            (false, false) => return row,
            (false, true) => theme.selected(),
            (true, false) => theme.stale(),
            (true, true) => theme.stale().patch(theme.selected()),
        };
        row.style(style)
    });
    let constraints = widths
        .iter()
        .map(|&w| Constraint::Length(u16::try_from(w).unwrap_or(u16::MAX)));
    let header = Row::new(
        titles
            .into_iter()
            .map(|t| Cell::from(Span::styled(t, theme.title()))),
    );
    frame.render_widget(Table::new(table_rows, constraints).header(header), area);
    if screen.window.total == 0 {
        let [_, body] = Layout::vertical([Constraint::Length(2), Constraint::Min(1)]).areas(area);
        frame.render_widget(
            Paragraph::new(empty_message(screen, theme)).wrap(Wrap { trim: true }),
            body,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_cuts_the_widest_columns_after_the_name_first() {
        let mut widths = [13, 30, 5, 40, 20];
        fit(&mut widths, 80, 2);
        assert_eq!(widths, [13, 30, 5, 14, 14]);
        let mut widths = [13, 30, 5, 7, 7];
        fit(&mut widths, 40, 2);
        assert_eq!(widths, [10, 9, 5, 6, 6]);
        let mut widths = [8, 8];
        fit(&mut widths, 100, 1);
        assert_eq!(widths, [8, 8]);
    }
}
