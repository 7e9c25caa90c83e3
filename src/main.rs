//! kscope's command line: parses flags, picks a mode and reports errors. Nothing else lives here.

use clap::{Parser, Subcommand};

/// A terminal cluster explorer for Kubernetes, built on a faithful port of client-go's informers.
#[derive(Debug, Parser)]
#[command(name = "kscope", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve a simulated Kubernetes API server (list/watch, churn, faults) on loopback.
    Sim(kscope::sim::cli::SimArgs),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if let Some(Command::Sim(args)) = cli.command {
        let runtime = tokio::runtime::Runtime::new()?;
        runtime.block_on(kscope::sim::cli::run(args))?;
    }
    Ok(())
}
