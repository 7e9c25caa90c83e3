//! The official JavaScript client (`@kubernetes/client-node`, installed under tests/node by
//! `.ci/run`) against the sim: a list, a watch from its resourceVersion, a create, and a
//! graceful delete seen by the watch as MODIFIED (marked, then how the pod ended) before
//! the DELETED.

use std::path::Path;

use serde_json::Value;

use crate::common::kubectl::Kubectl;
use crate::common::tools;
use crate::common::wait::HANG_GUARD;

#[tokio::test]
async fn client_node_lists_watches_and_sees_a_graceful_delete() {
    let Some(node) = tools::required("node", "to run the official JavaScript client") else {
        return;
    };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/node");
    if !dir.join("node_modules/@kubernetes/client-node").is_dir() {
        tools::missing("@kubernetes/client-node (npm ci --prefix tests/node)");
        return;
    }
    let Some(fx) = Kubectl::start("node-client").await else {
        return;
    };
    let mut command = tokio::process::Command::new(node);
    command
        .arg(dir.join("watch_and_write.mjs"))
        .arg(fx.dir.join("kubeconfig"))
        .arg("from-node")
        .kill_on_drop(true);
    let output = tokio::time::timeout(HANG_GUARD, command.output())
        .await
        .expect("the client finishes")
        .expect("node runs");
    let out = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert!(lines[0]["items"].as_u64() > Some(0), "{lines:#?}");
    let created = lines.iter().position(|l| l["step"] == "created");
    let added = lines.iter().position(|l| l["event"] == "ADDED");
    let marked = lines.iter().position(|l| {
        l["event"] == "MODIFIED"
            && l["deletionTimestamp"].is_string()
            && l["deletionGracePeriodSeconds"] == 30
            && l["phase"] == "Running"
    });
    let ended = lines.iter().position(|l| {
        l["event"] == "MODIFIED" && l["deletionTimestamp"].is_string() && l["phase"] == "Succeeded"
    });
    let deleted = lines.iter().position(|l| l["event"] == "DELETED");
    assert!(
        created.is_some() && added.is_some() && marked > added && ended > marked && deleted > ended,
        "created and ADDED, then MODIFIED (marked), MODIFIED (Succeeded), DELETED: {lines:#?}"
    );
    // The sim saw the pod made by the client's create, and gone.
    let (found, _, _) = fx.run(&["get", "pod", "from-node", "-n", "default"]).await;
    assert!(!found);
}
