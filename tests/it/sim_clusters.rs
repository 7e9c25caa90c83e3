//! `kscope sim --clusters N`: N independent clusters behind one kubeconfig, one context
//! each, driven with kubectl.

use std::process::Command;

use crate::common::cli::{sim_clusters, temp_dir};
use crate::common::tools;

#[tokio::test]
async fn clusters_each_get_a_context_and_their_own_contents() {
    let Some(kubectl) = tools::required("kubectl", "to read each simulated cluster") else {
        return;
    };
    let dir = temp_dir("clusters");
    let (mut sim, kubeconfig) = sim_clusters(
        &dir,
        2,
        &["--pods", "30", "--nodes", "2", "--namespaces", "2"],
    )
    .await;
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
