//! `e`: one object edited in the person's editor, as `kubectl edit` does. The object is read
//! fresh from the server (the tables hold projections, not objects), shown as YAML without
//! `metadata.managedFields` and `status`, and what the person changed is sent back as a JSON
//! merge patch that carries the `metadata.resourceVersion` the file was made from, so a
//! change someone made meanwhile is refused (409) instead of overwritten. (The file shows the
//! resourceVersion too; the patch carries the one it was made from, whatever the file says.)
//!
//! Why a merge patch and not a PUT of the file: the fields left out of the file (status,
//! managedFields) are then simply not in the request, where a PUT would clear the status of
//! a kind that has no status subresource; custom resources take it (they have no strategic
//! merge); and the same patch is what a 409 re-bases onto the new version.
//!
//! Rounds: invalid YAML, a changed identity or a 422 open the file again with the reason as
//! `#` lines at its top; a 409 opens the new version with the person's change applied to it
//! (their merge patch, applied again: a list they changed is theirs whole). An emptied file,
//! or one saved unchanged after an error, ends the edit with nothing written.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;

use serde_json::{Map, Value};

use super::writes::{audit, plain};
use kscope_client::fetch::fetch_object;
use kscope_client::write::{self, PatchType, Target, WriteError};

/// At the top of every file opened: how the edit works, in the file itself.
const HEADER: &str = "\
# Edit the object below and save to write it to the cluster (kscope sends what you changed,
# with the resourceVersion this file was made from: a change made meanwhile is not lost).
# Lines starting with '#' are ignored; save an empty file to cancel. If the write fails,
# this file opens again with the reason here at the top.
#
";

/// An edit asked for with `e`, for the terminal's owner to run.
#[derive(Clone)]
pub struct EditRequest {
    pub client: kube::Client,
    /// The kube context, for the audit log.
    pub context: String,
    pub target: Target,
}

/// How an edit ended: `Ok` what it did (or that nothing changed), `Err` why nothing was
/// written.
pub type Outcome = Result<String, String>;

/// Why kscope does not edit Secrets, with the command that does.
pub fn secret_refusal(target: &Target) -> Option<String> {
    // By group and resource: a Secret reached through discovery (`:all`) is one too.
    if (target.kind.group(), target.kind.plural()) != ("", "secrets") {
        return None;
    }
    let namespace = target
        .namespace
        .as_deref()
        .map(|ns| format!(" -n {ns}"))
        .unwrap_or_default();
    Some(format!(
        "kscope never holds a Secret's values, so it does not edit Secrets: use kubectl edit \
         secret {}{namespace}",
        target.name
    ))
}

/// The editor command: `$KUBE_EDITOR` (kubectl's own), then `$EDITOR`, then `$VISUAL`,
/// then `vi`; the first that is set and not blank. `env` reads a variable.
pub fn editor(env: impl Fn(&str) -> Option<String>) -> String {
    ["KUBE_EDITOR", "EDITOR", "VISUAL"]
        .into_iter()
        .filter_map(env)
        .find(|value| !value.trim().is_empty())
        .unwrap_or_else(|| "vi".to_string())
}

/// Reads the object to edit, before the terminal is handed over (a failed read then costs
/// no flicker).
pub async fn fetch(request: &EditRequest) -> Result<Value, String> {
    let target = &request.target;
    fetch_object(
        &request.client,
        target.kind.clone(),
        target.namespace.as_deref(),
        &target.name,
    )
    .await
    .map_err(|err| format!("edit {}: {err}", target.label()))
}

/// The object as the file shows it: without `metadata.managedFields` (server bookkeeping)
/// and `status` (the controllers' to write).
pub fn editable(object: &Value) -> Value {
    let mut object = object.clone();
    if let Some(map) = object.as_object_mut() {
        map.remove("status");
    }
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    object
}

/// Why a file could not be made.
#[derive(Debug, thiserror::Error)]
#[error("cannot render the object as YAML: {0}")]
pub struct RenderError(#[from] serde_saphyr::SerializeError);

/// The file for `object`: the header, `notes` as `#` lines, then the YAML.
pub fn render(object: &Value, notes: &[String]) -> Result<String, RenderError> {
    Ok(with_notes(notes, &serde_saphyr::to_string(object)?))
}

/// `body` under the header and `notes`, each line of a note a `#` line.
fn with_notes(notes: &[String], body: &str) -> String {
    let mut text = HEADER.to_string();
    if !notes.is_empty() {
        for line in notes.iter().flat_map(|note| note.lines()) {
            text.push_str(format!("# {line}").trim_end());
            text.push('\n');
        }
        text.push_str("#\n");
    }
    text.push_str(body);
    text
}

/// The file without its leading `#` and blank lines: what the person wrote.
fn body(text: &str) -> &str {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if !(trimmed.is_empty() || trimmed.starts_with('#')) {
            break;
        }
        at += line.len();
    }
    text.get(at..).unwrap_or_default()
}

/// Whether nothing but comments and blank lines is left: the person cancelled.
fn emptied(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .all(|line| line.is_empty() || line.starts_with('#'))
}

/// The JSON merge patch (RFC 7386) that turns `base` into `edited`: changed fields as they
/// are now, removed ones as null, objects recursed into, anything else (lists) whole.
pub fn merge_diff(base: &Value, edited: &Value) -> Value {
    match (base, edited) {
        (Value::Object(base), Value::Object(edited)) => {
            let mut patch = Map::new();
            for key in base.keys().filter(|key| !edited.contains_key(*key)) {
                patch.insert(key.clone(), Value::Null);
            }
            for (key, value) in edited {
                match base.get(key) {
                    Some(old) if old == value => {}
                    Some(old @ Value::Object(_)) if value.is_object() => {
                        patch.insert(key.clone(), merge_diff(old, value));
                    }
                    _ => {
                        patch.insert(key.clone(), value.clone());
                    }
                }
            }
            Value::Object(patch)
        }
        _ => edited.clone(),
    }
}

/// What to do with a saved file.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Nothing written: the message says why.
    Cancel(String),
    /// Saved, but the object is as it was.
    Unchanged,
    /// Open this text again (an error at its top).
    Reopen(String),
    /// Send this merge patch (without the resourceVersion precondition yet).
    Write(Value),
}

/// Reads a saved file: `saved` is what the editor left, `shown` what it was opened on,
/// `base` the object the file was made from, `after_error` whether `shown` carried an
/// error the person was asked to fix.
pub fn decide(saved: &str, shown: &str, base: &Value, after_error: bool) -> Decision {
    if emptied(saved) {
        return Decision::Cancel("the file was emptied".to_string());
    }
    if after_error && body(saved).trim_end() == body(shown).trim_end() {
        return Decision::Cancel("the file was saved unchanged after the error".to_string());
    }
    let edited: Value = match serde_saphyr::from_str(body(saved)) {
        Ok(edited) => edited,
        Err(err) => {
            let note = format!("The YAML could not be read, so nothing was written:\n{err}");
            return Decision::Reopen(with_notes(&[note], body(saved)));
        }
    };
    if !edited.is_object() {
        let note = "The file must hold one object (a YAML mapping); nothing was written.";
        return Decision::Reopen(with_notes(&[note.to_string()], body(saved)));
    }
    for field in [
        "/apiVersion",
        "/kind",
        "/metadata/name",
        "/metadata/namespace",
    ] {
        if edited.pointer(field) != base.pointer(field) {
            let note = format!(
                "{} may not change (it names which object this is); nothing was written.",
                field.trim_start_matches('/').replace('/', ".")
            );
            return Decision::Reopen(with_notes(&[note], body(saved)));
        }
    }
    if edited == *base {
        return Decision::Unchanged;
    }
    Decision::Write(merge_diff(base, &edited))
}

/// The person's change applied to the object as it is now, after a 409: the file they are
/// shown next.
pub fn rebase(current: &Value, change: &Value) -> Value {
    let mut rebased = current.clone();
    json_patch::merge(&mut rebased, change);
    rebased
}

/// Runs the edit on the terminal: the rounds of editor and write until one is written, the
/// person cancels, or an error no new round can fix. The terminal must be the editor's.
pub async fn run(request: EditRequest, object: Value) -> Outcome {
    let target = &request.target;
    let label = target.label();
    let cancelled = |why: String| Err(format!("edit of {label} cancelled, nothing written: {why}"));
    let file = match tempfile::Builder::new()
        .prefix("kscope-edit-")
        .suffix(".yaml")
        .permissions(std::fs::Permissions::from_mode(0o600))
        .tempfile()
    {
        Ok(file) => file,
        Err(err) => return cancelled(format!("cannot make a temporary file: {err}")),
    };
    let editor = editor(|name| std::env::var(name).ok());
    let mut base = editable(&object);
    let mut resource_version = object.pointer("/metadata/resourceVersion").cloned();
    let mut shown = match render(&base, &[]) {
        Ok(text) => text,
        Err(err) => return cancelled(err.to_string()),
    };
    let mut after_error = false;
    loop {
        if let Err(err) = std::fs::write(file.path(), &shown) {
            return cancelled(format!("cannot write {}: {err}", file.path().display()));
        }
        if let Err(why) = run_editor(&editor, file.path()).await {
            return cancelled(why);
        }
        let saved = match std::fs::read_to_string(file.path()) {
            Ok(saved) => saved,
            Err(err) => return cancelled(format!("cannot read the edited file: {err}")),
        };
        let mut change = match decide(&saved, &shown, &base, after_error) {
            Decision::Cancel(why) => return cancelled(why),
            Decision::Unchanged => return Ok(format!("{label} unchanged: nothing written")),
            Decision::Reopen(text) => {
                shown = text;
                after_error = true;
                continue;
            }
            Decision::Write(change) => change,
        };
        let mut patch = change.clone();
        patch["metadata"]["resourceVersion"] = resource_version.clone().unwrap_or(Value::Null);
        let result = write::patch(&request.client, target, PatchType::Merge, &patch, false).await;
        audit(&request.context, "edit", target, &result);
        match result {
            Ok(_) => return Ok(format!("edited {label}")),
            Err(WriteError::Conflict { .. }) => {
                let current = match fetch(&request).await {
                    Ok(current) => current,
                    Err(why) => return cancelled(format!("it changed meanwhile, then {why}")),
                };
                base = editable(&current);
                resource_version = current.pointer("/metadata/resourceVersion").cloned();
                if let Some(meta) = change.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.remove("resourceVersion");
                }
                let note = format!(
                    "{label} was changed by someone else while you edited it (409 Conflict).\n\
                     Below is its new version with your change applied again; save to write \
                     it, or empty the file to cancel."
                );
                shown = match render(&rebase(&base, &change), &[note]) {
                    Ok(text) => text,
                    Err(err) => return cancelled(err.to_string()),
                };
                after_error = false;
            }
            Err(WriteError::Invalid { message, .. }) => {
                let note = format!("The server refused the change (422 Invalid):\n{message}");
                shown = with_notes(&[note], body(&saved));
                after_error = true;
            }
            Err(err) => return Err(format!("edit of {label} failed: {}", plain(&err))),
        }
    }
}

/// Runs `editor` on `path` until it exits, through `sh -c` as kubectl does for an editor
/// with arguments (`code --wait`), the path passed as `$1` so that no quoting can break it.
async fn run_editor(editor: &str, path: &std::path::Path) -> Result<(), String> {
    let _ = std::io::stdout().flush();
    let status = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("kscope-edit")
        .arg(path)
        // A signal that ends kscope mid-edit ends the editor with it, rather than leave it
        // on a terminal kscope has restored.
        .kill_on_drop(true)
        .status()
        .await
        .map_err(|err| format!("cannot start the editor ({editor}): {err}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the editor ({editor}) exited with {status}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kscope_resources::ResourceKind;
    use serde_json::json;

    fn deployment() -> Value {
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": "web",
                "namespace": "shop",
                "resourceVersion": "41",
                "labels": {"app": "web"},
                "managedFields": [{"manager": "kubectl"}],
            },
            "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "app"}]}}},
            "status": {"replicas": 3},
        })
    }

    #[test]
    fn the_file_leaves_out_managed_fields_and_status_and_starts_with_the_header() {
        let object = editable(&deployment());
        assert!(object.pointer("/status").is_none());
        assert!(object.pointer("/metadata/managedFields").is_none());
        assert_eq!(
            object.pointer("/metadata/resourceVersion"),
            Some(&json!("41"))
        );
        let text = render(&object, &[]).unwrap();
        assert!(text.starts_with(HEADER), "{text}");
        assert!(
            !text.contains("managedFields") && !text.contains("status:"),
            "{text}"
        );
        let back: Value = serde_saphyr::from_str(body(&text)).unwrap();
        assert_eq!(back, object, "the YAML reads back as the object");
    }

    #[test]
    fn a_saved_file_is_a_merge_patch_of_what_changed() {
        let base = editable(&deployment());
        let shown = render(&base, &[]).unwrap();
        let saved = shown
            .replace("replicas: 3", "replicas: 5")
            .replace("app: web", "tier: front");
        assert_eq!(
            decide(&saved, &shown, &base, false),
            Decision::Write(json!({
                "metadata": {"labels": {"app": null, "tier": "front"}},
                "spec": {"replicas": 5},
            }))
        );
        assert_eq!(decide(&shown, &shown, &base, false), Decision::Unchanged);
        assert_eq!(
            decide("# only comments\n\n", &shown, &base, false),
            Decision::Cancel("the file was emptied".into())
        );
    }

    #[test]
    fn invalid_yaml_reopens_with_the_error_at_the_top_and_unchanged_again_cancels() {
        let base = editable(&deployment());
        let shown = render(&base, &[]).unwrap();
        let broken = shown.replace("replicas: 3", "replicas: [3");
        let Decision::Reopen(reopened) = decide(&broken, &shown, &base, false) else {
            panic!("broken YAML reopens");
        };
        assert!(reopened.starts_with(HEADER), "{reopened}");
        let notes: Vec<&str> = reopened[HEADER.len()..]
            .lines()
            .take_while(|l| l.starts_with('#'))
            .collect();
        assert_eq!(
            notes[0], "# The YAML could not be read, so nothing was written:",
            "{reopened}"
        );
        assert!(notes.len() > 2, "the parser's reason follows: {notes:?}");
        assert_eq!(body(&reopened), body(&broken), "the person's text is kept");
        // Saved as reopened: the person gave up.
        assert_eq!(
            decide(&reopened, &reopened, &base, true),
            Decision::Cancel("the file was saved unchanged after the error".into())
        );
        // Fixed: written, the error lines ignored.
        let fixed = reopened.replace("replicas: [3", "replicas: 4");
        assert_eq!(
            decide(&fixed, &reopened, &base, true),
            Decision::Write(json!({"spec": {"replicas": 4}}))
        );
    }

    #[test]
    fn a_renamed_object_is_refused_before_any_write() {
        let base = editable(&deployment());
        let shown = render(&base, &[]).unwrap();
        let renamed = shown.replace("name: web", "name: api");
        let Decision::Reopen(reopened) = decide(&renamed, &shown, &base, false) else {
            panic!("a new name reopens");
        };
        assert!(
            reopened.contains("# metadata.name may not change"),
            "{reopened}"
        );
    }

    #[test]
    fn a_server_error_of_several_lines_is_one_comment_line_each() {
        let text = with_notes(
            &["refused:\nspec.replicas: Invalid value: -1".into()],
            "a: 1\n",
        );
        assert_eq!(
            &text[HEADER.len()..],
            "# refused:\n# spec.replicas: Invalid value: -1\n#\na: 1\n"
        );
    }

    #[test]
    fn after_a_conflict_the_change_is_applied_to_the_new_version() {
        let mut current = editable(&deployment());
        current["metadata"]["labels"]["team"] = json!("blue");
        current["spec"]["replicas"] = json!(4);
        let change = json!({"metadata": {"labels": {"app": null}}, "spec": {"replicas": 6}});
        let rebased = rebase(&current, &change);
        assert_eq!(rebased["metadata"]["labels"], json!({"team": "blue"}));
        assert_eq!(rebased["spec"]["replicas"], json!(6));
        assert_eq!(rebased["spec"]["template"], current["spec"]["template"]);
    }

    #[test]
    fn the_editor_is_kube_editor_then_editor_then_visual_then_vi() {
        let env = |set: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                set.iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            editor(env(&[("EDITOR", "nano"), ("VISUAL", "code -w")])),
            "nano"
        );
        assert_eq!(
            editor(env(&[("KUBE_EDITOR", "hx"), ("EDITOR", "nano")])),
            "hx"
        );
        assert_eq!(
            editor(env(&[("EDITOR", " "), ("VISUAL", "emacs")])),
            "emacs"
        );
        assert_eq!(editor(env(&[])), "vi");
    }

    #[test]
    fn a_secret_is_refused_with_the_kubectl_command() {
        let secret = Target {
            kind: ResourceKind::Secrets.into(),
            namespace: Some("shop".into()),
            name: "db".into(),
        };
        assert_eq!(
            secret_refusal(&secret).as_deref(),
            Some(
                "kscope never holds a Secret's values, so it does not edit Secrets: use \
                 kubectl edit secret db -n shop"
            )
        );
        let deployment = Target {
            kind: ResourceKind::Deployments.into(),
            ..secret
        };
        assert_eq!(secret_refusal(&deployment), None);
    }
}
