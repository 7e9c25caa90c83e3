//! Shared by the end-to-end tests that drive `kscope` in a real terminal: a tmux session,
//! keys sent to it, and its screen read back.

use std::process::Command;
use std::time::{Duration, Instant};

/// Runs tmux; its stdout on success, `None` otherwise (or when tmux is not installed).
pub fn tmux(args: &[&str]) -> Option<String> {
    let out = Command::new("tmux").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A detached tmux session running a command; killed when dropped, so a failed test leaves
/// nothing behind. On the default server, or on a server of its own ([`Session::alone`]).
pub struct Session(pub String, Option<String>);

impl Session {
    /// Starts `command` in a `width`x`height` session on a tmux server of its own (`tmux
    /// -L`), so that no other test's server, starting or exiting, is in its way; the server
    /// ends with the session.
    pub fn alone_sized(name: String, command: &str, width: u16, height: u16) -> Self {
        Self::sized(name.clone(), Some(name), command, (width, height))
    }

    /// tmux on this session's server.
    fn run(&self, args: &[&str]) -> Option<String> {
        match &self.1 {
            Some(server) => {
                let mut all = vec!["-L", server.as_str()];
                all.extend_from_slice(args);
                tmux(&all)
            }
            None => tmux(args),
        }
    }

    /// Starts `command` in a 120x40 session named `name`. Tried a few times: when another
    /// test's session, the server's last, has just ended, the server may still be exiting.
    pub fn start(name: String, command: &str) -> Self {
        Self::sized(name, None, command, (120, 40))
    }

    fn sized(name: String, server: Option<String>, command: &str, size: (u16, u16)) -> Self {
        let session = Session(name, server);
        let (width, height) = (size.0.to_string(), size.1.to_string());
        let args = [
            "new-session",
            "-d",
            "-s",
            &session.0,
            "-x",
            &width,
            "-y",
            &height,
            command,
        ];
        let started = (0..5).any(|attempt| {
            if attempt > 0 {
                std::thread::sleep(Duration::from_millis(300));
            }
            session.run(&args).is_some()
        });
        assert!(started, "tmux starts {command}");
        session
    }

    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", &self.0])
            .unwrap_or_default()
    }

    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", self.0.as_str()];
        args.extend_from_slice(keys);
        self.run(&args).expect("send-keys");
    }

    /// Whether the session (and so the program in it) is still running.
    pub fn alive(&self) -> bool {
        self.run(&["has-session", "-t", &self.0]).is_some()
    }

    /// A tmux format (`#{pane_pid}`, `#{alternate_on}`) as this session's pane has it.
    pub fn flag(&self, format: &str) -> String {
        self.run(&["display-message", "-p", "-t", &self.0, format])
            .unwrap_or_default()
            .trim()
            .to_string()
    }

    /// The pid of the one process the pane's shell runs (kscope, typed at a shell prompt).
    pub fn child_of_pane(&self) -> String {
        let shell = self.flag("#{pane_pid}");
        let children = Command::new("pgrep")
            .args(["-P", &shell])
            .output()
            .expect("pgrep runs");
        let pid = String::from_utf8_lossy(&children.stdout).trim().to_string();
        assert!(!pid.is_empty(), "a process runs under the shell {shell}");
        pid
    }

    /// Kills this session's tmux server, as closing the terminal window would: every pane's
    /// terminal hangs up.
    pub fn kill_server(&self) {
        assert!(
            self.1.is_some(),
            "only a session alone on its server kills it"
        );
        let _ = self.run(&["kill-server"]);
    }

    /// Waits for the process `pid` to end; panics after 20 s.
    pub fn wait_gone(pid: &str, why: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::path::Path::new(&format!("/proc/{pid}")).exists() {
            assert!(
                Instant::now() < deadline,
                "{pid} still runs 20 s after {why}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits for the program to exit (its session ends with it); panics after 20 s.
    pub fn wait_exit(&self, why: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.alive() {
            assert!(Instant::now() < deadline, "kscope did not quit on {why}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until the screen satisfies `ok`, returning it; panics with the last screen.
    pub fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let screen = self.screen();
            if ok(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.run(&["kill-session", "-t", &self.0]);
    }
}

/// The kubeconfigs the demos running with `state` as XDG_STATE_HOME wrote, one each
/// (`demo-PID.kubeconfig`), sorted.
pub fn demo_kubeconfigs(state: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(state.join("kscope"))
        .map(|dir| {
            dir.filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("demo-") && n.ends_with(".kubeconfig"))
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}
