//! `kscope replay FILE` in a real terminal (tmux): the TUI on a recording of a churning sim.
//! The header says what is played and where; `,` pauses, `<` and `>` change the speed, `.`
//! plays one event, `:seek rv=N` moves (back, too) to where `kscope replay FILE --print --at
//! N` folds the recording, and a filter works on the played table.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use kscope_informers::record::format::{BlockType, Reader, Record};
use kscope_informers::record::state::{ends_initial_events, object_key};

use crate::common::cli::kscope;
use crate::common::tmux::Session;
use crate::replay::churn_recording;

/// One watch event of the recording, after the initial state.
#[derive(Debug, Clone)]
struct Played {
    at: i64,
    event_type: String,
    rv: u64,
    key: String,
}

/// The resourceVersion the initial state ends at, and the watch events after it.
fn played(file: &Path) -> (u64, Vec<Played>) {
    let mut reader =
        Reader::new(BufReader::new(File::open(file).expect("the recording"))).expect("a recording");
    let (mut initial_rv, mut events, mut initial) = (0, Vec::new(), false);
    while let Ok(Some((info, records))) = reader.next_block() {
        if info.block_type == BlockType::Keyframe {
            continue;
        }
        for record in records {
            match record {
                Record::WatchStart {
                    send_initial_events,
                    ..
                } => initial = send_initial_events,
                Record::Event {
                    at,
                    event_type,
                    resource_version,
                    object,
                    ..
                } => {
                    let rv = resource_version
                        .and_then(|rv| rv.parse().ok())
                        .unwrap_or_default();
                    if initial {
                        if event_type == "BOOKMARK" && ends_initial_events(&object) {
                            initial = false;
                            initial_rv = rv;
                        }
                        continue;
                    }
                    events.push(Played {
                        at,
                        event_type,
                        rv,
                        key: object_key(&object).unwrap_or_default(),
                    });
                }
                _ => {}
            }
        }
    }
    (initial_rv, events)
}

/// `namespace/name` of the pods `kscope replay FILE --print --at RV` prints.
async fn printed_at(dir: &Path, file: &Path, rv: u64) -> BTreeSet<String> {
    let out = kscope(
        dir,
        &[
            "replay",
            file.to_str().unwrap(),
            "--print",
            "--at",
            &rv.to_string(),
            "-o",
            "json",
        ],
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON list");
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|pod| {
            format!(
                "{}/{}",
                pod["metadata"]["namespace"].as_str().unwrap_or_default(),
                pod["metadata"]["name"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

/// The table's rows as `namespace/name`: the lines under the column titles, up to the first
/// blank line, panel, filter or status line.
fn shown(screen: &str) -> BTreeSet<String> {
    screen
        .lines()
        .skip_while(|l| !l.starts_with("NAMESPACE"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty() && !l.starts_with(['┌', '/', '▶', ':', '?']))
        .filter_map(|l| {
            let mut cells = l.split_whitespace();
            Some(format!("{}/{}", cells.next()?, cells.next()?))
        })
        .collect()
}

/// The resourceVersion the header says was played: `(rv N)`.
fn header_rv(screen: &str) -> Option<u64> {
    let first = screen.lines().next()?;
    let (_, rest) = first.split_once("(rv ")?;
    rest.split(')').next()?.parse().ok()
}

#[tokio::test]
async fn the_tui_plays_pauses_steps_and_seeks_a_recording() {
    if crate::common::tools::required("tmux", "to run kscope in a real terminal").is_none() {
        return;
    }
    let Some((_fx, dir, file)) = churn_recording("replay-tui").await else {
        return;
    };
    let (initial_rv, events) = played(&file);
    let command = format!(
        "env XDG_STATE_HOME={dir}/state XDG_CONFIG_HOME={dir}/config HOME={dir} {kscope} replay {file} --speed 0.1",
        dir = dir.display(),
        kscope = env!("CARGO_BIN_EXE_kscope"),
        file = file.display(),
    );
    let session = Session::alone_sized(
        format!("kscope-replay-tui-{}", std::process::id()),
        &command,
        160,
        50,
    );
    let recording = format!("recording {} at ", file.display());
    session.wait_for("the header of the recording, playing", |s| {
        s.contains(&recording)
            && s.contains("×0.1, playing")
            && s.contains("watching at rv")
            && !shown(s).is_empty()
    });

    session.keys(&[">"]);
    session.wait_for("a quarter speed", |s| s.contains("×0.25, playing"));
    session.keys(&["<"]);
    session.wait_for("a tenth again", |s| s.contains("×0.1, playing"));

    // Paused: the table comes to the recording's state at the header's resourceVersion.
    session.keys(&[","]);
    let screen = session.wait_for("paused", |s| s.contains("×0.1, paused"));
    let paused_rv = header_rv(&screen).expect("the header's resourceVersion");
    let want = printed_at(&dir, &file, paused_rv).await;
    let screen = session.wait_for("the table at the paused resourceVersion", |s| {
        shown(s) == want
    });
    assert_eq!(header_rv(&screen), Some(paused_rv), "{screen}");

    // A step plays one event: from just after an event to just after the next, which
    // adds or deletes a pod.
    let pair = events
        .windows(2)
        .find(|w| {
            w[0].event_type != "BOOKMARK"
                && matches!(w[1].event_type.as_str(), "ADDED" | "DELETED")
                && w[1].at > w[0].at
                && w[1].rv > w[0].rv
        })
        .expect("a recorded pod added or deleted after another event");
    let (before, event) = (&pair[0], &pair[1]);
    session.keys(&[":", &format!("seek rv={}", before.rv), "Enter"]);
    let want_before = printed_at(&dir, &file, before.rv).await;
    session.wait_for("the table at the resourceVersion sought", |s| {
        header_rv(s) == Some(before.rv) && shown(s) == want_before && s.contains("paused")
    });
    session.keys(&["."]);
    let want_after = printed_at(&dir, &file, event.rv).await;
    assert_ne!(want_before, want_after, "{event:?} changes the pods");
    assert_eq!(
        want_after.contains(&event.key),
        event.event_type == "ADDED",
        "{event:?}"
    );
    session.wait_for("one event played", |s| {
        header_rv(s) == Some(event.rv) && shown(s) == want_after
    });

    // Back to the initial state: the informer relists there, as after a 410.
    session.keys(&[":", &format!("seek rv={initial_rv}"), "Enter"]);
    let want_initial = printed_at(&dir, &file, initial_rv).await;
    session.wait_for("the initial state again", |s| {
        header_rv(s) == Some(initial_rv) && shown(s) == want_initial
    });

    // A filter on the played table.
    let namespace = want_initial
        .iter()
        .next()
        .and_then(|k| k.split('/').next())
        .expect("a namespace")
        .to_string();
    session.keys(&["/", &format!("namespace={namespace}"), "Enter"]);
    let in_namespace: BTreeSet<String> = want_initial
        .iter()
        .filter(|k| k.starts_with(&format!("{namespace}/")))
        .cloned()
        .collect();
    assert!(in_namespace.len() < want_initial.len(), "{want_initial:?}");
    session.wait_for("the filtered rows", |s| shown(s) == in_namespace);

    session.keys(&["q"]);
    session.wait_exit("q");
}
