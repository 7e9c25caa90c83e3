//! kscope's command line: parses flags, picks a mode and reports errors. Nothing else lives here.

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use kscope::commands::deltas::DeltasArgs;
use kscope::commands::get::GetArgs;
use kscope::commands::hotloops::HotloopsArgs;
use kscope::commands::mcp::McpArgs;
use kscope::commands::metrics::MetricsArgs;
use kscope::commands::timeline::TimelineArgs;
use kscope::commands::tree::TreeArgs;

/// A terminal cluster explorer for Kubernetes, built on a faithful port of client-go's informers.
#[derive(Debug, Parser)]
#[command(name = "kscope", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Without a command: open the TUI on a simulated cluster started in this process.
    #[arg(long)]
    demo: bool,
    /// Never write to the cluster, whatever the configuration says (the default, unless the
    /// configuration's `readwrite:` turns writes on).
    #[arg(long, conflicts_with = "readwrite")]
    readonly: bool,
    /// Let the write keys (delete, kill, restart, scale, cordon, drain...) write, each after
    /// a confirm dialog, whatever the configuration says; the header says READ-WRITE.
    #[arg(long)]
    readwrite: bool,
    /// Without a command: configuration file merged over the built-in one (default:
    /// $XDG_CONFIG_HOME/kscope/config.yaml if it exists).
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
    #[command(flatten)]
    cluster: kscope_client::cluster::ClusterArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Sync an informer and print its store, like kubectl get.
    Get(GetArgs),
    /// Stream raw watch events and DeltaFIFO deltas as JSON lines.
    Deltas(DeltasArgs),
    /// Find controllers that trigger themselves: write rates per field manager and object.
    Hotloops(HotloopsArgs),
    /// Serve the Model Context Protocol on stdio from kscope's indexed stores (read-only).
    Mcp(McpArgs),
    /// Print an object's ownership tree, down to what it owns or (--up) up to its root.
    Tree(TreeArgs),
    /// Print one object's versions, Events and each changed field's manager, by resourceVersion.
    Timeline(TimelineArgs),
    /// Record the lists and watch events of some kinds to a file (docs/recording.md).
    Record(kscope::commands::record::RecordArgs),
    /// Print the store a recording held at its end, or at a time or resourceVersion.
    Replay(kscope::commands::replay::ReplayArgs),
    /// Read a controller's own Prometheus metrics through the API server's pod proxy.
    Metrics(MetricsArgs),
    /// Serve a simulated Kubernetes API server (list/watch, churn, faults) on loopback.
    Sim(kscope_sim::cli::SimArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let _log = match kscope::logging::init() {
        Ok((guard, _)) => Some(guard),
        Err(why) => {
            eprintln!("kscope: logging is off: {why}");
            None
        }
    };
    match run(cli) {
        Ok(code) => code,
        // The reader went away (`kscope get pods | head`): nothing to report.
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            // Library errors already say what caused them, so the chain is not repeated.
            tracing::error!("{err}");
            eprintln!("error: {err}");
            match err.downcast_ref::<kscope::commands::CommandError>() {
                Some(command) => ExitCode::from(command.exit_code()),
                None => ExitCode::FAILURE,
            }
        }
    }
}

/// The command with what was given before it applied to it: cluster flags (as kubectl takes
/// `kubectl --kubeconfig F get pods`) and `--config`. A flag that means nothing to the
/// command is an error, never silently ignored.
fn with_outer_flags(command: Command, cli: &Cli) -> anyhow::Result<Command> {
    let before = |flag: &str, name: &str| {
        anyhow::anyhow!("{flag} is given before `kscope {name}`, which does not take it")
    };
    let name = match &command {
        Command::Get(_) => "get",
        Command::Deltas(_) => "deltas",
        Command::Hotloops(_) => "hotloops",
        Command::Mcp(_) => "mcp",
        Command::Tree(_) => "tree",
        Command::Timeline(_) => "timeline",
        Command::Metrics(_) => "metrics",
        Command::Sim(_) => "sim",
        Command::Record(_) => "record",
        Command::Replay(_) => "replay",
    };
    if cli.demo {
        return Err(before("--demo", name));
    }
    match command {
        Command::Sim(_) if cli.cluster.any_given() => Err(before("a cluster flag", name)),
        Command::Sim(_) if cli.config.is_some() => Err(before("--config", name)),
        Command::Sim(args) => Ok(Command::Sim(args)),
        Command::Get(mut args) => {
            args.informer = with_outer_informer(args.informer, cli)?;
            Ok(Command::Get(args))
        }
        Command::Deltas(mut args) => {
            args.informer = with_outer_informer(args.informer, cli)?;
            Ok(Command::Deltas(args))
        }
        Command::Replay(_) if cli.cluster.any_given() => Err(before("a cluster flag", name)),
        Command::Replay(_) if cli.config.is_some() => Err(before("--config", name)),
        Command::Replay(args) => Ok(Command::Replay(args)),
        Command::Record(_) if cli.config.is_some() => Err(before("--config", name)),
        Command::Record(mut args) => {
            args.cluster = args
                .cluster
                .with_outer(&cli.cluster)
                .map_err(anyhow::Error::msg)?;
            Ok(Command::Record(args))
        }
        Command::Hotloops(_) if cli.config.is_some() => Err(before("--config", name)),
        Command::Hotloops(mut args) => {
            args.cluster = args
                .cluster
                .with_outer(&cli.cluster)
                .map_err(anyhow::Error::msg)?;
            Ok(Command::Hotloops(args))
        }
        Command::Metrics(_) if cli.config.is_some() => Err(before("--config", name)),
        Command::Metrics(mut args) => {
            args.cluster = args
                .cluster
                .with_outer(&cli.cluster)
                .map_err(anyhow::Error::msg)?;
            Ok(Command::Metrics(args))
        }
        Command::Mcp(mut args) => {
            args.cluster = args
                .cluster
                .with_outer(&cli.cluster)
                .map_err(anyhow::Error::msg)?;
            args.config = with_outer_config(args.config, cli)?;
            Ok(Command::Mcp(args))
        }
        Command::Tree(_) if cli.config.is_some() => Err(before("--config", name)),
        Command::Tree(mut args) => {
            args.cluster = args
                .cluster
                .with_outer(&cli.cluster)
                .map_err(anyhow::Error::msg)?;
            Ok(Command::Tree(args))
        }
        Command::Timeline(_) if cli.config.is_some() => Err(before("--config", name)),
        Command::Timeline(mut args) => {
            args.cluster = args
                .cluster
                .with_outer(&cli.cluster)
                .map_err(anyhow::Error::msg)?;
            Ok(Command::Timeline(args))
        }
    }
}

fn with_outer_informer(
    mut informer: kscope::commands::InformerArgs,
    cli: &Cli,
) -> anyhow::Result<kscope::commands::InformerArgs> {
    informer.cluster = informer
        .cluster
        .with_outer(&cli.cluster)
        .map_err(anyhow::Error::msg)?;
    informer.config = with_outer_config(informer.config, cli)?;
    Ok(informer)
}

/// The command's `--config`, or the one given before it; both given must agree.
fn with_outer_config(
    inner: Option<std::path::PathBuf>,
    cli: &Cli,
) -> anyhow::Result<Option<std::path::PathBuf>> {
    match (inner, &cli.config) {
        (Some(inner), Some(outer)) if inner != *outer => {
            anyhow::bail!(
                "--config is given both before the command and after it, with different values"
            )
        }
        (None, Some(outer)) => Ok(Some(outer.clone())),
        (inner, _) => Ok(inner),
    }
}

/// How long a context of several may take to be given a client (a credential plugin may
/// hang) before the TUI opens without it.
const FLEET_CONNECT_BOUND: std::time::Duration = std::time::Duration::from_secs(10);

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Runs the command, or the TUI; the TUI ended by a signal exits as a shell expects (143
/// after SIGTERM).
fn run(mut cli: Cli) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new()?;
    // A file grown past the size limit (`ulimit -f`) raises SIGXFSZ, whose default kills
    // kscope mid-write with no word said. Caught (for the whole run: Tokio never removes a
    // handler), the write fails with EFBIG instead, and the recording, log or output that
    // made it says so and stops as on a full disk.
    let _file_size_limit = {
        let _runtime = runtime.enter();
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::from_raw(libc::SIGXFSZ))?
    };
    let Some(command) = cli.command.take() else {
        // A bad configuration (indexes or keys) is reported before connecting to anything.
        let config = kscope_config::Config::load(cli.config.as_deref())?;
        let readwrite = match (cli.readwrite, cli.readonly) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        };
        let exit = runtime.block_on(async {
            let exit = if cli.demo {
                let (demo, mut launch) = kscope::demo::Demo::start(&cli.cluster).await?;
                launch.readwrite = readwrite;
                let result = kscope_ui::run(launch, config).await;
                demo.shutdown().await;
                result?
            } else if cli.cluster.several_contexts() {
                // Several contexts: one table across their clusters.
                let (mut launch, fleet) =
                    kscope_ui::Launch::connect_fleet(&cli.cluster, FLEET_CONNECT_BOUND).await?;
                launch.readwrite = readwrite;
                kscope_ui::run_fleet(launch, fleet, config).await?
            } else {
                let mut launch = kscope_ui::Launch::connect(&cli.cluster).await?;
                launch.readwrite = readwrite;
                kscope_ui::run(launch, config).await?
            };
            anyhow::Ok(exit)
        })?;
        return Ok(ExitCode::from(exit.code()));
    };
    let command = with_outer_flags(command, &cli)?;
    if let Command::Replay(args) = &command
        && !args.print
        && args.fifo.is_empty()
    {
        if args.kind.is_some() {
            anyhow::bail!(
                "kscope replay: a KIND is printed with --print; the TUI switches with :KIND"
            );
        }
        let config = kscope_config::Config::load(None)?;
        let exit = runtime.block_on(async {
            let (replay, launch) =
                kscope::replay_tui::ReplayTui::start(&args.file, args.speed, args.at.as_deref())
                    .await?;
            let result = kscope_ui::run(launch, config).await;
            replay.shutdown().await;
            anyhow::Ok(result?)
        })?;
        return Ok(ExitCode::from(exit.code()));
    }
    if let Command::Mcp(args) = &command {
        // The protocol writes stdout from Tokio's threads: the lock below would stall it.
        runtime.block_on(kscope::commands::mcp::run(args))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut stdout = std::io::stdout().lock();
    match command {
        // Several contexts are a fleet: one table or List across the clusters.
        Command::Get(args) if args.informer.cluster.several_contexts() => {
            runtime.block_on(kscope::commands::fleet::run(&args, &mut stdout))?
        }
        Command::Get(args) => runtime.block_on(kscope::commands::get::run(&args, &mut stdout))?,
        Command::Deltas(args) => match &args.for_owner {
            // Grouped into reconciles: its own command, which reads the deltas' flags.
            Some(owner) => {
                runtime.block_on(kscope::commands::for_owner::run(&args, owner, &mut stdout))?
            }
            None => runtime.block_on(kscope::commands::deltas::run(&args, &mut stdout))?,
        },
        Command::Hotloops(args) => {
            runtime.block_on(kscope::commands::hotloops::run(&args, &mut stdout))?
        }
        Command::Mcp(_) => {}
        Command::Tree(args) => runtime.block_on(kscope::commands::tree::run(&args, &mut stdout))?,
        Command::Timeline(args) => {
            runtime.block_on(kscope::commands::timeline::run(&args, &mut stdout))?
        }
        Command::Metrics(args) => {
            runtime.block_on(kscope::commands::metrics::run(&args, &mut stdout))?
        }
        Command::Sim(args) => runtime.block_on(kscope_sim::cli::run(args))?,
        Command::Record(args) => runtime.block_on(kscope::commands::record::run(&args))?,
        // `--fifo` is its own command's (replay_fifo reads the arguments replay defines).
        Command::Replay(args) if !args.fifo.is_empty() => {
            runtime.block_on(kscope::commands::replay_fifo::run(&args, &mut stdout))?
        }
        Command::Replay(args) => {
            runtime.block_on(kscope::commands::replay::run(&args, &mut stdout))?
        }
    }
    stdout.flush()?;
    Ok(ExitCode::SUCCESS)
}
