//! End to end: a port-forward started on one context keeps running after `:ctx` switches
//! to another (as a `kubectl port-forward` started before does): the switch says so, bytes
//! still come from the first cluster's pod, and `:pf` names each forward's context.

use std::process::{Command, Stdio};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::cli::{sim_clusters, temp_dir};
use crate::common::tmux::Session;
use crate::common::tools;

const POD: &str = "apiVersion: v1
kind: Namespace
metadata:
  name: pf
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: pf
spec:
  containers:
  - name: app
    image: registry.example/web:1.4
    ports:
    - {containerPort: 8080, name: http}
";

/// The local port the status line says a forward listens on.
fn forwarding(screen: &str) -> Option<u16> {
    let at = screen.find("forwarding 127.0.0.1:")? + "forwarding 127.0.0.1:".len();
    let digits: String = screen[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

async fn healthz(port: u16) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("the forward listens");
    let request = "GET /healthz HTTP/1.1\r\nHost: web\r\nConnection: close\r\n\r\n";
    stream.write_all(request.as_bytes()).await.expect("send");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.expect("answer");
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test]
async fn a_forward_keeps_running_in_its_context_after_a_switch() {
    if tools::required("tmux", "to run kscope in a real terminal").is_none() {
        return;
    }
    let Some(kubectl) = tools::required("kubectl", "to create the pod") else {
        return;
    };
    let dir = temp_dir("pf-ctx");
    let args = ["--pods", "2", "--nodes", "1", "--namespaces", "1"];
    let (mut sim, kubeconfig) = sim_clusters(&dir, 2, &args).await;
    let file = dir.join("pod.yaml");
    std::fs::write(&file, POD).expect("manifest");
    let kubectl = |args: &[&str]| {
        let out = Command::new(&kubectl)
            .args(args)
            .env("KUBECONFIG", &kubeconfig)
            .env("HOME", &dir)
            .stdin(Stdio::null())
            .output()
            .expect("kubectl runs");
        assert!(out.status.success(), "kubectl {args:?}");
    };
    kubectl(&["apply", "-f", &file.display().to_string()]);
    kubectl(&[
        "wait",
        "--for=condition=Ready",
        "pod/web",
        "-n",
        "pf",
        "--timeout=60s",
    ]);
    let command = format!(
        "env KUBECONFIG={} HOME={dir} XDG_STATE_HOME={dir}/state XDG_CONFIG_HOME={dir}/config {} -n pf",
        kubeconfig.display(),
        env!("CARGO_BIN_EXE_kscope"),
        dir = dir.display(),
    );
    let session = Session::alone_sized(
        format!("kscope-pf-ctx-{}", std::process::id()),
        &command,
        120,
        30,
    );
    session.wait_for("pod web", |s| s.contains("web") && s.contains("Running"));
    session.keys(&["F"]);
    session.wait_for("the dialog's ports", |s| s.contains("> app/http 8080"));
    session.keys(&["Enter"]);
    let screen = session.wait_for("the forward", |s| forwarding(s).is_some());
    let port = forwarding(&screen).expect("a local port");

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
    let answer = healthz(port).await;
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
    drop(session);
    let _ = sim.kill();
    let _ = sim.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
