//! kscope's command line: parses flags, picks a mode and reports errors. Nothing else lives here.

use clap::Parser;

/// A terminal cluster explorer for Kubernetes, built on a faithful port of client-go's informers.
#[derive(Debug, Parser)]
#[command(name = "kscope", version, about)]
struct Cli {}

fn main() -> anyhow::Result<()> {
    let _cli = Cli::parse();
    Ok(())
}
