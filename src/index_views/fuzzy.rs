//! Fuzzy search of `namespace/name` keys, on its own thread.
//!
//! Which keys match is decided by fuzzy-matcher's own criterion (SkimMatcherV2, ignoring
//! case, matches exactly when the text's characters appear in the key in order), checked
//! directly: scoring every key on every keystroke costs ~10x more, and a table sorted by a
//! column has no use for scores. Scores come from SkimMatcherV2 when asked for
//! ([`FuzzyMatches::ranked`]), over the matches only.
//!
//! Each keystroke sends the whole text. A search still running is cancelled (the thread
//! checks a generation counter between chunks). When the text extends the previous one, only
//! the previous matches can match, so the search narrows from them instead of starting over.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread;

use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;
use tokio::sync::watch;

use crate::informers::keys::Key;

type Hasher = foldhash::fast::RandomState;

/// Keys matched between two looks at the generation counter.
const CHUNK: usize = 4096;

/// Whether `key` fuzzy-matches `text`: the characters of `text` appear in `key` in order,
/// ignoring ASCII case. This is when SkimMatcherV2 (with `ignore_case`) gives a score.
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

/// The keys that matched one text, in the order they were searched, and as a set.
#[derive(Debug)]
pub struct FuzzyMatches {
    text: String,
    generation: u64,
    keys: Vec<Key>,
    set: HashSet<Key, Hasher>,
}

impl FuzzyMatches {
    pub(crate) fn new(text: String, generation: u64, keys: Vec<Key>) -> Self {
        Self {
            set: keys.iter().cloned().collect(),
            text,
            generation,
            keys,
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Which search this answers: later searches have higher generations.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Matching keys with SkimMatcherV2's scores, best first (ties by key).
    pub fn ranked(&self) -> Vec<(Key, i64)> {
        let matcher = SkimMatcherV2::default().ignore_case();
        let mut ranked: Vec<(Key, i64)> = self
            .keys
            .iter()
            .filter_map(|k| Some((k.clone(), matcher.fuzzy_match(k, &self.text)?)))
            .collect();
        ranked.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        ranked
    }

    pub fn keys(&self) -> impl Iterator<Item = &Key> {
        self.keys.iter()
    }

    pub fn contains(&self, key: &str) -> bool {
        self.set.contains(key)
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// The `candidates` that match `text`, in their order; `None` (given up) as soon as
/// `cancelled` says so.
pub fn fuzzy_match_keys<'a>(
    text: &str,
    candidates: impl Iterator<Item = &'a Key>,
    cancelled: impl Fn() -> bool,
) -> Option<Vec<Key>> {
    let mut matched = Vec::new();
    let mut candidates = candidates.peekable();
    while candidates.peek().is_some() {
        if cancelled() {
            return None;
        }
        matched.extend(
            candidates
                .by_ref()
                .take(CHUNK)
                .filter(|k| text_matches(k, text))
                .cloned(),
        );
    }
    Some(matched)
}

/// A fuzzy search thread. Dropping the handle ends the thread.
pub struct FuzzySearch {
    requests: mpsc::Sender<(u64, String)>,
    generation: Arc<AtomicU64>,
    results: watch::Receiver<Option<Arc<FuzzyMatches>>>,
}

impl FuzzySearch {
    /// Starts the thread. `candidates` gives every key that may match; it is called when a
    /// search cannot narrow from the previous result.
    pub fn spawn(candidates: impl Fn() -> Vec<Key> + Send + 'static) -> Self {
        let (requests, rx) = mpsc::channel::<(u64, String)>();
        let generation = Arc::new(AtomicU64::new(0));
        let (results_tx, results) = watch::channel(None);
        let current = generation.clone();
        thread::Builder::new()
            .name("kscope-fuzzy".into())
            .spawn(move || run(rx, current, results_tx, candidates))
            // Without a thread, searches are never answered; the view keeps its rows.
            .map_err(|e| tracing::error!("cannot start the fuzzy search thread: {e}"))
            .ok();
        Self {
            requests,
            generation,
            results,
        }
    }

    /// Searches for `text`, cancelling the search running for an earlier text.
    pub fn search(&self, text: &str) {
        let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        // The thread ends only when this handle is dropped.
        let _ = self.requests.send((generation, text.to_string()));
    }

    /// The latest completed search.
    pub fn results(&self) -> watch::Receiver<Option<Arc<FuzzyMatches>>> {
        self.results.clone()
    }
}

fn run(
    requests: mpsc::Receiver<(u64, String)>,
    current: Arc<AtomicU64>,
    results: watch::Sender<Option<Arc<FuzzyMatches>>>,
    candidates: impl Fn() -> Vec<Key>,
) {
    // The last completed result of the current chain of narrowing searches.
    let mut last: Option<Arc<FuzzyMatches>> = None;
    while let Ok(mut request) = requests.recv() {
        // Only the newest keystroke matters.
        while let Ok(newer) = requests.try_recv() {
            request = newer;
        }
        let (generation, text) = request;
        let cancelled = || current.load(Ordering::SeqCst) != generation;
        let matched = if text.is_empty() {
            last = None;
            Some(Vec::new())
        } else {
            match &last {
                Some(prev) if text.starts_with(prev.text.as_str()) => {
                    fuzzy_match_keys(&text, prev.keys(), cancelled)
                }
                _ => {
                    last = None;
                    let keys = candidates();
                    fuzzy_match_keys(&text, keys.iter(), cancelled)
                }
            }
        };
        let Some(keys) = matched else { continue };
        let matches = Arc::new(FuzzyMatches::new(text, generation, keys));
        if !matches.text.is_empty() {
            last = Some(matches.clone());
        }
        results.send_replace(Some(matches));
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn keys() -> Vec<Key> {
        [
            "web/frontend-1",
            "web/frontend-2",
            "db/postgres-0",
            "web/backend-1",
        ]
        .into_iter()
        .map(Key::from)
        .collect()
    }

    async fn next(rx: &mut watch::Receiver<Option<Arc<FuzzyMatches>>>) -> Arc<FuzzyMatches> {
        tokio::time::timeout(Duration::from_secs(10), rx.changed())
            .await
            .unwrap()
            .unwrap();
        rx.borrow_and_update().clone().unwrap()
    }

    #[tokio::test]
    async fn narrows_and_widens() {
        let calls = Arc::new(AtomicU64::new(0));
        let counted = calls.clone();
        let search = FuzzySearch::spawn(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            keys()
        });
        let mut rx = search.results();
        search.search("fr");
        let m = next(&mut rx).await;
        assert_eq!(m.text(), "fr");
        assert_eq!(m.len(), 2);
        search.search("fr2");
        let m = next(&mut rx).await;
        let got: Vec<&str> = m.keys().map(|k| &**k).collect();
        assert_eq!(got, ["web/frontend-2"]);
        assert!(m.contains("web/frontend-2"));
        assert_eq!(
            calls.load(Ordering::SeqCst),
            1,
            "narrowed from the last result"
        );
        search.search("pg");
        let m = next(&mut rx).await;
        assert_eq!(m.keys().next().map(|k| &**k), Some("db/postgres-0"));
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        search.search("");
        assert!(next(&mut rx).await.is_empty());
    }

    #[test]
    fn cancelled_search_gives_up() {
        let keys = keys();
        assert!(fuzzy_match_keys("w", keys.iter(), || true).is_none());
        let all = fuzzy_match_keys("w", keys.iter(), || false).unwrap();
        assert_eq!(all.len(), 3);
    }

    #[test]
    fn matches_exactly_when_skim_scores() {
        let matcher = SkimMatcherV2::default().ignore_case();
        let choices = [
            "web/frontend-7f9c8d6b5-x2k4p",
            "kube-system/coredns-5d78c9869d-abcde",
            "Team-A/Checkout-API-0",
            "ns/ünïcode-pod",
            "",
        ];
        let texts = [
            "",
            "w",
            "wfr",
            "FRONT",
            "x2k4pz",
            "ks/cd",
            "checkout api",
            "tA/cA",
            "ünï",
            "ÜN",
            "5d78",
            "zz",
            "web/",
            "/",
        ];
        for key in choices {
            for text in texts {
                assert_eq!(
                    text_matches(key, text),
                    matcher.fuzzy_match(key, text).is_some(),
                    "{key:?} {text:?}"
                );
            }
        }
        let m = FuzzyMatches {
            text: "fr".into(),
            generation: 1,
            keys: keys()
                .into_iter()
                .filter(|k| text_matches(k, "fr"))
                .collect(),
            set: HashSet::default(),
        };
        let ranked = m.ranked();
        assert_eq!(ranked.len(), 2);
        assert!(ranked[0].1 >= ranked[1].1);
    }
}
