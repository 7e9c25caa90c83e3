//! Server-side printing: `meta.k8s.io/v1` Tables with the real server's columns, for clients
//! (kubectl) that ask for them in Accept. Only kubectl-sized answers take this path; lists
//! for informers stay pre-encoded bytes.

use axum::http::{HeaderMap, header};
use serde_json::{Value, json};

use super::params::Params;
use super::printing::{age, since, template_columns, text};
use super::status::ApiError;
use crate::object::StoredObject;
use crate::resources::Resource;

/// Whether the client asks for metadata only (`as=PartialObjectMetadataList` or
/// `as=PartialObjectMetadata`, as kube's metadata API and client-go's metadata informers do).
pub(crate) fn wants_metadata(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .and_then(|accept| accept.split(',').next())
        .is_some_and(|first| first.contains("as=PartialObjectMetadata"))
}

/// What each Table row carries besides its cells (`includeObject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IncludeObject {
    None,
    Metadata,
    Object,
}

/// Whether the client prefers a Table (kubectl's `as=Table;g=meta.k8s.io` Accept), and
/// with what in each row.
pub(crate) fn wants_table(
    headers: &HeaderMap,
    params: &Params,
) -> Result<Option<IncludeObject>, ApiError> {
    let table = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .and_then(|accept| accept.split(',').next())
        .is_some_and(|first| first.contains("as=Table") && first.contains("g=meta.k8s.io"));
    if !table {
        return Ok(None);
    }
    match params.get("includeObject") {
        None | Some("Metadata") => Ok(Some(IncludeObject::Metadata)),
        Some("None") => Ok(Some(IncludeObject::None)),
        Some("Object") => Ok(Some(IncludeObject::Object)),
        Some(other) => Err(ApiError::invalid(
            "TableOptions.meta.k8s.io",
            "",
            "includeObject",
            "FieldValueNotSupported",
            &format!("\"{other}\": supported values: \"Metadata\", \"None\", \"Object\""),
        )),
    }
}

fn columns(resource: Resource) -> Vec<Value> {
    resource
        .descriptor()
        .columns
        .iter()
        .map(|c| {
            json!({
                "name": c.name,
                "type": c.type_,
                "format": c.format,
                "description": c.description,
                "priority": c.priority,
            })
        })
        .collect()
}

fn pod_cells(pod: &Value) -> Vec<Value> {
    let statuses = pod["status"]["containerStatuses"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let total = pod["spec"]["containers"].as_array().map_or(0, Vec::len);
    let ready = statuses
        .iter()
        .filter(|s| s["ready"].as_bool() == Some(true))
        .count();
    let restarts: u64 = statuses
        .iter()
        .filter_map(|s| s["restartCount"].as_u64())
        .sum();
    // kube-apiserver's pod printer adds when the last restart was: the latest finishedAt of
    // the containers' last terminated states (RFC 3339 strings compare as times).
    let last_restart = statuses
        .iter()
        .filter_map(|s| s["lastState"]["terminated"]["finishedAt"].as_str())
        .max();
    let restarts = match last_restart.and_then(|t| since(&json!(t))) {
        Some(ago) if restarts > 0 => format!("{restarts} ({ago} ago)"),
        _ => restarts.to_string(),
    };
    let mut reason = text(&pod["status"]["phase"]);
    for s in &statuses {
        if let Some(r) = s["state"]["waiting"]["reason"].as_str() {
            reason = r.to_string();
        } else if let Some(r) = s["state"]["terminated"]["reason"].as_str() {
            reason = r.to_string();
        }
    }
    if !pod["metadata"]["deletionTimestamp"].is_null() {
        reason = "Terminating".into();
    }
    let or_none = |v: &Value| {
        v.as_str()
            .filter(|s| !s.is_empty())
            .unwrap_or("<none>")
            .to_string()
    };
    vec![
        json!(text(&pod["metadata"]["name"])),
        json!(format!("{ready}/{total}")),
        json!(reason),
        json!(restarts),
        json!(age(pod)),
        json!(or_none(&pod["status"]["podIP"])),
        json!(or_none(&pod["spec"]["nodeName"])),
        json!("<none>"),
        json!("<none>"),
    ]
}

fn cells(resource: Resource, obj: &Value) -> Vec<Value> {
    let name = json!(text(&obj["metadata"]["name"]));
    let count = |v: &Value| v.as_u64().unwrap_or(0);
    match resource {
        Resource::Pods => pod_cells(obj),
        Resource::Deployments => {
            let [containers, images, selector] =
                template_columns(&obj["spec"]["template"], &obj["spec"]["selector"]);
            vec![
                name,
                json!(format!(
                    "{}/{}",
                    count(&obj["status"]["readyReplicas"]),
                    count(&obj["spec"]["replicas"])
                )),
                json!(count(&obj["status"]["updatedReplicas"])),
                json!(count(&obj["status"]["availableReplicas"])),
                json!(age(obj)),
                json!(containers),
                json!(images),
                json!(selector),
            ]
        }
        Resource::ReplicaSets => {
            let [containers, images, selector] =
                template_columns(&obj["spec"]["template"], &obj["spec"]["selector"]);
            vec![
                name,
                json!(count(&obj["spec"]["replicas"])),
                json!(count(&obj["status"]["replicas"])),
                json!(count(&obj["status"]["readyReplicas"])),
                json!(age(obj)),
                json!(containers),
                json!(images),
                json!(selector),
            ]
        }
        Resource::Nodes => {
            let ready = obj["status"]["conditions"]
                .as_array()
                .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
                .is_some_and(|c| c["status"] == "True");
            let mut status = if ready { "Ready" } else { "NotReady" }.to_string();
            if obj["spec"]["unschedulable"].as_bool() == Some(true) {
                status.push_str(",SchedulingDisabled");
            }
            let address = |t: &str| {
                obj["status"]["addresses"]
                    .as_array()
                    .and_then(|a| a.iter().find(|x| x["type"] == t))
                    .map_or("<none>".to_string(), |x| text(&x["address"]))
            };
            let info = &obj["status"]["nodeInfo"];
            vec![
                name,
                json!(status),
                json!("<none>"),
                json!(age(obj)),
                json!(text(&info["kubeletVersion"])),
                json!(address("InternalIP")),
                json!(address("ExternalIP")),
                json!(text(&info["osImage"])),
                json!(text(&info["kernelVersion"])),
                json!(text(&info["containerRuntimeVersion"])),
            ]
        }
        Resource::Namespaces => vec![name, json!(text(&obj["status"]["phase"])), json!(age(obj))],
        Resource::Secrets => vec![
            name,
            json!(text(&obj["type"])),
            json!(obj["data"].as_object().map_or(0, |d| d.len())),
            json!(age(obj)),
        ],
        _ => super::table_kinds::cells(resource, obj),
    }
}

fn row(resource: Resource, include: IncludeObject, object: &StoredObject) -> Value {
    let obj = object.decode().unwrap_or(Value::Null);
    let mut row = json!({"cells": cells(resource, &obj)});
    match include {
        IncludeObject::None => {}
        IncludeObject::Metadata => {
            row["object"] = json!({
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": obj["metadata"],
            });
        }
        IncludeObject::Object => row["object"] = obj,
    }
    row
}

/// A Table of `objects`, with list metadata.
pub(crate) fn table(
    resource: Resource,
    include: IncludeObject,
    objects: &[&StoredObject],
    rv: Option<u64>,
    continue_token: Option<&str>,
) -> Vec<u8> {
    let mut metadata = json!({});
    if let Some(rv) = rv {
        metadata["resourceVersion"] = json!(rv.to_string());
    }
    if let Some(token) = continue_token {
        metadata["continue"] = json!(token);
    }
    let rows: Vec<Value> = objects.iter().map(|o| row(resource, include, o)).collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "columnDefinitions": columns(resource),
        "rows": rows,
    })
    .to_string()
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_accept_header() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT,
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
                .parse()
                .unwrap(),
        );
        let params =
            |q: &str| Params::from_uri(&format!("/api/v1/pods?{q}").parse().unwrap()).unwrap();
        assert_eq!(
            wants_table(&headers, &params("")).unwrap(),
            Some(IncludeObject::Metadata)
        );
        assert_eq!(
            wants_table(&headers, &params("includeObject=None")).unwrap(),
            Some(IncludeObject::None)
        );
        assert!(wants_table(&headers, &params("includeObject=All")).is_err());
        headers.insert(header::ACCEPT, "application/json".parse().unwrap());
        assert_eq!(wants_table(&headers, &params("")).unwrap(), None);
    }
}
