//! Writes where the sim once answered differently from kube-apiserver, each driven by kubectl
//! as a real client: server-side apply's co-ownership of list items, validation's 422s, and
//! the defaults the server fills on every write.

use serde_json::Value;

use crate::common::kubectl::Kubectl;

const WEB: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: web:1
"#;

/// What a second manager (a sidecar injector, say) applies to Deployment `web`: an env var
/// in kubectl's container, and a container of its own.
const SIDECAR: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  template:
    spec:
      containers:
      - name: main
        env: [{name: B, value: b}]
      - name: side
        image: side:1
"#;

/// Deployment `name` in `default`, as JSON.
async fn deployment(fx: &Kubectl, name: &str) -> Value {
    let out = fx
        .ok(&["get", "deploy", name, "-n", "default", "-o", "json"])
        .await;
    serde_json::from_str(&out).expect("JSON")
}

#[tokio::test]
async fn server_side_apply_co_owns_list_items() {
    let Some(fx) = Kubectl::start("truth-ssa").await else {
        return;
    };
    fx.sim.set_controllers(false);
    let web = fx.file("web.yaml", WEB);
    fx.ok(&["apply", "--server-side", "-f", &web]).await;
    let side = fx.file("side.yaml", SIDECAR);
    let (ok, _, err) = fx
        .run(&[
            "apply",
            "--server-side",
            "--field-manager=injector",
            "-f",
            &side,
        ])
        .await;
    assert!(
        ok,
        "the second manager conflicted on a co-owned item: {err}"
    );
    // kubectl re-applies its unchanged manifest: nothing of its own changed, no conflict,
    // and what the injector owns stays.
    let (ok, _, err) = fx.run(&["apply", "--server-side", "-f", &web]).await;
    assert!(ok, "re-applying an unchanged manifest conflicted: {err}");
    let containers = deployment(&fx, "web").await["spec"]["template"]["spec"]["containers"].clone();
    assert_eq!(containers[0]["env"][0]["name"], "B", "{containers}");
    assert_eq!(containers[1]["name"], "side", "{containers}");
    // A different value for a field another manager owns still conflicts.
    fx.file(
        "side.yaml",
        &SIDECAR
            .replace("web:1", "x")
            .replace("env: [{name: B, value: b}]", "image: web:2"),
    );
    let (ok, _, err) = fx
        .run(&[
            "apply",
            "--server-side",
            "--field-manager=injector",
            "-f",
            &side,
        ])
        .await;
    assert!(
        !ok && err.contains(
            "conflict with \"kubectl\" using apps/v1: .spec.template.spec.containers[name=\"main\"].image"
        ),
        "{err}"
    );
}

#[tokio::test]
async fn switching_from_client_side_to_server_side_apply_does_not_conflict() {
    let Some(fx) = Kubectl::start("truth-csa").await else {
        return;
    };
    fx.sim.set_controllers(false);
    let web = fx.file("web.yaml", WEB);
    fx.ok(&["apply", "-f", &web]).await;
    // The same manifest with a new image, now applied server-side: the fields kubectl's
    // client-side apply set are kubectl's to change.
    fx.file("web.yaml", &WEB.replace("web:1", "web:2"));
    let (ok, _, err) = fx.run(&["apply", "--server-side", "-f", &web]).await;
    assert!(ok, "the switch to server-side apply conflicted: {err}");
    let image = &deployment(&fx, "web").await["spec"]["template"]["spec"]["containers"][0]["image"];
    assert_eq!(image, "web:2");
    // kubectl then hands client-side apply's fields to its apply manager by rewriting
    // managedFields, which the server takes as given.
    assert_eq!(
        managers(&fx).await,
        ["kubectl", "kubectl-last-applied"],
        "client-side apply's manager still owns fields"
    );
    let (ok, _, err) = fx.run(&["apply", "--server-side", "-f", &web]).await;
    assert!(ok, "re-applying conflicted: {err}");
}

/// The managers of Deployment `web`, in managedFields' order.
async fn managers(fx: &Kubectl) -> Vec<String> {
    let out = fx
        .ok(&[
            "get",
            "deploy",
            "web",
            "-n",
            "default",
            "--show-managed-fields",
            "-o",
            "json",
        ])
        .await;
    serde_json::from_str::<Value>(&out).expect("JSON")["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .map(|m| m["manager"].as_str().unwrap_or("").to_string())
        .collect()
}

#[tokio::test]
async fn first_apply_to_an_object_without_managed_fields_shares_its_list_items() {
    let Some(fx) = Kubectl::start("truth-bfa").await else {
        return;
    };
    fx.sim.set_controllers(false);
    let web = fx.file("web.yaml", WEB);
    fx.ok(&["create", "-f", &web]).await;
    // An object whose managedFields were cleared: its first apply hands what is there to
    // `before-first-apply`, whose list items the applier shares.
    fx.ok(&[
        "patch",
        "deploy",
        "web",
        "-n",
        "default",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/metadata/managedFields","value":[{}]}]"#,
    ])
    .await;
    let side = fx.file("side.yaml", SIDECAR);
    let (ok, _, err) = fx
        .run(&[
            "apply",
            "--server-side",
            "--field-manager=injector",
            "-f",
            &side,
        ])
        .await;
    assert!(ok, "{err}");
    assert_eq!(managers(&fx).await, ["before-first-apply", "injector"]);
}

/// Runs kubectl expecting a refusal; returns its stderr.
async fn refused(fx: &Kubectl, args: &[&str]) -> String {
    let (ok, out, err) = fx.run(args).await;
    assert!(!ok, "kubectl {args:?} was accepted: {out}");
    err
}

#[tokio::test]
async fn validation_refuses_as_the_real_server_with_its_messages() {
    let Some(fx) = Kubectl::start("truth-validate").await else {
        return;
    };
    fx.sim.set_controllers(false);
    let cases = [
        (
            WEB.replace("replicas: 1", "replicas: -1"),
            "The Deployment \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            WEB.replace(
                "  namespace: default\n",
                "  namespace: default\n  labels: {\"bad key\": ok}\n",
            ),
            "metadata.labels: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        ),
        (
            WEB.replace(
                "  namespace: default\n",
                "  namespace: default\n  labels: {ok: \"-bad\"}\n",
            ),
            "metadata.labels: Invalid value: \"-bad\": a valid label must be an empty string or consist of alphanumeric characters",
        ),
        (
            WEB.replace(
                "      containers:\n",
                "      restartPolicy: Never\n      containers:\n",
            ),
            "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"",
        ),
        (
            WEB.replace(
                "image: web:1",
                "image: web:1\n        ports: [{containerPort: 70000}]",
            ),
            "spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
        ),
        (
            WEB.replace("        image: web:1\n", ""),
            "spec.template.spec.containers[0].image: Required value",
        ),
    ];
    for (manifest, message) in cases {
        let file = fx.file("bad.yaml", &manifest);
        let err = refused(&fx, &["apply", "-f", &file]).await;
        assert!(err.contains(message), "wanted {message:?} in {err}");
    }
    // The same checks after a patch.
    let web = fx.file("web.yaml", WEB);
    fx.ok(&["apply", "-f", &web]).await;
    let err = refused(
        &fx,
        &[
            "patch",
            "deploy",
            "web",
            "-n",
            "default",
            "--type=json",
            "-p",
            r#"[{"op":"remove","path":"/spec/template/spec/containers/0/image"}]"#,
        ],
    )
    .await;
    assert!(
        err.contains("spec.template.spec.containers[0].image: Required value"),
        "{err}"
    );
}

const POD: &str = r#"apiVersion: v1
kind: Pod
metadata:
  name: solo
  namespace: default
spec:
  containers:
  - name: main
    image: web:1
"#;

#[tokio::test]
async fn pod_fields_other_than_images_are_immutable() {
    let Some(fx) = Kubectl::start("truth-immutable").await else {
        return;
    };
    fx.sim.set_controllers(false);
    let pod = fx.file("pod.yaml", POD);
    fx.ok(&["apply", "-f", &pod]).await;
    let forbidden = "The Pod \"solo\" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`";
    for patch in [
        r#"{"spec":{"nodeName":"node-9"}}"#,
        r#"{"spec":{"containers":[{"name":"main","command":["sh"]}]}}"#,
    ] {
        let err = refused(&fx, &["patch", "pod", "solo", "-n", "default", "-p", patch]).await;
        assert!(err.contains(forbidden), "{patch}: {err}");
    }
    // The image may change, by apply as by a replace of the stored pod.
    fx.file("pod.yaml", &POD.replace("web:1", "web:2"));
    fx.ok(&["apply", "-f", &pod]).await;
    let stored = fx
        .ok(&["get", "pod", "solo", "-n", "default", "-o", "json"])
        .await;
    let replaced = fx.file("stored.json", &stored.replace("web:2", "web:3"));
    fx.ok(&["replace", "-f", &replaced]).await;
    let image = fx
        .ok(&[
            "get",
            "pod",
            "solo",
            "-n",
            "default",
            "-o",
            "jsonpath={.spec.containers[0].image}",
        ])
        .await;
    assert_eq!(image, "web:3");
}

/// `kubectl get KIND NAME -n default -o jsonpath=PATH`.
async fn field(fx: &Kubectl, kind: &str, name: &str, path: &str) -> String {
    fx.ok(&[
        "get",
        kind,
        name,
        "-n",
        "default",
        "-o",
        &format!("jsonpath={path}"),
    ])
    .await
}

#[tokio::test]
async fn every_write_is_defaulted() {
    let Some(fx) = Kubectl::start("truth-defaults").await else {
        return;
    };
    fx.sim.set_controllers(false);
    // A strategy given in part gets the rest.
    let web = fx.file(
        "web.yaml",
        &WEB.replace(
            "  replicas: 1\n",
            "  replicas: 1\n  strategy:\n    rollingUpdate: {maxSurge: 1}\n",
        ),
    );
    fx.ok(&["apply", "-f", &web]).await;
    assert_eq!(
        field(&fx, "deploy", "web", "{.spec.strategy.rollingUpdate.maxSurge}/{.spec.strategy.rollingUpdate.maxUnavailable}/{.spec.strategy.type}").await,
        "1/25%/RollingUpdate"
    );
    // A container and a port a patch adds are defaulted as created ones are.
    fx.ok(&[
        "patch",
        "deploy",
        "web",
        "-n",
        "default",
        "--type=json",
        "-p",
        r#"[{"op":"add","path":"/spec/template/spec/containers/-","value":{"name":"side","image":"side","ports":[{"containerPort":8080}]}}]"#,
    ])
    .await;
    let side = "{.spec.template.spec.containers[1]}";
    let side: Value = serde_json::from_str(&field(&fx, "deploy", "web", side).await).unwrap();
    assert_eq!(side["imagePullPolicy"], "Always", "{side}");
    assert_eq!(
        side["terminationMessagePath"], "/dev/termination-log",
        "{side}"
    );
    assert_eq!(side["terminationMessagePolicy"], "File", "{side}");
    assert_eq!(side["ports"][0]["protocol"], "TCP", "{side}");

    // A Service gets its type, a ClusterIP from the service CIDR, target ports, families
    // and affinity.
    let service = fx.file(
        "svc.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\nspec:\n  selector: {app: web}\n  ports: [{port: 80}]\n",
    );
    fx.ok(&["create", "-f", &service]).await;
    let spec: Value = serde_json::from_str(&field(&fx, "svc", "web", "{.spec}").await).unwrap();
    let ip = spec["clusterIP"].as_str().unwrap_or("");
    assert!(ip.starts_with("172.20."), "{spec}");
    assert_eq!(spec["clusterIPs"][0], ip, "{spec}");
    assert_eq!(spec["type"], "ClusterIP", "{spec}");
    assert_eq!(spec["ports"][0]["targetPort"], 80, "{spec}");
    assert_eq!(spec["ports"][0]["protocol"], "TCP", "{spec}");
    assert_eq!(spec["ipFamilies"][0], "IPv4", "{spec}");
    assert_eq!(spec["sessionAffinity"], "None", "{spec}");

    // A pod runs as the default ServiceAccount with its token mounted, and its QoS class
    // follows its resources.
    let resources = [
        ("", "BestEffort"),
        ("    resources: {requests: {cpu: 100m}}\n", "Burstable"),
        (
            "    resources: {limits: {cpu: 100m, memory: 64Mi}}\n",
            "Guaranteed",
        ),
    ];
    for (i, (resources, class)) in resources.iter().enumerate() {
        let name = format!("qos-{i}");
        let manifest = POD.replace("solo", &name) + resources;
        let file = fx.file("pod.yaml", &manifest);
        fx.ok(&["create", "-f", &file]).await;
        assert_eq!(field(&fx, "pod", &name, "{.status.qosClass}").await, *class);
    }
    let spec: Value = serde_json::from_str(&field(&fx, "pod", "qos-0", "{.spec}").await).unwrap();
    assert_eq!(spec["serviceAccountName"], "default", "{spec}");
    let volume = spec["volumes"][0]["name"].as_str().unwrap_or("");
    assert!(volume.starts_with("kube-api-access-"), "{spec}");
    assert_eq!(
        spec["containers"][0]["volumeMounts"][0],
        serde_json::json!({"name": volume, "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"})
    );

    // A new namespace has its default ServiceAccount and the cluster's CA bundle.
    fx.ok(&["create", "namespace", "fresh"]).await;
    fx.ok(&["get", "serviceaccount", "default", "-n", "fresh"])
        .await;
    let ca = fx
        .ok(&[
            "get",
            "configmap",
            "kube-root-ca.crt",
            "-n",
            "fresh",
            "-o",
            "jsonpath={.data.ca\\.crt}",
        ])
        .await;
    assert!(ca.contains("BEGIN CERTIFICATE"), "{ca}");
}

#[tokio::test]
async fn duplicate_fields_are_refused_under_strict_and_warned_of_under_warn() {
    let Some(fx) = Kubectl::start("truth-duplicates").await else {
        return;
    };
    fx.sim.set_controllers(false);
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup","namespace":"default"},"data":{"a":"1","a":"2"}}"#;
    let file = fx.file("dup.json", body);
    let path = "/api/v1/namespaces/default/configmaps";
    let err = refused(
        &fx,
        &[
            "create",
            "--raw",
            &format!("{path}?fieldValidation=Strict"),
            "-f",
            &file,
        ],
    )
    .await;
    assert!(
        err.contains(
            r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "data.a""#
        ),
        "{err}"
    );
    let (ok, _, err) = fx
        .run(&[
            "create",
            "--raw",
            &format!("{path}?fieldValidation=Warn"),
            "-f",
            &file,
        ])
        .await;
    assert!(ok, "{err}");
    assert!(
        err.contains(r#"Warning: duplicate field "data.a""#),
        "{err}"
    );
    let value = fx
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
    assert_eq!(value, "2", "the last of the repeated fields is kept");
}

/// The pods a controller makes are classed by their resources as a client's are: a template
/// that asks for none gives BestEffort pods, not Burstable ones.
#[tokio::test]
async fn pods_a_controller_makes_get_their_qos_class() {
    let Some(fx) = Kubectl::start("truth-controller-qos").await else {
        return;
    };
    let web = fx.file("web.yaml", WEB);
    fx.ok(&["apply", "-f", &web]).await;
    let deadline = tokio::time::Instant::now() + crate::common::wait::HANG_GUARD;
    let classes = loop {
        let classes = fx
            .ok(&[
                "get",
                "pods",
                "-n",
                "default",
                "-l",
                "app=web",
                "-o",
                "jsonpath={.items[*].status.qosClass}",
            ])
            .await;
        if !classes.trim().is_empty() {
            break classes;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no pod of Deployment web within {:?}",
            crate::common::wait::HANG_GUARD
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    assert_eq!(classes.trim(), "BestEffort");
}
