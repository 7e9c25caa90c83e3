//! [`KubeListerWatcher`]: the Reflector's lists and watches over kube's HTTP client.
//!
//! It builds the requests itself on kube's `Client` (kube's `Api` drops `resourceVersion=0`
//! when `limit` is set, and decodes full objects) and decodes each item straight into the
//! stored type (see [`super::wire`]), skipping malformed items and events instead of failing.

use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures::{Stream, StreamExt};
use http_body_util::BodyExt;
use kube::core::Status;
use parking_lot::Mutex;

use super::cluster::{Cluster, CredentialPluginFailed, NamespaceScope};
pub use super::limits::WireLimits;
use super::printer_columns::{client_columns, crd_path};
use super::table_form::{TABLE_ACCEPT, decode_table_list, learn_columns, row_object};
use super::transport::PeerCertificate;
use super::wire::{decode_list, decode_watch_line, peek_continue_token};
use kscope_informers::lister_watcher::{
    BoxError, ListPage, ListParams, ListWatchError, ListerWatcher, RawWatchEvent, ServerIdentity,
    WatchEvent, WatchParams, WatchStream,
};
use kscope_resources::{
    ApiResource, ClientColumns, FieldIndexes, Kind, KubeResource, PrinterColumnCompiler,
    decoding_with, decoding_with_columns,
};

/// A [`ListerWatcher`] over kube's HTTP client, for one collection path such as
/// `/api/v1/pods` or `/apis/apps/v1/namespaces/web/deployments`.
#[derive(Clone)]
pub struct KubeListerWatcher {
    client: kube::Client,
    collection_path: String,
    /// What the resource is called in errors (`pods`, `pods in namespace web`).
    resource: String,
    label_selector: Option<String>,
    field_selector: Option<String>,
    /// The next list page, requested as soon as the current one's continue token is known.
    prefetch: Arc<Mutex<Option<Prefetch>>>,
    limits: WireLimits,
    /// The server that sent the last answer (see [`ListerWatcher::server_identity`]).
    server: ServerSeen,
    /// Lists and watches in the server's Table form, whose columns are learned into this
    /// resource, rather than as the objects alone (see [`super::table_form`]).
    table: Option<Arc<ApiResource>>,
    /// The field indexes a generic projection evaluates as it decodes each object.
    fields: Option<FieldIndexes>,
    /// For a kind that may be a custom resource: how its printer columns are compiled, to
    /// read it as plain JSON with the cells evaluated client-side rather than as a Table.
    printer_columns: Option<Arc<dyn PrinterColumnCompiler>>,
    /// How the kind is read, once its CRD (or that it has none) is known.
    form: Arc<tokio::sync::OnceCell<Form>>,
}

/// How the objects are asked for and decoded.
#[derive(Clone)]
enum Form {
    /// The objects, as plain JSON.
    Plain,
    /// The server's Table, whose columns are learned into the resource.
    Table(Arc<ApiResource>),
    /// A custom resource's objects as plain JSON, its printer columns evaluated on each.
    Custom(Arc<ClientColumns>),
}

/// Where the last response's [`PeerCertificate`] is kept.
pub(crate) type ServerSeen = Arc<Mutex<Option<ServerIdentity>>>;

/// A response that broke one of the [`WireLimits`].
#[derive(Debug, thiserror::Error)]
pub enum LimitError {
    #[error("a watch event longer than {limit} bytes (--max-watch-event)")]
    WatchLineTooLong { limit: usize },
    #[error("a list body larger than {limit} bytes (--max-list-body)")]
    ListBodyTooLarge { limit: usize },
    #[error("the server sent no response headers for {}s (--list-stall-timeout)", .after.as_secs())]
    NoResponseHeaders { after: Duration },
    #[error("the list response stalled: nothing for {}s (--list-stall-timeout)", .after.as_secs())]
    ListStalled { after: Duration },
    #[error("the list response took longer than {}s (--list-timeout)", .after.as_secs())]
    ListTooSlow { after: Duration },
    #[error("the watch-list sent no event for {}s before its initial state ended (--list-stall-timeout)", .after.as_secs())]
    WatchListStalled { after: Duration },
    #[error("the watch-list sent no initial-events-end bookmark within {}s (--list-timeout)", .after.as_secs())]
    WatchListTooSlow { after: Duration },
}

/// A list page being fetched ahead for the request `uri`. Dropping it cancels the fetch.
struct Prefetch {
    uri: String,
    body: tokio::task::JoinHandle<Result<Vec<u8>, ListWatchError>>,
}

impl Drop for Prefetch {
    fn drop(&mut self) {
        self.body.abort();
    }
}

impl KubeListerWatcher {
    pub fn new(
        client: kube::Client,
        collection_path: impl Into<String>,
        resource: impl Into<String>,
    ) -> Self {
        Self {
            client,
            collection_path: collection_path.into(),
            resource: resource.into(),
            label_selector: None,
            field_selector: None,
            prefetch: Arc::default(),
            limits: WireLimits::default(),
            server: Arc::default(),
            table: None,
            fields: None,
            printer_columns: None,
            form: Arc::default(),
        }
    }

    /// Reads a custom resource as plain JSON, its CRD's printer columns compiled with
    /// `compiler` and evaluated on each object, rather than in Table form; any other kind
    /// (and a custom resource whose CRD cannot be read) keeps the Table form.
    pub fn with_printer_columns(mut self, compiler: Arc<dyn PrinterColumnCompiler>) -> Self {
        self.printer_columns = Some(compiler);
        self
    }

    /// Evaluates `fields` on each object it decodes (an empty list: nothing to evaluate).
    pub fn with_field_indexes(mut self, fields: FieldIndexes) -> Self {
        self.fields = (!fields.is_empty()).then_some(fields);
        self
    }

    /// Lists and watches in Table form, learning the server's columns into `resource`.
    pub fn as_table(mut self, resource: Arc<ApiResource>) -> Self {
        self.table = Some(resource);
        self
    }

    pub fn with_limits(mut self, limits: WireLimits) -> Self {
        self.limits = limits;
        self
    }

    /// A lister-watcher for `kind` in `scope`, named for messages (`pods in namespace web`).
    /// A discovered kind is listed and watched in Table form, for its server-side columns;
    /// [`KubeListerWatcher::with_printer_columns`] reads custom resources as plain JSON.
    pub fn for_kind(
        cluster: &Cluster,
        kind: impl Into<Kind>,
        scope: &NamespaceScope,
        label_selector: Option<String>,
        field_selector: Option<String>,
    ) -> Self {
        let kind = kind.into();
        let namespace = if kind.namespaced() {
            scope.namespace()
        } else {
            None
        };
        let resource = match namespace {
            Some(ns) => format!("{kind} in namespace {ns}"),
            None => kind.to_string(),
        };
        let lister_watcher = Self::new(cluster.client.clone(), kind.list_path(namespace), resource)
            .with_limits(cluster.limits)
            .with_label_selector(label_selector)
            .with_field_selector(field_selector);
        match kind {
            Kind::Api(resource) => lister_watcher.as_table(resource),
            Kind::BuiltIn(_) => lister_watcher,
        }
    }

    pub fn with_label_selector(mut self, selector: Option<String>) -> Self {
        self.label_selector = selector.filter(|s| !s.is_empty());
        self
    }

    pub fn with_field_selector(mut self, selector: Option<String>) -> Self {
        self.field_selector = selector.filter(|s| !s.is_empty());
        self
    }

    /// How the kind is read: decided once, by reading its CRD when it may have one.
    async fn form(&self) -> Result<Form, ListWatchError> {
        let (Some(resource), Some(compiler)) = (&self.table, &self.printer_columns) else {
            return Ok(match &self.table {
                Some(resource) => Form::Table(resource.clone()),
                None => Form::Plain,
            });
        };
        self.form
            .get_or_try_init(|| self.read_crd(resource, compiler.as_ref()))
            .await
            .cloned()
    }

    /// The form of `resource` as its CRD says: plain JSON with its printer columns, or the
    /// Table form when it has no CRD (404), the user may not read it (403), or its columns
    /// cannot be evaluated here. Any other failure is the list's, retried as lists are.
    async fn read_crd(
        &self,
        resource: &Arc<ApiResource>,
        compiler: &dyn PrinterColumnCompiler,
    ) -> Result<Form, ListWatchError> {
        let table = Form::Table(resource.clone());
        let Some(path) = crd_path(resource) else {
            return Ok(table);
        };
        let request = http::Request::get(&path)
            .header(http::header::ACCEPT, "application/json")
            .body(Vec::new())
            .map_err(|source| ListWatchError::InvalidRequest {
                verb: "list",
                resource: self.resource.clone(),
                source,
            })?;
        let body = fetch_body(
            self.client.clone(),
            request,
            self.resource.clone(),
            self.limits,
            self.server.clone(),
        )
        .await;
        let body = match body {
            Ok(body) => body,
            Err(ListWatchError::Api { status, .. }) if [403, 404].contains(&status.code) => {
                tracing::debug!(resource = %self.resource, code = status.code, "no CRD read: listed in Table form");
                return Ok(table);
            }
            Err(other) => return Err(other),
        };
        match client_columns(&body, resource, compiler, self.fields.clone()) {
            Ok(columns) => Ok(Form::Custom(columns)),
            Err(error) => {
                tracing::warn!(resource = %self.resource, %error, "printer columns not evaluated here: listed in Table form");
                Ok(table)
            }
        }
    }

    fn request(
        &self,
        form: &Form,
        query: &[(&str, &str)],
    ) -> Result<http::Request<Vec<u8>>, http::Error> {
        let mut params = form_urlencoded::Serializer::new(String::new());
        params.extend_pairs(query);
        if matches!(form, Form::Table(_)) {
            // The whole object in each row: its conditions give the health column.
            params.append_pair("includeObject", "Object");
        }
        if let Some(selector) = &self.label_selector {
            params.append_pair("labelSelector", selector);
        }
        if let Some(selector) = &self.field_selector {
            params.append_pair("fieldSelector", selector);
        }
        let params = params.finish();
        let url = if params.is_empty() {
            self.collection_path.clone()
        } else {
            format!("{}?{params}", self.collection_path)
        };
        let accept = match form {
            Form::Table(_) => TABLE_ACCEPT,
            Form::Plain | Form::Custom(_) => "application/json",
        };
        http::Request::get(url)
            .header(http::header::ACCEPT, accept)
            .body(Vec::new())
    }

    fn error(&self, verb: &'static str, err: kube::Error) -> ListWatchError {
        kube_error(&self.resource, verb, err)
    }

    fn list_request(
        &self,
        form: &Form,
        params: &ListParams,
    ) -> Result<http::Request<Vec<u8>>, ListWatchError> {
        let limit = params.limit.map(|l| l.to_string());
        let mut query: Vec<(&str, &str)> = Vec::new();
        if !params.resource_version.is_empty() {
            query.push(("resourceVersion", &params.resource_version));
        }
        if let Some(limit) = &limit {
            query.push(("limit", limit));
        }
        if let Some(token) = &params.continue_token {
            query.push(("continue", token));
        }
        self.request(form, &query)
            .map_err(|source| ListWatchError::InvalidRequest {
                verb: "list",
                resource: self.resource.clone(),
                source,
            })
    }

    /// One list page exactly as the server sent it, as plain JSON: for `kscope record`, which
    /// keeps every object whole where the projections and the Table form keep parts.
    pub async fn list_raw(&self, params: &ListParams) -> Result<Vec<u8>, ListWatchError> {
        let request = self.list_request(&Form::Plain, params)?;
        self.list_body(request).await
    }

    /// The body for `request`: the prefetched one if it is for this very request, else a
    /// fresh GET.
    async fn list_body(&self, request: http::Request<Vec<u8>>) -> Result<Vec<u8>, ListWatchError> {
        let uri = request.uri().to_string();
        let prefetched = self.prefetch.lock().take().filter(|p| p.uri == uri);
        if let Some(mut prefetched) = prefetched
            && let Ok(body) = (&mut prefetched.body).await
        {
            return body;
        }
        fetch_body(
            self.client.clone(),
            request,
            self.resource.clone(),
            self.limits,
            self.server.clone(),
        )
        .await
    }

    /// client-go's pager asks for the next page with the continue token, no
    /// resourceVersion and the same limit as soon as it has a page: that request is sent
    /// now, so that the server prepares it while this page is decoded.
    fn prefetch_next(&self, form: &Form, params: &ListParams, body: &[u8]) {
        let Some(token) = peek_continue_token(body) else {
            return;
        };
        let next = ListParams {
            resource_version: String::new(),
            limit: params.limit,
            continue_token: Some(token),
        };
        let Ok(request) = self.list_request(form, &next) else {
            return;
        };
        let uri = request.uri().to_string();
        let body = tokio::spawn(fetch_body(
            self.client.clone(),
            request,
            self.resource.clone(),
            self.limits,
            self.server.clone(),
        ));
        *self.prefetch.lock() = Some(Prefetch { uri, body });
    }
}

fn kube_error(resource: &str, verb: &'static str, err: kube::Error) -> ListWatchError {
    match err {
        kube::Error::Api(status) => ListWatchError::Api {
            verb,
            resource: resource.to_string(),
            status,
        },
        kube::Error::SerdeError(e) => ListWatchError::MalformedResponse {
            verb,
            resource: resource.to_string(),
            source: e.into(),
        },
        other => ListWatchError::Transport {
            verb,
            resource: resource.to_string(),
            connection_refused: is_connection_refused(&other),
            // A credential plugin that fails when a token is refreshed is said plainly.
            source: match CredentialPluginFailed::of(&other) {
                Some(plugin) => plugin.into(),
                None => other.into(),
            },
        },
    }
}

/// GETs a list body as bytes: `request_text` would copy it twice and validate it as UTF-8,
/// which the JSON decoder does anyway.
async fn fetch_body(
    client: kube::Client,
    request: http::Request<Vec<u8>>,
    resource: String,
    limits: WireLimits,
    server: ServerSeen,
) -> Result<Vec<u8>, ListWatchError> {
    let error = |e| kube_error(&resource, "list", e);
    // A response that is too slow or too large is a transport failure, not a malformed one:
    // said as what it is, and retried as any.
    let limit = |e: LimitError| ListWatchError::Transport {
        verb: "list",
        resource: resource.clone(),
        source: e.into(),
        connection_refused: false,
    };
    let read = async {
        // A server that never sends the response headers is bounded like one that stops
        // sending the body.
        let mut frames =
            tokio::time::timeout(limits.list_stall, body_frames(&client, request, &server))
                .await
                .map_err(|_| {
                    limit(LimitError::NoResponseHeaders {
                        after: limits.list_stall,
                    })
                })?
                .map_err(error)?;
        let mut body = Vec::new();
        loop {
            let frame = tokio::time::timeout(limits.list_stall, frames.next())
                .await
                .map_err(|_| {
                    limit(LimitError::ListStalled {
                        after: limits.list_stall,
                    })
                })?;
            let Some(frame) = frame else {
                return Ok(body);
            };
            let frame = frame.map_err(error)?;
            if body.len() + frame.len() > limits.max_list_body {
                return Err(limit(LimitError::ListBodyTooLarge {
                    limit: limits.max_list_body,
                }));
            }
            body.extend_from_slice(&frame);
        }
    };
    tokio::time::timeout(limits.list_deadline, read)
        .await
        .unwrap_or_else(|_| {
            Err(limit(LimitError::ListTooSlow {
                after: limits.list_deadline,
            }))
        })
}

/// Sends `request` and returns its body as the frames the connection delivered, or the API's
/// error, for lists, watches and logs alike; notes in `server` which server answered. kube's `request_stream` does the same behind a reader,
/// which watches would copy every line out of; its error mapping is private, so it is
/// repeated here.
pub(crate) async fn body_frames(
    client: &kube::Client,
    request: http::Request<Vec<u8>>,
    server: &ServerSeen,
) -> Result<impl Stream<Item = Result<Bytes, kube::Error>> + Unpin + use<>, kube::Error> {
    let response = client.send(request.map(kube::client::Body::from)).await?;
    if let Some(peer) = response.extensions().get::<PeerCertificate>() {
        *server.lock() = Some(ServerIdentity(peer.0.clone()));
    }
    let code = response.status();
    if code.is_redirection() {
        // An API server never redirects; a proxy or a wrong URL does. Said as what it is,
        // rather than as the JSON error its HTML body would give.
        let location = response
            .headers()
            .get(http::header::LOCATION)
            .and_then(|l| l.to_str().ok())
            .unwrap_or("nowhere given")
            .to_string();
        let status = Status::failure(
            &format!("the server answered with a redirect to {location}, which an API server never sends: is the kubeconfig's server URL right?"),
            "Redirect",
        )
        .with_code(code.as_u16());
        return Err(kube::Error::Api(Box::new(status)));
    }
    if code.is_client_error() || code.is_server_error() {
        let body = response.into_body().collect().await?.to_bytes();
        // Not every error body is a Status: a proxy may answer in plain text or HTML.
        let status = serde_json::from_slice::<Status>(&body).unwrap_or_else(|_| {
            let text = String::from_utf8_lossy(&body);
            Status::failure(text.trim(), "Failed to parse error data").with_code(code.as_u16())
        });
        return Err(kube::Error::Api(Box::new(status)));
    }
    Ok(response.into_body().into_data_stream())
}

/// Splits a watch body into lines. A line within one body frame is a slice of that frame,
/// not a copy; only a line cut across frames is put together in `partial`.
struct WatchLines<S> {
    frames: S,
    /// What is left of the current frame.
    current: Bytes,
    /// The start of a line whose end is in a later frame.
    partial: BytesMut,
    /// The body ended or failed: no more lines, even if polled again.
    ended: bool,
    /// A line longer than this is an error, so a line with no end cannot take all memory.
    max_line: usize,
}

/// Why a watch body gave no more lines.
#[derive(Debug)]
enum LineError {
    Body(kube::Error),
    TooLong(LimitError),
}

impl<S: Stream<Item = Result<Bytes, kube::Error>> + Unpin> WatchLines<S> {
    fn new(frames: S, max_line: usize) -> Self {
        Self {
            frames,
            current: Bytes::new(),
            partial: BytesMut::new(),
            ended: false,
            max_line,
        }
    }

    /// Ends the body at a line past the cap, freeing what it held.
    fn too_long(&mut self) -> LineError {
        self.ended = true;
        self.partial = BytesMut::new();
        self.current = Bytes::new();
        LineError::TooLong(LimitError::WatchLineTooLong {
            limit: self.max_line,
        })
    }

    /// The next line with its newline (without one at the end of the body); `None` at the
    /// end of the body and after an error.
    async fn next_line(&mut self) -> Option<Result<Bytes, LineError>> {
        while !self.ended {
            if let Some(end) = memchr::memchr(b'\n', &self.current) {
                // The cap is on the line without its newline, wherever the line was cut.
                if self.partial.len() + end > self.max_line {
                    return Some(Err(self.too_long()));
                }
                let line = self.current.split_to(end + 1);
                if self.partial.is_empty() {
                    return Some(Ok(line));
                }
                self.partial.extend_from_slice(&line);
                return Some(Ok(self.partial.split().freeze()));
            }
            if self.partial.len() + self.current.len() > self.max_line {
                return Some(Err(self.too_long()));
            }
            self.partial
                .extend_from_slice(&std::mem::take(&mut self.current));
            match self.frames.next().await {
                Some(Ok(frame)) => self.current = frame,
                Some(Err(e)) => {
                    // The cut line is not a line.
                    self.ended = true;
                    self.partial.clear();
                    return Some(Err(LineError::Body(e)));
                }
                None => {
                    self.ended = true;
                    return (!self.partial.is_empty()).then(|| Ok(self.partial.split().freeze()));
                }
            }
        }
        None
    }
}

/// A watch body being read: its lines, and until a watch-list's initial state has ended,
/// the list bounds it is held to.
struct WatchState<S> {
    lines: WatchLines<S>,
    initial: Option<InitialStateBound>,
    /// A bound was broken and said: the stream ends.
    failed: bool,
}

/// A watch-list's initial state is due within `--list-timeout` in all, with no gap longer
/// than `--list-stall-timeout`, as a list's response is.
struct InitialStateBound {
    stall: Duration,
    total: Duration,
    deadline: tokio::time::Instant,
}

impl InitialStateBound {
    fn new(limits: &WireLimits) -> Self {
        Self {
            stall: limits.list_stall,
            total: limits.list_deadline,
            deadline: tokio::time::Instant::now() + limits.list_deadline,
        }
    }

    /// How long to wait for the next line, and which bound waiting longer breaks.
    fn next_wait(&self) -> (Duration, LimitError) {
        let left = self
            .deadline
            .saturating_duration_since(tokio::time::Instant::now());
        if left < self.stall {
            (left, LimitError::WatchListTooSlow { after: self.total })
        } else {
            (
                self.stall,
                LimitError::WatchListStalled { after: self.stall },
            )
        }
    }
}

/// Whether a transport error comes down to a refused connection.
fn is_connection_refused(err: &kube::Error) -> bool {
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        if cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
        {
            return true;
        }
        source = cause.source();
    }
    false
}

impl<T> ListerWatcher<T> for KubeListerWatcher
where
    T: KubeResource,
{
    async fn list(&self, params: &ListParams) -> Result<ListPage<T>, ListWatchError> {
        let form = self.form().await?;
        let request = self.list_request(&form, params)?;
        let body = self.list_body(request).await?;
        self.prefetch_next(&form, params, &body);
        // Decoding a page takes milliseconds: off the runtime's threads, so that the next
        // page's request and response move meanwhile.
        let fields = self.fields.clone();
        let decoded = tokio::task::spawn_blocking(move || match form {
            Form::Table(resource) => {
                decoding_with(fields.as_ref(), || decode_table_list::<T>(&body, &resource))
            }
            Form::Plain => decoding_with(fields.as_ref(), || decode_list::<T>(&body)),
            Form::Custom(columns) => {
                decoding_with_columns(Some(&columns), || decode_list::<T>(&body))
            }
        })
        .await;
        let malformed = |source: BoxError| ListWatchError::MalformedResponse {
            verb: "list",
            resource: self.resource.clone(),
            source,
        };
        let page = decoded
            .map_err(|e| malformed(e.into()))?
            .map_err(|e| malformed(e.into()))?;
        for error in &page.malformed {
            tracing::warn!(resource = %self.resource, %error, "skipped a list item that did not decode");
        }
        Ok(page)
    }

    async fn watch(&self, params: &WatchParams) -> Result<WatchStream<T>, ListWatchError> {
        let timeout = params.timeout.as_secs().max(1).to_string();
        let mut query: Vec<(&str, &str)> = vec![("watch", "true"), ("timeoutSeconds", &timeout)];
        if !params.resource_version.is_empty() {
            query.push(("resourceVersion", &params.resource_version));
        }
        if params.allow_bookmarks {
            query.push(("allowWatchBookmarks", "true"));
        }
        if params.send_initial_events {
            query.push(("sendInitialEvents", "true"));
            query.push(("resourceVersionMatch", "NotOlderThan"));
        }
        let form = self.form().await?;
        let request =
            self.request(&form, &query)
                .map_err(|source| ListWatchError::InvalidRequest {
                    verb: "watch",
                    resource: self.resource.clone(),
                    source,
                })?;
        let limit = |resource: &str, e: LimitError| ListWatchError::Transport {
            verb: "watch",
            resource: resource.to_string(),
            source: e.into(),
            connection_refused: false,
        };
        // A watch-list stands for a list until its initial state ends, so it is held to a
        // list's bounds: a server that accepts it and never delivers its state has the
        // Reflector fall back to a list (client-go leans on the watch's timeoutSeconds, which
        // such a server ignores as well).
        let initial = params
            .send_initial_events
            .then(|| InitialStateBound::new(&self.limits));
        let frames = body_frames(&self.client, request, &self.server);
        let frames = match &initial {
            Some(bound) => tokio::time::timeout(bound.stall, frames)
                .await
                .map_err(|_| {
                    limit(
                        &self.resource,
                        LimitError::NoResponseHeaders { after: bound.stall },
                    )
                })?,
            None => frames.await,
        }
        .map_err(|e| self.error("watch", e))?;
        let resource = self.resource.clone();
        let fields = self.fields.clone();
        let idle = self.limits.watch_idle;
        let state = WatchState {
            lines: WatchLines::new(frames, self.limits.max_watch_line),
            initial,
            failed: false,
        };
        let lines = futures::stream::unfold(state, move |mut state| {
            let resource = resource.clone();
            let form = form.clone();
            let fields = fields.clone();
            async move {
                if state.failed {
                    return None;
                }
                loop {
                    let (wait, broken) = match &state.initial {
                        Some(bound) => {
                            let (wait, broken) = bound.next_wait();
                            (wait, Some(broken))
                        }
                        None => (idle, None),
                    };
                    let Ok(next) = tokio::time::timeout(wait, state.lines.next_line()).await else {
                        if let Some(broken) = broken {
                            state.failed = true;
                            return Some((Err(limit(&resource, broken)), state));
                        }
                        // Not even a bookmark for minutes: the connection may be dead without
                        // a reset. A clean end, so the Reflector re-watches from where it was.
                        tracing::info!(%resource, idle_s = idle.as_secs(), "watch idle; restarting it");
                        return None;
                    };
                    match next {
                        None => return None,
                        Some(Ok(line)) if line.iter().all(|b| b" \t\r\n".contains(b)) => continue,
                        Some(Ok(line)) => {
                            let mut event = match &form {
                                Form::Custom(columns) => {
                                    decoding_with_columns(Some(columns), || {
                                        decode_watch_line::<T>(&line)
                                    })
                                }
                                _ => {
                                    decoding_with(fields.as_ref(), || decode_watch_line::<T>(&line))
                                }
                            };
                            if let (Form::Table(api), Ok(event)) = (&form, &mut event) {
                                // The tap keeps the object, not the Table around it.
                                learn_columns(&event.raw_object, api);
                                event.raw_object = row_object(&event.raw_object);
                            }
                            // The body ended inside a line that does not decode: a cut, which
                            // ends the watch as a clean close does (client-go's StreamWatcher
                            // stops on an unexpected EOF without reporting an error), not a
                            // malformed event.
                            if event.is_err() && !line.ends_with(b"\n") {
                                tracing::debug!(%resource, "watch stream ended inside an event");
                                return None;
                            }
                            if let Ok(RawWatchEvent {
                                event:
                                    WatchEvent::Bookmark {
                                        initial_events_end: true,
                                        ..
                                    },
                                ..
                            }) = &event
                            {
                                // From here on an ordinary watch, bounded as one.
                                state.initial = None;
                            }
                            return Some((event, state));
                        }
                        // Past the cap, the watch fails: the Reflector relists.
                        Some(Err(LineError::TooLong(limit))) => {
                            let error = ListWatchError::MalformedResponse {
                                verb: "watch",
                                resource: resource.clone(),
                                source: limit.into(),
                            };
                            return Some((Err(error), state));
                        }
                        // A connection cut mid-stream ends the watch like a clean close: the
                        // Reflector re-watches from the last resourceVersion it saw.
                        Some(Err(LineError::Body(e))) => {
                            tracing::debug!(%resource, error = %e, "watch stream ended");
                            return None;
                        }
                    }
                }
            }
        });
        Ok(lines.boxed())
    }

    fn server_identity(&self) -> Option<ServerIdentity> {
        self.server.lock().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kscope_informers::object::Object as _;
    use kscope_resources::{GenericObject, PrinterColumn, Reach, Timestamp};

    /// A printer column of the test's own: the string at `/spec/<member>`.
    struct SpecMember(String, Reach);

    impl PrinterColumn for SpecMember {
        fn reach(&self) -> &Reach {
            &self.1
        }

        fn cell(&self, object: &serde_json::Value, _: Timestamp) -> Option<String> {
            Some(object.get("spec")?.get(&self.0)?.as_str()?.to_string())
        }
    }

    struct SpecMembers;

    impl PrinterColumnCompiler for SpecMembers {
        fn compile(&self, _: &str, path: &str) -> Result<Arc<dyn PrinterColumn>, String> {
            match path.strip_prefix(".spec.") {
                Some(member) => Ok(Arc::new(SpecMember(
                    member.to_string(),
                    Reach::member("spec", Reach::member(member, Reach::Whole)),
                ))),
                None => Err(format!("{path}: not a member of spec")),
            }
        }
    }

    const CRD: &str = r#"{"kind":"CustomResourceDefinition","spec":{"group":"example.com",
        "names":{"plural":"widgets"},"versions":[{"name":"v1","additionalPrinterColumns":[
        {"name":"Colour","type":"string","jsonPath":".spec.colour"},
        {"name":"Owner","type":"string","jsonPath":".spec.owner","priority":1}]}]}}"#;

    /// A server with one Widget, answering lists in either form, and the CRD when `crd` is
    /// given (else 404); the Accept of each list is noted in `accepts`.
    fn server(crd: Option<&'static str>, accepts: Arc<Mutex<Vec<String>>>) -> kube::Client {
        let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
            let accept = request
                .headers()
                .get(http::header::ACCEPT)
                .and_then(|a| a.to_str().ok())
                .unwrap_or_default()
                .to_string();
            let path = request.uri().path().to_string();
            let answer = match path.as_str() {
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com" => {
                    crd.map(str::to_string)
                }
                "/apis/example.com/v1/widgets" if accept.contains("as=Table") => {
                    accepts.lock().push(accept);
                    Some(
                        r#"{"kind":"Table","metadata":{"resourceVersion":"5"},
                        "columnDefinitions":[{"name":"Name","type":"string"}],
                        "rows":[{"cells":["w1"],"object":{"metadata":{"name":"w1"}}}]}"#
                            .to_string(),
                    )
                }
                "/apis/example.com/v1/widgets" => {
                    accepts.lock().push(accept);
                    Some(
                        r#"{"kind":"WidgetList","metadata":{"resourceVersion":"5"},
                        "items":[{"metadata":{"name":"w1","namespace":"web"},
                        "spec":{"colour":"blue","secret":"never kept"}}]}"#
                            .to_string(),
                    )
                }
                _ => None,
            };
            async move {
                let (status, body) = match answer {
                    Some(body) => (200, body),
                    None => (404, r#"{"kind":"Status","code":404}"#.to_string()),
                };
                http::Response::builder()
                    .status(status)
                    .body(http_body_util::Full::new(Bytes::from(body)))
            }
        });
        kube::Client::new(service, "default")
    }

    fn widgets() -> Arc<ApiResource> {
        Arc::new(ApiResource::new(
            "example.com",
            "v1",
            "widgets",
            "widget",
            "Widget",
            true,
            vec![],
            vec![],
            vec!["list".into(), "watch".into()],
        ))
    }

    async fn list_once(
        crd: Option<&'static str>,
    ) -> (Vec<String>, Arc<ApiResource>, Arc<GenericObject>) {
        let accepts = Arc::new(Mutex::new(Vec::new()));
        let resource = widgets();
        let lister_watcher = KubeListerWatcher::new(
            server(crd, accepts.clone()),
            "/apis/example.com/v1/widgets",
            "widgets",
        )
        .as_table(resource.clone())
        .with_printer_columns(Arc::new(SpecMembers));
        let page: ListPage<GenericObject> = lister_watcher
            .list(&ListParams::default())
            .await
            .expect("lists");
        let accepts = accepts.lock().clone();
        (accepts, resource, page.items[0].clone())
    }

    #[tokio::test]
    async fn a_custom_resource_is_listed_as_json_with_its_crds_columns_evaluated_here() {
        let (accepts, resource, w1) = list_once(Some(CRD)).await;
        assert_eq!(accepts, ["application/json"]);
        let columns: Vec<(String, i32)> = resource
            .columns()
            .iter()
            .map(|c| (c.name.clone(), c.priority))
            .collect();
        assert_eq!(
            columns,
            [
                ("Name".into(), 0),
                ("Colour".into(), 0),
                ("Owner".into(), 1)
            ]
        );
        assert_eq!(w1.name(), "w1");
        assert_eq!(w1.table_cells().collect::<Vec<_>>(), ["w1", "blue", ""]);
        assert!(w1.read_at().is_some());
        assert!(!format!("{w1:?}").contains("never kept"));
    }

    #[tokio::test]
    async fn a_kind_without_a_crd_or_with_columns_not_evaluated_here_keeps_the_table_form() {
        let (accepts, _, w1) = list_once(None).await;
        assert!(
            accepts[0].starts_with("application/json;as=Table"),
            "{accepts:?}"
        );
        assert_eq!(w1.table_cells().collect::<Vec<_>>(), ["w1"]);
        let odd = r#"{"spec":{"group":"example.com","names":{"plural":"widgets"},
            "versions":[{"name":"v1","additionalPrinterColumns":[
            {"name":"Odd","type":"string","jsonPath":"..colour"}]}]}}"#;
        let (accepts, _, _) = list_once(Some(odd)).await;
        assert!(
            accepts[0].starts_with("application/json;as=Table"),
            "{accepts:?}"
        );
    }

    async fn lines_of(frames: &[&'static [u8]]) -> (Vec<Bytes>, Vec<Bytes>) {
        let frames: Vec<Bytes> = frames.iter().map(|f| Bytes::from_static(f)).collect();
        let stream = futures::stream::iter(frames.clone().into_iter().map(Ok));
        let mut lines = WatchLines::new(stream, 1 << 20);
        let mut out = Vec::new();
        while let Some(line) = lines.next_line().await {
            out.push(line.unwrap());
        }
        (out, frames)
    }

    fn within(line: &Bytes, frame: &Bytes) -> bool {
        let range = frame.as_ptr_range();
        range.contains(&line.as_ptr()) && line.len() <= frame.len()
    }

    #[tokio::test]
    async fn lines_within_a_frame_are_slices_of_it() {
        let (lines, frames) = lines_of(&[b"{\"a\":1}\n{\"b\":2}\n", b"{\"c\":3}\n"]).await;
        assert_eq!(lines, ["{\"a\":1}\n", "{\"b\":2}\n", "{\"c\":3}\n"]);
        assert!(within(&lines[0], &frames[0]) && within(&lines[1], &frames[0]));
        assert!(within(&lines[2], &frames[1]));
    }

    #[tokio::test]
    async fn a_line_across_frames_is_joined_and_the_last_needs_no_newline() {
        let (lines, _) = lines_of(&[b"{\"a\":", b"", b"1", b"}\n{\"b\"", b":2}"]).await;
        assert_eq!(lines, ["{\"a\":1}\n", "{\"b\":2}"]);
    }

    #[tokio::test]
    async fn an_empty_body_has_no_lines() {
        assert!(lines_of(&[]).await.0.is_empty());
        assert!(lines_of(&[b""]).await.0.is_empty());
    }

    #[tokio::test]
    async fn an_error_is_passed_on_after_the_lines_before_it() {
        let frames: Vec<Result<Bytes, kube::Error>> = vec![
            Ok(Bytes::from_static(b"{}\n{\"cut")),
            Err(kube::Error::LinesCodecMaxLineLengthExceeded),
        ];
        let mut lines = WatchLines::new(futures::stream::iter(frames), 1 << 20);
        assert_eq!(lines.next_line().await.unwrap().unwrap(), "{}\n");
        assert!(lines.next_line().await.unwrap().is_err());
        assert!(lines.next_line().await.is_none(), "the cut line is dropped");
    }

    /// The cap is exact: a line of the cap's length passes, one byte more does not, whether
    /// it came in one frame or was joined across several.
    #[tokio::test]
    async fn the_cap_is_exact_for_a_line_in_one_frame_or_across_frames() {
        async fn first_line(frames: Vec<Vec<u8>>) -> Result<usize, LineError> {
            let frames = frames
                .into_iter()
                .map(|f| Ok::<_, kube::Error>(Bytes::from(f)));
            let mut lines = WatchLines::new(futures::stream::iter(frames), 100);
            lines.next_line().await.unwrap().map(|line| line.len())
        }
        let line = |n: usize| [vec![b'x'; n], b"\n{}\n".to_vec()].concat();
        assert_eq!(first_line(vec![line(100)]).await.unwrap(), 101);
        assert!(first_line(vec![line(101)]).await.is_err());
        let cut = |n: usize| {
            let whole = line(n);
            vec![whole[..60].to_vec(), whole[60..].to_vec()]
        };
        assert_eq!(first_line(cut(100)).await.unwrap(), 101);
        assert!(first_line(cut(101)).await.is_err());
    }

    /// A line with no end is cut off at the cap, not buffered until memory runs out.
    #[tokio::test]
    async fn a_line_past_the_cap_is_an_error_and_frees_what_it_held() {
        let endless = futures::stream::iter(
            (0..1_000).map(|_| Ok::<_, kube::Error>(Bytes::from_static(&[b'x'; 4096]))),
        );
        let mut lines = WatchLines::new(endless, 64 << 10);
        match lines.next_line().await {
            Some(Err(LineError::TooLong(LimitError::WatchLineTooLong { limit }))) => {
                assert_eq!(limit, 64 << 10);
            }
            other => panic!("expected the cap, got {other:?}"),
        }
        assert!(lines.partial.capacity() == 0, "the partial line is freed");
        assert!(lines.next_line().await.is_none(), "and the body ends there");
    }
}
