//! Details of a real server's answers that clients read: Audit-Id, metadata-only lists,
//! Table's includeObject, the legacy watch of one named object, the continue token a 410
//! carries, and faults that reset to the sim's own defaults. Over real HTTPS with kube's
//! client.

use http::Request;
use k8s_openapi::api::core::v1::Namespace;
use kscope_sim::{Faults, Sim, SimConfig, SimHandle};
use kube::Client;
use kube::api::{Api, PostParams};
use serde_json::Value;

async fn start(config: SimConfig) -> (SimHandle, Client) {
    let sim = Sim::start(config).await.expect("sim starts");
    let mut kube_config = sim.kube_config().await.expect("kube config");
    kube_config.default_retry = false;
    let client = Client::try_from(kube_config).expect("client");
    (sim, client)
}

/// GET `uri` with `accept`; the status code, the Audit-Id header and the JSON body.
async fn get(client: &Client, uri: &str, accept: &str) -> (u16, Option<String>, Value) {
    let request = Request::get(uri)
        .header("accept", accept)
        .body(Vec::new())
        .expect("request");
    let response = client
        .send(request.map(Into::into))
        .await
        .expect("response");
    let code = response.status().as_u16();
    let audit = response
        .headers()
        .get("audit-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = response.into_body().collect_bytes().await.expect("body");
    let text = String::from_utf8_lossy(&body);
    let value = text
        .lines()
        .next()
        .and_then(|line| serde_json::from_str(line).ok())
        .unwrap_or(Value::Null);
    (code, audit, value)
}

const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

#[tokio::test]
async fn answers_carry_what_clients_read() {
    let (sim, client) = start(SimConfig::with_size(10, 1, 1)).await;
    let (code, audit, list) = get(
        &client,
        "/api/v1/pods?limit=3",
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
    )
    .await;
    assert_eq!(code, 200);
    assert!(audit.is_some_and(|id| id.len() == 36), "no Audit-Id");
    assert_eq!(list["kind"], "PartialObjectMetadataList");
    assert_eq!(list["items"].as_array().map(Vec::len), Some(3));
    assert_eq!(list["items"][0]["kind"], "PartialObjectMetadata");
    assert!(list["items"][0]["spec"].is_null() && list["items"][0]["metadata"]["name"].is_string());
    assert!(list["metadata"]["continue"].is_string());

    let (_, _, none) = get(&client, "/api/v1/namespaces?includeObject=None", TABLE).await;
    assert!(none["rows"][0].get("object").is_none(), "{none}");
    let (_, _, whole) = get(&client, "/api/v1/namespaces?includeObject=Object", TABLE).await;
    assert_eq!(whole["rows"][0]["object"]["kind"], "Namespace");
    assert!(whole["rows"][0]["object"]["status"].is_object());
    let (_, _, meta) = get(&client, "/api/v1/namespaces", TABLE).await;
    assert_eq!(meta["rows"][0]["object"]["kind"], "PartialObjectMetadata");
    let (code, _, bad) = get(&client, "/api/v1/namespaces?includeObject=All", TABLE).await;
    assert_eq!((code, bad["reason"].as_str()), (422, Some("Invalid")));

    // The legacy watch of one object streams that object alone.
    let (code, _, event) = get(
        &client,
        "/api/v1/namespaces/kube-system?watch=true&timeoutSeconds=1",
        "application/json",
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(event["type"], "ADDED");
    assert_eq!(event["object"]["metadata"]["name"], "kube-system");
    sim.shutdown().await;
}

/// Creates `n` namespaces, each one write.
async fn write(client: &Client, prefix: &str, n: usize) {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    for i in 0..n {
        let mut ns = Namespace::default();
        ns.metadata.name = Some(format!("{prefix}-{i}"));
        namespaces
            .create(&PostParams::default(), &ns)
            .await
            .expect("create");
    }
}

#[tokio::test]
async fn an_expired_continue_carries_the_next_token_and_faults_reset() {
    let (sim, client) = start(SimConfig::with_size(10, 1, 1)).await;
    let (_, _, first) = get(&client, "/api/v1/namespaces?limit=2", "application/json").await;
    let token = first["metadata"]["continue"]
        .as_str()
        .expect("a continue token")
        .to_string();
    sim.set_faults(Faults {
        history: Some(2),
        ..Faults::default()
    });
    write(&client, "zz-filler", 4).await;
    let (code, _, status) = get(
        &client,
        &format!("/api/v1/namespaces?limit=2&continue={token}"),
        "application/json",
    )
    .await;
    assert_eq!((code, status["reason"].as_str()), (410, Some("Expired")));
    let next = status["metadata"]["continue"]
        .as_str()
        .expect("410 carries metadata.continue");
    let (code, _, rest) = get(
        &client,
        &format!("/api/v1/namespaces?limit=100&continue={next}"),
        "application/json",
    )
    .await;
    assert_eq!(code, 200);
    let names: Vec<&str> = rest["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str())
        .collect();
    assert!(
        names.contains(&"zz-filler-3") && !names.contains(&"default"),
        "{names:?}"
    );

    // Faults with no history restore the sim's own window (10,000 events): a watch from
    // before the next writes is served, not 410.
    sim.set_faults(Faults::default());
    let before = sim.position().rv;
    write(&client, "after", 5).await;
    let (code, _, event) = get(
        &client,
        &format!("/api/v1/namespaces?watch=true&resourceVersion={before}&timeoutSeconds=1"),
        "application/json",
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(event["type"], "ADDED", "{event}");
    assert_eq!(event["object"]["metadata"]["name"], "after-0");
    sim.shutdown().await;
}

#[tokio::test]
async fn health_endpoints_answer_ok() {
    let (sim, client) = start(SimConfig::with_size(5, 1, 1)).await;
    for path in ["/healthz", "/livez", "/readyz"] {
        let request = Request::get(path).body(Vec::new()).expect("request");
        let text = client.request_text(request).await.expect(path);
        assert_eq!(text, "ok", "{path}");
        let verbose = Request::get(format!("{path}?verbose"))
            .body(Vec::new())
            .expect("request");
        let text = client.request_text(verbose).await.expect(path);
        assert!(text.ends_with("check passed\n"), "{text}");
    }
    sim.shutdown().await;
}

#[tokio::test]
async fn delete_collection_removes_what_the_selector_matches() {
    use k8s_openapi::api::core::v1::Secret;
    use kube::api::{DeleteParams, ListParams};
    let (sim, client) = start(SimConfig::with_size(5, 1, 2)).await;
    let secrets: Api<Secret> = Api::all(client.clone());
    let tls = ListParams::default().fields("type=kubernetes.io/tls");
    let before = secrets.list(&tls).await.expect("list").items.len();
    assert_eq!(before, 2);
    let namespaced: Api<Secret> = Api::namespaced(client, "payments-prod");
    let deleted = namespaced
        .delete_collection(&DeleteParams::default(), &tls)
        .await
        .expect("deletecollection");
    let gone = deleted.left().expect("the deleted objects").items;
    assert_eq!(gone.len(), 1);
    assert_eq!(secrets.list(&tls).await.expect("list").items.len(), 1);
    // A dry run deletes nothing.
    let dry = DeleteParams {
        dry_run: true,
        ..DeleteParams::default()
    };
    let rv = sim.position().rv;
    namespaced
        .delete_collection(&dry, &ListParams::default())
        .await
        .expect("dry run");
    assert_eq!(sim.position().rv, rv);
    let err = secrets
        .delete_collection(&DeleteParams::default(), &ListParams::default())
        .await
        .expect_err("all namespaces at once");
    assert!(matches!(err, kube::Error::Api(s) if s.code == 405));
    sim.shutdown().await;
}
