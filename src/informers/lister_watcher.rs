//! What the Reflector needs of an API server: list pages and watch streams of one resource,
//! as a trait. The HTTP implementation is `kscope_client::lister_watcher`; this layer knows
//! no HTTP and no resource type.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::stream::BoxStream;
use kube_core::Status;

/// Options of one list call. An empty `resource_version` means unset: a consistent,
/// most-recent read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListParams {
    pub resource_version: String,
    pub limit: Option<u32>,
    pub continue_token: Option<String>,
}

/// One page of a list.
#[derive(Debug)]
pub struct ListPage<T> {
    pub items: Vec<Arc<T>>,
    /// The snapshot resourceVersion every page of this list is served at.
    pub resource_version: String,
    pub continue_token: Option<String>,
    /// Items that did not decode: skipped, and reported so the caller can log and count them.
    pub malformed: Vec<String>,
}

/// Options of one watch call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchParams {
    pub resource_version: String,
    /// The server closes the stream cleanly after this long.
    pub timeout: Duration,
    pub allow_bookmarks: bool,
    /// The watch-list: the current state first, as ADDED events from a state not older than
    /// `resource_version` (sendInitialEvents=true, resourceVersionMatch=NotOlderThan), ended
    /// by a bookmark marked as the end of the initial events.
    pub send_initial_events: bool,
}

/// The `type` of a watch event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WatchEventType {
    Added,
    Modified,
    Deleted,
    Bookmark,
    Error,
}

impl WatchEventType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
            Self::Bookmark => "BOOKMARK",
            Self::Error => "ERROR",
        }
    }
}

/// A decoded watch event.
#[derive(Debug)]
pub enum WatchEvent<T> {
    Added(Arc<T>),
    Modified(Arc<T>),
    /// Carries the object's last state.
    Deleted(Arc<T>),
    /// Only moves the resourceVersion on.
    Bookmark {
        resource_version: String,
        /// Annotated `k8s.io/initial-events-end: "true"`: a watch-list's initial state is
        /// complete.
        initial_events_end: bool,
    },
    /// Ends the watch; a 410 means the resourceVersion is too old.
    Error(Box<Status>),
}

impl<T> WatchEvent<T> {
    pub fn event_type(&self) -> WatchEventType {
        match self {
            Self::Added(_) => WatchEventType::Added,
            Self::Modified(_) => WatchEventType::Modified,
            Self::Deleted(_) => WatchEventType::Deleted,
            Self::Bookmark { .. } => WatchEventType::Bookmark,
            Self::Error(_) => WatchEventType::Error,
        }
    }
}

/// A watch event and the raw JSON of its object, kept for the delta tap.
#[derive(Debug)]
pub struct RawWatchEvent<T> {
    pub event: WatchEvent<T>,
    /// A slice of the body frame the event came in: whoever keeps it past the event should
    /// copy it (see [`crate::instrument::tap::Tap::record`]).
    pub raw_object: Bytes,
}

/// A stream of watch events. An `Err(MalformedEvent)` item is skippable; any other error ends
/// the watch.
pub type WatchStream<T> = BoxStream<'static, Result<RawWatchEvent<T>, ListWatchError>>;

/// The cause of a failed decode or request, kept as the error it was.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What can go wrong talking to the API server. Each message is one line for a person and
/// names the innermost cause; the cause itself stays reachable as the error's source.
#[derive(Debug, thiserror::Error)]
pub enum ListWatchError {
    #[error("{verb} {resource}: {} ({} {})", .status.message, .status.code, .status.reason)]
    Api {
        verb: &'static str,
        resource: String,
        status: Box<Status>,
    },
    #[error("{verb} {resource}: {}", innermost_cause(.source.as_ref()))]
    Transport {
        verb: &'static str,
        resource: String,
        #[source]
        source: BoxError,
        /// Nothing listens at the server's address (yet): worth retrying after a backoff.
        connection_refused: bool,
    },
    #[error("{verb} {resource}: malformed response: {source}")]
    MalformedResponse {
        verb: &'static str,
        resource: String,
        #[source]
        source: BoxError,
    },
    #[error("{verb} {resource}: cannot build the request: {source}")]
    InvalidRequest {
        verb: &'static str,
        resource: String,
        #[source]
        source: http::Error,
    },
    #[error("malformed watch event: {0}")]
    MalformedEvent(#[source] BoxError),
}

/// The innermost cause of `err`, which is what tells a person what happened ("Connection
/// refused") where the outer layers only say that a request failed.
pub fn innermost_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut innermost = err;
    while let Some(cause) = innermost.source() {
        innermost = cause;
    }
    innermost.to_string()
}

impl ListWatchError {
    fn status(&self) -> Option<&Status> {
        match self {
            Self::Api { status, .. } => Some(status),
            _ => None,
        }
    }

    /// 410 Gone / reason Expired: the resourceVersion or continue token is too old.
    pub fn is_expired(&self) -> bool {
        self.status()
            .is_some_and(|s| s.code == 410 || s.reason == "Expired" || s.reason == "Gone")
    }

    /// The server has not yet seen the requested resourceVersion.
    pub fn is_too_large_resource_version(&self) -> bool {
        self.status().is_some_and(|s| {
            s.details.as_ref().is_some_and(|d| {
                d.causes
                    .iter()
                    .any(|c| c.reason == "ResourceVersionTooLarge")
            }) || s.message.contains("Too large resource version")
        })
    }

    pub fn is_too_many_requests(&self) -> bool {
        self.status().is_some_and(|s| s.code == 429)
    }

    pub fn is_connection_refused(&self) -> bool {
        matches!(
            self,
            Self::Transport {
                connection_refused: true,
                ..
            }
        )
    }

    pub fn code(&self) -> Option<u16> {
        self.status().map(|s| s.code)
    }
}

/// What tells one API server from another, as the transport saw it: the SHA-256 of the
/// certificate it served (`sha256:` and hex). Two answers with different identities came from
/// different servers (or from one whose certificate was replaced).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerIdentity(pub String);

impl std::fmt::Display for ServerIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Lists and watches one resource. client-go's `ListerWatcher`.
pub trait ListerWatcher<T>: Send + Sync + 'static {
    fn list(
        &self,
        params: &ListParams,
    ) -> impl Future<Output = Result<ListPage<T>, ListWatchError>> + Send;

    fn watch(
        &self,
        params: &WatchParams,
    ) -> impl Future<Output = Result<WatchStream<T>, ListWatchError>> + Send;

    /// The identity of the server that sent the last answer, when the transport knows one
    /// (TLS); `None` otherwise.
    fn server_identity(&self) -> Option<ServerIdentity> {
        None
    }
}
