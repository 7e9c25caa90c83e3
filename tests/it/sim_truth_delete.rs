//! Deletion as a real cluster does it, through kubectl: a pod's delete leaves it Terminating
//! for its grace period before its kubelet removes it (watchers see MODIFIED, then
//! DELETED), `--force --grace-period=0` removes it at once, and a Deployment deleted in the
//! foreground takes its ReplicaSets down in the foreground too.

use std::future::Future;
use std::io::{BufRead, BufReader};
use std::process::Stdio;

use serde_json::Value;

use crate::common::kubectl::Kubectl;
use crate::common::wait::HANG_GUARD;

/// Polls the async `check` until it gives `Some`; panics (with what was last seen) after
/// [`HANG_GUARD`], which only a hang reaches.
async fn until<T, F: Future<Output = Result<T, String>>>(
    what: &str,
    mut check: impl FnMut() -> F,
) -> T {
    let mut last = String::new();
    let waited = tokio::time::timeout(HANG_GUARD, async {
        loop {
            match check().await {
                Ok(value) => return value,
                Err(state) => last = state,
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    })
    .await;
    waited.unwrap_or_else(|_| panic!("{what}: not within {HANG_GUARD:?}; last seen: {last}"))
}

/// `kubectl get ARGS -o json`, or `None` once the object is not found.
async fn get(fx: &Kubectl, args: &[&str]) -> Option<Value> {
    let mut all = vec!["get"];
    all.extend(args);
    all.extend(["-o", "json"]);
    let (ok, out, err) = fx.run(&all).await;
    if !ok {
        assert!(err.contains("NotFound"), "kubectl {all:?} failed: {err}");
        return None;
    }
    Some(serde_json::from_str(&out).expect("kubectl prints JSON"))
}

/// The next line a watch printed.
async fn next_line(rx: &mut tokio::sync::mpsc::UnboundedReceiver<String>) -> String {
    tokio::time::timeout(HANG_GUARD, rx.recv())
        .await
        .expect("a watch event in time")
        .expect("the watch runs")
}

fn pod_manifest(name: &str, grace: Option<u32>) -> String {
    let grace = grace.map_or(String::new(), |g| {
        format!("  terminationGracePeriodSeconds: {g}\n")
    });
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n{grace}  containers:\n  - name: app\n    image: nginx:1.27\n"
    )
}

/// Creates pod `name` and waits until its containers run.
async fn running_pod(fx: &Kubectl, name: &str, grace: Option<u32>) {
    let file = fx.file(&format!("{name}.yaml"), &pod_manifest(name, grace));
    fx.ok(&["apply", "-f", &file]).await;
    until(&format!("{name} running"), || async {
        let pod = get(fx, &["pod", name, "-n", "default"]).await;
        match pod {
            Some(p) if p["status"]["phase"] == "Running" => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
}

#[tokio::test]
async fn a_deleted_pod_is_terminating_for_its_grace_period() {
    let Some(fx) = Kubectl::start("graceful").await else {
        return;
    };
    running_pod(&fx, "slow", None).await;
    fx.ok(&["delete", "pod", "slow", "-n", "default", "--wait=false"])
        .await;
    // The pod's own period (the default 30 s) holds it; kubectl shows it Terminating.
    let pod = get(&fx, &["pod", "slow", "-n", "default"])
        .await
        .expect("a pod given 30 s is still there");
    assert_eq!(pod["metadata"]["deletionGracePeriodSeconds"], 30, "{pod:#}");
    let deadline: jiff::Timestamp = pod["metadata"]["deletionTimestamp"]
        .as_str()
        .expect("deletionTimestamp")
        .parse()
        .expect("RFC 3339");
    let now = jiff::Timestamp::now().as_second();
    assert!(
        (now + 25..=now + 31).contains(&deadline.as_second()),
        "deletionTimestamp is the end of the grace period: {deadline}, now {now}"
    );
    let table = fx.ok(&["get", "pod", "slow", "-n", "default"]).await;
    assert!(table.contains("Terminating"), "{table}");
    // Deleting it again asks for no grace: it goes at once.
    fx.ok(&[
        "delete",
        "pod",
        "slow",
        "-n",
        "default",
        "--force",
        "--grace-period=0",
    ])
    .await;
    assert!(get(&fx, &["pod", "slow", "-n", "default"]).await.is_none());
}

#[tokio::test]
async fn watchers_see_the_pod_modified_then_deleted_when_its_kubelet_is_done() {
    let Some(fx) = Kubectl::start("graceful-watch").await else {
        return;
    };
    running_pod(&fx, "quick", Some(30)).await;
    let mut watch = fx
        .command(&[
            "get",
            "pods",
            "-n",
            "default",
            "--field-selector=metadata.name=quick",
            "--watch",
            "--output-watch-events",
            "-o",
            "jsonpath={.type} {.object.metadata.deletionGracePeriodSeconds}{\"\\n\"}",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .expect("kubectl watch runs");
    let stdout = watch.stdout.take().expect("piped");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // Its first event (ADDED) says the watch is on before the delete is sent.
    let added = next_line(&mut rx).await;
    assert!(added.starts_with("ADDED"), "{added}");
    // kubectl waits for the pod to be gone: the kubelet removes it after 2 s, not 30.
    fx.ok(&[
        "delete",
        "pod",
        "quick",
        "-n",
        "default",
        "--grace-period=2",
    ])
    .await;
    assert!(get(&fx, &["pod", "quick", "-n", "default"]).await.is_none());
    let mut seen = vec![added];
    while !seen.last().is_some_and(|l| l.starts_with("DELETED")) {
        seen.push(next_line(&mut rx).await);
    }
    let _ = watch.kill();
    let _ = watch.wait();
    let modified = seen.iter().position(|l| l == "MODIFIED 2");
    let deleted = seen.iter().position(|l| l.starts_with("DELETED"));
    assert!(
        modified.is_some() && modified < deleted,
        "MODIFIED (grace 2) before DELETED: {seen:?}"
    );
}

const WEB: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      terminationGracePeriodSeconds: 3
      containers:
      - name: app
        image: nginx:1.27
"#;

/// The items of `kubectl get KIND -l app=web`.
async fn web(fx: &Kubectl, kind: &str) -> Vec<Value> {
    let list = get(fx, &[kind, "-n", "default", "-l", "app=web"])
        .await
        .expect("a list");
    list["items"].as_array().cloned().unwrap_or_default()
}

fn terminating(object: &Value) -> bool {
    object["metadata"]["deletionTimestamp"].is_string()
}

#[tokio::test]
async fn scale_down_and_foreground_deletion_wait_for_terminating_pods() {
    let Some(fx) = Kubectl::start("graceful-deploy").await else {
        return;
    };
    let file = fx.file("web.yaml", WEB);
    fx.ok(&["apply", "-f", &file]).await;
    fx.ok(&[
        "rollout",
        "status",
        "deploy/web",
        "-n",
        "default",
        "--timeout=120s",
    ])
    .await;
    // A scale-down's pod is Terminating (its 3 s) before it goes.
    fx.ok(&["scale", "deploy/web", "-n", "default", "--replicas=1"])
        .await;
    until("a scaled-down pod Terminating", || async {
        let pods = web(&fx, "pods").await;
        if pods.iter().any(terminating) {
            Ok(())
        } else if pods.len() < 2 {
            panic!("a pod went without being Terminating first: {pods:#?}");
        } else {
            Err(format!("{pods:#?}"))
        }
    })
    .await;
    until("the scaled-down pod gone", || async {
        let pods = web(&fx, "pods").await;
        if pods.len() == 1 {
            Ok(())
        } else {
            Err(format!("{pods:#?}"))
        }
    })
    .await;
    // In the foreground, the ReplicaSet is itself deleted in the foreground: marked, and
    // kept while its pod is Terminating.
    fx.ok(&[
        "delete",
        "deploy/web",
        "-n",
        "default",
        "--cascade=foreground",
        "--wait=false",
    ])
    .await;
    until("the ReplicaSet deleted in the foreground", || async {
        let sets = web(&fx, "rs").await;
        let pods = web(&fx, "pods").await;
        let marked = sets.iter().any(|rs| {
            terminating(rs)
                && rs["metadata"]["finalizers"]
                    .as_array()
                    .is_some_and(|f| f.iter().any(|f| f == "foregroundDeletion"))
        });
        if marked && pods.iter().all(terminating) && !pods.is_empty() {
            Ok(())
        } else if sets.is_empty() {
            panic!("the ReplicaSet went without waiting for its pods");
        } else {
            Err(format!("{sets:#?} {pods:#?}"))
        }
    })
    .await;
    until(
        "the Deployment gone after its ReplicaSet and pods",
        || async {
            let gone = get(&fx, &["deploy", "web", "-n", "default"])
                .await
                .is_none();
            let (sets, pods) = (web(&fx, "rs").await, web(&fx, "pods").await);
            if gone {
                assert!(sets.is_empty() && pods.is_empty(), "{sets:#?} {pods:#?}");
                Ok(())
            } else {
                Err(format!("{sets:#?} {pods:#?}"))
            }
        },
    )
    .await;
}
