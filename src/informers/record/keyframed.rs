//! A recording's writer with its keyframe rule: it folds every record into the store each
//! kind holds and writes that store as a keyframe once the records since the last keyframe
//! outweigh it (and at least [`MIN_KEYFRAME_EVENTS`] events came), so a seek never reads
//! more than about two keyframes' worth and keyframes never dominate the file. `kscope
//! record` writes through it; the recording benchmark measures it as the recorder runs it.

use std::io::Write;

use super::format::{Header, Record, RecordError, Writer};
use super::state::State;

/// The fewest events between two keyframes.
pub const MIN_KEYFRAME_EVENTS: u64 = 1000;

/// A [`Writer`] that writes keyframes by the rule above.
pub struct KeyframedWriter<W: Write> {
    writer: Writer<W>,
    state: State,
    events: u64,
    records: u64,
    events_since_keyframe: u64,
    /// Raw bytes of records since the last keyframe, and the size of that keyframe.
    bytes_since_keyframe: usize,
    keyframe_bytes: usize,
}

impl<W: Write> KeyframedWriter<W> {
    pub fn new(writer: Writer<W>) -> Self {
        Self {
            writer,
            state: State::default(),
            events: 0,
            records: 0,
            events_since_keyframe: 0,
            bytes_since_keyframe: 0,
            keyframe_bytes: 0,
        }
    }

    /// As [`Writer::new`], with the header written.
    pub fn create(out: W, header: &Header) -> Result<Self, RecordError> {
        Ok(Self::new(Writer::new(out, header)?))
    }

    /// Appends `record`, which came as `raw_bytes` of the server's JSON, then a keyframe
    /// received `now` (µs since the epoch) if the rule asks for one.
    pub fn append(
        &mut self,
        record: &Record,
        raw_bytes: usize,
        now: i64,
    ) -> Result<(), RecordError> {
        self.state.apply(record);
        self.records += 1;
        if matches!(record, Record::Event { .. }) {
            self.events += 1;
            self.events_since_keyframe += 1;
        }
        self.bytes_since_keyframe += raw_bytes;
        self.writer.append(record)?;
        // Never in the middle of a list or a watch-list's initial events (`State::settled`):
        // the keyframe then waits for their end.
        if self.events_since_keyframe >= MIN_KEYFRAME_EVENTS
            && self.bytes_since_keyframe >= self.keyframe_bytes
            && self.state.settled()
        {
            let keyframes = self.state.keyframes(now);
            self.keyframe_bytes = keyframes
                .iter()
                .map(|k| match k {
                    Record::Keyframe { objects, .. } => {
                        objects.iter().map(|o| o.get().len()).sum::<usize>()
                    }
                    _ => 0,
                })
                .sum();
            self.bytes_since_keyframe = 0;
            self.events_since_keyframe = 0;
            self.writer.keyframe(&keyframes)?;
        }
        Ok(())
    }

    /// Writes the pending records as a block.
    pub fn flush(&mut self) -> Result<(), RecordError> {
        self.writer.flush()
    }

    /// Watch events appended.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Records appended (keyframes not counted).
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.writer.written()
    }

    /// Flushes, and hands the output back.
    pub fn finish(self) -> Result<W, RecordError> {
        self.writer.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::format::{BlockType, Reader};
    use crate::testing::records::{event, header, list, pod};

    #[test]
    fn a_keyframe_comes_once_the_events_outweigh_the_last() {
        let header = header();
        let mut writer = KeyframedWriter::create(Vec::new(), &header).unwrap();
        // Names and resourceVersions of one length, so every object weighs the same.
        let items: Vec<_> = (0..1_500)
            .map(|i| pod(&format!("p{i:04}"), 10_000))
            .collect();
        let listed: usize = items.iter().map(|i| i.get().len()).sum();
        writer.append(&list(0, 10_000, items), listed, 0).unwrap();
        for n in 0..4_000u64 {
            let rv = 10_001 + n;
            let object = pod(&format!("p{:04}", n % 1_500), rv);
            let len = object.get().len();
            let record = event(n as i64, "MODIFIED", object, rv);
            writer.append(&record, len, n as i64).unwrap();
        }
        assert_eq!((writer.events(), writer.records()), (4_000, 4_001));
        let bytes = writer.finish().unwrap();
        let mut reader = Reader::new(bytes.as_slice()).unwrap();
        let mut keyframes = Vec::new();
        let mut events = 0;
        while let Some((info, records)) = reader.next_block().unwrap() {
            if info.block_type == BlockType::Keyframe {
                keyframes.push(events);
            } else {
                events += records.len();
            }
        }
        // The first after the list and 1,000 events; the next each time the events since
        // weigh as much as that keyframe of 1,500 pods.
        assert_eq!(
            keyframes,
            [1_001, 2_501, 4_001],
            "records before each keyframe"
        );
    }

    /// A watch-list's 2,500 initial events pass the 1,000 events a keyframe waits for, but
    /// the keyframe comes only after their closing bookmark, and folding from it gives the
    /// store the whole recording gives (the objects gone during the gap are gone).
    #[test]
    fn no_keyframe_comes_inside_a_watch_lists_initial_events() {
        use crate::record::state::State;
        use std::collections::BTreeMap;
        let header = header();
        let mut writer = KeyframedWriter::create(Vec::new(), &header).unwrap();
        let gone = pod("gone", 1);
        writer.append(&list(0, 1, vec![gone]), 100, 0).unwrap();
        let start = Record::WatchStart {
            kind: "pods".into(),
            at: 1,
            resource_version: String::new(),
            send_initial_events: true,
        };
        writer.append(&start, 0, 1).unwrap();
        for n in 0..2_500u64 {
            let object = pod(&format!("p{n:04}"), 10 + n);
            let record = event(n as i64, "ADDED", object, 10 + n);
            writer.append(&record, 100, n as i64).unwrap();
        }
        let end: Box<serde_json::value::RawValue> = serde_json::value::RawValue::from_string(
            r#"{"metadata":{"resourceVersion":"3000","annotations":{"k8s.io/initial-events-end":"true"}}}"#.into(),
        )
        .unwrap();
        writer
            .append(&event(2_500, "BOOKMARK", end, 3_000), 100, 2_500)
            .unwrap();
        for n in 0..1_000u64 {
            let object = pod(&format!("p{n:04}"), 3_001 + n);
            let record = event(2_501 + n as i64, "MODIFIED", object, 3_001 + n);
            writer.append(&record, 100, 2_501 + n as i64).unwrap();
        }
        let bytes = writer.finish().unwrap();
        let mut reader = Reader::new(bytes.as_slice()).unwrap();
        let (mut whole, mut from_keyframe) = (State::default(), None::<State>);
        let mut records_before = Vec::new();
        let mut records = 0;
        while let Some((info, block)) = reader.next_block().unwrap() {
            for record in &block {
                match info.block_type {
                    BlockType::Keyframe => {
                        records_before.push(records);
                        let seek = from_keyframe.get_or_insert_with(State::default);
                        seek.apply(record);
                    }
                    _ => {
                        records += 1;
                        whole.apply(record);
                        if let Some(seek) = &mut from_keyframe {
                            seek.apply(record);
                        }
                    }
                }
            }
        }
        // The list, the start, the initial events and their bookmark come first.
        assert!(
            records_before.first().is_some_and(|&n| n >= 2_503),
            "{records_before:?}"
        );
        let objects = |state: &State| -> BTreeMap<String, String> {
            state.kinds["pods"]
                .objects
                .iter()
                .map(|(key, object)| (key.clone(), object.get().to_string()))
                .collect()
        };
        let seek = from_keyframe.expect("a keyframe");
        assert!(!objects(&whole).contains_key("ns/gone"));
        assert_eq!(objects(&seek), objects(&whole));
    }
}
