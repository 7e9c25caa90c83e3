//! Watches: newline-delimited `{"type":..., "object":...}` events streamed from the store's
//! event log, with the initial state as ADDED, selector transitions, bookmarks, timeouts,
//! 410 ERROR events for compacted history, and injected connection drops.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::{BufMut, Bytes, BytesMut};
use tokio::time::{Instant, Interval, MissedTickBehavior};

use super::list::{Filter, parse_rv};
use super::params::Params;
use super::status::{ApiError, json_body};
use super::table::{self, IncludeObject};
use super::target::Target;
use crate::Shared;
use crate::crd::schema::FieldError;
use crate::faults::FaultsFired;
use crate::object::StoredObject;
use crate::resources::Resource;
use crate::store::{Event, EventType, Position, ReadAt, StoreError};

/// The real server's default watch timeout when the client sets none (min-request-timeout).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);
/// Events read from the log per wake-up; bounds the time the read lock is held.
const BATCH: usize = 1024;
/// Bytes an event line adds around its object (`{"type":"MODIFIED","object":` and `}\n`).
const EVENT_FRAMING: usize = 32;
/// Events (initial ADDED ones or changes) are sent in chunks of about this size.
const CHUNK: usize = 256 * 1024;
/// How long a watch from a resourceVersion the store has not reached waits for it before
/// failing with 504, as kube-apiserver's watch cache does (its `blockTimeout`).
const TOO_LARGE_WAIT: Duration = Duration::from_secs(3);
const NOT_OLDER_THAN: &str = "NotOlderThan";

pub(crate) async fn watch(
    shared: Arc<Shared>,
    target: Target,
    params: &Params,
    as_table: Option<IncludeObject>,
) -> Result<Response, ApiError> {
    let filter = Filter::parse(&target, params)?;
    let rv = parse_rv(params)?;
    let timeout = match params.get("timeoutSeconds") {
        None => DEFAULT_TIMEOUT,
        Some(t) => Duration::from_secs(
            t.parse::<u64>()
                .map_err(|e| ApiError::bad_request(format!("invalid timeoutSeconds: {e}")))?,
        ),
    };
    let bookmarks = params.flag("allowWatchBookmarks");
    let send_initial_events = send_initial_events(params)?;
    let faults = shared.faults.read().clone();
    if send_initial_events.is_some() && faults.refuse_watch_list {
        return Err(ApiError::invalid(
            "ListOptions",
            "",
            "sendInitialEvents",
            "FieldValueForbidden",
            "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
        ));
    }
    let now = Instant::now();
    let mut watcher = Watcher {
        resource: target.resource,
        prefix: target.prefix(),
        filter,
        last_rv: 0,
        pending: VecDeque::new(),
        backlog: VecDeque::new(),
        initial: Vec::new().into_iter(),
        initial_end_bookmark: false,
        initial_chunks: 0,
        changes: shared.store.subscribe(),
        deadline: now + timeout,
        drop_at: faults.drop_watch_every.map(|d| now + d),
        bookmarks: bookmarks.then(|| {
            let mut every =
                tokio::time::interval_at(now + shared.bookmark_interval, shared.bookmark_interval);
            every.set_missed_tick_behavior(MissedTickBehavior::Delay);
            every
        }),
        done: false,
        as_table,
        shared: shared.clone(),
    };
    if faults.watch_gone(&shared.fault_rolls) {
        FaultsFired::bump(&shared.fired.watches_gone);
        watcher.fail_gone(&StoreError::TooOld {
            requested: rv.unwrap_or(0),
            oldest: shared.store.compacted(),
        });
    } else {
        match (send_initial_events, rv) {
            // The state as of a resourceVersion not older than the one asked for: the store
            // must have reached it first, as the watch cache waits to be fresh enough.
            (Some(true), Some(rv)) if rv > 0 => {
                wait_until_reached(&shared, rv).await?;
                watcher.send_initial_state(bookmarks);
            }
            (Some(true), _) => watcher.send_initial_state(bookmarks),
            // The legacy watch from "" or "0" starts with the state, as ADDED events.
            (None, None | Some(0)) => watcher.send_initial_state(false),
            // Changes only: after `rv`, or from now.
            (_, Some(rv)) if rv > 0 => {
                wait_until_reached(&shared, rv).await?;
                watcher.last_rv = rv;
            }
            (_, _) => watcher.last_rv = shared.store.position().rv,
        }
    }
    let stream = futures::stream::unfold(watcher, |mut w| async move {
        let item = w.next().await?;
        Some((item, w))
    });
    Ok(json_body(Body::from_stream(stream)))
}

/// `sendInitialEvents` as given (`None` when absent), once the combination of it with
/// `resourceVersionMatch` and `continue` is one kube-apiserver's validateWatchOptions accepts
/// (with the WatchList feature on); otherwise the 422 it answers, listing every violation.
fn send_initial_events(params: &Params) -> Result<Option<bool>, ApiError> {
    let send = params
        .get("sendInitialEvents")
        .map(|_| params.flag("sendInitialEvents"));
    let matching = params.get("resourceVersionMatch");
    let forbidden = |detail: &str| FieldError {
        field: "resourceVersionMatch".to_string(),
        reason: "FieldValueForbidden",
        short: "Forbidden",
        detail: detail.to_string(),
    };
    let mut errors = Vec::new();
    if send.is_some() && matching != Some(NOT_OLDER_THAN) {
        errors.push(forbidden(
            "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ));
    }
    if let Some(matching) = matching {
        if send.is_none() {
            errors.push(forbidden(
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ));
        }
        if matching != NOT_OLDER_THAN {
            errors.push(FieldError {
                field: "resourceVersionMatch".to_string(),
                reason: "FieldValueNotSupported",
                short: "Unsupported value",
                detail: format!("\"{matching}\": supported values: \"{NOT_OLDER_THAN}\""),
            });
        }
        if params.get("continue").is_some() {
            errors.push(forbidden(
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
    }
    if errors.is_empty() {
        Ok(send)
    } else {
        Err(ApiError::invalid_all("ListOptions", "", &errors))
    }
}

/// Waits (a bounded time) for the store to reach `rv`. A client asking for a version the
/// server has not reached was most likely talking to another server (or to this one before a
/// restore): the real server answers 504 "Too large resource version" rather than making it
/// wait for the future or sending what it has.
async fn wait_until_reached(shared: &Shared, rv: u64) -> Result<(), ApiError> {
    let mut changes = shared.store.subscribe();
    let reached = tokio::time::timeout(TOO_LARGE_WAIT, async {
        loop {
            if changes.borrow_and_update().rv >= rv {
                return true;
            }
            if changes.changed().await.is_err() {
                return false;
            }
        }
    })
    .await
    .unwrap_or(false);
    if reached {
        Ok(())
    } else {
        Err(ApiError::too_large_rv(rv, shared.store.position().rv))
    }
}

struct Watcher {
    shared: Arc<Shared>,
    resource: Resource,
    prefix: String,
    filter: Filter,
    /// Everything up to here has been considered (sent or filtered out).
    last_rv: u64,
    pending: VecDeque<Bytes>,
    /// Events read from the log and not yet sent or filtered out.
    backlog: VecDeque<Arc<Event>>,
    initial: std::vec::IntoIter<Arc<StoredObject>>,
    initial_end_bookmark: bool,
    /// Chunks of the initial state sent: `list-delay` comes before each after the first, as
    /// before each page of a list, so a client sees a large state arrive piece by piece.
    initial_chunks: usize,
    changes: tokio::sync::watch::Receiver<Position>,
    deadline: Instant,
    drop_at: Option<Instant>,
    bookmarks: Option<Interval>,
    done: bool,
    /// Objects go out as one-row Tables (kubectl's `get -w`).
    as_table: Option<IncludeObject>,
}

impl Watcher {
    /// An object as this watch sends it.
    fn push_object(&self, buf: &mut BytesMut, event_type: &str, object: &StoredObject) {
        if let Some(include) = self.as_table {
            push_event(
                buf,
                event_type,
                &table::table(self.resource, include, &[object], None, None),
            );
        } else {
            push_event(buf, event_type, &object.json);
        }
    }

    fn matches(&self, key: &str, object: &StoredObject) -> bool {
        key.starts_with(&self.prefix) && self.filter.matches(key, object)
    }

    /// Takes the current state to send as ADDED events, then (for sendInitialEvents) the
    /// bookmark that marks its end. Events are encoded chunk by chunk as the client reads,
    /// so a watch over a large cluster does not hold a second copy of it.
    fn send_initial_state(&mut self, end_bookmark: bool) {
        self.changes.borrow_and_update();
        let page = self.shared.store.list(
            self.resource,
            ReadAt::Latest,
            &self.prefix,
            None,
            None,
            &|k, o| self.filter.matches(k, o),
        );
        let Ok(page) = page else {
            return;
        };
        self.last_rv = page.rv;
        self.initial = page.items.into_iter();
        self.initial_end_bookmark = end_bookmark;
    }

    /// The next chunk of the initial state, if any is left.
    fn next_initial_chunk(&mut self) -> Option<Bytes> {
        let mut buf = BytesMut::new();
        while buf.len() < CHUNK {
            let Some(object) = self.initial.next() else {
                if std::mem::take(&mut self.initial_end_bookmark) {
                    let bookmark = bookmark_object(self.resource, self.last_rv, true);
                    push_event(&mut buf, "BOOKMARK", &bookmark);
                }
                break;
            };
            self.push_object(&mut buf, EventType::Added.as_str(), &object);
        }
        (!buf.is_empty()).then(|| buf.freeze())
    }

    fn fail_gone(&mut self, e: &StoreError) {
        let status = ApiError::expired(e.to_string()).to_status().to_string();
        let mut buf = BytesMut::new();
        push_event(&mut buf, "ERROR", status.as_bytes());
        self.pending.push_back(buf.freeze());
        self.done = true;
    }

    /// The next chunk to send; `Err` cuts the connection (an injected drop).
    async fn next(&mut self) -> Option<Result<Bytes, std::io::Error>> {
        loop {
            if let Some(chunk) = self.pending.pop_front() {
                return Some(Ok(chunk));
            }
            let initial_left = self.initial.len() > 0 || self.initial_end_bookmark;
            if initial_left && self.initial_chunks > 0 {
                let delay = self.shared.faults.read().list_delay;
                if let Some(delay) = delay {
                    tokio::time::sleep(delay).await;
                }
            }
            if let Some(chunk) = self.next_initial_chunk() {
                self.initial_chunks += 1;
                return Some(Ok(chunk));
            }
            if self.done {
                return None;
            }
            if self.backlog.is_empty() {
                self.changes.borrow_and_update();
                match self.shared.store.events_after(self.last_rv, BATCH) {
                    Err(e) => {
                        self.fail_gone(&e);
                        continue;
                    }
                    Ok(events) => self.backlog.extend(events),
                }
            }
            if !self.backlog.is_empty() {
                match self.next_change_chunk() {
                    Some(chunk) => return Some(Ok(chunk)),
                    None => continue,
                }
            }
            let drop_at = self.drop_at;
            let tick = async {
                match self.bookmarks.as_mut() {
                    Some(every) => {
                        every.tick().await;
                    }
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                changed = self.changes.changed() => {
                    if changed.is_err() {
                        return None;
                    }
                }
                () = tokio::time::sleep_until(self.deadline) => return None,
                () = self.shared.shutdown.cancelled() => return None,
                () = async {
                    match drop_at {
                        Some(at) => tokio::time::sleep_until(at).await,
                        None => std::future::pending().await,
                    }
                } => {
                    self.done = true;
                    FaultsFired::bump(&self.shared.fired.watches_dropped);
                    return Some(Err(std::io::Error::other("watch dropped by fault injection")));
                }
                () = tick => {
                    let mut buf = BytesMut::new();
                    push_event(&mut buf, "BOOKMARK", &bookmark_object(self.resource, self.last_rv, false));
                    return Some(Ok(buf.freeze()));
                }
            }
        }
    }

    /// Encodes events from the backlog up to about one [`CHUNK`], sizing the buffer before
    /// filling it; `None` if none of them is for this watch. A buffer for a whole batch
    /// (megabytes) came from fresh pages that the kernel zeroed each time, and growing one
    /// by doubling copied each event's JSON again.
    fn next_change_chunk(&mut self) -> Option<Bytes> {
        let resource = self.resource;
        // Events outside the watch's namespace never make a line: leave them out of the size.
        let prefix = self.prefix.clone();
        let ours = |e: &Event| e.resource == resource && e.key.starts_with(&prefix);
        let mut size = 0;
        let mut taken = 0;
        for event in &self.backlog {
            if size >= CHUNK {
                break;
            }
            if ours(event) {
                size += event.object.json.len() + EVENT_FRAMING;
            }
            taken += 1;
        }
        let mut buf = BytesMut::with_capacity(size);
        let batch: Vec<Arc<Event>> = self.backlog.drain(..taken).collect();
        for event in batch {
            if ours(&event) {
                self.push_change(&mut buf, &event);
            }
            self.last_rv = event.rv;
        }
        (!buf.is_empty()).then(|| buf.freeze())
    }

    /// Encodes one change as this watcher sees it: a change that enters the selector is
    /// ADDED, one that leaves it DELETED.
    fn push_change(&self, buf: &mut BytesMut, event: &Event) {
        let now = self.matches(&event.key, &event.object);
        let before = event
            .previous
            .as_ref()
            .is_some_and(|p| self.matches(&event.key, p));
        let event_type = match (event.event_type, before, now) {
            (EventType::Modified, true, true) => EventType::Modified,
            (EventType::Modified, false, true) | (EventType::Added, _, true) => EventType::Added,
            (EventType::Modified, true, false) => EventType::Deleted,
            (EventType::Deleted, _, true) => EventType::Deleted,
            _ => return,
        };
        self.push_object(buf, event_type.as_str(), &event.object);
    }
}

fn push_event(buf: &mut BytesMut, event_type: &str, object: &[u8]) {
    buf.put_slice(b"{\"type\":\"");
    buf.put_slice(event_type.as_bytes());
    buf.put_slice(b"\",\"object\":");
    buf.put_slice(object);
    buf.put_slice(b"}\n");
}

/// A BOOKMARK's object: only kind, apiVersion and the resourceVersion (plus the
/// initial-events-end annotation when it closes a watch-list's initial state).
fn bookmark_object(resource: Resource, rv: u64, initial_end: bool) -> Vec<u8> {
    let annotations = if initial_end {
        ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}"
    } else {
        ""
    };
    format!(
        "{{\"kind\":\"{}\",\"apiVersion\":\"{}\",\"metadata\":{{\"resourceVersion\":\"{rv}\"{annotations}}}}}",
        resource.kind(),
        resource.api_version()
    )
    .into_bytes()
}
