//! The sim's controllers, scheduler and kubelets react to kubectl's writes as a cluster's
//! do: a Deployment gets a ReplicaSet and running pods on nodes, `kubectl rollout status`
//! completes, scaling converges, Events tell the cascade, and deleting it removes it all.

use std::time::{Duration, Instant};

use kscope::sim::SimConfig;
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
    wait_for_running(&fx, 5).await;
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
