//! Free-text filtering of rows: what `/crash` finds.
//!
//! Plain text matches a row, as k9s's filter does, when its `namespace/name` or one of its
//! cells as shown (STATUS, READY, NODE, a message...) contains it, ignoring ASCII case: so
//! `crash` finds `CrashLoopBackOff` and `oom` `OOMKilled`. (A fuzzy match finds
//! `checkout-prod/checkout-gateway-2-bkxvzndshs` for `crash` too: long generated names hold
//! most letters in some order.) `-f text` is the fuzzy match on the key, the characters of
//! `text` in order ignoring ASCII case (skim's and fzf's criterion without their scores: a
//! table sorted by a column has no use for scores, and scoring every key costs ~10x more),
//! as k9s's `-f`. `!text` keeps the rows that do not match; `~re` matches a regular
//! expression against the key and each cell (`!~re` inverts it).
//!
//! The passes run on a view's job thread (see `live::ViewWorker::set_text`): each keystroke
//! sends the whole text, only the newest is run, and a pass still going when another
//! keystroke arrives gives up between chunks of rows.

use regex::{Regex, RegexBuilder};

/// Whether `key` fuzzy-matches `text`: the characters of `text` appear in `key` in order,
/// ignoring ASCII case.
pub fn text_matches(key: &str, text: &str) -> bool {
    if key.is_ascii() && text.is_ascii() {
        let mut key = key.bytes();
        text.bytes()
            .all(|t| key.any(|k| k.eq_ignore_ascii_case(&t)))
    } else {
        let mut key = key.chars();
        text.chars()
            .all(|t| key.any(|k| k.eq_ignore_ascii_case(&t)))
    }
}

/// Whether `haystack` contains `needle`, ignoring ASCII case.
fn contains_ignoring_case(haystack: &str, needle: &str) -> bool {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    n.is_empty() || h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
}

/// How a filter's free text tests a row.
#[derive(Debug, Clone)]
enum Matcher {
    /// A substring of the key or of a cell.
    Text(String),
    /// Fuzzy on the key, a substring of a cell.
    Fuzzy(String),
    /// A regular expression, case-insensitive unless it says otherwise, on the key or a cell.
    Regex(Regex),
}

/// A filter's free text, compiled: plain (`crash`), inverted (`!crash`) or a regular
/// expression (`~^web-`).
#[derive(Debug, Clone)]
pub struct TextPattern {
    matcher: Matcher,
    invert: bool,
}

/// Free text whose regular expression does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("regular expression {pattern:?}: {message}")]
pub struct PatternError {
    pub pattern: String,
    pub message: String,
}

impl TextPattern {
    /// The pattern of a filter's free text; `None` for empty text (and for a lone `!` or
    /// `~`, which narrow nothing yet).
    pub fn parse(text: &str) -> Result<Option<Self>, PatternError> {
        let (invert, rest) = match text.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let matcher = match rest.strip_prefix('~') {
            Some("") => return Ok(None),
            Some(re) => Matcher::Regex(
                RegexBuilder::new(re)
                    .case_insensitive(true)
                    .build()
                    .map_err(|e| PatternError {
                        pattern: re.to_string(),
                        message: e.to_string(),
                    })?,
            ),
            None => match rest.strip_prefix("-f") {
                Some(fuzzy) if fuzzy.is_empty() || fuzzy.starts_with(' ') => {
                    match fuzzy.trim_start() {
                        "" => return Ok(None),
                        fuzzy => Matcher::Fuzzy(fuzzy.to_string()),
                    }
                }
                _ if rest.is_empty() => return Ok(None),
                _ => Matcher::Text(rest.to_string()),
            },
        };
        Ok(Some(Self { matcher, invert }))
    }

    /// Whether the row of `key`, whose cells as shown `cells` gives (asked only when the
    /// key alone does not decide), is kept.
    pub fn matches<S: AsRef<str>>(&self, key: &str, cells: impl FnOnce() -> Vec<S>) -> bool {
        let found = match &self.matcher {
            Matcher::Text(text) => {
                contains_ignoring_case(key, text)
                    || cells()
                        .iter()
                        .any(|c| contains_ignoring_case(c.as_ref(), text))
            }
            Matcher::Fuzzy(text) => {
                text_matches(key, text)
                    || cells()
                        .iter()
                        .any(|c| contains_ignoring_case(c.as_ref(), text))
            }
            Matcher::Regex(re) => {
                re.is_match(key) || cells().iter().any(|c| re.is_match(c.as_ref()))
            }
        };
        found != self.invert
    }

    /// Whether every row `text` keeps is among those `previous` kept, so that a pass for
    /// `text` may read only `previous`'s rows: plain or fuzzy text typed on at its end.
    pub fn narrows(text: &str, previous: &str) -> bool {
        let same = |a: Option<Self>, b: Option<Self>| match (a, b) {
            (Some(a), Some(b)) => match (a.matcher, b.matcher) {
                (Matcher::Text(a), Matcher::Text(b)) | (Matcher::Fuzzy(a), Matcher::Fuzzy(b)) => {
                    a.starts_with(b.as_str())
                }
                _ => false,
            },
            _ => false,
        };
        let parsed = |t: &str| Self::parse(t).ok().flatten().filter(|p| !p.invert);
        same(parsed(text), parsed(previous))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_characters_in_order_ignoring_case() {
        assert!(text_matches("web/frontend-1", "wfr1"));
        assert!(text_matches("web/frontend-1", "WEB/F"));
        assert!(!text_matches("web/frontend-1", "1web"));
        assert!(text_matches("ns/ünïcode", "ünC"));
        assert!(!text_matches("ns/ünïcode", "Ü"), "ASCII case only");
        assert!(!text_matches("ns/pod", "podx"));
    }

    fn keeps(text: &str, key: &str, cells: &[&str]) -> bool {
        TextPattern::parse(text)
            .unwrap()
            .unwrap()
            .matches(key, || cells.to_vec())
    }

    #[test]
    fn plain_text_finds_the_key_or_a_cell_as_shown() {
        let row = ["0/1", "CrashLoopBackOff", "7 (3s ago)", "node-2"];
        assert!(keeps("crash", "shop/api-1", &row));
        assert!(keeps("NODE-2", "shop/api-1", &row));
        assert!(keeps("P/API", "shop/api-1", &row));
        assert!(!keeps("pending", "shop/api-1", &row));
        assert!(!keeps("sapi", "shop/api-1", &row), "a substring, not fuzzy");
        assert!(keeps("-f sapi", "shop/api-1", &row), "-f: fuzzy on the key");
        assert!(
            !keeps("-f cboff", "shop/api-1", &row),
            "cells are matched as substrings, not fuzzily"
        );
        assert!(TextPattern::parse("-f ").unwrap().is_none());
    }

    #[test]
    fn bang_inverts_and_tilde_is_a_regex() {
        let row = ["1/1", "Running"];
        assert!(!keeps("!running", "a/web-1", &row));
        assert!(keeps("!crash", "a/web-1", &row));
        assert!(keeps("~^a/web-\\d$", "a/web-1", &row));
        assert!(keeps("~^run", "a/web-1", &row), "a cell, ignoring case");
        assert!(!keeps("~^web", "a/web-1", &row));
        assert!(keeps("!~^web", "a/web-1", &row));
        assert!(TextPattern::parse("!").unwrap().is_none());
        assert!(TextPattern::parse("~").unwrap().is_none());
        assert!(TextPattern::parse("").unwrap().is_none());
        let err = TextPattern::parse("~(").unwrap_err();
        assert_eq!(err.pattern, "(");
    }

    #[test]
    fn only_plain_text_typed_on_narrows() {
        assert!(TextPattern::narrows("cra", "cr"));
        assert!(TextPattern::narrows("-f cra", "-f cr"));
        assert!(
            !TextPattern::narrows("-f c", "-f"),
            "-f alone narrows nothing"
        );
        assert!(!TextPattern::narrows("cr", "cra"));
        assert!(!TextPattern::narrows("!cra", "!cr"), "inverted text widens");
        assert!(!TextPattern::narrows("~cr.", "~cr"));
    }
}
