//! A `kscope sim` in its own process for the write tests, kubectl against it, and kscope in
//! a tmux terminal of its own (`act_writes`, `act_edit`).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use crate::common::cli::{sim_clusters, temp_dir};
use crate::common::tmux::Session;
use crate::common::tools;

/// A sim in its own process, its kubeconfig, and a scratch HOME and XDG directories.
pub struct Fixture {
    name: String,
    pub dir: PathBuf,
    sim: Child,
    pub kubeconfig: PathBuf,
    pub kubectl: PathBuf,
}

impl Fixture {
    /// `None` (skip, or fail under CI) where tmux or kubectl is missing.
    pub async fn start(name: &str) -> Option<Self> {
        Self::start_with(name, &[]).await
    }

    /// The same, with more `kscope sim` flags.
    pub async fn start_with(name: &str, more: &[&str]) -> Option<Self> {
        tools::required("tmux", "to run kscope in a real terminal")?;
        let kubectl = tools::required("kubectl", "to check kscope's writes")?;
        let dir = temp_dir(&format!("act-{name}"));
        let mut args = vec!["--pods", "30", "--nodes", "3", "--namespaces", "2"];
        args.extend_from_slice(more);
        let (sim, kubeconfig) = sim_clusters(&dir, 1, &args).await;
        Some(Self {
            name: format!("kscope-act-{name}-{}", std::process::id()),
            dir,
            sim,
            kubeconfig,
            kubectl,
        })
    }

    /// Writes kscope's user configuration (`$XDG_CONFIG_HOME/kscope/config.yaml`).
    pub fn config(&self, text: &str) {
        let dir = self.dir.join("config/kscope");
        std::fs::create_dir_all(&dir).expect("config dir");
        std::fs::write(dir.join("config.yaml"), text).expect("config");
    }

    /// kscope with `args` in a 160x50 terminal of its own.
    pub fn kscope(&self, args: &str) -> Session {
        self.kscope_with("", args)
    }

    /// The same, with more environment (`NAME=value …`, or `-u NAME` to unset one).
    pub fn kscope_with(&self, env: &str, args: &str) -> Session {
        let command = format!(
            "env {env} KUBECONFIG={} HOME={dir} XDG_STATE_HOME={dir}/state XDG_CONFIG_HOME={dir}/config {} {args}",
            self.kubeconfig.display(),
            env!("CARGO_BIN_EXE_kscope"),
            dir = self.dir.display(),
        );
        Session::alone_sized(self.name.clone(), &command, 160, 50)
    }

    /// kubectl against the sim: (success, stdout, stderr).
    pub fn kubectl(&self, args: &[&str]) -> (bool, String, String) {
        let out = Command::new(&self.kubectl)
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("HOME", &self.dir)
            .stdin(Stdio::null())
            .output()
            .expect("kubectl runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    pub fn kubectl_ok(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.kubectl(args);
        assert!(ok, "kubectl {args:?}: {err}");
        out
    }

    /// Waits (bounded) until kubectl's output for `args` satisfies `ok`.
    pub async fn kubectl_until(&self, what: &str, args: &[&str], ok: impl Fn(&str) -> bool) {
        crate::common::wait::until(what, || {
            let (_, out, err) = self.kubectl(args);
            ok(&out).then_some(()).ok_or(format!("{out}{err}"))
        })
        .await;
    }

    /// What kscope logged.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("state/kscope/kscope.log")).unwrap_or_default()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.sim.kill();
        let _ = self.sim.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The table's rows: the lines after the header and column titles, up to the panels.
pub fn rows(screen: &str) -> Vec<&str> {
    screen
        .lines()
        .skip(3)
        .take_while(|l| !l.starts_with('┌') && !l.trim().is_empty())
        .collect()
}

pub fn listed(screen: &str) -> bool {
    screen.contains("watching at rv") && !rows(screen).is_empty()
}
