//! End to end: a shell from kscope's pod table in a real terminal (tmux), and the table back
//! afterwards with the shell's exit code; in read-only, the refusal says how to enable writes.

use crate::common::tmux::Session;

/// `kscope --demo` with `flags`, in its own tmux server, once the pods are listed.
fn demo(name: &str, flags: &str) -> Option<Session> {
    crate::common::tools::required("tmux", "to run kscope in a real terminal")?;
    let state = std::env::temp_dir().join(format!("kscope-{name}-{}", std::process::id()));
    let command = format!(
        "env XDG_STATE_HOME={} {} --demo {flags}",
        state.display(),
        env!("CARGO_BIN_EXE_kscope")
    );
    let session = Session::alone_sized(
        format!("kscope-{name}-{}", std::process::id()),
        &command,
        120,
        40,
    );
    session.wait_for("the pods listed", |s| {
        s.contains("watching at rv") && s.contains("Running")
    });
    Some(session)
}

#[test]
fn a_shell_opens_on_a_pod_and_the_table_comes_back_with_its_exit_code() {
    let Some(session) = demo("shell", "--readwrite") else {
        return;
    };
    session.keys(&["o"]);
    session.wait_for("the shell's prompt", |s| {
        s.contains(":/#") && !s.contains("watching at rv")
    });
    session.keys(&["echo hi", "Enter"]);
    session.wait_for("the echo", |s| s.lines().any(|l| l.trim() == "hi"));
    session.keys(&["exit 3", "Enter"]);
    let screen = session.wait_for("the table back", |s| {
        s.contains("watching at rv") && s.contains("exited with code 3")
    });
    assert!(screen.contains("NAME"), "{screen}");
    // The keyboard is the TUI's again: a command runs.
    session.keys(&[":nodes", "Enter"]);
    session.wait_for("the nodes table", |s| s.contains("nodes [cluster]"));
}

#[test]
fn read_only_refuses_a_shell_and_says_how_to_enable_writes() {
    let Some(session) = demo("shell-ro", "") else {
        return;
    };
    session.keys(&["o"]);
    session.wait_for("the refusal", |s| {
        s.contains("a shell is a write: start kscope with --readwrite")
    });
    session.keys(&["a"]);
    session.wait_for("the attach refusal", |s| {
        s.contains("attach is a write: start kscope with --readwrite")
    });
}

/// A signal while a shell has the terminal ends kscope as it does in the table: the terminal
/// restored and the exit status a shell expects (128 plus the signal's number), rather than
/// the signal waiting, unseen, until the shell exits.
#[test]
fn a_signal_during_a_shell_ends_kscope_and_restores_the_terminal() {
    let tools = crate::common::tools::required("tmux", "to run kscope in a real terminal").and(
        crate::common::tools::required("pgrep", "to find kscope's pid"),
    );
    if tools.is_none() {
        return;
    }
    let name = format!("kscope-shell-signal-{}", std::process::id());
    let state = std::env::temp_dir().join(&name);
    // A shell that outlives kscope, so its terminal and kscope's exit status can be read.
    let session = Session::alone_sized(name.clone(), "sh", 120, 40);
    session.keys(&[
        &format!(
            "env XDG_STATE_HOME={} {} --demo --readwrite",
            state.display(),
            env!("CARGO_BIN_EXE_kscope")
        ),
        "Enter",
    ]);
    session.wait_for("the pods listed", |s| {
        s.contains("watching at rv") && s.contains("Running")
    });
    session.keys(&["o"]);
    session.wait_for("the shell's prompt", |s| {
        s.contains(":/#") && !s.contains("watching at rv")
    });
    let pid = session.child_of_pane();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    // Keys typed before kscope is gone would still go to the pod's shell.
    Session::wait_gone(&pid, "SIGTERM");
    session.keys(&["echo exit-status=$?", "Enter"]);
    let screen = session.wait_for("kscope's exit status 143", |s| {
        s.lines()
            .any(|line| line.trim().ends_with("exit-status=143"))
    });
    let restored = (
        session.flag("#{alternate_on}"),
        session.flag("#{cursor_flag}"),
    );
    assert_eq!(restored, ("0".into(), "1".into()), "{screen}");
    let _ = std::fs::remove_dir_all(state);
}

/// The terminal going away while a shell has it (the terminal window closed, tmux's server
/// killed) ends kscope, instead of leaving it running with nobody to type or to read.
#[test]
fn the_terminal_closing_during_a_shell_ends_kscope() {
    let Some(session) = demo("shell-hangup", "--readwrite") else {
        return;
    };
    session.keys(&["o"]);
    session.wait_for("the shell's prompt", |s| {
        s.contains(":/#") && !s.contains("watching at rv")
    });
    // `env` execs kscope: the pane's process is kscope itself.
    let pid = session.flag("#{pane_pid}");
    assert!(!pid.is_empty(), "the pane has a process");
    session.kill_server();
    Session::wait_gone(&pid, "its terminal closed");
}
