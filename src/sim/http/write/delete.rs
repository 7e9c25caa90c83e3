//! DELETE of one object and of a collection: preconditions, dry runs, graceful deletion of
//! pods (Terminating for their grace period, `gracePeriodSeconds` shortening it), of objects
//! with finalizers (and of namespaces, which go Terminating while the namespace controller
//! deletes their contents), cascades through owners, and the ReplicaSet controller's
//! replacement pod. DeleteOptions come as JSON or, from client-go's typed clients, protobuf.

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use bytes::{BufMut, BytesMut};
use serde::Deserialize;
use serde_json::Value;

use super::body::unsupported_dry_run;
use super::media_type::media_type;
use super::outcome::{follow_definitions, respond};
use crate::Shared;
use crate::controllers::Controllers;
use crate::gc;
use crate::http::list::Filter;
use crate::http::params::Params;
use crate::http::status::ApiError;
use crate::http::target::Target;
use crate::resources::Resource;
use crate::store::Txn;
use crate::workload::SYSTEM_NAMESPACES;

/// The DeleteOptions body (all optional), as the real server reads it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DeleteOptions {
    preconditions: Option<Preconditions>,
    propagation_policy: Option<String>,
    orphan_dependents: Option<bool>,
    dry_run: Option<Vec<String>>,
    grace_period_seconds: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Preconditions {
    uid: Option<String>,
    resource_version: Option<String>,
}

/// What a delete request asks for, from the query and the body together.
struct Deletion {
    preconditions: Preconditions,
    orphan: bool,
    /// Dependents go first, the object is kept (marked) until they are gone.
    foreground: bool,
    dry_run: bool,
    /// The grace period asked for (a pod's own when none is).
    grace_period: Option<i64>,
}

impl Deletion {
    fn parse(params: &Params, headers: &HeaderMap, body: &Bytes) -> Result<Self, ApiError> {
        let options: DeleteOptions = if body.is_empty() {
            DeleteOptions::default()
        } else if media_type(headers) == PROTOBUF {
            // client-go's typed clients (kubectl's drain among them) send it as protobuf.
            let value = super::proto::decode(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding DeleteOptions: {e}")))?;
            options_of(value)?
        } else {
            serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding DeleteOptions: {e}")))?
        };
        Self::of(params, options)
    }

    /// The options of a delete, the query's taking precedence over the body's.
    fn of(params: &Params, options: DeleteOptions) -> Result<Self, ApiError> {
        let policy = params
            .get("propagationPolicy")
            .or(options.propagation_policy.as_deref());
        let orphan = match policy {
            Some("Orphan") => true,
            Some("Background" | "Foreground") => false,
            Some(other) => {
                return Err(ApiError::invalid(
                    "DeleteOptions.meta.k8s.io",
                    "",
                    "propagationPolicy",
                    "FieldValueNotSupported",
                    &format!(
                        "\"{other}\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
                    ),
                ));
            }
            None => options.orphan_dependents.unwrap_or(false),
        };
        let dry_run = match params.get("dryRun") {
            Some("All") => true,
            Some(other) => return Err(unsupported_dry_run("DeleteOptions", other)),
            None => match options.dry_run.as_deref() {
                None | Some([]) => false,
                Some([all]) if all == "All" => true,
                Some(other) => return Err(unsupported_dry_run("DeleteOptions", &other.join(","))),
            },
        };
        let grace_period = match params.get("gracePeriodSeconds") {
            Some(text) => Some(text.parse::<i64>().map_err(|e| {
                ApiError::bad_request(format!("invalid gracePeriodSeconds {text:?}: {e}"))
            })?),
            None => options.grace_period_seconds,
        };
        Ok(Self {
            grace_period,
            preconditions: options.preconditions.unwrap_or_default(),
            orphan,
            foreground: policy == Some("Foreground"),
            dry_run,
        })
    }
}

/// The protobuf media type client-go's typed clients send bodies in.
const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// DeleteOptions from their JSON form.
fn options_of(value: Value) -> Result<DeleteOptions, ApiError> {
    serde_json::from_value(value)
        .map_err(|e| ApiError::bad_request(format!("error decoding DeleteOptions: {e}")))
}

pub(crate) fn delete(
    shared: &Shared,
    target: &Target,
    params: &Params,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Response, ApiError> {
    let deletion = Deletion::parse(params, headers, body)?;
    let name = target.name.as_deref().unwrap_or("");
    let resource = target.resource;
    if resource == Resource::Namespaces
        && SYSTEM_NAMESPACES.contains(&name)
        && name != "kube-node-lease"
    {
        return Err(ApiError::forbidden(
            resource,
            name,
            "this namespace may not be deleted",
        ));
    }
    let stored = shared
        .store
        .write(|txn| delete_one(txn, target, name, &deletion, &shared.controllers))?;
    if !deletion.dry_run && deletion.foreground && gc::owns_dependents(resource) {
        shared
            .controllers
            .delete_in_foreground(resource, &target.key(name));
    } else if !deletion.dry_run
        && matches!(
            resource,
            Resource::Deployments | Resource::Services | Resource::Nodes
        )
    {
        // Lets the controllers forget it (a Service's Endpoints go with it, a node's
        // daemon pods with the node).
        shared.controllers.client_wrote(resource, &target.key(name));
    }
    Ok(respond(StatusCode::OK, stored))
}

fn check_preconditions(
    resource: Resource,
    name: &str,
    want: &Preconditions,
    current: &Value,
) -> Result<(), ApiError> {
    let meta = &current["metadata"];
    let failed = |what: &str, wanted: &str, field: &str| {
        ApiError::conflict_because(
            resource,
            name,
            &format!(
                "Precondition failed: {what} in precondition: {wanted}, {what} in object meta: {}",
                meta[field].as_str().unwrap_or("")
            ),
        )
    };
    if let Some(uid) = &want.uid
        && meta["uid"].as_str() != Some(uid)
    {
        return Err(failed("UID", uid, "uid"));
    }
    if let Some(rv) = &want.resource_version
        && meta["resourceVersion"].as_str() != Some(rv)
    {
        return Err(failed("ResourceVersion", rv, "resourceVersion"));
    }
    Ok(())
}

/// Deletes (or, with finalizers, starts deleting) `name`; returns the object as the response
/// carries it.
fn delete_one(
    txn: &mut Txn<'_>,
    target: &Target,
    name: &str,
    deletion: &Deletion,
    controllers: &Controllers,
) -> Result<Bytes, ApiError> {
    let resource = target.resource;
    let key = target.key(name);
    let object = txn
        .get(resource, &key)
        .ok_or_else(|| ApiError::not_found(resource, name))?;
    let current = object
        .decode()
        .map_err(|e| ApiError::internal(&e.to_string()))?;
    check_preconditions(resource, name, &deletion.preconditions, &current)?;
    if resource == Resource::Pods {
        let owner = object.controller_uid.clone();
        return delete_pod(txn, target, name, &current, owner, deletion, controllers);
    }
    let graceful = resource == Resource::Namespaces || gc::has_finalizers(&current);
    if graceful {
        if current["metadata"]["deletionTimestamp"].is_string() {
            return Ok(object.json.clone());
        }
        let mut value = gc::deleting(current.clone(), resource);
        if deletion.dry_run {
            return Ok(Bytes::from(value.to_string()));
        }
        let marked = txn.put(resource, &key, &mut value)?;
        follow_definitions(txn, target, name)?;
        if resource == Resource::Namespaces {
            // The namespace controller empties it, then finalizes it, after this answer.
            controllers.namespace_changed(name);
        }
        return Ok(marked.json.clone());
    }
    if deletion.dry_run {
        return Ok(object.json.clone());
    }
    if deletion.foreground && gc::owns_dependents(resource) {
        // The garbage collector deletes the dependents, then the object (see
        // `controllers`): until then it is marked, its finalizer saying why.
        let mut value = gc::deleting(current, resource);
        value["metadata"]["finalizers"] = serde_json::json!([gc::FOREGROUND_DELETION]);
        let marked = txn.put(resource, &key, &mut value)?;
        return Ok(marked.json.clone());
    }
    // The pods it takes with it are stopped and leave their Services, as a pod deleted
    // itself would.
    let mut on_pod = |txn: &mut Txn<'_>, pod: &Value| controllers.pod_killed(txn, pod);
    let last = gc::delete_reaping(txn, resource, &key, deletion.orphan, &mut on_pod)?
        .ok_or_else(|| ApiError::not_found(resource, name))?;
    follow_definitions(txn, target, name)?;
    if let Some(namespace) = target.namespace.as_deref() {
        controllers.namespace_changed(namespace);
    }
    Ok(last.json.clone())
}

/// A pod's delete: gracefully (see [`gc::delete_pod`]), its kubelet stopping it, and its
/// controller making a replacement as soon as it is Terminating.
fn delete_pod(
    txn: &mut Txn<'_>,
    target: &Target,
    name: &str,
    current: &Value,
    owner: Option<std::sync::Arc<str>>,
    deletion: &Deletion,
    controllers: &Controllers,
) -> Result<Bytes, ApiError> {
    let key = target.key(name);
    if deletion.dry_run {
        let grace = gc::grace_period(current, deletion.grace_period);
        if grace == 0 || current["metadata"]["deletionTimestamp"].is_string() {
            return Ok(Bytes::from(current.to_string()));
        }
        let mut marked = current.clone();
        let deadline = crate::manifests::now_seconds() + grace;
        marked["metadata"]["deletionTimestamp"] =
            Value::from(crate::manifests::timestamp(deadline));
        marked["metadata"]["deletionGracePeriodSeconds"] = Value::from(grace);
        return Ok(Bytes::from(marked.to_string()));
    }
    let was_terminating = current["metadata"]["deletionTimestamp"].is_string();
    let mut on_pod = |txn: &mut Txn<'_>, pod: &Value| controllers.pod_killed(txn, pod);
    let outcome = gc::delete_pod(txn, &key, deletion.grace_period, &mut on_pod)?
        .ok_or_else(|| ApiError::not_found(Resource::Pods, name))?;
    follow_definitions(txn, target, name)?;
    if let Some(namespace) = target.namespace.as_deref()
        && !was_terminating
    {
        let taken_over = owner.is_some() && controllers.pod_deleted(txn, current);
        if let Some(owner) = owner.filter(|_| !taken_over) {
            gc::replace_deleted_pod(txn, namespace, &owner)?;
        }
        controllers.namespace_changed(namespace);
    }
    Ok(match outcome {
        gc::PodDeletion::Gone(last) | gc::PodDeletion::Terminating { object: last, .. } => {
            last.json.clone()
        }
    })
}

/// An eviction's delete of pod `name` (in `txn`, where its budget was spent), with the
/// eviction's `deleteOptions`; whether it only ran dry.
pub(super) fn delete_evicted(
    txn: &mut Txn<'_>,
    target: &Target,
    name: &str,
    options: &Value,
    params: &Params,
    controllers: &Controllers,
) -> Result<bool, ApiError> {
    let options = if options.is_null() {
        DeleteOptions::default()
    } else {
        options_of(options.clone())?
    };
    let deletion = Deletion::of(params, options)?;
    delete_one(txn, target, name, &deletion, controllers)?;
    Ok(deletion.dry_run)
}

/// DELETE on a collection: every object the selectors match, each as a single delete would
/// go; the answer lists them as they were left.
pub(crate) fn delete_collection(
    shared: &Shared,
    target: &Target,
    params: &Params,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Response, ApiError> {
    // As on a real server, a namespaced kind's collection is deleted one namespace at a time.
    if target.resource.namespaced() && target.namespace.is_none() {
        return Err(ApiError::method_not_allowed("DELETE"));
    }
    let deletion = Deletion::parse(params, headers, body)?;
    let filter = Filter::parse(target, params)?;
    let resource = target.resource;
    let prefix = target.prefix();
    let (rv, items) = shared.store.write(|txn| {
        let keys = txn.find(resource, |k, o| {
            k.starts_with(&prefix) && filter.matches(k, o)
        });
        let mut items = Vec::with_capacity(keys.len());
        for key in keys {
            let name = key.rsplit_once('/').map_or(&*key, |(_, n)| n);
            if resource == Resource::Namespaces && SYSTEM_NAMESPACES.contains(&name) {
                continue;
            }
            let one = Target {
                name: Some(name.to_string()),
                namespace: key.split_once('/').map(|(ns, _)| ns.to_string()),
                ..target.clone()
            };
            match delete_one(txn, &one, name, &deletion, &shared.controllers) {
                Ok(item) => items.push(item),
                Err(e) if e.code() == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok::<_, ApiError>((txn.next_resource_version() - 1, items))
    })?;
    let mut body = BytesMut::new();
    body.put_slice(
        format!(
            "{{\"kind\":\"{}\",\"apiVersion\":\"{}\",\"metadata\":{{\"resourceVersion\":\"{rv}\"}},\"items\":[",
            resource.list_kind(),
            resource.api_version()
        )
        .as_bytes(),
    );
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            body.put_u8(b',');
        }
        body.put_slice(item);
    }
    body.put_slice(b"]}");
    Ok(respond(StatusCode::OK, body.freeze()))
}
