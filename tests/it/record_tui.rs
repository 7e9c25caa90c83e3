//! The record toggle in a real terminal (tmux): `:record FILE` on a sim's pods starts a
//! recording, the header says `● REC` with its size and rate, `ctrl-r` stops it and finishes
//! the file, and `kscope replay FILE --print pods` prints the pods kubectl lists.

use crate::common::cli::kscope;
use crate::common::kubectl::Kubectl;
use crate::common::tmux::Session;

fn sorted_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines.sort();
    lines
}

// The sim runs on this runtime while the test blocks on tmux: it needs threads of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_in_the_tui_then_replay_prints_the_pods_kubectl_sees() {
    if crate::common::tools::required("tmux", "to run kscope in a real terminal").is_none() {
        return;
    }
    let Some(fx) = Kubectl::start("record-tui").await else {
        return;
    };
    let file = fx.dir.join("pods.kscope");
    let command = format!(
        "env KUBECONFIG={dir}/kubeconfig HOME={dir} XDG_STATE_HOME={dir}/state XDG_CONFIG_HOME={dir}/config {kscope} -A",
        dir = fx.dir.display(),
        kscope = env!("CARGO_BIN_EXE_kscope"),
    );
    let session = Session::alone_sized(
        format!("kscope-record-tui-{}", std::process::id()),
        &command,
        160,
        30,
    );
    session.wait_for("the pods, watched", |s| s.contains("watching at rv"));
    assert!(!session.screen().contains("● REC"));

    session.keys(&[":"]);
    session.keys(&["-l", &format!("record {}", file.display())]);
    session.keys(&["Enter"]);
    // The file holds more than its header once the first list is written: kilobytes.
    session.wait_for("the header to say it records the pods", |s| {
        s.lines()
            .next()
            .and_then(|header| header.split_once("● REC ")?.1.split_once(" ev/s"))
            .is_some_and(|(size_rate, _)| {
                size_rate
                    .split_whitespace()
                    .next()
                    .is_some_and(|size| size.ends_with("iB"))
            })
    });

    session.keys(&["C-r"]);
    let done = format!("to {} (", file.display());
    let screen = session.wait_for("the recording to be finished", |s| {
        s.contains("recorded ") && s.contains(&done)
    });
    assert!(!screen.contains("● REC"), "{screen}");

    let truth = fx.ok(&["get", "pods", "-A", "-o", "name"]).await;
    let replayed = kscope(
        &fx.dir,
        &["replay", file.to_str().unwrap(), "--print", "pods"],
    )
    .await;
    assert!(
        replayed.status.success(),
        "{}",
        String::from_utf8_lossy(&replayed.stderr)
    );
    let replayed = String::from_utf8_lossy(&replayed.stdout).into_owned();
    assert!(!truth.is_empty());
    assert_eq!(sorted_lines(&replayed), sorted_lines(&truth));
}
