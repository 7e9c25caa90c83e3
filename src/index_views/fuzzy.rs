//! Fuzzy search of `namespace/name` keys with fuzzy-matcher, on its own thread.
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

/// Whether `key` fuzzy-matches `text` (always, for empty text).
pub fn text_matches(matcher: &SkimMatcherV2, key: &str, text: &str) -> bool {
    text.is_empty() || matcher.fuzzy_match(key, text).is_some()
}

/// The keys that matched one text, best first, and as a set.
#[derive(Debug)]
pub struct FuzzyMatches {
    text: String,
    generation: u64,
    ranked: Vec<(Key, i64)>,
    set: HashSet<Key, Hasher>,
}

impl FuzzyMatches {
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Which search this answers: later searches have higher generations.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Matching keys with scores, best first (ties by key).
    pub fn ranked(&self) -> &[(Key, i64)] {
        &self.ranked
    }

    pub fn keys(&self) -> impl Iterator<Item = &Key> {
        self.ranked.iter().map(|(k, _)| k)
    }

    pub fn contains(&self, key: &str) -> bool {
        self.set.contains(key)
    }

    pub fn len(&self) -> usize {
        self.ranked.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranked.is_empty()
    }
}

/// Matches `text` against `candidates`, giving up (`None`) as soon as `cancelled` says so.
pub fn fuzzy_match_keys<'a>(
    matcher: &SkimMatcherV2,
    text: &str,
    candidates: impl Iterator<Item = &'a Key>,
    cancelled: impl Fn() -> bool,
) -> Option<Vec<(Key, i64)>> {
    let mut matched = Vec::new();
    let mut candidates = candidates.peekable();
    while candidates.peek().is_some() {
        if cancelled() {
            return None;
        }
        for key in candidates.by_ref().take(CHUNK) {
            if let Some(score) = matcher.fuzzy_match(key, text) {
                matched.push((key.clone(), score));
            }
        }
    }
    matched.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
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
    let matcher = SkimMatcherV2::default().ignore_case();
    // The last completed result of the current chain of narrowing searches.
    let mut last: Option<Arc<FuzzyMatches>> = None;
    while let Ok(mut request) = requests.recv() {
        // Only the newest keystroke matters.
        while let Ok(newer) = requests.try_recv() {
            request = newer;
        }
        let (generation, text) = request;
        let cancelled = || current.load(Ordering::SeqCst) != generation;
        let ranked = if text.is_empty() {
            last = None;
            Some(Vec::new())
        } else {
            match &last {
                Some(prev) if text.starts_with(prev.text.as_str()) => {
                    fuzzy_match_keys(&matcher, &text, prev.keys(), cancelled)
                }
                _ => {
                    last = None;
                    let keys = candidates();
                    fuzzy_match_keys(&matcher, &text, keys.iter(), cancelled)
                }
            }
        };
        let Some(ranked) = ranked else { continue };
        let matches = Arc::new(FuzzyMatches {
            set: ranked.iter().map(|(k, _)| k.clone()).collect(),
            text,
            generation,
            ranked,
        });
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
        let matcher = SkimMatcherV2::default();
        let keys = keys();
        assert!(fuzzy_match_keys(&matcher, "w", keys.iter(), || true).is_none());
        let all = fuzzy_match_keys(&matcher, "w", keys.iter(), || false).unwrap();
        assert_eq!(all.len(), 3);
    }
}
