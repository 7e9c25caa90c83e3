//! CustomResourceDefinitions against the sim, through kubectl and the official Python
//! client: the demo cluster's CRDs and their objects are served; a CRD created with
//! kubectl registers its resource (discovery, printer columns, schema validation and
//! defaulting, status subresource) and deleting it takes its objects; bad input gets the
//! real server's codes and messages and stores nothing. Skipped where a client is absent
//! (failed under CI=true).

use crate::common::kubectl::Kubectl;
use crate::common::python;

/// A namespaced CRD with printer columns (Model, Count, Age); `tests/it/kinds.rs` creates it
/// too.
pub(crate) const GADGET_CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: gadgets
    singular: gadget
    kind: Gadget
    shortNames: [gd]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    additionalPrinterColumns:
    - name: Model
      type: string
      jsonPath: .spec.model
    - name: Count
      type: integer
      jsonPath: .spec.count
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [model]
            properties:
              model:
                type: string
                enum: [alpha, beta]
              count:
                type: integer
                minimum: 0
                maximum: 5
                default: 2
          status:
            type: object
            properties:
              state:
                type: string
"#;

const GADGET: &str = r#"apiVersion: example.com/v1
kind: Gadget
metadata:
  name: g1
  namespace: default
spec:
  model: alpha
  unknown: dropped
"#;

fn words(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[tokio::test]
async fn demo_crds_are_served() {
    let Some(fx) = Kubectl::start("crds-demo").await else {
        return;
    };
    let crds = fx.ok(&["get", "crds"]).await;
    assert!(
        words(crds.lines().next().unwrap_or("")) == "NAME CREATED AT",
        "{crds}"
    );
    assert!(crds.contains("widgets.example.com") && crds.contains("clusterpolicies.example.com"));
    let established = fx
        .ok(&[
            "get",
            "crd",
            "widgets.example.com",
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"Established\")].status}",
        ])
        .await;
    assert_eq!(established, "True");
    let widgets = fx.ok(&["get", "widgets", "-A"]).await;
    assert_eq!(
        words(widgets.lines().next().unwrap_or("")),
        "NAMESPACE NAME SIZE READY AGE",
        "{widgets}"
    );
    assert!(widgets.lines().count() > 1, "{widgets}");
    let wide = fx.ok(&["get", "wd", "-A", "-o", "wide"]).await;
    assert!(
        words(wide.lines().next().unwrap_or("")).contains("PHASE"),
        "{wide}"
    );
    // The CRD's schema is published in OpenAPI v3, so kubectl explain reads it.
    let explained = fx.ok(&["explain", "widgets.spec"]).await;
    assert!(
        explained.contains("size")
            && explained.contains("replicas")
            && explained.contains("Widget"),
        "{explained}"
    );
    let policies = fx.ok(&["get", "clusterpolicies"]).await;
    assert_eq!(
        words(policies.lines().next().unwrap_or("")),
        "NAME ACTION PRIORITY AGE"
    );
    assert_eq!(policies.lines().count(), 4, "{policies}");
    let resources = fx.ok(&["api-resources", "--api-group=example.com"]).await;
    assert!(
        resources
            .lines()
            .any(|l| words(l) == "widgets wd example.com/v1 true Widget"),
        "{resources}"
    );
    assert!(
        resources
            .lines()
            .any(|l| words(l) == "clusterpolicies cpol example.com/v1 false ClusterPolicy"),
        "{resources}"
    );
    // Widgets are in the `all` category.
    let all = fx.ok(&["get", "all", "-n", "payments-prod"]).await;
    assert!(all.contains("widget.example.com/"), "{all}");
}

#[tokio::test]
async fn a_crd_created_with_kubectl_serves_its_resource_until_deleted() {
    let Some(fx) = Kubectl::start("crds-lifecycle").await else {
        return;
    };
    let (ok, _, err) = fx.run(&["get", "gadgets"]).await;
    assert!(!ok && err.contains("doesn't have a resource type"), "{err}");
    let crd = fx.file("crd.yaml", GADGET_CRD);
    fx.ok(&["apply", "-f", &crd]).await;
    let gadget = fx.file("gadget.yaml", GADGET);
    // kubectl asks for strict field validation: the unknown field is refused...
    let (ok, _, err) = fx.run(&["create", "-f", &gadget]).await;
    assert!(
        !ok && err.contains(r#"Gadget in version "v1" cannot be handled as a Gadget: strict decoding error: unknown field "spec.unknown""#),
        "{err}"
    );
    // ...and without it, pruned.
    let created = fx.ok(&["create", "--validate=false", "-f", &gadget]).await;
    assert!(
        created.contains("gadget.example.com/g1 created"),
        "{created}"
    );
    let stored = fx
        .ok(&[
            "get",
            "gd",
            "g1",
            "-n",
            "default",
            "-o",
            "jsonpath={.spec.count}/{.spec.unknown}",
        ])
        .await;
    assert_eq!(stored, "2/", "defaulted and pruned");
    let table = fx.ok(&["get", "gadgets", "-n", "default"]).await;
    let lines: Vec<String> = table.lines().map(words).collect();
    assert_eq!(lines[0], "NAME MODEL COUNT AGE", "{table}");
    assert!(lines[1].starts_with("g1 alpha 2 "), "{table}");
    // Merge and JSON patches apply; a strategic merge patch is refused as on a real server.
    fx.ok(&[
        "patch",
        "gadget",
        "g1",
        "-n",
        "default",
        "--type=merge",
        "-p",
        r#"{"spec":{"count":3}}"#,
    ])
    .await;
    fx.ok(&[
        "patch",
        "gadget",
        "g1",
        "-n",
        "default",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/spec/model","value":"beta"}]"#,
    ])
    .await;
    let (ok, _, err) = fx
        .run(&[
            "patch",
            "gadget",
            "g1",
            "-n",
            "default",
            "--type=strategic",
            "-p",
            r#"{"spec":{"count":4}}"#,
        ])
        .await;
    assert!(
        !ok && err.contains("UnsupportedMediaType") || err.contains("unknown format"),
        "{err}"
    );
    let now = fx
        .ok(&[
            "get",
            "gadget",
            "g1",
            "-n",
            "default",
            "-o",
            "jsonpath={.spec.model}/{.spec.count}",
        ])
        .await;
    assert_eq!(now, "beta/3");
    // The main resource leaves status alone; the status subresource sets it.
    fx.ok(&[
        "patch",
        "gadget",
        "g1",
        "-n",
        "default",
        "--type=merge",
        "-p",
        r#"{"status":{"state":"x"}}"#,
    ])
    .await;
    let state = fx
        .ok(&[
            "get",
            "gadget",
            "g1",
            "-n",
            "default",
            "-o",
            "jsonpath={.status.state}",
        ])
        .await;
    assert_eq!(state, "");
    fx.ok(&[
        "patch",
        "gadget",
        "g1",
        "-n",
        "default",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"state":"on"}}"#,
    ])
    .await;
    let state = fx
        .ok(&[
            "get",
            "gadget",
            "g1",
            "-n",
            "default",
            "-o",
            "jsonpath={.status.state}",
        ])
        .await;
    assert_eq!(state, "on");
    // A CR violating its schema: 422 with the field errors, nothing stored.
    let bad = fx.file(
        "bad.yaml",
        &GADGET
            .replace("name: g1", "name: g2")
            .replace("model: alpha", "model: gamma\n  count: 9")
            .replace("  unknown: dropped\n", ""),
    );
    let (ok, _, err) = fx.run(&["create", "-f", &bad]).await;
    assert!(!ok, "{err}");
    // kubectl lists the Status's causes.
    for cause in [
        r#"The Gadget "g2" is invalid: "#,
        r#"* spec.model: Unsupported value: "gamma": supported values: "alpha", "beta""#,
        "* spec.count: Invalid value: 9: spec.count in body should be less than or equal to 5",
    ] {
        assert!(err.contains(cause), "{cause} not in {err}");
    }
    let (ok, _, err) = fx.run(&["get", "gadget", "g2", "-n", "default"]).await;
    assert!(!ok && err.contains("NotFound"), "{err}");
    // Unknown subresource.
    let (ok, _, err) = fx
        .run(&[
            "get",
            "--raw",
            "/apis/example.com/v1/namespaces/default/gadgets/g1/scale",
        ])
        .await;
    assert!(!ok && err.contains("NotFound"), "{err}");
    // Client-side apply of a custom resource, twice: kubectl sends a merge patch.
    let applied = fx.file(
        "applied.yaml",
        &GADGET
            .replace("name: g1", "name: g3")
            .replace("  unknown: dropped\n", ""),
    );
    fx.ok(&["apply", "-f", &applied]).await;
    let again = fx.file(
        "applied2.yaml",
        &GADGET
            .replace("name: g1", "name: g3")
            .replace("  unknown: dropped\n", "  count: 4\n"),
    );
    let out = fx.ok(&["apply", "-f", &again]).await;
    assert!(out.contains("gadget.example.com/g3 configured"), "{out}");
    let count = fx
        .ok(&[
            "get",
            "gadget",
            "g3",
            "-n",
            "default",
            "-o",
            "jsonpath={.spec.count}",
        ])
        .await;
    assert_eq!(count, "4");
    // A CRD's scope cannot change.
    let (ok, _, err) = fx
        .run(&[
            "patch",
            "crd",
            "gadgets.example.com",
            "--type=merge",
            "-p",
            r#"{"spec":{"scope":"Cluster"}}"#,
        ])
        .await;
    assert!(
        !ok && err.contains(r#"spec.scope: Invalid value: "Cluster": field is immutable"#),
        "{err}"
    );
    // Deleting the CRD deletes its objects and its resource.
    fx.ok(&["delete", "crd", "gadgets.example.com"]).await;
    // kubectl's discovery cache may still name the resource; the server no longer has it.
    let (ok, _, err) = fx.run(&["get", "gadgets", "-A"]).await;
    assert!(
        !ok && (err.contains("doesn't have a resource type")
            || err.contains("the server could not find the requested resource")),
        "{err}"
    );
    let (ok, _, err) = fx.run(&["get", "crd", "gadgets.example.com"]).await;
    assert!(!ok && err.contains("NotFound"), "{err}");
    // Created again, it starts empty.
    fx.ok(&["apply", "-f", &crd]).await;
    let (ok, out, err) = fx.run(&["get", "gadgets", "-A"]).await;
    assert!(
        ok && out.is_empty() && err.contains("No resources found"),
        "{out}{err}"
    );
}

#[tokio::test]
async fn an_invalid_crd_is_refused_and_not_stored() {
    let Some(fx) = Kubectl::start("crds-invalid").await else {
        return;
    };
    let bad = GADGET_CRD
        .replace(
            "                type: string\n                enum",
            "                enum",
        )
        .replace("  name: gadgets.example.com", "  name: gadget.example.com");
    let file = fx.file("bad-crd.yaml", &bad);
    let (ok, _, err) = fx.run(&["create", "-f", &file]).await;
    assert!(!ok, "{err}");
    // kubectl lists the Status's causes.
    for cause in [
        r#"The CustomResourceDefinition "gadget.example.com" is invalid: "#,
        r#"* metadata.name: Invalid value: "gadget.example.com": must be spec.names.plural+"."+spec.group"#,
        "* spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[model].type: Required value: must not be empty for specified object fields",
    ] {
        assert!(err.contains(cause), "{cause} not in {err}");
    }
    let (ok, _, err) = fx.run(&["get", "crd", "gadget.example.com"]).await;
    assert!(!ok && err.contains("NotFound"), "{err}");
    let (ok, _, err) = fx.run(&["get", "gadgets"]).await;
    assert!(!ok && err.contains("doesn't have a resource type"), "{err}");
}

/// The official Python client's watch of a custom resource, through create, patch and
/// delete made with its CustomObjectsApi.
const PYTHON_WATCH: &str = r#"
import sys, threading
from kubernetes import client, config, watch
config.load_kube_config(config_file=sys.argv[1])
api = client.CustomObjectsApi()
args = ("example.com", "v1", "default", "widgets")
rv = api.list_namespaced_custom_object(*args)["metadata"]["resourceVersion"]
seen = []
done = threading.Event()
def run():
    w = watch.Watch()
    for e in w.stream(api.list_namespaced_custom_object, *args, resource_version=rv, timeout_seconds=20):
        o = e["object"]
        if o["metadata"]["name"] != "py-widget":
            continue
        seen.append("%s %s %s" % (e["type"], o["spec"]["size"], o["spec"]["replicas"]))
        if e["type"] == "DELETED":
            w.stop()
    done.set()
t = threading.Thread(target=run)
t.start()
body = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "py-widget"}, "spec": {"size": "small"}}
api.create_namespaced_custom_object(*args, body)
api.patch_namespaced_custom_object(*args, "py-widget", {"spec": {"size": "large"}})
api.delete_namespaced_custom_object(*args, "py-widget")
done.wait(30)
print("\n".join(seen))
"#;

#[tokio::test]
async fn python_client_watches_a_custom_resource() {
    let Some(fx) = Kubectl::start("crds-python").await else {
        return;
    };
    let Some(out) = python::run(&fx, "watch.py", PYTHON_WATCH).await else {
        return;
    };
    let events: Vec<&str> = out.lines().collect();
    assert_eq!(
        events,
        ["ADDED small 1", "MODIFIED large 1", "DELETED large 1"],
        "{out}"
    );
}

#[tokio::test]
async fn deleting_a_crd_deletes_its_objects_for_watchers() {
    use futures::{StreamExt, TryStreamExt};
    use kube::api::{
        Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, WatchEvent,
        WatchParams,
    };
    let sim = kscope_sim::Sim::start(kscope_sim::SimConfig::with_size(40, 3, 2))
        .await
        .expect("sim starts");
    let client = sim.client().await.expect("client");
    let widgets = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.com", "v1", "Widget"),
        "widgets",
    );
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &widgets);
    let list = api
        .list(&ListParams::default())
        .await
        .expect("list widgets");
    let before = list.items.len();
    assert!(before > 0);
    let rv = list.metadata.resource_version.expect("list rv");
    let mut events = api
        .watch(&WatchParams::default().timeout(30), &rv)
        .await
        .expect("watch widgets")
        .boxed();
    let crds = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
        "customresourcedefinitions",
    );
    let definitions: Api<DynamicObject> = Api::all_with(client.clone(), &crds);
    definitions
        .delete("widgets.example.com", &DeleteParams::default())
        .await
        .expect("delete the CRD");
    let mut deleted = 0;
    let collect = async {
        while let Some(event) = events.try_next().await.expect("watch event") {
            match event {
                WatchEvent::Deleted(_) => deleted += 1,
                WatchEvent::Modified(_) => {}
                other => panic!("unexpected {other:?}"),
            }
            if deleted == before {
                break;
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(30), collect)
        .await
        .expect("every widget's DELETED arrives");
    assert_eq!(deleted, before);
    assert!(
        definitions
            .get_opt("widgets.example.com")
            .await
            .expect("get")
            .is_none()
    );
    let gone = api.list(&ListParams::default()).await;
    assert!(
        matches!(&gone, Err(kube::Error::Api(s)) if s.code == 404),
        "{gone:?}"
    );
    sim.shutdown().await;
}
