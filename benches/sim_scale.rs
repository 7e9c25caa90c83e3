//! The sim at the Kubernetes per-cluster limit: load 150,000 pods, then list them all in
//! pages of 500 over loopback HTTPS, as raw pages and decoded by kube into typed Pods.
//! Prints the load time, the list times, the process RSS and the churn rate reached.
//!
//! `cargo bench --bench sim_scale` (set SIM_SCALE_PODS to change the size). Under
//! `cargo test` (no `--bench` argument) it runs as a smoke test on 2,000 pods.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark that cannot set up fails, with its line"
)]

use std::time::Instant;

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
    let before = sim.position().rv;
    sim.set_churn_rate(1_000.0);
    tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    sim.set_churn_rate(0.0);
    println!(
        "sim_scale: churn at 1000 writes/s asked: {:.0} writes/s done over 5 s",
        (sim.position().rv - before) as f64 / 5.0
    );
    sim.shutdown().await;
    Ok(())
}
