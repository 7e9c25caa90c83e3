//! The replay server's own reading of a recording: the fuzz target `replay_timeline`'s checks
//! (segments, steps, checkpoints; `fuzz/src/timeline.rs`) on the seeds, and `kscope sim
//! --replay` on recordings that are empty, cut or corrupt before anything can be served: a
//! clear startup error naming the file, never a panic, nor a server of an empty cluster.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::common::cli::temp_dir;

#[path = "../../fuzz/src/timeline.rs"]
mod timeline_fuzz;

fn seeds() -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds-recording");
    let mut seeds: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&dir)
        .expect("the seeds")
        .map(|entry| {
            let path = entry.expect("a seed").path();
            let bytes = std::fs::read(&path).expect("a seed");
            (path, bytes)
        })
        .collect();
    seeds.sort();
    seeds
}

/// The fuzz target's checks on its seeds, and on each seed cut and flipped at a few places
/// (`fuzz/fuzz_targets/replay_timeline.rs`, docs/fuzzing.md).
#[test]
fn the_replay_timeline_fuzz_checks_hold_on_the_seeds() {
    let seeds = seeds();
    assert_eq!(seeds.len(), 3);
    for (_, seed) in &seeds {
        timeline_fuzz::check(seed);
        for at in [1, 17, seed.len() / 3, seed.len() / 2, seed.len() - 1] {
            timeline_fuzz::check(&seed[..at]);
            let mut flipped = seed.clone();
            flipped[at] ^= 0x20;
            timeline_fuzz::check(&flipped);
        }
    }
}

/// `kscope sim --replay FILE` to its exit (10 s at most: one that serves instead is killed
/// and fails the test); its exit code and stderr.
async fn sim_replay(dir: &Path, file: &Path) -> (Option<i32>, String) {
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_kscope"))
        .args(["sim", "--replay"])
        .arg(file)
        .env("XDG_STATE_HOME", dir.join("state"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("kscope sim runs");
    let out = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output())
        .await
        .unwrap_or_else(|_| {
            panic!(
                "kscope sim --replay {} served instead of failing",
                file.display()
            )
        })
        .expect("kscope sim runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn sim_replay_refuses_a_recording_it_cannot_serve_at_startup() {
    let dir = temp_dir("replay-reader");
    let (_, churn) = seeds()
        .into_iter()
        .find(|(path, _)| path.ends_with("churn.ksr"))
        .expect("the churn seed");
    // Where the header ends and the first block starts: the magic, the version, the
    // header's length, the header, its CRC.
    let header_len = u32::from_le_bytes(churn[10..14].try_into().unwrap()) as usize;
    let first_block = 14 + header_len + 4;
    let mut first_block_flipped = churn.clone();
    first_block_flipped[first_block + 50] ^= 0x01;
    let cases: [(&str, Vec<u8>, &str); 5] = [
        ("empty", Vec::new(), "not a kscope recording"),
        (
            "not-a-recording",
            b"{\"kind\":\"PodList\"}\n".to_vec(),
            "not a kscope recording",
        ),
        (
            "cut-in-header",
            churn[..first_block - 3].to_vec(),
            "header is damaged",
        ),
        (
            "header-only",
            churn[..first_block].to_vec(),
            "holds no whole list",
        ),
        (
            "first-block-corrupt",
            first_block_flipped,
            "damaged at byte",
        ),
    ];
    for (name, bytes, says) in cases {
        let file = dir.join(format!("{name}.ksr"));
        std::fs::write(&file, &bytes).expect("write the recording");
        let (code, stderr) = sim_replay(&dir, &file).await;
        assert_eq!(code, Some(1), "{name}: {stderr}");
        assert!(
            stderr.contains(&format!("cannot replay {}", file.display())) && stderr.contains(says),
            "{name}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
