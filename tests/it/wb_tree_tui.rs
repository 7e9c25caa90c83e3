//! The ownership tree in the TUI (`x`, `:tree`) against the sim: a Deployment down to its
//! pods, kept live as it scales; a pod up to its Deployment; a Widget (a custom resource)
//! down to the ConfigMap its controller made and that ConfigMap up to it; Enter showing a
//! node's row; snapshots at 160x45 and 80x24 with the generated names masked.

use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kscope_client::cluster::{Cluster, NamespaceScope};
use kscope_resources::ResourceKind;
use kscope_sim::SimConfig;
use kscope_ui::action::{Action, InputMode};
use kscope_ui::app::App;
use kscope_ui::nav::ViewSpec;
use kscope_ui::tree::TreeView;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::Value;

use crate::common::kubectl::Kubectl;
use crate::common::tui::{AppStart, wait_rows};

/// A hang guard for waits on the sim and the tree, not a deadline the test is about.
const BOUND: Duration = Duration::from_secs(90);

pub(crate) async fn json(fx: &Kubectl, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    serde_json::from_str(&fx.ok(&all).await).expect("kubectl prints JSON")
}

/// Polls kubectl's `args` until `done` holds of its JSON.
pub(crate) async fn wait_for(
    fx: &Kubectl,
    what: &str,
    args: &[&str],
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + BOUND;
    loop {
        let got = json(fx, args).await;
        if done(&got) {
            return got;
        }
        assert!(Instant::now() < deadline, "{what}: never happened: {got:#}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

pub(crate) fn press(app: &mut App, c: char) {
    let key = KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
    app.handle_event(&Event::Key(key));
}

fn press_esc(app: &mut App) {
    let key = KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE);
    app.handle_event(&Event::Key(key));
}

fn run_command(app: &mut App, command: &str) {
    app.apply(Action::OpenCommand);
    for c in command.chars() {
        app.apply(Action::CommandChar(c));
    }
    app.apply(Action::CommandRun);
}

/// Narrows the table to rows matching `text` and waits until `name` is the only one.
pub(crate) async fn select(app: &mut App, text: &str, name: &str) {
    app.apply(Action::OpenFilter);
    for c in text.chars() {
        app.apply(Action::FilterChar(c));
    }
    app.apply(Action::FilterAccept);
    wait_rows(app, name, |_, w| {
        w.total == 1
            && w.rows
                .first()
                .is_some_and(|r| r.cells.contains(&name.to_string()))
    })
    .await;
}

/// The tree's lines as `prefix Kind/name health`.
pub(crate) fn drawn(tree: &TreeView) -> Vec<String> {
    tree.lines
        .iter()
        .map(|(prefix, n)| format!("{prefix}{}/{} {}", n.kind, n.name, n.health))
        .collect()
}

/// Waits until the open tree, rebuilt by the frame after a change to its stores, satisfies
/// `ok`, every kind it watches listed.
pub(crate) async fn wait_tree(
    app: &mut App,
    what: &str,
    ok: impl Fn(&TreeView) -> bool,
) -> TreeView {
    let deadline = Instant::now() + BOUND;
    loop {
        screen(app, 80, 24);
        let tree = app.state().tree.clone().expect("the tree is open");
        if tree.listed.0 == tree.listed.1 && ok(&tree) {
            return tree;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: never shown: {:#?}",
            drawn(&tree)
        );
        app.next_tree_change(Duration::from_millis(500)).await;
    }
}

pub(crate) fn screen(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    app.draw(&mut terminal).expect("draws");
    terminal.backend().to_string()
}

/// The screen without what changes from run to run: the server's address (line one), the
/// header from its resourceVersion on (whose width moves what follows it: one `#`), the
/// lines' quotes and trailing blanks, and the generated part of each name in `names`
/// (`web-5d8f9c-x2k4q` → `web-######-#####`).
fn stable(text: &str, names: &[String]) -> String {
    let mut out: Vec<String> = text.lines().skip(1).map(str::to_string).collect();
    // A pod's name holds its ReplicaSet's: the longer names are masked first.
    let mut names = names.to_vec();
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    for line in &mut out {
        for name in &names {
            let (base, generated) = name.split_once('-').unwrap_or((name, ""));
            let masked: String = generated
                .chars()
                .map(|c| if c == '-' { '-' } else { '#' })
                .collect();
            *line = line.replace(name.as_str(), &format!("{base}-{masked}"));
        }
        if let Some(at) = line.find("at rv ") {
            line.replace_range(at + "at rv ".len().., "#");
        }
        *line = line.trim_matches('"').trim_end().to_string();
    }
    out.join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tree_of_a_deployment_down_to_its_pods_and_of_a_pod_up_to_it() {
    let Some(fx) = Kubectl::start_with("wb-tree-deploy", SimConfig::with_size(10, 2, 1)).await
    else {
        return;
    };
    fx.ok(&["create", "namespace", "wbtree"]).await;
    fx.ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx",
        "--replicas=2",
        "-n",
        "wbtree",
    ])
    .await;
    wait_for(
        &fx,
        "web ready",
        &["get", "deploy/web", "-n", "wbtree"],
        |d| d["status"]["readyReplicas"] == 2,
    )
    .await;
    let sets = json(&fx, &["get", "rs", "-n", "wbtree"]).await;
    let set = sets["items"][0]["metadata"]["name"]
        .as_str()
        .expect("web's ReplicaSet")
        .to_string();
    let pods = |all: &Value| -> Vec<String> {
        let mut names: Vec<String> = all["items"]
            .as_array()
            .expect("items")
            .iter()
            .filter(|p| p["metadata"]["ownerReferences"][0]["name"] == set.as_str())
            .map(|p| p["metadata"]["name"].as_str().unwrap_or("").to_string())
            .collect();
        names.sort();
        names
    };
    let owned = pods(&json(&fx, &["get", "pods", "-n", "wbtree"]).await);
    assert_eq!(owned.len(), 2, "kubectl sees two pods of web");

    let cluster = Cluster::from_config(fx.sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let view = ViewSpec::new(
        ResourceKind::Deployments,
        NamespaceScope::One("wbtree".into()),
    );
    let mut app = AppStart::new(cluster, view).discovered().await.start();
    select(&mut app, "web", "web").await;

    // Down: the Deployment, its ReplicaSet, its two pods, each with its table's health.
    press(&mut app, 'x');
    assert_eq!(app.state().mode, InputMode::Tree);
    let expected = [
        "Deployment/web 2/2 ready".to_string(),
        format!("└─ReplicaSet/{set} 2/2 ready"),
        format!("  ├─Pod/{} 1/1 Running", owned[0]),
        format!("  └─Pod/{} 1/1 Running", owned[1]),
    ];
    let tree = wait_tree(&mut app, "web down to its pods", |t| drawn(t) == expected).await;
    assert_eq!(tree.selected, 0, "the Deployment's own line is selected");

    let mut names = vec![set.clone()];
    names.extend(owned.iter().cloned());
    for (width, height) in [(160, 45), (80, 24)] {
        let text = stable(&screen(&mut app, width, height), &names);
        insta::assert_snapshot!(format!("tree_of_a_deployment_{width}x{height}"), text);
    }

    // Live: scaled to three, the third pod appears under the ReplicaSet.
    fx.ok(&["scale", "deploy/web", "--replicas=3", "-n", "wbtree"])
        .await;
    let third = wait_for(
        &fx,
        "a third pod",
        &["get", "pods", "-n", "wbtree"],
        |all| pods(all).len() == 3,
    )
    .await;
    let three = pods(&third);
    wait_tree(&mut app, "the third pod", |t| {
        let names: Vec<&str> = t.lines.iter().map(|(_, n)| n.name.as_str()).collect();
        three.iter().all(|p| names.contains(&p.as_str()))
    })
    .await;

    // Enter on a pod shows its row in the pods table.
    while app
        .state()
        .tree
        .as_ref()
        .is_some_and(|t| t.lines[t.selected].1.kind != "Pod")
    {
        app.apply(Action::Down);
    }
    let tree = app.state().tree.clone().expect("open");
    let pod = tree.lines[tree.selected].1.name.clone();
    app.apply(Action::ChooseValue);
    assert_eq!(app.state().mode, InputMode::Normal);
    assert!(app.state().tree.is_none(), "the tree closed");
    assert_eq!(app.table().kind().plural(), "pods");
    wait_rows(&mut app, "the pod selected", |app, _| {
        app.table().selected().as_deref() == Some(format!("wbtree/{pod}").as_str())
    })
    .await;

    // Up: from the pod, its ReplicaSet and Deployment above it, nothing below.
    run_command(&mut app, "tree");
    assert_eq!(app.state().mode, InputMode::Tree);
    let up = [
        "Deployment/web 3/3 ready".to_string(),
        format!("└─ReplicaSet/{set} 3/3 ready"),
        format!("  └─Pod/{pod} 1/1 Running"),
    ];
    let tree = wait_tree(&mut app, "the pod up to web", |t| drawn(t) == up).await;
    assert_eq!(tree.selected, 2, "the pod's own line is selected");
    press_esc(&mut app);
    assert_eq!(app.state().mode, InputMode::Normal);
    assert!(app.state().tree.is_none(), "Esc closes the tree");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tree_of_a_widget_holds_its_configmap_and_the_configmap_climbs_to_it() {
    let config = SimConfig::with_size(10, 2, 1).widget_controller(true);
    let Some(fx) = Kubectl::start_with("wb-tree-widget", config).await else {
        return;
    };
    let path = fx.file(
        "widget.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: gadget, namespace: default}\nspec: {size: small, replicas: 1}\n",
    );
    fx.ok(&["apply", "-f", &path]).await;
    let made = wait_for(
        &fx,
        "gadget's ConfigMap",
        &["get", "configmaps", "-n", "default"],
        |l| {
            l["items"].as_array().is_some_and(|items| {
                items
                    .iter()
                    .any(|c| c["metadata"]["ownerReferences"][0]["name"] == "gadget")
            })
        },
    )
    .await;
    let config_map = made["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|c| c["metadata"]["ownerReferences"][0]["name"] == "gadget")
        .and_then(|c| c["metadata"]["name"].as_str())
        .expect("named")
        .to_string();

    let cluster = Cluster::from_config(fx.sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let mut app = AppStart::pods(cluster).discovered().await.start();
    run_command(&mut app, "widgets -n default");
    select(&mut app, "gadget", "gadget").await;
    press(&mut app, 'x');
    let tree = wait_tree(&mut app, "gadget down to its ConfigMap", |t| {
        let kinds: Vec<String> = t
            .lines
            .iter()
            .map(|(p, n)| format!("{p}{}/{}", n.kind, n.name))
            .collect();
        kinds
            == [
                "Widget/gadget".to_string(),
                format!("└─ConfigMap/{config_map}"),
            ]
    })
    .await;
    assert_eq!(tree.of.kind, "Widget");
    press_esc(&mut app);

    // Up from the ConfigMap: the Widget kind is watched because it is the row's controller.
    run_command(&mut app, "configmaps -n default");
    select(&mut app, &config_map, &config_map).await;
    press(&mut app, 'x');
    let tree = wait_tree(&mut app, "the ConfigMap up to gadget", |t| {
        t.lines.len() == 2 && t.lines[0].1.kind == "Widget" && t.lines[1].1.name == config_map
    })
    .await;
    assert_eq!(tree.selected, 1);
    app.shutdown().await;
}
