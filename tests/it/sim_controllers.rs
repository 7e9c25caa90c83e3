//! The sim's controllers, scheduler and kubelets react to kubectl's writes as a cluster's
//! do: a Deployment gets a ReplicaSet and running pods on nodes, `kubectl rollout status`
//! completes, scaling converges, Events tell the cascade, and deleting it removes it all.

use std::time::{Duration, Instant};

use kscope_sim::SimConfig;
use serde_json::Value;

use crate::common::kubectl::Kubectl;

/// How long a convergence may take before the test gives up (a bound, not a measure).
const CONVERGE: Duration = Duration::from_secs(60);

async fn json(fx: &Kubectl, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    serde_json::from_str(&fx.ok(&all).await).expect("kubectl prints JSON")
}

/// The pods the Deployment `web` owns, through its ReplicaSets.
async fn web_pods(fx: &Kubectl) -> Vec<Value> {
    let pods = json(fx, &["get", "pods", "-n", "default", "-l", "app=web"]).await;
    pods["items"].as_array().cloned().unwrap_or_default()
}

/// Polls until `web` has exactly `n` pods, all Running and ready on a node.
async fn wait_for_running(fx: &Kubectl, n: usize) -> Vec<Value> {
    let deadline = Instant::now() + CONVERGE;
    loop {
        let pods = web_pods(fx).await;
        let running = pods.iter().filter(|p| {
            p["status"]["phase"] == "Running"
                && p["spec"]["nodeName"]
                    .as_str()
                    .is_some_and(|n| !n.is_empty())
                && p["status"]["containerStatuses"][0]["ready"] == true
        });
        if pods.len() == n && running.count() == n {
            return pods;
        }
        assert!(
            Instant::now() < deadline,
            "web never had {n} running pods: {pods:#?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn rollout_status(fx: &Kubectl) {
    let out = fx
        .ok(&[
            "rollout",
            "status",
            "deploy/web",
            "-n",
            "default",
            "--timeout=60s",
        ])
        .await;
    assert!(out.contains("successfully rolled out"), "{out}");
}

#[tokio::test]
async fn deployment_cascade_scale_and_delete() {
    // Churn runs meanwhile: the controllers and the churn must not fight over `web`.
    let config = SimConfig::with_size(40, 3, 2).churn(50.0, None);
    let Some(fx) = Kubectl::start_with("controllers", config).await else {
        return;
    };
    let out = fx
        .ok(&[
            "create",
            "deployment",
            "web",
            "--image=nginx:1.27",
            "--replicas=3",
            "-n",
            "default",
        ])
        .await;
    assert!(out.contains("deployment.apps/web created"), "{out}");
    rollout_status(&fx).await;

    let d = json(&fx, &["get", "deploy/web", "-n", "default"]).await;
    let status = &d["status"];
    for field in [
        "replicas",
        "readyReplicas",
        "availableReplicas",
        "updatedReplicas",
    ] {
        assert_eq!(status[field], 3, "{field}: {status:#}");
    }
    assert_eq!(status["observedGeneration"], d["metadata"]["generation"]);
    let condition = |kind: &str| {
        status["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == kind).cloned())
            .unwrap_or(Value::Null)
    };
    assert_eq!(condition("Available")["status"], "True");
    assert_eq!(condition("Progressing")["reason"], "NewReplicaSetAvailable");

    let rss = json(&fx, &["get", "rs", "-n", "default", "-l", "app=web"]).await;
    let rss = rss["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(rss.len(), 1, "{rss:#?}");
    let rs = &rss[0];
    let hash = rs["metadata"]["labels"]["pod-template-hash"]
        .as_str()
        .expect("pod-template-hash");
    assert_eq!(rs["metadata"]["name"], format!("web-{hash}"));
    assert_eq!(
        rs["metadata"]["ownerReferences"][0]["uid"],
        d["metadata"]["uid"]
    );
    assert_eq!(rs["status"]["readyReplicas"], 3);

    let pods = wait_for_running(&fx, 3).await;
    let nodes = json(&fx, &["get", "nodes"]).await;
    let node_names: Vec<&str> = nodes["items"]
        .as_array()
        .expect("nodes")
        .iter()
        .filter_map(|n| n["metadata"]["name"].as_str())
        .collect();
    for pod in &pods {
        assert_eq!(
            pod["metadata"]["ownerReferences"][0]["uid"],
            rs["metadata"]["uid"]
        );
        assert_eq!(pod["metadata"]["labels"]["pod-template-hash"], hash);
        let node = pod["spec"]["nodeName"].as_str().expect("bound");
        assert!(node_names.contains(&node), "{node} is not a node");
        assert!(pod["status"]["podIP"].is_string());
    }

    // The pod's story, in the order the kubelet told it.
    let pod_name = pods[0]["metadata"]["name"].as_str().expect("name");
    let reasons = event_reasons(&fx, pod_name).await;
    assert_eq!(
        reasons,
        ["Scheduled", "Pulling", "Pulled", "Created", "Started"],
        "events of {pod_name}"
    );
    let rs_name = rs["metadata"]["name"].as_str().expect("name");
    // One per pod: each names its pod, so none aggregates with another.
    assert_eq!(event_reasons(&fx, rs_name).await, ["SuccessfulCreate"; 3]);
    let table = fx.ok(&["get", "events", "-n", "default"]).await;
    assert!(
        table.contains("ScalingReplicaSet") && table.contains("Scheduled"),
        "{table}"
    );
    let described = fx.ok(&["describe", "deploy/web", "-n", "default"]).await;
    assert!(
        described.contains(&format!("Scaled up replica set {rs_name} from 0 to 3")),
        "{described}"
    );

    fx.ok(&["scale", "deploy/web", "--replicas=5", "-n", "default"])
        .await;
    rollout_status(&fx).await;
    let five = wait_for_running(&fx, 5).await;
    // A pod deleted from under its ReplicaSet is replaced through the scheduler and a kubelet.
    let names = |pods: &[Value]| -> Vec<String> {
        pods.iter()
            .filter_map(|p| p["metadata"]["name"].as_str().map(str::to_string))
            .collect()
    };
    let before = names(&five);
    fx.ok(&["delete", "pod", &before[0], "-n", "default"]).await;
    let deadline = Instant::now() + CONVERGE;
    let replacement = loop {
        let now = names(&wait_for_running(&fx, 5).await);
        if let Some(new) = now.iter().find(|n| !before.contains(n)) {
            assert!(!now.contains(&before[0]), "{now:?}");
            break new.clone();
        }
        assert!(
            Instant::now() < deadline,
            "no replacement for {}",
            before[0]
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(
        event_reasons(&fx, &replacement).await,
        ["Scheduled", "Pulling", "Pulled", "Created", "Started"]
    );
    fx.ok(&["scale", "deploy/web", "--replicas=1", "-n", "default"])
        .await;
    rollout_status(&fx).await;
    let left = wait_for_running(&fx, 1).await;
    let d = json(&fx, &["get", "deploy/web", "-n", "default"]).await;
    assert_eq!(d["status"]["replicas"], 1, "{:#}", d["status"]);
    let rs_events = event_reasons(&fx, rs_name).await;
    assert!(
        rs_events.contains(&"SuccessfulDelete".to_string()),
        "{rs_events:?}"
    );
    let gone = pods
        .iter()
        .filter_map(|p| p["metadata"]["name"].as_str())
        .find(|n| left[0]["metadata"]["name"] != *n)
        .expect("a deleted pod");
    let killed = event_reasons(&fx, gone).await;
    assert_eq!(
        killed.last().map(String::as_str),
        Some("Killing"),
        "{killed:?}"
    );

    // A restart changes the template: a second ReplicaSet (revision 2) takes over, the
    // first is scaled to zero.
    fx.ok(&["rollout", "restart", "deploy/web", "-n", "default"])
        .await;
    rollout_status(&fx).await;
    let restarted = wait_for_running(&fx, 1).await;
    assert_ne!(
        restarted[0]["metadata"]["name"],
        left[0]["metadata"]["name"]
    );
    let rss = json(&fx, &["get", "rs", "-n", "default", "-l", "app=web"]).await;
    let mut replicas: Vec<(String, u64)> = rss["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|rs| {
            (
                rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                rs["spec"]["replicas"].as_u64().unwrap_or(99),
            )
        })
        .collect();
    replicas.sort();
    assert_eq!(replicas, [("1".to_string(), 0), ("2".to_string(), 1)]);
    let d = json(&fx, &["get", "deploy/web", "-n", "default"]).await;
    assert_eq!(
        d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "2"
    );
    // Rolling (maxSurge 1, maxUnavailable 0 at one replica): the new pod first, then the
    // old one goes.
    let scaling = event_messages(&fx, "web").await;
    let tail: Vec<&str> = scaling
        .iter()
        .rev()
        .take(2)
        .rev()
        .map(String::as_str)
        .collect();
    let new_rs = restarted[0]["metadata"]["ownerReferences"][0]["name"]
        .as_str()
        .expect("owner");
    assert_eq!(
        tail,
        [
            format!("Scaled up replica set {new_rs} from 0 to 1"),
            format!("Scaled down replica set {rs_name} from 1 to 0"),
        ],
        "{scaling:#?}"
    );

    fx.ok(&["delete", "deploy/web", "-n", "default"]).await;
    let deadline = Instant::now() + CONVERGE;
    loop {
        let rss = json(&fx, &["get", "rs", "-n", "default", "-l", "app=web"]).await;
        let none_left = rss["items"].as_array().is_some_and(Vec::is_empty);
        if none_left && web_pods(&fx).await.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "web's ReplicaSets or pods remain"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The messages of the events about `name` in the default namespace, in write order.
async fn event_messages(fx: &Kubectl, name: &str) -> Vec<String> {
    let events = json(fx, &["get", "events", "-n", "default"]).await;
    let mut about: Vec<(u64, String)> = events["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|e| e["involvedObject"]["name"] == name)
        .filter_map(|e| {
            let rv = e["metadata"]["resourceVersion"].as_str()?.parse().ok()?;
            Some((rv, e["message"].as_str()?.to_string()))
        })
        .collect();
    about.sort();
    about.into_iter().map(|(_, m)| m).collect()
}

/// The reasons of the events about `name` in the default namespace, in the order they were
/// written (their resourceVersions).
async fn event_reasons(fx: &Kubectl, name: &str) -> Vec<String> {
    let events = json(fx, &["get", "events", "-n", "default"]).await;
    let mut about: Vec<(u64, String)> = events["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|e| e["involvedObject"]["name"] == name)
        .map(|e| {
            let rv = e["metadata"]["resourceVersion"]
                .as_str()
                .and_then(|rv| rv.parse().ok())
                .expect("resourceVersion");
            (rv, e["reason"].as_str().unwrap_or("").to_string())
        })
        .collect();
    about.sort();
    about.into_iter().map(|(_, r)| r).collect()
}

/// A seeded pod matching `pred`, as (namespace, name, pod).
async fn seeded_pod(
    fx: &Kubectl,
    pred: impl Fn(&Value) -> bool,
) -> Option<(String, String, Value)> {
    let pods = json(fx, &["get", "pods", "-A"]).await;
    pods["items"].as_array()?.iter().find(|p| pred(p)).map(|p| {
        (
            p["metadata"]["namespace"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            p["metadata"]["name"].as_str().unwrap_or("").to_string(),
            p.clone(),
        )
    })
}

fn restarts(pod: &Value) -> u64 {
    pod["status"]["containerStatuses"]
        .as_array()
        .map(|ss| ss.iter().filter_map(|s| s["restartCount"].as_u64()).sum())
        .unwrap_or(0)
}

#[tokio::test]
async fn kubectl_logs() {
    let Some(fx) = Kubectl::start_with("logs", SimConfig::with_size(400, 4, 2)).await else {
        return;
    };
    let (ns, pod, value) = seeded_pod(&fx, |p| {
        p["status"]["phase"] == "Running" && restarts(p) == 0
    })
    .await
    .expect("a running pod");
    let container = value["spec"]["containers"][0]["name"]
        .as_str()
        .expect("container")
        .to_string();
    let all = fx.ok(&["logs", &pod, "-n", &ns, "-c", &container]).await;
    assert!(all.lines().count() > 10, "{all}");
    let tail = fx
        .ok(&["logs", &pod, "-n", &ns, "-c", &container, "--tail=5"])
        .await;
    assert_eq!(tail.lines().count(), 5, "{tail}");
    // Deterministic: the same pod's old lines read the same again.
    let again = fx
        .ok(&["logs", &pod, "-n", &ns, "-c", &container, "--tail=50"])
        .await;
    assert!(
        again.contains(tail.lines().next().expect("a line")),
        "{tail}\n---\n{again}"
    );
    let stamped = fx
        .ok(&[
            "logs",
            &pod,
            "-n",
            &ns,
            "-c",
            &container,
            "--tail=2",
            "--timestamps",
        ])
        .await;
    for line in stamped.lines() {
        let (ts, _) = line.split_once(' ').expect("timestamp first");
        assert!(ts.parse::<jiff::Timestamp>().is_ok(), "{line}");
    }
    let limited = fx
        .ok(&[
            "logs",
            &pod,
            "-n",
            &ns,
            "-c",
            &container,
            "--limit-bytes=10",
        ])
        .await;
    assert_eq!(limited.len(), 10, "{limited:?}");
    let recent = fx
        .ok(&[
            "logs",
            &pod,
            "-n",
            &ns,
            "-c",
            &container,
            "--since=30s",
            "--timestamps",
        ])
        .await;
    let cutoff = jiff::Timestamp::now().as_second() - 40;
    for line in recent.lines() {
        let ts: jiff::Timestamp = line.split_once(' ').expect("ts").0.parse().expect("ts");
        assert!(ts.as_second() >= cutoff, "{line} is older than --since=30s");
    }

    let (ok, _, err) = fx.run(&["logs", &pod, "-n", &ns, "-c", "nosuch"]).await;
    assert!(
        !ok && err.contains(&format!("container nosuch is not valid for pod {pod}")),
        "{err}"
    );
    let (ok, _, err) = fx
        .run(&["logs", &pod, "-n", &ns, "-c", &container, "--previous"])
        .await;
    assert!(
        !ok && err.contains(&format!(
            "previous terminated container \"{container}\" in pod \"{pod}\" not found"
        )),
        "{err}"
    );

    // A crashing pod's previous container ended with a stack trace.
    let (cns, crashing, value) = seeded_pod(&fx, |p| restarts(p) > 0)
        .await
        .expect("a crashing pod");
    let crashed = value["status"]["containerStatuses"]
        .as_array()
        .and_then(|ss| ss.iter().find(|s| s["restartCount"].as_u64() > Some(0)))
        .and_then(|s| s["name"].as_str())
        .expect("crashed container")
        .to_string();
    let previous = fx
        .ok(&["logs", &crashing, "-n", &cns, "-c", &crashed, "--previous"])
        .await;
    assert!(previous.contains("goroutine 1 [running]"), "{previous}");

    // Follow: lines written after the request arrive on the open stream.
    let started = jiff::Timestamp::now();
    let mut follow = fx
        .command(&[
            "logs",
            &pod,
            "-n",
            &ns,
            "-c",
            &container,
            "-f",
            "--tail=1",
            "--timestamps",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl logs -f");
    let stdout = follow.stdout.take().expect("stdout");
    let newer = tokio::task::spawn_blocking(move || {
        use std::io::BufRead;
        std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .find(|line| {
                line.split_once(' ')
                    .and_then(|(ts, _)| ts.parse::<jiff::Timestamp>().ok())
                    .is_some_and(|ts| ts > started)
            })
    });
    let line = tokio::time::timeout(CONVERGE, newer).await;
    let _ = follow.kill();
    let _ = follow.wait();
    let line = line.expect("a new line within the bound").expect("join");
    assert!(line.is_some(), "the follow ended without a new line");
}

#[tokio::test]
async fn pods_that_never_ran_have_no_logs() {
    let Some(fx) = Kubectl::start("nologs").await else {
        return;
    };
    let manifest = fx.file(
        "stuck.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: stuck, namespace: default}\nspec:\n  nodeSelector: {disktype: none-such}\n  containers: [{name: main, image: nginx:1.27}]\n",
    );
    fx.ok(&["create", "-f", &manifest]).await;
    let deadline = Instant::now() + CONVERGE;
    loop {
        let pod = json(&fx, &["get", "pod", "stuck", "-n", "default"]).await;
        let scheduled = &pod["status"]["conditions"][0];
        if scheduled["reason"] == "Unschedulable" {
            assert_eq!(scheduled["status"], "False");
            assert!(pod["spec"]["nodeName"].is_null());
            break;
        }
        assert!(
            Instant::now() < deadline,
            "stuck never reported Unschedulable: {pod:#}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (ok, _, err) = fx.run(&["logs", "stuck", "-n", "default"]).await;
    assert!(
        !ok && err.contains("pod stuck does not have a host assigned"),
        "{err}"
    );

    // A pod that fits runs, and then has a log.
    fx.ok(&["run", "hello", "-n", "default", "--image=nginx:1.27"])
        .await;
    fx.ok(&[
        "wait",
        "--for=condition=Ready",
        "pod/hello",
        "-n",
        "default",
        "--timeout=60s",
    ])
    .await;
    // Ready says the container started, not that it has written yet: its first line is
    // waited for.
    let deadline = Instant::now() + CONVERGE;
    loop {
        let out = fx.ok(&["logs", "hello", "-n", "default"]).await;
        if !out.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "hello never logged a line");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A followed log sends every line the container writes, once and in order, however many
/// share a millisecond: the lines the log holds for that window when read afterwards.
#[tokio::test]
async fn following_a_fast_log_sends_every_line_once() {
    // Two lines most milliseconds, and two seconds of them well within the retained lines,
    // so the log read afterwards still holds the whole followed window.
    let config = SimConfig {
        noisy_logs: Some("fast=1500".parse().expect("noisy spec")),
        ..SimConfig::with_size(40, 3, 2)
    };
    let Some(fx) = Kubectl::start_with("fastlogs", config).await else {
        return;
    };
    fx.ok(&["run", "fast", "-n", "default", "--image=nginx:1.27"])
        .await;
    fx.ok(&[
        "wait",
        "--for=condition=Ready",
        "pod/fast",
        "-n",
        "default",
        "--timeout=60s",
    ])
    .await;
    let mut follow = fx
        .command(&[
            "logs",
            "fast",
            "-n",
            "default",
            "-f",
            "--tail=0",
            "--timestamps",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl logs -f");
    let stdout = follow.stdout.take().expect("stdout");
    let followed = tokio::task::spawn_blocking(move || {
        use std::io::BufRead;
        let until = Instant::now() + Duration::from_secs(2);
        std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .take_while(|_| Instant::now() < until)
            .collect::<Vec<_>>()
    });
    let followed = tokio::time::timeout(CONVERGE, followed).await;
    let _ = follow.kill();
    let _ = follow.wait();
    let followed = followed.expect("the follow kept sending").expect("join");
    assert!(followed.len() >= 500, "{} lines in 2 s", followed.len());

    let logged = fx
        .ok(&["logs", "fast", "-n", "default", "--timestamps"])
        .await;
    let logged: Vec<&str> = logged.lines().collect();
    let start = logged
        .iter()
        .position(|line| *line == followed[0])
        .expect("the log still holds the followed window's first line");
    let window = &logged[start..];
    assert!(
        window.len() >= followed.len(),
        "{} lines followed, {} logged since",
        followed.len(),
        window.len()
    );
    if let Some(i) = followed.iter().zip(window).position(|(f, l)| f != l) {
        panic!(
            "followed line {i} of {} is\n{}\nbut the log has\n{}",
            followed.len(),
            followed[i],
            window[i]
        );
    }
}

/// A container that ended without restarting (a Job's completed pod, a restartPolicy=Never
/// pod that failed) still has its log, as on a kubelet, and following it returns that log
/// and ends.
#[tokio::test]
async fn containers_that_ended_have_logs() {
    let config = SimConfig {
        noisy_logs: Some("ended=100".parse().expect("noisy spec")),
        ..SimConfig::with_size(40, 3, 2)
    };
    let Some(fx) = Kubectl::start_with("endedlogs", config).await else {
        return;
    };
    let job = fx.file(
        "jj.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: jj, namespace: default}\nspec:\n  template:\n    metadata: {labels: {app: ended}}\n    spec:\n      restartPolicy: Never\n      containers: [{name: jj, image: \"busybox:1.36\", command: [sh, -c, \"sleep 1\"]}]\n",
    );
    fx.ok(&["apply", "-f", &job]).await;
    fx.ok(&[
        "run",
        "exits",
        "-n",
        "default",
        "--image=busybox:1.36",
        "--restart=Never",
        "--labels=app=ended",
        "--",
        "sh",
        "-c",
        "exit 2",
    ])
    .await;
    fx.ok(&[
        "wait",
        "--for=condition=complete",
        "job/jj",
        "-n",
        "default",
        "--timeout=60s",
    ])
    .await;
    let deadline = Instant::now() + CONVERGE;
    loop {
        let pod = json(&fx, &["get", "pod", "exits", "-n", "default"]).await;
        if pod["status"]["phase"] == "Failed" {
            let status = &pod["status"]["containerStatuses"][0];
            assert_eq!(status["state"]["terminated"]["exitCode"], 2, "{pod:#}");
            assert_eq!(status["restartCount"], 0, "{pod:#}");
            break;
        }
        assert!(Instant::now() < deadline, "exits never failed: {pod:#}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let pods = json(&fx, &["get", "pods", "-n", "default", "-l", "job-name=jj"]).await;
    let status = &pods["items"][0]["status"]["containerStatuses"][0];
    assert_eq!(
        status["state"]["terminated"]["reason"], "Completed",
        "{pods:#}"
    );
    assert_eq!(status["restartCount"], 0, "{pods:#}");

    // A second at 100 lines a second, and no crash.
    let completed = fx.ok(&["logs", "job/jj", "-n", "default"]).await;
    assert!(completed.lines().count() >= 50, "{completed}");
    assert!(!completed.contains("goroutine"), "{completed}");
    // The failed one's ends with its crash.
    let failed = fx.ok(&["logs", "pod/exits", "-n", "default"]).await;
    assert!(failed.lines().count() >= 50, "{failed}");
    assert!(
        failed
            .lines()
            .last()
            .is_some_and(|l| l.contains("server.go")),
        "{failed}"
    );
    for (target, log) in [("job/jj", &completed), ("pod/exits", &failed)] {
        let (ok, out, err) =
            tokio::time::timeout(CONVERGE, fx.run(&["logs", target, "-n", "default", "-f"]))
                .await
                .unwrap_or_else(|_| panic!("kubectl logs -f {target} did not end"));
        assert!(ok, "kubectl logs -f {target}: {err}");
        assert_eq!(&out, log, "kubectl logs -f {target}");
    }
}

#[tokio::test]
async fn foreground_and_orphan_deletion() {
    let Some(fx) = Kubectl::start("gcmodes").await else {
        return;
    };
    for name in ["fg", "orphan"] {
        fx.ok(&[
            "create",
            "deployment",
            name,
            "--image=nginx:1.27",
            "--replicas=2",
            "-n",
            "default",
        ])
        .await;
        let deploy = format!("deploy/{name}");
        fx.ok(&[
            "rollout",
            "status",
            &deploy,
            "-n",
            "default",
            "--timeout=60s",
        ])
        .await;
    }
    let owned = |name: &'static str| {
        let fx = &fx;
        async move {
            let selector = format!("app={name}");
            let rss = json(fx, &["get", "rs", "-n", "default", "-l", &selector]).await;
            let pods = json(fx, &["get", "pods", "-n", "default", "-l", &selector]).await;
            let count = |v: &Value| v["items"].as_array().map_or(0, Vec::len);
            (count(&rss), count(&pods))
        }
    };
    assert_eq!(owned("fg").await, (1, 2));

    // Foreground: the Deployment is marked first, and goes after what it owns (kubectl
    // waits for it to be gone).
    let mut watch = fx
        .command(&[
            "get",
            "deploy/fg",
            "-n",
            "default",
            "-w",
            "-o",
            "json",
            "--output-watch-events",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl get -w");
    let stdout = watch.stdout.take().expect("stdout");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let stream = serde_json::Deserializer::from_reader(stdout).into_iter::<Value>();
        for event in stream.map_while(Result::ok) {
            if tx.send(event).is_err() {
                break;
            }
        }
    });
    // The watch is open (its first event is the Deployment as it is) before the delete.
    let first = tokio::time::timeout(CONVERGE, rx.recv())
        .await
        .expect("the watch starts");
    assert_eq!(first.expect("an event")["type"], "ADDED");
    fx.ok(&[
        "delete",
        "deploy/fg",
        "-n",
        "default",
        "--cascade=foreground",
        "--timeout=60s",
    ])
    .await;
    assert_eq!(owned("fg").await, (0, 0));
    let mut seen = Vec::new();
    while let Ok(Some(event)) = tokio::time::timeout(CONVERGE, rx.recv()).await {
        let finalizers = event["object"]["metadata"]["finalizers"].clone();
        let kind = event["type"].as_str().unwrap_or("").to_string();
        let done = kind == "DELETED";
        seen.push((kind, finalizers));
        if done {
            break;
        }
    }
    let _ = watch.kill();
    let _ = watch.wait();
    assert!(
        seen.iter()
            .any(|(kind, f)| kind == "MODIFIED" && f[0] == "foregroundDeletion"),
        "{seen:?}"
    );
    assert_eq!(
        seen.last().map(|(k, _)| k.as_str()),
        Some("DELETED"),
        "{seen:?}"
    );

    // Orphan: what it owned stays.
    fx.ok(&[
        "delete",
        "deploy/orphan",
        "-n",
        "default",
        "--cascade=orphan",
    ])
    .await;
    assert_eq!(owned("orphan").await, (1, 2));
}

#[tokio::test]
async fn scaling_a_seeded_deployment_converges() {
    let Some(fx) =
        Kubectl::start_with("seeded", SimConfig::with_size(60, 3, 2).churn(50.0, None)).await
    else {
        return;
    };
    let deployments = json(&fx, &["get", "deploy", "-A"]).await;
    let pods = json(&fx, &["get", "pods", "-A"]).await;
    let pods = pods["items"].as_array().expect("items");
    // Healthy by its pods (a seeded status may count a crash-looping pod as ready).
    let all_ready = |d: &Value| {
        let ns = &d["metadata"]["namespace"];
        let prefix = format!("{}-", d["metadata"]["name"].as_str().unwrap_or(""));
        pods.iter()
            .filter(|p| {
                p["metadata"]["namespace"] == *ns
                    && p["metadata"]["name"]
                        .as_str()
                        .is_some_and(|n| n.starts_with(&prefix))
            })
            .all(|p| {
                p["status"]["containerStatuses"]
                    .as_array()
                    .is_some_and(|ss| ss.iter().all(|s| s["ready"] == true))
            })
    };
    let healthy = deployments["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|d| {
            let s = &d["status"];
            s["readyReplicas"] == d["spec"]["replicas"]
                && s["replicas"] == d["spec"]["replicas"]
                && all_ready(d)
        })
        .expect("a healthy seeded Deployment");
    let ns = healthy["metadata"]["namespace"].as_str().expect("ns");
    let name = format!(
        "deploy/{}",
        healthy["metadata"]["name"].as_str().expect("name")
    );
    let wanted = healthy["spec"]["replicas"].as_u64().expect("replicas") + 2;
    let replicas = format!("--replicas={wanted}");
    fx.ok(&["scale", &name, "-n", ns, &replicas]).await;
    let (ok, out, err) = fx
        .run(&["rollout", "status", &name, "-n", ns, "--timeout=60s"])
        .await;
    let d = json(&fx, &["get", &name, "-n", ns]).await;
    let rss = fx.ok(&["get", "rs,pods", "-n", ns, "-o", "wide"]).await;
    assert!(
        ok && out.contains("successfully rolled out"),
        "{out}{err}\n{:#}\n{:#}\n{rss}",
        d["status"],
        d["spec"]
    );
    assert_eq!(
        d["status"]["availableReplicas"], wanted,
        "{:#}",
        d["status"]
    );
    // No new ReplicaSet: the seeded one has the template already.
    let rss = json(&fx, &["get", "rs", "-n", ns]).await;
    let owned: Vec<&Value> = rss["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|rs| rs["metadata"]["ownerReferences"][0]["uid"] == d["metadata"]["uid"])
        .filter(|rs| rs["spec"]["replicas"].as_u64() > Some(0))
        .collect();
    assert_eq!(owned.len(), 1, "{owned:#?}");
    assert_eq!(owned[0]["status"]["readyReplicas"], wanted);
}

/// Creates Deployment `name` of nginx pods in `default` and waits for its rollout.
async fn rolled_out(fx: &Kubectl, name: &str, replicas: u32) {
    let replicas = format!("--replicas={replicas}");
    fx.ok(&[
        "create",
        "deployment",
        name,
        "--image=nginx:1.27",
        &replicas,
        "-n",
        "default",
    ])
    .await;
    let deploy = format!("deploy/{name}");
    fx.ok(&[
        "rollout",
        "status",
        &deploy,
        "-n",
        "default",
        "--timeout=60s",
    ])
    .await;
}

/// The items of `kind` in `default` labelled `app=<app>`.
async fn items(fx: &Kubectl, kind: &str, app: &str) -> Vec<Value> {
    let selector = format!("app={app}");
    let list = json(fx, &["get", kind, "-n", "default", "-l", &selector]).await;
    list["items"].as_array().cloned().unwrap_or_default()
}

fn name_of(v: &Value) -> String {
    v["metadata"]["name"].as_str().unwrap_or("").to_string()
}

fn controller_uid(v: &Value) -> Value {
    v["metadata"]["ownerReferences"]
        .as_array()
        .and_then(|refs| refs.iter().find(|r| r["controller"] == true))
        .map_or(Value::Null, |r| r["uid"].clone())
}

/// `kubectl get <args> -w --output-watch-events -o json`, its events as they come.
fn watch(
    fx: &Kubectl,
    args: &[&str],
) -> (
    std::process::Child,
    tokio::sync::mpsc::UnboundedReceiver<Value>,
) {
    let mut all = vec!["get"];
    all.extend(args);
    all.extend(["-n", "default", "-w", "--output-watch-events", "-o", "json"]);
    let mut child = fx
        .command(&all)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl get -w");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let stream = serde_json::Deserializer::from_reader(stdout).into_iter::<Value>();
        for event in stream.map_while(Result::ok) {
            if tx.send(event).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// The resourceVersions of the next `n` events of type `kind` on `rx`.
async fn next_of(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<Value>,
    kind: &str,
    n: usize,
) -> Vec<u64> {
    let mut rvs = Vec::new();
    while rvs.len() < n {
        let event = tokio::time::timeout(CONVERGE, rx.recv())
            .await
            .unwrap_or_else(|_| panic!("{n} {kind} events"))
            .expect("the watch runs");
        if event["type"] == kind {
            let rv = event["object"]["metadata"]["resourceVersion"]
                .as_str()
                .and_then(|rv| rv.parse().ok())
                .expect("resourceVersion");
            rvs.push(rv);
        }
    }
    rvs
}

/// How many addresses Service `ep`'s Endpoints and EndpointSlices list (a slice's
/// terminating endpoints left out: they stay there, marked, until their pods go).
async fn ep_addresses(fx: &Kubectl) -> (usize, usize) {
    let endpoints = json(fx, &["get", "endpoints/ep", "-n", "default"]).await;
    let addresses: usize = endpoints["subsets"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| s["addresses"].as_array().map_or(0, Vec::len))
        .sum();
    let slices = json(
        fx,
        &[
            "get",
            "endpointslices",
            "-n",
            "default",
            "-l",
            "kubernetes.io/service-name=ep",
        ],
    )
    .await;
    let in_slices: usize = slices["items"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["endpoints"].as_array().cloned().unwrap_or_default())
        .filter(|e| e["conditions"]["terminating"] != true)
        .count();
    (addresses, in_slices)
}

/// A Deployment's pods leave its Service's Endpoints and EndpointSlice when the Deployment
/// is deleted, each stopped by its kubelet as if a client had deleted it.
#[tokio::test]
async fn deleting_a_deployment_takes_its_pods_out_of_endpoints() {
    let Some(fx) = Kubectl::start("gcendpoints").await else {
        return;
    };
    rolled_out(&fx, "ep", 2).await;
    fx.ok(&["expose", "deploy/ep", "--port=80", "-n", "default"])
        .await;
    let deadline = Instant::now() + CONVERGE;
    while ep_addresses(&fx).await != (2, 2) {
        assert!(Instant::now() < deadline, "{:?}", ep_addresses(&fx).await);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let pods: Vec<String> = items(&fx, "pods", "ep").await.iter().map(name_of).collect();
    fx.ok(&["delete", "deploy/ep", "-n", "default"]).await;
    while ep_addresses(&fx).await != (0, 0) {
        assert!(
            Instant::now() < deadline,
            "the deleted pods are still listed: {:?}",
            ep_addresses(&fx).await
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Out of the endpoints while Terminating, until their containers stopped, then gone.
    let left = items(&fx, "pods", "ep").await;
    assert!(
        left.iter()
            .all(|p| p["metadata"]["deletionTimestamp"].is_string()),
        "{left:#?}"
    );
    for pod in &pods {
        let reasons = event_reasons(&fx, pod).await;
        assert_eq!(
            reasons.last().map(String::as_str),
            Some("Killing"),
            "{reasons:?}"
        );
    }
}

/// Any object naming a deleted owner's uid is collected, controller or not; one that has
/// another owner left only loses its reference to the one deleted.
#[tokio::test]
async fn objects_owned_without_a_controller_reference_are_collected() {
    let Some(fx) = Kubectl::start("gcowners").await else {
        return;
    };
    for name in ["u2", "keep"] {
        fx.ok(&[
            "create",
            "deployment",
            name,
            "--image=nginx:1.27",
            "-n",
            "default",
        ])
        .await;
    }
    let reference = |name: &str, d: &Value| {
        serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "name": name,
            "uid": d["metadata"]["uid"],
        })
    };
    let u2 = json(&fx, &["get", "deploy/u2", "-n", "default"]).await;
    let keep = json(&fx, &["get", "deploy/keep", "-n", "default"]).await;
    let config_map = |name: &str, owners: Value| {
        serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default", "ownerReferences": owners},
            "data": {"k": "v"},
        })
    };
    for (name, owners) in [
        ("u2-config", serde_json::json!([reference("u2", &u2)])),
        (
            "shared-config",
            serde_json::json!([reference("u2", &u2), reference("keep", &keep)]),
        ),
    ] {
        let path = fx.file(
            &format!("{name}.json"),
            &config_map(name, owners).to_string(),
        );
        fx.ok(&["create", "-f", &path]).await;
    }
    fx.ok(&["delete", "deploy/u2", "-n", "default"]).await;
    wait_until_gone(&fx, "configmap/u2-config", "its owner").await;
    let shared = json(&fx, &["get", "configmap/shared-config", "-n", "default"]).await;
    assert_eq!(
        shared["metadata"]["ownerReferences"],
        serde_json::json!([reference("keep", &keep)]),
        "{shared:#}"
    );

    // A pod can own objects too (a generic ephemeral volume's claim is owned by its pod):
    // they go with it.
    let pods = json(&fx, &["get", "pods", "-n", "default", "-l", "app=keep"]).await;
    let pod = &pods["items"][0];
    let pod_name = pod["metadata"]["name"].as_str().expect("keep has a pod");
    let by_pod = serde_json::json!([{
        "apiVersion": "v1", "kind": "Pod", "name": pod_name, "uid": pod["metadata"]["uid"],
    }]);
    let path = fx.file(
        "pod-config.json",
        &config_map("pod-config", by_pod).to_string(),
    );
    fx.ok(&["create", "-f", &path]).await;
    fx.ok(&["delete", "pod", pod_name, "-n", "default"]).await;
    wait_until_gone(&fx, "configmap/pod-config", "its pod").await;
}

/// Polls until `object` in namespace default is gone, failing after [`CONVERGE`] as having
/// outlived `owner`.
async fn wait_until_gone(fx: &Kubectl, object: &str, owner: &str) {
    let deadline = Instant::now() + CONVERGE;
    while fx.run(&["get", object, "-n", "default"]).await.0 {
        assert!(Instant::now() < deadline, "{object} outlived {owner}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// An orphaning delete strips the dependents' references to the owner; a Deployment made
/// again adopts the ReplicaSet left (and so its pods), and a ReplicaSet made again adopts
/// the pods left, rather than making more.
#[tokio::test]
async fn orphans_lose_their_owner_and_are_adopted_again() {
    let Some(fx) = Kubectl::start("gcadopt").await else {
        return;
    };
    rolled_out(&fx, "orph", 2).await;
    let pods: Vec<String> = items(&fx, "pods", "orph")
        .await
        .iter()
        .map(name_of)
        .collect();
    fx.ok(&["delete", "deploy/orph", "-n", "default", "--cascade=orphan"])
        .await;
    let rss = items(&fx, "rs", "orph").await;
    assert_eq!(rss.len(), 1);
    assert!(
        rss[0]["metadata"]["ownerReferences"]
            .as_array()
            .is_none_or(Vec::is_empty),
        "{:#}",
        rss[0]["metadata"]
    );
    rolled_out(&fx, "orph", 2).await;
    let d = json(&fx, &["get", "deploy/orph", "-n", "default"]).await;
    let deadline = Instant::now() + CONVERGE;
    loop {
        let rss = items(&fx, "rs", "orph").await;
        let now = items(&fx, "pods", "orph").await;
        let adopted = rss.len() == 1
            && controller_uid(&rss[0]) == d["metadata"]["uid"]
            && now.len() == 2
            && now
                .iter()
                .all(|p| controller_uid(p) == rss[0]["metadata"]["uid"]);
        if adopted {
            let mut names: Vec<String> = now.iter().map(name_of).collect();
            names.sort();
            let mut before = pods.clone();
            before.sort();
            assert_eq!(names, before, "the pods are kept, not made again");
            break;
        }
        assert!(Instant::now() < deadline, "{rss:#?}\n{now:#?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let manifest = serde_json::json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "bare", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "bare"}},
            "template": {
                "metadata": {"labels": {"app": "bare"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]},
            },
        },
    });
    let path = fx.file("bare.json", &manifest.to_string());
    fx.ok(&["create", "-f", &path]).await;
    let deadline = Instant::now() + CONVERGE;
    let first = loop {
        let pods = items(&fx, "pods", "bare").await;
        let running = pods
            .iter()
            .filter(|p| p["status"]["phase"] == "Running")
            .count();
        if running == 2 && pods.len() == 2 {
            break pods;
        }
        assert!(Instant::now() < deadline, "bare never ran 2 pods");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    fx.ok(&["delete", "rs/bare", "-n", "default", "--cascade=orphan"])
        .await;
    for pod in items(&fx, "pods", "bare").await {
        assert!(
            pod["metadata"]["ownerReferences"]
                .as_array()
                .is_none_or(Vec::is_empty),
            "{:#}",
            pod["metadata"]
        );
    }
    fx.ok(&["create", "-f", &path]).await;
    let rs = json(&fx, &["get", "rs/bare", "-n", "default"]).await;
    loop {
        let now = items(&fx, "pods", "bare").await;
        if now
            .iter()
            .all(|p| controller_uid(p) == rs["metadata"]["uid"])
        {
            let names = |pods: &[Value]| {
                let mut names: Vec<String> = pods.iter().map(name_of).collect();
                names.sort();
                names
            };
            assert_eq!(
                names(&now),
                names(&first),
                "the pods are kept, not made again"
            );
            break;
        }
        assert!(Instant::now() < deadline, "{now:#?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Nothing more is made later either.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(items(&fx, "pods", "bare").await.len(), 2);
}

/// A background delete deletes the owner at once, then what it owned: the Deployment's
/// DELETED comes before its ReplicaSet's, which comes before its pods'.
#[tokio::test]
async fn background_deletion_deletes_the_owner_first() {
    let Some(fx) = Kubectl::start("gcorder").await else {
        return;
    };
    rolled_out(&fx, "bg", 2).await;
    let mut watches = [
        (watch(&fx, &["deploy/bg"]), 1),
        (watch(&fx, &["rs", "-l", "app=bg"]), 1),
        (watch(&fx, &["pods", "-l", "app=bg"]), 2),
    ];
    // Each watch is open (it listed what there is) before the delete.
    for ((_, rx), n) in &mut watches {
        next_of(rx, "ADDED", *n).await;
    }
    fx.ok(&["delete", "deploy/bg", "-n", "default"]).await;
    let mut deleted = Vec::new();
    for ((child, rx), n) in &mut watches {
        deleted.push(next_of(rx, "DELETED", *n).await);
        let _ = child.kill();
        let _ = child.wait();
    }
    let (deployment, rs, pods) = (deleted[0][0], deleted[1][0], &deleted[2]);
    assert!(
        deployment < rs && pods.iter().all(|p| rs < *p),
        "Deployment at {deployment}, ReplicaSet at {rs}, pods at {pods:?}"
    );
}
