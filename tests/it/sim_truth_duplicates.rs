//! Repeated keys in a server-side apply configuration and in a JSON patch, sent as they
//! are by the official Python client: warned of by default and under `Warn`, refused under
//! `fieldValidation=Strict` in the real server's words, said nothing of under `Ignore`.

use serde_json::{Value, json};

use crate::common::kubectl::Kubectl;

/// Sends `argv[3]` (raw, repeated keys and all) as a PATCH of media type `argv[4]` to path
/// `argv[2]` with the query `argv[5]` (`k=v&...`) through the official Python client's
/// connection pool; prints the code, the Warning headers and, for an error, its Status.
const PYTHON_RAW: &str = r#"
import sys, json
from urllib.parse import parse_qsl
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
api = client.ApiClient()
method, url, headers, _, _ = api.param_serialize(
    method="PATCH", resource_path=sys.argv[2], query_params=parse_qsl(sys.argv[5]),
    header_params={"Content-Type": sys.argv[4]}, body=sys.argv[3],
    auth_settings=["BearerToken"])
# The client's REST layer would encode the string as JSON again: its pool sends it as is.
response = api.rest_client.pool_manager.request(method, url, body=sys.argv[3], headers=headers)
report = {"code": response.status, "warnings": response.headers.getlist("Warning")}
if response.status >= 400:
    report["status"] = json.loads(response.data)
print(json.dumps(report))
"#;

const PATH: &str = "/api/v1/namespaces/default/configmaps/dup";

/// The Python client's raw PATCH (see [`PYTHON_RAW`]), or `None` where it is not installed.
async fn raw_patch(fx: &Kubectl, body: &str, media: &str, query: &str) -> Option<Value> {
    let out =
        crate::common::python::run_with(fx, "raw.py", PYTHON_RAW, &[PATH, body, media, query])
            .await?;
    Some(serde_json::from_str(out.trim()).expect("the script prints JSON"))
}

async fn data(fx: &Kubectl) -> Value {
    let out = fx
        .ok(&[
            "get",
            "cm",
            "dup",
            "-n",
            "default",
            "-o",
            "jsonpath={.data}",
        ])
        .await;
    serde_json::from_str(&out).expect("JSON data")
}

/// An apply configuration that gives `data.a` twice, the second on line 8.
const APPLY: &str = r#"{
  "apiVersion": "v1",
  "kind": "ConfigMap",
  "metadata": {"name": "dup", "namespace": "default"},
  "data": {
    "a": "1",
    "b": "1",
    "a": "2"
  }
}"#;

const APPLY_MEDIA: &str = "application/apply-patch+yaml";

#[tokio::test]
async fn repeated_keys_in_an_apply_configuration_are_warned_of_or_refused_by_line() {
    let Some(fx) = Kubectl::start("dup-apply").await else {
        return;
    };
    // Strict: refused before anything is written, go-yaml's words with the line.
    let Some(refused) = raw_patch(
        &fx,
        APPLY,
        APPLY_MEDIA,
        "fieldManager=py&fieldValidation=Strict",
    )
    .await
    else {
        return;
    };
    assert_eq!(refused["code"], 400, "{refused:#}");
    assert_eq!(
        refused["status"]["message"],
        "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 8: key \"a\" already set in map",
        "{refused:#}"
    );
    assert_eq!(refused["status"]["reason"], "BadRequest", "{refused:#}");
    let (found, _, _) = fx.run(&["get", "cm", "dup", "-n", "default"]).await;
    assert!(!found, "a refused apply created the ConfigMap");
    // No choice is Warn: applied, the last value winning, with a warning.
    let warned = raw_patch(&fx, APPLY, APPLY_MEDIA, "fieldManager=py")
        .await
        .expect("the client ran before");
    assert_eq!(warned["code"], 201, "{warned:#}");
    assert_eq!(
        warned["warnings"],
        json!([r#"299 - "line 8: key \"a\" already set in map""#]),
        "{warned:#}"
    );
    assert_eq!(data(&fx).await, json!({"a": "2", "b": "1"}));
    // On an existing object as well; Ignore says nothing.
    let warned = raw_patch(
        &fx,
        APPLY,
        APPLY_MEDIA,
        "fieldManager=py&fieldValidation=Warn",
    )
    .await
    .expect("the client ran before");
    assert_eq!(warned["code"], 200, "{warned:#}");
    assert_eq!(warned["warnings"].as_array().map(Vec::len), Some(1));
    let ignored = raw_patch(
        &fx,
        APPLY,
        APPLY_MEDIA,
        "fieldManager=py&fieldValidation=Ignore",
    )
    .await
    .expect("the client ran before");
    assert_eq!(ignored["code"], 200, "{ignored:#}");
    assert_eq!(ignored["warnings"], json!([]), "{ignored:#}");
}

#[tokio::test]
async fn repeated_fields_in_a_json_patch_operation_are_warned_of_or_refused() {
    let Some(fx) = Kubectl::start("dup-json-patch").await else {
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
    // The second `path` wins, as the real server's JSON patch decoding keeps the last.
    let patch = r#"[{"op": "add", "path": "/data/b", "value": "1"},
                    {"op": "add", "path": "/data/c", "path": "/data/d", "value": "2"}]"#;
    const MEDIA: &str = "application/json-patch+json";
    let Some(refused) = raw_patch(&fx, patch, MEDIA, "fieldValidation=Strict").await else {
        return;
    };
    assert_eq!(refused["code"], 422, "{refused:#}");
    let status = &refused["status"];
    let message = status["message"].as_str().expect("a message");
    assert!(
        message.starts_with(r#" "" is invalid: patch: Invalid value: ""#)
            && message
                .ends_with(r#": strict decoding error: json patch duplicate field "[1].path""#),
        "{message}"
    );
    assert_eq!(
        status["details"]["causes"][0]["field"], "patch",
        "{status:#}"
    );
    assert_eq!(data(&fx).await, json!({"a": "0"}), "a refused patch wrote");
    let warned = raw_patch(&fx, patch, MEDIA, "").await.expect("ran before");
    assert_eq!(warned["code"], 200, "{warned:#}");
    assert_eq!(
        warned["warnings"],
        json!([r#"299 - "json patch duplicate field \"[1].path\"""#]),
        "{warned:#}"
    );
    assert_eq!(data(&fx).await, json!({"a": "0", "b": "1", "d": "2"}));
}
