//! A controller's /metrics page on hostile bytes: no panic, the page and the `Reading` refuse
//! the same line, and a page read, written again, reads back the same (see
//! `kscope_fuzz::metrics_page`). `cargo +nightly fuzz run -O -a metrics_page` (docs/fuzzing.md).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kscope_fuzz::metrics_page::check(data);
});
