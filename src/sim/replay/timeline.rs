//! A recording turned into what a server can serve: per kind, segments that each start at a
//! whole state (a list, or a watch-list's initial events, as the recorder received it) and
//! go on with the watch events received after it. A relist in the recording starts a new
//! segment: what happened between the two is not in the file, so a watch that was open
//! across it is ended with a 410, as the recorder's was.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use serde_json::value::RawValue;

use kscope_informers::record::format::{BlockType, Reader, Record, RecordError};
use kscope_informers::record::state::{State, ends_initial_events, object_key};

/// One watch event as recorded, ready to serve.
#[derive(Debug, Clone)]
pub struct Step {
    /// When the recorder received it, µs since the epoch.
    pub at: i64,
    pub event_type: String,
    pub rv: u64,
    /// `namespace/name`; empty for a BOOKMARK.
    pub key: String,
    pub object: Box<RawValue>,
}

/// A whole state and the events after it, until the next relist.
#[derive(Debug, Clone)]
pub struct Segment {
    /// When the state was whole (the last page, or the closing bookmark).
    pub at: i64,
    pub rv: u64,
    pub objects: BTreeMap<String, Box<RawValue>>,
    pub steps: Vec<Step>,
}

impl Segment {
    /// How many of the segment's steps were received by `at`.
    pub fn played_by(&self, at: i64) -> usize {
        self.steps.partition_point(|s| s.at <= at)
    }

    /// The state after the first `played` steps, and its resourceVersion.
    pub fn state_after(&self, played: usize) -> (BTreeMap<String, Box<RawValue>>, u64) {
        let mut objects = self.objects.clone();
        let mut rv = self.rv;
        for step in &self.steps[..played] {
            match step.event_type.as_str() {
                "ADDED" | "MODIFIED" => {
                    objects.insert(step.key.clone(), step.object.clone());
                }
                "DELETED" => {
                    objects.remove(&step.key);
                }
                _ => {}
            }
            rv = rv.max(step.rv);
        }
        (objects, rv)
    }

    /// The highest resourceVersion the segment reaches.
    pub fn last_rv(&self) -> u64 {
        self.steps.iter().map(|s| s.rv).fold(self.rv, u64::max)
    }
}

/// A recording's kinds as segments, and the damage that ended the read, if any.
pub struct Timeline {
    /// The first record's receive time: where playback starts.
    pub first_at: i64,
    pub kinds: BTreeMap<String, Vec<Segment>>,
    pub damage: Option<RecordError>,
}

impl Timeline {
    /// Reads `path` up to its end or its damage. Keyframe blocks are skipped: they repeat
    /// what the records before them folded to.
    pub fn read(path: &Path) -> Result<Self, RecordError> {
        let mut reader = Reader::new(BufReader::new(File::open(path)?))?;
        let mut builder = Builder::default();
        let damage = loop {
            match reader.next_block() {
                Ok(Some((info, records))) => {
                    if info.block_type == BlockType::Keyframe {
                        continue;
                    }
                    for record in &records {
                        builder.add(record);
                    }
                }
                Ok(None) => break None,
                Err(e) => break Some(e),
            }
        };
        Ok(Self {
            first_at: builder.first_at.unwrap_or_default(),
            kinds: builder.kinds,
            damage,
        })
    }
}

#[derive(Default)]
struct Builder {
    state: State,
    /// Kinds whose watch-list is still sending its initial events.
    initial: HashMap<String, bool>,
    first_at: Option<i64>,
    kinds: BTreeMap<String, Vec<Segment>>,
}

impl Builder {
    fn add(&mut self, record: &Record) {
        self.first_at.get_or_insert(record.at());
        self.state.apply(record);
        let kind = record.kind();
        match record {
            Record::List { next: None, at, .. } => self.whole(kind, *at),
            Record::List { .. } | Record::Keyframe { .. } => {}
            Record::WatchStart {
                send_initial_events,
                ..
            } => {
                self.initial.insert(kind.to_string(), *send_initial_events);
            }
            Record::Event {
                at,
                event_type,
                resource_version,
                object,
                ..
            } => {
                let initial = self.initial.get(kind).copied().unwrap_or(false);
                if event_type == "ERROR" {
                    self.initial.insert(kind.to_string(), false);
                } else if initial {
                    if event_type == "BOOKMARK" && ends_initial_events(object) {
                        self.initial.insert(kind.to_string(), false);
                        self.whole(kind, *at);
                    }
                } else if let Some(rv) = resource_version.as_deref().and_then(|rv| rv.parse().ok())
                    && let Some(segment) = self.kinds.get_mut(kind).and_then(|s| s.last_mut())
                {
                    segment.steps.push(Step {
                        at: *at,
                        event_type: event_type.clone(),
                        rv,
                        key: object_key(object).unwrap_or_default(),
                        object: object.clone(),
                    });
                }
            }
            Record::WatchEnd { .. } | Record::Error { .. } => {
                self.initial.insert(kind.to_string(), false);
            }
        }
    }

    /// The kind's state became whole at `at`: a new segment starts there.
    fn whole(&mut self, kind: &str, at: i64) {
        let Some(state) = self.state.kinds.get(kind) else {
            return;
        };
        let Ok(rv) = state.resource_version.parse() else {
            return;
        };
        self.kinds
            .entry(kind.to_string())
            .or_default()
            .push(Segment {
                at,
                rv,
                objects: state.objects.clone(),
                steps: Vec::new(),
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kscope_informers::testing::records::{event, list, pod};

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_string()).unwrap()
    }

    #[test]
    fn a_relist_starts_a_segment_and_events_fold_by_time() {
        let mut b = Builder::default();
        b.add(&list(10, 5, vec![pod("a", 5)]));
        b.add(&event(20, "ADDED", pod("b", 6), 6));
        b.add(&event(30, "DELETED", pod("a", 7), 7));
        b.add(&list(40, 12, vec![pod("c", 12)]));
        let segments = &b.kinds["pods"];
        assert_eq!(segments.len(), 2);
        let first = &segments[0];
        assert_eq!(first.played_by(25), 1);
        let (objects, rv) = first.state_after(first.played_by(25));
        assert_eq!(objects.keys().collect::<Vec<_>>(), ["ns/a", "ns/b"]);
        assert_eq!(rv, 6);
        assert_eq!(first.last_rv(), 7);
        assert_eq!(segments[1].rv, 12);
    }

    #[test]
    fn a_watch_lists_initial_events_are_a_state_not_steps() {
        let mut b = Builder::default();
        b.add(&Record::WatchStart {
            kind: "pods".into(),
            at: 1,
            resource_version: String::new(),
            send_initial_events: true,
        });
        b.add(&event(2, "ADDED", pod("a", 3), 3));
        b.add(&event(
            3,
            "BOOKMARK",
            raw(r#"{"metadata":{"resourceVersion":"9","annotations":{"k8s.io/initial-events-end":"true"}}}"#),
            9,
        ));
        b.add(&event(4, "MODIFIED", pod("a", 10), 10));
        let segments = &b.kinds["pods"];
        assert_eq!(segments.len(), 1);
        assert_eq!(segments[0].rv, 9);
        assert_eq!(segments[0].objects.len(), 1);
        assert_eq!(segments[0].steps.len(), 1);
        assert_eq!(b.first_at, Some(1));
    }
}
