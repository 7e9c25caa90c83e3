//! Small hostile API servers for the CLI tests, over loopback: an axum router served on a
//! port of its own, and the pieces the edge cases need (an empty pod list, a response that
//! never starts, a body that never ends).

use std::net::SocketAddr;

use axum::Router;
use axum::body::Body;
use axum::http::Response;

/// Serves `app` on a loopback port of its own, for the rest of the test.
pub async fn serve(app: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// An empty PodList at resourceVersion `rv`.
pub fn empty_pod_list(rv: u64) -> Response<Body> {
    json(format!(
        r#"{{"kind":"PodList","apiVersion":"v1","metadata":{{"resourceVersion":"{rv}"}},"items":[]}}"#
    ))
}

/// A 200 JSON response with `body`.
pub fn json(body: String) -> Response<Body> {
    Response::builder()
        .header("content-type", "application/json")
        .body(Body::from(body))
        .expect("response")
}

/// A 200 JSON response whose body is `first` and then never another byte nor an end: a
/// watch that was accepted and delivers nothing more.
pub fn open_body(first: String) -> Response<Body> {
    let stream = futures::StreamExt::chain(
        futures::stream::iter([Ok::<_, std::io::Error>(first)]),
        futures::stream::pending(),
    );
    Response::builder()
        .header("content-type", "application/json")
        .body(Body::from_stream(stream))
        .expect("response")
}

/// A 200 JSON response that sends one byte of a list every `every`, and never ends.
pub fn trickle(every: std::time::Duration) -> Response<Body> {
    let bytes = futures::stream::unfold(0usize, move |sent| async move {
        if sent > 0 {
            tokio::time::sleep(every).await;
        }
        Some((
            Ok::<_, std::io::Error>(if sent == 0 { "{" } else { " " }),
            sent + 1,
        ))
    });
    Response::builder()
        .header("content-type", "application/json")
        .body(Body::from_stream(bytes))
        .expect("response")
}

/// A `/api/v1/pods` route: lists get `list`, watches get `watch`.
pub fn pods_route(list: fn() -> Response<Body>, watch: fn() -> Response<Body>) -> Router {
    Router::new().route(
        "/api/v1/pods",
        axum::routing::get(
            move |query: axum::extract::Query<std::collections::HashMap<String, String>>| async move {
                if query.get("watch").map(String::as_str) == Some("true") {
                    watch()
                } else {
                    list()
                }
            },
        ),
    )
}

/// A server that accepts connections and reads requests but never sends a byte back (not
/// even response headers).
pub async fn never_answers() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    addr
}
