//! Namespace sets (issue #37, k9s #1679) against the sim: `-n a,b` in the TUI and in
//! `kscope get` shows exactly what kubectl lists in `a` and in `b`, live; `:nsset` saves a
//! set per cluster group, kept with the last scope across a restart of the TUI.

use std::collections::BTreeSet;
use std::path::Path;

use kscope_client::cluster::{Cluster, NamespaceScope};
use kscope_resources::ResourceKind;
use kscope_sim::SimConfig;
use kscope_ui::app::App;
use kscope_ui::namespace_sets::NamespaceSets;
use kscope_ui::nav::ViewSpec;

use crate::common::cli::{kscope, temp_dir};
use crate::common::kubectl::Kubectl;
use crate::common::tui::{AppStart, wait_rows};
use crate::fleet_picker::screen;
use crate::tui_keys::run_command;

/// A sim with namespaces a, b and c, two pods in a and one in each of b and c, beside the
/// sim's own pods in its own namespace.
async fn three_namespaces(name: &str) -> Option<Kubectl> {
    let fx = Kubectl::start_with(name, SimConfig::with_size(6, 1, 1)).await?;
    for ns in ["a", "b", "c"] {
        fx.ok(&["create", "namespace", ns]).await;
    }
    for (pod, ns) in [("a1", "a"), ("a2", "a"), ("b1", "b"), ("c1", "c")] {
        fx.ok(&["run", pod, "-n", ns, "--image=nginx:1.27"]).await;
    }
    Some(fx)
}

/// The `namespace/name` of each pod kubectl lists in each of `namespaces`.
async fn kubectl_pods(fx: &Kubectl, namespaces: &[&str]) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    for ns in namespaces {
        let names = fx.ok(&["get", "pods", "-n", ns, "-o", "name"]).await;
        for name in names.lines() {
            keys.insert(format!("{ns}/{}", name.trim_start_matches("pod/")));
        }
    }
    keys
}

async fn cluster(fx: &Kubectl, context: &str) -> Cluster {
    let config = fx.sim.kube_config().await.expect("config");
    Cluster::from_config(config, context.into()).expect("cluster")
}

/// Waits until the table shows exactly `keys`.
async fn wait_keys(app: &mut App, what: &str, keys: &BTreeSet<String>) {
    wait_rows(app, what, |_, w| {
        let shown: BTreeSet<String> = w.rows.iter().map(|r| r.key.to_string()).collect();
        shown == *keys
    })
    .await;
}

fn message(app: &App) -> String {
    app.state().command.error.clone().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_comma_list_shows_the_union_of_kubectls_namespaces_and_follows_them() {
    let Some(fx) = three_namespaces("nsset-union").await else {
        return;
    };
    let default = ViewSpec::new(ResourceKind::Pods, NamespaceScope::One("default".into()));
    let mut app = AppStart::new(cluster(&fx, "sim").await, default).start();
    run_command(&mut app, "pods -n b,a");
    assert_eq!(app.header().scope, "namespaces a, b");
    let union = kubectl_pods(&fx, &["a", "b"]).await;
    assert_eq!(union.len(), 3, "{union:?}");
    wait_keys(&mut app, "a's and b's pods", &union).await;
    let drawn = screen(&mut app, 160, 20);
    assert!(drawn.contains("NAMESPACE"), "a NAMESPACE column: {drawn}");

    // A pod created in a afterwards shows; one in c does not.
    fx.ok(&["run", "a3", "-n", "a", "--image=nginx:1.27"]).await;
    fx.ok(&["run", "c2", "-n", "c", "--image=nginx:1.27"]).await;
    let union = kubectl_pods(&fx, &["a", "b"]).await;
    assert!(union.contains("a/a3"));
    wait_keys(&mut app, "a's new pod among the set's", &union).await;

    // A namespace of the set that does not exist is said; the others' rows stay.
    run_command(&mut app, "pods -n a,nope");
    let only_a = kubectl_pods(&fx, &["a"]).await;
    wait_keys(&mut app, "a's pods without nope's", &only_a).await;
    let patience = std::time::Duration::from_secs(30);
    while !app.header().scope.contains("nope missing") {
        assert!(
            app.next_namespace_check(patience).await,
            "no answer about nope: {:?}",
            app.header()
        );
    }
    assert!(message(&app).contains("namespace nope of the set does not exist"));

    // A bad name in the list is refused, and the table stays.
    run_command(&mut app, "pods -n a,Nope");
    assert!(message(&app).contains("\"Nope\" is not a valid namespace name"));
    assert_eq!(app.header().scope, "namespaces a, nope · nope missing");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_named_set_and_the_last_scope_are_kept_per_cluster_group_across_a_restart() {
    let Some(fx) = three_namespaces("nsset-saved").await else {
        return;
    };
    let dir = temp_dir("nsset-saved");
    let path = dir.join("namespace-sets.json");
    let default = ViewSpec::new(ResourceKind::Pods, NamespaceScope::One("default".into()));
    let start = |cluster: Cluster| {
        AppStart::new(cluster, default.clone())
            .namespace_sets(NamespaceSets::load(path.clone()), true)
            .start()
    };
    let team = kubectl_pods(&fx, &["a", "c"]).await;

    let mut first = start(cluster(&fx, "sim").await);
    assert_eq!(
        first.header().scope,
        "namespace default",
        "nothing saved yet"
    );
    run_command(&mut first, "nsset team c,a");
    assert_eq!(message(&first), "namespace set team saved for sim");
    assert_eq!(first.header().scope, "namespaces team (a, c)");
    wait_keys(&mut first, "team's pods", &team).await;
    first.shutdown().await;

    // Restarted: the set is where it was left, and :nsset NAME brings it back.
    let mut again = start(cluster(&fx, "sim").await);
    assert_eq!(again.header().scope, "namespaces team (a, c)", "restored");
    wait_keys(&mut again, "team's pods after a restart", &team).await;
    run_command(&mut again, "pods -n b");
    assert_eq!(again.header().scope, "namespace b");
    run_command(&mut again, "nsset");
    assert_eq!(message(&again), "namespace sets for sim: team (a, c)");
    run_command(&mut again, "nsset team");
    assert_eq!(again.header().scope, "namespaces team (a, c)");
    wait_keys(&mut again, "team's pods again", &team).await;
    run_command(&mut again, "nodes");
    assert_eq!(again.header().scope, "cluster", "nodes ignore the set");
    run_command(&mut again, "pods");
    assert_eq!(
        again.header().scope,
        "namespaces team (a, c)",
        "kept for pods"
    );
    again.shutdown().await;

    // Another cluster group (the same server under another context) has sets of its own.
    let mut other = start(cluster(&fx, "other").await);
    assert_eq!(
        other.header().scope,
        "namespace default",
        "sim's last scope is sim's"
    );
    run_command(&mut other, "nsset team");
    assert!(
        message(&other).contains("no such set for other"),
        "{}",
        message(&other)
    );
    assert_eq!(other.header().scope, "namespace default");
    run_command(&mut other, "nsset -d team");
    assert_eq!(message(&other), ":nsset -d team  no such set for other");
    other.shutdown().await;
    let kept = NamespaceSets::load(path.clone());
    assert!(kept.get("sim", "team").is_some(), "sim's set untouched");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `kscope get pods -n a,b` against the sim, with its kubeconfig.
async fn get(fx: &Kubectl, dir: &Path, namespaces: &str) -> std::process::Output {
    let kubeconfig = fx.dir.join("kubeconfig");
    let kubeconfig = kubeconfig.to_str().expect("a UTF-8 path");
    kscope(
        dir,
        &["get", "pods", "--kubeconfig", kubeconfig, "-n", namespaces],
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_with_a_comma_list_prints_both_namespaces_rows_with_their_namespace() {
    let Some(fx) = three_namespaces("nsset-get").await else {
        return;
    };
    let dir = temp_dir("nsset-get");
    let out = get(&fx, &dir, "b,a").await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines = stdout.lines();
    let header = lines.next().unwrap_or_default();
    assert!(header.starts_with("NAMESPACE "), "{header}");
    let printed: BTreeSet<String> = lines
        .filter_map(|l| {
            let mut cells = l.split_whitespace();
            Some(format!("{}/{}", cells.next()?, cells.next()?))
        })
        .collect();
    assert_eq!(printed, kubectl_pods(&fx, &["a", "b"]).await);

    let bad = get(&fx, &dir, "a,Bad").await;
    let said = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success());
    assert!(
        said.contains("\"Bad\" is not a valid namespace name"),
        "{said}"
    );

    // A command reading one namespace or all refuses a set rather than read every namespace.
    let kubeconfig = fx.dir.join("kubeconfig");
    let args = ["--kubeconfig", kubeconfig.to_str().expect("a UTF-8 path")];
    let deltas = kscope(
        &dir,
        &[&["deltas", "pods", "-n", "a,b"][..], &args].concat(),
    )
    .await;
    let said = String::from_utf8_lossy(&deltas.stderr);
    assert!(!deltas.status.success());
    assert!(
        said.contains("-n a,b: this command reads one namespace or all"),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `:ctx` to another cluster group opens it in the scope that group was last shown in, and
/// the scope shown after a switch is remembered as the new group's, not the old one's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctx_restores_each_cluster_groups_last_scope() {
    use std::time::Duration;

    use kscope_client::cluster::ClusterArgs;

    let dir = temp_dir("nsset-ctx");
    let (mut sim, kubeconfig) = crate::common::cli::sim_clusters(
        &dir,
        2,
        &["--pods", "20", "--nodes", "2", "--namespaces", "2"],
    )
    .await;
    let path = dir.join("namespace-sets.json");
    let args = ClusterArgs {
        kubeconfig: Some(kubeconfig.clone()),
        ..ClusterArgs::default()
    };
    let cluster = args.connect().await.expect("the first context");
    let view = ViewSpec::new(ResourceKind::Pods, NamespaceScope::One("default".into()));
    let mut app = AppStart::new(cluster, view)
        .namespace_sets(NamespaceSets::load(path.clone()), true)
        .kubeconfig_contexts(&args)
        .start();
    async fn switch(app: &mut App, context: &str) {
        run_command(app, &format!("ctx {context}"));
        let connected = tokio::time::timeout(Duration::from_secs(30), app.context_connected())
            .await
            .expect("connected in time")
            .expect("a result");
        app.finish_context(connected);
        assert_eq!(
            app.header().context,
            context,
            "{:?}",
            app.state().command.error
        );
    }

    run_command(&mut app, "pods -n kube-system");
    assert_eq!(app.header().scope, "namespace kube-system");
    switch(&mut app, "kscope-sim-2").await;
    assert_eq!(
        app.header().scope,
        "namespace default",
        "nothing kept for kscope-sim-2: its context's namespace"
    );
    run_command(&mut app, "pods -A");
    assert_eq!(app.header().scope, "all namespaces");
    switch(&mut app, "kscope-sim-1").await;
    assert_eq!(app.header().scope, "namespace kube-system", "sim-1's last");
    switch(&mut app, "kscope-sim-2").await;
    assert_eq!(app.header().scope, "all namespaces", "sim-2's last");
    app.shutdown().await;

    let kept = NamespaceSets::load(path);
    assert_eq!(
        kept.last("kscope-sim-1"),
        Some(NamespaceScope::One("kube-system".into()))
    );
    assert_eq!(kept.last("kscope-sim-2"), Some(NamespaceScope::All));
    let _ = sim.kill();
    let _ = sim.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
