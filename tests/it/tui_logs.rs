//! The log view: pod logs read over real HTTP from the simulated cluster (follow, tail,
//! previous, the kubelet's refusals), `l` through the app on a pod and on a Deployment, and
//! TestBackend snapshots of the view at 160x45, 80x24 and 40x10.

use std::time::{Duration, Instant, SystemTime};

use kscope_client::cluster::{Cluster, NamespaceScope};
use kscope_client::logs::{LogError, LogLine, LogOptions, open_log};
use kscope_config::LogSettings;
use kscope_index_views::live::Window;
use kscope_resources::ResourceKind;
use kscope_sim::{Faults, Sim, SimConfig, SimHandle};
use kscope_ui::action::{Action, InputMode};
use kscope_ui::app::App;
use kscope_ui::draw::{self, Header, Parts};
use kscope_ui::logs::view::{LogView, Source, SourceState};
use kscope_ui::logs::{LogController, LogTarget};
use kscope_ui::nav::ViewSpec;
use kscope_ui::state::UiState;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::{Color, Modifier};
use serde_json::Value;

use crate::common::tui::{self, AppStart};

/// How long a test waits for the sim to do something it does within seconds.
const BOUND: Duration = Duration::from_secs(60);

async fn sim() -> (SimHandle, Cluster) {
    let sim = Sim::start(SimConfig::with_size(120, 3, 2))
        .await
        .expect("sim");
    let cluster = Cluster::from_config(sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    (sim, cluster)
}

async fn get(cluster: &Cluster, path: &str) -> Value {
    let request = http::Request::get(path).body(Vec::new()).expect("request");
    let text = cluster.client.request_text(request).await.expect("GET");
    serde_json::from_str(&text).expect("JSON")
}

fn running_without_restarts(pod: &Value) -> bool {
    let statuses = pod["status"]["containerStatuses"].as_array();
    pod["status"]["phase"] == "Running"
        && statuses.is_some_and(|ss| {
            ss.iter()
                .all(|s| s["state"]["running"].is_object() && s["restartCount"].as_u64() == Some(0))
        })
}

/// A running pod that never restarted: (namespace, name, its first container).
async fn running_pod(cluster: &Cluster) -> (String, String, String) {
    let pods = get(cluster, "/api/v1/pods").await;
    let pod = pods["items"]
        .as_array()
        .and_then(|items| items.iter().find(|p| running_without_restarts(p)))
        .expect("a running pod")
        .clone();
    let text = |v: &Value| v.as_str().expect("string").to_string();
    (
        text(&pod["metadata"]["namespace"]),
        text(&pod["metadata"]["name"]),
        text(&pod["spec"]["containers"][0]["name"]),
    )
}

/// Every line of a log that ends by itself.
async fn read_all(
    cluster: &Cluster,
    ns: &str,
    pod: &str,
    options: &LogOptions,
) -> Result<Vec<LogLine>, LogError> {
    let mut stream = open_log(&cluster.client, ns, pod, options, 1 << 14).await?;
    let mut lines = Vec::new();
    while let Some(batch) = tokio::time::timeout(BOUND, stream.next_batch())
        .await
        .expect("the log ends")
    {
        lines.extend(batch?);
    }
    Ok(lines)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pod_logs_over_http_follow_tail_and_refuse_as_the_kubelet_does() {
    let (sim, cluster) = sim().await;
    let (ns, pod, container) = running_pod(&cluster).await;
    let with = |f: &dyn Fn(&mut LogOptions)| {
        let mut options = LogOptions {
            container: Some(container.clone()),
            timestamps: true,
            ..LogOptions::default()
        };
        f(&mut options);
        options
    };

    let tail = read_all(&cluster, &ns, &pod, &with(&|o| o.tail_lines = Some(5)))
        .await
        .expect("tail");
    assert_eq!(tail.len(), 5, "{tail:?}");
    assert!(tail.iter().all(|l| l.time.is_some() && !l.cut), "{tail:?}");
    assert!(tail.windows(2).all(|w| w[0].time <= w[1].time));

    // limitBytes cuts the body; the last line has no newline and still comes.
    let limited = read_all(
        &cluster,
        &ns,
        &pod,
        &with(&|o| {
            o.timestamps = false;
            o.limit_bytes = Some(10);
        }),
    )
    .await
    .expect("limited");
    assert_eq!(limited.len(), 1);
    assert_eq!(limited[0].text.len(), 10);

    // Follow: a line written after the request arrives on the open stream.
    let started = i64::try_from(jiff::Timestamp::now().as_nanosecond()).expect("fits");
    let options = with(&|o| {
        o.follow = true;
        o.tail_lines = Some(1);
    });
    let mut stream = open_log(&cluster.client, &ns, &pod, &options, 1 << 14)
        .await
        .expect("follow");
    let deadline = Instant::now() + BOUND;
    loop {
        let batch = tokio::time::timeout_at(deadline.into(), stream.next_batch())
            .await
            .expect("a new line within the bound")
            .expect("the follow stays open")
            .expect("lines");
        if batch.iter().any(|l| l.time.is_some_and(|t| t > started)) {
            break;
        }
    }
    drop(stream);

    // The kubelet's refusals, said as it says them.
    let err = read_all(
        &cluster,
        &ns,
        &pod,
        &with(&|o| o.container = Some("nosuch".into())),
    )
    .await
    .expect_err("no such container");
    assert!(matches!(err, LogError::Refused { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("container nosuch is not valid for pod {pod}")
    );
    let err = read_all(&cluster, &ns, &pod, &with(&|o| o.previous = true))
        .await
        .expect_err("no previous instance");
    assert!(
        err.to_string().contains("previous terminated container") && !err.transient(),
        "{err}"
    );
    let err = read_all(&cluster, &ns, "nosuch", &with(&|_| {}))
        .await
        .expect_err("no such pod");
    assert!(matches!(err, LogError::NotFound { .. }), "{err:?}");
    assert!(
        err.to_string().contains("pod nosuch not found (404)"),
        "{err}"
    );

    // RBAC's 403, for the log and for the view that could not read the pod.
    let mut faults = Faults::default();
    faults.apply(&"forbid=pods".parse().expect("fault"));
    sim.set_faults(faults);
    let err = read_all(&cluster, &ns, &pod, &with(&|_| {}))
        .await
        .expect_err("forbidden");
    assert!(matches!(err, LogError::Forbidden { .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with(&format!("pod {pod}: reading logs is forbidden (403)")),
        "{err}"
    );
    let mut logs = LogController::new(cluster.client.clone(), LogSettings::default());
    let target = LogTarget::Pod {
        namespace: ns.clone(),
        name: pod.clone(),
    };
    let mut view = logs.open(target, false);
    while view.notice.is_none() {
        let arrival = tokio::time::timeout(BOUND, logs.arrived())
            .await
            .expect("an answer within the bound")
            .expect("the controller's channel");
        logs.take(Some(&mut view), arrival);
    }
    let notice = view.notice.unwrap_or_default();
    assert!(notice.contains("forbidden (403)"), "{notice}");
    sim.shutdown().await;
}

/// Selects the row of `name` by filtering the table to it.
async fn select(app: &mut App, name: &str) {
    app.apply(Action::OpenFilter);
    for c in name.chars() {
        app.apply(Action::FilterChar(c));
    }
    app.apply(Action::FilterAccept);
    let deadline = Instant::now() + BOUND;
    loop {
        let window = app.window(20);
        let selected = app.table().selected();
        if selected
            .as_deref()
            .is_some_and(|k| k.ends_with(&format!("/{name}")))
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{name} never selected: {window:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Takes the log view's batches until `ok` says it has what the test waits for.
async fn wait_logs(app: &mut App, what: &str, ok: impl Fn(&LogView) -> bool) {
    let deadline = Instant::now() + BOUND;
    loop {
        let view = app.state().logs.as_ref().expect("the log view is open");
        if ok(view) {
            return;
        }
        let waited = tokio::time::timeout_at(deadline.into(), app.next_logs()).await;
        let view = app.state().logs.as_ref().expect("the log view is open");
        assert!(
            waited.is_ok_and(|more| more),
            "timed out waiting for {what}: {:?} {:?}, {} lines",
            view.notice,
            view.sources,
            view.ring.len()
        );
    }
}

fn screen(app: &mut App, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    app.draw(&mut terminal).expect("draws");
    terminal
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l_on_a_pod_follows_searches_filters_and_saves() {
    let (sim, cluster) = sim().await;
    let (ns, pod, _) = running_pod(&cluster).await;
    let saved = std::env::temp_dir().join(format!("kscope-logs-test-{}", std::process::id()));
    let settings = LogSettings {
        tail_lines: 20,
        save_dir: Some(saved.clone()),
        ..LogSettings::default()
    };
    let view = ViewSpec::new(ResourceKind::Pods, NamespaceScope::One(ns.clone()));
    let mut app = AppStart::new(cluster, view).log_settings(settings).start();
    select(&mut app, &pod).await;
    app.apply(Action::OpenLogs);
    assert_eq!(app.state().mode, InputMode::Logs);
    wait_logs(&mut app, "the pod's or its picker", |v| {
        v.picker.is_some() || !v.ring.is_empty()
    })
    .await;
    if app
        .state()
        .logs
        .as_ref()
        .is_some_and(|v| v.picker.is_some())
    {
        // Several containers: all of them, tagged.
        app.apply(Action::ChooseValue);
    }
    wait_logs(&mut app, "the tail", |v| v.ring.len() >= 20).await;
    let text = screen(&mut app, 160, 45).backend().to_string();
    assert!(text.contains(&format!("pod {ns}/{pod}")), "{text}");
    assert!(text.contains("following"), "{text}");

    // New lines arrive while following.
    let newest = |app: &App| {
        let view = app.state().logs.as_ref().expect("open");
        view.ring.iter().next_back().and_then(|(_, l)| l.time)
    };
    let before = newest(&app);
    wait_logs(&mut app, "a new line", |v| {
        v.ring.iter().next_back().and_then(|(_, l)| l.time) > before
    })
    .await;

    // Search for a piece of the newest line: it is highlighted, and n moves to a match.
    let needle: String = {
        let view = app.state().logs.as_ref().expect("open");
        let (_, line) = view.ring.iter().next_back().expect("a line");
        line.text.chars().take(8).collect::<String>().to_lowercase()
    };
    app.apply(Action::OpenLogSearch);
    assert_eq!(app.state().mode, InputMode::LogSearch);
    for c in needle.chars() {
        app.apply(Action::FilterChar(c));
    }
    app.apply(Action::FilterAccept);
    assert_eq!(app.state().mode, InputMode::Logs);
    let matches = app
        .state()
        .logs
        .as_ref()
        .expect("open")
        .search
        .matches
        .len();
    assert!(matches >= 1, "{needle:?} matches nothing");
    app.apply(Action::NextMatch);
    let view = app.state().logs.as_ref().expect("open");
    assert!(!view.follow, "n pauses on the match");
    assert!(view.search.current.is_some());
    let terminal = screen(&mut app, 160, 45);
    let buffer = terminal.backend().buffer();
    let highlighted = buffer
        .content()
        .iter()
        .any(|cell| cell.bg == Color::Yellow || cell.modifier.contains(Modifier::REVERSED));
    assert!(highlighted, "{}", terminal.backend());
    assert!(
        terminal.backend().to_string().contains("match "),
        "{}",
        terminal.backend()
    );

    // Only the matching lines, then all again; End follows again.
    app.apply(Action::ToggleLogFilter);
    let view = app.state().logs.as_ref().expect("open");
    assert_eq!(view.view_len(), view.search.matches.len());
    app.apply(Action::ToggleLogFilter);
    app.apply(Action::Bottom);
    assert!(app.state().logs.as_ref().expect("open").follow);

    // Saved to a file, and the view says where.
    app.apply(Action::SaveLogs);
    wait_logs(&mut app, "the save", |v| {
        v.notice
            .as_deref()
            .is_some_and(|n| n.starts_with("saved to"))
    })
    .await;
    let notice = app.state().logs.as_ref().and_then(|v| v.notice.clone());
    let path = notice
        .as_deref()
        .and_then(|n| n.strip_prefix("saved to "))
        .expect("a path");
    let contents = std::fs::read_to_string(path).expect("the saved file");
    assert!(contents.lines().count() >= 20, "{contents}");
    assert!(std::path::Path::new(path).starts_with(&saved));

    // Esc drops the search first, then closes the view.
    app.apply(Action::Back);
    assert!(
        app.state()
            .logs
            .as_ref()
            .expect("open")
            .search
            .matcher
            .is_none()
    );
    app.apply(Action::Back);
    assert_eq!(app.state().mode, InputMode::Normal);
    assert!(app.state().logs.is_none());
    let _ = std::fs::remove_dir_all(&saved);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l_on_a_deployment_interleaves_its_pods_and_follows_them_coming_and_going() {
    let (sim, cluster) = sim().await;
    let deployments = get(&cluster, "/apis/apps/v1/deployments").await;
    let deployment = deployments["items"]
        .as_array()
        .and_then(|items| {
            items
                .iter()
                .find(|d| d["status"]["availableReplicas"].as_u64() >= Some(2))
        })
        .expect("a deployment with two available pods")
        .clone();
    let ns = deployment["metadata"]["namespace"]
        .as_str()
        .expect("ns")
        .to_string();
    let name = deployment["metadata"]["name"]
        .as_str()
        .expect("name")
        .to_string();
    let settings = LogSettings {
        tail_lines: 30,
        ..LogSettings::default()
    };
    let view = ViewSpec::new(ResourceKind::Deployments, NamespaceScope::One(ns.clone()));
    let mut app = AppStart::new(cluster.clone(), view)
        .log_settings(settings)
        .start();
    select(&mut app, &name).await;
    app.apply(Action::OpenLogs);
    let streaming = |v: &LogView| {
        v.sources
            .iter()
            .filter(|s| s.state == SourceState::Streaming)
            .count()
    };
    wait_logs(&mut app, "two pods streaming", |v| {
        streaming(v) >= 2 && v.ring.len() >= 60
    })
    .await;
    let view = app.state().logs.as_ref().expect("open");
    assert_eq!(view.title, format!("deployment {ns}/{name}"));
    assert!(
        view.sources
            .iter()
            .all(|s| s.tag == format!("[{}/{}]", s.pod, s.container)),
        "{:?}",
        view.sources
    );
    let times: Vec<i64> = view.ring.iter().filter_map(|(_, l)| l.time).collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "interleaved by time"
    );
    // A pod deleted is marked ended, and its replacement is read.
    let gone = view.sources[0].pod.clone();
    let known: Vec<String> = view.sources.iter().map(|s| s.pod.clone()).collect();
    let text = screen(&mut app, 160, 45).backend().to_string();
    assert!(text.contains(&format!("[{gone}/")), "{text}");
    let request = http::Request::delete(format!("/api/v1/namespaces/{ns}/pods/{gone}"))
        .body(Vec::new())
        .expect("request");
    cluster.client.request_text(request).await.expect("DELETE");
    wait_logs(&mut app, "the deleted pod ended and a new one read", |v| {
        let ended = v
            .sources
            .iter()
            .filter(|s| s.pod == gone)
            .all(|s| matches!(s.state, SourceState::Ended(_)));
        let replaced = v
            .sources
            .iter()
            .any(|s| !known.contains(&s.pod) && s.state == SourceState::Streaming);
        ended && replaced
    })
    .await;
    sim.shutdown().await;
}

// --- Snapshots: a hand-made view, drawn through the app's own frame.

/// 2026-01-01T00:00:00Z.
const NOW: i64 = 1_767_225_600;

fn header() -> Header {
    Header {
        events_per_second: 3.0,
        ..tui::header("deployments", "namespace shop")
    }
}

/// A deployment's two pods, one of which went, with a search for "error".
fn deployment_view() -> LogView {
    let mut view = LogView::new("deployment shop/web".into(), "shop".into(), 1000, 1000);
    for (pod, state) in [
        ("web-7d4b9-abcde", SourceState::Streaming),
        (
            "web-7d4b9-fghij",
            SourceState::Ended("the pod was deleted".into()),
        ),
    ] {
        view.sources.push(Source {
            pod: pod.into(),
            container: "app".into(),
            tag: format!("[{pod}/app]"),
            state,
        });
    }
    for i in 0..60u16 {
        let text = if i % 7 == 3 {
            format!(
                r#"{{"level":"error","msg":"upstream timed out","request":{i},"path":"/api/v1/orders/{i}/items?expand=all&page=2"}}"#
            )
        } else {
            format!(
                "10.64.0.{i} - - \"GET /healthz HTTP/1.1\" 200 {} \"-\" \"kube-probe/1.35\"",
                100 + i
            )
        };
        view.take(
            i % 2,
            vec![LogLine {
                time: Some((NOW + i64::from(i)) * 1_000_000_000),
                text,
                cut: i == 59,
            }],
        );
    }
    view.set_search("error");
    view.search.input = "error".into();
    view
}

fn render(view: LogView, mode: InputMode, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut state = UiState::new(false);
    state.mode = mode;
    state.logs = Some(view);
    let header = header();
    let parts = Parts {
        header: &header,
        columns: &[],
        with_namespace: false,
        now: SystemTime::UNIX_EPOCH + Duration::from_secs(NOW as u64),
        color: true,
    };
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    draw::frame(&mut terminal, &mut state, None, &parts, |_, _| Window {
        offset: 0,
        total: 0,
        rows: Vec::new(),
        selected: None,
    })
    .expect("draws");
    terminal
}

#[test]
fn log_view_at_160x45_follows_tagged_and_highlighted() {
    let terminal = render(deployment_view(), InputMode::Logs, 160, 45);
    let text = terminal.backend().to_string();
    assert!(
        text.contains("[web-7d4b9-fghij/app] ended: the pod was deleted"),
        "{text}"
    );
    let buffer = terminal.backend().buffer();
    assert!(
        buffer.content().iter().any(|c| c.bg == Color::Yellow),
        "a match is highlighted"
    );
    insta::assert_snapshot!(text);
}

/// `?` in the log view shows the log view's keys with what they do there (`g` is the
/// oldest kept line, not the first row), and the footer offers it.
#[test]
fn question_mark_shows_the_log_keys() {
    let mut view = deployment_view();
    let text = render(view.clone(), InputMode::Logs, 120, 40)
        .backend()
        .to_string();
    assert!(text.contains("? keys"), "{text}");
    view.handle_key(&Action::ToggleHelp);
    let text = render(view, InputMode::Logs, 120, 40).backend().to_string();
    assert!(text.contains("log keys (Esc closes)"), "{text}");
    assert!(text.contains("the oldest line kept"), "{text}");
    assert!(
        text.contains("show only the lines that match the search"),
        "{text}"
    );
    insta::assert_snapshot!(text);
}

/// A previous instance's log is not "following" (it came whole), and one match is "1
/// match", not "1 matches".
#[test]
fn the_log_status_line_says_previous_and_counts_in_english() {
    let mut view = deployment_view();
    view.previous = true;
    view.set_search("orders/31/");
    let text = render(view, InputMode::Logs, 160, 45).backend().to_string();
    assert!(text.contains("previous instance"), "{text}");
    assert!(!text.contains("following"), "{text}");
    assert!(text.contains(" 1 match"), "{text}");
    assert!(!text.contains("1 matches"), "{text}");
}

#[test]
fn log_view_at_80x24_paused_with_timestamps_and_wrap() {
    let mut view = deployment_view();
    view.timestamps = true;
    view.wrap = true;
    // Keys act on what the last frame showed: 18 rows of 78 columns here.
    view.prepare(18, 78);
    view.handle_key(&Action::PageUp);
    view.handle_key(&Action::PrevMatch);
    let text = render(view, InputMode::Logs, 80, 24).backend().to_string();
    assert!(text.contains("paused"), "{text}");
    assert!(text.contains("2026-01-01T00:00:"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn log_view_at_40x10_filtered_while_typing_a_search() {
    let mut view = deployment_view();
    view.handle_key(&Action::ToggleLogFilter);
    let text = render(view, InputMode::LogSearch, 40, 10)
        .backend()
        .to_string();
    assert!(text.contains("/error"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn container_picker_and_a_refusal() {
    let mut view = LogView::new("pod shop/web-1".into(), "shop".into(), 100, 100);
    view.picker = Some(kscope_ui::logs::view::Picker {
        pod: "web-1".into(),
        containers: vec!["app".into(), "istio-proxy".into()],
        selected: 1,
    });
    insta::assert_snapshot!(render(view, InputMode::Logs, 80, 24).backend().to_string());
    let mut view = LogView::new("pod shop/stuck".into(), "shop".into(), 100, 100);
    view.notice =
        Some("container \"main\" in pod \"stuck\" is waiting to start: ContainerCreating".into());
    let text = render(view, InputMode::Logs, 80, 24).backend().to_string();
    assert!(
        text.contains("waiting to start: ContainerCreating"),
        "{text}"
    );
}

/// `l` on a StatefulSet (a kind found by discovery, with no projection of its own) reads the
/// pods its selector picks, as for a Deployment.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l_on_a_statefulset_reads_its_pods() {
    use kscope_client::discovery::{Catalog, Discovery};

    let (sim, cluster) = sim().await;
    // One a client made, which the sim's StatefulSet controller and kubelets run (the
    // seeded ones are listed with their status but have no pods behind them).
    let (ns, name) = ("default".to_string(), "logdb".to_string());
    let set = serde_json::json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "replicas": 2, "serviceName": name, "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "db", "image": "postgres:16"}]}
            }
        }
    });
    let request = http::Request::post(format!("/apis/apps/v1/namespaces/{ns}/statefulsets"))
        .header("content-type", "application/json")
        .body(set.to_string().into_bytes())
        .expect("request");
    cluster.client.request_text(request).await.expect("created");
    let deadline = Instant::now() + BOUND;
    while get(
        &cluster,
        &format!("/apis/apps/v1/namespaces/{ns}/statefulsets/{name}"),
    )
    .await["status"]["readyReplicas"]
        .as_u64()
        < Some(2)
    {
        assert!(
            Instant::now() < deadline,
            "the StatefulSet's pods never got ready"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let discovery = Discovery::run(&cluster.client).await.expect("discovers");
    let kind = discovery.resolve("sts").expect("statefulsets are served");
    let view = ViewSpec::new(kind, NamespaceScope::One(ns.clone()));
    let mut app = AppStart::new(cluster.clone(), view)
        .catalog(Catalog::new(discovery))
        .log_settings(LogSettings {
            tail_lines: 10,
            ..LogSettings::default()
        })
        .start();
    select(&mut app, &name).await;
    app.apply(Action::OpenLogs);
    wait_logs(&mut app, "two of its pods streaming", |v| {
        v.sources
            .iter()
            .filter(|s| s.state == SourceState::Streaming && s.pod.starts_with(&name))
            .count()
            >= 2
    })
    .await;
    let view = app.state().logs.as_ref().expect("open");
    assert_eq!(view.title, format!("statefulset {ns}/{name}"));
    sim.shutdown().await;
}
