//! Writes real clients rely on, driven by kubectl (and kube's client where kubectl has no
//! flag for it): strategic merge patches that keep list items, dry runs that store nothing,
//! finalizers, namespace termination, preconditions, /status and /scale, and the errors bad
//! input gets.

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, Preconditions};

use crate::common::kubectl::Kubectl;

const TWO_CONTAINERS: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: two
  namespace: default
spec:
  replicas: 1
  selector:
    matchLabels: {app: two}
  template:
    metadata:
      labels: {app: two}
    spec:
      containers:
      - name: app
        image: app:1
      - name: proxy
        image: proxy:1
"#;

/// `name=image` of each container of Deployment `two`.
async fn containers(fx: &Kubectl) -> String {
    fx.ok(&[
        "get",
        "deploy",
        "two",
        "-n",
        "default",
        "-o",
        "jsonpath={range .spec.template.spec.containers[*]}{.name}={.image} {end}",
    ])
    .await
    .trim()
    .to_string()
}

#[tokio::test]
async fn client_side_apply_twice_keeps_the_other_container() {
    let Some(fx) = Kubectl::start("apply").await else {
        return;
    };
    // The write path alone: no controller reacts and writes meanwhile.
    fx.sim.set_controllers(false);
    let file = fx.file("two.yaml", TWO_CONTAINERS);
    assert!(fx.ok(&["apply", "-f", &file]).await.contains("created"));
    fx.file("two.yaml", &TWO_CONTAINERS.replace("app:1", "app:2"));
    assert!(fx.ok(&["apply", "-f", &file]).await.contains("configured"));
    assert_eq!(containers(&fx).await, "app=app:2 proxy=proxy:1");
    let stored = fx
        .ok(&["get", "deploy", "two", "-n", "default", "-o", "json"])
        .await;
    assert!(
        !stored.contains("$setElementOrder") && !stored.contains("\"$patch"),
        "a directive was stored: {stored}"
    );
    // Applying the same file again changes nothing, so nothing is written.
    let before = fx.sim.position().rv;
    fx.ok(&["apply", "-f", &file]).await;
    assert_eq!(fx.sim.position().rv, before);
}

#[tokio::test]
async fn diff_and_server_dry_runs_store_nothing() {
    let Some(fx) = Kubectl::start("dryrun").await else {
        return;
    };
    // The write path alone: no controller reacts and writes meanwhile.
    fx.sim.set_controllers(false);
    let file = fx.file("two.yaml", TWO_CONTAINERS);
    fx.ok(&["apply", "-f", &file]).await;
    let before = fx.sim.position().rv;
    fx.file("two.yaml", &TWO_CONTAINERS.replace("app:1", "app:3"));
    let (same, diff, _) = fx.run(&["diff", "-f", &file]).await;
    let changed = |l: &&str| l.starts_with('+') && l.contains("image: app:3");
    assert!(!same && diff.lines().any(|l| changed(&l)), "{diff}");
    assert!(
        fx.ok(&["apply", "--dry-run=server", "-f", &file])
            .await
            .contains("(server dry run)")
    );
    fx.ok(&[
        "scale",
        "deploy",
        "two",
        "-n",
        "default",
        "--replicas=5",
        "--dry-run=server",
    ])
    .await;
    let pod = fx.file(
        "pod.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: dry, namespace: default}\nspec:\n  containers: [{name: c, image: busybox}]\n",
    );
    fx.ok(&["create", "--dry-run=server", "-f", &pod]).await;
    fx.ok(&[
        "delete",
        "--dry-run=server",
        "deploy",
        "two",
        "-n",
        "default",
    ])
    .await;
    assert_eq!(fx.sim.position().rv, before, "a dry run stored something");
    assert_eq!(containers(&fx).await, "app=app:1 proxy=proxy:1");
    let (ok, _, err) = fx.run(&["get", "pod", "dry", "-n", "default"]).await;
    assert!(!ok && err.contains("NotFound"), "{err}");
}

#[tokio::test]
async fn patch_strategic_merge_and_json() {
    let Some(fx) = Kubectl::start("patch").await else {
        return;
    };
    // The write path alone: no controller reacts and writes meanwhile.
    fx.sim.set_controllers(false);
    fx.ok(&["apply", "-f", &fx.file("two.yaml", TWO_CONTAINERS)])
        .await;
    let deploy = ["patch", "deploy", "two", "-n", "default"];
    let patch = |kind: &'static str, body: &'static str| {
        let mut args = deploy.to_vec();
        args.extend(["--type", kind, "-p", body]);
        args
    };
    fx.ok(&patch(
        "strategic",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"proxy","image":"proxy:2"}]}}}}"#,
    ))
    .await;
    assert_eq!(containers(&fx).await, "app=app:1 proxy=proxy:2");
    fx.ok(&patch(
        "json",
        r#"[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"app:9"}]"#,
    ))
    .await;
    assert_eq!(containers(&fx).await, "app=app:9 proxy=proxy:2");
    // A merge patch replaces lists whole.
    fx.ok(&patch(
        "merge",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"solo","image":"solo:1"}]}}}}"#,
    ))
    .await;
    assert_eq!(containers(&fx).await, "solo=solo:1");
    let before = fx.sim.position().rv;
    let (ok, _, err) = fx
        .run(&patch(
            "json",
            r#"[{"op":"test","path":"/spec/replicas","value":42}]"#,
        ))
        .await;
    assert!(
        !ok && err.contains("the server rejected our request due to an error in our request"),
        "{err}"
    );
    let (ok, _, err) = fx
        .run(&patch(
            "strategic",
            r#"{"spec":{"template":{"spec":{"containers":[{"image":"nameless"}]}}}}"#,
        ))
        .await;
    assert!(
        !ok && err.contains("does not contain declared merge key: name"),
        "{err}"
    );
    assert_eq!(
        fx.sim.position().rv,
        before,
        "a failed patch stored something"
    );
}

#[tokio::test]
async fn status_and_scale_subresources() {
    let Some(fx) = Kubectl::start("subresources").await else {
        return;
    };
    // The write path alone: no controller reacts and writes meanwhile.
    fx.sim.set_controllers(false);
    fx.ok(&["apply", "-f", &fx.file("two.yaml", TWO_CONTAINERS)])
        .await;
    let fx = &fx;
    let get = |path: &'static str| async move {
        fx.ok(&["get", "deploy", "two", "-n", "default", "-o", path])
            .await
    };
    fx.ok(&[
        "patch",
        "deploy",
        "two",
        "-n",
        "default",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"replicas":7},"spec":{"replicas":4}}"#,
    ])
    .await;
    assert_eq!(get("jsonpath={.status.replicas}").await, "7");
    assert_eq!(
        get("jsonpath={.spec.replicas}").await,
        "1",
        "status write changed spec"
    );
    fx.ok(&[
        "patch",
        "deploy",
        "two",
        "-n",
        "default",
        "--type=merge",
        "-p",
        r#"{"status":{"replicas":9}}"#,
    ])
    .await;
    assert_eq!(
        get("jsonpath={.status.replicas}").await,
        "7",
        "main write changed status"
    );
    assert!(
        fx.ok(&["scale", "deploy", "two", "-n", "default", "--replicas=3"])
            .await
            .contains("scaled")
    );
    assert_eq!(get("jsonpath={.spec.replicas}").await, "3");
    let scale = fx
        .ok(&[
            "get",
            "--raw",
            "/apis/apps/v1/namespaces/default/deployments/two/scale",
        ])
        .await;
    let scale: serde_json::Value = serde_json::from_str(&scale).expect("Scale JSON");
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["spec"]["replicas"], 3);
    assert_eq!(scale["status"]["selector"], "app=two");
    let (ok, _, err) = fx
        .run(&[
            "get",
            "--raw",
            "/apis/apps/v1/namespaces/default/deployments/two/exec",
        ])
        .await;
    assert!(!ok && err.contains("NotFound"), "{err}");
}

const HELD: &str = r#"apiVersion: v1
kind: Secret
metadata:
  name: held
  namespace: NS
  finalizers: [example.com/hold]
stringData: {a: b}
"#;

#[tokio::test]
async fn finalizers_hold_a_delete_and_namespaces_terminate() {
    let Some(fx) = Kubectl::start("finalizers").await else {
        return;
    };
    fx.ok(&[
        "create",
        "-f",
        &fx.file("held.yaml", &HELD.replace("NS", "default")),
    ])
    .await;
    fx.ok(&["delete", "secret", "held", "-n", "default", "--wait=false"])
        .await;
    let deleting = fx
        .ok(&[
            "get",
            "secret",
            "held",
            "-n",
            "default",
            "-o",
            "jsonpath={.metadata.deletionTimestamp}",
        ])
        .await;
    assert!(!deleting.is_empty(), "no deletionTimestamp");
    let (ok, _, err) = fx
        .run(&[
            "patch",
            "secret",
            "held",
            "-n",
            "default",
            "--type=json",
            "-p",
            r#"[{"op":"add","path":"/metadata/finalizers/-","value":"late"}]"#,
        ])
        .await;
    assert!(!ok && err.contains("no new finalizers"), "{err}");
    fx.ok(&[
        "patch",
        "secret",
        "held",
        "-n",
        "default",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ])
    .await;
    let (ok, _, err) = fx.run(&["get", "secret", "held", "-n", "default"]).await;
    assert!(!ok && err.contains("NotFound"), "{err}");

    // A namespace goes Terminating, refuses new content, has its content deleted by the
    // namespace controller (those with finalizers wait for them, as the conditions say),
    // and goes once it is empty.
    fx.ok(&[
        "create",
        "-f",
        &fx.file(
            "ns.yaml",
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: doomed}\n",
        ),
    ])
    .await;
    fx.ok(&[
        "create",
        "-f",
        &fx.file("held2.yaml", &HELD.replace("NS", "doomed")),
    ])
    .await;
    let plain = HELD
        .replace("NS", "doomed")
        .replace("held", "plain")
        .replace("  finalizers: [example.com/hold]\n", "");
    fx.ok(&["create", "-f", &fx.file("plain.yaml", &plain)])
        .await;
    fx.ok(&["delete", "namespace", "doomed", "--wait=false"])
        .await;
    let ns = namespace_json(&fx, "doomed").await.expect("still there");
    assert_eq!(ns["status"]["phase"], "Terminating");
    assert!(ns["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(ns["spec"]["finalizers"], serde_json::json!(["kubernetes"]));
    let (ok, _, err) = fx
        .run(&["create", "-f", &fx.file("again.yaml", &plain)])
        .await;
    assert!(
        !ok && err.contains("(Forbidden)")
            && err.contains(
                "unable to create new content in namespace doomed because it is being terminated"
            ),
        "{err}"
    );
    let ns = poll(|| async {
        let ns = namespace_json(&fx, "doomed").await?;
        let held = condition(&ns, "NamespaceFinalizersRemaining");
        (held["status"] == "True").then_some(ns)
    })
    .await;
    let content = condition(&ns, "NamespaceContentRemaining");
    assert_eq!(content["status"], "True", "{ns:#}");
    assert_eq!(
        content["message"],
        "Some resources are remaining: secrets. has 1 resource instances"
    );
    assert_eq!(
        condition(&ns, "NamespaceFinalizersRemaining")["message"],
        "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
    );
    assert_eq!(
        condition(&ns, "NamespaceDeletionContentFailure")["status"],
        "False"
    );
    let (ok, _, err) = fx.run(&["get", "secret", "plain", "-n", "doomed"]).await;
    assert!(!ok && err.contains("NotFound"), "{err}");
    assert!(ns["spec"]["finalizers"] == serde_json::json!(["kubernetes"]));
    fx.ok(&[
        "patch",
        "secret",
        "held",
        "-n",
        "doomed",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":[]}}"#,
    ])
    .await;
    // kubectl waits for the namespace to go.
    fx.ok(&["wait", "--for=delete", "namespace/doomed", "--timeout=60s"])
        .await;
    let (ok, _, err) = fx.run(&["get", "ns", "doomed"]).await;
    assert!(!ok && err.contains("NotFound"), "{err}");
}

/// Namespace `name` as JSON, or `None` once it is gone.
async fn namespace_json(fx: &Kubectl, name: &str) -> Option<serde_json::Value> {
    let (ok, out, _) = fx.run(&["get", "ns", name, "-o", "json"]).await;
    ok.then(|| serde_json::from_str(&out).expect("kubectl prints JSON"))
}

fn condition<'a>(ns: &'a serde_json::Value, kind: &str) -> &'a serde_json::Value {
    ns["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == kind))
        .unwrap_or(&serde_json::Value::Null)
}

/// Polls `check` until it gives a value; panics past a bound.
async fn poll<T, F: std::future::Future<Output = Option<T>>>(check: impl Fn() -> F) -> T {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(std::time::Instant::now() < deadline, "never happened");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn deleting_a_namespace_deletes_its_content_one_by_one_and_kubectl_waits() {
    use futures::TryStreamExt;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use kube::api::{WatchEvent, WatchParams};

    let Some(fx) = Kubectl::start("nsdelete").await else {
        return;
    };
    fx.ok(&["create", "namespace", "short-lived"]).await;
    for i in 0..3 {
        fx.ok(&[
            "create",
            "configmap",
            &format!("cm-{i}"),
            "-n",
            "short-lived",
            "--from-literal=a=b",
        ])
        .await;
    }
    let client = fx.sim.client().await.expect("client");
    let rv = fx.sim.position().rv.to_string();
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), "short-lived");
    let namespaces: Api<Namespace> = Api::all(client);
    let params = WatchParams::default().timeout(20);
    let cm_watch = configmaps.watch(&params, &rv).await.expect("watch");
    let ns_watch = namespaces
        .watch(&params.clone().fields("metadata.name=short-lived"), &rv)
        .await
        .expect("watch");
    // `kubectl delete ns` waits for the deletion by default, and succeeds.
    let out = fx.ok(&["delete", "namespace", "short-lived"]).await;
    assert!(out.contains("namespace \"short-lived\" deleted"), "{out}");
    let (ok, _, err) = fx.run(&["get", "ns", "short-lived"]).await;
    assert!(!ok && err.contains("NotFound"), "{err}");

    let rv_of = |meta: &kube::api::ObjectMeta| -> u64 {
        meta.resource_version
            .as_deref()
            .and_then(|rv| rv.parse().ok())
            .expect("resourceVersion")
    };
    let mut deleted_cms: Vec<u64> = Vec::new();
    let mut cm_watch = Box::pin(cm_watch);
    while let Some(event) = cm_watch.try_next().await.expect("event") {
        if let WatchEvent::Deleted(cm) = event {
            deleted_cms.push(rv_of(&cm.metadata));
            if deleted_cms.len() == 3 {
                break;
            }
        }
    }
    assert_eq!(
        deleted_cms.len(),
        3,
        "each ConfigMap's delete is its own event"
    );
    deleted_cms.dedup();
    assert_eq!(deleted_cms.len(), 3, "at its own resourceVersion");
    let mut ns_events = Vec::new();
    let mut ns_watch = Box::pin(ns_watch);
    while let Some(event) = ns_watch.try_next().await.expect("event") {
        match event {
            WatchEvent::Modified(ns) => {
                let finalizers = ns.spec.and_then(|s| s.finalizers).unwrap_or_default();
                let phase = ns.status.and_then(|s| s.phase).unwrap_or_default();
                ns_events.push(format!("MODIFIED {phase} {finalizers:?}"));
            }
            WatchEvent::Deleted(ns) => {
                assert!(
                    rv_of(&ns.metadata) > *deleted_cms.iter().max().expect("some"),
                    "the namespace goes after its content"
                );
                ns_events.push("DELETED".to_string());
                break;
            }
            _ => {}
        }
    }
    assert_eq!(
        ns_events.first().map(String::as_str),
        Some("MODIFIED Terminating [\"kubernetes\"]")
    );
    assert_eq!(
        ns_events[ns_events.len() - 2..],
        ["MODIFIED Terminating []".to_string(), "DELETED".to_string()],
        "{ns_events:?}"
    );
}

#[tokio::test]
async fn system_namespaces_cannot_be_deleted() {
    let Some(fx) = Kubectl::start("immortal").await else {
        return;
    };
    for ns in ["default", "kube-system", "kube-public"] {
        let (ok, _, err) = fx.run(&["delete", "namespace", ns]).await;
        assert!(
            !ok && err.contains(&format!(
                "Error from server (Forbidden): namespaces \"{ns}\" is forbidden: this namespace may not be deleted"
            )),
            "{err}"
        );
        let phase = fx
            .ok(&["get", "ns", ns, "-o", "jsonpath={.status.phase}"])
            .await;
        assert_eq!(phase, "Active");
    }
}

#[tokio::test]
async fn delete_preconditions_conflict() {
    let Some(fx) = Kubectl::start("preconditions").await else {
        return;
    };
    fx.ok(&[
        "create",
        "-f",
        &fx.file(
            "held.yaml",
            &HELD
                .replace("NS", "default")
                .replace("  finalizers: [example.com/hold]\n", ""),
        ),
    ])
    .await;
    let secrets: Api<Secret> = Api::namespaced(fx.sim.client().await.expect("client"), "default");
    let wrong = DeleteParams {
        preconditions: Some(Preconditions {
            uid: Some("not-the-uid".into()),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    let err = secrets.delete("held", &wrong).await.expect_err("409");
    let kube::Error::Api(status) = err else {
        panic!("not an API error: {err}");
    };
    assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
    assert!(
        status.message.contains("Precondition failed: UID"),
        "{}",
        status.message
    );
    let secret = secrets.get("held").await.expect("still there");
    let right = DeleteParams {
        preconditions: Some(Preconditions {
            uid: secret.metadata.uid.clone(),
            resource_version: secret.metadata.resource_version.clone(),
        }),
        ..DeleteParams::default()
    };
    secrets.delete("held", &right).await.expect("deleted");
    assert!(secrets.get_opt("held").await.expect("get").is_none());
}

#[tokio::test]
async fn kubectl_create_sends_protobuf_and_it_is_decoded() {
    let Some(fx) = Kubectl::start("protobuf").await else {
        return;
    };
    assert!(fx.ok(&["create", "ns", "team"]).await.contains("created"));
    fx.ok(&[
        "create",
        "deployment",
        "web",
        "-n",
        "team",
        "--image=nginx:1.27",
        "--replicas=2",
        "--port=80",
    ])
    .await;
    fx.ok(&[
        "create",
        "secret",
        "generic",
        "creds",
        "-n",
        "team",
        "--from-literal=user=admin",
    ])
    .await;
    let deployment: serde_json::Value = serde_json::from_str(
        &fx.ok(&["get", "deploy", "web", "-n", "team", "-o", "json"])
            .await,
    )
    .expect("JSON");
    let spec = &deployment["spec"];
    assert_eq!(spec["replicas"], 2);
    assert_eq!(spec["selector"]["matchLabels"]["app"], "web");
    let container = &spec["template"]["spec"]["containers"][0];
    assert_eq!(
        (&container["name"], &container["image"]),
        (
            &serde_json::json!("nginx"),
            &serde_json::json!("nginx:1.27")
        )
    );
    assert_eq!(container["ports"][0]["containerPort"], 80);
    // Go's zero values are not stored as fields, and the server's defaults are.
    assert!(container.get("workingDir").is_none() && container.get("stdin").is_none());
    assert_eq!(spec["strategy"]["type"], "RollingUpdate");
    let user = fx
        .ok(&[
            "get",
            "secret",
            "creds",
            "-n",
            "team",
            "-o",
            "jsonpath={.data.user}",
        ])
        .await;
    assert_eq!(user, "YWRtaW4=");
}

#[tokio::test]
async fn an_undecodable_protobuf_body_is_a_400_and_stores_nothing() {
    let Some(fx) = Kubectl::start("badproto").await else {
        return;
    };
    // The write path alone: no controller reacts and writes meanwhile.
    fx.sim.set_controllers(false);
    let client = fx.sim.client().await.expect("client");
    let before = fx.sim.position().rv;
    for body in [&b"k8s\0\x0a\x05\x01"[..], b"not protobuf"] {
        let request = http::Request::post("/api/v1/namespaces")
            .header("content-type", "application/vnd.kubernetes.protobuf")
            .body(body.to_vec())
            .expect("request");
        let err = client.request_text(request).await.expect_err("refused");
        let kube::Error::Api(status) = err else {
            panic!("not an API error: {err}");
        };
        assert_eq!((status.code, status.reason.as_str()), (400, "BadRequest"));
    }
    assert_eq!(fx.sim.position().rv, before);
}

/// The managers of Deployment `name` and their operations, from managedFields.
async fn managers(fx: &Kubectl, name: &str) -> Vec<(String, String)> {
    let out = fx
        .ok(&[
            "get",
            "deploy",
            name,
            "-n",
            "default",
            "--show-managed-fields",
            "-o",
            "json",
        ])
        .await;
    let object: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    object["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .map(|m| {
            (
                m["manager"].as_str().unwrap_or("").to_string(),
                m["operation"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn server_side_apply_owns_fields_and_conflicts() {
    let Some(fx) = Kubectl::start("ssa").await else {
        return;
    };
    // The write path alone: no controller reacts and writes meanwhile.
    fx.sim.set_controllers(false);
    let config = TWO_CONTAINERS.replace(
        "  namespace: default\n",
        "  namespace: default\n  labels: {team: a}\n",
    );
    let file = fx.file("two.yaml", &config);
    assert!(
        fx.ok(&["apply", "--server-side", "-f", &file])
            .await
            .contains("serverside-applied")
    );
    assert_eq!(
        managers(&fx, "two").await,
        [("kubectl".into(), "Apply".into())]
    );
    fx.ok(&[
        "patch",
        "deploy",
        "two",
        "-n",
        "default",
        "--type=merge",
        "--field-manager=autoscaler",
        "-p",
        r#"{"spec":{"replicas":4}}"#,
    ])
    .await;
    fx.file("two.yaml", &config.replace("replicas: 1", "replicas: 2"));
    let before = fx.sim.position().rv;
    let (ok, _, err) = fx.run(&["apply", "--server-side", "-f", &file]).await;
    assert!(
        !ok && err.contains("conflict with \"autoscaler\" using apps/v1: .spec.replicas"),
        "{err}"
    );
    assert_eq!(
        fx.sim.position().rv,
        before,
        "a refused apply stored something"
    );
    fx.ok(&["apply", "--server-side", "--force-conflicts", "-f", &file])
        .await;
    let replicas = fx
        .ok(&[
            "get",
            "deploy",
            "two",
            "-n",
            "default",
            "-o",
            "jsonpath={.spec.replicas}",
        ])
        .await;
    assert_eq!(replicas, "2");
    // Forced, the field left the autoscaler, which owned nothing else and is gone.
    assert_eq!(
        managers(&fx, "two").await,
        [("kubectl".into(), "Apply".into())]
    );
    // A field the applier stops applying, and nobody else owns, is removed; the other
    // container stays, as the list merges by name.
    let fewer = config
        .replace("replicas: 1", "replicas: 2")
        .replace("  labels: {team: a}\n", "")
        .replace("      - name: proxy\n        image: proxy:1\n", "");
    fx.file("two.yaml", &fewer);
    fx.ok(&["apply", "--server-side", "-f", &file]).await;
    let labels = fx
        .ok(&[
            "get",
            "deploy",
            "two",
            "-n",
            "default",
            "-o",
            "jsonpath={.metadata.labels.team}",
        ])
        .await;
    assert_eq!(labels, "", "the label the applier dropped is still there");
    assert_eq!(containers(&fx).await, "app=app:1");
    let before = fx.sim.position().rv;
    fx.file("two.yaml", &fewer.replace("app:1", "app:5"));
    fx.ok(&["apply", "--server-side", "--dry-run=server", "-f", &file])
        .await;
    assert_eq!(fx.sim.position().rv, before);
    // Apply creates what is not there, and needs a field manager.
    let pod = fx.file(
        "pod.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: applied, namespace: default}\nspec:\n  containers: [{name: c, image: busybox}]\n",
    );
    assert!(
        fx.ok(&["apply", "--server-side", "-f", &pod])
            .await
            .contains("serverside-applied")
    );
    fx.ok(&["get", "pod", "applied", "-n", "default"]).await;
}

#[tokio::test]
async fn strict_field_validation_refuses_unknown_fields() {
    let Some(fx) = Kubectl::start("strict").await else {
        return;
    };
    // The write path alone: no controller reacts and writes meanwhile.
    fx.sim.set_controllers(false);
    let typo = TWO_CONTAINERS.replace(
        "        image: proxy:1\n",
        "        image: proxy:1\n        imagee: proxy:1\n",
    );
    let file = fx.file("typo.yaml", &typo);
    let before = fx.sim.position().rv;
    let (ok, _, err) = fx.run(&["create", "-f", &file]).await;
    assert!(
        !ok && err.contains(
            "strict decoding error: unknown field \"spec.template.spec.containers[1].imagee\""
        ),
        "{err}"
    );
    assert_eq!(
        fx.sim.position().rv,
        before,
        "a refused create stored something"
    );
    // Without Strict the unknown field is dropped, as decoding into the Go types drops it.
    fx.ok(&["create", "--validate=false", "-f", &file]).await;
    let stored = fx
        .ok(&["get", "deploy", "two", "-n", "default", "-o", "json"])
        .await;
    assert!(!stored.contains("imagee"), "{stored}");
}
