//! The sim's own store as a [`ListerWatcher`], so the demo controller's informers list and
//! watch it as a controller in a pod lists and watches its API server: a list at a snapshot
//! resourceVersion, then every write after it in order, and 410 once the history window
//! no longer reaches back.

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use kube::core::Status;
use serde_json::Value;
use tokio::time::Instant;

use kscope_informers::lister_watcher::{
    ListPage, ListParams, ListWatchError, ListerWatcher, RawWatchEvent, WatchEvent, WatchParams,
    WatchStream,
};
use kscope_informers::object::Object;

use super::super::Shared;
use super::super::object::StoredObject;
use super::super::resources::Resource;
use super::super::store::{EventType, ReadAt, StoreError};

/// Events read from the store's log at a time.
const BATCH: usize = 1_024;

/// An object as the controller's caches hold it: its identity, version and JSON.
#[derive(Debug)]
pub(crate) struct Cached {
    namespace: Option<String>,
    name: String,
    resource_version: String,
    pub value: Value,
}

impl Object for Cached {
    fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn resource_version(&self) -> Option<&str> {
        Some(&self.resource_version)
    }
}

fn cached(object: &StoredObject) -> Result<Cached, serde_json::Error> {
    let value = object.decode()?;
    let meta = &value["metadata"];
    Ok(Cached {
        namespace: meta["namespace"].as_str().map(str::to_string),
        name: meta["name"].as_str().unwrap_or("").to_string(),
        resource_version: meta["resourceVersion"].as_str().unwrap_or("").to_string(),
        value,
    })
}

/// Lists and watches one resource of the sim's store.
pub(crate) struct StoreSource {
    pub shared: Arc<Shared>,
    pub resource: Resource,
}

impl StoreSource {
    fn error(&self, verb: &'static str, e: StoreError) -> ListWatchError {
        match e {
            StoreError::TooOld { .. } => expired(self.resource, verb, &e.to_string()),
            other => ListWatchError::Transport {
                verb,
                resource: self.resource.plural().to_string(),
                source: Box::new(other),
                connection_refused: false,
            },
        }
    }
}

fn expired_status(message: &str) -> Status {
    Status {
        code: 410,
        reason: "Expired".to_string(),
        message: message.to_string(),
        ..Status::default()
    }
}

fn expired(resource: Resource, verb: &'static str, message: &str) -> ListWatchError {
    ListWatchError::Api {
        verb,
        resource: resource.plural().to_string(),
        status: Box::new(expired_status(message)),
    }
}

impl ListerWatcher<Cached> for StoreSource {
    async fn list(&self, _params: &ListParams) -> Result<ListPage<Cached>, ListWatchError> {
        let page = self
            .shared
            .store
            .list(self.resource, ReadAt::Latest, "", None, None, &|_, _| true)
            .map_err(|e| self.error("list", e))?;
        let mut items = Vec::with_capacity(page.items.len());
        let mut malformed = Vec::new();
        for object in &page.items {
            match cached(object) {
                Ok(c) => items.push(Arc::new(c)),
                Err(e) => malformed.push(e.to_string()),
            }
        }
        Ok(ListPage {
            items,
            resource_version: page.rv.to_string(),
            continue_token: None,
            malformed,
        })
    }

    async fn watch(&self, params: &WatchParams) -> Result<WatchStream<Cached>, ListWatchError> {
        let current = self.shared.store.position().rv;
        let from = params.resource_version.parse().unwrap_or(current);
        let state = Watching {
            shared: self.shared.clone(),
            resource: self.resource,
            rv: from,
            changes: self.shared.store.subscribe(),
            deadline: Instant::now() + params.timeout,
            pending: VecDeque::new(),
            ended: false,
        };
        Ok(futures::stream::unfold(state, next_event).boxed())
    }
}

struct Watching {
    shared: Arc<Shared>,
    resource: Resource,
    rv: u64,
    changes: tokio::sync::watch::Receiver<super::super::store::Position>,
    deadline: Instant,
    pending: VecDeque<RawWatchEvent<Cached>>,
    ended: bool,
}

type Next = Option<(Result<RawWatchEvent<Cached>, ListWatchError>, Watching)>;

/// The watch's next event: from what was read already, else the store's log after the last
/// one seen, else once the store moves (or the watch's time is up).
async fn next_event(mut w: Watching) -> Next {
    loop {
        if let Some(event) = w.pending.pop_front() {
            return Some((Ok(event), w));
        }
        if w.ended {
            return None;
        }
        match w.shared.store.events_after(w.rv, BATCH) {
            Err(e) => {
                w.ended = true;
                let event = RawWatchEvent {
                    event: WatchEvent::Error(Box::new(expired_status(&e.to_string()))),
                    raw_object: Bytes::new(),
                };
                return Some((Ok(event), w));
            }
            Ok(events) if !events.is_empty() => {
                for e in events {
                    w.rv = e.rv;
                    if e.resource != w.resource {
                        continue;
                    }
                    let Ok(object) = cached(&e.object) else {
                        continue;
                    };
                    let object = Arc::new(object);
                    let event = match e.event_type {
                        EventType::Added => WatchEvent::Added(object),
                        EventType::Modified => WatchEvent::Modified(object),
                        EventType::Deleted => WatchEvent::Deleted(object),
                    };
                    w.pending.push_back(RawWatchEvent {
                        event,
                        raw_object: e.object.json.clone(),
                    });
                }
            }
            Ok(_) => {
                tokio::select! {
                    changed = w.changes.changed() => {
                        if changed.is_err() {
                            return None;
                        }
                    }
                    () = tokio::time::sleep_until(w.deadline) => return None,
                    () = w.shared.shutdown.cancelled() => return None,
                }
            }
        }
    }
}
