//! The controller author's workbench views against the sim: `kscope tree` down from a
//! Deployment and from a Widget, and up from a pod, compared with what kubectl reads.

use std::time::{Duration, Instant};

use kscope_sim::SimConfig;
use serde_json::Value;

use crate::common::cli::kscope;
use crate::common::kubectl::Kubectl;

const CONVERGE: Duration = Duration::from_secs(60);

async fn json(fx: &Kubectl, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    serde_json::from_str(&fx.ok(&all).await).expect("kubectl prints JSON")
}

/// Polls kubectl's `args` until `done` holds of its JSON.
async fn wait_for(fx: &Kubectl, what: &str, args: &[&str], done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + CONVERGE;
    loop {
        let got = json(fx, args).await;
        if done(&got) {
            return got;
        }
        assert!(Instant::now() < deadline, "{what}: never happened: {got:#}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

async fn tree(fx: &Kubectl, args: &[&str]) -> Value {
    let kubeconfig = fx.dir.join("kubeconfig");
    let kubeconfig = kubeconfig.to_string_lossy();
    let mut all = vec!["tree", "--kubeconfig", &kubeconfig, "-o", "json"];
    all.extend(args);
    let out = kscope(&fx.dir, &all).await;
    assert!(
        out.status.success(),
        "kscope {all:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("tree prints JSON")
}

fn labels(children: &Value) -> Vec<String> {
    let mut out: Vec<String> = children
        .as_array()
        .map(|c| {
            c.iter()
                .map(|n| {
                    format!(
                        "{}/{}",
                        n["kind"].as_str().unwrap_or(""),
                        n["name"].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

#[tokio::test]
async fn tree_of_a_deployment_down_to_its_pods_and_of_a_pod_up_to_it() {
    let Some(fx) = Kubectl::start_with("tree-deploy", SimConfig::with_size(10, 2, 1)).await else {
        return;
    };
    fx.ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx",
        "--replicas=2",
        "-n",
        "default",
    ])
    .await;
    let deployment = wait_for(
        &fx,
        "web ready",
        &["get", "deploy/web", "-n", "default"],
        |d| d["status"]["readyReplicas"] == 2,
    )
    .await;
    let sets = json(&fx, &["get", "rs", "-n", "default"]).await;
    let set = sets["items"]
        .as_array()
        .and_then(|items| {
            items.iter().find(|rs| {
                rs["metadata"]["ownerReferences"][0]["uid"] == deployment["metadata"]["uid"]
            })
        })
        .expect("kubectl sees web's ReplicaSet")
        .clone();
    let pods = json(&fx, &["get", "pods", "-n", "default"]).await;
    let mut owned: Vec<String> = pods["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|p| p["metadata"]["ownerReferences"][0]["uid"] == set["metadata"]["uid"])
        .map(|p| format!("Pod/{}", p["metadata"]["name"].as_str().unwrap_or("")))
        .collect();
    owned.sort();
    assert_eq!(owned.len(), 2, "kubectl sees two pods of web");

    let down = tree(&fx, &["deploy/web", "-n", "default"]).await;
    assert_eq!(down["kind"], "Deployment");
    assert_eq!(down["uid"], deployment["metadata"]["uid"]);
    assert_eq!(down["health"], "2/2 ready", "{down:#}");
    let set_name = set["metadata"]["name"].as_str().expect("name");
    assert_eq!(
        labels(&down["children"]),
        [format!("ReplicaSet/{set_name}")],
        "{down:#}"
    );
    let set_node = &down["children"][0];
    assert_eq!(labels(&set_node["children"]), owned, "{down:#}");
    for pod in set_node["children"].as_array().expect("pods") {
        assert_eq!(pod["health"], "1/1 Running", "{down:#}");
    }

    let pod = owned[0].trim_start_matches("Pod/");
    let up = tree(&fx, &[&format!("pod/{pod}"), "-n", "default", "--up"]).await;
    assert_eq!(up["kind"], "Deployment", "the root comes first: {up:#}");
    assert_eq!(up["name"], "web");
    assert_eq!(up["children"][0]["name"], set_name, "{up:#}");
    assert_eq!(up["children"][0]["children"][0]["name"], pod, "{up:#}");
    assert!(
        up["children"][0]["children"][0]["children"].is_null(),
        "{up:#}"
    );
}

#[tokio::test]
async fn tree_of_a_widget_holds_the_configmap_its_controller_made() {
    let config = SimConfig::with_size(10, 2, 1).widget_controller(true);
    let Some(fx) = Kubectl::start_with("tree-widget", config).await else {
        return;
    };
    let path = fx.file(
        "widget.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: gadget, namespace: default}\nspec: {size: small, replicas: 1}\n",
    );
    fx.ok(&["apply", "-f", &path]).await;
    let config = wait_for(
        &fx,
        "gadget's ConfigMap",
        &["get", "configmaps", "-n", "default"],
        |l| {
            l["items"].as_array().is_some_and(|items| {
                items
                    .iter()
                    .any(|c| c["metadata"]["ownerReferences"][0]["name"] == "gadget")
            })
        },
    )
    .await;
    let made: Vec<String> = config["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|c| c["metadata"]["ownerReferences"][0]["name"] == "gadget")
        .map(|c| format!("ConfigMap/{}", c["metadata"]["name"].as_str().unwrap_or("")))
        .collect();

    let down = tree(&fx, &["widget/gadget", "-n", "default"]).await;
    assert_eq!(down["kind"], "Widget", "{down:#}");
    assert_eq!(labels(&down["children"]), made, "{down:#}");
    let cm = made[0].trim_start_matches("ConfigMap/");
    let up = tree(
        &fx,
        &[
            &format!("configmap/{cm}"),
            "-n",
            "default",
            "--up",
            "--kinds",
            "widgets.example.com",
        ],
    )
    .await;
    assert_eq!(up["kind"], "Widget", "{up:#}");
    assert_eq!(up["children"][0]["name"], cm, "{up:#}");
}
