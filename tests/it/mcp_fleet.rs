//! `kscope mcp` serving several clusters (a `kscope sim --clusters 2`), and its `hotloops`
//! tool on the demo Widget controller, driven by the official MCP Python SDK
//! (tests/it/mcp_fleet.py says each step). Skipped where kubectl, python3 or its `mcp`
//! package is missing (failed under CI=true).

use std::path::Path;
use std::time::Duration;

use kscope_sim::{SimConfig, WidgetBug};

use crate::common::cli::{sim_clusters, temp_dir};
use crate::common::kubectl::Kubectl;
use crate::common::tools;
use crate::mcp::python_with_mcp;

const CLIENT: &str = include_str!("mcp_fleet.py");

/// Runs tests/it/mcp_fleet.py in `mode` to success; its stdout.
async fn run_client(mode: &str, dir: &Path, kubeconfig: &Path) -> Option<String> {
    let python = python_with_mcp()?;
    let script = dir.join("mcp_fleet.py");
    std::fs::write(&script, CLIENT).expect("write the client");
    let state = dir.join("state");
    std::fs::create_dir_all(&state).expect("state dir");
    let mut command = tokio::process::Command::new(python);
    command
        .arg(&script)
        .arg(mode)
        .arg(env!("CARGO_BIN_EXE_kscope"))
        .arg(kubeconfig)
        .arg(&state)
        .env("HOME", dir);
    Some(crate::common::python::succeeded(&mut command, Duration::from_secs(180)).await)
}

#[tokio::test]
async fn python_sdk_lists_two_clusters_and_is_told_which_is_stale() {
    if tools::required("kubectl", "to list each simulated cluster").is_none() {
        return;
    }
    let dir = temp_dir("mcp-fleet");
    let (sim, kubeconfig) = sim_clusters(
        &dir,
        2,
        &["--pods", "12", "--nodes", "2", "--namespaces", "2"],
    )
    .await;
    // Stopped even when the client fails: a sim left running outlives the test run.
    let _sim = Stopped(sim);
    let out = run_client("fleet", &dir, &kubeconfig).await;
    let _ = std::fs::remove_dir_all(&dir);
    if let Some(out) = out {
        assert!(out.contains("stale") && out.contains("forbidden"), "{out}");
    }
}

/// A `kscope sim` process, killed when dropped.
struct Stopped(std::process::Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn widget_sim(name: &str, bug: WidgetBug) -> Option<Kubectl> {
    let config = SimConfig::with_size(20, 2, 2)
        .widget_controller(true)
        .widget_bug(bug);
    Kubectl::start_with(name, config).await
}

#[tokio::test]
async fn python_sdk_finds_the_widget_controllers_hot_loop() {
    let Some(fx) = widget_sim("mcp-hotloop", WidgetBug::Hotloop).await else {
        return;
    };
    if let Some(out) = run_client("hotloop", &fx.dir, &fx.dir.join("kubeconfig")).await {
        assert!(out.contains("hotloop found"), "{out}");
    }
}

#[tokio::test]
async fn python_sdk_finds_no_hot_loop_on_the_healthy_controller() {
    let Some(fx) = widget_sim("mcp-healthy", WidgetBug::None).await else {
        return;
    };
    if let Some(out) = run_client("healthy", &fx.dir, &fx.dir.join("kubeconfig")).await {
        assert!(out.contains("healthy: no loop"), "{out}");
    }
}
