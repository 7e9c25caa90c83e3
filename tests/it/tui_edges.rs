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
    let screen = s.wait_for("the crashing pods", |s| {
        s.contains("/crash") && s.contains("matches")
    });
    let crashing = table_rows(&screen);
    assert!(!crashing.is_empty(), "{screen}");
    for row in &crashing {
        assert!(row.contains("CrashLoopBackOff"), "{row}\n{screen}");
    }
    s.keys(&["/", "C-u", "status=CrashLoopBackOff", "Enter"]);
    let screen = s.wait_for("the status index", |s| {
        s.contains("/status=CrashLoopBackOff") && s.contains("matches")
    });
    // The churn makes pods crash and recover meanwhile: the same kind of rows, not the same.
    let by_status = table_rows(&screen);
    assert!(!by_status.is_empty(), "{screen}");
    assert!(
        by_status.iter().all(|r| r.contains("CrashLoopBackOff")),
        "{screen}"
    );
    s.keys(&["/", "C-u", "!crash", "Enter"]);
    let screen = s.wait_for("the other pods", |s| {
        s.contains("/!crash") && s.contains("matches")
    });
    let others = table_rows(&screen);
    assert!(!others.is_empty(), "{screen}");
    assert!(
        others.iter().all(|r| !r.contains("CrashLoopBackOff")),
        "{screen}"
    );
    s.keys(&["q"]);
    s.wait_exit("q");
}
