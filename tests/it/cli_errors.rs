//! Bad input gets a clear one-line error and a non-zero exit, never a panic; malformed
//! objects are skipped and counted while everything else keeps working. Runs the real
//! binary against the sim and against a small misbehaving API server, over real HTTP.

use crate::common::cli;

use std::net::SocketAddr;
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::common::pod::pod;
use axum::Router;
use axum::body::Body;
use axum::extract::Query;
use axum::http::{Response, StatusCode};
use axum::routing::get;
use cli::{kscope, plain_kubeconfig, temp_dir};
use futures::StreamExt;
use kscope_sim::{Sim, SimConfig};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).trim().to_string()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// One line, starting with `error:`, and a failing exit code.
fn assert_one_line_error(out: &Output, expected: &str) {
    let err = stderr(out);
    assert!(!out.status.success(), "should fail: {err}");
    assert_eq!(
        out.status.code(),
        Some(1),
        "a plain failure, not a panic: {err}"
    );
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains(expected), "expected {expected:?} in {err:?}");
    assert!(!err.contains("panicked"), "{err}");
}

#[tokio::test]
async fn unreachable_server() {
    let dir = temp_dir("unreachable");
    let kubeconfig = plain_kubeconfig(&dir, &cli::closed_server(), "t");
    let out = kscope(&dir, &["get", "pods", "-A", "--kubeconfig", &kubeconfig]).await;
    assert_one_line_error(&out, "cannot reach the API server");
}

/// A kubeconfig that is not there: the path said once, unquoted, and the demo suggested.
#[tokio::test]
async fn a_missing_kubeconfig_suggests_the_demo() {
    let dir = temp_dir("missing-kubeconfig");
    let missing = dir.join("nothing-here.yaml");
    let out = kscope(
        &dir,
        &["get", "pods", "--kubeconfig", missing.to_str().unwrap()],
    )
    .await;
    assert_one_line_error(&out, "kscope --demo");
    let err = stderr(&out);
    assert!(
        err.contains(&format!("cannot read {}: ", missing.display())),
        "{err}"
    );
    assert!(!err.contains("'\""), "no doubled quotes: {err}");
}

#[tokio::test]
async fn kubeconfig_that_does_not_parse_and_missing_context() {
    let dir = temp_dir("badconfig");
    let path = dir.join("broken.yaml");
    std::fs::write(&path, "clusters: [this is: not: yaml").unwrap();
    let out = kscope(
        &dir,
        &["get", "pods", "--kubeconfig", path.to_str().unwrap()],
    )
    .await;
    assert_one_line_error(&out, &format!("kubeconfig {}", path.display()));

    let kubeconfig = plain_kubeconfig(&dir, &cli::closed_server(), "t");
    let out = kscope(
        &dir,
        &[
            "get",
            "pods",
            "--kubeconfig",
            &kubeconfig,
            "--context",
            "prod",
        ],
    )
    .await;
    assert_one_line_error(&out, "context \"prod\" does not exist");

    let out = kscope(&dir, &["get", "widgets", "--kubeconfig", &kubeconfig]).await;
    assert_one_line_error(&out, "discovery: GET /api");

    let out = kscope(
        &dir,
        &[
            "get",
            "pods",
            "--kubeconfig",
            &kubeconfig,
            "--filter",
            "app in x",
        ],
    )
    .await;
    assert_one_line_error(&out, "column 8: expected '('");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_token_is_unauthorized_and_secret_stays_secret() {
    let dir = temp_dir("unauthorized");
    let sim = Sim::start(SimConfig::with_size(10, 2, 1))
        .await
        .expect("sim");
    let token = sim.token().to_string();
    let yaml = sim
        .kubeconfig_yaml()
        .replace(&token, "not-the-token-0123456789");
    let path = dir.join("kubeconfig");
    std::fs::write(&path, yaml).unwrap();
    let out = kscope(
        &dir,
        &["get", "pods", "-A", "--kubeconfig", path.to_str().unwrap()],
    )
    .await;
    assert_one_line_error(&out, "unauthorized");
    assert!(
        !stderr(&out).contains("not-the-token"),
        "never print credentials"
    );

    // The same sim with the right token works.
    let good = dir.join("good");
    std::fs::write(&good, sim.kubeconfig_yaml()).unwrap();
    let out = kscope(
        &dir,
        &[
            "get",
            "ns",
            "--kubeconfig",
            good.to_str().unwrap(),
            "-o",
            "name",
        ],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("namespace/default"));
    sim.shutdown().await;
}

const FORBIDDEN: &str = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods is forbidden: User \"system:serviceaccount:default:viewer\" cannot list resource \"pods\" in API group \"\" at the cluster scope","reason":"Forbidden","details":{"kind":"pods"},"code":403}"#;

/// A server that refuses pods and mangles nodes: one bad item in the list, one bad line in
/// the watch, between good ones.
async fn misbehaving_server() -> SocketAddr {
    let pods = get(|| async {
        Response::builder()
            .status(StatusCode::FORBIDDEN)
            .header("content-type", "application/json")
            .body(Body::from(FORBIDDEN))
            .expect("response")
    });
    // The first list has a, an item that does not decode, and b; its watch adds c, then sends
    // b's DELETED in a shape that does not decode. Later lists are the truth after that
    // delete: a and c (and the bad item again).
    let lists = Arc::new(AtomicUsize::new(0));
    let list_or_watch = move |query: Query<std::collections::HashMap<String, String>>| {
        let lists = lists.clone();
        async move {
            if query.get("watch").map(String::as_str) == Some("true") {
                let lines = if lists.load(Ordering::SeqCst) == 1 {
                    vec![
                        format!(r#"{{"type":"ADDED","object":{}}}"#, pod("web", "c").rv(11).wire()),
                        r#"{"type":"DELETED","object":{"metadata":{"name":["b"],"namespace":"web"}}}"#
                            .to_string(),
                        format!(r#"{{"type":"MODIFIED","object":{}}}"#, pod("web", "a").rv(13).wire()),
                    ]
                } else {
                    vec![format!(
                        r#"{{"type":"MODIFIED","object":{}}}"#,
                        pod("web", "a").rv(13).wire()
                    )]
                };
                let body = lines.join("\n") + "\n";
                // Keep the stream open after the events, like a real watch.
                let stream = futures::stream::iter([Ok::<_, std::io::Error>(body)])
                    .chain(futures::stream::pending());
                Response::builder()
                    .header("content-type", "application/json")
                    .body(Body::from_stream(stream))
                    .expect("response")
            } else {
                let (items, rv) = if lists.fetch_add(1, Ordering::SeqCst) == 0 {
                    (
                        vec![
                            pod("web", "a").rv(5).wire(),
                            r#"{"metadata":{"name":7}}"#.to_string(),
                            pod("web", "b").rv(6).wire(),
                        ],
                        10,
                    )
                } else {
                    (
                        vec![
                            pod("web", "a").rv(5).wire(),
                            r#"{"metadata":{"name":7}}"#.to_string(),
                            pod("web", "c").rv(11).wire(),
                        ],
                        12,
                    )
                };
                let body = format!(
                    r#"{{"kind":"PodList","apiVersion":"v1","metadata":{{"resourceVersion":"{rv}"}},"items":[{}]}}"#,
                    items.join(",")
                );
                Response::builder()
                    .header("content-type", "application/json")
                    .body(Body::from(body))
                    .expect("response")
            }
        }
    };
    let app = Router::new()
        .route("/api/v1/pods", pods)
        .route("/api/v1/namespaces/web/pods", get(list_or_watch));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbidden_says_which_resource_and_verb() {
    let dir = temp_dir("forbidden");
    let addr = misbehaving_server().await;
    let kubeconfig = plain_kubeconfig(&dir, &format!("http://{addr}"), "t");
    let out = kscope(&dir, &["get", "pods", "-A", "--kubeconfig", &kubeconfig]).await;
    assert_one_line_error(
        &out,
        "forbidden: not allowed to list pods: pods is forbidden",
    );
}

/// List mode: the misbehaving server is a list-and-watch server (it neither streams an
/// initial state nor sends bookmarks), and what is tested is a list item that does not decode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_delete_relists_and_leaves_no_ghost() {
    let dir = temp_dir("malformed");
    let addr = misbehaving_server().await;
    let kubeconfig = plain_kubeconfig(&dir, &format!("http://{addr}"), "t");
    let out = kscope(
        &dir,
        &[
            "get",
            "pods",
            "-n",
            "web",
            "--kubeconfig",
            &kubeconfig,
            "--watch-for",
            "3s",
            "-o",
            "name",
            "--initial-list",
            "list",
        ],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "pod/a\npod/c\n",
        "b's delete did not decode: the relist removed b"
    );
    assert!(
        stderr(&out).contains("1 list item"),
        "the item that did not decode is reported: {}",
        stderr(&out)
    );

    let dir = temp_dir("malformed-deltas");
    let addr = misbehaving_server().await;
    let kubeconfig = plain_kubeconfig(&dir, &format!("http://{addr}"), "t");
    let out = kscope(
        &dir,
        &[
            "deltas",
            "pods",
            "-n",
            "web",
            "--kubeconfig",
            &kubeconfig,
            "--for",
            "3s",
            "--initial-list",
            "list",
        ],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
        .collect();
    let errors: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "ERROR")
        .filter_map(|l| l["message"].as_str())
        .collect();
    assert!(
        errors.iter().any(|e| e.contains("malformed watch event")),
        "the malformed event is in the stream: {errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.contains("list item")),
        "so is the list item: {errors:?}"
    );
    let relists = lines.iter().filter(|l| l["type"] == "RELIST").count();
    assert!(relists >= 2, "the malformed event relisted: {lines:?}");
    let deleted = lines
        .iter()
        .find(|l| l["type"] == "Deleted" && l["key"] == "web/b");
    assert!(deleted.is_some(), "the relist deletes b: {lines:?}");
    let log = cli::log(&dir);
    assert!(
        log.contains("malformed watch event"),
        "the failure is logged: {log}"
    );
}

/// A server that accepts connections and never answers, and one that answers every list with
/// a 500: `get` gives up at its --sync-timeout with exit code 3, saying what it waited on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_and_failing_servers_end_at_the_sync_deadline() {
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let silent_addr = silent.local_addr().expect("addr");
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    let failing = Router::new().route(
        "/api/v1/pods",
        get(|| async {
            Response::builder()
                .status(StatusCode::INTERNAL_SERVER_ERROR)
                .header("content-type", "application/json")
                .body(Body::from(
                    r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"etcd is down","reason":"InternalError","code":500}"#,
                ))
                .expect("response")
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let failing_addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, failing).await });

    for (name, addr, cause) in [
        ("silent", silent_addr, "did not sync within 3s"),
        ("failing", failing_addr, "etcd is down"),
    ] {
        let dir = temp_dir(name);
        let kubeconfig = plain_kubeconfig(&dir, &format!("http://{addr}"), "t");
        let started = std::time::Instant::now();
        let out = kscope(
            &dir,
            &[
                "get",
                "pods",
                "-A",
                "--kubeconfig",
                &kubeconfig,
                "--sync-timeout",
                "3s",
            ],
        )
        .await;
        let waited = started.elapsed();
        assert_eq!(out.status.code(), Some(3), "{name}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(cause) && stderr(&out).contains("did not sync"),
            "{name}: the cause is said: {}",
            stderr(&out)
        );
        assert!(stdout(&out).is_empty(), "{name}: nothing printed");
        assert!(
            waited < std::time::Duration::from_secs(30),
            "{name}: bounded by the deadline, took {waited:?}"
        );
    }
}

/// A server that redirects is said to redirect (not "EOF while parsing" its HTML), and a
/// kubeconfig without a current-context says what is missing and how to name one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirect_and_no_current_context() {
    let redirecting = Router::new().route(
        "/api/v1/pods",
        get(|| async {
            Response::builder()
                .status(StatusCode::FOUND)
                .header("location", "https://login.example.com/")
                .header("content-type", "text/html")
                .body(Body::from("<html>moved</html>"))
                .expect("response")
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, redirecting).await });
    let dir = temp_dir("redirect");
    let kubeconfig = plain_kubeconfig(&dir, &format!("http://{addr}"), "t");
    let out = kscope(&dir, &["get", "pods", "-A", "--kubeconfig", &kubeconfig]).await;
    assert_one_line_error(&out, "redirect to https://login.example.com/");

    let path = dir.join("no-current");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\n\
             clusters:\n- name: c\n  cluster:\n    server: {}\n\
             users:\n- name: u\n  user:\n    token: t\n\
             contexts:\n- name: dev\n  context:\n    cluster: c\n    user: u\n",
            cli::closed_server()
        ),
    )
    .expect("write kubeconfig");
    let out = kscope(
        &dir,
        &["get", "pods", "--kubeconfig", path.to_str().expect("utf-8")],
    )
    .await;
    assert_one_line_error(&out, "no current-context is set (its contexts: dev)");
}
