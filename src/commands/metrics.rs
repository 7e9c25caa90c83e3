//! `kscope metrics KIND/NAME`: the controller's own numbers, read twice through the pod
//! proxy `--for` apart, so counters become rates and histograms become p50/p99 of what the
//! controller did in between (see [`kscope_index_views::metrics`]).

use std::io::Write;
use std::time::{Duration, Instant};

use serde::Serialize;

use kscope_client::cluster::{ClusterArgs, NamespaceScope};
use kscope_client::scrape::{MetricsTarget, find_target, scrape};
use kscope_index_views::metrics::{Rates, Reading, parse};
use kscope_units::duration::parse_duration;

use super::CommandError;

/// Read a controller's Prometheus metrics through the API server's pod proxy.
#[derive(Debug, Clone, clap::Args)]
pub struct MetricsArgs {
    /// The pod, or the workload whose ready pod is read: pod/NAME, deployment/NAME,
    /// statefulset/NAME, daemonset/NAME or replicaset/NAME.
    #[arg(value_name = "KIND/NAME")]
    pub target: String,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// The pod's port, by number or name (default: a container port named metrics or
    /// http-metrics, else the prometheus.io/port annotation).
    #[arg(long)]
    pub port: Option<String>,
    /// Time between the two scrapes rates and percentiles are taken over.
    #[arg(long = "for", value_parser = parse_duration, default_value = "2s", value_name = "DURATION")]
    pub duration: Duration,
    /// `json` for the readings and rates as JSON; a summary otherwise.
    #[arg(short = 'o', long = "output", value_name = "FORMAT")]
    pub output: Option<String>,
}

#[derive(Serialize)]
struct Report<'a> {
    namespace: &'a str,
    pod: &'a str,
    port: &'a str,
    before: &'a Reading,
    after: &'a Reading,
    rates: &'a Rates,
}

pub async fn run(args: &MetricsArgs, out: &mut impl Write) -> Result<(), CommandError> {
    args.cluster.refuse_namespace_set()?;
    let json = match args.output.as_deref() {
        None => false,
        Some("json") => true,
        Some(other) => {
            return Err(CommandError::Usage(format!(
                "-o {other}: metrics prints a summary or json"
            )));
        }
    };
    let Some((kind, name)) = args.target.split_once('/') else {
        return Err(CommandError::Usage(format!(
            "{}: name the target as KIND/NAME (pod/NAME, deployment/NAME, …)",
            args.target
        )));
    };
    let cluster = args.cluster.connect().await?;
    let NamespaceScope::One(namespace) = args.cluster.scope(&cluster) else {
        return Err(CommandError::Usage(
            "-A: metrics reads one object; name its namespace with -n".into(),
        ));
    };
    let target = find_target(
        &cluster.client,
        kind,
        &namespace,
        name,
        args.port.as_deref(),
    )
    .await?;
    let started = Instant::now();
    let before = parse(&scrape(&cluster.client, &target).await?)?;
    tokio::time::sleep(args.duration).await;
    let after = parse(&scrape(&cluster.client, &target).await?)?;
    let rates = Rates::between(&before, &after, started.elapsed().as_secs_f64());
    if json {
        let report = Report {
            namespace: &target.namespace,
            pod: &target.pod,
            port: &target.port,
            before: &before,
            after: &after,
            rates: &rates,
        };
        serde_json::to_writer_pretty(&mut *out, &report).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        summary(&target, &after, &rates, out)?;
    }
    out.flush()?;
    Ok(())
}

fn number(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.2}"))
}

fn seconds(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{:.1}ms", v * 1000.0))
}

fn summary(
    target: &MetricsTarget,
    after: &Reading,
    rates: &Rates,
    out: &mut impl Write,
) -> Result<(), CommandError> {
    writeln!(
        out,
        "pod {}/{} port {}, over {:.1}s",
        target.namespace, target.pod, target.port, rates.seconds
    )?;
    let mut tw = tabwriter::TabWriter::new(&mut *out).padding(3);
    writeln!(
        tw,
        "workqueue depth\t{} -> {}",
        number(rates.depth_before),
        number(rates.depth_after)
    )?;
    for (priority, depth) in &after.depth_by_priority {
        writeln!(tw, "  priority {priority}\t{depth}")?;
    }
    writeln!(tw, "adds/s\t{}", number(rates.adds_per_second))?;
    writeln!(tw, "retries/s\t{}", number(rates.retries_per_second))?;
    writeln!(
        tw,
        "unfinished work\t{}s",
        number(after.unfinished_work_seconds)
    )?;
    writeln!(
        tw,
        "longest running processor\t{}s",
        number(after.longest_running_processor_seconds)
    )?;
    writeln!(
        tw,
        "queue wait p50/p99\t{} / {}",
        seconds(rates.queue_p50_seconds),
        seconds(rates.queue_p99_seconds)
    )?;
    writeln!(tw, "reconciles/s\t{:.2}", rates.reconciles_per_second())?;
    for (result, rate) in &rates.reconciles_per_second_by_result {
        writeln!(tw, "  {result}\t{rate:.2}")?;
    }
    writeln!(
        tw,
        "reconcile p50/p99\t{} / {}",
        seconds(rates.reconcile_p50_seconds),
        seconds(rates.reconcile_p99_seconds)
    )?;
    writeln!(
        tw,
        "reconcile errors\t{}",
        number(after.reconcile_errors_total)
    )?;
    writeln!(
        tw,
        "workers active/max\t{} / {}",
        number(after.active_workers),
        number(after.max_concurrent_reconciles)
    )?;
    writeln!(
        tw,
        "API requests by code\t{}",
        after
            .requests_by_code
            .iter()
            .map(|(code, n)| format!("{code}={n}"))
            .collect::<Vec<_>>()
            .join(" ")
    )?;
    writeln!(
        tw,
        "conflicts (409) / throttled (429)\t+{} / +{}",
        rates.conflicts, rates.throttled
    )?;
    for (series, value) in &after.informer {
        writeln!(tw, "{series}\t{value}")?;
    }
    tw.flush()?;
    if !after.raw.is_empty() {
        writeln!(out, "other series:")?;
        for raw in &after.raw {
            writeln!(out, "  {}{} {}", raw.name, raw.labels, raw.value)?;
        }
    }
    Ok(())
}
