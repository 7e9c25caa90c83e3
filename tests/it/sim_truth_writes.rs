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
    let (ok, _, err) = fx.run(&["apply", "--server-side", "-f", &web]).await;
    assert!(ok, "re-applying conflicted: {err}");
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
    let object = deployment(&fx, "web").await;
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
    let managers: Vec<String> =
        serde_json::from_str::<Value>(&out).expect("JSON")["metadata"]["managedFields"]
            .as_array()
            .expect("managedFields")
            .iter()
            .map(|m| m["manager"].as_str().unwrap_or("").to_string())
            .collect();
    assert_eq!(managers, ["before-first-apply", "injector"], "{object}");
}
