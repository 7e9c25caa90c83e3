//! The replay server's reading of a recording (`kscope_sim::Timeline`: what
//! `kscope sim --replay` and `kscope replay` serve) on hostile bytes. The file reader under it
//! is the `recording` target's; this one covers what the replay builds on top: segments cut
//! at each relist, their steps, and the checkpoints that make a seek fold at most about one
//! store's worth of events. Two cases per input:
//!
//! - the bytes as a file, read as `kscope sim --replay` reads one;
//! - the bytes' lines that decode as records, in their order (the block CRCs stop most
//!   mutations of a whole file at its first block, so this is where mutations reach the
//!   segment builder).
//!
//! Either way nothing panics, and in every segment the state after any number of steps, its
//! resourceVersion and each object in it are what a fold of the steps from the segment's
//! start gives, whichever checkpoint they were read from. `tests/it/replay_reader.rs` runs
//! both on the seeds too.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Cursor;

use kscope_informers::record::format::Record;
use kscope_sim::{Segment, Timeline};

/// Every this many steps each object is looked up, not only those the steps near it touch:
/// a lookup of all at every step would make a long seed quadratic in its objects.
const WHOLE_EVERY: usize = 61;

/// Runs both cases on `data`; panics on a finding.
pub fn check(data: &[u8]) {
    if let Ok(timeline) = Timeline::from_reader(Cursor::new(data)) {
        check_timeline(&timeline);
    }
    let records: Vec<Record> = data
        .split(|b| *b == b'\n')
        .filter_map(|line| serde_json::from_slice(line).ok())
        .collect();
    check_timeline(&Timeline::from_records(&records));
}

fn check_timeline(timeline: &Timeline) {
    for (kind, segments) in &timeline.kinds {
        for (i, segment) in segments.iter().enumerate() {
            check_segment(segment, &format!("{kind} segment {i}"));
        }
    }
}

/// Every prefix of the segment's steps against a fold kept here, step by step.
fn check_segment(segment: &Segment, name: &str) {
    let (start, start_rv) = segment.state_after(0);
    assert_eq!(start_rv, segment.rv, "{name}: the start's resourceVersion");
    let mut folded: BTreeMap<String, String> = start
        .iter()
        .map(|(k, v)| (k.clone(), v.get().to_string()))
        .collect();
    let mut rv = segment.rv;
    for played in 0..=segment.steps.len() {
        if let Some(step) = played.checked_sub(1).and_then(|i| segment.steps.get(i)) {
            match step.event_type.as_str() {
                "ADDED" | "MODIFIED" => {
                    folded.insert(step.key.clone(), step.object.get().to_string());
                }
                "DELETED" => {
                    folded.remove(&step.key);
                }
                _ => {}
            }
            rv = rv.max(step.rv);
        }
        let (objects, got_rv) = segment.state_after(played);
        let objects: BTreeMap<String, String> = objects
            .iter()
            .map(|(k, v)| (k.clone(), v.get().to_string()))
            .collect();
        assert_eq!(objects, folded, "{name}: the state after {played} steps");
        assert_eq!(
            got_rv, rv,
            "{name}: the resourceVersion after {played} steps"
        );
        assert_eq!(segment.rv_after(played), rv, "{name}: rv_after({played})");
        // The objects the last step and the next touch; every few steps (and at the end)
        // each object the fold holds and each one a step touched, deleted ones included.
        let near = [played.checked_sub(1), Some(played)]
            .into_iter()
            .flatten()
            .filter_map(|i| segment.steps.get(i))
            .map(|s| &s.key);
        let keys: BTreeSet<&String> = if played % WHOLE_EVERY == 0 || played == segment.steps.len()
        {
            folded
                .keys()
                .chain(segment.steps.iter().map(|s| &s.key))
                .chain(near)
                .collect()
        } else {
            near.collect()
        };
        for key in keys {
            assert_eq!(
                segment
                    .object_after(played, key)
                    .map(|o| o.get().to_string()),
                folded.get(key).cloned(),
                "{name}: {key} after {played} steps"
            );
        }
    }
    assert_eq!(segment.last_rv(), rv, "{name}: the last resourceVersion");
    // However the receive times run (a hostile file need not keep them in order), a time
    // plays a count of steps the segment has.
    for at in segment
        .steps
        .iter()
        .map(|s| s.at)
        .chain([segment.at, i64::MIN, i64::MAX])
    {
        assert!(
            segment.played_by(at) <= segment.steps.len(),
            "{name}: played_by({at})"
        );
    }
}
