//! `kscope deltas`: the tap as JSON lines, one per watch event, delta, relist or error; with
//! `--handoffs` also what each pop hands the handlers, and with `--compare FIFO` a second
//! pipeline on the same watch stream, its handoffs, and where the two differ.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff;
use tokio::sync::broadcast::error::RecvError;

use kscope_informers::fifo::{FifoKind, HandedItem, Handoff};
use kscope_informers::instrument::compare::{Difference, PipelineComparison, merge_handoffs};
use kscope_informers::instrument::tap::{HealthLevel, Tap, TapEntry, TapKind};
use kscope_informers::lister_watcher::WatchEventType;
use kscope_informers::running::RunningInformer;
use kscope_resources::{
    Deployment, GenericObject, KubeResource, Namespace, Node, Pod, ReplicaSet, ResourceKind, Secret,
};
use kscope_units::duration::parse_duration;

use super::{CommandError, InformerArgs, Resolved, gives_up, prepare_informer};

/// Stream raw watch events and DeltaFIFO deltas as JSON lines.
#[derive(Debug, Clone, clap::Args)]
pub struct DeltasArgs {
    #[command(flatten)]
    pub informer: InformerArgs,
    /// Stop after this long (default: until interrupted).
    #[arg(long = "for", value_parser = parse_duration, value_name = "DURATION")]
    pub duration: Option<Duration>,
    /// Also print what each pop from the FIFO hands the handlers (`source: handoff`): one
    /// key's merged deltas (classic), or a batch of in-order items.
    #[arg(long)]
    pub handoffs: bool,
    /// Run a second pipeline with this FIFO on the same watch stream, print both pipelines'
    /// handoffs, and mark where they differ (`source: compare`: merged, order, relist,
    /// resync).
    #[arg(long, value_name = "FIFO")]
    pub compare: Option<FifoKind>,
    /// Instead of RESOURCE's stream: the events on this object and on the objects it
    /// controls (of RESOURCE's kinds; by default the workload kinds and what they own),
    /// grouped into the reconciles a workqueue would run for it, each with what it ran
    /// because of.
    #[arg(long, value_name = "KIND/NAMESPACE/NAME")]
    pub for_owner: Option<String>,
    /// With --for-owner: how long each reconcile runs, so events during one make one more.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION", default_value = "1s")]
    pub reconcile_duration: Duration,
}

/// One tap entry as a JSON line, fields in reading order.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeltaLine<'a> {
    pub time: String,
    pub seq: u64,
    /// `watch` (a raw watch event), `delta` (applied from the DeltaFIFO) or `reflector`.
    pub source: &'static str,
    #[serde(rename = "type")]
    pub event_type: &'static str,
    /// `info` or `warn` for the Reflector's health (type HEALTH) and errors (ERROR).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<&'a str>,
    /// Field paths changed since the previous MODIFIED of the same key, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<&'a str>,
}

impl<'a> DeltaLine<'a> {
    pub fn new(entry: &'a TapEntry) -> Self {
        let (source, event_type) = match &entry.kind {
            TapKind::Watch(t) => ("watch", t.as_str()),
            TapKind::Delta(t) => ("delta", t.as_str()),
            other => ("reflector", other.label()),
        };
        Self {
            time: jiff::Timestamp::try_from(entry.at)
                .map(|t| t.to_string())
                .unwrap_or_default(),
            seq: entry.seq,
            source,
            event_type,
            level: match entry.kind {
                TapKind::Health(level) => Some(level.as_str()),
                TapKind::Error => Some(HealthLevel::Warn.as_str()),
                _ => None,
            },
            key: entry.key.as_deref(),
            resource_version: entry.resource_version.as_deref(),
            changed: (entry.kind == TapKind::Watch(WatchEventType::Modified))
                .then(|| entry.changed_paths())
                .flatten(),
            message: entry.message.as_deref(),
        }
    }
}

/// One delta of a handoff.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HandedDeltaLine<'a> {
    #[serde(rename = "type")]
    pub delta_type: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub tombstone: bool,
}

/// One item of a handoff: a key and its deltas, or a whole-store item.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HandedItemLine<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deltas: Option<Vec<HandedDeltaLine<'a>>>,
    /// ReplacedAll, SyncAll or Bookmark.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub item_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub objects: Option<usize>,
}

impl<'a> HandedItemLine<'a> {
    fn new(item: &'a HandedItem) -> Self {
        let whole = |item_type, resource_version, objects| Self {
            key: None,
            deltas: None,
            item_type: Some(item_type),
            resource_version,
            objects,
        };
        match item {
            HandedItem::Deltas { key, deltas } => Self {
                key: Some(key),
                deltas: Some(
                    deltas
                        .iter()
                        .map(|d| HandedDeltaLine {
                            delta_type: d.delta_type.as_str(),
                            resource_version: d.resource_version.as_deref(),
                            tombstone: d.tombstone,
                        })
                        .collect(),
                ),
                item_type: None,
                resource_version: None,
                objects: None,
            },
            HandedItem::ReplacedAll {
                resource_version,
                objects,
            } => whole("ReplacedAll", Some(resource_version), Some(*objects)),
            HandedItem::SyncAll => whole("SyncAll", None, None),
            HandedItem::Bookmark { resource_version } => {
                whole("Bookmark", Some(resource_version), None)
            }
        }
    }
}

/// What one pop handed a pipeline's handlers.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HandoffLine<'a> {
    pub time: String,
    /// Always `handoff`.
    pub source: &'static str,
    pub fifo: &'static str,
    pub seq: u64,
    pub initial: bool,
    pub items: Vec<HandedItemLine<'a>>,
}

impl<'a> HandoffLine<'a> {
    pub fn new(handoff: &'a Handoff) -> Self {
        Self {
            time: now(),
            source: "handoff",
            fifo: handoff.fifo.as_str(),
            seq: handoff.seq,
            initial: handoff.is_in_initial_list,
            items: handoff.items.iter().map(HandedItemLine::new).collect(),
        }
    }
}

/// Where the two compared pipelines hand different things.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DifferenceLine<'a> {
    pub time: String,
    /// Always `compare`.
    pub source: &'static str,
    /// merged, order, relist or resync.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The pipeline whose handoff (`seq`) shows it.
    pub fifo: &'static str,
    pub seq: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<&'a str>,
    pub message: &'a str,
}

impl<'a> DifferenceLine<'a> {
    pub fn new(difference: &'a Difference) -> Self {
        Self {
            time: now(),
            source: "compare",
            kind: difference.kind.as_str(),
            fifo: difference.fifo.as_str(),
            seq: difference.seq,
            key: difference.key.as_deref(),
            message: &difference.message,
        }
    }
}

fn now() -> String {
    jiff::Timestamp::now().to_string()
}

pub async fn run(args: &DeltasArgs, out: &mut impl Write) -> Result<(), CommandError> {
    args.informer.cluster.refuse_namespace_set()?;
    let r = &args.informer.resolve().await?;
    match r.kind.built_in() {
        Some(ResourceKind::Pods) => stream::<Pod>(args, r, out).await,
        Some(ResourceKind::Nodes) => stream::<Node>(args, r, out).await,
        Some(ResourceKind::Namespaces) => stream::<Namespace>(args, r, out).await,
        Some(ResourceKind::Deployments) => stream::<Deployment>(args, r, out).await,
        Some(ResourceKind::ReplicaSets) => stream::<ReplicaSet>(args, r, out).await,
        Some(ResourceKind::Secrets) => stream::<Secret>(args, r, out).await,
        None => stream::<GenericObject>(args, r, out).await,
    }
}

async fn stream<T: KubeResource + kscope_index_views::definitions::Indexable>(
    args: &DeltasArgs,
    resolved: &Resolved,
    out: &mut impl Write,
) -> Result<(), CommandError> {
    let kind = &resolved.kind;
    let tap = Tap::new(4096, kscope_resources::secret::keepable_raw);
    let mut entries = tap.subscribe();
    let prepared = prepare_informer::<T>(&args.informer, resolved, Some(tap))?;
    let fifo = prepared.config.fifo;
    let (informer, handoffs) = match args.compare {
        Some(other) => {
            let comparison = PipelineComparison::new(fifo, other)
                .map_err(|e| CommandError::Usage(format!("--compare {other}: {e}")))?;
            let (informer, second) = RunningInformer::start_compared(
                prepared.config,
                prepared.lister_watcher,
                prepared.writer,
                other,
                prepared.other_writer,
            );
            let receivers = vec![
                informer.informer().subscribe_handoffs(),
                second.subscribe_handoffs(),
            ];
            (informer, Some((receivers, Some(comparison))))
        }
        None => {
            let informer =
                RunningInformer::start(prepared.config, prepared.lister_watcher, prepared.writer);
            let receivers = vec![informer.informer().subscribe_handoffs()];
            (informer, args.handoffs.then_some((receivers, None)))
        }
    };
    let handoffs = handoffs.map(|(receivers, comparison)| Handoffs {
        merged: merge_handoffs(receivers),
        comparison,
    });
    let streamed = print_entries(
        &informer,
        &kind.to_string(),
        &mut entries,
        handoffs,
        args.duration,
        out,
    )
    .await;
    informer.shutdown().await;
    streamed
}

/// The handoff streams printed, merged into one, and the comparison reading them.
struct Handoffs {
    merged: tokio::sync::mpsc::Receiver<Result<Arc<Handoff>, u64>>,
    comparison: Option<PipelineComparison>,
}

fn write_line(out: &mut impl Write, line: &impl serde::Serialize) -> Result<(), CommandError> {
    serde_json::to_writer(&mut *out, line).map_err(std::io::Error::from)?;
    writeln!(out)?;
    Ok(())
}

/// Prints entries until the deadline, an interrupt, or a fatal error before the first sync.
/// A stream that ends before its informer ever synced is an error (exit code 3): what it
/// printed was never a whole picture.
async fn print_entries<T: KubeResource>(
    informer: &RunningInformer<T>,
    resource: &str,
    entries: &mut tokio::sync::broadcast::Receiver<std::sync::Arc<TapEntry>>,
    mut handoffs: Option<Handoffs>,
    duration: Option<Duration>,
    out: &mut impl Write,
) -> Result<(), CommandError> {
    let deadline = async {
        match duration {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(deadline);
    let synced = informer.wait_for_sync(gives_up);
    tokio::pin!(synced);
    let mut sync_pending = true;
    let started = std::time::Instant::now();
    // One listener for the whole run: a new one each turn would miss a SIGINT that arrives
    // while a line is being written.
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    loop {
        tokio::select! {
            result = &mut synced, if sync_pending => {
                sync_pending = false;
                result.map_err(CommandError::Sync)?;
            }
            Some(handoff) = async {
                match handoffs.as_mut() {
                    Some(h) => h.merged.recv().await,
                    None => std::future::pending().await,
                }
            } => match handoff {
                Ok(handoff) => {
                    write_line(out, &HandoffLine::new(&handoff))?;
                    if let Some(comparison) = handoffs.as_mut().and_then(|h| h.comparison.as_mut()) {
                        for difference in comparison.observe(&handoff) {
                            write_line(out, &DifferenceLine::new(&difference))?;
                        }
                    }
                }
                Err(missed) => {
                    tracing::warn!(missed, "handoff output fell behind");
                    eprintln!("kscope: output fell behind; {missed} handoffs skipped");
                }
            },
            entry = entries.recv() => match entry {
                Ok(entry) => write_line(out, &DeltaLine::new(&entry))?,
                Err(RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, "deltas output fell behind the tap");
                    eprintln!("kscope: output fell behind; {missed} entries skipped");
                }
                Err(RecvError::Closed) => break,
            },
            () = &mut deadline => break,
            _ = &mut interrupted => break,
        }
    }
    out.flush()?;
    if sync_pending {
        return Err(CommandError::NotSynced {
            resource: resource.to_string(),
            waited: started.elapsed(),
            last_error: informer.status().borrow().last_error.clone(),
        });
    }
    Ok(())
}
