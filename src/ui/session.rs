//! A shell or an attach on a pod's container, with the terminal handed over: the keyboard's
//! bytes go to the stdin channel, stdout to the terminal, window resizes to the resize
//! channel, until the process exits or the connection drops. The caller leaves the alternate
//! screen first and drops its event reader, so nothing else reads the keyboard meanwhile.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{AttachParams, AttachedProcess, TerminalSize};
use rustix::event::{PollFd, PollFlags, Timespec, poll};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

/// How the keyboard reader waits between checks of whether the session is over: short, so
/// the TUI's own reader gets the next key, long enough to cost nothing.
const STDIN_POLL: Timespec = Timespec {
    tv_sec: 0,
    tv_nsec: 50_000_000,
};

/// What the session runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionKind {
    /// The first of these commands that starts (`bash`, then `sh`).
    Shell(Vec<String>),
    /// The container's main process, as `kubectl attach -it`.
    Attach,
}

/// A session asked for on a pod row; the terminal's owner runs it ([`run`]).
#[derive(Clone)]
pub struct SessionRequest {
    pub client: kube::Client,
    pub namespace: String,
    pub pod: String,
    /// The container picked (see [`super::containers`]); `None`: the one kubectl picks.
    pub container: Option<String>,
    pub kind: SessionKind,
}

/// How a session ended, for the status line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// The process exited with this code.
    Exited { what: String, code: i32 },
    /// It never started or the connection dropped; the reason in plain words.
    Failed { what: String, reason: String },
}

impl Ended {
    pub fn message(&self) -> String {
        match self {
            Self::Exited { what, code } => format!("{what} exited with code {code}"),
            Self::Failed { what, reason } => format!("{what} failed: {reason}"),
        }
    }

    pub fn is_failure(&self) -> bool {
        match self {
            Self::Exited { code, .. } => *code != 0,
            Self::Failed { .. } => true,
        }
    }
}

/// Runs the session on the terminal until it ends. The terminal must be in raw mode and its
/// keyboard free of other readers.
pub async fn run(request: SessionRequest) -> Ended {
    let api: Api<Pod> = Api::namespaced(request.client.clone(), &request.namespace);
    let verb = match request.kind {
        SessionKind::Shell(_) => "shell",
        SessionKind::Attach => "attach",
    };
    let container = match &request.container {
        // Picked from the pod as read just before: no second read before the shell opens.
        Some(container) => container.clone(),
        None => match api.get(&request.pod).await {
            Ok(pod) => default_container(&pod).unwrap_or_default(),
            Err(err) => {
                return Ended::Failed {
                    what: format!("{verb} in {}/{}", request.namespace, request.pod),
                    reason: plain(&err),
                };
            }
        },
    };
    let what = format!(
        "{verb} in {}/{} ({container})",
        request.namespace, request.pod
    );
    let params = AttachParams::interactive_tty().container(container.clone());
    let mut keyboard = Keyboard::start();
    let ended = match &request.kind {
        SessionKind::Shell(commands) => {
            let mut ended = None;
            for (at, command) in commands.iter().enumerate() {
                let last = at + 1 == commands.len();
                let outcome = match api.exec(&request.pod, [command.as_str()], &params).await {
                    Ok(process) => pump(process, &mut keyboard).await,
                    Err(err) => Outcome::NotStarted(plain(&err)),
                };
                match outcome {
                    // A container without bash: the next command, as k9s does.
                    Outcome::NotStarted(_)
                    | Outcome::Exited {
                        code: 126 | 127,
                        typed: false,
                    } if !last => {}
                    outcome => {
                        ended = Some(outcome.ended(what.clone()));
                        break;
                    }
                }
            }
            ended.unwrap_or(Ended::Failed {
                what,
                reason: "no shell command is configured".to_string(),
            })
        }
        SessionKind::Attach => match api.attach(&request.pod, &params).await {
            Ok(process) => pump(process, &mut keyboard).await.ended(what),
            Err(err) => Outcome::NotStarted(plain(&err)).ended(what),
        },
    };
    keyboard.stop().await;
    ended
}

/// The container kubectl picks: the `kubectl.kubernetes.io/default-container` annotation's,
/// else the first.
pub fn default_container(pod: &Pod) -> Option<String> {
    let annotated = pod
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get("kubectl.kubernetes.io/default-container"));
    let containers = &pod.spec.as_ref()?.containers;
    match annotated {
        Some(name) if containers.iter().any(|c| &c.name == name) => Some(name.clone()),
        _ => containers.first().map(|c| c.name.clone()),
    }
}

/// What one exec or attach came to.
enum Outcome {
    Exited { code: i32, typed: bool },
    NotStarted(String),
    Dropped(String),
}

impl Outcome {
    fn ended(self, what: String) -> Ended {
        match self {
            Self::Exited { code, .. } => Ended::Exited { what, code },
            Self::NotStarted(reason) | Self::Dropped(reason) => Ended::Failed { what, reason },
        }
    }
}

/// Copies the keyboard to stdin, stdout to the terminal and resizes to the resize channel
/// until the exit status comes (or the connection ends without one).
async fn pump(mut process: AttachedProcess, keyboard: &mut Keyboard) -> Outcome {
    let (Some(mut stdin), Some(mut stdout), Some(status)) =
        (process.stdin(), process.stdout(), process.take_status())
    else {
        return Outcome::NotStarted("the server gave no stdin, stdout or status".to_string());
    };
    let mut resize = process.terminal_size();
    if let (Some(sender), Ok((width, height))) = (resize.as_mut(), crossterm::terminal::size()) {
        use futures::SinkExt;
        // A closed channel means the session is ending: the status says how.
        let _ = sender.send(TerminalSize { width, height }).await;
    }
    let mut window =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::window_change()).ok();
    let mut terminal = tokio::io::stdout();
    let mut buf = vec![0u8; 16 << 10];
    let mut typed = false;
    let mut output_open = true;
    let mut status = std::pin::pin!(status);
    let status = loop {
        tokio::select! {
            read = stdout.read(&mut buf), if output_open => match read {
                Ok(0) | Err(_) => output_open = false,
                Ok(n) => {
                    if terminal.write_all(&buf[..n]).await.is_err() {
                        output_open = false;
                    }
                    let _ = terminal.flush().await;
                }
            },
            bytes = keyboard.bytes.recv() => match bytes {
                Some(bytes) => {
                    typed = true;
                    if stdin.write_all(&bytes).await.is_err() {
                        // The process closed stdin; its status follows.
                        continue;
                    }
                }
                // The reader stops by itself only when the terminal is gone (hung up, read
                // at its end): nobody is left to type, so waiting on a shell that never
                // exits would keep kscope running with no terminal.
                None => return Outcome::Dropped("the terminal closed".to_string()),
            },
            Some(()) = next_resize(&mut window) => {
                if let (Some(sender), Ok((width, height))) =
                    (resize.as_mut(), crossterm::terminal::size())
                {
                    use futures::SinkExt;
                    let _ = sender.send(TerminalSize { width, height }).await;
                }
            }
            status = &mut status => break status,
        }
    };
    // What the process wrote before it exited is shown before the TUI comes back.
    while output_open {
        match stdout.read(&mut buf).await {
            Ok(0) | Err(_) => output_open = false,
            Ok(n) => {
                let _ = terminal.write_all(&buf[..n]).await;
            }
        }
    }
    let _ = terminal.flush().await;
    let Some(status) = status else {
        return match process.join().await {
            Err(err) => Outcome::Dropped(format!("the connection dropped ({err})")),
            Ok(()) => Outcome::Dropped("the connection closed without an exit status".to_string()),
        };
    };
    if status.status.as_deref() == Some("Success") {
        return Outcome::Exited { code: 0, typed };
    }
    let code = status
        .details
        .as_ref()
        .and_then(|d| d.causes.as_ref())
        .and_then(|causes| {
            causes
                .iter()
                .find(|c| c.reason.as_deref() == Some("ExitCode"))
        })
        .and_then(|c| c.message.as_deref())
        .and_then(|m| m.parse().ok());
    match (status.reason.as_deref(), code) {
        (Some("NonZeroExitCode"), Some(code)) => Outcome::Exited { code, typed },
        _ => Outcome::NotStarted(
            status
                .message
                .unwrap_or_else(|| "the server ended the session".to_string()),
        ),
    }
}

/// The next window resize, or never without the signal.
async fn next_resize(window: &mut Option<tokio::signal::unix::Signal>) -> Option<()> {
    match window {
        Some(signal) => signal.recv().await,
        None => std::future::pending().await,
    }
}

/// A kube error as a person reads it: the server's message when it gave one.
fn plain(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(status) => status.message.clone(),
        other => other.to_string(),
    }
}

/// Reads the keyboard's raw bytes on a thread that checks between polls whether to stop, so
/// that once the session is over no read is left pending to swallow the TUI's next key (a
/// blocking read, as tokio's stdin does, would be).
struct Keyboard {
    bytes: mpsc::Receiver<Vec<u8>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Keyboard {
    fn start() -> Self {
        let (tx, bytes) = mpsc::channel(64);
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            let stdin = rustix::stdio::stdin();
            let mut buf = [0u8; 4096];
            while !stopped.load(Ordering::Relaxed) {
                let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
                match poll(&mut fds, Some(&STDIN_POLL)) {
                    Ok(0) | Err(rustix::io::Errno::INTR) => continue,
                    Ok(_) => match rustix::io::read(stdin, &mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            if tx.blocking_send(buf[..n].to_vec()).is_err() {
                                break;
                            }
                        }
                    },
                    Err(_) => break,
                }
            }
        });
        Self {
            bytes,
            stop,
            thread: Some(thread),
        }
    }

    /// Stops the reader and waits for its thread, so the keyboard is free again.
    async fn stop(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.bytes.close();
        if let Some(thread) = self.thread.take() {
            let _ = tokio::task::spawn_blocking(move || thread.join()).await;
        }
    }
}

/// A session dropped unfinished (a signal ends kscope) stops its reader too, within one
/// poll, rather than leave it reading the keyboard.
impl Drop for Keyboard {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
