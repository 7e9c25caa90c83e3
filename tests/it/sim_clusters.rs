//! `kscope sim --clusters N`: N independent clusters behind one kubeconfig, one context
//! each, driven with kubectl.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::common::cli::temp_dir;
use crate::common::tools;

#[tokio::test]
async fn clusters_each_get_a_context_and_their_own_contents() {
    let Some(kubectl) = tools::required("kubectl", "to read each simulated cluster") else {
        return;
    };
    let dir = temp_dir("clusters");
    let kubeconfig = dir.join("kubeconfig");
    let mut sim = Command::new(env!("CARGO_BIN_EXE_kscope"))
        .args([
            "sim",
            "--clusters",
            "2",
            "--pods",
            "30",
            "--nodes",
            "2",
            "--namespaces",
            "2",
        ])
        .arg("--kubeconfig-out")
        .arg(&kubeconfig)
        .env("XDG_STATE_HOME", dir.join("state"))
        .env_remove("KSCOPE_SIM_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kscope sim starts");
    let stdout = sim.stdout.take().expect("stdout");
    let ready = tokio::task::spawn_blocking(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .filter(|l| l.starts_with("kscope sim ready at"))
            .take(2)
            .count()
    });
    let ready = tokio::time::timeout(std::time::Duration::from_secs(60), ready)
        .await
        .expect("both clusters ready in time")
        .expect("join");
    assert_eq!(ready, 2);
    let run = |args: &[&str]| {
        let output = Command::new(&kubectl)
            .args(args)
            .env("KUBECONFIG", &kubeconfig)
            .env("HOME", &dir)
            .output()
            .expect("kubectl runs");
        assert!(
            output.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let contexts = run(&["config", "get-contexts", "-o", "name"]);
    assert_eq!(
        contexts.lines().collect::<Vec<_>>(),
        ["kscope-sim-1", "kscope-sim-2"]
    );
    let first = run(&[
        "--context",
        "kscope-sim-1",
        "get",
        "pods",
        "-A",
        "-o",
        "name",
    ]);
    let second = run(&[
        "--context",
        "kscope-sim-2",
        "get",
        "pods",
        "-A",
        "-o",
        "name",
    ]);
    assert_eq!(first.lines().count(), 30);
    assert_eq!(second.lines().count(), 30);
    assert_ne!(first, second, "two clusters with the same seed");
    // A write to one cluster is not in the other.
    run(&["--context", "kscope-sim-1", "create", "ns", "only-here"]);
    let other = Command::new(&kubectl)
        .args(["--context", "kscope-sim-2", "get", "ns", "only-here"])
        .env("KUBECONFIG", &kubeconfig)
        .env("HOME", &dir)
        .output()
        .expect("kubectl runs");
    assert!(!other.status.success());
    let _ = sim.kill();
    let _ = sim.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
