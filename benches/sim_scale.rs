//! The sim at the Kubernetes per-cluster limit: load 150,000 pods, then list them all in
//! pages of 500 over loopback HTTPS, as raw pages and decoded by kube into typed Pods.
//! Prints the load time, the list times and the process RSS. Then its churn ceiling: a sim
//! of the same size alone on one thread (a current-thread runtime: its serving, churn,
//! kubelets and controllers share one core) asked for 4,000 writes/s, every pod it deletes
//! going through graceful deletion (marked, its containers stopped, then removed); prints
//! the writes/s it sustained.
//!
//! `cargo bench --bench sim_scale` (set SIM_SCALE_PODS to change the size, SIM_SCALE_CHURN
//! the rate asked, SIM_SCALE_ONLY=churn to skip the load and lists, as when profiling the
//! churn alone). Under `cargo test` (no `--bench` argument) it runs as a smoke test on
//! 2,000 pods.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark that cannot set up fails, with its line"
)]

use std::time::{Duration, Instant};

use axum::http::Request;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kscope_sim::{Sim, SimConfig};
use kube::api::{Api, ListParams};
use kube::client::Body;
use serde::Deserialize;
use serde::de::IgnoredAny;

#[derive(Deserialize)]
struct RawPage {
    metadata: ListMeta,
    items: Vec<IgnoredAny>,
}

fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let benchmarking = std::env::args().any(|a| a == "--bench");
    let pods: usize = std::env::var("SIM_SCALE_PODS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if benchmarking { 150_000 } else { 2_000 });
    if std::env::var("SIM_SCALE_ONLY").as_deref() != Ok("churn") {
        load_and_list(pods).await?;
    }
    let rate: f64 = std::env::var("SIM_SCALE_CHURN")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4_000.0);
    let window = Duration::from_secs(if benchmarking { 10 } else { 2 });
    let (done, cores) = std::thread::spawn(move || churn_on_one_core(pods, rate, window))
        .join()
        .map_err(|_| anyhow::anyhow!("the one-core sim panicked"))??;
    println!(
        "sim_scale: churn ceiling on one core at {pods} pods, graceful deletion on: \
         {rate:.0} writes/s asked, {done:.0} writes/s done over {} s, at {cores:.2} of a core",
        window.as_secs()
    );
    Ok(())
}

/// Loads a sim of `pods` and lists them all in pages of 500, raw and typed, printing the
/// times and the RSS.
async fn load_and_list(pods: usize) -> anyhow::Result<()> {
    let started = Instant::now();
    let sim = Sim::start(SimConfig::with_size(pods, pods / 300 + 1, 100)).await?;
    let load = started.elapsed();
    println!(
        "sim_scale: loaded {pods} pods in {:.2} s, RSS {:.0} MiB",
        load.as_secs_f64(),
        rss_mib()
    );
    let mut config = sim.kube_config().await?;
    config.default_retry = false;
    let client = kube::Client::try_from(config)?;

    let started = Instant::now();
    let (mut count, mut bytes, mut pages) = (0usize, 0usize, 0usize);
    let mut token = String::new();
    loop {
        let mut uri = "/api/v1/pods?limit=500".to_string();
        if !token.is_empty() {
            uri.push_str("&continue=");
            uri.push_str(&token);
        }
        let request = Request::get(uri).body(Body::empty())?;
        let body = client
            .send(request)
            .await?
            .into_body()
            .collect_bytes()
            .await?;
        bytes += body.len();
        pages += 1;
        let page: RawPage = serde_json::from_slice(&body)?;
        count += page.items.len();
        match page.metadata.continue_ {
            Some(t) if !t.is_empty() => token = t,
            _ => break,
        }
    }
    let raw = started.elapsed();
    println!(
        "sim_scale: raw paginated list: {count} pods in {pages} pages, {:.0} MiB, {:.2} s",
        bytes as f64 / 1_048_576.0,
        raw.as_secs_f64()
    );

    let api: Api<Pod> = Api::all(client);
    let started = Instant::now();
    let mut typed = 0usize;
    let mut params = ListParams::default().limit(500);
    loop {
        let page = api.list(&params).await?;
        typed += page.items.len();
        match page.metadata.continue_ {
            Some(t) if !t.is_empty() => params = params.continue_token(&t),
            _ => break,
        }
    }
    println!(
        "sim_scale: kube typed Pod paginated list: {typed} pods in {:.2} s; RSS after {:.0} MiB",
        started.elapsed().as_secs_f64(),
        rss_mib()
    );
    sim.shutdown().await;
    Ok(())
}

/// The CPU time this process has used, from /proc (user and system, in clock ticks of
/// 1/100 s): whether the churn is held back by its core or by something else shows in it.
fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            // The fields after the command (which may hold spaces) in parentheses.
            let rest = s.rsplit_once(')')?.1;
            let mut fields = rest.split_whitespace().skip(11);
            let user: f64 = fields.next()?.parse().ok()?;
            let system: f64 = fields.next()?.parse().ok()?;
            Some((user + system) / 100.0)
        })
        .unwrap_or(0.0)
}

/// The writes per second a sim of `pods` sustains when asked for `rate`, measured over
/// `window` after a second's warm-up, with the sim alone on this thread; and the cores the
/// process used meanwhile.
fn churn_on_one_core(pods: usize, rate: f64, window: Duration) -> anyhow::Result<(f64, f64)> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let sim = Sim::start(SimConfig::with_size(pods, pods / 300 + 1, 100)).await?;
        sim.set_churn_rate(rate);
        tokio::time::sleep(Duration::from_secs(1)).await;
        let (before, cpu) = (sim.position().rv, cpu_seconds());
        tokio::time::sleep(window).await;
        let done = (sim.position().rv - before) as f64 / window.as_secs_f64();
        let cores = (cpu_seconds() - cpu) / window.as_secs_f64();
        sim.set_churn_rate(0.0);
        sim.shutdown().await;
        Ok((done, cores))
    })
}
