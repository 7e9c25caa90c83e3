//! `fieldValidation` as kube-apiserver 1.32 applies it, seen through kubectl and the official
//! Python client: no directive is `Warn` (the write succeeds, unknown fields dropped, the last
//! of repeated fields kept, a `Warning` header for each), `Strict` refuses in the decoder's
//! words, `Ignore` drops silently, on every write path and for YAML bodies too; server-side
//! apply refuses an unknown field whatever the directive.

use serde_json::{Value, json};

use crate::common::kubectl::Kubectl;

/// Sends each request of `argv[2]` (a JSON list of `[method, path, query, media type,
/// body]`, the body raw, repeated keys and all) through the official Python client's
/// connection pool; prints a JSON list of the code, the Warning headers and, for an error,
/// the Status of each.
const PYTHON_RAW: &str = r#"
import sys, json
from urllib.parse import parse_qsl
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
api = client.ApiClient()
reports = []
for method, path, query, media, body in json.loads(sys.argv[2]):
    method, url, headers, _, _ = api.param_serialize(
        method=method, resource_path=path, query_params=parse_qsl(query),
        header_params={"Content-Type": media}, body=body, auth_settings=["BearerToken"])
    # The client's REST layer would encode the string as JSON again: its pool sends it as is.
    response = api.rest_client.pool_manager.request(method, url, body=body, headers=headers)
    report = {"code": response.status, "warnings": response.headers.getlist("Warning")}
    if response.status >= 400:
        report["status"] = json.loads(response.data)
    reports.append(report)
print(json.dumps(reports))
"#;

/// The Python client's raw requests (see [`PYTHON_RAW`]), or `None` where it is not
/// installed.
async fn raw(fx: &Kubectl, requests: &[[&str; 5]]) -> Option<Vec<Value>> {
    let requests = serde_json::to_string(requests).expect("requests as JSON");
    let out = crate::common::python::run_with(fx, "raw.py", PYTHON_RAW, &[&requests]).await?;
    Some(serde_json::from_str(out.trim()).expect("the script prints JSON"))
}

/// The Warning headers of a report as kubectl would print them, without `299 - "..."`.
fn warnings(report: &Value) -> Vec<String> {
    report["warnings"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|w| {
            let text = w.as_str().expect("a header");
            let quoted = text.strip_prefix("299 - ").expect("a 299 warning");
            serde_json::from_str(quoted).expect("a quoted warning")
        })
        .collect()
}

async fn stored(fx: &Kubectl, args: &[&str]) -> Value {
    let mut all = vec!["get"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-n", "default", "-o", "json"]);
    serde_json::from_str(&fx.ok(&all).await).expect("JSON")
}

/// A Deployment with two fields its kind does not declare.
const UNKNOWN: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 1
  foo: bar
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: nginx:1.27
        imagee: typo
"#;

#[tokio::test]
async fn kubectl_is_warned_of_unknown_fields_which_are_dropped() {
    let Some(fx) = Kubectl::start("fv-kubectl").await else {
        return;
    };
    fx.sim.set_controllers(false);
    let file = fx.file("web.yaml", UNKNOWN);
    // Create, then the client-side apply's strategic merge patch.
    for verb in ["create", "apply"] {
        let (ok, _, err) = fx.run(&[verb, "--validate=warn", "-f", &file]).await;
        assert!(ok, "{verb}: {err}");
        assert!(
            err.contains(r#"Warning: unknown field "spec.foo""#)
                && err.contains(
                    r#"Warning: unknown field "spec.template.spec.containers[0].imagee""#
                ),
            "{verb}: {err}"
        );
    }
    let web = stored(&fx, &["deploy", "web"]).await;
    assert!(web["spec"].get("foo").is_none(), "{:#}", web["spec"]);
    let container = &web["spec"]["template"]["spec"]["containers"][0];
    assert!(container.get("imagee").is_none(), "{container:#}");
    // kubectl patch asks nothing: the server's default is Warn.
    let (ok, _, err) = fx
        .run(&[
            "patch",
            "deploy",
            "web",
            "-n",
            "default",
            "-p",
            r#"{"spec":{"bar":1}}"#,
        ])
        .await;
    assert!(
        ok && err.contains(r#"Warning: unknown field "spec.bar""#),
        "{err}"
    );
    // Replace (PUT) under Warn, then Ignore, which says nothing.
    let (ok, _, err) = fx.run(&["replace", "--validate=warn", "-f", &file]).await;
    assert!(
        ok && err.contains(r#"Warning: unknown field "spec.foo""#),
        "{err}"
    );
    let (ok, _, err) = fx.run(&["replace", "--validate=false", "-f", &file]).await;
    assert!(ok && !err.contains("Warning"), "{err}");
    let web = stored(&fx, &["deploy", "web"]).await;
    assert!(!web.to_string().contains("\"bar\""), "{web:#}");
}

#[tokio::test]
async fn server_side_apply_refuses_an_unknown_field_whatever_the_directive() {
    let Some(fx) = Kubectl::start("fv-ssa").await else {
        return;
    };
    fx.sim.set_controllers(false);
    let file = fx.file("web.yaml", &UNKNOWN.replace("        imagee: typo\n", ""));
    for validate in ["--validate=warn", "--validate=false"] {
        let (ok, _, err) = fx
            .run(&["apply", "--server-side", validate, "-f", &file])
            .await;
        assert!(
            !ok && err.contains(
                "failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.foo: field not declared in schema"
            ),
            "{validate}: {err}"
        );
    }
    let (found, _, _) = fx.run(&["get", "deploy", "web", "-n", "default"]).await;
    assert!(!found, "a refused apply created the Deployment");
}

/// A ConfigMap in YAML that repeats `data.a` (again on line 9) and gives `metadata.foo`.
const YAML: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: dup
  namespace: default
  foo: x
data:
  a: \"1\"
  a: \"2\"
";

const COLLECTION: &str = "/api/v1/namespaces/default/configmaps";
const OBJECT: &str = "/api/v1/namespaces/default/configmaps/dup";

#[tokio::test]
async fn yaml_bodies_are_judged_by_field_validation() {
    let Some(fx) = Kubectl::start("fv-yaml").await else {
        return;
    };
    fx.sim.set_controllers(false);
    const MEDIA: &str = "application/yaml";
    let Some(reports) = raw(
        &fx,
        &[
            ["POST", COLLECTION, "fieldValidation=Strict", MEDIA, YAML],
            ["POST", COLLECTION, "", MEDIA, YAML],
            ["PUT", OBJECT, "fieldValidation=Ignore", MEDIA, YAML],
            ["PUT", OBJECT, "fieldValidation=Warn", MEDIA, YAML],
        ],
    )
    .await
    else {
        return;
    };
    let refused = &reports[0];
    assert_eq!(refused["code"], 400, "{refused:#}");
    assert_eq!(
        refused["status"]["message"],
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: yaml: unmarshal errors:\n  line 9: key \"a\" already set in map, unknown field \"metadata.foo\"",
        "{refused:#}"
    );
    let created = &reports[1];
    assert_eq!(created["code"], 201, "{created:#}");
    assert_eq!(
        warnings(created),
        [
            r#"line 9: key "a" already set in map"#,
            r#"unknown field "metadata.foo""#
        ]
    );
    assert_eq!(reports[2]["code"], 200, "{:#}", reports[2]);
    assert_eq!(warnings(&reports[2]), Vec::<String>::new());
    assert_eq!(reports[3]["code"], 200, "{:#}", reports[3]);
    assert_eq!(warnings(&reports[3]).len(), 2, "{:#}", reports[3]);
    let dup = stored(&fx, &["cm", "dup"]).await;
    assert_eq!(dup["data"], json!({"a": "2"}));
    assert!(dup["metadata"].get("foo").is_none(), "{dup:#}");
}

#[tokio::test]
async fn json_writes_warn_by_default_and_drop_unknown_fields_on_every_path() {
    let Some(fx) = Kubectl::start("fv-json").await else {
        return;
    };
    fx.sim.set_controllers(false);
    const JSON: &str = "application/json";
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup","namespace":"default"},"data":{"a":"1","a":"2"},"foo":1}"#;
    let merge = r#"{"data":{"b":"1"},"bar":1}"#;
    let strategic = r#"{"data":{"c":"1"},"baz":1}"#;
    let json_patch = r#"[{"op":"add","path":"/metadata/qux","value":"x"}]"#;
    let Some(reports) = raw(
        &fx,
        &[
            ["POST", COLLECTION, "", JSON, body],
            [
                "PATCH",
                OBJECT,
                "fieldValidation=Strict",
                "application/merge-patch+json",
                merge,
            ],
            ["PATCH", OBJECT, "", "application/merge-patch+json", merge],
            [
                "PATCH",
                OBJECT,
                "fieldValidation=Ignore",
                "application/strategic-merge-patch+json",
                strategic,
            ],
            [
                "PATCH",
                OBJECT,
                "",
                "application/json-patch+json",
                json_patch,
            ],
            ["POST", COLLECTION, "fieldValidation=strict", JSON, body],
        ],
    )
    .await
    else {
        return;
    };
    assert_eq!(reports[0]["code"], 201, "{:#}", reports[0]);
    assert_eq!(
        warnings(&reports[0]),
        [r#"duplicate field "data.a""#, r#"unknown field "foo""#]
    );
    let refused = &reports[1];
    assert_eq!(refused["code"], 422, "{refused:#}");
    let message = refused["status"]["message"].as_str().expect("a message");
    assert!(
        message.ends_with(r#": strict decoding error: unknown field "bar""#),
        "{message}"
    );
    assert_eq!(reports[2]["code"], 200, "{:#}", reports[2]);
    assert_eq!(warnings(&reports[2]), [r#"unknown field "bar""#]);
    assert_eq!(reports[3]["code"], 200, "{:#}", reports[3]);
    assert_eq!(warnings(&reports[3]), Vec::<String>::new());
    assert_eq!(reports[4]["code"], 200, "{:#}", reports[4]);
    assert_eq!(warnings(&reports[4]), [r#"unknown field "metadata.qux""#]);
    // A directive the server does not know is refused, naming those it does.
    let unknown = &reports[5];
    assert_eq!(unknown["code"], 422, "{unknown:#}");
    assert_eq!(
        unknown["status"]["details"]["causes"][0]["message"],
        r#"Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn""#,
        "{unknown:#}"
    );
    let dup = stored(&fx, &["cm", "dup"]).await;
    assert_eq!(dup["data"], json!({"a": "2", "b": "1", "c": "1"}));
    let text = dup.to_string();
    for field in ["\"foo\"", "\"bar\"", "\"baz\"", "\"qux\""] {
        assert!(!text.contains(field), "{field} kept: {dup:#}");
    }
}
