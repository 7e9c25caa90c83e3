//! The common end of PUT and PATCH: what the server keeps from the stored object, what the
//! subresource may change, generation, finalizers on an object being deleted, and the rule
//! that a write that changes nothing is not stored.

use axum::body::Bytes;
use serde_json::{Value, json};

use super::body::WriteOptions;
use super::outcome::follow_definitions;
use super::{defaults, managed, validate};
use crate::gc;
use crate::http::status::ApiError;
use crate::http::target::{Subresource, Target};
use crate::resources::Resource;
use crate::store::Txn;

/// Metadata only the server sets; a client's values for them are ignored.
const SERVER_METADATA: [&str; 7] = [
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "name",
    "namespace",
    "generation",
];

/// Whose the changed fields become.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ownership {
    /// An update: its manager takes what it changed.
    Update,
    /// Server-side apply has already worked out the managedFields.
    AsGiven,
}

/// Stores `value` as the new state of an existing object and returns what the client sees.
pub(super) fn update_existing(
    txn: &mut Txn<'_>,
    target: &Target,
    name: &str,
    current: &Value,
    value: Value,
    options: &WriteOptions,
    ownership: Ownership,
) -> Result<Bytes, ApiError> {
    let resource = target.resource;
    let mut value = match target.subresource {
        // A status write changes the status alone.
        Some(Subresource::Status) => {
            let mut next = current.clone();
            next["status"] = value["status"].clone();
            next
        }
        // Where status is a subresource, the main resource leaves it alone.
        _ => {
            let mut next = value;
            if resource.descriptor().status {
                match &current["status"] {
                    Value::Null => {
                        if let Some(object) = next.as_object_mut() {
                            object.remove("status");
                        }
                    }
                    kept => next["status"] = kept.clone(),
                }
            }
            next
        }
    };
    defaults::normalize(resource, &mut value);
    validate::validate(resource, name, &value)?;
    validate::validate_update(resource, name, current, &value)?;
    // A CRD's scope decides its objects' keys: the real server refuses to change it.
    if resource == Resource::CustomResourceDefinitions
        && value["spec"]["scope"] != current["spec"]["scope"]
    {
        return Err(ApiError::invalid(
            "CustomResourceDefinition.apiextensions.k8s.io",
            name,
            "spec.scope",
            "FieldValueInvalid",
            &format!("{}: field is immutable", value["spec"]["scope"]),
        ));
    }
    for field in SERVER_METADATA {
        match &current["metadata"][field] {
            Value::Null => {
                if let Some(meta) = value["metadata"].as_object_mut() {
                    meta.remove(field);
                }
            }
            kept => value["metadata"][field] = kept.clone(),
        }
    }
    match &current["metadata"]["resourceVersion"] {
        Value::Null => {
            if let Some(meta) = value["metadata"].as_object_mut() {
                meta.remove("resourceVersion");
            }
        }
        kept => value["metadata"]["resourceVersion"] = kept.clone(),
    }
    let tracked = ownership == Ownership::Update && managed::take_requested(current, &mut value);
    value["kind"] = current["kind"].clone();
    value["apiVersion"] = current["apiVersion"].clone();
    if value["spec"] != current["spec"]
        && let Some(generation) = current["metadata"]["generation"].as_u64()
    {
        value["metadata"]["generation"] = json!(generation + 1);
    }
    if tracked {
        let status = target.subresource == Some(Subresource::Status);
        managed::record_update(current, &mut value, &options.manager(), status);
    }
    let deleting = current["metadata"]["deletionTimestamp"].is_string();
    if deleting {
        check_no_new_finalizers(target, name, current, &value)?;
    }
    if value == *current {
        return Ok(Bytes::from(value.to_string()));
    }
    // A namespace also waits for its own spec.finalizers, which the namespace controller
    // removes once it is empty (and then deletes it).
    let finished = deleting
        && finalizers(&value).is_empty()
        && (resource != Resource::Namespaces
            || value["spec"]["finalizers"]
                .as_array()
                .is_none_or(|f| f.is_empty()));
    if options.dry_run {
        return Ok(Bytes::from(value.to_string()));
    }
    let key = target.key(name);
    let stored = txn.put(resource, &key, &mut value)?;
    follow_definitions(txn, target, name)?;
    if finished {
        // The last finalizer is gone: the object goes, as the garbage collector would take it.
        // (In a Terminating namespace, the namespace controller sees it gone at its next look.)
        let last = gc::delete_cascading(txn, resource, &key, false)?;
        return Ok(last.map_or_else(|| stored.json.clone(), |o| o.json.clone()));
    }
    Ok(stored.json.clone())
}

pub(super) fn finalizers(value: &Value) -> Vec<&str> {
    value["metadata"]["finalizers"]
        .as_array()
        .map(|f| f.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// An object being deleted may lose finalizers but not gain them.
fn check_no_new_finalizers(
    target: &Target,
    name: &str,
    current: &Value,
    value: &Value,
) -> Result<(), ApiError> {
    let before = finalizers(current);
    let added: Vec<&str> = finalizers(value)
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect();
    if added.is_empty() {
        return Ok(());
    }
    let quoted: Vec<String> = added.iter().map(|f| format!("\"{f}\"")).collect();
    Err(ApiError::invalid(
        target.resource.kind(),
        name,
        "metadata.finalizers",
        "FieldValueForbidden",
        &format!(
            "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
            quoted.join(", ")
        ),
    ))
}
