//! `:timeline` from an object's detail, against the sim's Widget controller: `:` in the
//! detail opens the command line over it (Esc comes back to the detail), and `:timeline`
//! there is the detail's object's — a Widget whose fields kubectl and the controller each
//! manage, named as such as first read and as a `kubectl patch` and the controller's
//! answer arrive; snapshots at 160x45 and 80x24 with the numbers masked.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kscope_client::cluster::Cluster;
use kscope_sim::SimConfig;
use kscope_ui::action::{Action, InputMode};
use kscope_ui::app::App;
use kscope_ui::effect::ObjectRef;
use kscope_ui::timeline::TimelineView;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::Value;

use crate::common::kubectl::Kubectl;
use crate::common::tui::AppStart;
use crate::wb_timeline_tui::{run_command, stable, wait_timeline};
use crate::wb_tree_tui::{select, wait_for};

fn key(app: &mut App, code: KeyCode) {
    app.handle_event(&Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

/// Whether some version (the first read, or one after it when `modified`) says `manager`
/// manages a field starting with `path`.
fn managed(view: &TimelineView, modified: bool, path: &str, manager: &str) -> bool {
    view.entries.iter().any(|e| {
        (e.what == "MODIFIED" || !modified)
            && e.changes
                .iter()
                .any(|c| c.path.starts_with(path) && c.manager.as_deref() == Some(manager))
    })
}

fn reconciled(w: &Value) -> bool {
    w["status"]["conditions"][0]["status"] == "True"
        && w["status"]["observedGeneration"] == w["metadata"]["generation"]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeline_from_a_widgets_detail_names_kubectl_and_the_controller() {
    let config = SimConfig::with_size(4, 1, 1).widget_controller(true);
    let Some(fx) = Kubectl::start_with("wb-timeline-detail", config).await else {
        return;
    };
    let path = fx.file(
        "widget.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: dial, namespace: default}\nspec: {size: small, replicas: 1}\n",
    );
    fx.ok(&["apply", "-f", &path]).await;
    wait_for(
        &fx,
        "dial reconciled",
        &["get", "widget/dial", "-n", "default"],
        reconciled,
    )
    .await;

    let cluster = Cluster::from_config(fx.sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let mut app = AppStart::pods(cluster).discovered().await.start();
    run_command(&mut app, "widgets -n default");
    select(&mut app, "dial", "dial").await;
    app.apply(Action::OpenDetail);
    assert_eq!(app.state().mode, InputMode::Detail);

    // `:` over the detail, and Esc back to it.
    key(&mut app, KeyCode::Char(':'));
    assert_eq!(app.state().mode, InputMode::Command);
    key(&mut app, KeyCode::Esc);
    assert_eq!(
        app.state().mode,
        InputMode::Detail,
        "Esc is back in the detail"
    );

    key(&mut app, KeyCode::Char(':'));
    for c in "timeline".chars() {
        key(&mut app, KeyCode::Char(c));
    }
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.state().mode, InputMode::Timeline);
    let of = ObjectRef {
        kind: "Widget".into(),
        namespace: Some("default".into()),
        name: "dial".into(),
    };
    assert_eq!(app.state().timeline.as_ref().map(|t| &t.of), Some(&of));

    // As first read: kubectl's apply manages the spec, the controller the status.
    let first = wait_timeline(&mut app, "dial as first read", |v| {
        managed(v, false, "spec.size", "kubectl-client-side-apply")
            && managed(v, false, "status.", "widget-controller")
    })
    .await;
    assert_eq!(first.entries[0].what, "STATE");
    app.apply(Action::Top);
    for (width, height) in [(160, 45), (80, 24)] {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
        app.draw(&mut terminal).expect("draws");
        let text = terminal.backend().to_string();
        assert!(text.contains("widget-controller"), "{text}");
        insta::assert_snapshot!(
            format!("timeline_of_a_widget_from_its_detail_{width}x{height}"),
            stable(&text)
        );
    }

    // Live: kubectl's patch, then the controller's status write answering it.
    app.apply(Action::Bottom);
    fx.ok(&[
        "patch",
        "widget/dial",
        "-n",
        "default",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":2}}"#,
    ])
    .await;
    let patched = wait_timeline(&mut app, "the patch and the controller's answer", |v| {
        managed(v, true, "spec.replicas", "kubectl-patch")
            && v.entries
                .iter()
                .skip_while(|e| {
                    !e.changes
                        .iter()
                        .any(|c| c.manager.as_deref() == Some("kubectl-patch"))
                })
                .any(|e| {
                    e.changes.iter().any(|c| {
                        c.path.starts_with("status.")
                            && c.manager.as_deref() == Some("widget-controller")
                    })
                })
    })
    .await;
    assert!(patched.entries.len() > first.entries.len());

    key(&mut app, KeyCode::Esc);
    assert_eq!(app.state().mode, InputMode::Normal);
    assert!(app.state().timeline.is_none(), "Esc closes the timeline");
    app.shutdown().await;
}
