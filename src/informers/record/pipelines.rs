//! A recording run through informer pipelines (`kscope replay FILE --fifo`): each kind's
//! recorded lists, watch-lists, events and bookmarks are fed to one FIFO of each chosen kind
//! as the Reflector fed its store, a controller pops them into an Indexer, and what each
//! pipeline handed is compared by [`PipelineComparison`]. At every keyframe, and at the end,
//! each Indexer is checked byte for byte against the store the recording holds there: the
//! pipelines may hand a controller different things, but never end in a different store.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::broadcast;

use super::format::Record;
use super::object::RecordedObject;
use super::state::{State, ends_initial_events, object_key};
use crate::delta_fifo::ReflectorStore;
use crate::fifo::{FifoKind, HandedItem, Handoff};
use crate::indexer::IndexerWriter;
use crate::informer::{ProcessLoop, SharedIndexInformer};
use crate::instrument::compare::{Difference, PipelineComparison, SameFifo};

/// Keys named per failed store check: enough to start looking, short enough to read.
const MISMATCHED_KEYS_SHOWN: usize = 10;

/// How the recording is run.
#[derive(Debug, Clone)]
pub struct PipelineOptions {
    /// The FIFOs to run, each once, in this order.
    pub fifos: Vec<FifoKind>,
    /// How long (on the recording's clock) the controller is busy between catching up: it
    /// pops everything queued once the clock has moved this far since it last did. Zero pops
    /// after every record; a longer one lets a DeltaFIFO merge more.
    pub pop_every: Duration,
    /// Differences kept per pair of FIFOs (all are counted).
    pub differences_shown: usize,
}

/// Why a recording could not be run through the pipelines.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error("--fifo names no FIFO")]
    NoFifo,
    #[error(transparent)]
    SameFifo(#[from] SameFifo),
}

/// What one pipeline of one kind handed its controller.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FifoSummary {
    pub kind: String,
    pub fifo: FifoKind,
    pub pops: u64,
    /// Items handed: a key's deltas, a ReplacedAll, a SyncAll or a bookmark.
    pub items: u64,
    /// Object deltas handed in them (a ReplacedAll counts as one).
    pub deltas: u64,
    /// The most deltas one pop handed.
    pub max_deltas_per_pop: u64,
    /// Items that handed more than one delta of a key at once (the DeltaFIFO's merging),
    /// and how many deltas those held.
    pub merged_items: u64,
    pub merged_deltas: u64,
    pub replaced_all: u64,
    pub sync_all: u64,
    pub bookmarks: u64,
    /// Recorded objects the pipeline could not read (no JSON object): left out, as counted.
    pub unreadable: u64,
}

/// One place where two pipelines handed different things.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HandedDifference {
    pub kind: &'static str,
    /// The pipeline whose handoff shows it, and that handoff's sequence number.
    pub fifo: FifoKind,
    pub seq: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub message: String,
}

impl From<&Difference> for HandedDifference {
    fn from(d: &Difference) -> Self {
        Self {
            kind: d.kind.as_str(),
            fifo: d.fifo,
            seq: d.seq,
            key: d.key.as_deref().map(str::to_string),
            message: d.message.clone(),
        }
    }
}

/// Two pipelines of one kind compared.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PairSummary {
    pub kind: String,
    pub first: FifoKind,
    pub second: FifoKind,
    /// Differences by kind (merged, order, relist, resync).
    pub counts: BTreeMap<&'static str, u64>,
    /// The first differences found, in the order found.
    pub differences: Vec<HandedDifference>,
}

/// Where a store check was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "point")]
pub enum CheckPoint {
    /// The recording's `index`th keyframe (from 1), at `at` µs since the epoch.
    #[serde(rename_all = "camelCase")]
    Keyframe {
        index: usize,
        at: i64,
        resource_version: String,
    },
    /// The end of the recording, against the store its records fold to.
    End,
}

/// One pipeline's Indexer against the recorded store at one point.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreCheck {
    #[serde(flatten)]
    pub point: CheckPoint,
    pub kind: String,
    pub fifo: FifoKind,
    pub objects: usize,
    /// Every key present in both with the same bytes, and no other.
    pub identical: bool,
    /// The first keys that are missing, extra or different, if any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mismatched: Vec<String>,
}

/// Everything a run found.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PipelineReport {
    pub records: u64,
    pub fifos: Vec<FifoSummary>,
    pub pairs: Vec<PairSummary>,
    pub checks: Vec<StoreCheck>,
}

impl PipelineReport {
    /// The first check whose store differed from the recording's.
    pub fn first_mismatch(&self) -> Option<&StoreCheck> {
        self.checks.iter().find(|c| !c.identical)
    }
}

/// One FIFO's informer of one kind, the loop its controller pops with, and its handoffs.
struct Pipeline {
    informer: SharedIndexInformer<RecordedObject>,
    process: ProcessLoop<RecordedObject>,
    handoffs: broadcast::Receiver<Arc<Handoff>>,
    summary: FifoSummary,
}

/// A call the Reflector makes on its store.
enum StoreCall {
    Add(Arc<RecordedObject>),
    Update(Arc<RecordedObject>),
    Delete(Arc<RecordedObject>),
    Replace(Vec<Arc<RecordedObject>>, String),
    Bookmark(String),
}

/// One kind's pipelines, and what the Reflector was gathering when the record came.
struct KindPipelines {
    pipelines: Vec<Pipeline>,
    comparisons: Vec<(PipelineComparison, PairSummary)>,
    /// A paged list's items so far, until its last page.
    pending_list: Option<Vec<Arc<RecordedObject>>>,
    /// A watch-list's initial objects so far, until its closing bookmark.
    pending_initial: Option<Vec<Arc<RecordedObject>>>,
    unreadable: u64,
}

fn readable(raw: &RawValue, unreadable: &mut u64) -> Option<Arc<RecordedObject>> {
    match RecordedObject::new(raw.to_owned()) {
        Ok(obj) => Some(Arc::new(obj)),
        Err(_) => {
            *unreadable += 1;
            None
        }
    }
}

impl KindPipelines {
    fn new(kind: &str, options: &PipelineOptions) -> Result<Self, PipelineError> {
        let pipelines = options
            .fifos
            .iter()
            .map(|&fifo| {
                let (informer, process) =
                    SharedIndexInformer::with_fifo(IndexerWriter::default(), None, None, fifo);
                let handoffs = informer.subscribe_handoffs();
                Pipeline {
                    informer,
                    process,
                    handoffs,
                    summary: FifoSummary {
                        kind: kind.to_string(),
                        fifo,
                        ..FifoSummary::default()
                    },
                }
            })
            .collect();
        let mut comparisons = Vec::new();
        for (i, &first) in options.fifos.iter().enumerate() {
            for &second in &options.fifos[i + 1..] {
                comparisons.push((
                    PipelineComparison::new(first, second)?,
                    PairSummary {
                        kind: kind.to_string(),
                        first,
                        second,
                        counts: BTreeMap::new(),
                        differences: Vec::new(),
                    },
                ));
            }
        }
        Ok(Self {
            pipelines,
            comparisons,
            pending_list: None,
            pending_initial: None,
            unreadable: 0,
        })
    }

    /// The store calls the Reflector made for `record`: a list's items replace the store at
    /// its last page, a watch-list's initial objects at their closing bookmark (client-go's
    /// gathering, not kscope's streaming into the FIFO), and watch events add, update and
    /// delete as they came.
    fn calls(&mut self, record: &Record) -> Option<StoreCall> {
        match record {
            Record::List {
                continued,
                resource_version,
                next,
                items,
                ..
            } => {
                if continued.is_none() {
                    self.pending_list = Some(Vec::new());
                }
                let unreadable = &mut self.unreadable;
                let pending = self.pending_list.get_or_insert_with(Vec::new);
                pending.extend(items.iter().filter_map(|i| readable(i, unreadable)));
                if next.is_some() {
                    return None;
                }
                let list = self.pending_list.take().unwrap_or_default();
                Some(StoreCall::Replace(list, resource_version.clone()))
            }
            Record::WatchStart {
                send_initial_events,
                ..
            } => {
                self.pending_initial = send_initial_events.then(Vec::new);
                None
            }
            Record::Event {
                event_type,
                resource_version,
                object,
                ..
            } => match event_type.as_str() {
                "ADDED" | "MODIFIED" | "DELETED" => {
                    let obj = readable(object, &mut self.unreadable)?;
                    if let Some(initial) = &mut self.pending_initial {
                        initial.push(obj);
                        return None;
                    }
                    Some(match event_type.as_str() {
                        "ADDED" => StoreCall::Add(obj),
                        "MODIFIED" => StoreCall::Update(obj),
                        _ => StoreCall::Delete(obj),
                    })
                }
                "BOOKMARK" => {
                    let rv = resource_version.clone().unwrap_or_default();
                    if ends_initial_events(object)
                        && let Some(initial) = self.pending_initial.take()
                    {
                        return Some(StoreCall::Replace(initial, rv));
                    }
                    (self.pending_initial.is_none()).then_some(StoreCall::Bookmark(rv))
                }
                _ => {
                    self.pending_initial = None;
                    None
                }
            },
            Record::WatchEnd { .. } | Record::Error { .. } => {
                self.pending_initial = None;
                None
            }
            Record::Keyframe { .. } => None,
        }
    }

    fn feed(&mut self, record: &Record) {
        let Some(call) = self.calls(record) else {
            return;
        };
        for pipeline in &self.pipelines {
            let store = pipeline.informer.store();
            // A recorded object always has a name (a keyed one), so a KeyError cannot come;
            // one that did would leave the pipeline short, which the store check reports.
            let _ = match &call {
                StoreCall::Add(obj) => store.add(obj.clone()),
                StoreCall::Update(obj) => store.update(obj.clone()),
                StoreCall::Delete(obj) => store.delete(obj.clone()),
                StoreCall::Replace(list, rv) => store.replace(list.clone(), rv),
                StoreCall::Bookmark(rv) => {
                    store.bookmark(rv);
                    Ok(())
                }
            };
        }
    }

    /// The controller catches up: every pipeline pops all it has queued, and each handoff is
    /// counted and compared.
    async fn pop_queued(&mut self, differences_shown: usize) {
        for pipeline in &mut self.pipelines {
            while pipeline.process.process_one_queued().await {
                while let Ok(handoff) = pipeline.handoffs.try_recv() {
                    count(&mut pipeline.summary, &handoff);
                    for (comparison, pair) in &mut self.comparisons {
                        for difference in comparison.observe(&handoff) {
                            *pair.counts.entry(difference.kind.as_str()).or_default() += 1;
                            if pair.differences.len() < differences_shown {
                                pair.differences.push((&difference).into());
                            }
                        }
                    }
                }
            }
        }
    }

    /// Each pipeline's Indexer against `objects`, the recorded store.
    fn check(
        &self,
        kind: &str,
        point: &CheckPoint,
        objects: &BTreeMap<String, &str>,
    ) -> Vec<StoreCheck> {
        self.pipelines
            .iter()
            .map(|pipeline| {
                let held: BTreeMap<String, Arc<RecordedObject>> = pipeline
                    .informer
                    .indexer()
                    .list_keys()
                    .into_iter()
                    .filter_map(|key| {
                        let obj = pipeline.informer.indexer().get_by_key(&key)?;
                        Some((key.to_string(), obj))
                    })
                    .collect();
                let keys: BTreeSet<&String> = held.keys().chain(objects.keys()).collect();
                let mismatched: Vec<String> = keys
                    .into_iter()
                    .filter(|key| held.get(*key).map(|o| o.raw.get()) != objects.get(*key).copied())
                    .map(String::clone)
                    .collect();
                StoreCheck {
                    point: point.clone(),
                    kind: kind.to_string(),
                    fifo: pipeline.summary.fifo,
                    objects: held.len(),
                    identical: mismatched.is_empty(),
                    mismatched: mismatched.into_iter().take(MISMATCHED_KEYS_SHOWN).collect(),
                }
            })
            .collect()
    }
}

fn count(summary: &mut FifoSummary, handoff: &Handoff) {
    summary.pops += 1;
    let mut deltas = 0;
    for item in &handoff.items {
        summary.items += 1;
        match item {
            HandedItem::Deltas { deltas: d, .. } => {
                deltas += d.len() as u64;
                if d.len() > 1 {
                    summary.merged_items += 1;
                    summary.merged_deltas += d.len() as u64;
                }
            }
            HandedItem::ReplacedAll { .. } => {
                deltas += 1;
                summary.replaced_all += 1;
            }
            HandedItem::SyncAll => summary.sync_all += 1,
            HandedItem::Bookmark { .. } => summary.bookmarks += 1,
        }
    }
    summary.deltas += deltas;
    summary.max_deltas_per_pop = summary.max_deltas_per_pop.max(deltas);
}

/// Runs records through the pipelines, one kind's pipelines per recorded kind.
pub struct PipelineReplay {
    options: PipelineOptions,
    kinds: BTreeMap<String, KindPipelines>,
    /// The recorded store, folded alongside: what the end is checked against.
    state: State,
    keyframes: usize,
    last_keyframe_at: Option<i64>,
    last_pop_at: Option<i64>,
    records: u64,
    checks: Vec<StoreCheck>,
}

impl PipelineReplay {
    pub fn new(options: PipelineOptions) -> Result<Self, PipelineError> {
        if options.fifos.is_empty() {
            return Err(PipelineError::NoFifo);
        }
        // A FIFO named twice would be compared with itself: refused before any record.
        for (i, &first) in options.fifos.iter().enumerate() {
            for &second in &options.fifos[i + 1..] {
                PipelineComparison::new(first, second)?;
            }
        }
        Ok(Self {
            options,
            kinds: BTreeMap::new(),
            state: State::default(),
            keyframes: 0,
            last_keyframe_at: None,
            last_pop_at: None,
            records: 0,
            checks: Vec::new(),
        })
    }

    /// Feeds one record (records in the recording's order). A keyframe has the controller
    /// catch up first, then checks every pipeline of its kind against it.
    pub async fn apply(&mut self, record: &Record) -> Result<(), PipelineError> {
        self.records += 1;
        self.state.apply(record);
        let kind = record.kind().to_string();
        if !self.kinds.contains_key(&kind) {
            let pipelines = KindPipelines::new(&kind, &self.options)?;
            self.kinds.insert(kind.clone(), pipelines);
        }
        if let Record::Keyframe {
            at,
            resource_version,
            objects,
            ..
        } = record
        {
            // One keyframe block holds a keyframe per kind, all at one time.
            if self.last_keyframe_at != Some(*at) {
                self.keyframes += 1;
                self.last_keyframe_at = Some(*at);
            }
            let point = CheckPoint::Keyframe {
                index: self.keyframes,
                at: *at,
                resource_version: resource_version.clone(),
            };
            let recorded: BTreeMap<String, &str> = objects
                .iter()
                .filter_map(|o| Some((object_key(o)?, o.get())))
                .collect();
            let shown = self.options.differences_shown;
            if let Some(pipelines) = self.kinds.get_mut(&kind) {
                pipelines.pop_queued(shown).await;
                self.checks
                    .extend(pipelines.check(&kind, &point, &recorded));
            }
            return Ok(());
        }
        if let Some(pipelines) = self.kinds.get_mut(&kind) {
            pipelines.feed(record);
        }
        let at = record.at();
        let due = self.last_pop_at.is_none_or(|last| {
            at.saturating_sub(last)
                >= i64::try_from(self.options.pop_every.as_micros()).unwrap_or(i64::MAX)
        });
        if due {
            self.pop_all().await;
            self.last_pop_at = Some(at);
        }
        Ok(())
    }

    async fn pop_all(&mut self) {
        let shown = self.options.differences_shown;
        for pipelines in self.kinds.values_mut() {
            pipelines.pop_queued(shown).await;
        }
    }

    /// The controller catches up a last time, every pipeline is checked against the store
    /// the recording folds to, and the report is made.
    pub async fn finish(mut self) -> PipelineReport {
        self.pop_all().await;
        let mut report = PipelineReport {
            records: self.records,
            ..PipelineReport::default()
        };
        for (kind, mut pipelines) in std::mem::take(&mut self.kinds) {
            let recorded: BTreeMap<String, &str> = self
                .state
                .kinds
                .get(&kind)
                .map(|s| {
                    s.objects
                        .iter()
                        .map(|(k, v)| (k.clone(), v.get()))
                        .collect()
                })
                .unwrap_or_default();
            self.checks
                .extend(pipelines.check(&kind, &CheckPoint::End, &recorded));
            for pipeline in &mut pipelines.pipelines {
                pipeline.summary.unreadable = pipelines.unreadable;
                report.fifos.push(pipeline.summary.clone());
            }
            report
                .pairs
                .extend(pipelines.comparisons.into_iter().map(|(_, pair)| pair));
        }
        report.checks = self.checks;
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::records::{event, list, pod};

    fn keyframe(at: i64, rv: u64, objects: Vec<Box<RawValue>>) -> Record {
        Record::Keyframe {
            kind: "pods".into(),
            at,
            resource_version: rv.to_string(),
            objects,
        }
    }

    async fn run(pop_every: Duration, records: &[Record]) -> PipelineReport {
        let mut replay = PipelineReplay::new(PipelineOptions {
            fifos: FifoKind::ALL.to_vec(),
            pop_every,
            differences_shown: 10,
        })
        .unwrap();
        for record in records {
            replay.apply(record).await.unwrap();
        }
        replay.finish().await
    }

    fn summary(report: &PipelineReport, fifo: FifoKind) -> &FifoSummary {
        report.fifos.iter().find(|s| s.fifo == fifo).unwrap()
    }

    /// A list, then ns/a changed twice and ns/b deleted within one busy second, a keyframe.
    fn stream() -> Vec<Record> {
        vec![
            list(0, 1, vec![pod("a", 1), pod("b", 1)]),
            event(10, "MODIFIED", pod("a", 2), 2),
            event(20, "MODIFIED", pod("a", 3), 3),
            event(30, "DELETED", pod("b", 4), 4),
            keyframe(40, 4, vec![pod("a", 3)]),
            event(50, "ADDED", pod("c", 5), 5),
        ]
    }

    #[tokio::test]
    async fn a_busy_controller_sees_the_deltafifo_merge_and_every_store_match() {
        let report = run(Duration::from_secs(1), &stream()).await;
        assert_eq!(report.records, 6);
        let classic = summary(&report, FifoKind::Classic);
        // The list's pop came first; then ns/a's two updates are one item.
        assert_eq!(classic.merged_items, 1, "{classic:?}");
        assert_eq!(summary(&report, FifoKind::Real).merged_items, 0);
        assert_eq!(summary(&report, FifoKind::Atomic).replaced_all, 1);
        let points: Vec<(&CheckPoint, FifoKind, bool)> = report
            .checks
            .iter()
            .map(|c| (&c.point, c.fifo, c.identical))
            .collect();
        assert_eq!(points.len(), 6, "{points:?}");
        assert!(points.iter().all(|(_, _, ok)| *ok), "{:?}", report.checks);
        assert_eq!(
            report.checks[0].point,
            CheckPoint::Keyframe {
                index: 1,
                at: 40,
                resource_version: "4".into()
            }
        );
        assert_eq!(report.checks[5].point, CheckPoint::End);
        assert_eq!(report.checks[5].objects, 2);
        let pair = |a, b| {
            report
                .pairs
                .iter()
                .find(|p| p.first == a && p.second == b)
                .unwrap()
        };
        assert_eq!(
            pair(FifoKind::Classic, FifoKind::Real).counts.get("merged"),
            Some(&1)
        );
        assert_eq!(
            pair(FifoKind::Real, FifoKind::Atomic).counts.get("relist"),
            Some(&1)
        );
    }

    #[tokio::test]
    async fn a_controller_that_keeps_up_is_handed_no_merged_item() {
        let report = run(Duration::ZERO, &stream()).await;
        assert_eq!(summary(&report, FifoKind::Classic).merged_items, 0);
        assert!(report.first_mismatch().is_none(), "{:?}", report.checks);
    }

    #[tokio::test]
    async fn a_keyframe_the_stream_does_not_fold_to_is_a_mismatch_naming_the_key() {
        let mut records = stream();
        records[4] = keyframe(40, 4, vec![pod("a", 2)]);
        let report = run(Duration::ZERO, &records).await;
        let first = report.first_mismatch().unwrap();
        assert_eq!(first.fifo, FifoKind::Classic);
        assert_eq!(first.mismatched, ["ns/a"]);
        assert!(matches!(first.point, CheckPoint::Keyframe { index: 1, .. }));
    }

    #[test]
    fn a_fifo_is_run_once() {
        let options = |fifos: Vec<FifoKind>| PipelineOptions {
            fifos,
            pop_every: Duration::ZERO,
            differences_shown: 1,
        };
        assert!(matches!(
            PipelineReplay::new(options(Vec::new())),
            Err(PipelineError::NoFifo)
        ));
        assert!(matches!(
            PipelineReplay::new(options(vec![FifoKind::Real, FifoKind::Real])),
            Err(PipelineError::SameFifo(SameFifo(FifoKind::Real)))
        ));
    }
}
