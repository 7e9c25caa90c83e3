//! The log search: a literal, matched exactly when it has a capital and in either ASCII case
//! otherwise ("smart case"). Finding every match among a million kept lines is split across
//! the cores, each scanning its own run of lines.

use std::ops::Range;

use aho_corasick::AhoCorasick;
use memchr::memmem::Finder;

use super::ring::LogRing;

/// Below this many lines one thread scans them all: threads cost more than they save.
const PARALLEL_FROM: usize = 65_536;
/// At most this many threads scan.
const MAX_THREADS: usize = 4;

#[derive(Debug, Clone)]
pub enum Matcher {
    /// SIMD substring search, for text with a capital or no letters at all.
    Exact(Box<Finder<'static>>),
    /// Either ASCII case.
    Caseless(AhoCorasick),
}

impl Matcher {
    /// The matcher of `needle`, `None` for an empty one.
    pub fn new(needle: &str) -> Option<Self> {
        if needle.is_empty() {
            return None;
        }
        let has_letters = needle.chars().any(|c| c.is_ascii_alphabetic());
        if needle.chars().any(char::is_uppercase) || !has_letters {
            return Some(Self::Exact(Box::new(
                Finder::new(needle.as_bytes()).into_owned(),
            )));
        }
        // One literal pattern: building it fails only past limits a typed line cannot reach.
        AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build([needle])
            .ok()
            .map(Self::Caseless)
    }

    pub fn is_match(&self, text: &str) -> bool {
        match self {
            Self::Exact(finder) => finder.find(text.as_bytes()).is_some(),
            Self::Caseless(matcher) => matcher.is_match(text),
        }
    }

    /// Where it matches in `text`, left to right, not overlapping.
    pub fn find_all(&self, text: &str) -> Vec<Range<usize>> {
        match self {
            Self::Exact(finder) => {
                let len = finder.needle().len();
                finder
                    .find_iter(text.as_bytes())
                    .map(|at| at..at + len)
                    .collect()
            }
            Self::Caseless(matcher) => matcher
                .find_iter(text)
                .map(|m| m.start()..m.end())
                .collect(),
        }
    }

    /// The ids of the kept lines that match, oldest first.
    pub fn matches(&self, ring: &LogRing) -> Vec<u64> {
        let len = ring.len();
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_THREADS);
        if len < PARALLEL_FROM || threads < 2 {
            return self.scan(ring, 0..len);
        }
        let chunk = len.div_ceil(threads);
        std::thread::scope(|scope| {
            let parts: Vec<_> = (0..threads)
                .map(|i| {
                    let range = i * chunk..((i + 1) * chunk).min(len);
                    scope.spawn(move || self.scan(ring, range))
                })
                .collect();
            let mut all = Vec::new();
            for part in parts {
                // A scan does not panic (it only reads); if one did, its lines are left out.
                all.extend(part.join().unwrap_or_default());
            }
            all
        })
    }

    /// The ids of the matching lines at positions `range` of the ring.
    fn scan(&self, ring: &LogRing, range: Range<usize>) -> Vec<u64> {
        ring.range(range)
            .filter(|(_, line)| self.is_match(&line.text))
            .map(|(id, _)| id)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::ring::Line;

    #[test]
    fn smart_case() {
        let lower = Matcher::new("get").unwrap();
        assert!(lower.is_match("GET /") && lower.is_match("get /"));
        assert!(matches!(lower, Matcher::Caseless(_)));
        let exact = Matcher::new("GET").unwrap();
        assert!(exact.is_match("GET /") && !exact.is_match("get /"));
        assert!(matches!(Matcher::new("10.64."), Some(Matcher::Exact(_))));
        assert!(Matcher::new("").is_none());
        assert_eq!(lower.find_all("a get b GeT"), [2..5, 8..11]);
        assert_eq!(exact.find_all("GET GET"), [0..3, 4..7]);
    }

    #[test]
    fn a_parallel_scan_finds_what_one_thread_does_in_order() {
        let mut ring = LogRing::new(200_000);
        for i in 0..150_000u32 {
            ring.push(Line {
                source: 0,
                time: Some(i64::from(i)),
                text: if i % 1000 == 7 { "x NEEDLE y" } else { "x y" }.into(),
                cut: false,
            });
        }
        let matcher = Matcher::new("NEEDLE").unwrap();
        let found = matcher.matches(&ring);
        assert_eq!(found, matcher.scan(&ring, 0..ring.len()));
        assert_eq!(found.len(), 150);
        assert!(found.windows(2).all(|w| w[0] < w[1]));
    }
}
