//! The HTTP face of a replay: discovery of the recorded kinds, lists at the state the
//! playback clock has reached, watches from any recorded resourceVersion paced by that
//! clock, and a refusal of every write.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, header};
use axum::response::{IntoResponse, Response};
use bytes::{BufMut, Bytes, BytesMut};
use serde_json::{Value, json};
use tokio::time::Instant;

use super::clock::Clock;
use super::timeline::{Segment, Timeline};
use crate::http::status::{ApiError, json_body};
use crate::resources::Resource;

/// A recorded kind the replay serves, with the names its URLs and discovery use.
pub struct ServedKind {
    pub resource: Resource,
    pub segments: Vec<Segment>,
}

/// What every request of a replay reads.
pub struct Replay {
    pub kinds: Vec<ServedKind>,
    pub token: String,
    /// Where playback is; it starts at the first list or watch, so a client started after
    /// the server still sees the recording from its beginning.
    pub clock: Clock,
}

impl Replay {
    /// The recorded kinds the sim knows the URLs of; the names of the others.
    pub fn new(timeline: Timeline, speed: f64, token: String) -> (Self, Vec<String>) {
        let mut kinds = Vec::new();
        let mut unknown = Vec::new();
        for (recorded, segments) in timeline.kinds {
            match resolve(&recorded) {
                Some(resource) => kinds.push(ServedKind { resource, segments }),
                None => unknown.push(recorded),
            }
        }
        let replay = Self {
            kinds,
            token,
            clock: Clock::new(timeline.first_at, speed),
        };
        (replay, unknown)
    }

    /// The highest resourceVersion played by `at`, over the kinds.
    pub fn resource_version_at(&self, at: i64) -> u64 {
        self.kinds
            .iter()
            .filter_map(|kind| {
                let segment = &kind.segments[segment_at(&kind.segments, at)?];
                Some(segment.rv_after(segment.played_by(at)))
            })
            .max()
            .unwrap_or(0)
    }

    /// When the next recorded thing after `at` happens: a watch event, or a relist's new
    /// state; `None` at the end of the recording.
    pub fn next_after(&self, at: i64) -> Option<i64> {
        self.kinds
            .iter()
            .flat_map(|kind| {
                let current = segment_at(&kind.segments, at);
                let step = current.and_then(|i| {
                    let segment = &kind.segments[i];
                    segment.steps.get(segment.played_by(at)).map(|s| s.at)
                });
                let next_segment = kind.segments.iter().map(|s| s.at).find(|s| *s > at);
                [step, next_segment]
            })
            .flatten()
            .min()
    }

    /// When the recording received the last thing at or below resourceVersion `rv` (a
    /// state or an event), so that playing to it shows the state just after that event, as
    /// `kscope replay --print --at RV` folds it; `None` when everything is above it.
    pub fn time_of_resource_version(&self, rv: u64) -> Option<i64> {
        self.kinds
            .iter()
            .flat_map(|kind| kind.segments.iter())
            .filter(|segment| segment.rv <= rv)
            .map(|segment| {
                let within = segment.steps.partition_point(|s| s.rv <= rv);
                within
                    .checked_sub(1)
                    .map_or(segment.at, |last| segment.steps[last].at.max(segment.at))
            })
            .max()
    }
}

/// A kscope kind name (`pods`, `deployments`, `deployments.apps`) to the sim's resource.
fn resolve(name: &str) -> Option<Resource> {
    Resource::from_name(name).or_else(|| {
        Resource::ALL
            .into_iter()
            .find(|r| format!("{}.{}", r.plural(), r.group()) == name)
    })
}

/// The segment playing at `position`: the last to have started, or the first before any.
fn segment_at(segments: &[Segment], position: i64) -> Option<usize> {
    if segments.is_empty() {
        return None;
    }
    Some(segments.partition_point(|s| s.at <= position).max(1) - 1)
}

pub fn router(replay: Arc<Replay>) -> axum::Router {
    axum::Router::new().fallback(handle).with_state(replay)
}

async fn handle(State(replay): State<Arc<Replay>>, request: Request) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    if presented != Some(replay.token.as_str()) {
        return ApiError::unauthorized().into_response();
    }
    if request.method() != Method::GET {
        return read_only(request.method()).into_response();
    }
    let path = request.uri().path().trim_end_matches('/').to_string();
    let query: BTreeMap<String, String> = request
        .uri()
        .query()
        .map(|q| {
            url_pairs(q)
                .into_iter()
                .collect::<BTreeMap<String, String>>()
        })
        .unwrap_or_default();
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    match parts.as_slice() {
        ["version"] => json_body(version().to_string()),
        ["api"] => json_body(
            json!({"kind": "APIVersions", "versions": ["v1"],
                   "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}]})
            .to_string(),
        ),
        ["apis"] => json_body(api_groups(&replay).to_string()),
        ["api", version] => json_body(api_resources(&replay, "", version).to_string()),
        ["apis", group, version] => json_body(api_resources(&replay, group, version).to_string()),
        ["api", version, rest @ ..] => serve_resource(&replay, "", version, rest, &query),
        ["apis", group, version, rest @ ..] => {
            serve_resource(&replay, group, version, rest, &query)
        }
        _ => ApiError::unknown_path().into_response(),
    }
}

/// Writes are refused as the real server refuses a verb a resource does not support, with
/// a message that says why.
fn read_only(method: &Method) -> ApiError {
    ApiError::method_not_allowed(&format!(
        "{method}: this server replays a recording and is read-only"
    ))
}

fn url_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            Some((decode(k)?, decode(v)?))
        })
        .collect()
}

fn decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

fn version() -> Value {
    json!({
        "major": "1", "minor": "32", "gitVersion": "v1.32.3-kscope-replay",
        "gitCommit": "", "gitTreeState": "clean", "buildDate": "", "goVersion": "",
        "compiler": "gc", "platform": "linux/amd64"
    })
}

fn api_groups(replay: &Replay) -> Value {
    let mut groups: BTreeMap<&str, &str> = BTreeMap::new();
    for kind in &replay.kinds {
        if !kind.resource.group().is_empty() {
            groups.insert(kind.resource.group(), kind.resource.version());
        }
    }
    let groups: Vec<Value> = groups
        .into_iter()
        .map(|(group, version)| {
            let gv = json!({"groupVersion": format!("{group}/{version}"), "version": version});
            json!({"name": group, "versions": [gv.clone()], "preferredVersion": gv})
        })
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

fn api_resources(replay: &Replay, group: &str, version: &str) -> Value {
    let resources: Vec<Value> = replay
        .kinds
        .iter()
        .map(|k| k.resource)
        .filter(|r| r.group() == group && r.version() == version)
        .map(|r| {
            json!({
                "name": r.plural(), "singularName": r.singular(), "namespaced": r.namespaced(),
                "kind": r.kind(), "verbs": ["get", "list", "watch"],
                "shortNames": r.short_names(),
            })
        })
        .collect();
    json!({"kind": "APIResourceList", "apiVersion": "v1",
           "groupVersion": group_version(group, version), "resources": resources})
}

fn group_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// `[namespaces, NS,] PLURAL [, NAME]` under a group version.
fn serve_resource(
    replay: &Arc<Replay>,
    group: &str,
    version: &str,
    rest: &[&str],
    query: &BTreeMap<String, String>,
) -> Response {
    let (namespace, rest) = match rest {
        ["namespaces", ns, plural, tail @ ..] => (Some(*ns), [&[*plural][..], tail].concat()),
        other => (None, other.to_vec()),
    };
    let Some(plural) = rest.first() else {
        return ApiError::unknown_path().into_response();
    };
    let Some(index) = replay.kinds.iter().position(|k| {
        let r = k.resource;
        r.plural() == *plural && r.group() == group && r.version() == version
    }) else {
        return ApiError::unknown_path().into_response();
    };
    let kind = &replay.kinds[index];
    let position = replay.clock.position();
    let Some(seg) = segment_at(&kind.segments, position) else {
        return ApiError::unknown_path().into_response();
    };
    let segment = &kind.segments[seg];
    let played = segment.played_by(position);
    match rest.get(1) {
        Some(name) => {
            let key = match namespace {
                Some(ns) => format!("{ns}/{name}"),
                None => (*name).to_string(),
            };
            match segment.object_after(played, &key) {
                Some(object) => json_body(object.get().to_string()),
                None => ApiError::not_found(kind.resource, name).into_response(),
            }
        }
        None if query.get("watch").is_some_and(|w| w == "1" || w == "true") => {
            watch(replay.clone(), index, seg, played, namespace, query)
        }
        None => {
            let (objects, rv) = segment.state_after(played);
            // The recorded objects are copied as they are, not parsed into a `Value` and
            // printed again: a TUI's seek is a list, and that made it 20 times as slow.
            let mut body = json!({
                "kind": kind.resource.list_kind(), "apiVersion": kind.resource.api_version(),
                "metadata": {"resourceVersion": rv.to_string()},
            })
            .to_string();
            body.pop();
            body.push_str(",\"items\":[");
            let items = objects
                .iter()
                .filter(|(key, _)| in_namespace(key, namespace));
            for (i, (_, object)) in items.enumerate() {
                if i > 0 {
                    body.push(',');
                }
                body.push_str(object.get());
            }
            body.push_str("]}");
            json_body(body)
        }
    }
}

/// Whether the object keyed `namespace/name` is in `namespace` (any, when `None`).
fn in_namespace(key: &str, namespace: Option<&str>) -> bool {
    namespace.is_none_or(|ns| key.split_once('/').is_some_and(|(n, _)| n == ns))
}

fn push_event(buf: &mut BytesMut, event_type: &str, object: &str) {
    buf.put_slice(b"{\"type\":\"");
    buf.put_slice(event_type.as_bytes());
    buf.put_slice(b"\",\"object\":");
    buf.put_slice(object.as_bytes());
    buf.put_slice(b"}\n");
}

/// The ERROR event of a watch whose resourceVersion the replay no longer holds, worded as
/// the real server's watch cache words it.
fn gone(requested: u64, oldest: u64) -> Bytes {
    let status = ApiError::expired(format!("too old resource version: {requested} ({oldest})"))
        .to_status()
        .to_string();
    let mut buf = BytesMut::new();
    push_event(&mut buf, "ERROR", &status);
    buf.freeze()
}

/// Where a watch is in its kind's recording.
struct Cursor {
    replay: Arc<Replay>,
    kind: usize,
    segment: usize,
    step: usize,
    namespace: Option<String>,
    bookmarks: bool,
    /// The last resourceVersion sent: a 410 at the next relist names it.
    rv: u64,
    /// The clock's seeks when the watch opened: the next ends it.
    seeks: u64,
    pending: Option<Bytes>,
    done: bool,
}

impl Cursor {
    async fn next(&mut self) -> Option<Bytes> {
        loop {
            if let Some(chunk) = self.pending.take() {
                return Some(chunk);
            }
            if self.done {
                return None;
            }
            let replay = self.replay.clone();
            let segments = &replay.kinds[self.kind].segments;
            let segment = &segments[self.segment];
            if let Some(step) = segment.steps.get(self.step) {
                if !replay.clock.wait_for(step.at, self.seeks).await {
                    return Some(self.moved());
                }
                self.step += 1;
                self.rv = step.rv;
                let scoped = in_namespace(&step.key, self.namespace.as_deref());
                let wanted = if step.event_type == "BOOKMARK" {
                    self.bookmarks
                } else {
                    scoped
                };
                if wanted {
                    let mut buf = BytesMut::new();
                    push_event(&mut buf, &step.event_type, step.object.get());
                    return Some(buf.freeze());
                }
                continue;
            }
            match segments.get(self.segment + 1) {
                Some(next) => {
                    if !replay.clock.wait_for(next.at, self.seeks).await {
                        return Some(self.moved());
                    }
                    self.done = true;
                    return Some(gone(self.rv, next.rv));
                }
                None => {
                    // The end of the recording: only a seek moves this watch again.
                    replay.clock.wait_for_seek(self.seeks).await;
                    return Some(self.moved());
                }
            }
        }
    }

    /// The playback was moved under the watch: it ends with a 410, so its client relists
    /// at the new position, as after a watch cache's restart.
    fn moved(&mut self) -> Bytes {
        self.done = true;
        gone(self.rv, self.rv.saturating_add(1))
    }
}

fn watch(
    replay: Arc<Replay>,
    index: usize,
    seg: usize,
    played: usize,
    namespace: Option<&str>,
    query: &BTreeMap<String, String>,
) -> Response {
    let kind = &replay.kinds[index];
    let segment = &kind.segments[seg];
    let bookmarks = query
        .get("allowWatchBookmarks")
        .is_some_and(|v| v == "true" || v == "1");
    let initial_events = query
        .get("sendInitialEvents")
        .is_some_and(|v| v == "true" || v == "1");
    let requested = query
        .get("resourceVersion")
        .map(String::as_str)
        .unwrap_or("");
    let mut initial = BytesMut::new();
    let (step, rv) = if initial_events || requested.is_empty() || requested == "0" {
        let (objects, rv) = segment.state_after(played);
        for (key, object) in &objects {
            if in_namespace(key, namespace) {
                push_event(&mut initial, "ADDED", object.get());
            }
        }
        if initial_events && bookmarks {
            let bookmark = json!({
                "kind": kind.resource.kind(), "apiVersion": kind.resource.api_version(),
                "metadata": {"resourceVersion": rv.to_string(),
                             "annotations": {"k8s.io/initial-events-end": "true"}},
            });
            push_event(&mut initial, "BOOKMARK", &bookmark.to_string());
        }
        (played, rv)
    } else {
        let Ok(rv) = requested.parse::<u64>() else {
            return ApiError::bad_request(format!(
                "resourceVersion: Invalid value: \"{requested}\": must be an integer"
            ))
            .into_response();
        };
        if rv < segment.rv {
            return stream_body(futures::stream::once(async move {
                Ok::<_, Infallible>(gone(rv, segment_rv(&replay, index, seg)))
            }));
        }
        let last = kind
            .segments
            .iter()
            .map(Segment::last_rv)
            .max()
            .unwrap_or(0);
        if rv > last {
            return ApiError::too_large_rv(rv, last).into_response();
        }
        (segment.steps.partition_point(|s| s.rv <= rv), rv)
    };
    let timeout = query
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map(|s| Instant::now() + Duration::from_secs(s));
    let cursor = Cursor {
        replay: replay.clone(),
        kind: index,
        segment: seg,
        step,
        namespace: namespace.map(str::to_string),
        bookmarks,
        rv,
        seeks: replay.clock.seeks(),
        pending: (!initial.is_empty()).then(|| initial.freeze()),
        done: false,
    };
    let events = futures::stream::unfold((cursor, timeout), |(mut cursor, timeout)| async move {
        let chunk = match timeout {
            Some(deadline) => tokio::time::timeout_at(deadline, cursor.next())
                .await
                .ok()
                .flatten()?,
            None => cursor.next().await?,
        };
        Some((Ok::<_, Infallible>(chunk), (cursor, timeout)))
    });
    stream_body(events)
}

fn segment_rv(replay: &Replay, kind: usize, segment: usize) -> u64 {
    replay.kinds[kind].segments[segment].rv
}

fn stream_body(
    events: impl futures::Stream<Item = Result<Bytes, Infallible>> + Send + 'static,
) -> Response {
    let mut response = Response::new(Body::from_stream(events));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::super::timeline::Step;
    use super::*;

    fn step(at: i64, event_type: &str, rv: u64) -> Step {
        Step {
            at,
            event_type: event_type.into(),
            rv,
            key: "ns/a".into(),
            object: serde_json::value::RawValue::from_string("{}".into())
                .unwrap()
                .into(),
        }
    }

    /// Pods listed at 10 (rv 5), two events, a relist at 40 (rv 12) and one event after it.
    fn relisted() -> Replay {
        let segment = |at, rv, steps| Segment::new(at, rv, BTreeMap::new(), steps);
        let timeline = Timeline {
            first_at: 10,
            kinds: BTreeMap::from([(
                "pods".to_string(),
                vec![
                    segment(10, 5, vec![step(20, "ADDED", 6), step(30, "MODIFIED", 7)]),
                    segment(40, 12, vec![step(50, "DELETED", 13)]),
                ],
            )]),
            damage: None,
        };
        Replay::new(timeline, 1.0, String::new()).0
    }

    #[test]
    fn a_step_goes_to_the_next_event_or_relist() {
        let replay = relisted();
        assert_eq!(replay.next_after(10), Some(20));
        assert_eq!(replay.next_after(30), Some(40));
        assert_eq!(replay.next_after(40), Some(50));
        assert_eq!(replay.next_after(50), None);
        assert_eq!(replay.resource_version_at(25), 6);
        assert_eq!(replay.resource_version_at(45), 12);
    }

    #[test]
    fn a_resource_version_is_sought_just_after_its_event() {
        let replay = relisted();
        assert_eq!(replay.time_of_resource_version(4), None);
        assert_eq!(replay.time_of_resource_version(5), Some(10));
        assert_eq!(replay.time_of_resource_version(6), Some(20));
        assert_eq!(replay.time_of_resource_version(10), Some(30));
        assert_eq!(replay.time_of_resource_version(12), Some(40));
        assert_eq!(replay.time_of_resource_version(100), Some(50));
    }

    #[test]
    fn kscope_names_resolve_to_the_sims_resources() {
        assert_eq!(resolve("pods"), Some(Resource::Pods));
        assert_eq!(resolve("deployments.apps"), Some(Resource::Deployments));
        assert_eq!(resolve("widgets.example.com"), None);
    }

    #[test]
    fn query_values_are_percent_decoded() {
        assert_eq!(
            url_pairs("labelSelector=app%3Dweb&watch=1"),
            [
                ("labelSelector".to_string(), "app=web".to_string()),
                ("watch".to_string(), "1".to_string())
            ]
        );
    }
}
