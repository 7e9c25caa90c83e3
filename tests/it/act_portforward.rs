//! End to end: kscope's port-forward in a real terminal (tmux, 80x24) against `kscope sim`:
//! `F` on a pod and its dialog, an HTTP GET through 127.0.0.1 reaching the pod's simulated
//! server, `:pf` counting the connection, a stop that closes the port, and a forward whose
//! pod kubectl deletes saying so.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::cli::{sim_clusters, temp_dir};
use crate::common::tmux::Session;
use crate::common::tools;
use crate::common::wait;

const POD: &str = r#"apiVersion: v1
kind: Namespace
metadata:
  name: pf
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: pf
  labels: {app: web}
spec:
  containers:
  - name: app
    image: registry.example/web:1.4
    ports:
    - {containerPort: 8080, name: http}
    - {containerPort: 9090, name: metrics}
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: pf
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: http}
"#;

/// A small sim with pod `pf/web` running, its kubeconfig and a scratch directory.
pub(super) struct Fixture {
    name: String,
    pub(super) dir: PathBuf,
    sim: Child,
    kubeconfig: PathBuf,
    kubectl: PathBuf,
}

impl Fixture {
    pub(super) async fn start(name: &str) -> Option<Self> {
        Self::start_clusters(name, 1).await
    }

    /// `clusters` sims (contexts kscope-sim-1…), the pod created in the first.
    async fn start_clusters(name: &str, clusters: usize) -> Option<Self> {
        tools::required("tmux", "to run kscope in a real terminal")?;
        let kubectl = tools::required("kubectl", "to create and delete the pod")?;
        let dir = temp_dir(&format!("pf-{name}"));
        let args = ["--pods", "2", "--nodes", "1", "--namespaces", "1"];
        let (sim, kubeconfig) = sim_clusters(&dir, clusters, &args).await;
        let fx = Self {
            name: format!("kscope-pf-{name}-{}", std::process::id()),
            dir,
            sim,
            kubeconfig,
            kubectl,
        };
        let file = fx.dir.join("pod.yaml");
        std::fs::write(&file, POD).expect("manifest");
        fx.kubectl(&["apply", "-f", &file.display().to_string()]);
        fx.kubectl(&[
            "wait",
            "--for=condition=Ready",
            "pod/web",
            "-n",
            "pf",
            "--timeout=60s",
        ]);
        Some(fx)
    }

    /// kscope on namespace `pf` in an 80x24 terminal of its own.
    fn kscope(&self) -> Session {
        self.kscope_sized(80, 24)
    }

    fn kscope_sized(&self, columns: u16, rows: u16) -> Session {
        self.kscope_with("", columns, rows)
    }

    /// kscope on namespace `pf` with more flags (`--readwrite`).
    pub(super) fn kscope_with(&self, flags: &str, columns: u16, rows: u16) -> Session {
        let command = format!(
            "env KUBECONFIG={} HOME={dir} XDG_STATE_HOME={dir}/state XDG_CONFIG_HOME={dir}/config {} -n pf {flags}",
            self.kubeconfig.display(),
            env!("CARGO_BIN_EXE_kscope"),
            dir = self.dir.display(),
        );
        Session::alone_sized(self.name.clone(), &command, columns, rows)
    }

    pub(super) fn kubectl(&self, args: &[&str]) -> String {
        let out = Command::new(&self.kubectl)
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("HOME", &self.dir)
            .stdin(Stdio::null())
            .output()
            .expect("kubectl runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "kubectl {args:?}: {err}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.sim.kill();
        let _ = self.sim.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The box drawn over the table whose top border holds `title`: its lines, cut to its
/// columns, with the local ports (free ones differ run to run) written `PORT`.
fn popup(screen: &str, title: &str) -> String {
    let lines: Vec<&str> = screen.lines().collect();
    let Some(top) = lines.iter().position(|l| l.contains(title)) else {
        return String::new();
    };
    let chars: Vec<char> = lines[top].chars().collect();
    let left = chars.iter().position(|c| *c == '┌').unwrap_or(0);
    let right = chars
        .iter()
        .rposition(|c| *c == '┐')
        .unwrap_or(chars.len() - 1);
    let mut boxed = Vec::new();
    for line in &lines[top..] {
        let cut: String = line.chars().skip(left).take(right + 1 - left).collect();
        let bottom = cut.starts_with('└');
        boxed.push(local_ports(&cut));
        if bottom {
            break;
        }
    }
    boxed.join("\n")
}

/// `127.0.0.1:NNNN` as `127.0.0.1:PORT`, the line's width kept: a 5-digit free port's extra
/// column (or a 3-digit one's missing one) is taken from the blanks after what follows the
/// port (the dialog's cursor), so the text reads the same whichever port was free.
fn local_ports(line: &str) -> String {
    const ADDRESS: &str = "127.0.0.1:";
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find(ADDRESS) {
        let (before, after) = rest.split_at(at + ADDRESS.len());
        out.push_str(before);
        out.push_str("PORT");
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        let after = &after[digits..];
        let word = after.find(' ').unwrap_or(after.len());
        out.push_str(&after[..word]);
        let blanks = after[word..].chars().take_while(|c| *c == ' ').count();
        out.push_str(&" ".repeat((blanks + digits).saturating_sub(4)));
        rest = &after[word + blanks..];
    }
    out.push_str(rest);
    out
}

/// The local port the status line says a forward listens on.
pub(super) fn forwarding(screen: &str) -> Option<u16> {
    let at = screen.find("forwarding 127.0.0.1:")? + "forwarding 127.0.0.1:".len();
    let digits: String = screen[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// GET `path` on 127.0.0.1:`port`, the connection closed after the answer.
pub(super) async fn get(port: u16, path: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: web\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await?;
    Ok(String::from_utf8_lossy(&answer).into_owned())
}

/// Starts a forward on the selected pod's first port with the dialog's local port.
fn forward(session: &Session) -> u16 {
    session.keys(&["F"]);
    session.wait_for("the dialog's ports", |s| s.contains("> app/http 8080"));
    session.keys(&["Enter"]);
    let screen = session.wait_for("the forward", |s| forwarding(s).is_some());
    forwarding(&screen).expect("a local port")
}

#[tokio::test]
async fn a_forward_reaches_the_pods_server_counts_its_connections_and_stops() {
    let Some(fx) = Fixture::start("reach").await else {
        return;
    };
    let session = fx.kscope();
    session.wait_for("pod web", |s| s.contains("web") && s.contains("Running"));
    session.keys(&["F"]);
    let screen = session.wait_for("the dialog's ports", |s| s.contains("app/metrics 9090"));
    insta::assert_snapshot!("dialog_80x24", popup(&screen, "port-forward pod pf/web"));
    // The second port, then back: the first port's own default local port again.
    session.keys(&["Down"]);
    session.wait_for("9090 chosen", |s| s.contains("> app/metrics 9090"));
    session.keys(&["Up", "Enter"]);
    let screen = session.wait_for("the forward", |s| forwarding(s).is_some());
    let port = forwarding(&screen).expect("a local port");
    assert!(screen.contains("→ pf/web:8080"), "{screen}");

    let answer = get(port, "/healthz")
        .await
        .expect("GET through the forward");
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    assert!(answer.ends_with("\r\n\r\nok\n"), "{answer}");

    session.keys(&[":", "pf", "Enter"]);
    let screen = session.wait_for("the forward listed with its connection", |s| {
        s.contains("port-forwards (1)") && s.contains(" 0/1 ") && s.contains(" active")
    });
    insta::assert_snapshot!("list_80x24", popup(&screen, "port-forwards (1)"));

    // The simulated server's bulk download, for throughput: every byte comes through.
    let answer = get(port, "/bytes/100000")
        .await
        .expect("GET through the forward");
    let (head, body) = answer.split_once("\r\n\r\n").expect("an HTTP answer");
    assert!(head.contains("content-length: 100000"), "{head}");
    assert_eq!(body.len(), 100_000);

    session.keys(&["C-d"]);
    session.wait_for("the forward stopped", |s| s.contains("port-forwards (0)"));
    wait::until(
        "the local port to close",
        || match std::net::TcpStream::connect(("127.0.0.1", port)) {
            Err(err) if err.kind() == std::io::ErrorKind::ConnectionRefused => Ok(()),
            other => Err(format!("{other:?}")),
        },
    )
    .await;
}

#[tokio::test]
async fn a_forward_whose_pod_is_deleted_says_so_and_closes_its_port() {
    let Some(fx) = Fixture::start("gone").await else {
        return;
    };
    let session = fx.kscope();
    session.wait_for("pod web", |s| s.contains("web") && s.contains("Running"));
    let port = forward(&session);
    let answer = get(port, "/ready").await.expect("GET through the forward");
    assert!(answer.ends_with("\r\n\r\nready\n"), "{answer}");

    fx.kubectl(&[
        "delete",
        "pod",
        "web",
        "-n",
        "pf",
        "--grace-period=0",
        "--force",
    ]);
    session.keys(&[":", "pf", "Enter"]);
    session.wait_for("the forward marked gone", |s| {
        s.contains(" gone") && s.contains("pod web was deleted")
    });
    wait::until(
        "the local port to close",
        || match std::net::TcpStream::connect(("127.0.0.1", port)) {
            Err(err) if err.kind() == std::io::ErrorKind::ConnectionRefused => Ok(()),
            other => Err(format!("{other:?}")),
        },
    )
    .await;
}

#[tokio::test]
async fn a_forward_on_a_service_goes_to_its_target_port_on_a_ready_pod() {
    let Some(fx) = Fixture::start("service").await else {
        return;
    };
    let session = fx.kscope();
    session.wait_for("pod web", |s| s.contains("web") && s.contains("Running"));
    session.keys(&[":", "svc", "Enter"]);
    session.wait_for("service web", |s| {
        s.contains("ClusterIP") && s.contains("web")
    });
    session.keys(&["F"]);
    // Service port 80, targetPort `http`: the pod's container port 8080.
    session.wait_for("the service's port", |s| {
        s.contains("> 80 → web app/http 8080")
    });
    session.keys(&["Enter"]);
    let screen = session.wait_for("the forward", |s| forwarding(s).is_some());
    assert!(screen.contains("→ pf/web:8080"), "{screen}");
    let port = forwarding(&screen).expect("a local port");
    let answer = get(port, "/healthz")
        .await
        .expect("GET through the forward");
    assert!(answer.ends_with("\r\n\r\nok\n"), "{answer}");
}

/// A forward started on one context keeps running after `:ctx` switches to another (as a
/// `kubectl port-forward` started before does): the switch says so, bytes still come from
/// the first cluster's pod, and `:pf` names each forward's context.
#[tokio::test]
async fn a_forward_keeps_running_in_its_context_after_a_switch() {
    let Some(fx) = Fixture::start_clusters("ctx", 2).await else {
        return;
    };
    let session = fx.kscope_sized(120, 30);
    session.wait_for("pod web", |s| s.contains("web") && s.contains("Running"));
    let port = forward(&session);

    session.keys(&[":ctx kscope-sim-2", "Enter"]);
    let screen = session.wait_for("the switch", |s| {
        s.contains(
            "switched to context kscope-sim-2; 1 port-forward keeps running in its own context · \
             :pf lists them",
        )
    });
    assert!(
        screen
            .lines()
            .next()
            .unwrap_or_default()
            .contains("kscope-sim-2"),
        "{screen}"
    );
    let answer = get(port, "/healthz").await.expect("the forward answers");
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");

    session.keys(&[":pf", "Enter"]);
    let screen = session.wait_for("the list", |s| s.contains("port-forwards (1)"));
    let row = screen
        .lines()
        .find(|l| l.contains("pf/web"))
        .unwrap_or_default();
    assert!(
        row.contains("kscope-sim-1") && row.contains("active"),
        "{screen}"
    );
}
