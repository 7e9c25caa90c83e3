//! End to end: `F` on a container's row (the container picker of `o`) in a real terminal
//! (tmux) against `kscope sim`, on a pod of three containers: the dialog offers only the
//! chosen container's port, the forward is labelled with it and carries an HTTP exchange;
//! a container that declares no ports says so and forwards to the port typed. Its ports are
//! not the other port-forward tests' 8080 and 9090, whose dialogs show those local ports
//! free.

use super::act_portforward::{Fixture, forwarding, get};

const TRIO: &str = "apiVersion: v1
kind: Pod
metadata:
  name: trio
  namespace: pf
spec:
  containers:
  - name: app
    image: registry.example/web:1.4
    ports:
    - {containerPort: 8181, name: http}
  - name: exporter
    image: registry.example/exporter:0.9
    ports:
    - {containerPort: 9191, name: metrics}
  - name: console
    image: busybox:1.36
";

#[tokio::test]
async fn f_on_a_container_forwards_to_its_own_port_or_a_typed_one() {
    let Some(fx) = Fixture::start("container").await else {
        return;
    };
    let manifest = fx.dir.join("trio.yaml");
    std::fs::write(&manifest, TRIO).expect("manifest");
    fx.kubectl(&["apply", "-f", &manifest.display().to_string()]);
    fx.kubectl(&[
        "wait",
        "--for=condition=Ready",
        "pod/trio",
        "-n",
        "pf",
        "--timeout=60s",
    ]);
    let session = fx.kscope_with("--readwrite", 120, 30);
    session.wait_for("pod trio", |s| s.contains("trio") && s.contains("Running"));
    session.keys(&["/", "trio", "Enter"]);
    session.wait_for("only trio", |s| s.contains("trio") && !s.contains("web "));

    // The exporter's row: only its port, not the app's.
    session.keys(&["o"]);
    // The containers read (keys before that move in an empty list), the first chosen.
    session.wait_for("the picker", |s| {
        s.contains("which container?") && s.contains("> app")
    });
    session.keys(&["Down"]);
    session.wait_for("the exporter chosen", |s| s.contains("> exporter"));
    session.keys(&["F"]);
    let dialog = session.wait_for("its ports", |s| s.contains("> exporter/metrics 9191"));
    assert!(
        dialog.contains("port-forward container exporter of pod pf/trio"),
        "{dialog}"
    );
    assert!(
        !dialog.contains("8181"),
        "the app's port is not offered: {dialog}"
    );
    session.keys(&["Enter"]);
    let screen = session.wait_for("the forward", |s| forwarding(s).is_some());
    assert!(screen.contains("→ pf/trio:9191 (exporter)"), "{screen}");
    let port = forwarding(&screen).expect("a local port");
    let answer = get(port, "/metrics")
        .await
        .expect("GET through the forward");
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    assert!(
        answer.contains(r#"http_requests_total{pod="trio",port="9191"} 1"#),
        "{answer}"
    );

    // The console declares no ports: it says so, and the port typed is forwarded to.
    session.keys(&["o"]);
    session.wait_for("the picker", |s| {
        s.contains("which container?") && s.contains("> app")
    });
    session.keys(&["Down", "Down"]);
    session.wait_for("the console chosen", |s| s.contains("> console"));
    session.keys(&["F"]);
    session.wait_for("the typed port", |s| {
        s.contains("container console declares no ports: type its server's port")
    });
    session.keys(&["8", "1", "8", "1"]);
    session.wait_for("8181 typed", |s| s.contains("port    8181_"));
    session.keys(&["Enter"]);
    let screen = session.wait_for("the second forward", |s| {
        s.contains("→ pf/trio:8181 (console)")
    });
    let port = forwarding(&screen).expect("a local port");
    let answer = get(port, "/healthz")
        .await
        .expect("GET through the forward");
    assert!(answer.ends_with("\r\n\r\nok\n"), "{answer}");

    session.keys(&[":pf", "Enter"]);
    let list = session.wait_for("both listed", |s| s.contains("port-forwards (2)"));
    assert!(
        list.contains("pf/trio (exporter)") && list.contains("pf/trio (console)"),
        "{list}"
    );
}
