//! `kscope mcp` on one cluster at two edges, driven by the official MCP Python SDK
//! (tests/it/mcp_edges.py says each step): `first_rows` answers while a large state still
//! streams in, marked as partial, then the whole state; and a kind the user may not list is
//! a tool error that says forbidden, while the other tools go on answering. Skipped where
//! kubectl, python3 or its `mcp` package is missing (failed under CI=true).

use std::time::Duration;

use kscope_sim::SimConfig;

use crate::common::kubectl::Kubectl;
use crate::mcp::python_with_mcp;

const CLIENT: &str = include_str!("mcp_edges.py");

/// Runs tests/it/mcp_edges.py in `mode` against `fx`'s sim to success; its stdout.
async fn run_client(mode: &str, fx: &Kubectl, context: Option<&str>) -> Option<String> {
    let python = python_with_mcp()?;
    let script = fx.file("mcp_edges.py", CLIENT);
    let state = fx.dir.join("state");
    std::fs::create_dir_all(&state).expect("state dir");
    let mut command = tokio::process::Command::new(python);
    command
        .arg(&script)
        .arg(mode)
        .arg(env!("CARGO_BIN_EXE_kscope"))
        .arg(fx.dir.join("kubeconfig"))
        .arg(&state)
        .args(context)
        .env("HOME", &fx.dir);
    Some(crate::common::python::succeeded(&mut command, Duration::from_secs(90)).await)
}

#[tokio::test]
async fn first_rows_answers_partial_rows_while_the_pods_stream_in() {
    // 200 pods (a few KiB each) come as several chunks of a watch-list (256 KiB each),
    // each after a pause: the first chunk is in the store a second before the last.
    let mut config = SimConfig::with_size(200, 3, 4);
    config.faults.list_delay = Some(Duration::from_millis(300));
    let Some(fx) = Kubectl::start_with("mcp-first-rows", config).await else {
        return;
    };
    if let Some(out) = run_client("first_rows", &fx, None).await {
        assert!(
            out.contains("syncing") && out.contains("pods, current"),
            "{out}"
        );
    }
}

#[tokio::test]
async fn a_forbidden_kind_is_a_tool_error_and_the_other_tools_answer() {
    let mut config = SimConfig::with_size(20, 2, 2);
    config.users = vec!["admin".into(), "viewer".into()];
    config.faults.forbidden = vec!["secrets".into()];
    let Some(fx) = Kubectl::start_with("mcp-forbidden", config).await else {
        return;
    };
    if let Some(out) = run_client("forbidden", &fx, Some("kscope-sim-viewer")).await {
        assert!(out.contains("other tools answer"), "{out}");
    }
}
