//! Shared by the tests that run the `kscope` binary: a scratch directory and the run itself.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh directory for one test's files, named after the test binary and `name`.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "kscope-{}-{}-{name}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Runs `kscope ARGS` with its log under `dir`, kscope's own debug lines included (so that a
/// test can read what was logged), and no KUBECONFIG from the environment.
pub async fn kscope(dir: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kscope"));
    command
        .args(args)
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("KSCOPE_LOG", "kscope=debug")
        .env_remove("KUBECONFIG");
    tokio::task::spawn_blocking(move || command.output().expect("kscope runs"))
        .await
        .expect("join")
}

/// A kubeconfig file under `dir` for `server` (plain HTTP is fine) with a bearer `token`.
pub fn plain_kubeconfig(dir: &Path, server: &str, token: &str) -> String {
    let path = dir.join("kubeconfig");
    let yaml = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: test\n\
         clusters:\n- name: test\n  cluster:\n    server: {server}\n\
         users:\n- name: test\n  user:\n    token: {token}\n\
         contexts:\n- name: test\n  context:\n    cluster: test\n    user: test\n"
    );
    std::fs::write(&path, yaml).expect("write kubeconfig");
    path.display().to_string()
}

/// What kscope logged in a run of [`kscope`] under `dir` (empty if nothing was).
pub fn log(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("state/kscope/kscope.log")).unwrap_or_default()
}
