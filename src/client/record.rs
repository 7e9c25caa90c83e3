//! A recording of the lists and watch streams of some kinds (`kscope_informers::record`,
//! `docs/recording.md`), as the server sent them. Each kind runs an informer whose
//! lister-watcher writes down everything that crosses it, so the file holds what the
//! Reflector saw, its relists, 410s and watch restarts included. `kscope record` and the TUI's
//! record toggle both run one [`RecordingSession`], each with its own client and kinds.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use serde_json::value::RawValue;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use kscope_informers::indexer::IndexerWriter;
use kscope_informers::lister_watcher::{
    ListPage, ListParams, ListWatchError, ListerWatcher, RawWatchEvent, WatchEvent, WatchParams,
    WatchStream,
};
use kscope_informers::object::Object;
use kscope_informers::record::format::{FORMAT_VERSION, Header, Record, RecordError};
use kscope_informers::record::keyframed::KeyframedWriter;
use kscope_informers::record::object::RecordedObject;
use kscope_informers::running::{InformerConfig, RunningInformer};
use kscope_resources::{GenericObject, Kind, ResourceKind};

use crate::cluster::Cluster;
use crate::lister_watcher::KubeListerWatcher;

/// How often what is pending is written as a block, so that a crash loses at most this much.
const FLUSH_EVERY: Duration = Duration::from_secs(1);
/// The writer, shared by every kind's lister-watcher.
struct Recorder {
    inner: Mutex<Recording>,
}

struct Recording {
    writer: KeyframedWriter<BufWriter<File>>,
    /// The first write that failed: recording stops and whoever runs it reports it.
    failed: Option<RecordError>,
}

impl Recording {
    fn stats(&self) -> RecordingStats {
        RecordingStats {
            bytes: self.writer.written(),
            events: self.writer.events(),
            records: self.writer.records(),
        }
    }
}

impl Recorder {
    fn lock(&self) -> MutexGuard<'_, Recording> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn append(&self, record: Record, raw_bytes: usize) {
        let mut r = self.lock();
        if r.failed.is_some() {
            return;
        }
        if let Err(e) = r.writer.append(&record, raw_bytes, now()) {
            r.failed = Some(e);
        }
    }

    /// Writes what is pending; a failure is kept, and stops the recording's writes.
    fn flush(&self) {
        let mut r = self.lock();
        if r.failed.is_some() {
            return;
        }
        if let Err(e) = r.writer.flush() {
            r.failed = Some(e);
        }
    }
}

/// Microseconds since the epoch, now: when a record was received.
fn now() -> i64 {
    jiff::Timestamp::now().as_microsecond()
}

/// A lister-watcher that writes down what it hands the Reflector.
struct RecordingListerWatcher {
    inner: KubeListerWatcher,
    kind: String,
    /// Secrets' list items carry no `kind`: they are marked as Secrets before masking.
    secrets: bool,
    recorder: Arc<Recorder>,
}

#[derive(serde::Deserialize)]
struct RawList {
    #[serde(default)]
    metadata: RawListMeta,
    #[serde(default)]
    items: Vec<Box<RawValue>>,
}

#[derive(serde::Deserialize, Default)]
struct RawListMeta {
    #[serde(rename = "resourceVersion", default)]
    resource_version: String,
    #[serde(rename = "continue")]
    continue_token: Option<String>,
}

impl RecordingListerWatcher {
    /// What of an object may be written: a Secret with its values masked (as the tap keeps
    /// it), anything else as it came; nothing when a Secret cannot be told apart.
    fn keepable(&self, raw: &[u8]) -> Option<Box<RawValue>> {
        let bytes = if self.secrets {
            let mut object: serde_json::Value = serde_json::from_slice(raw).ok()?;
            let map = object.as_object_mut()?;
            map.entry("kind").or_insert_with(|| "Secret".into());
            map.entry("apiVersion").or_insert_with(|| "v1".into());
            Bytes::from(serde_json::to_vec(&object).ok()?)
        } else {
            Bytes::copy_from_slice(raw)
        };
        let kept = kscope_resources::secret::keepable_raw(bytes)?;
        serde_json::from_slice(&kept).ok()
    }

    fn error(&self, verb: &str, err: &ListWatchError) {
        self.recorder.append(
            Record::Error {
                kind: self.kind.clone(),
                at: now(),
                verb: verb.to_string(),
                code: err.code(),
                message: err.to_string(),
            },
            0,
        );
    }
}

/// Writes the end of a watch when the Reflector lets go of its stream, however it ends.
struct WatchEndGuard {
    kind: String,
    recorder: Arc<Recorder>,
    error: Option<String>,
}

impl Drop for WatchEndGuard {
    fn drop(&mut self) {
        self.recorder.append(
            Record::WatchEnd {
                kind: std::mem::take(&mut self.kind),
                at: now(),
                error: self.error.take(),
            },
            0,
        );
    }
}

impl ListerWatcher<RecordedObject> for RecordingListerWatcher {
    async fn list(&self, params: &ListParams) -> Result<ListPage<RecordedObject>, ListWatchError> {
        let body = self.inner.list_raw(params).await.inspect_err(|e| {
            self.error("list", e);
        })?;
        let list: RawList =
            serde_json::from_slice(&body).map_err(|e| ListWatchError::MalformedResponse {
                verb: "list",
                resource: self.kind.clone(),
                source: e.into(),
            })?;
        let items: Vec<Box<RawValue>> = list
            .items
            .iter()
            .filter_map(|item| self.keepable(item.get().as_bytes()))
            .collect();
        let next = list.metadata.continue_token.filter(|c| !c.is_empty());
        let mut page = ListPage {
            items: Vec::with_capacity(items.len()),
            resource_version: list.metadata.resource_version.clone(),
            continue_token: next.clone(),
            malformed: Vec::new(),
        };
        for item in &items {
            match RecordedObject::new(item.clone()) {
                Ok(object) => page.items.push(Arc::new(object)),
                Err(e) => page.malformed.push(e.to_string()),
            }
        }
        self.recorder.append(
            Record::List {
                kind: self.kind.clone(),
                at: now(),
                requested: params.resource_version.clone(),
                continued: params.continue_token.clone(),
                resource_version: list.metadata.resource_version,
                next,
                items,
            },
            body.len(),
        );
        Ok(page)
    }

    async fn watch(
        &self,
        params: &WatchParams,
    ) -> Result<WatchStream<RecordedObject>, ListWatchError> {
        self.recorder.append(
            Record::WatchStart {
                kind: self.kind.clone(),
                at: now(),
                resource_version: params.resource_version.clone(),
                send_initial_events: params.send_initial_events,
            },
            0,
        );
        let stream = ListerWatcher::<GenericObject>::watch(&self.inner, params)
            .await
            .inspect_err(|e| self.error("watch", e))?;
        let mut guard = WatchEndGuard {
            kind: self.kind.clone(),
            recorder: self.recorder.clone(),
            error: None,
        };
        let kind = self.kind.clone();
        let secrets = self.secrets;
        let recorder = self.recorder.clone();
        let this = RecordingListerWatcher {
            inner: self.inner.clone(),
            kind: kind.clone(),
            secrets,
            recorder: recorder.clone(),
        };
        Ok(stream
            .map(move |item| {
                // The whole guard moves into the stream (not only the field written below),
                // so the watch's end is written when the stream is dropped.
                let guard = &mut guard;
                let raw = match item {
                    Ok(raw) => raw,
                    Err(e) => {
                        guard.error = Some(e.to_string());
                        return Err(e);
                    }
                };
                let object = this.keepable(&raw.raw_object);
                let recorded = |object: Option<Box<RawValue>>| {
                    object
                        .and_then(|o| RecordedObject::new(o).ok())
                        .map(Arc::new)
                        .ok_or_else(|| {
                            ListWatchError::MalformedEvent(
                                "a watch object kscope cannot keep".into(),
                            )
                        })
                };
                let event_type = raw.event.event_type();
                let (event, resource_version) = match raw.event {
                    WatchEvent::Added(_) => {
                        let o = recorded(object.clone())?;
                        let rv = o.resource_version().map(str::to_string);
                        (WatchEvent::Added(o), rv)
                    }
                    WatchEvent::Modified(_) => {
                        let o = recorded(object.clone())?;
                        let rv = o.resource_version().map(str::to_string);
                        (WatchEvent::Modified(o), rv)
                    }
                    WatchEvent::Deleted(_) => {
                        let o = recorded(object.clone())?;
                        let rv = o.resource_version().map(str::to_string);
                        (WatchEvent::Deleted(o), rv)
                    }
                    WatchEvent::Bookmark {
                        resource_version,
                        initial_events_end,
                    } => (
                        WatchEvent::Bookmark {
                            resource_version: resource_version.clone(),
                            initial_events_end,
                        },
                        Some(resource_version),
                    ),
                    WatchEvent::Error(status) => (WatchEvent::Error(status), None),
                };
                if let Some(object) = object {
                    recorder.append(
                        Record::Event {
                            kind: kind.clone(),
                            at: now(),
                            event_type: event_type.as_str().to_string(),
                            resource_version,
                            object,
                        },
                        raw.raw_object.len(),
                    );
                }
                Ok(RawWatchEvent {
                    event,
                    raw_object: raw.raw_object,
                })
            })
            .boxed())
    }
}

/// How far a recording has got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecordingStats {
    /// Bytes in the file, header included (what is pending is written each second).
    pub bytes: u64,
    /// Watch events appended.
    pub events: u64,
    /// Records appended (keyframes not counted).
    pub records: u64,
}

/// A recording under way: an informer per kind writing to one file, flushed each second,
/// until [`RecordingSession::stop`] finishes the file.
pub struct RecordingSession {
    recorder: Arc<Recorder>,
    informers: Vec<RunningInformer<RecordedObject>>,
    flusher: JoinHandle<()>,
    stop_flushing: oneshot::Sender<()>,
    output: PathBuf,
    kinds: Vec<String>,
}

impl RecordingSession {
    /// Creates `output` (replacing it) and starts recording `kinds` of `cluster`, the
    /// namespaced ones in `namespace` (all namespaces when `None`). Must run inside a Tokio
    /// runtime.
    pub fn start(
        cluster: &Cluster,
        kinds: &[Kind],
        namespace: Option<&str>,
        output: &Path,
    ) -> Result<Self, RecordError> {
        let file = File::create(output)?;
        let header = Header {
            format_version: FORMAT_VERSION,
            kscope_version: env!("CARGO_PKG_VERSION").to_string(),
            context: Some(cluster.context.clone()).filter(|c| !c.is_empty()),
            server: cluster.server.clone(),
            kinds: kinds.iter().map(ToString::to_string).collect(),
            namespace: namespace.map(str::to_string),
            start_time: jiff::Timestamp::now().to_string(),
        };
        let recorder = Arc::new(Recorder {
            inner: Mutex::new(Recording {
                writer: KeyframedWriter::create(BufWriter::new(file), &header)?,
                failed: None,
            }),
        });
        let informers = kinds
            .iter()
            .map(|kind| {
                let inner = KubeListerWatcher::new(
                    cluster.client.clone(),
                    kind.list_path(namespace.filter(|_| kind.namespaced())),
                    kind.to_string(),
                )
                .with_limits(cluster.limits);
                let lister_watcher = RecordingListerWatcher {
                    inner,
                    kind: kind.to_string(),
                    secrets: *kind == Kind::BuiltIn(ResourceKind::Secrets),
                    recorder: recorder.clone(),
                };
                RunningInformer::start(
                    InformerConfig::new(kind.to_string()),
                    lister_watcher,
                    IndexerWriter::<RecordedObject>::default(),
                )
            })
            .collect();
        let (stop_flushing, mut stopped) = oneshot::channel();
        let flushed = recorder.clone();
        let flusher = tokio::spawn(async move {
            let mut every = tokio::time::interval(FLUSH_EVERY);
            loop {
                tokio::select! {
                    _ = &mut stopped => return,
                    _ = every.tick() => flushed.flush(),
                }
            }
        });
        Ok(Self {
            recorder,
            informers,
            flusher,
            stop_flushing,
            output: output.to_path_buf(),
            kinds: header.kinds,
        })
    }

    pub fn stats(&self) -> RecordingStats {
        self.recorder.lock().stats()
    }

    /// Why writing failed, once it has: nothing more is written, and [`Self::stop`] returns it.
    pub fn failure(&self) -> Option<String> {
        self.recorder
            .lock()
            .failed
            .as_ref()
            .map(ToString::to_string)
    }

    /// The file written.
    pub fn output(&self) -> &Path {
        &self.output
    }

    /// The kinds recorded, as the file's header names them.
    pub fn kinds(&self) -> &[String] {
        &self.kinds
    }

    /// Stops the informers, so every watch's end is written, then writes what is pending:
    /// the file is complete. The first write that failed is returned instead.
    pub async fn stop(self) -> Result<RecordingStats, RecordError> {
        // The flusher may have gone already; then there is nothing to tell it.
        let _ = self.stop_flushing.send(());
        // A flusher that panicked wrote nothing more: the final flush below stands.
        let _ = self.flusher.await;
        for informer in self.informers {
            informer.shutdown().await;
        }
        self.recorder.flush();
        let mut r = self.recorder.lock();
        match r.failed.take() {
            Some(e) => Err(e),
            None => Ok(r.stats()),
        }
    }
}
