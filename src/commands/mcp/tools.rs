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

use kscope_client::fetch::{fetch_list, fetch_object};
use kscope_client::logs::{LogOptions, open_log};
use kscope_index_views::definitions::{IndexDefinition, IndexSource};
use kscope_index_views::hotloops::{EventKind, HotLoopDetector};
use kscope_index_views::query::{Query, Term};
use kscope_informers::instrument::tap::TapKind;
use kscope_informers::lister_watcher::WatchEventType;

use super::warm::Selection;
use super::{Shared, ToolError};
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
}

#[derive(Debug, Deserialize, JsonSchema, Serialize)]
pub struct ObjectParams {
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
    pub kind: String,
    /// An index to add, as the TUI's `:index` takes it: `NAME label=KEY`,
    /// `NAME annotation=KEY` or `NAME field=JSONPATH`.
    pub add: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema, Serialize)]
pub struct KindsParams {
    /// Only the kinds whose name, kind or short name contains this.
    pub contains: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema, Serialize)]
pub struct HotloopsParams {
    /// The kinds to look at (each started warm if it is not); the warm kinds when empty.
    #[serde(default)]
    pub kinds: Vec<String>,
    pub max_bytes: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema, Serialize)]
pub struct TreeParams {
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
        description = "Controllers that trigger themselves: write rates per field manager and object, and the loops found, from the watch events the warm informers' taps still hold."
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
        let discovery = self.shared.discovery().await?;
        let warm = self.shared.warm.all();
        let needle = p
            .contains
            .as_deref()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let kinds: Vec<Value> = discovery
            .preferred()
            .into_iter()
            .filter(|r| r.listable())
            .filter(|r| {
                needle.is_empty()
                    || r.plural.contains(&needle)
                    || r.kind.to_ascii_lowercase().contains(&needle)
                    || r.short_names.iter().any(|s| s.contains(&needle))
            })
            .map(|r| {
                let kind = kscope_resources::Kind::of(r.clone());
                let held = warm.iter().find(|(k, _)| *k == kind).map(|(_, w)| w.len());
                json!({
                    "name": kind.to_string(),
                    "kind": r.kind,
                    "group": r.group,
                    "namespaced": r.namespaced,
                    "short_names": r.short_names,
                    "warm": held.is_some(),
                    "objects": held,
                })
            })
            .collect();
        Ok(json!({ "kinds": kinds }))
    }

    async fn list_json(&self, p: &ListParams) -> Result<Value, ToolError> {
        let mut query = match p.filter.as_deref() {
            Some(text) => Query::parse(text).map_err(|source| ToolError::Filter {
                text: text.to_string(),
                source,
            })?,
            None => Query::default(),
        };
        if let Some(ns) = p.namespace.as_deref().filter(|n| !n.is_empty()) {
            let ns = self.shared.namespace(Some(ns))?.unwrap_or_default();
            query.terms.push(Term::Eq {
                index: "namespace".into(),
                value: ns,
            });
        }
        let offset = match p.cursor.as_deref() {
            None => 0,
            Some(c) => c.parse().map_err(|_| ToolError::Cursor(c.to_string()))?,
        };
        let (resolved, warm) = self.shared.warm(&p.kind).await?;
        let rows = warm.select(&Selection {
            query: &query,
            columns: &p.columns,
            sort: p.sort.as_deref(),
            page: offset..offset.saturating_add(limit(p.limit)),
        })?;
        let total = rows.total;
        let page = rows
            .rows
            .into_iter()
            .map(|(key, cells)| json!({ "key": key.as_ref(), "cells": cells }));
        let (page, over_bytes) = fitting(page, bytes(p.max_bytes));
        let next = offset + page.len();
        let more = next < total;
        Ok(json!({
            "kind": resolved.kind.to_string(),
            "columns": rows.columns,
            "rows": page,
            "total": total,
            "next_cursor": more.then(|| next.to_string()),
            "truncated": over_bytes || more,
        }))
    }

    /// The object `p` names, from the server, without managedFields unless asked for and
    /// with a Secret's values masked.
    async fn object(&self, p: &ObjectParams) -> Result<(kscope_resources::Kind, Value), ToolError> {
        let resolved = self.shared.resolve(&p.kind).await?;
        let namespace = self.shared.namespace(p.namespace.as_deref())?;
        let kind = resolved.kind;
        let object = fetch_object(
            &self.shared.cluster.client,
            kind.clone(),
            namespace.as_deref().filter(|_| kind.namespaced()),
            &p.name,
        )
        .await?;
        Ok((kind, object))
    }

    async fn get_json(&self, p: &ObjectParams) -> Result<Value, ToolError> {
        let (_, object) = self.object(p).await?;
        let doc = kscope_index_views::detail::yaml(&object, p.managed_fields)?;
        let (yaml, truncated) = capped(doc.lines.join("\n") + "\n", bytes(p.max_bytes));
        Ok(json!({
            "yaml": yaml,
            "masked_secret_values": doc.masked,
            "hidden_managed_fields": doc.hidden_managed_fields,
            "truncated": truncated,
        }))
    }

    async fn describe_json(&self, p: &ObjectParams) -> Result<Value, ToolError> {
        let resolved = self.shared.resolve(&p.kind).await?;
        let namespace = self.shared.namespace(p.namespace.as_deref())?;
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
            kscope_index_views::describe::fetch_described(&self.shared.cluster.client, path, label)
                .await?;
        let (text, truncated) = capped(lines.join("\n") + "\n", bytes(p.max_bytes));
        Ok(json!({ "text": text, "truncated": truncated }))
    }

    async fn events_json(&self, p: &EventsParams) -> Result<Value, ToolError> {
        let client = &self.shared.cluster.client;
        let (uri, what) = match (&p.kind, &p.name) {
            (Some(kind), Some(name)) => {
                let object = ObjectParams {
                    kind: kind.clone(),
                    name: name.clone(),
                    namespace: p.namespace.clone(),
                    managed_fields: false,
                    max_bytes: None,
                };
                let (_, object) = self.object(&object).await?;
                let request = kscope_index_views::describe::events_request(&object)
                    .ok_or_else(|| ToolError::Usage(format!("{kind} {name} has no metadata")))?;
                (request.uri(), format!("events of {kind} {name}"))
            }
            (None, None) => match self.shared.namespace(p.namespace.as_deref())? {
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
            "events": rows,
            "total": count,
            "truncated": over || count > rows.len(),
        }))
    }

    async fn logs_json(&self, p: &LogsParams) -> Result<Value, ToolError> {
        let namespace = self
            .shared
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
        let client = &self.shared.cluster.client;
        let mut log = open_log(client, &namespace, &p.name, &options, MAX_LOG_LINE).await?;
        let mut lines: Vec<String> = Vec::new();
        while let Some(batch) = log.next_batch().await {
            lines.extend(batch?.into_iter().map(|l| l.text));
        }
        let (lines, over) = fitting(lines.into_iter().rev().map(Value::String), max);
        let lines: Vec<Value> = lines.into_iter().rev().collect();
        Ok(json!({ "lines": lines, "truncated": over }))
    }

    async fn deltas_json(&self, p: &DeltasParams) -> Result<Value, ToolError> {
        let since = match p.since.as_deref() {
            None => None,
            Some(rv) => Some(revision(rv).ok_or_else(|| {
                ToolError::Usage(format!("since {rv:?}: a resourceVersion is a number"))
            })?),
        };
        let (resolved, warm) = self.shared.warm(&p.kind).await?;
        let key = match &p.name {
            None => None,
            Some(name) => Some(match self.shared.namespace(p.namespace.as_deref())? {
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
        Ok(json!({
            "kind": resolved.kind.to_string(),
            "entries": rows,
            "last_resource_version": last,
            "truncated": over || matching.len() > rows.len(),
        }))
    }

    async fn indexes_json(&self, p: &IndexesParams) -> Result<Value, ToolError> {
        let (resolved, mut warm) = self.shared.warm(&p.kind).await?;
        let mut relisted = false;
        if let Some(add) = &p.add {
            let definition = IndexDefinition::parse_command(add)?;
            {
                let mut definitions = self.shared.definitions.lock();
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
                self.shared.warm.remove(&resolved.kind);
                warm = self.shared.warm(&p.kind).await?.1;
                relisted = true;
            } else {
                warm.add_index(definition)?;
            }
        }
        Ok(json!({
            "kind": resolved.kind.to_string(),
            "indexes": warm.indexes(),
            "relisted": relisted,
        }))
    }

    async fn hotloops_json(&self, p: &HotloopsParams) -> Result<Value, ToolError> {
        for kind in &p.kinds {
            self.shared.warm(kind).await?;
        }
        let mut detector = HotLoopDetector::new();
        let warm = self.shared.warm.all();
        let mut seen: Vec<(String, Arc<kscope_informers::instrument::tap::TapEntry>)> = warm
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
        let mut last = 0;
        for (kind, entry) in &seen {
            let event = match entry.kind {
                TapKind::Watch(WatchEventType::Added) => EventKind::Added,
                TapKind::Watch(WatchEventType::Modified) => EventKind::Modified,
                TapKind::Watch(WatchEventType::Deleted) => EventKind::Deleted,
                _ => continue,
            };
            let Some(object) = entry
                .raw
                .as_ref()
                .and_then(|raw| serde_json::from_slice::<Value>(raw).ok())
            else {
                continue;
            };
            last = entry.at.duration_since(start).map_or(0, |d| d.as_secs());
            detector.observe(kind, event, &object, last);
        }
        let report = detector.report(last);
        let found = loop_lines(&report);
        let report = serde_json::to_value(&report).unwrap_or_default();
        let (text, truncated) = capped(report.to_string(), bytes(p.max_bytes));
        Ok(match truncated {
            false => json!({ "found": found, "report": report, "truncated": false }),
            true => json!({ "found": found, "report_text": text, "truncated": true }),
        })
    }
}

impl Server {
    async fn tree_json(&self, p: &TreeParams) -> Result<Value, ToolError> {
        let discovery = self.shared.discovery().await?.clone();
        let target = resolve_kind(&discovery, &p.kind)?;
        let namespace = self.shared.namespace(p.namespace.as_deref())?;
        let mut forest = Forest::new();
        for kind in tree_kinds(&discovery, &target, p.kinds.as_deref())? {
            let resolved = self.shared.resolve_kind(kind, &discovery);
            forest.add(self.shared.warm_resolved(&resolved).await?.ownership());
        }
        let tree = tree_in(&forest, &target, namespace.as_deref(), &p.name, p.up)?;
        let nodes = tree.lines().into_iter().map(|(prefix, node)| {
            let mut value = serde_json::to_value(node).unwrap_or_default();
            value["depth"] = json!(prefix.chars().count() / 2);
            value
        });
        let (nodes, truncated) = fitting(nodes, bytes(p.max_bytes));
        Ok(json!({ "objects": tree.len(), "nodes": nodes, "truncated": truncated }))
    }

    async fn timeline_json(&self, p: &TimelineParams) -> Result<Value, ToolError> {
        let resolved = self.shared.resolve(&p.kind).await?;
        let events = self.shared.resolve("events").await?;
        let namespace = self
            .shared
            .namespace(p.namespace.as_deref())?
            .filter(|_| resolved.kind.namespaced());
        let informer = crate::commands::InformerArgs {
            resource: String::new(),
            cluster: self.shared.args.cluster.clone(),
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
        Ok(json!({ "total": total, "entries": entries, "truncated": truncated }))
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
            kind: kind.to_string(),
            namespace: None,
            filter: None,
            columns: Vec::new(),
            sort: None,
            limit: None,
            cursor: None,
            max_bytes: None,
        };
        Ok((kind.to_string(), self.list_json(&params).await?))
    }

    /// Notifies `peer` that `uri` changed after each burst of tap entries, at most once per
    /// [`COALESCE`], until unsubscribed (`stop` dropped), the informer stops, or the client
    /// goes away.
    async fn follow(
        uri: String,
        mut entries: tokio::sync::broadcast::Receiver<
            Arc<kscope_informers::instrument::tap::TapEntry>,
        >,
        mut stop: tokio::sync::oneshot::Receiver<()>,
        peer: rmcp::Peer<rmcp::RoleServer>,
    ) {
        use tokio::sync::broadcast::error::RecvError;
        loop {
            tokio::select! {
                _ = &mut stop => return,
                entry = entries.recv() => match entry {
                    Ok(_) | Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => return,
                },
            }
            tokio::select! {
                _ = &mut stop => return,
                () = tokio::time::sleep(COALESCE) => {}
            }
            // What came during the pause is in this one notification.
            while let Ok(_) | Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_)) =
                entries.try_recv()
            {}
            let param = rmcp::model::ResourceUpdatedNotificationParam::new(uri.clone());
            if peer.notify_resource_updated(param).await.is_err() {
                return;
            }
            tracing::debug!(%uri, "mcp: notified a change");
        }
    }
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
        let resources = self
            .shared
            .warm
            .all()
            .into_iter()
            .map(|(kind, _)| {
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
        let (_, warm) = self
            .shared
            .warm(&kind)
            .await
            .map_err(|e| resource_error(&e))?;
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
        tokio::spawn(Self::follow(
            uri,
            warm.tap().subscribe(),
            stopped,
            context.peer,
        ));
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
