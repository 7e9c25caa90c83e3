//! The seeded cluster, read with kubectl as a person would: it fits its nodes (and leaves
//! room for what a user creates), its pods take their IPs from their node's podCIDR.

use std::collections::HashMap;
use std::net::Ipv4Addr;

use kscope_sim::SimConfig;
use serde_json::Value;

use crate::common::kubectl::Kubectl;

async fn json(fx: &Kubectl, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    serde_json::from_str(&fx.ok(&all).await).expect("kubectl prints JSON")
}

/// A quantity (`250m`, `2`, `512Mi`, `31483456Ki`) in thousandths of its unit.
fn milli(quantity: &str) -> u128 {
    let split = quantity
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(quantity.len());
    let (number, unit) = quantity.split_at(split);
    let n: u128 = number.parse().expect("a whole quantity");
    n * match unit {
        "" => 1000,
        "m" => 1,
        "Ki" => 1000 << 10,
        "Mi" => 1000 << 20,
        "Gi" => 1000 << 30,
        other => panic!("unit {other} in {quantity}"),
    }
}

/// Whether `ip` is inside `cidr`.
fn within(ip: &str, cidr: &str) -> bool {
    let (net, bits) = cidr.split_once('/').expect("a CIDR");
    let bits: u32 = bits.parse().expect("prefix");
    let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
    let ip: u32 = ip.parse::<Ipv4Addr>().expect("an IPv4").into();
    let net: u32 = net.parse::<Ipv4Addr>().expect("an IPv4").into();
    ip & mask == net & mask
}

/// Every node's requested cpu and memory, summed over its pods that still run, is at most
/// half of its allocatable; every pod not on the host's network has an IP of its node's
/// podCIDR, none shared.
async fn assert_fits(fx: &Kubectl) {
    let nodes = json(fx, &["get", "nodes"]).await;
    let pods = json(fx, &["get", "pods", "-A"]).await;
    let mut used: HashMap<&str, (u128, u128, u128)> = HashMap::new();
    let cidrs: HashMap<&str, &str> = nodes["items"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| {
            let name = n["metadata"]["name"].as_str().expect("name");
            (name, n["spec"]["podCIDR"].as_str().expect("podCIDR"))
        })
        .collect();
    let mut ips = HashMap::new();
    for pod in pods["items"].as_array().expect("pods") {
        let Some(node) = pod["spec"]["nodeName"].as_str() else {
            continue;
        };
        if matches!(
            pod["status"]["phase"].as_str(),
            Some("Succeeded" | "Failed")
        ) {
            continue;
        }
        let entry = used.entry(node).or_default();
        entry.2 += 1;
        for c in pod["spec"]["containers"].as_array().expect("containers") {
            let requests = &c["resources"]["requests"];
            entry.0 += requests["cpu"].as_str().map_or(0, milli);
            entry.1 += requests["memory"].as_str().map_or(0, milli);
        }
        let name = pod["metadata"]["name"].as_str().expect("name");
        if let Some(ip) = pod["status"]["podIP"].as_str()
            && pod["spec"]["hostNetwork"] != true
        {
            assert!(
                within(ip, cidrs[node]),
                "{name} has {ip}, outside {node}'s {}",
                cidrs[node]
            );
            assert_eq!(ips.insert(ip.to_string(), name), None, "{ip} given twice");
        }
    }
    for node in nodes["items"].as_array().expect("nodes") {
        let name = node["metadata"]["name"].as_str().expect("name");
        let allocatable = &node["status"]["allocatable"];
        let (cpu, memory, count) = used.get(name).copied().unwrap_or_default();
        let room = |r: &str| milli(allocatable[r].as_str().expect("allocatable"));
        assert!(2 * cpu <= room("cpu"), "{name}: {cpu}m of cpu requested");
        assert!(2 * memory <= room("memory"), "{name}: {memory} memory");
        assert!(2 * count * 1000 <= room("pods"), "{name}: {count} pods");
    }
}

/// A DaemonSet a user applies gets a pod on every node, and the demo's Widget controller
/// comes up, at a density where both once stayed Pending (`Insufficient cpu`).
#[tokio::test]
async fn the_seeded_cluster_fits_its_nodes_and_leaves_room() {
    let config = SimConfig::with_size(1000, 10, 8)
        .widget_controller(true)
        .workload_pods(true);
    let Some(fx) = Kubectl::start_with("fits", config).await else {
        return;
    };
    assert_fits(&fx).await;
    let manifest = fx.file(
        "ds.yaml",
        "apiVersion: apps/v1
kind: DaemonSet
metadata: {name: node-agent, namespace: default}
spec:
  selector: {matchLabels: {app: node-agent}}
  template:
    metadata: {labels: {app: node-agent}}
    spec:
      containers:
      - name: agent
        image: registry.example.com/node-agent:1.0
        resources: {requests: {cpu: 200m, memory: 256Mi}}
",
    );
    fx.ok(&["apply", "-f", &manifest]).await;
    for (kind, namespace) in [
        ("ds/node-agent", "default"),
        ("deploy/widget-controller", "widget-system"),
    ] {
        fx.ok(&["rollout", "status", kind, "-n", namespace, "--timeout=120s"])
            .await;
    }
    let ds = json(&fx, &["get", "ds", "node-agent", "-n", "default"]).await;
    assert_eq!(ds["status"]["numberReady"], 10, "{:#}", ds["status"]);
    // The pods the kubelet started have their addresses from their nodes too.
    assert_fits(&fx).await;
    // A denser cluster, with no room for real machines' requests at their usual size.
    let dense = SimConfig::with_size(2000, 2, 4).workload_pods(true);
    let Some(fx) = Kubectl::start_with("fits-dense", dense).await else {
        return;
    };
    assert_fits(&fx).await;
}

/// `kubectl top` columns of one row: name(s), then CPU in millicores and memory in MiB.
fn top_rows(out: &str) -> Vec<(Vec<String>, u64, u64)> {
    out.lines()
        .map(|line| {
            let mut words: Vec<String> = line.split_whitespace().map(String::from).collect();
            let memory = words.pop().expect("memory column");
            let cpu = words.pop().expect("cpu column");
            // `kubectl top node` adds percentages after each; a pod row has none.
            let (cpu, memory) = if memory.ends_with('%') {
                words.pop().expect("cpu%");
                (words.pop().expect("cpu"), cpu)
            } else {
                (cpu, memory)
            };
            let number = |s: &str, unit: &str| -> u64 {
                s.strip_suffix(unit)
                    .unwrap_or_else(|| panic!("{s} is not in {unit}: {line}"))
                    .parse()
                    .expect("a number")
            };
            (words, number(&cpu, "m"), number(&memory, "Mi"))
        })
        .collect()
}

/// `kubectl top` finds metrics.k8s.io by discovery and reads PodMetrics and NodeMetrics:
/// the noisy app runs above its CPU request, a crash-looping container's memory climbs,
/// every node uses at least what its pods do.
#[tokio::test]
async fn kubectl_top_reads_the_metrics_api() {
    let mut config = SimConfig::with_size(60, 3, 2);
    config.noisy_logs = Some(kscope_sim::NoisyLogs {
        app: "noisy".into(),
        lines_per_second: 10,
    });
    let Some(fx) = Kubectl::start_with("top", config).await else {
        return;
    };
    let deployment = |name: &str, script: &str| {
        format!(
            "apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: default}}
spec:
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
      - name: main
        image: busybox:1.36
        command: [sh, -c, '{script}']
        resources: {{requests: {{cpu: 100m, memory: 64Mi}}, limits: {{memory: 256Mi}}}}
"
        )
    };
    let noisy = fx.file("noisy.yaml", &deployment("noisy", "sleep 3600"));
    let crash = fx.file("crash.yaml", &deployment("crash", "exit 2"));
    fx.ok(&["apply", "-f", &noisy, "-f", &crash]).await;
    fx.ok(&[
        "rollout",
        "status",
        "deploy/noisy",
        "-n",
        "default",
        "--timeout=90s",
    ])
    .await;

    let nodes = top_rows(&fx.ok(&["top", "nodes", "--no-headers"]).await);
    assert_eq!(nodes.len(), 3, "{nodes:?}");
    let pods = top_rows(&fx.ok(&["top", "pods", "-A", "--no-headers"]).await);
    assert!(pods.len() > 40, "{pods:?}");
    let (node_cpu, node_memory) = nodes.iter().fold((0, 0), |a, n| (a.0 + n.1, a.1 + n.2));
    let (pod_cpu, pod_memory) = pods.iter().fold((0, 0), |a, p| (a.0 + p.1, a.1 + p.2));
    assert!(node_cpu >= pod_cpu && node_memory >= pod_memory);
    assert!(pods.iter().all(|p| p.1 > 0 && p.2 > 0), "{pods:?}");

    let noisy = top_rows(
        &fx.ok(&[
            "top",
            "pods",
            "-n",
            "default",
            "-l",
            "app=noisy",
            "--no-headers",
        ])
        .await,
    );
    assert_eq!(noisy.len(), 1);
    assert!(
        noisy[0].1 > 100,
        "the noisy app is over its 100m: {noisy:?}"
    );

    // Polled with kubectl itself (the sim shares this runtime), as long as a hang allows.
    let mut pod = String::new();
    for _ in 0..240 {
        let v = json(&fx, &["get", "pods", "-n", "default", "-l", "app=crash"]).await;
        let item = &v["items"][0];
        let restarts = item["status"]["containerStatuses"][0]["restartCount"].as_u64();
        if let (Some(name), Some(1..)) = (item["metadata"]["name"].as_str(), restarts) {
            pod = name.to_string();
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    assert!(!pod.is_empty(), "the crash pod never restarted");
    let sample = || async {
        let out = fx
            .ok(&[
                "top",
                "pod",
                &pod,
                "-n",
                "default",
                "--containers",
                "--no-headers",
            ])
            .await;
        let rows = top_rows(&out);
        assert_eq!(rows.len(), 1, "{out}");
        assert_eq!(rows[0].0, [pod.clone(), "main".to_string()]);
        rows[0].2
    };
    // A scrape window lasts 15 s and the memory wraps at each (virtual) restart, once in
    // 300 s: within 90 s of samples, one window's value follows a lower one.
    let mut seen = vec![sample().await];
    let mut climbed = None;
    for _ in 0..90 {
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        let (before, now) = (seen[seen.len() - 1], sample().await);
        seen.push(now);
        if now > before {
            climbed = Some(now);
            break;
        }
    }
    let later =
        climbed.unwrap_or_else(|| panic!("memory never climbed between two windows: {seen:?}Mi"));
    assert!(later < 256, "within its limit: {later}Mi");
}

/// Each Event of a list as `namespace/name` → resourceVersion.
fn versions(list: &Value) -> std::collections::BTreeMap<String, String> {
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|e| {
            let meta = &e["metadata"];
            (
                format!(
                    "{}/{}",
                    meta["namespace"].as_str().unwrap_or(""),
                    meta["name"].as_str().unwrap_or("")
                ),
                meta["resourceVersion"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// core/v1 and events.k8s.io/v1 are two views of one Event store: the same items, names
/// and resourceVersions in lists and watches, whichever API wrote the Event.
#[tokio::test]
async fn both_event_apis_serve_one_store() {
    let config = SimConfig::with_size(200, 3, 3).workload_pods(true);
    let Some(fx) = Kubectl::start_with("events", config).await else {
        return;
    };
    let v1 = "events.v1.events.k8s.io";
    let core = json(&fx, &["get", "events", "-A"]).await;
    let new = json(&fx, &["get", v1, "-A"]).await;
    assert!(
        core["items"].as_array().expect("items").len() > 20,
        "{core:#}"
    );
    assert_eq!(versions(&core), versions(&new));

    // One written through each API reads back through the other, renamed.
    let rv = core["metadata"]["resourceVersion"]
        .as_str()
        .expect("list resourceVersion")
        .to_string();
    let written = fx.file(
        "events.yaml",
        "apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: probe.v1, namespace: default}
eventTime: 2025-01-01T00:00:00.000000Z
reportingController: example.com/prober
reportingInstance: prober-0
action: Probe
reason: Probed
note: written as events.k8s.io/v1
type: Normal
regarding: {kind: Namespace, name: default, apiVersion: v1}
---
apiVersion: v1
kind: Event
metadata: {name: probe.core, namespace: default}
involvedObject: {kind: Namespace, name: default, apiVersion: v1}
reason: Probed
message: written as core/v1
type: Warning
source: {component: prober}
count: 3
",
    );
    fx.ok(&["create", "-f", &written]).await;
    let as_core = json(&fx, &["get", "event", "probe.v1", "-n", "default"]).await;
    assert_eq!(as_core["message"], "written as events.k8s.io/v1");
    assert_eq!(as_core["reportingComponent"], "example.com/prober");
    assert_eq!(as_core["involvedObject"]["name"], "default");
    let as_v1 = json(&fx, &["get", v1, "probe.core", "-n", "default"]).await;
    assert_eq!(as_v1["note"], "written as core/v1");
    assert_eq!(as_v1["deprecatedCount"], 3);
    assert_eq!(as_v1["deprecatedSource"]["component"], "prober");
    let core = json(&fx, &["get", "events", "-A"]).await;
    let new = json(&fx, &["get", v1, "-A"]).await;
    assert_eq!(versions(&core), versions(&new));

    // Both watches from before the writes see both, at the same resourceVersions.
    let watched = |path: &str| {
        let path = format!("{path}?watch=1&resourceVersion={rv}&timeoutSeconds=2");
        let fx = &fx;
        async move {
            let out = fx.ok(&["get", "--raw", &path]).await;
            out.lines()
                .map(|l| {
                    let e: Value = serde_json::from_str(l).expect("a watch event");
                    let meta = &e["object"]["metadata"];
                    (
                        e["type"].as_str().unwrap_or("").to_string(),
                        meta["name"].as_str().unwrap_or("").to_string(),
                        meta["resourceVersion"].as_str().unwrap_or("").to_string(),
                    )
                })
                .filter(|(_, name, _)| name.starts_with("probe."))
                .collect::<Vec<_>>()
        }
    };
    let from_core = watched("/api/v1/namespaces/default/events").await;
    let from_v1 = watched("/apis/events.k8s.io/v1/namespaces/default/events").await;
    assert_eq!(from_core.len(), 2, "{from_core:?}");
    assert_eq!(from_core, from_v1);
}

/// A CRD whose version declares `subresources.scale`, at paths of its own choosing.
const FLEET_CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: fleets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: fleets, singular: fleet, kind: Fleet}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.size
        statusReplicasPath: .status.ready
        labelSelectorPath: .status.selector
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
          status:
            type: object
            properties:
              ready: {type: integer}
              selector: {type: string}
";

/// More of what the real server serves: `kubectl scale` of a custom resource with a scale
/// subresource, an init container's log (and `--all-containers`), a named refusal for a
/// subresource the sim does not serve, and the deprecated `/api/v1/watch/...` paths.
#[tokio::test]
async fn scale_init_logs_unserved_and_legacy_watch() {
    let Some(fx) = Kubectl::start("served").await else {
        return;
    };
    let crd = fx.file("fleet-crd.yaml", FLEET_CRD);
    fx.ok(&["apply", "-f", &crd]).await;
    let fleet = fx.file(
        "fleet.yaml",
        "apiVersion: example.com/v1
kind: Fleet
metadata: {name: blue, namespace: default}
spec: {size: 1}
",
    );
    fx.ok(&["apply", "-f", &fleet]).await;
    fx.ok(&[
        "patch",
        "fleet",
        "blue",
        "-n",
        "default",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"ready":1,"selector":"app=blue"}}"#,
    ])
    .await;
    fx.ok(&["scale", "fleet/blue", "-n", "default", "--replicas=4"])
        .await;
    let scaled = json(&fx, &["get", "fleet", "blue", "-n", "default"]).await;
    assert_eq!(scaled["spec"]["size"], 4);
    let scale: Value = serde_json::from_str(
        &fx.ok(&[
            "get",
            "--raw",
            "/apis/example.com/v1/namespaces/default/fleets/blue/scale",
        ])
        .await,
    )
    .expect("a Scale");
    assert_eq!(scale["spec"]["replicas"], 4);
    assert_eq!(scale["status"]["replicas"], 1);
    assert_eq!(scale["status"]["selector"], "app=blue");

    let pod = fx.file(
        "init.yaml",
        "apiVersion: v1
kind: Pod
metadata: {name: initialised, namespace: default}
spec:
  initContainers:
  - {name: migrate, image: busybox:1.36, command: [sh, -c, 'echo migrated']}
  containers:
  - {name: app, image: nginx:1.27}
",
    );
    fx.ok(&["apply", "-f", &pod]).await;
    fx.ok(&[
        "wait",
        "--for=condition=Ready",
        "pod/initialised",
        "-n",
        "default",
        "--timeout=90s",
    ])
    .await;
    let init = fx
        .ok(&["logs", "initialised", "-n", "default", "-c", "migrate"])
        .await;
    assert!(!init.is_empty());
    // A Ready app container's first line may not be due yet: wait for it (bounded).
    let prefixes = ["migrate", "app"].map(|c| format!("[pod/initialised/{c}]"));
    let deadline = tokio::time::Instant::now() + crate::common::wait::HANG_GUARD;
    loop {
        let all = fx
            .ok(&[
                "logs",
                "initialised",
                "-n",
                "default",
                "--all-containers",
                "--prefix",
            ])
            .await;
        if prefixes.iter().all(|p| all.contains(p.as_str())) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{prefixes:?} not all in:\n{all}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    let (ok, _, err) = fx
        .run(&["logs", "initialised", "-n", "default", "-c", "nope"])
        .await;
    assert!(!ok && err.contains("container nope is not valid"), "{err}");

    let (ok, _, err) = fx
        .run(&["create", "token", "default", "-n", "default"])
        .await;
    assert!(!ok);
    assert!(
        err.contains("serviceaccounts/token") && err.contains("not served"),
        "{err}"
    );
    let (ok, _, err) = fx
        .run(&[
            "get",
            "--raw",
            "/api/v1/namespaces/default/pods/initialised/ephemeralcontainers",
        ])
        .await;
    assert!(
        !ok && err.contains("MethodNotAllowed") && err.contains("pods/ephemeralcontainers"),
        "{err}"
    );

    let watched = fx
        .ok(&[
            "get",
            "--raw",
            "/api/v1/watch/namespaces/default/pods?timeoutSeconds=1",
        ])
        .await;
    let first: Value =
        serde_json::from_str(watched.lines().next().expect("an event")).expect("a watch event");
    assert_eq!(first["type"], "ADDED");
    assert_eq!(first["object"]["kind"], "Pod");
    let named = fx
        .ok(&[
            "get",
            "--raw",
            "/apis/example.com/v1/watch/namespaces/default/fleets/blue?timeoutSeconds=1",
        ])
        .await;
    let event: Value =
        serde_json::from_str(named.lines().next().expect("an event")).expect("a watch event");
    assert_eq!(event["object"]["metadata"]["name"], "blue");
}
