//! What kube-controller-manager's garbage collector does after a delete: every object whose
//! `metadata.ownerReferences` names the deleted object's uid (as its controller or not) is
//! a dependent, deleted once none of its owners is left and otherwise only stripped of the
//! reference. In the background (the default) the owner goes first and its dependents after
//! it, one generation at a time; in the foreground the dependents go first; an orphaning
//! delete leaves them, stripped of their references to it. A pod is deleted gracefully
//! ([`delete_pod`]): Terminating for its grace period, its kubelet removing it after. The
//! ReplicaSet controller's replacement of a seeded pod deleted from under it is here too.
//! Both the HTTP writes and the churn delete through here.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use rand::Rng;
use serde_json::Value;

use super::capacity;
use super::manifests::{self, PodFactory, PodState};
use super::manifests::{node_ip, pod_ip};
use super::object::StoredObject;
use super::resources::Resource;
use super::store::{Key, StoreError, Txn};

/// What is told of each pod the collector deletes, before it goes: its kubelet stops it and
/// the Services selecting it recount, as for a pod a client deletes.
pub(crate) type OnPod<'a> = dyn FnMut(&mut Txn<'_>, &Value) -> Result<(), StoreError> + 'a;

/// Deletes an object and, unless orphaning, its dependents, telling no one of the pods among
/// them: for callers that delete only pods (which own no pods), or cannot queue work.
/// Returns the object's last state (at the delete's resourceVersion), or `None` if it did
/// not exist.
pub(crate) fn delete_cascading(
    txn: &mut Txn<'_>,
    resource: Resource,
    key: &str,
    orphan: bool,
) -> Result<Option<Arc<StoredObject>>, StoreError> {
    delete_reaping(txn, resource, key, orphan, &mut |_, _| Ok(()))
}

/// [`delete_cascading`], with `on_pod` told of each pod deleted as a dependent.
pub(crate) fn delete_reaping(
    txn: &mut Txn<'_>,
    resource: Resource,
    key: &str,
    orphan: bool,
    on_pod: &mut OnPod<'_>,
) -> Result<Option<Arc<StoredObject>>, StoreError> {
    let Some(current) = txn.get(resource, key) else {
        return Ok(None);
    };
    if resource == Resource::Namespaces {
        let prefix = format!("{key}/");
        for r in txn.served().into_iter().filter(|r| r.namespaced()) {
            for (k, _) in txn.scan(r, &prefix) {
                remove(txn, r, &k, on_pod)?;
            }
        }
        return txn.delete(resource, key);
    }
    let owner = Owner {
        uid: current.uid.clone(),
    };
    let scope = scope(resource, key);
    if orphan {
        return orphan_dependents(txn, resource, key, &current, &owner, &scope);
    }
    // Background: the owner is gone at once, what it owned follows.
    let last = txn.delete(resource, key)?;
    let mut gone = HashSet::from([owner.uid.clone()]);
    let mut generation = vec![owner];
    while !generation.is_empty() {
        let mut next = Vec::new();
        for (r, k) in dependents(txn, &scope, &generation) {
            if let Verdict::Delete(object, value) = verdict(txn, r, &k, &gone)?
                && let Some(uid) = remove_decoded(txn, r, &k, &object, value, on_pod)?
            {
                next.push(Owner { uid });
            }
        }
        gone.extend(next.iter().map(|o| o.uid.clone()));
        generation = next;
    }
    Ok(last)
}

/// The namespace controller's delete of one object in a namespace it empties: one with
/// finalizers is only marked as being deleted, and goes when they are removed, a pod is
/// given its grace period. Its dependents are in the same namespace, and are deleted in
/// their turn.
pub(crate) fn delete_dependent(
    txn: &mut Txn<'_>,
    resource: Resource,
    key: &str,
    on_pod: &mut OnPod<'_>,
) -> Result<(), StoreError> {
    remove(txn, resource, key, on_pod).map(drop)
}

/// An owner whose dependents are looked for.
struct Owner {
    uid: Arc<str>,
}

/// Where the dependents of `key` can be: a namespaced owner's share its namespace; a
/// cluster-scoped one's may be anywhere.
fn scope(resource: Resource, key: &str) -> String {
    if resource.namespaced() {
        key.split_once('/')
            .map_or(String::new(), |(ns, _)| format!("{ns}/"))
    } else {
        String::new()
    }
}

/// The served objects within `scope` whose ownerReferences name one of `owners`, by resource
/// then key (from the store's owner index; [`verdict`] then reads the references
/// themselves). Events are left out: nothing owns them.
fn dependents(txn: &Txn<'_>, scope: &str, owners: &[Owner]) -> Vec<(Resource, Key)> {
    let served: HashSet<Resource> = txn
        .served()
        .into_iter()
        .filter(|r| scope.is_empty() || r.namespaced())
        .filter(|r| !matches!(*r, Resource::Events | Resource::EventsV1))
        .collect();
    let found: BTreeSet<(Resource, Key)> = owners
        .iter()
        .flat_map(|owner| txn.dependents_of(&owner.uid))
        .filter(|(r, k)| served.contains(r) && k.starts_with(scope))
        .collect();
    found.into_iter().collect()
}

/// What the collector does with an object that may depend on the owners in `gone`.
enum Verdict {
    /// It names none of them.
    Unowned,
    /// Another owner of it is still there: the references to those gone were removed.
    Released,
    /// None of its owners is left: it is to be deleted (here as it is, and decoded).
    Delete(Arc<StoredObject>, Value),
}

/// Decides the fate of `key` now that the owners in `gone` are deleted; one that keeps an
/// owner loses its references to the absent ones, in its own write.
fn verdict(
    txn: &mut Txn<'_>,
    resource: Resource,
    key: &str,
    gone: &HashSet<Arc<str>>,
) -> Result<Verdict, StoreError> {
    let Some(object) = txn.get(resource, key) else {
        return Ok(Verdict::Unowned);
    };
    let mut value = object.decode().map_err(encode_error)?;
    let refs = value["metadata"]["ownerReferences"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let named = |r: &Value| r["uid"].as_str().is_some_and(|u| gone.contains(u));
    if !refs.iter().any(named) {
        return Ok(Verdict::Unowned);
    }
    let namespace = value["metadata"]["namespace"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let live: Vec<Value> = refs
        .into_iter()
        .filter(|r| !named(r) && owner_exists(txn, r, &namespace))
        .collect();
    if live.is_empty() {
        return Ok(Verdict::Delete(object, value));
    }
    value["metadata"]["ownerReferences"] = Value::Array(live);
    txn.put(resource, key, &mut value)?;
    Ok(Verdict::Released)
}

/// Whether the owner an ownerReference names exists (with that uid). One of a kind not
/// served is taken as there: the real collector, unable to look it up, keeps the dependent.
fn owner_exists(txn: &Txn<'_>, reference: &Value, namespace: &str) -> bool {
    let (Some(api_version), Some(kind), Some(name), Some(uid)) = (
        reference["apiVersion"].as_str(),
        reference["kind"].as_str(),
        reference["name"].as_str(),
        reference["uid"].as_str(),
    ) else {
        return false;
    };
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let Some(resource) = txn
        .served()
        .into_iter()
        .find(|r| r.kind() == kind && r.group() == group)
    else {
        return true;
    };
    let key = if resource.namespaced() {
        format!("{namespace}/{name}")
    } else {
        name.to_string()
    };
    txn.get(resource, &key).is_some_and(|o| &*o.uid == uid)
}

/// Deletes one object whose owners are gone: a pod is told of first, one with finalizers is
/// only marked as being deleted (it goes when they are removed, its dependents then), one
/// already being deleted is left to its finalizers. Returns its uid if it went now.
fn remove(
    txn: &mut Txn<'_>,
    resource: Resource,
    key: &str,
    on_pod: &mut OnPod<'_>,
) -> Result<Option<Arc<str>>, StoreError> {
    let Some(object) = txn.get(resource, key) else {
        return Ok(None);
    };
    let value = object.decode().map_err(encode_error)?;
    remove_decoded(txn, resource, key, &object, value, on_pod)
}

/// [`remove`] of `object`, decoded as `value`.
fn remove_decoded(
    txn: &mut Txn<'_>,
    resource: Resource,
    key: &str,
    object: &StoredObject,
    mut value: Value,
    on_pod: &mut OnPod<'_>,
) -> Result<Option<Arc<str>>, StoreError> {
    if value["metadata"]["deletionTimestamp"].is_string() {
        return Ok(None);
    }
    if resource == Resource::Pods {
        if only_job_tracking(&value) {
            // The Job controller lets go of a deleted Job's pods: its finalizer is removed
            // and the pod goes.
            if let Some(meta) = value["metadata"].as_object_mut() {
                meta.remove("finalizers");
            }
            txn.put(resource, key, &mut value)?;
        }
        // The collector deletes with no options: the pod's own grace period.
        return Ok(match delete_pod(txn, key, None, on_pod)? {
            Some(PodDeletion::Gone(_)) => Some(object.uid.clone()),
            _ => None,
        });
    }
    if has_finalizers(&value) {
        mark_deleting(txn, resource, key)?;
        return Ok(None);
    }
    txn.delete(resource, key)?;
    Ok(Some(object.uid.clone()))
}

/// What a pod's delete did.
pub(crate) enum PodDeletion {
    /// It is gone (its last state).
    Gone(Arc<StoredObject>),
    /// It is Terminating (as marked) until its kubelet removes it, or held by its
    /// finalizers.
    Terminating { object: Arc<StoredObject> },
}

/// The grace period the API server gives a pod's delete: none for a pod no node runs or
/// whose containers are done (nothing to stop), else what the client asked, else its
/// `terminationGracePeriodSeconds` (30 by default).
pub(crate) fn grace_period(pod: &Value, asked: Option<i64>) -> i64 {
    let unscheduled = pod["spec"]["nodeName"].as_str().is_none_or(str::is_empty);
    let finished = matches!(
        pod["status"]["phase"].as_str(),
        Some("Succeeded" | "Failed")
    );
    if unscheduled || finished {
        return 0;
    }
    asked
        .or_else(|| pod["spec"]["terminationGracePeriodSeconds"].as_i64())
        .unwrap_or(DEFAULT_GRACE_SECONDS)
        .max(0)
}

/// The pod spec's default `terminationGracePeriodSeconds`.
const DEFAULT_GRACE_SECONDS: i64 = 30;

/// Deletes pod `key` gracefully, as the API server does: with a grace period (see
/// [`grace_period`]) it is only marked, `deletionTimestamp` at the end of the period and
/// `deletionGracePeriodSeconds` set, for its kubelet to stop the containers and remove it
/// then; with none it goes at once (or, held by finalizers, is marked). Deleting a pod
/// already Terminating only ever shortens its period. `on_pod` is told of the pod as left
/// marked, or before it goes. `None` if there was no such pod.
pub(crate) fn delete_pod(
    txn: &mut Txn<'_>,
    key: &str,
    asked: Option<i64>,
    on_pod: &mut OnPod<'_>,
) -> Result<Option<PodDeletion>, StoreError> {
    let Some(object) = txn.get(Resource::Pods, key) else {
        return Ok(None);
    };
    let mut value = object.decode().map_err(encode_error)?;
    let grace = grace_period(&value, asked);
    let now = manifests::now_seconds();
    if let Some(deadline) = deletion_deadline(&value) {
        // Already Terminating: a delete with no grace period of its own changes nothing,
        // one that would end later neither.
        if asked.is_none() || now + grace >= deadline {
            return Ok(Some(PodDeletion::Terminating { object }));
        }
    }
    if grace == 0 && !has_finalizers(&value) {
        on_pod(txn, &value)?;
        return Ok(txn.delete(Resource::Pods, key)?.map(PodDeletion::Gone));
    }
    value["metadata"]["deletionTimestamp"] = serde_json::json!(manifests::timestamp(now + grace));
    value["metadata"]["deletionGracePeriodSeconds"] = serde_json::json!(grace);
    let marked = txn.put(Resource::Pods, key, &mut value)?;
    on_pod(txn, &value)?;
    Ok(Some(PodDeletion::Terminating { object: marked }))
}

/// When a Terminating object's grace period ends, in Unix seconds.
pub(crate) fn deletion_deadline(value: &Value) -> Option<i64> {
    value["metadata"]["deletionTimestamp"]
        .as_str()?
        .parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_second())
}

/// The orphan finalizer's flow, in one go: the owner is marked with `orphan` and a
/// deletionTimestamp, each dependent loses its reference to it (its own write), and with
/// the finalizer done the owner goes.
fn orphan_dependents(
    txn: &mut Txn<'_>,
    resource: Resource,
    key: &str,
    current: &StoredObject,
    owner: &Owner,
    scope: &str,
) -> Result<Option<Arc<StoredObject>>, StoreError> {
    let mut value = deleting(current.decode().map_err(encode_error)?, resource);
    value["metadata"]["finalizers"] = serde_json::json!([ORPHAN]);
    txn.put(resource, key, &mut value)?;
    for (r, k) in dependents(txn, scope, std::slice::from_ref(owner)) {
        let Some(object) = txn.get(r, &k) else {
            continue;
        };
        let mut dependent = object.decode().map_err(encode_error)?;
        let Some(refs) = dependent["metadata"]["ownerReferences"].as_array_mut() else {
            continue;
        };
        let before = refs.len();
        refs.retain(|r| r["uid"].as_str() != Some(&*owner.uid));
        if refs.len() == before {
            continue;
        }
        if refs.is_empty()
            && let Some(meta) = dependent["metadata"].as_object_mut()
        {
            meta.remove("ownerReferences");
        }
        txn.put(r, &k, &mut dependent)?;
    }
    txn.delete(resource, key)
}

/// The finalizer of an object whose dependents are being orphaned.
const ORPHAN: &str = "orphan";

fn encode_error(e: serde_json::Error) -> StoreError {
    StoreError::Encode(e.to_string())
}

/// The Job controller's finalizer on the pods it has not counted yet.
pub(crate) const JOB_TRACKING: &str = "batch.kubernetes.io/job-tracking";

fn only_job_tracking(value: &serde_json::Value) -> bool {
    value["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| !f.is_empty() && f.iter().all(|f| f == JOB_TRACKING))
}

pub(crate) fn has_finalizers(value: &serde_json::Value) -> bool {
    value["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| !f.is_empty())
}

/// The object with `metadata.deletionTimestamp` set (a namespace also goes Terminating), as a
/// graceful delete leaves it; unchanged if it already was being deleted.
pub(crate) fn deleting(mut value: serde_json::Value, resource: Resource) -> serde_json::Value {
    if value["metadata"]["deletionTimestamp"].is_string() {
        return value;
    }
    value["metadata"]["deletionTimestamp"] =
        serde_json::json!(manifests::timestamp(manifests::now_seconds()));
    value["metadata"]["deletionGracePeriodSeconds"] = serde_json::json!(0);
    if resource == Resource::Namespaces {
        value["status"]["phase"] = serde_json::json!("Terminating");
    }
    value
}

/// Marks `key` as being deleted (see [`deleting`]).
pub(crate) fn mark_deleting(
    txn: &mut Txn<'_>,
    resource: Resource,
    key: &str,
) -> Result<Option<Arc<StoredObject>>, StoreError> {
    let Some(object) = txn.get(resource, key) else {
        return Ok(None);
    };
    let value = object.decode().map_err(encode_error)?;
    if value["metadata"]["deletionTimestamp"].is_string() {
        return Ok(Some(object));
    }
    let mut value = deleting(value, resource);
    txn.put(resource, key, &mut value).map(Some)
}

/// The finalizer of an object being deleted in the foreground, until its dependents are gone.
pub(crate) const FOREGROUND_DELETION: &str = "foregroundDeletion";

/// Whether a foreground delete of `resource` is worth the collector's wait: the workload
/// kinds and Services, whose dependents a client waits to see go.
pub(crate) fn owns_dependents(resource: Resource) -> bool {
    matches!(
        resource,
        Resource::Deployments
            | Resource::ReplicaSets
            | Resource::Jobs
            | Resource::StatefulSets
            | Resource::DaemonSets
            | Resource::CronJobs
            | Resource::Services
    )
}

/// Where a foreground deletion stands after one pass of the garbage collector.
pub(crate) enum Foreground {
    /// The dependents are gone, and so is the owner (or it was not being deleted so).
    Done,
    /// Dependents are still there (Terminating pods, owners deleting theirs); among them
    /// those this pass marked for deletion in the foreground in their turn.
    Waiting(Vec<(Resource, Key)>),
}

/// One pass of the garbage collector's foreground deletion of `key` (marked with
/// [`FOREGROUND_DELETION`]): each dependent is deleted, itself in the foreground if it owns
/// others (so a Deployment's ReplicaSets wait for their pods), a pod with its grace period;
/// once none is left the owner goes.
pub(crate) fn finish_foreground(
    txn: &mut Txn<'_>,
    resource: Resource,
    key: &str,
    on_pod: &mut OnPod<'_>,
) -> Result<Foreground, StoreError> {
    let Some(current) = txn.get(resource, key) else {
        return Ok(Foreground::Done);
    };
    let value = current.decode().map_err(encode_error)?;
    if !in_foreground(&value) {
        return Ok(Foreground::Done);
    }
    let owner = Owner {
        uid: current.uid.clone(),
    };
    let gone = HashSet::from([owner.uid.clone()]);
    let mut waiting = false;
    let mut marked = Vec::new();
    for (r, k) in dependents(txn, &scope(resource, key), &[owner]) {
        let Verdict::Delete(object, mut dependent) = verdict(txn, r, &k, &gone)? else {
            continue;
        };
        waiting = true;
        if dependent["metadata"]["deletionTimestamp"].is_string() {
            continue;
        }
        if owns_dependents(r) && !txn.dependents_of(&object.uid).is_empty() {
            dependent = deleting(dependent, r);
            let mut finalizers = dependent["metadata"]["finalizers"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            finalizers.push(Value::from(FOREGROUND_DELETION));
            dependent["metadata"]["finalizers"] = Value::Array(finalizers);
            txn.put(r, &k, &mut dependent)?;
            marked.push((r, k));
        } else {
            remove_decoded(txn, r, &k, &object, dependent, on_pod)?;
        }
    }
    if waiting {
        return Ok(Foreground::Waiting(marked));
    }
    txn.delete(resource, key)?;
    Ok(Foreground::Done)
}

/// Whether an object carries the [`FOREGROUND_DELETION`] finalizer.
fn in_foreground(value: &Value) -> bool {
    value["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| f.iter().any(|f| f == FOREGROUND_DELETION))
}

/// A free address of `node`'s podCIDR, as its CNI gives a new pod (`None` for a node
/// without one).
pub(crate) fn node_pod_ip(txn: &Txn<'_>, node: &str) -> Option<String> {
    let stored = txn.get(Resource::Nodes, node)?.decode().ok()?;
    let cidr = stored["spec"]["podCIDR"].as_str()?;
    let pods: Vec<Arc<StoredObject>> = txn
        .pods_on_node(node)
        .iter()
        .filter_map(|key| txn.get(Resource::Pods, key))
        .collect();
    let used = pods.iter().filter_map(|p| p.fields.pod_ip.as_deref());
    capacity::free_pod_ip(cidr, used)
}

/// What the ReplicaSet controller does when one of its pods is deleted: a replacement from
/// the template, so deleting a Deployment's pod looks as it does on a cluster.
pub(crate) fn replace_deleted_pod(
    txn: &mut Txn<'_>,
    namespace: &str,
    owner_uid: &str,
) -> Result<(), StoreError> {
    let Some((rs_key, rs)) = txn
        .scan(Resource::ReplicaSets, &format!("{namespace}/"))
        .into_iter()
        .find(|(_, o)| &*o.uid == owner_uid)
    else {
        return Ok(());
    };
    let rs = rs.decode().map_err(|e| StoreError::Encode(e.to_string()))?;
    let desired = rs["spec"]["replicas"].as_u64().unwrap_or(0) as usize;
    // A Terminating pod is on its way out, and counts no more.
    let current = txn
        .scan(Resource::Pods, &format!("{rs_key}-"))
        .iter()
        .filter(|(_, o)| o.controller_uid.as_deref() == Some(owner_uid))
        .filter(|(_, o)| {
            o.decode()
                .is_ok_and(|p| !p["metadata"]["deletionTimestamp"].is_string())
        })
        .count();
    // Not on a cordoned node (one being drained).
    let nodes = txn.find(Resource::Nodes, |_, o| {
        o.decode().is_ok_and(|n| n["spec"]["unschedulable"] != true)
    });
    if current >= desired || nodes.is_empty() {
        return Ok(());
    }
    let mut rng = rand::rng();
    let node = &nodes[rng.random_range(0..nodes.len())];
    let rs_name = rs["metadata"]["name"].as_str().unwrap_or("pod");
    let name = format!("{rs_name}-{}", manifests::safe_suffix(&mut rng, 5));
    let uid = manifests::uid(&mut rng);
    let ip =
        node_pod_ip(txn, node).unwrap_or_else(|| pod_ip(rng.random_range(3_000_000..4_000_000)));
    let mut pod = PodFactory::new(&rs).pod(
        &mut rng,
        &name,
        &uid,
        node,
        &node_ip(node),
        &ip,
        manifests::now_seconds(),
        PodState::Running,
    );
    txn.put(Resource::Pods, &format!("{namespace}/{name}"), &mut pod)?;
    Ok(())
}
