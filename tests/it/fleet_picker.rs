//! The `:ctx` picker as a fleet chooser, against `kscope sim --clusters 3`: space marks
//! contexts (ticked on screen), Enter with marks opens them all as one merged table, as
//! `:ctx a,b` does.

use std::collections::BTreeSet;
use std::time::Duration;

use kscope_client::cluster::{ClusterArgs, NamespaceScope};
use kscope_resources::ResourceKind;
use kscope_ui::action::{Action, InputMode};
use kscope_ui::effect::Follow;
use kscope_ui::nav::ViewSpec;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use crate::common::cli::{sim_clusters, temp_dir};
use crate::common::tui::{AppStart, stable, wait_rows};
use crate::tui_keys::run_command;

/// The screen as [`stable`] gives it, made steadier still: the resource version the header
/// watches at (which the sim's controllers move) and the event rate (also where the header
/// wraps it) left out, every age one `~~` whatever its length, no trailing blanks.
pub(crate) fn screen(app: &mut kscope_ui::app::App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    app.draw(&mut terminal).expect("draws");
    stable(&terminal.backend().to_string())
        .lines()
        .map(|line| {
            let line = match line.find(" ev/") {
                Some(at) => {
                    let number = line[..at]
                        .trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '#');
                    format!("{number}#{}", &line[at..])
                }
                None => line.to_string(),
            };
            let line = match line.find(" rv ") {
                Some(at) => {
                    let digits = line[at + 4..]
                        .chars()
                        .take_while(char::is_ascii_digit)
                        .count();
                    format!("{} rv #{}", &line[..at], &line[at + 4 + digits..])
                }
                None => line.to_string(),
            };
            let mut steady = String::new();
            for c in line.chars() {
                if !(c == '~' && steady.ends_with("~~")) {
                    steady.push(c);
                }
            }
            // TestBackend quotes each line: the blanks to drop are inside the quotes.
            format!("{}\"", steady.trim_end_matches('"').trim_end())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_context_picker_opens_the_marked_contexts_as_one_fleet() {
    let dir = temp_dir("fleet-picker");
    let (mut sim, kubeconfig) = sim_clusters(
        &dir,
        3,
        &["--pods", "6", "--nodes", "2", "--namespaces", "1"],
    )
    .await;
    let args = ClusterArgs {
        kubeconfig: Some(kubeconfig.clone()),
        all_namespaces: true,
        ..ClusterArgs::default()
    };
    let cluster = args.connect().await.expect("first context");
    let view = ViewSpec::new(ResourceKind::Nodes, NamespaceScope::All);
    let mut app = AppStart::new(cluster, view)
        .kubeconfig_contexts(&args)
        .start();
    wait_rows(&mut app, "the first cluster's nodes", |_, w| w.total == 2).await;

    // Space on the third and second contexts marks them, in any order.
    run_command(&mut app, "ctx");
    assert_eq!(app.state().mode, InputMode::Contexts);
    app.apply(Action::Bottom);
    app.apply(Action::MarkContext);
    app.apply(Action::Up);
    app.apply(Action::MarkContext);
    insta::assert_snapshot!("fleet_picker_80x24", screen(&mut app, 80, 24));
    insta::assert_snapshot!("fleet_picker_160x45", screen(&mut app, 160, 45));

    assert!(
        app.apply(Action::ChooseValue).is_empty(),
        "the switch waits for the connections"
    );
    let connected = tokio::time::timeout(Duration::from_secs(30), app.context_connected())
        .await
        .expect("connected in time")
        .expect("a result");
    assert_eq!(app.finish_context(connected), [Follow::Table, Follow::Rows]);
    assert_eq!(app.state().mode, InputMode::Normal);
    assert_eq!(app.header().context, "kscope-sim-2,kscope-sim-3");
    let merged = wait_rows(&mut app, "both marked clusters' nodes", |app, w| {
        w.total == 4 && app.header().sync.matches(" watching").count() == 2
    })
    .await;
    let clusters: BTreeSet<&str> = merged.rows.iter().map(|r| r.cells[0].as_str()).collect();
    assert_eq!(clusters, BTreeSet::from(["kscope-sim-2", "kscope-sim-3"]));

    let _ = sim.kill();
    let _ = sim.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
