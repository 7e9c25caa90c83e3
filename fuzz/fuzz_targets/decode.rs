//! Pods, list pages and watch lines through kscope's decoders and serde_json: any panic, and
//! any disagreement on what both read, is a finding (see `kscope_fuzz::differential`).
//! `cargo +nightly fuzz run -O -a decode` (docs/fuzzing.md).

#![no_main]

use kscope_fuzz::differential::{Choices, check_bytes, check_structured};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The bytes as they are, then as the choices of one structured case.
    check_bytes(data);
    check_structured(&mut Choices::new(data));
});
