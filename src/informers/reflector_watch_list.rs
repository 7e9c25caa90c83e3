//! The Reflector's streaming watch-list (client-go's `watchList`): one watch with
//! sendInitialEvents=true sends the current state as ADDED events, then a bookmark annotated
//! `k8s.io/initial-events-end: "true"` at the resourceVersion the state is at, and goes on as
//! an ordinary watch. Unlike client-go, which gathers the state in a temporary store, a FIFO
//! that can ([`ReflectorStore::streams_listed`]) is handed each object as it arrives, so the
//! store fills while a large state is still streaming; the deletions a relist implies are
//! queued at the end marker.
//!
//! Falls back to a list where client-go does: the watch is refused (an error that is neither
//! a 429 nor an expired resourceVersion) or fails mid-stream, an event that does not decode
//! included. Unlike client-go, a connection refused fails the round (so the status says
//! so) instead of being retried inside the watch-list. Also, where client-go
//! would wait on: a server that ignores sendInitialEvents (a bookmark without the end marker
//! before the state ended), an expired resourceVersion twice in one round, and a stream cut
//! before its end marker three times in one round.

use std::collections::HashMap;
use std::sync::Arc;

use futures::{FutureExt, StreamExt};
use tokio::time::Instant;

use super::super::delta_fifo::{Hasher, Listed, ReflectorStore};
use super::super::instrument::tap::{TapKind, TapRecord};
use super::super::keys::Key;
use super::super::lister_watcher::{ListerWatcher, WatchParams, WatchStream};
use super::super::object::Object;
use super::{
    InitialListMode, InitialListStatus, Intake, Reflector, ReflectorError, ReflectorPhase,
    ServerChange, Watched, bump, went_back,
};

/// Phase updates while streaming are sent every this many objects (each wakes receivers).
const PROGRESS_EVERY: u64 = 500;
/// Streams cut before their end marker, in one round, before the round lists instead: a
/// state too large to stream before the connection drops would otherwise never arrive.
const MAX_EARLY_ENDS: u32 = 3;

/// A watch-list past its initial state: the stream to go on watching with.
pub(super) struct Streamed<T> {
    pub(super) stream: WatchStream<T>,
    pub(super) started: Instant,
    /// Events the stream delivered so far.
    pub(super) events: u64,
}

/// How a watch-list stream's initial state ended.
enum Initial<T> {
    Complete(Streamed<T>),
    /// The server does not do watch-lists: fall back.
    Ignored(String),
    /// The stream closed before the end marker: try again.
    EndedEarly,
}

/// The state as it streams in, for a store that takes it only whole: in arrival order, an
/// object modified during the stream keeping its first place.
struct Gathered<T> {
    objects: Vec<Option<Arc<T>>>,
    at: HashMap<Key, usize, Hasher>,
}

impl<T> Gathered<T> {
    fn new() -> Self {
        Self {
            objects: Vec::new(),
            at: HashMap::default(),
        }
    }

    fn put(&mut self, key: Key, obj: Arc<T>) {
        match self.at.get(&key) {
            Some(&i) => self.objects[i] = Some(obj),
            None => {
                self.at.insert(key, self.objects.len());
                self.objects.push(Some(obj));
            }
        }
    }

    fn remove(&mut self, key: &str) {
        if let Some(i) = self.at.remove(key) {
            self.objects[i] = None;
        }
    }
}

impl<T, L, S> Reflector<T, L, S>
where
    T: Object,
    L: ListerWatcher<T>,
    S: ReflectorStore<T>,
{
    /// Gets the initial state by watch-list. `Ok(None)`: fall back to a list (the reason
    /// is in the status).
    pub(super) async fn watch_list(&mut self) -> Result<Option<Streamed<T>>, ReflectorError> {
        let mut expired_before = false;
        let mut early_ends = 0;
        loop {
            let resource_version = if self.resource_version_unavailable {
                String::new()
            } else {
                self.last_sync_resource_version.clone()
            };
            let params = WatchParams {
                resource_version: resource_version.clone(),
                timeout: self.watch_timeout(),
                allow_bookmarks: true,
                send_initial_events: true,
            };
            self.listing();
            let started = Instant::now();
            let failure = match self.lister_watcher.watch(&params).await {
                Ok(stream) => {
                    bump(&self.metrics.watches);
                    self.tap_record(
                        TapKind::WatchStart,
                        TapRecord {
                            resource_version: Some(resource_version.clone()),
                            message: Some("watch-list: the state as events, then changes".into()),
                            ..TapRecord::default()
                        },
                    );
                    match self.stream_initial(stream, started).await {
                        Ok(Initial::Complete(streamed)) => return Ok(Some(streamed)),
                        Ok(Initial::Ignored(reason)) => return Ok(self.fall_back(reason)),
                        Ok(Initial::EndedEarly) => {
                            early_ends += 1;
                            if early_ends >= MAX_EARLY_ENDS {
                                return Ok(self.fall_back(format!(
                                    "the watch-list ended before its initial state {early_ends} times"
                                )));
                            }
                            tracing::debug!(resource = %self.resource, "watch-list ended before its initial state; retrying");
                            self.back_off().await;
                            continue;
                        }
                        Err(err) => err,
                    }
                }
                Err(err) => err.into(),
            };
            let ReflectorError::ListWatch(err) = failure else {
                return Err(failure);
            };
            // Nothing listens: the round fails, so the status says so (client-go retries
            // inside its watch-list, where a caller waiting on the status never hears of it).
            if err.is_connection_refused() {
                return Err(err.into());
            }
            if err.is_too_many_requests() {
                tracing::debug!(resource = %self.resource, error = %err, "watch-list throttled; backing off");
                self.back_off().await;
                continue;
            }
            // A resourceVersion the server has not reached: another server, or this one
            // restored (said as a list says it); then, as for an expired one, from scratch.
            if err.is_too_large_resource_version() && !expired_before {
                self.server_changed(ServerChange::ResourceVersionTooLarge { resource_version });
                expired_before = true;
                continue;
            }
            if err.is_expired() && !expired_before {
                bump(&self.metrics.expired);
                self.tap_message(
                    TapKind::Expired,
                    format!("watch-list at resourceVersion {resource_version:?}: {err}"),
                );
                self.resource_version_unavailable = true;
                expired_before = true;
                continue;
            }
            // As client-go: any other error, an event that does not decode included, and
            // this round lists instead.
            return Ok(self.fall_back(format!("the watch-list failed: {err}")));
        }
    }

    /// Records why this round lists instead, and says so.
    fn fall_back(&mut self, reason: String) -> Option<Streamed<T>> {
        tracing::info!(resource = %self.resource, %reason, "falling back from watch-list to list");
        self.tap_message(TapKind::Error, format!("falling back to list: {reason}"));
        self.status.send_modify(|s| {
            s.initial_list = Some(InitialListStatus {
                mode: InitialListMode::List,
                fallback_reason: Some(reason),
            })
        });
        None
    }

    /// Reads the initial state off `stream` into the store, up to the end marker.
    async fn stream_initial(
        &mut self,
        mut stream: WatchStream<T>,
        started: Instant,
    ) -> Result<Initial<T>, ReflectorError> {
        self.undecodable = 0;
        let streaming = self.store.streams_listed();
        // A store that knows nothing yet (a first sync) holds at the end only what streamed:
        // no set of every key, and no older copy to look for.
        let fresh = streaming && self.store.knows_nothing();
        let mut listed = if fresh {
            Listed::AllStreamedExcept(Default::default())
        } else {
            Listed::Keys(Default::default())
        };
        let mut gathered = Gathered::new();
        let mut events = 0u64;
        let mut objects = 0u64;
        // Streamed objects not yet handed to the store, with their keys.
        let mut pending: Vec<(Key, Arc<T>)> = Vec::new();
        loop {
            // Objects that arrived together go to the store together: one lock and at most
            // one wake-up of the process loop per batch, not per object (150,000 wake-ups
            // cost a third more CPU than a list's Replace). An object waits only while the
            // next one is already here, so rows show as soon as they arrive.
            let next = match stream.next().now_or_never() {
                Some(next) => next,
                None => {
                    self.hand_listed(&mut pending);
                    stream.next().await
                }
            };
            let Some(item) = next else {
                break;
            };
            let Intake { event, key } = self.intake(item, true)?;
            events += 1;
            match event {
                Watched::Added(obj) | Watched::Modified(obj) => {
                    let Some(key) = key else {
                        self.count_malformed(1);
                        continue;
                    };
                    let obj = if fresh {
                        obj
                    } else {
                        self.store.known_copy(&key, &obj).unwrap_or(obj)
                    };
                    if streaming {
                        // One key per object, shared by the set, the queue and the store.
                        listed.streamed(&key);
                        pending.push((key, obj));
                        if pending.len() as u64 >= PROGRESS_EVERY {
                            self.hand_listed(&mut pending);
                        }
                    } else {
                        gathered.put(key, obj);
                    }
                    objects += 1;
                    if objects.is_multiple_of(PROGRESS_EVERY) {
                        self.status.send_modify(|s| {
                            s.phase = ReflectorPhase::Listing { pages: 0, objects }
                        });
                    }
                }
                // The end marker's Replace (or deletions) removes it.
                Watched::Deleted(_) => {
                    if let Some(key) = key {
                        listed.unlisted(&key);
                        gathered.remove(&key);
                    }
                }
                Watched::Bookmark {
                    resource_version,
                    initial_events_end: true,
                } => {
                    let objects = if streaming {
                        self.hand_listed(&mut pending);
                        self.store.finish_listed(&listed, &resource_version);
                        match &listed {
                            Listed::Keys(keys) => keys.len(),
                            // A server streams each object once: what streamed, less what
                            // was deleted while it did.
                            Listed::AllStreamedExcept(gone) => {
                                (objects as usize).saturating_sub(gone.len())
                            }
                        }
                    } else {
                        let items: Vec<Arc<T>> = gathered.objects.into_iter().flatten().collect();
                        let n = items.len();
                        if let Err(err) = self.store.replace(items, &resource_version) {
                            tracing::error!(resource = %self.resource, error = %err, "store refused a list of keyed objects");
                        }
                        n
                    };
                    self.streamed(objects, &resource_version);
                    return Ok(Initial::Complete(Streamed {
                        stream,
                        started,
                        events,
                    }));
                }
                Watched::Bookmark {
                    initial_events_end: false,
                    ..
                } => {
                    return Ok(Initial::Ignored(
                        "the server sent a bookmark without k8s.io/initial-events-end before \
                         the initial state ended: it ignores sendInitialEvents"
                            .into(),
                    ));
                }
            }
        }
        Ok(Initial::EndedEarly)
    }

    /// Hands the streamed objects gathered so far to the store, in one call.
    fn hand_listed(&mut self, pending: &mut Vec<(Key, Arc<T>)>) {
        if !pending.is_empty() {
            self.store.add_listed(std::mem::take(pending));
        }
    }

    /// The initial state of `objects` objects is in the store at `resource_version`.
    fn streamed(&mut self, objects: usize, resource_version: &str) {
        tracing::info!(resource = %self.resource, objects, resource_version, "streamed the initial state");
        tracing::debug!(resource = %self.resource, resource_version, "watching");
        bump(&self.metrics.lists);
        // A state older than the store's: a server that did not wait to reach the asked
        // resourceVersion (as NotOlderThan asks), another one or a restored one. The store
        // now holds that state whole, so it is right as it is, and worth saying.
        if went_back(&self.last_sync_resource_version, resource_version) {
            self.note_server_change(ServerChange::ResourceVersionWentBack {
                from: self.last_sync_resource_version.clone(),
                to: resource_version.to_string(),
            });
        }
        let relisted = format!(
            "{objects} objects streamed by watch-list at resourceVersion {resource_version}"
        );
        self.synced_state(
            resource_version.to_string(),
            objects,
            relisted,
            Some(InitialListStatus {
                mode: InitialListMode::WatchList,
                fallback_reason: None,
            }),
        );
    }
}
