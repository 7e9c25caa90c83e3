//! `d` describes an object as `kubectl describe` does: for each kind a person describes
//! daily, and for kinds only the generic describer knows (a ConfigMap, a CustomResource),
//! kscope's describe of a real object of the simulated cluster is compared line by line with
//! what kubectl prints for it, against the same server over HTTP.

use kscope_client::cluster::Cluster;
use kscope_index_views::describe::fetch_described;

use crate::common::kubectl::Kubectl;

/// (kubectl's resource name, the API path of its objects in a namespace, or cluster-wide).
const KINDS: &[(&str, &str)] = &[
    ("pods", "/api/v1/namespaces/{ns}/pods"),
    ("nodes", "/api/v1/nodes"),
    ("deployments", "/apis/apps/v1/namespaces/{ns}/deployments"),
    ("replicasets", "/apis/apps/v1/namespaces/{ns}/replicasets"),
    ("statefulsets", "/apis/apps/v1/namespaces/{ns}/statefulsets"),
    ("jobs", "/apis/batch/v1/namespaces/{ns}/jobs"),
    ("services", "/api/v1/namespaces/{ns}/services"),
    ("secrets", "/api/v1/namespaces/{ns}/secrets"),
    ("configmaps", "/api/v1/namespaces/{ns}/configmaps"),
    (
        "widgets.example.com",
        "/apis/example.com/v1/namespaces/{ns}/widgets",
    ),
];

/// The lines of a describe with what may differ between two runs a moment apart taken out:
/// the Events' and pods' ages (relative to "now"), and a Secret's data keys, which kubectl
/// prints in Go's random map order.
fn comparable(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut in_events = false;
    let mut data: Vec<String> = Vec::new();
    let mut in_data = false;
    for line in text.lines() {
        if line.starts_with("Events:") {
            in_events = true;
        }
        if in_data {
            data.push(line.to_owned());
            continue;
        }
        if line == "====" {
            in_data = true;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if in_events && words.len() >= 2 && matches!(words[0], "Normal" | "Warning") {
            // Type and reason; the age and message column widths follow the age.
            lines.push(format!("event {} {}", words[0], words[1]));
        } else if in_events {
            lines.push(words.join(" "));
        } else {
            lines.push(line.trim_end().to_owned());
        }
    }
    data.sort();
    lines.extend(data);
    lines
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_prints_what_kubectl_describe_prints() {
    let Some(kubectl) = Kubectl::start("describe").await else {
        return;
    };
    let cluster = Cluster::from_config(
        kubectl.sim.kube_config().await.expect("kubeconfig"),
        "kscope-sim".into(),
    )
    .expect("client");
    let mut compared = Vec::new();
    for (resource, path) in KINDS {
        let list = kubectl
            .ok(&[
                "get",
                resource,
                "-A",
                "-o",
                "jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{\"\\n\"}{end}",
            ])
            .await;
        assert!(!list.is_empty(), "the sim serves no {resource}");
        // The first few, and the first with Events (a crashing pod's, a scaled Deployment's).
        let with_events: Vec<String> = kubectl
            .ok(&["get", "events", "-A", "-o", "jsonpath={range .items[*]}{.involvedObject.kind}/{.involvedObject.namespace}/{.involvedObject.name}{\"\\n\"}{end}"])
            .await
            .lines()
            .map(str::to_owned)
            .collect();
        let mut picked: Vec<&str> = list.lines().take(2).collect();
        if let Some(described) = list.lines().find(|key| {
            with_events.iter().any(|e| {
                e.split_once('/').is_some_and(|(_, k)| {
                    k == *key || k == format!("/{key}").trim_start_matches('/')
                })
            })
        }) {
            picked.push(described);
        }
        for first in picked {
            let (ns, name) = first.split_once('/').expect("namespace/name");
            let mut args = vec!["describe", resource, name];
            if !ns.is_empty() {
                args.extend(["-n", ns]);
            }
            let mut command = kubectl.command(&args);
            command.env("TZ", "UTC");
            let output = tokio::task::spawn_blocking(move || command.output())
                .await
                .expect("join")
                .expect("kubectl runs");
            assert!(output.status.success(), "kubectl {args:?}");
            let theirs = String::from_utf8_lossy(&output.stdout).into_owned();

            let object_path = format!("{}/{name}", path.replace("{ns}", ns));
            let (_, ours) =
                fetch_described(&cluster.client, object_path, format!("{resource} {first}"))
                    .await
                    .expect("describe");
            let ours = ours.join("\n");
            let (theirs_lines, ours_lines) = (comparable(&theirs), comparable(&ours));
            if theirs_lines != ours_lines {
                let first_difference = theirs_lines
                    .iter()
                    .zip(&ours_lines)
                    .position(|(a, b)| a != b)
                    .unwrap_or(theirs_lines.len().min(ours_lines.len()));
                panic!(
                    "{resource} {first}: line {} differs\n kubectl: {:?}\n  kscope: {:?}\n--- kubectl\n{theirs}\n--- kscope\n{ours}",
                    first_difference + 1,
                    theirs_lines.get(first_difference),
                    ours_lines.get(first_difference),
                );
            }
            compared.push(format!("{resource} {first}"));
        }
    }
    assert!(compared.len() >= KINDS.len() * 2, "{compared:?}");
    assert!(
        compared.iter().any(|c| c.starts_with("pods ")) && compared.len() > KINDS.len() * 2,
        "at least one object with Events: {compared:?}"
    );
    drop(kubectl);
}
