//! client-go's Reflector: lists a resource, replaces the store with the list, then watches from
//! the list's resourceVersion, feeding every change to the store, and starts over (after a
//! backoff) when the watch cannot continue. The store converges to the server's truth after
//! any sequence of watch drops, 410s and relists.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use futures::StreamExt;
use rand::Rng;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::backoff::Backoff;
use super::delta_fifo::ReflectorStore;
use super::instrument::tap::{HealthLevel, Tap, TapKind, TapRecord};
use super::keys::{Key, meta_namespace_key};
use super::lister_watcher::{
    ListParams, ListWatchError, ListerWatcher, RawWatchEvent, ServerIdentity, WatchEvent,
    WatchEventType, WatchParams, WatchStream,
};
use super::object::Object;

/// client-go's default list page size.
pub const DEFAULT_PAGE_SIZE: u32 = 500;
/// Watches last a random time between this and twice this.
pub const MIN_WATCH_TIMEOUT: Duration = Duration::from_secs(5 * 60);
/// A watch that ends sooner than this without a single event counts as a failure.
const VERY_SHORT_WATCH: Duration = Duration::from_secs(1);

#[path = "reflector_watch_list.rs"]
mod watch_list;

/// A watch event past [`Reflector::intake`]: an ERROR event has ended the watch there.
enum Watched<T> {
    Added(Arc<T>),
    Modified(Arc<T>),
    Deleted(Arc<T>),
    Bookmark {
        resource_version: String,
        initial_events_end: bool,
    },
}

impl<T: Object> Watched<T> {
    fn event_type(&self) -> WatchEventType {
        match self {
            Self::Added(_) => WatchEventType::Added,
            Self::Modified(_) => WatchEventType::Modified,
            Self::Deleted(_) => WatchEventType::Deleted,
            Self::Bookmark { .. } => WatchEventType::Bookmark,
        }
    }

    fn object(&self) -> Option<&Arc<T>> {
        match self {
            Self::Added(obj) | Self::Modified(obj) | Self::Deleted(obj) => Some(obj),
            Self::Bookmark { .. } => None,
        }
    }

    /// The object's resourceVersion, or the one a bookmark moves on to.
    fn resource_version(&self) -> Option<&str> {
        match self {
            Self::Bookmark {
                resource_version, ..
            } => Some(resource_version),
            _ => self.object().and_then(|obj| obj.resource_version()),
        }
    }
}

/// A watch event taken in, with its object's key when it was made.
struct Intake<T> {
    event: Watched<T>,
    key: Option<Key>,
}

/// How a Reflector gets the state its store starts from.
///
/// The default is the streaming watch-list, as in client-go since 1.35 (feature
/// WatchListClient): a store fills as the state streams in, so a table shows rows before a
/// large state has been read, and the server sends it without building one huge list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum InitialListMode {
    /// client-go's streaming watch-list (WatchListClient, on by default since 1.35): one
    /// watch sends the state as events, ended by a marked bookmark, and goes on watching.
    #[default]
    WatchList,
    /// A paged list, then a watch from its resourceVersion.
    List,
}

impl InitialListMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::WatchList => "watchList",
            Self::List => "list",
        }
    }
}

impl std::fmt::Display for InitialListMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is neither watchList nor list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown initial-list mode {0:?}: expected watchList or list")]
pub struct UnknownInitialListMode(pub String);

impl std::str::FromStr for InitialListMode {
    type Err = UnknownInitialListMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "watchList" | "watch-list" | "watchlist" => Ok(Self::WatchList),
            "list" => Ok(Self::List),
            other => Err(UnknownInitialListMode(other.to_string())),
        }
    }
}

/// How the last round got its initial state, and why if not as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitialListStatus {
    /// The mode the round used.
    pub mode: InitialListMode,
    /// Why a watch-list round fell back to a list (the server refused or ignored the
    /// watch-list, or it failed); `None` when the configured mode was used.
    pub fallback_reason: Option<String>,
}

/// Why a list-and-watch round ended.
#[derive(Debug, thiserror::Error)]
pub enum ReflectorError {
    #[error(transparent)]
    ListWatch(#[from] ListWatchError),
    #[error(
        "very short watch: {resource}: unexpected watch close - watch lasted less than a second and no items received"
    )]
    VeryShortWatch { resource: String },
    /// The server sent a resourceVersion older than one it had sent before: it is not the
    /// server (or not the history) the store came from, so the store is relisted from
    /// scratch rather than merged with it.
    #[error(
        "watch {resource}: the server went back from resourceVersion {from} to {to}: it is not the one the store came from; relisting"
    )]
    ResourceVersionWentBack {
        resource: String,
        from: String,
        to: String,
    },
    /// After a reconnect, another server answered (see [`ServerChange`]).
    #[error("watch {resource}: {change}: it is not the server the store came from; relisting")]
    ServerChanged {
        resource: String,
        change: ServerChange,
    },
}

impl ReflectorError {
    fn is_expired(&self) -> bool {
        matches!(self, Self::ListWatch(e) if e.is_expired())
    }

    /// client-go's `isTooLargeResourceVersionError`: the server has not reached the
    /// resourceVersion the store is at.
    fn is_too_large_resource_version(&self) -> bool {
        matches!(self, Self::ListWatch(e) if e.is_too_large_resource_version())
    }
}

/// Evidence that the server is not the one the store came from, for which the store is
/// relisted from scratch (a consistent read) instead of resumed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerChange {
    /// The server has not reached the store's resourceVersion (504 "Too large resource
    /// version"): it is another server, or this one restored from an older state.
    ResourceVersionTooLarge { resource_version: String },
    /// The server sent a resourceVersion older than one it had sent before.
    ResourceVersionWentBack { from: String, to: String },
    /// The server presented another certificate than the one the store was listed from.
    CertificateChanged {
        from: ServerIdentity,
        to: ServerIdentity,
    },
}

impl std::fmt::Display for ServerChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ResourceVersionTooLarge { resource_version } => write!(
                f,
                "the server has not reached resourceVersion {resource_version}"
            ),
            Self::ResourceVersionWentBack { from, to } => write!(
                f,
                "the server went back from resourceVersion {from} to {to}"
            ),
            Self::CertificateChanged { from, to } => write!(
                f,
                "the server's certificate changed from {} to {}",
                short(&from.0),
                short(&to.0)
            ),
        }
    }
}

/// Counters of what the Reflector went through.
#[derive(Debug, Default)]
pub struct ReflectorMetrics {
    pub lists: AtomicU64,
    pub list_pages: AtomicU64,
    pub watches: AtomicU64,
    pub watch_events: AtomicU64,
    pub bookmarks: AtomicU64,
    pub expired: AtomicU64,
    pub decode_errors: AtomicU64,
    pub errors: AtomicU64,
}

/// A plain copy of [`ReflectorMetrics`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReflectorMetricsSnapshot {
    pub lists: u64,
    pub list_pages: u64,
    pub watches: u64,
    pub watch_events: u64,
    pub bookmarks: u64,
    pub expired: u64,
    pub decode_errors: u64,
    pub errors: u64,
}

impl ReflectorMetrics {
    pub fn snapshot(&self) -> ReflectorMetricsSnapshot {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        ReflectorMetricsSnapshot {
            lists: get(&self.lists),
            list_pages: get(&self.list_pages),
            watches: get(&self.watches),
            watch_events: get(&self.watch_events),
            bookmarks: get(&self.bookmarks),
            expired: get(&self.expired),
            decode_errors: get(&self.decode_errors),
            errors: get(&self.errors),
        }
    }
}

/// Whether `new` is older than `last`. resourceVersions are opaque to clients, but every
/// API server in use sends increasing integers (etcd's revisions): an older one after a
/// reconnect means another server or a restored one. Values that are not integers are never
/// compared.
fn went_back(last: &str, new: &str) -> bool {
    matches!(
        (last.parse::<u64>(), new.parse::<u64>()),
        (Ok(last), Ok(new)) if new < last
    )
}

/// A fingerprint cut to what a person compares by eye (`sha256:` and 16 hex digits).
fn short(fingerprint: &str) -> &str {
    fingerprint.get(..23).unwrap_or(fingerprint)
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// What the Reflector is doing now, for progress displays and for callers that must stop on
/// a first error (`kscope get` against a server that refuses us).
#[derive(Debug, Clone, Default)]
pub struct ReflectorStatus {
    pub phase: ReflectorPhase,
    /// The resourceVersion the store is known to be at. Watch events move it without
    /// notifying receivers; the other fields notify when they change.
    pub last_sync_resource_version: String,
    /// At least one list reached the store.
    pub listed: bool,
    /// The error that ended the last round, cleared by the next successful list.
    pub last_error: Option<Arc<ReflectorError>>,
    /// Attempts that failed since the last successful list: rounds, and watches refused
    /// (429, connection refused) that were backed off without ending the round, so that a
    /// back-off never says it follows 0 failures.
    pub failed_rounds: u64,
    /// Items of the last list that did not decode: the store lacks them.
    pub undecodable_in_last_list: u64,
    /// How the last round's initial state was read; `None` before the first round got one.
    /// While a watch-list streams, the phase is `Listing` with no pages.
    pub initial_list: Option<InitialListStatus>,
    /// The last time the server was found not to be the one the store came from, and why;
    /// the store was then relisted from scratch.
    pub server_changed: Option<ServerChange>,
    /// How many times that happened.
    pub server_changes: u64,
    /// Since when the Reflector has not been watching (listing, backing off); `None` while
    /// it watches. At the start, the time it started.
    pub not_watching_since: Option<SystemTime>,
    /// When a backoff under way ends and the next attempt starts.
    pub next_retry_at: Option<SystemTime>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ReflectorPhase {
    #[default]
    Starting,
    /// A list is under way: pages and objects received so far.
    Listing {
        pages: u64,
        objects: u64,
    },
    Watching,
    /// Waiting before the next round.
    BackingOff,
}

/// client-go's Reflector over one [`ListerWatcher`] feeding one [`ReflectorStore`].
pub struct Reflector<T, L, S> {
    resource: String,
    lister_watcher: L,
    store: S,
    page_size: u32,
    min_watch_timeout: Duration,
    backoff: Backoff,
    last_sync_resource_version: String,
    /// A 410 or a too-large resourceVersion made the last one unusable: relist with "".
    resource_version_unavailable: bool,
    /// The server honoured paging for a list at "0"; later relists page too.
    paginated_result: bool,
    /// Items of the list under way that did not decode or had no key.
    undecodable: u64,
    /// The server the store's last list came from, when the transport tells servers apart.
    listed_from: Option<ServerIdentity>,
    metrics: Arc<ReflectorMetrics>,
    status: watch::Sender<ReflectorStatus>,
    tap: Option<Tap>,
    initial_list: InitialListMode,
    _object: std::marker::PhantomData<fn() -> T>,
}

impl<T, L, S> Reflector<T, L, S>
where
    T: Object,
    L: ListerWatcher<T>,
    S: ReflectorStore<T>,
{
    pub fn new(resource: impl Into<String>, lister_watcher: L, store: S) -> Self {
        Self {
            resource: resource.into(),
            lister_watcher,
            store,
            page_size: DEFAULT_PAGE_SIZE,
            min_watch_timeout: MIN_WATCH_TIMEOUT,
            backoff: Backoff::default(),
            last_sync_resource_version: String::new(),
            resource_version_unavailable: false,
            paginated_result: false,
            undecodable: 0,
            listed_from: None,
            metrics: Arc::default(),
            status: watch::channel(ReflectorStatus::default()).0,
            tap: None,
            initial_list: InitialListMode::default(),
            _object: std::marker::PhantomData,
        }
    }

    /// How each round gets its initial state (a watch-list by default; see [`InitialListMode`]).
    pub fn with_initial_list(mut self, mode: InitialListMode) -> Self {
        self.initial_list = mode;
        self
    }

    /// Records raw watch events, relists and errors into `tap`.
    pub fn with_tap(mut self, tap: Tap) -> Self {
        self.tap = Some(tap);
        self
    }

    pub fn with_backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// Page size of lists; 0 lists in one request.
    pub fn with_page_size(mut self, page_size: u32) -> Self {
        self.page_size = page_size;
        self
    }

    pub fn metrics(&self) -> Arc<ReflectorMetrics> {
        self.metrics.clone()
    }

    pub fn status(&self) -> watch::Receiver<ReflectorStatus> {
        self.status.subscribe()
    }

    /// client-go's `Run`: list-and-watch rounds separated by backoff, until cancelled.
    pub async fn run(mut self, cancel: CancellationToken) {
        loop {
            let round = tokio::select! {
                () = cancel.cancelled() => return,
                round = self.list_and_watch() => round,
            };
            if let Err(err) = round {
                bump(&self.metrics.errors);
                tracing::warn!(resource = %self.resource, error = %err, "list and watch failed");
                self.tap_message(
                    if err.is_expired() {
                        TapKind::Expired
                    } else {
                        TapKind::Error
                    },
                    err.to_string(),
                );
                let err = Arc::new(err);
                self.status.send_modify(|s| {
                    s.last_error = Some(err);
                    s.failed_rounds += 1;
                });
            }
            tokio::select! {
                () = cancel.cancelled() => return,
                () = self.back_off() => {}
            }
        }
    }

    /// Waits the next backoff delay, saying in the status and the tap (WARN) since when the
    /// Reflector has not been watching, why, and when it tries again.
    async fn back_off(&mut self) {
        let delay = self.backoff.next_delay();
        let now = SystemTime::now();
        let retry_at = now + delay;
        self.status.send_modify(|s| {
            s.phase = ReflectorPhase::BackingOff;
            s.not_watching_since.get_or_insert(now);
            s.next_retry_at = Some(retry_at);
        });
        let status = self.status.borrow().clone();
        let since = status
            .not_watching_since
            .and_then(|since| now.duration_since(since).ok())
            .unwrap_or_default();
        let why = status
            .last_error
            .as_ref()
            .map(|e| format!(": {e}"))
            .unwrap_or_default();
        let message = format!(
            "backing off, not watching for {:.1}s after {} failed attempt(s) in a row{why}; next retry in {:.1}s",
            since.as_secs_f64(),
            status.failed_rounds,
            delay.as_secs_f64(),
        );
        tracing::warn!(resource = %self.resource, "{message}");
        self.tap_message(TapKind::Health(HealthLevel::Warn), message);
        tokio::time::sleep(delay).await;
        self.status.send_modify(|s| s.next_retry_at = None);
    }

    /// The Reflector watches (again): said in the status and, after a time without
    /// watching, in the tap (INFO).
    fn watching(&self) {
        let mut was_not_watching = None;
        self.status.send_if_modified(|s| {
            if s.phase == ReflectorPhase::Watching {
                return false;
            }
            was_not_watching = s.not_watching_since.take();
            s.phase = ReflectorPhase::Watching;
            s.next_retry_at = None;
            true
        });
        let Some(since) = was_not_watching else {
            return;
        };
        let after = SystemTime::now()
            .duration_since(since)
            .unwrap_or_default()
            .as_secs_f64();
        let message = format!(
            "synced and watching from resourceVersion {}, after {after:.1}s not watching",
            self.last_sync_resource_version
        );
        tracing::info!(resource = %self.resource, "{message}");
        self.tap_message(TapKind::Health(HealthLevel::Info), message);
    }

    /// The Reflector stops watching to list: the status says since when.
    fn listing(&self) {
        let now = SystemTime::now();
        self.status.send_modify(|s| {
            s.phase = ReflectorPhase::Listing {
                pages: 0,
                objects: 0,
            };
            s.not_watching_since.get_or_insert(now);
        });
    }

    /// client-go's ListAndWatch: a watch-list that goes on as the watch, or where it cannot
    /// be had, a list and then a watch.
    async fn list_and_watch(&mut self) -> Result<(), ReflectorError> {
        let streamed = match self.initial_list {
            InitialListMode::WatchList => self.watch_list().await?,
            InitialListMode::List => None,
        };
        if streamed.is_none() {
            self.list().await?;
            if self.initial_list == InitialListMode::List {
                self.status.send_modify(|s| {
                    s.initial_list = Some(InitialListStatus {
                        mode: InitialListMode::List,
                        fallback_reason: None,
                    })
                });
            }
        }
        self.watch(streamed).await
    }

    /// client-go's `relistResourceVersion`.
    fn relist_resource_version(&self) -> String {
        if self.resource_version_unavailable {
            // A consistent read from etcd: the RV we had is gone or not yet served.
            String::new()
        } else if self.last_sync_resource_version.is_empty() {
            // The first list may be served from the watch cache.
            "0".to_string()
        } else {
            self.last_sync_resource_version.clone()
        }
    }

    async fn list(&mut self) -> Result<(), ReflectorError> {
        bump(&self.metrics.lists);
        self.undecodable = 0;
        let resource_version = self.relist_resource_version();
        let listed = match self.list_pages(&resource_version).await {
            Err(err) if err.is_too_large_resource_version() => {
                self.server_changed(ServerChange::ResourceVersionTooLarge { resource_version });
                self.undecodable = 0;
                let fresh = self.relist_resource_version();
                self.list_pages(&fresh).await?
            }
            Err(err) if err.is_expired() => {
                bump(&self.metrics.expired);
                self.tap_message(
                    TapKind::Expired,
                    format!("list at resourceVersion {resource_version:?}: {err}"),
                );
                self.resource_version_unavailable = true;
                self.undecodable = 0;
                let fresh = self.relist_resource_version();
                self.list_pages(&fresh).await?
            }
            other => other?,
        };
        let (mut items, list_resource_version) = listed;
        let before = items.len();
        items.retain(|obj| meta_namespace_key(obj.as_ref()).is_ok());
        self.count_malformed(before - items.len());
        let objects = items.len();
        tracing::info!(resource = %self.resource, objects, resource_version = %list_resource_version, "listed");
        if let Err(err) = self.store.replace(items, &list_resource_version) {
            tracing::error!(resource = %self.resource, error = %err, "store refused a list of keyed objects");
        }
        let relisted = format!("{objects} objects at resourceVersion {list_resource_version}");
        self.synced_state(list_resource_version, objects, relisted, None);
        Ok(())
    }

    /// The store holds a whole state of `objects` objects at `resource_version`, from a list
    /// or a watch-list's initial events: watches go on from there, and from the server that
    /// sent it. The tap says so in `relisted`; `initial_list` says how the state came, where
    /// the status is to say it now.
    fn synced_state(
        &mut self,
        resource_version: String,
        objects: usize,
        relisted: String,
        initial_list: Option<InitialListStatus>,
    ) {
        self.last_sync_resource_version = resource_version;
        self.resource_version_unavailable = false;
        // A state that another server sent is that server's, right as it is; the change is
        // still worth saying.
        if let Some(change) = self.certificate_change() {
            self.note_server_change(change);
        }
        self.listed_from = self.lister_watcher.server_identity();
        self.tap_message(TapKind::Relist { objects }, relisted);
        let rv = self.last_sync_resource_version.clone();
        let undecodable = self.undecodable;
        self.status.send_modify(|s| {
            s.last_sync_resource_version = rv;
            s.listed = true;
            s.last_error = None;
            s.failed_rounds = 0;
            s.undecodable_in_last_list = undecodable;
            if initial_list.is_some() {
                s.initial_list = initial_list;
            }
        });
    }

    /// Lists in pages (client-go's pager). A 410 on a continuation page falls back to one
    /// full list at the same resourceVersion.
    async fn list_pages(
        &mut self,
        resource_version: &str,
    ) -> Result<(Vec<Arc<T>>, String), ListWatchError> {
        let page_size =
            if self.paginated_result || resource_version.is_empty() || resource_version == "0" {
                self.page_size
            } else {
                // Without a paged answer before, an unpaged list can be served from the cache.
                0
            };
        let mut params = ListParams {
            resource_version: resource_version.to_string(),
            limit: (page_size > 0).then_some(page_size),
            continue_token: None,
        };
        let mut items = Vec::new();
        let mut pages = 0u64;
        self.listing();
        loop {
            let page = match self.lister_watcher.list(&params).await {
                Ok(page) => page,
                Err(err) if err.is_expired() && params.continue_token.is_some() => {
                    bump(&self.metrics.expired);
                    self.tap_message(
                        TapKind::Expired,
                        format!("continue token expired, listing in full: {err}"),
                    );
                    let full = ListParams {
                        resource_version: resource_version.to_string(),
                        limit: None,
                        continue_token: None,
                    };
                    items.clear();
                    let page = self.lister_watcher.list(&full).await?;
                    self.count_malformed(page.malformed.len());
                    self.extend_listed(&mut items, page.items);
                    return Ok((items, page.resource_version));
                }
                Err(err) => return Err(err),
            };
            pages += 1;
            bump(&self.metrics.list_pages);
            self.count_malformed(page.malformed.len());
            self.extend_listed(&mut items, page.items);
            let objects = items.len() as u64;
            self.status
                .send_modify(|s| s.phase = ReflectorPhase::Listing { pages, objects });
            match page.continue_token {
                Some(token) => {
                    if resource_version == "0" {
                        self.paginated_result = true;
                    }
                    // The server refuses a resourceVersion together with a continue token.
                    params.resource_version.clear();
                    params.continue_token = Some(token);
                }
                None => return Ok((items, page.resource_version)),
            }
        }
    }

    /// Listed objects join `items` page by page, each as the store's own copy when it holds
    /// the same state (see [`ReflectorStore::known_copy`]): a decoded duplicate is dropped
    /// with its page instead of living until Replace.
    fn extend_listed(&self, items: &mut Vec<Arc<T>>, page: Vec<Arc<T>>) {
        items.extend(page.into_iter().map(|obj| {
            meta_namespace_key(obj.as_ref())
                .ok()
                .and_then(|key| self.store.known_copy(&key, &obj))
                .unwrap_or(obj)
        }));
    }

    fn count_malformed(&mut self, n: usize) {
        self.undecodable += n as u64;
        if n > 0 {
            self.metrics
                .decode_errors
                .fetch_add(n as u64, Ordering::Relaxed);
            self.tap_message(
                TapKind::Error,
                format!("{n} list items did not decode and were skipped"),
            );
        }
    }

    /// Watches from the last synced resourceVersion until the watch cannot go on. A clean end
    /// re-watches without relisting; an error returns so the caller relists.
    /// `streamed` is a watch-list's stream past its initial state, to go on with first.
    async fn watch(
        &mut self,
        mut streamed: Option<watch_list::Streamed<T>>,
    ) -> Result<(), ReflectorError> {
        loop {
            if let Some(watch_list::Streamed {
                stream,
                started,
                events,
            }) = streamed.take()
            {
                self.watching();
                match self.handle_watch(stream, started, events).await {
                    Ok(()) => continue,
                    Err(err) => {
                        self.note_watch_error(&err);
                        return Err(err);
                    }
                }
            }
            let params = WatchParams {
                resource_version: self.last_sync_resource_version.clone(),
                timeout: self.watch_timeout(),
                allow_bookmarks: true,
                send_initial_events: false,
            };
            let started = Instant::now();
            let stream = match self.lister_watcher.watch(&params).await {
                Ok(stream) => stream,
                Err(err) if err.is_connection_refused() || err.is_too_many_requests() => {
                    tracing::debug!(resource = %self.resource, error = %err, "watch refused; backing off");
                    let err = Arc::new(ReflectorError::from(err));
                    self.status.send_modify(|s| {
                        s.last_error = Some(err);
                        s.failed_rounds += 1;
                    });
                    self.back_off().await;
                    continue;
                }
                Err(err) => {
                    let err = ReflectorError::from(err);
                    self.note_watch_error(&err);
                    return Err(err);
                }
            };
            bump(&self.metrics.watches);
            if let Some(change) = self.certificate_change() {
                self.server_changed(change.clone());
                return Err(ReflectorError::ServerChanged {
                    resource: self.resource.clone(),
                    change,
                });
            }
            tracing::debug!(resource = %self.resource, resource_version = %params.resource_version, "watching");
            self.tap_record(
                TapKind::WatchStart,
                TapRecord {
                    resource_version: Some(params.resource_version.clone()),
                    ..TapRecord::default()
                },
            );
            self.watching();
            match self.handle_watch(stream, started, 0).await {
                Ok(()) => continue,
                Err(err) if matches!(&err, ReflectorError::ListWatch(e) if e.is_too_many_requests()) =>
                {
                    let err = Arc::new(err);
                    self.status.send_modify(|s| {
                        s.last_error = Some(err);
                        s.failed_rounds += 1;
                    });
                    self.back_off().await;
                    continue;
                }
                Err(err) => {
                    self.note_watch_error(&err);
                    return Err(err);
                }
            }
        }
    }

    /// A random timeout between the minimum and twice it.
    fn watch_timeout(&self) -> Duration {
        let jitter = rand::rng().random_range(0.0..1.0);
        self.min_watch_timeout + self.min_watch_timeout.mul_f64(jitter)
    }

    /// `events` were already received on this stream (a watch-list's initial state).
    /// The server that answered the watch is not the one the store was listed from. (Among
    /// the API servers of one HA cluster, each with its own certificate, this costs a relist
    /// when a reconnect lands on another one: a relist is always safe, a merge of two
    /// clusters never is.)
    fn certificate_change(&self) -> Option<ServerChange> {
        let from = self.listed_from.clone()?;
        let to = self.lister_watcher.server_identity()?;
        (from != to).then_some(ServerChange::CertificateChanged { from, to })
    }

    /// Counts a watch that ended in an error, and makes the next list a consistent read
    /// when the error shows the server is not the one the store came from.
    fn note_watch_error(&mut self, err: &ReflectorError) {
        if err.is_expired() {
            bump(&self.metrics.expired);
        }
        if err.is_too_large_resource_version() {
            self.server_changed(ServerChange::ResourceVersionTooLarge {
                resource_version: self.last_sync_resource_version.clone(),
            });
        }
    }

    /// The server is not the one the store came from: the next list reads from scratch
    /// (resourceVersion ""), and the reason is kept in the status and the tap.
    fn server_changed(&mut self, change: ServerChange) {
        self.resource_version_unavailable = true;
        // Whatever the store came from, the relist replaces it, and is not another change.
        self.listed_from = None;
        self.note_server_change(change);
    }

    /// Says (log, tap, status) that the server is not the one the store came from.
    fn note_server_change(&self, change: ServerChange) {
        tracing::warn!(resource = %self.resource, reason = %change, "not the server the store came from; the store is relisted from the new one");
        self.tap_message(
            TapKind::Error,
            format!("not the server the store came from ({change}): the store is relisted from the new one"),
        );
        self.status.send_modify(|s| {
            s.server_changed = Some(change);
            s.server_changes += 1;
        });
    }

    /// client-go's `watch` past the intake: every change to the store, in order, with the
    /// resourceVersion it leaves the store at, until the stream ends or cannot go on.
    async fn handle_watch(
        &mut self,
        mut stream: WatchStream<T>,
        started: Instant,
        mut events: u64,
    ) -> Result<(), ReflectorError> {
        while let Some(item) = stream.next().await {
            // The key is made only for a tap (most informers have none): the store makes its own.
            let Intake { event, .. } = self.intake(item, false)?;
            events += 1;
            let resource_version = event.resource_version().map(str::to_string);
            if let Some(rv) = &resource_version
                && went_back(&self.last_sync_resource_version, rv)
            {
                self.server_changed(ServerChange::ResourceVersionWentBack {
                    from: self.last_sync_resource_version.clone(),
                    to: rv.clone(),
                });
                return Err(ReflectorError::ResourceVersionWentBack {
                    resource: self.resource.clone(),
                    from: self.last_sync_resource_version.clone(),
                    to: rv.clone(),
                });
            }
            let stored = match event {
                Watched::Added(obj) => self.store.add(obj),
                Watched::Modified(obj) => self.store.update(obj),
                Watched::Deleted(obj) => self.store.delete(obj),
                Watched::Bookmark {
                    resource_version, ..
                } => {
                    self.store.bookmark(&resource_version);
                    Ok(())
                }
            };
            if let Err(err) = stored {
                bump(&self.metrics.decode_errors);
                tracing::warn!(resource = %self.resource, error = %err, "skipped a watch event for an object without a key");
            }
            if let Some(rv) = resource_version {
                // Moves with every event: readers see it when they next look, and none is
                // woken for it (a wake-up per event, for a number shown at most per frame).
                self.status.send_if_modified(|s| {
                    s.last_sync_resource_version.clone_from(&rv);
                    false
                });
                self.last_sync_resource_version = rv;
            }
        }
        if events == 0 && started.elapsed() < VERY_SHORT_WATCH {
            return Err(ReflectorError::VeryShortWatch {
                resource: self.resource.clone(),
            });
        }
        Ok(())
    }

    /// What every watch event goes through first, whether the watch follows a list or is a
    /// watch-list (as client-go's `handleAnyWatch` serves both): counted, recorded in the
    /// tap, and an event that does not decode or an ERROR event ends the watch. The object's
    /// key is made when `keyed` asks for it or the tap records it.
    fn intake(
        &self,
        item: Result<RawWatchEvent<T>, ListWatchError>,
        keyed: bool,
    ) -> Result<Intake<T>, ReflectorError> {
        let raw = match item {
            Ok(raw) => raw,
            // client-go's StreamWatcher ends the watch on an event it cannot decode, and
            // the Reflector relists: skipping it could lose a delete for good (the next
            // event moves the resourceVersion past it), and the store would keep a ghost.
            Err(err @ ListWatchError::MalformedEvent(_)) => {
                bump(&self.metrics.decode_errors);
                return Err(err.into());
            }
            Err(err) => return Err(err.into()),
        };
        bump(&self.metrics.watch_events);
        let event = match raw.event {
            WatchEvent::Added(obj) => Watched::Added(obj),
            WatchEvent::Modified(obj) => Watched::Modified(obj),
            WatchEvent::Deleted(obj) => Watched::Deleted(obj),
            WatchEvent::Bookmark {
                resource_version,
                initial_events_end,
            } => {
                bump(&self.metrics.bookmarks);
                Watched::Bookmark {
                    resource_version,
                    initial_events_end,
                }
            }
            WatchEvent::Error(status) => {
                self.tap_record(
                    TapKind::Watch(WatchEventType::Error),
                    TapRecord {
                        raw: Some(raw.raw_object),
                        ..TapRecord::default()
                    },
                );
                return Err(ListWatchError::Api {
                    verb: "watch",
                    resource: self.resource.clone(),
                    status,
                }
                .into());
            }
        };
        let key = if keyed || self.tap.is_some() {
            event
                .object()
                .and_then(|obj| meta_namespace_key(obj.as_ref()).ok())
        } else {
            None
        };
        if let Some(tap) = &self.tap {
            tap.record(
                TapKind::Watch(event.event_type()),
                TapRecord {
                    key: key.clone(),
                    resource_version: event.resource_version().map(str::to_string),
                    raw: Some(raw.raw_object),
                    message: None,
                },
            );
        }
        Ok(Intake { event, key })
    }

    fn tap_record(&self, kind: TapKind, record: TapRecord) {
        if let Some(tap) = &self.tap {
            tap.record(kind, record);
        }
    }

    fn tap_message(&self, kind: TapKind, message: String) {
        self.tap_record(
            kind,
            TapRecord {
                message: Some(message),
                resource_version: Some(self.last_sync_resource_version.clone())
                    .filter(|rv| !rv.is_empty()),
                ..TapRecord::default()
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use bytes::Bytes;
    use futures::stream;
    use kube_core::Status;
    use parking_lot::Mutex;

    use super::*;
    use crate::keys::{Key, KeyError};
    use crate::lister_watcher::{ListPage, RawWatchEvent};
    use crate::testing::{TestObj, obj};

    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Call {
        List(ListParams),
        Watch { resource_version: String },
        WatchList { resource_version: String },
    }

    enum WatchScript {
        Fail(ListWatchError),
        /// The events, then the stream closes (`true`) or stays open.
        Events(Vec<Result<RawWatchEvent<TestObj>, ListWatchError>>, bool),
    }

    type ListResult = Result<ListPage<TestObj>, ListWatchError>;

    #[derive(Clone, Default)]
    struct FakeServer {
        calls: Arc<Mutex<Vec<(Instant, Call)>>>,
        lists: Arc<Mutex<VecDeque<ListResult>>>,
        watches: Arc<Mutex<VecDeque<WatchScript>>>,
        watch_timeouts: Arc<Mutex<Vec<Duration>>>,
        /// Who answers each call in turn; the last one keeps answering.
        identities: Arc<Mutex<VecDeque<ServerIdentity>>>,
        identity: Arc<Mutex<Option<ServerIdentity>>>,
    }

    impl FakeServer {
        fn list_ok(&self, rv: &str, continue_token: Option<&str>, objs: &[Arc<TestObj>]) {
            self.lists.lock().push_back(Ok(ListPage {
                items: objs.to_vec(),
                resource_version: rv.into(),
                continue_token: continue_token.map(str::to_string),
                malformed: Vec::new(),
            }));
        }

        fn list_err(&self, err: ListWatchError) {
            self.lists.lock().push_back(Err(err));
        }

        fn watch(&self, script: WatchScript) {
            self.watches.lock().push_back(script);
        }

        fn calls(&self) -> Vec<Call> {
            self.calls.lock().iter().map(|(_, c)| c.clone()).collect()
        }

        fn answered_by(&self, servers: &[&str]) {
            self.identities
                .lock()
                .extend(servers.iter().map(|s| ServerIdentity(s.to_string())));
        }

        fn next_identity(&self) {
            if let Some(next) = self.identities.lock().pop_front() {
                *self.identity.lock() = Some(next);
            }
        }
    }

    impl ListerWatcher<TestObj> for FakeServer {
        async fn list(&self, params: &ListParams) -> Result<ListPage<TestObj>, ListWatchError> {
            self.next_identity();
            self.calls
                .lock()
                .push((Instant::now(), Call::List(params.clone())));
            let next = self.lists.lock().pop_front();
            match next {
                Some(result) => result,
                None => std::future::pending().await,
            }
        }

        async fn watch(
            &self,
            params: &WatchParams,
        ) -> Result<WatchStream<TestObj>, ListWatchError> {
            assert!(params.allow_bookmarks);
            self.watch_timeouts.lock().push(params.timeout);
            self.next_identity();
            let resource_version = params.resource_version.clone();
            let call = if params.send_initial_events {
                Call::WatchList { resource_version }
            } else {
                Call::Watch { resource_version }
            };
            self.calls.lock().push((Instant::now(), call));
            let next = self.watches.lock().pop_front();
            match next {
                Some(WatchScript::Fail(err)) => Err(err),
                Some(WatchScript::Events(events, true)) => Ok(stream::iter(events).boxed()),
                Some(WatchScript::Events(events, false)) => {
                    Ok(stream::iter(events).chain(stream::pending()).boxed())
                }
                None => std::future::pending().await,
            }
        }

        fn server_identity(&self) -> Option<ServerIdentity> {
            self.identity.lock().clone()
        }
    }

    /// Records what the Reflector did to its store; `streaming` takes a watch-list's state
    /// object by object.
    #[derive(Clone, Default)]
    struct RecordingStore(Arc<Mutex<Vec<String>>>, bool);

    impl RecordingStore {
        fn streaming() -> Self {
            Self(Arc::default(), true)
        }

        fn ops(&self) -> Vec<String> {
            self.0.lock().clone()
        }
    }

    impl ReflectorStore<TestObj> for RecordingStore {
        fn add(&self, o: Arc<TestObj>) -> Result<(), KeyError> {
            self.0
                .lock()
                .push(format!("add {} {}", o.name, o.resource_version));
            Ok(())
        }
        fn update(&self, o: Arc<TestObj>) -> Result<(), KeyError> {
            self.0
                .lock()
                .push(format!("update {} {}", o.name, o.resource_version));
            Ok(())
        }
        fn delete(&self, o: Arc<TestObj>) -> Result<(), KeyError> {
            self.0
                .lock()
                .push(format!("delete {} {}", o.name, o.resource_version));
            Ok(())
        }
        fn replace(&self, list: Vec<Arc<TestObj>>, rv: &str) -> Result<(), KeyError> {
            let names: Vec<&str> = list.iter().map(|o| o.name.as_str()).collect();
            self.0
                .lock()
                .push(format!("replace [{}] {rv}", names.join(",")));
            Ok(())
        }
        fn resync(&self) -> Result<(), KeyError> {
            Ok(())
        }
        fn streams_listed(&self) -> bool {
            self.1
        }
        fn add_listed(&self, objs: Vec<(Key, Arc<TestObj>)>) {
            let mut log = self.0.lock();
            for (_, o) in objs {
                log.push(format!("listed {} {}", o.name, o.resource_version));
            }
        }
        fn finish_listed(&self, listed: &crate::delta_fifo::Listed, rv: &str) {
            let crate::delta_fifo::Listed::Keys(listed) = listed else {
                panic!("this store knows objects: the Reflector must list their keys");
            };
            let mut keys: Vec<&str> = listed.iter().map(|k| &k["ns/".len()..]).collect();
            keys.sort();
            self.0
                .lock()
                .push(format!("finish [{}] {rv}", keys.join(",")));
        }
    }

    fn api_error(code: u16, reason: &str) -> ListWatchError {
        ListWatchError::Api {
            verb: "list",
            resource: "pods".into(),
            status: Box::new(Status::failure("test", reason).with_code(code)),
        }
    }

    fn event(event: WatchEvent<TestObj>) -> Result<RawWatchEvent<TestObj>, ListWatchError> {
        Ok(RawWatchEvent {
            event,
            raw_object: Bytes::from_static(b"{}"),
        })
    }

    fn list(rv: &str, limit: Option<u32>, continue_token: Option<&str>) -> Call {
        Call::List(ListParams {
            resource_version: rv.into(),
            limit,
            continue_token: continue_token.map(str::to_string),
        })
    }

    fn watch(rv: &str) -> Call {
        Call::Watch {
            resource_version: rv.into(),
        }
    }

    struct Running {
        store: RecordingStore,
        metrics: Arc<ReflectorMetrics>,
        status: watch::Receiver<ReflectorStatus>,
        tap: Tap,
        cancel: CancellationToken,
    }

    /// A Reflector that lists, as client-go did before the watch-list.
    fn start(server: &FakeServer) -> Running {
        start_with(server, InitialListMode::List, RecordingStore::default())
    }

    fn start_with(server: &FakeServer, mode: InitialListMode, store: RecordingStore) -> Running {
        let tap = Tap::new(100, Some);
        let reflector = Reflector::new("pods", server.clone(), store.clone())
            .with_tap(tap.clone())
            .with_initial_list(mode);
        let running = Running {
            store,
            metrics: reflector.metrics(),
            status: reflector.status(),
            tap,
            cancel: CancellationToken::new(),
        };
        tokio::spawn(reflector.run(running.cancel.clone()));
        running
    }

    async fn settle() {
        tokio::time::sleep(Duration::from_secs(1)).await;
    }

    #[tokio::test(start_paused = true)]
    async fn first_list_pages_from_rv_zero_then_watches_from_the_list_rv() {
        let server = FakeServer::default();
        server.list_ok("10", Some("c1"), &[obj("ns/a", 3, ""), obj("ns/b", 4, "")]);
        server.list_ok("10", None, &[obj("ns/c", 9, "")]);
        server.watch(WatchScript::Events(
            vec![
                event(WatchEvent::Added(obj("ns/d", 11, ""))),
                event(WatchEvent::Bookmark {
                    resource_version: "12".into(),
                    initial_events_end: false,
                }),
                event(WatchEvent::Modified(obj("ns/a", 13, ""))),
                event(WatchEvent::Deleted(obj("ns/b", 14, ""))),
            ],
            false,
        ));
        let running = start(&server);
        settle().await;
        assert_eq!(
            server.calls(),
            [
                list("0", Some(500), None),
                list("", Some(500), Some("c1")),
                watch("10")
            ]
        );
        assert_eq!(
            running.store.ops(),
            [
                "replace [a,b,c] 10",
                "add d 11",
                "update a 13",
                "delete b 14"
            ]
        );
        let timeout = server.watch_timeouts.lock()[0];
        assert!(timeout >= Duration::from_secs(300) && timeout < Duration::from_secs(600));
        let status = running.status.borrow().clone();
        assert_eq!(status.last_sync_resource_version, "14");
        assert_eq!(status.phase, ReflectorPhase::Watching);
        let metrics = running.metrics.snapshot();
        assert_eq!(
            (metrics.lists, metrics.list_pages, metrics.bookmarks),
            (1, 2, 1)
        );
        let kinds: Vec<&str> = running
            .tap
            .snapshot()
            .iter()
            .map(|e| e.kind.label())
            .collect();
        assert_eq!(
            kinds,
            [
                "RELIST", "WATCH", "HEALTH", "ADDED", "BOOKMARK", "MODIFIED", "DELETED"
            ]
        );
        running.cancel.cancel();
    }

    #[tokio::test(start_paused = true)]
    async fn watch_410_relists_at_the_last_rv_and_a_410_there_reads_consistently() {
        let server = FakeServer::default();
        server.list_ok("10", None, &[obj("ns/a", 10, "")]);
        server.watch(WatchScript::Events(
            vec![
                event(WatchEvent::Added(obj("ns/b", 11, ""))),
                event(WatchEvent::Error(Box::new(
                    Status::failure("too old resource version", "Expired").with_code(410),
                ))),
            ],
            true,
        ));
        server.list_err(api_error(410, "Expired"));
        server.list_ok("20", None, &[obj("ns/b", 20, "")]);
        let running = start(&server);
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert_eq!(
            server.calls(),
            [
                list("0", Some(500), None),
                watch("10"),
                // Not paged before: relist unpaged at the last RV seen...
                list("11", None, None),
                // ...which is gone too: a consistent read.
                list("", Some(500), None),
                watch("20"),
            ]
        );
        assert_eq!(
            running.store.ops(),
            ["replace [a] 10", "add b 11", "replace [b] 20"]
        );
        assert_eq!(running.metrics.snapshot().expired, 2);
        assert!(
            running
                .tap
                .snapshot()
                .iter()
                .any(|e| e.kind == TapKind::Expired)
        );
        running.cancel.cancel();
    }

    #[tokio::test(start_paused = true)]
    async fn expired_continue_token_falls_back_to_a_full_list() {
        let server = FakeServer::default();
        server.list_ok("10", Some("c1"), &[obj("ns/a", 1, "")]);
        server.list_err(api_error(410, "Expired"));
        server.list_ok("10", None, &[obj("ns/a", 1, ""), obj("ns/b", 2, "")]);
        let running = start(&server);
        settle().await;
        assert_eq!(
            server.calls(),
            [
                list("0", Some(500), None),
                list("", Some(500), Some("c1")),
                list("0", None, None),
                watch("10"),
            ]
        );
        assert_eq!(running.store.ops(), ["replace [a,b] 10"]);
        running.cancel.cancel();
    }

    #[tokio::test(start_paused = true)]
    async fn paged_first_list_makes_relists_page_too() {
        let server = FakeServer::default();
        server.list_ok("10", Some("c1"), &[obj("ns/a", 1, "")]);
        server.list_ok("10", None, &[]);
        server.watch(WatchScript::Fail(api_error(410, "Gone")));
        server.list_ok("15", None, &[]);
        let running = start(&server);
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert_eq!(
            server.calls(),
            [
                list("0", Some(500), None),
                list("", Some(500), Some("c1")),
                watch("10"),
                list("10", Some(500), None),
                watch("15"),
            ]
        );
        running.cancel.cancel();
    }

    #[tokio::test(start_paused = true)]
    async fn clean_end_of_watch_rewatches_from_the_last_rv_without_relisting() {
        let server = FakeServer::default();
        server.list_ok("10", None, &[]);
        server.watch(WatchScript::Events(
            vec![event(WatchEvent::Added(obj("ns/a", 11, "")))],
            true,
        ));
        server.watch(WatchScript::Events(
            vec![event(WatchEvent::Bookmark {
                resource_version: "15".into(),
                initial_events_end: false,
            })],
            true,
        ));
        let running = start(&server);
        settle().await;
        assert_eq!(
            server.calls(),
            [
                list("0", Some(500), None),
                watch("10"),
                watch("11"),
                watch("15")
            ]
        );
        running.cancel.cancel();
    }

    #[tokio::test(start_paused = true)]
    async fn very_short_empty_watch_is_a_failure_then_backoff_and_relist() {
        let server = FakeServer::default();
        server.list_ok("10", None, &[]);
        server.watch(WatchScript::Events(vec![], true));
        server.list_ok("12", None, &[]);
        let running = start(&server);
        tokio::time::sleep(Duration::from_secs(5)).await;
        let calls = server.calls.lock().clone();
        assert_eq!(
            calls.iter().map(|(_, c)| c.clone()).collect::<Vec<_>>(),
            [
                list("0", Some(500), None),
                watch("10"),
                list("10", None, None),
                watch("12")
            ]
        );
        let waited = calls[2].0 - calls[1].0;
        assert!(
            waited >= Duration::from_millis(800) && waited < Duration::from_millis(1600),
            "backed off {waited:?}"
        );
        let error = running.status.borrow().last_error.clone();
        assert!(error.is_none(), "a later successful list clears the error");
        assert_eq!(running.metrics.snapshot().errors, 1);
        running.cancel.cancel();
    }

    #[tokio::test(start_paused = true)]
    async fn watch_429_backs_off_and_retries_the_watch_without_relisting() {
        let server = FakeServer::default();
        server.list_ok("10", None, &[]);
        server.watch(WatchScript::Fail(api_error(429, "TooManyRequests")));
        server.watch(WatchScript::Fail(api_error(429, "TooManyRequests")));
        let running = start(&server);
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert_eq!(
            server.calls(),
            [
                list("0", Some(500), None),
                watch("10"),
                watch("10"),
                watch("10")
            ]
        );
        let calls = server.calls.lock().clone();
        assert!(calls[2].0 - calls[1].0 >= Duration::from_millis(800));
        assert!(calls[3].0 - calls[2].0 >= Duration::from_millis(1600));
        running.cancel.cancel();
    }

    /// A delete that cannot be decoded must not be lost: the watch ends, and the relist's
    /// Replace removes what the server no longer has.
    #[tokio::test(start_paused = true)]
    async fn a_malformed_event_ends_the_watch_and_relists() {
        let server = FakeServer::default();
        server.list_ok("10", None, &[obj("ns/a", 9, ""), obj("ns/b", 9, "")]);
        server.watch(WatchScript::Events(
            vec![
                event(WatchEvent::Modified(obj("ns/b", 11, ""))),
                Err(ListWatchError::MalformedEvent(
                    "expected value at line 1".into(),
                )),
                event(WatchEvent::Added(obj("ns/c", 13, ""))),
            ],
            false,
        ));
        server.list_ok("13", None, &[obj("ns/b", 11, ""), obj("ns/c", 13, "")]);
        let running = start(&server);
        // Past the backoff (800 ms, jittered) before the relist.
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert_eq!(
            running.store.ops(),
            ["replace [a,b] 10", "update b 11", "replace [b,c] 13"],
            "nothing after the malformed event is applied; the relist is"
        );
        assert_eq!(
            server.calls(),
            [
                list("0", Some(500), None),
                watch("10"),
                list("11", None, None),
                watch("13")
            ]
        );
        assert_eq!(running.metrics.snapshot().decode_errors, 1);
        running.cancel.cancel();
    }

    /// A server whose resourceVersions go back is another server (or a restored one): its
    /// events are not merged into the store; it is relisted with a consistent read.
    #[tokio::test(start_paused = true)]
    async fn a_resource_version_going_back_relists_from_scratch() {
        let server = FakeServer::default();
        server.list_ok("4688", None, &[obj("ns/old", 4000, "")]);
        server.watch(WatchScript::Events(
            vec![event(WatchEvent::Added(obj("ns/new", 120, "")))],
            false,
        ));
        server.list_ok("130", None, &[obj("ns/new", 120, "")]);
        let running = start(&server);
        // Past the backoff (800 ms, jittered) before the relist.
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert_eq!(
            running.store.ops(),
            ["replace [old] 4688", "replace [new] 130"],
            "the older server's event is not applied"
        );
        assert_eq!(
            server.calls(),
            [
                list("0", Some(500), None),
                watch("4688"),
                list("", Some(500), None),
                watch("130")
            ]
        );
        running.cancel.cancel();
    }

    /// The Status kube-apiserver sends for a resourceVersion it has not reached.
    fn too_large(requested: u64, current: u64) -> Box<Status> {
        serde_json::from_value(serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": format!("Timeout: Too large resource version: {requested}, current: {current}"),
            "reason": "Timeout", "code": 504,
            "details": {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}], "retryAfterSeconds": 1}
        }))
        .unwrap()
    }

    /// A server that has not reached the store's resourceVersion (restarted with less
    /// history, or another one) answers the watch with 504: the store is relisted with a
    /// consistent read (client-go's isTooLargeResourceVersionError), not at the RV it lacks,
    /// and the status says why.
    #[tokio::test(start_paused = true)]
    async fn a_too_large_resource_version_on_watch_relists_from_scratch() {
        let server = FakeServer::default();
        server.list_ok("4688", None, &[obj("ns/old", 4000, "")]);
        server.watch(WatchScript::Fail(ListWatchError::Api {
            verb: "watch",
            resource: "pods".into(),
            status: too_large(4688, 130),
        }));
        server.list_ok("130", None, &[obj("ns/new", 120, "")]);
        // The same answer as an ERROR event of an open watch.
        server.watch(WatchScript::Events(
            vec![event(WatchEvent::Error(too_large(130, 20)))],
            false,
        ));
        server.list_ok("25", None, &[obj("ns/newer", 21, "")]);
        let running = start(&server);
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert_eq!(
            server.calls(),
            [
                list("0", Some(500), None),
                watch("4688"),
                list("", Some(500), None),
                watch("130"),
                list("", Some(500), None),
                watch("25"),
            ]
        );
        assert_eq!(
            running.store.ops(),
            [
                "replace [old] 4688",
                "replace [new] 130",
                "replace [newer] 25"
            ]
        );
        let status = running.status.borrow().clone();
        assert_eq!(status.server_changes, 2);
        assert_eq!(
            status.server_changed,
            Some(ServerChange::ResourceVersionTooLarge {
                resource_version: "130".into()
            })
        );
        assert!(
            running.tap.snapshot().iter().any(|e| e
                .message
                .as_deref()
                .is_some_and(|m| m.contains("not the server the store came from"))),
            "the tap says why the store was relisted"
        );
        running.cancel.cancel();
    }

    /// A watch answered by a server with another certificate than the list's is not
    /// followed: the store is relisted from scratch from the new server.
    #[tokio::test(start_paused = true)]
    async fn another_certificate_after_a_reconnect_relists_from_scratch() {
        let server = FakeServer::default();
        server.answered_by(&["sha256:aaaa", "sha256:aaaa", "sha256:bbbb"]);
        server.list_ok("10", None, &[obj("ns/a", 10, "")]);
        server.watch(WatchScript::Events(
            vec![event(WatchEvent::Added(obj("ns/b", 11, "")))],
            true,
        ));
        // Never read: the watch is refused for its certificate.
        server.watch(WatchScript::Events(
            vec![event(WatchEvent::Added(obj("ns/ghost", 12, "")))],
            false,
        ));
        server.list_ok("20", None, &[obj("ns/c", 15, "")]);
        let running = start(&server);
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert_eq!(
            server.calls(),
            [
                list("0", Some(500), None),
                watch("10"),
                watch("11"),
                list("", Some(500), None),
                watch("20"),
            ]
        );
        assert_eq!(
            running.store.ops(),
            ["replace [a] 10", "add b 11", "replace [c] 20"]
        );
        let status = running.status.borrow().clone();
        assert_eq!(
            status.server_changed,
            Some(ServerChange::CertificateChanged {
                from: ServerIdentity("sha256:aaaa".into()),
                to: ServerIdentity("sha256:bbbb".into()),
            })
        );
        assert_eq!(status.server_changes, 1);
        running.cancel.cancel();
    }

    /// Backing off and watching again are health entries in the tap (WARN with why, since
    /// when and the next retry; INFO when it watches again), and the status says since when
    /// it has not watched and when it retries.
    #[tokio::test(start_paused = true)]
    async fn health_changes_are_in_the_tap_and_the_status() {
        let server = FakeServer::default();
        server.list_err(api_error(500, "InternalError"));
        server.list_ok("7", None, &[obj("ns/a", 7, "")]);
        server.watch(WatchScript::Events(vec![], false));
        let mut running = start(&server);
        running
            .status
            .wait_for(|s| s.phase == ReflectorPhase::BackingOff)
            .await
            .unwrap();
        let backing_off = running.status.borrow().clone();
        assert!(backing_off.not_watching_since.is_some());
        let retry = backing_off.next_retry_at.expect("a next retry time");
        let wait = retry
            .duration_since(backing_off.not_watching_since.unwrap())
            .unwrap();
        assert!(wait >= Duration::from_millis(800), "{wait:?}");
        running
            .status
            .wait_for(|s| s.phase == ReflectorPhase::Watching)
            .await
            .unwrap();
        let watching = running.status.borrow().clone();
        assert_eq!(
            (watching.not_watching_since, watching.next_retry_at),
            (None, None)
        );
        let health: Vec<(HealthLevel, String)> = running
            .tap
            .snapshot()
            .iter()
            .filter_map(|e| match e.kind {
                TapKind::Health(level) => Some((level, e.message.clone().unwrap_or_default())),
                _ => None,
            })
            .collect();
        assert_eq!(health.len(), 2, "{health:?}");
        assert_eq!(health[0].0, HealthLevel::Warn);
        assert!(
            health[0].1.contains("after 1 failed attempt(s) in a row: list pods: test (500 InternalError); next retry in"),
            "{}",
            health[0].1
        );
        assert_eq!(health[1].0, HealthLevel::Info);
        assert!(
            health[1]
                .1
                .starts_with("synced and watching from resourceVersion 7, after"),
            "{}",
            health[1].1
        );
        running.cancel.cancel();
    }

    #[tokio::test(start_paused = true)]
    async fn failing_list_is_reported_and_retried_with_backoff() {
        let server = FakeServer::default();
        server.list_err(api_error(403, "Forbidden"));
        server.list_err(api_error(500, "InternalError"));
        server.list_ok("7", None, &[obj("ns/a", 7, "")]);
        let mut running = start(&server);
        running
            .status
            .wait_for(|s| s.last_error.is_some())
            .await
            .unwrap();
        let error = running.status.borrow().last_error.clone().unwrap();
        assert_eq!(error.to_string(), "list pods: test (403 Forbidden)");
        running.status.wait_for(|s| s.listed).await.unwrap();
        assert_eq!(running.store.ops(), ["replace [a] 7"]);
        let calls = server.calls.lock().clone();
        assert!(calls[1].0 - calls[0].0 >= Duration::from_millis(800));
        assert!(calls[2].0 - calls[1].0 >= Duration::from_millis(1600));
        running.cancel.cancel();
    }

    fn watch_list(rv: &str) -> Call {
        Call::WatchList {
            resource_version: rv.into(),
        }
    }

    fn end_marker(rv: &str) -> Result<RawWatchEvent<TestObj>, ListWatchError> {
        event(WatchEvent::Bookmark {
            resource_version: rv.into(),
            initial_events_end: true,
        })
    }

    /// The state streams in object by object, the end marker completes it, and the same
    /// stream goes on as the watch.
    #[tokio::test(start_paused = true)]
    async fn watch_list_streams_the_state_then_goes_on_watching_the_same_stream() {
        let server = FakeServer::default();
        server.watch(WatchScript::Events(
            vec![
                event(WatchEvent::Added(obj("ns/a", 3, ""))),
                event(WatchEvent::Added(obj("ns/b", 4, ""))),
                event(WatchEvent::Added(obj("ns/gone", 5, ""))),
                event(WatchEvent::Deleted(obj("ns/gone", 5, ""))),
                end_marker("10"),
                event(WatchEvent::Modified(obj("ns/a", 11, ""))),
            ],
            false,
        ));
        let running = start_with(
            &server,
            InitialListMode::WatchList,
            RecordingStore::streaming(),
        );
        settle().await;
        assert_eq!(server.calls(), [watch_list("")], "one request, no list");
        assert_eq!(
            running.store.ops(),
            [
                "listed a 3",
                "listed b 4",
                "listed gone 5",
                "finish [a,b] 10",
                "update a 11"
            ]
        );
        let status = running.status.borrow().clone();
        assert!(status.listed);
        assert_eq!(status.last_sync_resource_version, "11");
        assert_eq!(
            status.initial_list,
            Some(InitialListStatus {
                mode: InitialListMode::WatchList,
                fallback_reason: None
            })
        );
        assert_eq!(status.phase, ReflectorPhase::Watching);
        running.cancel.cancel();
    }

    /// A store that takes only whole states gets one Replace at the end marker, as
    /// client-go's temporary store hands it.
    #[tokio::test(start_paused = true)]
    async fn watch_list_into_a_store_that_does_not_stream_is_one_replace() {
        let server = FakeServer::default();
        server.watch(WatchScript::Events(
            vec![
                event(WatchEvent::Added(obj("ns/a", 3, ""))),
                event(WatchEvent::Added(obj("ns/b", 4, ""))),
                event(WatchEvent::Modified(obj("ns/a", 6, ""))),
                end_marker("10"),
            ],
            false,
        ));
        let running = start_with(
            &server,
            InitialListMode::WatchList,
            RecordingStore::default(),
        );
        settle().await;
        assert_eq!(running.store.ops(), ["replace [a,b] 10"]);
        running.cancel.cancel();
    }

    /// A server with the WatchList feature off refuses it: this round lists, and says why.
    #[tokio::test(start_paused = true)]
    async fn a_refused_watch_list_falls_back_to_list_and_records_why() {
        let server = FakeServer::default();
        server.watch(WatchScript::Fail(api_error(422, "Invalid")));
        server.list_ok("10", None, &[obj("ns/a", 1, "")]);
        let running = start_with(
            &server,
            InitialListMode::WatchList,
            RecordingStore::streaming(),
        );
        settle().await;
        assert_eq!(
            server.calls(),
            [watch_list(""), list("0", Some(500), None), watch("10")]
        );
        assert_eq!(running.store.ops(), ["replace [a] 10"]);
        let initial = running.status.borrow().initial_list.clone().unwrap();
        assert_eq!(initial.mode, InitialListMode::List);
        let reason = initial.fallback_reason.unwrap();
        assert!(reason.contains("422"), "{reason}");
        running.cancel.cancel();
    }

    /// A server that ignores sendInitialEvents sends a plain bookmark: fall back.
    #[tokio::test(start_paused = true)]
    async fn an_ignored_watch_list_falls_back_to_list() {
        let server = FakeServer::default();
        server.watch(WatchScript::Events(
            vec![event(WatchEvent::Bookmark {
                resource_version: "9".into(),
                initial_events_end: false,
            })],
            false,
        ));
        server.list_ok("10", None, &[]);
        let running = start_with(
            &server,
            InitialListMode::WatchList,
            RecordingStore::streaming(),
        );
        settle().await;
        assert_eq!(
            server.calls(),
            [watch_list(""), list("0", Some(500), None), watch("10")]
        );
        let reason = running
            .status
            .borrow()
            .initial_list
            .clone()
            .unwrap()
            .fallback_reason;
        assert!(reason.unwrap().contains("ignores sendInitialEvents"));
        running.cancel.cancel();
    }

    /// After a 410 the watch-list asks again from "" (a consistent read) without listing; a
    /// second 410 in the round falls back.
    #[tokio::test(start_paused = true)]
    async fn an_expired_watch_list_retries_from_scratch_then_falls_back() {
        let server = FakeServer::default();
        server.watch(WatchScript::Events(
            vec![
                end_marker("10"),
                event(WatchEvent::Error(Box::new(
                    Status::failure("too old resource version", "Expired").with_code(410),
                ))),
            ],
            true,
        ));
        server.watch(WatchScript::Fail(api_error(410, "Expired")));
        server.watch(WatchScript::Fail(api_error(410, "Expired")));
        server.list_ok("20", None, &[]);
        let running = start_with(
            &server,
            InitialListMode::WatchList,
            RecordingStore::streaming(),
        );
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert_eq!(
            server.calls(),
            [
                watch_list(""),
                watch_list("10"),
                watch_list(""),
                list("", Some(500), None),
                watch("20")
            ]
        );
        running.cancel.cancel();
    }

    /// A 429 is waited out and the watch-list asked again.
    #[tokio::test(start_paused = true)]
    async fn a_throttled_watch_list_backs_off_and_retries() {
        let server = FakeServer::default();
        server.watch(WatchScript::Fail(api_error(429, "TooManyRequests")));
        server.watch(WatchScript::Events(vec![end_marker("5")], false));
        let running = start_with(
            &server,
            InitialListMode::WatchList,
            RecordingStore::streaming(),
        );
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert_eq!(server.calls(), [watch_list(""), watch_list("")]);
        let calls = server.calls.lock().clone();
        assert!(calls[1].0 - calls[0].0 >= Duration::from_millis(800));
        assert_eq!(running.store.ops(), ["finish [] 5"]);
        running.cancel.cancel();
    }

    /// A stream cut before its end marker is retried, up to three times in a round; then
    /// the round lists.
    #[tokio::test(start_paused = true)]
    async fn a_watch_list_cut_before_its_end_three_times_falls_back() {
        let server = FakeServer::default();
        for _ in 0..3 {
            server.watch(WatchScript::Events(
                vec![event(WatchEvent::Added(obj("ns/a", 3, "")))],
                true,
            ));
        }
        server.list_ok("10", None, &[obj("ns/a", 3, "")]);
        let running = start_with(
            &server,
            InitialListMode::WatchList,
            RecordingStore::streaming(),
        );
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert_eq!(
            server.calls(),
            [
                watch_list(""),
                watch_list(""),
                watch_list(""),
                list("0", Some(500), None),
                watch("10")
            ]
        );
        let reason = running
            .status
            .borrow()
            .initial_list
            .clone()
            .unwrap()
            .fallback_reason;
        assert!(reason.unwrap().contains("3 times"));
        running.cancel.cancel();
    }
}
