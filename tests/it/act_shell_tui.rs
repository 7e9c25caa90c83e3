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
