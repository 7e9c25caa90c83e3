//! kscope never shows another server's state, or a stale one, as current: the sim answers a
//! watch from a resourceVersion it has not reached as kube-apiserver does, and a client whose
//! server was killed and restarted (with a lower resourceVersion, or a new CA) ends equal to
//! the new truth or says that it is not current.

use std::time::Duration;

use futures::StreamExt;
use kscope::sim::{Sim, SimConfig};

/// The body and code of a GET through kube's client, whatever the code.
async fn get_raw(client: &kube::Client, path: &str) -> (u16, serde_json::Value) {
    let request = http::Request::get(path).body(Vec::new()).expect("request");
    let response = client
        .send(request.map(kube::client::Body::from))
        .await
        .expect("an answer");
    let code = response.status().as_u16();
    let body = http_body_util::BodyExt::collect(response.into_body())
        .await
        .expect("body")
        .to_bytes();
    let json = serde_json::from_slice(&body).expect("a JSON body");
    (code, json)
}

/// A watch from a resourceVersion the sim has not reached waits (3 s, as kube-apiserver's
/// watch cache) and fails with kube-apiserver's 504 Status; one the sim reaches while it
/// waits is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_from_an_unreached_resource_version_is_504_too_large() {
    let sim = Sim::start(SimConfig::with_size(20, 2, 1))
        .await
        .expect("sim");
    let mut config = sim.kube_config().await.expect("config");
    config.default_retry = false;
    let client = kube::Client::try_from(config).expect("client");
    let current = sim.position().rv;
    let ahead = current + 1000;
    let (code, status) = get_raw(
        &client,
        &format!("/api/v1/pods?watch=true&resourceVersion={ahead}"),
    )
    .await;
    assert_eq!(code, 504, "{status}");
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["reason"], "Timeout");
    assert_eq!(status["code"], 504);
    assert_eq!(
        status["message"],
        format!("Timeout: Too large resource version: {ahead}, current: {current}")
    );
    assert_eq!(
        status["details"]["causes"][0]["reason"],
        "ResourceVersionTooLarge"
    );
    assert_eq!(status["details"]["retryAfterSeconds"], 1);

    // A version the churn reaches while the watch waits is served from there.
    sim.set_churn_rate(50.0);
    let next = current + 1;
    let pods: kube::Api<k8s_openapi::api::core::v1::Pod> = kube::Api::all(client);
    let mut events = pods
        .watch(
            &kube::api::WatchParams::default().timeout(10),
            &next.to_string(),
        )
        .await
        .expect("a watch the sim can serve")
        .boxed();
    let first = tokio::time::timeout(Duration::from_secs(30), events.next())
        .await
        .expect("an event within the bound")
        .expect("the stream has an event")
        .expect("a decodable event");
    let rv = match first {
        kube::api::WatchEvent::Added(p)
        | kube::api::WatchEvent::Modified(p)
        | kube::api::WatchEvent::Deleted(p) => p.metadata.resource_version,
        kube::api::WatchEvent::Bookmark(b) => Some(b.metadata.resource_version),
        kube::api::WatchEvent::Error(e) => panic!("an error instead of events: {e:?}"),
    };
    let rv: u64 = rv.expect("an RV").parse().expect("numeric");
    assert!(rv > next, "events after {next}, got {rv}");
    sim.shutdown().await;
}
