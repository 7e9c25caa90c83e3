//! Fuzzy text filtering of `namespace/name` keys.
//!
//! A key matches when the text's characters appear in it in order, ignoring ASCII case (the
//! criterion of skim's and fzf's matchers, without their scores: a table sorted by a column
//! has no use for scores, and scoring every key costs ~10x more).
//!
//! The passes run on a view's job thread (see `live::ViewWorker::set_text`): each keystroke
//! sends the whole text, only the newest is run, and a pass still going when another
//! keystroke arrives gives up between chunks of rows.

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
}
