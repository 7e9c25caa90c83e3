//! A Terminating pod goes as soon as its containers have stopped, as a kubelet removes it:
//! one that ends on SIGTERM does not wait out the grace period, a preStop hook runs before
//! its container is signalled, and the pods the sim's own churn deletes end the same way
//! (marked, their terminal phase, then DELETED), seen through kubectl's watch.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};

use kscope_sim::SimConfig;

use crate::common::kubectl::Kubectl;
use crate::common::wait::HANG_GUARD;
use crate::sim_truth_delete::{get, until};

/// `kubectl get ARGS --watch --output-watch-events` printing `jsonpath` per event.
struct Watch {
    child: Child,
    lines: tokio::sync::mpsc::UnboundedReceiver<String>,
}

impl Watch {
    fn start(fx: &Kubectl, args: &[&str], jsonpath: &str) -> Watch {
        let mut all = vec!["get"];
        all.extend(args);
        let output = format!("jsonpath={jsonpath}{{\"\\n\"}}");
        all.extend(["--watch", "--output-watch-events", "-o", &output]);
        let mut child = fx
            .command(&all)
            .stdout(Stdio::piped())
            .spawn()
            .expect("kubectl watch runs");
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = tokio::sync::mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Watch { child, lines }
    }

    /// The next event's line; only a hang makes it panic.
    async fn next(&mut self) -> String {
        tokio::time::timeout(HANG_GUARD, self.lines.recv())
            .await
            .expect("a watch event in time")
            .expect("the watch runs")
    }

    /// The lines up to and including the first that starts with `DELETED`.
    async fn until_deleted(&mut self) -> Vec<String> {
        let mut seen = Vec::new();
        while !seen
            .last()
            .is_some_and(|l: &String| l.starts_with("DELETED"))
        {
            seen.push(self.next().await);
        }
        seen
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A jsonpath printing an event's type, the pod's grace period once marked, its phase, and
/// `name=reason/exitCode` of each of `containers` once terminated.
fn states(containers: &[&str]) -> String {
    let mut path =
        "{.type} {.object.metadata.deletionGracePeriodSeconds} {.object.status.phase}".to_string();
    for name in containers {
        let status = format!(".object.status.containerStatuses[?(@.name==\"{name}\")]");
        path.push_str(&format!(
            " {name}={{{status}.state.terminated.reason}}/{{{status}.state.terminated.exitCode}}"
        ));
    }
    path
}

/// Applies `manifest` and waits until pod `name` runs.
async fn running(fx: &Kubectl, name: &str, manifest: &str) {
    let file = fx.file(&format!("{name}.yaml"), manifest);
    fx.ok(&["apply", "-f", &file]).await;
    until(&format!("{name} running"), || async {
        match get(fx, &["pod", name, "-n", "default"]).await {
            Some(p) if p["status"]["phase"] == "Running" => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
}

/// An hour's grace period: a pod that waited it out would only be seen gone by a hang.
const ENDS_ON_SIGTERM: &str = r#"apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  terminationGracePeriodSeconds: 3600
  containers:
  - {name: app, image: "nginx:1.27"}
"#;

#[tokio::test]
async fn a_pod_whose_containers_end_on_sigterm_goes_without_waiting_out_its_grace_period() {
    let Some(fx) = Kubectl::start("stop-sigterm").await else {
        return;
    };
    running(&fx, "web", ENDS_ON_SIGTERM).await;
    let mut watch = Watch::start(
        &fx,
        &[
            "pods",
            "-n",
            "default",
            "--field-selector=metadata.name=web",
        ],
        &states(&["app"]),
    );
    let added = watch.next().await;
    assert!(added.starts_with("ADDED"), "{added}");
    fx.ok(&["delete", "pod", "web", "-n", "default", "--wait=false"])
        .await;
    let seen = watch.until_deleted().await;
    let position = |wanted: &str| seen.iter().position(|l| l.trim_end() == wanted);
    let marked = position("MODIFIED 3600 Running app=/");
    let ended = position("MODIFIED 3600 Succeeded app=Completed/0");
    let deleted = seen.iter().position(|l| l.starts_with("DELETED"));
    assert!(
        marked.is_some() && marked < ended && ended < deleted,
        "marked, its container stopped (0) and the pod Succeeded, then DELETED: {seen:#?}"
    );
}

/// `drain` holds its container for its preStop hook's 2 s; `app` has none; `script` is a
/// shell that ignores SIGTERM, killed when the 4 s grace period is over.
const PRE_STOP: &str = r#"apiVersion: v1
kind: Pod
metadata: {name: hooked, namespace: default}
spec:
  terminationGracePeriodSeconds: 4
  containers:
  - {name: app, image: "nginx:1.27"}
  - name: drain
    image: nginx:1.27
    lifecycle:
      preStop:
        exec: {command: ["sleep", "2"]}
  - name: script
    image: busybox:1.36
    command: ["sh", "-c", "sleep 3600"]
"#;

#[tokio::test]
async fn a_pre_stop_hook_runs_before_its_container_is_signalled() {
    let Some(fx) = Kubectl::start("stop-prestop").await else {
        return;
    };
    running(&fx, "hooked", PRE_STOP).await;
    let mut watch = Watch::start(
        &fx,
        &[
            "pods",
            "-n",
            "default",
            "--field-selector=metadata.name=hooked",
        ],
        &states(&["app", "drain", "script"]),
    );
    let added = watch.next().await;
    assert!(added.starts_with("ADDED"), "{added}");
    fx.ok(&["delete", "pod", "hooked", "-n", "default", "--wait=false"])
        .await;
    let seen = watch.until_deleted().await;
    let position = |wanted: &str| seen.iter().position(|l| l.trim_end() == wanted);
    let app = position("MODIFIED 4 Running app=Completed/0 drain=/ script=/");
    let drain = position("MODIFIED 4 Running app=Completed/0 drain=Completed/0 script=/");
    let script = position("MODIFIED 4 Failed app=Completed/0 drain=Completed/0 script=Error/137");
    let deleted = seen.iter().position(|l| l.starts_with("DELETED"));
    assert!(
        app.is_some() && app < drain && drain < script && script < deleted,
        "app on SIGTERM, drain after its hook (0, not killed), the script killed, then \
         DELETED: {seen:#?}"
    );
}

#[tokio::test]
async fn the_churns_deleted_pods_end_in_a_terminal_phase_before_they_go() {
    let config = SimConfig::with_size(60, 3, 2).churn(40.0, None);
    let Some(fx) = Kubectl::start_with("stop-churn", config).await else {
        return;
    };
    let mut watch = Watch::start(
        &fx,
        &["pods", "-A"],
        "{.type} {.object.metadata.namespace}/{.object.metadata.name} {.object.metadata.deletionTimestamp} {.object.status.phase}",
    );
    // Per pod marked for deletion by the churn: whether it was then seen Succeeded or Failed.
    let mut marked: HashMap<String, bool> = HashMap::new();
    let mut checked = HashSet::new();
    while checked.len() < 3 {
        let line = watch.next().await;
        let words: Vec<&str> = line.split(' ').collect();
        let [kind, pod, deletion, phase] = words[..] else {
            panic!("an unexpected line: {line:?}");
        };
        let pod = pod.to_string();
        match kind {
            "MODIFIED" if !deletion.is_empty() => {
                let ended = matches!(phase, "Succeeded" | "Failed");
                let seen_ended = marked.entry(pod).or_default();
                *seen_ended |= ended;
            }
            "DELETED" => {
                if let Some(ended) = marked.remove(&pod) {
                    assert!(ended, "{pod} went without its terminal phase: {line}");
                    checked.insert(pod);
                }
            }
            _ => {}
        }
    }
}
