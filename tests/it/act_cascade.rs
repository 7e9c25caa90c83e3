//! End to end: the delete dialog's cascade, chosen with `c` (Background, Foreground,
//! Orphan), each asked of the server's dry run, with the dependents it counts from the
//! ownership index and what each cascade does to them; an orphaning
//! delete of a Deployment leaves its ReplicaSet without an owner, as kubectl sees it.

use crate::common::act::{Fixture, listed};

#[tokio::test]
async fn an_orphaning_delete_keeps_the_dependents_the_dialog_lists() {
    let Some(fx) = Fixture::start("cascade").await else {
        return;
    };
    fx.kubectl_ok(&[
        "create",
        "deployment",
        "keep",
        "--image=nginx:1.25",
        "-n",
        "default",
    ]);
    let rs_names = ["get", "rs", "-n", "default", "-o", "name"];
    fx.kubectl_until("the ReplicaSet", &rs_names, |out| out.contains("keep-"))
        .await;
    let pod_names = ["get", "pods", "-n", "default", "-o", "name"];
    fx.kubectl_until("its pod", &pod_names, |out| out.contains("keep-"))
        .await;
    let session = fx.kscope("--readwrite -n default");
    session.wait_for("the pods", listed);
    session.keys(&[":deploy", "Enter", "/keep", "Enter"]);
    session.wait_for("the deployment", |s| {
        listed(s) && s.contains("1 row matching keep")
    });
    session.keys(&["C-d"]);
    session.wait_for("the dialog", |s| {
        s.contains("dry run: the server accepts it")
            && s.contains("cascade: Background")
            && s.contains(
                "deletes Deployment default/keep and its 1 ReplicaSet and 1 Pod (background)",
            )
            && s.contains("dependents that will go (2)")
            && s.contains("ReplicaSet default/keep-")
            && s.contains("c cascade")
    });
    session.keys(&["c"]);
    session.wait_for("foreground", |s| {
        s.contains("cascade: Foreground")
            && s.contains("deletes its 1 ReplicaSet and 1 Pod first, then Deployment default/keep")
            && s.contains("dry run: the server accepts it")
    });
    session.keys(&["c"]);
    session.wait_for("orphan", |s| {
        s.contains("cascade: Orphan")
            && s.contains(
                "deletes Deployment default/keep only; its 1 ReplicaSet and 1 Pod stay (orphan)",
            )
            && s.contains("dependents that stay (2)")
            && s.contains("dry run: the server accepts it")
    });
    let (ok, _, err) = fx.kubectl(&["get", "deploy", "keep", "-n", "default"]);
    assert!(ok, "the dry runs deleted nothing: {err}");
    session.keys(&["y"]);
    session.wait_for("the delete", |s| {
        s.contains("delete: Deployment default/keep: done")
    });
    fx.kubectl_until(
        "the deployment gone",
        &["get", "deploy", "-n", "default", "-o", "name"],
        |out| !out.contains("keep"),
    )
    .await;
    let owners = fx.kubectl_ok(&[
        "get",
        "rs",
        "-n",
        "default",
        "-o",
        r#"jsonpath={range .items[*]}{.metadata.name} {.metadata.ownerReferences}{"\n"}{end}"#,
    ]);
    let kept: Vec<&str> = owners.lines().filter(|l| l.starts_with("keep-")).collect();
    assert_eq!(kept.len(), 1, "{owners}");
    assert_eq!(
        kept[0].split_whitespace().count(),
        1,
        "no owner left: {owners}"
    );
    assert!(
        fx.log().contains(
            r#"verb="delete" kind="Deployment" namespace="default" name="keep" result="ok""#
        ),
        "{}",
        fx.log()
    );
}
