//! The sim's StatefulSet, DaemonSet, Job and CronJob controllers and its kubelets' crash
//! loops, driven by kubectl over real HTTP: workloads converge as `kubectl rollout status`
//! and `kubectl wait` see them, in the order the real controllers keep, with their Events.

use std::time::{Duration, Instant};

use serde_json::Value;

use kscope_sim::SimConfig;

use crate::common::kubectl::Kubectl;

/// How long a convergence may take before the test gives up (a bound, not a measure).
const CONVERGE: Duration = Duration::from_secs(90);

async fn json(fx: &Kubectl, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    serde_json::from_str(&fx.ok(&all).await).expect("kubectl prints JSON")
}

async fn items(fx: &Kubectl, args: &[&str]) -> Vec<Value> {
    json(fx, args).await["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Polls `check` over `kubectl get ARGS -o json` until it holds; panics with the last
/// state past [`CONVERGE`].
async fn wait_until(
    fx: &Kubectl,
    args: &[&str],
    what: &str,
    check: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + CONVERGE;
    loop {
        let value = json(fx, args).await;
        if check(&value) {
            return value;
        }
        assert!(Instant::now() < deadline, "never {what}: {value:#}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// `(reason, message)` of the events about `name` in `default`, in write order.
async fn events_about(fx: &Kubectl, name: &str) -> Vec<(String, String)> {
    let mut about: Vec<(u64, String, String)> = items(fx, &["get", "events", "-n", "default"])
        .await
        .iter()
        .filter(|e| e["involvedObject"]["name"] == name)
        .map(|e| {
            (
                e["metadata"]["resourceVersion"]
                    .as_str()
                    .and_then(|rv| rv.parse().ok())
                    .expect("resourceVersion"),
                e["reason"].as_str().unwrap_or("").to_string(),
                e["message"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    about.sort();
    about.into_iter().map(|(_, r, m)| (r, m)).collect()
}

fn names(pods: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = pods
        .iter()
        .filter_map(|p| p["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    names.sort();
    names
}

const STATEFULSET: &str = r#"
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: default}
spec:
  serviceName: db
  replicas: 3
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      # Each pod replaced or scaled down is Terminating at most this long, one at a time.
      terminationGracePeriodSeconds: 1
      containers: [{name: postgres, image: "postgres:16"}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
"#;

#[tokio::test]
async fn statefulset_is_ordered_up_and_down() {
    let Some(fx) = Kubectl::start("sts").await else {
        return;
    };
    let path = fx.file("sts.yaml", STATEFULSET);
    fx.ok(&["apply", "-f", &path]).await;
    let out = fx
        .ok(&[
            "rollout",
            "status",
            "sts/db",
            "-n",
            "default",
            "--timeout=90s",
        ])
        .await;
    assert!(
        out.contains("partitioned roll out complete: 3 new pods have been updated"),
        "{out}"
    );
    let pods = items(&fx, &["get", "pods", "-n", "default", "-l", "app=db"]).await;
    assert_eq!(names(&pods), ["db-0", "db-1", "db-2"]);
    for pod in &pods {
        assert_eq!(pod["status"]["phase"], "Running");
        let name = pod["metadata"]["name"].as_str().expect("name");
        assert_eq!(pod["spec"]["hostname"], name);
        assert_eq!(pod["spec"]["subdomain"], "db");
        assert_eq!(
            pod["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"],
            name
        );
        let claim = &pod["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"];
        assert_eq!(claim, &format!("data-{name}"));
    }
    let claims = items(&fx, &["get", "pvc", "-n", "default", "-l", "app=db"]).await;
    assert_eq!(names(&claims), ["data-db-0", "data-db-1", "data-db-2"]);
    assert!(claims.iter().all(|c| c["status"]["phase"] == "Bound"));

    // Ordered: each pod was created after the one before it was ready, so the creations
    // come in ordinal order.
    let created: Vec<String> = events_about(&fx, "db")
        .await
        .into_iter()
        .filter(|(r, m)| r == "SuccessfulCreate" && m.starts_with("create Pod"))
        .map(|(_, m)| m)
        .collect();
    assert_eq!(
        created,
        [0, 1, 2].map(|i| format!("create Pod db-{i} in StatefulSet db successful"))
    );
    let sts = json(&fx, &["get", "sts/db", "-n", "default"]).await;
    let status = &sts["status"];
    assert_eq!(status["readyReplicas"], 3, "{status:#}");
    assert_eq!(status["currentRevision"], status["updateRevision"]);
    let revision = status["updateRevision"].as_str().expect("revision");
    let revisions = items(&fx, &["get", "controllerrevisions", "-n", "default"]).await;
    assert!(
        revisions.iter().any(|r| r["metadata"]["name"] == revision),
        "{revision} not among {:?}",
        names(&revisions)
    );

    // Down to one: the highest ordinals go, highest first.
    fx.ok(&["scale", "sts/db", "--replicas=1", "-n", "default"])
        .await;
    wait_until(
        &fx,
        &["get", "pods", "-n", "default", "-l", "app=db"],
        "one db pod",
        |v| names(v["items"].as_array().map_or(&[][..], Vec::as_slice)) == ["db-0"],
    )
    .await;
    let deleted: Vec<String> = events_about(&fx, "db")
        .await
        .into_iter()
        .filter(|(r, _)| r == "SuccessfulDelete")
        .map(|(_, m)| m)
        .collect();
    assert_eq!(
        deleted,
        [2, 1].map(|i| format!("delete Pod db-{i} in StatefulSet db successful"))
    );
    // The claims stay, as the default retention policy keeps them.
    let claims = items(&fx, &["get", "pvc", "-n", "default", "-l", "app=db"]).await;
    assert_eq!(claims.len(), 3);

    // A template change rolls out to a new revision.
    fx.ok(&[
        "set",
        "image",
        "sts/db",
        "postgres=postgres:17",
        "-n",
        "default",
    ])
    .await;
    let out = fx
        .ok(&[
            "rollout",
            "status",
            "sts/db",
            "-n",
            "default",
            "--timeout=90s",
        ])
        .await;
    assert!(
        out.contains("partitioned roll out complete: 1 new pods have been updated"),
        "{out}"
    );
    let pod = json(&fx, &["get", "pod/db-0", "-n", "default"]).await;
    assert_eq!(pod["spec"]["containers"][0]["image"], "postgres:17");
    let sts = json(&fx, &["get", "sts/db", "-n", "default"]).await;
    assert_ne!(sts["status"]["updateRevision"], revision);

    fx.ok(&["delete", "sts/db", "-n", "default"]).await;
    wait_until(
        &fx,
        &["get", "pods", "-n", "default", "-l", "app=db"],
        "db's pods gone",
        |v| v["items"].as_array().is_some_and(Vec::is_empty),
    )
    .await;
}

const DAEMONSET: &str = r#"
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: default}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: "fluent/fluent-bit:3.1"}]
"#;

#[tokio::test]
async fn daemonset_runs_one_pod_per_node() {
    let Some(fx) = Kubectl::start("ds").await else {
        return;
    };
    let path = fx.file("ds.yaml", DAEMONSET);
    fx.ok(&["apply", "-f", &path]).await;
    let out = fx
        .ok(&[
            "rollout",
            "status",
            "ds/agent",
            "-n",
            "default",
            "--timeout=90s",
        ])
        .await;
    assert!(out.contains("successfully rolled out"), "{out}");
    let nodes = names(&items(&fx, &["get", "nodes"]).await);
    let pods = items(&fx, &["get", "pods", "-n", "default", "-l", "app=agent"]).await;
    let mut on: Vec<String> = pods
        .iter()
        .map(|p| p["spec"]["nodeName"].as_str().expect("bound").to_string())
        .collect();
    on.sort();
    assert_eq!(on, nodes, "one pod on each node");
    assert!(pods.iter().all(|p| p["status"]["phase"] == "Running"));
    let ds = json(&fx, &["get", "ds/agent", "-n", "default"]).await;
    let status = &ds["status"];
    for field in [
        "desiredNumberScheduled",
        "currentNumberScheduled",
        "numberReady",
        "numberAvailable",
        "updatedNumberScheduled",
    ] {
        assert_eq!(status[field], nodes.len(), "{field}: {status:#}");
    }
    let created = events_about(&fx, "agent")
        .await
        .into_iter()
        .filter(|(r, m)| r == "SuccessfulCreate" && m.starts_with("Created pod: agent-"))
        .count();
    assert_eq!(created, nodes.len());

    // A new template replaces every pod.
    fx.ok(&[
        "set",
        "image",
        "ds/agent",
        "agent=fluent/fluent-bit:3.2",
        "-n",
        "default",
    ])
    .await;
    fx.ok(&[
        "rollout",
        "status",
        "ds/agent",
        "-n",
        "default",
        "--timeout=90s",
    ])
    .await;
    let pods = wait_until(
        &fx,
        &["get", "pods", "-n", "default", "-l", "app=agent"],
        "every agent pod at the new image",
        |v| {
            let pods = v["items"].as_array().map_or(&[][..], Vec::as_slice);
            pods.len() == nodes.len()
                && pods
                    .iter()
                    .all(|p| p["spec"]["containers"][0]["image"] == "fluent/fluent-bit:3.2")
        },
    )
    .await;
    assert_eq!(pods["items"].as_array().map_or(0, Vec::len), nodes.len());

    // A node joins: it gets a daemon pod; it leaves: the pod goes.
    let path = fx.file(
        "node.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: joined, labels: {kubernetes.io/hostname: joined}}\n",
    );
    fx.ok(&["apply", "-f", &path]).await;
    let on_joined = |v: &Value| {
        v["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["spec"]["nodeName"] == "joined" && p["status"]["phase"] == "Running")
            .count()
    };
    wait_until(
        &fx,
        &["get", "pods", "-n", "default", "-l", "app=agent"],
        "a pod on the new node",
        |v| on_joined(v) == 1 && v["items"].as_array().map_or(0, Vec::len) == nodes.len() + 1,
    )
    .await;
    fx.ok(&["delete", "node", "joined"]).await;
    wait_until(
        &fx,
        &["get", "pods", "-n", "default", "-l", "app=agent"],
        "the new node's pod gone",
        |v| v["items"].as_array().map_or(0, Vec::len) == nodes.len(),
    )
    .await;
}

#[tokio::test]
async fn jobs_complete_or_fail_as_their_pods_do() {
    let Some(fx) = Kubectl::start("jobs").await else {
        return;
    };
    fx.ok(&[
        "create",
        "job",
        "pi",
        "-n",
        "default",
        "--image=busybox:1.36",
        "--",
        "sh",
        "-c",
        "echo 3.14159; sleep 1",
    ])
    .await;
    let out = fx
        .ok(&[
            "wait",
            "--for=condition=complete",
            "job/pi",
            "-n",
            "default",
            "--timeout=90s",
        ])
        .await;
    assert!(out.contains("condition met"), "{out}");
    let job = json(&fx, &["get", "job/pi", "-n", "default"]).await;
    assert_eq!(job["status"]["succeeded"], 1, "{:#}", job["status"]);
    assert!(job["status"]["completionTime"].is_string());
    let pods = items(&fx, &["get", "pods", "-n", "default", "-l", "job-name=pi"]).await;
    assert_eq!(pods.len(), 1);
    assert_eq!(pods[0]["status"]["phase"], "Succeeded");
    assert_eq!(
        pods[0]["status"]["containerStatuses"][0]["state"]["terminated"]["reason"],
        "Completed"
    );
    let table = fx
        .ok(&["get", "pods", "-n", "default", "-l", "job-name=pi"])
        .await;
    assert!(table.contains("Completed"), "{table}");
    let reasons: Vec<String> = events_about(&fx, "pi")
        .await
        .into_iter()
        .map(|(r, _)| r)
        .collect();
    assert_eq!(reasons, ["SuccessfulCreate", "Completed"]);

    // Three completions, two at a time.
    let path = fx.file(
        "batch.yaml",
        r#"
apiVersion: batch/v1
kind: Job
metadata: {name: batch, namespace: default}
spec:
  completions: 3
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers: [{name: work, image: "busybox:1.36", command: [sh, -c, "sleep 1"]}]
"#,
    );
    fx.ok(&["apply", "-f", &path]).await;
    fx.ok(&[
        "wait",
        "--for=condition=complete",
        "job/batch",
        "-n",
        "default",
        "--timeout=90s",
    ])
    .await;
    let pods = items(
        &fx,
        &["get", "pods", "-n", "default", "-l", "job-name=batch"],
    )
    .await;
    assert_eq!(pods.len(), 3);
    assert!(pods.iter().all(|p| p["status"]["phase"] == "Succeeded"));

    // A pod that exits 1 with no retries allowed fails the Job.
    let path = fx.file(
        "fails.yaml",
        r#"
apiVersion: batch/v1
kind: Job
metadata: {name: fails, namespace: default}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: work, image: "busybox:1.36", command: [sh, -c, "exit 3"]}]
"#,
    );
    fx.ok(&["apply", "-f", &path]).await;
    fx.ok(&[
        "wait",
        "--for=condition=failed",
        "job/fails",
        "-n",
        "default",
        "--timeout=90s",
    ])
    .await;
    let job = json(&fx, &["get", "job/fails", "-n", "default"]).await;
    let failed = job["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Failed").cloned())
        .expect("Failed condition");
    assert_eq!(failed["reason"], "BackoffLimitExceeded");
    let pods = items(
        &fx,
        &["get", "pods", "-n", "default", "-l", "job-name=fails"],
    )
    .await;
    assert_eq!(pods[0]["status"]["phase"], "Failed");
    assert_eq!(
        pods[0]["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"],
        3
    );
    let warnings = items(
        &fx,
        &[
            "get",
            "events",
            "-n",
            "default",
            "--field-selector",
            "type=Warning",
        ],
    )
    .await;
    assert!(
        warnings.iter().any(
            |e| e["reason"] == "BackoffLimitExceeded" && e["involvedObject"]["name"] == "fails"
        ),
        "{warnings:#?}"
    );

    // A Job whose pods would restart for ever is refused, as by the real server.
    let (ok, _, err) = fx
        .run(&[
            "apply",
            "-f",
            &fx.file(
                "always.yaml",
                &std::fs::read_to_string(&path)
                    .expect("manifest")
                    .replace("restartPolicy: Never", "restartPolicy: Always")
                    .replace("name: fails", "name: always"),
            ),
        ])
        .await;
    assert!(
        !ok && err.contains("spec.template.spec.restartPolicy: Unsupported value: \"Always\""),
        "{err}"
    );
}

#[tokio::test]
async fn cronjob_creates_jobs_on_its_schedule() {
    let Some(fx) = Kubectl::start("cron").await else {
        return;
    };
    fx.ok(&[
        "create",
        "cronjob",
        "tick",
        "-n",
        "default",
        "--image=busybox:1.36",
        "--schedule=* * * * *",
        "--",
        "sh",
        "-c",
        "date",
    ])
    .await;
    // Its last run was three minutes ago: the run missed since is due now (rather than
    // waiting for the next minute).
    let then = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(180);
    let then = then.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let patch = format!(r#"{{"status":{{"lastScheduleTime":"{then}"}}}}"#);
    fx.ok(&[
        "patch",
        "cronjob/tick",
        "-n",
        "default",
        "--subresource=status",
        "--type=merge",
        "-p",
        &patch,
    ])
    .await;
    let jobs = wait_until(
        &fx,
        &["get", "jobs", "-n", "default"],
        "a Job from tick",
        |v| {
            v["items"].as_array().is_some_and(|jobs| {
                jobs.iter()
                    .any(|j| j["metadata"]["ownerReferences"][0]["name"] == "tick")
            })
        },
    )
    .await;
    let job = jobs["items"]
        .as_array()
        .and_then(|jobs| {
            jobs.iter()
                .find(|j| j["metadata"]["ownerReferences"][0]["name"] == "tick")
                .cloned()
        })
        .expect("job");
    let job_name = job["metadata"]["name"].as_str().expect("name").to_string();
    assert!(job_name.starts_with("tick-"), "{job_name}");
    assert!(
        job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"]
            .is_string()
    );
    fx.ok(&[
        "wait",
        "--for=condition=complete",
        &format!("job/{job_name}"),
        "-n",
        "default",
        "--timeout=90s",
    ])
    .await;
    let cj = wait_until(
        &fx,
        &["get", "cronjob/tick", "-n", "default"],
        "tick saw its job complete",
        |v| v["status"]["lastSuccessfulTime"].is_string() && v["status"]["active"].is_null(),
    )
    .await;
    assert!(
        cj["status"]["lastScheduleTime"]
            .as_str()
            .is_some_and(|t| t > then.as_str())
    );
    let events = events_about(&fx, "tick").await;
    assert!(
        events.contains(&("SuccessfulCreate".into(), format!("Created job {job_name}"))),
        "{events:?}"
    );
    assert!(
        events.contains(&(
            "SawCompletedJob".into(),
            format!("Saw completed job: {job_name}, status: Complete")
        )),
        "{events:?}"
    );
    // Deleting the CronJob takes its Jobs and their pods with it.
    fx.ok(&["delete", "cronjob/tick", "-n", "default"]).await;
    wait_until(
        &fx,
        &["get", "jobs", "-n", "default"],
        "tick's jobs gone",
        |v| v["items"].as_array().is_some_and(Vec::is_empty),
    )
    .await;

    // An unparseable schedule is refused.
    let (ok, _, err) = fx
        .run(&[
            "create",
            "cronjob",
            "bad",
            "-n",
            "default",
            "--image=busybox",
            "--schedule=61 * * * *",
        ])
        .await;
    assert!(!ok && err.contains("spec.schedule: Invalid value"), "{err}");
}

#[tokio::test]
async fn crashing_containers_loop_with_backoff() {
    let Some(fx) = Kubectl::start("crash").await else {
        return;
    };
    fx.ok(&[
        "create",
        "deployment",
        "crash",
        "-n",
        "default",
        "--image=busybox:1.36",
        "--",
        "sh",
        "-c",
        "echo starting; exit 2",
    ])
    .await;
    let pods = wait_until(
        &fx,
        &["get", "pods", "-n", "default", "-l", "app=crash"],
        "crash in CrashLoopBackOff",
        |v| {
            v["items"][0]["status"]["containerStatuses"][0]["state"]["waiting"]["reason"]
                == "CrashLoopBackOff"
        },
    )
    .await;
    let pod = &pods["items"][0];
    let status = &pod["status"]["containerStatuses"][0];
    assert!(status["restartCount"].as_u64() >= Some(1), "{status:#}");
    assert_eq!(status["lastState"]["terminated"]["exitCode"], 2);
    assert_eq!(status["lastState"]["terminated"]["reason"], "Error");
    assert_eq!(status["ready"], false);
    let message = status["state"]["waiting"]["message"].as_str().unwrap_or("");
    assert!(
        message.starts_with("back-off 10s restarting failed container=busybox"),
        "{message}"
    );
    let name = pod["metadata"]["name"].as_str().expect("name");
    let events = events_about(&fx, name).await;
    assert!(
        events.iter().any(|(r, m)| r == "BackOff"
            && m.starts_with("Back-off restarting failed container busybox in pod")),
        "{events:?}"
    );
    // The previous container's log ends in its crash.
    let previous = fx.ok(&["logs", name, "-n", "default", "--previous"]).await;
    assert!(!previous.is_empty());
    let deployment = json(&fx, &["get", "deploy/crash", "-n", "default"]).await;
    assert_ne!(deployment["status"]["availableReplicas"], 1);
}

#[tokio::test]
async fn a_selector_that_does_not_match_its_template_is_refused() {
    let Some(fx) = Kubectl::start("selector").await else {
        return;
    };
    let path = fx.file(
        "bad.yaml",
        r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: bad, namespace: default}
spec:
  selector: {matchLabels: {app: one}}
  template:
    metadata: {labels: {app: other}}
    spec:
      containers: [{name: app, image: nginx}]
"#,
    );
    let (ok, _, err) = fx.run(&["apply", "-f", &path]).await;
    assert!(!ok);
    assert!(
        err.contains(r#"The Deployment "bad" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"other"}: `selector` does not match template `labels`"#),
        "{err}"
    );
}

#[tokio::test]
async fn endpoints_follow_ready_pods() {
    let Some(fx) = Kubectl::start("endpoints").await else {
        return;
    };
    fx.ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx:1.27",
        "--replicas=2",
        "-n",
        "default",
    ])
    .await;
    fx.ok(&[
        "expose",
        "deployment",
        "web",
        "--port=80",
        "--target-port=8080",
        "-n",
        "default",
    ])
    .await;
    fx.ok(&[
        "rollout",
        "status",
        "deploy/web",
        "-n",
        "default",
        "--timeout=90s",
    ])
    .await;
    let addresses = |v: &Value| -> Vec<String> {
        let mut ips: Vec<String> = v["subsets"][0]["addresses"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a["ip"].as_str().map(str::to_string))
            .collect();
        ips.sort();
        ips
    };
    let pod_ips = |pods: &[Value]| -> Vec<String> {
        let mut ips: Vec<String> = pods
            .iter()
            .filter_map(|p| p["status"]["podIP"].as_str().map(str::to_string))
            .collect();
        ips.sort();
        ips
    };
    let pods = items(&fx, &["get", "pods", "-n", "default", "-l", "app=web"]).await;
    let ips = pod_ips(&pods);
    assert_eq!(ips.len(), 2);
    let endpoints = wait_until(
        &fx,
        &["get", "endpoints/web", "-n", "default"],
        "web's two addresses",
        |v| addresses(v) == ips,
    )
    .await;
    assert_eq!(endpoints["subsets"][0]["ports"][0]["port"], 8080);
    let slices = items(
        &fx,
        &[
            "get",
            "endpointslices",
            "-n",
            "default",
            "-l",
            "kubernetes.io/service-name=web",
        ],
    )
    .await;
    assert_eq!(slices.len(), 1, "{slices:#?}");
    let ready: Vec<&Value> = slices[0]["endpoints"]
        .as_array()
        .expect("endpoints")
        .iter()
        .filter(|e| e["conditions"]["ready"] == true)
        .collect();
    assert_eq!(ready.len(), 2);

    // Down to one pod: one address.
    fx.ok(&["scale", "deploy/web", "--replicas=1", "-n", "default"])
        .await;
    let endpoints = wait_until(
        &fx,
        &["get", "endpoints/web", "-n", "default"],
        "web's one address",
        |v| addresses(v).len() == 1,
    )
    .await;
    // The scaled-down pod is Terminating for its grace period, out of the Endpoints.
    let mut pods = items(&fx, &["get", "pods", "-n", "default", "-l", "app=web"]).await;
    pods.retain(|p| !p["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(addresses(&endpoints), pod_ips(&pods));

    // The Service gone, its Endpoints and slices go too.
    fx.ok(&["delete", "service/web", "-n", "default"]).await;
    wait_until(
        &fx,
        &[
            "get",
            "endpointslices",
            "-n",
            "default",
            "-l",
            "kubernetes.io/service-name=web",
        ],
        "web's slices gone",
        |v| v["items"].as_array().is_some_and(Vec::is_empty),
    )
    .await;
    let deadline = Instant::now() + CONVERGE;
    while fx.run(&["get", "endpoints/web", "-n", "default"]).await.0 {
        assert!(Instant::now() < deadline, "web's Endpoints never went");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test]
async fn failing_probes_repeat_as_one_event_in_both_apis() {
    let Some(fx) = Kubectl::start("probes").await else {
        return;
    };
    let path = fx.file(
        "probe.yaml",
        r#"
apiVersion: v1
kind: Pod
metadata: {name: probe, namespace: default}
spec:
  containers:
  - name: app
    image: nginx:1.27
    readinessProbe:
      exec: {command: ["false"]}
      periodSeconds: 1
"#,
    );
    fx.ok(&["apply", "-f", &path]).await;
    let unhealthy = |v: &Value| {
        v["items"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|e| e["reason"] == "Unhealthy" && e["involvedObject"]["name"] == "probe")
            .cloned()
    };
    let events = wait_until(
        &fx,
        &["get", "events", "-n", "default"],
        "Unhealthy counted thrice",
        |v| unhealthy(v).is_some_and(|e| e["count"].as_u64() >= Some(3)),
    )
    .await;
    let core = unhealthy(&events).expect("Unhealthy");
    assert_eq!(core["type"], "Warning");
    assert_eq!(core["message"], "Readiness probe failed: ");
    assert_eq!(core["involvedObject"]["fieldPath"], "spec.containers{app}");
    let pod = json(&fx, &["get", "pod/probe", "-n", "default"]).await;
    assert_eq!(pod["status"]["phase"], "Running");
    assert_eq!(pod["status"]["containerStatuses"][0]["ready"], false);

    // The same event, by the same name, through events.k8s.io/v1.
    let v1 = items(&fx, &["get", "events.v1.events.k8s.io", "-n", "default"]).await;
    let twin = v1
        .iter()
        .find(|e| e["metadata"]["name"] == core["metadata"]["name"])
        .expect("the event in events.k8s.io/v1");
    assert_eq!(twin["regarding"]["name"], "probe");
    assert_eq!(twin["note"], "Readiness probe failed: ");
    assert_eq!(twin["reportingController"], "kubelet");
    // The kubelet's recorder counts repeats in `count`, which events.k8s.io/v1 serves as
    // deprecatedCount (its series is for the new recorder's events).
    assert!(
        twin["deprecatedCount"].as_u64() >= core["count"].as_u64(),
        "{twin:#}"
    );
    assert!(twin["deprecatedLastTimestamp"].is_string());
    for event in v1.iter().filter(|e| e["regarding"]["name"] == "probe") {
        assert!(
            events["items"]
                .as_array()
                .expect("items")
                .iter()
                .any(|c| c["metadata"]["name"] == event["metadata"]["name"]),
            "{event:#} has no core/v1 twin"
        );
    }
    let table = fx
        .ok(&["events", "-n", "default", "--for", "pod/probe"])
        .await;
    for reason in ["Scheduled", "Pulled", "Started", "Unhealthy"] {
        assert!(table.contains(reason), "{reason} missing from:\n{table}");
    }
}

/// The `(name, uid)` of each pod, sorted by name.
fn name_uids(pods: &[Value]) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = pods
        .iter()
        .map(|p| {
            let meta = &p["metadata"];
            (
                meta["name"].as_str().unwrap_or("").to_string(),
                meta["uid"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    all.sort();
    all
}

/// `kubectl get` of kube-system's kube-proxy pods.
const KUBE_PROXIES: [&str; 6] = [
    "get",
    "pods",
    "-n",
    "kube-system",
    "-l",
    "k8s-app=kube-proxy",
];

#[tokio::test]
async fn seeded_workloads_run_through_their_controllers() {
    let config = SimConfig::with_size(40, 3, 2).workload_pods(true);
    let Some(fx) = Kubectl::start_with("seeded-workloads", config).await else {
        return;
    };
    let nodes = names(&items(&fx, &["get", "nodes"]).await);

    // kube-system's DaemonSets have a running pod on every node, which they own.
    let proxies = items(&fx, &KUBE_PROXIES).await;
    let mut on: Vec<&str> = proxies
        .iter()
        .map(|p| p["spec"]["nodeName"].as_str().expect("bound"))
        .collect();
    on.sort();
    assert_eq!(on, nodes, "one kube-proxy on each node");
    for pod in &proxies {
        assert_eq!(pod["status"]["phase"], "Running");
        assert_eq!(pod["metadata"]["ownerReferences"][0]["kind"], "DaemonSet");
        assert_eq!(pod["metadata"]["ownerReferences"][0]["name"], "kube-proxy");
        assert!(
            pod["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("kube-proxy-") && n.len() == "kube-proxy-".len() + 5),
            "{}",
            pod["metadata"]["name"]
        );
    }
    let out = fx
        .ok(&[
            "rollout",
            "status",
            "ds/aws-node",
            "-n",
            "kube-system",
            "--timeout=30s",
        ])
        .await;
    assert!(out.contains("successfully rolled out"), "{out}");

    // An application namespace's StatefulSet has its ordinals; its CronJob's Jobs their
    // completed pods.
    let ns = "payments-prod";
    let db = items(&fx, &["get", "pods", "-n", ns, "-l", "app=payments-db"]).await;
    assert_eq!(
        names(&db),
        ["payments-db-0", "payments-db-1", "payments-db-2"]
    );
    assert!(db.iter().all(|p| p["status"]["phase"] == "Running"));
    let reports = items(&fx, &["get", "pods", "-n", ns, "-l", "app=payments-report"]).await;
    assert_eq!(reports.len(), 2);
    assert!(reports.iter().all(|p| p["status"]["phase"] == "Succeeded"
        && p["metadata"]["ownerReferences"][0]["kind"] == "Job"));
    let listed = fx
        .ok(&["get", "pods", "-n", ns, "-l", "app=payments-report"])
        .await;
    assert_eq!(listed.matches("Completed").count(), 2, "{listed}");

    // Scaled by a client, the seeded StatefulSet adds an ordinal and keeps the pods it has
    // (they are at its revision already).
    let before = name_uids(&db);
    fx.ok(&["scale", "sts/payments-db", "-n", ns, "--replicas=4"])
        .await;
    let out = fx
        .ok(&[
            "rollout",
            "status",
            "sts/payments-db",
            "-n",
            ns,
            "--timeout=90s",
        ])
        .await;
    assert!(out.contains("4 new pods have been updated"), "{out}");
    let after = name_uids(&items(&fx, &["get", "pods", "-n", ns, "-l", "app=payments-db"]).await);
    assert_eq!(after.len(), 4, "{after:?}");
    assert_eq!(after[..3], before[..], "the seeded pods were kept");
    assert_eq!(after[3].0, "payments-db-3");

    // A seeded daemon pod deleted is replaced on its node by its DaemonSet.
    let victim = &proxies[0];
    let victim_name = victim["metadata"]["name"].as_str().expect("name");
    let victim_node = victim["spec"]["nodeName"].as_str().expect("node");
    fx.ok(&["delete", "pod", victim_name, "-n", "kube-system"])
        .await;
    wait_until(
        &fx,
        &KUBE_PROXIES,
        "the deleted kube-proxy replaced on its node",
        |v| {
            let pods = v["items"].as_array().map_or(&[][..], Vec::as_slice);
            pods.len() == nodes.len()
                && pods.iter().all(|p| p["metadata"]["name"] != victim_name)
                && pods.iter().any(|p| {
                    p["spec"]["nodeName"] == victim_node && p["status"]["phase"] == "Running"
                })
        },
    )
    .await;

    // A Linux node joins: both seeded DaemonSets put a pod on it.
    let path = fx.file(
        "node.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: joined, labels: {kubernetes.io/hostname: joined, kubernetes.io/os: linux}}\n",
    );
    fx.ok(&["apply", "-f", &path]).await;
    wait_until(
        &fx,
        &[
            "get",
            "pods",
            "-n",
            "kube-system",
            "--field-selector",
            "spec.nodeName=joined",
        ],
        "daemon pods on the new node",
        |v| {
            let pods = v["items"].as_array().map_or(&[][..], Vec::as_slice);
            pods.len() == 2 && pods.iter().all(|p| p["status"]["phase"] == "Running")
        },
    )
    .await;
}

const LIVENESS: &str = r#"
apiVersion: v1
kind: Pod
metadata: {name: stuck, namespace: default}
spec:
  containers:
  - name: app
    image: "registry.example.com/stuck:1"
    livenessProbe:
      exec: {command: ["false"]}
      periodSeconds: 1
      failureThreshold: 2
"#;

const DEADLINE: &str = r#"
apiVersion: v1
kind: Pod
metadata: {name: bounded, namespace: default}
spec:
  activeDeadlineSeconds: 2
  containers:
  - name: app
    image: "registry.example.com/bounded:1"
"#;

#[tokio::test]
async fn failing_liveness_probes_restart_and_deadlines_fail_pods() {
    let Some(fx) = Kubectl::start("liveness").await else {
        return;
    };
    fx.ok(&["apply", "-f", &fx.file("stuck.yaml", LIVENESS)])
        .await;
    fx.ok(&["apply", "-f", &fx.file("bounded.yaml", DEADLINE)])
        .await;
    let pod = wait_until(
        &fx,
        &["get", "pod", "stuck", "-n", "default"],
        "restarted by its liveness probe",
        |p| p["status"]["containerStatuses"][0]["restartCount"].as_u64() >= Some(1),
    )
    .await;
    let last = &pod["status"]["containerStatuses"][0]["lastState"]["terminated"];
    assert_eq!(last["exitCode"], 137, "{pod:#}");
    assert_eq!(last["reason"], "Error");
    let events = events_about(&fx, "stuck").await;
    let unhealthy = events
        .iter()
        .position(|(r, m)| r == "Unhealthy" && m == "Liveness probe failed: ")
        .expect("Unhealthy");
    let killing = events
        .iter()
        .position(|(r, m)| {
            r == "Killing" && m == "Container app failed liveness probe, will be restarted"
        })
        .expect("Killing");
    assert!(unhealthy < killing, "{events:?}");
    let restarted = events
        .iter()
        .skip(killing)
        .any(|(r, m)| r == "Started" && m == "Started container app");
    assert!(restarted, "{events:?}");

    let pod = wait_until(
        &fx,
        &["get", "pod", "bounded", "-n", "default"],
        "failed past its deadline",
        |p| p["status"]["phase"] == "Failed",
    )
    .await;
    assert_eq!(pod["status"]["reason"], "DeadlineExceeded", "{pod:#}");
    assert_eq!(
        pod["status"]["message"],
        "Pod was active on the node longer than the specified deadline"
    );
    assert_eq!(
        pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"],
        137
    );
    let events = events_about(&fx, "bounded").await;
    assert!(
        events.iter().any(|(r, m)| r == "DeadlineExceeded"
            && m == "Pod was active on the node longer than the specified deadline"),
        "{events:?}"
    );
}

const INDEXED: &str = r#"
apiVersion: batch/v1
kind: Job
metadata: {name: shards, namespace: default}
spec:
  completionMode: Indexed
  completions: 3
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: shard
        image: busybox:1.36
        command: ["sh", "-c", "echo shard; sleep 1"]
"#;

const LONG: &str = r#"
apiVersion: batch/v1
kind: Job
metadata: {name: NAME, namespace: default}
spec:
  backoffLimit: 6
  DEADLINE
  template:
    spec:
      restartPolicy: Never
      # A deleted pod's script (it ignores SIGTERM) is killed this long after the delete.
      terminationGracePeriodSeconds: 1
      containers:
      - name: work
        image: busybox:1.36
        command: ["sh", "-c", "sleep 3600"]
"#;

fn finalizers(pod: &Value) -> Vec<String> {
    pod["metadata"]["finalizers"]
        .as_array()
        .map(|f| {
            f.iter()
                .filter_map(|f| f.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn indexed_jobs_tracking_finalizers_and_deadlines() {
    let Some(fx) = Kubectl::start("indexed").await else {
        return;
    };
    // An Indexed Job runs a pod per index, each knowing its index.
    fx.ok(&["apply", "-f", &fx.file("indexed.yaml", INDEXED)])
        .await;
    fx.ok(&[
        "wait",
        "--for=condition=complete",
        "job/shards",
        "-n",
        "default",
        "--timeout=90s",
    ])
    .await;
    let job = json(&fx, &["get", "job/shards", "-n", "default"]).await;
    assert_eq!(
        job["status"]["completedIndexes"], "0-2",
        "{:#}",
        job["status"]
    );
    assert_eq!(job["status"]["succeeded"], 3);
    let pods = items(
        &fx,
        &["get", "pods", "-n", "default", "-l", "job-name=shards"],
    )
    .await;
    assert_eq!(pods.len(), 3);
    let mut indexes: Vec<String> = Vec::new();
    for pod in &pods {
        let index = pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
            .as_str()
            .expect("index annotation")
            .to_string();
        assert_eq!(
            pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"],
            index.as_str()
        );
        assert_eq!(pod["spec"]["hostname"], format!("shards-{index}"));
        let name = pod["metadata"]["name"].as_str().expect("name");
        assert!(name.starts_with(&format!("shards-{index}-")), "{name}");
        assert_eq!(
            pod["spec"]["containers"][0]["env"][0]["name"],
            "JOB_COMPLETION_INDEX"
        );
        // Counted, so let go.
        assert!(finalizers(pod).is_empty(), "{pod:#}");
        indexes.push(index);
    }
    indexes.sort();
    assert_eq!(indexes, ["0", "1", "2"]);

    // A running pod carries the tracking finalizer; deleted, it is counted as failed
    // before it goes, and replaced.
    fx.ok(&[
        "apply",
        "-f",
        &fx.file(
            "long.yaml",
            &LONG.replace("NAME", "long").replace("  DEADLINE\n", ""),
        ),
    ])
    .await;
    let running = wait_until(
        &fx,
        &["get", "pods", "-n", "default", "-l", "job-name=long"],
        "the long job's pod running",
        |v| {
            v["items"]
                .as_array()
                .is_some_and(|p| p.len() == 1 && p[0]["status"]["phase"] == "Running")
        },
    )
    .await;
    let pod = &running["items"][0];
    assert_eq!(finalizers(pod), ["batch.kubernetes.io/job-tracking"]);
    let victim = pod["metadata"]["name"].as_str().expect("name").to_string();
    fx.ok(&["delete", "pod", &victim, "-n", "default", "--timeout=60s"])
        .await;
    let job = wait_until(
        &fx,
        &["get", "job/long", "-n", "default"],
        "the deleted pod counted as failed",
        |j| j["status"]["failed"] == 1 && j["status"]["active"] == 1,
    )
    .await;
    assert!(finished_condition(&job).is_none(), "{job:#}");
    let pods = items(
        &fx,
        &["get", "pods", "-n", "default", "-l", "job-name=long"],
    )
    .await;
    assert!(
        pods.iter()
            .all(|p| p["metadata"]["name"] != victim.as_str())
    );
    // The Job deleted, its pods go with it (their finalizer let go).
    fx.ok(&["delete", "job", "long", "-n", "default"]).await;
    wait_until(
        &fx,
        &["get", "pods", "-n", "default", "-l", "job-name=long"],
        "the deleted Job's pods gone",
        |v| v["items"].as_array().is_some_and(Vec::is_empty),
    )
    .await;

    // Past activeDeadlineSeconds the Job fails and its pods are stopped.
    fx.ok(&[
        "apply",
        "-f",
        &fx.file(
            "deadline.yaml",
            &LONG
                .replace("NAME", "bounded")
                .replace("DEADLINE", "activeDeadlineSeconds: 2"),
        ),
    ])
    .await;
    fx.ok(&[
        "wait",
        "--for=condition=failed",
        "job/bounded",
        "-n",
        "default",
        "--timeout=60s",
    ])
    .await;
    let job = json(&fx, &["get", "job/bounded", "-n", "default"]).await;
    let failed = finished_condition(&job).expect("Failed");
    assert_eq!(failed["reason"], "DeadlineExceeded", "{job:#}");
    assert_eq!(
        failed["message"],
        "Job was active longer than specified deadline"
    );
    wait_until(
        &fx,
        &["get", "pods", "-n", "default", "-l", "job-name=bounded"],
        "the bounded job's pods stopped",
        |v| v["items"].as_array().is_some_and(Vec::is_empty),
    )
    .await;
    let events = events_about(&fx, "bounded").await;
    assert!(
        events.iter().any(|(r, m)| r == "DeadlineExceeded"
            && m == "Job was active longer than specified deadline"),
        "{events:?}"
    );
}

/// A Job's True Complete or Failed condition.
fn finished_condition(job: &Value) -> Option<&Value> {
    job["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| (c["type"] == "Complete" || c["type"] == "Failed") && c["status"] == "True")
}

/// A pod's PodScheduled condition once the scheduler has given up on it (bounded).
async fn unschedulable_condition(fx: &Kubectl, pod: &str) -> Value {
    let pod = wait_until(
        fx,
        &["get", "pod", pod, "-n", "default"],
        &format!("{pod} unschedulable"),
        |p| p["status"]["conditions"][0]["reason"] == "Unschedulable",
    )
    .await;
    assert!(pod["spec"]["nodeName"].is_null(), "{pod:#}");
    assert_eq!(pod["status"]["phase"], "Pending");
    let condition = pod["status"]["conditions"][0].clone();
    assert_eq!(condition["type"], "PodScheduled");
    assert_eq!(condition["status"], "False");
    condition
}

/// The FailedScheduling events about `pod`, once there is one whose message is `message`
/// and that has counted at least `count` tries (bounded).
async fn failed_scheduling(fx: &Kubectl, pod: &str, message: &str, count: u64) -> Vec<Value> {
    let events = wait_until(
        fx,
        &["get", "events", "-n", "default"],
        &format!("{pod}'s FailedScheduling event x{count}"),
        |v| {
            v["items"].as_array().is_some_and(|es| {
                es.iter().any(|e| {
                    e["involvedObject"]["name"] == pod
                        && e["reason"] == "FailedScheduling"
                        && e["message"] == message
                        && e["count"].as_u64().is_some_and(|c| c >= count)
                })
            })
        },
    )
    .await;
    let about: Vec<Value> = events["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["involvedObject"]["name"] == pod && e["reason"] == "FailedScheduling")
        .cloned()
        .collect();
    for event in &about {
        assert_eq!(event["type"], "Warning", "{event:#}");
        assert_eq!(event["source"]["component"], "default-scheduler");
        assert_eq!(event["reportingComponent"], "default-scheduler");
    }
    about
}

/// A pod in `default` asking for `cpu` and `memory`.
fn requesting(name: &str, cpu: &str, memory: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default}}\nspec:\n  containers:\n  - name: app\n    image: registry.example.com/{name}:1\n    resources: {{requests: {{cpu: \"{cpu}\", memory: {memory}}}}}\n"
    )
}

async fn wait_running(fx: &Kubectl, pod: &str) -> Value {
    wait_until(
        fx,
        &["get", "pod", pod, "-n", "default"],
        &format!("{pod} running"),
        |p| p["status"]["phase"] == "Running",
    )
    .await
}

#[tokio::test]
async fn pods_too_big_for_every_node_wait_until_one_fits() {
    let Some(fx) = Kubectl::start("too-big").await else {
        return;
    };
    let path = fx.file("huge.yaml", &requesting("huge", "500", "4Ti"));
    fx.ok(&["create", "-f", &path]).await;
    let too_big = "0/3 nodes are available: 3 Insufficient cpu, 3 Insufficient memory. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod..";
    let condition = unschedulable_condition(&fx, "huge").await;
    assert_eq!(condition["message"], too_big);
    // Every try is the same event counted up, not another one.
    let events = failed_scheduling(&fx, "huge", too_big, 2).await;
    assert_eq!(events.len(), 1, "{events:#?}");
    let described = fx.ok(&["describe", "pod", "huge", "-n", "default"]).await;
    assert!(
        described.contains("FailedScheduling") && described.contains("default-scheduler"),
        "{described}"
    );

    // A node with room joins: the pod goes there.
    let path = fx.file(
        "big.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: big, labels: {kubernetes.io/hostname: big, kubernetes.io/os: linux}}\nstatus:\n  capacity: {cpu: \"1000\", memory: 8Ti, pods: \"110\"}\n  allocatable: {cpu: \"1000\", memory: 8Ti, pods: \"110\"}\n",
    );
    fx.ok(&["apply", "-f", &path]).await;
    let pod = wait_running(&fx, "huge").await;
    assert_eq!(pod["spec"]["nodeName"], "big");

    // What it holds is counted: a second one no longer fits there, until the first goes.
    let path = fx.file("twin.yaml", &requesting("twin", "600", "1Gi"));
    fx.ok(&["create", "-f", &path]).await;
    let condition = unschedulable_condition(&fx, "twin").await;
    assert_eq!(
        condition["message"],
        "0/4 nodes are available: 4 Insufficient cpu. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod.."
    );
    fx.ok(&["delete", "pod", "huge", "-n", "default", "--wait=false"])
        .await;
    let pod = wait_running(&fx, "twin").await;
    assert_eq!(pod["spec"]["nodeName"], "big");

    // Made again asking for less, a pod that fitted nowhere runs.
    let path = fx.file("lean.yaml", &requesting("lean", "2000", "1Gi"));
    fx.ok(&["create", "-f", &path]).await;
    unschedulable_condition(&fx, "lean").await;
    fx.ok(&["delete", "pod", "lean", "-n", "default"]).await;
    let path = fx.file("lean.yaml", &requesting("lean", "100m", "64Mi"));
    fx.ok(&["create", "-f", &path]).await;
    wait_running(&fx, "lean").await;
}

#[tokio::test]
async fn unschedulable_reasons_are_counted_node_by_node() {
    let Some(fx) = Kubectl::start("reasons").await else {
        return;
    };
    let nodes = names(&items(&fx, &["get", "nodes"]).await);
    let path = fx.file(
        "picky.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: picky, namespace: default}\nspec:\n  nodeSelector: {disktype: none-such}\n  containers: [{name: app, image: nginx:1.27}]\n",
    );
    fx.ok(&["create", "-f", &path]).await;
    let no_match = "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..";
    let condition = unschedulable_condition(&fx, "picky").await;
    assert_eq!(condition["message"], no_match);
    failed_scheduling(&fx, "picky", no_match, 1).await;

    // One node cordoned, one tainted, the third too small: each is counted for its reason.
    fx.ok(&["cordon", &nodes[0]]).await;
    fx.ok(&["taint", "nodes", &nodes[1], "dedicated=gpu:NoSchedule"])
        .await;
    let path = fx.file("greedy.yaml", &requesting("greedy", "500", "1Gi"));
    fx.ok(&["create", "-f", &path]).await;
    let mixed = "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) were unschedulable. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling..";
    let condition = unschedulable_condition(&fx, "greedy").await;
    assert_eq!(condition["message"], mixed);
    failed_scheduling(&fx, "greedy", mixed, 1).await;

    // A pod that fits goes to the one node left to it, or to the tainted one if it
    // tolerates the taint.
    let path = fx.file("plain.yaml", &requesting("plain", "100m", "64Mi"));
    fx.ok(&["create", "-f", &path]).await;
    assert_eq!(
        wait_running(&fx, "plain").await["spec"]["nodeName"],
        nodes[2].as_str()
    );
    let path = fx.file(
        "tolerant.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: tolerant, namespace: default}\nspec:\n  nodeSelector: {kubernetes.io/hostname: NODE}\n  tolerations: [{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}]\n  containers: [{name: app, image: nginx:1.27}]\n"
            .replace("NODE", &nodes[1])
            .as_str(),
    );
    fx.ok(&["create", "-f", &path]).await;
    assert_eq!(
        wait_running(&fx, "tolerant").await["spec"]["nodeName"],
        nodes[1].as_str()
    );
}

/// POSTs `body` (JSON) to `path` over the sim's HTTP API; the status code and the body.
async fn post(fx: &Kubectl, path: &str, body: &str) -> (u16, Value) {
    let client = fx.sim.client().await.expect("client");
    let request = axum::http::Request::builder()
        .method("POST")
        .uri(path)
        .header("Content-Type", "application/json")
        .body(kube::client::Body::from(body.as_bytes().to_vec()))
        .expect("request");
    let response = client.send(request).await.expect("response");
    let code = response.status().as_u16();
    let bytes = response.into_body().collect_bytes().await.expect("body");
    (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

#[tokio::test]
async fn invalid_objects_are_named_with_their_api_group() {
    let Some(fx) = Kubectl::start("invalid-group").await else {
        return;
    };
    let mismatched = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"mism"},"spec":{"selector":{"matchLabels":{"app":"a"}},"template":{"metadata":{"labels":{"app":"b"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}"#;
    let (code, status) = post(
        &fx,
        "/apis/apps/v1/namespaces/default/deployments",
        mismatched,
    )
    .await;
    assert_eq!(code, 422, "{status:#}");
    assert_eq!(
        status["message"],
        r#"Deployment.apps "mism" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"b"}: `selector` does not match template `labels`"#
    );
    assert_eq!(status["details"]["group"], "apps");
    assert_eq!(status["details"]["kind"], "Deployment");
    assert_eq!(status["details"]["name"], "mism");

    let job = r#"{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"template":{"spec":{"restartPolicy":"Always","containers":[{"name":"c","image":"busybox"}]}}}}"#;
    let (code, status) = post(&fx, "/apis/batch/v1/namespaces/default/jobs", job).await;
    assert_eq!(code, 422, "{status:#}");
    assert!(
        status["message"].as_str().is_some_and(|m| m.starts_with(
            r#"Job.batch "j" is invalid: spec.template.spec.restartPolicy: Unsupported value"#
        )),
        "{status:#}"
    );
    assert_eq!(status["details"]["group"], "batch");
    assert_eq!(status["details"]["kind"], "Job");

    // The core group has no suffix and no group.
    let pod =
        r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[]}}"#;
    let (code, status) = post(&fx, "/api/v1/namespaces/default/pods", pod).await;
    assert_eq!(code, 422, "{status:#}");
    assert_eq!(
        status["message"],
        r#"Pod "p" is invalid: spec.containers: Required value"#
    );
    assert!(status["details"]["group"].is_null(), "{status:#}");

    // A selector of expressions alone is a selector; its template must still satisfy it.
    let expressions = |name: &str, label: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: default}}\nspec:\n  selector:\n    matchExpressions: [{{key: app, operator: In, values: [web, api]}}]\n  template:\n    metadata: {{labels: {{app: {label}}}}}\n    spec:\n      containers: [{{name: c, image: nginx}}]\n"
        )
    };
    let path = fx.file("expr.yaml", &expressions("expr", "web"));
    fx.ok(&["apply", "-f", &path]).await;
    let path = fx.file("expr-bad.yaml", &expressions("expr-bad", "db"));
    let (ok, _, err) = fx.run(&["apply", "-f", &path]).await;
    assert!(
        !ok && err.contains(r#"spec.template.metadata.labels: Invalid value: map[string]string{"app":"db"}: `selector` does not match template `labels`"#),
        "{err}"
    );
}

#[tokio::test]
async fn workload_selectors_are_immutable() {
    let Some(fx) = Kubectl::start("immutable-selector").await else {
        return;
    };
    fx.ok(&[
        "create",
        "deployment",
        "sel",
        "-n",
        "default",
        "--image=nginx:1.27",
    ])
    .await;
    let patch = r#"{"spec":{"selector":{"matchLabels":{"app":"other"}},"template":{"metadata":{"labels":{"app":"other"}}}}}"#;
    let (ok, _, err) = fx
        .run(&[
            "patch",
            "deployment/sel",
            "-n",
            "default",
            "--type=merge",
            "-p",
            patch,
        ])
        .await;
    assert!(
        !ok && err.contains(r#"The Deployment "sel" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"other"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"#),
        "{err}"
    );
    // The rest of it still changes.
    fx.ok(&["label", "deployment/sel", "-n", "default", "tier=web"])
        .await;
    fx.ok(&["scale", "deployment/sel", "-n", "default", "--replicas=2"])
        .await;

    fx.ok(&[
        "create",
        "job",
        "once",
        "-n",
        "default",
        "--image=busybox:1.36",
        "--",
        "true",
    ])
    .await;
    let patch = r#"{"spec":{"selector":{"matchLabels":{"extra":"x"}}}}"#;
    let (ok, _, err) = fx
        .run(&[
            "patch",
            "job/once",
            "-n",
            "default",
            "--type=merge",
            "-p",
            patch,
        ])
        .await;
    assert!(
        !ok && err.contains(r#"The Job "once" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"#)
            && err.contains("field is immutable"),
        "{err}"
    );

    let path = fx.file("sts.yaml", STATEFULSET);
    fx.ok(&["apply", "-f", &path]).await;
    let patch = r#"{"spec":{"selector":{"matchLabels":{"app":"db2"}},"template":{"metadata":{"labels":{"app":"db2"}}}}}"#;
    let (ok, _, err) = fx
        .run(&[
            "patch",
            "sts/db",
            "-n",
            "default",
            "--type=merge",
            "-p",
            patch,
        ])
        .await;
    assert!(
        !ok && err.contains(r#"The StatefulSet "db" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"#),
        "{err}"
    );
}
