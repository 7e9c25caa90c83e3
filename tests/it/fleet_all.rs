//! `:all` across three clusters: one table of every kind of the category in every cluster,
//! with CLUSTER and KIND columns. Each cluster's rows are kubectl's `get all` rows for its
//! context; `cluster=` narrows to one cluster by the index; Enter on a row drills down in
//! that row's cluster; a cluster killed keeps its rows, marked stale, while the others
//! watch on.

use std::path::Path;
use std::time::{Duration, Instant};

use kscope_client::cluster::Cluster;
use kscope_index_views::live::Window;
use kscope_ui::action::Action;
use kscope_ui::app::App;

use crate::common::cli::temp_dir;
use crate::common::tools;
use crate::common::tui::{AppStart, wait_rows};
use crate::fleet_tui::{CONTEXTS, kubectl, three_sims};
use crate::tui_keys::run_command;

/// `kind/name` of each object kubectl's `get all -A` lists in `context`, sorted.
fn kubectl_all(kubectl_bin: &Path, kubeconfig: &Path, context: &str) -> Vec<String> {
    let listed = kubectl(
        kubectl_bin,
        kubeconfig,
        context,
        &["get", "all", "-A", "-o", "name"],
    );
    let mut names: Vec<String> = listed.lines().map(str::to_string).collect();
    names.sort();
    names
}

/// `kind/name` of the rows whose CLUSTER cell is `cluster`, sorted.
fn rows_of(window: &Window, cluster: &str) -> Vec<String> {
    let mut names: Vec<String> = window
        .rows
        .iter()
        .filter(|r| r.cells[0] == cluster)
        .map(|r| format!("{}/{}", r.cells[1], r.cells[2]))
        .collect();
    names.sort();
    names
}

/// Types `/filter` and accepts it.
fn filter(app: &mut App, text: &str) {
    app.apply(Action::OpenFilter);
    for c in text.chars() {
        app.apply(Action::FilterChar(c));
    }
    app.apply(Action::FilterAccept);
}

/// `:all`, once the first cluster's discovery (in the background across clusters) knows it.
async fn show_all(app: &mut App) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while app.category().is_none() {
        assert!(Instant::now() < deadline, "`:all` never known");
        run_command(app, "all");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_across_three_clusters_is_each_clusters_get_all_picked_drilled_and_stale() {
    let Some(kubectl_bin) = tools::required("kubectl", "to list each simulated cluster") else {
        return;
    };
    let dir = temp_dir("fleet-all");
    let (mut sims, kubeconfig) = three_sims(&dir).await;
    let expected: Vec<Vec<String>> = CONTEXTS
        .iter()
        .map(|c| kubectl_all(&kubectl_bin, &kubeconfig, c))
        .collect();
    assert!(expected.iter().all(|e| e.len() > 3), "{expected:?}");

    let mut clusters = Vec::new();
    for (sim, context) in sims.iter().zip(CONTEXTS) {
        let config = sim.kube_config().await.expect("config");
        clusters.push(Cluster::from_config(config, context.into()).expect("cluster"));
    }
    let mut app = AppStart::pods(clusters[0].clone()).fleet(clusters).start();
    show_all(&mut app).await;
    assert_eq!(app.header().resource, "all");
    let window = wait_rows(&mut app, "every cluster's get all", |app, w| {
        CONTEXTS
            .iter()
            .zip(&expected)
            .all(|(c, e)| rows_of(w, c) == *e)
            && app.header().sync.matches(" watching").count() == 3
    })
    .await;
    let columns: Vec<String> = app.table().columns().into_iter().map(|c| c.name).collect();
    assert_eq!(columns[..3], ["CLUSTER", "KIND", "NAME"], "{columns:?}");
    assert_eq!(
        window.total,
        expected.iter().map(Vec::len).sum::<usize>(),
        "nothing else"
    );
    assert!(
        app.header()
            .sync
            .starts_with("3 clusters: kscope-sim-1 watching"),
        "{:?}",
        app.header()
    );

    // `cluster=` is the index of clusters: one term, one cluster's rows.
    assert!(app.table().index_names().contains(&"cluster".to_string()));
    filter(&mut app, &format!("cluster={}", CONTEXTS[1]));
    wait_rows(&mut app, "only cluster 2's rows", |_, w| {
        rows_of(w, CONTEXTS[1]) == expected[1] && w.total == expected[1].len()
    })
    .await;

    // Enter on cluster 3's first Deployment: its ReplicaSets, in cluster 3 only.
    app.apply(Action::FilterClear);
    filter(&mut app, &format!("cluster={}", CONTEXTS[2]));
    let third = wait_rows(&mut app, "only cluster 3's rows", |_, w| {
        w.total == expected[2].len() && rows_of(w, CONTEXTS[2]) == expected[2]
    })
    .await;
    let deployment = third
        .rows
        .iter()
        .find(|r| r.cells[1] == "deployment.apps")
        .expect("a deployment in cluster 3");
    assert!(app.table().select_key(&deployment.key));
    let (kind, key) = app.table().selected_object().expect("its object");
    assert_eq!(kind.plural(), "deployments");
    assert!(key.ends_with(&format!("/{}", deployment.cells[2])), "{key}");
    assert_eq!(app.table().selected_context().as_deref(), Some(CONTEXTS[2]));
    app.apply(Action::DrillDown);
    assert_eq!(app.header().resource, "replicasets");
    assert!(
        app.state()
            .filter
            .input
            .contains(&format!("cluster={}", CONTEXTS[2])),
        "{:?}",
        app.state().filter.input
    );
    wait_rows(
        &mut app,
        "the deployment's replicasets, of cluster 3 alone",
        |_, w| w.total > 0 && w.rows.iter().all(|r| r.cells[0] == CONTEXTS[2]),
    )
    .await;

    // Back to `:all`; cluster 3 killed: its rows stay, marked stale, the others watch on.
    show_all_again(&mut app, &expected).await;
    let third = sims.pop().expect("three sims");
    third.shutdown().await;
    let stale = format!("{} (stale)", CONTEXTS[2]);
    let window = wait_rows(&mut app, "cluster 3 stale", |app, w| {
        rows_of(w, &stale) == expected[2]
            && app
                .header()
                .sync
                .contains(&format!("{} stale", CONTEXTS[2]))
    })
    .await;
    assert_eq!(rows_of(&window, CONTEXTS[0]), expected[0]);
    assert_eq!(rows_of(&window, CONTEXTS[1]), expected[1]);
    let sync = &app.header().sync;
    assert!(
        sync.contains(&format!("{} watching", CONTEXTS[0]))
            && sync.contains(&format!("{} watching", CONTEXTS[1])),
        "{sync}"
    );
    for sim in sims {
        sim.shutdown().await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Esc back to `:all` from the drill-down (its filter first, then the view), and its
/// filter cleared: every cluster's rows again, `expected` by cluster, all watching.
async fn show_all_again(app: &mut App, expected: &[Vec<String>]) {
    for _ in 0..4 {
        if app.header().resource == "all" && app.state().filter.input.is_empty() {
            break;
        }
        app.apply(Action::FilterClear);
    }
    assert_eq!(app.header().resource, "all", "Esc comes back to :all");
    assert_eq!(app.state().filter.input, "");
    wait_rows(app, "every cluster's rows again", |app, w| {
        CONTEXTS
            .iter()
            .zip(expected)
            .all(|(c, e)| rows_of(w, c) == *e)
            && app.header().sync.matches(" watching").count() == 3
    })
    .await;
}

/// The first entry of the table's tap (its current cluster's informer's): the same entry
/// after a view change means the same informer, parked and reused, not a new list.
fn first_tap_entry(app: &App) -> std::sync::Arc<kscope_informers::instrument::tap::TapEntry> {
    let entries = app.table().tap().snapshot();
    entries
        .first()
        .cloned()
        .expect("the informer has tapped its list")
}

/// Across clusters as on one: leaving `:all` parks its kinds' tables (merged again across
/// the clusters), so `:pods` after it shows the same informers, and `:all` after that takes
/// the pods table on screen back in, instead of listing every cluster again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_all_across_clusters_parks_its_kinds_tables() {
    use std::sync::Arc;

    let dir = temp_dir("fleet-all-park");
    let (sims, _kubeconfig) = three_sims(&dir).await;
    let mut clusters = Vec::new();
    for (sim, context) in sims.iter().zip(CONTEXTS) {
        let config = sim.kube_config().await.expect("config");
        clusters.push(Cluster::from_config(config, context.into()).expect("cluster"));
    }
    let mut app = AppStart::pods(clusters[0].clone()).fleet(clusters).start();
    let watching = |app: &App| app.header().sync.matches(" watching").count() == 3;
    let pods = wait_rows(&mut app, "every cluster's pods", |app, w| {
        w.total > 0 && watching(app)
    })
    .await
    .total;
    let pods_informer = first_tap_entry(&app);

    show_all(&mut app).await;
    wait_rows(&mut app, "every cluster's get all", |app, w| {
        w.total > pods && watching(app)
    })
    .await;
    run_command(&mut app, "pods");
    assert_eq!(app.header().resource, "pods");
    assert!(
        Arc::ptr_eq(&first_tap_entry(&app), &pods_informer),
        "the pods informers were parked and are shown again"
    );
    wait_rows(&mut app, "the parked pods, every cluster's", |app, w| {
        w.total == pods && watching(app)
    })
    .await;

    // Another kind of the category, and `:all` again: one informer per kind and cluster
    // throughout.
    run_command(&mut app, "deploy");
    assert_eq!(app.header().resource, "deployments");
    wait_rows(&mut app, "every cluster's deployments", |app, w| {
        w.total > 0 && watching(app)
    })
    .await;
    let deployments_informer = first_tap_entry(&app);
    show_all(&mut app).await;
    run_command(&mut app, "deploy");
    assert!(Arc::ptr_eq(&first_tap_entry(&app), &deployments_informer));
    run_command(&mut app, "pods");
    assert!(Arc::ptr_eq(&first_tap_entry(&app), &pods_informer));
    app.shutdown().await;
    for sim in sims {
        sim.shutdown().await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}
