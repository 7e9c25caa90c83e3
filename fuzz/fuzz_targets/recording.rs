//! The recording reader on hostile bytes: no panic, whole blocks read in index order, and a
//! cut or flipped file reads back a prefix of what was written (see
//! `kscope_fuzz::recording`). `cargo +nightly fuzz run -O -a recording` (docs/fuzzing.md).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kscope_fuzz::recording::check(data);
});
