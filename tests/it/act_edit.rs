//! End to end: `e` edits an object in `$EDITOR` from kscope's table in a real terminal
//! (tmux) against `kscope sim`. The editor is a script that, round by round, keeps a copy of
//! the file it was given (and its mode) for the test and runs that round's change on it;
//! kubectl checks what the cluster says afterwards.

use std::path::{Path, PathBuf};

use crate::common::act::{Fixture, listed, rows};
use crate::common::tmux::Session;

const DEPLOYMENT: [&str; 4] = ["deploy", "payments-api", "-n", "payments-prod"];

/// The editor kscope runs: round N copies the file to `seen-N.yaml`, its mode to `mode-N`
/// and its path to `path-N`, then runs `round-N.sh` on it.
struct Editor {
    dir: PathBuf,
    round: usize,
}

impl Editor {
    fn new(fx: &Fixture) -> Self {
        let dir = fx.dir.join("editor");
        std::fs::create_dir_all(&dir).expect("editor dir");
        let script = format!(
            "#!/bin/sh\n\
             dir={dir}\n\
             n=$(( $(cat \"$dir/rounds\" 2>/dev/null || echo 0) + 1 ))\n\
             echo \"$n\" > \"$dir/rounds\"\n\
             cp \"$1\" \"$dir/seen-$n.yaml\"\n\
             stat -c %a \"$1\" > \"$dir/mode-$n\"\n\
             printf %s \"$1\" > \"$dir/path-$n\"\n\
             exec sh \"$dir/round-$n.sh\" \"$1\"\n",
            dir = dir.display()
        );
        let path = dir.join("edit.sh");
        std::fs::write(&path, script).expect("editor script");
        let status = std::process::Command::new("chmod")
            .arg("755")
            .arg(&path)
            .status()
            .expect("chmod");
        assert!(status.success());
        Self { dir, round: 0 }
    }

    /// The environment that makes kscope run this editor: `$EDITOR`, with kubectl's own
    /// `$KUBE_EDITOR` (which would win) unset.
    fn env(&self) -> String {
        format!(
            "-u KUBE_EDITOR EDITOR={}",
            self.dir.join("edit.sh").display()
        )
    }

    /// The next round does `script` (sh, the file as `$1`); returns its number.
    fn next(&mut self, script: &str) -> usize {
        self.round += 1;
        let path = self.dir.join(format!("round-{}.sh", self.round));
        std::fs::write(path, script).expect("round script");
        self.round
    }

    /// Presses `e` and waits until the editor has run every round asked for so far and the
    /// screen says `message` (a message left from an earlier edit is not taken for it: the
    /// key clears it before the editor runs).
    fn edit(&self, session: &Session, message: &str) -> String {
        session.keys(&["e"]);
        session.wait_for(message, |s| {
            let done = std::fs::read_to_string(self.dir.join("rounds"))
                .ok()
                .and_then(|n| n.trim().parse::<usize>().ok());
            done == Some(self.round) && s.contains(message)
        })
    }

    fn seen(&self, round: usize) -> String {
        read(&self.dir.join(format!("seen-{round}.yaml")))
    }

    fn mode(&self, round: usize) -> String {
        read(&self.dir.join(format!("mode-{round}")))
    }

    fn path(&self, round: usize) -> PathBuf {
        PathBuf::from(read(&self.dir.join(format!("path-{round}"))))
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The `#` lines at the top of an edited file.
fn comments(file: &str) -> Vec<&str> {
    file.lines().take_while(|l| l.starts_with('#')).collect()
}

/// kscope with writes on, on the payments-api Deployment's row.
fn on_the_deployment(fx: &Fixture, editor: &Editor) -> Session {
    let session = fx.kscope_with(&editor.env(), "--readwrite -n payments-prod");
    session.wait_for("the pods", listed);
    session.keys(&[":deploy", "Enter"]);
    // By the table's header: the command typed (and the pods' rows) would match sooner.
    session.wait_for("the deployments", |s| {
        s.contains("deployments [namespace payments-prod]") && listed(s)
    });
    session.keys(&["/", "payments-api", "Enter"]);
    session.wait_for("payments-api alone", |s| {
        rows(s).len() == 1 && rows(s)[0].contains("payments-api")
    });
    session
}

fn field(fx: &Fixture, jsonpath: &str) -> String {
    let mut args = vec!["get"];
    args.extend_from_slice(&DEPLOYMENT);
    let jsonpath = format!("jsonpath={jsonpath}");
    args.extend_from_slice(&["-o", &jsonpath]);
    fx.kubectl_ok(&args)
}

fn edits_logged(fx: &Fixture) -> usize {
    fx.log().matches(r#"verb="edit""#).count()
}

#[tokio::test]
async fn e_writes_the_change_and_a_conflict_reopens_it_on_the_new_version() {
    let Some(fx) = Fixture::start("edit").await else {
        return;
    };
    let mut editor = Editor::new(&fx);
    let session = on_the_deployment(&fx, &editor);

    // Saved as it was: nothing written.
    let rv = field(&fx, "{.metadata.resourceVersion}");
    let round = editor.next("true\n");
    editor.edit(
        &session,
        "Deployment payments-prod/payments-api unchanged: nothing written",
    );
    assert_eq!(field(&fx, "{.metadata.resourceVersion}"), rv);
    assert_eq!(edits_logged(&fx), 0, "{}", fx.log());
    let seen = editor.seen(round);
    assert!(
        comments(&seen)[0].starts_with("# Edit the object below"),
        "{seen}"
    );
    assert!(seen.contains("replicas: 3"), "{seen}");
    for left_out in ["managedFields", "status:", "availableReplicas"] {
        assert!(!seen.contains(left_out), "{left_out}:\n{seen}");
    }
    assert_eq!(editor.mode(round).trim(), "600", "a private file");
    assert!(
        !editor.path(round).exists(),
        "the file is removed afterwards"
    );

    // A new replica count: written, in the table and in kubectl's answer.
    editor.next("sed -i 's/replicas: 3/replicas: 4/' \"$1\"\n");
    editor.edit(&session, "edited Deployment payments-prod/payments-api");
    assert_eq!(field(&fx, "{.spec.replicas}"), "4");
    session.wait_for("4/4 in the table", |s| {
        rows(s).first().is_some_and(|r| r.contains("4/4"))
    });
    let log = fx.log();
    assert!(
        log.contains(r#"context="kscope-sim" verb="edit" kind="Deployment" namespace="payments-prod" name="payments-api" result="ok""#),
        "{log}"
    );

    // Someone else changes it while the file is open: 409, and the file opens again on the
    // new version, the change kept; saved, it is written.
    let label = format!(
        "{} label {} other=change\n",
        fx.kubectl.display(),
        DEPLOYMENT.join(" ")
    );
    editor.next(&format!(
        "{label}sed -i 's/replicas: 4/replicas: 5/' \"$1\"\n"
    ));
    let round = editor.next("true\n");
    editor.edit(&session, "edited Deployment payments-prod/payments-api");
    let seen = editor.seen(round);
    let notes = comments(&seen).join("\n");
    assert!(
        notes.contains(
            "# Deployment payments-prod/payments-api was changed by someone else while you \
             edited it (409 Conflict)."
        ),
        "{seen}"
    );
    assert!(
        seen.contains("replicas: 5") && seen.contains("other: change"),
        "{seen}"
    );
    assert_eq!(field(&fx, "{.spec.replicas}"), "5");
    assert_eq!(field(&fx, "{.metadata.labels.other}"), "change");
    assert!(fx.log().contains("(409)"), "the conflict is audited too");
}

#[tokio::test]
async fn invalid_yaml_reopens_with_the_error_on_top_and_secrets_and_read_only_are_refused() {
    let Some(fx) = Fixture::start("edit-invalid").await else {
        return;
    };
    let mut editor = Editor::new(&fx);
    let session = on_the_deployment(&fx, &editor);

    // Broken YAML: opened again with the parser's reason on top; then a count the server
    // refuses: opened again with its reason (422); fixed, it is written.
    editor.next("sed -i 's/replicas: 3/replicas: [3/' \"$1\"\n");
    let yaml_error = editor.next("sed -i 's/replicas: \\[3/replicas: -1/' \"$1\"\n");
    let refused = editor.next("sed -i 's/replicas: -1/replicas: 2/' \"$1\"\n");
    editor.edit(&session, "edited Deployment payments-prod/payments-api");
    let seen = editor.seen(yaml_error);
    let notes = comments(&seen);
    assert!(notes[0].starts_with("# Edit the object below"), "{seen}");
    assert!(
        notes.contains(&"# The YAML could not be read, so nothing was written:"),
        "{seen}"
    );
    assert!(
        seen.contains("replicas: [3"),
        "the broken text is kept: {seen}"
    );
    let seen = editor.seen(refused);
    let notes = comments(&seen).join("\n");
    assert!(
        notes.contains("# The server refused the change (422 Invalid):")
            && notes.contains("spec.replicas"),
        "{seen}"
    );
    assert!(seen.contains("replicas: -1"), "{seen}");
    assert!(fx.log().contains("(422)"), "the refusal is audited");
    assert_eq!(field(&fx, "{.spec.replicas}"), "2");

    // Broken, then saved as reopened: the person gave up, nothing is written.
    let logged = edits_logged(&fx);
    editor.next("sed -i 's/replicas: 2/replicas: [2/' \"$1\"\n");
    editor.next("true\n");
    editor.edit(
        &session,
        "edit of Deployment payments-prod/payments-api cancelled, nothing written: the file \
         was saved unchanged after the error",
    );
    assert_eq!(field(&fx, "{.spec.replicas}"), "2");
    assert_eq!(edits_logged(&fx), logged, "no write was tried");

    // A Secret: refused, naming the kubectl command; the editor never runs.
    session.keys(&[":secrets", "Enter"]);
    let screen = session.wait_for("the secrets", |s| {
        s.contains("secrets [namespace payments-prod]") && listed(s)
    });
    let secret = rows(&screen)[0]
        .split_whitespace()
        .next()
        .expect("a secret's name")
        .to_string();
    session.keys(&["e"]);
    session.wait_for("the refusal", |s| {
        s.contains(&format!(
            "does not edit Secrets: use kubectl edit secret {secret} -n payments-prod"
        ))
    });
    assert!(!editor.dir.join("seen-6.yaml").exists(), "no editor ran");
    drop(session);

    // Read-only: e says how to turn writes on.
    let session = fx.kscope_with(&editor.env(), "-n payments-prod");
    session.wait_for("the pods", listed);
    session.keys(&["e"]);
    session.wait_for("the refusal", |s| {
        s.contains("read-only: e would edit; start kscope with --readwrite")
    });
    assert!(!editor.dir.join("seen-6.yaml").exists(), "no editor ran");
}

#[tokio::test]
async fn a_user_who_may_not_patch_is_told_so_in_plain_words_from_the_detail() {
    let Some(fx) = Fixture::start_with("edit-viewer", &["--users", "admin,viewer"]).await else {
        return;
    };
    let mut editor = Editor::new(&fx);
    let session = fx.kscope_with(
        &editor.env(),
        "--readwrite --context kscope-sim-viewer -n payments-prod",
    );
    session.wait_for("the pods", listed);
    // Help dims e: the server's SelfSubjectAccessReview says the viewer cannot patch.
    session.keys(&["?"]);
    session.wait_for("the dimmed edit", |s| {
        let lines: Vec<&str> = s.lines().collect();
        lines.iter().enumerate().any(|(at, line)| {
            // The entry's words wrap onto the next line, in its own column.
            line.contains("edit the object in $EDITOR")
                && line.contains("(not allowed")
                && lines
                    .get(at + 1)
                    .is_some_and(|next| next.contains("cannot patch pods"))
        })
    });
    // ? closes it (an Escape sent with the next keys would read as Alt and them).
    session.keys(&["?"]);
    session.wait_for("the help closed", |s| !s.contains("Esc closes"));
    session.keys(&[":deploy", "Enter"]);
    // By the table's header: the command typed (and the pods' rows) would match sooner.
    session.wait_for("the deployments", |s| {
        s.contains("deployments [namespace payments-prod]") && listed(s)
    });
    session.keys(&["/", "payments-api", "Enter"]);
    session.wait_for("payments-api alone", |s| rows(s).len() == 1);
    // From the detail: the write is refused (403), in plain words, on the detail's line.
    session.keys(&["y"]);
    session.wait_for("the detail", |s| s.contains("replicas: 3"));
    editor.next("sed -i 's/replicas: 3/replicas: 4/' \"$1\"\n");
    editor.edit(
        &session,
        "failed: your user may not do this (403 Forbidden)",
    );
    assert_eq!(field(&fx, "{.spec.replicas}"), "3");
}
