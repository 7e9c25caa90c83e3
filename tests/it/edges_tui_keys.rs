//! The TUI parts of the "edges" issue a k9s user reaches for: per-column sort keys, search
//! and saving in the detail view, the delta panel's remembered state, focus and hints, the
//! header's room, namespaces that do not exist, help that is whole. Each test failed before
//! its change; they drive the App against a small sim and read drawn frames.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kscope_client::cluster::Cluster;
use kscope_sim::{Sim, SimConfig, SimHandle};
use kscope_ui::app::App;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use crate::common::tui::{AppStart, wait_rows};

/// A small sim and its cluster.
async fn sim() -> (SimHandle, Cluster) {
    let sim = Sim::start(SimConfig::with_size(4, 1, 1))
        .await
        .expect("sim");
    let cluster = Cluster::from_config(sim.kube_config().await.expect("config"), "sim".into())
        .expect("cluster");
    (sim, cluster)
}

/// A key as the terminal sends it: upper-case letters with shift, as crossterm reports them.
fn press(app: &mut App, code: KeyCode) {
    let modifiers = match code {
        KeyCode::Char(c) if c.is_ascii_uppercase() => KeyModifiers::SHIFT,
        _ => KeyModifiers::NONE,
    };
    app.handle_event(&Event::Key(KeyEvent::new(code, modifiers)));
}

fn ctrl(app: &mut App, c: char) {
    app.handle_event(&Event::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::CONTROL,
    )));
}

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
}

/// The frame drawn now, `width`x`height`, as text.
fn screen(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    app.draw(&mut terminal).expect("draws");
    terminal.backend().to_string()
}

/// The line of column titles.
fn titles(screen: &str) -> String {
    screen
        .lines()
        .find(|l| l.contains("NAME") && l.contains("AGE"))
        .unwrap_or_default()
        .to_string()
}

/// k9s's shift-letter keys sort by the column of that title, again reverses, a wide column
/// is shown to be sorted by, and a column the table lacks is said; `s` still steps through
/// the columns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shift_letters_sort_by_their_column() {
    let (sim, cluster) = sim().await;
    let mut app = AppStart::pods(cluster).start();
    wait_rows(&mut app, "pods", |_, w| w.total > 0).await;
    press(&mut app, KeyCode::Char('A'));
    let s = screen(&mut app, 140, 30);
    assert!(titles(&s).contains("AGE↑"), "{s}");
    press(&mut app, KeyCode::Char('A'));
    let s = screen(&mut app, 140, 30);
    assert!(titles(&s).contains("AGE↓"), "again reverses\n{s}");
    press(&mut app, KeyCode::Char('S'));
    let s = screen(&mut app, 140, 30);
    assert!(titles(&s).contains("STATUS↑"), "{s}");
    assert!(!titles(&s).contains("AGE↓"), "{s}");
    press(&mut app, KeyCode::Char('T'));
    assert!(titles(&screen(&mut app, 140, 30)).contains("RESTARTS↑"));
    press(&mut app, KeyCode::Char('C'));
    let s = screen(&mut app, 140, 30);
    assert!(s.contains("no CPU column here"), "{s}");
    assert!(titles(&s).contains("RESTARTS↑"), "the sort stays\n{s}");
    assert!(!app.state().table.wide);
    press(&mut app, KeyCode::Char('O'));
    let s = screen(&mut app, 160, 30);
    assert!(app.state().table.wide, "NODE is a wide column: shown");
    assert!(titles(&s).contains("NODE↑"), "{s}");
    press(&mut app, KeyCode::Char('N'));
    assert!(titles(&screen(&mut app, 160, 30)).contains("NAME↑"));
    press(&mut app, KeyCode::Char('s'));
    assert!(!titles(&screen(&mut app, 160, 30)).contains("NAME↑"));
    // The help lists them, with what the same key does again.
    press(&mut app, KeyCode::Char('?'));
    let s = screen(&mut app, 200, 60);
    assert!(s.contains("A AGE"), "{s}");
    assert!(s.contains("the same key again reverses"), "{s}");
    sim.shutdown().await;
}

/// A configuration written when `S` reversed the order still loads: its key wins over the
/// built-in sort-status.
#[test]
fn a_file_binding_sort_reverse_to_shift_s_still_loads() {
    use kscope_config::Config;
    use kscope_config::keys::{Action, KeySpec, Section};
    let config = Config::merged(Some((
        "old.yaml",
        "keys:\n  normal:\n    sort-reverse: [S]\n",
    )))
    .expect("loads");
    let s: KeySpec = "S".parse().expect("key");
    assert_eq!(
        config.keys.action(Section::Normal, None, s),
        Some(Action::SortReverse)
    );
    assert!(
        config
            .keys
            .keys(Section::Normal, &Action::SortBy("STATUS"))
            .is_empty()
    );
}

/// `/` in the detail searches its YAML: the matches are marked, the line says which of how
/// many is current, n/N step through them, and Esc clears the search before it leaves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_searches_the_detail_and_esc_clears_it_first() {
    use kscope_ui::action::InputMode;
    use ratatui::style::Modifier;

    let (sim, cluster) = sim().await;
    let mut app = AppStart::pods(cluster).start();
    wait_rows(&mut app, "pods", |_, w| w.total > 0).await;
    press(&mut app, KeyCode::Char('y'));
    assert!(app.finish_fetch().await, "the YAML fetched");
    press(&mut app, KeyCode::Char('/'));
    typed(&mut app, "uid");
    let s = screen(&mut app, 200, 50);
    let count = |s: &str| {
        let at = s
            .find(" matches")
            .unwrap_or_else(|| panic!("no count\n{s}"));
        let words = &s[..at];
        words[words.rfind(' ').unwrap() + 1..].to_string()
    };
    let first = count(&s);
    let (_, total) = first.split_once('/').expect("i/n");
    let total: usize = total.parse().expect("a number");
    assert!(total >= 2, "metadata.uid and an ownerReference's uid\n{s}");
    assert_eq!(first, format!("1/{total}"));
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(count(&screen(&mut app, 200, 50)), format!("2/{total}"));
    press(&mut app, KeyCode::Char('N'));
    press(&mut app, KeyCode::Char('N'));
    assert_eq!(
        count(&screen(&mut app, 200, 50)),
        format!("{total}/{total}")
    );
    // The match is marked in the text.
    let mut terminal = Terminal::new(TestBackend::new(200, 50)).expect("terminal");
    app.draw(&mut terminal).expect("draws");
    let buffer = terminal.backend().buffer().clone();
    let marked = (0..buffer.area.height).any(|y| {
        let row: String = (0..buffer.area.width)
            .map(|x| buffer[(x, y)].symbol())
            .collect();
        row.find("uid").is_some_and(|x| {
            buffer[(u16::try_from(row[..x].chars().count()).unwrap(), y)]
                .modifier
                .contains(Modifier::REVERSED)
        })
    });
    assert!(marked, "{}", terminal.backend());
    press(&mut app, KeyCode::Esc);
    assert_eq!(
        app.state().mode,
        InputMode::Detail,
        "Esc cleared the search"
    );
    assert!(!screen(&mut app, 200, 50).contains(" matches"));
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.state().mode, InputMode::Normal, "then left");
    sim.shutdown().await;
}

/// Ctrl-S in the detail saves the YAML as `kind-namespace-name-time.yaml` and says where;
/// a directory it cannot write is said plainly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_s_saves_the_yaml_and_says_where() {
    let (sim, cluster) = sim().await;
    let dir = std::env::temp_dir().join(format!("kscope-detail-save-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut app = AppStart::pods(cluster).start().with_save_dir(dir.clone());
    let window = wait_rows(&mut app, "pods", |_, w| w.total > 0).await;
    let selected = window.rows[0].key.replace('/', "-");
    press(&mut app, KeyCode::Char('y'));
    assert!(app.finish_fetch().await, "the YAML fetched");
    ctrl(&mut app, 's');
    let s = screen(&mut app, 200, 50);
    let prefix = format!("{}/pod-{selected}-", dir.display());
    assert!(s.contains(&format!("saved to {prefix}")), "{s}");
    let saved: Vec<_> = std::fs::read_dir(&dir).expect("the directory").collect();
    assert_eq!(saved.len(), 1);
    let path = saved[0].as_ref().expect("entry").path();
    assert!(path.to_string_lossy().starts_with(&prefix), "{path:?}");
    assert_eq!(path.extension().and_then(|e| e.to_str()), Some("yaml"));
    let text = std::fs::read_to_string(&path).expect("read back");
    assert!(text.contains("kind: Pod"), "{text}");
    // A file where the directory should be: the save says why it failed.
    std::fs::remove_dir_all(&dir).expect("removed");
    std::fs::write(&dir, "in the way").expect("a file");
    ctrl(&mut app, 's');
    let s = screen(&mut app, 200, 50);
    assert!(s.contains(&format!("cannot save to {prefix}")), "{s}");
    std::fs::remove_file(&dir).expect("removed");
    sim.shutdown().await;
}

/// `kscope --demo` on a first run opens on a plain table, the delta panel closed; `t` opens
/// it, and the next run opens as the person left it.
#[test]
fn the_delta_panel_is_closed_on_a_first_run_and_remembered() {
    use crate::common::tmux::Session;
    if crate::common::tools::required("tmux", "to run kscope in a real terminal").is_none() {
        return;
    }
    let name = format!("kscope-edges-ui-panels-{}", std::process::id());
    let state = std::env::temp_dir().join(&name);
    let _ = std::fs::remove_dir_all(&state);
    let command = format!(
        "env XDG_STATE_HOME={} {} --demo",
        state.display(),
        env!("CARGO_BIN_EXE_kscope")
    );
    let listed = |s: &str| s.contains("watching at rv");
    let session = Session::alone_sized(format!("{name}-1"), &command, 120, 40);
    let screen = session.wait_for("the first list", listed);
    assert!(
        !screen.contains("┌ deltas"),
        "closed on a first run\n{screen}"
    );
    session.keys(&["t"]);
    session.wait_for("the delta panel", |s| s.contains("┌ deltas"));
    session.keys(&["q"]);
    session.wait_exit("q");
    let again = Session::alone_sized(format!("{name}-2"), &command, 120, 40);
    let screen = again.wait_for("the second run's list", listed);
    assert!(screen.contains("┌ deltas"), "open as left\n{screen}");
    again.keys(&["t", "q"]);
    again.wait_exit("q");
    let third = Session::alone_sized(format!("{name}-3"), &command, 120, 40);
    let screen = third.wait_for("the third run's list", listed);
    assert!(!screen.contains("┌ deltas"), "closed as left\n{screen}");
    third.keys(&["q"]);
    third.wait_exit("q");
    let _ = std::fs::remove_dir_all(state);
}

/// The footer names the focused pane and offers the keys that work there: the delta panel's
/// own with it focused (not the table's wide or describe), the table's otherwise.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_footer_names_the_focused_pane_and_offers_its_keys() {
    use kscope_ui::action::Focus;

    let (sim, cluster) = sim().await;
    let mut app = AppStart::pods(cluster).panels().start();
    wait_rows(&mut app, "pods", |_, w| w.total > 0).await;
    let footer = |s: &str| {
        let last = s.lines().last().unwrap_or_default();
        last.trim_matches('"').to_string()
    };
    let s = screen(&mut app, 160, 40);
    let table = footer(&s);
    assert!(table.starts_with("▶ table"), "{s}");
    assert!(table.contains("tab deltas"), "{table}");
    assert!(table.contains("w wide"), "{table}");
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.state().focus, Focus::Deltas);
    let s = screen(&mut app, 160, 40);
    let deltas = footer(&s);
    assert!(deltas.starts_with("▶ deltas"), "{s}");
    for offered in ["f filter deltas", "enter diff", "tab table"] {
        assert!(deltas.contains(offered), "{offered}: {deltas}");
    }
    for table_only in ["w wide", "d describe", ": command"] {
        assert!(!deltas.contains(table_only), "{table_only}: {deltas}");
    }
    sim.shutdown().await;
}

/// A long error (a new CA's cause) takes the header rows it needs instead of being cut at
/// 120 columns; the table keeps the rest.
#[test]
fn a_long_error_takes_the_header_rows_it_needs() {
    use kscope_index_views::live::Window;
    use kscope_ui::draw::{self, Parts};
    use kscope_ui::state::UiState;

    let cause = "the API server's certificate is not trusted (invalid peer certificate: \
                 UnknownIssuer): it is not the server the kubeconfig's certificate-authority \
                 names, or it was restarted with a new CA";
    let header = kscope_ui::draw::Header {
        error: Some(cause.to_string()),
        ..crate::common::tui::pods_header()
    };
    let mut state = UiState::new(false);
    let mut terminal = Terminal::new(TestBackend::new(120, 30)).expect("terminal");
    let parts = Parts {
        header: &header,
        columns: &[],
        with_namespace: false,
        now: std::time::SystemTime::now(),
        color: false,
    };
    let layout = draw::frame(&mut terminal, &mut state, None, &parts, |_, _| Window {
        offset: 0,
        total: 0,
        rows: Vec::new(),
        selected: None,
    })
    .expect("draws");
    let shown: String = terminal
        .backend()
        .to_string()
        .lines()
        .take(5)
        .map(|l| l.trim_matches('"'))
        .collect();
    assert!(shown.contains("restarted with a new CA"), "{shown}");
    assert!(layout.table_rows() > 10, "{layout:?}");
}

/// `:pods -n nosuch` says that the namespace does not exist, and it is no favourite (on
/// screen or in the file); an existing namespace stays one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_that_does_not_exist_is_said_and_no_favourite() {
    use kscope_ui::favourites::Favourites;
    use std::time::Duration;

    use crate::tui_keys::run_command;

    let (sim, cluster) = sim().await;
    let dir = crate::common::cli::temp_dir("edges-ui-nosuch");
    let file = dir.join("namespaces.json");
    let mut app = AppStart::pods(cluster)
        .favourites(Favourites::load(file.clone()))
        .start();
    let window = wait_rows(&mut app, "pods", |_, w| w.total > 0).await;
    let existing = window.rows[0]
        .key
        .split('/')
        .next()
        .expect("ns")
        .to_string();
    run_command(&mut app, "pods -n nosuch");
    assert!(
        app.next_namespace_check(Duration::from_secs(60)).await,
        "the answer"
    );
    let s = screen(&mut app, 140, 30);
    assert!(
        s.contains("namespace nosuch does not exist in context sim"),
        "{s}"
    );
    assert!(!app.header().favourites.contains(&"nosuch".to_string()));
    let saved = Favourites::load(file.clone());
    assert!(!saved.namespaces("sim").contains(&"nosuch".to_string()));
    run_command(&mut app, &format!("pods -n {existing}"));
    assert!(app.next_namespace_check(Duration::from_secs(60)).await);
    assert_eq!(app.header().favourites, std::slice::from_ref(&existing));
    press(&mut app, KeyCode::Char('j'));
    assert!(!screen(&mut app, 140, 30).contains("does not exist"));
    assert_eq!(Favourites::load(file).namespaces("sim"), [existing]);
    let _ = std::fs::remove_dir_all(dir);
    sim.shutdown().await;
}

/// The detail's help at 160 columns shows every entry whole; the commands listed by `?`
/// and offered by `:` include `all`, `fifo` and `index`, each command once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn detail_help_is_whole_and_commands_are_listed_once() {
    use kscope_client::discovery::Discovery;
    use kscope_config::Config;
    use kscope_config::keys::Section;

    let (sim, cluster) = sim().await;
    let discovery = Discovery::run(&cluster.client).await.expect("discovers");
    let mut app = AppStart::pods(cluster).start();
    wait_rows(&mut app, "pods", |_, w| w.total > 0).await;
    press(&mut app, KeyCode::Char('y'));
    assert!(app.finish_fetch().await);
    press(&mut app, KeyCode::Char('?'));
    let s = screen(&mut app, 160, 50);
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let keys = Config::built_in().expect("built in").keys;
    for (_, what) in keys.help(Section::Detail) {
        assert!(flat.contains(what), "{what:?} cut\n{s}");
    }
    let listed = kscope_ui::command::listed(&discovery);
    let hint = kscope_ui::command::hint("", &discovery);
    let offered: Vec<&str> = hint
        .split(" · ")
        .next()
        .unwrap_or_default()
        .split(' ')
        .collect();
    for name in ["all", "fifo", "index", "pods", "deploy"] {
        assert!(offered.contains(&name), "{name}: {hint}");
        assert!(
            listed.iter().any(|l| l.split(' ').next() == Some(name)),
            "{name}: {listed:?}"
        );
    }
    let mut once = offered.clone();
    once.sort_unstable();
    once.dedup();
    assert_eq!(once.len(), offered.len(), "{hint}");
    let mut firsts: Vec<&str> = listed.iter().filter_map(|l| l.split(' ').next()).collect();
    let count = firsts.len();
    firsts.sort_unstable();
    firsts.dedup();
    assert_eq!(firsts.len(), count, "{listed:?}");
    sim.shutdown().await;
}
