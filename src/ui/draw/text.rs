//! Pieces of text more than one part of the screen draws.

use ratatui::text::Span;

use crate::line::LineEdit;
use crate::screen::Theme;

/// A line being typed, as it fits in `width`: the cursor shown on its character (or after
/// the text), a long line scrolled to keep it on screen.
pub(crate) fn typed_spans(
    text: &str,
    edit: &LineEdit,
    width: usize,
    theme: Theme,
) -> Vec<Span<'static>> {
    let shown = edit.visible(text, width);
    let at = match shown.at {
        Some(c) => Span::styled(c.to_string(), theme.selected()),
        None => Span::styled("█", theme.dim()),
    };
    vec![Span::raw(shown.before), at, Span::raw(shown.after)]
}

/// `1.2ms`, `340µs`, `-` when unknown.
pub(crate) fn seconds(value: Option<f64>) -> String {
    match value {
        None => "-".into(),
        Some(s) if s >= 1.0 => format!("{s:.1}s"),
        Some(s) if s >= 1e-3 => format!("{:.1}ms", s * 1e3),
        Some(s) => format!("{:.0}µs", s * 1e6),
    }
}

/// `1 row`, `2 rows`, `0 matches`: a count with its noun in the number it takes (`noun` and
/// its plural given, as English plurals are not one rule).
pub(crate) fn counted(count: usize, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::counted;

    #[test]
    fn one_is_singular() {
        assert_eq!(counted(1, "row", "rows"), "1 row");
        assert_eq!(counted(0, "match", "matches"), "0 matches");
        assert_eq!(counted(2, "line", "lines"), "2 lines");
    }
}
