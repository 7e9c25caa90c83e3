//! The kinds beyond pods, nodes and workloads, through kubectl: each is listed (and with
//! `-o wide`) with kubectl's columns, discovery names them with their short names, field
//! selectors follow the real server's, and `kubectl create configmap` (a protobuf body)
//! stores what it sent. Skipped where kubectl is absent (failed under CI=true).

use crate::common::kubectl::Kubectl;

/// Each new kind by the name kubectl is given, and the header columns kubectl prints.
const KINDS: [(&str, &str); 18] = [
    ("services", "NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE"),
    ("endpoints", "NAME ENDPOINTS AGE"),
    ("configmaps", "NAME DATA AGE"),
    ("events", "LAST SEEN TYPE REASON OBJECT MESSAGE"),
    ("serviceaccounts", "NAME SECRETS AGE"),
    (
        "persistentvolumeclaims",
        "NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE",
    ),
    (
        "persistentvolumes",
        "NAME CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS VOLUMEATTRIBUTESCLASS REASON AGE",
    ),
    (
        "endpointslices.discovery.k8s.io",
        "NAME ADDRESSTYPE PORTS ENDPOINTS AGE",
    ),
    ("statefulsets", "NAME READY AGE"),
    (
        "daemonsets",
        "NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE",
    ),
    ("controllerrevisions", "NAME CONTROLLER REVISION AGE"),
    ("jobs", "NAME STATUS COMPLETIONS DURATION AGE"),
    (
        "cronjobs",
        "NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE",
    ),
    ("leases", "NAME HOLDER AGE"),
    (
        "events.events.k8s.io",
        "LAST SEEN TYPE REASON OBJECT MESSAGE",
    ),
    ("ingresses", "NAME CLASS HOSTS ADDRESS PORTS AGE"),
    (
        "poddisruptionbudgets",
        "NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE",
    ),
    (
        "horizontalpodautoscalers",
        "NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE",
    ),
];

fn words(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[tokio::test]
async fn kubectl_gets_every_new_kind() {
    let Some(fx) = Kubectl::start("kinds-get").await else {
        return;
    };
    for (kind, header) in KINDS {
        let out = fx.ok(&["get", kind, "-A"]).await;
        let mut lines = out.lines();
        let first = words(lines.next().unwrap_or(""));
        let want = if kind == "persistentvolumes" {
            header.to_string()
        } else {
            format!("NAMESPACE {header}")
        };
        assert_eq!(first, want, "{kind}: {out}");
        assert!(lines.next().is_some(), "{kind} has no objects: {out}");
        let wide = fx.ok(&["get", kind, "-A", "-o", "wide"]).await;
        assert!(
            wide.lines().count() == out.lines().count(),
            "{kind} -o wide: {wide}"
        );
    }
    // The seeded objects are tied together: an application's Service selects its pods,
    // whose addresses its Endpoints list.
    let deployment = fx
        .ok(&[
            "get",
            "deployments",
            "-A",
            "-o",
            "jsonpath={.items[0].metadata.namespace}/{.items[0].metadata.name}",
        ])
        .await;
    let (ns, name) = deployment.split_once('/').expect("ns/name");
    let ips = fx
        .ok(&[
            "get",
            "pods",
            "-n",
            ns,
            "-l",
            &format!("app={name}"),
            "-o",
            "jsonpath={.items[*].status.podIP}",
        ])
        .await;
    let endpoints = fx
        .ok(&[
            "get",
            "endpoints",
            "-n",
            ns,
            name,
            "-o",
            "jsonpath={.subsets[*].addresses[*].ip} {.subsets[*].notReadyAddresses[*].ip}",
        ])
        .await;
    for ip in ips.split_whitespace() {
        assert!(endpoints.contains(ip), "{ip} not in {endpoints}");
    }
    let slices = fx
        .ok(&[
            "get",
            "endpointslices",
            "-n",
            ns,
            "-l",
            &format!("kubernetes.io/service-name={name}"),
            "-o",
            "name",
        ])
        .await;
    assert_eq!(slices.lines().count(), 1, "{slices}");
    fx.ok(&["get", "service", "-n", ns, name]).await;
    fx.ok(&["get", "serviceaccount", "-n", ns, name]).await;
    fx.ok(&["get", "configmap", "-n", ns, &format!("{name}-config")])
        .await;
}

#[tokio::test]
async fn api_resources_lists_them_with_short_names() {
    let Some(fx) = Kubectl::start("kinds-discovery").await else {
        return;
    };
    let out = fx.ok(&["api-resources"]).await;
    for (name, short, group) in [
        ("services", "svc", "v1"),
        ("configmaps", "cm", "v1"),
        ("persistentvolumeclaims", "pvc", "v1"),
        ("statefulsets", "sts", "apps/v1"),
        ("cronjobs", "cj", "batch/v1"),
        ("horizontalpodautoscalers", "hpa", "autoscaling/v2"),
        ("poddisruptionbudgets", "pdb", "policy/v1"),
        ("ingresses", "ing", "networking.k8s.io/v1"),
        (
            "customresourcedefinitions",
            "crd,crds",
            "apiextensions.k8s.io/v1",
        ),
    ] {
        assert!(
            out.lines()
                .any(|l| words(l).starts_with(&format!("{name} {short} {group}"))),
            "{name} missing from {out}"
        );
    }
    for (name, group) in [
        ("endpointslices", "discovery.k8s.io/v1"),
        ("leases", "coordination.k8s.io/v1"),
        ("controllerrevisions", "apps/v1"),
        ("jobs", "batch/v1"),
    ] {
        assert!(
            out.lines()
                .any(|l| words(l).starts_with(&format!("{name} {group}"))),
            "{name} missing from {out}"
        );
    }
    // Short names resolve.
    let out = fx
        .ok(&["get", "sts,cj,hpa,pdb,ing,cm,svc,sa,pvc,pv,ep", "-A"])
        .await;
    assert!(out.contains("statefulset.apps/") && out.contains("persistentvolume/"));
}

#[tokio::test]
async fn field_selectors_follow_the_real_server() {
    let Some(fx) = Kubectl::start("kinds-fields").await else {
        return;
    };
    let warnings = fx
        .ok(&[
            "get",
            "events",
            "-A",
            "--field-selector",
            "type=Warning,involvedObject.kind=Pod",
            "-o",
            "jsonpath={range .items[*]}{.type}/{.involvedObject.kind} {end}",
        ])
        .await;
    for pair in warnings.split_whitespace() {
        assert_eq!(pair, "Warning/Pod");
    }
    let scaled = fx
        .ok(&[
            "get",
            "events",
            "-A",
            "--field-selector",
            "reason=ScalingReplicaSet,source=deployment-controller",
            "-o",
            "name",
        ])
        .await;
    assert!(scaled.lines().count() >= 1, "{scaled}");
    let scheduled = fx
        .ok(&[
            "get",
            "events.events.k8s.io",
            "-A",
            "--field-selector",
            "reportingController=default-scheduler,regarding.kind=Pod",
            "-o",
            "name",
        ])
        .await;
    assert!(scheduled.lines().count() >= 1, "{scheduled}");
    let (ok, _, err) = fx
        .run(&["get", "configmaps", "-A", "--field-selector", "data.x=y"])
        .await;
    assert!(
        !ok && err.contains("field label not supported: data.x"),
        "{err}"
    );
    let headless = fx
        .ok(&[
            "get",
            "services",
            "-A",
            "--field-selector",
            "spec.clusterIP=None",
            "-o",
            "name",
        ])
        .await;
    assert!(headless.lines().all(|l| l.ends_with("-db")), "{headless}");
}

#[tokio::test]
async fn create_configmap_sends_protobuf_and_is_stored() {
    let Some(fx) = Kubectl::start("kinds-configmap").await else {
        return;
    };
    let out = fx
        .ok(&[
            "create",
            "configmap",
            "x",
            "-n",
            "default",
            "--from-literal=a=b",
            "--from-literal=c=d",
        ])
        .await;
    assert!(out.contains("configmap/x created"), "{out}");
    let data = fx
        .ok(&[
            "get",
            "configmap",
            "x",
            "-n",
            "default",
            "-o",
            "jsonpath={.data.a},{.data.c}",
        ])
        .await;
    assert_eq!(data, "b,d");
    let (ok, _, err) = fx
        .run(&[
            "create",
            "configmap",
            "x",
            "-n",
            "default",
            "--from-literal=a=b",
        ])
        .await;
    assert!(!ok && err.contains("already exists"), "{err}");
}
