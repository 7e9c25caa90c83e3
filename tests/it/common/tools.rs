//! External tools the tests drive (kubectl), found on PATH. Where one is missing the test
//! skips with a message saying why, except under `CI=true`, where a missing tool fails the
//! test: CI installs them.

use std::path::PathBuf;

/// Whether this run is CI's, where every tool must be present.
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// `name` on PATH, or `None` (after saying why the test skips); panics under CI.
pub fn find(name: &str, why: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    });
    match found {
        Some(path) => Some(path),
        None if in_ci() => panic!("{name} is not on PATH, and CI=true requires it ({why})"),
        None => {
            eprintln!("skipped: {name} is not on PATH ({why})");
            None
        }
    }
}
