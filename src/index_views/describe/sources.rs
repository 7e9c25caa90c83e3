//! What a describe is made from: the object, its Events and the lists kubectl also reads,
//! and the requests that GET them.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::Value;

use super::printer::format_selector;

/// A list to GET alongside the object: `path` with these selectors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListRequest {
    /// What the list is, for an error message ("events", "replicasets").
    pub what: &'static str,
    pub path: String,
    pub label_selector: Option<String>,
    pub field_selector: Option<String>,
}

impl ListRequest {
    /// The request's path and query, escaped.
    pub fn uri(&self) -> String {
        let mut query = form_urlencoded::Serializer::new(String::new());
        if let Some(s) = &self.label_selector {
            query.append_pair("labelSelector", s);
        }
        if let Some(s) = &self.field_selector {
            query.append_pair("fieldSelector", s);
        }
        let query = query.finish();
        match query.is_empty() {
            true => self.path.clone(),
            false => format!("{}?{query}", self.path),
        }
    }
}

/// What a describe is made from: the object, its Events and the related list (each `Err`
/// with why it could not be read, which the describe then says).
#[derive(Debug, Clone, Default)]
pub struct DescribeSources {
    pub object: Value,
    pub events: Option<Result<Vec<Value>, String>>,
    /// The answers to [`related`]'s requests, by their `what`.
    pub related: Vec<(&'static str, Result<Vec<Value>, String>)>,
}

/// The Events query kubectl makes for an object: in its namespace, by name, namespace, kind
/// and uid of the involved object.
pub fn events_request(object: &Value) -> Option<ListRequest> {
    let meta = object.get("metadata")?;
    let name = meta.get("name")?.as_str()?;
    let namespace = meta.get("namespace").and_then(Value::as_str).unwrap_or("");
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    let mut fields = vec![
        format!("involvedObject.name={name}"),
        format!("involvedObject.namespace={namespace}"),
    ];
    if !kind.is_empty() {
        fields.push(format!("involvedObject.kind={kind}"));
    }
    if let Some(uid) = meta.get("uid").and_then(Value::as_str) {
        fields.push(format!("involvedObject.uid={uid}"));
    }
    let path = match namespace {
        "" => "/api/v1/events".to_owned(),
        ns => format!("/api/v1/namespaces/{ns}/events"),
    };
    Some(ListRequest {
        what: "events",
        path,
        label_selector: None,
        field_selector: Some(fields.join(",")),
    })
}

/// The other lists kubectl reads to describe this kind.
pub fn related(object: &Value) -> Vec<ListRequest> {
    related_requests(object).unwrap_or_default()
}

fn related_requests(object: &Value) -> Option<Vec<ListRequest>> {
    let kind = object.get("kind")?.as_str()?;
    let meta = object.get("metadata")?;
    let name = meta.get("name")?.as_str()?;
    let namespace = meta.get("namespace").and_then(Value::as_str).unwrap_or("");
    let selector = || {
        let selector: LabelSelector =
            serde_json::from_value(object.pointer("/spec/selector")?.clone()).ok()?;
        format_selector(&selector)
    };
    let request = |what, path: String, label_selector, field_selector| ListRequest {
        what,
        path,
        label_selector,
        field_selector,
    };
    Some(match kind {
        "Deployment" => vec![request(
            "replicasets",
            format!("/apis/apps/v1/namespaces/{namespace}/replicasets"),
            selector(),
            None,
        )],
        "ReplicaSet" | "StatefulSet" => vec![request(
            "pods",
            format!("/api/v1/namespaces/{namespace}/pods"),
            selector(),
            None,
        )],
        "Node" => vec![
            request(
                "leases",
                "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases".to_owned(),
                None,
                Some(format!("metadata.name={name}")),
            ),
            request(
                "pods",
                "/api/v1/pods".to_owned(),
                None,
                Some(format!(
                    "spec.nodeName={name},status.phase!=Succeeded,status.phase!=Failed"
                )),
            ),
        ],
        "Service" => vec![request(
            "endpointslices",
            format!("/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices"),
            Some(format!("kubernetes.io/service-name={name}")),
            None,
        )],
        _ => Vec::new(),
    })
}
