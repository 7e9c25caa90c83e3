//! The sim as real clients see it: OpenAPI schemas for every kind (kubectl explain, the
//! Python client's v2 read) and HTTP/2 over TLS by ALPN, with HTTP/1.1 for who asks for it.
//! Skipped where a client is not on PATH (failed under CI=true).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use crate::common::kubectl::Kubectl;
use crate::common::python;
use crate::common::tools;

#[tokio::test]
async fn kubectl_explain_reads_built_in_kinds_field_docs() {
    let Some(fx) = Kubectl::start("explain").await else {
        return;
    };
    let containers = fx.ok(&["explain", "pods.spec.containers"]).await;
    for wanted in [
        "KIND:       Pod",
        "FIELD: containers <[]Container>",
        "List of containers belonging to the pod.",
        "livenessProbe\t<Probe>",
        "image\t<string>",
    ] {
        assert!(containers.contains(wanted), "{wanted:?} in:\n{containers}");
    }
    let rolling = fx
        .ok(&["explain", "deployment.spec.strategy.rollingUpdate"])
        .await;
    for wanted in [
        "GROUP:      apps",
        "FIELD: rollingUpdate <RollingUpdateDeployment>",
        "maxSurge\t<IntOrString>",
        "The maximum number of pods that can be scheduled above the desired number",
    ] {
        assert!(rolling.contains(wanted), "{wanted:?} in:\n{rolling}");
    }
    // Another group-version's document, and a kind in two groups told apart.
    let events = fx
        .ok(&["explain", "events.note", "--api-version=events.k8s.io/v1"])
        .await;
    assert!(events.contains("GROUP:      events.k8s.io"), "{events}");
    // A field the schema does not have is refused by kubectl itself.
    let (ok, _, err) = fx.run(&["explain", "pods.spec.nonsense"]).await;
    assert!(!ok && err.contains("nonsense"), "{err}");
}

#[tokio::test]
async fn kubectl_explain_reads_custom_resources_with_their_metadata() {
    let Some(fx) = Kubectl::start("explain-crd").await else {
        return;
    };
    let spec = fx.ok(&["explain", "widgets.spec"]).await;
    assert!(
        spec.contains("GROUP:      example.com") && spec.contains("size"),
        "{spec}"
    );
    // `metadata` is the real ObjectMeta, as the server publishes it for a CRD.
    let labels = fx.ok(&["explain", "widgets.metadata.labels"]).await;
    assert!(
        labels.contains("FIELD: labels <map[string]string>")
            && labels.contains("Map of string keys and values"),
        "{labels}"
    );
}

const PYTHON_OPENAPI_V2: &str = r#"
import json, sys
from kubernetes import client, config
api = config.new_client_from_config(config_file=sys.argv[1])
request = api.param_serialize("GET", "/openapi/v2", header_params={"Accept": "application/json"},
                              auth_settings=["BearerToken"])
response = api.call_api(*request)
response.read()
status = response.status
data = json.loads(response.data)
definitions = data["definitions"]
pod = definitions["io.k8s.api.core.v1.Pod"]
print(status)
print(json.dumps(pod["x-kubernetes-group-version-kind"], sort_keys=True))
print(definitions["io.k8s.api.core.v1.Container"]["properties"]["image"]["description"])
print(json.dumps(definitions["com.example.v1.Widget"]["x-kubernetes-group-version-kind"], sort_keys=True))
"#;

#[tokio::test]
async fn python_client_reads_the_openapi_v2_document() {
    let Some(fx) = Kubectl::start("openapi-v2").await else {
        return;
    };
    let Some(out) = python::run(&fx, "openapi_v2.py", PYTHON_OPENAPI_V2).await else {
        return;
    };
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "200");
    assert_eq!(
        lines[1],
        r#"[{"group": "", "kind": "Pod", "version": "v1"}]"#
    );
    assert!(lines[2].starts_with("Container image name."), "{out}");
    assert_eq!(
        lines[3],
        r#"[{"group": "example.com", "kind": "Widget", "version": "v1"}]"#
    );
}

/// curl against the sim with its CA and token; returns (success, stdout, stderr).
async fn curl(fx: &Kubectl, args: &[&str]) -> Option<(bool, String, String)> {
    let curl = tools::required("curl", "to see which HTTP version the sim speaks")?;
    let ca = fx.file("ca.crt", &ca_pem(fx.sim.kubeconfig_yaml()));
    let mut command = tokio::process::Command::new(curl);
    command
        .args(["-sS", "--cacert", &ca, "-H"])
        .arg(format!("Authorization: Bearer {}", fx.sim.token()))
        .args(args)
        .stdin(Stdio::null());
    let output = tokio::time::timeout(Duration::from_secs(60), command.output())
        .await
        .expect("curl finishes")
        .expect("curl runs");
    Some((
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    ))
}

/// The CA of a sim's kubeconfig, as PEM.
fn ca_pem(kubeconfig: &str) -> String {
    use base64::Engine;
    let config: serde_json::Value = serde_saphyr::from_str(kubeconfig).expect("kubeconfig YAML");
    let encoded = config["clusters"][0]["cluster"]["certificate-authority-data"]
        .as_str()
        .expect("the kubeconfig carries its CA");
    let pem = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .expect("base64 CA");
    String::from_utf8(pem).expect("PEM text")
}

#[tokio::test]
async fn http2_by_alpn_and_http1_for_who_asks_for_it() {
    let Some(fx) = Kubectl::start("http2").await else {
        return;
    };
    let url = fx.sim.url().to_string();
    let version = format!("{url}/version");
    let Some((ok, out, err)) = curl(
        &fx,
        &[
            "--http2",
            "-o",
            "/dev/null",
            "-w",
            "%{http_version}",
            &version,
        ],
    )
    .await
    else {
        return;
    };
    assert!(ok, "{err}");
    assert_eq!(out, "2");
    let (ok, out, err) = curl(
        &fx,
        &[
            "--http1.1",
            "-o",
            "/dev/null",
            "-w",
            "%{http_version}",
            &version,
        ],
    )
    .await
    .expect("curl");
    assert!(ok, "{err}");
    assert_eq!(out, "1.1");
    // Two watches over HTTP/2 end with their streams when their time is up, and a list is
    // answered meanwhile: all three multiplexed on one connection (curl's parallel
    // transfers wait to share one where the server speaks HTTP/2).
    let watch =
        |kind: &str| format!("{url}/api/v1/namespaces/default/{kind}?watch=true&timeoutSeconds=2");
    let list = format!("{url}/api/v1/namespaces?limit=1");
    let (ok, out, err) = curl(
        &fx,
        &[
            "--http2",
            "--parallel",
            "-o",
            "/dev/null",
            "-o",
            "/dev/null",
            "-o",
            "/dev/null",
            "-w",
            "%{http_version} %{response_code} %{num_connects}\n",
            &watch("configmaps"),
            &watch("secrets"),
            &list,
        ],
    )
    .await
    .expect("curl");
    assert!(ok, "{err}");
    let transfers: Vec<Vec<&str>> = out.lines().map(|l| l.split(' ').collect()).collect();
    assert_eq!(transfers.len(), 3, "{out}");
    assert!(transfers.iter().all(|t| t[..2] == ["2", "200"]), "{out}");
    let connections: u32 = transfers.iter().map(|t| t[2].parse::<u32>().unwrap()).sum();
    assert_eq!(connections, 1, "{out}");
}

#[tokio::test]
async fn kubectl_follows_several_logs_over_one_http2_connection() {
    let Some(fx) = Kubectl::start("http2-logs").await else {
        return;
    };
    // The pods of one Deployment: kubectl follows each one's log at once (up to five), as
    // concurrent streams on its one connection.
    let selector = fx
        .ok(&[
            "get",
            "deployments",
            "-A",
            "-o",
            "jsonpath={range .items[?(@.status.readyReplicas>1)]}{.metadata.namespace} {.spec.selector.matchLabels.app}{\"\\n\"}{end}",
        ])
        .await;
    let (namespace, app) = selector
        .lines()
        .find_map(|l| l.split_once(' '))
        .expect("a Deployment with two ready pods");
    let (mut child, stderr) = http2_kubectl(
        &fx,
        &[
            "logs",
            "-f",
            "-n",
            namespace,
            "-l",
            &format!("app={app}"),
            "--prefix",
            "--tail=1",
            "--max-log-requests=100",
        ],
    );
    let stdout = child.stdout.take().expect("stdout");
    let pods = tokio::task::spawn_blocking(move || {
        let mut pods: Vec<String> = Vec::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let pod = line.split('/').nth(1).unwrap_or_default().to_string();
            if !pods.contains(&pod) {
                pods.push(pod);
            }
            if pods.len() == 2 {
                break;
            }
        }
        pods
    });
    let pods = tokio::time::timeout(Duration::from_secs(60), pods)
        .await
        .expect("lines from two pods")
        .expect("join");
    let _ = child.kill();
    let _ = child.wait();
    let stderr = std::fs::read_to_string(stderr).expect("kubectl's stderr");
    assert_eq!(pods.len(), 2, "{pods:?}: {stderr}");
    assert!(
        stderr.contains(HTTP2_CONNECTION),
        "kubectl did not speak HTTP/2: {stderr}"
    );
}

/// What Go's HTTP/2 transport logs (under `GODEBUG=http2debug=1`) when it opens a connection.
const HTTP2_CONNECTION: &str = "http2: Transport creating client conn";

/// kubectl started with `args`, its stdout piped, and Go's HTTP/2 transport logging what it
/// does to a file (returned), read once kubectl is done: a pipe nobody reads would fill and
/// stall it.
fn http2_kubectl(fx: &Kubectl, args: &[&str]) -> (std::process::Child, PathBuf) {
    let path = fx
        .dir
        .join(format!("stderr-{}", args.join("-").replace('/', "_")));
    let stderr = std::fs::File::create(&path).expect("stderr file");
    let child = fx
        .command(args)
        .env("GODEBUG", "http2debug=1")
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("kubectl runs");
    (child, path)
}

#[tokio::test]
async fn kubectl_log_follow_over_http2_ends_when_the_pod_goes() {
    let Some(fx) = Kubectl::start("http2-follow").await else {
        return;
    };
    let running = fx
        .ok(&[
            "get",
            "pods",
            "-A",
            "--field-selector=status.phase=Running",
            "-o",
            "jsonpath={.items[0].metadata.namespace} {.items[0].metadata.name}",
        ])
        .await;
    let (namespace, pod) = running.split_once(' ').expect("a running pod");
    let (mut child, stderr) = http2_kubectl(&fx, &["logs", "-f", "-n", namespace, pod, "--tail=1"]);
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let first = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        stdout.read_line(&mut line).map(|_| (line, stdout))
    });
    let (first, mut stdout) = tokio::time::timeout(Duration::from_secs(60), first)
        .await
        .expect("a first log line")
        .expect("join")
        .expect("read");
    assert!(!first.is_empty());
    fx.ok(&[
        "delete",
        "pod",
        "-n",
        namespace,
        pod,
        "--grace-period=0",
        "--force",
    ])
    .await;
    // The follow's stream ends, and kubectl with it, successfully.
    let ended = tokio::task::spawn_blocking(move || {
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut rest);
        child.wait()
    });
    let status = tokio::time::timeout(Duration::from_secs(60), ended)
        .await
        .expect("kubectl logs -f ends with the pod")
        .expect("join")
        .expect("wait");
    let stderr = std::fs::read_to_string(stderr).expect("kubectl's stderr");
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains(HTTP2_CONNECTION),
        "kubectl did not speak HTTP/2: {stderr}"
    );
}
