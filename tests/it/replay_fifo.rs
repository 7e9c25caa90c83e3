//! `kscope replay FILE --fifo classic,real,atomic`: a recording of a churning sim whose
//! watches are answered 410 runs through the three FIFOs; every store matches every keyframe,
//! and the known differences show (the DeltaFIFO merges a key's deltas, the AtomicFIFO hands
//! a relist as one ReplacedAll). A keyframe the events do not fold to is named, exit 1.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::time::Duration;

use kscope_informers::record::format::{Header, Reader, Record, Writer};
use kscope_informers::record::state::{State, ends_initial_events};
use kscope_sim::SimConfig;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::common::cli::{kscope, temp_dir};
use crate::common::kubectl::Kubectl;

/// What a recording holds: whole states (a list's last page, a watch-list's closing
/// bookmark), and watches answered 410.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    states: u64,
    gone: u64,
}

fn tally(file: &Path) -> Tally {
    let mut tally = Tally::default();
    let mut reader =
        Reader::new(BufReader::new(File::open(file).expect("the recording"))).expect("a recording");
    while let Some((_, records)) = reader.next_block().expect("a whole recording") {
        for record in &records {
            match record {
                Record::Event {
                    event_type, object, ..
                } => {
                    let ends = event_type == "BOOKMARK" && ends_initial_events(object);
                    tally.states += u64::from(ends);
                    tally.gone += u64::from(event_type == "ERROR" && object.get().contains("410"));
                }
                Record::List { next, .. } => tally.states += u64::from(next.is_none()),
                Record::Error { code, .. } => tally.gone += u64::from(*code == Some(410)),
                _ => {}
            }
        }
    }
    tally
}

/// Copies the recording `from` to `to` with a keyframe block after every `every` events (or
/// at the first event after that which ends a list or a watch-list's initial events), as the
/// recorder writes one (the store folded so far, each kind's), where the recorder waits for
/// 1,000: a short churn then has several. Returns how many keyframe records `to` holds.
fn with_keyframes_every(from: &Path, to: &Path, every: usize) -> usize {
    let mut reader =
        Reader::new(BufReader::new(File::open(from).expect("the recording"))).expect("a recording");
    let mut writer =
        Writer::new(File::create(to).expect("a copy"), reader.header()).expect("a writer");
    let mut state = State::default();
    let (mut events, mut keyframes, mut due) = (0, 0, false);
    while let Some((_, records)) = reader.next_block().expect("a whole recording") {
        for record in records {
            state.apply(&record);
            if matches!(record, Record::Keyframe { .. }) {
                keyframes += 1;
                // The recorder's own keyframe, kept where it was.
                writer.keyframe(&[record]).expect("written");
                continue;
            }
            let at = record.at();
            writer.append(&record).expect("written");
            if matches!(record, Record::Event { .. }) {
                events += 1;
                due |= events % every == 0;
                // As the recorder: never inside a list or a watch-list's initial events.
                if due && state.settled() {
                    let frames = state.keyframes(at);
                    keyframes += frames.len();
                    writer.keyframe(&frames).expect("written");
                    due = false;
                }
            }
        }
    }
    writer.finish().expect("finished");
    keyframes
}

fn count(value: &Value, field: &str) -> u64 {
    value[field].as_u64().unwrap_or_default()
}

#[tokio::test]
async fn a_faulty_churning_recording_runs_through_every_fifo_to_every_keyframe() {
    let mut config = SimConfig::with_size(40, 3, 2);
    config.churn_rate = 60.0;
    config.churn_for = Some(Duration::from_secs(3));
    config.faults.drop_watch_every = Some(Duration::from_millis(500));
    config.faults.watch_gone_ratio = 0.5;
    let Some(fx) = Kubectl::start_with("replay-fifo", config).await else {
        return;
    };
    let dir = temp_dir("replay-fifo");
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
    assert!(
        recorded.status.success(),
        "{}",
        String::from_utf8_lossy(&recorded.stderr)
    );
    let fired = fx.sim.faults_fired();
    assert!(fired.watches_gone > 0, "{fired:?}");
    // Half the watches are answered 410, and the recorder restarts after each.
    let recording = tally(&file);
    assert!(recording.gone > 0 && recording.states > 0, "{recording:?}");
    let framed = dir.join("framed.ksr");
    let keyframes = with_keyframes_every(&file, &framed, 10);
    assert!(keyframes >= 2, "{keyframes} keyframes");
    let file = framed;

    let run = kscope(
        &dir,
        &[
            "replay",
            file.to_str().unwrap(),
            "--fifo",
            "classic,real,atomic",
            // A controller busy for seconds: every key changed twice between keyframes is
            // one merged item under classic.
            "--pop-every",
            "10s",
            "-o",
            "json",
        ],
    )
    .await;
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let report: Value = serde_json::from_slice(&run.stdout).expect("a JSON report");

    let checks = report["checks"].as_array().expect("checks");
    let at_keyframes = checks.iter().filter(|c| c["point"] == "keyframe").count();
    assert_eq!(at_keyframes, keyframes * 3, "each FIFO at each keyframe");
    assert_eq!(checks.iter().filter(|c| c["point"] == "end").count(), 3);
    for check in checks {
        assert_eq!(check["identical"], true, "{check}");
        // A keyframe can come before the first state is whole; the end holds the pods.
        assert!(
            check["point"] == "keyframe" || count(check, "objects") > 0,
            "{check}"
        );
    }

    let fifo = |name: &str| {
        report["fifos"]
            .as_array()
            .expect("fifos")
            .iter()
            .find(|f| f["fifo"] == name)
            .unwrap_or_else(|| panic!("{name} ran: {report}"))
            .clone()
    };
    let (classic, real, atomic) = (fifo("classic"), fifo("real"), fifo("atomic"));
    assert!(count(&classic, "mergedItems") > 0, "{classic}");
    assert_eq!(count(&real, "mergedItems"), 0, "{real}");
    assert_eq!(count(&classic, "replacedAll"), 0, "{classic}");
    assert_eq!(
        count(&atomic, "replacedAll"),
        recording.states,
        "a ReplacedAll per whole state recorded, after each 410 too: {atomic}"
    );
    // Merged, the same deltas come in fewer items; in order, each is its own.
    assert!(
        count(&classic, "items") < count(&real, "items"),
        "{classic} {real}"
    );

    let pair = |first: &str, second: &str| {
        report["pairs"]
            .as_array()
            .expect("pairs")
            .iter()
            .find(|p| p["first"] == first && p["second"] == second)
            .unwrap_or_else(|| panic!("{first} vs {second}: {report}"))
            .clone()
    };
    let classic_real = pair("classic", "real");
    assert!(
        count(&classic_real["counts"], "merged") > 0,
        "{classic_real}"
    );
    let real_atomic = pair("real", "atomic");
    assert_eq!(
        count(&real_atomic["counts"], "relist"),
        recording.states,
        "{real_atomic}"
    );
    assert_eq!(count(&real_atomic["counts"], "merged"), 0, "{real_atomic}");
    assert!(
        real_atomic["differences"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("one ReplacedAll")),
        "{real_atomic}"
    );

    let human = kscope(
        &dir,
        &["replay", file.to_str().unwrap(), "--fifo", "classic,real"],
    )
    .await;
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(human.status.success(), "{text}");
    assert!(text.contains("pods classic vs real: differ:"), "{text}");
    assert!(
        text.contains("keyframe 1 (resourceVersion ") && text.contains("pods real store identical"),
        "{text}"
    );
}

fn raw(json: String) -> Box<RawValue> {
    RawValue::from_string(json).expect("JSON")
}

fn pod(rv: u64) -> Box<RawValue> {
    raw(format!(
        r#"{{"kind":"Pod","metadata":{{"namespace":"ns","name":"a","resourceVersion":"{rv}"}}}}"#
    ))
}

#[tokio::test]
async fn a_keyframe_the_events_do_not_fold_to_is_named() {
    let dir = temp_dir("replay-fifo-mismatch");
    let file = dir.join("bad.ksr");
    let header = Header {
        format_version: 1,
        kscope_version: "test".into(),
        context: None,
        server: "https://127.0.0.1".into(),
        kinds: vec!["pods".into()],
        namespace: None,
        start_time: "2026-01-01T00:00:00Z".into(),
    };
    let mut writer = Writer::new(File::create(&file).expect("a file"), &header).expect("a writer");
    writer
        .append(&Record::List {
            kind: "pods".into(),
            at: 1,
            requested: String::new(),
            continued: None,
            resource_version: "1".into(),
            next: None,
            items: vec![pod(1)],
        })
        .expect("written");
    writer
        .append(&Record::Event {
            kind: "pods".into(),
            at: 2,
            event_type: "MODIFIED".into(),
            resource_version: Some("2".into()),
            object: pod(2),
        })
        .expect("written");
    // The keyframe claims the store still holds the listed object.
    writer
        .keyframe(&[Record::Keyframe {
            kind: "pods".into(),
            at: 3,
            resource_version: "2".into(),
            objects: vec![pod(1)],
        }])
        .expect("written");
    writer.finish().expect("finished");

    let run = kscope(
        &dir,
        &["replay", file.to_str().unwrap(), "--fifo", "real,atomic"],
    )
    .await;
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("keyframe 1 (resourceVersion 2,")
            && stderr
                .contains("the real pipeline's pods store differs from the recorded one: ns/a"),
        "{stderr}"
    );
}
