//! managedFields as the field manager keeps them: an update hands the fields it changed to
//! its manager (taking them from whoever owned them), and server-side apply merges a
//! manager's configuration, removes what it stopped applying, and refuses with 409 to change
//! a field another manager owns unless forced.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::http::status::ApiError;
use crate::manifests;
use crate::patch::fieldset::{self, Leaf};
use crate::patch::strategic;

/// Fields no manager owns: identity, and what the server alone writes.
fn owned_part(value: &Value, status: bool) -> Value {
    let mut owned = value.clone();
    if let Some(top) = owned.as_object_mut() {
        top.remove("apiVersion");
        top.remove("kind");
        if status {
            top.retain(|k, _| k == "status");
        } else {
            top.remove("status");
        }
    }
    if let Some(meta) = owned["metadata"].as_object_mut() {
        for field in [
            "name",
            "namespace",
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "managedFields",
            "selfLink",
        ] {
            meta.remove(field);
        }
        if meta.is_empty() {
            owned.as_object_mut().map(|o| o.remove("metadata"));
        }
    }
    owned
}

/// One managedFields entry, its set decoded.
struct Entry {
    manager: String,
    operation: String,
    subresource: Option<String>,
    raw: Value,
    set: BTreeSet<Leaf>,
}

impl Entry {
    fn is(&self, manager: &str, operation: &str, subresource: Option<&str>) -> bool {
        self.manager == manager
            && self.operation == operation
            && self.subresource.as_deref() == subresource
    }
}

fn entries(object: &Value) -> Vec<Entry> {
    object["metadata"]["managedFields"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|e| Entry {
                    manager: e["manager"].as_str().unwrap_or("").to_string(),
                    operation: e["operation"].as_str().unwrap_or("Update").to_string(),
                    subresource: e["subresource"].as_str().map(str::to_string),
                    raw: e.clone(),
                    set: fieldset::from_fields_v1(&e["fieldsV1"]),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Writes `entries` back; empty ones are dropped, as the field manager drops them.
fn store(object: &mut Value, entries: Vec<Entry>) {
    let kept: Vec<Value> = entries
        .into_iter()
        .filter(|e| !e.set.is_empty())
        .map(|mut e| {
            e.raw["fieldsV1"] = fieldset::to_fields_v1(&e.set);
            e.raw
        })
        .collect();
    object["metadata"]["managedFields"] = json!(kept);
}

fn entry_for(
    manager: &str,
    operation: &str,
    api_version: &str,
    subresource: Option<&str>,
) -> Entry {
    let mut raw = json!({
        "manager": manager,
        "operation": operation,
        "apiVersion": api_version,
        "time": manifests::timestamp(manifests::now_seconds()),
        "fieldsType": "FieldsV1",
    });
    if let Some(sub) = subresource {
        raw["subresource"] = json!(sub);
    }
    Entry {
        manager: manager.to_string(),
        operation: operation.to_string(),
        subresource: subresource.map(str::to_string),
        raw,
        set: BTreeSet::new(),
    }
}

/// The managedFields an update ends with, before its own change is recorded: a request
/// that resets them (`[]` or `[{}]`) strips them, one that sets other entries has them
/// (kubectl moves client-side apply's fields to its apply manager so), and one that leaves
/// them out keeps the stored ones. Returns whether the update is still to be recorded: an
/// object without managedFields stays without until its first apply, as on the real server.
pub(super) fn take_requested(current: &Value, next: &mut Value) -> bool {
    let requested = next["metadata"]
        .as_object_mut()
        .and_then(|meta| meta.remove("managedFields"));
    let reset = match &requested {
        Some(Value::Array(list)) => match list.as_slice() {
            [] => true,
            [only] => only.as_object().is_some_and(|o| o.is_empty()),
            _ => false,
        },
        _ => false,
    };
    if reset {
        return false;
    }
    let given = requested.filter(|r| {
        r.as_array()
            .is_some_and(|list| list.iter().all(|e| e["manager"].is_string()))
    });
    let kept = match given {
        Some(list) => list,
        None => match &current["metadata"]["managedFields"] {
            Value::Array(list) if !list.is_empty() => Value::Array(list.clone()),
            _ => return false,
        },
    };
    next["metadata"]["managedFields"] = kept;
    true
}

/// Records an update of `current` into `next` (holding the managedFields to start from) by
/// `manager`: the leaves it changed become its own, and leave every other manager's set, as
/// do the leaves it removed.
pub(super) fn record_update(current: &Value, next: &mut Value, manager: &str, status: bool) {
    let (before, after) = (owned_part(current, status), owned_part(next, status));
    let changed: BTreeSet<Leaf> = fieldset::leaves(&after)
        .into_iter()
        .filter(|leaf| fieldset::value_at(&after, leaf) != fieldset::value_at(&before, leaf))
        .collect();
    let removed: BTreeSet<Leaf> = fieldset::leaves(&before)
        .into_iter()
        .filter(|leaf| fieldset::value_at(&after, leaf).is_none())
        .collect();
    if changed.is_empty() && removed.is_empty() {
        return;
    }
    let subresource = status.then_some("status");
    let mut all = entries(next);
    for entry in &mut all {
        entry
            .set
            .retain(|leaf| !changed.contains(leaf) && !removed.contains(leaf));
    }
    let mine = match all
        .iter()
        .position(|e| e.is(manager, "Update", subresource))
    {
        Some(i) => i,
        None => {
            let api_version = current["apiVersion"].as_str().unwrap_or("v1");
            all.push(entry_for(manager, "Update", api_version, subresource));
            all.len() - 1
        }
    };
    all[mine].set.extend(changed);
    all[mine].raw["time"] = json!(manifests::timestamp(manifests::now_seconds()));
    store(next, all);
}

/// One field another manager owns with a different value than the configuration's.
struct Conflict {
    manager: String,
    api_version: String,
    leaf: Leaf,
}

/// The 409 a real server answers an apply that would take fields from other managers.
fn conflicts_error(kind: &str, group: &str, name: &str, conflicts: &[Conflict]) -> ApiError {
    let n = conflicts.len();
    let mut message = format!(
        "Apply failed with {n} conflict{}: ",
        if n == 1 { "" } else { "s" }
    );
    let lines: Vec<String> = conflicts
        .iter()
        .map(|c| {
            format!(
                "conflict with \"{}\" using {}: {}",
                c.manager,
                c.api_version,
                fieldset::display(&c.leaf)
            )
        })
        .collect();
    message.push_str(&lines.join("\n"));
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|c| {
            json!({
                "reason": "FieldManagerConflict",
                "message": format!("conflict with \"{}\" using {}", c.manager, c.api_version),
                "field": fieldset::display(&c.leaf),
            })
        })
        .collect();
    ApiError::apply_conflict(
        message,
        json!({"name": name, "group": group, "kind": kind, "causes": causes}),
    )
}

/// Server-side apply of `config` by `manager` onto `live` (an existing object); returns the
/// merged object with its managedFields.
pub(super) fn apply(
    live: &Value,
    config: &Value,
    manager: &str,
    force: bool,
    (kind, group, name): (&str, &str, &str),
) -> Result<Value, ApiError> {
    let applied = owned_part(config, false);
    let wanted = fieldset::leaves(&applied);
    let mut all = entries(live);
    if all.is_empty() {
        // An object nobody manages yet (its managedFields were reset): what it holds is
        // handed to `before-first-apply`, as the real server does before a first apply.
        let api_version = live["apiVersion"].as_str().unwrap_or("v1");
        let mut before = entry_for(BEFORE_FIRST_APPLY, "Update", api_version, None);
        before.set = fieldset::leaves(&owned_part(live, false));
        all.push(before);
    }
    let mut conflicts = Vec::new();
    for entry in all.iter().filter(|e| !e.is(manager, "Apply", None)) {
        for leaf in entry.set.intersection(&wanted) {
            // A list item is co-owned: only its fields' values can conflict.
            if leaf.last().is_some_and(|k| k.starts_with("k:")) {
                continue;
            }
            if fieldset::value_at(&applied, leaf) != fieldset::value_at(live, leaf) {
                conflicts.push(Conflict {
                    manager: entry.manager.clone(),
                    api_version: entry.raw["apiVersion"].as_str().unwrap_or("").to_string(),
                    leaf: leaf.clone(),
                });
            }
        }
    }
    let upgrading = manager == "kubectl" && conflicts_from_client_side_apply(live, &conflicts);
    if !conflicts.is_empty() && !force && !upgrading {
        return Err(conflicts_error(kind, group, name, &conflicts));
    }
    let taken: BTreeSet<&Leaf> = conflicts.iter().map(|c| &c.leaf).collect();
    for entry in all.iter_mut().filter(|e| !e.is(manager, "Apply", None)) {
        entry.set.retain(|leaf| !taken.contains(leaf));
    }
    let mut merged = live.clone();
    // What this manager applied before and applies no more goes, unless someone else owns it.
    if let Some(previous) = all.iter().find(|e| e.is(manager, "Apply", None)) {
        let others: BTreeSet<&Leaf> = all
            .iter()
            .filter(|e| !e.is(manager, "Apply", None))
            .flat_map(|e| e.set.iter())
            .collect();
        let mut dropped: Vec<&Leaf> = previous
            .set
            .iter()
            .filter(|leaf| !wanted.contains(*leaf) && !others.contains(leaf))
            .filter(|leaf| !wanted.iter().any(|w| w.starts_with(leaf)))
            .collect();
        // A dropped list item goes whole: its own fields are not removed one by one first,
        // or the item could no longer be found by its key.
        dropped.sort_by_key(|leaf| leaf.len());
        let mut removed: Vec<&Leaf> = Vec::new();
        for leaf in dropped {
            if removed.iter().any(|r| leaf.starts_with(r)) {
                continue;
            }
            fieldset::remove_at(&mut merged, leaf);
            removed.push(leaf);
        }
    }
    strategic::apply(&mut merged, &applied).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let api_version = config["apiVersion"].as_str().unwrap_or("v1");
    let mine = match all.iter().position(|e| e.is(manager, "Apply", None)) {
        Some(i) => i,
        None => {
            all.push(entry_for(manager, "Apply", api_version, None));
            all.len() - 1
        }
    };
    all[mine].set = wanted;
    all[mine].raw["time"] = json!(manifests::timestamp(manifests::now_seconds()));
    store(&mut merged, all);
    // kubectl's apply keeps client-side apply's record in step, so a later client-side
    // apply diffs against what was applied last.
    if manager == "kubectl" && merged["metadata"]["annotations"][LAST_APPLIED].is_string() {
        let mut last = config.clone();
        if let Some(annotations) = last["metadata"]["annotations"].as_object_mut() {
            annotations.remove(LAST_APPLIED);
            if annotations.is_empty() {
                last["metadata"]
                    .as_object_mut()
                    .map(|m| m.remove("annotations"));
            }
        }
        merged["metadata"]["annotations"][LAST_APPLIED] = json!(last.to_string());
    }
    Ok(merged)
}

/// The manager the real server hands an unmanaged object's fields to before a first apply.
const BEFORE_FIRST_APPLY: &str = "before-first-apply";

/// Client-side apply's record of what it applied last.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Whether every conflict is a field kubectl's client-side apply had applied: switching to
/// server-side apply, kubectl may take them, as the real server lets it.
fn conflicts_from_client_side_apply(live: &Value, conflicts: &[Conflict]) -> bool {
    let Some(last) = live["metadata"]["annotations"][LAST_APPLIED]
        .as_str()
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
    else {
        return false;
    };
    let applied = fieldset::leaves(&owned_part(&last, false));
    conflicts.iter().all(|c| applied.contains(&c.leaf))
}

/// The managedFields a create records: all it set, its manager's.
pub(super) fn record_create(object: &mut Value, manager: &str) {
    let api_version = object["apiVersion"].as_str().unwrap_or("v1");
    let mut entry = entry_for(manager, "Update", api_version, None);
    entry.set = fieldset::leaves(&owned_part(object, false));
    store(object, vec![entry]);
}

/// The managedFields a create by apply records: the configuration, owned by `manager`.
pub(super) fn applied_on_create(object: &mut Value, config: &Value, manager: &str) {
    let mut entry = entry_for(
        manager,
        "Apply",
        config["apiVersion"].as_str().unwrap_or("v1"),
        None,
    );
    entry.set = fieldset::leaves(&owned_part(config, false));
    store(object, vec![entry]);
}
