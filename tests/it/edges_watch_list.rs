//! A watch-list the server accepts but never finishes is held to a list's bounds, through the
//! real binary: the Reflector falls back to a list, `get` prints the list's rows and says on
//! stderr that it fell back and why. Each case is a fake server over loopback that serves a
//! plain list and misbehaves only on `sendInitialEvents=true` watches.

use std::collections::HashMap;
use std::process::Output;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Query;
use axum::http::Response;
use axum::routing::get;

use crate::common::cli::{kscope, plain_kubeconfig, temp_dir};
use crate::common::fake_api;
use crate::common::pod::pod;

/// How the fake server answers a watch-list.
#[derive(Clone, Copy)]
enum WatchList {
    /// Never sends the response headers.
    NoHeaders,
    /// Sends the headers, then never a byte.
    Silent,
    /// Sends an ADDED event every 200 ms, never the initial-events-end bookmark.
    Trickle,
}

/// A server whose list holds pod web/a; plain watches stay open and quiet; watch-lists
/// answer as `watch_list` says.
async fn server(watch_list: WatchList) -> std::net::SocketAddr {
    fake_api::serve(Router::new().route(
        "/api/v1/pods",
        get(move |query: Query<HashMap<String, String>>| async move {
            let is = |key: &str| query.get(key).map(String::as_str) == Some("true");
            if !is("watch") {
                return fake_api::json(format!(
                    r#"{{"kind":"PodList","apiVersion":"v1","metadata":{{"resourceVersion":"5"}},"items":[{}]}}"#,
                    pod("web", "a").rv(4).wire()
                ));
            }
            if !is("sendInitialEvents") {
                return fake_api::open_body(String::new());
            }
            match watch_list {
                WatchList::NoHeaders => std::future::pending().await,
                WatchList::Silent => fake_api::open_body(String::new()),
                WatchList::Trickle => trickle_of_events(),
            }
        }),
    ))
    .await
}

/// A watch body that sends pod web/t as ADDED every 200 ms and never ends.
fn trickle_of_events() -> Response<Body> {
    let line = format!(
        "{{\"type\":\"ADDED\",\"object\":{}}}\n",
        pod("web", "t").rv(3).wire()
    );
    let events = futures::stream::unfold(line, |line| async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        Some((Ok::<_, std::io::Error>(line.clone()), line))
    });
    Response::builder()
        .header("content-type", "application/json")
        .body(Body::from_stream(events))
        .expect("response")
}

async fn get_pods(name: &str, addr: std::net::SocketAddr) -> Output {
    let dir = temp_dir(name);
    let kubeconfig = plain_kubeconfig(&dir, &format!("http://{addr}"), "t");
    kscope(
        &dir,
        &[
            "get",
            "pods",
            "-A",
            "--kubeconfig",
            &kubeconfig,
            "--initial-list",
            "watchList",
            "--list-stall-timeout",
            "1s",
            "--list-timeout",
            "2s",
            "--sync-timeout",
            "30s",
            "-o",
            "name",
        ],
    )
    .await
}

/// Each way of never finishing the initial state falls back to the list after its bound,
/// well within --sync-timeout: the list's rows, exit 0, and the reason on stderr.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_list_that_never_finishes_falls_back_to_a_list_with_the_reason() {
    for (name, watch_list, cause) in [
        (
            "watch-list-no-headers",
            WatchList::NoHeaders,
            "the server sent no response headers for 1s (--list-stall-timeout)",
        ),
        (
            "watch-list-silent",
            WatchList::Silent,
            "the watch-list sent no event for 1s before its initial state ended (--list-stall-timeout)",
        ),
        (
            "watch-list-trickle",
            WatchList::Trickle,
            "the watch-list sent no initial-events-end bookmark within 2s (--list-timeout)",
        ),
    ] {
        let out = get_pods(name, server(watch_list).await).await;
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{name}: {err}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "pod/a\n", "{name}");
        let said = "kscope: pods: read by a list instead of a watch-list: the watch-list failed: ";
        assert!(err.contains(said), "{name}: {err}");
        assert!(err.contains(cause), "{name}: expected {cause:?} in {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
}
