//! A pair's wait for its second stream, as the kubelet's: a request whose data stream never
//! comes fails on its error stream after the stream creation timeout, and is forgotten, so a
//! later stream of its request id starts a pair of its own. On the sim's clock, paused, and
//! once over real HTTP (a plain SPDY upgrade through the sim's router) with a short timeout.

use std::time::Duration;

use axum::http::{self, StatusCode, header};
use hyper_util::rt::TokioIo;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use tokio_util::codec::Framed;

use super::{Client, STREAM_CREATION_TIMEOUT, start};
use crate::spdy::{Codec, Frame};
use crate::{Sim, SimConfig};

const GET_HEALTHZ: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: web\r\n\r\n";

/// What the kubelet writes on the error stream of a pair that timed out.
fn timed_out(text: &[u8], request: &str) -> bool {
    let text = String::from_utf8_lossy(text);
    text.starts_with("(conn=")
        && text.ends_with(&format!(
            ", request={request}) timed out waiting for streams"
        ))
}

#[tokio::test(start_paused = true)]
async fn a_pair_without_its_data_stream_times_out_on_its_error_stream_and_is_forgotten() {
    let (mut client, _session) = start();
    let opened = tokio::time::Instant::now();
    client.open(1, "error", "8080", "0").await;
    let Frame::Data {
        stream_id: 1,
        fin: false,
        data,
    } = client.next().await
    else {
        panic!("the timeout's message on the error stream, which stays open");
    };
    assert!(timed_out(&data, "0"), "{data:?}");
    assert!(opened.elapsed() >= STREAM_CREATION_TIMEOUT);

    // Request 0 again: a pair of its own, served; the first error stream hears nothing.
    client.open(3, "error", "8080", "0").await;
    client.open(5, "data", "8080", "0").await;
    client.data(5, GET_HEALTHZ, true).await;
    let (answer, error) = client.until_both_close(5, 3).await;
    let answer = String::from_utf8(answer).unwrap();
    assert!(answer.ends_with("\r\n\r\nok\n"), "{answer}");
    assert!(error.is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_second_data_stream_of_a_served_request_waits_alone_then_is_forgotten() {
    let (mut client, _session) = start();
    client.open(1, "error", "8080", "0").await;
    client.open(3, "data", "8080", "0").await;
    client.data(3, GET_HEALTHZ, true).await;
    let (answer, _) = client.until_both_close(3, 1).await;
    assert!(answer.ends_with(b"ok\n"));

    // The served pair is gone: this data stream starts another, which no error stream
    // joins before the timeout, so it fails with nobody to tell.
    client.open(5, "data", "8080", "0").await;
    client.data(5, GET_HEALTHZ, true).await;
    tokio::time::sleep(STREAM_CREATION_TIMEOUT + Duration::from_secs(1)).await;
    // An error stream of request 0 after that is a pair of its own again, and waits.
    client.open(7, "error", "8080", "0").await;
    let Frame::Data {
        stream_id: 7,
        fin: false,
        data,
    } = client.next().await
    else {
        panic!("stream 7 times out; the data stream 5 was forgotten");
    };
    assert!(timed_out(&data, "0"), "{data:?}");
}

#[tokio::test]
async fn over_a_spdy_upgrade_a_half_open_pair_fails_after_the_configured_timeout() {
    let config = SimConfig::with_size(2, 1, 1).stream_creation_timeout(Duration::from_secs(1));
    let sim = Sim::start(config).await.expect("sim starts");
    let kube = sim.client().await.expect("a client");
    let pods: Api<Pod> = Api::all(kube.clone());
    let listed = pods.list(&Default::default()).await.expect("pods");
    let running = listed
        .items
        .iter()
        .find(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
        .expect("a running pod");
    let (namespace, name) = (
        running.metadata.namespace.as_deref().unwrap_or_default(),
        running.metadata.name.as_deref().unwrap_or_default(),
    );
    let request = http::Request::post(format!(
        "/api/v1/namespaces/{namespace}/pods/{name}/portforward"
    ))
    .header(header::CONNECTION, "Upgrade")
    .header(header::UPGRADE, "SPDY/3.1")
    .header("X-Stream-Protocol-Version", "portforward.k8s.io")
    .body(kube::client::Body::from(Vec::new()))
    .unwrap();
    let response = kube.send(request).await.expect("the upgrade is answered");
    assert_eq!(response.status(), StatusCode::SWITCHING_PROTOCOLS);
    let upgraded = hyper::upgrade::on(response).await.expect("upgraded");
    let mut client = Client(Framed::new(TokioIo::new(upgraded), Codec::new().unwrap()));

    client.open(1, "error", "8080", "7").await;
    let Frame::Data {
        stream_id: 1, data, ..
    } = client.next().await
    else {
        panic!("the timeout's message on the error stream");
    };
    assert!(timed_out(&data, "7"), "{data:?}");
}
