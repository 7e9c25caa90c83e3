//! End to end: `u` undoes a Deployment's rollout from kscope's table in a real terminal
//! (tmux) against `kscope sim`, after a confirm that names the revision and images it goes
//! back to; `kubectl rollout history` and the Deployment's image agree afterwards. A
//! Deployment with one revision has nothing to undo, and says so.

use crate::common::act::{Fixture, listed};

/// The image of the Deployment `name`'s first container, as kubectl reads it.
fn image(fx: &Fixture, name: &str) -> String {
    fx.kubectl_ok(&[
        "get",
        "deploy",
        name,
        "-n",
        "default",
        "-o",
        "jsonpath={.spec.template.spec.containers[0].image}",
    ])
}

#[tokio::test]
async fn u_rolls_a_deployment_back_to_its_previous_revision() {
    let Some(fx) = Fixture::start("undo").await else {
        return;
    };
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["-n", "default"]);
        fx.kubectl_ok(&all)
    };
    run(&["create", "deployment", "undo", "--image=nginx:1.25"]);
    run(&["create", "deployment", "single", "--image=nginx:1.25"]);
    fx.kubectl_until("revision 1", &["get", "rs", "-n", "default"], |out| {
        out.contains("undo-")
    })
    .await;
    run(&["set", "image", "deploy/undo", "nginx=nginx:1.26"]);
    fx.kubectl_until(
        "revision 2",
        &["rollout", "history", "deploy/undo", "-n", "default"],
        |out| out.lines().any(|l| l.trim_start().starts_with('2')),
    )
    .await;

    let session = fx.kscope("--readwrite -n default");
    session.wait_for("the pods", listed);
    session.keys(&[":deploy", "Enter", "/undo", "Enter"]);
    session.wait_for("the deployment", |s| {
        listed(s) && s.contains("1 row matching undo")
    });
    session.keys(&["u"]);
    let dialog = session.wait_for("the dry run", |s| {
        s.contains("dry run: the server accepts it")
    });
    for fact in [
        "confirm: roll back",
        "roll back Deployment default/undo",
        "back to revision 1 (ReplicaSet undo-",
        "from revision 2",
        "images: nginx=nginx:1.25 (now nginx=nginx:1.26)",
    ] {
        assert!(dialog.contains(fact), "{fact}:\n{dialog}");
    }
    assert_eq!(
        image(&fx, "undo"),
        "nginx:1.26",
        "the dry run wrote nothing"
    );
    session.keys(&["y"]);
    session.wait_for("the undo", |s| {
        s.contains("roll back Deployment default/undo: done")
    });
    assert_eq!(image(&fx, "undo"), "nginx:1.25");
    // The old ReplicaSet is reused at the next revision, as kubectl's undo does.
    fx.kubectl_until(
        "revision 3",
        &["rollout", "history", "deploy/undo", "-n", "default"],
        |out| {
            let revisions: Vec<&str> = out
                .lines()
                .filter_map(|l| l.split_whitespace().next())
                .filter(|w| w.chars().all(|c| c.is_ascii_digit()))
                .collect();
            revisions == ["2", "3"]
        },
    )
    .await;
    let log = fx.log();
    assert!(
        log.contains(
            r#"verb="roll back" kind="Deployment" namespace="default" name="undo" result="ok""#
        ),
        "{log}"
    );

    // One revision: nothing to go back to, and the dialog cannot be accepted.
    session.keys(&["/", "C-u", "single", "Enter"]);
    session.wait_for("the other deployment", |s| {
        listed(s) && s.contains("1 row matching single")
    });
    session.keys(&["u"]);
    session.wait_for("the refusal", |s| {
        s.contains("Deployment default/single has no previous revision to go back to")
    });
    session.keys(&["y", "n"]);
    assert_eq!(image(&fx, "single"), "nginx:1.25");
}

#[tokio::test]
async fn ctrl_g_sets_a_containers_image_after_the_servers_dry_run() {
    let Some(fx) = Fixture::start("image").await else {
        return;
    };
    fx.kubectl_ok(&[
        "create",
        "deployment",
        "img",
        "--image=nginx:1.25",
        "-n",
        "default",
    ]);
    let session = fx.kscope("--readwrite -n default");
    session.wait_for("the pods", listed);
    session.keys(&[":deploy", "Enter", "/img", "Enter"]);
    session.wait_for("the deployment", |s| {
        listed(s) && s.contains("1 row matching img")
    });
    session.keys(&["C-g"]);
    session.wait_for("the container picker", |s| {
        s.contains("> nginx: nginx:1.25") && s.contains("new image: _")
    });
    // Every character is typed, y and n too: they are no answer while typing.
    session.keys(&["-l", "nginx:1.27-ny"]);
    session.keys(&["BSpace", "BSpace", "BSpace"]);
    session.wait_for("the image typed", |s| s.contains("new image: nginx:1.27_"));
    session.keys(&["Enter"]);
    let dialog = session.wait_for("the dry run", |s| {
        s.contains("dry run: the server accepts it")
    });
    assert!(
        dialog.contains("container nginx: nginx:1.25 → nginx:1.27"),
        "{dialog}"
    );
    assert_eq!(image(&fx, "img"), "nginx:1.25", "the dry run wrote nothing");
    session.keys(&["y"]);
    session.wait_for("the write", |s| {
        s.contains("set the image of Deployment default/img: done")
    });
    assert_eq!(image(&fx, "img"), "nginx:1.27");
    fx.kubectl_until(
        "the new revision",
        &["rollout", "history", "deploy/img", "-n", "default"],
        |out| out.lines().any(|l| l.trim_start().starts_with('2')),
    )
    .await;
    let log = fx.log();
    assert!(
        log.contains(r#"verb="set the image of" kind="Deployment" namespace="default" name="img" result="ok""#),
        "{log}"
    );
}
