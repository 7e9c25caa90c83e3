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
    let config = Config::merged(Some(("old.yaml", "keys:\n  normal:\n    sort-reverse: [S]\n")))
        .expect("loads");
    let s: KeySpec = "S".parse().expect("key");
    assert_eq!(
        config.keys.action(Section::Normal, None, s),
        Some(Action::SortReverse)
    );
    assert!(config
        .keys
        .keys(Section::Normal, &Action::SortBy("STATUS"))
        .is_empty());
}
