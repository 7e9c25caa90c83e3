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

/// Runs `kscope timeline` with `args` and returns its JSON entries.
async fn timeline(fx: &Kubectl, args: &[&str]) -> Vec<Value> {
    let kubeconfig = fx.dir.join("kubeconfig");
    let kubeconfig = kubeconfig.to_string_lossy();
    let mut all = vec!["timeline", "--kubeconfig", &kubeconfig, "-o", "json"];
    all.extend(args);
    let out = kscope(&fx.dir, &all).await;
    assert!(
        out.status.success(),
        "kscope {all:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("timeline prints JSON")
}

/// The managers the timeline names for the fields under `prefix`, across its entries.
fn managers_of(entries: &[Value], prefix: &str) -> Vec<String> {
    let mut out: Vec<String> = entries
        .iter()
        .flat_map(|e| e["changes"].as_array().cloned().unwrap_or_default())
        .filter(|c| c["path"].as_str().is_some_and(|p| p.starts_with(prefix)))
        .filter_map(|c| c["manager"].as_str().map(str::to_string))
        .collect();
    out.sort();
    out.dedup();
    out
}

#[tokio::test]
async fn timeline_names_kubectl_and_the_controller_as_managers_of_what_each_changed() {
    let config = SimConfig::with_size(10, 2, 1).widget_controller(true);
    let Some(fx) = Kubectl::start_with("timeline", config).await else {
        return;
    };
    let path = fx.file(
        "widget.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: dial, namespace: default}\nspec: {size: small, replicas: 1}\n",
    );
    fx.ok(&["apply", "-f", &path]).await;
    let reconciled = |w: &Value| {
        w["status"]["conditions"][0]["status"] == "True"
            && w["status"]["observedGeneration"] == w["metadata"]["generation"]
    };
    wait_for(
        &fx,
        "dial reconciled",
        &["get", "widget/dial", "-n", "default"],
        reconciled,
    )
    .await;
    let before = timeline(&fx, &["widget/dial", "-n", "default"]).await;
    assert_eq!(before[0]["what"], "STATE", "{before:#?}");

    fx.ok(&[
        "patch",
        "widget/dial",
        "-n",
        "default",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"replicas":2}}"#,
    ])
    .await;
    let patched = wait_for(
        &fx,
        "the patch reconciled",
        &[
            "get",
            "widget/dial",
            "-n",
            "default",
            "--show-managed-fields",
        ],
        |w| w["spec"]["replicas"] == 2 && reconciled(w),
    )
    .await;
    // What kubectl reads in managedFields, for comparison.
    let fields = patched["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields");
    let manager_of = |needle: &str| {
        fields
            .iter()
            .find(|e| e["fieldsV1"].to_string().contains(needle))
            .and_then(|e| e["manager"].as_str())
            .map(str::to_string)
    };
    let after = timeline(&fx, &["widget/dial", "-n", "default"]).await;
    assert_eq!(
        managers_of(&after, "spec.replicas"),
        ["kubectl-patch"],
        "{after:#?}"
    );
    assert_eq!(
        managers_of(&after, "spec.size"),
        ["kubectl-client-side-apply"],
        "{after:#?}"
    );
    assert_eq!(
        managers_of(&after, "status."),
        ["widget-controller"],
        "{after:#?}"
    );
    assert_eq!(manager_of("f:status").as_deref(), Some("widget-controller"));
    let rvs: Vec<u64> = after
        .iter()
        .filter_map(|e| e["resourceVersion"].as_str()?.parse().ok())
        .collect();
    assert!(
        rvs.windows(2).all(|w| w[0] <= w[1]),
        "by resourceVersion: {after:#?}"
    );
}

#[tokio::test]
async fn timeline_follows_a_patch_made_while_it_watches() {
    let Some(fx) = Kubectl::start_with("timeline-watch", SimConfig::with_size(10, 2, 1)).await
    else {
        return;
    };
    fx.ok(&[
        "create",
        "configmap",
        "knobs",
        "-n",
        "default",
        "--from-literal=a=1",
    ])
    .await;
    let kubeconfig = fx.dir.join("kubeconfig");
    let kubeconfig = kubeconfig.to_string_lossy().into_owned();
    let dir = fx.dir.clone();
    let watching = tokio::spawn(async move {
        kscope(
            &dir,
            &[
                "timeline",
                "--kubeconfig",
                &kubeconfig,
                "-o",
                "json",
                "cm/knobs",
                "-n",
                "default",
                "--for",
                "8s",
            ],
        )
        .await
    });
    // Patch until the timeline, which is watching by then, has seen one: each patch is a new
    // value, so a patch made before its watch started is only a different STATE.
    let mut n = 2;
    let out = loop {
        fx.ok(&[
            "patch",
            "cm/knobs",
            "-n",
            "default",
            "--type",
            "merge",
            "-p",
            &format!(r#"{{"data":{{"a":"{n}"}}}}"#),
        ])
        .await;
        n += 1;
        if watching.is_finished() {
            break watching.await.expect("join");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let entries: Vec<Value> = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(entries[0]["what"], "STATE", "{entries:#?}");
    // kubectl-patch when a patch came before the timeline read the object.
    let first = managers_of(&entries[..1], "data.a");
    assert!(
        first == ["kubectl-create"] || first == ["kubectl-patch"],
        "{entries:#?}"
    );
    let modified: Vec<&Value> = entries.iter().filter(|e| e["what"] == "MODIFIED").collect();
    assert!(
        !modified.is_empty(),
        "no patch seen while watching: {entries:#?}"
    );
    assert_eq!(
        managers_of(&entries[1..], "data.a"),
        ["kubectl-patch"],
        "{entries:#?}"
    );
}

#[tokio::test]
async fn deltas_for_owner_says_why_each_reconcile_ran() {
    let Some(fx) = Kubectl::start_with("for-owner", SimConfig::with_size(10, 2, 1)).await else {
        return;
    };
    // Not the kubeconfig's namespace: the owner's is the one watched.
    fx.ok(&["create", "namespace", "team"]).await;
    fx.ok(&[
        "create",
        "deployment",
        "api",
        "--image=nginx",
        "--replicas=1",
        "-n",
        "team",
    ])
    .await;
    wait_for(
        &fx,
        "api ready",
        &["get", "deploy/api", "-n", "team"],
        |d| d["status"]["readyReplicas"] == 1,
    )
    .await;
    let kubeconfig = fx.dir.join("kubeconfig").to_string_lossy().into_owned();
    let dir = fx.dir.clone();
    let watching = tokio::spawn(async move {
        kscope(
            &dir,
            &[
                "deltas",
                "--kubeconfig",
                &kubeconfig,
                "--for-owner",
                "deploy/team/api",
                "--for",
                "8s",
                "--reconcile-duration",
                "1s",
            ],
        )
        .await
    });
    // Scale until the command ends: each scale changes the ReplicaSet's spec, then its
    // status as pods come and go.
    let mut replicas = 2;
    let out = loop {
        fx.ok(&[
            "scale",
            "deploy/api",
            "-n",
            "team",
            &format!("--replicas={replicas}"),
        ])
        .await;
        replicas = 3 - replicas;
        if watching.is_finished() {
            break watching.await.expect("join");
        }
        tokio::time::sleep(Duration::from_millis(700)).await;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let because: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("reconcile "))
        .collect();
    assert!(
        because
            .first()
            .is_some_and(|l| l.starts_with("reconcile 1 ") && l.contains("Deployment api created")),
        "{text}"
    );
    assert!(
        because
            .iter()
            .any(|l| l.contains("ReplicaSet api-") && l.contains("status changed")),
        "{text}"
    );
    assert!(because.len() >= 3, "{text}");
    // Pods are the ReplicaSet's, not the Deployment's: Owns() maps one level only.
    assert!(!text.contains("Pod api-"), "{text}");
}
