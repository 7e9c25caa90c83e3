//! `kscope get -o json|yaml|name` against kubectl on the same sim, byte for byte: the full
//! objects (which the store does not keep) as kubectl prints them, for a list and for one
//! name; Secrets masked, and said so. Skipped where kubectl is absent (failed under CI=true).

use kscope_sim::SimConfig;
use serde_json::Value;

use crate::common::cli::kscope;
use crate::common::kubectl::Kubectl;
use crate::kinds::{comparable, parse_table};

/// A sim that changes nothing between kubectl's read and kscope's.
async fn still_sim(name: &str) -> Option<Kubectl> {
    let mut config = SimConfig::with_size(30, 3, 2);
    config.controllers = false;
    Kubectl::start_with(name, config).await
}

/// `kscope ARGS --kubeconfig …`: (exit success, stdout, stderr).
async fn run(fx: &Kubectl, args: &[&str]) -> (bool, String, String) {
    let kubeconfig = fx.dir.join("kubeconfig").display().to_string();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--kubeconfig", &kubeconfig]);
    let out = kscope(fx.dir.as_path(), &all).await;
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The first object of `kind` kubectl lists: (namespace, name).
async fn first(fx: &Kubectl, kind: &str) -> (String, String) {
    let text = fx
        .ok(&[
            "get",
            kind,
            "-A",
            "-o",
            "jsonpath={.items[0].metadata.namespace} {.items[0].metadata.name}",
        ])
        .await;
    let (ns, name) = text.split_once(' ').expect("namespace and name");
    (ns.to_string(), name.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_and_yaml_are_kubectls_byte_for_byte() {
    let Some(fx) = still_sim("output-bytes").await else {
        return;
    };
    // A ConfigMap whose strings exercise YAML's quoting, folding and block styles.
    let tricky = serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "tricky", "namespace": "default",
            "labels": {"a10": "x", "a9": "y", "a-b": "z", "A": "1", "on": "yes"}},
        "data": {
            "long": "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen",
            "multi": "line1\nline2\n", "lead": "  lead\nx", "number": "0123", "time": "2026-01-01",
            "colon": "a: b", "star": "*x", "empty": "", "html": "<a&b>", "tab": "a\tb\nc",
            "emoji": "x\u{1F600}", "quote": "'long quoted and then a long long long long long long long long long tail",
        },
    });
    fx.ok(&["create", "-f", &fx.file("tricky.json", &tricky.to_string())])
        .await;
    for kind in ["pods", "deployments", "services", "configmaps", "widgets"] {
        let (ns, name) = first(&fx, kind).await;
        for format in ["json", "yaml"] {
            let cases: [Vec<&str>; 3] = [
                vec!["get", kind, "-A", "-o", format],
                vec!["get", kind, "-n", &ns, "-o", format],
                vec!["get", kind, &name, "-n", &ns, "-o", format],
            ];
            for args in cases {
                let want = fx.ok(&args).await;
                let (ok, got, err) = run(&fx, &args).await;
                assert!(ok, "kscope {args:?}: {err}");
                assert!(
                    got == want,
                    "kscope {args:?} differs from kubectl's:\n{}",
                    first_difference(&want, &got)
                );
            }
        }
    }
    for format in ["json", "yaml"] {
        // The tricky ConfigMap by name, and a label selector.
        for args in [
            vec!["get", "cm", "tricky", "-n", "default", "-o", format],
            vec![
                "get",
                "deploy",
                "-A",
                "-l",
                "app=checkout-api",
                "-o",
                format,
            ],
        ] {
            let want = fx.ok(&args).await;
            let (ok, got, err) = run(&fx, &args).await;
            assert!(ok, "kscope {args:?}: {err}");
            assert!(got == want, "{args:?}:\n{}", first_difference(&want, &got));
        }
    }
    // Two names, one missing: the one found as a List, the other kubectl's error, exit 1.
    let args = [
        "get", "cm", "tricky", "nothing", "-n", "default", "-o", "json",
    ];
    let (kubectl_ok, want, kubectl_err) = fx.run(&args).await;
    let (ok, got, err) = run(&fx, &args).await;
    assert!(!kubectl_ok && !ok);
    assert_eq!(got, want);
    let line = r#"Error from server (NotFound): configmaps "nothing" not found"#;
    assert!(kubectl_err.contains(line) && err.contains(line), "{err}");
}

/// The first line where `want` and `got` differ, with its number.
fn first_difference(want: &str, got: &str) -> String {
    let mut got_lines = got.lines();
    for (i, line) in want.lines().enumerate() {
        let other = got_lines.next();
        if other != Some(line) {
            return format!("line {}: kubectl {line:?}, kscope {other:?}", i + 1);
        }
    }
    format!("kscope has more: {:?}", got_lines.next())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_and_tables_by_name_are_kubectls() {
    let Some(fx) = still_sim("output-names").await else {
        return;
    };
    for kind in ["pods", "deployments", "deploy.apps", "services", "widgets"] {
        let want = fx.ok(&["get", kind, "-A", "-o", "name"]).await;
        let (ok, got, err) = run(&fx, &["get", kind, "-A", "-o", "name"]).await;
        assert!(ok, "{err}");
        assert_eq!(got, want, "-o name of {kind}");
        assert!(!got.is_empty());
    }
    // A table of named objects, in the order named.
    let (ns, _) = first(&fx, "deployments").await;
    let names = fx
        .ok(&[
            "get",
            "deploy",
            "-n",
            &ns,
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ])
        .await;
    let mut names: Vec<&str> = names.split(' ').collect();
    names.reverse();
    let mut args = vec!["get", "deploy", "-n", ns.as_str()];
    args.extend(&names);
    let want = fx.ok(&args).await;
    let (ok, got, err) = run(&fx, &args).await;
    assert!(ok, "{err}");
    let (want_names, want_rows) = parse_table(&want);
    let (got_names, got_rows) = parse_table(&got);
    assert_eq!(got_names, want_names);
    let order = |rows: &[Vec<String>]| rows.iter().map(|r| r[0].clone()).collect::<Vec<_>>();
    assert_eq!(order(&got_rows), order(&want_rows), "in the order named");
    assert_eq!(
        comparable(&got_names, &got_rows),
        comparable(&want_names, &want_rows)
    );
    // By name across all namespaces is kubectl's error too.
    let (ok, _, err) = run(&fx, &["get", "deploy", names[0], "-A"]).await;
    assert!(!ok);
    assert!(err.contains("cannot be retrieved by name across all namespaces"));
}

/// Every string value under `data` of the Secrets in `list`, as served (base64).
fn secret_values(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["data"].as_object().into_iter().flatten())
        .filter_map(|(_, v)| v.as_str().map(str::to_string))
        .filter(|v| v.len() >= 8)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_print_as_kubectl_prints_them_with_every_value_masked() {
    let Some(fx) = still_sim("output-secrets").await else {
        return;
    };
    let manifest = r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"applied","namespace":"default"},
        "type":"Opaque","stringData":{"token":"applied-secret-value-1234"}}"#;
    fx.ok(&["apply", "-f", &fx.file("secret.json", manifest)])
        .await;
    let kubectl: Value =
        serde_json::from_str(&fx.ok(&["get", "secrets", "-A", "-o", "json"]).await).expect("json");
    let values = secret_values(&kubectl);
    assert!(
        values.len() > 3,
        "the sim's Secrets hold values: {values:?}"
    );
    let mut masked = kubectl.clone();
    for item in masked["items"].as_array_mut().expect("items") {
        kscope_resources::secret::mask_secret(item);
    }
    for format in ["json", "yaml"] {
        let (ok, got, err) = run(&fx, &["get", "secrets", "-A", "-o", format]).await;
        assert!(ok, "{err}");
        for value in values
            .iter()
            .chain([&"applied-secret-value-1234".to_string()])
        {
            assert!(!got.contains(value.as_str()), "-o {format} holds {value}");
        }
        assert!(err.contains("masked"), "said on stderr: {err}");
        let printed: Value = match format {
            "json" => serde_json::from_str(&got).expect("json"),
            _ => serde_saphyr::from_str(&got).expect("yaml"),
        };
        assert_eq!(printed, masked, "-o {format}: kubectl's, values masked");
    }
    // Byte for byte, but for the masks.
    let mut want = Vec::new();
    kscope::commands::output::write_object(
        &mut want,
        &masked,
        kscope::commands::output::OutputFormat::Json,
    )
    .expect("writes");
    let (_, got, _) = run(&fx, &["get", "secrets", "-A", "-o", "json"]).await;
    assert_eq!(got, String::from_utf8_lossy(&want));
    // A mask is not base64: applied back, the API server refuses it.
    let applied = masked["items"]
        .as_array()
        .and_then(|items| items.iter().find(|i| i["metadata"]["name"] == "applied"))
        .expect("the applied Secret");
    let mask = applied["data"]["token"].as_str().expect("a mask");
    assert!(mask.starts_with("••••••••"), "{mask}");
    use base64::Engine as _;
    assert!(
        base64::engine::general_purpose::STANDARD
            .decode(mask)
            .is_err()
    );
}

/// The tables of a `get all`, split at the blank lines between them.
fn tables(text: &str) -> Vec<String> {
    text.split("\n\n")
        .map(|t| format!("{}\n", t.trim_end()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_all_prints_every_kind_of_the_category_as_kubectl_does() {
    let Some(fx) = still_sim("output-all").await else {
        return;
    };
    let want = fx.ok(&["get", "all", "-A"]).await;
    let (ok, got, err) = run(&fx, &["get", "all", "-A"]).await;
    assert!(ok, "{err}");
    let (want_tables, got_tables) = (tables(&want), tables(&got));
    assert!(want_tables.len() > 5, "the sim serves many kinds in `all`");
    assert_eq!(got_tables.len(), want_tables.len(), "{got}");
    for (got, want) in got_tables.iter().zip(&want_tables) {
        let (want_names, want_rows) = parse_table(want);
        let (got_names, got_rows) = parse_table(got);
        assert_eq!(got_names, want_names, "{got}\nkubectl:\n{want}");
        // RESTARTS says when the last restart was (`32 (12d ago)`), as the API server's
        // printer does; that age is a clock, read a moment apart by the two clients.
        let restarts = |names: &[String], rows: Vec<Vec<String>>| -> Vec<Vec<String>> {
            let at = names.iter().position(|n| n == "RESTARTS");
            rows.into_iter()
                .map(|mut row| {
                    if let Some(cell) = at.and_then(|i| row.get_mut(i))
                        && let Some((count, _)) = cell.split_once(" (")
                    {
                        *cell = format!("{count} (… ago)");
                    }
                    row
                })
                .collect()
        };
        let got_rows = restarts(&got_names, got_rows);
        let want_rows = restarts(&want_names, want_rows);
        assert_eq!(
            comparable(&got_names, &got_rows),
            comparable(&want_names, &want_rows),
            "{got}\nkubectl:\n{want}"
        );
    }
    // Names and whole objects across the category, and a namespace with one kind in it.
    for args in [
        vec!["get", "all", "-A", "-o", "name"],
        vec!["get", "all", "-n", "default"],
        vec!["get", "all", "-n", "kube-system", "-o", "json"],
        vec!["get", "all", "-n", "kube-system", "-o", "yaml"],
        vec!["get", "svc,deploy", "-A", "-o", "name"],
    ] {
        let want = fx.ok(&args).await;
        let (ok, got, err) = run(&fx, &args).await;
        assert!(ok, "{args:?}: {err}");
        assert!(got == want, "{args:?}:\n{}", first_difference(&want, &got));
    }
    let (ok, got, err) = run(&fx, &["get", "all", "-n", "nothing-here"]).await;
    assert!(ok && got.is_empty(), "{got}");
    assert!(err.contains("No resources found in nothing-here namespace."));
}
