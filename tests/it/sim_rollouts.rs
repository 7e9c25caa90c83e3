//! Deployment rollouts through kubectl as a cluster's controller runs them: `rollout undo`
//! and a template set back reuse the old ReplicaSet at the next revision, `rollout history`
//! lists them, revisionHistoryLimit prunes, `rollout pause` holds a template change until
//! `rollout resume`, and a rollout stuck past progressDeadlineSeconds fails
//! `kubectl rollout status`.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::kubectl::Kubectl;

/// The longest a convergence may take here (a bound, not a measure).
const BOUND: Duration = Duration::from_secs(30);

/// What a ReplicaSet of `app` says of its rollout.
#[derive(Debug, Clone, PartialEq)]
struct Rs {
    name: String,
    replicas: u64,
    revision: String,
    history: String,
    image: String,
}

async fn get(fx: &Kubectl, what: &str) -> Value {
    let out = fx.ok(&["get", what, "-n", "default", "-o", "json"]).await;
    serde_json::from_str(&out).expect("kubectl prints JSON")
}

async fn replicasets(fx: &Kubectl, app: &str) -> Vec<Rs> {
    let selector = format!("app={app}");
    let out = fx
        .ok(&["get", "rs", "-n", "default", "-l", &selector, "-o", "json"])
        .await;
    let list: Value = serde_json::from_str(&out).expect("kubectl prints JSON");
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let mut rss: Vec<Rs> = list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|rs| {
            let annotations = &rs["metadata"]["annotations"];
            Rs {
                name: text(&rs["metadata"]["name"]),
                replicas: rs["spec"]["replicas"].as_u64().unwrap_or(0),
                revision: text(&annotations["deployment.kubernetes.io/revision"]),
                history: text(&annotations["deployment.kubernetes.io/revision-history"]),
                image: text(&rs["spec"]["template"]["spec"]["containers"][0]["image"]),
            }
        })
        .collect();
    rss.sort_by_key(|rs| rs.revision.parse::<u64>().unwrap_or(0));
    rss
}

/// Polls `app`'s ReplicaSets until `ok` holds of them; panics with them after [`BOUND`].
async fn wait_for(fx: &Kubectl, app: &str, what: &str, ok: impl Fn(&[Rs]) -> bool) -> Vec<Rs> {
    let deadline = Instant::now() + BOUND;
    loop {
        let rss = replicasets(fx, app).await;
        if ok(&rss) {
            return rss;
        }
        assert!(Instant::now() < deadline, "{what}: {rss:#?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn rolled_out(fx: &Kubectl, app: &str) {
    let target = format!("deploy/{app}");
    let out = fx
        .ok(&[
            "rollout",
            "status",
            &target,
            "-n",
            "default",
            "--timeout=30s",
        ])
        .await;
    assert!(out.contains("successfully rolled out"), "{out}");
}

fn progressing(d: &Value) -> Value {
    d["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Progressing").cloned())
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn undo_and_a_template_set_back_reuse_the_old_replicaset() {
    let Some(fx) = Kubectl::start("rollouts-undo").await else {
        return;
    };
    let ns = ["-n", "default"];
    let run = |args: &'static [&'static str]| {
        let mut all = args.to_vec();
        all.extend(ns);
        all
    };
    fx.ok(&run(&[
        "create",
        "deployment",
        "u2",
        "--image=nginx:1.27",
        "--replicas=2",
    ]))
    .await;
    rolled_out(&fx, "u2").await;
    fx.ok(&run(&[
        "annotate",
        "deploy/u2",
        "kubernetes.io/change-cause=first",
    ]))
    .await;
    fx.ok(&run(&["set", "image", "deploy/u2", "nginx=nginx:1.28"]))
        .await;
    fx.ok(&run(&[
        "annotate",
        "--overwrite",
        "deploy/u2",
        "kubernetes.io/change-cause=second",
    ]))
    .await;
    rolled_out(&fx, "u2").await;

    fx.ok(&run(&["rollout", "undo", "deploy/u2"])).await;
    rolled_out(&fx, "u2").await;
    // The first ReplicaSet is back, at revision 3, remembering it was 1; no third one.
    let rss = replicasets(&fx, "u2").await;
    let first = &rss[1];
    assert_eq!(rss.len(), 2, "{rss:#?}");
    assert_eq!(
        (
            first.image.as_str(),
            first.replicas,
            first.revision.as_str(),
            first.history.as_str()
        ),
        ("nginx:1.27", 2, "3", "1"),
        "{rss:#?}"
    );
    let d = get(&fx, "deploy/u2").await;
    assert_eq!(
        d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "3"
    );
    let history = fx.ok(&run(&["rollout", "history", "deploy/u2"])).await;
    let rows: Vec<Vec<&str>> = history
        .lines()
        .skip_while(|l| !l.starts_with("REVISION"))
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows, [["2", "second"], ["3", "first"]], "{history}");

    // Setting the image back by hand reuses the second one the same way.
    fx.ok(&run(&["set", "image", "deploy/u2", "nginx=nginx:1.28"]))
        .await;
    rolled_out(&fx, "u2").await;
    let rss = replicasets(&fx, "u2").await;
    assert_eq!(rss.len(), 2, "{rss:#?}");
    let second = &rss[1];
    assert_eq!(
        (
            second.image.as_str(),
            second.replicas,
            second.revision.as_str(),
            second.history.as_str()
        ),
        ("nginx:1.28", 2, "4", "2"),
        "{rss:#?}"
    );
    let d = get(&fx, "deploy/u2").await;
    assert_eq!(
        d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "4"
    );
}

#[tokio::test]
async fn revision_history_limit_prunes_the_oldest() {
    let Some(fx) = Kubectl::start("rollouts-limit").await else {
        return;
    };
    let manifest = fx.file(
        "limit.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: lim\n  namespace: default\n\
         spec:\n  replicas: 1\n  revisionHistoryLimit: 1\n  selector:\n    matchLabels: {app: lim}\n\
         \x20 template:\n    metadata:\n      labels: {app: lim}\n    spec:\n      containers:\n\
         \x20     - name: app\n        image: nginx:1.20\n",
    );
    fx.ok(&["apply", "-f", &manifest]).await;
    rolled_out(&fx, "lim").await;
    for tag in ["1.21", "1.22", "1.23"] {
        let image = format!("app=nginx:{tag}");
        fx.ok(&["set", "image", "deploy/lim", &image, "-n", "default"])
            .await;
        rolled_out(&fx, "lim").await;
    }
    // The current one and the one before it stay; revisions 1 and 2 are gone.
    let rss = wait_for(&fx, "lim", "two ReplicaSets left", |rss| rss.len() == 2).await;
    let kept: Vec<(&str, &str, u64)> = rss
        .iter()
        .map(|rs| (rs.revision.as_str(), rs.image.as_str(), rs.replicas))
        .collect();
    assert_eq!(kept, [("3", "nginx:1.22", 0), ("4", "nginx:1.23", 1)]);
}

#[tokio::test]
async fn pause_holds_a_template_change_and_resume_rolls_it() {
    let Some(fx) = Kubectl::start("rollouts-pause").await else {
        return;
    };
    let ns = ["-n", "default"];
    let with_ns = |args: &[&'static str]| {
        let mut all = args.to_vec();
        all.extend(ns);
        all
    };
    fx.ok(&with_ns(&[
        "create",
        "deployment",
        "p",
        "--image=nginx:1.27",
        "--replicas=2",
    ]))
    .await;
    rolled_out(&fx, "p").await;
    fx.ok(&with_ns(&["rollout", "pause", "deploy/p"])).await;
    fx.ok(&with_ns(&["set", "image", "deploy/p", "nginx=nginx:1.28"]))
        .await;
    // Scaling still applies while paused, to the one ReplicaSet there is.
    fx.ok(&with_ns(&["scale", "deploy/p", "--replicas=3"]))
        .await;
    let rss = wait_for(&fx, "p", "the paused one scaled", |rss| {
        rss.len() == 1 && rss[0].replicas == 3
    })
    .await;
    assert_eq!(rss[0].image, "nginx:1.27");
    let d = get(&fx, "deploy/p").await;
    let c = progressing(&d);
    assert_eq!(
        (&c["status"], &c["reason"]),
        (&"Unknown".into(), &"DeploymentPaused".into()),
        "{c:#}"
    );
    let (ok, out, _) = fx
        .run(&with_ns(&["rollout", "status", "deploy/p", "--timeout=2s"]))
        .await;
    assert!(!ok, "a paused rollout is not done: {out}");
    assert!(
        out.contains("0 out of 3 new replicas have been updated"),
        "{out}"
    );
    // Still held after that.
    assert_eq!(replicasets(&fx, "p").await.len(), 1);

    fx.ok(&with_ns(&["rollout", "resume", "deploy/p"])).await;
    rolled_out(&fx, "p").await;
    let rss = replicasets(&fx, "p").await;
    let replicas: Vec<(&str, u64, &str)> = rss
        .iter()
        .map(|rs| (rs.image.as_str(), rs.replicas, rs.revision.as_str()))
        .collect();
    assert_eq!(replicas, [("nginx:1.27", 0, "1"), ("nginx:1.28", 3, "2")]);
    let c = progressing(&get(&fx, "deploy/p").await);
    assert_eq!(c["reason"], "NewReplicaSetAvailable", "{c:#}");
}

#[tokio::test]
async fn a_rollout_past_its_progress_deadline_fails_rollout_status() {
    let Some(fx) = Kubectl::start("rollouts-deadline").await else {
        return;
    };
    // Its pods run but never become ready: the readiness probe fails.
    let manifest = fx.file(
        "stuck.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: stuck\n  namespace: default\n\
         spec:\n  replicas: 2\n  progressDeadlineSeconds: 3\n  selector:\n    matchLabels: {app: stuck}\n\
         \x20 template:\n    metadata:\n      labels: {app: stuck}\n    spec:\n      containers:\n\
         \x20     - name: app\n        image: nginx:1.27\n        readinessProbe:\n\
         \x20         exec: {command: [\"false\"]}\n          periodSeconds: 1\n",
    );
    fx.ok(&["apply", "-f", &manifest]).await;
    let started = Instant::now();
    let (ok, out, err) = fx
        .run(&[
            "rollout",
            "status",
            "deploy/stuck",
            "-n",
            "default",
            "--timeout=20s",
        ])
        .await;
    assert!(!ok, "{out}");
    assert!(
        err.contains("error: deployment \"stuck\" exceeded its progress deadline"),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    let c = progressing(&get(&fx, "deploy/stuck").await);
    assert_eq!(
        (&c["status"], &c["reason"]),
        (&"False".into(), &"ProgressDeadlineExceeded".into()),
        "{c:#}"
    );
    let message = c["message"].as_str().unwrap_or_default();
    assert!(message.ends_with("has timed out progressing."), "{message}");
}

/// A pod counts as available only once it has been Ready for minReadySeconds: the
/// ReplicaSet and the Deployment say ready before they say available, and the rollout
/// completes once they do.
#[tokio::test]
async fn min_ready_seconds_holds_availability_back() {
    let Some(fx) = Kubectl::start("rollouts-min-ready").await else {
        return;
    };
    let manifest = fx.file(
        "slow.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: slow, namespace: default}\n\
         spec:\n  replicas: 2\n  minReadySeconds: 6\n  selector: {matchLabels: {app: slow}}\n\
         \x20 template:\n    metadata: {labels: {app: slow}}\n\
         \x20   spec: {containers: [{name: app, image: nginx:1.27}]}\n",
    );
    fx.ok(&["apply", "-f", &manifest]).await;
    let deadline = Instant::now() + BOUND;
    let ready_first = loop {
        let status = get(&fx, "deploy/slow").await["status"].clone();
        if status["readyReplicas"] == 2 {
            break status;
        }
        assert!(Instant::now() < deadline, "never ready: {status:#}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_ne!(
        ready_first["availableReplicas"], 2,
        "available as soon as ready: {ready_first:#}"
    );
    fx.ok(&[
        "rollout",
        "status",
        "deploy/slow",
        "-n",
        "default",
        "--timeout=30s",
    ])
    .await;
    let status = get(&fx, "deploy/slow").await["status"].clone();
    assert_eq!(status["availableReplicas"], 2, "{status:#}");
}
