//! Editing one line of input, as a shell does: the filter bar, the command bar and the
//! delta filter keep their text; this keeps the cursor (counted from the end, so text set
//! from outside puts it at the end), the kept lines for Up/Down, and the window a long line
//! shows around the cursor.

use super::action::Action;

/// Lines kept for Up/Down, newest last.
const HISTORY: usize = 50;

/// The cursor and history of one input line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineEdit {
    /// Characters after the cursor.
    back: usize,
    history: Vec<String>,
    /// While Up/Down walk the history: the entry shown, and the line typed before.
    browsing: Option<(usize, String)>,
}

/// What a line shows in a given width: the part before the cursor, the character under it
/// (`None` at the end) and the part after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Visible {
    pub before: String,
    pub at: Option<char>,
    pub after: String,
}

impl LineEdit {
    /// The cursor's position in characters from the start of `text`.
    pub fn cursor(&self, text: &str) -> usize {
        let len = text.chars().count();
        len - self.back.min(len)
    }

    /// Applies an editing action to `text`; false when `action` edits no line (the caller's
    /// own keys). `Some(true)` when the text changed.
    pub fn apply(&mut self, text: &mut String, action: &Action) -> Option<bool> {
        let len = text.chars().count();
        self.back = self.back.min(len);
        let at = len - self.back;
        let byte = |chars: usize| {
            text.char_indices()
                .nth(chars)
                .map_or(text.len(), |(i, _)| i)
        };
        let changed = match action {
            Action::FilterChar(c) | Action::CommandChar(c) => {
                text.insert(byte(at), *c);
                true
            }
            Action::FilterBackspace | Action::CommandBackspace => {
                if at == 0 {
                    return Some(false);
                }
                text.remove(byte(at - 1));
                true
            }
            Action::LineDelete => {
                if self.back == 0 {
                    return Some(false);
                }
                text.remove(byte(at));
                self.back -= 1;
                true
            }
            Action::LineLeft => {
                self.back = (self.back + 1).min(len);
                false
            }
            Action::LineRight => {
                self.back = self.back.saturating_sub(1);
                false
            }
            Action::LineStart => {
                self.back = len;
                false
            }
            Action::LineEnd => {
                self.back = 0;
                false
            }
            Action::LineDeleteWord => {
                let chars: Vec<char> = text.chars().collect();
                let mut start = at;
                while start > 0 && chars[start - 1] == ' ' {
                    start -= 1;
                }
                while start > 0 && chars[start - 1] != ' ' {
                    start -= 1;
                }
                text.replace_range(byte(start)..byte(at), "");
                start != at
            }
            Action::LineDeleteToStart => {
                text.replace_range(..byte(at), "");
                at != 0
            }
            Action::LineHistoryPrevious => return Some(self.walk(text, true)),
            Action::LineHistoryNext => return Some(self.walk(text, false)),
            _ => return None,
        };
        if changed {
            self.browsing = None;
        }
        Some(changed)
    }

    /// Up (`older`) or Down through the kept lines; Down past the newest brings back what
    /// was typed. The cursor goes to the end.
    fn walk(&mut self, text: &mut String, older: bool) -> bool {
        let next = match (&self.browsing, older) {
            (None, true) => self.history.len().checked_sub(1),
            (None, false) => return false,
            (Some((i, _)), true) => Some(i.saturating_sub(1)),
            (Some((i, _)), false) => Some(i + 1),
        };
        let typed = self
            .browsing
            .take()
            .map_or_else(|| text.clone(), |(_, typed)| typed);
        let shown = match next {
            Some(i) if i < self.history.len() => {
                self.browsing = Some((i, typed));
                self.history[i].clone()
            }
            Some(_) => typed,
            None => return false,
        };
        self.back = 0;
        let changed = *text != shown;
        *text = shown;
        changed
    }

    /// Keeps `text` for Up/Down (a line run or accepted), and leaves the history walk.
    pub fn remember(&mut self, text: &str) {
        self.browsing = None;
        self.back = 0;
        if text.trim().is_empty() || self.history.last().is_some_and(|last| last == text) {
            return;
        }
        if self.history.len() == HISTORY {
            self.history.remove(0);
        }
        self.history.push(text.to_string());
    }

    /// The part of `text` that fits in `width` characters with the cursor on screen: a long
    /// line scrolls so the cursor stays visible, the cursor's cell included.
    pub fn visible(&self, text: &str, width: usize) -> Visible {
        let chars: Vec<char> = text.chars().collect();
        let cursor = self.cursor(text);
        let width = width.max(1);
        // The cursor takes a cell of its own at the end of the line.
        let first = (cursor + 1).saturating_sub(width);
        let last = (first + width).min(chars.len());
        let before: String = chars[first..cursor].iter().collect();
        let at = chars.get(cursor).copied().filter(|_| cursor < last);
        let after: String = chars[(cursor + 1).min(last)..last].iter().collect();
        Visible { before, at, after }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(text: &str) -> (LineEdit, String) {
        let mut edit = LineEdit::default();
        let mut line = String::new();
        for c in text.chars() {
            edit.apply(&mut line, &Action::FilterChar(c));
        }
        (edit, line)
    }

    #[test]
    fn the_cursor_moves_and_edits_in_place() {
        let (mut edit, mut line) = typed("app=web");
        for _ in 0..3 {
            edit.apply(&mut line, &Action::LineLeft);
        }
        assert_eq!(edit.cursor(&line), 4);
        edit.apply(&mut line, &Action::FilterChar('x'));
        assert_eq!(line, "app=xweb");
        edit.apply(&mut line, &Action::FilterBackspace);
        edit.apply(&mut line, &Action::LineDelete);
        assert_eq!(line, "app=eb");
        edit.apply(&mut line, &Action::LineStart);
        assert_eq!(edit.apply(&mut line, &Action::FilterBackspace), Some(false));
        edit.apply(&mut line, &Action::LineEnd);
        assert_eq!(edit.cursor(&line), 6);
        assert_eq!(edit.apply(&mut line, &Action::SortNext), None);
    }

    #[test]
    fn words_and_the_start_of_the_line_go_at_once() {
        let (mut edit, mut line) = typed("app=web  node=n1");
        edit.apply(&mut line, &Action::LineDeleteWord);
        assert_eq!(line, "app=web  ");
        edit.apply(&mut line, &Action::LineDeleteWord);
        assert_eq!(line, "");
        let (mut edit, mut line) = typed("héllo wörld");
        edit.apply(&mut line, &Action::LineLeft);
        edit.apply(&mut line, &Action::LineDeleteToStart);
        assert_eq!(line, "d");
        assert_eq!(edit.cursor(&line), 0);
    }

    #[test]
    fn up_and_down_walk_the_lines_kept() {
        let mut edit = LineEdit::default();
        edit.remember("app=web");
        edit.remember("app=db");
        edit.remember("app=db");
        edit.remember("  ");
        let mut line = String::from("ty");
        edit.apply(&mut line, &Action::LineHistoryPrevious);
        assert_eq!(line, "app=db");
        edit.apply(&mut line, &Action::LineHistoryPrevious);
        assert_eq!(line, "app=web");
        edit.apply(&mut line, &Action::LineHistoryPrevious);
        assert_eq!(line, "app=web", "the oldest stays");
        edit.apply(&mut line, &Action::LineHistoryNext);
        assert_eq!(line, "app=db");
        edit.apply(&mut line, &Action::LineHistoryNext);
        assert_eq!(line, "ty", "back to what was typed");
        assert_eq!(edit.apply(&mut line, &Action::LineHistoryNext), Some(false));
        for n in 0..60 {
            edit.remember(&format!("q{n}"));
        }
        assert_eq!(edit.history.len(), HISTORY);
    }

    #[test]
    fn a_long_line_scrolls_to_keep_the_cursor_on_screen() {
        let (mut edit, line) = typed("0123456789");
        let shown = edit.visible(&line, 5);
        assert_eq!((shown.before.as_str(), shown.at), ("6789", None));
        let mut line = line;
        for _ in 0..8 {
            edit.apply(&mut line, &Action::LineLeft);
        }
        let shown = edit.visible(&line, 5);
        assert_eq!(
            (shown.before.as_str(), shown.at, shown.after.as_str()),
            ("01", Some('2'), "34")
        );
        let shown = edit.visible(&line, 80);
        assert_eq!(shown.after, "3456789");
    }
}
