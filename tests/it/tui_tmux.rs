//! End to end: `kscope --demo` in a real terminal (tmux), driven by keys and read back from
//! the screen. Skipped, with the reason printed, when tmux is not installed (a failure in CI).

use std::time::{Duration, Instant};

use crate::common::tmux;

use tmux::Session;

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
    if crate::common::tools::required("tmux", "to run kscope in a real terminal").is_none() {
        return;
    }
    let state = std::env::temp_dir().join(format!("kscope-tui-tmux-{}", std::process::id()));
    let command = format!(
        "env XDG_STATE_HOME={} {} --demo",
        state.display(),
        env!("CARGO_BIN_EXE_kscope")
    );
    let session = Session::start(format!("kscope-e2e-{}", std::process::id()), &command);

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

    // The delta panel, closed on a first run, opens with t; new events arrive in it.
    assert!(!screen.contains("┌ deltas"), "{screen}");
    session.keys(&["t"]);
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
    session.wait_exit("q");
    let _ = std::fs::remove_dir_all(state);
}

/// SIGTERM, SIGINT and SIGHUP each end kscope as `q` does: the shell it ran from gets its
/// screen back (the alternate screen left, the cursor shown) and the exit status a shell
/// expects (128 plus the signal's number).
#[test]
fn every_signal_restores_the_terminal() {
    let tools = crate::common::tools::required("tmux", "to run kscope in a real terminal").and(
        crate::common::tools::required("pgrep", "to find kscope's pid"),
    );
    if tools.is_none() {
        return;
    }
    // One shell that outlives each kscope, so its terminal can be looked at afterwards
    // (and one session: tmux's server may still be exiting when a last session ends).
    let name = format!("kscope-signals-{}", std::process::id());
    let session = Session::start(name.clone(), "sh");
    for (signal, status) in [("TERM", 143), ("INT", 130), ("HUP", 129)] {
        session.keys(&[&format!("{} --demo", env!("CARGO_BIN_EXE_kscope")), "Enter"]);
        session.wait_for("the demo table", |s| s.contains("watching at rv"));
        assert_eq!(
            session.flag("#{alternate_on}"),
            "1",
            "the TUI owns the screen"
        );
        // kscope is the shell's child.
        let pid = session.child_of_pane();
        let killed = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status()
            .expect("kill runs");
        assert!(killed.success());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        // Leaving the alternate screen and showing the cursor are two escape sequences:
        // wait for both.
        while (
            session.flag("#{alternate_on}"),
            session.flag("#{cursor_flag}"),
        ) != ("0".into(), "1".into())
        {
            assert!(
                std::time::Instant::now() < deadline,
                "SIG{signal} left the terminal unrestored:\n{}",
                session.screen()
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        // The exit status a shell expects after a signal: 128 plus its number.
        session.keys(&["echo exit-status=$?", "Enter"]);
        let said = format!("exit-status={status}");
        session.wait_for(&format!("SIG{signal}'s exit status {status}"), |s| {
            s.lines().any(|line| line.trim().ends_with(&said))
        });
        // The next run waits for its own table, not this one's on the screen.
        session.keys(&["clear", "Enter"]);
        session.wait_for("a cleared screen", |s| !s.contains("watching at rv"));
    }
}

/// `d` describes the selected pod as kubectl describe does, down to its Events; `:ctx`
/// switches the demo to its second cluster without a restart; kubectl, pointed at the
/// kubeconfig the demo says it wrote, starts a cascade the TUI shows.
#[test]
fn demo_describes_a_pod_and_switches_context() {
    let tools = crate::common::tools::required("tmux", "to run kscope in a real terminal").and(
        crate::common::tools::required("kubectl", "to start a cascade in the demo"),
    );
    let Some(kubectl) = tools else {
        return;
    };
    let state = std::env::temp_dir().join(format!("kscope-tui-ctx-{}", std::process::id()));
    let command = format!(
        "env XDG_STATE_HOME={} {} --demo",
        state.display(),
        env!("CARGO_BIN_EXE_kscope")
    );
    let session = Session::start(format!("kscope-ctx-{}", std::process::id()), &command);
    let screen = session.wait_for("the initial list", |s| {
        s.contains("watching at rv") && table_rows(s).len() > 5
    });
    let kubeconfig = tmux::demo_kubeconfigs(&state)
        .pop()
        .expect("the demo wrote its kubeconfig");
    assert!(
        screen.contains(&format!("kubectl --kubeconfig {}", kubeconfig.display())),
        "the message line says how to reach the demo:\n{screen}"
    );

    session.keys(&["d"]);
    session.wait_for("the describe", |s| {
        s.contains(" Describe ") && s.contains("Name:") && s.contains("Containers:")
    });
    session.keys(&["G"]);
    session.wait_for("its Events", |s| s.contains("Events:"));
    session.keys(&["Escape"]);
    session.wait_for("the table again", |s| !s.contains(" Describe "));

    session.keys(&[":", "ctx kscope-demo-2", "Enter"]);
    let screen = session.wait_for("the second cluster", |s| {
        s.contains("ctx kscope-demo-2") && s.contains("watching at rv") && table_rows(s).len() > 5
    });
    assert!(
        screen.contains("switched to context kscope-demo-2"),
        "{screen}"
    );

    // A Deployment made with kubectl in the cluster on screen: its ReplicaSet's pods come
    // up, and the deployments table shows it ready.
    let created = std::process::Command::new(&kubectl)
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args([
            "--context",
            "kscope-demo-2",
            "create",
            "deployment",
            "tmux-web",
        ])
        .args(["--image=nginx:1.27", "--replicas=2", "-n", "default"])
        .env("HOME", &state)
        .output()
        .expect("kubectl runs");
    assert!(
        created.status.success(),
        "{}",
        String::from_utf8_lossy(&created.stderr)
    );
    session.keys(&[":deploy", "Enter"]);
    session.wait_for("the deployments table", |s| {
        s.contains("deployments [all namespaces]") && s.contains("watching at rv")
    });
    session.keys(&["/", "tmux-web", "Enter"]);
    session.wait_for("kubectl's Deployment ready in the TUI", |s| {
        s.lines()
            .any(|l| l.contains("tmux-web") && l.contains("2/2"))
    });
    session.keys(&["q"]);
    session.wait_exit("q");
    assert!(
        !kubeconfig.exists(),
        "the demo's kubeconfig goes with its clusters"
    );
    let _ = std::fs::remove_dir_all(state);
}

/// The log view's lines: between its streams line and its search bar, inside the box.
fn log_lines(screen: &str) -> Vec<String> {
    screen
        .lines()
        .skip_while(|l| !(l.starts_with('┌') && l.contains("following")))
        .skip(2)
        .take_while(|l| !l.starts_with('└'))
        .map(|l| l.trim_start_matches('│').trim_end_matches('│').to_string())
        .filter(|l| !l.trim().is_empty() && !l.starts_with('/'))
        .collect()
}

#[test]
fn demo_logs_follow_new_lines_and_search_highlights() {
    if crate::common::tools::required("tmux", "to run kscope in a real terminal").is_none() {
        return;
    }
    let state = std::env::temp_dir().join(format!("kscope-logs-tmux-{}", std::process::id()));
    let command = format!(
        "env XDG_STATE_HOME={} {} --demo",
        state.display(),
        env!("CARGO_BIN_EXE_kscope")
    );
    let name = format!("kscope-logs-{}", std::process::id());
    let session = Session::start(name.clone(), &command);
    session.wait_for("the initial list", |s| {
        s.contains("watching at rv") && table_rows(s).len() > 5
    });
    // A running pod that never restarted has a log to follow.
    session.keys(&["/", "phase=Running", "Enter"]);
    session.wait_for("running pods", |s| {
        s.contains("/phase=Running") && s.contains("matches")
    });
    session.keys(&["l"]);
    let screen = session.wait_for("the log view or its container picker", |s| {
        s.contains("following") && (s.contains("containers:") || s.contains("streaming"))
    });
    if screen.contains("containers:") {
        // Several containers: all of them, each line tagged.
        session.keys(&["Enter"]);
    }
    let first = session.wait_for("log lines", |s| log_lines(s).len() > 3);
    let first = log_lines(&first);
    let screen = session.wait_for("a new line", |s| {
        let now = log_lines(s);
        !now.is_empty() && now.last() != first.last()
    });

    // Search for the start of the newest line: the bar counts matches, the text is lit.
    let newest = log_lines(&screen).last().cloned().expect("a line");
    let needle: String = newest.trim().chars().take(6).collect();
    session.keys(&["/"]);
    session.keys(&["-l", &needle]);
    session.keys(&["Enter"]);
    session.wait_for("the search's matches", |s| {
        s.contains(&format!("/{needle}")) && s.contains("matches")
    });
    // Captured with its escapes: a yellow background marks the matches (NO_COLOR unset).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let styled = tmux::tmux(&["capture-pane", "-p", "-e", "-t", &name]).unwrap_or_default();
        // Yellow background, as SGR 43 or tmux's indexed 48;5;3.
        if ["[43m", ";43m", "[43;", "48;5;3m"]
            .iter()
            .any(|sgr| styled.contains(sgr))
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no highlighted match for {needle:?}:\n{styled}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    // Esc drops the search, a second closes the view (sent apart: ESC ESC reads as alt-esc).
    session.keys(&["Escape"]);
    session.wait_for("the search dropped", |s| s.contains("/ to search"));
    session.keys(&["Escape"]);
    session.wait_for("the table again", |s| {
        !s.contains("following") && s.contains("pods [")
    });
    session.keys(&["q"]);
    session.wait_exit("q");
    let _ = std::fs::remove_dir_all(state);
}

/// `:all -A` in a real terminal, through the real event loop: one table of every kind of
/// the category, live, and the pods' table back at once from the category's running tables.
#[test]
fn demo_shows_all_kinds_in_one_table() {
    if crate::common::tools::required("tmux", "to run kscope in a real terminal").is_none() {
        return;
    }
    let state = std::env::temp_dir().join(format!("kscope-tui-tmux-all-{}", std::process::id()));
    let command = format!(
        "env XDG_STATE_HOME={} {} --demo",
        state.display(),
        env!("CARGO_BIN_EXE_kscope")
    );
    let session = Session::start(format!("kscope-e2e-all-{}", std::process::id()), &command);
    session.wait_for("the initial list", |s| {
        s.contains("watching at rv") && table_rows(s).len() > 5
    });
    session.keys(&[":all -A", "Enter"]);
    let screen = session.wait_for("the category's table", |s| {
        let rows = table_rows(s);
        s.contains("all [all namespaces]")
            && s.contains("KIND")
            && s.contains(" kinds, ")
            && rows.iter().any(|r| r.contains("cronjob.batch"))
    });
    // `G`: the last rows, sorted by KIND, are another kind's.
    assert!(!screen.contains("widget.example.com"), "{screen}");
    // `G` goes to the last row there is: pressed again until the category's last kind has
    // listed (its rows may still be on their way when the first kinds show).
    let last_rows = |s: &str| {
        table_rows(s)
            .iter()
            .any(|r| r.contains("widget.example.com"))
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        session.keys(&["G"]);
        std::thread::sleep(Duration::from_millis(500));
        let screen = session.screen();
        if last_rows(&screen) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for the last rows; screen:\n{screen}"
        );
    }
    session.keys(&[":pods", "Enter"]);
    session.wait_for("the pods table again", |s| {
        s.contains("pods [all namespaces]")
            && s.contains("watching at rv")
            && table_rows(s).len() > 5
    });
    session.keys(&["q"]);
    session.wait_exit("q");
    let _ = std::fs::remove_dir_all(state);
}

/// The terminal going away under the table (the window closed, tmux's server killed) ends
/// kscope within a bound, whichever sees it first: the SIGHUP, or the hang-up watch (the
/// input reader alone would spin on the dead terminal and never return).
#[test]
fn the_terminal_closing_ends_kscope() {
    if crate::common::tools::required("tmux", "to run kscope in a real terminal").is_none() {
        return;
    }
    let name = format!("kscope-hangup-{}", std::process::id());
    let state = std::env::temp_dir().join(&name);
    let command = format!(
        "env XDG_STATE_HOME={} {} --demo",
        state.display(),
        env!("CARGO_BIN_EXE_kscope")
    );
    let session = Session::alone_sized(name, &command, 100, 30);
    session.wait_for("the demo table", |s| s.contains("watching at rv"));
    // `env` execs kscope: the pane's process is kscope itself.
    let pid = session.flag("#{pane_pid}");
    assert!(!pid.is_empty(), "the pane has a process");
    session.kill_server();
    Session::wait_gone(&pid, "its terminal closed");
    let _ = std::fs::remove_dir_all(state);
}
