//! What a newcomer tried that went wrong ("edges"): each test here failed before its fix.
//! End to end in tmux (`kscope --demo`, each test on a tmux server and a state directory of
//! its own) where the behaviour is the terminal's, on the App or a drawn frame otherwise.

use crate::common::tmux::Session;

/// `kscope --demo` in a terminal of its own, with its own state directory (removed when
/// dropped): the session, then the directory.
struct Demo {
    session: Session,
    state: std::path::PathBuf,
}

impl Demo {
    /// Starts the demo in a `width`x`height` terminal; `None` (skipped) without tmux.
    fn start(test: &str, width: u16, height: u16) -> Option<Self> {
        crate::common::tools::required("tmux", "to run kscope in a real terminal")?;
        let name = format!("kscope-edges-{test}-{}", std::process::id());
        let state = std::env::temp_dir().join(&name);
        let command = format!(
            "env XDG_STATE_HOME={} {} --demo",
            state.display(),
            env!("CARGO_BIN_EXE_kscope")
        );
        let session = Session::alone_sized(name, &command, width, height);
        Some(Self { session, state })
    }

    /// Waits for the pods of the first list, returning the screen.
    fn listed(&self) -> String {
        self.session.wait_for("the initial list", |s| {
            s.contains("watching at rv") && table_rows(s).len() > 5
        })
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.state);
    }
}

/// The table's rows: the lines between the column titles and the status line.
fn table_rows(screen: &str) -> Vec<&str> {
    screen
        .lines()
        .skip(3)
        .take_while(|l| !l.starts_with('┌') && !l.starts_with("? help") && !l.starts_with('/'))
        .filter(|l| !l.trim().is_empty())
        .collect()
}

/// `/crash` finds the crash-looping pods by their STATUS (no pod is named so), as
/// `status=CrashLoopBackOff` does by its index; `/!crash` keeps every other pod.
#[test]
fn slash_crash_finds_the_crashing_pods() {
    let Some(demo) = Demo::start("crash", 160, 50) else {
        return;
    };
    demo.listed();
    let s = &demo.session;
    s.keys(&["/", "crash", "Enter"]);
    // The header says which filter its rows match once the view has run it.
    // Pods crash and recover meanwhile, and a capture can precede the view's change by a
    // frame: the screen must come to show only crashing pods, within the bound.
    let only = |s: &str, query: &str| {
        let rows = table_rows(s);
        s.contains(&format!("rows matching {query} "))
            && !rows.is_empty()
            && rows.iter().all(|r| r.contains("CrashLoopBackOff"))
    };
    s.wait_for("the crashing pods", |s| only(s, "crash"));
    s.keys(&["/", "C-u", "status=CrashLoopBackOff", "Enter"]);
    // The churn makes pods crash and recover meanwhile: the same kind of rows, not the same.
    s.wait_for("the status index", |s| only(s, "status=CrashLoopBackOff"));
    s.keys(&["/", "C-u", "!crash", "Enter"]);
    // A pod that starts crashing is dropped when the view applies its change, which a
    // capture can precede by a frame: the screen must come to show none, within the bound.
    let screen = s.wait_for("the other pods, none crashing", |s| {
        let others = table_rows(s);
        s.contains("rows matching !crash ")
            && !others.is_empty()
            && others.iter().all(|r| !r.contains("CrashLoopBackOff"))
    });
    assert!(!table_rows(&screen).is_empty(), "{screen}");
    s.keys(&["q"]);
    s.wait_exit("q");
}

/// At 80x24 the index column gives way before READY and RESTARTS lose their titles (they
/// were `RE…` twice), and a cut title keeps its sort arrow.
#[test]
fn at_80x24_ready_and_restarts_keep_their_titles() {
    let Some(demo) = Demo::start("titles", 80, 24) else {
        return;
    };
    let screen = demo.listed();
    let titles = screen
        .lines()
        .find(|l| l.contains("NAME"))
        .expect("the titles");
    assert!(titles.contains("READY"), "{screen}");
    assert!(titles.contains("REST"), "{screen}");
    assert!(!titles.contains("RE… "), "{screen}");
    demo.session.keys(&["q"]);
    demo.session.wait_exit("q");
}

/// An event dated after kscope's clock (the server's clock ahead) ages as `0s`, as
/// `kubectl get events` (printed by the server's clock) shows it, not `<invalid>`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_from_the_future_was_seen_0s_ago() {
    use kscope_client::cluster::Cluster;
    use kscope_resources::Timestamp;
    use kscope_sim::{Sim, SimConfig};

    use crate::common::tui::{AppStart, wait_rows};
    use crate::tui_keys::run_command;

    let sim = Sim::start(SimConfig::with_size(4, 1, 1))
        .await
        .expect("sim");
    let cluster = Cluster::from_config(sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let soon = Timestamp::from_seconds(Timestamp::now().seconds() + 3_600).to_string();
    let event = serde_json::json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "ahead", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default"},
        "reason": "Tested", "message": "from a clock ahead", "type": "Normal",
        "firstTimestamp": soon, "lastTimestamp": soon,
        "count": 1, "source": {"component": "test"}
    });
    let request = http::Request::post("/api/v1/namespaces/default/events")
        .header("content-type", "application/json")
        .body(event.to_string().into_bytes())
        .expect("request");
    cluster.client.request_text(request).await.expect("created");
    let mut app = AppStart::pods(cluster).discovered().await.start();
    wait_rows(&mut app, "pods", |_, w| w.total > 0).await;
    run_command(&mut app, "events -n default");
    let window = wait_rows(&mut app, "the event", |_, w| {
        w.rows.iter().any(|r| r.key.ends_with("/ahead"))
    })
    .await;
    let row = window
        .rows
        .iter()
        .find(|r| r.key.ends_with("/ahead"))
        .expect("the event");
    assert_eq!(row.cells[0], "0s", "{row:?}");
    sim.shutdown().await;
}

/// A name typed with the table focused: a letter bound to nothing says where text goes
/// (k9s's rule: keys there are commands), on the status line until the next key; and Esc
/// with the delta panel focused and no delta filter clears the table's filter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_text_and_esc_from_the_delta_panel() {
    use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
    use kscope_client::cluster::Cluster;
    use kscope_sim::{Sim, SimConfig};
    use kscope_ui::action::{Action, Focus};
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use crate::common::tui::{AppStart, wait_rows};

    let sim = Sim::start(SimConfig::with_size(4, 1, 1))
        .await
        .expect("sim");
    let cluster = Cluster::from_config(sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let mut app = AppStart::pods(cluster).panels().start();
    wait_rows(&mut app, "pods", |_, w| w.total > 0).await;
    let key = |c: char| Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    app.handle_event(&key('v'));
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).expect("terminal");
    app.draw(&mut terminal).expect("draws");
    let screen = terminal.backend().to_string();
    assert!(
        screen.contains("v is not a key here: / filters the rows by text"),
        "{screen}"
    );
    app.handle_event(&key('j'));
    app.draw(&mut terminal).expect("draws");
    assert!(
        !terminal.backend().to_string().contains("is not a key here"),
        "until the next key"
    );

    app.apply(Action::OpenFilter);
    for c in "phase=Running".chars() {
        app.apply(Action::FilterChar(c));
    }
    app.apply(Action::FilterAccept);
    assert_eq!(app.state().filter.input, "phase=Running");
    app.apply(Action::FocusNext);
    assert_eq!(app.state().focus, Focus::Deltas);
    app.handle_event(&Event::Key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)));
    assert_eq!(
        app.state().filter.input,
        "",
        "Esc cleared the table's filter"
    );
    sim.shutdown().await;
}

/// The start-up hint (the demo's `kubectl` line) is drawn dim, not in an error's red, and
/// goes with the first key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_start_up_hint_is_not_an_error() {
    use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
    use kscope_client::cluster::Cluster;
    use kscope_sim::{Sim, SimConfig};
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::style::Color;

    use crate::common::tui::{AppStart, wait_rows};

    let sim = Sim::start(SimConfig::with_size(4, 1, 1))
        .await
        .expect("sim");
    let cluster = Cluster::from_config(sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    let hint = "kubectl: export KUBECONFIG=/tmp/demo.yaml";
    let mut app = AppStart::pods(cluster)
        .start()
        .with_notice(hint.to_string());
    wait_rows(&mut app, "pods", |_, w| w.total > 0).await;
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).expect("terminal");
    app.draw(&mut terminal).expect("draws");
    let buffer = terminal.backend().buffer();
    let last = buffer.area.height - 1;
    let line: String = (0..buffer.area.width)
        .map(|x| buffer[(x, last)].symbol())
        .collect();
    assert!(line.starts_with(hint), "{line}");
    assert_ne!(buffer[(0, last)].fg, Color::Red, "{line}");
    app.handle_event(&Event::Key(KeyEvent::new(
        KeyCode::Char('j'),
        KeyModifiers::NONE,
    )));
    app.draw(&mut terminal).expect("draws");
    assert!(!terminal.backend().to_string().contains(hint));
    sim.shutdown().await;
}
