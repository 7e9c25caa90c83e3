//! Fuzzy text filtering of `namespace/name` keys, on its own thread.
//!
//! A key matches when the text's characters appear in it in order, ignoring ASCII case (the
//! criterion of skim's and fzf's matchers, without their scores: a table sorted by a column
//! has no use for scores, and scoring every key costs ~10x more).
//!
//! Each keystroke sends the whole text. The thread runs only the newest text it has been
//! sent, and a run still going when another keystroke arrives is told to give up (it checks
//! a generation counter between chunks of rows).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread;

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

/// A search thread for typed text. Dropping the handle ends the thread.
pub struct FuzzySearch {
    requests: mpsc::Sender<(u64, String)>,
    generation: Arc<AtomicU64>,
}

impl FuzzySearch {
    /// Starts the thread. `search` is called with the text to search for and a function that
    /// says whether a later keystroke has cancelled it.
    pub fn spawn(search: impl Fn(&str, &dyn Fn() -> bool) + Send + 'static) -> Self {
        let (requests, rx) = mpsc::channel::<(u64, String)>();
        let generation = Arc::new(AtomicU64::new(0));
        let current = generation.clone();
        thread::Builder::new()
            .name("kscope-fuzzy".into())
            .spawn(move || run(rx, current, search))
            .map_err(|e| tracing::error!("cannot start the fuzzy search thread: {e}"))
            .ok();
        Self {
            requests,
            generation,
        }
    }

    /// Searches for `text`, cancelling the search for any earlier text.
    pub fn search(&self, text: &str) {
        let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        let _ = self.requests.send((generation, text.to_string()));
    }
}

fn run(
    requests: mpsc::Receiver<(u64, String)>,
    current: Arc<AtomicU64>,
    search: impl Fn(&str, &dyn Fn() -> bool),
) {
    while let Ok(mut request) = requests.recv() {
        while let Ok(newer) = requests.try_recv() {
            request = newer;
        }
        let (generation, text) = request;
        let cancelled = || current.load(Ordering::SeqCst) != generation;
        if !cancelled() {
            search(&text, &cancelled);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

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

    #[test]
    fn runs_the_newest_text_and_cancels_an_overtaken_search() {
        let (seen_tx, seen) = mpsc::channel();
        let (started_tx, started) = mpsc::channel();
        let (gate_tx, gate) = mpsc::channel::<()>();
        let search = FuzzySearch::spawn(move |text, cancelled| {
            if text == "a" {
                let _ = started_tx.send(());
                // Held until later keystrokes are queued.
                let _ = gate.recv();
            }
            let _ = seen_tx.send((text.to_string(), cancelled()));
        });
        search.search("a");
        started.recv_timeout(Duration::from_secs(10)).unwrap();
        search.search("ab");
        search.search("abc");
        gate_tx.send(()).unwrap();
        let wait = || seen.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(wait(), ("a".to_string(), true), "overtaken: cancelled");
        assert_eq!(wait(), ("abc".to_string(), false), "\"ab\" is skipped");
        search.search("");
        assert_eq!(wait(), (String::new(), false));
    }
}
