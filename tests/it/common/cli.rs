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
    let mut run = command(dir, args);
    tokio::task::spawn_blocking(move || run.output().expect("kscope runs"))
        .await
        .expect("join")
}

/// `kscope ARGS` as [`kscope`] and [`Streaming`] run it.
fn command(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kscope"));
    command
        .args(args)
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("KSCOPE_LOG", "kscope=debug")
        .env_remove("KUBECONFIG");
    command
}

/// `http://127.0.0.1:PORT` where nothing listens: a port the system gave a listener that was
/// then closed, rather than one assumed closed.
pub fn closed_server() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let port = listener.local_addr().expect("its address").port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

/// A `kscope` run whose stdout is read as it comes, so a test can wait on what it printed
/// rather than sleep: [`Streaming::wait_line`], then [`Streaming::finish`].
pub struct Streaming {
    child: Child,
    lines: tokio::sync::mpsc::UnboundedReceiver<String>,
    seen: Vec<String>,
}

impl Streaming {
    /// Starts `kscope ARGS` as [`kscope`] runs it.
    pub fn start(dir: &Path, args: &[&str]) -> Self {
        let mut child = command(dir, args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kscope runs");
        let stdout = child.stdout.take().expect("stdout");
        let (send, lines) = tokio::sync::mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits (a minute at most) for a line that `wanted` accepts.
    pub async fn wait_line(&mut self, what: &str, wanted: impl Fn(&str) -> bool) {
        let found = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = self.lines.recv().await {
                let done = wanted(&line);
                self.seen.push(line);
                if done {
                    return true;
                }
            }
            false
        })
        .await;
        assert!(
            found == Ok(true),
            "{what}: not printed ({}); printed:\n{}",
            if found.is_err() {
                "timed out"
            } else {
                "kscope exited"
            },
            self.seen.join("\n")
        );
    }

    /// Sends the run SIGINT, as Ctrl-C at a terminal would: `kscope deltas` then prints what
    /// it has and exits 0, so a test needs no `--for` long enough for the slowest machine.
    #[allow(unsafe_code)] // libc: std has no way to send a child SIGINT.
    pub fn interrupt(&self) {
        let pid = libc::pid_t::try_from(self.child.id()).expect("a pid fits pid_t");
        // SAFETY: kill(2) reads no memory; the pid is this run's own child, not yet waited on.
        let sent = unsafe { libc::kill(pid, libc::SIGINT) };
        assert_eq!(
            sent,
            0,
            "SIGINT to kscope: {}",
            std::io::Error::last_os_error()
        );
    }

    /// Waits for the run to end; its exit status, every line it printed, and its stderr.
    pub async fn finish(mut self) -> (std::process::ExitStatus, Vec<String>, String) {
        while let Some(line) = self.lines.recv().await {
            self.seen.push(line);
        }
        let child = self.child;
        let output = tokio::task::spawn_blocking(move || child.wait_with_output())
            .await
            .expect("join")
            .expect("kscope ends");
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        (output.status, self.seen, stderr)
    }
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
