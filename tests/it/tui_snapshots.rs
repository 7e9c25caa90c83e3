//! TestBackend snapshots of the TUI's screens, drawn from a fixed store, a fixed clock and
//! hand-made delta lines, so they never depend on the wall clock or a cluster.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use kscope_index_views::columns::{POD_COLUMNS, TableRow};
use kscope_index_views::definitions::{IndexDefinition, IndexSource, default_index_definitions};
use kscope_index_views::live::{LiveView, SortSpec};
use kscope_index_views::query::Query;
use kscope_index_views::registry::IndexRegistry;
use kscope_informers::indexer::IndexerWriter;
use kscope_resources::{
    BuiltIn, Deployment, Namespace, Node, Pod, ReplicaSet, ResourceKind, Secret, Timestamp, decode,
};
use kscope_ui::action::Focus;
use kscope_ui::action::InputMode;
use kscope_ui::deltas::DeltaLine;
use kscope_ui::draw::{self, Header, Parts};
use kscope_ui::queue::QueueStats;
use kscope_ui::state::UiState;
use kscope_ui::table::capture;
use parking_lot::Mutex;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::{Color, Modifier};

use crate::common::pod::{NOW, pod};
use crate::common::tui;

fn registry() -> (IndexRegistry<Pod>, IndexerWriter<Pod>) {
    pods(default_index_definitions())
}

/// The 40 test pods in a registry with `indexes`.
fn pods(indexes: Vec<IndexDefinition>) -> (IndexRegistry<Pod>, IndexerWriter<Pod>) {
    let (registry, store) = IndexRegistry::new(indexes).expect("indexes");
    for i in 0..40 {
        let (ns, app) = if i % 3 == 0 {
            ("shop", "web")
        } else {
            ("data", "db")
        };
        let name = format!("{app}-{i:02}");
        store
            .add(
                pod(ns, &name)
                    .app(app)
                    .node(&format!("node-{}", i % 4))
                    .restarts(i % 5)
                    .created(NOW - 60 * i64::from(i))
                    .pod_ip("10.0.0.1")
                    .decoded(),
            )
            .expect("add");
    }
    (registry, store)
}

fn view(query: &str) -> Mutex<LiveView<Pod>> {
    let query = Query::parse(query).expect("query parses");
    Mutex::new(LiveView::new(registry().0, query, SortSpec::default()).expect("view"))
}

fn header() -> Header {
    header_for(ResourceKind::Pods, kscope_ui::ALL_NAMESPACES)
}

fn header_for(kind: ResourceKind, scope: &str) -> Header {
    Header {
        sync: "listing: 2 pages, 1000 objects".into(),
        sync_short: None,
        events_per_second: 12.0,
        ..tui::header(kind.plural(), scope)
    }
}

fn at(seconds: i64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(u64::try_from(seconds).expect("positive"))
}

fn state_with_deltas() -> UiState {
    let mut state = UiState::new(true);
    for (seq, kind, key, detail) in [
        (1, "RELIST", "", "40 objects"),
        (2, "MODIFIED", "shop/web-03", "status.phase"),
        (3, "Updated", "shop/web-03", ""),
        (4, "DELETED", "data/db-01", ""),
        (5, "Deleted", "data/db-01", ""),
    ] {
        state.deltas.push(DeltaLine {
            seq,
            at: at(NOW - 10 + i64::try_from(seq).expect("small")),
            kind,
            key: key.into(),
            resource_version: format!("{}", 100 + seq),
            detail: detail.into(),
        });
    }
    state
}

fn queue() -> QueueStats {
    QueueStats {
        depth: 3,
        adds: 1200,
        coalesced_adds: 40,
        in_flight: 1,
        retries: 0,
        latency_p50: Some(0.0004),
        latency_p99: Some(0.012),
        work_p50: Some(0.00001),
        work_p99: Some(0.00002),
    }
}

/// Draws one frame of `view` with `state` at `width`x`height` and returns the text.
fn render(view: &Mutex<LiveView<Pod>>, state: &mut UiState, width: u16, height: u16) -> String {
    terminal(view, state, width, height).backend().to_string()
}

/// Draws one frame of any kind's view under `header`; NAMESPACE is shown for namespaced
/// kinds in all namespaces, as the app does.
fn render_kind<T: TableRow + BuiltIn>(
    view: &Mutex<LiveView<T>>,
    state: &mut UiState,
    header: &Header,
    width: u16,
    height: u16,
) -> String {
    let with_namespace = T::KIND.namespaced() && header.scope == kscope_ui::ALL_NAMESPACES;
    draw_frame(view, state, header, with_namespace, width, height, false)
        .backend()
        .to_string()
}

fn terminal(
    view: &Mutex<LiveView<Pod>>,
    state: &mut UiState,
    width: u16,
    height: u16,
) -> Terminal<TestBackend> {
    terminal_in(view, state, width, height, false)
}

fn terminal_in(
    view: &Mutex<LiveView<Pod>>,
    state: &mut UiState,
    width: u16,
    height: u16,
    color: bool,
) -> Terminal<TestBackend> {
    draw_frame(view, state, &header(), true, width, height, color)
}

fn draw_frame<T: TableRow>(
    view: &Mutex<LiveView<T>>,
    state: &mut UiState,
    header: &Header,
    with_namespace: bool,
    width: u16,
    height: u16,
    color: bool,
) -> Terminal<TestBackend> {
    let backend = TestBackend::new(width, height);
    let mut terminal = Terminal::new(backend).expect("test terminal");
    let columns = view.lock().columns();
    state.queue.stats = queue();
    let parts = Parts {
        header,
        columns: &columns,
        with_namespace,
        now: at(NOW),
        color,
    };
    draw::frame(&mut terminal, state, None, &parts, |state, rows| {
        capture(
            view,
            &mut state.table.scroll,
            rows,
            Timestamp::from_seconds(NOW),
        )
    })
    .expect("draws");
    terminal
}

#[test]
fn main_screen_with_panels() {
    let view = view("");
    let mut state = state_with_deltas();
    state.focus = Focus::Deltas;
    insta::assert_snapshot!(render(&view, &mut state, 100, 30));
}

#[test]
fn table_only_after_moving_down_a_page() {
    let view = view("");
    let mut state = UiState::new(false);
    render(&view, &mut state, 100, 20);
    view.lock().select_position(30);
    let terminal = terminal(&view, &mut state, 100, 20);
    insta::assert_snapshot!(terminal.backend().to_string());
    // Position 30 (web-12) is the last of 16 visible rows, below the header and titles.
    let buffer = terminal.backend().buffer();
    let reversed = |y: u16| {
        buffer
            .cell((12, y))
            .is_some_and(|c| c.modifier.contains(Modifier::REVERSED))
    };
    assert!(reversed(18));
    assert!(!reversed(17));
}

#[test]
fn filter_by_index_shows_only_matching_rows_and_the_count() {
    let view = view("app=web");
    let mut state = UiState::new(false);
    state.mode = InputMode::Filter;
    state.filter.input = "app=web".into();
    state.table.sort = SortSpec {
        column: 3,
        descending: true,
    };
    view.lock().set_sort(state.table.sort);
    insta::assert_snapshot!(render(&view, &mut state, 100, 20));
}

#[test]
fn filter_parse_error_names_the_column() {
    let view = view("");
    let mut state = UiState::new(false);
    state.mode = InputMode::Filter;
    state.filter.input = "app in a".into();
    assert!(state.filter.parse().is_none());
    insta::assert_snapshot!(render(&view, &mut state, 100, 12));
}

#[test]
fn help_overlay() {
    let view = view("");
    let mut state = UiState::new(false);
    state.mode = InputMode::Help;
    insta::assert_snapshot!(render(&view, &mut state, 100, 24));
}

#[test]
fn panels_collapse_at_40x10() {
    let view = view("");
    let mut state = state_with_deltas();
    insta::assert_snapshot!(render(&view, &mut state, 40, 10));
}

#[test]
fn too_small_below_40x10() {
    let view = view("");
    let mut state = UiState::new(true);
    let text = render(&view, &mut state, 39, 10);
    assert!(text.contains("terminal too small"), "{text}");
    let text = render(&view, &mut state, 60, 9);
    assert!(text.contains("terminal too small"), "{text}");
    // At 20x5 the line wraps: the size it needs is still said.
    insta::assert_snapshot!(render(&view, &mut state, 20, 5));
}

#[test]
fn selection_stays_on_its_object_while_rows_move() {
    let (registry, store) = registry();
    let view = Mutex::new(
        LiveView::new(registry.clone(), Query::default(), SortSpec::default()).expect("view"),
    );
    let mut state = UiState::new(false);
    view.lock().select_position(5);
    let before = capture(
        &view,
        &mut state.table.scroll,
        10,
        Timestamp::from_seconds(NOW),
    );
    let key = view.lock().selected().cloned().expect("selected");
    // New rows sorting before the selection push it down.
    for name in ["aa-1", "aa-2", "aa-3"] {
        let p = pod("data", name)
            .app("db")
            .node("node-0")
            .created(NOW - 5)
            .pod_ip("10.0.0.1")
            .decoded();
        store.add(p).expect("add");
        view.lock().apply(&format!("data/{name}").as_str().into());
    }
    let after = capture(
        &view,
        &mut state.table.scroll,
        10,
        Timestamp::from_seconds(NOW),
    );
    assert_eq!(view.lock().selected(), Some(&key));
    assert_eq!(after.selected, before.selected.map(|p| p + 3));
    let row = &after.rows[after.selected.expect("visible") - after.offset];
    assert_eq!(row.key, key);
}

#[test]
fn no_color_draws_no_colours() {
    let view = view("");
    let colours = |color: bool| {
        let mut state = state_with_deltas();
        let terminal = terminal_in(&view, &mut state, 100, 30, color);
        let buffer = terminal.backend().buffer().clone();
        buffer
            .content()
            .iter()
            .filter(|c| c.fg != Color::Reset || c.bg != Color::Reset)
            .count()
    };
    assert!(colours(true) > 0);
    assert_eq!(colours(false), 0);
}

#[test]
fn index_browser_lists_values_with_counts() {
    let view = view("");
    let mut state = UiState::new(false);
    state.mode = InputMode::Indexes;
    let (registry, _store) = registry();
    state.browser.names = registry.definitions().into_iter().map(|d| d.name).collect();
    state.browser.current = state
        .browser
        .names
        .iter()
        .position(|n| n == "node")
        .expect("a node index");
    state.browser.values = registry.value_counts("node").expect("node index");
    state.browser.step(2);
    insta::assert_snapshot!(render(&view, &mut state, 100, 16));
}

fn created(age_seconds: i64) -> jiff::Timestamp {
    jiff::Timestamp::from_second(NOW - age_seconds).expect("valid time")
}

/// A registry of `T` with the default indexes, holding `objects` (JSON).
fn store_of<T: TableRow + BuiltIn>(objects: impl IntoIterator<Item = String>) -> IndexRegistry<T> {
    let (registry, store) = IndexRegistry::new(default_index_definitions()).expect("indexes");
    for json in objects {
        let obj: T = decode(json.as_bytes()).expect("object decodes");
        store.add(Arc::new(obj)).expect("add");
    }
    registry
}

fn view_of<T: TableRow>(registry: IndexRegistry<T>) -> Mutex<LiveView<T>> {
    Mutex::new(LiveView::new(registry, Query::default(), SortSpec::default()).expect("view"))
}

fn nodes() -> Mutex<LiveView<Node>> {
    view_of(store_of::<Node>((0..4).map(|i| {
        let role = if i == 0 { "control-plane" } else { "worker" };
        let ready = if i == 3 { "False" } else { "True" };
        format!(
            r#"{{"metadata":{{"name":"node-{i}","resourceVersion":"1",
                "creationTimestamp":"{}",
                "labels":{{"node-role.kubernetes.io/{role}":""}}}},
                "status":{{"capacity":{{"cpu":"8","memory":"32Gi"}},
                "conditions":[{{"type":"Ready","status":"{ready}"}}],
                "addresses":[{{"type":"InternalIP","address":"10.0.1.{i}"}}],
                "nodeInfo":{{"kubeletVersion":"v1.31.4"}}}}}}"#,
            created(86_400 * (30 + i))
        )
    })))
}

#[test]
fn nodes_table() {
    let view = nodes();
    let mut state = UiState::new(false);
    let header = header_for(ResourceKind::Nodes, "cluster");
    insta::assert_snapshot!(render_kind(&view, &mut state, &header, 100, 10));
}

#[test]
fn nodes_table_wide() {
    let view = nodes();
    let mut state = UiState::new(false);
    state.table.wide = true;
    let header = header_for(ResourceKind::Nodes, "cluster");
    insta::assert_snapshot!(render_kind(&view, &mut state, &header, 120, 10));
}

#[test]
fn namespaces_table() {
    let view = view_of(store_of::<Namespace>(
        ["default", "shop", "data", "kube-system"]
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let phase = if *name == "data" {
                    "Terminating"
                } else {
                    "Active"
                };
                format!(
                    r#"{{"metadata":{{"name":"{name}","resourceVersion":"1",
                        "creationTimestamp":"{}"}},"status":{{"phase":"{phase}"}}}}"#,
                    created(86_400 * (100 - i64::try_from(i).expect("small")))
                )
            }),
    ));
    let mut state = UiState::new(false);
    let header = header_for(ResourceKind::Namespaces, "cluster");
    insta::assert_snapshot!(render_kind(&view, &mut state, &header, 80, 10));
}

/// Deployment (or ReplicaSet, with an owner) JSON with app label `app` in namespace `ns`.
fn workload(ns: &str, name: &str, app: &str, owner: Option<&str>, ready: u32) -> String {
    let owner = owner.map_or(String::new(), |o| {
        format!(
            r#","ownerReferences":[{{"apiVersion":"apps/v1","kind":"Deployment","name":"{o}",
                "uid":"u","controller":true}}]"#
        )
    });
    format!(
        r#"{{"metadata":{{"name":"{name}","namespace":"{ns}","resourceVersion":"1",
            "creationTimestamp":"{}","labels":{{"app":"{app}"}}{owner}}},
            "spec":{{"replicas":3,"selector":{{"matchLabels":{{"app":"{app}"}}}},
            "template":{{"spec":{{"containers":[{{"name":"main","image":"{app}:1.2"}}]}}}}}},
            "status":{{"replicas":3,"readyReplicas":{ready},"updatedReplicas":3,
            "availableReplicas":{ready}}}}}"#,
        created(3_600 * 26)
    )
}

#[test]
fn deployments_table_in_all_namespaces() {
    let view = view_of(store_of::<Deployment>([
        workload("shop", "web", "web", None, 3),
        workload("shop", "cart", "cart", None, 2),
        workload("data", "db", "db", None, 0),
    ]));
    let mut state = UiState::new(false);
    let header = header_for(ResourceKind::Deployments, kscope_ui::ALL_NAMESPACES);
    insta::assert_snapshot!(render_kind(&view, &mut state, &header, 100, 10));
}

#[test]
fn replicasets_of_a_deployment_in_one_namespace() {
    let registry = store_of::<ReplicaSet>([
        workload("shop", "web-5d8f7", "web", Some("web"), 3),
        workload("shop", "web-6c9a1", "web", Some("web"), 0),
        workload("shop", "cart-7b2e4", "cart", Some("cart"), 2),
    ]);
    let view = Mutex::new(
        LiveView::new(
            registry,
            Query::parse("owner=Deployment/web").expect("query"),
            SortSpec::default(),
        )
        .expect("view"),
    );
    let mut state = UiState::new(false);
    state.filter.input = "owner=Deployment/web".into();
    let header = header_for(ResourceKind::ReplicaSets, "namespace shop");
    insta::assert_snapshot!(render_kind(&view, &mut state, &header, 100, 10));
}

/// `:secrets`: kubectl's NAME TYPE DATA AGE, from a projection that never kept a value.
#[test]
fn secrets_table_in_all_namespaces() {
    let secret = |ns: &str, name: &str, type_: &str, keys: &[&str], age_days: i64| {
        let data: Vec<String> = keys
            .iter()
            .map(|k| format!(r#""{k}":"c2VjcmV0LXZhbHVl""#))
            .collect();
        format!(
            r#"{{"apiVersion":"v1","kind":"Secret","metadata":{{"name":"{name}",
                "namespace":"{ns}","resourceVersion":"1","creationTimestamp":"{}"}},
                "type":"{type_}","data":{{{}}}}}"#,
            created(86_400 * age_days),
            data.join(",")
        )
    };
    let view = view_of(store_of::<Secret>([
        secret(
            "shop",
            "db-credentials",
            "Opaque",
            &["password", "username"],
            3,
        ),
        secret(
            "shop",
            "shop-tls",
            "kubernetes.io/tls",
            &["tls.crt", "tls.key"],
            40,
        ),
        secret(
            "shop",
            "registry-credentials",
            "kubernetes.io/dockerconfigjson",
            &[".dockerconfigjson"],
            40,
        ),
        secret(
            "kube-system",
            "default-token-x7k2p",
            "kubernetes.io/service-account-token",
            &["ca.crt", "namespace", "token"],
            90,
        ),
        secret("data", "empty", "Opaque", &[], 1),
    ]));
    let mut state = UiState::new(false);
    let header = header_for(ResourceKind::Secrets, kscope_ui::ALL_NAMESPACES);
    let text = render_kind(&view, &mut state, &header, 100, 10);
    assert!(!text.contains("c2VjcmV0"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn command_mode_shows_matching_commands() {
    let view = view("");
    let mut state = UiState::new(false);
    state.mode = InputMode::Command;
    state.command.input = "de".into();
    let text = render(&view, &mut state, 100, 10);
    assert!(
        text.contains(":de█  deployments deploy deployment"),
        "{text}"
    );
    state.command.input = "deploy -n shop".into();
    insta::assert_snapshot!(render(&view, &mut state, 100, 10));
}

#[test]
fn command_error_in_the_status_line() {
    let view = view("");
    let mut state = UiState::new(false);
    let error = kscope_ui::command::parse("pods -x", &Default::default()).expect_err("a bad flag");
    state.command.error = Some(format!(":pods -x  {error}"));
    insta::assert_snapshot!(render(&view, &mut state, 100, 10));
}

#[test]
fn pods_wide_mode() {
    let view = view("app=web");
    let mut state = UiState::new(false);
    state.table.wide = true;
    state.filter.input = "app=web".into();
    insta::assert_snapshot!(render(&view, &mut state, 120, 10));
}

#[test]
fn label_and_annotation_indexes_get_columns() {
    let mut indexes = default_index_definitions();
    indexes.push(IndexDefinition::new(
        "team",
        IndexSource::Label("team".into()),
    ));
    indexes.push(IndexDefinition::new(
        "owner-email",
        IndexSource::Annotation("example.com/owner".into()),
    ));
    let (registry, store) = pods(indexes);
    let labelled = format!(
        r#"{{"metadata":{{"name":"aa-labelled","namespace":"shop","resourceVersion":"1",
            "creationTimestamp":"{}","labels":{{"app":"web","team":"payments"}},
            "annotations":{{"example.com/owner":"ana@example.com"}}}},
            "spec":{{"containers":[{{"name":"c","image":"nginx"}}]}},
            "status":{{"phase":"Pending"}}}}"#,
        created(30)
    );
    let pod: Pod = decode(labelled.as_bytes()).expect("pod decodes");
    store.add(Arc::new(pod)).expect("add");
    let view = view_of(registry);
    let mut state = UiState::new(false);
    // Sorting by the TEAM column (after the pod's 7 columns and APP) puts <none> after it.
    state.table.sort = SortSpec {
        column: POD_COLUMNS.len() + 1,
        descending: true,
    };
    view.lock().set_sort(state.table.sort);
    let text = render(&view, &mut state, 120, 10);
    assert!(text.contains("TEAM↓"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn informer_error_in_header_and_empty_table() {
    let view = view_of(store_of::<Deployment>([]));
    let mut state = UiState::new(false);
    let mut header = header_for(ResourceKind::Deployments, kscope_ui::ALL_NAMESPACES);
    header.sync = "backing off".into();
    header.listed = false;
    header.error = Some(
        "forbidden: not allowed to list deployments: deployments.apps is forbidden: \
         User \"dev\" cannot list resource \"deployments\" in API group \"apps\" at the \
         cluster scope"
            .into(),
    );
    insta::assert_snapshot!(render_kind(&view, &mut state, &header, 100, 10));
}

#[test]
fn empty_tables_say_why() {
    let view = view_of(store_of::<ReplicaSet>([]));
    let mut state = UiState::new(false);
    let mut header = header_for(ResourceKind::ReplicaSets, "namespace shop");
    header.listed = false;
    let text = render_kind(&view, &mut state, &header, 80, 10);
    assert!(
        text.contains("waiting for the first list of replicasets"),
        "{text}"
    );
    header.listed = true;
    let text = render_kind(&view, &mut state, &header, 80, 10);
    assert!(text.contains("no replicasets in namespace shop"), "{text}");
    state.filter.input = "app=x".into();
    let text = render_kind(&view, &mut state, &header, 80, 10);
    assert!(text.contains("nothing matches the filter"), "{text}");
}

#[test]
fn sorted_by_namespace_descending() {
    let view = view("");
    let mut state = UiState::new(false);
    let columns = view.lock().columns();
    let namespace = columns.iter().position(|c| c.namespace).expect("NAMESPACE");
    state.table.sort = SortSpec {
        column: namespace,
        descending: true,
    };
    view.lock().set_sort(state.table.sort);
    let text = render(&view, &mut state, 80, 10);
    assert!(text.contains("NAMESPACE↓ NAME "), "{text}");
    insta::assert_snapshot!(text);
}

/// Rows listed but no longer watched (here the watch failed and relists are refused) are
/// dimmed, and the header says first, before anything a narrow terminal would cut, that
/// they are stale and since when; list items that did not decode are counted.
#[test]
fn stale_rows_are_dimmed_and_the_header_says_since_when() {
    let view = view("");
    let mut state = UiState::new(false);
    let mut header = header();
    header.sync = "backing off".into();
    header.error = Some("list pods: connection refused (os error 111)".into());
    header.stale_since = Some(at(NOW - 75));
    header.undecodable = 2;
    for color in [true, false] {
        let terminal = draw_frame(&view, &mut state, &header, true, 140, 10, color);
        let buffer = terminal.backend().buffer();
        let row = (0..buffer.area.height)
            .find(|&y| {
                let line: String = (0..buffer.area.width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect();
                line.contains("db-01")
            })
            .unwrap_or_else(|| panic!("a pod row on screen: {}", terminal.backend()));
        assert!(
            buffer[(0, row)].modifier.contains(Modifier::DIM),
            "a stale row is dimmed (colour {color})"
        );
    }
    insta::assert_snapshot!(render_kind(&view, &mut state, &header, 140, 10));
    header.stale_since = None;
    let terminal = draw_frame(&view, &mut state, &header, true, 140, 10, true);
    let buffer = terminal.backend().buffer();
    assert!(
        buffer
            .content()
            .iter()
            .all(|c| !c.modifier.contains(Modifier::DIM)),
        "watching again: nothing dimmed"
    );
}

/// Rows are coloured by health: a crashing pod red, a pending one yellow, a running one
/// plain; with no colour, none.
#[test]
fn rows_are_coloured_by_health() {
    let view = view_of(store_of::<Pod>(
        [
            pod("shop", "a-crashing").waiting("CrashLoopBackOff"),
            pod("shop", "b-creating")
                .phase("Pending")
                .waiting("ContainerCreating"),
            pod("shop", "c-running"),
        ]
        .map(|p| p.created(NOW).wire()),
    ));
    let mut state = UiState::new(false);
    // The selection is drawn reversed: select the row not checked.
    view.lock().select_position(2);
    let terminal = draw_frame(&view, &mut state, &header(), true, 100, 10, true);
    let buffer = terminal.backend().buffer();
    let fg_of = |name: &str| {
        let y = (0..buffer.area.height)
            .find(|&y| {
                (0..buffer.area.width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect::<String>()
                    .contains(name)
            })
            .unwrap_or_else(|| panic!("{name} on screen"));
        buffer[(0, y)].fg
    };
    assert_eq!(fg_of("a-crashing"), Color::Red);
    assert_eq!(fg_of("b-creating"), Color::Yellow);
    let terminal = draw_frame(&view, &mut state, &header(), true, 100, 10, false);
    assert!(
        terminal
            .backend()
            .buffer()
            .content()
            .iter()
            .all(|c| c.fg == Color::Reset)
    );
}

/// At 80x24 with long names, NAME gives way with an ellipsis: STATUS and RESTARTS stay
/// whole ("CrashLoopBackOff", "6 (5d ago)").
#[test]
fn long_names_give_way_to_status_at_80x24() {
    let gateway = |name: &str| {
        pod("payments-production", name)
            .app("payments-gateway-api")
            .created(NOW - 12 * 86_400)
            .last_exit(NOW - 5 * 86_400)
    };
    let view = view_of(store_of::<Pod>(
        [
            gateway("payments-gateway-api-7f9c8d6b5-x2x9q")
                .waiting("CrashLoopBackOff")
                .restarts(6),
            gateway("payments-gateway-api-7f9c8d6b5-zr4kp"),
            gateway("payments-gateway-api-7f9c8d6b5-mm2lq").waiting("ImagePullBackOff"),
        ]
        .map(|p| p.wire()),
    ));
    let mut state = UiState::new(true);
    let text = render_kind(&view, &mut state, &header(), 80, 24);
    assert!(text.contains("CrashLoopBackOff"), "{text}");
    assert!(text.contains("6 (5d ago)"), "{text}");
    assert!(
        text.contains("…6b5-x2x9q"),
        "the end of a name stays: {text}"
    );
    insta::assert_snapshot!(text);
}

/// At 160x60 the whole help fits, in two columns: every key with words a person reads (no
/// action names such as "filter-backspace"), every command with its other names. At 160x45
/// it takes both columns and scrolls.
#[test]
fn help_overlay_at_160x60_is_whole() {
    let view = view("");
    let mut state = UiState::new(false);
    state.mode = InputMode::Help;
    let text = render(&view, &mut state, 160, 45);
    assert!(
        text.contains(" keys 1-86 of "),
        "two scrolled columns: {text}"
    );
    let text = render(&view, &mut state, 160, 60);
    assert!(text.contains(" keys (Esc closes) "), "not cut: {text}");
    assert!(!text.contains("filter-backspace"), "{text}");
    assert!(text.contains("secrets (sec, secret)"), "{text}");
    assert!(text.contains("in the filter bar:"), "{text}");
    insta::assert_snapshot!(text);
}

/// The `:ctx` picker, the current context starred and selected, at every size.
#[test]
fn context_picker_at_160x45_80x24_and_40x10() {
    use kscope_ui::contexts::ContextPicker;
    let view = view("");
    for (width, height) in [(160, 45), (80, 24), (40, 10)] {
        let mut state = UiState::new(false);
        state.mode = InputMode::Contexts;
        state.contexts = ContextPicker::new(
            vec!["prod-eu".into(), "kscope-demo".into(), "staging".into()],
            Some("kscope-demo".into()),
        );
        let text = render(&view, &mut state, width, height);
        assert!(text.contains("*  kscope-demo"), "{text}");
        insta::assert_snapshot!(format!("context_picker_{width}x{height}"), text);
    }
}
