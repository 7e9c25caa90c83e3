//! `kscope record` and `kscope replay --print` against a churning sim whose watches are cut
//! and answered 410: the replayed store is kubectl's view once the churn stopped, and a
//! cut recording is read up to the cut and reported. `kscope sim --replay` of a recording,
//! watched by kubectl, the Python client and `kscope record` itself: the recorded events
//! with the recorded resourceVersions, and a 410 from before the recording.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use kscope_informers::record::format::{BlockType, Reader, Record};
use kscope_informers::record::state::ends_initial_events;
use kscope_sim::SimConfig;
use tokio::io::AsyncBufReadExt;

use crate::common::cli::{Streaming, kscope, sim_clusters, temp_dir};
use crate::common::kubectl::Kubectl;
use crate::common::tools;

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

/// What a recording of one kind's single watch-list holds: the resourceVersions of its
/// initial objects (sorted), and its watch events after them as `TYPE RV`, bookmarks left
/// out (a replay sends them only to who asks).
#[derive(Debug, PartialEq, Eq)]
struct Recorded {
    initial: Vec<String>,
    events: Vec<String>,
}

fn recorded(file: &Path) -> Recorded {
    read_recorded(file).expect("a recording")
}

/// [`recorded`], or `None` while the file has no whole header yet.
fn read_recorded(file: &Path) -> Option<Recorded> {
    let mut reader = Reader::new(BufReader::new(File::open(file).ok()?)).ok()?;
    let mut initial = Vec::new();
    let mut events = Vec::new();
    let mut in_initial = false;
    while let Ok(Some((info, records))) = reader.next_block() {
        if info.block_type == BlockType::Keyframe {
            continue;
        }
        for record in records {
            match record {
                Record::WatchStart {
                    send_initial_events,
                    ..
                } => in_initial = send_initial_events,
                Record::Event {
                    event_type,
                    resource_version,
                    object,
                    ..
                } => {
                    let rv = resource_version.unwrap_or_default();
                    if in_initial {
                        if event_type == "BOOKMARK" && ends_initial_events(&object) {
                            in_initial = false;
                        } else {
                            initial.push(rv);
                        }
                    } else if event_type != "BOOKMARK" {
                        events.push(format!("{event_type} {rv}"));
                    }
                }
                _ => {}
            }
        }
    }
    initial.sort();
    Some(Recorded { initial, events })
}

/// Records the pods of a sim churning for a second, without faults: one watch-list and the
/// events after it. `None` (skip) without kubectl.
pub(crate) async fn churn_recording(name: &str) -> Option<(Kubectl, PathBuf, PathBuf)> {
    let mut config = SimConfig::with_size(12, 2, 2);
    config.churn_rate = 30.0;
    config.churn_for = Some(Duration::from_secs(1));
    let fx = Kubectl::start_with(name, config).await?;
    let dir = temp_dir(name);
    let file = dir.join("pods.ksr");
    let kubeconfig = fx.dir.join("kubeconfig");
    let out = kscope(
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
            "2s",
        ],
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let recording = recorded(&file);
    assert!(
        !recording.initial.is_empty() && !recording.events.is_empty(),
        "{recording:?}"
    );
    Some((fx, dir, file))
}

/// `kscope sim --replay FILE --speed 4`, its kubeconfig in a directory of its own.
async fn replay_sim(dir: &Path, file: &Path, name: &str) -> (Child, PathBuf) {
    let own = dir.join(name);
    std::fs::create_dir_all(&own).expect("a directory");
    sim_clusters(
        &own,
        1,
        &["--replay", file.to_str().unwrap(), "--speed", "4"],
    )
    .await
}

/// Runs `program ARGS` and gathers its stdout lines until `enough` of them came (a minute at
/// most), then stops it.
async fn lines_until(
    program: &Path,
    args: &[&str],
    kubeconfig: &Path,
    enough: usize,
) -> Vec<String> {
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env("HOME", kubeconfig.parent().unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("runs");
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut lines = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(60), async {
        while lines.len() < enough {
            match stdout.next_line().await {
                Ok(Some(line)) => lines.push(line),
                _ => break,
            }
        }
    })
    .await;
    let _ = child.kill().await;
    lines
}

const WATCH_EVENT: &str = r#"jsonpath={.type} {.object.metadata.resourceVersion}{"\n"}"#;

#[tokio::test]
async fn kubectl_watches_a_replayed_recording_with_its_recorded_resource_versions() {
    let Some((_fx, dir, file)) = churn_recording("replay-kubectl").await else {
        return;
    };
    let kubectl = tools::required("kubectl", "to watch the replay").expect("kubectl");
    let want = recorded(&file);
    let (mut sim, kubeconfig) = replay_sim(&dir, &file, "kubectl").await;

    // A list at the recorded state, then the recorded events from its resourceVersion.
    let lines = lines_until(
        &kubectl,
        &[
            "get",
            "pods",
            "-A",
            "-w",
            "--output-watch-events",
            "-o",
            WATCH_EVENT,
        ],
        &kubeconfig,
        want.initial.len() + want.events.len(),
    )
    .await;
    let (listed, watched) = lines.split_at(want.initial.len().min(lines.len()));
    let mut listed: Vec<String> = listed
        .iter()
        .map(|l| l.trim_start_matches("ADDED ").to_string())
        .collect();
    listed.sort();
    assert_eq!(listed, want.initial);
    assert_eq!(watched, want.events.as_slice());

    // From a recorded resourceVersion in the middle: the events after it.
    let middle = want.events.len() / 2;
    let rv = want.events[middle].split(' ').nth(1).unwrap().to_string();
    let raw = format!("/api/v1/pods?watch=1&resourceVersion={rv}");
    let after = lines_until(
        &kubectl,
        &["get", "--raw", &raw],
        &kubeconfig,
        want.events.len() - middle - 1,
    )
    .await;
    let after: Vec<String> = after
        .iter()
        .map(|l| {
            let event: serde_json::Value = serde_json::from_str(l).expect("a watch event");
            format!(
                "{} {}",
                event["type"].as_str().unwrap(),
                event["object"]["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap()
            )
        })
        .collect();
    assert_eq!(after, want.events[middle + 1..]);

    // From before the recording: 410 Expired, worded as kube-apiserver words it.
    let gone = lines_until(
        &kubectl,
        &["get", "--raw", "/api/v1/pods?watch=1&resourceVersion=1"],
        &kubeconfig,
        1,
    )
    .await;
    let event: serde_json::Value = serde_json::from_str(&gone[0]).expect("an ERROR event");
    assert_eq!(event["type"], "ERROR");
    assert_eq!(event["object"]["code"], 410);
    assert_eq!(event["object"]["reason"], "Expired");
    let message = event["object"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("too old resource version: 1 ("),
        "{message}"
    );

    // Read-only.
    let (ok, _, err) = {
        let output = std::process::Command::new(&kubectl)
            .args(["delete", "pod", "-n", "default", "any", "--wait=false"])
            .env("KUBECONFIG", &kubeconfig)
            .env("HOME", kubeconfig.parent().unwrap())
            .output()
            .expect("kubectl runs");
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    assert!(!ok);
    assert!(err.contains("read-only"), "{err}");
    let _ = sim.kill();
}

const PYTHON_WATCH: &str = r#"
import json, sys
from kubernetes import client, config, watch

config.load_kube_config(sys.argv[1])
v1 = client.CoreV1Api()
pods = v1.list_pod_for_all_namespaces()
listed = sorted(p.metadata.resource_version for p in pods.items)
events = []
w = watch.Watch()
for event in w.stream(v1.list_pod_for_all_namespaces,
                      resource_version=pods.metadata.resource_version, timeout_seconds=60):
    events.append(f"{event['type']} {event['object'].metadata.resource_version}")
    if len(events) == int(sys.argv[2]):
        w.stop()
print(json.dumps({"initial": listed, "events": events}))
"#;

#[tokio::test]
async fn the_python_client_lists_and_watches_a_replayed_recording() {
    let Some((_fx, dir, file)) = churn_recording("replay-python").await else {
        return;
    };
    let Some(python) = tools::required("python3", "to run the official Kubernetes client") else {
        return;
    };
    let want = recorded(&file);
    let (mut sim, kubeconfig) = replay_sim(&dir, &file, "python").await;
    let script = dir.join("watch.py");
    std::fs::write(&script, PYTHON_WATCH).expect("the script");
    let run = tokio::process::Command::new(&python)
        .arg(&script)
        .arg(&kubeconfig)
        .arg(want.events.len().to_string())
        .env("HOME", &dir)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(90), run)
        .await
        .expect("the Python client finishes")
        .expect("python3 runs");
    let _ = sim.kill();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stderr.contains("No module named 'kubernetes'") {
        tools::missing("the python3 `kubernetes` package");
        return;
    }
    assert!(output.status.success(), "{stderr}");
    let got: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(got["initial"], serde_json::json!(want.initial));
    assert_eq!(got["events"], serde_json::json!(want.events));
}

#[tokio::test]
async fn recording_a_replay_reproduces_the_recording() {
    let Some((_fx, dir, file)) = churn_recording("replay-round-trip").await else {
        return;
    };
    let want = recorded(&file);
    let (mut sim, kubeconfig) = replay_sim(&dir, &file, "round-trip").await;
    let again = dir.join("again.ksr");
    let record = Streaming::start(
        &dir,
        &[
            "record",
            "pods",
            "-A",
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
            "-o",
            again.to_str().unwrap(),
        ],
    );
    // The recorder flushes every second: wait until the second recording holds every event.
    let complete = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            if read_recorded(&again).is_some_and(|r| r.events.len() >= want.events.len()) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await;
    record.interrupt();
    let (status, _, stderr) = record.finish().await;
    let _ = sim.kill();
    assert!(
        complete.is_ok(),
        "the replay was not recorded whole: {stderr}"
    );
    assert!(status.success(), "{stderr}");
    assert_eq!(recorded(&again), want);
}

#[path = "../../fuzz/src/recording.rs"]
mod recording_fuzz;

/// The fuzz target's checks on its seeds, and on each seed cut and flipped at a few places
/// (`fuzz/fuzz_targets/recording.rs`, docs/fuzzing.md).
#[test]
fn the_recording_fuzz_checks_hold_on_the_seeds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds-recording");
    let mut seeds = 0;
    for entry in std::fs::read_dir(&dir).expect("the seeds") {
        let seed = std::fs::read(entry.expect("a seed").path()).expect("a seed");
        recording_fuzz::check(&seed);
        for at in [1, 17, seed.len() / 3, seed.len() / 2, seed.len() - 1] {
            recording_fuzz::check(&seed[..at]);
            let mut flipped = seed.clone();
            flipped[at] ^= 0x20;
            recording_fuzz::check(&flipped);
        }
        seeds += 1;
    }
    assert_eq!(seeds, 3);
}
