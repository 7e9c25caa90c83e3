//! The main table, built from the copied window only: never more rows than fit. An empty
//! table says why it is empty: the informer's error, a filter, or no objects yet.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, Wrap};

use crate::action::Action;
use crate::component::{Component, Context};
use crate::effect::Effect;
use crate::screen::{Screen, Theme};
use crate::table_pane::{TablePane, shown};
use kscope_index_views::columns::RowHealth;
use kscope_index_views::live::ViewColumn;

/// Columns are not narrowed below this many characters; those that give first (index and
/// wide columns) go down to `MIN_FIRST`.
const MIN_COLUMN: usize = 6;
const MIN_FIRST: usize = 3;

/// How soon a column gives up width when a row does not fit: index, usage and wide columns first,
/// then the names (NAMESPACE, NAME), and last the columns that say how the object is doing
/// (READY, STATUS, RESTARTS, AGE), which a cut would make lie ("CrashLo").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Give {
    First,
    /// A column of sentences (an Event's MESSAGE): the widest there is, and the one whose
    /// end a reader misses least; it gives before the names, down to `MIN_PROSE`.
    Prose,
    Names,
    Last,
}

/// A MESSAGE column keeps this many characters before NAMESPACE or NAME are cut.
const MIN_PROSE: usize = 30;

fn give(column: &ViewColumn, position: usize) -> Give {
    if column.index || column.usage || column.wide {
        Give::First
    } else if column.name == "MESSAGE" {
        Give::Prose
    } else if column.cluster || column.namespace || (position == 0 && column.name == "NAME") {
        Give::Names
    } else {
        Give::Last
    }
}

/// A title cut over narrow cells keeps this many characters (its ellipsis included), so
/// that READY and RESTARTS stay apart (`READY`, `RESTA…`, not `RE…` twice) and NAMESPACE
/// does not read as NAME (`NAMES…`).
const MIN_TITLE: usize = 6;

/// Narrows columns until the row fits in `width` (one space between columns). First the
/// columns that give first (index and wide), widest first, down to `MIN_FIRST`; then titles
/// wider than every cell below them lose their slack, down to `MIN_TITLE` (a cut title
/// costs less than a cut value); then MESSAGE down to `MIN_PROSE`; then the widest of the
/// names down to `MIN_COLUMN`; then titles down to `MIN_FIRST`, MESSAGE further, and last
/// the status columns. `cells` is each column's widest cell.
fn fit(widths: &mut [usize], cells: &[usize], gives: &[Give], width: usize) {
    let total = |w: &[usize]| w.iter().sum::<usize>() + w.len().saturating_sub(1);
    let mut over = total(widths).saturating_sub(width);
    let narrow = |widths: &mut [usize], over: &mut usize, class: Give, least: usize| {
        while *over > 0 {
            let Some(i) = (0..widths.len())
                .filter(|&i| gives.get(i) == Some(&class) && widths[i] > least)
                .max_by_key(|&i| (widths[i], i))
            else {
                break;
            };
            widths[i] -= 1;
            *over -= 1;
        }
    };
    let slack = |widths: &mut [usize], over: &mut usize, least: usize| {
        // From the right: NAMESPACE, first, is the one that reads as NAME when cut.
        for (w, &cell) in widths.iter_mut().zip(cells).rev() {
            let slack = w.saturating_sub(cell.max(least)).min(*over);
            *w -= slack;
            *over -= slack;
        }
    };
    narrow(widths, &mut over, Give::First, MIN_FIRST);
    slack(widths, &mut over, MIN_TITLE);
    narrow(widths, &mut over, Give::Prose, MIN_PROSE);
    narrow(widths, &mut over, Give::Names, MIN_COLUMN);
    // A title cut short still costs less than a status cut ("Runni…").
    slack(widths, &mut over, MIN_FIRST);
    narrow(widths, &mut over, Give::Prose, MIN_COLUMN);
    narrow(widths, &mut over, Give::Last, MIN_COLUMN);
}

/// A column's title in `width` characters: the sort arrow, when it has one, stays (a cut
/// title must still say which column is sorted).
fn cut_title(title: &str, arrow: &str, width: usize) -> String {
    let arrow_width = arrow.chars().count();
    let name = cut(title, width.saturating_sub(arrow_width).max(1));
    format!("{name}{arrow}")
}

/// `text` in `width` characters: cut with an ellipsis when longer.
fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// `text` in `width` characters, an ellipsis in the middle when longer: names differ at
/// their ends (`web-7f9c8d6b5-x2x9q`), so both ends stay.
fn cut_middle(text: &str, width: usize) -> String {
    let count = text.chars().count();
    if count <= width {
        return text.to_string();
    }
    let keep = width.saturating_sub(1);
    let head = keep / 2;
    let tail = keep - head;
    let mut cut: String = text.chars().take(head).collect();
    cut.push('…');
    cut.extend(text.chars().skip(count - tail));
    cut
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

/// The table's visible rows under their column titles, the sort column marked.
pub fn draw(frame: &mut Frame, area: Rect, pane: &TablePane, screen: &Screen) {
    let theme = screen.theme();
    let shown = shown(screen.columns, pane.wide, screen.with_namespace);
    let sort = pane.sort;
    let mut titles: Vec<String> = Vec::with_capacity(shown.len());
    let mut arrows: Vec<&str> = Vec::with_capacity(shown.len());
    for &i in &shown {
        let arrow = match (sort.column == i, sort.descending) {
            (false, _) => "",
            (true, false) => "↑",
            (true, true) => "↓",
        };
        titles.push(format!("{}{arrow}", screen.columns[i].name));
        arrows.push(arrow);
    }
    // Widths from the titles and the visible rows only.
    let mut cell_widths = vec![0; titles.len()];
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
        for (w, cell) in cell_widths.iter_mut().zip(cells) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut widths: Vec<usize> = titles
        .iter()
        .zip(&cell_widths)
        .map(|(t, &cell)| t.chars().count().max(cell))
        .collect();
    // Positions among the kind's own columns: a CLUSTER column across clusters comes before.
    let leading = usize::from(screen.columns.first().is_some_and(|c| c.cluster));
    let gives: Vec<Give> = shown
        .iter()
        .map(|&i| give(&screen.columns[i], i.saturating_sub(leading)))
        .collect();
    fit(&mut widths, &cell_widths, &gives, usize::from(area.width));
    let selected = screen.window.selected;
    let stale = screen.header.stale_since.is_some();
    let health: Vec<RowHealth> = screen.window.rows.iter().map(|r| r.health).collect();
    let table_rows = rows.into_iter().enumerate().map(|(i, cells)| {
        let row =
            Row::new(cells.into_iter().zip(&widths).zip(&gives).map(
                |((c, &w), give)| match give {
                    Give::Names => Cell::from(cut_middle(c, w)),
                    _ => Cell::from(cut(c, w)),
                },
            ));
        let style = if stale {
            theme.stale()
        } else {
            theme.health(health[i])
        };
        let style = if pane.marks.contains(&screen.window.rows[i].key) {
            style.patch(theme.marked())
        } else {
            style
        };
        if selected == Some(screen.window.offset + i) {
            row.style(style.patch(theme.selected()))
        } else {
            row.style(style)
        }
    });
    let constraints = widths
        .iter()
        .map(|&w| Constraint::Length(u16::try_from(w).unwrap_or(u16::MAX)));
    let header = Row::new(
        shown
            .iter()
            .zip(&arrows)
            .zip(&widths)
            .map(|((&i, arrow), &w)| {
                let title = cut_title(&screen.columns[i].name, arrow, w);
                Cell::from(Span::styled(title, theme.title()))
            }),
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

impl Component for TablePane {
    fn handle(&mut self, action: &Action, ctx: &Context<'_>) -> Option<Effect> {
        self.handle_key(action, ctx.table, ctx.table_page(), ctx.with_namespace)
    }

    fn draw(&self, frame: &mut Frame, area: Rect, screen: &Screen<'_>) {
        draw(frame, area, self, screen);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_gives_index_columns_first_then_names_and_status_last() {
        use Give::{First, Last, Names};
        // NAMESPACE NAME READY STATUS RESTARTS AGE APP: 116 wide with the spaces.
        let gives = [Names, Names, Last, Last, Last, Last, First];
        let start = [13, 40, 5, 16, 12, 4, 20];
        // No title is wider than its cells here.
        let cells = start;
        let status = |w: &[usize]| w[2..6].to_vec();
        let total = |w: &[usize]| w.iter().sum::<usize>() + w.len() - 1;
        let mut widths = start;
        fit(&mut widths, &cells, &gives, 120);
        assert_eq!(widths, start, "fits already");
        fit(&mut widths, &cells, &gives, 100);
        assert_eq!(widths, [13, 40, 5, 16, 12, 4, 4], "APP first");
        fit(&mut widths, &cells, &gives, 64);
        assert_eq!(total(&widths), 64);
        assert_eq!(
            status(&widths),
            status(&start),
            "the names give, not STATUS"
        );
        assert!(widths[0] < 13 && widths[1] < 40 && widths[6] == 3);
        fit(&mut widths, &cells, &gives, 40);
        assert_eq!(widths[..2], [6, 6], "names at their least");
        assert!(status(&widths) < status(&start), "then the status columns");
        let mut widths = [8, 8];
        fit(&mut widths, &[8, 8], &[Names, Last], 100);
        assert_eq!(widths, [8, 8]);
        // RESTARTS over cells of one digit gives its title's slack, down to RESTA…, before
        // STATUS is cut; an index column gives before any title is cut.
        let mut widths = [7, 8];
        fit(&mut widths, &[7, 1], &[Last, Last], 14);
        assert_eq!(widths, [7, 6]);
        let mut widths = [5, 8, 10];
        fit(&mut widths, &[3, 1, 10], &[Last, Last, First], 20);
        assert_eq!(widths, [5, 8, 5], "READY and RESTARTS keep their titles");
        let mut widths = [5, 8, 3];
        fit(&mut widths, &[3, 1, 3], &[Last, Last, First], 16);
        assert_eq!(widths, [5, 6, 3], "RESTA…");
    }

    /// `:events` at 120 columns: MESSAGE gives before NAMESPACE is cut.
    #[test]
    fn an_event_message_gives_before_the_namespace() {
        use Give::{Last, Names, Prose};
        // NAMESPACE LAST SEEN TYPE REASON OBJECT MESSAGE
        let gives = [Names, Last, Last, Last, Last, Prose];
        let start = [24, 9, 7, 16, 28, 90];
        let mut widths = start;
        fit(&mut widths, &start, &gives, 120);
        assert_eq!(widths[..5], start[..5], "{widths:?}");
        assert_eq!(widths[5], 120 - (24 + 9 + 7 + 16 + 28) - 5);
        fit(&mut widths, &start, &gives, 105);
        assert_eq!(widths[5], MIN_PROSE, "then the names give");
        assert_eq!(widths[0], 10);
    }

    #[test]
    fn a_cut_title_keeps_its_sort_arrow() {
        assert_eq!(cut_title("RESTARTS", "↓", 5), "RES…↓");
        assert_eq!(cut_title("READY", "", 5), "READY");
        assert_eq!(cut_title("AGE", "↑", 4), "AGE↑");
    }

    #[test]
    fn long_cells_end_in_an_ellipsis() {
        assert_eq!(cut("checkout-api-7f9c", 10), "checkout-…");
        assert_eq!(cut("web", 10), "web");
        assert_eq!(cut("héllo", 5), "héllo");
        assert_eq!(cut_middle("web-7f9c8d6b5-x2x9q", 11), "web-7…x2x9q");
        assert_eq!(cut_middle("web", 11), "web");
    }
}
