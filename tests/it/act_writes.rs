//! End to end: kscope's write keys in a real terminal (tmux) against `kscope sim`, with
//! kubectl checking what the cluster says afterwards. Read-only refusal, the confirm
//! dialog's facts and its cancel, delete (Terminating, then gone), scale, restart, cordon
//! and uncordon, and a drain that stops at a PodDisruptionBudget's refusal.

use crate::common::act::{Fixture, listed, rows};

#[tokio::test]
async fn read_only_by_default_every_write_key_says_how_to_turn_writes_on() {
    let Some(fx) = Fixture::start("readonly").await else {
        return;
    };
    let before = fx.kubectl_ok(&["get", "pods", "-n", "payments-prod", "-o", "name"]);
    let session = fx.kscope("-n payments-prod");
    let screen = session.wait_for("the pods", listed);
    assert!(
        screen.lines().next().unwrap().contains("read-only"),
        "{screen}"
    );
    session.keys(&["C-d"]);
    session.wait_for("the refusal", |s| {
        s.contains(
            "read-only: ctrl-d would delete; start kscope with --readwrite, or set readwrite: \
             true in the config",
        )
    });
    // A context set read-only in the configuration says so, whatever the default.
    drop(session);
    fx.config("readwrite: true\ncontexts:\n  kscope-sim:\n    readwrite: false\n");
    let session = fx.kscope("-n payments-prod");
    session.wait_for("the pods", listed);
    session.keys(&["r"]);
    session.wait_for("the context's refusal", |s| {
        s.contains(
            "read-only: r would restart; the config sets contexts: kscope-sim: readwrite: false",
        )
    });
    let after = fx.kubectl_ok(&["get", "pods", "-n", "payments-prod", "-o", "name"]);
    assert_eq!(before, after, "nothing was deleted");
}

const DOOMED: &str = "apiVersion: v1
kind: Pod
metadata:
  name: doomed
  namespace: default
spec:
  terminationGracePeriodSeconds: 3
  containers:
  - name: app
    image: nginx:1.27
    # Terminating for all of its 3 s (the hook outlasts them), long enough to be seen.
    lifecycle:
      preStop:
        exec: {command: [sleep, \"60\"]}
";

#[tokio::test]
async fn delete_scale_restart_and_cordon_after_a_confirm() {
    let Some(fx) = Fixture::start("writes").await else {
        return;
    };
    let manifest = fx.dir.join("doomed.yaml");
    std::fs::write(&manifest, DOOMED).expect("manifest");
    fx.kubectl_ok(&["apply", "-f", &manifest.display().to_string()]);
    // Writes on from the configuration file.
    fx.config("readwrite: true\n");
    let session = fx.kscope("-n default");
    let screen = session.wait_for("the pod", |s| listed(s) && s.contains("doomed"));
    assert!(
        screen.lines().next().unwrap().contains("READ-WRITE"),
        "{screen}"
    );

    // The dialog states what will happen, with the server's dry run; n cancels.
    session.keys(&["C-d"]);
    let dialog = session.wait_for("the dry run", |s| {
        s.contains("dry run: the server accepts it")
    });
    for fact in [
        "confirm: delete",
        "delete Pod default/doomed",
        "grace period: the object's own, 3s",
        "cascade: Background",
        "deletes Pod default/doomed; nothing it owns is known (background)",
    ] {
        assert!(dialog.contains(fact), "{fact}:\n{dialog}");
    }
    session.keys(&["n"]);
    session.wait_for("the dialog to close", |s| !s.contains("confirm: delete"));
    let (_, out, _) = fx.kubectl(&[
        "get",
        "pod",
        "doomed",
        "-o",
        "jsonpath={.metadata.deletionTimestamp}",
    ]);
    assert_eq!(out, "", "a dry run and a cancel delete nothing");

    // y deletes: Terminating for its grace period, then gone, and kubectl agrees.
    session.keys(&["C-d"]);
    session.wait_for("the dry run", |s| {
        s.contains("dry run: the server accepts it")
    });
    session.keys(&["y"]);
    session.wait_for("Terminating", |s| {
        rows(s)
            .iter()
            .any(|r| r.contains("doomed") && r.contains("Terminating"))
    });
    session.wait_for("the row to go", |s| {
        s.contains("no pods in namespace default")
    });
    let (ok, _, err) = fx.kubectl(&["get", "pod", "doomed"]);
    assert!(!ok && err.contains("NotFound"), "{err}");
    let log = fx.log();
    assert!(
        log.contains(r#"context="kscope-sim" verb="delete" kind="Pod" namespace="default" name="doomed" result="ok""#),
        "{log}"
    );

    // z scales: the count typed into the dialog.
    session.keys(&[":deploy -n payments-prod", "Enter"]);
    session.wait_for("the deployments", |s| {
        s.contains("payments-api") && listed(s)
    });
    session.keys(&["z"]);
    session.wait_for("the replicas", |s| s.contains("replicas now: 3"));
    session.keys(&["1", "2", "BSpace", "y"]);
    session.wait_for("the scale", |s| {
        s.contains("scaled Deployment payments-prod/payments-api to 1")
    });
    fx.kubectl_until(
        "replicas 1",
        &[
            "get",
            "deploy",
            "payments-api",
            "-n",
            "payments-prod",
            "-o",
            "jsonpath={.spec.replicas}",
        ],
        |out| out == "1",
    )
    .await;

    // r restarts: Tab to the confirm button, Enter.
    session.keys(&["r"]);
    session.wait_for("the dry run", |s| {
        s.contains("confirm: restart") && s.contains("dry run: the server accepts it")
    });
    session.keys(&["Tab", "Enter"]);
    session.wait_for("the restart", |s| {
        s.contains("restart: Deployment payments-prod/payments-api: done")
    });
    let restarted = fx.kubectl_ok(&[
        "get",
        "deploy",
        "payments-api",
        "-n",
        "payments-prod",
        "-o",
        "jsonpath={.spec.template.metadata.annotations.kubectl\\.kubernetes\\.io/restartedAt}",
    ]);
    assert!(restarted.starts_with("20"), "restartedAt: {restarted:?}");

    // ctrl-o cordons the first node, and again uncordons it.
    session.keys(&[":nodes", "Enter"]);
    let screen = session.wait_for("the nodes", |s| {
        s.contains("NAME") && s.contains("ip-10-40-0-1")
    });
    let node = rows(&screen)[0]
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    session.keys(&["C-o"]);
    session.wait_for("the dry run", |s| {
        s.contains("confirm: cordon") && s.contains("dry run: the server accepts it")
    });
    session.keys(&["y"]);
    session.wait_for("SchedulingDisabled", |s| {
        rows(s)[0].contains("SchedulingDisabled")
    });
    let unschedulable = [
        "get",
        "node",
        node.as_str(),
        "-o",
        "jsonpath={.spec.unschedulable}",
    ];
    assert_eq!(fx.kubectl_ok(&unschedulable), "true");
    session.keys(&["C-o"]);
    session.wait_for("the dry run", |s| {
        s.contains("confirm: uncordon") && s.contains("dry run: the server accepts it")
    });
    session.keys(&["y"]);
    session.wait_for("schedulable again", |s| {
        !rows(s)[0].contains("SchedulingDisabled")
    });
    assert_eq!(fx.kubectl_ok(&unschedulable), "");
}

#[tokio::test]
async fn drain_stops_at_a_disruption_budgets_refusal_with_its_reason() {
    let Some(fx) = Fixture::start("drain").await else {
        return;
    };
    // No checkout-api pod may go: the first eviction is refused.
    fx.kubectl_ok(&[
        "patch",
        "pdb",
        "checkout-api",
        "-n",
        "checkout-prod",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"maxUnavailable":0}}"#,
    ]);
    fx.kubectl_until(
        "no disruption allowed",
        &[
            "get",
            "pdb",
            "checkout-api",
            "-n",
            "checkout-prod",
            "-o",
            "jsonpath={.status.disruptionsAllowed}",
        ],
        |out| out == "0",
    )
    .await;
    let session = fx.kscope("--readwrite");
    session.wait_for("the pods", |s| s.contains("watching at rv"));
    session.keys(&[":nodes", "Enter"]);
    let screen = session.wait_for("the nodes", |s| s.contains("ip-10-40-0-1") && listed(s));
    let node = rows(&screen)[0]
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    session.keys(&["C-x"]);
    let dialog = session.wait_for("the dry run", |s| {
        s.contains("confirm: drain") && s.contains("dry run: the server accepts it")
    });
    assert!(dialog.contains("pods to evict ("), "{dialog}");
    session.keys(&["y"]);
    let screen = session.wait_for("the refusal", |s| s.contains("drain stopped after"));
    assert!(
        screen.contains("drain stopped after 0 of") && screen.contains("disruption budget"),
        "{screen}"
    );
    assert_eq!(
        fx.kubectl_ok(&["get", "node", &node, "-o", "jsonpath={.spec.unschedulable}"]),
        "true",
        "the node stays cordoned"
    );
}

#[tokio::test]
async fn the_viewer_may_only_read_and_is_told_so_in_the_servers_words() {
    let Some(fx) = Fixture::start_with("viewer", &["--users", "admin,viewer"]).await else {
        return;
    };
    let viewer = ["--context", "kscope-sim-viewer"];
    let with = |context: &[&str], args: &[&str]| -> Vec<String> {
        context.iter().chain(args).map(|s| s.to_string()).collect()
    };
    let run = |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        fx.kubectl(&args)
    };
    // kubectl auth whoami and can-i, for each user.
    let (_, out, err) = run(with(
        &viewer,
        &[
            "auth",
            "whoami",
            "-o",
            "jsonpath={.status.userInfo.username}",
        ],
    ));
    assert_eq!(out, "viewer", "{err}");
    let (_, out, err) = run(with(
        &[],
        &[
            "auth",
            "whoami",
            "-o",
            "jsonpath={.status.userInfo.username}",
        ],
    ));
    assert_eq!(out, "admin", "{err}");
    let (ok, out, _) = run(with(
        &viewer,
        &["auth", "can-i", "delete", "pods", "-n", "payments-prod"],
    ));
    assert!(!ok && out.trim() == "no", "{out}");
    let (ok, out, _) = run(with(
        &viewer,
        &["auth", "can-i", "list", "pods", "-n", "payments-prod"],
    ));
    assert!(ok && out.trim() == "yes", "{out}");
    let (ok, out, _) = run(with(
        &[],
        &["auth", "can-i", "delete", "pods", "-n", "payments-prod"],
    ));
    assert!(ok && out.trim() == "yes", "{out}");

    // The viewer's delete: a 403 worded as the real server's.
    let pod = fx.kubectl_ok(&[
        "get",
        "pods",
        "-n",
        "payments-prod",
        "-o",
        "jsonpath={.items[0].metadata.name}",
    ]);
    let (ok, _, err) = run(with(
        &viewer,
        &["delete", "pod", &pod, "-n", "payments-prod"],
    ));
    let wording = format!(
        r#"pods "{pod}" is forbidden: User "viewer" cannot delete resource "pods" in API group "" in the namespace "payments-prod""#
    );
    assert!(!ok && err.contains(&wording), "{err}");
    // A shell is a write too: the WebSocket upgrade is a GET, but the server asks `create`.
    let (ok, _, err) = run(with(
        &viewer,
        &["exec", &pod, "-n", "payments-prod", "--", "echo", "hi"],
    ));
    assert!(
        !ok && err.contains(r#"User "viewer" cannot create resource "pods/exec""#),
        "{err}"
    );

    // kscope as the viewer: act_rbac.rs.
    let (ok, _, err) = fx.kubectl(&["get", "pod", &pod, "-n", "payments-prod"]);
    assert!(ok, "the pod is still there: {err}");
}

#[tokio::test]
async fn c_copies_the_name_and_the_yaml_by_osc52() {
    let Some(fx) = Fixture::start("copy").await else {
        return;
    };
    let session = fx.kscope("-n payments-prod");
    // tmux takes an application's OSC 52 into its paste buffer with set-clipboard on.
    let server = ["-L", session.0.as_str()];
    let tmux = |args: &[&str]| {
        let all: Vec<&str> = server.iter().chain(args).copied().collect();
        crate::common::tmux::tmux(&all)
    };
    tmux(&["set-option", "-g", "set-clipboard", "on"]).expect("set-clipboard");
    let screen = session.wait_for("the pods", listed);
    let name = rows(&screen)[0]
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    session.keys(&["c"]);
    session.wait_for("the copy", |s| {
        s.contains(&format!("copied {name} to the clipboard"))
    });
    assert_eq!(tmux(&["show-buffer"]).as_deref(), Some(name.as_str()));
    session.keys(&["y"]);
    session.wait_for("the YAML", |s| s.contains("apiVersion: v1"));
    session.keys(&["c"]);
    crate::common::wait::until("the YAML on the clipboard", || {
        let buffer = tmux(&["show-buffer"]).unwrap_or_default();
        (buffer.contains("kind: Pod") && buffer.contains(&format!("name: {name}")))
            .then_some(())
            .ok_or(buffer)
    })
    .await;
}

/// The help entry of `key` as one line: its first row and the rows its words wrapped onto,
/// read in its own column only (a wide help has two).
pub(crate) fn dimmed_entry(screen: &str, key: &str) -> String {
    let lines: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
    // A key starts its column (after the border or spaces) and is padded to 14.
    let needle: Vec<char> = format!("{key}  ").chars().collect();
    for (row, line) in lines.iter().enumerate() {
        let Some(column) = line.windows(needle.len()).enumerate().position(|(at, w)| {
            w == needle.as_slice() && (at == 0 || matches!(line[at - 1], '│' | ' '))
        }) else {
            continue;
        };
        // An entry's words start after the key column (14 wide) and end at the next one.
        let words = column + 14;
        let mut entry = String::new();
        for (i, next) in lines[row..].iter().enumerate() {
            let keys: String = next.iter().skip(column).take(14).collect();
            if i > 0 && !keys.trim().is_empty() {
                break;
            }
            let text: String = next.iter().skip(words).take_while(|c| **c != '│').collect();
            // The right column starts after a run of spaces in a two-column help.
            let text = text
                .split("   ")
                .next()
                .unwrap_or_default()
                .trim()
                .to_string();
            if !entry.is_empty() {
                entry.push(' ');
            }
            entry.push_str(&text);
        }
        return entry;
    }
    String::new()
}
