//! The TUI across several clusters (`kscope --all-contexts`) against three sims: one table
//! with a CLUSTER column holding every cluster's rows, `cluster=` picking clusters, describe
//! on a row reading that row's cluster, and a cluster killed marked stale while the others
//! stay live.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use kscope_client::cluster::{Cluster, NamespaceScope};
use kscope_index_views::live::Window;
use kscope_resources::ResourceKind;
use kscope_sim::{Sim, SimConfig, SimHandle, kubeconfig_for};
use kscope_ui::action::Action;
use kscope_ui::nav::ViewSpec;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use crate::common::cli::temp_dir;
use crate::common::tmux::Session;
use crate::common::tools;
use crate::common::tui::{AppStart, stable, wait_rows};

pub(crate) const CONTEXTS: [&str; 3] = ["kscope-sim-1", "kscope-sim-2", "kscope-sim-3"];

/// Three small sims, each its own cluster, and a kubeconfig with a context for each.
pub(crate) async fn three_sims(dir: &Path) -> (Vec<SimHandle>, PathBuf) {
    let mut sims = Vec::new();
    for seed in 1..=3u64 {
        let config = SimConfig::with_size(3, 2, 1)
            .seed(seed)
            .state_dir(dir.join(format!("sim-{seed}")));
        sims.push(Sim::start(config).await.expect("sim starts"));
    }
    let named: Vec<(&str, &SimHandle)> = CONTEXTS.iter().copied().zip(&sims).collect();
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(&kubeconfig, kubeconfig_for(&named).expect("kubeconfig")).expect("write");
    (sims, kubeconfig)
}

/// The table's rows: the lines that start with a context's name.
pub(crate) fn rows_of<'a>(screen: &'a str, context: &str) -> Vec<&'a str> {
    screen
        .lines()
        .filter(|l| l.trim_start().starts_with(&format!("{context} ")))
        .collect()
}

/// kubectl in `context` of `kubeconfig`; its stdout, the test failing on an error.
pub(crate) fn kubectl(kubectl: &Path, kubeconfig: &Path, context: &str, args: &[&str]) -> String {
    let output = Command::new(kubectl)
        .args(["--context", context])
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env("HOME", kubeconfig.parent().expect("a directory"))
        .output()
        .expect("kubectl runs");
    assert!(
        output.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_table_across_three_clusters_filters_describes_and_marks_a_killed_one_stale() {
    let Some(_) = tools::required("tmux", "to run kscope in a real terminal") else {
        return;
    };
    let Some(kubectl_bin) = tools::required("kubectl", "to label a pod of one cluster") else {
        return;
    };
    let dir = temp_dir("fleet-tui");
    let (mut sims, kubeconfig) = three_sims(&dir).await;
    // A pod of cluster 2 that says it is cluster 2's, for describe to show.
    let first = kubectl(
        &kubectl_bin,
        &kubeconfig,
        CONTEXTS[1],
        &[
            "get",
            "pods",
            "-A",
            "-o",
            "jsonpath={.items[0].metadata.namespace} {.items[0].metadata.name}",
        ],
    );
    let (namespace, pod) = first.split_once(' ').expect("namespace and name");
    kubectl(
        &kubectl_bin,
        &kubeconfig,
        CONTEXTS[1],
        &["label", "pod", "-n", namespace, pod, "fleet-member=two"],
    );

    let command = format!(
        "env XDG_STATE_HOME={} {} --kubeconfig {} --all-contexts -A",
        dir.join("state").display(),
        env!("CARGO_BIN_EXE_kscope"),
        kubeconfig.display(),
    );
    let session = Session::alone_sized(
        format!("kscope-fleet-{}", std::process::id()),
        &command,
        160,
        45,
    );
    let screen = session.wait_for("rows of all three clusters", |s| {
        CONTEXTS.iter().all(|c| rows_of(s, c).len() == 3) && s.matches(" watching").count() >= 3
    });
    assert!(screen.contains("CLUSTER"), "{screen}");
    let header = screen.lines().position(|l| l.contains("CLUSTER"));
    let cluster_title = screen.lines().nth(header.unwrap_or_default()).unwrap_or("");
    assert!(
        cluster_title.trim_start().starts_with("CLUSTER"),
        "CLUSTER is the first column: {screen}"
    );

    // `cluster=` picks one cluster's store.
    session.keys(&["/", &format!("cluster={}", CONTEXTS[1]), "Enter"]);
    let screen = session.wait_for("only cluster 2's rows", |s| {
        rows_of(s, CONTEXTS[1]).len() == 3
            && rows_of(s, CONTEXTS[0]).is_empty()
            && rows_of(s, CONTEXTS[2]).is_empty()
    });
    assert!(screen.contains("matching cluster="), "{screen}");

    // Describe on cluster 2's labelled pod reads cluster 2.
    session.keys(&["Escape"]);
    session.wait_for("every cluster again", |s| {
        CONTEXTS.iter().all(|c| rows_of(s, c).len() == 3)
    });
    session.keys(&["/", &format!("cluster={},{pod}", CONTEXTS[1]), "Enter"]);
    session.wait_for("the labelled pod's row", |s| {
        rows_of(s, CONTEXTS[1]).len() == 1 && rows_of(s, CONTEXTS[0]).is_empty()
    });
    session.keys(&["d"]);
    let described = session.wait_for("cluster 2's pod described", |s| {
        s.contains("fleet-member=two")
    });
    assert!(described.contains(pod), "{described}");
    session.keys(&["Escape"]);
    session.keys(&["Escape"]);
    session.wait_for("every cluster again", |s| {
        CONTEXTS.iter().all(|c| rows_of(s, c).len() == 3)
    });

    // Cluster 3 killed: its rows stay, marked stale; the others watch on.
    let third = sims.pop().expect("three sims");
    third.shutdown().await;
    let screen = session.wait_for("cluster 3 stale", |s| {
        rows_of(s, &format!("{} (stale)", CONTEXTS[2])).len() == 3
            && s.contains(&format!("{} stale", CONTEXTS[2]))
    });
    assert_eq!(rows_of(&screen, CONTEXTS[0]).len(), 3, "{screen}");
    assert_eq!(rows_of(&screen, CONTEXTS[1]).len(), 3, "{screen}");
    assert!(
        screen.contains(&format!("{} watching", CONTEXTS[0]))
            && screen.contains(&format!("{} watching", CONTEXTS[1])),
        "{screen}"
    );
    session.keys(&["q"]);
    session.wait_exit("q");
    for sim in sims {
        sim.shutdown().await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn screen(app: &mut kscope_ui::app::App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    app.draw(&mut terminal).expect("draws");
    terminal.backend().to_string()
}

/// The TUI on the nodes of [`three_sims`], one table across them, once every cluster's two
/// nodes are in it and each cluster is watching; the app and that first window.
pub(crate) async fn nodes_across(sims: &[SimHandle]) -> (kscope_ui::app::App, Window) {
    let mut clusters = Vec::new();
    for (sim, context) in sims.iter().zip(CONTEXTS) {
        let config = sim.kube_config().await.expect("config");
        clusters.push(Cluster::from_config(config, context.into()).expect("cluster"));
    }
    let view = ViewSpec::new(ResourceKind::Nodes, NamespaceScope::All);
    let mut app = AppStart::new(clusters[0].clone(), view)
        .fleet(clusters)
        .start();
    let all = wait_rows(&mut app, "every cluster's nodes", |app, w| {
        w.total == 6 && app.header().sync.matches(" watching").count() == 3
    })
    .await;
    (app, all)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_merged_nodes_table_sorts_and_filters_across_clusters_at_160x45_and_80x24() {
    let dir = temp_dir("fleet-tui-snap");
    let (sims, _) = three_sims(&dir).await;
    let (mut app, all) = nodes_across(&sims).await;
    let clusters: BTreeSet<&str> = all.rows.iter().map(|r| r.cells[0].as_str()).collect();
    assert_eq!(clusters, CONTEXTS.into_iter().collect());
    // By CLUSTER, then each cluster's own order.
    let order: Vec<&str> = all.rows.iter().map(|r| r.cells[0].as_str()).collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted);
    insta::assert_snapshot!("fleet_nodes_160x45", stable(&screen(&mut app, 160, 45)));
    insta::assert_snapshot!("fleet_nodes_80x24", stable(&screen(&mut app, 80, 24)));

    // `N` sorts by NAME across the clusters.
    app.apply(Action::SortBy("NAME"));
    let by_name = wait_rows(&mut app, "sorted by name", |app, w| {
        app.table().shown_sort().column == 1 && w.total == 6
    })
    .await;
    let names: Vec<&str> = by_name.rows.iter().map(|r| r.cells[1].as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);

    // `cluster=` is an index: its values are the clusters, and a term picks one.
    assert!(app.table().index_names().contains(&"cluster".to_string()));
    let counts: Vec<(String, usize)> = app
        .table()
        .value_counts("cluster")
        .into_iter()
        .map(|c| (c.value.to_string(), c.count))
        .collect();
    assert_eq!(
        counts,
        CONTEXTS.map(|c| (c.to_string(), 2)).to_vec(),
        "each cluster's two nodes"
    );
    app.apply(Action::OpenFilter);
    for c in format!("cluster!={}", CONTEXTS[0]).chars() {
        app.apply(Action::FilterChar(c));
    }
    app.apply(Action::FilterAccept);
    let picked = wait_rows(&mut app, "clusters 2 and 3 only", |_, w| {
        w.total == 4 && w.rows.iter().all(|r| r.cells[0] != CONTEXTS[0])
    })
    .await;
    assert_eq!(picked.rows.len(), 4);
    for sim in sims {
        sim.shutdown().await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}
