//! Shared by the tests that run the `kscope` binary: a scratch directory and the run itself.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

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

/// `kscope sim --clusters N` with `args`, its kubeconfig written to `dir/kubeconfig`, once
/// every cluster says it is ready (panics after a minute). Kill the child when done.
pub async fn sim_clusters(dir: &Path, clusters: usize, args: &[&str]) -> (Child, PathBuf) {
    let kubeconfig = dir.join("kubeconfig");
    let mut sim = Command::new(env!("CARGO_BIN_EXE_kscope"))
        .args(["sim", "--clusters", &clusters.to_string()])
        .args(args)
        .arg("--kubeconfig-out")
        .arg(&kubeconfig)
        .env("XDG_STATE_HOME", dir.join("state"))
        .env_remove("KSCOPE_SIM_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kscope sim starts");
    let stdout = sim.stdout.take().expect("stdout");
    let ready = tokio::task::spawn_blocking(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .filter(|l| l.starts_with("kscope sim ready at"))
            .take(clusters)
            .count()
    });
    let ready = tokio::time::timeout(Duration::from_secs(60), ready)
        .await
        .expect("every cluster ready in time")
        .expect("join");
    assert_eq!(ready, clusters);
    (sim, kubeconfig)
}
