//! The detail view: TestBackend snapshots of its YAML and History tabs, a diff, the error
//! state and the smallest terminal, drawn from hand-made objects and tap entries at a fixed
//! clock; and a fetch of a real pod from the simulated API server over HTTP.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use kscope_client::cluster::Cluster;
use kscope_client::fetch::{FetchError, fetch_object};
use kscope_index_views::live::Window;
use kscope_informers::delta_fifo::DeltaType;
use kscope_informers::instrument::tap::{Tap, TapEntry, TapKind, TapRecord};
use kscope_informers::lister_watcher::WatchEventType;
use kscope_resources::ResourceKind;
use kscope_sim::{Sim, SimConfig, SimHandle};
use kscope_ui::action::{Action, InputMode};
use kscope_ui::detail::{Detail, DetailController, DetailTarget, FetchState};
use kscope_ui::draw::{self, Header, Parts};
use kscope_ui::state::UiState;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use serde_json::{Value, json};

use crate::common::pod::{NOW, pod};
use crate::common::tui;

fn at(seconds: i64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(u64::try_from(seconds).expect("positive"))
}

/// shop/web-03 as its detail shows it: managed by the kubelet and kubectl, one port, its
/// status only a phase.
fn web_03(phase: &str, rv: u64) -> Value {
    let mut object = pod("shop", "web-03")
        .rv(rv)
        .app("web")
        .container("web")
        .image("nginx:1.27")
        .json();
    // Only the phase as status, so that the history of a Pending pod that starts running
    // shows the one path that changed.
    object["status"] = json!({"phase": phase, "podIP": "10.0.0.7"});
    object["metadata"]["managedFields"] = json!([
        {"manager": "kubelet", "operation": "Update", "apiVersion": "v1"},
        {"manager": "kubectl", "operation": "Apply", "apiVersion": "v1"}
    ]);
    object["spec"]["containers"][0]["ports"] = json!([{"containerPort": 80}]);
    object
}

fn entry(
    seq: u64,
    kind: TapKind,
    age: i64,
    raw: Option<&Value>,
    previous: Option<&Value>,
) -> Arc<TapEntry> {
    let bytes = |v: &Value| Bytes::from(v.to_string());
    Arc::new(TapEntry {
        seq,
        at: at(NOW - age),
        kind,
        key: Some("shop/web-03".into()),
        resource_version: raw
            .and_then(|r| r.pointer("/metadata/resourceVersion"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        raw: raw.map(bytes),
        previous_raw: previous.map(bytes),
        message: None,
    })
}

/// A delta: no object of its own, only its resourceVersion.
fn delta(seq: u64, kind: DeltaType, age: i64, rv: &str) -> Arc<TapEntry> {
    Arc::new(TapEntry {
        seq,
        at: at(NOW - age),
        kind: TapKind::Delta(kind),
        key: Some("shop/web-03".into()),
        resource_version: Some(rv.into()),
        raw: None,
        previous_raw: None,
        message: None,
    })
}

/// A detail of shop/web-03, fetched 5 s ago, with three versions and two deltas in its
/// history.
fn detail() -> Detail {
    let mut detail = Detail::new(
        DetailTarget {
            kind: ResourceKind::Pods.into(),
            key: "shop/web-03".into(),
        },
        at(NOW - 6),
    );
    let pending = web_03("Pending", 41);
    let running = web_03("Running", 42);
    let mut relabelled = web_03("Running", 43);
    relabelled["metadata"]["labels"]["tier"] = json!("front");
    relabelled["metadata"]["managedFields"][0]["time"] = json!("2026-01-01T00:00:00Z");
    relabelled["spec"]["containers"][0]["ports"]
        .as_array_mut()
        .expect("ports")
        .push(json!({"containerPort": 443}));
    relabelled["status"]
        .as_object_mut()
        .expect("status")
        .remove("podIP");
    detail.set_history(vec![
        delta(0, DeltaType::Replaced, 400, "40"),
        entry(
            1,
            TapKind::Watch(WatchEventType::Added),
            300,
            Some(&pending),
            None,
        ),
        entry(
            2,
            TapKind::Watch(WatchEventType::Modified),
            120,
            Some(&running),
            Some(&pending),
        ),
        entry(
            3,
            TapKind::Watch(WatchEventType::Modified),
            30,
            Some(&relabelled),
            Some(&running),
        ),
        delta(4, DeltaType::Updated, 29, "43"),
    ]);
    detail.loaded(relabelled, at(NOW - 5));
    detail
}

fn header() -> Header {
    Header {
        events_per_second: 3.0,
        ..tui::pods_header()
    }
}

/// Draws the main screen with the detail over it, through the app's own frame.
fn terminal(detail: &mut Detail, width: u16, height: u16, color: bool) -> Terminal<TestBackend> {
    let mut state = UiState::new(false);
    state.mode = InputMode::Detail;
    let header = header();
    let parts = Parts {
        header: &header,
        // The detail covers the table: no rows, no columns.
        columns: &[],
        with_namespace: true,
        now: at(NOW),
        color,
    };
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    draw::frame(&mut terminal, &mut state, Some(detail), &parts, |_, _| {
        Window {
            offset: 0,
            total: 40,
            rows: Vec::new(),
            selected: None,
        }
    })
    .expect("draws");
    terminal
}

fn render(detail: &mut Detail, width: u16, height: u16) -> String {
    terminal(detail, width, height, false).backend().to_string()
}

#[test]
fn yaml_tab_hides_managed_fields() {
    let mut detail = detail();
    let text = render(&mut detail, 90, 24);
    assert!(!text.contains("│  managedFields:"), "{text}");
    assert!(text.contains("managedFields: 2 hidden (m)"), "{text}");
    insta::assert_snapshot!(text);
}

/// The Describe tab of a pod with a long Events message, as `d` opens it.
fn described() -> Detail {
    let mut detail = detail();
    let mut object = web_03("Running", 43);
    object["metadata"]["uid"] = json!("u-1");
    let events = vec![json!({
        "type": "Warning", "reason": "BackOff", "count": 4,
        "message": "Back-off restarting failed container web in pod web-03_shop(u-1): the readiness probe failed on http://10.0.0.7:80/ready with status 503 three times in a row",
        "source": {"component": "kubelet"},
        "firstTimestamp": "2025-12-31T23:40:00Z", "lastTimestamp": "2025-12-31T23:58:00Z",
        "involvedObject": {"kind": "Pod", "name": "web-03"}
    })];
    let sources = kscope_index_views::describe::DescribeSources {
        object: object.clone(),
        events: Some(Ok(events)),
        related: Vec::new(),
    };
    let lines = kscope_index_views::describe::describe(
        &sources,
        kscope_resources::Timestamp::from_seconds(NOW),
    );
    detail.loaded_with(object, lines, at(NOW - 5));
    detail.tab = kscope_ui::detail::DetailTab::Describe;
    detail
}

#[test]
fn describe_tab_at_160x45_80x24_and_40x10() {
    for (width, height) in [(160, 45), (80, 24), (40, 10)] {
        let mut detail = described();
        let text = render(&mut detail, width, height);
        assert!(text.contains("Describe"), "{text}");
        if height > 20 {
            assert!(text.contains("│Node:         node-1/ "), "{text}");
        }
        if height > 40 {
            assert!(
                text.contains("Warning  BackOff  2m (x4 over 20m)  kubelet"),
                "{text}"
            );
        }
        insta::assert_snapshot!(format!("describe_tab_{width}x{height}"), text);
    }
}

#[test]
fn long_describe_lines_scroll_sideways_and_wrap() {
    let mut detail = described();
    let cut = render(&mut detail, 100, 45);
    assert!(cut.contains("long lines cut"), "{cut}");
    assert!(!cut.contains("three times in a row"), "{cut}");
    for _ in 0..40 {
        detail.apply(&Action::ScrollRight);
    }
    let scrolled = render(&mut detail, 100, 45);
    assert!(scrolled.contains("three times in a row"), "{scrolled}");
    assert!(
        !scrolled.contains("Name:   "),
        "the start scrolled off: {scrolled}"
    );
    detail.apply(&Action::ToggleWrap);
    let wrapped = render(&mut detail, 100, 45);
    assert!(
        wrapped.contains("Name:   ") && wrapped.contains("in a row"),
        "{wrapped}"
    );
    assert!(wrapped.contains("wrapped (w)"), "{wrapped}");
}

#[test]
fn yaml_tab_with_managed_fields_shown() {
    let mut detail = detail();
    detail.apply(&Action::ToggleManagedFields);
    let text = render(&mut detail, 90, 24);
    assert!(text.contains("│  managedFields:"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn yaml_scrolls_to_the_bottom_and_back() {
    let mut detail = detail();
    render(&mut detail, 90, 14);
    detail.apply(&Action::Bottom);
    let last = detail.yaml.lines.len() - detail.page;
    assert_eq!(detail.yaml_scroll, last);
    detail.apply(&Action::Down);
    assert_eq!(detail.yaml_scroll, last, "never past the end");
    detail.apply(&Action::PageUp);
    assert_eq!(detail.yaml_scroll, last.saturating_sub(detail.page));
    detail.apply(&Action::Top);
    assert_eq!(detail.yaml_scroll, 0);
}

#[test]
fn history_tab_lists_entries_newest_first() {
    let mut detail = detail();
    detail.apply(&Action::DetailTab);
    detail.apply(&Action::Down);
    let text = render(&mut detail, 100, 16);
    insta::assert_snapshot!(text);
}

#[test]
fn diff_of_a_history_entry() {
    let mut detail = detail();
    detail.apply(&Action::DetailTab);
    detail.apply(&Action::Down);
    detail.apply(&Action::OpenDiff);
    let text = render(&mut detail, 100, 16);
    insta::assert_snapshot!(text);

    // + green and - red with colours, none at all with NO_COLOR.
    let coloured = terminal(&mut detail, 100, 16, true);
    let plain = terminal(&mut detail, 100, 16, false);
    let fg = |terminal: &Terminal<TestBackend>, symbol: &str| {
        let buffer = terminal.backend().buffer();
        (0..buffer.area.height)
            .find_map(|y| {
                let cell = buffer.cell((1, y))?;
                (cell.symbol() == symbol).then_some(cell.fg)
            })
            .expect("a diff line with that sign")
    };
    assert_eq!(fg(&coloured, "+"), Color::Green);
    assert_eq!(fg(&coloured, "-"), Color::Red);
    assert_eq!(fg(&plain, "+"), Color::Reset);
    assert_eq!(fg(&plain, "-"), Color::Reset);

    // Esc goes back to the history, then closes the detail.
    assert_eq!(detail.apply(&Action::Back), None);
    assert!(detail.diff.is_none());
    assert_eq!(
        detail.apply(&Action::Back),
        Some(kscope_ui::effect::Effect::Close)
    );
}

#[test]
fn diffs_of_deltas_come_from_their_watch_event_additions_read_as_fields() {
    let mut detail = detail();
    detail.apply(&Action::DetailTab);
    detail.apply(&Action::OpenDiff);
    let text = render(&mut detail, 100, 12);
    assert!(text.contains("diff Updated rv 43"), "{text}");
    assert!(
        text.contains("object from its MODIFIED watch event"),
        "{text}"
    );
    assert!(text.contains("+ metadata.labels.tier: \"front\""), "{text}");
    detail.apply(&Action::Back);
    detail.apply(&Action::Bottom);
    detail.apply(&Action::OpenDiff);
    let text = render(&mut detail, 100, 12);
    assert!(text.contains("Replaced entries carry no object"), "{text}");
    detail.apply(&Action::Back);
    detail.apply(&Action::Up);
    detail.apply(&Action::OpenDiff);
    let text = render(&mut detail, 100, 12);
    assert!(text.contains("diff ADDED rv 41"), "{text}");
    assert!(
        text.contains("+ metadata.name: \"web-03\""),
        "an addition reads as its fields: {text}"
    );
}

#[test]
fn fetch_error_state() {
    let mut detail = Detail::new(
        DetailTarget {
            kind: ResourceKind::Pods.into(),
            key: "shop/gone".into(),
        },
        at(NOW - 3),
    );
    assert!(render(&mut detail, 90, 12).contains("loading…"));
    let error = FetchError::NotFound {
        object: "Pod shop/gone".into(),
    };
    detail.failed(error.to_string(), at(NOW - 2));
    insta::assert_snapshot!(render(&mut detail, 90, 12));
}

#[test]
fn detail_at_40x10() {
    let mut detail = detail();
    insta::assert_snapshot!(render(&mut detail, 40, 10));
}

#[test]
fn detail_help_lists_its_keys() {
    let mut detail = detail();
    detail.apply(&Action::ToggleHelp);
    let text = render(&mut detail, 90, 20);
    assert!(text.contains("detail keys"), "{text}");
    assert!(
        text.contains("show / hide metadata.managedFields"),
        "{text}"
    );
    detail.apply(&Action::Back);
    assert!(!detail.help);
}

/// At 160 columns every line of the detail's help is whole (the popup was 60 wide and cut
/// them); at 40 they wrap rather than being cut.
#[test]
fn detail_help_is_not_cut() {
    let keymap = kscope_config::Config::built_in()
        .expect("built-in config")
        .keys;
    let help = keymap.help(kscope_config::keys::Section::Detail);
    let mut detail = detail();
    detail.apply(&Action::ToggleHelp);
    let text = render(&mut detail, 160, 45);
    for (keys, what) in &help {
        assert!(text.contains(what), "{keys}: {what}\n{text}");
    }
    let narrow = render(&mut detail, 40, 30);
    assert!(!narrow.contains('…'), "{narrow}");
}

/// A small simulated cluster, a client for it, and the JSON list the sim answers at `path`.
async fn small_sim_listing(path: &str) -> (SimHandle, Cluster, Value) {
    let sim = Sim::start(SimConfig::with_size(20, 2, 2))
        .await
        .expect("sim starts");
    let cluster = Cluster::from_config(
        sim.kube_config().await.expect("kubeconfig"),
        "kscope-sim".into(),
    )
    .expect("client");
    let list = cluster
        .client
        .request_text(http::Request::get(path).body(Vec::new()).expect("request"))
        .await
        .expect("list");
    let list = serde_json::from_str(&list).expect("list JSON");
    (sim, cluster, list)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetches_a_real_pod_from_the_sim_and_404s_a_missing_one() {
    let (sim, cluster, list) = small_sim_listing("/api/v1/pods?limit=1").await;
    let meta = &list["items"][0]["metadata"];
    let (ns, name) = (
        meta["namespace"].as_str().expect("namespace"),
        meta["name"].as_str().expect("name"),
    );

    let object = fetch_object(&cluster.client, ResourceKind::Pods, Some(ns), name)
        .await
        .expect("fetch");
    assert_eq!(object["metadata"]["name"], name);

    // Through the controller, as the TUI does: loading, then the YAML.
    let tap = Tap::new(16, kscope_resources::secret::keepable_raw);
    let record = |rv: &str| {
        tap.record(
            TapKind::Watch(WatchEventType::Modified),
            TapRecord {
                key: Some(format!("{ns}/{name}").into()),
                resource_version: Some(rv.into()),
                raw: Some(Bytes::from(object.to_string())),
                message: None,
            },
        );
    };
    record("1");
    let mut controller = DetailController::new(cluster.client.clone(), Some(tap.clone()));
    controller.open(ResourceKind::Pods, &format!("{ns}/{name}"));
    let fetched = tokio::time::timeout(Duration::from_secs(10), controller.fetched())
        .await
        .expect("fetched in time")
        .expect("a result");
    controller.finish(fetched);
    let detail = controller.screen().expect("detail open");
    assert!(
        matches!(detail.fetch, FetchState::Loaded { .. }),
        "{:?}",
        detail.fetch
    );
    let yaml = detail.yaml.lines.join("\n");
    assert!(yaml.contains(&format!("name: {name}")), "{yaml}");
    assert!(!yaml.contains("managedFields"), "{yaml}");
    assert!(detail.yaml.hidden_managed_fields.is_some());
    assert_eq!(detail.history.len(), 1);
    // The history follows the tap while the detail is open.
    record("2");
    let detail = controller.screen().expect("detail open");
    let rvs: Vec<&str> = detail
        .history
        .iter()
        .map(|row| row.resource_version.as_str())
        .collect();
    assert_eq!(rvs, ["2", "1"]);

    // From the delta panel: an entry opens its object's detail on the entry's diff.
    let mut old = object.clone();
    old["status"]["phase"] = json!("Pending");
    let from_panel = Arc::new(TapEntry {
        seq: 7,
        at: SystemTime::now(),
        kind: TapKind::Watch(WatchEventType::Modified),
        key: Some(format!("{ns}/{name}").into()),
        resource_version: None,
        raw: Some(Bytes::from(object.to_string())),
        previous_raw: Some(Bytes::from(old.to_string())),
        message: None,
    });
    assert!(controller.open_entry(ResourceKind::Pods, from_panel));
    let detail = controller.screen().expect("detail open");
    let diff = detail.diff.as_ref().expect("diff shown");
    let lines = diff.doc.as_ref().expect("diff computed").lines.clone();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0].path, "status.phase");
    // Esc goes back where the diff was asked for: the table under the delta panel.
    assert!(!controller.apply(&Action::Back), "Esc closes the detail");
    assert!(!controller.is_open());

    let err = fetch_object(&cluster.client, ResourceKind::Pods, Some(ns), "no-such-pod")
        .await
        .expect_err("404");
    assert!(matches!(err, FetchError::NotFound { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("Pod {ns}/no-such-pod not found (404): it may have just been deleted")
    );
    let err = fetch_object(&cluster.client, ResourceKind::Pods, None, name)
        .await
        .expect_err("namespace needed");
    assert!(matches!(err, FetchError::Path(_)), "{err:?}");
    sim.shutdown().await;
}

#[test]
fn secret_values_never_reach_the_screen() {
    let mut detail = Detail::new(
        DetailTarget {
            kind: ResourceKind::Secrets.into(),
            key: "shop/db-creds".into(),
        },
        at(NOW - 2),
    );
    detail.loaded(
        json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "db-creds", "namespace": "shop", "resourceVersion": "9"},
            "type": "Opaque",
            "data": {"password": "aHVudGVyMg==", "user": "YWRtaW4="}
        }),
        at(NOW - 1),
    );
    let text = render(&mut detail, 90, 16);
    for clear in ["aHVudGVyMg==", "hunter2", "YWRtaW4=", "admin"] {
        assert!(!text.contains(clear), "{clear} on screen:\n{text}");
    }
    insta::assert_snapshot!(text);
}

/// Every value of a Secret's data, base64 as sent and decoded.
fn secret_values(secret: &Value) -> Vec<String> {
    use base64::Engine as _;
    let mut values = Vec::new();
    for value in secret["data"]
        .as_object()
        .into_iter()
        .flat_map(|d| d.values())
    {
        let encoded = value.as_str().unwrap_or_default().to_string();
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(&encoded)
            .expect("base64");
        values.push(String::from_utf8_lossy(&decoded).into_owned());
        values.push(encoded);
    }
    values
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_sim_secret_shows_masked_values_only() {
    let (sim, cluster, list) = small_sim_listing("/api/v1/secrets").await;
    // The one applied with kubectl carries its values in the last-applied annotation too.
    let applied = list["items"]
        .as_array()
        .and_then(|items| {
            items.iter().find(|s| {
                s["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
                    .is_string()
            })
        })
        .expect("an applied Secret");
    let values = secret_values(applied);
    assert_eq!(
        values.len(),
        4,
        "password and username, encoded and decoded"
    );
    let (ns, name) = (
        applied["metadata"]["namespace"]
            .as_str()
            .expect("namespace"),
        applied["metadata"]["name"].as_str().expect("name"),
    );

    let mut controller = DetailController::new(cluster.client.clone(), None);
    controller.open(ResourceKind::Secrets, &format!("{ns}/{name}"));
    let fetched = tokio::time::timeout(Duration::from_secs(10), controller.fetched())
        .await
        .expect("fetched in time")
        .expect("a result");
    controller.finish(fetched);
    controller.apply(&Action::ToggleManagedFields);
    let detail = controller.screen().expect("detail open");
    assert!(
        matches!(detail.fetch, FetchState::Loaded { .. }),
        "{:?}",
        detail.fetch
    );
    let yaml = detail.yaml.lines.join("\n");
    assert!(yaml.contains(&format!("name: {name}")), "{yaml}");
    assert!(yaml.contains("password: •••••••• (24 bytes)"), "{yaml}");
    assert_eq!(detail.yaml.masked, 3, "two data values and the annotation");
    for value in &values {
        assert!(!yaml.contains(value.as_str()), "{value} shown:\n{yaml}");
    }
    // The describe, as kubectl's, gives sizes only.
    let described = detail.describe.join("\n");
    assert!(described.contains("password:  24 bytes"), "{described}");
    for value in &values {
        assert!(
            !described.contains(value.as_str()),
            "{value} shown:\n{described}"
        );
    }
    sim.shutdown().await;
}
