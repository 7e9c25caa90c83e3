//! Deletion as a real cluster does it, through kubectl: a pod's delete leaves it Terminating
//! for its grace period before its kubelet removes it (watchers see MODIFIED, then
//! DELETED), `--force --grace-period=0` removes it at once, and a Deployment deleted in the
//! foreground takes its ReplicaSets down in the foreground too.

use std::future::Future;
use std::io::{BufRead, BufReader};
use std::process::Stdio;

use serde_json::Value;

use crate::common::kubectl::Kubectl;
use crate::common::tools;
use crate::common::wait::HANG_GUARD;

/// Polls the async `check` until it gives `Some`; panics (with what was last seen) after
/// [`HANG_GUARD`], which only a hang reaches.
pub(crate) async fn until<T, F: Future<Output = Result<T, String>>>(
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
pub(crate) async fn get(fx: &Kubectl, args: &[&str]) -> Option<Value> {
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

/// Pod `name` whose container's preStop hook outlasts any grace period, so that it is
/// Terminating for all of it (a container that ends on SIGTERM would go at once).
fn pod_manifest(name: &str, grace: Option<u32>) -> String {
    let grace = grace.map_or(String::new(), |g| {
        format!("  terminationGracePeriodSeconds: {g}\n")
    });
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n{grace}  containers:\n  - name: app\n    image: nginx:1.27\n    lifecycle:\n      preStop:\n        exec: {{command: [sleep, \"3600\"]}}\n"
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
        # Terminating for all of its 3 s: the hook outlasts them.
        lifecycle:
          preStop:
            exec: {command: [sleep, "60"]}
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

#[tokio::test]
async fn cordon_taints_the_node_and_uncordon_removes_the_taint() {
    let Some(fx) = Kubectl::start("cordon").await else {
        return;
    };
    let nodes = get(&fx, &["nodes"]).await.expect("nodes");
    let node = nodes["items"][0]["metadata"]["name"]
        .as_str()
        .expect("a node")
        .to_string();
    let taint = |node: &Value| -> Option<Value> {
        node["spec"]["taints"]
            .as_array()?
            .iter()
            .find(|t| t["key"] == "node.kubernetes.io/unschedulable")
            .cloned()
    };
    fx.ok(&["cordon", &node]).await;
    let added = until("the unschedulable taint", || async {
        let n = get(&fx, &["node", &node]).await.expect("the node");
        taint(&n).ok_or_else(|| format!("{:#}", n["spec"]))
    })
    .await;
    assert_eq!(added["effect"], "NoSchedule", "{added:#}");
    assert!(added["timeAdded"].is_string(), "{added:#}");
    fx.ok(&["uncordon", &node]).await;
    until("the taint removed", || async {
        let n = get(&fx, &["node", &node]).await.expect("the node");
        match taint(&n) {
            None => Ok(()),
            Some(t) => Err(format!("{t:#}")),
        }
    })
    .await;
}

/// Evicts pod `argv[2]` in `default` with the official Python client; prints the answer's
/// code, and for an error its Status and Retry-After, as JSON.
const PYTHON_EVICT: &str = r#"
import sys, json
from kubernetes import client, config
from kubernetes.client.rest import ApiException
config.load_kube_config(config_file=sys.argv[1])
v1 = client.CoreV1Api()
body = client.V1Eviction(metadata=client.V1ObjectMeta(name=sys.argv[2], namespace="default"))
try:
    v1.create_namespaced_pod_eviction(sys.argv[2], "default", body)
    print(json.dumps({"code": 201}))
except ApiException as e:
    print(json.dumps({"code": e.status, "status": json.loads(e.body), "retryAfter": e.headers.get("Retry-After")}))
"#;

/// The Python client's eviction of `pod`: its JSON report (see [`PYTHON_EVICT`]), or `None`
/// where the client is not installed.
async fn python_evict(fx: &Kubectl, pod: &str) -> Option<Value> {
    let python = tools::required("python3", "to run the official Kubernetes client")?;
    let probe = std::process::Command::new(&python)
        .args(["-c", "import kubernetes"])
        .stderr(Stdio::null())
        .status()
        .expect("python3 runs");
    if !probe.success() {
        tools::missing("the python3 `kubernetes` package");
        return None;
    }
    let script = fx.file("evict.py", PYTHON_EVICT);
    let mut command = tokio::process::Command::new(&python);
    command
        .arg(&script)
        .arg(fx.dir.join("kubeconfig"))
        .arg(pod)
        .env("HOME", &fx.dir);
    let output = tokio::time::timeout(HANG_GUARD, command.output())
        .await
        .expect("the Python eviction finishes")
        .expect("python3 runs");
    let out = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(serde_json::from_str(out.trim()).expect("the script prints JSON"))
}

const BUDGET: &str = r#"apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
  namespace: default
spec:
  minAvailable: MIN
  selector:
    matchLabels: {app: web}
"#;

/// Waits until budget `web`'s status has these counts.
async fn budget_status(fx: &Kubectl, healthy: i64, desired: i64, allowed: i64) -> Value {
    until("the budget's status", || async {
        let pdb = get(fx, &["pdb", "web", "-n", "default"])
            .await
            .expect("the budget");
        let s = &pdb["status"];
        if s["currentHealthy"] == healthy
            && s["desiredHealthy"] == desired
            && s["disruptionsAllowed"] == allowed
            && s["expectedPods"] == 2
        {
            Ok(pdb)
        } else {
            Err(format!("{s:#}"))
        }
    })
    .await
}

#[tokio::test]
async fn eviction_honours_the_pod_disruption_budget() {
    let Some(fx) = Kubectl::start("evict").await else {
        return;
    };
    let slow = WEB.replace("GracePeriodSeconds: 3", "GracePeriodSeconds: 30");
    let file = fx.file("web.yaml", &slow);
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
    let budget = fx.file("pdb.yaml", &BUDGET.replace("MIN", "2"));
    fx.ok(&["apply", "-f", &budget]).await;
    let pdb = budget_status(&fx, 2, 2, 0).await;
    assert_eq!(
        pdb["status"]["conditions"][0]["reason"], "InsufficientPods",
        "{pdb:#}"
    );
    let pods = web(&fx, "pods").await;
    let victim = pods[0]["metadata"]["name"].as_str().expect("a pod");
    let Some(refused) = python_evict(&fx, victim).await else {
        return;
    };
    assert_eq!(refused["code"], 429, "{refused:#}");
    let status = &refused["status"];
    assert_eq!(status["reason"], "TooManyRequests", "{status:#}");
    assert_eq!(
        status["message"],
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    assert_eq!(
        status["details"]["causes"],
        serde_json::json!([{"reason": "DisruptionBudget",
            "message": "The disruption budget web needs 2 healthy pods and has 2 currently"}])
    );
    assert!(refused["retryAfter"].is_null(), "{refused:#}");
    assert!(
        !terminating(
            &get(&fx, &["pod", victim, "-n", "default"])
                .await
                .expect("kept")
        ),
        "a refused eviction deletes nothing"
    );

    // With room for one disruption, the eviction deletes the pod, gracefully.
    fx.ok(&[
        "apply",
        "-f",
        &fx.file("pdb.yaml", &BUDGET.replace("MIN", "1")),
    ])
    .await;
    budget_status(&fx, 2, 1, 1).await;
    let allowed = python_evict(&fx, victim)
        .await
        .expect("the client ran before");
    assert_eq!(allowed["code"], 201, "{allowed:#}");
    // Given 30 s, it is still there: Terminating, marked as a disruption's target.
    let pod = get(&fx, &["pod", victim, "-n", "default"])
        .await
        .expect("Terminating for 30 s");
    assert!(terminating(&pod), "{pod:#}");
    let target = pod["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "DisruptionTarget"))
        .cloned();
    assert_eq!(
        target.map(|c| c["reason"].clone()),
        Some(Value::from("EvictionByEvictionAPI")),
        "{pod:#}"
    );
}

/// A node running pods that are not a DaemonSet's, and those pods' names.
async fn busy_node(fx: &Kubectl) -> (String, Vec<String>) {
    let pods = get(fx, &["pods", "-A"]).await.expect("pods");
    let mut by_node: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for pod in pods["items"].as_array().into_iter().flatten() {
        let daemon = pod["metadata"]["ownerReferences"]
            .as_array()
            .is_some_and(|refs| refs.iter().any(|r| r["kind"] == "DaemonSet"));
        if let Some(node) = pod["spec"]["nodeName"].as_str().filter(|_| !daemon) {
            let name = pod["metadata"]["name"].as_str().unwrap_or("").to_string();
            by_node.entry(node.to_string()).or_default().push(name);
        }
    }
    by_node
        .into_iter()
        .max_by_key(|(_, pods)| pods.len())
        .expect("a node with pods")
}

/// Drains the busiest node with `extra` flags, and checks what a drain leaves: the node
/// cordoned and tainted, none but DaemonSet pods on it.
async fn drains(fx: &Kubectl, extra: &[&str]) -> String {
    let (node, pods) = busy_node(fx).await;
    let mut args = vec![
        "drain",
        node.as_str(),
        "--ignore-daemonsets",
        "--grace-period=1",
        "--timeout=100s",
    ];
    args.extend(extra);
    let out = fx.ok(&args).await;
    assert!(out.contains(&format!("node/{node} cordoned")), "{out}");
    assert!(out.contains(&format!("node/{node} drained")), "{out}");
    for pod in &pods {
        assert!(out.contains(pod.as_str()), "{pod} not named: {out}");
    }
    let selector = format!("spec.nodeName={node}");
    let left = get(fx, &["pods", "-A", "--field-selector", &selector])
        .await
        .expect("pods");
    for pod in left["items"].as_array().into_iter().flatten() {
        let kinds: Vec<&Value> = pod["metadata"]["ownerReferences"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| &r["kind"])
            .collect();
        assert_eq!(
            kinds,
            [&Value::from("DaemonSet")],
            "left on {node}: {pod:#}"
        );
    }
    let drained = get(fx, &["node", &node]).await.expect("the node");
    assert_eq!(drained["spec"]["unschedulable"], true, "{drained:#}");
    out
}

#[tokio::test]
async fn drain_evicts_every_pod_but_the_daemon_sets() {
    let Some(fx) = Kubectl::start("drain").await else {
        return;
    };
    let out = drains(&fx, &[]).await;
    assert!(out.contains("evicting pod"), "{out}");
}

/// Without evictions, drain deletes the pods through client-go's typed client, whose
/// DeleteOptions body is protobuf.
#[tokio::test]
async fn drain_without_eviction_deletes_with_protobuf_delete_options() {
    let Some(fx) = Kubectl::start("drain-delete").await else {
        return;
    };
    let out = drains(&fx, &["--disable-eviction"]).await;
    assert!(!out.contains("evicting pod"), "{out}");
}
