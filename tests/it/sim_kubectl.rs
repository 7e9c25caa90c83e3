//! kubectl against the sim: the everyday commands work. Skipped where kubectl is not on
//! PATH (failed under CI=true).

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::kubectl::Kubectl;

const POD: &str = r#"apiVersion: v1
kind: Pod
metadata:
  name: hello
  namespace: default
  labels:
    app: hello
spec:
  containers:
  - name: main
    image: nginx:1.27
"#;

#[tokio::test]
async fn get_pods_all_namespaces() {
    let Some(fx) = Kubectl::start("get").await else {
        return;
    };
    let out = fx.ok(&["get", "pods", "-A"]).await;
    let truth = fx.sim.truth(kscope_sim::Resource::Pods);
    assert_eq!(out.lines().count(), truth.len() + 1, "{out}");
    for key in truth.keys() {
        let (ns, name) = key.split_once('/').expect("namespaced key");
        assert!(
            out.lines().any(|l| l.starts_with(ns) && l.contains(name)),
            "{key} missing from {out}"
        );
    }
    let out = fx
        .ok(&["get", "deployments,replicasets,nodes,namespaces", "-A"])
        .await;
    assert!(
        out.contains("deployment.apps/")
            && out.contains("node/")
            && out.contains("namespace/kube-system")
    );
}

#[tokio::test]
async fn create_label_annotate_delete() {
    let Some(fx) = Kubectl::start("write").await else {
        return;
    };
    let file = fx.dir.join("pod.yaml");
    std::fs::write(&file, POD).expect("manifest");
    let file = file.to_string_lossy().into_owned();
    assert!(
        fx.ok(&["create", "-f", &file])
            .await
            .contains("pod/hello created")
    );
    let (ok, _, err) = fx.run(&["create", "-f", &file]).await;
    assert!(!ok && err.contains("AlreadyExists"), "{err}");
    assert!(
        fx.ok(&["label", "pod", "hello", "-n", "default", "tier=web"])
            .await
            .contains("labeled")
    );
    assert!(
        fx.ok(&["annotate", "pod", "hello", "-n", "default", "note=hi"])
            .await
            .contains("annotated")
    );
    let out = fx
        .ok(&[
            "get",
            "pod",
            "hello",
            "-n",
            "default",
            "-o",
            "jsonpath={.metadata.labels.tier} {.metadata.annotations.note}",
        ])
        .await;
    assert_eq!(out, "web hi");
    fx.ok(&["label", "pod", "hello", "-n", "default", "tier-"])
        .await;
    let out = fx
        .ok(&[
            "get", "pods", "-n", "default", "-l", "tier=web", "-o", "name",
        ])
        .await;
    assert_eq!(out.trim(), "");
    assert!(
        fx.ok(&["delete", "pod", "hello", "-n", "default"])
            .await
            .contains("deleted")
    );
    let (ok, _, err) = fx.run(&["get", "pod", "hello", "-n", "default"]).await;
    assert!(!ok && err.contains("NotFound"), "{err}");
}

#[tokio::test]
async fn get_pods_watch_sees_a_change() {
    let Some(fx) = Kubectl::start("watch").await else {
        return;
    };
    let file = fx.dir.join("pod.yaml");
    std::fs::write(&file, POD).expect("manifest");
    fx.ok(&["create", "-f", &file.to_string_lossy()]).await;
    let mut child = fx
        .command(&[
            "get",
            "pods",
            "-n",
            "default",
            "-w",
            "--request-timeout=20s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl -w starts");
    let stdout = child.stdout.take().expect("stdout");
    let (lines_tx, mut lines_rx) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut labeled = false;
    while Instant::now() < deadline {
        match tokio::time::timeout(Duration::from_millis(500), lines_rx.recv()).await {
            Ok(Some(line)) => seen.push(line),
            Ok(None) => break,
            Err(_) => {}
        }
        let pod_lines = seen.iter().filter(|l| l.starts_with("hello")).count();
        if pod_lines >= 1 && !labeled {
            fx.ok(&["label", "pod", "hello", "-n", "default", "changed=yes"])
                .await;
            labeled = true;
        }
        if pod_lines >= 2 {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        seen.iter().filter(|l| l.starts_with("hello")).count() >= 2,
        "watch did not show the change: {seen:?}"
    );
}

#[tokio::test]
async fn field_selectors_a_real_server_supports() {
    let Some(fx) = Kubectl::start("fieldselectors").await else {
        return;
    };
    let count = |out: String| out.lines().filter(|l| !l.is_empty()).count();
    let pods = fx.sim.truth(kscope_sim::Resource::Pods).len();
    let always = fx
        .ok(&[
            "get",
            "pods",
            "-A",
            "--field-selector",
            "spec.restartPolicy=Always",
            "-o",
            "name",
        ])
        .await;
    assert_eq!(count(always), pods);
    let host = fx
        .ok(&[
            "get",
            "pods",
            "-A",
            "--field-selector",
            "spec.hostNetwork=true",
            "-o",
            "name",
        ])
        .await;
    assert_eq!(count(host), 0);
    // One TLS Secret per application namespace (two here).
    let tls = fx
        .ok(&[
            "get",
            "secrets",
            "-A",
            "--field-selector",
            "type=kubernetes.io/tls",
            "-o",
            "name",
        ])
        .await;
    assert_eq!(count(tls), 2);
    let schedulable = fx
        .ok(&[
            "get",
            "nodes",
            "--field-selector",
            "spec.unschedulable=false",
            "-o",
            "name",
        ])
        .await;
    assert_eq!(count(schedulable), 3);
    let (ok, _, err) = fx
        .run(&[
            "get",
            "secrets",
            "-A",
            "--field-selector",
            "spec.nodeName=x",
        ])
        .await;
    assert!(!ok && err.contains("field label not supported"), "{err}");
}

#[tokio::test]
async fn api_resources_come_from_aggregated_discovery() {
    let Some(fx) = Kubectl::start("discovery").await else {
        return;
    };
    let (ok, out, log) = fx.run(&["api-resources", "-v=6"]).await;
    assert!(ok, "{log}");
    for (name, version, kind) in [
        ("namespaces", "v1", "Namespace"),
        ("pods", "v1", "Pod"),
        ("secrets", "v1", "Secret"),
        ("deployments", "apps/v1", "Deployment"),
        ("replicasets", "apps/v1", "ReplicaSet"),
    ] {
        assert!(
            out.lines().any(|l| {
                let cells: Vec<&str> = l.split_whitespace().collect();
                cells.first() == Some(&name)
                    && cells.contains(&version)
                    && cells.last() == Some(&kind)
            }),
            "{name} missing from {out}"
        );
    }
    // One answer per root: no group-version was fetched on its own.
    let gets: Vec<&str> = log.lines().filter(|l| l.contains(" GET ")).collect();
    assert!(
        gets.iter()
            .all(|l| !l.contains("/api/v1?") && !l.contains("/apis/apps/v1?")),
        "{gets:?}"
    );
    assert!(gets.iter().any(|l| l.contains("/apis?")), "{gets:?}");
}
