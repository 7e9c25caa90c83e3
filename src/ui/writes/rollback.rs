//! `kubectl rollout undo` to the previous revision, read from what the server keeps: a
//! Deployment's ReplicaSets (their `deployment.kubernetes.io/revision`), a StatefulSet's or
//! DaemonSet's ControllerRevisions. The dialog states the revision and images it goes back
//! to; the patch it shows is the one sent.

use serde_json::{Value, json};

use kscope_client::fetch::fetch_list;
use kscope_client::write::Target;

/// The revision annotation the deployment controller numbers ReplicaSets with.
const REVISION: &str = "deployment.kubernetes.io/revision";

/// The label the deployment controller adds to a ReplicaSet's template; not the
/// Deployment's own, so it is dropped before the template goes back.
const TEMPLATE_HASH: &str = "pod-template-hash";

/// Annotations that belong to the Deployment, not to a revision: kept from the Deployment,
/// never copied from the ReplicaSet (as kubectl's rollback does).
const DEPLOYMENT_OWN: [&str; 6] = [
    "kubectl.kubernetes.io/last-applied-configuration",
    REVISION,
    "deployment.kubernetes.io/revision-history",
    "deployment.kubernetes.io/desired-replicas",
    "deployment.kubernetes.io/max-replicas",
    "deprecated.deployment.rollback.to",
];

/// A rollback, as the dialog states it and the server is sent it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Undo {
    pub facts: Vec<String>,
    /// A JSON patch (RFC 6902).
    pub patch: Value,
}

/// One revision of a workload's template: its number, the object keeping it, the template.
struct Revision {
    number: i64,
    keeper: String,
    template: Value,
}

/// The undo of `object` (`target`, as read) back to its previous revision, or why there is
/// none.
pub(super) async fn previous(
    client: &kube::Client,
    target: &Target,
    object: &Value,
) -> Result<Undo, String> {
    let text = |p: &str| {
        object
            .pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let (namespace, uid) = (text("/metadata/namespace"), text("/metadata/uid"));
    let deployment = target.kind.plural() == "deployments";
    if deployment && object.pointer("/spec/paused").and_then(Value::as_bool) == Some(true) {
        return Err(format!(
            "{} is paused: resume it first (kubectl rollout resume deployment/{}), then undo",
            target.label(),
            target.name
        ));
    }
    let (list, keeper_kind) = if deployment {
        ("replicasets", "ReplicaSet")
    } else {
        ("controllerrevisions", "ControllerRevision")
    };
    let items = fetch_list(
        client,
        format!("/apis/apps/v1/namespaces/{namespace}/{list}"),
        format!("the {list} of {}", target.label()),
    )
    .await
    .map_err(|e| e.to_string())?;
    let mut revisions: Vec<Revision> = items
        .iter()
        .filter(|item| owned_by(item, uid))
        .filter_map(|item| revision(item, deployment))
        .collect();
    revisions.sort_by_key(|r| r.number);
    let (Some(current), Some(previous)) = (
        revisions.last(),
        revisions
            .len()
            .checked_sub(2)
            .and_then(|i| revisions.get(i)),
    ) else {
        return Err(format!(
            "{} has no previous revision to go back to ({} kept)",
            target.label(),
            revisions.len()
        ));
    };
    let now = object
        .pointer("/spec/template")
        .cloned()
        .unwrap_or(Value::Null);
    if without_hash(&now) == previous.template {
        return Err(format!(
            "{}'s template already matches revision {}: nothing to undo",
            target.label(),
            previous.number
        ));
    }
    let mut patch = vec![json!({
        "op": "replace", "path": "/spec/template", "value": previous.template,
    })];
    if deployment {
        let annotations = annotations(object, items.iter().find(|i| name(i) == previous.keeper));
        patch.push(json!({
            "op": "replace", "path": "/metadata/annotations", "value": annotations,
        }));
    }
    let facts = vec![
        format!(
            "back to revision {} ({keeper_kind} {}), from revision {}; the controller then \
             rolls the pods as its update strategy says",
            previous.number, previous.keeper, current.number
        ),
        format!(
            "images: {} (now {})",
            images(&previous.template),
            images(&now)
        ),
    ];
    Ok(Undo {
        facts,
        patch: Value::Array(patch),
    })
}

fn name(item: &Value) -> &str {
    item.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Whether `item`'s controller is the object of `uid`.
fn owned_by(item: &Value, uid: &str) -> bool {
    item.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|refs| {
            refs.iter().any(|r| {
                r.get("uid").and_then(Value::as_str) == Some(uid)
                    && r.get("controller").and_then(Value::as_bool) == Some(true)
            })
        })
}

/// The revision a ReplicaSet (`deployment`) or a ControllerRevision keeps.
fn revision(item: &Value, deployment: bool) -> Option<Revision> {
    let (number, template) = if deployment {
        let number = item
            .pointer(&format!(
                "/metadata/annotations/{}",
                REVISION.replace('/', "~1")
            ))
            .and_then(Value::as_str)?
            .parse()
            .ok()?;
        (number, item.pointer("/spec/template")?)
    } else {
        (
            item.get("revision").and_then(Value::as_i64)?,
            item.pointer("/data/spec/template")?,
        )
    };
    let mut template = without_hash(template);
    // A ControllerRevision's data is a strategic merge patch that replaces the template.
    if let Some(map) = template.as_object_mut() {
        map.remove("$patch");
    }
    Some(Revision {
        number,
        keeper: name(item).to_string(),
        template,
    })
}

/// `template` without the ReplicaSet's hash label.
fn without_hash(template: &Value) -> Value {
    let mut template = template.clone();
    if let Some(labels) = template
        .pointer_mut("/metadata/labels")
        .and_then(Value::as_object_mut)
    {
        labels.remove(TEMPLATE_HASH);
    }
    template
}

/// The Deployment's annotations after the undo: its own kept, the revision's copied.
fn annotations(deployment: &Value, replica_set: Option<&Value>) -> Value {
    let of = |object: Option<&Value>| {
        object
            .and_then(|o| o.pointer("/metadata/annotations"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let mut annotations = serde_json::Map::new();
    for (key, value) in of(Some(deployment)) {
        if DEPLOYMENT_OWN.contains(&key.as_str()) {
            annotations.insert(key, value);
        }
    }
    for (key, value) in of(replica_set) {
        if !DEPLOYMENT_OWN.contains(&key.as_str()) {
            annotations.insert(key, value);
        }
    }
    Value::Object(annotations)
}

/// `web=nginx:1.27, log=busybox`: the template's containers and their images.
pub(super) fn images(template: &Value) -> String {
    template
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .map(|containers| {
            containers
                .iter()
                .map(|c| {
                    let field = |f: &str| c.get(f).and_then(Value::as_str).unwrap_or_default();
                    format!("{}={}", field("name"), field("image"))
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ReplicaSet's revision is its annotation; its template loses the hash label.
    #[test]
    fn a_replica_set_keeps_its_revision_without_the_hash() {
        let rs = json!({
            "metadata": {"name": "web-abc", "annotations": {REVISION: "3"}},
            "spec": {"template": {"metadata": {"labels": {"app": "web", TEMPLATE_HASH: "abc"}},
                     "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}},
        });
        let revision = revision(&rs, true).unwrap();
        assert_eq!((revision.number, revision.keeper.as_str()), (3, "web-abc"));
        assert_eq!(
            revision.template["metadata"]["labels"],
            json!({"app": "web"})
        );
        assert_eq!(images(&revision.template), "web=nginx:1.25");
    }

    /// A ControllerRevision's template is its data's, without the `$patch` directive.
    #[test]
    fn a_controller_revision_keeps_its_template() {
        let cr = json!({
            "metadata": {"name": "db-7f"},
            "revision": 2,
            "data": {"spec": {"template": {"$patch": "replace", "spec": {"containers": []}}}},
        });
        let revision = revision(&cr, false).unwrap();
        assert_eq!(revision.number, 2);
        assert_eq!(revision.template, json!({"spec": {"containers": []}}));
    }

    /// The Deployment keeps its own annotations; the revision's others come back.
    #[test]
    fn the_deployment_keeps_its_own_annotations() {
        let deployment = json!({"metadata": {"annotations": {REVISION: "4", "team": "a"}}});
        let rs = json!({"metadata": {"annotations": {REVISION: "2", "team": "b"}}});
        assert_eq!(
            annotations(&deployment, Some(&rs)),
            json!({REVISION: "4", "team": "b"})
        );
    }
}
