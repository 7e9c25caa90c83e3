//! `kubectl describe` for the object a person opened: the same sections, fields and layout
//! kubectl prints (ported from kubectl's describers, for the kinds people describe daily, and
//! its generic describer for every other kind), ending with the object's Events.
//!
//! Describing needs more than the object: its Events, and for some kinds the objects kubectl
//! also reads (a Deployment's ReplicaSets, a ReplicaSet's pods, a node's pods, a Service's
//! EndpointSlices). [`related`] says which lists to GET; the caller fetches them and calls
//! [`describe`] with what came back. A Secret's values are never printed: only their sizes.

mod apps;
mod generic;
mod node;
mod pod;
mod service;
mod writer;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, MicroTime, ObjectMeta, OwnerReference, Time,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use kscope_client::fetch::{FetchError, fetch_list, fetch_path};
use kscope_resources::Timestamp;

use writer::Out;

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

/// GETs the object at `path` (`label` names it in errors), then what its describe reads
/// (its Events and related lists, at once), and renders the describe: the TUI runs this off
/// its thread. A list that fails is said in the describe; only the object's own GET failing
/// fails the whole.
pub async fn fetch_described(
    client: &kube::Client,
    path: String,
    label: String,
) -> Result<(Value, Vec<String>), FetchError> {
    let object = fetch_path(client, path, label.clone()).await?;
    let list = |request: ListRequest| {
        let what = format!("{} of {label}", request.what);
        async move {
            let items = fetch_list(client, request.uri(), what)
                .await
                .map_err(|e| e.to_string());
            (request.what, items)
        }
    };
    let events = events_request(&object).map(list);
    let related = futures::future::join_all(related(&object).into_iter().map(list));
    let (events, related) = match events {
        Some(events) => {
            let (events, related) = futures::join!(events, related);
            (Some(events.1), related)
        }
        None => (None, related.await),
    };
    let sources = DescribeSources {
        object,
        events,
        related,
    };
    let lines = describe(&sources, Timestamp::now());
    Ok((sources.object, lines))
}

/// The describe text, a line each, as `kubectl describe` prints it at `now`.
pub fn describe(sources: &DescribeSources, now: Timestamp) -> Vec<String> {
    let mut out = Out::default();
    let kind = sources.object.get("kind").and_then(Value::as_str);
    let group = sources
        .object
        .get("apiVersion")
        .and_then(Value::as_str)
        .map(|v| v.rsplit_once('/').map_or("", |(group, _)| group));
    let ctx = Ctx { now, sources };
    let typed = match (group, kind) {
        (Some(""), Some("Pod")) => typed(&ctx, &mut out, pod::pod),
        (Some(""), Some("Node")) => typed(&ctx, &mut out, node::node),
        (Some(""), Some("Service")) => typed(&ctx, &mut out, service::service),
        (Some(""), Some("Secret")) => typed(&ctx, &mut out, generic::secret),
        (Some(""), Some("ConfigMap")) => typed(&ctx, &mut out, generic::config_map),
        (Some("apps"), Some("Deployment")) => typed(&ctx, &mut out, apps::deployment),
        (Some("apps"), Some("ReplicaSet")) => typed(&ctx, &mut out, apps::replica_set),
        (Some("apps"), Some("StatefulSet")) => typed(&ctx, &mut out, apps::stateful_set),
        (Some("batch"), Some("Job")) => typed(&ctx, &mut out, apps::job),
        _ => false,
    };
    if !typed {
        out = Out::default();
        generic::generic(&ctx, &mut out);
    }
    out.finish()
}

/// Runs a typed describer when the object decodes as its type; false sends it to the
/// generic describer (kubectl's own fallback for what it cannot read).
fn typed<T: DeserializeOwned>(ctx: &Ctx<'_>, out: &mut Out, f: fn(&Ctx<'_>, &mut Out, &T)) -> bool {
    match serde_json::from_value::<T>(ctx.sources.object.clone()) {
        Ok(object) => {
            f(ctx, out, &object);
            true
        }
        Err(_) => false,
    }
}

/// What every describer reads besides its object.
struct Ctx<'a> {
    now: Timestamp,
    sources: &'a DescribeSources,
}

impl Ctx<'_> {
    /// The related list `what` decoded as `T` (items that do not decode left out), or why
    /// it could not be read.
    fn related<T: DeserializeOwned>(&self, what: &str) -> Result<Vec<T>, String> {
        match self.sources.related.iter().find(|(w, _)| *w == what) {
            None => Err(format!("{what} not read")),
            Some((_, Err(err))) => Err(err.clone()),
            Some((_, Ok(items))) => Ok(items
                .iter()
                .filter_map(|item| serde_json::from_value(item.clone()).ok())
                .collect()),
        }
    }

    fn since(&self, t: Option<&Time>) -> String {
        match t {
            Some(t) => Timestamp::from_seconds(t.0.as_second()).human_since(self.now),
            None => "<unknown>".to_owned(),
        }
    }

    fn since_micro(&self, t: Option<&MicroTime>) -> String {
        match t {
            Some(t) => Timestamp::from_seconds(t.0.as_second()).human_since(self.now),
            None => "<unknown>".to_owned(),
        }
    }

    /// kubectl's Events section: oldest first, with "(xN over AGE)" for repeated ones.
    fn events(&self, out: &mut Out) {
        let events = match &self.sources.events {
            None => return,
            Some(Err(err)) => {
                out.w(0, &format!("Events:\t<error: {err}>\n"));
                return;
            }
            Some(Ok(events)) => events,
        };
        let mut events: Vec<Event> = events
            .iter()
            .filter_map(|e| serde_json::from_value(e.clone()).ok())
            .collect();
        if events.is_empty() {
            out.w(0, "Events:\t<none>\n");
            return;
        }
        out.flush();
        events.sort_by_key(|e| {
            e.last_timestamp
                .as_ref()
                .map(|t| t.0)
                .or_else(|| e.event_time.as_ref().map(|t| t.0))
        });
        out.w(0, "Events:\n  Type\tReason\tAge\tFrom\tMessage\n");
        out.w(1, "----\t------\t----\t----\t-------\n");
        for e in &events {
            let first = match &e.event_time {
                Some(t) => self.since_micro(Some(t)),
                None => self.since(e.first_timestamp.as_ref()),
            };
            let count = e.count.unwrap_or(0);
            let interval = match (&e.series, count) {
                (Some(series), _) => format!(
                    "{} (x{} over {first})",
                    self.since_micro(series.last_observed_time.as_ref()),
                    series.count.unwrap_or(0)
                ),
                (None, count) if count > 1 => format!(
                    "{} (x{count} over {first})",
                    self.since(e.last_timestamp.as_ref())
                ),
                _ => first,
            };
            let source = e
                .source
                .as_ref()
                .and_then(|s| s.component.clone())
                .filter(|c| !c.is_empty())
                .or_else(|| e.reporting_component.clone())
                .unwrap_or_default();
            out.w(
                1,
                &format!(
                    "{}\t{}\t{interval}\t{source}\t{}\n",
                    e.type_.as_deref().unwrap_or(""),
                    e.reason.as_deref().unwrap_or(""),
                    e.message.as_deref().unwrap_or("").trim()
                ),
            );
        }
    }
}

/// The annotation kubectl leaves out of describe: the last applied configuration.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// Annotations longer than this are folded onto their own lines, as kubectl does.
const MAX_ANNOTATION_LEN: usize = 140;

fn empty_map() -> &'static BTreeMap<String, String> {
    static EMPTY: BTreeMap<String, String> = BTreeMap::new();
    &EMPTY
}

/// `Labels:  a=b` with one label a line, aligned under the first.
fn labels(out: &mut Out, indent: &str, title: &str, labels: Option<&BTreeMap<String, String>>) {
    out.w(0, &format!("{indent}{title}:\t"));
    let labels = labels.unwrap_or(empty_map());
    if labels.is_empty() {
        out.w(0, "<none>\n");
        return;
    }
    for (i, (key, value)) in labels.iter().enumerate() {
        if i != 0 {
            out.w(0, &format!("{indent}\t"));
        }
        out.w(0, &format!("{key}={value}\n"));
    }
}

/// `Annotations:  key: value`, long or multi-line values folded and cut as kubectl does.
fn annotations(out: &mut Out, title: &str, annotations: Option<&BTreeMap<String, String>>) {
    out.w(0, &format!("{title}:\t"));
    let keys: Vec<(&String, &String)> = annotations
        .unwrap_or(empty_map())
        .iter()
        .filter(|(key, _)| *key != LAST_APPLIED)
        .collect();
    if keys.is_empty() {
        out.w(0, "<none>\n");
        return;
    }
    for (i, (key, value)) in keys.into_iter().enumerate() {
        if i != 0 {
            out.w(0, "\t");
        }
        let value = value.strip_suffix('\n').unwrap_or(value);
        if value.len() + key.len() + 2 > MAX_ANNOTATION_LEN || value.contains('\n') {
            out.w(0, &format!("{key}:\n"));
            for line in value.split('\n') {
                out.w(
                    0,
                    &format!("\t  {}\n", shorten(line, MAX_ANNOTATION_LEN - 2)),
                );
            }
        } else {
            out.w(0, &format!("{key}: {value}\n"));
        }
    }
}

/// The first `max` bytes of `s` (on a character boundary) and "...", as kubectl cuts.
fn shorten(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

/// `Name:` and `Namespace:`, as every describer starts.
fn name_and_namespace(out: &mut Out, meta: &ObjectMeta) {
    out.w(
        0,
        &format!("Name:\t{}\n", meta.name.as_deref().unwrap_or("")),
    );
    out.w(
        0,
        &format!("Namespace:\t{}\n", meta.namespace.as_deref().unwrap_or("")),
    );
}

/// Name, namespace, labels and annotations: the head of most describers.
fn meta_head(out: &mut Out, meta: &ObjectMeta) {
    name_and_namespace(out, meta);
    labels(out, "", "Labels", meta.labels.as_ref());
    annotations(out, "Annotations", meta.annotations.as_ref());
}

/// `Kind/name` of the managing controller, as kubectl's "Controlled By".
fn controller(meta: &ObjectMeta) -> Option<String> {
    meta.owner_references
        .as_deref()?
        .iter()
        .find(|o: &&OwnerReference| o.controller == Some(true))
        .map(|o| format!("{}/{}", o.kind, o.name))
}

/// Go's `time.RFC1123Z`, in UTC: `Mon, 02 Jan 2006 15:04:05 +0000`.
fn rfc1123z(t: Option<&Time>) -> String {
    match t {
        Some(t) => t.0.strftime("%a, %d %b %Y %H:%M:%S +0000").to_string(),
        // Go formats the zero time.
        None => "Mon, 01 Jan 0001 00:00:00 +0000".to_owned(),
    }
}

/// A label selector as kubectl prints one: `a=b,c in (d,e)`; `<none>` for none and
/// `<none>`... as `metav1.FormatLabelSelector`.
fn format_selector(selector: &LabelSelector) -> Option<String> {
    let mut parts: Vec<String> = selector
        .match_labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    for e in selector.match_expressions.iter().flatten() {
        let values = e.values.clone().unwrap_or_default();
        let part = match e.operator.as_str() {
            "In" => format!("{} in ({})", e.key, values.join(",")),
            "NotIn" => format!("{} notin ({})", e.key, values.join(",")),
            "Exists" => e.key.clone(),
            "DoesNotExist" => format!("!{}", e.key),
            _ => return None,
        };
        parts.push(part);
    }
    Some(parts.join(","))
}

/// kubectl's `Selector:` line for an object's label selector (`<none>` when empty).
fn selector_text(selector: Option<&LabelSelector>) -> String {
    match selector.and_then(format_selector) {
        Some(s) if !s.is_empty() => s,
        _ => "<none>".to_owned(),
    }
}

/// Go's `%v` of a bool.
fn go_bool(b: bool) -> &'static str {
    if b { "true" } else { "false" }
}

/// kubectl's `printBool`: `True` or `False`.
fn title_bool(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}

/// Go's `%v` of a `*bool`: `<nil>` when unset.
fn go_bool_ptr(b: Option<bool>) -> String {
    match b {
        None => "<nil>".to_owned(),
        Some(b) => go_bool(b).to_owned(),
    }
}

/// `s`, or `<none>` when empty.
fn or_none(s: &str) -> &str {
    if s.is_empty() { "<none>" } else { s }
}

#[cfg(test)]
mod tests;
