//! The recording reader (`kscope_informers::record::format`) on hostile bytes. Two cases per
//! input:
//!
//! - the bytes as a file: opening, reading every block, indexing the block headers and
//!   folding the records into a store never panic, and the blocks read whole are the first
//!   blocks of the index, at the same offsets;
//! - the bytes' lines that decode as records, written with the `Writer` (a block every few
//!   records, a keyframe among them), then the file cut or one byte flipped where the input
//!   says: every record read back is the one written at its place (a damaged file yields a
//!   prefix of what was written, never a changed record), and the untouched file reads back
//!   whole. This is the crash-safety claim of `docs/recording.md`.
//!
//! `tests/it/replay.rs` runs both on the seeds too.

use std::io::Cursor;

use kscope_informers::record::format::{FORMAT_VERSION, Header, Reader, Record, Writer};
use kscope_informers::record::state::State;

/// Runs both cases on `data`; panics on a finding.
pub fn check(data: &[u8]) {
    check_file(data);
    check_written(data);
}

/// Every record of the whole blocks at the start of `bytes`, and whether the read stopped
/// on damage.
fn read_all(bytes: &[u8]) -> Option<(Vec<Record>, Vec<u64>, bool)> {
    let mut reader = Reader::new(Cursor::new(bytes)).ok()?;
    let mut records = Vec::new();
    let mut offsets = Vec::new();
    let damaged = loop {
        match reader.next_block() {
            Ok(Some((info, block))) => {
                offsets.push(info.offset);
                records.extend(block);
            }
            Ok(None) => break false,
            Err(_) => break true,
        }
    };
    Some((records, offsets, damaged))
}

fn check_file(data: &[u8]) {
    let Some((records, offsets, _)) = read_all(data) else {
        return;
    };
    let mut state = State::default();
    for record in &records {
        state.apply(record);
    }
    let _ = state.keyframes(0);
    let mut reader = match Reader::new(Cursor::new(data)) {
        Ok(reader) => reader,
        Err(e) => panic!("the header read once and not twice: {e}"),
    };
    let Ok((index, _)) = reader.index() else {
        return;
    };
    let indexed: Vec<u64> = index.iter().map(|b| b.offset).collect();
    assert!(
        indexed.starts_with(&offsets),
        "blocks read {offsets:?} are not the first indexed {indexed:?}"
    );
}

fn json(record: &Record) -> String {
    serde_json::to_string(record).unwrap_or_default()
}

fn check_written(data: &[u8]) {
    let records: Vec<Record> = data
        .split(|b| *b == b'\n')
        .filter_map(|line| serde_json::from_slice(line).ok())
        .collect();
    if records.is_empty() {
        return;
    }
    let header = Header {
        format_version: FORMAT_VERSION,
        kscope_version: "fuzz".into(),
        context: None,
        server: "https://127.0.0.1:1".into(),
        kinds: vec!["pods".into()],
        namespace: None,
        start_time: "2026-01-01T00:00:00Z".into(),
    };
    let written = {
        let Ok(mut writer) = Writer::new(Vec::new(), &header) else {
            return;
        };
        let mut state = State::default();
        for (i, record) in records.iter().enumerate() {
            state.apply(record);
            if writer.append(record).is_err() {
                return;
            }
            if i % 3 == 2 && writer.flush().is_err() {
                return;
            }
            if i == records.len() / 2 && writer.keyframe(&state.keyframes(0)).is_err() {
                return;
            }
        }
        match writer.finish() {
            Ok(bytes) => bytes,
            Err(_) => return,
        }
    };
    let wanted: Vec<String> = records.iter().map(json).collect();
    let Some((read, _, damaged)) = read_all(&written) else {
        panic!("a file the Writer wrote does not open");
    };
    assert!(!damaged, "a file the Writer wrote reads as damaged");
    let read: Vec<String> = read
        .iter()
        .filter(|r| !matches!(r, Record::Keyframe { .. }))
        .map(json)
        .collect();
    assert_eq!(read, wanted, "what was written does not read back");

    // Damage where the input's first bytes say: a cut, or one byte flipped.
    let at = data
        .iter()
        .take(4)
        .fold(0usize, |acc, b| acc * 256 + usize::from(*b))
        % written.len();
    let mut cut = written.clone();
    if data.len().is_multiple_of(2) {
        cut.truncate(at);
    } else {
        cut[at] ^= 1u8 << (data.len() % 8);
    }
    if let Some((read, _, _)) = read_all(&cut) {
        let read: Vec<String> = read
            .iter()
            .filter(|r| !matches!(r, Record::Keyframe { .. }))
            .map(json)
            .collect();
        assert!(
            wanted.starts_with(&read),
            "a damaged file read back records that were not written there"
        );
    }
}
