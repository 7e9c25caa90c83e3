//! Where each part of the screen goes, computed from the terminal's size before a frame is
//! drawn: the event loop sizes pages and windows from it, and drawing only reads it.

use ratatui::layout::{Constraint, Layout as Split, Rect};

/// Narrower or shorter than this, only a "too small" line is drawn.
pub const MIN_WIDTH: u16 = 40;
pub const MIN_HEIGHT: u16 = 10;
/// Panels need this much room besides the table; below it they collapse.
const PANELS_MIN_HEIGHT: u16 = 20;
const PANELS_MIN_WIDTH: u16 = 60;
/// Rows of the header at least (the detail overlay leaves it visible).
const HEADER_ROWS: u16 = 2;
/// The detail's border (2) and tab line.
const DETAIL_CHROME_ROWS: u16 = 3;
/// The log view's border (2), its streams line and its search bar.
const LOG_CHROME_ROWS: u16 = 4;

/// The first visible row of a list whose selection must stay on screen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scroll {
    offset: usize,
}

impl Scroll {
    /// Position of the first visible row.
    pub fn offset(self) -> usize {
        self.offset
    }

    /// Back to the top (a new list).
    pub fn reset(&mut self) {
        self.offset = 0;
    }

    /// The first visible row that keeps `selected` on screen in `height` rows of `total`,
    /// moving as little as possible.
    pub fn follow(&mut self, selected: Option<usize>, height: usize, total: usize) -> usize {
        if let Some(pos) = selected {
            if pos < self.offset {
                self.offset = pos;
            } else if height > 0 && pos >= self.offset + height {
                self.offset = pos + 1 - height;
            }
        }
        self.offset = self.offset.min(total.saturating_sub(height));
        self.offset
    }
}

/// The parts of a frame big enough to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Areas {
    pub header: Rect,
    pub table: Rect,
    pub panels: Option<Rect>,
    pub status: Rect,
    /// The detail overlay: everything below the header.
    pub detail: Rect,
}

/// One frame's layout: the whole area, and its parts unless it is too small to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub area: Rect,
    pub areas: Option<Areas>,
}

impl Layout {
    /// Splits `area`, with the delta and workqueue panels when `panels` asks for them and
    /// there is room.
    pub fn new(area: Rect, panels: bool) -> Self {
        Self::with_header(area, panels, HEADER_ROWS)
    }

    /// The same, with a header of `header_rows` rows (a long error takes more than two).
    pub fn with_header(area: Rect, panels: bool, header_rows: u16) -> Self {
        Self {
            area,
            areas: areas(area, panels, header_rows.max(HEADER_ROWS)),
        }
    }

    /// Table rows that fit below the column titles.
    pub fn table_rows(&self) -> usize {
        self.areas
            .map_or(0, |a| usize::from(a.table.height.saturating_sub(1)))
    }

    /// Delta lines that fit in the delta panel (inside its border); 0 when it is not shown.
    pub fn delta_rows(&self) -> usize {
        self.areas
            .and_then(|a| a.panels)
            .map_or(0, |p| usize::from(p.height.saturating_sub(2)))
    }

    /// Log lines that fit in the log view, and its width.
    pub fn log_size(&self) -> (usize, usize) {
        self.areas.map_or((1, 1), |a| {
            (
                usize::from(a.detail.height.saturating_sub(LOG_CHROME_ROWS)),
                usize::from(a.detail.width.saturating_sub(2)),
            )
        })
    }

    /// Lines of YAML, history or diff that fit in the detail overlay.
    /// Columns of the detail's text inside its border.
    pub fn detail_columns(&self) -> usize {
        self.areas
            .map_or(1, |a| usize::from(a.detail.width.saturating_sub(2)))
    }

    pub fn detail_rows(&self) -> usize {
        self.areas.map_or(1, |a| {
            usize::from(a.detail.height.saturating_sub(DETAIL_CHROME_ROWS))
        })
    }
}

fn areas(area: Rect, panels: bool, header_rows: u16) -> Option<Areas> {
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        return None;
    }
    // Room for the table's titles and a few rows stays whatever the header asks.
    let header_rows = header_rows
        .min(area.height.saturating_sub(6))
        .max(HEADER_ROWS);
    let [header, body, status] = Split::vertical([
        Constraint::Length(header_rows),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(area);
    let [_, detail] =
        Split::vertical([Constraint::Length(header_rows), Constraint::Min(0)]).areas(area);
    let room = area.height >= PANELS_MIN_HEIGHT && area.width >= PANELS_MIN_WIDTH;
    let (table, panels) = if panels && room {
        let [table, panels] =
            Split::vertical([Constraint::Min(5), Constraint::Percentage(40)]).areas(body);
        (table, Some(panels))
    } else {
        (body, None)
    };
    Some(Areas {
        header,
        table,
        panels,
        status,
        detail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scroll_moves_only_to_keep_the_selection_visible() {
        let mut scroll = Scroll::default();
        assert_eq!(scroll.follow(Some(3), 10, 100), 0);
        assert_eq!(scroll.follow(Some(12), 10, 100), 3);
        assert_eq!(scroll.follow(Some(8), 10, 100), 3);
        assert_eq!(scroll.follow(Some(1), 10, 100), 1);
        assert_eq!(scroll.follow(Some(1), 10, 5), 0);
    }

    #[test]
    fn panels_collapse_when_there_is_no_room() {
        let big = Layout::new(Rect::new(0, 0, 120, 40), true);
        assert!(big.delta_rows() > 0);
        assert_eq!(big.detail_rows(), 40 - 2 - 3);
        let small = Layout::new(Rect::new(0, 0, 50, 15), true);
        assert_eq!(small.delta_rows(), 0);
        assert_eq!(small.table_rows(), 15 - 3 - 1);
        let tiny = Layout::new(Rect::new(0, 0, 30, 5), true);
        assert_eq!((tiny.table_rows(), tiny.detail_rows()), (0, 1));
    }
}
