//! `kscope deltas`: the tap as JSON lines, one per watch event, delta, relist or error.

use std::io::Write;
use std::time::Duration;

use k8s_openapi::jiff;
use tokio::sync::broadcast::error::RecvError;

use crate::duration::parse_duration;
use crate::informers::lister_watcher::WatchEventType;
use crate::informers::running::RunningInformer;
use crate::informers::tap::{HealthLevel, Tap, TapEntry, TapKind};
use crate::resources::{
    Deployment, KubeResource, Namespace, Node, Pod, ReplicaSet, ResourceKind, Secret,
};

use super::{CommandError, InformerArgs, gives_up, start_informer};

/// Stream raw watch events and DeltaFIFO deltas as JSON lines.
#[derive(Debug, Clone, clap::Args)]
pub struct DeltasArgs {
    #[command(flatten)]
    pub informer: InformerArgs,
    /// Stop after this long (default: until interrupted).
    #[arg(long = "for", value_parser = parse_duration, value_name = "DURATION")]
    pub duration: Option<Duration>,
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

pub async fn run(args: &DeltasArgs, out: &mut impl Write) -> Result<(), CommandError> {
    let kind = args.informer.kind()?;
    match kind {
        ResourceKind::Pods => stream::<Pod>(args, kind, out).await,
        ResourceKind::Nodes => stream::<Node>(args, kind, out).await,
        ResourceKind::Namespaces => stream::<Namespace>(args, kind, out).await,
        ResourceKind::Deployments => stream::<Deployment>(args, kind, out).await,
        ResourceKind::ReplicaSets => stream::<ReplicaSet>(args, kind, out).await,
        ResourceKind::Secrets => stream::<Secret>(args, kind, out).await,
    }
}

async fn stream<T: KubeResource + crate::index_views::definitions::Indexable>(
    args: &DeltasArgs,
    kind: ResourceKind,
    out: &mut impl Write,
) -> Result<(), CommandError> {
    let tap = Tap::new(4096, crate::resources::secret::keepable_raw);
    let mut entries = tap.subscribe();
    let (informer, _) = start_informer::<T>(&args.informer, kind, Some(tap)).await?;

    let streamed = print_entries(&informer, kind.plural(), &mut entries, args.duration, out).await;
    informer.shutdown().await;
    streamed
}

/// Prints entries until the deadline, an interrupt, or a fatal error before the first sync.
/// A stream that ends before its informer ever synced is an error (exit code 3): what it
/// printed was never a whole picture.
async fn print_entries<T: KubeResource>(
    informer: &RunningInformer<T>,
    resource: &str,
    entries: &mut tokio::sync::broadcast::Receiver<std::sync::Arc<TapEntry>>,
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
    loop {
        tokio::select! {
            result = &mut synced, if sync_pending => {
                sync_pending = false;
                result.map_err(CommandError::Sync)?;
            }
            entry = entries.recv() => match entry {
                Ok(entry) => {
                    serde_json::to_writer(&mut *out, &DeltaLine::new(&entry)).map_err(std::io::Error::from)?;
                    writeln!(out)?;
                }
                Err(RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, "deltas output fell behind the tap");
                    eprintln!("kscope: output fell behind; {missed} entries skipped");
                }
                Err(RecvError::Closed) => break,
            },
            () = &mut deadline => break,
            _ = tokio::signal::ctrl_c() => break,
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
