//! `:all` (and any category) as one table of every kind in it, against the sim: the rows are
//! kubectl's `get all` rows, they filter by text and by each kind's label index, Enter and
//! `y` act on the row's own kind, and a kind the server refuses is said so while the others
//! list.

use std::collections::BTreeSet;
use std::time::Duration;

use kscope_client::cluster::Cluster;
use kscope_client::discovery::Catalog;
use kscope_index_views::live::Window;
use kscope_resources::ResourceKind;
use kscope_sim::{Faults, Sim, SimConfig};
use kscope_ui::action::{Action, InputMode};
use kscope_ui::app::App;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use crate::common::kubectl::Kubectl;
use crate::common::tui::{AppStart, stable, wait_rows};

fn run_command(app: &mut App, command: &str) {
    app.apply(Action::OpenCommand);
    for c in command.chars() {
        app.apply(Action::CommandChar(c));
    }
    app.apply(Action::CommandRun);
}

/// Whether the header says every kind of the category is watching.
fn all_watching(app: &App) -> bool {
    let kinds = app.category().map_or(0, |c| c.kinds.len());
    app.header().sync == format!("{kinds} kinds, {kinds} watching")
}

/// The rows as kubectl's `get all -o name` names them: `deployment.apps/web`.
fn names(window: &Window) -> BTreeSet<String> {
    window
        .rows
        .iter()
        .map(|r| format!("{}/{}", r.cells[0], r.cells[1]))
        .collect()
}

fn screen(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    app.draw(&mut terminal).expect("draws");
    terminal.backend().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_is_one_table_of_kubectls_get_all_rows_that_filters_and_opens_each_rows_kind() {
    let Some(fx) = Kubectl::start_with("tui-all", SimConfig::with_size(12, 2, 2)).await else {
        return;
    };
    let namespace = "checkout-prod";
    let expected: BTreeSet<String> = fx
        .ok(&["get", "all", "-n", namespace, "-o", "name"])
        .await
        .lines()
        .map(str::to_owned)
        .collect();
    let kinds: BTreeSet<&str> = expected
        .iter()
        .filter_map(|n| n.split_once('/'))
        .map(|(k, _)| k)
        .collect();
    assert!(kinds.len() >= 3, "the sim has several kinds: {expected:?}");

    let cluster = Cluster::from_config(fx.sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let mut app = AppStart::pods(cluster).discovered().await.start();
    wait_rows(&mut app, "pods", |_, w| w.total > 0).await;
    run_command(&mut app, &format!("all -n {namespace}"));
    assert_eq!(app.category().map(|c| c.name.as_str()), Some("all"));
    assert_eq!(app.header().resource, "all");
    let window = wait_rows(&mut app, "every kind of all", |app, w| {
        names(w) == expected && all_watching(app)
    })
    .await;
    assert_eq!(window.total, expected.len());
    assert!(app.header().error.is_none(), "{:?}", app.header());
    // Kinds that arrive after the pods and sort above them leave the cursor on the top row.
    assert_eq!((window.offset, window.selected), (0, Some(0)), "{window:?}");

    // Sorted by NAME (`s` moves to the next column), the kinds mixed.
    app.apply(Action::SortNext);
    let by_name = wait_rows(&mut app, "rows by name", |app, _| {
        app.table().shown_sort().column == 1
    })
    .await;
    let sorted: Vec<&str> = by_name.rows.iter().map(|r| r.cells[1].as_str()).collect();
    let mut expected_order = sorted.clone();
    expected_order.sort();
    assert_eq!(sorted, expected_order);
    let text = stable(&screen(&mut app, 100, 30));
    insta::assert_snapshot!(text);

    // `/` text: only rows whose name matches, of every kind that has one.
    let web = by_name
        .rows
        .iter()
        .find(|r| r.cells[0] == "deployment.apps")
        .map(|r| r.cells[1].clone())
        .expect("a deployment");
    app.apply(Action::OpenFilter);
    for c in web.chars() {
        app.apply(Action::FilterChar(c));
    }
    app.apply(Action::FilterAccept);
    // The fuzzy match runs off the UI thread: the typed text is the table's at once, its
    // rows once the match is done.
    let matches = |r: &kscope_index_views::live::Row| {
        kscope_index_views::fuzzy::text_matches(&format!("{namespace}/{}", r.cells[1]), &web)
    };
    let filtered = wait_rows(&mut app, "the text filter's rows", |app, w| {
        app.table().text() == web && w.total > 0 && w.rows.iter().all(matches)
    })
    .await;
    let filtered_kinds: BTreeSet<&str> =
        filtered.rows.iter().map(|r| r.cells[0].as_str()).collect();
    assert!(filtered_kinds.len() >= 2, "{filtered:?}");

    // Enter on a Deployment's row opens its ReplicaSets, as in the deployments' table.
    let at = filtered
        .rows
        .iter()
        .position(|r| r.cells[0] == "deployment.apps")
        .expect("the deployment row");
    app.apply(Action::Top);
    for _ in 0..at {
        app.apply(Action::Down);
    }
    assert_eq!(
        app.table()
            .selected_object()
            .map(|(k, key)| (k, key.to_string())),
        Some((
            ResourceKind::Deployments.into(),
            format!("{namespace}/{web}")
        ))
    );
    // The delta panel follows the selected row's kind: the Deployments' entries.
    let deployments: BTreeSet<String> = by_name
        .rows
        .iter()
        .filter(|r| r.cells[0] == "deployment.apps")
        .map(|r| format!("{namespace}/{}", r.cells[1]))
        .collect();
    let keys: Vec<&str> = app
        .state()
        .deltas
        .lines
        .iter()
        .map(|l| l.key.as_str())
        .filter(|k| !k.is_empty())
        .collect();
    assert!(
        !keys.is_empty() && keys.iter().all(|k| deployments.contains(*k)),
        "{keys:?} {deployments:?}"
    );
    app.apply(Action::DrillDown);
    assert!(app.category().is_none());
    assert_eq!(*app.table().kind(), ResourceKind::ReplicaSets);
    assert_eq!(app.current().filter, format!("owner=Deployment/{web}"));
    wait_rows(&mut app, "its replicasets", |_, w| w.total > 0).await;

    // Esc comes back to the category, its rows there at once from the kinds' running tables.
    app.apply(Action::FilterClear);
    assert_eq!(app.category().map(|c| c.name.as_str()), Some("all"));
    wait_rows(&mut app, "all again", |_, w| w.total > 0).await;

    // `y` on a Service's row: the Service's YAML.
    app.apply(Action::FilterClear);
    let all = wait_rows(&mut app, "all unfiltered", |_, w| w.total == expected.len()).await;
    let at = all
        .rows
        .iter()
        .position(|r| r.cells[0] == "service")
        .expect("a service row");
    app.apply(Action::Top);
    for _ in 0..at {
        app.apply(Action::Down);
    }
    app.apply(Action::OpenDetail);
    assert_eq!(app.state().mode, InputMode::Detail);
    let fetched = tokio::time::timeout(Duration::from_secs(15), app.finish_fetch()).await;
    assert_eq!(fetched, Ok(true));
    let text = screen(&mut app, 120, 30);
    assert!(text.contains("kind: Service"), "{text}");
    drop(app);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_label_filter_goes_through_each_kinds_app_index() {
    let Some(fx) = Kubectl::start_with("tui-all-label", SimConfig::with_size(12, 2, 2)).await
    else {
        return;
    };
    let cluster = Cluster::from_config(fx.sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let mut app = AppStart::pods(cluster).discovered().await.start();
    run_command(&mut app, "all -A");
    // Every kind watching says nothing of the mixed snapshot, rebuilt off the UI thread,
    // which may still lag behind: wait for the Deployment rows too.
    let all = wait_rows(&mut app, "all", |app, w| {
        all_watching(app) && w.rows.iter().any(|r| r.cells[0] == "deployment.apps")
    })
    .await;
    let app_label = kscope_label(&fx, &all).await;
    let expected: BTreeSet<String> = fx
        .ok(&[
            "get",
            "all",
            "-A",
            "-l",
            &format!("app={app_label}"),
            "-o",
            "name",
        ])
        .await
        .lines()
        .map(str::to_owned)
        .collect();
    app.apply(Action::OpenFilter);
    for c in format!("app={app_label}").chars() {
        app.apply(Action::FilterChar(c));
    }
    app.apply(Action::FilterAccept);
    let filtered = wait_rows(&mut app, "the label filter", |_, w| names(w) == expected).await;
    assert!(!filtered.rows.is_empty());
    assert_eq!(
        app.table().applied().to_string(),
        format!("app={app_label}")
    );

    // `:index` on the category's table: added to each kind's store and backfilled at once.
    run_command(&mut app, "index team label=team");
    let said = app.state().command.error.clone().unwrap_or_default();
    assert!(
        said.starts_with(":index team added to the kinds of all and backfilled"),
        "{said}"
    );
    assert!(app.table().index_names().contains(&"team".to_string()));
    assert!(!app.table().value_counts("team").is_empty());
    drop(app);
}

/// An `app` label some Deployment of the sim has, as kubectl reads it.
async fn kscope_label(fx: &Kubectl, all: &Window) -> String {
    let deployment = all
        .rows
        .iter()
        .find(|r| r.cells[0] == "deployment.apps")
        .expect("a deployment");
    let namespace = &deployment.cells[4];
    let label = fx
        .ok(&[
            "get",
            "deployment",
            &deployment.cells[1],
            "-n",
            namespace,
            "-o",
            "jsonpath={.metadata.labels.app}",
        ])
        .await;
    assert!(!label.is_empty(), "the deployment has an app label");
    label
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kind_refused_403_is_said_in_the_table_while_the_others_list() {
    let mut config = SimConfig::with_size(12, 2, 2);
    config.faults = Faults {
        forbidden: vec!["deployments".into()],
        ..Faults::default()
    };
    let sim = Sim::start(config).await.expect("sim");
    let cluster = Cluster::from_config(sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let mut app = AppStart::pods(cluster).discovered().await.start();
    run_command(&mut app, "all -A");
    let window = wait_rows(&mut app, "the refusal, and the others' rows", |app, w| {
        let error = app.header().error.as_deref().unwrap_or("");
        error.contains("deployments refused (403")
            && w.rows.iter().any(|r| r.cells[0] == "pod")
            && w.rows.iter().any(|r| r.cells[0] == "replicaset.apps")
    })
    .await;
    assert!(window.rows.iter().all(|r| r.cells[0] != "deployment.apps"));
    // The refused kind neither holds the table back (listed) nor marks it stale.
    wait_rows(&mut app, "the rest watching", |app, _| {
        app.header().listed && app.header().stale_since.is_none()
    })
    .await;
    let text = screen(&mut app, 200, 10);
    assert!(text.contains("deployments refused (403"), "{text}");
    drop(app);
    sim.shutdown().await;
}

/// A CRD of the category deleted while its table is open: its rows leave the table, the
/// header says it is gone, its informer stops, and the other kinds go on listing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kind_whose_crd_is_deleted_leaves_the_table_and_is_said_gone() {
    let Some(fx) = Kubectl::start_with("tui-all-gone", SimConfig::with_size(12, 2, 2)).await else {
        return;
    };
    let cluster = Cluster::from_config(fx.sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    // A catalog that follows CRDs, as the TUI's does.
    let (catalog, _watch, error) = Catalog::keep_current(&cluster).await;
    assert!(error.is_none(), "{error:?}");
    let mut app = AppStart::pods(cluster).catalog(catalog).start();
    run_command(&mut app, "all -A");
    let widget = "widget.example.com";
    wait_rows(&mut app, "widgets among the rows", |app, w| {
        all_watching(app) && w.rows.iter().any(|r| r.cells[0] == widget)
    })
    .await;
    fx.ok(&["delete", "crd", "widgets.example.com"]).await;
    let window = wait_rows(&mut app, "the widgets gone", |app, w| {
        let error = app.header().error.as_deref().unwrap_or("");
        error.contains("widgets.example.com gone") && w.rows.iter().all(|r| r.cells[0] != widget)
    })
    .await;
    assert!(
        window.rows.iter().any(|r| r.cells[0] == "pod"),
        "{window:?}"
    );
    // The others still watch, and the table is not stale for the gone kind's sake.
    wait_rows(&mut app, "the rest watching", |app, _| {
        app.header().listed && app.header().stale_since.is_none()
    })
    .await;
    let text = screen(&mut app, 220, 10);
    assert!(text.contains("gone: no longer served"), "{text}");
}
