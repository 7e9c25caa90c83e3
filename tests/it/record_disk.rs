//! Recording when the disk fails: a file no byte can be written to (`/dev/full`, ENOSPC from
//! the header on) and one that starts failing once it has grown past the process's file-size
//! limit (`prlimit --fsize`, as `ulimit -f` sets it: EFBIG, or SIGXFSZ's kill where kscope
//! left the signal alone). Headless, `kscope record` exits non-zero naming the file, and
//! what it wrote before is read back; in the TUI the recording stops, the status line says
//! so and the table goes on.

use std::path::Path;
use std::time::Duration;

use kscope_sim::SimConfig;

use crate::common::cli::{kscope, temp_dir};
use crate::common::kubectl::Kubectl;
use crate::common::tmux::Session;
use crate::common::tools;

/// The file-size limit: the header and the first list fit, the churn outgrows it in seconds.
const FILE_SIZE_LIMIT: u64 = 32 * 1024;
/// The TUI's: its header fits, and the first block (the list of 40 pods) does not, so the
/// recording fails a second in without a churn (which would share the test's runtime).
const TUI_FILE_SIZE_LIMIT: u64 = 2 * 1024;

/// A sim whose pods churn enough to grow a recording past [`FILE_SIZE_LIMIT`] in seconds.
async fn churning(name: &str) -> Option<Kubectl> {
    let mut config = SimConfig::with_size(40, 3, 2);
    config.churn_rate = 200.0;
    config.churn_for = Some(Duration::from_secs(30));
    Kubectl::start_with(name, config).await
}

fn record_args<'a>(kubeconfig: &'a str, output: &'a str) -> Vec<&'a str> {
    vec![
        "record",
        "pods",
        "-A",
        "--kubeconfig",
        kubeconfig,
        "-o",
        output,
        "--for",
        "20s",
    ]
}

#[tokio::test]
async fn recording_to_a_full_disk_fails_naming_the_file() {
    if !Path::new("/dev/full").exists() {
        tools::missing("/dev/full");
        return;
    }
    let Some(fx) = Kubectl::start("record-full").await else {
        return;
    };
    let dir = temp_dir("record-full");
    let kubeconfig = fx.dir.join("kubeconfig");
    let out = kscope(
        &dir,
        &record_args(kubeconfig.to_str().unwrap(), "/dev/full"),
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("recording to /dev/full") && stderr.contains("No space left on device"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_recording_past_the_file_size_limit_stops_and_keeps_what_it_wrote() {
    let Some(prlimit) = tools::required("prlimit", "to limit the size of files kscope writes")
    else {
        return;
    };
    let Some(fx) = churning("record-fsize").await else {
        return;
    };
    let dir = temp_dir("record-fsize");
    let file = dir.join("pods.ksr");
    let kubeconfig = fx.dir.join("kubeconfig");
    let limit = format!("--fsize={FILE_SIZE_LIMIT}");
    let mut args = vec![limit.as_str(), "--", env!("CARGO_BIN_EXE_kscope")];
    args.extend(record_args(
        kubeconfig.to_str().unwrap(),
        file.to_str().unwrap(),
    ));
    let mut command = std::process::Command::new(prlimit);
    command
        .args(&args)
        .env("XDG_STATE_HOME", dir.join("state"))
        .env_remove("KUBECONFIG");
    let out = tokio::task::spawn_blocking(move || command.output().expect("prlimit runs"))
        .await
        .expect("join");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Killed by SIGXFSZ there would be no exit code, and nothing said.
    assert_eq!(out.status.code(), Some(1), "{:?}: {stderr}", out.status);
    assert!(
        stderr.contains(&format!("recording to {}", file.display()))
            && stderr.contains("File too large")
            && stderr.contains("readable"),
        "{stderr}"
    );
    // The blocks written whole read back: the pods of the first list at least.
    let size = std::fs::metadata(&file).expect("the recording").len();
    assert!(size <= FILE_SIZE_LIMIT, "{size} bytes");
    let replayed = kscope(&dir, &["replay", file.to_str().unwrap(), "--print", "pods"]).await;
    let printed = String::from_utf8_lossy(&replayed.stdout);
    assert!(
        printed.lines().count() >= 40 && printed.lines().all(|l| l.starts_with("pod/")),
        "{printed}{}",
        String::from_utf8_lossy(&replayed.stderr)
    );
}

// The sim runs on this runtime while the test blocks on tmux: it needs threads of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tui_says_a_failed_recording_stopped_and_goes_on() {
    if tools::required("tmux", "to run kscope in a real terminal").is_none() {
        return;
    }
    let Some(prlimit) = tools::required("prlimit", "to limit the size of files kscope writes")
    else {
        return;
    };
    let Some(fx) = Kubectl::start("record-fail-tui").await else {
        return;
    };
    let file = fx.dir.join("pods.ksr");
    let command = format!(
        "env KUBECONFIG={dir}/kubeconfig HOME={dir} XDG_STATE_HOME={dir}/state XDG_CONFIG_HOME={dir}/config {prlimit} --fsize={TUI_FILE_SIZE_LIMIT} -- {kscope} -A",
        dir = fx.dir.display(),
        prlimit = prlimit.display(),
        kscope = env!("CARGO_BIN_EXE_kscope"),
    );
    let session = Session::alone_sized(
        format!("kscope-record-fail-{}", std::process::id()),
        &command,
        200,
        30,
    );
    // A dead kscope fails at once rather than at the wait's end.
    let running = |s: &str| {
        assert!(session.alive(), "kscope is gone; last screen:\n{s}");
        true
    };
    session.wait_for("the pods, watched", |s| {
        running(s) && s.contains("watching at rv")
    });

    // Nothing can be written: the recording never starts, and says why.
    if Path::new("/dev/full").exists() {
        session.keys(&[":"]);
        session.keys(&["-l", "record /dev/full"]);
        session.keys(&["Enter"]);
        session.wait_for("the refusal", |s| {
            running(s) && s.contains("recording to /dev/full") && s.contains("No space left")
        });
    }

    // A file that fails once past the limit: recording, then stopped, in words.
    session.keys(&[":"]);
    session.keys(&["-l", &format!("record {}", file.display())]);
    session.keys(&["Enter"]);
    let stopped = format!("recording to {} stopped", file.display());
    let screen = session.wait_for("the recording to stop on its failed write", |s| {
        running(s) && s.contains(&stopped) && s.contains("File too large")
    });
    assert!(!screen.contains("● REC"), "{screen}");
    // The TUI goes on: the pods, still watched, after another command.
    session.keys(&[":"]);
    session.keys(&["-l", "pods"]);
    session.keys(&["Enter"]);
    session.wait_for("the pods again", |s| {
        running(s) && s.contains("watching at rv") && !s.contains("● REC")
    });
    let size = std::fs::metadata(&file).expect("the recording").len();
    assert!(size <= TUI_FILE_SIZE_LIMIT, "{size} bytes");
}
