//! The ownership tree under churn, against the sim: the changes to its stores between two
//! frames cost one rebuild, made by the frame that draws it — none while no frame is drawn,
//! none for a frame with no change since the last — and the frame shows the stores as they
//! are then, never the tree from before the changes.

use std::time::Duration;

use kscope_client::cluster::{Cluster, NamespaceScope};
use kscope_resources::ResourceKind;
use kscope_sim::SimConfig;
use kscope_ui::action::InputMode;
use kscope_ui::nav::ViewSpec;

use crate::common::kubectl::Kubectl;
use crate::common::tui::AppStart;
use crate::wb_tree_tui::{drawn, json, press, screen, select, wait_for, wait_tree};

/// How long with no change to the tree's stores counts as settled.
const QUIET: Duration = Duration::from_secs(2);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_between_frames_cost_one_rebuild_by_the_frame_that_draws_them() {
    let Some(fx) = Kubectl::start_with("wb-tree-churn", SimConfig::with_size(6, 2, 1)).await else {
        return;
    };
    fx.ok(&["create", "namespace", "churn"]).await;
    fx.ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx",
        "--replicas=1",
        "-n",
        "churn",
    ])
    .await;
    wait_for(
        &fx,
        "web ready",
        &["get", "deploy/web", "-n", "churn"],
        |d| d["status"]["readyReplicas"] == 1,
    )
    .await;

    let cluster = Cluster::from_config(fx.sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let view = ViewSpec::new(
        ResourceKind::Deployments,
        NamespaceScope::One("churn".into()),
    );
    let mut app = AppStart::new(cluster, view).discovered().await.start();
    select(&mut app, "web", "web").await;
    press(&mut app, 'x');
    assert_eq!(app.state().mode, InputMode::Tree);
    wait_tree(&mut app, "web down to its pod", |t| t.lines.len() == 3).await;
    // Whatever the sim still had to say about web, said and drawn.
    while app.next_tree_change(QUIET).await {}
    screen(&mut app, 80, 24);
    let before = app.state().tree.clone().expect("open");

    // A frame with nothing changed since the last rebuilds nothing.
    screen(&mut app, 80, 24);
    assert_eq!(
        app.state().tree.as_ref().map(|t| t.builds),
        Some(before.builds)
    );

    // Scaled to four: three pods created, scheduled and started, the ReplicaSet's and the
    // Deployment's status following — many changes to the stores, and no frame drawn.
    fx.ok(&["scale", "deploy/web", "--replicas=4", "-n", "churn"])
        .await;
    wait_for(
        &fx,
        "web scaled",
        &["get", "deploy/web", "-n", "churn"],
        |d| d["status"]["readyReplicas"] == 4,
    )
    .await;
    let mut taken = 0;
    while app.next_tree_change(QUIET).await {
        taken += 1;
    }
    assert!(taken > 0, "the scale changed the tree's stores");
    let waiting = app.state().tree.clone().expect("open");
    assert_eq!(
        waiting.builds, before.builds,
        "{taken} changes taken and no frame drawn: no rebuild"
    );
    assert_eq!(drawn(&waiting), drawn(&before), "not rebuilt yet");

    // The next frame rebuilds it once, from the stores as they are now.
    screen(&mut app, 80, 24);
    let shown = app.state().tree.clone().expect("open");
    assert_eq!(shown.builds, before.builds + 1, "one rebuild for the frame");
    let pods = json(&fx, &["get", "pods", "-n", "churn"]).await;
    let mut names: Vec<String> = pods["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|p| p["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    names.sort();
    let lines = drawn(&shown);
    assert_eq!(lines.len(), 6, "web, its ReplicaSet, four pods: {lines:#?}");
    assert!(lines[0].ends_with("4/4 ready"), "{lines:#?}");
    for (line, name) in lines[2..].iter().zip(&names) {
        assert!(
            line.contains(&format!("Pod/{name} 1/1 Running")),
            "{lines:#?}"
        );
    }
    app.shutdown().await;
}
