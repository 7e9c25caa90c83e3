//! `kscope mcp` at 150,000 pods (issue #38): targets — `list` with an index filter answers in
//! < 10 ms once the kind is warm; a first call on a cold kind answers within 1.5× the TUI's
//! first rows.
//!
//! The server is driven through its whole tool path: JSON-RPC lines over an in-memory pipe
//! (what stdio carries), parsed, routed, answered from the store and serialized, against an
//! in-process sim. The TUI's first rows are the time from starting an informer on pods (the
//! TUI's pipeline: `kscope get`'s informer, the default indexes, watch-list) to the first
//! object in its store; the cold call is a fresh server's first `list` of pods, with
//! `first_rows` (answer once the store holds objects, as the table shows them) and without
//! (after the whole first list). Each cold figure is the median of three fresh servers.
//!
//! `cargo bench --bench mcp` runs it at 150,000 pods (`KSCOPE_MCP_PODS` to change); without
//! `--bench` (as under `cargo test --benches`) it is a smoke run on 2,000 pods.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark that cannot set up fails, with its line"
)]

use std::path::Path;
use std::time::{Duration, Instant};

use clap::Parser;
use rmcp::ServiceExt;
use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};

use kscope::commands::mcp::{McpArgs, Server, Shared};
use kscope::commands::{InformerArgs, start_informer};
use kscope_resources::Pod;
use kscope_sim::{Sim, SimConfig};

/// Warm `list` calls timed after the warm-up.
const WARM_CALLS: usize = 200;
/// Fresh servers per cold figure.
const COLD_RUNS: usize = 3;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    mcp: McpArgs,
}

/// A JSON-RPC client over the pipe, one request at a time.
struct Client {
    write: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    id: u64,
}

impl Client {
    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.write.write_all(line.as_bytes()).await.unwrap();
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let line = self
                .lines
                .next_line()
                .await
                .unwrap()
                .expect("the server answers");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    }

    /// A tool call's structured answer; a tool error fails the benchmark.
    async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let answer = self
            .request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        let result = &answer["result"];
        assert_ne!(result["isError"], true, "{tool} {arguments}: {answer}");
        result["structuredContent"].clone()
    }
}

/// A fresh server (its own connection, no warm kind) and an initialized client.
async fn connect(kubeconfig: &Path) -> Client {
    let cli = Cli::parse_from([
        "mcp",
        "-A",
        "--kubeconfig",
        kubeconfig.to_str().unwrap(),
        "--sync-timeout",
        "300s",
    ]);
    let shared = Shared::connect(cli.mcp).await.expect("kscope mcp connects");
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let service = Server::new(shared)
            .serve(tokio::io::split(server_end))
            .await
            .expect("initialize");
        let _ = service.waiting().await;
    });
    let (read, write) = tokio::io::split(client_end);
    let mut client = Client {
        write,
        lines: BufReader::new(read).lines(),
        id: 0,
    };
    let init = json!({"protocolVersion": "2025-03-26", "capabilities": {},
        "clientInfo": {"name": "kscope-bench", "version": "0"}});
    client.request("initialize", init).await;
    client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    client
}

/// The TUI's first rows: an informer on pods started, until its store holds an object.
async fn first_rows(kubeconfig: &Path) -> Duration {
    #[derive(Parser)]
    struct Get {
        #[command(flatten)]
        informer: InformerArgs,
    }
    let args = Get::parse_from([
        "get",
        "pods",
        "-A",
        "--kubeconfig",
        kubeconfig.to_str().unwrap(),
    ]);
    let start = Instant::now();
    let resolved = args.informer.resolve().await.expect("pods resolve");
    let (informer, _) = start_informer::<Pod>(&args.informer, &resolved, None)
        .await
        .expect("informer starts");
    while informer.indexer().is_empty() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let took = start.elapsed();
    informer.shutdown().await;
    took
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

async fn run(pods: usize) {
    let nodes = (pods / 50).max(3);
    let namespaces = (pods / 3_000).clamp(2, 100);
    let sim = Sim::start(SimConfig::with_size(pods, nodes, namespaces))
        .await
        .expect("sim starts");
    let kubeconfig = std::env::temp_dir().join(format!("kscope-mcp-bench-{}", std::process::id()));
    std::fs::write(&kubeconfig, sim.kubeconfig_yaml()).unwrap();
    println!("mcp: {pods} pods, {nodes} nodes, {namespaces} namespaces");

    let tui = median(futures_runs(COLD_RUNS, || first_rows(&kubeconfig)).await);
    let cold = |first: bool| {
        let kubeconfig = kubeconfig.clone();
        move || {
            let kubeconfig = kubeconfig.clone();
            async move {
                let mut client = connect(&kubeconfig).await;
                let start = Instant::now();
                let answer = client
                    .call(
                        "list",
                        json!({"kind": "pods", "limit": 50, "first_rows": first}),
                    )
                    .await;
                let took = start.elapsed();
                assert!(!answer["rows"].as_array().unwrap().is_empty(), "{answer}");
                took
            }
        }
    };
    let cold_first = median(futures_runs(COLD_RUNS, cold(true)).await);
    let cold_synced = median(futures_runs(COLD_RUNS, cold(false)).await);
    println!(
        "TUI first rows (informer start to first object): {}",
        ms(tui)
    );
    println!(
        "cold `list` with first_rows: {} ({:.2}× the TUI's first rows; target ≤ 1.5×)",
        ms(cold_first),
        cold_first.as_secs_f64() / tui.as_secs_f64()
    );
    println!(
        "cold `list` after the whole first list: {}",
        ms(cold_synced)
    );

    // Warm: one index term, then two, each call a page of 100 rows.
    let mut client = connect(&kubeconfig).await;
    let first = client
        .call("list", json!({"kind": "pods", "limit": 1}))
        .await;
    let row = &first["rows"][0];
    let (namespace, name) = row["key"].as_str().unwrap().split_once('/').unwrap();
    let got = client
        .call(
            "get",
            json!({"kind": "pods", "namespace": namespace, "name": name}),
        )
        .await;
    let yaml = got["yaml"].as_str().unwrap();
    let label = |key: &str| {
        yaml.lines()
            .find_map(|l| l.trim().strip_prefix(&format!("{key}: ")))
            .map(str::to_string)
    };
    let app = label("app").expect("the pod has an app label");
    let node = label("nodeName").expect("the pod has a node");
    for (what, filter) in [
        ("one index term", format!("app={app}")),
        ("two index terms", format!("app={app},node={node}")),
    ] {
        let arguments = json!({"kind": "pods", "filter": filter, "limit": 100});
        for _ in 0..10 {
            client.call("list", arguments.clone()).await;
        }
        let mut samples = Vec::with_capacity(WARM_CALLS);
        let mut total = 0;
        for _ in 0..WARM_CALLS {
            let start = Instant::now();
            let answer = client.call("list", arguments.clone()).await;
            samples.push(start.elapsed());
            total = answer["total"].as_u64().unwrap();
        }
        samples.sort();
        let p50 = samples[samples.len() / 2];
        let p99 = samples[samples.len() * 99 / 100];
        println!(
            "warm `list` {what} ({filter}, {total} rows, page of 100): p50 {}, p99 {} (target < 10 ms)",
            ms(p50),
            ms(p99)
        );
    }
    let _ = std::fs::remove_file(&kubeconfig);
    sim.shutdown().await;
}

/// `n` runs of `f` one after another (each alone on the machine), their times.
async fn futures_runs<F, Fut>(n: usize, f: F) -> Vec<Duration>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Duration>,
{
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        times.push(f().await);
    }
    times
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let pods = match std::env::var("KSCOPE_MCP_PODS") {
        Ok(n) => n.parse().expect("KSCOPE_MCP_PODS is a number"),
        Err(_) if full => 150_000,
        Err(_) => 2_000,
    };
    if !full {
        println!("mcp: smoke run ({pods} pods); run `cargo bench --bench mcp` for 150,000");
    }
    tokio::runtime::Runtime::new().unwrap().block_on(run(pods));
}
