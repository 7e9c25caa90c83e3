//! End to end: the container picker of a shell and an attach in a real terminal (tmux)
//! against `kscope sim`, on a pod with two containers whose default-container annotation
//! names the second: the picker offers it first, Enter attaches to it, typed lines reach its
//! shell and its output shows, and after the exit the table and keyboard are kscope's again;
//! `o` with the other container picked runs in that one; Esc opens nothing.

use crate::common::act::{Fixture, listed};

const DUO: &str = "apiVersion: v1
kind: Pod
metadata:
  name: duo
  namespace: default
  annotations:
    kubectl.kubernetes.io/default-container: console
spec:
  containers:
  - name: app
    image: registry.example/web:1.4
    env:
    - {name: GREETING, value: hello from app}
  - name: console
    image: busybox:1.36
    stdin: true
    tty: true
";

#[tokio::test]
async fn a_pod_with_two_containers_asks_which_and_attach_and_shell_open_in_it() {
    let Some(fx) = Fixture::start("pick").await else {
        return;
    };
    let manifest = fx.dir.join("duo.yaml");
    std::fs::write(&manifest, DUO).expect("manifest");
    fx.kubectl_ok(&["apply", "-f", &manifest.display().to_string()]);
    fx.kubectl_until(
        "the pod running",
        &[
            "get",
            "pod",
            "duo",
            "-n",
            "default",
            "-o",
            "jsonpath={.status.phase}",
        ],
        |phase| phase == "Running",
    )
    .await;
    let session = fx.kscope("--readwrite -n default");
    session.wait_for("the pod", |s| listed(s) && s.contains("duo"));

    // Attach: the annotated container is offered first.
    session.keys(&["a"]);
    let picker = session.wait_for("the picker", |s| s.contains("> console (default)"));
    assert!(
        picker.contains("attach in pod default/duo: which container?"),
        "{picker}"
    );
    assert!(picker.contains("  app"), "{picker}");
    session.keys(&["Enter"]);
    session.wait_for("the attached terminal", |s| !s.contains("watching at rv"));
    session.keys(&["echo attached to $HOSTNAME", "Enter"]);
    session.wait_for("the echo", |s| {
        s.lines().any(|l| l.trim() == "attached to duo")
    });
    session.keys(&["exit 4", "Enter"]);
    session.wait_for("the table back", |s| {
        listed(s) && s.contains("attach in default/duo (console) exited with code 4")
    });

    // Esc: the picker closes and nothing opens.
    session.keys(&["o"]);
    session.wait_for("the shell's picker", |s| {
        s.contains("shell in pod default/duo: which container?")
    });
    session.keys(&["Escape"]);
    session.wait_for("the picker closed", |s| {
        listed(s) && !s.contains("which container?")
    });

    // A shell in the other container: its own environment.
    session.keys(&["o"]);
    session.wait_for("the shell's picker", |s| s.contains("> console (default)"));
    session.keys(&["k"]);
    session.wait_for("app chosen", |s| s.contains("> app"));
    session.keys(&["Enter"]);
    session.wait_for("the shell", |s| !s.contains("watching at rv"));
    session.keys(&["echo $GREETING", "Enter"]);
    session.wait_for("the app's environment", |s| {
        s.lines().any(|l| l.trim() == "hello from app")
    });
    session.keys(&["exit", "Enter"]);
    session.wait_for("the table back", |s| {
        listed(s) && s.contains("shell in default/duo (app) exited with code 0")
    });
    // The keyboard is the TUI's again.
    session.keys(&[":nodes", "Enter"]);
    session.wait_for("the nodes table", |s| s.contains("nodes [cluster]"));
}
