//! Secrets through the real binary against the sim: `kscope get secrets` prints kubectl's
//! columns, and neither `get` nor `deltas` nor the log ever carry a Secret's value.

use crate::common::cli;

use std::path::Path;
use std::time::Duration;

use base64::Engine as _;
use cli::{kscope, temp_dir};
use k8s_openapi::api::core::v1::Secret;
use kscope_sim::{Sim, SimConfig, SimHandle};
use kube::api::{Api, ListParams, Patch, PatchParams};

async fn start(dir: &Path) -> (SimHandle, String, Api<Secret>) {
    let sim = Sim::start(SimConfig::with_size(20, 2, 2))
        .await
        .expect("sim");
    let path = dir.join("kubeconfig");
    std::fs::write(&path, sim.kubeconfig_yaml()).expect("write kubeconfig");
    let client = kube::Client::try_from(sim.kube_config().await.expect("config")).expect("client");
    (sim, path.display().to_string(), Api::all(client))
}

/// Every value the sim's Secrets hold, base64 as served and decoded.
async fn values(secrets: &Api<Secret>) -> Vec<String> {
    let b64 = &base64::engine::general_purpose::STANDARD;
    let list = secrets.list(&ListParams::default()).await.expect("list");
    list.items
        .iter()
        .flat_map(|s| s.data.iter().flatten())
        .flat_map(|(_, v)| [b64.encode(&v.0), String::from_utf8_lossy(&v.0).into_owned()])
        // Short ones (a namespace name as a token Secret's `namespace`) occur as names too.
        .filter(|v| v.len() >= 16)
        .collect()
}

fn assert_no_value(text: &str, values: &[String], what: &str) {
    for value in values {
        assert!(!text.contains(value.as_str()), "{what} holds {value}");
    }
}

/// The run's log. A missing or empty log fails the test: "no value in the log" means
/// nothing if there was no log to look in.
fn log(dir: &Path) -> String {
    let path = dir.join("state/kscope/kscope.log");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("kscope's log {} is missing: {e}", path.display()));
    assert!(
        !text.trim().is_empty(),
        "kscope's log {} is empty",
        path.display()
    );
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_secrets_prints_kubectls_columns_and_no_values() {
    let dir = temp_dir("get");
    let (sim, kubeconfig, secrets) = start(&dir).await;
    let values = values(&secrets).await;
    assert!(values.len() > 10);

    let out = kscope(&dir, &["get", "secrets", "-A", "--kubeconfig", &kubeconfig]).await;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(lines[0], ["NAMESPACE", "NAME", "TYPE", "DATA", "AGE"]);
    assert_eq!(lines.len(), 1 + 12, "{text}");
    let row = |name: &str| {
        lines
            .iter()
            .find(|l| l.get(1).is_some_and(|n| n.ends_with(name)))
            .unwrap_or_else(|| panic!("no {name} in {text}"))
            .clone()
    };
    assert_eq!(row("-tls")[2..4], ["kubernetes.io/tls", "2"]);
    assert_eq!(row("-db-credentials")[2..4], ["Opaque", "2"]);
    assert_eq!(
        row("registry-credentials")[2..4],
        ["kubernetes.io/dockerconfigjson", "1"]
    );
    assert_eq!(
        lines
            .iter()
            .filter(|l| l[2] == "kubernetes.io/service-account-token" && l[3] == "3")
            .count(),
        6
    );
    assert_no_value(&text, &values, "get's table");

    let out = kscope(
        &dir,
        &[
            "get",
            "sec",
            "-A",
            "--kubeconfig",
            &kubeconfig,
            "-o",
            "json",
        ],
    )
    .await;
    assert!(out.status.success());
    let json = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(json.contains("\"tls.key\""), "keys are listed");
    assert_no_value(&json, &values, "get -o json");
    // Applied back, an empty value would blank the Secret; the mask is not base64, which an
    // API server refuses.
    let printed: serde_json::Value = serde_json::from_str(&json).expect("-o json is JSON");
    let items = printed["items"].as_array().expect("a list");
    let mut seen = 0;
    for item in items {
        for value in item["data"]
            .as_object()
            .into_iter()
            .flat_map(|d| d.values())
        {
            let value = value.as_str().expect("a string");
            assert!(value.starts_with("••••••••"), "masked: {value}");
            assert!(
                base64::engine::general_purpose::STANDARD
                    .decode(value)
                    .is_err(),
                "not base64: {value}"
            );
            seen += 1;
        }
    }
    assert!(seen > 0, "some Secret has data: {json}");
    assert_no_value(&log(&dir), &values, "the log");
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deltas_show_which_keys_changed_never_their_values() {
    let dir = temp_dir("deltas");
    let (sim, kubeconfig, secrets) = start(&dir).await;
    let list = secrets.list(&ListParams::default()).await.expect("list");
    let secret = list
        .items
        .iter()
        .find(|s| s.type_.as_deref() == Some("Opaque"))
        .expect("an Opaque Secret");
    let (ns, name) = (
        secret.metadata.namespace.clone().expect("namespace"),
        secret.metadata.name.clone().expect("name"),
    );
    let in_ns: Api<Secret> = Api::namespaced(secrets.clone().into_client(), &ns);

    let dir_for_run = dir.clone();
    let args = [
        "deltas",
        "secrets",
        "-A",
        "--kubeconfig",
        &kubeconfig,
        "--for",
        "8s",
    ]
    .map(String::from);
    let run = tokio::spawn(async move {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        kscope(&dir_for_run, &args).await
    });
    let mut written = Vec::new();
    for i in 0..4 {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let password = format!("rotated-password-number-{i:04}");
        let patch = serde_json::json!({"stringData": {"password": password}});
        in_ns
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect("patch");
        written.push(base64::engine::general_purpose::STANDARD.encode(&password));
        written.push(password);
    }
    let out = run.await.expect("join");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let key = format!("{ns}/{name}");
    let changed: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSON line"))
        .filter(|l| l["type"] == "MODIFIED" && l["key"] == key.as_str())
        .filter_map(|l| l.get("changed").cloned())
        .collect();
    assert!(
        changed.iter().any(|c| c
            .as_array()
            .is_some_and(|c| c.contains(&"data.password".into()))),
        "the rotated key shows: {text}"
    );
    let mut all = values(&secrets).await;
    all.extend(written);
    assert_no_value(&text, &all, "deltas output");
    assert_no_value(&log(&dir), &all, "the log");
    sim.shutdown().await;
}
