//! `kscope timeline`: one object's history as a controller author reads it — the object as
//! first read with each field's last writer (from managedFields), every version the watch
//! delivers while it runs with the fields changed and who owns them now, and its Events,
//! ordered by resourceVersion (see [`kscope_index_views::timeline`]).

use std::io::Write;
use std::time::Duration;

use tokio::sync::mpsc;

use kscope_client::cluster::ClusterArgs;
use kscope_client::discovery::Discovery;
use kscope_client::fetch::{ListRequest, fetch_all, fetch_object};
use kscope_config::Config;
use kscope_index_views::timeline::{Entry, LiveTimeline};
use kscope_resources::Kind;
use kscope_units::duration::parse_duration;

use super::hotloops::{Seen, follow};
use super::object_args::{kind_and_name, table_or_json};
use super::tree::resolve_kind;
use super::{CommandError, InformerArgs, Resolved};

/// Print one object's timeline: its versions, its Events, and for each changed field the
/// manager that changed it, ordered by resourceVersion.
#[derive(Debug, Clone, clap::Args)]
pub struct TimelineArgs {
    /// The object, KIND/NAME (`widget/w1`, `deploy/web`).
    #[arg(value_name = "KIND/NAME")]
    pub object: String,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// How long to watch the object for new versions before printing; 0s prints it as it
    /// is now, each field with its last writer.
    #[arg(long = "for", value_parser = parse_duration, default_value = "0s", value_name = "DURATION")]
    pub duration: Duration,
    /// `json` for the entries as JSON; a table otherwise.
    #[arg(short = 'o', long = "output", value_name = "FORMAT")]
    pub output: Option<String>,
}

pub async fn run(args: &TimelineArgs, out: &mut impl Write) -> Result<(), CommandError> {
    args.cluster.refuse_namespace_set()?;
    let json = table_or_json(args.output.as_deref(), "timeline")?;
    let (kind_name, name) = kind_and_name(&args.object, "widget/w1")?;
    let config = Config::load(None)?;
    let cluster = args.cluster.connect().await?;
    let discovery = Discovery::run(&cluster.client).await?;
    let kind = resolve_kind(&discovery, kind_name)?;
    let events_kind = resolve_kind(&discovery, "events")?;
    let namespace = args
        .cluster
        .scope(&cluster)
        .namespace()
        .filter(|_| kind.namespaced())
        .map(str::to_string);
    let informer = InformerArgs {
        resource: String::new(),
        cluster: args.cluster.clone(),
        selector: None,
        field_selector: None,
        config: None,
        fifo: None,
        initial_list: None,
    };
    let resolved = Resolved {
        config,
        cluster,
        kind,
        discovery,
    };
    let entries = timeline_of(
        &informer,
        &resolved,
        &events_kind,
        namespace.as_deref(),
        name,
        args.duration,
    )
    .await?;
    if json {
        serde_json::to_writer_pretty(&mut *out, &entries).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        table(&entries, out)?;
    }
    out.flush()?;
    Ok(())
}

/// One object's timeline: the object as read now, each version the watch delivers for
/// `duration` after, and its Events, ordered by resourceVersion. Shared by `kscope timeline`
/// and the MCP `timeline` tool, so both say the same things in the same words.
pub(super) async fn timeline_of(
    informer: &InformerArgs,
    resolved: &Resolved,
    events_kind: &Kind,
    namespace: Option<&str>,
    name: &str,
    duration: Duration,
) -> Result<Vec<Entry>, CommandError> {
    // Watching starts before the object is read, so no version falls between the two.
    let (sender, mut seen) = mpsc::channel::<Seen>(1024);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let watching = tokio::spawn(follow(informer, resolved, sender, stopped)?);
    let first = fetch_object(
        &resolved.cluster.client,
        resolved.kind.clone(),
        namespace,
        name,
    )
    .await?;
    let mut timeline = LiveTimeline::new();
    timeline.first_read(first);
    let deadline = tokio::time::sleep(duration);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            next = seen.recv() => match next {
                Some(s) => {
                    timeline.version(s.event.watch_type(), &s.object);
                }
                None => break,
            },
            () = &mut deadline => break,
        }
    }
    drop(stop);
    // The task ends by shutting its informer down; one that panicked has nothing to add.
    let _ = watching.await;
    let events = fetch_all(
        &resolved.cluster.client,
        &ListRequest {
            kind: events_kind,
            namespace,
            label_selector: None,
            field_selector: None,
        },
    )
    .await?;
    for event in &events {
        timeline.event(event);
    }
    Ok(timeline.entries())
}

fn table(entries: &[Entry], out: &mut impl Write) -> Result<(), CommandError> {
    let mut tw = tabwriter::TabWriter::new(&mut *out).padding(3);
    writeln!(tw, "RV\tWHAT\tFIELD / EVENT\tBY")?;
    for entry in entries {
        if let Some(event) = &entry.event {
            writeln!(
                tw,
                "{}\t{}\t{}\t{}",
                entry.resource_version,
                entry.what,
                event.summary(),
                event.source
            )?;
            continue;
        }
        if entry.changes.is_empty() {
            writeln!(tw, "{}\t{}\t\t", entry.resource_version, entry.what)?;
        }
        for (i, change) in entry.changes.iter().enumerate() {
            let (rv, what) = if i == 0 {
                (entry.resource_version.as_str(), entry.what.as_str())
            } else {
                ("", "")
            };
            writeln!(tw, "{rv}\t{what}\t{}\t{}", change.path, change.by())?;
        }
    }
    tw.flush()?;
    Ok(())
}
