//! What the sim still got wrong after [sim-truth], through real clients: a Terminating pod's
//! containers stop before it goes, its endpoints stay in the EndpointSlice marked
//! terminating, duplicate fields in a patch are warned of or refused, pod IPs come from
//! their node's podCIDR, seeded StatefulSets are defaulted as created ones are, and the
//! demo's Deployments count the Ready pods they have, and a deleted pod ends Succeeded or
//! Failed before it goes.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use serde_json::Value;

use crate::common::kubectl::Kubectl;
use crate::common::wait::HANG_GUARD;
use crate::sim_truth_delete::{get, until};

/// A pod with a container that ends on SIGTERM (`app`) and a shell script that ignores it
/// (`side`, killed when the grace period is over).
const TWO_CONTAINERS: &str = r#"apiVersion: v1
kind: Pod
metadata:
  name: NAME
  namespace: default
  labels: {app: NAME}
spec:
  terminationGracePeriodSeconds: GRACE
  containers:
  - name: app
    image: nginx:1.27
  - name: side
    image: busybox:1.36
    command: ["sh", "-c", "sleep 3600"]
"#;

/// A pod whose only container ends on SIGTERM.
const ONE_CONTAINER: &str = r#"apiVersion: v1
kind: Pod
metadata:
  name: NAME
  namespace: default
  labels: {app: NAME}
spec:
  terminationGracePeriodSeconds: GRACE
  containers:
  - name: app
    image: nginx:1.27
"#;

/// Creates the [`TWO_CONTAINERS`] pod `name` and waits until it is Ready.
async fn ready_pod(fx: &Kubectl, name: &str, grace: u32) {
    ready_from(fx, TWO_CONTAINERS, name, grace).await;
}

/// Creates pod `name` from `template` and waits until it is Ready.
async fn ready_from(fx: &Kubectl, template: &str, name: &str, grace: u32) {
    let manifest = template
        .replace("NAME", name)
        .replace("GRACE", &grace.to_string());
    let file = fx.file(&format!("{name}.yaml"), &manifest);
    fx.ok(&["apply", "-f", &file]).await;
    until(&format!("{name} ready"), || async {
        let pod = get(fx, &["pod", name, "-n", "default"]).await;
        match pod {
            Some(p) if condition(&p, "Ready") == "True" => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
}

/// The status of the pod's condition `kind` (`""` if it has none).
fn condition(pod: &Value, kind: &str) -> String {
    pod["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == kind)
        .and_then(|c| c["status"].as_str())
        .unwrap_or("")
        .to_string()
}

/// The state of the pod's container `name`.
fn container_state<'a>(pod: &'a Value, name: &str) -> &'a Value {
    pod["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["name"] == name)
        .map_or(&Value::Null, |s| &s["state"])
}

#[tokio::test]
async fn a_terminating_pods_containers_stop_before_it_is_removed() {
    let Some(fx) = Kubectl::start("gaps-stop").await else {
        return;
    };
    ready_pod(&fx, "stopping", 6).await;
    let mut watch = fx
        .command(&[
            "get",
            "pods",
            "-n",
            "default",
            "--field-selector=metadata.name=stopping",
            "--watch",
            "--output-watch-events",
            "-o",
            "jsonpath={.type} app={.object.status.containerStatuses[?(@.name==\"app\")].state.terminated.reason}/{.object.status.containerStatuses[?(@.name==\"app\")].state.terminated.exitCode} side={.object.status.containerStatuses[?(@.name==\"side\")].state.terminated.reason}/{.object.status.containerStatuses[?(@.name==\"side\")].state.terminated.exitCode} ready={.object.status.conditions[?(@.type==\"Ready\")].status} containers={.object.status.conditions[?(@.type==\"ContainersReady\")].status}{\"\\n\"}",
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
    let mut seen: Vec<String> = Vec::new();
    let first = tokio::time::timeout(HANG_GUARD, rx.recv())
        .await
        .expect("the watch's first event")
        .expect("the watch runs");
    assert!(first.starts_with("ADDED"), "{first}");
    seen.push(first);
    fx.ok(&["delete", "pod", "stopping", "-n", "default", "--wait=false"])
        .await;
    // While Terminating, the container that ends on SIGTERM is reported terminated, and
    // the pod unready.
    let pod = until("app stopped while Terminating", || async {
        let pod = get(&fx, &["pod", "stopping", "-n", "default"])
            .await
            .expect("the pod is there until its app container is seen stopped");
        if container_state(&pod, "app")["terminated"].is_object() {
            Ok(pod)
        } else {
            Err(format!("{:#}", pod["status"]))
        }
    })
    .await;
    let app = &container_state(&pod, "app")["terminated"];
    assert_eq!(app["exitCode"], 0, "{app:#}");
    assert_eq!(app["reason"], "Completed", "{app:#}");
    assert!(app["finishedAt"].is_string(), "{app:#}");
    assert!(
        container_state(&pod, "side")["running"].is_object(),
        "a shell script ignores SIGTERM: {:#}",
        pod["status"]
    );
    assert_eq!(condition(&pod, "Ready"), "False", "{:#}", pod["status"]);
    assert_eq!(condition(&pod, "ContainersReady"), "False");
    // Then the grace period ends: the script is killed, and only then the pod goes.
    while !seen.last().is_some_and(|l| l.starts_with("DELETED")) {
        let line = tokio::time::timeout(HANG_GUARD, rx.recv())
            .await
            .expect("a watch event in time")
            .expect("the watch runs");
        seen.push(line);
    }
    let _ = watch.kill();
    let _ = watch.wait();
    let position = |wanted: &str| seen.iter().position(|l| l == wanted);
    let app_stopped = position("MODIFIED app=Completed/0 side=/ ready=False containers=False");
    let side_killed =
        position("MODIFIED app=Completed/0 side=Error/137 ready=False containers=False");
    let deleted = seen.iter().position(|l| l.starts_with("DELETED"));
    assert!(
        app_stopped.is_some() && app_stopped < side_killed && side_killed < deleted,
        "app stopped, then side killed, then DELETED: {seen:#?}"
    );
}

/// A pod whose only container is a shell script: it ignores SIGTERM, so the pod stays
/// Ready through its grace period.
const SCRIPT_POD: &str = r#"apiVersion: v1
kind: Pod
metadata:
  name: drain
  namespace: default
  labels: {app: drain}
spec:
  containers:
  - name: script
    image: busybox:1.36
    command: ["sh", "-c", "sleep 3600"]
"#;

const SERVICE: &str = r#"apiVersion: v1
kind: Service
metadata:
  name: drain
  namespace: default
spec:
  selector: {app: drain}
  ports:
  - port: 80
"#;

/// The endpoints of Service `drain`'s slices.
async fn slice_endpoints(fx: &Kubectl) -> Vec<Value> {
    let slices = get(
        fx,
        &[
            "endpointslices",
            "-n",
            "default",
            "-l",
            "kubernetes.io/service-name=drain",
        ],
    )
    .await
    .expect("a list");
    slices["items"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["endpoints"].as_array().cloned().unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn a_terminating_pod_stays_in_its_endpointslice_marked_terminating() {
    let Some(fx) = Kubectl::start("gaps-slices").await else {
        return;
    };
    let file = fx.file("svc.yaml", SERVICE);
    fx.ok(&["apply", "-f", &file]).await;
    let file = fx.file("drain.yaml", SCRIPT_POD);
    fx.ok(&["apply", "-f", &file]).await;
    until("the pod ready in the slice", || async {
        let endpoints = slice_endpoints(&fx).await;
        match endpoints.as_slice() {
            [e] if e["conditions"]["ready"] == true => Ok(()),
            other => Err(format!("{other:#?}")),
        }
    })
    .await;
    fx.ok(&["delete", "pod", "drain", "-n", "default", "--wait=false"])
        .await;
    // Its script keeps running (and the pod Ready) through the grace period: serving, but
    // not ready, and terminating.
    let endpoint = until("the endpoint marked terminating", || async {
        let endpoints = slice_endpoints(&fx).await;
        match endpoints.as_slice() {
            [e] if e["conditions"]["terminating"] == true => Ok(e.clone()),
            [] => panic!("the terminating pod left the slice"),
            other => Err(format!("{other:#?}")),
        }
    })
    .await;
    let pod = get(&fx, &["pod", "drain", "-n", "default"])
        .await
        .expect("the pod is Terminating for 30 s");
    assert_eq!(
        endpoint["conditions"],
        serde_json::json!({"ready": false, "serving": true, "terminating": true}),
        "{endpoint:#}"
    );
    assert_eq!(condition(&pod, "Ready"), "True", "{:#}", pod["status"]);
    assert_eq!(endpoint["addresses"][0], pod["status"]["podIP"]);
    // The legacy Endpoints object drops it.
    let endpoints = get(&fx, &["endpoints", "drain", "-n", "default"])
        .await
        .expect("the Endpoints");
    let listed = endpoints.to_string();
    let ip = pod["status"]["podIP"].as_str().expect("an IP");
    assert!(!listed.contains(ip), "{endpoints:#}");
}

/// Sends the patch `argv[2]` (raw, with its duplicate keys) as media type `argv[3]` to
/// ConfigMap `dup` with the official Python client, `fieldValidation=argv[4]` unless it is
/// empty; prints the code, the Warning headers and, for an error, its Status, as JSON.
const PYTHON_RAW_PATCH: &str = r#"
import sys, json
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
api = client.ApiClient()
query = [("fieldValidation", sys.argv[4])] if sys.argv[4] else []
method, url, headers, _, _ = api.param_serialize(
    method="PATCH", resource_path="/api/v1/namespaces/default/configmaps/dup",
    query_params=query, header_params={"Content-Type": sys.argv[3]},
    body=sys.argv[2], auth_settings=["BearerToken"])
# The client's REST layer would encode the string as JSON again: its pool sends it as is.
response = api.rest_client.pool_manager.request(method, url, body=sys.argv[2], headers=headers)
report = {"code": response.status, "warnings": response.headers.getlist("Warning")}
if response.status >= 400:
    report["status"] = json.loads(response.data)
print(json.dumps(report))
"#;

/// The Python client's raw patch of ConfigMap `dup` (see [`PYTHON_RAW_PATCH`]), or `None`
/// where the client is not installed.
async fn raw_patch(fx: &Kubectl, patch: &str, media: &str, validation: &str) -> Option<Value> {
    let out = crate::common::python::run_with(
        fx,
        "raw_patch.py",
        PYTHON_RAW_PATCH,
        &[patch, media, validation],
    )
    .await?;
    Some(serde_json::from_str(out.trim()).expect("the script prints JSON"))
}

#[tokio::test]
async fn duplicate_fields_in_a_patch_are_warned_of_or_refused() {
    let Some(fx) = Kubectl::start("gaps-dup-patch").await else {
        return;
    };
    fx.ok(&[
        "create",
        "configmap",
        "dup",
        "-n",
        "default",
        "--from-literal=a=0",
    ])
    .await;
    let patch = r#"{"data":{"a":"1","a":"2"}}"#;
    const MERGE: &str = "application/merge-patch+json";
    const STRATEGIC: &str = "application/strategic-merge-patch+json";
    // No choice is Warn: the patch goes through (the last value wins) with a warning.
    let Some(warned) = raw_patch(&fx, patch, MERGE, "").await else {
        return;
    };
    assert_eq!(warned["code"], 200, "{warned:#}");
    assert_eq!(
        warned["warnings"],
        serde_json::json!([r#"299 - "duplicate field \"data.a\"""#]),
        "{warned:#}"
    );
    let a = fx
        .ok(&[
            "get",
            "cm",
            "dup",
            "-n",
            "default",
            "-o",
            "jsonpath={.data.a}",
        ])
        .await;
    assert_eq!(a, "2");
    let warned = raw_patch(&fx, patch, STRATEGIC, "Warn")
        .await
        .expect("the client ran before");
    assert_eq!(warned["code"], 200, "{warned:#}");
    assert_eq!(warned["warnings"].as_array().map(Vec::len), Some(1));
    // Strict refuses it: 422 on the field `patch`, naming the duplicate.
    for (media, shown) in [
        (MERGE, "\"data\":{\"a\":\"2\"}"),
        (STRATEGIC, "map[data:map[a:2]]"),
    ] {
        let refused = raw_patch(&fx, patch, media, "Strict")
            .await
            .expect("the client ran before");
        assert_eq!(refused["code"], 422, "{refused:#}");
        let status = &refused["status"];
        let message = status["message"].as_str().expect("a message");
        assert!(
            message.starts_with(r#" "" is invalid: patch: Invalid value: ""#)
                && message.ends_with(r#": strict decoding error: duplicate field "data.a""#)
                && message.contains(&shown.replace('"', "\\\"")),
            "{media}: {message}"
        );
        assert_eq!(
            status["details"]["causes"][0]["field"], "patch",
            "{status:#}"
        );
    }
}

/// `kubectl get KIND -A -o json`'s items.
async fn all(fx: &Kubectl, kind: &str) -> Vec<Value> {
    let list = get(fx, &[kind, "-A"]).await.expect("a list");
    list["items"].as_array().cloned().unwrap_or_default()
}

/// The uid of the object's controller.
fn controller_uid(object: &Value) -> Option<&str> {
    object["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .find(|r| r["controller"] == true)?["uid"]
        .as_str()
}

/// The Deployments whose READY is not the number of their Ready pods (Terminating ones
/// left out), or how many of their pods are not Ready.
async fn ready_mismatches(fx: &Kubectl) -> Result<usize, String> {
    let deployments = all(fx, "deployments").await;
    let sets = all(fx, "replicasets").await;
    let pods = all(fx, "pods").await;
    let mut wrong = Vec::new();
    let mut unready = 0;
    for d in &deployments {
        let uid = d["metadata"]["uid"].as_str();
        let owned: Vec<&str> = sets
            .iter()
            .filter(|rs| controller_uid(rs) == uid)
            .filter_map(|rs| rs["metadata"]["uid"].as_str())
            .collect();
        let (ready, not): (Vec<&Value>, Vec<&Value>) = pods
            .iter()
            .filter(|p| controller_uid(p).is_some_and(|u| owned.contains(&u)))
            .filter(|p| !p["metadata"]["deletionTimestamp"].is_string())
            .partition(|p| condition(p, "Ready") == "True");
        unready += not.len();
        let counted = d["status"]["readyReplicas"].as_u64().unwrap_or(0);
        if counted != ready.len() as u64 {
            wrong.push(format!(
                "{}/{}: READY {counted}, {} Ready pods",
                d["metadata"]["namespace"],
                d["metadata"]["name"],
                ready.len()
            ));
        }
    }
    assert!(!deployments.is_empty());
    if wrong.is_empty() {
        Ok(unready)
    } else {
        Err(wrong.join("; "))
    }
}

#[tokio::test]
async fn the_demos_deployments_count_their_ready_pods() {
    let Some(fx) =
        Kubectl::start_with("gaps-ready", kscope_sim::SimConfig::with_size(400, 4, 3)).await
    else {
        return;
    };
    until("each Deployment's READY is its Ready pods", || {
        ready_mismatches(&fx)
    })
    .await;
    // What READY shows is the same count.
    let table = fx.ok(&["get", "deploy", "-A", "--no-headers"]).await;
    let deployments = all(&fx, "deployments").await;
    for d in &deployments {
        let name = d["metadata"]["name"].as_str().expect("a name");
        let ready = d["status"]["readyReplicas"].as_u64().unwrap_or(0);
        let replicas = d["spec"]["replicas"].as_u64().unwrap_or(0);
        let row = table
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(name))
            .expect("a row per Deployment");
        assert_eq!(
            row.split_whitespace().nth(2),
            Some(format!("{ready}/{replicas}").as_str()),
            "{row}"
        );
    }
}

/// An IPv4 address as a number.
fn ipv4(text: &str) -> u32 {
    u32::from(text.parse::<std::net::Ipv4Addr>().expect("an IPv4 address"))
}

/// Whether `ip` lies in `cidr`.
fn in_cidr(ip: &str, cidr: &str) -> bool {
    let (base, prefix) = cidr.split_once('/').expect("a CIDR");
    let prefix: u32 = prefix.parse().expect("a prefix length");
    let mask = u32::MAX.checked_shl(32 - prefix).unwrap_or(0);
    ipv4(ip) & mask == ipv4(base) & mask
}

#[tokio::test]
async fn every_pods_ip_is_unique_and_in_its_nodes_pod_cidr() {
    let config = kscope_sim::SimConfig::with_size(300, 3, 3).churn(100.0, None);
    let Some(fx) = Kubectl::start_with("gaps-ips", config).await else {
        return;
    };
    let start = fx.sim.position().rv;
    // Pods the controllers make, and a seeded pod whose ReplicaSet replaces it.
    fx.ok(&[
        "create",
        "deployment",
        "made",
        "--image=nginx:1.27",
        "--replicas=6",
        "-n",
        "default",
    ])
    .await;
    fx.ok(&[
        "rollout",
        "status",
        "deploy/made",
        "-n",
        "default",
        "--timeout=120s",
    ])
    .await;
    let pods = all(&fx, "pods").await;
    let seeded = pods
        .iter()
        .find(|p| p["metadata"]["namespace"] != "default" && p["status"]["podIP"].is_string())
        .expect("a seeded pod");
    let (namespace, name) = (
        seeded["metadata"]["namespace"]
            .as_str()
            .expect("a namespace"),
        seeded["metadata"]["name"].as_str().expect("a name"),
    );
    fx.ok(&[
        "delete",
        "pod",
        name,
        "-n",
        namespace,
        "--grace-period=0",
        "--force",
    ])
    .await;
    // Once the churn has made its thousands of writes (pods among them) it stops, and
    // every running pod is looked at.
    until("the churn's writes", || async {
        let rv = fx.sim.position().rv;
        if rv > start + 1_000 {
            Ok(())
        } else {
            Err(format!("{} writes", rv - start))
        }
    })
    .await;
    fx.sim.set_churn_rate(0.0);
    let cidrs: std::collections::HashMap<String, String> = all(&fx, "nodes")
        .await
        .iter()
        .map(|n| {
            let name = n["metadata"]["name"].as_str().expect("a name").to_string();
            let cidr = n["spec"]["podCIDR"]
                .as_str()
                .expect("a podCIDR")
                .to_string();
            (name, cidr)
        })
        .collect();
    let mut owners: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    let mut problems = Vec::new();
    for pod in all(&fx, "pods").await {
        if pod["status"]["phase"] != "Running" || pod["spec"]["hostNetwork"] == true {
            continue;
        }
        let who = format!(
            "{}/{}",
            pod["metadata"]["namespace"], pod["metadata"]["name"]
        );
        let ip = pod["status"]["podIP"].as_str().expect("a running pod's IP");
        let node = pod["spec"]["nodeName"].as_str().expect("a node");
        if !in_cidr(ip, &cidrs[node]) {
            problems.push(format!("{who}: {ip} outside {node}'s {}", cidrs[node]));
        }
        if let Some(other) = owners.insert(ip.to_string(), who.clone()) {
            problems.push(format!("{who} and {other} share {ip}"));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// A StatefulSet as a user writes it: the server's defaults are what its stored form has
/// beyond this.
const DATABASE: &str = r#"{"apiVersion": "apps/v1", "kind": "StatefulSet",
 "metadata": {"name": "made-db", "namespace": "default", "labels": {"app": "made-db"}},
 "spec": {"replicas": 1, "serviceName": "made-db",
  "selector": {"matchLabels": {"app": "made-db"}},
  "template": {"metadata": {"labels": {"app": "made-db"}},
   "spec": {"containers": [{"name": "postgres", "image": "docker.io/library/postgres:16.4",
    "ports": [{"containerPort": 5432}],
    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}},
  "volumeClaimTemplates": [{"metadata": {"name": "data"},
   "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}"#;

/// Every path of `value` (`spec.template.spec.containers[].ports[].protocol`), lists'
/// items taken together.
fn paths(value: &Value, at: &str, out: &mut std::collections::BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let path = format!("{at}.{k}");
                out.insert(path.clone());
                paths(v, &path, out);
            }
        }
        Value::Array(items) => {
            for item in items {
                paths(item, &format!("{at}[]"), out);
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn seeded_statefulsets_carry_the_defaults_a_created_one_gets() {
    let Some(fx) = Kubectl::start("gaps-sts-defaults").await else {
        return;
    };
    fx.sim.set_controllers(false);
    let file = fx.file("db.json", DATABASE);
    fx.ok(&["create", "-f", &file]).await;
    let created = get(&fx, &["sts", "made-db", "-n", "default"])
        .await
        .expect("the created StatefulSet");
    let sent: Value = serde_json::from_str(DATABASE).expect("JSON");
    let (mut given, mut stored) = Default::default();
    paths(&sent["spec"], "spec", &mut given);
    paths(&created["spec"], "spec", &mut stored);
    let defaulted: Vec<&String> = stored.difference(&given).collect();
    assert!(!defaulted.is_empty());
    let seeded = all(&fx, "statefulsets").await;
    assert!(!seeded.is_empty(), "the demo seeds StatefulSets");
    for sts in seeded.iter().filter(|s| s["metadata"]["name"] != "made-db") {
        let mut has = std::collections::BTreeSet::new();
        paths(&sts["spec"], "spec", &mut has);
        let missing: Vec<&&String> = defaulted.iter().filter(|p| !has.contains(**p)).collect();
        assert!(
            missing.is_empty(),
            "{}/{} lacks the defaults {missing:?}",
            sts["metadata"]["namespace"],
            sts["metadata"]["name"]
        );
    }
}

#[tokio::test]
async fn a_deleted_pod_ends_succeeded_or_failed_before_it_goes() {
    let Some(fx) = Kubectl::start("gaps-phase").await else {
        return;
    };
    ready_from(&fx, ONE_CONTAINER, "clean", 3).await;
    ready_pod(&fx, "killed", 3).await;
    let mut watch = fx
        .command(&[
            "get",
            "pods",
            "-n",
            "default",
            "--watch",
            "--output-watch-events",
            "-o",
            "jsonpath={.type} {.object.metadata.name} {.object.status.phase}{\"\\n\"}",
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
    let mut seen: Vec<String> = Vec::new();
    while seen.iter().filter(|l| l.starts_with("ADDED")).count() < 2 {
        seen.push(next_line(&mut rx).await);
    }
    fx.ok(&[
        "delete",
        "pod",
        "clean",
        "killed",
        "-n",
        "default",
        "--wait=false",
    ])
    .await;
    let deleted = |seen: &[String], name: &str| {
        seen.iter()
            .position(|l| l.starts_with(&format!("DELETED {name} ")))
    };
    while deleted(&seen, "clean").is_none() || deleted(&seen, "killed").is_none() {
        seen.push(next_line(&mut rx).await);
    }
    let _ = watch.kill();
    let _ = watch.wait();
    // Its only container exited 0 on SIGTERM: Succeeded; a script killed at the end of
    // the grace period (137): Failed. Each is reported before the DELETED, which shows it.
    for (name, phase) in [("clean", "Succeeded"), ("killed", "Failed")] {
        let ended = seen
            .iter()
            .position(|l| *l == format!("MODIFIED {name} {phase}"));
        assert!(
            ended.is_some() && ended < deleted(&seen, name),
            "{name}: MODIFIED {phase} before DELETED: {seen:#?}"
        );
        assert!(
            seen.contains(&format!("DELETED {name} {phase}")),
            "{seen:#?}"
        );
    }
}

#[tokio::test]
async fn churned_deployments_and_seeded_statefulsets_count_their_ready_pods() {
    let config = kscope_sim::SimConfig::with_size(300, 3, 3)
        .churn(300.0, Some(std::time::Duration::from_secs(4)));
    let Some(fx) = Kubectl::start_with("gaps-churn-ready", config).await else {
        return;
    };
    // The churn scales, crashes and rolls pods for a while; once it stops, READY is
    // what the pods say.
    until("each Deployment's READY is its Ready pods", || {
        ready_mismatches(&fx)
    })
    .await;
    let sets = all(&fx, "statefulsets").await;
    let pods = all(&fx, "pods").await;
    assert!(!sets.is_empty());
    for sts in &sets {
        let uid = sts["metadata"]["uid"].as_str();
        let ready = pods
            .iter()
            .filter(|p| controller_uid(p) == uid && condition(p, "Ready") == "True")
            .count();
        assert_eq!(
            sts["status"]["readyReplicas"].as_u64().unwrap_or(0),
            ready as u64,
            "{}: {:#}",
            sts["metadata"]["name"],
            sts["status"]
        );
    }
}

/// The next line a watch printed.
async fn next_line(rx: &mut tokio::sync::mpsc::UnboundedReceiver<String>) -> String {
    tokio::time::timeout(HANG_GUARD, rx.recv())
        .await
        .expect("a watch event in time")
        .expect("the watch runs")
}
