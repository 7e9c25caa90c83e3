//! What a newcomer and a hostile server still hit, through the real binary: kubeconfigs that
//! kubectl takes, configuration that would overflow the stack, failing credential plugins,
//! servers that never answer or never deliver, and caps that must be exact. Each case says
//! what went wrong in one line and exits with a code, never a panic or an abort.

use std::process::Output;

use axum::Router;
use axum::routing::get;

use crate::common::cli::{self, kscope, plain_kubeconfig, temp_dir};
use crate::common::fake_api;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).trim().to_string()
}

/// A plain failure (exit code `code`), not a panic nor an abort, saying `expected`.
fn assert_fails_saying(out: &Output, code: i32, expected: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(code), "exit code: {err}");
    assert!(err.contains(expected), "expected {expected:?} in {err:?}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!err.contains("RUST_BACKTRACE"), "{err}");
}

/// A kubeconfig whose server has no scheme, as kubectl takes it: kubectl 1.32 reads
/// `127.0.0.1:PORT` as `http://127.0.0.1:PORT`, and so does kscope, rather than panicking
/// inside kube's client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_a_scheme_is_read_as_kubectl_reads_it() {
    let addr = fake_api::serve(Router::new().route(
        "/api/v1/pods",
        get(|| async { fake_api::empty_pod_list(7) }),
    ))
    .await;
    let dir = temp_dir("edges-no-scheme");
    let kubeconfig = plain_kubeconfig(&dir, &addr.to_string(), "t");
    let out = kscope(
        &dir,
        &[
            "get",
            "pods",
            "-A",
            "--kubeconfig",
            &kubeconfig,
            "--initial-list",
            "list",
        ],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));

    let kubeconfig = plain_kubeconfig(&dir, "https://", "t");
    let out = kscope(&dir, &["get", "pods", "--kubeconfig", &kubeconfig]).await;
    assert_fails_saying(&out, 1, "server \"https://\" is not a URL with a host");
}

/// An index whose JSONPath is thousands of segments long is refused with the file and line
/// of the key, where following it would overflow the stack and abort (exit 134).
#[tokio::test]
async fn a_config_path_too_deep_to_follow_is_a_file_and_line_error() {
    let dir = temp_dir("edges-deep-path");
    let config = dir.join("deep.yaml");
    let path = ".a[*]".repeat(2000);
    std::fs::write(
        &config,
        format!("indexes:\n  deep:\n    field: \"{path}\"\n"),
    )
    .unwrap();
    let kubeconfig = plain_kubeconfig(&dir, &cli::closed_server(), "t");
    let out = kscope(
        &dir,
        &[
            "get",
            "pods",
            "--kubeconfig",
            &kubeconfig,
            "--config",
            config.to_str().unwrap(),
        ],
    )
    .await;
    assert_fails_saying(&out, 1, "deep.yaml:3:");
    assert!(
        stderr(&out).contains("more than 64 segments"),
        "{}",
        stderr(&out)
    );
}

/// A credential plugin that fails is said as kubectl says it, with what the plugin wrote to
/// stderr, not as a dump of the command, its environment and its output.
#[tokio::test]
async fn a_failing_credential_plugin_gets_a_plain_message() {
    let dir = temp_dir("edges-exec");
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\ncurrent-context: t\n\
         clusters:\n- name: t\n  cluster: {server: \"https://127.0.0.1:6443\"}\n\
         users:\n- name: t\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n\
         \x20     command: sh\n      args: [\"-c\", \"echo not-a-token; echo 'session expired: run login' >&2; exit 3\"]\n\
         \x20     interactiveMode: Never\n\
         contexts:\n- name: t\n  context: {cluster: t, user: t}\n",
    )
    .unwrap();
    let out = kscope(
        &dir,
        &["get", "pods", "--kubeconfig", kubeconfig.to_str().unwrap()],
    )
    .await;
    assert_fails_saying(
        &out,
        1,
        "the exec plugin failed with exit status: 3: session expired: run login",
    );
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    for dump in ["Output {", "KUBERNETES_EXEC_INFO", "not-a-token"] {
        assert!(!err.contains(dump), "{dump} is not shown: {err}");
    }
}

/// A watch line of `length` bytes (without its newline): one pod, padded in an annotation.
fn watch_line_of(length: usize) -> String {
    let head = r#"{"type":"ADDED","object":{"metadata":{"name":"p","namespace":"web","resourceVersion":"6","annotations":{"pad":""#;
    let tail = r#""}}}}"#;
    format!(
        "{head}{}{tail}\n",
        "x".repeat(length - head.len() - tail.len())
    )
}

/// `--max-watch-event` is exact: a line of the cap's length passes, one byte more ends the
/// watch with the cause said, however the line arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watch_event_cap_is_exact() {
    const CAP: usize = 100_000;
    let at_cap = fake_api::serve(fake_api::pods_route(
        || fake_api::empty_pod_list(5),
        || fake_api::open_body(watch_line_of(CAP)),
    ))
    .await;
    let past_cap = fake_api::serve(fake_api::pods_route(
        || fake_api::empty_pod_list(5),
        || fake_api::open_body(watch_line_of(CAP + 1)),
    ))
    .await;
    let run = |name: &'static str, addr: std::net::SocketAddr| async move {
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
                "list",
                "--watch-for",
                "3s",
                "--max-watch-event",
                &CAP.to_string(),
                "-o",
                "name",
            ],
        )
        .await
    };
    let out = run("edges-cap-at", at_cap).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "pod/p\n");
    let out = run("edges-cap-past", past_cap).await;
    assert_fails_saying(
        &out,
        4,
        "a watch event longer than 100000 bytes (--max-watch-event)",
    );
}

/// One pod in namespace web, served only where `-n web` asks.
async fn web_pods_server() -> std::net::SocketAddr {
    fake_api::serve(Router::new().route(
        "/api/v1/namespaces/web/pods",
        get(|| async {
            fake_api::json(format!(
                r#"{{"kind":"PodList","apiVersion":"v1","metadata":{{"resourceVersion":"5"}},"items":[{}]}}"#,
                crate::common::pod::pod("web", "a").rv(4).wire()
            ))
        }),
    ))
    .await
}

/// Cluster flags before the command apply to it, as kubectl takes them; given on both sides
/// with different values, or before a command that does not take them, they are an error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_flags_before_the_command_apply_to_it() {
    let addr = web_pods_server().await;
    let dir = temp_dir("edges-outer-flags");
    let kubeconfig = plain_kubeconfig(&dir, &format!("http://{addr}"), "t");
    let out = kscope(
        &dir,
        &[
            "--kubeconfig",
            &kubeconfig,
            "-n",
            "web",
            "get",
            "pods",
            "--initial-list",
            "list",
            "-o",
            "name",
        ],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "pod/a\n");

    let out = kscope(
        &dir,
        &[
            "-n",
            "web",
            "get",
            "pods",
            "-n",
            "other",
            "--kubeconfig",
            &kubeconfig,
        ],
    )
    .await;
    assert_fails_saying(
        &out,
        1,
        "--namespace is given both before the command and after it",
    );
    let out = kscope(&dir, &["--kubeconfig", &kubeconfig, "sim"]).await;
    assert_fails_saying(&out, 1, "a cluster flag is given before `kscope sim`");
}

/// Two demos at once each write their own kubeconfig, and the first to quit removes only its
/// own.
#[test]
fn two_demos_at_once_keep_their_own_kubeconfigs() {
    use crate::common::tmux::{Session, demo_kubeconfigs};
    if crate::common::tools::required("tmux", "to run kscope in a real terminal").is_none() {
        return;
    }
    let state = std::env::temp_dir().join(format!("kscope-two-demos-{}", std::process::id()));
    let command = format!(
        "env XDG_STATE_HOME={} {} --demo",
        state.display(),
        env!("CARGO_BIN_EXE_kscope")
    );
    let first = Session::start(format!("kscope-demo-a-{}", std::process::id()), &command);
    first.wait_for("the first demo", |s| s.contains("watching at rv"));
    let second = Session::start(format!("kscope-demo-b-{}", std::process::id()), &command);
    second.wait_for("the second demo", |s| s.contains("watching at rv"));
    let both = demo_kubeconfigs(&state);
    assert_eq!(both.len(), 2, "one kubeconfig each: {both:?}");
    first.keys(&["q"]);
    first.wait_exit("q");
    let left = demo_kubeconfigs(&state);
    assert_eq!(left.len(), 1, "the first removed only its own: {left:?}");
    assert!(
        std::fs::read_to_string(&left[0]).is_ok_and(|k| k.contains("kscope-demo")),
        "the second's is whole"
    );
    second.keys(&["q"]);
    second.wait_exit("q");
    assert!(demo_kubeconfigs(&state).is_empty());
    let _ = std::fs::remove_dir_all(state);
}

/// A server that never sends response headers is bounded by --list-stall-timeout, and the
/// reason is said; a list that trickles past --list-timeout is said to be slow, not
/// malformed nor unreachable. Either ends `get` at once (exit 1), as an unreachable server
/// does, well before its --sync-timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_headers_and_a_trickle_are_bounded_with_their_reason() {
    let silent = fake_api::never_answers().await;
    let trickling = fake_api::serve(fake_api::pods_route(
        || fake_api::trickle(std::time::Duration::from_millis(200)),
        || fake_api::empty_pod_list(5),
    ))
    .await;
    for (name, addr, cause) in [
        (
            "edges-no-headers",
            silent,
            "the server sent no response headers for 1s",
        ),
        (
            "edges-trickle",
            trickling,
            "the list response took longer than 2s (--list-timeout)",
        ),
    ] {
        let dir = temp_dir(name);
        let kubeconfig = plain_kubeconfig(&dir, &format!("http://{addr}"), "t");
        let out = kscope(
            &dir,
            &[
                "get",
                "pods",
                "-A",
                "--kubeconfig",
                &kubeconfig,
                "--initial-list",
                "list",
                "--list-stall-timeout",
                "1s",
                "--list-timeout",
                "2s",
                "--sync-timeout",
                "60s",
            ],
        )
        .await;
        assert_fails_saying(&out, 1, cause);
        let said = stderr(&out);
        assert!(
            said.contains("answered outside kscope's bounds"),
            "{name}: {said}"
        );
        assert!(
            !stderr(&out).contains("malformed"),
            "{name}: {}",
            stderr(&out)
        );
    }
}

/// A watch refused with 429 is backed off, and the back-off counts it: never "failed 0
/// time(s)".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_back_off_counts_the_refused_watch() {
    let addr = fake_api::serve(fake_api::pods_route(
        || fake_api::empty_pod_list(5),
        || {
            axum::http::Response::builder()
                .status(429)
                .header("content-type", "application/json")
                .body(axum::body::Body::from(
                    r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too many requests","reason":"TooManyRequests","code":429}"#,
                ))
                .expect("response")
        },
    ))
    .await;
    let dir = temp_dir("edges-429");
    let kubeconfig = plain_kubeconfig(&dir, &format!("http://{addr}"), "t");
    let out = kscope(
        &dir,
        &[
            "get",
            "pods",
            "-A",
            "--kubeconfig",
            &kubeconfig,
            "--initial-list",
            "list",
            "--watch-for",
            "3s",
        ],
    )
    .await;
    assert_fails_saying(&out, 4, "too many requests");
    assert!(
        !stderr(&out).contains("failed 0 time(s)"),
        "{}",
        stderr(&out)
    );
}
