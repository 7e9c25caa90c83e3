//! One object's timeline in the TUI (`:timeline`) against the sim: a Deployment's as first
//! read, then live — `kubectl scale` and `kubectl label` each show a new version naming the
//! field changed and kubectl's manager of it; a snapshot at 80x24 with the resourceVersions,
//! times and generated names masked; Esc closes it.

use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kscope_client::cluster::{Cluster, NamespaceScope};
use kscope_resources::ResourceKind;
use kscope_sim::SimConfig;
use kscope_ui::action::{Action, InputMode};
use kscope_ui::app::App;
use kscope_ui::nav::ViewSpec;
use kscope_ui::timeline::TimelineView;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use crate::common::kubectl::Kubectl;
use crate::common::tui::{AppStart, wait_rows};

/// A hang guard for waits on the timeline, not a deadline the test is about.
const BOUND: Duration = Duration::from_secs(90);

pub(crate) fn run_command(app: &mut App, command: &str) {
    app.apply(Action::OpenCommand);
    for c in command.chars() {
        app.apply(Action::CommandChar(c));
    }
    app.apply(Action::CommandRun);
}

/// Waits until the open timeline satisfies `ok`.
pub(crate) async fn wait_timeline(
    app: &mut App,
    what: &str,
    ok: impl Fn(&TimelineView) -> bool,
) -> TimelineView {
    let deadline = Instant::now() + BOUND;
    loop {
        let view = app.state().timeline.clone().expect("the timeline is open");
        if ok(&view) {
            return view;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: never shown: {:#?}",
            view.rows()
        );
        app.next_timeline_change(Duration::from_millis(500)).await;
    }
}

/// Whether a version after the first read changed `path`, owned by `manager`.
fn changed_by(view: &TimelineView, path: &str, manager: &str) -> bool {
    view.entries.iter().any(|e| {
        e.what == "MODIFIED"
            && e.changes
                .iter()
                .any(|c| c.path == path && c.manager.as_deref() == Some(manager))
    })
}

/// The screen without what changes from run to run: the server's address (line one), the
/// header from its resourceVersion on, the generated part of the ReplicaSet's name, every
/// number (resourceVersions, times) as one `#`, and the padding that their widths move as
/// two blanks.
pub(crate) fn stable(text: &str) -> String {
    text.lines()
        .skip(1)
        .map(|line| {
            let mut line = line.trim_matches('"').trim_end().to_string();
            if let Some(at) = line.find("at rv ") {
                line.replace_range(at + "at rv ".len().., "#");
            }
            let mut out = String::new();
            let mut generated = false;
            for c in line.chars() {
                generated = (generated || out.ends_with("web-")) && c.is_ascii_alphanumeric();
                let c = if generated || c.is_ascii_digit() {
                    '#'
                } else {
                    c
                };
                let repeated =
                    (c == '#' && out.ends_with('#')) || (c == ' ' && out.ends_with("  "));
                if !repeated {
                    out.push(c);
                }
            }
            out
        })
        .collect::<Vec<String>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployments_timeline_shows_kubectl_scale_and_label_as_they_happen() {
    let Some(fx) = Kubectl::start_with("wb-timeline", SimConfig::with_size(4, 1, 1)).await else {
        return;
    };
    fx.ok(&["create", "namespace", "wbtl"]).await;
    fx.ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx",
        "--replicas=1",
        "-n",
        "wbtl",
    ])
    .await;

    let deadline = Instant::now() + BOUND;
    while fx
        .ok(&[
            "get",
            "deploy/web",
            "-n",
            "wbtl",
            "-o",
            "jsonpath={.status.readyReplicas}",
        ])
        .await
        .trim()
        != "1"
    {
        assert!(Instant::now() < deadline, "web never ready");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }

    let cluster = Cluster::from_config(fx.sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let view = ViewSpec::new(
        ResourceKind::Deployments,
        NamespaceScope::One("wbtl".into()),
    );
    let mut app = AppStart::new(cluster, view).discovered().await.start();
    wait_rows(&mut app, "web listed", |app, _| {
        app.table().selected().as_deref() == Some("wbtl/web")
    })
    .await;

    run_command(&mut app, "timeline");
    assert_eq!(app.state().mode, InputMode::Timeline);
    let first = wait_timeline(&mut app, "web as first read", |v| {
        v.entries.first().is_some_and(|e| {
            e.what == "STATE"
                && e.changes
                    .iter()
                    .any(|c| c.path == "spec.replicas" && c.manager.is_some())
        })
    })
    .await;
    assert_eq!(first.of.name, "web");
    // The object as first read, settled before the view opened: from the top.
    app.apply(Action::Top);
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    app.draw(&mut terminal).expect("draws");
    insta::assert_snapshot!(
        "timeline_of_a_deployment_80x24",
        stable(&terminal.backend().to_string())
    );

    app.apply(Action::Bottom);

    // Live: the scale and the label each arrive as a version naming kubectl's manager.
    fx.ok(&["scale", "deploy/web", "--replicas=3", "-n", "wbtl"])
        .await;
    let scaled = wait_timeline(&mut app, "the scale", |v| {
        v.entries.iter().any(|e| {
            e.what == "MODIFIED"
                && e.changes.iter().any(|c| {
                    c.path == "spec.replicas"
                        && c.manager
                            .as_deref()
                            .is_some_and(|m| m.starts_with("kubectl"))
                })
        })
    })
    .await;
    fx.ok(&["label", "deploy/web", "tier=front", "-n", "wbtl"])
        .await;
    let labelled = wait_timeline(&mut app, "the label", |v| {
        changed_by(v, "metadata.labels.tier", "kubectl-label")
    })
    .await;
    assert!(
        labelled.entries.len() > scaled.entries.len(),
        "the label is a new entry"
    );
    let rvs: Vec<u64> = labelled
        .entries
        .iter()
        .filter_map(|e| e.resource_version.parse().ok())
        .collect();
    assert!(
        rvs.windows(2).all(|w| w[0] <= w[1]),
        "by resourceVersion: {rvs:?}"
    );
    let last = labelled.rows().len() - 1;
    assert_eq!(labelled.selected, last, "the selection follows the end");

    let mut terminal = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    app.draw(&mut terminal).expect("draws");
    let text = terminal.backend().to_string();
    assert!(text.contains("kubectl-label"), "{text}");

    app.handle_event(&Event::Key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)));
    assert_eq!(app.state().mode, InputMode::Normal);
    assert!(app.state().timeline.is_none(), "Esc closes the timeline");
    app.shutdown().await;
}
