//! Port-forward throughput on loopback, through the whole path a person uses: a TCP client
//! on 127.0.0.1, kscope's forward (`kscope_ui::portforward`), kube's port-forward WebSocket,
//! the sim's `pods/NAME/portforward` and its simulated HTTP server's `/bytes/N`. The issue
//! asks for ≥ 100 MB/s and 100 concurrent connections.
//!
//! `cargo bench --bench portforward` measures (256 MiB on one connection, 100 connections
//! of 4 MiB at once); with `--test`, or as `cargo test --bench portforward` runs it, a quick
//! pass of the same path (8 MiB, 100 connections of 64 KiB). It says which build measured.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark that cannot set up fails, with its line"
)]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kscope_sim::{Sim, SimConfig};
use kscope_ui::portforward::{ForwardController, PortChoice};
use kube::Api;
use kube::api::PostParams;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const MIB: u64 = 1024 * 1024;

/// GETs `/bytes/size` through `addr`; the bytes read, headers included.
async fn download(addr: SocketAddr, size: u64) -> u64 {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let request = format!("GET /bytes/{size} HTTP/1.1\r\nHost: b\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("request");
    let mut buffer = vec![0u8; 64 * 1024];
    let mut read = 0u64;
    loop {
        let n = stream.read(&mut buffer).await.expect("read");
        if n == 0 {
            break;
        }
        read += n as u64;
    }
    assert!(read >= size, "{read} bytes of {size}");
    read
}

fn rate(bytes: u64, took: Duration) -> f64 {
    bytes as f64 / took.as_secs_f64() / 1e6
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (single, each) = if full {
        (256 * MIB, 4 * MIB)
    } else {
        (8 * MIB, 64 * 1024)
    };
    const CONNECTIONS: usize = 100;
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let sim = Sim::start(SimConfig::with_size(0, 1, 1)).await.expect("sim");
        let client = sim.client().await.expect("client");
        let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "bench"},
            "spec": {"containers": [{"name": "app", "image": "web:1",
                "ports": [{"containerPort": 8080, "name": "http"}]}]},
        }))
        .expect("pod");
        pods.create(&PostParams::default(), &pod).await.expect("create");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let pod = pods.get("bench").await.expect("get");
            let phase = pod.status.and_then(|s| s.phase).unwrap_or_default();
            if phase == "Running" {
                break;
            }
            assert!(Instant::now() < deadline, "pod not running: {phase}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let mut forwards = ForwardController::new(client, "sim".into());
        let choice = PortChoice {
            namespace: "default".into(),
            pod: "bench".into(),
            uid: None,
            container: "app".into(),
            name: Some("http".into()),
            port: 8080,
            service_port: None,
            of_container: false,
            local: 0,
        };
        // Port 0: the system picks a free one.
        let addr = forwards.start(choice, 0).expect("forward");

        let build = if cfg!(debug_assertions) {
            "debug build"
        } else {
            "optimised build"
        };
        println!("portforward ({build}, {} cores):", std::thread::available_parallelism().map_or(0, |n| n.get()));
        let started = Instant::now();
        let read = download(addr, single).await;
        let took = started.elapsed();
        println!(
            "  one connection: {} MiB in {:.2} s = {:.1} MB/s",
            single / MIB,
            took.as_secs_f64(),
            rate(read, took)
        );
        let started = Instant::now();
        let all = futures::future::join_all((0..CONNECTIONS).map(|_| download(addr, each))).await;
        let took = started.elapsed();
        let total: u64 = all.iter().sum();
        println!(
            "  {CONNECTIONS} concurrent connections of {} KiB: all answered in {:.2} s = {:.1} MB/s",
            each / 1024,
            took.as_secs_f64(),
            rate(total, took)
        );
        let row = &forwards.rows()[0];
        assert_eq!(row.total, CONNECTIONS as u64 + 1, "every connection counted");
        drop(forwards);
        sim.shutdown().await;
    });
}
