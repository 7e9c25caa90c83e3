//! client-go's shared index informer: pops deltas from its FIFO (classic, real or atomic),
//! applies them to the Indexer and hands notifications to every registered handler.
//!
//! Each handler is a stream with its own unbounded buffer (client-go's processorListener), so
//! a slow handler never stalls the informer or the other handlers.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::Stream;
use parking_lot::Mutex;
use tokio::sync::broadcast;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::delta_fifo::{Delta, DeltaType, ReflectorStore};
use super::fifo::{Fifo, FifoItem, FifoKind, HandedItem, Handoff};
use super::indexer::{Indexer, IndexerWriter};
use super::instrument::tap::{Tap, TapKind, TapRecord};
use super::keys::{DeletedFinalStateUnknown, DeltaObject, Key};
use super::metrics::{InformerMetrics, InformerMetricsSnapshot};
use super::object::Object;

/// Handoffs kept for a subscriber that lags; older ones are dropped for it (it is told how
/// many).
const HANDOFF_BUFFER: usize = 4096;

/// What a handler is told: client-go's OnAdd / OnUpdate / OnDelete.
#[derive(Debug)]
pub enum Notification<T> {
    Add {
        obj: Arc<T>,
        /// The object came from the first list (or the replay for a late handler).
        is_in_initial_list: bool,
    },
    Update {
        old: Arc<T>,
        new: Arc<T>,
    },
    /// The final state, or a tombstone when the deletion was inferred from a relist.
    Delete {
        obj: DeltaObject<T>,
    },
}

impl<T> Clone for Notification<T> {
    fn clone(&self) -> Self {
        match self {
            Self::Add {
                obj,
                is_in_initial_list,
            } => Self::Add {
                obj: obj.clone(),
                is_in_initial_list: *is_in_initial_list,
            },
            Self::Update { old, new } => Self::Update {
                old: old.clone(),
                new: new.clone(),
            },
            Self::Delete { obj } => Self::Delete { obj: obj.clone() },
        }
    }
}

impl<T: Object> Notification<T> {
    /// An update whose resourceVersion did not change is a resync (or a relist of an
    /// unchanged object), not a change: controllers usually skip it.
    pub fn is_resync(&self) -> bool {
        match self {
            Self::Update { old, new } => {
                old.resource_version().is_some() && old.resource_version() == new.resource_version()
            }
            _ => false,
        }
    }
}

/// One handler's buffered stream of notifications. Dropping it unregisters the handler.
pub struct EventHandlerRegistration<T> {
    rx: UnboundedReceiver<Notification<T>>,
}

impl<T> EventHandlerRegistration<T> {
    /// The next notification; `None` once the informer stopped and the buffer is empty.
    pub async fn recv(&mut self) -> Option<Notification<T>> {
        self.rx.recv().await
    }

    /// Notifications buffered and not yet received: how far this handler lags.
    pub fn pending(&self) -> usize {
        self.rx.len()
    }
}

impl<T> Stream for EventHandlerRegistration<T> {
    type Item = Notification<T>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

/// The shared side of an informer: its store to read, its FIFO for the Reflector, and
/// handler registration. Cloning is cheap and shares it. What applies deltas to the store is
/// the [`ProcessLoop`] made with it, which owns the store's only writer and runs once.
pub struct SharedIndexInformer<T> {
    indexer: Indexer<T>,
    fifo: Fifo<T>,
    listeners: Listeners<T>,
    metrics: Arc<InformerMetrics>,
    handoffs: broadcast::Sender<Arc<Handoff>>,
}

type Listeners<T> = Arc<Mutex<Vec<UnboundedSender<Notification<T>>>>>;

impl<T> Clone for SharedIndexInformer<T> {
    fn clone(&self) -> Self {
        Self {
            indexer: self.indexer.clone(),
            fifo: self.fifo.clone(),
            listeners: self.listeners.clone(),
            metrics: self.metrics.clone(),
            handoffs: self.handoffs.clone(),
        }
    }
}

/// client-go's processLoop: pops deltas, applies them through the store's only writer and
/// notifies the handlers. [`ProcessLoop::run`] consumes it, so a store is never filled twice.
pub struct ProcessLoop<T> {
    writer: IndexerWriter<T>,
    fifo: Fifo<T>,
    listeners: Listeners<T>,
    resync_period: Option<Duration>,
    /// Records every delta as it is applied.
    tap: Option<Tap>,
    metrics: Arc<InformerMetrics>,
    handoffs: broadcast::Sender<Arc<Handoff>>,
    next_handoff: u64,
}

impl<T: Object> SharedIndexInformer<T> {
    /// An informer over the store `writer` changes (its indexes already registered), and the
    /// loop that will fill it. Objects already in the store are a warm start: the first
    /// Replace deletes, through tombstones, those the server no longer has. `resync_period`
    /// of `None` or zero turns resync off; `tap` records every delta as it is applied.
    pub fn new(
        writer: IndexerWriter<T>,
        resync_period: Option<Duration>,
        tap: Option<Tap>,
    ) -> (Self, ProcessLoop<T>) {
        Self::with_fifo(writer, resync_period, tap, FifoKind::default())
    }

    /// As [`SharedIndexInformer::new`], with the FIFO of `fifo` between the Reflector and the
    /// store.
    pub fn with_fifo(
        writer: IndexerWriter<T>,
        resync_period: Option<Duration>,
        tap: Option<Tap>,
        fifo: FifoKind,
    ) -> (Self, ProcessLoop<T>) {
        let indexer = writer.reader();
        let metrics = Arc::new(InformerMetrics::default());
        let fifo = Fifo::new(fifo, indexer.clone(), metrics.clone());
        let listeners = Listeners::default();
        let handoffs = broadcast::channel(HANDOFF_BUFFER).0;
        let process = ProcessLoop {
            writer,
            fifo: fifo.clone(),
            listeners: listeners.clone(),
            resync_period: resync_period.filter(|p| !p.is_zero()),
            tap,
            metrics: metrics.clone(),
            handoffs: handoffs.clone(),
            next_handoff: 0,
        };
        let informer = Self {
            indexer,
            fifo,
            listeners,
            metrics,
            handoffs,
        };
        (informer, process)
    }

    /// Which FIFO this informer runs.
    pub fn fifo_kind(&self) -> FifoKind {
        self.fifo.kind()
    }

    /// Queued items, processing latency, and the store's resourceVersion against the
    /// newest one handed to the FIFO: atomics only, cheap enough to read every frame.
    pub fn metrics(&self) -> InformerMetricsSnapshot {
        self.metrics.snapshot()
    }

    /// Every pop from now on, as the process loop hands it to the handlers: what a
    /// controller on this pipeline is given, grouped as it is given. Bounded: a subscriber
    /// that falls more than a few thousand pops behind is told how many it missed. Nothing
    /// is built while no one subscribes.
    pub fn subscribe_handoffs(&self) -> broadcast::Receiver<Arc<Handoff>> {
        self.handoffs.subscribe()
    }

    /// The read side: the indexed store the informer keeps.
    pub fn indexer(&self) -> &Indexer<T> {
        &self.indexer
    }

    /// The write side, for the Reflector.
    pub fn store(&self) -> &Fifo<T> {
        &self.fifo
    }

    pub fn has_synced(&self) -> bool {
        self.fifo.has_synced()
    }

    /// Resolves once the first list has been fully applied (false if stopped before that).
    pub async fn wait_for_sync(&self) -> bool {
        self.fifo.wait_for_sync().await
    }

    /// Registers a handler. A handler added after start is first replayed the current
    /// contents as initial adds; the replay and live notifications never interleave.
    pub fn add_event_handler(&self) -> EventHandlerRegistration<T> {
        self.register(true)
    }

    /// Registers a handler that is sent only what happens from now on. For a handler that
    /// reads the store itself right after registering (a live view built from the indexer):
    /// replaying every object to it would repeat what it already has, 150,000 times at
    /// scale. Processing a delta holds the same lock as registering, so each change is
    /// either already in the store it reads or sent to it.
    pub fn add_event_handler_without_replay(&self) -> EventHandlerRegistration<T> {
        self.register(false)
    }

    fn register(&self, replay: bool) -> EventHandlerRegistration<T> {
        let (tx, rx) = unbounded_channel();
        let mut listeners = self.listeners.lock();
        if replay {
            for obj in self.indexer.list() {
                // The receiver is alive: it is in our hands until we return it.
                let _ = tx.send(Notification::Add {
                    obj,
                    is_in_initial_list: true,
                });
            }
        }
        listeners.push(tx);
        EventHandlerRegistration { rx }
    }

    /// Closes the FIFO: the process loop returns once what is queued has been processed.
    pub fn stop(&self) {
        self.fifo.close();
    }
}

impl<T: Object> ProcessLoop<T> {
    /// Runs the process loop (and the resync timer) until [`SharedIndexInformer::stop`] and
    /// the queue is drained. Handlers' streams end afterwards.
    pub async fn run(mut self) {
        let fifo = self.fifo.clone();
        let batch_size = fifo.kind().batch_size();
        let resync_period = self.resync_period;
        let process = async {
            while fifo
                .pop(batch_size, |items, is_in_initial_list| {
                    self.process_items(items, is_in_initial_list)
                })
                .await
                .is_ok()
            {}
        };
        let resync = async {
            match resync_period {
                Some(period) => {
                    let mut ticks =
                        tokio::time::interval_at(tokio::time::Instant::now() + period, period);
                    loop {
                        ticks.tick().await;
                        // Keys come from the indexer, which has only keyed objects.
                        let _ = fifo.resync();
                    }
                }
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            () = process => {}
            () = resync => {}
        }
        self.listeners.lock().clear();
    }

    /// Pops and processes the next item (a batch, for the in-order FIFOs) if one is queued,
    /// without waiting for one: for a caller that feeds the FIFO itself and decides when its
    /// controller catches up (a recording replayed through the pipelines), so what each pop
    /// hands over does not depend on a task racing the feed. False when nothing was queued.
    pub async fn process_one_queued(&mut self) -> bool {
        if self.fifo.is_empty() {
            return false;
        }
        let fifo = self.fifo.clone();
        fifo.pop(fifo.kind().batch_size(), |items, is_in_initial_list| {
            self.process_items(items, is_in_initial_list)
        })
        .await
        .is_ok()
    }

    /// One pop: client-go's processDeltas for each item (its batch processing applies the
    /// items of a batch in order, as here), timed for the latency histogram.
    fn process_items(&mut self, items: Vec<FifoItem<T>>, is_in_initial_list: bool) {
        let started = std::time::Instant::now();
        self.publish_handoff(&items, is_in_initial_list);
        let count = items.len();
        let mut listeners = self.listeners.lock();
        for item in items {
            match item {
                FifoItem::Deltas { key, deltas } => {
                    for delta in deltas {
                        self.apply_delta(&mut listeners, &key, delta, is_in_initial_list);
                    }
                }
                FifoItem::ReplacedAll {
                    resource_version,
                    objects,
                } => self.replace_all(
                    &mut listeners,
                    &resource_version,
                    objects,
                    is_in_initial_list,
                ),
                FifoItem::SyncAll => {
                    self.tap_whole(DeltaType::SyncAll, None, self.writer.len());
                    for obj in self.writer.list() {
                        let notification = Notification::Update {
                            old: obj.clone(),
                            new: obj,
                        };
                        listeners.retain(|tx| tx.send(notification.clone()).is_ok());
                    }
                }
                FifoItem::Bookmark { resource_version } => {
                    self.metrics.applied(Some(&resource_version));
                }
            }
        }
        drop(listeners);
        self.metrics.observe_pop(count, started.elapsed());
    }

    fn publish_handoff(&mut self, items: &[FifoItem<T>], is_in_initial_list: bool) {
        if self.handoffs.receiver_count() == 0 {
            return;
        }
        let handoff = Handoff {
            seq: self.next_handoff,
            fifo: self.fifo.kind(),
            is_in_initial_list,
            items: items.iter().map(HandedItem::of).collect(),
        };
        self.next_handoff += 1;
        // No receiver left since the check: nothing to tell.
        let _ = self.handoffs.send(Arc::new(handoff));
    }

    /// Applies one delta to the Indexer, then notifies.
    fn apply_delta(
        &self,
        listeners: &mut Vec<UnboundedSender<Notification<T>>>,
        key: &Key,
        delta: Delta<T>,
        is_in_initial_list: bool,
    ) {
        // Borrowed: a copy is made only for the tap, not for each of 150,000 deltas.
        let resource_version = delta.object().and_then(|o| o.resource_version());
        self.metrics.applied(resource_version);
        if let Some(tap) = &self.tap {
            tap.record(
                TapKind::Delta(delta.delta_type()),
                TapRecord {
                    key: Some(key.clone()),
                    resource_version: resource_version.map(str::to_string),
                    ..TapRecord::default()
                },
            );
        }
        let notification = match delta {
            Delta::Deleted(obj) => {
                self.writer.remove(key);
                Notification::Delete { obj }
            }
            Delta::Added(obj) | Delta::Updated(obj) | Delta::Replaced(obj) | Delta::Sync(obj) => {
                match self.writer.insert(key.clone(), obj.clone()) {
                    Some(old) => Notification::Update { old, new: obj },
                    None => Notification::Add {
                        obj,
                        is_in_initial_list,
                    },
                }
            }
        };
        listeners.retain(|tx| tx.send(notification.clone()).is_ok());
    }

    /// client-go's processReplacedAllInfo: the store becomes the list; handlers are told of
    /// each stored object the list lacks (as a tombstone), then of each listed one.
    fn replace_all(
        &self,
        listeners: &mut Vec<UnboundedSender<Notification<T>>>,
        resource_version: &str,
        objects: Vec<(Key, Arc<T>)>,
        is_in_initial_list: bool,
    ) {
        self.tap_whole(
            DeltaType::ReplacedAll,
            Some(resource_version),
            objects.len(),
        );
        let listed: std::collections::HashSet<&Key, foldhash::fast::RandomState> =
            objects.iter().map(|(k, _)| k).collect();
        let gone: Vec<Key> = self
            .writer
            .list_keys()
            .into_iter()
            .filter(|k| !listed.contains(k))
            .collect();
        drop(listed);
        let mut deletions = Vec::with_capacity(gone.len());
        for key in gone {
            let obj = self.writer.remove(&key);
            deletions.push(DeletedFinalStateUnknown { key, obj });
        }
        let mut replacements = Vec::with_capacity(objects.len());
        for (key, obj) in objects {
            let old = self.writer.insert(key, obj.clone());
            replacements.push((old, obj));
        }
        self.metrics.applied(Some(resource_version));
        for tombstone in deletions {
            let notification = Notification::Delete {
                obj: DeltaObject::Tombstone(tombstone),
            };
            listeners.retain(|tx| tx.send(notification.clone()).is_ok());
        }
        for (old, new) in replacements {
            let notification = match old {
                Some(old) => Notification::Update { old, new },
                None => Notification::Add {
                    obj: new,
                    is_in_initial_list,
                },
            };
            listeners.retain(|tx| tx.send(notification.clone()).is_ok());
        }
    }

    /// Records a whole-store item in the tap.
    fn tap_whole(&self, kind: DeltaType, resource_version: Option<&str>, objects: usize) {
        if let Some(tap) = &self.tap {
            tap.record(
                TapKind::Delta(kind),
                TapRecord {
                    resource_version: resource_version.map(str::to_string),
                    message: Some(format!("{objects} objects")),
                    ..TapRecord::default()
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use futures::StreamExt;
    use smallvec::smallvec;
    use tokio::time::Instant;

    use super::*;
    use crate::indexer::index_func;
    use crate::testing::{TestObj, obj};

    fn describe(n: &Notification<TestObj>) -> String {
        match n {
            Notification::Add {
                obj,
                is_in_initial_list,
            } => format!(
                "add {} {} initial={is_in_initial_list}",
                obj.name, obj.resource_version
            ),
            Notification::Update { old, new } => format!(
                "update {} {}->{}",
                new.name, old.resource_version, new.resource_version
            ),
            Notification::Delete { obj } => format!(
                "delete {} tombstone={} last={}",
                obj.key().map(|k| k.to_string()).unwrap_or_default(),
                obj.is_tombstone(),
                obj.object()
                    .map_or("none".to_string(), |o| o.resource_version.clone())
            ),
        }
    }

    async fn next(reg: &mut EventHandlerRegistration<TestObj>) -> String {
        describe(&reg.recv().await.unwrap())
    }

    fn spawn_run(process: ProcessLoop<TestObj>) -> tokio::task::JoinHandle<()> {
        tokio::spawn(process.run())
    }

    #[tokio::test]
    async fn process_deltas_drives_indexer_and_handlers() {
        let by_label = index_func(|o: &TestObj| Ok(smallvec![Cow::Borrowed(o.label.as_str())]));
        let (informer, process) = SharedIndexInformer::new(
            IndexerWriter::new([("label", by_label)]).unwrap(),
            None,
            None,
        );
        let mut handler = informer.add_event_handler();
        let run = spawn_run(process);
        let store = informer.store();
        store
            .replace(vec![obj("ns/a", 1, "web"), obj("ns/b", 2, "db")], "2")
            .unwrap();
        assert!(informer.wait_for_sync().await);
        store.update(obj("ns/a", 3, "db")).unwrap();
        store.delete(obj("ns/b", 2, "db")).unwrap();

        let mut initial = vec![next(&mut handler).await, next(&mut handler).await];
        initial.sort();
        assert_eq!(initial, ["add a 1 initial=true", "add b 2 initial=true"]);
        assert_eq!(next(&mut handler).await, "update a 1->3");
        assert_eq!(
            next(&mut handler).await,
            "delete ns/b tombstone=false last=2"
        );
        let db: Vec<String> = informer
            .indexer()
            .index_keys("label", "db")
            .unwrap()
            .iter()
            .map(|k| k.to_string())
            .collect();
        assert_eq!(db, ["ns/a"]);
        assert!(
            informer
                .indexer()
                .index_keys("label", "web")
                .unwrap()
                .is_empty()
        );

        informer.stop();
        run.await.unwrap();
        assert!(
            handler.next().await.is_none(),
            "handler stream ends after stop"
        );
    }

    /// client-go's workqueue example preloads "mypod" into the indexer before the informer
    /// runs; the first list lacks it, so it is deleted through a tombstone.
    #[tokio::test]
    async fn deltas_are_recorded_in_the_tap() {
        let tap = Tap::new(10, Some);
        let (informer, process) =
            SharedIndexInformer::new(IndexerWriter::default(), None, Some(tap.clone()));
        let run = spawn_run(process);
        informer
            .store()
            .replace(vec![obj("ns/a", 1, "")], "1")
            .unwrap();
        informer.store().update(obj("ns/a", 2, "")).unwrap();
        informer.store().delete(obj("ns/a", 2, "")).unwrap();
        informer.stop();
        run.await.unwrap();
        let seen: Vec<(String, String, String)> = tap
            .snapshot()
            .iter()
            .map(|e| {
                (
                    e.kind.label().to_string(),
                    e.key.as_deref().unwrap_or_default().to_string(),
                    e.resource_version.clone().unwrap_or_default(),
                )
            })
            .collect();
        let expect = [
            ("Replaced", "ns/a", "1"),
            ("Updated", "ns/a", "2"),
            ("Deleted", "ns/a", "2"),
        ];
        assert_eq!(
            seen,
            expect.map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        );
    }

    #[tokio::test]
    async fn warm_start_object_missing_from_first_list_is_deleted_by_tombstone() {
        let indexer = IndexerWriter::default();
        indexer.add(obj("default/mypod", 1, "")).unwrap();
        let (informer, process) = SharedIndexInformer::new(indexer, None, None);
        let mut handler = informer.add_event_handler();
        assert_eq!(next(&mut handler).await, "add mypod 1 initial=true");
        let run = spawn_run(process);
        informer
            .store()
            .replace(vec![obj("default/other", 5, "")], "5")
            .unwrap();
        assert!(informer.wait_for_sync().await);
        let mut events = vec![next(&mut handler).await, next(&mut handler).await];
        events.sort();
        assert_eq!(
            events,
            [
                "add other 5 initial=true",
                "delete default/mypod tombstone=true last=1"
            ]
        );
        assert!(informer.indexer().get_by_key("default/mypod").is_none());
        assert_eq!(informer.indexer().len(), 1);
        informer.stop();
        run.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_sleeping_handler_does_not_delay_another() {
        let (informer, process) = SharedIndexInformer::new(IndexerWriter::default(), None, None);
        let mut slow = informer.add_event_handler();
        let mut fast = informer.add_event_handler();
        let slow_task = tokio::spawn(async move {
            while slow.recv().await.is_some() {
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
        });
        let run = spawn_run(process);
        let started = Instant::now();
        for i in 0..100 {
            informer
                .store()
                .add(obj(&format!("ns/p{i}"), i, ""))
                .unwrap();
        }
        for _ in 0..100 {
            fast.recv().await.unwrap();
        }
        assert_eq!(
            started.elapsed(),
            Duration::ZERO,
            "fast handler never waited"
        );
        assert!(!slow_task.is_finished());
        informer.stop();
        run.await.unwrap();
        slow_task.abort();
    }

    #[tokio::test]
    async fn late_handler_is_replayed_current_contents_then_live_changes() {
        let (informer, process) = SharedIndexInformer::new(IndexerWriter::default(), None, None);
        let run = spawn_run(process);
        let store = informer.store();
        store
            .replace(vec![obj("ns/a", 1, ""), obj("ns/b", 2, "")], "2")
            .unwrap();
        assert!(informer.wait_for_sync().await);
        store.delete(obj("ns/b", 2, "")).unwrap();
        store.add(obj("ns/c", 3, "")).unwrap();
        // Wait until the informer applied everything, then register late.
        while informer.indexer().get_by_key("ns/c").is_none() {
            tokio::task::yield_now().await;
        }
        let mut late = informer.add_event_handler();
        let mut replay = vec![next(&mut late).await, next(&mut late).await];
        replay.sort();
        assert_eq!(replay, ["add a 1 initial=true", "add c 3 initial=true"]);
        let mut from_now = informer.add_event_handler_without_replay();
        assert_eq!(from_now.pending(), 0, "no replay");
        store.update(obj("ns/a", 4, "")).unwrap();
        assert_eq!(next(&mut late).await, "update a 1->4");
        assert_eq!(late.pending(), 0);
        assert_eq!(next(&mut from_now).await, "update a 1->4");
        informer.stop();
        run.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn resync_period_sends_updates_that_are_resyncs() {
        let (informer, process) = SharedIndexInformer::new(
            IndexerWriter::default(),
            Some(Duration::from_secs(30)),
            None,
        );
        let mut handler = informer.add_event_handler();
        let run = spawn_run(process);
        informer
            .store()
            .replace(vec![obj("ns/a", 7, "")], "7")
            .unwrap();
        let added = handler.recv().await.unwrap();
        assert!(!added.is_resync());
        let before = Instant::now();
        let resynced = handler.recv().await.unwrap();
        assert_eq!(before.elapsed(), Duration::from_secs(30));
        assert_eq!(describe(&resynced), "update a 7->7");
        assert!(resynced.is_resync());
        informer.stop();
        run.await.unwrap();
    }

    /// The same feed through each FIFO: the store and every handler's adds minus deletes end
    /// the same, whatever each FIFO merged or batched on the way.
    #[tokio::test]
    async fn every_fifo_converges_to_the_same_store() {
        let mut ends = Vec::new();
        for kind in FifoKind::ALL {
            let (informer, process) =
                SharedIndexInformer::with_fifo(IndexerWriter::default(), None, None, kind);
            assert_eq!(informer.fifo_kind(), kind);
            let mut handler = informer.add_event_handler();
            let run = spawn_run(process);
            let store = informer.store();
            store
                .replace(
                    (0..20).map(|i| obj(&format!("ns/p{i}"), i, "")).collect(),
                    "20",
                )
                .unwrap();
            for i in 0..20 {
                store
                    .update(obj(&format!("ns/p{}", i % 7), 100 + i, ""))
                    .unwrap();
            }
            store.delete(obj("ns/p3", 130, "")).unwrap();
            store.bookmark("140");
            store.resync().unwrap();
            store
                .replace(
                    (0..20)
                        .filter(|i| i % 3 != 0)
                        .map(|i| obj(&format!("ns/p{i}"), 200 + i, ""))
                        .collect(),
                    "250",
                )
                .unwrap();
            store.add(obj("ns/late", 260, "")).unwrap();
            informer.stop();
            run.await.unwrap();
            let mut view = std::collections::BTreeMap::new();
            while let Some(n) = handler.recv().await {
                match n {
                    Notification::Add { obj, .. } => {
                        assert!(
                            view.insert(obj.name.clone(), obj.resource_version.clone())
                                .is_none(),
                            "{kind}: add of known {}",
                            obj.name
                        );
                    }
                    Notification::Update { new, .. } => {
                        assert!(
                            view.insert(new.name.clone(), new.resource_version.clone())
                                .is_some(),
                            "{kind}: update of unknown"
                        );
                    }
                    Notification::Delete { obj } => {
                        let key = obj.key().unwrap();
                        assert!(
                            view.remove(&key["ns/".len()..]).is_some(),
                            "{kind}: delete of unknown {key}"
                        );
                    }
                }
            }
            let store: std::collections::BTreeMap<String, String> = informer
                .indexer()
                .list()
                .iter()
                .map(|o| (o.name.clone(), o.resource_version.clone()))
                .collect();
            assert_eq!(view, store, "{kind}: handlers agree with the store");
            let metrics = informer.metrics();
            assert_eq!(metrics.queued_items, 0, "{kind}");
            assert_eq!(metrics.store_resource_version, 260, "{kind}");
            assert_eq!(metrics.resource_version_lag(), 0, "{kind}");
            assert!(
                metrics.pops > 0 && metrics.popped_items >= metrics.pops,
                "{kind}"
            );
            ends.push(store);
        }
        assert_eq!(ends[0].len(), 14, "13 listed, and the late one");
        assert!(ends.iter().all(|e| *e == ends[0]), "{ends:#?}");
    }

    /// A key updated twice between two pops: the classic FIFO hands one key with both
    /// deltas; the in-order ones hand each update as its own item (here in one batch with
    /// the other key, since the batch ends at a repeated key).
    #[tokio::test]
    async fn handoffs_show_merging_under_classic_and_order_under_real() {
        let mut seen = Vec::new();
        for kind in [FifoKind::Classic, FifoKind::Real] {
            let (informer, process) =
                SharedIndexInformer::with_fifo(IndexerWriter::default(), None, None, kind);
            let mut handoffs = informer.subscribe_handoffs();
            let store = informer.store();
            store
                .replace(vec![obj("ns/a", 1, ""), obj("ns/b", 1, "")], "1")
                .unwrap();
            store.update(obj("ns/a", 2, "")).unwrap();
            store.update(obj("ns/b", 3, "")).unwrap();
            store.update(obj("ns/a", 4, "")).unwrap();
            informer.stop();
            process.run().await;
            let mut shapes = Vec::new();
            while let Ok(h) = handoffs.try_recv() {
                assert_eq!(h.fifo, kind);
                let items: Vec<String> = h
                    .items
                    .iter()
                    .map(|i| match i {
                        HandedItem::Deltas { key, deltas } => format!(
                            "{key}[{}]",
                            deltas
                                .iter()
                                .map(|d| format!(
                                    "{}@{}",
                                    d.delta_type.as_str(),
                                    d.resource_version.as_deref().unwrap_or("?")
                                ))
                                .collect::<Vec<_>>()
                                .join(" ")
                        ),
                        other => format!("{other:?}"),
                    })
                    .collect();
                shapes.push(items.join(", "));
            }
            seen.push(shapes);
        }
        assert_eq!(
            seen[0],
            [
                "ns/a[Replaced@1 Updated@2 Updated@4]",
                "ns/b[Replaced@1 Updated@3]"
            ],
            "classic merges per key, in the order keys were first queued"
        );
        assert_eq!(
            seen[1],
            [
                "ns/a[Replaced@1], ns/b[Replaced@1]",
                "ns/a[Updated@2], ns/b[Updated@3]",
                "ns/a[Updated@4]"
            ],
            "real hands every event, in arrival order"
        );
    }

    /// client-go's processReplacedAllInfo: deletions of what the list lacks, as tombstones
    /// with the stored object, then the listed objects as updates or adds; a SyncAll is an
    /// update of every stored object to itself.
    #[tokio::test]
    async fn atomic_replaced_all_and_sync_all_notify_like_client_go() {
        let (informer, process) =
            SharedIndexInformer::with_fifo(IndexerWriter::default(), None, None, FifoKind::Atomic);
        let mut handler = informer.add_event_handler();
        let store = informer.store();
        store
            .replace(vec![obj("ns/a", 1, ""), obj("ns/b", 2, "")], "2")
            .unwrap();
        store
            .replace(vec![obj("ns/b", 3, ""), obj("ns/c", 4, "")], "4")
            .unwrap();
        store.resync().unwrap();
        informer.stop();
        process.run().await;
        let mut got = Vec::new();
        while let Some(n) = handler.recv().await {
            got.push(describe(&n));
        }
        // The store lists in no particular order.
        got[5..].sort();
        assert_eq!(
            got,
            [
                "add a 1 initial=true",
                "add b 2 initial=true",
                "delete ns/a tombstone=true last=1",
                "update b 2->3",
                "add c 4 initial=false",
                "update b 3->3",
                "update c 4->4",
            ]
        );
        assert!(informer.has_synced());
    }

    #[tokio::test]
    async fn relist_replaces_state_and_handlers_see_adds_minus_deletes() {
        let (informer, process) = SharedIndexInformer::new(IndexerWriter::default(), None, None);
        let mut handler = informer.add_event_handler();
        let run = spawn_run(process);
        let store = informer.store();
        store
            .replace(
                (0..50).map(|i| obj(&format!("ns/p{i}"), i, "")).collect(),
                "50",
            )
            .unwrap();
        // A relist that lost half the objects and changed the rest.
        store
            .replace(
                (0..50)
                    .filter(|i| i % 2 == 0)
                    .map(|i| obj(&format!("ns/p{i}"), i + 100, ""))
                    .collect(),
                "200",
            )
            .unwrap();
        informer.stop();
        run.await.unwrap();
        let mut live = std::collections::HashSet::new();
        while let Some(n) = handler.recv().await {
            match n {
                Notification::Add { obj, .. } => assert!(live.insert(obj.name.clone())),
                Notification::Update { new, .. } => assert!(live.contains(&new.name)),
                Notification::Delete { obj } => {
                    let key = obj.key().unwrap();
                    assert!(live.remove(&key["ns/".len()..]));
                }
            }
        }
        assert_eq!(live.len(), 25);
        assert_eq!(informer.indexer().len(), 25);
        for key in informer.indexer().list_keys() {
            let stored = informer.indexer().get_by_key(&key).unwrap();
            assert!(live.contains(&stored.name));
            assert!(stored.resource_version.parse::<u64>().unwrap() >= 100);
        }
    }
}
