//! End to end: `kscope --demo` in a real terminal (tmux), driven by keys and read back from
//! the screen. Skipped, with the reason printed, when tmux is not installed.

use std::process::Command;
use std::time::{Duration, Instant};

fn tmux(args: &[&str]) -> Option<String> {
    let out = Command::new("tmux").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A tmux session running kscope; killed when dropped, so a failed test leaves nothing behind.
struct Session(String);

impl Session {
    fn screen(&self) -> String {
        tmux(&["capture-pane", "-p", "-t", &self.0]).unwrap_or_default()
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", self.0.as_str()];
        args.extend_from_slice(keys);
        tmux(&args).expect("send-keys");
    }

    /// Waits until the screen satisfies `ok`, returning it; panics with the last screen.
    fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let screen = self.screen();
            if ok(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = tmux(&["kill-session", "-t", &self.0]);
    }
}

/// The table's rows: the lines between the column titles and the panels (or the status line).
fn table_rows(screen: &str) -> Vec<&str> {
    screen
        .lines()
        .skip(3)
        .take_while(|l| !l.starts_with('┌') && !l.starts_with("? help") && !l.starts_with('/'))
        .filter(|l| !l.trim().is_empty())
        .collect()
}

/// The delta panel's lines.
fn delta_lines(screen: &str) -> Vec<String> {
    screen
        .lines()
        .skip_while(|l| !l.contains("┌ deltas"))
        .skip(1)
        .take_while(|l| !l.starts_with('└'))
        .map(|l| l.split('│').nth(1).unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn demo_filters_by_an_index_streams_deltas_and_switches_kinds() {
    if tmux(&["-V"]).is_none() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let state = std::env::temp_dir().join(format!("kscope-tui-tmux-{}", std::process::id()));
    let command = format!(
        "env XDG_STATE_HOME={} {} --demo",
        state.display(),
        env!("CARGO_BIN_EXE_kscope")
    );
    let session = Session(format!("kscope-e2e-{}", std::process::id()));
    tmux(&[
        "new-session",
        "-d",
        "-s",
        &session.0,
        "-x",
        "120",
        "-y",
        "40",
        &command,
    ])
    .expect("tmux starts kscope");

    let screen = session.wait_for("the initial list", |s| {
        s.contains("watching at rv") && table_rows(s).len() > 5
    });
    let namespace = table_rows(&screen)[0]
        .split_whitespace()
        .next()
        .expect("a namespace cell")
        .to_string();

    session.keys(&["/", &format!("namespace={namespace}"), "Enter"]);
    let screen = session.wait_for("the namespace filter", |s| {
        s.contains(&format!("/namespace={namespace}")) && s.contains("matches")
    });
    let rows = table_rows(&screen);
    assert!(!rows.is_empty(), "{screen}");
    for row in &rows {
        assert_eq!(
            row.split_whitespace().next(),
            Some(namespace.as_str()),
            "{screen}"
        );
    }

    // Close and reopen the delta panel, then see new events arrive in it.
    session.keys(&["d"]);
    session.wait_for("the panels to close", |s| !s.contains("┌ deltas"));
    session.keys(&["d"]);
    let first = session.wait_for("the delta panel", |s| !delta_lines(s).is_empty());
    let first = delta_lines(&first);
    session.wait_for("new deltas", |s| {
        let now = delta_lines(s);
        now.last() != first.last() && now.iter().any(|l| l.contains(" rv "))
    });

    // Command mode: the nodes table, then pods again, each from a new informer.
    session.keys(&[":nodes", "Enter"]);
    session.wait_for("the nodes table", |s| {
        s.contains("nodes [cluster]") && s.contains("VERSION") && s.contains("watching at rv")
    });
    session.keys(&[":pods", "Enter"]);
    session.wait_for("the pods table again", |s| {
        s.contains("pods [all namespaces]")
            && s.contains("watching at rv")
            && table_rows(s).len() > 5
    });

    session.keys(&["q"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while tmux(&["has-session", "-t", &session.0]).is_some() {
        assert!(Instant::now() < deadline, "kscope did not quit on q");
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = std::fs::remove_dir_all(state);
}
