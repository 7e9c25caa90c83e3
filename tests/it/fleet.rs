//! `kscope get` across several clusters: the merged table is the union of what kubectl
//! lists per context, `cluster=` picks clusters, a context that reaches a cluster already
//! read is counted once, and a forbidden, killed or restarted cluster is named on stderr
//! with exit code 4 (the others printed only with --allow-stale).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use kscope_sim::{Sim, SimConfig, SimHandle, kubeconfig_for};

use crate::common::cli::{kscope, sim_clusters, temp_dir};
use crate::common::tools;

/// (cluster, namespace, name) of each pod.
pub(crate) type Rows = BTreeSet<(String, String, String)>;

pub(crate) fn kubectl_pods(kubectl: &Path, kubeconfig: &Path, context: &str) -> Rows {
    let output = Command::new(kubectl)
        .args(["--context", context, "get", "pods", "-A", "--no-headers"])
        .args([
            "-o",
            "custom-columns=NS:.metadata.namespace,NAME:.metadata.name",
        ])
        .env("KUBECONFIG", kubeconfig)
        .env("HOME", kubeconfig.parent().expect("a directory"))
        .output()
        .expect("kubectl runs");
    assert!(output.status.success(), "kubectl --context {context}");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| {
            let mut cells = line.split_whitespace().map(str::to_string);
            let ns = cells.next().expect("a namespace");
            let name = cells.next().expect("a name");
            (context.to_string(), ns, name)
        })
        .collect()
}

/// The rows of a merged table (CLUSTER, NAMESPACE, NAME first), in the order printed.
pub(crate) fn table_rows(output: &Output) -> Vec<(String, String, String)> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut lines = stdout.lines();
    if let Some(header) = lines.next() {
        let cells: Vec<&str> = header.split_whitespace().take(3).collect();
        assert_eq!(cells, ["CLUSTER", "NAMESPACE", "NAME"], "{header}");
    }
    lines
        .map(|line| {
            let cells: Vec<&str> = line.split_whitespace().collect();
            (cells[0].into(), cells[1].into(), cells[2].into())
        })
        .collect()
}

pub(crate) fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

pub(crate) async fn get(dir: &Path, kubeconfig: &Path, args: &[&str]) -> Output {
    let kubeconfig = kubeconfig.display().to_string();
    let mut all = vec!["get", "pods", "-A", "--kubeconfig", &kubeconfig];
    all.extend_from_slice(args);
    kscope(dir, &all).await
}

#[tokio::test]
async fn merged_get_is_the_union_of_each_context_and_cluster_terms_pick_clusters() {
    let Some(kubectl) = tools::required("kubectl", "to list each simulated cluster") else {
        return;
    };
    let dir = temp_dir("fleet-union");
    let (mut sim, kubeconfig) = sim_clusters(
        &dir,
        3,
        &["--pods", "15", "--nodes", "2", "--namespaces", "2"],
    )
    .await;
    let contexts = ["kscope-sim-1", "kscope-sim-2", "kscope-sim-3"];
    let each: Vec<Rows> = contexts
        .iter()
        .map(|c| kubectl_pods(&kubectl, &kubeconfig, c))
        .collect();
    let union: Rows = each.iter().flatten().cloned().collect();
    assert_eq!(union.len(), 45, "three clusters of 15 pods");

    let out = get(&dir, &kubeconfig, &["--all-contexts"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let rows = table_rows(&out);
    assert!(rows.is_sorted(), "sorted by cluster, then namespace/name");
    assert_eq!(rows.into_iter().collect::<Rows>(), union);

    let out = get(
        &dir,
        &kubeconfig,
        &[
            "--contexts",
            "kscope-sim-*",
            "--filter",
            "cluster=kscope-sim-2",
        ],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(table_rows(&out).into_iter().collect::<Rows>(), each[1]);

    // The JSON List: each item names its cluster in the kscope.dev/cluster annotation.
    let out = get(
        &dir,
        &kubeconfig,
        &[
            "--all-contexts",
            "--index",
            "cluster=kscope-sim-3",
            "-o",
            "json",
        ],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(list["kind"], "List");
    let items: Rows = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|item| {
            let meta = &item["metadata"];
            let cluster = meta["annotations"]["kscope.dev/cluster"].as_str();
            (
                cluster.expect("the cluster annotation").to_string(),
                meta["namespace"].as_str().expect("namespace").to_string(),
                meta["name"].as_str().expect("name").to_string(),
            )
        })
        .collect();
    assert_eq!(items, each[2]);

    // A second context of the same cluster (same server, CA and kube-system) counts once.
    let text = std::fs::read_to_string(&kubeconfig).expect("kubeconfig");
    let alias = "- name: alias-of-1\n  context:\n    cluster: kscope-sim-1\n    user: kscope-sim-1\ncurrent-context:";
    let aliased = dir.join("aliased");
    std::fs::write(&aliased, text.replacen("current-context:", alias, 1)).expect("write");
    let out = get(
        &dir,
        &aliased,
        &["--context", "kscope-sim-1", "--context", "alias-of-1"],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("context alias-of-1 reaches the same cluster as kscope-sim-1"),
        "{}",
        stderr(&out)
    );
    assert_eq!(table_rows(&out).into_iter().collect::<Rows>(), each[0]);

    // Pods forbidden in one cluster: named, exit code 4, the others only with --allow-stale.
    let faults = dir.join("faults.json");
    std::fs::write(&faults, r#"{"forbidden":["pods"]}"#).expect("write");
    let status = Command::new(&kubectl)
        .args([
            "--context",
            "kscope-sim-2",
            "replace",
            "--raw",
            "/sim/faults",
            "-f",
        ])
        .arg(&faults)
        .env("KUBECONFIG", &kubeconfig)
        .env("HOME", &dir)
        .output()
        .expect("kubectl runs");
    assert!(status.status.success(), "{}", stderr(&status));
    let out = get(&dir, &kubeconfig, &["--all-contexts"]).await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    assert!(
        stderr(&out).contains("1 cluster is not current: kscope-sim-2 (forbidden)"),
        "{}",
        stderr(&out)
    );
    let out = get(&dir, &kubeconfig, &["--all-contexts", "--allow-stale"]).await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let others: Rows = each[0].union(&each[2]).cloned().collect();
    assert_eq!(table_rows(&out).into_iter().collect::<Rows>(), others);

    // A kind one cluster does not serve: that cluster is named, the others' rows printed.
    let deleted = Command::new(&kubectl)
        .args([
            "--context",
            "kscope-sim-3",
            "delete",
            "crd",
            "widgets.example.com",
        ])
        .env("KUBECONFIG", &kubeconfig)
        .env("HOME", &dir)
        .output()
        .expect("kubectl runs");
    assert!(deleted.status.success(), "{}", stderr(&deleted));
    let path = kubeconfig.display().to_string();
    let widgets = [
        "get",
        "widgets",
        "-A",
        "--kubeconfig",
        &path,
        "--all-contexts",
    ];
    let out = kscope(&dir, &[&widgets[..], &["--allow-stale"]].concat()).await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("1 cluster is not current: kscope-sim-3 (kind not served)"),
        "{}",
        stderr(&out)
    );
    let clusters: BTreeSet<String> = table_rows(&out).into_iter().map(|(c, _, _)| c).collect();
    assert_eq!(
        clusters,
        BTreeSet::from(["kscope-sim-1".into(), "kscope-sim-2".into()])
    );

    // One cluster is what every other command reads.
    let out = kscope(
        &dir,
        &[
            "deltas",
            "pods",
            "--kubeconfig",
            &kubeconfig.display().to_string(),
            "--all-contexts",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("for `kscope get`"),
        "{}",
        stderr(&out)
    );

    let _ = sim.kill();
    let _ = sim.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

async fn start(state: PathBuf, listen: std::net::SocketAddr, seed: u64) -> SimHandle {
    let mut config = SimConfig::with_size(10, 2, 2).state_dir(state);
    config.listen = listen;
    config.seed = seed;
    Sim::start(config).await.expect("sim starts")
}

fn clusters_of(output: &Output) -> BTreeSet<String> {
    table_rows(output).into_iter().map(|(c, _, _)| c).collect()
}

#[tokio::test]
async fn a_killed_cluster_is_named_and_a_restarted_one_is_read_again() {
    let dir = temp_dir("fleet-killed");
    let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let mut sims = Vec::new();
    for i in 1..=3u64 {
        sims.push(start(dir.join(format!("sim-{i}")), any, i).await);
    }
    let names = ["kscope-sim-1", "kscope-sim-2", "kscope-sim-3"];
    let named: Vec<(&str, &SimHandle)> = names.iter().copied().zip(&sims).collect();
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(&kubeconfig, kubeconfig_for(&named).expect("kubeconfig")).expect("write");

    let out = get(&dir, &kubeconfig, &["--all-contexts"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(clusters_of(&out).len(), 3);

    let third = sims.pop().expect("three sims");
    let addr = third.addr();
    third.shutdown().await;
    let out = get(
        &dir,
        &kubeconfig,
        &["--all-contexts", "--sync-timeout", "20s"],
    )
    .await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    assert!(
        stderr(&out).contains("kscope-sim-3 (unreachable)"),
        "{}",
        stderr(&out)
    );
    let out = get(&dir, &kubeconfig, &["--all-contexts", "--allow-stale"]).await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert_eq!(
        clusters_of(&out),
        names[..2]
            .iter()
            .map(|n| n.to_string())
            .collect::<BTreeSet<_>>()
    );

    // Back on its address with its kept CA and token: read again like the others.
    sims.push(start(dir.join("sim-3"), addr, 3).await);
    let out = get(&dir, &kubeconfig, &["--all-contexts"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(clusters_of(&out), BTreeSet::from(names.map(String::from)));

    for sim in sims {
        sim.shutdown().await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}
