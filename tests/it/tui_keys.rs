//! The keymap: every key of the main screen, the filter bar, the command bar and the help
//! overlay maps to the action its help line promises; commands parse; Enter drills down.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use kscope_client::cluster::{Cluster, NamespaceScope};
use kscope_client::discovery::Discovery;
use kscope_config::keys::Section;
use kscope_index_views::columns::POD_COLUMNS;
use kscope_index_views::definitions::{
    self, IndexDefinition, IndexField, IndexSource, default_index_definitions,
};
use kscope_index_views::live::{SortSpec, Window};
use kscope_index_views::query::Query;
use kscope_resources::{ApiResource, ResourceKind};
use kscope_sim::{FaultSpec, Faults, Sim, SimConfig};
use kscope_ui::action::{Action, InputMode};
use kscope_ui::app::App;
use kscope_ui::command::{self, Command, CommandError};
use kscope_ui::effect::Follow;
use kscope_ui::nav::{self, ViewSpec};
use kscope_ui::state::UiState;
use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::common::tui::{AppStart, wait_rows};

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// What `key` asks for in `mode`, with the table focused and the built-in keys.
fn map_key(mode: InputMode, key: KeyEvent) -> Option<Action> {
    let mut state = UiState::new(true);
    state.mode = mode;
    kscope_ui::keymap::map_key(&state.keymap, state.mode, state.focus, key)
}

#[test]
fn main_screen_keys() {
    let normal = |code| map_key(InputMode::Normal, key(code));
    for (code, action) in [
        (KeyCode::Char('j'), Action::Down),
        (KeyCode::Down, Action::Down),
        (KeyCode::Char('k'), Action::Up),
        (KeyCode::Up, Action::Up),
        (KeyCode::Char('g'), Action::Top),
        (KeyCode::Char('G'), Action::Bottom),
        (KeyCode::PageUp, Action::PageUp),
        (KeyCode::PageDown, Action::PageDown),
        (KeyCode::Char('s'), Action::SortNext),
        (KeyCode::Char('S'), Action::SortBy("STATUS")),
        (KeyCode::Char('-'), Action::SortReverse),
        (KeyCode::Char('/'), Action::OpenFilter),
        (KeyCode::Esc, Action::FilterClear),
        (KeyCode::Char('t'), Action::TogglePanels),
        (KeyCode::Tab, Action::FocusNext),
        (KeyCode::Char(' '), Action::TogglePause),
        (KeyCode::Char('?'), Action::ToggleHelp),
        (KeyCode::Char('q'), Action::Quit),
        (KeyCode::Char('i'), Action::ToggleIndexes),
        (KeyCode::Char('x'), Action::OpenTree),
        (KeyCode::Char('H'), Action::OpenHot),
    ] {
        assert_eq!(normal(code), Some(action), "{code:?}");
    }
    assert_eq!(normal(KeyCode::Char('v')), None);
}

#[test]
fn filter_bar_keys_type_text() {
    let filter = |code| map_key(InputMode::Filter, key(code));
    assert_eq!(filter(KeyCode::Char('j')), Some(Action::FilterChar('j')));
    assert_eq!(filter(KeyCode::Char('/')), Some(Action::FilterChar('/')));
    assert_eq!(filter(KeyCode::Backspace), Some(Action::FilterBackspace));
    assert_eq!(filter(KeyCode::Enter), Some(Action::FilterAccept));
    assert_eq!(filter(KeyCode::Esc), Some(Action::FilterClear));
    assert_eq!(filter(KeyCode::Left), Some(Action::LineLeft));
    assert_eq!(filter(KeyCode::Home), Some(Action::LineStart));
    assert_eq!(filter(KeyCode::Up), Some(Action::LineHistoryPrevious));
    let ctrl = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
    assert_eq!(
        map_key(InputMode::Filter, ctrl('w')),
        Some(Action::LineDeleteWord)
    );
    assert_eq!(
        map_key(InputMode::Command, ctrl('u')),
        Some(Action::LineDeleteToStart)
    );
    assert_eq!(
        map_key(InputMode::Command, key(KeyCode::Down)),
        Some(Action::LineHistoryNext)
    );
}

/// Keys typed into the filter bar edit at the cursor, and Up brings back the filter
/// accepted before: what a shell user expects of a line.
#[test]
fn the_filter_bar_edits_at_the_cursor_and_keeps_its_lines() {
    use kscope_ui::effect::Effect;
    let mut bar = kscope_ui::state::FilterBar::default();
    for c in "app=wb".chars() {
        bar.handle_key(&Action::FilterChar(c));
    }
    assert_eq!(bar.handle_key(&Action::LineLeft), None);
    assert_eq!(
        bar.handle_key(&Action::FilterChar('e')),
        Some(Effect::Refilter)
    );
    assert_eq!(bar.input, "app=web");
    assert_eq!(bar.handle_key(&Action::FilterAccept), Some(Effect::Close));
    bar.input.clear();
    assert_eq!(
        bar.handle_key(&Action::LineHistoryPrevious),
        Some(Effect::Refilter)
    );
    assert_eq!(bar.input, "app=web");
    assert_eq!(
        bar.handle_key(&Action::LineDeleteWord),
        Some(Effect::Refilter)
    );
    assert_eq!(bar.input, "");
}

#[test]
fn help_closes_and_ctrl_c_always_quits() {
    assert_eq!(
        map_key(InputMode::Help, key(KeyCode::Esc)),
        Some(Action::ToggleHelp)
    );
    assert_eq!(
        map_key(InputMode::Help, key(KeyCode::Char('j'))),
        Some(Action::Down),
        "j scrolls a help taller than the screen"
    );
    assert_eq!(map_key(InputMode::Help, key(KeyCode::Char('x'))), None);
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    for mode in [InputMode::Normal, InputMode::Filter, InputMode::Help] {
        assert_eq!(map_key(mode, ctrl_c), Some(Action::Quit));
    }
}

#[test]
fn index_browser_keys() {
    let browser = |code| map_key(InputMode::Indexes, key(code));
    assert_eq!(browser(KeyCode::Char('j')), Some(Action::Down));
    assert_eq!(browser(KeyCode::Right), Some(Action::NextIndex));
    assert_eq!(browser(KeyCode::Char('h')), Some(Action::PrevIndex));
    assert_eq!(browser(KeyCode::Enter), Some(Action::ChooseValue));
    assert_eq!(browser(KeyCode::Esc), Some(Action::ToggleIndexes));
}

#[test]
fn command_drill_down_and_wide_keys() {
    let normal = |code| map_key(InputMode::Normal, key(code));
    assert_eq!(normal(KeyCode::Char(':')), Some(Action::OpenCommand));
    assert_eq!(normal(KeyCode::Char('w')), Some(Action::ToggleWide));
    assert_eq!(normal(KeyCode::Enter), Some(Action::DrillDown));
    let command = |code| map_key(InputMode::Command, key(code));
    assert_eq!(command(KeyCode::Char('q')), Some(Action::CommandChar('q')));
    assert_eq!(command(KeyCode::Char(':')), Some(Action::CommandChar(':')));
    assert_eq!(command(KeyCode::Backspace), Some(Action::CommandBackspace));
    assert_eq!(command(KeyCode::Tab), Some(Action::CommandComplete));
    assert_eq!(command(KeyCode::Enter), Some(Action::CommandRun));
    assert_eq!(command(KeyCode::Esc), Some(Action::CommandCancel));
    let help = UiState::new(true).keymap.help(Section::Normal);
    for listed in [":", "w", "enter", "esc"] {
        assert!(
            help.iter()
                .any(|(keys, _)| keys.split(' ').any(|k| k == listed)),
            "{listed} in {help:?}"
        );
    }
}

#[test]
fn commands_parse_with_aliases_and_scopes() {
    let show = |kind: ResourceKind, scope| {
        Ok(Command::Show {
            kind: kind.into(),
            scope,
        })
    };
    let one = |ns: &str| Some(NamespaceScope::One(ns.into()));
    for (input, want) in [
        ("pods", show(ResourceKind::Pods, None)),
        ("po", show(ResourceKind::Pods, None)),
        ("  PODS  ", show(ResourceKind::Pods, None)),
        ("no", show(ResourceKind::Nodes, None)),
        ("nodes", show(ResourceKind::Nodes, None)),
        ("deploy", show(ResourceKind::Deployments, None)),
        ("deployments", show(ResourceKind::Deployments, None)),
        (
            "dp -A",
            show(ResourceKind::Deployments, Some(NamespaceScope::All)),
        ),
        ("rs", show(ResourceKind::ReplicaSets, None)),
        (
            "replicasets -n web",
            show(ResourceKind::ReplicaSets, one("web")),
        ),
        ("ns", show(ResourceKind::Namespaces, None)),
        ("namespaces", show(ResourceKind::Namespaces, None)),
        ("pods -n web", show(ResourceKind::Pods, one("web"))),
        ("pods -nweb", show(ResourceKind::Pods, one("web"))),
        (
            "pods --namespace=kube-system",
            show(ResourceKind::Pods, one("kube-system")),
        ),
        (
            "pods --all-namespaces",
            show(ResourceKind::Pods, Some(NamespaceScope::All)),
        ),
        (
            "pods -A -A",
            show(ResourceKind::Pods, Some(NamespaceScope::All)),
        ),
        ("sec", show(ResourceKind::Secrets, None)),
        ("q", Ok(Command::Quit)),
        ("quit", Ok(Command::Quit)),
    ] {
        assert_eq!(
            command::parse(input, &Discovery::default()),
            want,
            "{input:?}"
        );
    }
    for (input, want) in [
        ("", CommandError::Empty),
        ("configmaps", CommandError::Unknown("configmaps".into())),
        ("pods -n", CommandError::MissingNamespace("-n".into())),
        ("nodes -n foo", CommandError::ClusterScoped("nodes".into())),
        (
            "ns -n foo",
            CommandError::ClusterScoped("namespaces".into()),
        ),
        ("pods -x", CommandError::UnknownFlag("-x".into())),
        ("pods -n Web_1", CommandError::BadNamespace("Web_1".into())),
        ("pods -n web -A", CommandError::ConflictingScope),
        ("pods web", CommandError::UnexpectedArgument("web".into())),
        ("q now", CommandError::NoArguments("q".into())),
    ] {
        assert_eq!(
            command::parse(input, &Discovery::default()),
            Err(want),
            "{input:?}"
        );
    }
}

#[test]
fn command_hints_and_completion() {
    assert!(command::hint("", &Discovery::default()).starts_with(
        "pods nodes deploy rs ns secrets ctx nsset fifo index metrics tree hot timeline record quit"
    ));
    assert_eq!(
        command::hint("n", &Discovery::default()),
        "nodes no node namespaces ns namespace nsset"
    );
    assert_eq!(
        command::hint("no", &Discovery::default()),
        "Enter shows nodes"
    );
    assert!(command::hint("po -n", &Discovery::default()).contains("needs a namespace"));
    assert!(command::hint("x", &Discovery::default()).contains("no command starts with \"x\""));
    assert_eq!(
        command::complete("dep", &Discovery::default()),
        Some("deployments ".into())
    );
    assert_eq!(
        command::complete("rep", &Discovery::default()),
        Some("replicasets ".into())
    );
    // `re` could be replicasets or record: no guess.
    assert_eq!(command::complete("re", &Discovery::default()), None);
    assert_eq!(
        command::complete("rec", &Discovery::default()),
        Some("record ".into())
    );
    assert_eq!(command::complete("n", &Discovery::default()), None);
    assert_eq!(command::complete("pods ", &Discovery::default()), None);
}

#[test]
fn enter_drills_down_from_each_kind() {
    let indexes = default_index_definitions();
    let from = |kind| ViewSpec::new(kind, NamespaceScope::All);
    let none = Discovery::default();
    let drill = |kind, key: &str| nav::drill_down(&from(kind), key, &indexes, &none).unwrap();
    assert_eq!(
        drill(ResourceKind::Namespaces, "web"),
        Some(ViewSpec::new(
            ResourceKind::Pods,
            NamespaceScope::One("web".into())
        ))
    );
    assert_eq!(
        drill(ResourceKind::Nodes, "node-1"),
        Some(ViewSpec {
            kind: ResourceKind::Pods.into(),
            scope: NamespaceScope::All,
            filter: "node=node-1".into(),
        })
    );
    assert_eq!(
        drill(ResourceKind::Deployments, "shop/web"),
        Some(ViewSpec {
            kind: ResourceKind::ReplicaSets.into(),
            scope: NamespaceScope::One("shop".into()),
            filter: "owner=Deployment/web".into(),
        })
    );
    assert_eq!(
        drill(ResourceKind::ReplicaSets, "shop/web-5d8f7"),
        Some(ViewSpec {
            kind: ResourceKind::Pods.into(),
            scope: NamespaceScope::One("shop".into()),
            filter: "owner=ReplicaSet/web-5d8f7".into(),
        })
    );
    // Enter on a pod belongs to the detail view.
    assert_eq!(drill(ResourceKind::Pods, "shop/web-5d8f7-x"), None);
    // The owner filter uses whichever index reads the owner field.
    let renamed: Vec<IndexDefinition> = indexes
        .iter()
        .map(|d| match d.source {
            IndexSource::Field(IndexField::Owner) => IndexDefinition::new("ctl", d.source.clone()),
            _ => d.clone(),
        })
        .collect();
    let rs = nav::drill_down(
        &from(ResourceKind::Deployments),
        "shop/web",
        &renamed,
        &none,
    );
    assert_eq!(rs.unwrap().unwrap().filter, "ctl=Deployment/web");
    let without: Vec<IndexDefinition> = indexes
        .iter()
        .filter(|d| d.source != IndexSource::Field(IndexField::Node))
        .cloned()
        .collect();
    let err = nav::drill_down(&from(ResourceKind::Nodes), "node-1", &without, &none).unwrap_err();
    assert!(err.to_string().contains("node field"), "{err}");

    // Discovered workloads: their controller owns pods, a CronJob's owns Jobs.
    let api = |group: &str, plural: &str, kind: &str| {
        Arc::new(ApiResource::new(
            group,
            "v1",
            plural,
            kind.to_lowercase(),
            kind,
            true,
            Vec::new(),
            Vec::new(),
            vec!["list".into(), "watch".into()],
        ))
    };
    let discovery = Discovery::from_resources(vec![
        api("apps", "statefulsets", "StatefulSet"),
        api("apps", "daemonsets", "DaemonSet"),
        api("batch", "jobs", "Job"),
        api("batch", "cronjobs", "CronJob"),
        api("example.com", "widgets", "Widget"),
    ]);
    let discovered = |plural: &str| {
        let kind = discovery.resolve(plural).expect("discovered");
        nav::drill_down(
            &ViewSpec::new(kind, NamespaceScope::All),
            "shop/web",
            &indexes,
            &discovery,
        )
        .unwrap()
    };
    for (plural, owner) in [
        ("statefulsets.apps", "StatefulSet"),
        ("daemonsets.apps", "DaemonSet"),
        ("jobs.batch", "Job"),
    ] {
        assert_eq!(
            discovered(plural),
            Some(ViewSpec {
                kind: ResourceKind::Pods.into(),
                scope: NamespaceScope::One("shop".into()),
                filter: format!("owner={owner}/web"),
            }),
            "{plural}"
        );
    }
    assert_eq!(
        discovered("cronjobs.batch"),
        Some(ViewSpec {
            kind: discovery.resolve("jobs.batch").unwrap(),
            scope: NamespaceScope::One("shop".into()),
            filter: "owner=CronJob/web".into(),
        })
    );
    // A custom resource owns nothing kscope can name: Enter shows its detail.
    assert_eq!(discovered("widgets"), None);
}

#[test]
fn each_kind_gets_the_indexes_that_apply_to_it() {
    let mut indexes = default_index_definitions();
    indexes.push(IndexDefinition::new(
        "owner-email",
        IndexSource::Annotation("example.com/owner".into()),
    ));
    let names = |kind: ResourceKind| -> Vec<String> {
        definitions::indexes_for(&kind.into(), &indexes, &Discovery::built_ins())
            .into_iter()
            .map(|d| d.name)
            .collect()
    };
    assert_eq!(
        names(ResourceKind::Pods),
        [
            "namespace",
            "node",
            "phase",
            "status",
            "owner",
            "app",
            "owner-email"
        ]
    );
    assert_eq!(names(ResourceKind::Nodes), ["node", "status", "app"]);
    assert_eq!(names(ResourceKind::Namespaces), ["phase", "app"]);
    assert_eq!(
        names(ResourceKind::Deployments),
        ["namespace", "owner", "app"]
    );
    assert_eq!(
        names(ResourceKind::ReplicaSets),
        ["namespace", "owner", "app"]
    );
}

/// Types `:command` and Enter; returns what Enter asks the event loop to follow.
pub(crate) fn run_command(app: &mut App, command: &str) -> Vec<Follow> {
    app.apply(Action::OpenCommand);
    for c in command.chars() {
        app.apply(Action::CommandChar(c));
    }
    app.apply(Action::CommandRun)
}

/// Waits (at most 60 s) until the table's informer has its initial state.
async fn wait_listed(app: &mut App, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !app.table().status().borrow().listed {
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what} to be listed: {:?}",
            app.header()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_drill_down_and_back_on_a_simulated_cluster() {
    let sim = Sim::start(SimConfig::with_size(200, 4, 3))
        .await
        .expect("sim");
    let cluster = Cluster::from_config(sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let pods = ViewSpec::new(ResourceKind::Pods, NamespaceScope::All);
    let mut app = AppStart::new(cluster, pods.clone()).start();
    wait_rows(&mut app, "pods", |_, w| w.total > 0).await;
    // With the watch-list (the default) rows show while the state streams: wait for its
    // end, so that the parked table below is known to have been synced before it parked.
    wait_listed(&mut app, "pods").await;

    // s cycles through the columns on screen in screen order: NAMESPACE, wide ones in
    // wide mode, and index columns included.
    let columns = app.table().columns();
    let cycle = |app: &mut App, presses| -> Vec<String> {
        (0..presses)
            .map(|_| {
                app.apply(Action::SortNext);
                columns[app.state().table.sort.column].name.clone()
            })
            .collect()
    };
    let sorted = cycle(&mut app, 7);
    assert_eq!(
        sorted,
        [
            "READY",
            "STATUS",
            "RESTARTS",
            "AGE",
            "APP",
            "NAMESPACE",
            "NAME"
        ]
    );
    app.apply(Action::ToggleWide);
    let sorted = cycle(&mut app, 11);
    assert_eq!(
        sorted,
        [
            "READY",
            "STATUS",
            "RESTARTS",
            "AGE",
            "IP",
            "NODE",
            "NOMINATED NODE",
            "READINESS GATES",
            "APP",
            "NAMESPACE",
            "NAME"
        ]
    );
    app.apply(Action::ToggleWide);

    // An unknown command and a bad flag change nothing but say why.
    run_command(&mut app, "configmaps");
    assert!(
        app.state()
            .command
            .error
            .as_deref()
            .is_some_and(|e| e.contains("unknown command")),
        "{:?}",
        app.state().command
    );
    run_command(&mut app, "pods -x");
    assert!(
        app.state()
            .command
            .error
            .as_deref()
            .is_some_and(|e| e.contains("-x"))
    );
    assert_eq!(app.current(), pods);
    assert!(app.history().is_empty());

    // A typed filter comes back with its view; then Esc clears it (the view has none).
    app.apply(Action::OpenFilter);
    for c in "phase=Running".chars() {
        app.apply(Action::FilterChar(c));
    }
    app.apply(Action::FilterAccept);
    run_command(&mut app, "rs");
    assert_eq!(*app.table().kind(), ResourceKind::ReplicaSets);
    assert_eq!(app.current().filter, "");
    app.apply(Action::FilterClear);
    assert_eq!(app.current().filter, "phase=Running");
    assert!(app.history().is_empty());
    app.apply(Action::FilterClear);
    assert_eq!(app.current(), pods);

    // :nodes, Enter on a node: that node's pods in every namespace, by the node index.
    // Sorted by READY: a parked table keeps its order.
    app.apply(Action::SortNext);
    let sorted = app.state().table.sort;
    assert_eq!(sorted.column, 1);
    run_command(&mut app, "no");
    assert_eq!(app.state().table.sort, SortSpec::default(), "a new table");
    assert_eq!(*app.table().kind(), ResourceKind::Nodes);
    assert_eq!(app.header().scope, "cluster");
    let nodes = wait_rows(&mut app, "nodes", |_, w| w.total == 4).await;
    // The delta panel shows the nodes informer's tap, none of the pods'.
    assert!(
        app.state()
            .deltas
            .lines
            .iter()
            .all(|d| !d.key.contains('/')),
        "{:?}",
        app.state()
            .deltas
            .lines
            .iter()
            .map(|d| &d.key)
            .collect::<Vec<_>>()
    );
    app.apply(Action::Down);
    let node = app.table().selected().expect("a selected node");
    assert_eq!(node, nodes.rows[1].key);
    app.apply(Action::DrillDown);
    // The pods table was parked, not stopped: its rows show at once, with no new list, in
    // the order it had.
    assert!(app.table().status().borrow().listed);
    assert!(app.window(50).total > 0, "rows without waiting for a list");
    assert_eq!(app.state().table.sort, sorted);
    assert_eq!(app.table().sort(), sorted);
    assert_eq!(
        app.current(),
        ViewSpec {
            kind: ResourceKind::Pods.into(),
            scope: NamespaceScope::All,
            filter: format!("node={node}"),
        }
    );
    let on_node = wait_rows(&mut app, "the node's pods", |_, w| w.total > 0).await;
    let node_column = POD_COLUMNS
        .iter()
        .position(|c| c.name == "NODE")
        .expect("NODE");
    assert!(on_node.rows.iter().all(|r| r.cells[node_column] == *node));
    // Enter on a pod opens its detail over the table; Esc closes it.
    app.apply(Action::DrillDown);
    assert_eq!(*app.table().kind(), ResourceKind::Pods);
    assert_eq!(app.state().mode, InputMode::Detail);
    app.apply(Action::Back);
    assert_eq!(app.state().mode, InputMode::Normal);

    // Esc: the node filter is the view's own, so Esc goes back, to the same node.
    app.apply(Action::FilterClear);
    assert_eq!(*app.table().kind(), ResourceKind::Nodes);
    assert!(app.history().len() == 1, "{:?}", app.history());
    wait_rows(&mut app, "the node selected again", |_, w| {
        w.selected
            .is_some_and(|at| w.rows.get(at).is_some_and(|r| r.key == node))
    })
    .await;

    // A namespace's pods; a typed filter is cleared by the first Esc, the second goes back.
    run_command(&mut app, "ns");
    let namespaces = wait_rows(&mut app, "namespaces", |_, w| w.total >= 3).await;
    let namespace = namespaces.rows[0].key.to_string();
    app.apply(Action::DrillDown);
    assert_eq!(
        app.current(),
        ViewSpec::new(ResourceKind::Pods, NamespaceScope::One(namespace.clone()))
    );
    assert_eq!(app.header().scope, format!("namespace {namespace}"));
    let in_namespace = wait_rows(&mut app, "the namespace's pods", |_, w| w.total > 0).await;
    let prefix = format!("{namespace}/");
    assert!(in_namespace.rows.iter().all(|r| r.key.starts_with(&prefix)));
    app.apply(Action::OpenFilter);
    app.apply(Action::FilterChar('x'));
    app.apply(Action::FilterAccept);
    app.apply(Action::FilterClear);
    assert_eq!(app.current().filter, "");
    assert_eq!(*app.table().kind(), ResourceKind::Pods);
    app.apply(Action::FilterClear);
    assert_eq!(*app.table().kind(), ResourceKind::Namespaces);

    // Deployments in every namespace → a deployment's replicasets → a replicaset's pods.
    run_command(&mut app, "dp -A");
    assert_eq!(app.header().scope, kscope_ui::ALL_NAMESPACES);
    let deployments = wait_rows(&mut app, "deployments", |_, w| w.total > 0).await;
    let (ns, deployment) = deployments.rows[0].key.split_once('/').expect("namespaced");
    let (ns, deployment) = (ns.to_string(), deployment.to_string());
    app.apply(Action::DrillDown);
    assert_eq!(
        app.current(),
        ViewSpec {
            kind: ResourceKind::ReplicaSets.into(),
            scope: NamespaceScope::One(ns.clone()),
            filter: format!("owner=Deployment/{deployment}"),
        }
    );
    let replicasets = wait_rows(&mut app, "the deployment's replicasets", |_, w| w.total > 0).await;
    let replicaset = replicasets.rows[0]
        .key
        .split_once('/')
        .expect("namespaced")
        .1
        .to_string();
    app.apply(Action::DrillDown);
    assert_eq!(
        app.current().filter,
        format!("owner=ReplicaSet/{replicaset}")
    );
    let owned = wait_rows(&mut app, "the replicaset's pods", |_, w| w.total > 0).await;
    assert!(
        owned
            .rows
            .iter()
            .all(|r| r.key.starts_with(&format!("{ns}/{replicaset}-")))
    );
    assert_eq!(app.history().len(), 5, "{:?}", app.history());

    // A command with no flag keeps the scope; :q quits.
    run_command(&mut app, "deploy");
    assert_eq!(app.current().scope, NamespaceScope::One(ns));
    assert_eq!(run_command(&mut app, "q"), [Follow::Quit]);
    drop(app);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_resource_shows_its_error_and_commands_still_work() {
    let sim = Sim::start(SimConfig::with_size(10, 2, 1))
        .await
        .expect("sim");
    let yaml = sim
        .kubeconfig_yaml()
        .replace(sim.token(), "not-the-token-0123456789");
    let kubeconfig = Kubeconfig::from_yaml(&yaml).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("config");
    let cluster = Cluster::from_config(config, "sim".into()).expect("cluster");
    let pods = ViewSpec::new(ResourceKind::Pods, NamespaceScope::All);
    let mut app = AppStart::new(cluster, pods).start();
    let deadline = Instant::now() + Duration::from_secs(30);
    while app.header().error.is_none() {
        assert!(
            Instant::now() < deadline,
            "no error shown: {:?}",
            app.header()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
        let status = app.table().status().borrow().clone();
        app.update_sync(&status);
    }
    let error = app.header().error.clone().unwrap_or_default();
    assert!(error.contains("unauthorized"), "{error}");
    assert_eq!(app.window(10).total, 0);
    run_command(&mut app, "nodes");
    assert_eq!(*app.table().kind(), ResourceKind::Nodes);
    assert_eq!(app.header().error, None);
    drop(app);
    sim.shutdown().await;
}

/// A resource RBAC refuses (403) shows "forbidden" and no rows, and the others still load.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forbidden_resource_shows_its_error_and_others_still_work() {
    let mut faults = Faults::default();
    faults.apply(&"forbid=nodes".parse::<FaultSpec>().expect("fault parses"));
    let sim = Sim::start(SimConfig::with_size(10, 2, 1).faults(faults))
        .await
        .expect("sim");
    let cluster = Cluster::from_config(sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let pods = ViewSpec::new(ResourceKind::Pods, NamespaceScope::All);
    let mut app = AppStart::new(cluster, pods).start();
    wait_rows(&mut app, "pods", |_, w| w.total == 10).await;
    run_command(&mut app, "nodes");
    assert_eq!(*app.table().kind(), ResourceKind::Nodes);
    let deadline = Instant::now() + Duration::from_secs(30);
    while app.header().error.is_none() {
        assert!(Instant::now() < deadline, "no error: {:?}", app.header());
        tokio::time::sleep(Duration::from_millis(20)).await;
        let status = app.table().status().borrow().clone();
        app.update_sync(&status);
    }
    let error = app.header().error.clone().unwrap_or_default();
    assert!(error.contains("forbidden"), "{error}");
    assert!(error.contains(r#"cannot list resource "nodes""#), "{error}");
    assert_eq!(app.window(10).total, 0);
    run_command(&mut app, "pods");
    assert_eq!(*app.table().kind(), ResourceKind::Pods);
    wait_rows(&mut app, "pods again", |_, w| w.total == 10).await;
    assert_eq!(app.header().error, None);
    drop(app);
    sim.shutdown().await;
}

/// A half-typed or unusable filter (`phase=Running,app=`, an unknown index) changes nothing
/// on screen but the error: the rows stay those of the filter last applied, and the header
/// names that filter, not what is typed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_header_names_the_filter_the_rows_match_while_the_typed_one_fails() {
    let sim = Sim::start(SimConfig::with_size(30, 3, 2))
        .await
        .expect("sim");
    let cluster = Cluster::from_config(sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let mut app = AppStart::pods(cluster).start();
    wait_rows(&mut app, "pods", |_, w| w.total == 30).await;
    let mut terminal =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 20)).expect("terminal");
    app.apply(Action::OpenFilter);
    let mut errors = Vec::new();
    let keys = "phase=Running,app="
        .chars()
        .map(Action::FilterChar)
        .chain(std::iter::repeat_n(Action::FilterBackspace, 5))
        .chain(",team=x".chars().map(Action::FilterChar));
    for key in keys {
        let before = app.table().applied().to_string();
        app.apply(key);
        let Some(error) = app.state().filter.error.clone() else {
            // Free text narrows off the UI thread: wait for its pass to be in.
            let typed = Query::parse(&app.state().filter.input).expect("parses");
            let deadline = Instant::now() + Duration::from_secs(30);
            while app.table().applied() != typed {
                assert!(Instant::now() < deadline, "{typed:?} never applied");
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            continue;
        };
        assert_eq!(
            app.table().applied().to_string(),
            before,
            "a failing key changes nothing"
        );
        app.draw(&mut terminal).expect("draws");
        let screen = terminal.backend().to_string();
        assert!(
            screen.contains(&format!("{} rows matching {before}", app.rows())),
            "{screen}"
        );
        errors.push(error);
    }
    assert!(
        errors.iter().any(|e| e.contains("expected a value")),
        "{errors:?}"
    );
    assert!(
        errors.last().is_some_and(|e| e.contains("unknown index")),
        "{errors:?}"
    );
    drop(app);
    sim.shutdown().await;
}

/// Waits until the header satisfies `ok`, keeping it current with the informer's status.
async fn wait_header(app: &mut App, what: &str, ok: impl Fn(&kscope_ui::draw::Header) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let status = app.table().status().borrow().clone();
        app.update_sync(&status);
        if ok(app.header()) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {:?}",
            app.header()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Pods listed, then the server fails every request: the watch ends, the relists fail, and
/// the table is marked stale (its rows kept but dimmed, the header saying since when and
/// why) until the server answers again and the informer watches.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_that_stops_watching_is_marked_stale_until_it_recovers() {
    // Watches end every 1.5 s (each watch takes the faults in force when it starts; one
    // under a second is "very short", an error itself), so the failing server below is
    // met at the next reconnect.
    let mut dropping = Faults::default();
    dropping.apply(
        &"drop-watch=1500ms"
            .parse::<FaultSpec>()
            .expect("fault parses"),
    );
    let sim = Sim::start(SimConfig::with_size(12, 2, 1).faults(dropping.clone()))
        .await
        .expect("sim");
    let cluster = Cluster::from_config(sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let mut app = AppStart::pods(cluster).start();
    wait_rows(&mut app, "pods", |_, w| w.total == 12).await;
    wait_header(&mut app, "watching", |h| {
        h.stale_since.is_none() && h.sync.starts_with("watching")
    })
    .await;

    let mut failing = dropping;
    failing.apply(&"error-500=1".parse::<FaultSpec>().expect("fault parses"));
    sim.set_faults(failing);
    wait_header(&mut app, "stale", |h| {
        h.stale_since.is_some() && h.error.is_some()
    })
    .await;
    let mut terminal =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 20)).expect("terminal");
    app.draw(&mut terminal).expect("draws");
    let screen = terminal.backend().to_string();
    assert!(screen.contains("STALE"), "{screen}");
    assert!(
        screen.contains("12 rows"),
        "the last rows are kept: {screen}"
    );
    assert!(
        sim.faults_fired().internal_errors > 0,
        "the 500s were served: {:?}",
        app.header()
    );

    sim.set_faults(Faults::default());
    wait_header(&mut app, "watching again", |h| {
        h.stale_since.is_none() && h.sync.starts_with("watching")
    })
    .await;
    app.draw(&mut terminal).expect("draws");
    let screen = terminal.backend().to_string();
    assert!(!screen.contains("STALE"), "{screen}");
    drop(app);
    sim.shutdown().await;
}

/// `:sec` lists the sim's Secrets with kubectl's columns; a Secret has nothing to drill into,
/// so Enter opens its detail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_open_by_command_and_enter_shows_their_detail() {
    let sim = Sim::start(SimConfig::with_size(20, 2, 2))
        .await
        .expect("sim");
    let cluster = Cluster::from_config(sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let pods = ViewSpec::new(ResourceKind::Pods, NamespaceScope::All);
    let mut app = AppStart::new(cluster, pods).start();
    wait_rows(&mut app, "pods", |_, w| w.total > 0).await;
    run_command(&mut app, "sec");
    assert_eq!(*app.table().kind(), ResourceKind::Secrets);
    // A token in each of 6 namespaces; credentials, TLS and registry in the 2 app ones.
    let window = wait_rows(&mut app, "secrets", |_, w| w.total == 12).await;
    let names: Vec<String> = app
        .table()
        .columns()
        .iter()
        .map(|c| c.name.clone())
        .collect();
    assert_eq!(names[..4], ["NAME", "TYPE", "DATA", "AGE"]);
    let tls = window
        .rows
        .iter()
        .find(|r| r.cells[1] == "kubernetes.io/tls")
        .expect("a TLS Secret");
    assert_eq!(tls.cells[2], "2");
    assert_eq!(
        nav::drill_down(
            &app.current(),
            &window.rows[0].key,
            &[],
            &Discovery::default()
        ),
        Ok(None)
    );
    app.apply(Action::DrillDown);
    assert_eq!(app.state().mode, InputMode::Detail);
    drop(app);
    sim.shutdown().await;
}

/// Keys through the real event loop (`App::run` over a TestBackend): `:no` Enter makes the
/// loop follow the new table, so its frames show the nodes; `q` then ends it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_loop_switches_tables_and_quits_on_keys() {
    use crossterm::event::Event;
    use futures::channel::mpsc::UnboundedSender;
    use kscope_ui::app::Observer;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    /// Types `q` once a frame shows the three nodes; ends the loop itself past a deadline.
    struct QuitOnNodes {
        keys: UnboundedSender<std::io::Result<Event>>,
        nodes_shown: bool,
        deadline: Instant,
    }
    impl Observer for QuitOnNodes {
        fn drawn(&mut self, app: &App) -> bool {
            if !self.nodes_shown && app.header().resource == "nodes" && app.rows() == 3 {
                self.nodes_shown = true;
                let q = Event::Key(key(KeyCode::Char('q')));
                self.keys.unbounded_send(Ok(q)).expect("the loop listens");
            }
            Instant::now() < self.deadline
        }
    }

    let sim = Sim::start(SimConfig::with_size(30, 3, 2))
        .await
        .expect("sim");
    let cluster = Cluster::from_config(sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let app = AppStart::pods(cluster).start();
    let (keys, events) = futures::channel::mpsc::unbounded();
    for code in [
        KeyCode::Char(':'),
        KeyCode::Char('n'),
        KeyCode::Char('o'),
        KeyCode::Enter,
    ] {
        keys.unbounded_send(Ok(Event::Key(key(code))))
            .expect("the loop listens");
    }
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).expect("terminal");
    let mut observer = QuitOnNodes {
        keys,
        nodes_shown: false,
        deadline: Instant::now() + Duration::from_secs(60),
    };
    app.run(
        &mut terminal,
        events,
        futures::stream::pending(),
        &mut observer,
    )
    .await
    .expect("the loop ran");
    assert!(observer.nodes_shown, "a frame showed the nodes");
    assert!(Instant::now() < observer.deadline, "q ended the loop");
    let screen = terminal.backend().to_string();
    assert!(screen.contains("nodes"), "{screen}");
    sim.shutdown().await;
}

/// A signal (SIGTERM, SIGINT, SIGHUP in the real TUI) ends the loop as `q` does, once the
/// table shows its rows: the loop takes signals from outside, so a test sends one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signal_ends_the_event_loop() {
    use futures::channel::mpsc::UnboundedSender;
    use kscope_ui::app::Observer;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    /// Sends the signal once a frame shows the pods; counts the frames drawn after it.
    struct SignalOnRows {
        signals: UnboundedSender<()>,
        sent: bool,
        frames_after: usize,
        deadline: Instant,
    }
    impl Observer for SignalOnRows {
        fn drawn(&mut self, app: &App) -> bool {
            if self.sent {
                self.frames_after += 1;
            } else if app.rows() > 0 {
                self.sent = true;
                self.signals.unbounded_send(()).expect("the loop listens");
            }
            Instant::now() < self.deadline
        }
    }

    let sim = Sim::start(SimConfig::with_size(12, 2, 1))
        .await
        .expect("sim");
    let cluster = Cluster::from_config(sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let app = AppStart::pods(cluster).start();
    let (_keys, events) =
        futures::channel::mpsc::unbounded::<std::io::Result<crossterm::event::Event>>();
    let (signals, signal_stream) = futures::channel::mpsc::unbounded();
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).expect("terminal");
    let mut observer = SignalOnRows {
        signals,
        sent: false,
        frames_after: 0,
        deadline: Instant::now() + Duration::from_secs(60),
    };
    app.run(&mut terminal, events, signal_stream, &mut observer)
        .await
        .expect("the loop ran");
    assert!(observer.sent, "a frame showed the pods");
    assert!(
        Instant::now() < observer.deadline,
        "the signal ended the loop"
    );
    sim.shutdown().await;
}

/// The header says how the informer read its initial state, and why it fell back to a list.
#[test]
fn the_header_says_how_the_first_state_was_read() {
    use kscope_informers::reflector::{
        InitialListMode, InitialListStatus, ReflectorPhase, ReflectorStatus,
    };
    let mut status = ReflectorStatus {
        phase: ReflectorPhase::Watching,
        last_sync_resource_version: "42".into(),
        ..ReflectorStatus::default()
    };
    assert_eq!(kscope_ui::app::describe_sync(&status), "watching at rv 42");
    status.initial_list = Some(InitialListStatus {
        mode: InitialListMode::WatchList,
        fallback_reason: None,
    });
    assert_eq!(
        kscope_ui::app::describe_sync(&status),
        "watching at rv 42 · via watchList"
    );
    status.initial_list = Some(InitialListStatus {
        mode: InitialListMode::List,
        fallback_reason: Some("the server refused the watch-list (422)".into()),
    });
    assert_eq!(
        kscope_ui::app::describe_sync(&status),
        "watching at rv 42 · via list (the server refused the watch-list (422))"
    );
}

/// `:ctx` over the kubeconfig `kscope sim --clusters 2` writes: the picker lists both
/// contexts with the current one selected, `:ctx kscope-sim-2` connects in the background
/// and then shows the second cluster's pods (other names: another seed), a context that is
/// not in the kubeconfig is refused with the reason and changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctx_switches_between_two_simulated_clusters() {
    use std::collections::BTreeSet;

    use kscope_client::cluster::ClusterArgs;

    let dir = crate::common::cli::temp_dir("ctx-switch");
    let (mut sim, kubeconfig) = crate::common::cli::sim_clusters(
        &dir,
        2,
        &["--pods", "30", "--nodes", "2", "--namespaces", "2"],
    )
    .await;

    let args = ClusterArgs {
        kubeconfig: Some(kubeconfig.clone()),
        all_namespaces: true,
        ..ClusterArgs::default()
    };
    let cluster = args.connect().await.expect("first context");
    let first_context = cluster.context.clone();
    let mut app = AppStart::pods(cluster).kubeconfig_contexts(&args).start();
    let keys =
        |w: &Window| -> BTreeSet<String> { w.rows.iter().map(|r| r.key.to_string()).collect() };
    let first = keys(&wait_rows(&mut app, "the first cluster's pods", |_, w| w.total == 30).await);

    run_command(&mut app, "ctx");
    assert_eq!(app.state().mode, InputMode::Contexts);
    assert_eq!(app.state().contexts.names, ["kscope-sim-1", "kscope-sim-2"]);
    assert_eq!(
        app.state().contexts.names[app.state().contexts.selected],
        first_context
    );
    app.apply(Action::ToggleIndexes);
    assert_eq!(app.state().mode, InputMode::Normal, "Esc closes the picker");

    run_command(&mut app, "ctx nosuch");
    let connected = tokio::time::timeout(Duration::from_secs(30), app.context_connected())
        .await
        .expect("answered in time")
        .expect("a result");
    assert!(app.finish_context(connected).is_empty());
    let error = app.state().command.error.clone().unwrap_or_default();
    assert!(
        error.contains("nosuch") && error.contains("does not exist"),
        "{error}"
    );
    assert_eq!(app.header().context, first_context, "nothing changed");

    run_command(&mut app, "ctx");
    app.apply(Action::Down);
    let follow = app.apply(Action::ChooseValue);
    assert!(follow.is_empty(), "the switch waits for the connection");
    let connected = tokio::time::timeout(Duration::from_secs(30), app.context_connected())
        .await
        .expect("connected in time")
        .expect("a result");
    let follow = app.finish_context(connected);
    assert_eq!(follow, [Follow::Table, Follow::Rows]);
    assert_eq!(app.header().context, "kscope-sim-2");
    let second =
        keys(&wait_rows(&mut app, "the second cluster's pods", |_, w| w.total == 30).await);
    assert!(first.is_disjoint(&second), "{first:?} {second:?}");
    assert!(
        app.history().is_empty(),
        "Esc does not go back to the other cluster"
    );
    // The log view reads from the new cluster too: its pods exist only there.
    app.window(50);
    app.apply(Action::OpenLogs);
    assert_eq!(app.state().mode, InputMode::Logs);
    let deadline = Instant::now() + Duration::from_secs(30);
    while app.state().logs.as_ref().is_some_and(|v| v.ring.is_empty()) {
        let more = tokio::time::timeout_at(deadline.into(), app.next_logs()).await;
        let view = app.state().logs.as_ref().expect("the log view is open");
        assert!(
            more.is_ok_and(|more| more),
            "no log lines from the second cluster: {:?} {:?}",
            view.notice,
            view.sources
        );
    }
    app.apply(Action::Back);
    assert_eq!(app.state().mode, InputMode::Normal);

    // A category switches as a category: `:all` on the first cluster again, its kinds
    // looked up there.
    run_command(&mut app, "all -A");
    let kinds = |w: &Window| -> BTreeSet<String> {
        w.rows
            .iter()
            .filter_map(|r| r.key.split_once('/').map(|(k, _)| k.to_owned()))
            .collect()
    };
    wait_rows(&mut app, "the second cluster's all", |_, w| {
        kinds(w).len() >= 3
    })
    .await;
    run_command(&mut app, &format!("ctx {first_context}"));
    let connected = tokio::time::timeout(Duration::from_secs(30), app.context_connected())
        .await
        .expect("connected in time")
        .expect("a result");
    app.finish_context(connected);
    assert_eq!(app.header().context, first_context);
    assert_eq!(app.category().map(|c| c.name.as_str()), Some("all"));
    assert_eq!(app.header().resource, "all");
    let all = wait_rows(&mut app, "the first cluster's all", |_, w| {
        kinds(w).len() >= 3 && w.rows.iter().any(|r| r.key.starts_with("pod/"))
    })
    .await;
    let pods: BTreeSet<String> = all
        .rows
        .iter()
        .filter_map(|r| r.key.strip_prefix("pod/").map(str::to_owned))
        .collect();
    assert!(pods.is_subset(&first), "{pods:?} {first:?}");

    drop(app);
    let _ = sim.kill();
    let _ = sim.wait();
}

/// The number keys as k9s's: each namespace shown becomes favourite 1 of the context, `2`
/// goes back to the one before, `0` shows all namespaces; favourites outlive the app, kept
/// in the state directory's file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn number_keys_switch_to_favourite_namespaces_remembered_between_runs() {
    use kscope_ui::favourites::Favourites;

    let sim = Sim::start(SimConfig::with_size(60, 2, 3))
        .await
        .expect("sim");
    let config = sim.kube_config().await.expect("config");
    let cluster = Cluster::from_config(config.clone(), "sim".into()).expect("cluster");
    let dir = crate::common::cli::temp_dir("favourites");
    let file = dir.join("namespaces.json");
    let mut app = AppStart::pods(cluster)
        .favourites(Favourites::load(file.clone()))
        .start();
    let window = wait_rows(&mut app, "pods", |_, w| w.total == 60).await;
    let mut namespaces: Vec<String> = window
        .rows
        .iter()
        .filter_map(|r| r.key.split_once('/').map(|(ns, _)| ns.to_owned()))
        .collect();
    namespaces.dedup();
    assert!(namespaces.len() >= 2, "{namespaces:?}");
    let (a, b) = (namespaces[0].clone(), namespaces[1].clone());
    assert!(app.header().favourites.is_empty());

    run_command(&mut app, &format!("pods -n {a}"));
    run_command(&mut app, &format!("pods -n {b}"));
    assert_eq!(app.header().favourites, [b.clone(), a.clone()]);
    app.apply(Action::FavouriteNamespace(2));
    assert_eq!(app.current().scope, NamespaceScope::One(a.clone()));
    assert_eq!(
        app.header().favourites,
        [a.clone(), b.clone()],
        "a is the newest now"
    );
    app.apply(Action::FavouriteNamespace(0));
    assert_eq!(app.current().scope, NamespaceScope::All);
    app.apply(Action::FavouriteNamespace(7));
    let error = app.state().command.error.clone().unwrap_or_default();
    assert!(error.contains("no favourite namespace 7"), "{error}");
    drop(app);

    // A new run on the same context reads them back.
    let cluster = Cluster::from_config(config, "sim".into()).expect("cluster");
    let app = AppStart::pods(cluster)
        .favourites(Favourites::load(file))
        .start();
    assert_eq!(app.header().favourites, [a, b]);
    drop(app);
    sim.shutdown().await;
}

/// Enter on a StatefulSet a client made shows the pods its controller made for it, through
/// the owner index, as Enter on a ReplicaSet does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enter_on_a_statefulset_shows_its_pods() {
    use k8s_openapi::api::apps::v1::StatefulSet;
    let sim = Sim::start(SimConfig::with_size(20, 2, 2))
        .await
        .expect("sim");
    let config = sim.kube_config().await.expect("config");
    let client = kube::Client::try_from(config.clone()).expect("client");
    let web: StatefulSet = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "serviceName": "web",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}
            }
        }
    }))
    .expect("statefulset");
    kube::Api::<StatefulSet>::namespaced(client, "default")
        .create(&Default::default(), &web)
        .await
        .expect("created");
    let cluster = Cluster::from_config(config, "sim".into()).expect("cluster");
    let mut app = AppStart::pods(cluster).discovered().await.start();
    wait_rows(&mut app, "pods", |_, w| w.total > 0).await;
    run_command(&mut app, "sts -n default");
    let window = wait_rows(&mut app, "statefulsets", |_, w| {
        w.rows.iter().any(|r| &*r.key == "default/web")
    })
    .await;
    let at = window
        .rows
        .iter()
        .position(|r| &*r.key == "default/web")
        .expect("the row");
    for _ in 0..at {
        app.apply(Action::Down);
    }
    app.apply(Action::DrillDown);
    assert_eq!(*app.table().kind(), ResourceKind::Pods);
    assert_eq!(app.current().filter, "owner=StatefulSet/web");
    let pods = wait_rows(&mut app, "the statefulset's pods", |_, w| w.total == 2).await;
    let names: Vec<&str> = pods.rows.iter().map(|r| &*r.key).collect();
    assert_eq!(names, ["default/web-0", "default/web-1"]);
    drop(app);
    sim.shutdown().await;
}

/// Enter on a Service shows the pods its selector picks, exactly those the server's label
/// selector gives: through the `app` index, and a label no index reads gets one made
/// (backfilled at once) rather than a scan.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enter_on_a_service_shows_the_pods_its_selector_picks() {
    use k8s_openapi::api::core::v1::{Pod, Service};
    let sim = Sim::start(SimConfig::with_size(60, 2, 2))
        .await
        .expect("sim");
    let config = sim.kube_config().await.expect("config");
    let client = kube::Client::try_from(config.clone()).expect("client");
    let pods: kube::Api<Pod> = kube::Api::all(client.clone());
    let some = pods.list(&Default::default()).await.expect("pods");
    let chosen = some
        .items
        .iter()
        .find(|p| {
            p.metadata
                .labels
                .as_ref()
                .is_some_and(|l| l.contains_key("pod-template-hash"))
        })
        .expect("a ReplicaSet's pod");
    let labels = chosen.metadata.labels.clone().unwrap_or_default();
    let namespace = chosen.metadata.namespace.clone().expect("namespaced");
    let selector: BTreeMap<String, String> = ["app", "pod-template-hash"]
        .into_iter()
        .map(|k| (k.to_string(), labels[k].clone()))
        .collect();
    let service: Service = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "one-revision", "namespace": namespace},
        "spec": {"selector": selector, "ports": [{"port": 80}]}
    }))
    .expect("service");
    kube::Api::<Service>::namespaced(client.clone(), &namespace)
        .create(&Default::default(), &service)
        .await
        .expect("created");
    let label_selector = selector
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    let mut expected: Vec<String> = kube::Api::<Pod>::namespaced(client, &namespace)
        .list(&kube::api::ListParams::default().labels(&label_selector))
        .await
        .expect("selected pods")
        .items
        .iter()
        .map(|p| {
            format!(
                "{namespace}/{}",
                p.metadata.name.clone().unwrap_or_default()
            )
        })
        .collect();
    expected.sort();
    assert!(!expected.is_empty());

    let cluster = Cluster::from_config(config, "sim".into()).expect("cluster");
    let mut app = AppStart::pods(cluster).discovered().await.start();
    wait_rows(&mut app, "pods", |_, w| w.total > 0).await;
    run_command(&mut app, &format!("svc -n {namespace}"));
    let key = format!("{namespace}/one-revision");
    let window = wait_rows(&mut app, "services", |_, w| {
        w.rows.iter().any(|r| *r.key == *key)
    })
    .await;
    let at = window
        .rows
        .iter()
        .position(|r| *r.key == *key)
        .expect("row");
    for _ in 0..at {
        app.apply(Action::Down);
    }
    app.apply(Action::DrillDown);
    assert!(
        app.next_selector(Duration::from_secs(30)).await,
        "the selector arrives: {:?} {:?}",
        app.state().command.error,
        app.state().mode
    );
    assert_eq!(*app.table().kind(), ResourceKind::Pods);
    assert_eq!(
        app.current().filter,
        format!(
            "app={},pod-template-hash={}",
            selector["app"], selector["pod-template-hash"]
        )
    );
    let shown = wait_rows(&mut app, "the selected pods", |_, w| {
        w.total == expected.len()
    })
    .await;
    let mut keys: Vec<String> = shown.rows.iter().map(|r| r.key.to_string()).collect();
    keys.sort();
    assert_eq!(keys, expected);
    let said = app.state().command.error.clone().unwrap_or_default();
    assert!(
        said.starts_with(&format!(
            "pods service {namespace}/one-revision selects: app="
        )),
        "{said}"
    );
    assert!(
        app.table()
            .index_names()
            .iter()
            .any(|n| n == "pod-template-hash"),
        "an index was made for the label none read"
    );
    drop(app);
    sim.shutdown().await;
}

/// J follows a pod's controller up: its ReplicaSet, then that one's Deployment, each selected
/// in its own table; Esc comes back down.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn j_jumps_from_a_pod_to_its_replicaset_and_deployment() {
    let sim = Sim::start(SimConfig::with_size(20, 2, 2))
        .await
        .expect("sim");
    let cluster = Cluster::from_config(sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let mut app = AppStart::pods(cluster).discovered().await.start();
    let pods = wait_rows(&mut app, "pods", |_, w| w.total > 0).await;
    let pod = pods.rows[0].key.clone();
    // A seeded pod's name is its ReplicaSet's, then a suffix; that one's is its Deployment's.
    let (namespace, pod_name) = pod.split_once('/').expect("namespaced");
    let replicaset = &pod_name[..pod_name.rfind('-').expect("suffix")];
    let deployment = &replicaset[..replicaset.rfind('-').expect("hash")];

    app.apply(Action::JumpToOwner);
    assert_eq!(*app.table().kind(), ResourceKind::ReplicaSets);
    let want = format!("{namespace}/{replicaset}");
    wait_selected(&mut app, &want).await;
    app.apply(Action::JumpToOwner);
    assert_eq!(*app.table().kind(), ResourceKind::Deployments);
    let want = format!("{namespace}/{deployment}");
    wait_selected(&mut app, &want).await;
    // A Deployment has no controller: said, and nothing moves.
    app.apply(Action::JumpToOwner);
    assert_eq!(*app.table().kind(), ResourceKind::Deployments);
    assert!(
        app.state()
            .command
            .error
            .as_deref()
            .is_some_and(|e| e.contains("has no controller")),
        "{:?}",
        app.state().command.error
    );
    app.apply(Action::FilterClear);
    assert_eq!(*app.table().kind(), ResourceKind::ReplicaSets);
    drop(app);
    sim.shutdown().await;
}

/// Waits (at most 60 s) until the row of `want` is selected, drawing windows as frames do.
async fn wait_selected(app: &mut App, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        app.window(50);
        if app.table().selected().as_deref() == Some(want) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {want} to be selected: {:?}",
            app.table().selected()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
