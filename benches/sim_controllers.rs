//! The sim's controllers at scale: a cluster of 150,000 pods (SIM_CTL_PODS to change it)
//! whose controllers react to a client's writes. Measures the process CPU per 1,000 store
//! writes per second, first for the seeded churn alone, then for the cascades the
//! controllers make (Deployments scaled up and down, Jobs run to completion, a Service's
//! endpoints following), then that a paged list of every pod still takes what it did.
//!
//! `cargo bench --bench sim_controllers` (SIM_CTL_WORKLOAD_PODS=1 to seed the StatefulSets',
//! DaemonSets' and Jobs' pods too). Under `cargo test` (no `--bench` argument) it
//! runs as a smoke test on 2,000 pods for a second a phase. The CPU counted is the whole
//! process's (the sim and this client), read from /proc/self/stat.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark that cannot set up fails, with its line"
)]

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kscope_sim::{Sim, SimConfig, SimHandle};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

/// Process CPU time (user + system) so far, from /proc/self/stat.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return 0.0;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name; the
    // kernel counts them in USER_HZ, 100 on Linux.
    (ticks(11) + ticks(12)) / 100.0
}

/// Store writes per second and CPU seconds per second over `run`.
async fn measure(
    sim: &SimHandle,
    run: impl std::future::Future<Output = anyhow::Result<()>>,
) -> anyhow::Result<(f64, f64)> {
    let rv = sim.position().rv;
    let cpu = cpu_seconds();
    let started = Instant::now();
    run.await?;
    let secs = started.elapsed().as_secs_f64();
    let writes = (sim.position().rv - rv) as f64 / secs;
    let cpu = (cpu_seconds() - cpu) / secs;
    Ok((writes, cpu))
}

fn report(phase: &str, writes: f64, cpu: f64) {
    let per_thousand = if writes > 0.0 {
        cpu / (writes / 1000.0)
    } else {
        0.0
    };
    println!(
        "sim_controllers: {phase}: {writes:.0} writes/s at {:.0}% CPU = {:.0}% of a core per 1,000 writes/s",
        cpu * 100.0,
        per_thousand * 100.0
    );
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let benchmarking = std::env::args().any(|a| a == "--bench");
    let pods: usize = std::env::var("SIM_CTL_PODS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if benchmarking { 150_000 } else { 2_000 });
    let phase = Duration::from_secs(if benchmarking { 20 } else { 1 });
    // SIM_CTL_WORKLOAD_PODS=1 also seeds the StatefulSets', DaemonSets' and Jobs' pods.
    let workload_pods = std::env::var("SIM_CTL_WORKLOAD_PODS").is_ok_and(|v| v == "1");
    let started = Instant::now();
    let sim =
        Sim::start(SimConfig::with_size(pods, pods / 300 + 1, 100).workload_pods(workload_pods))
            .await?;
    println!(
        "sim_controllers: loaded {pods} pods ({} in all) in {:.2} s",
        sim.truth(kscope_sim::Resource::Pods).len(),
        started.elapsed().as_secs_f64()
    );
    let client = sim.client().await?;

    // The seeded churn alone, at 1,000 writes/s asked.
    sim.set_churn_rate(1_000.0);
    let (writes, cpu) = measure(&sim, async {
        tokio::time::sleep(phase).await;
        Ok(())
    })
    .await?;
    sim.set_churn_rate(0.0);
    report("churn alone", writes, cpu);

    // Client writes and the cascades they start: Deployments scaled between 1 and 10
    // replicas, a Job of 5 completions each round, and a Service over the Deployments.
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let jobs: Api<Job> = Api::namespaced(client.clone(), "default");
    let services: Api<k8s_openapi::api::core::v1::Service> =
        Api::namespaced(client.clone(), "default");
    const APPS: usize = 10;
    for i in 0..APPS {
        let d: Deployment = serde_json::from_value(json!({
            "metadata": {"name": format!("load-{i}")},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"load": i.to_string()}},
                "template": {"metadata": {"labels": {"app": "load", "load": i.to_string()}},
                    "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}},
            },
        }))?;
        deployments.create(&PostParams::default(), &d).await?;
    }
    services
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "metadata": {"name": "load"},
                "spec": {"selector": {"app": "load"}, "ports": [{"port": 80, "targetPort": 8080}]},
            }))?,
        )
        .await?;
    let (writes, cpu) = measure(&sim, async {
        let until = Instant::now() + phase;
        let mut round = 0u32;
        while Instant::now() < until {
            round += 1;
            let replicas = if round.is_multiple_of(2) { 1 } else { 10 };
            for i in 0..APPS {
                let patch = json!({"spec": {"replicas": replicas}});
                deployments
                    .patch(&format!("load-{i}"), &PatchParams::default(), &Patch::Merge(&patch))
                    .await?;
            }
            let job: Job = serde_json::from_value(json!({
                "metadata": {"name": format!("batch-{round}")},
                "spec": {"completions": 5, "parallelism": 5, "template": {"spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "work", "image": "busybox:1.36", "command": ["sh", "-c", "sleep 1"]}],
                }}},
            }))?;
            jobs.create(&PostParams::default(), &job).await?;
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
        Ok(())
    })
    .await?;
    report("controllers' cascades", writes, cpu);

    // The scale list still holds with the controllers' objects in the store.
    let api: Api<Pod> = Api::all(client);
    let started = Instant::now();
    let mut listed = 0usize;
    let mut params = ListParams::default().limit(500);
    loop {
        let page = api.list(&params).await?;
        listed += page.items.len();
        match page.metadata.continue_ {
            Some(t) if !t.is_empty() => params = params.continue_token(&t),
            _ => break,
        }
    }
    println!(
        "sim_controllers: kube typed Pod paginated list after: {listed} pods in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    sim.shutdown().await;
    Ok(())
}
