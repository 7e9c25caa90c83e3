//! End to end: RBAC-aware write keys. kscope asks the server (SelfSubjectAccessReview) what
//! the user may do on the table it opens; as the sim's read-only `viewer`, help dims the
//! write keys with who may not do what, and a key pressed says so without sending
//! anything; `kubectl auth can-i` agrees. As `admin`, the same keys open their dialog.

use super::act_writes::dimmed_entry;
use crate::common::act::{Fixture, listed};

/// `kubectl auth can-i VERB RESOURCE -n payments-prod` as the context's user: yes or no.
fn can_i(fx: &Fixture, context: &str, verb: &str, resource: &str) -> bool {
    let (ok, out, err) = fx.kubectl(&[
        "--context",
        context,
        "auth",
        "can-i",
        verb,
        resource,
        "-n",
        "payments-prod",
    ]);
    match out.trim() {
        "yes" if ok => true,
        "no" if !ok => false,
        other => panic!("kubectl auth can-i {verb} {resource}: {other} {err}"),
    }
}

#[tokio::test]
async fn the_viewer_sees_its_forbidden_writes_dimmed_and_refused_without_a_request() {
    let Some(fx) = Fixture::start_with("rbac", &["--users", "admin,viewer"]).await else {
        return;
    };
    let (viewer, admin) = ("kscope-sim-viewer", "kscope-sim");
    for (verb, resource) in [
        ("delete", "pods"),
        ("create", "pods/exec"),
        ("create", "pods/attach"),
        ("patch", "deployments.apps"),
    ] {
        assert!(
            !can_i(&fx, viewer, verb, resource),
            "viewer {verb} {resource}"
        );
        assert!(can_i(&fx, admin, verb, resource), "admin {verb} {resource}");
    }
    let pod = fx.kubectl_ok(&[
        "get",
        "pods",
        "-n",
        "payments-prod",
        "-o",
        "jsonpath={.items[0].metadata.name}",
    ]);

    let session = fx.kscope(&format!("--readwrite --context {viewer} -n payments-prod"));
    session.wait_for("the pods", listed);
    // Help dims what the review denied, saying who may not do what where.
    session.keys(&["?"]);
    let screen = session.wait_for("the dimmed delete", |s| {
        dimmed_entry(s, "ctrl-d")
            .contains("(not allowed: viewer cannot delete pods in payments-prod")
    });
    // (A wrapped entry may run into the right column's key: read its words apart.)
    for (key, why) in [
        ("o", "viewer cannot create pods/exec in payments-prod"),
        ("a", "viewer cannot create pods/attach in payments-prod"),
    ] {
        let entry = dimmed_entry(&screen, key);
        assert!(
            entry.contains("(not allowed:") && entry.contains(why),
            "{key}: {entry}"
        );
    }
    assert!(
        !dimmed_entry(&screen, "y").contains("not allowed"),
        "reads are not dimmed: {screen}"
    );
    session.keys(&["?"]);
    session.wait_for("help closed", listed);
    // The key says so; no dialog, no dry run: nothing reaches the server.
    session.keys(&["C-d"]);
    let screen = session.wait_for("the refusal", |s| {
        s.contains("ctrl-d: viewer cannot delete pods in payments-prod; nothing was sent")
    });
    assert!(!screen.contains("dry run"), "{screen}");
    session.keys(&["o"]);
    session.wait_for("the shell's refusal", |s| {
        s.contains("o: viewer cannot create pods/exec in payments-prod; nothing was sent")
    });
    // A deployment table asks for its own verbs.
    session.keys(&[":deploy", "Enter"]);
    session.wait_for("the deployments", |s| {
        s.contains("deployments") && listed(s)
    });
    session.keys(&["r"]);
    session.wait_for("the restart's refusal", |s| {
        s.contains("r: viewer cannot patch deployments in payments-prod; nothing was sent")
    });
    for key in ["u", "ctrl-g"] {
        session.keys(&[&key.replace("ctrl-", "C-")]);
        session.wait_for("the refusal", |s| {
            s.contains(&format!(
                "{key}: viewer cannot patch deployments in payments-prod; nothing was sent"
            ))
        });
    }
    let (ok, _, err) = fx.kubectl(&["get", "pod", &pod, "-n", "payments-prod"]);
    assert!(ok, "the pod is still there: {err}");
    assert!(
        !fx.log().contains("verb=\"delete\""),
        "no write was logged: {}",
        fx.log()
    );
    drop(session);

    // The admin: the same key opens its dialog, and the server's dry run accepts it.
    let session = fx.kscope(&format!("--readwrite --context {admin} -n payments-prod"));
    session.wait_for("the pods", listed);
    session.keys(&["C-d"]);
    let screen = session.wait_for("the delete's dialog", |s| {
        s.contains("dry run: the server accepts it")
    });
    assert!(!screen.contains("nothing was sent"), "{screen}");
    session.keys(&["n"]);
    session.keys(&["?"]);
    let screen = session.wait_for("help", |s| !dimmed_entry(s, "ctrl-d").is_empty());
    assert!(
        !dimmed_entry(&screen, "ctrl-d").contains("not allowed"),
        "{screen}"
    );
}
