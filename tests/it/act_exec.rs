//! exec, attach and cp against the sim with kubectl 1.32, which speaks them over WebSockets
//! (v5.channel.k8s.io): output, stdin, exit codes as the status channel carries them, tar
//! both ways for cp, and the refusals the real server gives.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use crate::common::kubectl::Kubectl;

const PODS: &str = r#"apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: default
  labels: {app: web}
spec:
  containers:
  - name: app
    image: registry.example/web:1.4
    env:
    - {name: GREETING, value: hello from web}
    ports:
    - {containerPort: 8080, name: http}
  - name: console
    image: busybox:1.36
    stdin: true
---
apiVersion: v1
kind: Pod
metadata:
  name: nowhere
  namespace: default
spec:
  nodeSelector: {kscope.dev/no-such-node: "true"}
  containers:
  - name: app
    image: web:1
"#;

/// A sim with pod `web` running (containers `app` and `console`) and pod `nowhere`, which no
/// node takes.
async fn started(name: &str) -> Option<Kubectl> {
    let fx = Kubectl::start(name).await?;
    let file = fx.file("pods.yaml", PODS);
    fx.ok(&["apply", "-f", &file]).await;
    fx.ok(&[
        "wait",
        "--for=condition=Ready",
        "pod/web",
        "-n",
        "default",
        "--timeout=60s",
    ])
    .await;
    Some(fx)
}

/// Runs kubectl with `stdin`; (exit code, stdout, stderr).
async fn kubectl(fx: &Kubectl, args: &[&str], stdin: &[u8]) -> (i32, Vec<u8>, String) {
    let mut command = fx.command(args);
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let stdin = stdin.to_vec();
    let output = tokio::task::spawn_blocking(move || {
        let mut child = command.spawn().expect("kubectl runs");
        let mut pipe = child.stdin.take().expect("stdin");
        pipe.write_all(&stdin).expect("stdin written");
        drop(pipe);
        child.wait_with_output().expect("kubectl ends")
    })
    .await
    .expect("join");
    (
        output.status.code().unwrap_or(-1),
        output.stdout,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `kubectl exec web -c app -- ARGS`: (exit code, stdout, stderr).
async fn exec(fx: &Kubectl, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["exec", "web", "-n", "default", "-c", "app", "--"];
    all.extend_from_slice(args);
    let (code, out, err) = kubectl(fx, &all, b"").await;
    (code, String::from_utf8_lossy(&out).into_owned(), err)
}

#[tokio::test]
async fn exec_gives_output_and_exit_codes() {
    let Some(fx) = started("exec").await else {
        return;
    };
    assert_eq!(exec(&fx, &["cat", "/etc/hostname"]).await.1, "web\n");
    let (code, env, _) = exec(&fx, &["env"]).await;
    assert_eq!(code, 0);
    assert!(env.contains("GREETING=hello from web\n"), "{env}");
    assert!(env.contains("HOSTNAME=web\n"), "{env}");
    let (_, config, _) = exec(&fx, &["cat", "/app/config.yaml"]).await;
    assert!(config.contains("listen: [8080]"), "{config}");
    let (_, ps, _) = exec(&fx, &["ps"]).await;
    assert!(ps.contains("    1 root      0:00 /web\n"), "{ps}");

    let (code, out, err) = exec(&fx, &["sh", "-c", "echo partial; exit 3"]).await;
    assert_eq!((code, out.as_str()), (3, "partial\n"));
    assert!(err.contains("command terminated with exit code 3"), "{err}");

    let (code, _, err) = exec(&fx, &["frobnicate", "--now"]).await;
    assert_eq!(code, 127);
    assert!(err.contains("frobnicate: not found"), "{err}");
}

#[tokio::test]
async fn exec_reads_stdin() {
    let Some(fx) = started("exec-stdin").await else {
        return;
    };
    let (code, out, err) = kubectl(
        &fx,
        &[
            "exec", "-i", "web", "-n", "default", "-c", "app", "--", "cat",
        ],
        b"line one\nline two\n",
    )
    .await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(String::from_utf8_lossy(&out), "line one\nline two\n");

    // A shell reading its script from stdin, as `kubectl exec -i POD -- sh < script` does.
    let (code, out, _) = kubectl(
        &fx,
        &[
            "exec", "-i", "web", "-n", "default", "-c", "app", "--", "sh",
        ],
        b"echo $GREETING\ncd /etc && ls\nexit 5\necho never\n",
    )
    .await;
    assert_eq!(code, 5);
    assert_eq!(
        String::from_utf8_lossy(&out),
        "hello from web\nhostname\nos-release\n"
    );
}

#[tokio::test]
async fn cp_copies_into_and_out_of_a_container() {
    let Some(fx) = started("cp").await else {
        return;
    };
    let local = fx.file("notes.txt", "copied in\nand back out\n");
    let (code, _, err) = kubectl(
        &fx,
        &["cp", &local, "default/web:/tmp/notes.txt", "-c", "app"],
        b"",
    )
    .await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        exec(&fx, &["cat", "/tmp/notes.txt"]).await.1,
        "copied in\nand back out\n"
    );

    // Into an existing directory the file keeps its name, as kubectl's `test -d` finds.
    let (code, _, err) = kubectl(&fx, &["cp", &local, "default/web:/var", "-c", "app"], b"").await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(exec(&fx, &["ls", "/var"]).await.1, "log\nnotes.txt\n");

    let back = fx.dir.join("back.txt");
    let back = back.to_string_lossy();
    let (code, _, err) = kubectl(
        &fx,
        &["cp", "default/web:/tmp/notes.txt", &back, "-c", "app"],
        b"",
    )
    .await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(&*back).expect("copied out"),
        "copied in\nand back out\n"
    );

    let etc = fx.dir.join("etc");
    let etc = etc.to_string_lossy();
    let (code, _, err) = kubectl(&fx, &["cp", "default/web:/etc", &etc, "-c", "app"], b"").await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(fx.dir.join("etc/hostname")).expect("a directory copied out"),
        "web\n"
    );
}

#[tokio::test]
async fn attach_joins_a_shell_or_the_output() {
    let Some(fx) = started("attach").await else {
        return;
    };
    // A container started with stdin runs a shell that attach talks to.
    let (code, out, err) = kubectl(
        &fx,
        &["attach", "-i", "web", "-n", "default", "-c", "console"],
        b"echo attached to $HOSTNAME\nexit\n",
    )
    .await;
    assert_eq!(code, 0, "{err}");
    assert!(
        String::from_utf8_lossy(&out).contains("attached to web\n"),
        "{err}"
    );

    // One without it shows what it writes from now on, until kubectl stops.
    let mut child = fx
        .command(&["attach", "web", "-n", "default", "-c", "app"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl attach runs");
    let stdout = child.stdout.take().expect("stdout");
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).map(|_| line)
    })
    .await
    .expect("join")
    .expect("a line");
    child.kill().expect("kubectl attach stopped");
    let _ = child.wait();
    assert!(!line.trim().is_empty(), "attach wrote an empty line");
}

#[tokio::test]
async fn exec_is_refused_as_the_real_server_refuses_it() {
    let Some(fx) = started("exec-refused").await else {
        return;
    };
    let (code, _, err) = kubectl(
        &fx,
        &["exec", "web", "-n", "default", "-c", "nope", "--", "ls"],
        b"",
    )
    .await;
    assert_ne!(code, 0);
    assert!(
        err.contains("container nope is not valid for pod web"),
        "{err}"
    );

    let (code, _, err) = kubectl(&fx, &["exec", "nowhere", "-n", "default", "--", "ls"], b"").await;
    assert_ne!(code, 0);
    assert!(
        err.contains("pod nowhere does not have a host assigned"),
        "{err}"
    );
}

/// The Python client's port-forward: a WebSocket whose data channel carries the HTTP bytes.
const PORT_FORWARD: &str = r#"
import sys
from kubernetes import client, config
from kubernetes.stream import portforward
config.load_kube_config(config_file=sys.argv[1])
api = client.CoreV1Api()
pf = portforward(api.connect_get_namespaced_pod_portforward, "web", "default", ports="8080,9999")
sock = pf.socket(8080)
sock.setblocking(True)
sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: web\r\nConnection: close\r\n\r\n")
reply = b""
while True:
    chunk = sock.recv(4096)
    if not chunk:
        break
    reply += chunk
print(reply.decode().splitlines()[0])
print(reply.decode().split("\r\n\r\n", 1)[1].strip())
sock.close()
print(pf.error(9999) or "no error")
"#;

#[tokio::test]
async fn port_forward_reaches_the_pods_http_server() {
    let Some(fx) = started("port-forward").await else {
        return;
    };
    let Some(out) = crate::common::python::run(&fx, "pf.py", PORT_FORWARD).await else {
        return;
    };
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("HTTP/1.1 200 OK"), "{out}");
    assert_eq!(lines.next(), Some("ok"), "{out}");
    assert!(
        lines
            .next()
            .is_some_and(|l| l.contains("127.0.0.1:9999: connect: connection refused")),
        "{out}"
    );
}
