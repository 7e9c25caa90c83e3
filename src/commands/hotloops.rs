//! `kscope hotloops`: watches the kinds asked for a while, and prints the field managers and
//! objects by write rate, flagging the managers whose writes keep triggering themselves
//! (see [`kscope_index_views::hotloops`]). Exits 1 when a loop is found.

use std::io::Write;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use kscope_client::cluster::ClusterArgs;
use kscope_index_views::hotloops::{EventKind, HotLoopDetector, HotReport};
use kscope_informers::instrument::tap::Tap;
use kscope_informers::running::RunningInformer;
use kscope_resources::{
    Deployment, GenericObject, KubeResource, Namespace, Node, Pod, ReplicaSet, ResourceKind, Secret,
};
use kscope_units::duration::parse_duration;

use super::object_args::table_or_json;
use super::{CommandError, InformerArgs, Resolved, prepare_informer};

/// Find controllers that trigger themselves.
#[derive(Debug, Clone, clap::Args)]
pub struct HotloopsArgs {
    /// The kinds to watch, named as for kubectl, separated by commas.
    #[arg(long, default_value = kscope_index_views::hotloops::HOT_KINDS)]
    pub kinds: String,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// How long to watch.
    #[arg(long = "for", value_parser = parse_duration, default_value = "30s", value_name = "DURATION")]
    pub duration: Duration,
    /// `json` for the report as JSON; a table otherwise.
    #[arg(short = 'o', long = "output", value_name = "FORMAT")]
    pub output: Option<String>,
}

/// One watch event, as the detector (and `kscope timeline`) takes it.
pub(super) struct Seen {
    pub(super) kind: String,
    pub(super) event: EventKind,
    pub(super) object: serde_json::Value,
}

pub async fn run(args: &HotloopsArgs, out: &mut impl Write) -> Result<(), CommandError> {
    args.cluster.refuse_namespace_set()?;
    let json = table_or_json(args.output.as_deref(), "hotloops")?;
    let informer = InformerArgs {
        resource: args.kinds.clone(),
        cluster: args.cluster.clone(),
        selector: None,
        field_selector: None,
        config: None,
        fifo: None,
        initial_list: None,
    };
    let kinds = informer.resolve_all().await?;
    let (sender, mut seen) = mpsc::channel::<Seen>(4096);
    let mut stops = Vec::new();
    for resolved in &kinds.resolved {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        stops.push(stop);
        let watch = follow(&informer, resolved, sender.clone(), stopped);
        tokio::spawn(watch?);
    }
    drop(sender);
    let started = Instant::now();
    let mut detector = HotLoopDetector::new();
    let deadline = tokio::time::sleep(args.duration);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            next = seen.recv() => match next {
                Some(s) => detector.observe(&s.kind, s.event, &s.object, started.elapsed().as_secs()),
                None => break,
            },
            () = &mut deadline => break,
        }
    }
    drop(stops);
    let report = detector.report(started.elapsed().as_secs());
    if json {
        serde_json::to_writer_pretty(&mut *out, &report).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        table(&report, out)?;
    }
    out.flush()?;
    if report.loops.is_empty() {
        return Ok(());
    }
    Err(CommandError::HotLoopFound(loop_lines(&report).join("; ")))
}

/// Each loop found, one line, in the words `kscope hotloops` fails with and the MCP
/// `hotloops` tool answers.
pub(super) fn loop_lines(report: &HotReport) -> Vec<String> {
    report
        .loops
        .iter()
        .map(|l| {
            format!(
                "{} rewrites what it just wrote ({:.1}/s; {})",
                l.manager,
                l.self_triggered_per_second,
                l.fields.join(", ")
            )
        })
        .collect()
}

fn table(report: &HotReport, out: &mut impl Write) -> Result<(), CommandError> {
    let mut tw = tabwriter::TabWriter::new(&mut *out).padding(3);
    writeln!(
        tw,
        "MANAGER\tKIND\tNAMESPACE/NAME\tWRITES/S\tSELF-TRIGGERED\tWRITES (STATUS/SPEC)\tPRECEDED BY\tFIELDS"
    )?;
    for o in &report.objects {
        writeln!(
            tw,
            "{}\t{}\t{}/{}\t{:.1}\t{:.1}/s\t{}/{}\t{}\t{}",
            o.manager,
            o.kind,
            o.namespace,
            o.name,
            o.writes_per_second,
            o.self_triggered_per_second,
            o.status_writes,
            o.spec_writes,
            o.preceded_by.first().map_or("<none>", String::as_str),
            if o.fields.is_empty() {
                "<none>".to_string()
            } else {
                o.fields.join(",")
            }
        )?;
    }
    tw.flush()?;
    Ok(())
}

/// Starts an informer on one kind whose tap's watch events go to `sender` until `stopped`.
pub(super) fn follow(
    args: &InformerArgs,
    resolved: &Resolved,
    sender: mpsc::Sender<Seen>,
    stopped: tokio::sync::oneshot::Receiver<()>,
) -> Result<impl std::future::Future<Output = ()> + Send + 'static, CommandError> {
    Ok(match resolved.kind.built_in() {
        Some(ResourceKind::Pods) => boxed::<Pod>(args, resolved, sender, stopped)?,
        Some(ResourceKind::Nodes) => boxed::<Node>(args, resolved, sender, stopped)?,
        Some(ResourceKind::Namespaces) => boxed::<Namespace>(args, resolved, sender, stopped)?,
        Some(ResourceKind::Deployments) => boxed::<Deployment>(args, resolved, sender, stopped)?,
        Some(ResourceKind::ReplicaSets) => boxed::<ReplicaSet>(args, resolved, sender, stopped)?,
        Some(ResourceKind::Secrets) => boxed::<Secret>(args, resolved, sender, stopped)?,
        None => boxed::<GenericObject>(args, resolved, sender, stopped)?,
    })
}

type Following = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

fn boxed<T: KubeResource + kscope_index_views::definitions::Indexable>(
    args: &InformerArgs,
    resolved: &Resolved,
    sender: mpsc::Sender<Seen>,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
) -> Result<Following, CommandError> {
    let tap = Tap::new(4096, kscope_resources::secret::keepable_raw);
    let mut entries = tap.subscribe();
    let prepared = prepare_informer::<T>(args, resolved, Some(tap))?;
    let kind = resolved.kind.to_string();
    Ok(Box::pin(async move {
        let informer =
            RunningInformer::start(prepared.config, prepared.lister_watcher, prepared.writer);
        loop {
            let entry = tokio::select! {
                _ = &mut stopped => break,
                entry = entries.recv() => entry,
            };
            let entry = match entry {
                Ok(entry) => entry,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, %kind, "hotloops fell behind the watch");
                    continue;
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
            };
            let Some((event, object)) = EventKind::of_entry(&entry) else {
                continue;
            };
            let seen = Seen {
                kind: kind.clone(),
                event,
                object,
            };
            if sender.send(seen).await.is_err() {
                break;
            }
        }
        informer.shutdown().await;
    }))
}
