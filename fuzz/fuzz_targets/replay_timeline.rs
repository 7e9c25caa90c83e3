//! The replay server's segments and checkpoints on hostile bytes: no panic, and every state
//! read from a checkpoint is the fold from its segment's start (see
//! `kscope_fuzz::timeline`). `cargo +nightly fuzz run -O -a replay_timeline` (docs/fuzzing.md).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kscope_fuzz::timeline::check(data);
});
