//! kubectl against a sim: a sim, a private kubeconfig and HOME for it, and kubectl found on
//! PATH (see [`super::tools`]).

use std::path::PathBuf;
use std::process::{Command, Stdio};

use kscope_sim::{Sim, SimConfig, SimHandle};

use super::tools;

/// A sim plus a private directory holding its kubeconfig.
pub struct Kubectl {
    pub sim: SimHandle,
    pub dir: PathBuf,
    kubectl: PathBuf,
}

impl Kubectl {
    /// A small sim named `name` for one test; `None` (skip) where kubectl is absent.
    pub async fn start(name: &str) -> Option<Self> {
        Self::start_with(name, SimConfig::with_size(40, 3, 2)).await
    }

    pub async fn start_with(name: &str, config: SimConfig) -> Option<Self> {
        let kubectl = tools::required("kubectl", "to drive kubectl against the sim")?;
        let sim = Sim::start(config).await.expect("sim starts");
        let dir =
            std::env::temp_dir().join(format!("kscope-sim-kubectl-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("kubeconfig"), sim.kubeconfig_yaml()).expect("kubeconfig");
        Some(Self { sim, dir, kubectl })
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.kubectl);
        command
            .args(args)
            .env("KUBECONFIG", self.dir.join("kubeconfig"))
            .env("HOME", &self.dir)
            .stdin(Stdio::null());
        command
    }

    /// Runs kubectl to completion off the async runtime; returns (success, stdout, stderr).
    pub async fn run(&self, args: &[&str]) -> (bool, String, String) {
        let mut command = self.command(args);
        let output = tokio::task::spawn_blocking(move || command.output())
            .await
            .expect("join")
            .expect("kubectl runs");
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }

    /// Runs kubectl and requires success; returns stdout.
    pub async fn ok(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.run(args).await;
        assert!(ok, "kubectl {args:?} failed: {err}");
        out
    }

    /// Writes `text` to `name` in the private directory and returns its path.
    pub fn file(&self, name: &str, text: &str) -> String {
        let path = self.dir.join(name);
        std::fs::write(&path, text).expect("write manifest");
        path.to_string_lossy().into_owned()
    }
}

impl Drop for Kubectl {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
