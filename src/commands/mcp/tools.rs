//! The tools `kscope mcp` serves. Each answers JSON bounded in rows and bytes: past either
//! bound the answer says `truncated: true` and, where paging makes sense, gives the
//! `next_cursor` to ask for the rest. A tool's failure is a tool error (`isError`) whose text
//! is what `kscope get` or the TUI says for the same failure. No tool writes.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use futures::future::join_all;
use kscope_client::fetch::{fetch_list, fetch_object};
use kscope_client::fleet::Trouble;
use kscope_client::logs::{LogOptions, open_log};
use kscope_index_views::definitions::{IndexDefinition, IndexSource};
use kscope_index_views::hotloops::{EventKind, HotLoopDetector};
use kscope_index_views::query::{Query, Term};

use super::warm::{Selection, WarmKind};
use super::{Member, Shared, ToolError};
use crate::commands::hotloops::loop_lines;
use crate::commands::timeline::timeline_of;
use crate::commands::tree::{resolve_kind, tree_in, tree_kinds};
use kscope_index_views::ownership::Forest;

/// Rows per page unless a call asks for fewer (or more, up to [`MAX_LIMIT`]).
const DEFAULT_LIMIT: usize = 100;
const MAX_LIMIT: usize = 1000;
/// Bytes of an answer unless a call asks for fewer (or more, up to [`MAX_BYTES`]): an
/// assistant's context is the scarce thing.
const DEFAULT_BYTES: usize = 64 * 1024;
const MAX_BYTES: usize = 1024 * 1024;
/// A log line longer than this is cut, as the TUI cuts it.
const MAX_LOG_LINE: usize = 16 * 1024;

#[derive(Debug, Deserialize, JsonSchema, Serialize)]
pub struct ListParams {
    /// Only this cluster (a kubeconfig context kscope mcp serves); every cluster served when
    /// left out.
    pub cluster: Option<String>,
    /// The resource, named as for kubectl: pods (po), deploy, widgets.example.com...
    pub kind: String,
    /// Only this namespace (within the namespace scope kscope mcp was started with).
    pub namespace: Option<String>,
    /// kscope's query language, evaluated on the store's indexes: `app=web,node=n1`,
    /// `app in (a,b)`, `app!=web`, `!app`, and free text fuzzy-matched on namespace/name.
    pub filter: Option<String>,
    /// The columns to return, by their heading (NAME, STATUS...); all when empty.
    #[serde(default)]
    pub columns: Vec<String>,
    /// A column to sort by; `-` in front for descending. By namespace/name otherwise.
    pub sort: Option<String>,
    /// Rows per page (default 100, at most 1000).
    pub limit: Option<usize>,
    /// The `next_cursor` of the previous page.
    pub cursor: Option<String>,
    /// Bytes of rows per answer (default 65536, at most 1048576).
    pub max_bytes: Option<usize>,
    /// On a kind's first use, answer as soon as its store holds objects, as the TUI shows
    /// its first rows, instead of after the whole first list: the cluster's `state` then
    /// says `syncing` until it is in.
    #[serde(default)]
    pub first_rows: bool,
}

#[derive(Debug, Deserialize, JsonSchema, Serialize)]
pub struct ObjectParams {
    /// The cluster (a kubeconfig context kscope mcp serves); needed when it serves several.
    pub cluster: Option<String>,
    pub kind: String,
    pub name: String,
    /// The object's namespace (default: the scope's).
    pub namespace: Option<String>,
    /// Keep `metadata.managedFields` (`get` only; left out by default).
    #[serde(default)]
    pub managed_fields: bool,
    /// Bytes of text per answer (default 65536, at most 1048576).
    pub max_bytes: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema, Serialize)]
pub struct EventsParams {
    /// The cluster (a kubeconfig context kscope mcp serves); needed when it serves several.
    pub cluster: Option<String>,
    /// With `name`: the Events of that object; without: of the namespace.
    pub kind: Option<String>,
    pub name: Option<String>,
    pub namespace: Option<String>,
    /// How many of the latest Events (default 100, at most 1000).
    pub limit: Option<usize>,
    pub max_bytes: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema, Serialize)]
pub struct LogsParams {
    /// The cluster (a kubeconfig context kscope mcp serves); needed when it serves several.
    pub cluster: Option<String>,
    /// The pod.
    pub name: String,
    pub namespace: Option<String>,
    /// Needed when the pod has several containers.
    pub container: Option<String>,
    /// The last lines (default 100, at most 1000).
    pub tail: Option<u64>,
    /// Only lines written in the last this many seconds.
    pub since_seconds: Option<u64>,
    /// The previous instance of the container (after a restart).
    #[serde(default)]
    pub previous: bool,
    pub max_bytes: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema, Serialize)]
pub struct DeltasParams {
    /// The cluster (a kubeconfig context kscope mcp serves); needed when it serves several.
    pub cluster: Option<String>,
    pub kind: String,
    /// Only this object (`name`, with `namespace` for a namespaced kind).
    pub name: Option<String>,
    pub namespace: Option<String>,
    /// Only what came after this resourceVersion (the `last_resource_version` of the
    /// previous answer, to follow).
    pub since: Option<String>,
    /// At most this many entries, the oldest first (default 100, at most 1000).
    pub limit: Option<usize>,
    pub max_bytes: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema, Serialize)]
pub struct IndexesParams {
    /// The cluster (a kubeconfig context kscope mcp serves); needed when it serves several.
    pub cluster: Option<String>,
    pub kind: String,
    /// An index to add, as the TUI's `:index` takes it: `NAME label=KEY`,
    /// `NAME annotation=KEY` or `NAME field=JSONPATH`.
    pub add: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema, Serialize)]
pub struct KindsParams {
    /// Only this cluster (a kubeconfig context kscope mcp serves); every cluster served when
    /// left out.
    pub cluster: Option<String>,
    /// Only the kinds whose name, kind or short name contains this.
    pub contains: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema, Serialize)]
pub struct HotloopsParams {
    /// Only this cluster (a kubeconfig context kscope mcp serves); every cluster served when
    /// left out.
    pub cluster: Option<String>,
    /// The kinds to look at (each started warm if it is not); the warm kinds when empty.
    #[serde(default)]
    pub kinds: Vec<String>,
    pub max_bytes: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema, Serialize)]
pub struct TreeParams {
    /// The cluster (a kubeconfig context kscope mcp serves); needed when it serves several.
    pub cluster: Option<String>,
    /// The object's kind, named as for kubectl (deploy, rs, widgets.example.com).
    pub kind: String,
    pub name: String,
    /// The object's namespace (default: the scope's).
    pub namespace: Option<String>,
    /// The chain of owners up to the root, instead of the dependents.
    #[serde(default)]
    pub up: bool,
    /// The kinds whose objects can be in the tree, separated by commas (the object's own is
    /// always read); each is started warm if it is not. Default: the workload kinds and
    /// what they own, as `kscope tree`.
    pub kinds: Option<String>,
    pub max_bytes: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema, Serialize)]
pub struct TimelineParams {
    /// The cluster (a kubeconfig context kscope mcp serves); needed when it serves several.
    pub cluster: Option<String>,
    pub kind: String,
    pub name: String,
    pub namespace: Option<String>,
    /// Watch the object this many seconds for new versions before answering (default 0: as
    /// it is now, each field with its last writer; at most 60).
    pub for_seconds: Option<u64>,
    pub max_bytes: Option<usize>,
}

/// The longest a `timeline` call watches.
const MAX_TIMELINE_SECONDS: u64 = 60;

/// The MCP server: the shared state and its tools.
#[derive(Clone)]
pub struct Server {
    shared: Arc<Shared>,
    tool_router: ToolRouter<Self>,
}

impl Server {
    pub fn new(shared: Arc<Shared>) -> Self {
        Self {
            shared,
            tool_router: Self::tool_router(),
        }
    }
}

/// The answer of a call, logged with its arguments and size.
fn answer(
    tool: &str,
    arguments: &impl Serialize,
    result: Result<Value, ToolError>,
) -> CallToolResult {
    let arguments = serde_json::to_string(arguments).unwrap_or_default();
    match result {
        Ok(value) => {
            let text = value.to_string();
            tracing::info!(tool, %arguments, bytes = text.len(), "mcp: call");
            let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
            result.structured_content = Some(value);
            result
        }
        Err(err) => {
            let text = err.to_string();
            tracing::info!(tool, %arguments, error = %text, "mcp: call failed");
            CallToolResult::error(vec![ContentBlock::text(text)])
        }
    }
}

fn bytes(asked: Option<usize>) -> usize {
    asked.unwrap_or(DEFAULT_BYTES).clamp(1, MAX_BYTES)
}

fn limit(asked: Option<usize>) -> usize {
    asked.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT)
}

/// `text` cut to at most `max` bytes at a character boundary; whether it was cut.
fn capped(mut text: String, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    (text, true)
}

/// Of `items`, those that fit in `max` bytes of JSON, in order; whether any was left out.
fn fitting(items: impl IntoIterator<Item = Value>, max: usize) -> (Vec<Value>, bool) {
    let mut used = 0;
    let mut kept = Vec::new();
    for item in items {
        let size = item.to_string().len() + 1;
        if used + size > max {
            return (kept, true);
        }
        used += size;
        kept.push(item);
    }
    (kept, false)
}

/// A resourceVersion as a number, to compare: the API server's are etcd revisions.
fn revision(rv: &str) -> Option<u64> {
    rv.parse().ok()
}

/// The hot loops in what `m`'s warm informers' taps still hold, their watch events replayed
/// in the order they came, with rates read over the window ending now; and how many
/// seconds those taps cover (a loop takes [`kscope_index_views::hotloops::WINDOW_SECONDS`] to be told from a burst).
fn hot_report(m: &Member) -> (kscope_index_views::hotloops::HotReport, u64) {
    let mut detector = HotLoopDetector::new();
    let mut seen: Vec<(String, Arc<kscope_informers::instrument::tap::TapEntry>)> = m
        .warm
        .all()
        .iter()
        .flat_map(|(kind, w)| {
            let kind = kind.to_string();
            w.tap()
                .snapshot()
                .into_iter()
                .map(move |e| (kind.clone(), e))
        })
        .collect();
    seen.sort_by_key(|(_, e)| e.at);
    let start = seen.first().map(|(_, e)| e.at).unwrap_or(UNIX_EPOCH);
    let second = |at: SystemTime| at.duration_since(start).map_or(0, |d| d.as_secs());
    for (kind, entry) in &seen {
        let Some((event, object)) = EventKind::of_entry(entry) else {
            continue;
        };
        detector.observe(kind, event, &object, second(entry.at));
    }
    let now = match seen.is_empty() {
        true => 0,
        false => second(SystemTime::now()),
    };
    (detector.report(now), now)
}

/// Appends `item` to the JSON array `list`.
fn push(list: &mut Value, item: Value) {
    if let Some(list) = list.as_array_mut() {
        list.push(item);
    }
}

/// Whether a cluster's store of a kind is current, and if not why, so that a stale answer
/// is never taken for the cluster as it is.
fn freshness(cluster: &str, warm: &dyn WarmKind) -> Value {
    match warm.not_current() {
        None => json!({"cluster": cluster, "current": true, "state": "current"}),
        Some((state, why)) => json!({
            "cluster": cluster,
            "current": false,
            "state": state,
            "reason": format!("not current: {why}"),
        }),
    }
}

/// A cluster that gave nothing for a call: the word `kscope get` names it by on stderr
/// (unreachable, forbidden, kind not served, not synced) and the whole error.
fn trouble_status(cluster: &str, err: &ToolError) -> Value {
    let state = match err {
        ToolError::Command(err) => crate::commands::fleet::trouble(err),
        ToolError::Unreachable { .. } => Trouble::Unreachable.word(),
        _ => "failed",
    };
    json!({"cluster": cluster, "current": false, "state": state, "reason": err.to_string()})
}

fn seconds_since_epoch(at: SystemTime) -> f64 {
    at.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or_default()
}

#[tool_router]
impl Server {
    #[tool(
        description = "The kinds the cluster serves: name, kind, group, whether namespaced, whether kscope holds a warm informer on it and how many objects that holds."
    )]
    async fn list_kinds(&self, Parameters(p): Parameters<KindsParams>) -> CallToolResult {
        let result = self.list_kinds_json(&p).await;
        answer("list_kinds", &p, result)
    }

    #[tool(
        description = "Objects of a kind from kscope's indexed informer store (never the API server after the first call): a table with the columns kubectl prints, filtered by index terms (app=web,node=n1) and fuzzy text, sorted, paged with a cursor, capped in bytes."
    )]
    async fn list(&self, Parameters(p): Parameters<ListParams>) -> CallToolResult {
        let result = self.list_json(&p).await;
        answer("list", &p, result)
    }

    #[tool(
        description = "One object as YAML, read from the API server. managedFields left out unless asked for; a Secret's values are always masked (kscope never holds them)."
    )]
    async fn get(&self, Parameters(p): Parameters<ObjectParams>) -> CallToolResult {
        let result = self.get_json(&p).await;
        answer("get", &p, result)
    }

    #[tool(
        description = "The describe text kscope's TUI shows for an object (kubectl describe's sections, ending with its Events)."
    )]
    async fn describe(&self, Parameters(p): Parameters<ObjectParams>) -> CallToolResult {
        let result = self.describe_json(&p).await;
        answer("describe", &p, result)
    }

    #[tool(description = "Events of an object (kind and name) or of a namespace, the latest last.")]
    async fn events(&self, Parameters(p): Parameters<EventsParams>) -> CallToolResult {
        let result = self.events_json(&p).await;
        answer("events", &p, result)
    }

    #[tool(description = "The last lines of a pod's container log (tail, since), bounded.")]
    async fn logs(&self, Parameters(p): Parameters<LogsParams>) -> CallToolResult {
        let result = self.logs_json(&p).await;
        answer("logs", &p, result)
    }

    #[tool(
        description = "What the informer of a kind saw, from its tap: watch events and the deltas applied to the store, with the fields each change touched (null when the tap holds no earlier version), for the kind or one object, after a resourceVersion (pass the last answer's last_resource_version to follow)."
    )]
    async fn deltas(&self, Parameters(p): Parameters<DeltasParams>) -> CallToolResult {
        let result = self.deltas_json(&p).await;
        answer("deltas", &p, result)
    }

    #[tool(
        description = "The indexes of a kind's store with how many values each holds; `add` adds one (label=, annotation= or field=JSONPATH)."
    )]
    async fn indexes(&self, Parameters(p): Parameters<IndexesParams>) -> CallToolResult {
        let result = self.indexes_json(&p).await;
        answer("indexes", &p, result)
    }

    #[tool(
        description = "Controllers that trigger themselves: write rates per field manager and object, and the loops found, per cluster, from the watch events the warm informers' taps still hold (watched_seconds says how long they cover: a loop shows after 10 s). Name kinds to start watching them."
    )]
    async fn hotloops(&self, Parameters(p): Parameters<HotloopsParams>) -> CallToolResult {
        let result = self.hotloops_json(&p).await;
        answer("hotloops", &p, result)
    }

    #[tool(
        description = "An object's ownership tree, as `kscope tree`: its dependents down through ownerReferences (or with up, its owners up to the root), each with its health. Depth first; depth 0 is the root."
    )]
    async fn tree(&self, Parameters(p): Parameters<TreeParams>) -> CallToolResult {
        let result = self.tree_json(&p).await;
        answer("tree", &p, result)
    }

    #[tool(
        description = "An object's timeline, as `kscope timeline`: the object as read now with each field's last writer (from managedFields), each version seen while watching for_seconds with the fields changed and their manager, and its Events, ordered by resourceVersion."
    )]
    async fn timeline(&self, Parameters(p): Parameters<TimelineParams>) -> CallToolResult {
        let result = self.timeline_json(&p).await;
        answer("timeline", &p, result)
    }
}

impl Server {
    async fn list_kinds_json(&self, p: &KindsParams) -> Result<Value, ToolError> {
        let members = self.shared.members_named(p.cluster.as_deref())?;
        let needle = p
            .contains
            .as_deref()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let discovered = join_all(members.iter().map(|m| m.discovery())).await;
        // A kind served by several clusters is one entry naming each of them.
        let mut kinds: Vec<(String, Value)> = Vec::new();
        let mut clusters = Vec::new();
        let mut first_error = None;
        for (member, discovery) in members.iter().zip(discovered) {
            let discovery = match discovery {
                Ok(discovery) => discovery,
                Err(err) => {
                    clusters.push(trouble_status(&member.context, &err));
                    first_error.get_or_insert(err);
                    continue;
                }
            };
            clusters.push(json!({"cluster": member.context, "current": true, "state": "current"}));
            let warm = member.warm.all();
            for r in discovery.preferred().into_iter().filter(|r| r.listable()) {
                let matches = needle.is_empty()
                    || r.plural.contains(&needle)
                    || r.kind.to_ascii_lowercase().contains(&needle)
                    || r.short_names.iter().any(|s| s.contains(&needle));
                if !matches {
                    continue;
                }
                let kind = kscope_resources::Kind::of(r.clone());
                let name = kind.to_string();
                let held = warm.iter().find(|(k, _)| *k == kind).map(|(_, w)| w.len());
                let at = match kinds.iter().position(|(n, _)| *n == name) {
                    Some(at) => at,
                    None => {
                        kinds.push((
                            name.clone(),
                            json!({
                                "name": name,
                                "kind": r.kind,
                                "group": r.group,
                                "namespaced": r.namespaced,
                                "short_names": r.short_names,
                                "clusters": [],
                                "warm": [],
                            }),
                        ));
                        kinds.len() - 1
                    }
                };
                let entry = &mut kinds[at].1;
                push(&mut entry["clusters"], json!(member.context));
                if let Some(objects) = held {
                    push(
                        &mut entry["warm"],
                        json!({"cluster": member.context, "objects": objects}),
                    );
                }
            }
        }
        if let (true, Some(err)) = (kinds.is_empty(), first_error) {
            return Err(err);
        }
        let kinds: Vec<Value> = kinds.into_iter().map(|(_, v)| v).collect();
        Ok(json!({ "kinds": kinds, "clusters": clusters }))
    }

    async fn list_json(&self, p: &ListParams) -> Result<Value, ToolError> {
        let query = match p.filter.as_deref() {
            Some(text) => Query::parse(text).map_err(|source| ToolError::Filter {
                text: text.to_string(),
                source,
            })?,
            None => Query::default(),
        };
        let (clusters, query) = query.split_clusters();
        let offset: usize = match p.cursor.as_deref() {
            None => 0,
            Some(c) => c.parse().map_err(|_| ToolError::Cursor(c.to_string()))?,
        };
        let members: Vec<&Member> = self
            .shared
            .members_named(p.cluster.as_deref())?
            .into_iter()
            .filter(|m| clusters.admits(&m.context))
            .collect();
        let wait = super::Wait {
            first_rows: p.first_rows,
            ..self.shared.synced()
        };
        let started = join_all(members.iter().map(|m| m.warm(&p.kind, wait))).await;
        let fleet = self.shared.is_fleet();
        let end = offset.saturating_add(limit(p.limit));
        // Cluster by cluster in the order served, each sorted: a row's place is its
        // cluster's first row's place (`base`) plus its place in its cluster.
        let (mut base, mut rows, mut columns, mut kind) = (0, Vec::new(), None, None);
        let mut states = Vec::new();
        let mut first_error = None;
        for (member, started) in members.iter().zip(started) {
            let (resolved, warm) = match started {
                Ok(started) => started,
                Err(err) => {
                    states.push(trouble_status(&member.context, &err));
                    first_error.get_or_insert(err);
                    continue;
                }
            };
            let mut query = query.clone();
            if let Some(ns) = p.namespace.as_deref().filter(|n| !n.is_empty()) {
                let ns = member.namespace(Some(ns))?.unwrap_or_default();
                query.terms.push(Term::Eq {
                    index: "namespace".into(),
                    value: ns,
                });
            }
            let page = warm.select(&Selection {
                query: &query,
                columns: &p.columns,
                sort: p.sort.as_deref(),
                page: offset.saturating_sub(base)..end.saturating_sub(base),
            })?;
            base += page.total;
            states.push(freshness(&member.context, warm.as_ref()));
            kind.get_or_insert_with(|| resolved.kind.to_string());
            columns.get_or_insert_with(|| {
                let mut columns = page.columns.clone();
                if fleet {
                    columns.insert(0, "CLUSTER".to_string());
                }
                columns
            });
            rows.extend(page.rows.into_iter().map(|(key, mut cells)| {
                if fleet {
                    cells.insert(0, member.context.clone());
                }
                json!({ "cluster": member.context, "key": key.as_ref(), "cells": cells })
            }));
        }
        if let (None, Some(err)) = (&kind, first_error) {
            return Err(err);
        }
        let total = base;
        let (page, over_bytes) = fitting(rows, bytes(p.max_bytes));
        let next = offset + page.len();
        let more = next < total;
        let current = states.iter().all(|s| s["current"] == true);
        Ok(json!({
            "kind": kind.unwrap_or_else(|| p.kind.clone()),
            "columns": columns.unwrap_or_default(),
            "rows": page,
            "total": total,
            "next_cursor": more.then(|| next.to_string()),
            "truncated": over_bytes || more,
            "current": current,
            "clusters": states,
        }))
    }

    /// The object `p` names, from the server, without managedFields unless asked for and
    /// with a Secret's values masked.
    async fn object(
        &self,
        m: &Member,
        p: &ObjectParams,
    ) -> Result<(kscope_resources::Kind, Value), ToolError> {
        let resolved = m.resolve(&p.kind).await?;
        let namespace = m.namespace(p.namespace.as_deref())?;
        let kind = resolved.kind;
        let object = fetch_object(
            &m.cluster()?.client,
            kind.clone(),
            namespace.as_deref().filter(|_| kind.namespaced()),
            &p.name,
        )
        .await?;
        Ok((kind, object))
    }

    async fn get_json(&self, p: &ObjectParams) -> Result<Value, ToolError> {
        let m = self.shared.member(p.cluster.as_deref())?;
        let (_, object) = self.object(m, p).await?;
        let doc = kscope_index_views::detail::yaml(&object, p.managed_fields)?;
        let (yaml, truncated) = capped(doc.lines.join("\n") + "\n", bytes(p.max_bytes));
        Ok(json!({
            "cluster": m.context,
            "yaml": yaml,
            "masked_secret_values": doc.masked,
            "hidden_managed_fields": doc.hidden_managed_fields,
            "truncated": truncated,
        }))
    }

    async fn describe_json(&self, p: &ObjectParams) -> Result<Value, ToolError> {
        let m = self.shared.member(p.cluster.as_deref())?;
        let resolved = m.resolve(&p.kind).await?;
        let namespace = m.namespace(p.namespace.as_deref())?;
        let kind = resolved.kind;
        let namespace = namespace.as_deref().filter(|_| kind.namespaced());
        let path = kind
            .object_path(namespace, &p.name)
            .map_err(kscope_client::fetch::FetchError::from)?;
        let label = match namespace {
            Some(ns) => format!("{} {ns}/{}", kind.kind(), p.name),
            None => format!("{} {}", kind.kind(), p.name),
        };
        let (_, lines) =
            kscope_index_views::describe::fetch_described(&m.cluster()?.client, path, label)
                .await?;
        let (text, truncated) = capped(lines.join("\n") + "\n", bytes(p.max_bytes));
        Ok(json!({ "cluster": m.context, "text": text, "truncated": truncated }))
    }

    async fn events_json(&self, p: &EventsParams) -> Result<Value, ToolError> {
        let m = self.shared.member(p.cluster.as_deref())?;
        let client = &m.cluster()?.client;
        let (uri, what) = match (&p.kind, &p.name) {
            (Some(kind), Some(name)) => {
                let object = ObjectParams {
                    kind: kind.clone(),
                    name: name.clone(),
                    namespace: p.namespace.clone(),
                    cluster: None,
                    managed_fields: false,
                    max_bytes: None,
                };
                let (_, object) = self.object(m, &object).await?;
                let request = kscope_index_views::describe::events_request(&object)
                    .ok_or_else(|| ToolError::Usage(format!("{kind} {name} has no metadata")))?;
                (request.uri(), format!("events of {kind} {name}"))
            }
            (None, None) => match m.namespace(p.namespace.as_deref())? {
                Some(ns) => (
                    format!("/api/v1/namespaces/{ns}/events"),
                    format!("events in namespace {ns}"),
                ),
                None => ("/api/v1/events".to_string(), "events".to_string()),
            },
            _ => {
                return Err(ToolError::Usage(
                    "name both kind and name for an object's events, or neither for a namespace's"
                        .into(),
                ));
            }
        };
        let mut events = fetch_list(client, uri, what).await?;
        let at = |e: &Value| -> String {
            ["lastTimestamp", "eventTime", "firstTimestamp"]
                .iter()
                .find_map(|f| e.get(*f).and_then(Value::as_str).map(str::to_string))
                .or_else(|| {
                    e.pointer("/metadata/creationTimestamp")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                })
                .unwrap_or_default()
        };
        events.sort_by_key(|e| at(e));
        let count = events.len();
        let latest = events.split_off(count.saturating_sub(limit(p.limit)));
        let field = |e: &Value, f: &str| e.pointer(f).cloned().unwrap_or(Value::Null);
        let rows = latest.iter().map(|e| {
            json!({
                "last_seen": at(e),
                "type": field(e, "/type"),
                "reason": field(e, "/reason"),
                "object": format!(
                    "{}/{}",
                    field(e, "/involvedObject/kind").as_str().unwrap_or_default(),
                    field(e, "/involvedObject/name").as_str().unwrap_or_default()
                ),
                "namespace": field(e, "/involvedObject/namespace"),
                "count": field(e, "/count"),
                "message": field(e, "/message"),
            })
        });
        // The latest are what a reader wants: the byte cap drops the oldest.
        let mut rows: Vec<Value> = rows.collect();
        rows.reverse();
        let (mut rows, over) = fitting(rows, bytes(p.max_bytes));
        rows.reverse();
        Ok(json!({
            "cluster": m.context,
            "events": rows,
            "total": count,
            "truncated": over || count > rows.len(),
        }))
    }

    async fn logs_json(&self, p: &LogsParams) -> Result<Value, ToolError> {
        let m = self.shared.member(p.cluster.as_deref())?;
        let namespace = m
            .namespace(p.namespace.as_deref())?
            .ok_or_else(|| ToolError::Usage("logs need a namespace under -A".into()))?;
        let tail = p
            .tail
            .unwrap_or(DEFAULT_LIMIT as u64)
            .clamp(1, MAX_LIMIT as u64);
        let max = bytes(p.max_bytes);
        let options = LogOptions {
            container: p.container.clone(),
            previous: p.previous,
            tail_lines: Some(tail),
            since_seconds: p.since_seconds,
            limit_bytes: Some(max as u64),
            ..LogOptions::default()
        };
        let client = &m.cluster()?.client;
        let mut log = open_log(client, &namespace, &p.name, &options, MAX_LOG_LINE).await?;
        let mut lines: Vec<String> = Vec::new();
        while let Some(batch) = log.next_batch().await {
            lines.extend(batch?.into_iter().map(|l| l.text));
        }
        let (lines, over) = fitting(lines.into_iter().rev().map(Value::String), max);
        let lines: Vec<Value> = lines.into_iter().rev().collect();
        Ok(json!({ "cluster": m.context, "lines": lines, "truncated": over }))
    }

    async fn deltas_json(&self, p: &DeltasParams) -> Result<Value, ToolError> {
        let since = match p.since.as_deref() {
            None => None,
            Some(rv) => Some(revision(rv).ok_or_else(|| {
                ToolError::Usage(format!("since {rv:?}: a resourceVersion is a number"))
            })?),
        };
        let m = self.shared.member(p.cluster.as_deref())?;
        let (resolved, warm) = m.warm(&p.kind, self.shared.synced()).await?;
        let key = match &p.name {
            None => None,
            Some(name) => Some(match m.namespace(p.namespace.as_deref())? {
                Some(ns) if resolved.kind.namespaced() => format!("{ns}/{name}"),
                _ => name.clone(),
            }),
        };
        let entries = warm.tap().snapshot();
        let after = entries.iter().filter(|e| {
            let rv = e.resource_version.as_deref().and_then(revision);
            key.as_deref().is_none_or(|k| e.key.as_deref() == Some(k))
                && since.is_none_or(|s| rv.is_some_and(|rv| rv > s))
        });
        let max = limit(p.limit);
        let matching: Vec<_> = after.collect();
        let rows = matching.iter().take(max).map(|e| {
            json!({
                "seq": e.seq,
                "at": seconds_since_epoch(e.at),
                "type": e.kind.label(),
                "key": e.key.as_deref(),
                "resource_version": e.resource_version,
                "changed": e.changed_paths(),
                "message": e.message,
            })
        });
        let (rows, over) = fitting(rows, bytes(p.max_bytes));
        let last = matching[..rows.len()]
            .iter()
            .rev()
            .find_map(|e| e.resource_version.clone())
            .or_else(|| p.since.clone());
        let fresh = freshness(&m.context, warm.as_ref());
        Ok(json!({
            "cluster": m.context,
            "current": fresh["current"],
            "state": fresh,
            "kind": resolved.kind.to_string(),
            "entries": rows,
            "last_resource_version": last,
            "truncated": over || matching.len() > rows.len(),
        }))
    }

    async fn indexes_json(&self, p: &IndexesParams) -> Result<Value, ToolError> {
        let m = self.shared.member(p.cluster.as_deref())?;
        let timeout = self.shared.synced();
        let (resolved, mut warm) = m.warm(&p.kind, timeout).await?;
        let mut relisted = false;
        if let Some(add) = &p.add {
            let definition = IndexDefinition::parse_command(add)?;
            {
                let mut definitions = m.definitions.lock();
                if definitions.iter().any(|d| d.name == definition.name) {
                    return Err(ToolError::Command(
                        kscope_informers::indexer::IndexerError::IndexConflict(definition.name)
                            .into(),
                    ));
                }
                definitions.push(definition.clone());
            }
            // A JSONPath is read from the objects as they are decoded, which the store does
            // not keep: the informer starts anew (a relist), as the TUI's `:index` does.
            if matches!(definition.source, IndexSource::Path(_)) {
                m.warm.remove(&resolved.kind);
                warm = m.warm(&p.kind, timeout).await?.1;
                relisted = true;
            } else {
                warm.add_index(definition)?;
            }
        }
        Ok(json!({
            "cluster": m.context,
            "kind": resolved.kind.to_string(),
            "indexes": warm.indexes(),
            "relisted": relisted,
        }))
    }

    async fn hotloops_json(&self, p: &HotloopsParams) -> Result<Value, ToolError> {
        let members = self.shared.members_named(p.cluster.as_deref())?;
        let fleet = self.shared.is_fleet();
        let timeout = self.shared.synced();
        let (mut found, mut clusters) = (Vec::new(), Vec::new());
        for m in members {
            let mut trouble = None;
            for kind in &p.kinds {
                if let Err(err) = m.warm(kind, timeout).await {
                    if !fleet {
                        return Err(err);
                    }
                    trouble.get_or_insert(trouble_status(&m.context, &err));
                }
            }
            let (report, watched) = hot_report(m);
            let lines = loop_lines(&report);
            found.extend(lines.into_iter().map(|line| match fleet {
                true => format!("{}: {line}", m.context),
                false => line,
            }));
            let state = trouble.unwrap_or_else(|| {
                let warm = m.warm.all();
                let stale = warm.iter().find(|(_, w)| w.not_current().is_some());
                match stale {
                    Some((_, w)) => freshness(&m.context, w.as_ref()),
                    None => json!({"cluster": m.context, "current": true, "state": "current"}),
                }
            });
            clusters.push(json!({
                "cluster": m.context,
                "state": state,
                "watched_seconds": watched,
                "report": serde_json::to_value(&report).unwrap_or_default(),
            }));
        }
        let whole = json!({ "found": found, "clusters": clusters, "truncated": false });
        let (text, truncated) = capped(whole.to_string(), bytes(p.max_bytes));
        Ok(match truncated {
            false => whole,
            true => json!({ "found": found, "report_text": text, "truncated": true }),
        })
    }
}

impl Server {
    async fn tree_json(&self, p: &TreeParams) -> Result<Value, ToolError> {
        let m = self.shared.member(p.cluster.as_deref())?;
        let discovery = m.discovery().await?.clone();
        let target = resolve_kind(&discovery, &p.kind)?;
        let namespace = m.namespace(p.namespace.as_deref())?;
        let mut forest = Forest::new();
        for kind in tree_kinds(&discovery, &target, p.kinds.as_deref())? {
            let resolved = m.resolve_kind(kind, &discovery)?;
            let warm = m.warm_resolved(&resolved, self.shared.synced()).await?;
            forest.add(warm.ownership());
        }
        let tree = tree_in(&forest, &target, namespace.as_deref(), &p.name, p.up)?;
        let nodes = tree.lines().into_iter().map(|(prefix, node)| {
            let mut value = serde_json::to_value(node).unwrap_or_default();
            value["depth"] = json!(prefix.chars().count() / 2);
            value
        });
        let (nodes, truncated) = fitting(nodes, bytes(p.max_bytes));
        Ok(json!({
            "cluster": m.context,
            "objects": tree.len(),
            "nodes": nodes,
            "truncated": truncated,
        }))
    }

    async fn timeline_json(&self, p: &TimelineParams) -> Result<Value, ToolError> {
        let m = self.shared.member(p.cluster.as_deref())?;
        let resolved = m.resolve(&p.kind).await?;
        let events = m.resolve("events").await?;
        let namespace = m
            .namespace(p.namespace.as_deref())?
            .filter(|_| resolved.kind.namespaced());
        let informer = crate::commands::InformerArgs {
            resource: String::new(),
            cluster: m.cluster_args.clone(),
            selector: None,
            field_selector: None,
            config: None,
            fifo: None,
            initial_list: None,
        };
        let watch_for = p.for_seconds.unwrap_or(0).min(MAX_TIMELINE_SECONDS);
        let entries = timeline_of(
            &informer,
            &resolved,
            &events.kind,
            namespace.as_deref(),
            &p.name,
            std::time::Duration::from_secs(watch_for),
        )
        .await?;
        let total = entries.len();
        let entries = entries
            .iter()
            .map(|e| serde_json::to_value(e).unwrap_or_default());
        let (entries, truncated) = fitting(entries, bytes(p.max_bytes));
        Ok(json!({
            "cluster": m.context,
            "total": total,
            "entries": entries,
            "truncated": truncated,
        }))
    }
}

/// A kind's table as a resource: `kscope://table/KIND`, KIND named as `list` takes it.
const TABLE_URI: &str = "kscope://table/";
/// At most one change notification per subscribed table this often: a busy kind changes
/// many times a second, and a client wants to know that it changed, not how often.
const COALESCE: std::time::Duration = std::time::Duration::from_secs(1);
/// Subscriptions held at once; past it a subscribe is refused.
const MAX_SUBSCRIPTIONS: usize = 16;

impl Server {
    /// The table a resource URI names: its first page, as `list` answers it.
    async fn table(&self, uri: &str) -> Result<(String, Value), ToolError> {
        let kind = uri
            .strip_prefix(TABLE_URI)
            .filter(|k| !k.is_empty())
            .ok_or_else(|| ToolError::Usage(format!("{uri}: not a {TABLE_URI}KIND resource")))?;
        let params = ListParams {
            cluster: None,
            kind: kind.to_string(),
            namespace: None,
            filter: None,
            columns: Vec::new(),
            sort: None,
            limit: None,
            cursor: None,
            max_bytes: None,
            first_rows: false,
        };
        Ok((kind.to_string(), self.list_json(&params).await?))
    }

    /// Notifies `peer` that `uri` changed after each burst of changes, at most once per
    /// [`COALESCE`], until unsubscribed (`stop` dropped), every informer stops, or the
    /// client goes away.
    async fn follow(
        uri: String,
        mut changes: tokio::sync::mpsc::Receiver<()>,
        mut stop: tokio::sync::oneshot::Receiver<()>,
        peer: rmcp::Peer<rmcp::RoleServer>,
    ) {
        loop {
            tokio::select! {
                _ = &mut stop => return,
                change = changes.recv() => if change.is_none() { return },
            }
            tokio::select! {
                _ = &mut stop => return,
                () = tokio::time::sleep(COALESCE) => {}
            }
            // What came during the pause is in this one notification.
            while changes.try_recv().is_ok() {}
            let param = rmcp::model::ResourceUpdatedNotificationParam::new(uri.clone());
            if peer.notify_resource_updated(param).await.is_err() {
                return;
            }
            tracing::debug!(%uri, "mcp: notified a change");
        }
    }
}

/// One signal stream from the taps of a kind on several clusters: at most one change
/// waits (the rest are the same news), and it ends when every tap has closed or the reader
/// went away.
fn changes(
    taps: Vec<tokio::sync::broadcast::Receiver<Arc<kscope_informers::instrument::tap::TapEntry>>>,
) -> tokio::sync::mpsc::Receiver<()> {
    use tokio::sync::broadcast::error::RecvError;
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    for mut tap in taps {
        let tx = tx.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = tx.closed() => return,
                    entry = tap.recv() => match entry {
                        Ok(_) | Err(RecvError::Lagged(_)) => {}
                        Err(RecvError::Closed) => return,
                    },
                }
                if let Err(tokio::sync::mpsc::error::TrySendError::Closed(())) = tx.try_send(()) {
                    return;
                }
            }
        });
    }
    rx
}

fn resource_error(err: &ToolError) -> ErrorData {
    ErrorData::invalid_params(err.to_string(), None)
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    async fn list_resources(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, ErrorData> {
        let mut kinds: Vec<kscope_resources::Kind> = Vec::new();
        for (_, kind) in self.shared.all_warm() {
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
        let resources = kinds
            .into_iter()
            .map(|kind| {
                rmcp::model::Resource::new(format!("{TABLE_URI}{kind}"), format!("{kind} table"))
                    .with_mime_type("application/json")
            })
            .collect();
        Ok(rmcp::model::ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, ErrorData> {
        let template = rmcp::model::ResourceTemplate::new(format!("{TABLE_URI}{{kind}}"), "table")
            .with_description(
                "A kind's table from kscope's store (the first page of `list`); subscribe to \
                 be told when it changes.",
            )
            .with_mime_type("application/json");
        Ok(rmcp::model::ListResourceTemplatesResult::with_all_items(
            vec![template],
        ))
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        let (_, table) = self
            .table(&request.uri)
            .await
            .map_err(|e| resource_error(&e))?;
        let text = table.to_string();
        tracing::info!(uri = %request.uri, bytes = text.len(), "mcp: read");
        let contents = rmcp::model::ResourceContents::text(text, request.uri)
            .with_mime_type("application/json");
        Ok(rmcp::model::ReadResourceResult::new(vec![contents]).into())
    }

    #[allow(
        deprecated,
        reason = "the protocol versions today's clients speak subscribe so"
    )]
    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let uri = request.uri;
        let (kind, _) = self.table(&uri).await.map_err(|e| resource_error(&e))?;
        // The table's kind on every cluster that serves it (`table` started each).
        let timeout = self.shared.synced();
        let started = join_all(self.shared.members.iter().map(|m| m.warm(&kind, timeout))).await;
        let mut taps = Vec::new();
        for started in started {
            match started {
                Ok((_, warm)) => taps.push(warm.tap().subscribe()),
                Err(err) if taps.is_empty() && !self.shared.is_fleet() => {
                    return Err(resource_error(&err));
                }
                Err(_) => {}
            }
        }
        let (stop, stopped) = tokio::sync::oneshot::channel();
        {
            let mut subscriptions = self.shared.subscriptions.lock();
            subscriptions.retain(|_, s: &mut tokio::sync::oneshot::Sender<()>| !s.is_closed());
            if subscriptions.len() >= MAX_SUBSCRIPTIONS && !subscriptions.contains_key(&uri) {
                return Err(ErrorData::invalid_params(
                    format!("at most {MAX_SUBSCRIPTIONS} tables are subscribed to at once"),
                    None,
                ));
            }
            subscriptions.insert(uri.clone(), stop);
        }
        tracing::info!(%uri, "mcp: subscribed");
        tokio::spawn(Self::follow(uri, changes(taps), stopped, context.peer));
        Ok(())
    }

    #[allow(
        deprecated,
        reason = "the protocol versions today's clients speak subscribe so"
    )]
    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.shared.subscriptions.lock().remove(&request.uri);
        tracing::info!(uri = %request.uri, "mcp: unsubscribed");
        Ok(())
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .build(),
        )
        .with_server_info(Implementation::new("kscope", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "kscope answers from live, indexed informer stores of one Kubernetes cluster: \
                 start with list_kinds, then list with an index filter. Read-only; Secret \
                 values are never shown.",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_cut_at_a_character_boundary_and_say_so() {
        let (text, cut) = capped("ééé".to_string(), 3);
        assert_eq!((text.as_str(), cut), ("é", true));
        let (text, cut) = capped("abc".to_string(), 3);
        assert_eq!((text.as_str(), cut), ("abc", false));
    }

    #[test]
    fn fitting_keeps_items_in_order_until_the_cap() {
        let items = (0..10).map(|i| json!(i));
        let (kept, over) = fitting(items, 6);
        assert_eq!(kept, vec![json!(0), json!(1), json!(2)]);
        assert!(over);
        let (kept, over) = fitting([json!("a")], 100);
        assert_eq!(kept.len(), 1);
        assert!(!over);
    }
}
