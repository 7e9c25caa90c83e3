//! The metrics page fuzz target's checks (`fuzz/fuzz_targets/metrics_page.rs`, docs/fuzzing.md)
//! on its seeds: each seed whole, cut at every byte, and with bytes that mean something to the
//! format put in at a spread of places.

#[path = "../../fuzz/src/metrics_page.rs"]
mod page_checks;

use std::path::Path;

#[test]
fn the_metrics_page_fuzz_checks_hold_on_the_seeds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds-metrics");
    let mut seeds = 0;
    for entry in std::fs::read_dir(&dir).expect("the seeds") {
        let path = entry.expect("a seed").path();
        let seed = std::fs::read(&path).expect("a seed");
        let text = String::from_utf8(seed.clone()).expect("a seed is text");
        // A seed is a page the parser reads: the write-back check runs on it whole.
        if let Err(e) = kscope_index_views::metrics::parse(&text) {
            panic!("{}: {e}", path.display());
        }
        page_checks::check(&seed);
        for end in 0..seed.len() {
            page_checks::check(&seed[..end]);
        }
        for at in (0..seed.len()).step_by(7) {
            for byte in *b"{}=\",\\ \n#e+" {
                let mut changed = seed.clone();
                changed[at] = byte;
                page_checks::check(&changed);
            }
        }
        seeds += 1;
    }
    assert_eq!(seeds, 2);
}
