//! kscope never shows another server's state, or a stale one, as current: the sim answers a
//! watch from a resourceVersion it has not reached as kube-apiserver does, and a client whose
//! server was killed and restarted (with a lower resourceVersion, or a new CA) ends equal to
//! the new truth or says that it is not current.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use crate::common::{cli, wait};
use futures::StreamExt;
use kscope_sim::{Faults, Resource, Sim, SimConfig};

/// The body and code of a GET through kube's client, whatever the code.
async fn get_raw(client: &kube::Client, path: &str) -> (u16, serde_json::Value) {
    let request = http::Request::get(path).body(Vec::new()).expect("request");
    send_raw(client, request).await
}

/// The body and code of the answer to `request`, whatever the code.
async fn send_raw(
    client: &kube::Client,
    request: http::Request<Vec<u8>>,
) -> (u16, serde_json::Value) {
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

/// A `kscope sim` process, killed (SIGKILL) when dropped.
struct SimProcess {
    child: std::process::Child,
    port: u16,
}

impl SimProcess {
    /// Starts `kscope sim ARGS` and waits for its ready line.
    async fn start(dir: &Path, args: &[&str]) -> Self {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kscope"))
            .arg("sim")
            .args(args)
            .env("XDG_STATE_HOME", dir.join("state"))
            .env_remove("KSCOPE_SIM_TOKEN")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("kscope sim runs");
        let stdout = child.stdout.take().expect("piped stdout");
        let line = tokio::time::timeout(
            Duration::from_secs(60),
            tokio::task::spawn_blocking(move || {
                let mut line = String::new();
                BufReader::new(stdout).read_line(&mut line).map(|_| line)
            }),
        )
        .await
        .expect("the sim is ready within a minute")
        .expect("join")
        .expect("read the ready line");
        let port = line
            .trim()
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        Self { child, port }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for SimProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A kube client from a kubeconfig file.
async fn client_for(kubeconfig: &Path) -> kube::Client {
    let yaml = std::fs::read_to_string(kubeconfig).expect("kubeconfig");
    let parsed = kube::config::Kubeconfig::from_yaml(&yaml).expect("kubeconfig parses");
    let config =
        kube::Config::from_custom_kubeconfig(parsed, &kube::config::KubeConfigOptions::default())
            .await
            .expect("kube config");
    kube::Client::try_from(config).expect("client")
}

/// The sim's truth for pods: `namespace/name` → resourceVersion.
async fn truth(client: &kube::Client) -> BTreeMap<String, String> {
    let (code, body) = get_raw(client, "/sim/truth/pods").await;
    assert_eq!(code, 200, "{body}");
    serde_json::from_value(body).expect("a map of keys to RVs")
}

fn sim_rv(state: &serde_json::Value) -> u64 {
    state["resourceVersion"]
        .as_str()
        .and_then(|rv| rv.parse().ok())
        .expect("the sim's RV")
}

/// The pods `kscope get -o json` printed: `namespace/name` → resourceVersion.
fn printed(stdout: &[u8]) -> BTreeMap<String, String> {
    let list: serde_json::Value = serde_json::from_slice(stdout).expect("-o json prints JSON");
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|pod| {
            let meta = &pod["metadata"];
            (
                format!(
                    "{}/{}",
                    meta["namespace"].as_str().expect("namespace"),
                    meta["name"].as_str().expect("name")
                ),
                meta["resourceVersion"]
                    .as_str()
                    .expect("resourceVersion")
                    .to_string(),
            )
        })
        .collect()
}

/// Runs `kscope get pods -A --watch-for WATCH -o json` in the background.
fn get_in_background(
    dir: &Path,
    kubeconfig: &Path,
    watch_for: &str,
) -> tokio::task::JoinHandle<std::process::Output> {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_kscope"));
    command
        .args(["get", "pods", "-A", "-o", "json", "--watch-for", watch_for])
        .args(["--sync-timeout", "120s"])
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("KSCOPE_LOG", "kscope=debug")
        .env_remove("KUBECONFIG");
    tokio::task::spawn_blocking(move || command.output().expect("kscope get runs"))
}

/// Waits (bounded) until `kscope get`'s log says it is watching.
async fn wait_until_watching(dir: &Path) {
    tokio::time::timeout(wait::HANG_GUARD, async {
        loop {
            if cli::log(dir).contains("watching") {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("kscope get watches before the hang guard");
}

/// The issue's restart: a sim that churned to a high resourceVersion is killed during a
/// `get --watch-for`, and another sim (other seed, lower resourceVersion) starts on the same
/// port with the same state directory, so the same kubeconfig reaches it. kscope must not
/// resume from its old resourceVersion and merge the two clusters: it relists from scratch,
/// and what it prints is exactly the new sim's truth.
///
/// The watch's time is all after the sync, and only the restart happens in it: the first
/// sim churns before `get` starts, and `get` watches long enough for a loaded machine to
/// start the second sim and for kscope to come back from its backoff (client-go's, doubling
/// to 30 s while the port is closed) and relist, or it would end relisting, not current.
async fn restart_with_state_dir(run: u32) {
    let dir = cli::temp_dir(&format!("restart-{run}"));
    let _ = std::fs::remove_dir_all(dir.join("state"));
    let state_dir = dir.join("sim-state");
    let _ = std::fs::remove_dir_all(&state_dir);
    let kubeconfig = dir.join("kubeconfig");
    let state_arg = state_dir.to_str().expect("utf-8");
    let kubeconfig_arg = kubeconfig.to_str().expect("utf-8");
    let common = [
        "--pods",
        "300",
        "--nodes",
        "4",
        "--namespaces",
        "3",
        "--state-dir",
        state_arg,
    ];
    let mut first = SimProcess::start(
        &dir,
        &[
            &common[..],
            &[
                "--seed",
                "7",
                "--churn",
                "300",
                "--kubeconfig-out",
                kubeconfig_arg,
            ],
        ]
        .concat(),
    )
    .await;
    let port = first.port.to_string();
    let client = client_for(&kubeconfig).await;
    // Let the first cluster's resourceVersion climb well past where the second starts (seeds
    // 7 and 8 start at 905 and 887; the second's churn adds at most 100): 1,500 took a
    // loaded machine most of two minutes.
    let (_, state) = get_raw(&client, "/sim/state").await;
    let started_at = sim_rv(&state);
    tokio::time::timeout(wait::HANG_GUARD, async {
        loop {
            let (_, state) = get_raw(&client, "/sim/state").await;
            if sim_rv(&state) > started_at + 500 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("the first sim churns");
    // A sim that churns 300 writes a second on a loaded machine left kscope too little of
    // it to sync in a minute (a watch-list and a list both timed out): kscope syncs and
    // watches a quiet cluster at the high resourceVersion.
    let pause = http::Request::put("/sim/churn")
        .body(br#"{"paused": true}"#.to_vec())
        .expect("request");
    let (code, churn) = send_raw(&client, pause).await;
    assert_eq!(code, 200, "{churn}");
    let get = get_in_background(&dir, &kubeconfig, "90s");
    wait_until_watching(&dir).await;
    let old_truth = truth(&client).await;
    first.kill();

    let second = SimProcess::start(
        &dir,
        &[
            &common[..],
            &[
                "--seed",
                "8",
                "--listen",
                &format!("127.0.0.1:{port}"),
                "--churn",
                "20",
                "--churn-for",
                "5s",
            ],
        ]
        .concat(),
    )
    .await;
    assert_eq!(second.port.to_string(), port);
    // The same kubeconfig (CA and token from the state directory) reaches the new sim.
    let client = client_for(&kubeconfig).await;
    let (_, state) = get_raw(&client, "/sim/state").await;
    assert!(
        sim_rv(&state) < started_at + 500,
        "the second sim starts lower: {state}"
    );

    let out = get.await.expect("join");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "run {run}: {stderr}");
    let new_truth = truth(&client).await;
    assert_ne!(old_truth, new_truth, "two different clusters");
    assert_eq!(
        printed(&out.stdout),
        new_truth,
        "run {run}: the store is the new sim's truth, nothing of the old one"
    );
    let log = cli::log(&dir);
    assert!(
        log.contains("not the server the store came from"),
        "run {run}: the relist from scratch is logged with its reason"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sim_killed_and_restarted_lower_is_relisted_not_merged() {
    let _heavy = crate::common::HEAVY.lock().await;
    // One run here (~95 s, most of it the watch's); it passed 12 runs in a row by hand at
    // 30 s (see the branch's report), which CI's loaded cores outlasted.
    restart_with_state_dir(0).await;
}

/// Starts `kscope sim ARGS` writing `kubeconfig`, a 15 s `get --watch-for` on it, and kills
/// the sim once `get` watches. Returns the sim's port and the running `get`.
async fn watched_then_killed(
    dir: &Path,
    args: &[&str],
    kubeconfig: &Path,
) -> (u16, tokio::task::JoinHandle<std::process::Output>) {
    let out = ["--kubeconfig-out", kubeconfig.to_str().expect("utf-8")];
    let mut sim = SimProcess::start(dir, &[args, &out[..]].concat()).await;
    let get = get_in_background(dir, kubeconfig, "15s");
    wait_until_watching(dir).await;
    sim.kill();
    (sim.port, get)
}

/// A sim restarted on the same port WITHOUT its state directory has a new CA: the old
/// kubeconfig's CA does not trust it. kscope does not print the dead cluster's pods as
/// current: `get --watch-for` exits 4, printing nothing, and says the certificate is not
/// trusted (not a vague "cannot reach").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sim_restarted_with_a_new_ca_is_untrusted_and_get_is_not_current() {
    let _heavy = crate::common::HEAVY.lock().await;
    let dir = cli::temp_dir("new-ca");
    let _ = std::fs::remove_dir_all(dir.join("state"));
    let kubeconfig = dir.join("kubeconfig");
    let size = ["--pods", "50", "--nodes", "2", "--namespaces", "1"];
    let (port, get) = watched_then_killed(&dir, &size, &kubeconfig).await;
    let _second = SimProcess::start(
        &dir,
        &[
            &size[..],
            &["--seed", "2", "--listen", &format!("127.0.0.1:{port}")],
        ]
        .concat(),
    )
    .await;
    let out = get.await.expect("join");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "not current: {stderr}");
    assert!(out.stdout.is_empty(), "nothing printed: {stderr}");
    assert!(
        stderr.contains("pods is not current")
            && stderr.contains("certificate is not trusted")
            && stderr.contains("invalid peer certificate"),
        "the cause is said: {stderr}"
    );
}

/// A sim restarted with the same CA but a new serving certificate (the state directory's
/// tls.crt and tls.key removed) and a higher resourceVersion: nothing in the resourceVersions
/// gives the change away, the certificate does. kscope relists from scratch, says why in its
/// log, and prints exactly the new truth.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sim_restarted_with_another_certificate_is_relisted() {
    let _heavy = crate::common::HEAVY.lock().await;
    let dir = cli::temp_dir("rotated");
    let _ = std::fs::remove_dir_all(dir.join("state"));
    let state_dir = dir.join("sim-state");
    let _ = std::fs::remove_dir_all(&state_dir);
    let kubeconfig = dir.join("kubeconfig");
    let state = ["--state-dir", state_dir.to_str().expect("utf-8")];
    let first = [
        &state[..],
        &["--pods", "50", "--nodes", "2", "--namespaces", "1"],
    ]
    .concat();
    let (port, get) = watched_then_killed(&dir, &first, &kubeconfig).await;
    std::fs::remove_file(state_dir.join("tls.crt")).expect("tls.crt");
    std::fs::remove_file(state_dir.join("tls.key")).expect("tls.key");
    let _second = SimProcess::start(
        &dir,
        &[
            &state[..],
            &["--pods", "400", "--nodes", "4", "--namespaces", "2"],
            &["--seed", "3", "--listen", &format!("127.0.0.1:{port}")],
        ]
        .concat(),
    )
    .await;
    let client = client_for(&kubeconfig).await;
    let out = get.await.expect("join");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(printed(&out.stdout), truth(&client).await);
    let log = cli::log(&dir);
    assert!(
        log.contains("certificate changed from sha256:"),
        "the relist's reason is the certificate"
    );
}

/// What one `get --watch-for` under combined faults ended as.
#[derive(Debug)]
enum Outcome {
    /// Exit 0, and what it printed is the truth.
    Current,
    /// A non-zero exit that says the store is not current (or never synced).
    SaidNotCurrent,
}

/// One seed of the issue's first probe: churn with watches dropped every 3 s, 30% of watches
/// answered 410, 10% of requests 500, 5% 429, and a 200-event history.
///
/// The faults fire only on kscope's requests, so its watch is long enough for a dozen drops
/// even when a loaded machine gives three kscope processes and three sims little of its
/// cores (at 30 s, one CI run saw none fire in any seed), and it may take two minutes to
/// sync rather than end early saying so.
async fn under_combined_faults(seed: u64) -> (Outcome, kscope_sim::FaultsFiredSnapshot) {
    let faults = Faults {
        drop_watch_every: Some(Duration::from_secs(3)),
        watch_gone_ratio: 0.3,
        error_ratio: 0.1,
        throttle_ratio: 0.05,
        history: Some(200),
        ..Faults::default()
    };
    let sim = Sim::start(
        SimConfig::with_size(1_000, 10, 4)
            .seed(seed)
            .churn(200.0, Some(Duration::from_secs(20)))
            .faults(faults),
    )
    .await
    .expect("sim");
    let dir = cli::temp_dir(&format!("combined-{seed}"));
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(&kubeconfig, sim.kubeconfig_yaml()).expect("kubeconfig");
    let out = cli::kscope(
        &dir,
        &[
            "get",
            "pods",
            "-A",
            "-o",
            "json",
            "--watch-for",
            "60s",
            "--sync-timeout",
            "120s",
            "--kubeconfig",
            kubeconfig.to_str().expect("utf-8"),
        ],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let outcome = match out.status.code() {
        Some(0) => {
            assert_eq!(
                printed(&out.stdout),
                sim.truth(Resource::Pods),
                "seed {seed}: exit 0 prints the truth, never a stale store ({stderr})"
            );
            Outcome::Current
        }
        Some(3 | 4) => {
            assert!(
                stderr.contains("is not current") || stderr.contains("did not sync"),
                "seed {seed}: a non-zero exit says why: {stderr}"
            );
            assert!(out.stdout.is_empty(), "seed {seed}: nothing printed");
            eprintln!("seed {seed}: {}", stderr.lines().last().unwrap_or_default());
            Outcome::SaidNotCurrent
        }
        other => panic!("seed {seed}: exit {other:?}: {stderr}"),
    };
    let fired = sim.faults_fired();
    sim.shutdown().await;
    (outcome, fired)
}

/// The issue's combined-faults probe for seeds 22, 33 and 44, at once: each `get` either
/// prints exactly the truth or exits non-zero saying it is not current.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn combined_faults_never_print_a_stale_store_as_current() {
    let _heavy = crate::common::HEAVY.lock().await;
    let runs = futures::future::join_all([22, 33, 44].map(under_combined_faults)).await;
    let mut total = kscope_sim::FaultsFiredSnapshot::default();
    for (seed, (outcome, fired)) in [22, 33, 44].into_iter().zip(&runs) {
        eprintln!("seed {seed}: {outcome:?}, faults fired {fired:?}");
        total.watches_dropped += fired.watches_dropped;
        total.internal_errors += fired.internal_errors;
        total.throttled += fired.throttled;
        total.watches_gone += fired.watches_gone;
    }
    // An informer makes few requests (a dozen watches and a few lists a seed; fewer when it
    // spends the run backing off), so the faults are counted over the three runs, and 500s
    // and 429s together, as in reflector_convergence.
    assert!(
        total.watches_dropped > 0
            && total.watches_gone > 0
            && total.internal_errors + total.throttled > 0,
        "watches were dropped and answered 410, and requests 500 or 429: {total:?}"
    );
}

/// Serves `app` on a free loopback port, over plain HTTP.
async fn serve(app: axum::Router) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

fn json_response(body: axum::body::Body) -> axum::response::Response {
    axum::response::Response::builder()
        .header("content-type", "application/json")
        .body(body)
        .expect("response")
}

/// A server that sends everything one byte a second: its list, and to a watch, the same
/// bytes (a watch-list never gets a whole event).
async fn trickling_server() -> std::net::SocketAddr {
    let app = axum::Router::new().route(
        "/api/v1/pods",
        axum::routing::get(move || async move {
            let bytes = futures::stream::iter(TRICKLED_LIST.bytes()).then(|b| async move {
                tokio::time::sleep(Duration::from_secs(1)).await;
                Ok::<_, std::io::Error>(vec![b])
            });
            json_response(axum::body::Body::from_stream(bytes))
        }),
    );
    serve(app).await
}

const TRICKLED_LIST: &str =
    r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[]}"#;

/// `get` against the trickling server, with a 3 s list timeout and `extra` flags: fails
/// with the list timeout on stderr, long before the list would end.
async fn assert_trickle_fails_at_the_list_timeout(name: &str, extra: &[&str]) {
    let addr = trickling_server().await;
    let dir = cli::temp_dir(name);
    let kubeconfig = cli::plain_kubeconfig(&dir, &format!("http://{addr}"), "t");
    let started = std::time::Instant::now();
    let mut args = vec![
        "get",
        "pods",
        "-A",
        "--kubeconfig",
        &kubeconfig,
        "--list-timeout",
        "3s",
        "--sync-timeout",
        "30s",
    ];
    args.extend_from_slice(extra);
    let out = cli::kscope(&dir, &args).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("the list response took longer than 3s"),
        "the cause is said: {stderr}"
    );
    assert!(out.stdout.is_empty());
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "bounded by the list timeout, not the {}-byte list",
        TRICKLED_LIST.len()
    );
}

/// List mode: `get` gives up at --list-timeout with the cause on stderr.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_trickled_at_one_byte_a_second_fails_at_the_list_timeout() {
    assert_trickle_fails_at_the_list_timeout("trickle", &["--initial-list", "list"]).await;
}

/// Watch-list mode (the default): the watch-list delivers no event within the watch idle
/// timeout, so it is cut; after three cuts before the end marker the round falls back to a
/// list, and that fails at --list-timeout as above.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_list_trickled_falls_back_to_a_list_that_fails_at_the_list_timeout() {
    assert_trickle_fails_at_the_list_timeout("trickle-watch-list", &["--watch-idle-timeout", "2s"])
        .await;
}

/// What the endless-line server saw of its watches.
#[derive(Default)]
struct Endless {
    lists: std::sync::atomic::AtomicU64,
    watches: std::sync::atomic::AtomicU64,
    closed: std::sync::atomic::AtomicU64,
    /// The most bytes one watch got out before its client went away.
    most_sent: std::sync::atomic::AtomicU64,
}

/// Counts a watch's bytes; its drop is the client closing the watch.
struct WatchSent {
    seen: std::sync::Arc<Endless>,
    sent: u64,
}

impl Drop for WatchSent {
    fn drop(&mut self) {
        use std::sync::atomic::Ordering::SeqCst;
        self.seen.most_sent.fetch_max(self.sent, SeqCst);
        self.seen.closed.fetch_add(1, SeqCst);
    }
}

/// The peak resident memory of process `pid` so far, in KiB (Linux's VmHWM).
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// A watch whose one line never ends (64 KiB chunks of one string, as fast as kscope reads):
/// at --max-watch-event kscope ends the watch, freeing the line, and relists; its memory
/// stays bounded however much the server sends; and `get` says it is not current.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_watch_line_is_cut_at_the_cap_and_relisted() {
    use std::sync::atomic::Ordering::SeqCst;
    let seen = std::sync::Arc::new(Endless::default());
    let state = seen.clone();
    let app = axum::Router::new().route(
        "/api/v1/pods",
        axum::routing::get(
            move |query: axum::extract::Query<std::collections::HashMap<String, String>>| {
                let seen = state.clone();
                async move {
                    if query.get("watch").map(String::as_str) != Some("true") {
                        seen.lists.fetch_add(1, SeqCst);
                        return json_response(axum::body::Body::from(
                            r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[]}"#,
                        ));
                    }
                    seen.watches.fetch_add(1, SeqCst);
                    let start = r#"{"type":"ADDED","object":{"metadata":{"name":""#;
                    let guard = WatchSent { seen, sent: 0 };
                    let chunks = futures::stream::unfold(guard, move |mut guard| async move {
                        let chunk = if guard.sent == 0 {
                            start.as_bytes().to_vec()
                        } else {
                            vec![b'x'; 64 << 10]
                        };
                        guard.sent += chunk.len() as u64;
                        Some((Ok::<_, std::io::Error>(chunk), guard))
                    });
                    json_response(axum::body::Body::from_stream(chunks))
                }
            },
        ),
    );
    let addr = serve(app).await;
    let dir = cli::temp_dir("endless");
    let kubeconfig = cli::plain_kubeconfig(&dir, &format!("http://{addr}"), "t");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kscope"))
        .args(["get", "pods", "-A", "--watch-for", "8s"])
        .args(["--max-watch-event", "1MiB"])
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .env("XDG_STATE_HOME", dir.join("state"))
        .env_remove("KUBECONFIG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kscope get runs");
    let pid = child.id();
    let mut peak = 0;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("wait").is_none() {
        assert!(std::time::Instant::now() < deadline, "get ends");
        if let Some(kib) = peak_rss_kib(pid) {
            peak = peak.max(kib);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let out = child.wait_with_output().expect("output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "not current: {stderr}");
    assert!(
        stderr.contains("a watch event longer than 1048576 bytes"),
        "the cause is said: {stderr}"
    );
    let (lists, watches) = (seen.lists.load(SeqCst), seen.watches.load(SeqCst));
    assert!(
        lists >= 2,
        "each cut watch relists: {lists} lists, {watches} watches"
    );
    assert!(watches >= 2, "{watches} watches");
    // Each watch was closed by kscope soon after the cap: what the server got out is the
    // cap plus what the sockets and one read buffer hold, not an unbounded line.
    let most = seen.most_sent.load(SeqCst);
    assert!(
        most < 16 << 20,
        "a watch sent {most} bytes before kscope closed it"
    );
    eprintln!(
        "{lists} lists, {watches} watches, at most {most} bytes a watch, peak RSS {peak} KiB"
    );
    assert!(peak > 0, "the peak RSS was read");
    assert!(
        peak < 150 << 10,
        "kscope's peak RSS stays bounded: {peak} KiB"
    );
}

/// The Reflector's health is in the delta stream at the level it deserves: `kscope deltas`
/// against a sim that fails every request, then recovers, shows a WARN for the backoff (why,
/// and the next retry) and an INFO when it watches again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deltas_show_backing_off_and_recovering_as_health() {
    let sim = Sim::start(SimConfig::with_size(20, 2, 1).faults(Faults {
        error_ratio: 1.0,
        ..Faults::default()
    }))
    .await
    .expect("sim");
    let dir = cli::temp_dir("health");
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(&kubeconfig, sim.kubeconfig_yaml()).expect("kubeconfig");
    let kubeconfig = kubeconfig.to_str().expect("utf-8").to_string();
    let deltas = {
        let dir = dir.clone();
        tokio::spawn(async move {
            cli::kscope(
                &dir,
                &[
                    "deltas",
                    "pods",
                    "-A",
                    "--for",
                    "12s",
                    "--kubeconfig",
                    &kubeconfig,
                ],
            )
            .await
        })
    };
    // Let a few attempts fail before the sim recovers.
    tokio::time::timeout(Duration::from_secs(30), async {
        while sim.faults_fired().internal_errors < 2 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the sim fails the first lists");
    sim.set_faults(Faults::default());
    let out = deltas.await.expect("join");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let health: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
        .filter(|l: &serde_json::Value| l["type"] == "HEALTH")
        .collect();
    let warn = health
        .iter()
        .find(|l| l["level"] == "warn")
        .unwrap_or_else(|| panic!("a WARN for the backoff: {health:?}"));
    let message = warn["message"].as_str().expect("message");
    assert!(
        message.contains("backing off")
            && message.contains("failed attempt(s) in a row: list pods: Internal error occurred")
            && message.contains("next retry in"),
        "{message}"
    );
    let last = health.last().expect("health lines");
    assert_eq!(last["level"], "info", "it ends watching: {health:?}");
    assert!(
        last["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("synced and watching")),
        "{last}"
    );
    sim.shutdown().await;
}
