//! `kscope mcp` driven by a client nobody here wrote: the official MCP Python SDK, over
//! stdio, against a sim, with kubectl as the truth (tests/it/mcp_client.py says each step).
//! Skipped where kubectl, python3 or its `mcp` package is missing (failed under CI=true).

use std::process::Stdio;
use std::time::Duration;

use crate::common::kubectl::Kubectl;
use crate::common::tools;

const CLIENT: &str = include_str!("mcp_client.py");

#[tokio::test]
async fn python_sdk_calls_every_tool_over_stdio() {
    let Some(fx) = Kubectl::start("mcp").await else {
        return;
    };
    let Some(python) = tools::required("python3", "to run the official MCP client") else {
        return;
    };
    let probe = std::process::Command::new(&python)
        .args(["-c", "import mcp"])
        .stderr(Stdio::null())
        .status()
        .expect("python3 runs");
    if !probe.success() {
        tools::missing("the python3 `mcp` package");
        return;
    }
    let script = fx.file("mcp_client.py", CLIENT);
    let state = fx.dir.join("state");
    std::fs::create_dir_all(&state).expect("state dir");
    let mut command = tokio::process::Command::new(&python);
    command
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_kscope"))
        .arg(fx.dir.join("kubeconfig"))
        .arg(&state)
        .env("HOME", &fx.dir)
        .kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(120), command.output())
        .await
        .expect("the MCP client finishes")
        .expect("python3 runs");
    let out = String::from_utf8_lossy(&output.stdout).into_owned();
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{out}{err}");
    assert!(out.contains("no secret value in"), "{out}");
    // Every call is in kscope's log, with its tool, arguments and size; stdout held only
    // the protocol (the client would have failed on anything else).
    let log = std::fs::read_to_string(state.join("kscope").join("kscope.log")).unwrap_or_default();
    let calls = log.lines().filter(|l| l.contains("mcp: call")).count();
    assert!(calls > 20, "{calls} calls logged:\n{log}");
    assert!(
        log.lines()
            .any(|l| l.contains("tool=\"list\"") && l.contains("bytes=")),
        "{log}"
    );
}
