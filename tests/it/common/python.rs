//! The official Python client against a sim: python3 with the `kubernetes` package, found
//! on PATH (see [`super::tools`]).

use std::process::Stdio;
use std::time::Duration;

use super::kubectl::Kubectl;
use super::tools;

/// Runs `script`, written as `name` in the fixture's directory, with the fixture's
/// kubeconfig as its argument, and returns its stdout once it has succeeded. `None` (skip)
/// where python3 or its `kubernetes` package is missing.
pub async fn run(fx: &Kubectl, name: &str, script: &str) -> Option<String> {
    run_with(fx, name, script, &[]).await
}

/// [`run`], with `args` after the kubeconfig.
pub async fn run_with(fx: &Kubectl, name: &str, script: &str, args: &[&str]) -> Option<String> {
    let python = tools::required("python3", "to run the official Kubernetes client")?;
    let probe = std::process::Command::new(&python)
        .args(["-c", "import kubernetes"])
        .stderr(Stdio::null())
        .status()
        .expect("python3 runs");
    if !probe.success() {
        tools::missing("the python3 `kubernetes` package");
        return None;
    }
    let script = fx.file(name, script);
    let mut command = tokio::process::Command::new(&python);
    command
        .arg(&script)
        .arg(fx.dir.join("kubeconfig"))
        .args(args)
        .env("HOME", &fx.dir);
    Some(succeeded(&mut command, Duration::from_secs(60)).await)
}

/// Runs a Python script's `command` to success within `limit`: its stdout. A failure panics
/// with its stdout and stderr; so does a script still running at `limit`.
pub async fn succeeded(command: &mut tokio::process::Command, limit: Duration) -> String {
    let output = tokio::time::timeout(limit, command.kill_on_drop(true).output())
        .await
        .expect("the Python client finishes")
        .expect("python3 runs");
    let out = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    out
}
