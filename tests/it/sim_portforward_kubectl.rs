//! `kubectl port-forward` (1.32) against the sim: kubectl speaks SPDY/3.1, tunnelled in a
//! WebSocket by default and over a plain `Upgrade: SPDY/3.1` when its WebSocket path is
//! switched off. Each test reaches the pod's simulated HTTP server through the local port
//! kubectl opens, as `curl localhost:PORT/healthz` would.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::kubectl::Kubectl;
use crate::common::wait::HANG_GUARD;

const MANIFESTS: &str = r#"apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: default
  labels: {app: web}
spec:
  containers:
  - name: app
    image: registry.example/web:1.4
    ports:
    - {containerPort: 8080, name: http}
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: default
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: http}
"#;

/// A sim with pod `web` (port 8080) running behind Service `web` (port 80).
async fn started(name: &str) -> Option<Kubectl> {
    let fx = Kubectl::start(name).await?;
    let file = fx.file("web.yaml", MANIFESTS);
    fx.ok(&["apply", "-f", &file]).await;
    fx.ok(&["wait", "--for=condition=Ready", "pod/web", "--timeout=60s"])
        .await;
    Some(fx)
}

/// A running `kubectl port-forward` and the local port it listens on.
struct Forward {
    /// `None` once [`Forward::exited`] has taken it.
    child: Option<Child>,
    port: u16,
}

impl Forward {
    /// Starts `kubectl port-forward TARGET :PORT` (kubectl picks the local port) and waits
    /// for its "Forwarding from 127.0.0.1:N" line. `websockets: false` turns kubectl's
    /// WebSocket tunnel off, so it upgrades to SPDY directly.
    async fn start(fx: &Kubectl, target: &str, remote: &str, websockets: bool) -> Self {
        let mut command = fx.command(&["port-forward", target, &format!(":{remote}")]);
        command
            .env("KUBECTL_PORT_FORWARD_WEBSOCKETS", websockets.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("kubectl runs");
        let stdout = child.stdout.take().expect("stdout");
        let found = tokio::time::timeout(
            HANG_GUARD,
            tokio::task::spawn_blocking(move || {
                let mut lines = BufReader::new(stdout).lines();
                let port = lines.by_ref().map_while(Result::ok).find_map(|line| {
                    line.strip_prefix("Forwarding from 127.0.0.1:")
                        .and_then(|rest| rest.split(' ').next())
                        .and_then(|port| port.parse::<u16>().ok())
                });
                // Keep reading so kubectl never blocks on a full pipe.
                std::thread::spawn(move || lines.for_each(drop));
                port
            }),
        )
        .await;
        let port = match found {
            Ok(Ok(Some(port))) => port,
            _ => {
                let _ = child.kill();
                let out = child.wait_with_output().expect("kubectl ends");
                panic!(
                    "kubectl port-forward {target} never listened: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        };
        Self {
            child: Some(child),
            port,
        }
    }

    /// Waits for kubectl to exit on its own; (success, stderr).
    async fn exited(mut self) -> (bool, String) {
        let mut child = self.child.take().expect("kubectl is running");
        let output = tokio::time::timeout(
            HANG_GUARD,
            tokio::task::spawn_blocking(move || {
                let _ = child.stdout.take();
                child.wait_with_output()
            }),
        )
        .await
        .expect("kubectl port-forward exits")
        .expect("join")
        .expect("kubectl ends");
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }
}

impl Drop for Forward {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Connects to kubectl's local port.
async fn connect(port: u16) -> TcpStream {
    TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("kubectl's local port accepts")
}

/// Sends `GET path` on `stream` (closing after the answer) and reads the whole answer.
async fn get_on(mut stream: TcpStream, path: &str) -> String {
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("request");
    let mut answer = Vec::new();
    tokio::time::timeout(HANG_GUARD, stream.read_to_end(&mut answer))
        .await
        .expect("the answer ends")
        .expect("answer");
    String::from_utf8_lossy(&answer).into_owned()
}

/// The status line and the body of an HTTP answer.
fn status_and_body(answer: &str) -> (&str, &str) {
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((answer, ""));
    (head.lines().next().unwrap_or(""), body)
}

async fn healthz_through(websockets: bool, name: &str) {
    let Some(fx) = started(name).await else {
        return;
    };
    let forward = Forward::start(&fx, "pod/web", "8080", websockets).await;
    let answer = get_on(connect(forward.port).await, "/healthz").await;
    assert_eq!(
        status_and_body(&answer),
        ("HTTP/1.1 200 OK", "ok\n"),
        "{answer}"
    );

    // Two connections open at once: two stream pairs on kubectl's one SPDY connection.
    let (first, second) = (connect(forward.port).await, connect(forward.port).await);
    let (ready, metrics) = tokio::join!(get_on(first, "/ready"), get_on(second, "/metrics"));
    assert_eq!(
        status_and_body(&ready),
        ("HTTP/1.1 200 OK", "ready\n"),
        "{ready}"
    );
    let (status, body) = status_and_body(&metrics);
    assert_eq!(status, "HTTP/1.1 200 OK", "{metrics}");
    assert!(
        body.contains(r#"http_requests_total{pod="web",port="8080"}"#),
        "{metrics}"
    );
}

#[tokio::test]
async fn kubectl_port_forward_over_its_websocket_tunnel_reaches_healthz() {
    healthz_through(true, "pf-tunnel").await;
}

#[tokio::test]
async fn kubectl_port_forward_over_a_spdy_upgrade_reaches_healthz() {
    healthz_through(false, "pf-upgrade").await;
}

#[tokio::test]
async fn kubectl_port_forward_to_a_service_reaches_a_pod_behind_it() {
    let Some(fx) = started("pf-service").await else {
        return;
    };
    // kubectl resolves port 80 to the selected pod's `http` port, 8080.
    let forward = Forward::start(&fx, "svc/web", "80", true).await;
    let answer = get_on(connect(forward.port).await, "/healthz").await;
    assert_eq!(
        status_and_body(&answer),
        ("HTTP/1.1 200 OK", "ok\n"),
        "{answer}"
    );
}

#[tokio::test]
async fn a_port_the_pod_does_not_serve_gives_kubectls_error() {
    let Some(fx) = started("pf-refused").await else {
        return;
    };
    let forward = Forward::start(&fx, "pod/web", "9999", true).await;
    // The kubelet's error arrives on the error stream; kubectl logs it, drops the local
    // connection with nothing said, and (since 1.29) gives up the whole forward.
    let answer = get_on(connect(forward.port).await, "/healthz").await;
    assert_eq!(answer, "");
    let (ok, err) = forward.exited().await;
    assert!(!ok, "{err}");
    assert!(
        err.contains("an error occurred forwarding")
            && err.contains("127.0.0.1:9999: connect: connection refused"),
        "{err}"
    );
    assert!(err.contains("lost connection to pod"), "{err}");
}
