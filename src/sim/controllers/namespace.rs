//! The namespace controller: a Terminating namespace's content is deleted (each object its
//! own delete, so a watcher sees each go; those with finalizers are marked and wait for
//! them), its NamespaceDeletion* and Namespace*Remaining conditions say how far it got, and
//! once nothing is left the `kubernetes` finalizer is removed and the namespace deleted.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use super::super::gc;
use super::super::manifests;
use super::super::resources::Resource;
use super::super::store::{StoreError, Txn};
use super::kubelet;
use super::objects::decode;
use super::work::{BURST, FollowUps, Work};

/// The namespace's own finalizer, which this controller removes when the namespace is empty.
const FINALIZER: &str = "kubernetes";
/// How soon a namespace whose content waits on finalizers is looked at again (a finalizer
/// removed through the API also wakes it at once).
const RECHECK: Duration = Duration::from_secs(2);

pub(super) fn reconcile(txn: &mut Txn<'_>, name: &str) -> Result<FollowUps, StoreError> {
    let Some(stored) = txn.get(Resource::Namespaces, name) else {
        return Ok(Vec::new());
    };
    let namespace = decode(&stored)?;
    if !namespace["metadata"]["deletionTimestamp"].is_string() {
        return Ok(Vec::new());
    }
    let prefix = format!("{name}/");
    let mut deleted = 0;
    // Its pods' kubelets stop them, and remove them when their grace periods are over.
    let mut follow = FollowUps::new();
    let mut on_pod = |txn: &mut Txn<'_>, pod: &Value| {
        follow.extend(kubelet::kill(txn, pod)?);
        Ok(())
    };
    // What is left once this pass is done, per resource: how many, and the finalizers that
    // hold them.
    let mut remaining: BTreeMap<String, usize> = BTreeMap::new();
    let mut finalizers: BTreeMap<String, usize> = BTreeMap::new();
    let mut more = false;
    'scan: for resource in txn.served().into_iter().filter(|r| r.namespaced()) {
        for (key, object) in txn.scan(resource, &prefix) {
            if deleted == BURST {
                more = true;
                break 'scan;
            }
            let value = decode(&object)?;
            if !value["metadata"]["deletionTimestamp"].is_string() {
                gc::delete_dependent(txn, resource, &key, &mut on_pod)?;
                deleted += 1;
            }
            if let Some(left) = txn.get(resource, &key) {
                let value = decode(&left)?;
                *remaining.entry(group_resource(resource)).or_default() += 1;
                for f in value["metadata"]["finalizers"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    *finalizers
                        .entry(f.as_str().unwrap_or("").to_string())
                        .or_default() += 1;
                }
            }
        }
    }
    if more {
        // The rest in the next pass, so one namespace never holds the store long.
        follow.push((Work::Namespace(name.into()), None));
        return Ok(follow);
    }
    let status = status(&namespace, &remaining, &finalizers);
    if namespace["status"] != status {
        txn.modify_member(Resource::Namespaces, name, "status", |s| *s = status)?;
    }
    if !remaining.is_empty() {
        follow.push((Work::Namespace(name.into()), Some(RECHECK)));
        return Ok(follow);
    }
    // Empty: the controller finalizes it, and with no finalizer left the server deletes it.
    let has_finalizer = namespace["spec"]["finalizers"]
        .as_array()
        .is_some_and(|f| f.iter().any(|f| f == FINALIZER));
    if has_finalizer {
        txn.modify_member(Resource::Namespaces, name, "spec", |spec| {
            if let Some(f) = spec["finalizers"].as_array_mut() {
                f.retain(|f| f != FINALIZER);
            }
        })?;
    }
    let finalized = txn
        .get(Resource::Namespaces, name)
        .map(|o| decode(&o))
        .transpose()?
        .is_some_and(|ns| {
            !gc::has_finalizers(&ns)
                && ns["spec"]["finalizers"]
                    .as_array()
                    .is_none_or(|f| f.is_empty())
        });
    if finalized {
        txn.delete(Resource::Namespaces, name)?;
    }
    Ok(Vec::new())
}

/// `pods.`, `deployments.apps`: a group-resource as the controller's messages spell it.
fn group_resource(resource: Resource) -> String {
    format!("{}.{}", resource.plural(), resource.group())
}

/// The Terminating status with the conditions the real controller writes, each keeping its
/// transition time while it holds.
fn status(
    namespace: &Value,
    remaining: &BTreeMap<String, usize>,
    finalizers: &BTreeMap<String, usize>,
) -> Value {
    let now = manifests::timestamp(manifests::now_seconds());
    let previous = namespace["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let condition = |kind: &str, on: bool, reason: &str, message: String| {
        let status = if on { "True" } else { "False" };
        let since = previous
            .iter()
            .find(|c| c["type"] == kind && c["status"] == status)
            .map_or(json!(now), |c| c["lastTransitionTime"].clone());
        json!({"type": kind, "status": status, "lastTransitionTime": since, "reason": reason, "message": message})
    };
    let listed = |counts: &BTreeMap<String, usize>, word: &str| {
        counts
            .iter()
            .map(|(what, n)| format!("{what} {word} {n} resource instances"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let content = if remaining.is_empty() {
        condition(
            "NamespaceContentRemaining",
            false,
            "ContentRemoved",
            "All content successfully removed".into(),
        )
    } else {
        condition(
            "NamespaceContentRemaining",
            true,
            "SomeResourcesRemain",
            format!("Some resources are remaining: {}", listed(remaining, "has")),
        )
    };
    let held = if finalizers.is_empty() {
        condition(
            "NamespaceFinalizersRemaining",
            false,
            "ContentHasNoFinalizers",
            "All content-preserving finalizers finished".into(),
        )
    } else {
        condition(
            "NamespaceFinalizersRemaining",
            true,
            "SomeFinalizersRemain",
            format!(
                "Some content in the namespace has finalizers remaining: {}",
                listed(finalizers, "in")
            ),
        )
    };
    json!({
        "phase": "Terminating",
        "conditions": [
            condition("NamespaceDeletionDiscoveryFailure", false, "ResourcesDiscovered", "All resources successfully discovered".into()),
            condition("NamespaceDeletionGroupVersionParsingFailure", false, "ParsedGroupVersions", "All legacy kube types successfully parsed".into()),
            condition("NamespaceDeletionContentFailure", false, "ContentDeleted", "All content successfully deleted, may be waiting on finalization".into()),
            content,
            held,
        ],
    })
}

/// What a new namespace gets from the control plane's controllers at once: the `default`
/// ServiceAccount its pods run as, and the `kube-root-ca.crt` ConfigMap their token volume
/// mounts (the cluster's, as every namespace has it).
pub(crate) fn furnish(txn: &mut Txn<'_>, namespace: &str) -> Result<(), StoreError> {
    let created = manifests::timestamp(manifests::now_seconds());
    let metadata = |name: &str| {
        json!({
            "name": name,
            "namespace": namespace,
            "uid": manifests::uid(&mut rand::rng()),
            "creationTimestamp": created,
        })
    };
    let account_key = format!("{namespace}/default");
    if txn.get(Resource::ServiceAccounts, &account_key).is_none() {
        let mut account =
            json!({"kind": "ServiceAccount", "apiVersion": "v1", "metadata": metadata("default")});
        txn.put(Resource::ServiceAccounts, &account_key, &mut account)?;
    }
    let ca_key = format!("{namespace}/{ROOT_CA}");
    if txn.get(Resource::ConfigMaps, &ca_key).is_none() {
        let cluster = txn
            .get(Resource::ConfigMaps, &format!("default/{ROOT_CA}"))
            .map(|o| decode(&o))
            .transpose()?;
        let mut config_map =
            json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": metadata(ROOT_CA)});
        if let Some(cluster) = cluster {
            config_map["metadata"]["annotations"] = cluster["metadata"]["annotations"].clone();
            config_map["data"] = cluster["data"].clone();
        }
        txn.put(Resource::ConfigMaps, &ca_key, &mut config_map)?;
    }
    Ok(())
}

/// The ConfigMap holding the cluster's CA bundle in every namespace.
const ROOT_CA: &str = "kube-root-ca.crt";
