//! External tools the tests drive as real clients (kubectl, tmux, python3 with the official
//! Kubernetes client). A tool is looked up on PATH; when it is missing, a test skips and says
//! why, except in CI (`CI=true`), where `.ci/run` installs every tool and a missing one is a
//! failure rather than a silent pass.

use std::path::PathBuf;

/// Whether this run is CI's, where every tool must be present.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Says that `what` is missing: panics in CI, else prints why the test is skipped.
pub fn missing(what: &str) {
    assert!(
        !in_ci(),
        "{what} is missing, and CI=true: .ci/run installs it, so this is a failure"
    );
    eprintln!("skipped: {what} is missing");
}

/// The path of `program` on PATH, or `None` (after [`missing`]) when it is not installed.
pub fn required(program: &str, why: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(program))
            .find(|candidate| candidate.is_file())
    });
    if found.is_none() {
        missing(&format!("{program} (needed {why})"));
    }
    found
}
