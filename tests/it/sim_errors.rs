//! Bad input gets the real server's Status errors, never a panic or a hang.

use axum::http::{Method, Request, StatusCode};
use kscope_sim::{FaultSpec, Faults, Sim, SimConfig, SimHandle};
use kube::Client;
use kube::client::Body;
use serde_json::Value;

async fn start() -> (SimHandle, Client) {
    let sim = Sim::start(SimConfig::with_size(30, 2, 2))
        .await
        .expect("sim starts");
    let mut config = sim.kube_config().await.expect("kube config");
    config.default_retry = false;
    let client = Client::try_from(config).expect("client");
    (sim, client)
}

/// Sends a raw request and returns the status code and the decoded body.
async fn call(
    client: &Client,
    method: Method,
    path: &str,
    content_type: &str,
    body: &str,
) -> (StatusCode, Value) {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("Content-Type", content_type)
        .body(Body::from(body.as_bytes().to_vec()))
        .expect("request");
    let response = client.send(request).await.expect("response");
    let status = response.status();
    let bytes = response.into_body().collect_bytes().await.expect("body");
    let value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, value)
}

/// The Status shape every error carries.
fn assert_status(code: StatusCode, body: &Value, reason: &str) {
    assert_eq!(body["kind"], "Status", "{body}");
    assert_eq!(body["apiVersion"], "v1");
    assert_eq!(body["metadata"], serde_json::json!({}));
    assert_eq!(body["status"], "Failure");
    assert_eq!(body["code"], code.as_u16());
    assert_eq!(body["reason"], reason, "{body}");
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
}

const JSON: &str = "application/json";
const PODS: &str = "/api/v1/namespaces/default/pods";

#[tokio::test]
async fn malformed_and_invalid_bodies() {
    let (sim, client) = start().await;
    for body in ["{not json", "[1,2]", "", "\"pod\""] {
        let (code, status) = call(&client, Method::POST, PODS, JSON, body).await;
        assert_eq!(code, StatusCode::BAD_REQUEST, "{body:?}");
        assert_status(code, &status, "BadRequest");
    }
    let no_containers = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{}}"#;
    let (code, status) = call(&client, Method::POST, PODS, JSON, no_containers).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_status(code, &status, "Invalid");
    assert_eq!(status["details"]["causes"][0]["field"], "spec.containers");

    let bad_name =
        r#"{"metadata":{"name":"Bad_Name"},"spec":{"containers":[{"name":"a","image":"b"}]}}"#;
    let (code, status) = call(&client, Method::POST, PODS, JSON, bad_name).await;
    assert_status(code, &status, "Invalid");

    for shape in [
        r#"{"metadata":"x"}"#,
        r#"{"metadata":{"name":"p","labels":"x"},"spec":{"containers":[{"name":"a","image":"b"}]}}"#,
        r#"{"metadata":{"name":"p","annotations":{"a":1}},"spec":{"containers":[{"name":"a","image":"b"}]}}"#,
        r#"{"metadata":{"name":"p"},"spec":[1]}"#,
    ] {
        let (code, status) = call(&client, Method::POST, PODS, JSON, shape).await;
        assert_status(code, &status, "BadRequest");
    }
    let protobuf = "application/vnd.kubernetes.protobuf";
    // An envelope with no object in it does not decode: 400, as a real server answers.
    let (code, status) = call(&client, Method::POST, PODS, protobuf, "k8s\0").await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    assert_status(code, &status, "BadRequest");
    let (code, status) = call(&client, Method::POST, PODS, "application/cbor", "{}").await;
    assert_eq!(code, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_status(code, &status, "UnsupportedMediaType");
    let wrong_kind = r#"{"kind":"Node","apiVersion":"v1","metadata":{"name":"x"}}"#;
    let (code, status) = call(&client, Method::POST, PODS, JSON, wrong_kind).await;
    assert_status(code, &status, "BadRequest");

    let good = r#"{"metadata":{"name":"ok"},"spec":{"containers":[{"name":"a","image":"b"}]}}"#;
    let (code, created) = call(&client, Method::POST, PODS, JSON, good).await;
    assert_eq!(code, StatusCode::CREATED);
    assert!(created["metadata"]["uid"].is_string());
    let (code, status) = call(&client, Method::POST, PODS, JSON, good).await;
    assert_eq!(code, StatusCode::CONFLICT);
    assert_status(code, &status, "AlreadyExists");

    let in_missing_ns = call(
        &client,
        Method::POST,
        "/api/v1/namespaces/nope/pods",
        JSON,
        good,
    )
    .await;
    assert_status(in_missing_ns.0, &in_missing_ns.1, "NotFound");

    let stale = r#"{"metadata":{"name":"ok","resourceVersion":"1"},"spec":{"containers":[{"name":"a","image":"c"}]}}"#;
    let (code, status) = call(&client, Method::PUT, &format!("{PODS}/ok"), JSON, stale).await;
    assert_status(code, &status, "Conflict");

    let (code, status) = call(
        &client,
        Method::PATCH,
        &format!("{PODS}/ok"),
        "application/apply-patch+yaml",
        "{}",
    )
    .await;
    // Server-side apply without a field manager is refused as a real server refuses it.
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_status(code, &status, "Invalid");
    assert!(
        status["message"]
            .as_str()
            .is_some_and(|m| m.contains("fieldManager: Required value")),
        "{status}"
    );
    let (code, status) = call(
        &client,
        Method::PATCH,
        &format!("{PODS}/ok"),
        "application/merge-patch+json",
        "{oops",
    )
    .await;
    assert_status(code, &status, "BadRequest");
    let (code, patched) = call(
        &client,
        Method::PATCH,
        &format!("{PODS}/ok"),
        "application/strategic-merge-patch+json",
        r#"{"metadata":{"labels":{"x":"y"}}}"#,
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(patched["metadata"]["labels"]["x"], "y");
    for patch in [
        r#"{"metadata":"gone"}"#,
        r#"{"metadata":{"labels":{"x":5}}}"#,
        "[]",
        "7",
    ] {
        let (code, status) = call(
            &client,
            Method::PATCH,
            &format!("{PODS}/ok"),
            "application/merge-patch+json",
            patch,
        )
        .await;
        assert_status(code, &status, "BadRequest");
    }
    let (code, status) = call(
        &client,
        Method::PUT,
        &format!("{PODS}/ok"),
        JSON,
        r#"{"metadata":{"name":"ok","labels":["a"]},"spec":{"containers":[{"name":"a","image":"c"}]}}"#,
    )
    .await;
    assert_status(code, &status, "BadRequest");
    sim.shutdown().await;
}

#[tokio::test]
async fn unknown_paths_and_missing_objects() {
    let (sim, client) = start().await;
    for path in [
        "/api/v1/widgets",
        "/apis/apps/v1/pods",
        "/apis/batch/v2/jobs",
        "/api/v1/namespaces/default/pods/x/log",
        "/nonsense",
    ] {
        let (code, status) = call(&client, Method::GET, path, JSON, "").await;
        assert_eq!(code, StatusCode::NOT_FOUND, "{path}");
        assert_status(code, &status, "NotFound");
    }
    let (code, status) = call(&client, Method::GET, &format!("{PODS}/missing"), JSON, "").await;
    assert_status(code, &status, "NotFound");
    assert_eq!(status["message"], "pods \"missing\" not found");
    assert_eq!(status["details"]["name"], "missing");
    let (code, status) = call(
        &client,
        Method::DELETE,
        &format!("{PODS}/missing"),
        JSON,
        "",
    )
    .await;
    assert_status(code, &status, "NotFound");
    let (code, status) = call(
        &client,
        Method::DELETE,
        "/api/v1/namespaces/kube-system",
        JSON,
        "",
    )
    .await;
    assert_eq!(code, StatusCode::FORBIDDEN);
    assert_status(code, &status, "Forbidden");
    let (code, status) = call(&client, Method::PUT, PODS, JSON, "{}").await;
    assert_status(code, &status, "MethodNotAllowed");
    sim.shutdown().await;
}

#[tokio::test]
async fn bad_query_parameters() {
    let (sim, client) = start().await;
    for (query, reason) in [
        ("labelSelector=app%20in%20(x", "BadRequest"),
        ("labelSelector=a%3D%3D%3Db", "BadRequest"),
        ("fieldSelector=spec.foo%3D1", "BadRequest"),
        ("fieldSelector=nonsense", "BadRequest"),
        ("resourceVersion=abc", "BadRequest"),
        ("resourceVersion=-1", "BadRequest"),
        ("limit=ten", "BadRequest"),
        ("continue=%%%", "BadRequest"),
        ("continue=bm90LWpzb24", "BadRequest"),
        ("continue=abc&resourceVersion=5", "BadRequest"),
        ("resourceVersionMatch=Exact", "Invalid"),
        ("resourceVersion=0&resourceVersionMatch=Exact", "Invalid"),
        (
            "resourceVersion=5&resourceVersionMatch=Sometimes",
            "Invalid",
        ),
        ("watch=true&timeoutSeconds=soon", "BadRequest"),
        ("watch=true&resourceVersion=x", "BadRequest"),
    ] {
        let (code, status) = call(&client, Method::GET, &format!("{PODS}?{query}"), JSON, "").await;
        assert!(code.is_client_error(), "{query}: {code}");
        assert_status(code, &status, reason);
    }
    let (code, status) = call(
        &client,
        Method::GET,
        "/api/v1/nodes?fieldSelector=spec.nodeName%3Dx",
        JSON,
        "",
    )
    .await;
    assert_status(code, &status, "BadRequest");
    assert_eq!(
        status["message"],
        "field label not supported: spec.nodeName"
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn requests_without_the_token_get_401() {
    let (sim, _) = start().await;
    let mut config = sim.kube_config().await.expect("kube config");
    config.auth_info = Default::default();
    let anonymous = Client::try_from(config).expect("client");
    for path in ["/api/v1/pods", "/version", "/api", "/sim/state"] {
        let (code, status) = call(&anonymous, Method::GET, path, JSON, "").await;
        assert_eq!(code, StatusCode::UNAUTHORIZED, "{path}");
        assert_status(code, &status, "Unauthorized");
    }
    sim.shutdown().await;
}

#[tokio::test]
async fn admin_endpoint_controls_the_sim() {
    let (sim, client) = start().await;
    let (code, state) = call(&client, Method::GET, "/sim/state", JSON, "").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(state["counts"]["pods"], 30);
    let (code, _) = call(&client, Method::PUT, "/sim/churn", JSON, r#"{"rate": 50}"#).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(sim.churn().rate, 50.0);
    let (code, _) = call(
        &client,
        Method::PUT,
        "/sim/faults",
        JSON,
        r#"{"error_ratio": 1.0}"#,
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    let (code, status) = call(&client, Method::GET, "/api/v1/pods", JSON, "").await;
    assert_status(code, &status, "InternalError");
    let (code, _) = call(&client, Method::PUT, "/sim/faults", JSON, "{}").await;
    assert_eq!(code, StatusCode::OK);
    let (code, status) = call(
        &client,
        Method::PUT,
        "/sim/faults",
        JSON,
        r#"{"explode": 1}"#,
    )
    .await;
    assert_status(code, &status, "BadRequest");
    let (code, restarted) = call(&client, Method::POST, "/sim/restart", JSON, "").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(restarted["epoch"], 1);
    let (code, truth) = call(&client, Method::GET, "/sim/truth/nodes", JSON, "").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(truth.as_object().map(|o| o.len()), Some(2));
    sim.shutdown().await;
}

/// `forbid=` refuses every verb on the chosen resources with RBAC's 403 while the rest is
/// served; the admin endpoint switches it at run time.
#[tokio::test]
async fn forbidden_resources_get_rbac_403s() {
    let spec: FaultSpec = "forbid=nodes,deployments".parse().expect("fault parses");
    let mut faults = Faults::default();
    faults.apply(&spec);
    let sim = Sim::start(SimConfig::with_size(30, 2, 2).faults(faults))
        .await
        .expect("sim starts");
    let mut config = sim.kube_config().await.expect("kube config");
    config.default_retry = false;
    let client = Client::try_from(config).expect("client");
    for (path, message) in [
        (
            "/api/v1/nodes",
            r#"nodes is forbidden: User "kscope-sim" cannot list resource "nodes" in API group "" at the cluster scope"#,
        ),
        (
            "/api/v1/nodes?watch=true",
            r#"nodes is forbidden: User "kscope-sim" cannot watch resource "nodes" in API group "" at the cluster scope"#,
        ),
        (
            "/apis/apps/v1/namespaces/default/deployments/web",
            r#"deployments.apps "web" is forbidden"#,
        ),
    ] {
        let (code, status) = call(&client, Method::GET, path, JSON, "").await;
        assert_eq!(code, StatusCode::FORBIDDEN, "{path}");
        assert_status(code, &status, "Forbidden");
        let text = status["message"].as_str().unwrap_or_default();
        assert!(text.starts_with(message), "{path}: {text}");
    }
    let (_, status) = call(&client, Method::GET, "/api/v1/nodes", JSON, "").await;
    assert_eq!(status["details"], serde_json::json!({"kind": "nodes"}));
    let (code, _) = call(&client, Method::GET, "/api/v1/pods", JSON, "").await;
    assert_eq!(code, StatusCode::OK);

    let (code, _) = call(&client, Method::PUT, "/sim/faults", JSON, "{}").await;
    assert_eq!(code, StatusCode::OK);
    let (code, _) = call(&client, Method::GET, "/api/v1/nodes", JSON, "").await;
    assert_eq!(code, StatusCode::OK);
    let forbid_pods = r#"{"forbidden": ["pods"]}"#;
    let (code, state) = call(&client, Method::PUT, "/sim/faults", JSON, forbid_pods).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(state["forbidden"], serde_json::json!(["pods"]));
    let (code, status) = call(&client, Method::GET, PODS, JSON, "").await;
    assert_status(code, &status, "Forbidden");
    assert!(
        status["message"]
            .as_str()
            .is_some_and(|m| m.ends_with(r#"in the namespace "default""#)),
        "{status}"
    );
    sim.shutdown().await;
}
