//! `/` in the detail view: a search over the lines of its describe, YAML or diff, with n/N
//! stepping through the lines that match, as the log view's search does (the same smart-case
//! literal). Plain state, so the detail keeps it and a test builds it by hand.

use std::ops::Range;

use super::action::Action;
use super::line::LineEdit;
use super::logs::matcher::Matcher;

/// The search typed over a text, and where it matches.
#[derive(Debug, Clone, Default)]
pub struct TextSearch {
    pub input: String,
    pub edit: LineEdit,
    /// The search is being typed: plain keys go into it.
    pub typing: bool,
    /// The lines that match, in order.
    matches: Vec<usize>,
    /// Which of `matches` is current.
    current: usize,
    matcher: Option<Matcher>,
}

/// What a key did to the search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Searched {
    /// Nothing the text's owner must do.
    Kept,
    /// Show this line (the current match).
    Show(usize),
    /// Not a key of the search.
    Pass,
}

impl TextSearch {
    /// Something is typed or kept: Esc clears it before it leaves the view.
    pub fn active(&self) -> bool {
        self.typing || !self.input.is_empty()
    }

    /// Starts typing a new search.
    pub fn open(&mut self) {
        self.input.clear();
        self.typing = true;
        self.matcher = None;
        self.matches.clear();
    }

    pub fn clear(&mut self) {
        self.input.clear();
        self.typing = false;
        self.matcher = None;
        self.matches.clear();
    }

    /// A key typed into the search over `lines`, the text shown from line `top`: each edit
    /// searches again from there; Enter keeps the search, Esc drops it.
    pub fn type_key(&mut self, action: &Action, lines: &[String], top: usize) -> Searched {
        match action {
            Action::FilterAccept => {
                self.edit.remember(&self.input);
                self.typing = false;
                if self.input.is_empty() {
                    self.clear();
                }
                Searched::Kept
            }
            Action::FilterClear => {
                self.clear();
                Searched::Kept
            }
            action => match self.edit.apply(&mut self.input, action) {
                Some(true) => {
                    self.matcher = Matcher::new(&self.input);
                    self.find(lines);
                    self.current = self.matches.iter().position(|&l| l >= top).unwrap_or(0);
                    self.shown()
                }
                Some(false) => Searched::Kept,
                None => Searched::Pass,
            },
        }
    }

    /// n or N: the next or previous matching line, round the end.
    pub fn step(&mut self, forward: bool) -> Searched {
        let count = self.matches.len();
        if count == 0 {
            return Searched::Kept;
        }
        self.current = if forward {
            (self.current + 1) % count
        } else {
            (self.current + count - 1) % count
        };
        self.shown()
    }

    fn shown(&self) -> Searched {
        self.matches
            .get(self.current)
            .map_or(Searched::Kept, |&line| Searched::Show(line))
    }

    /// Searches `lines` again (the text was fetched again, or another tab is shown), keeping
    /// the current match on the same line or the next one.
    pub fn find(&mut self, lines: &[String]) {
        let at = self.matches.get(self.current).copied().unwrap_or(0);
        self.matches = match &self.matcher {
            Some(matcher) => (0..lines.len())
                .filter(|&i| matcher.is_match(&lines[i]))
                .collect(),
            None => Vec::new(),
        };
        self.current = self.matches.iter().position(|&l| l >= at).unwrap_or(0);
    }

    /// Where the search matches in `line`; `current` when it is the current match's line.
    pub fn ranges(&self, number: usize, line: &str) -> (Vec<Range<usize>>, bool) {
        match &self.matcher {
            Some(matcher) if self.matches.binary_search(&number).is_ok() => (
                matcher.find_all(line),
                self.matches.get(self.current) == Some(&number),
            ),
            _ => (Vec::new(), false),
        }
    }

    /// `3/17 matches`, `no match`.
    pub fn count(&self) -> String {
        match self.matches.len() {
            0 if self.input.is_empty() => String::new(),
            0 => "no match".into(),
            n => format!(
                "{}/{n} {}",
                self.current + 1,
                if n == 1 { "match" } else { "matches" }
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn typing_finds_the_first_match_from_the_top_and_n_goes_round() {
        let text = lines("image: a\nname: x\nimage: b\nimage: c\n");
        let mut search = TextSearch::default();
        search.open();
        let mut last = Searched::Kept;
        for c in "image".chars() {
            last = search.type_key(&Action::FilterChar(c), &text, 1);
        }
        assert_eq!(
            last,
            Searched::Show(2),
            "the first match from the top shown"
        );
        assert_eq!(search.count(), "2/3 matches");
        assert_eq!(search.step(true), Searched::Show(3));
        assert_eq!(search.step(true), Searched::Show(0));
        assert_eq!(search.step(false), Searched::Show(3));
        let (ranges, current) = search.ranges(3, &text[3]);
        assert_eq!(
            (ranges.len(), ranges.first(), current),
            (1, Some(&(0..5)), true)
        );
        assert_eq!(search.ranges(1, &text[1]), (vec![], false));
        assert_eq!(
            search.type_key(&Action::FilterAccept, &text, 0),
            Searched::Kept
        );
        assert!(search.active() && !search.typing);
        search.clear();
        assert!(!search.active());
        assert_eq!(search.type_key(&Action::SortNext, &text, 0), Searched::Pass);
    }
}
