//! `kscope record` and `kscope replay --print` against a churning sim whose watches are cut
//! and answered 410: the replayed store is kubectl's view once the churn stopped, and a
//! cut recording is read up to the cut and reported.

use std::time::Duration;

use kscope_sim::SimConfig;

use crate::common::cli::{kscope, temp_dir};
use crate::common::kubectl::Kubectl;

fn sorted_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines.sort();
    lines
}

#[tokio::test]
async fn a_recording_of_a_faulty_churning_sim_replays_to_kubectls_view() {
    let mut config = SimConfig::with_size(30, 3, 2);
    config.churn_rate = 40.0;
    config.churn_for = Some(Duration::from_secs(1));
    config.faults.drop_watch_every = Some(Duration::from_millis(400));
    config.faults.watch_gone_ratio = 0.3;
    let Some(fx) = Kubectl::start_with("replay", config).await else {
        return;
    };
    let dir = temp_dir("replay");
    let file = dir.join("pods.ksr");
    let kubeconfig = fx.dir.join("kubeconfig");
    let recorded = kscope(
        &dir,
        &[
            "record",
            "pods",
            "-A",
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
            "-o",
            file.to_str().unwrap(),
            "--for",
            "3s",
        ],
    )
    .await;
    let summary = String::from_utf8_lossy(&recorded.stderr);
    assert!(recorded.status.success(), "{summary}");
    assert!(summary.contains("bytes per event"), "{summary}");
    let fired = fx.sim.faults_fired();
    assert!(fired.watches_dropped + fired.watches_gone > 0, "{fired:?}");

    let truth = fx.ok(&["get", "pods", "-A", "-o", "name"]).await;
    let replayed = kscope(&dir, &["replay", file.to_str().unwrap(), "--print", "pods"]).await;
    assert!(
        replayed.status.success(),
        "{}",
        String::from_utf8_lossy(&replayed.stderr)
    );
    let replayed = String::from_utf8_lossy(&replayed.stdout).into_owned();
    assert!(!replayed.is_empty());
    assert_eq!(sorted_lines(&replayed), sorted_lines(&truth));

    let json = kscope(
        &dir,
        &["replay", file.to_str().unwrap(), "--print", "-o", "json"],
    )
    .await;
    let list: serde_json::Value = serde_json::from_slice(&json.stdout).expect("a JSON list");
    assert_eq!(
        list["items"].as_array().map(Vec::len),
        Some(truth.lines().count())
    );

    // Before the first list came back, the store was empty.
    let at_start = kscope(
        &dir,
        &["replay", file.to_str().unwrap(), "--print", "--at", "1"],
    )
    .await;
    assert!(at_start.status.success());
    assert!(at_start.stdout.is_empty());

    let bytes = std::fs::read(&file).expect("the recording");
    let cut = dir.join("cut.ksr");
    std::fs::write(&cut, &bytes[..bytes.len() - 7]).expect("a cut copy");
    let damaged = kscope(&dir, &["replay", cut.to_str().unwrap(), "--print"]).await;
    let warning = String::from_utf8_lossy(&damaged.stderr);
    assert!(!damaged.status.success());
    assert!(warning.contains("damaged at byte"), "{warning}");
}
