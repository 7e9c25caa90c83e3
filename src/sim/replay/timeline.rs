//! A recording turned into what a server can serve: per kind, segments that each start at a
//! whole state (a list, or a watch-list's initial events, as the recorder received it) and
//! go on with the watch events received after it. A relist in the recording starts a new
//! segment: what happened between the two is not in the file, so a watch that was open
//! across it is ended with a 410, as the recorder's was.
//!
//! Each segment keeps checkpoints of its store, taken by the recorder's keyframe rule (once
//! the events since the last one outnumber the store, and at least a thousand came), so the
//! state at any point — the list after a TUI's seek — folds at most about one store's worth
//! of events instead of the segment's whole history. Objects are shared (`Arc`) between the
//! steps and the checkpoints, so a checkpoint costs its keys, not its objects.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;
use std::sync::Arc;

use serde_json::value::RawValue;

use kscope_informers::record::format::{BlockType, Reader, Record, RecordError};
use kscope_informers::record::state::{State, ends_initial_events, object_key};

/// A store as a replay serves it: objects by `namespace/name`.
pub type Objects = BTreeMap<String, Arc<RawValue>>;

/// The fewest events between two checkpoints: below it a fold is cheaper than the copy.
const MIN_CHECKPOINT_STEPS: usize = 1_000;

/// One watch event as recorded, ready to serve.
#[derive(Debug, Clone)]
pub struct Step {
    /// When the recorder received it, µs since the epoch.
    pub at: i64,
    pub event_type: String,
    pub rv: u64,
    /// `namespace/name`; empty for a BOOKMARK.
    pub key: String,
    pub object: Arc<RawValue>,
}

impl Step {
    /// Whether the step changes the store (a BOOKMARK does not).
    fn changes(&self) -> bool {
        matches!(self.event_type.as_str(), "ADDED" | "MODIFIED" | "DELETED")
    }

    fn fold_into(&self, objects: &mut Objects) {
        match self.event_type.as_str() {
            "ADDED" | "MODIFIED" => {
                objects.insert(self.key.clone(), self.object.clone());
            }
            "DELETED" => {
                objects.remove(&self.key);
            }
            _ => {}
        }
    }
}

/// The segment's store after its first `played` steps.
#[derive(Debug, Clone)]
struct Checkpoint {
    played: usize,
    rv: u64,
    objects: Objects,
}

/// A whole state and the events after it, until the next relist.
#[derive(Debug, Clone)]
pub struct Segment {
    /// When the state was whole (the last page, or the closing bookmark).
    pub at: i64,
    pub rv: u64,
    pub steps: Vec<Step>,
    /// The whole state the segment starts at.
    start: Checkpoint,
    /// Later checkpoints, by `played`.
    later: Vec<Checkpoint>,
}

impl Segment {
    /// A segment of `steps` after the state `objects` at `rv`, with a checkpoint whenever
    /// the steps since the last one outnumber its store.
    pub fn new(at: i64, rv: u64, objects: Objects, steps: Vec<Step>) -> Self {
        let mut later = Vec::new();
        let mut folded = objects.clone();
        let mut folded_rv = rv;
        let mut since = 0;
        for (played, step) in steps.iter().enumerate() {
            step.fold_into(&mut folded);
            folded_rv = folded_rv.max(step.rv);
            since += 1;
            if since >= MIN_CHECKPOINT_STEPS.max(folded.len()) {
                later.push(Checkpoint {
                    played: played + 1,
                    rv: folded_rv,
                    objects: folded.clone(),
                });
                since = 0;
            }
        }
        Self {
            at,
            rv,
            steps,
            start: Checkpoint {
                played: 0,
                rv,
                objects,
            },
            later,
        }
    }

    /// How many of the segment's steps were received by `at`.
    pub fn played_by(&self, at: i64) -> usize {
        self.steps.partition_point(|s| s.at <= at)
    }

    /// The last checkpoint at or before `played` steps.
    fn checkpoint(&self, played: usize) -> &Checkpoint {
        match self.later.partition_point(|c| c.played <= played) {
            0 => &self.start,
            n => &self.later[n - 1],
        }
    }

    /// The steps after `checkpoint` up to `played`.
    fn since<'a>(&'a self, checkpoint: &Checkpoint, played: usize) -> &'a [Step] {
        self.steps
            .get(checkpoint.played..played.min(self.steps.len()))
            .unwrap_or_default()
    }

    /// The state after the first `played` steps, and its resourceVersion: the nearest
    /// checkpoint and the steps after it.
    pub fn state_after(&self, played: usize) -> (Objects, u64) {
        let checkpoint = self.checkpoint(played);
        let mut objects = checkpoint.objects.clone();
        let mut rv = checkpoint.rv;
        for step in self.since(checkpoint, played) {
            step.fold_into(&mut objects);
            rv = rv.max(step.rv);
        }
        (objects, rv)
    }

    /// The object at `key` after the first `played` steps, without folding the whole store.
    pub fn object_after(&self, played: usize, key: &str) -> Option<Arc<RawValue>> {
        let checkpoint = self.checkpoint(played);
        match self
            .since(checkpoint, played)
            .iter()
            .rev()
            .find(|s| s.changes() && s.key == key)
        {
            Some(step) => (step.event_type != "DELETED").then(|| step.object.clone()),
            None => checkpoint.objects.get(key).cloned(),
        }
    }

    /// The highest resourceVersion after the first `played` steps.
    pub fn rv_after(&self, played: usize) -> u64 {
        let checkpoint = self.checkpoint(played);
        self.since(checkpoint, played)
            .iter()
            .map(|s| s.rv)
            .fold(checkpoint.rv, u64::max)
    }

    /// The highest resourceVersion the segment reaches.
    pub fn last_rv(&self) -> u64 {
        self.rv_after(self.steps.len())
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
    /// Reads `path` up to its end or its damage. Keyframe blocks are checked but not
    /// decompressed: they repeat what the records before them folded to.
    pub fn read(path: &Path) -> Result<Self, RecordError> {
        Self::from_reader(BufReader::new(File::open(path)?))
    }

    /// As [`Timeline::read`], from any reader: what the fuzz target feeds hostile bytes.
    pub fn from_reader(input: impl Read) -> Result<Self, RecordError> {
        let mut reader = Reader::new(input)?;
        let mut builder = Builder::default();
        let damage = loop {
            match reader.next_block_if(|info| info.block_type != BlockType::Keyframe) {
                Ok(Some((_, records))) => {
                    for record in &records {
                        builder.add(record);
                    }
                }
                Ok(None) => break None,
                Err(e) => break Some(e),
            }
        };
        Ok(builder.finish(damage))
    }

    /// The timeline of records already read (keyframes excluded), as [`Timeline::read`]
    /// builds it from a file.
    pub fn from_records<'a>(records: impl IntoIterator<Item = &'a Record>) -> Self {
        let mut builder = Builder::default();
        for record in records {
            builder.add(record);
        }
        builder.finish(None)
    }
}

/// A segment being read: its steps are checkpointed when the next relist (or the end)
/// closes it, in one pass.
struct Open {
    at: i64,
    rv: u64,
    objects: Objects,
    steps: Vec<Step>,
}

#[derive(Default)]
struct Builder {
    state: State,
    /// Kinds whose watch-list is still sending its initial events.
    initial: HashMap<String, bool>,
    first_at: Option<i64>,
    kinds: BTreeMap<String, Vec<Segment>>,
    open: BTreeMap<String, Open>,
}

impl Builder {
    fn add(&mut self, record: &Record) {
        self.first_at.get_or_insert(record.at());
        let kind = record.kind();
        let initial = self.initial.get(kind).copied().unwrap_or(false);
        // A watch event outside a watch-list's initial events becomes a step, and the
        // folded store is only read when a state is whole (a list's last page, a watch-list's
        // closing bookmark), which replaces it: folding it into `state` too would keep a
        // second copy of every object changed.
        if initial || !matches!(record, Record::Event { .. }) {
            self.state.apply(record);
        }
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
                if event_type == "ERROR" {
                    self.initial.insert(kind.to_string(), false);
                } else if initial {
                    if event_type == "BOOKMARK" && ends_initial_events(object) {
                        self.initial.insert(kind.to_string(), false);
                        self.whole(kind, *at);
                    }
                } else if let Some(rv) = resource_version.as_deref().and_then(|rv| rv.parse().ok())
                    && let Some(open) = self.open.get_mut(kind)
                {
                    open.steps.push(Step {
                        at: *at,
                        event_type: event_type.clone(),
                        rv,
                        key: object_key(object).unwrap_or_default(),
                        object: Arc::from(object.clone()),
                    });
                }
            }
            Record::WatchEnd { .. } | Record::Error { .. } => {
                self.initial.insert(kind.to_string(), false);
            }
        }
    }

    /// The kind's state became whole at `at`: the open segment closes, a new one starts.
    fn whole(&mut self, kind: &str, at: i64) {
        let Some(state) = self.state.kinds.get_mut(kind) else {
            return;
        };
        let Ok(rv) = state.resource_version.parse() else {
            return;
        };
        let objects = std::mem::take(&mut state.objects)
            .into_iter()
            .map(|(key, object)| (key, Arc::from(object)))
            .collect();
        let open = Open {
            at,
            rv,
            objects,
            steps: Vec::new(),
        };
        if let Some(closed) = self.open.insert(kind.to_string(), open) {
            self.close(kind, closed);
        }
    }

    fn close(&mut self, kind: &str, open: Open) {
        self.kinds
            .entry(kind.to_string())
            .or_default()
            .push(Segment::new(open.at, open.rv, open.objects, open.steps));
    }

    fn finish(mut self, damage: Option<RecordError>) -> Timeline {
        for (kind, open) in std::mem::take(&mut self.open) {
            self.close(&kind, open);
        }
        Timeline {
            first_at: self.first_at.unwrap_or_default(),
            kinds: self.kinds,
            damage,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kscope_informers::testing::records::{event, header, list, pod};

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_string()).unwrap()
    }

    #[test]
    fn a_relist_starts_a_segment_and_events_fold_by_time() {
        let timeline = Timeline::from_records(&[
            list(10, 5, vec![pod("a", 5)]),
            event(20, "ADDED", pod("b", 6), 6),
            event(30, "DELETED", pod("a", 7), 7),
            list(40, 12, vec![pod("c", 12)]),
        ]);
        let segments = &timeline.kinds["pods"];
        assert_eq!(segments.len(), 2);
        let first = &segments[0];
        assert_eq!(first.played_by(25), 1);
        let (objects, rv) = first.state_after(first.played_by(25));
        assert_eq!(objects.keys().collect::<Vec<_>>(), ["ns/a", "ns/b"]);
        assert_eq!(rv, 6);
        assert_eq!(first.last_rv(), 7);
        assert!(first.object_after(2, "ns/a").is_none());
        assert!(first.object_after(1, "ns/a").is_some());
        assert_eq!(segments[1].rv, 12);
    }

    #[test]
    fn a_watch_lists_initial_events_are_a_state_not_steps() {
        let timeline = Timeline::from_records(&[
            Record::WatchStart {
                kind: "pods".into(),
                at: 1,
                resource_version: String::new(),
                send_initial_events: true,
            },
            event(2, "ADDED", pod("a", 3), 3),
            event(
                3,
                "BOOKMARK",
                raw(
                    r#"{"metadata":{"resourceVersion":"9","annotations":{"k8s.io/initial-events-end":"true"}}}"#,
                ),
                9,
            ),
            event(4, "MODIFIED", pod("a", 10), 10),
        ]);
        let segments = &timeline.kinds["pods"];
        assert_eq!(segments.len(), 1);
        assert_eq!(segments[0].rv, 9);
        assert_eq!(segments[0].state_after(0).0.len(), 1);
        assert_eq!(segments[0].steps.len(), 1);
        assert_eq!(timeline.first_at, 1);
    }

    /// A file cut inside its last block serves what the blocks before it hold, and says
    /// where it was damaged.
    #[test]
    fn a_cut_file_is_read_up_to_the_cut() {
        use kscope_informers::record::format::Writer;
        let header = header();
        let mut writer = Writer::new(Vec::new(), &header).unwrap();
        writer.append(&list(10, 5, vec![pod("a", 5)])).unwrap();
        writer.append(&event(20, "ADDED", pod("b", 6), 6)).unwrap();
        writer.flush().unwrap();
        writer
            .append(&event(30, "DELETED", pod("a", 7), 7))
            .unwrap();
        let bytes = writer.finish().unwrap();
        let path =
            std::env::temp_dir().join(format!("kscope-timeline-cut-{}.ksr", std::process::id()));
        std::fs::write(&path, &bytes[..bytes.len() - 5]).unwrap();
        let timeline = Timeline::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(matches!(timeline.damage, Some(RecordError::Damaged { .. })));
        let segment = &timeline.kinds["pods"][0];
        assert_eq!(segment.steps.len(), 1);
        let (objects, rv) = segment.state_after(1);
        assert_eq!(objects.keys().collect::<Vec<_>>(), ["ns/a", "ns/b"]);
        assert_eq!(rv, 6);
    }

    /// 5,000 events over 40 pods (adds, changes, deletes, bookmarks) take checkpoints; the
    /// state at every point, and each object in it, is the one a fold from the start gives.
    #[test]
    fn the_state_from_a_checkpoint_is_the_fold_from_the_start() {
        let mut records = vec![list(
            0,
            1,
            (0..20).map(|i| pod(&format!("p{i}"), 1)).collect(),
        )];
        for n in 0..5_000u64 {
            let rv = n + 2;
            let name = format!("p{}", (n * 7) % 40);
            let event_type = match n % 11 {
                3 => "DELETED",
                5 => "BOOKMARK",
                0 => "ADDED",
                _ => "MODIFIED",
            };
            let object = if event_type == "BOOKMARK" {
                raw(&format!(r#"{{"metadata":{{"resourceVersion":"{rv}"}}}}"#))
            } else {
                pod(&name, rv)
            };
            records.push(event(rv as i64, event_type, object, rv));
        }
        let timeline = Timeline::from_records(&records);
        let segment = &timeline.kinds["pods"][0];
        assert!(
            segment.later.len() >= 4,
            "{} checkpoints",
            segment.later.len()
        );
        let mut truth = State::default();
        let mut applied = 0;
        for played in (0..=segment.steps.len())
            .step_by(37)
            .chain([segment.steps.len()])
        {
            while applied < played + 1 {
                truth.apply(&records[applied]);
                applied += 1;
            }
            let (objects, rv) = segment.state_after(played);
            let expected = &truth.kinds["pods"];
            let got: Vec<(&String, &str)> = objects.iter().map(|(k, v)| (k, v.get())).collect();
            let want: Vec<(&String, &str)> =
                expected.objects.iter().map(|(k, v)| (k, v.get())).collect();
            assert_eq!(got, want, "after {played} steps");
            assert_eq!(
                rv.to_string(),
                expected.resource_version,
                "after {played} steps"
            );
            assert_eq!(segment.rv_after(played), rv);
            for i in 0..40 {
                let key = format!("ns/p{i}");
                assert_eq!(
                    segment
                        .object_after(played, &key)
                        .map(|o| o.get().to_string()),
                    expected.objects.get(&key).map(|o| o.get().to_string()),
                    "{key} after {played} steps"
                );
            }
        }
    }
}
