//! `kscope mcp` driven by a client nobody here wrote: the official MCP Python SDK, over
//! stdio, against a sim, with kubectl as the truth (tests/it/mcp_client.py says each step).
//! Skipped where kubectl, python3 or its `mcp` package is missing (failed under CI=true).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::common::kubectl::Kubectl;
use crate::common::tools;

const CLIENT: &str = include_str!("mcp_client.py");

/// python3 with the `mcp` package; `None` (skip) where either is missing.
pub(crate) fn python_with_mcp() -> Option<PathBuf> {
    let python = tools::required("python3", "to run the official MCP client")?;
    let probe = std::process::Command::new(&python)
        .args(["-c", "import mcp"])
        .stderr(Stdio::null())
        .status()
        .expect("python3 runs");
    if !probe.success() {
        tools::missing("the python3 `mcp` package");
        return None;
    }
    Some(python)
}

/// Runs tests/it/mcp_client.py (over stdio, or against `url`) to success; its stdout.
async fn run_client(fx: &Kubectl, python: &Path, state: &Path, url: Option<&str>) -> String {
    let script = fx.file("mcp_client.py", CLIENT);
    std::fs::create_dir_all(state).expect("state dir");
    let mut command = tokio::process::Command::new(python);
    command
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_kscope"))
        .arg(fx.dir.join("kubeconfig"))
        .arg(state)
        .args(url)
        .env("HOME", &fx.dir);
    crate::common::python::succeeded(&mut command, Duration::from_secs(120)).await
}

#[tokio::test]
async fn python_sdk_calls_every_tool_over_stdio() {
    let Some(fx) = Kubectl::start("mcp").await else {
        return;
    };
    let Some(python) = python_with_mcp() else {
        return;
    };
    let state = fx.dir.join("state");
    let out = run_client(&fx, &python, &state, None).await;
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

#[tokio::test]
async fn python_sdk_over_streamable_http_on_loopback() {
    let Some(fx) = Kubectl::start("mcp-http").await else {
        return;
    };
    let Some(python) = python_with_mcp() else {
        return;
    };
    let kubeconfig = fx.dir.join("kubeconfig");
    let state = fx.dir.join("state");
    let kscope = |listen: &str| {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_kscope"));
        command
            .args(["mcp", "-A", "--listen", listen, "--kubeconfig"])
            .arg(&kubeconfig)
            .env("XDG_STATE_HOME", &state)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        command
    };
    // kscope holds a cluster's credentials: it serves no other host than this one.
    let refused = kscope("0.0.0.0:0").output().await.expect("kscope runs");
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && err.contains("loopback"),
        "{err}"
    );

    let mut server = kscope("127.0.0.1:0").spawn().expect("kscope runs");
    let stderr = server.stderr.take().expect("stderr");
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stderr));
    let url = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.expect("stderr reads") {
            if let Some(url) = line.strip_prefix("kscope mcp listening at ") {
                return url.to_string();
            }
        }
        panic!("kscope mcp ended without listening");
    })
    .await
    .expect("kscope mcp listens");
    let out = run_client(&fx, &python, &state, Some(&url)).await;
    assert!(out.contains("http "), "{out}");
    server.kill().await.expect("kscope mcp stops");
}
