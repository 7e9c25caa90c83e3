//! Issue 39's column edges: `-o wide` as kubectl prints it (pods' NOMINATED NODE and
//! READINESS GATES, nodes' EXTERNAL-IP, OS-IMAGE, KERNEL-VERSION, CONTAINER-RUNTIME),
//! against kubectl on the same sim. Skipped where kubectl is absent (failed under CI=true).

use kscope_sim::SimConfig;

use crate::common::cli::kscope;
use crate::common::kubectl::Kubectl;
use crate::kinds::{comparable, parse_table};

/// A sim whose objects stay as they are between kubectl's read and kscope's.
async fn still_sim(name: &str) -> Option<Kubectl> {
    let mut config = SimConfig::with_size(12, 3, 2);
    config.controllers = false;
    Kubectl::start_with(name, config).await
}

/// `kscope get ARGS --kubeconfig …`'s stdout, which must succeed.
async fn kscope_ok(fx: &Kubectl, args: &[&str]) -> String {
    let kubeconfig = fx.dir.join("kubeconfig").display().to_string();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--kubeconfig", &kubeconfig]);
    let out = kscope(fx.dir.as_path(), &all).await;
    assert!(
        out.status.success(),
        "kscope {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wide_pods_and_nodes_are_kubectls() {
    let Some(fx) = still_sim("wide-columns").await else {
        return;
    };
    // A pod with readiness gates, one of them true, as an ingress controller would set it.
    let gated = serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "gated", "namespace": "default"},
        "spec": {
            "containers": [{"name": "c", "image": "nginx:1"}],
            "readinessGates": [
                {"conditionType": "example.com/lb-ready"},
                {"conditionType": "example.com/dns-ready"},
            ],
        },
    });
    fx.ok(&["create", "-f", &fx.file("gated.json", &gated.to_string())])
        .await;
    let status = r#"{"status":{"nominatedNodeName":"elsewhere",
        "conditions":[{"type":"example.com/lb-ready","status":"True"}]}}"#;
    fx.ok(&[
        "patch", "pod", "gated", "-n", "default", "--subresource=status", "--type=merge", "-p",
        status,
    ])
    .await;
    for args in [
        ["get", "pods", "-A", "-o", "wide"].as_slice(),
        ["get", "pods", "-n", "default", "-o", "wide"].as_slice(),
        ["get", "nodes", "-o", "wide"].as_slice(),
    ] {
        let want = fx.ok(args).await;
        let got = kscope_ok(&fx, args).await;
        let (want_names, want_rows) = parse_table(&want);
        let (got_names, got_rows) = parse_table(&got);
        assert_eq!(got_names, want_names, "{args:?} headers:\n{got}\nkubectl:\n{want}");
        assert_eq!(
            comparable(&got_names, &got_rows),
            comparable(&want_names, &want_rows),
            "{args:?}:\n{got}\nkubectl:\n{want}"
        );
        if args[1] == "pods" && args[2] == "-n" {
            let gated = want.lines().find(|l| l.starts_with("gated ")).unwrap_or_default();
            assert!(
                gated.contains(" elsewhere ") && gated.ends_with("1/2"),
                "the gated pod's nominated node and gates:\n{want}"
            );
        }
    }
}
