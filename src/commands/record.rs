//! `kscope record`: the lists and watch streams of some kinds written to a recording
//! (`docs/recording.md`) by a [`RecordingSession`], until a deadline or a signal.

use std::path::PathBuf;
use std::time::Duration;

use kscope_client::cluster::ClusterArgs;
use kscope_client::discovery::Discovery;
use kscope_client::record::RecordingSession;
use kscope_resources::{Kind, ResourceKind};
use kscope_units::duration::parse_duration;

use super::CommandError;

/// Record the lists and watch events of some kinds to a file.
#[derive(Debug, Clone, clap::Args)]
pub struct RecordArgs {
    /// The resources to record, named as for kubectl (pods, deploy.apps, widgets.example.com).
    pub resources: Vec<String>,
    /// Record every kind kscope has a projection of (pods, nodes, namespaces, deployments,
    /// replicasets, secrets).
    #[arg(long, conflicts_with = "resources")]
    pub all: bool,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// The recording to write (replaced if it exists).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// Stop after this long (default: until interrupted).
    #[arg(long = "for", value_parser = parse_duration, value_name = "DURATION")]
    pub duration: Option<Duration>,
}

/// How often a failed write is looked for, so the command stops soon after one.
const CHECK_EVERY: Duration = Duration::from_secs(1);

pub async fn run(args: &RecordArgs) -> Result<(), CommandError> {
    args.cluster.refuse_namespace_set()?;
    let cluster = args.cluster.connect().await?;
    let kinds = resolve_kinds(args, &cluster).await?;
    let scope = args.cluster.scope(&cluster);
    let failed = |kept: u64| {
        let path = args.output.clone();
        move |source| CommandError::RecordingTo { path, kept, source }
    };
    let session = RecordingSession::start(&cluster, &kinds, scope.namespace(), &args.output)
        .map_err(failed(0))?;
    let waited = wait(args.duration, &session).await;
    let kinds = session.kinds().join(", ");
    // What was whole before a failed write: the file keeps it, a reader stops at the cut.
    let kept = session.stats().bytes;
    let stats = session.stop().await.map_err(failed(kept))?;
    waited?;
    eprintln!(
        "kscope: recorded {} events ({} records) of {kinds} to {}: {} bytes, {:.1} bytes per event",
        stats.events,
        stats.records,
        args.output.display(),
        stats.bytes,
        stats.bytes as f64 / stats.events.max(1) as f64,
    );
    Ok(())
}

/// Waits for the deadline, SIGINT, SIGTERM or a failed write (which `stop` returns).
async fn wait(duration: Option<Duration>, session: &RecordingSession) -> Result<(), CommandError> {
    let deadline = async {
        match duration {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(deadline);
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    let mut terminated = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut check = tokio::time::interval(CHECK_EVERY);
    loop {
        tokio::select! {
            () = &mut deadline => return Ok(()),
            _ = &mut interrupted => return Ok(()),
            _ = terminated.recv() => return Ok(()),
            _ = check.tick() => if session.failure().is_some() {
                return Ok(());
            },
        }
    }
}

async fn resolve_kinds(
    args: &RecordArgs,
    cluster: &kscope_client::cluster::Cluster,
) -> Result<Vec<Kind>, CommandError> {
    if args.all {
        return Ok(ResourceKind::ALL.into_iter().map(Kind::BuiltIn).collect());
    }
    if args.resources.is_empty() {
        return Err(CommandError::Usage(
            "name the resources to record (pods deploy ...), or --all".into(),
        ));
    }
    let mut discovery: Option<Discovery> = None;
    let mut kinds = Vec::new();
    for name in &args.resources {
        let kind = match name.parse::<ResourceKind>() {
            Ok(kind) => Kind::BuiltIn(kind),
            Err(_) => {
                let discovered = match &mut discovery {
                    Some(d) => d,
                    None => discovery.insert(Discovery::run(&cluster.client).await?),
                };
                discovered.resolve(name)?
            }
        };
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    Ok(kinds)
}
