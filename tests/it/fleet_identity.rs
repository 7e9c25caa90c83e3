//! Two contexts that reach one cluster through different URLs (`https://127.0.0.1:PORT` and
//! `https://localhost:PORT`, which the sim's certificate both names): their server URLs
//! differ, so only the kube-system namespace's UID tells them apart. `kscope get` counts the
//! cluster once, and so does the TUI, once it has read the UIDs in the background: each pod
//! shown once, the duplicate context said and no longer named in the header.

use std::path::Path;
use std::process::Child;

use crate::common::cli::{sim_clusters, temp_dir};
use crate::common::tmux::Session;
use crate::common::tools;
use crate::fleet::{Rows, get, kubectl_pods, stderr, table_rows};
use crate::fleet_tui::{kubectl, rows_of};

/// The sims' process, killed however the test ends: a failed wait leaves none running.
struct Stopped(Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The context added to reach cluster 1 by `localhost`.
const ALIAS: &str = "localhost-of-1";

/// Adds [`ALIAS`] to `kubeconfig`: cluster 1's CA and user, its server named `localhost`.
fn add_localhost_alias(kubectl_bin: &Path, kubeconfig: &Path) {
    let run = |args: &[&str]| kubectl(kubectl_bin, kubeconfig, "kscope-sim-1", args);
    let field = |field: &str| {
        let path = format!(r#"jsonpath={{.clusters[?(@.name=="kscope-sim-1")].cluster.{field}}}"#);
        run(&["config", "view", "--raw", "-o", &path])
    };
    let server = field("server");
    assert!(server.starts_with("https://127.0.0.1:"), "{server}");
    let by_name = server.replacen("127.0.0.1", "localhost", 1);
    let ca = field("certificate-authority-data");
    run(&[
        "config",
        "set-cluster",
        "one-by-localhost",
        "--server",
        &by_name,
    ]);
    run(&[
        "config",
        "set",
        "clusters.one-by-localhost.certificate-authority-data",
        &ca,
    ]);
    run(&[
        "config",
        "set-context",
        ALIAS,
        "--cluster",
        "one-by-localhost",
        "--user",
        "kscope-sim-1",
    ]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_reached_by_two_urls_is_shown_once_headless_and_in_the_tui() {
    let Some(kubectl_bin) = tools::required("kubectl", "to list each simulated cluster") else {
        return;
    };
    let Some(_) = tools::required("tmux", "to run kscope in a real terminal") else {
        return;
    };
    let dir = temp_dir("fleet-identity");
    let (sim, kubeconfig) = sim_clusters(
        &dir,
        2,
        &["--pods", "4", "--nodes", "1", "--namespaces", "1"],
    )
    .await;
    let sim = Stopped(sim);
    add_localhost_alias(&kubectl_bin, &kubeconfig);
    let one = kubectl_pods(&kubectl_bin, &kubeconfig, "kscope-sim-1");
    let two = kubectl_pods(&kubectl_bin, &kubeconfig, "kscope-sim-2");
    let by_alias = kubectl_pods(&kubectl_bin, &kubeconfig, ALIAS);
    assert_eq!(by_alias.len(), one.len(), "the alias lists cluster 1");
    let contexts = [
        "--context",
        "kscope-sim-1",
        "--context",
        ALIAS,
        "--context",
        "kscope-sim-2",
    ];

    // Headless: the alias is left out, told by the kube-system UID.
    let out = get(&dir, &kubeconfig, &contexts).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "context {ALIAS} reaches the same cluster as kscope-sim-1 (the same kube-system \
             namespace UID)"
        )),
        "{}",
        stderr(&out)
    );
    let union: Rows = one.iter().chain(&two).cloned().collect();
    assert_eq!(table_rows(&out).into_iter().collect::<Rows>(), union);

    // The TUI: every cluster's rows at first, then the alias's gone once its UID is read.
    let command = format!(
        "env XDG_STATE_HOME={} {} --kubeconfig {} {} -A",
        dir.join("state").display(),
        env!("CARGO_BIN_EXE_kscope"),
        kubeconfig.display(),
        contexts.join(" "),
    );
    let session = Session::alone_sized(
        format!("kscope-fleet-identity-{}", std::process::id()),
        &command,
        160,
        45,
    );
    let said = format!(
        "{ALIAS} reaches the same cluster as kscope-sim-1 (the same kube-system namespace \
         UID): shown once"
    );
    let screen = session.wait_for("the alias counted once", |s| {
        s.contains(&said)
            && rows_of(s, "kscope-sim-1").len() == one.len()
            && rows_of(s, "kscope-sim-2").len() == two.len()
            && rows_of(s, ALIAS).is_empty()
    });
    let first = screen.lines().next().unwrap_or_default();
    assert!(
        first.contains("kscope-sim-1,kscope-sim-2") && first.contains("2 clusters"),
        "the header names the two clusters: {screen}"
    );
    assert!(
        screen.contains("2 clusters: kscope-sim-1")
            && !screen.contains(&format!("{ALIAS} watching")),
        "{screen}"
    );
    session.keys(&["q"]);
    session.wait_exit("q");
    drop(sim);
    let _ = std::fs::remove_dir_all(&dir);
}
