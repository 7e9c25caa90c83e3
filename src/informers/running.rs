//! A running informer: one Reflector feeding one shared informer's processing loop, as
//! background tasks (what client-go's `controller` type does, without any reconcile loop).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::backoff::Backoff;
use super::delta_fifo::ReflectorStore;
use super::fifo::FifoKind;
use super::indexer::{Indexer, IndexerWriter};
use super::informer::SharedIndexInformer;
use super::instrument::compare::TeeStore;
use super::instrument::tap::Tap;
use super::lister_watcher::ListerWatcher;
use super::metrics::InformerMetricsSnapshot;
use super::object::Object;
use super::reflector::{
    InitialListMode, Reflector, ReflectorError, ReflectorMetrics, ReflectorStatus,
};

/// What to start an informer with.
pub struct InformerConfig {
    /// The resource's name in messages (`pods`, `pods in namespace web`).
    pub resource: String,
    pub resync_period: Option<Duration>,
    pub page_size: u32,
    pub tap: Option<Tap>,
    /// Between failed list-and-watch rounds; client-go's 800 ms doubling to 30 s by default.
    pub backoff: Backoff,
    /// The FIFO between the Reflector and the store.
    pub fifo: FifoKind,
    /// How the Reflector gets its initial state (see [`InitialListMode`] for the default).
    pub initial_list: InitialListMode,
}

impl InformerConfig {
    pub fn new(resource: impl Into<String>) -> Self {
        Self {
            resource: resource.into(),
            resync_period: None,
            page_size: super::reflector::DEFAULT_PAGE_SIZE,
            tap: None,
            backoff: Backoff::default(),
            fifo: FifoKind::default(),
            initial_list: InitialListMode::default(),
        }
    }
}

/// A running informer: the Reflector and the process loop in background tasks. Dropping it
/// stops them.
pub struct RunningInformer<T> {
    informer: SharedIndexInformer<T>,
    status: watch::Receiver<ReflectorStatus>,
    metrics: Arc<ReflectorMetrics>,
    cancel: CancellationToken,
    tasks: JoinSet<()>,
}

impl<T: Object> RunningInformer<T> {
    /// Starts listing and watching through `lister_watcher` into the store `writer` changes,
    /// on the current tokio runtime. The writer moves into the process loop: from here on
    /// the store is read through [`RunningInformer::indexer`].
    pub fn start<L: ListerWatcher<T>>(
        config: InformerConfig,
        lister_watcher: L,
        writer: IndexerWriter<T>,
    ) -> Self {
        let (informer, process) = SharedIndexInformer::with_fifo(
            writer,
            config.resync_period,
            config.tap.clone(),
            config.fifo,
        );
        let store = informer.store().clone();
        let mut running = Self::run_with(config, lister_watcher, informer, store);
        running.tasks.spawn(process.run());
        running
    }

    /// As [`RunningInformer::start`], with a second pipeline fed the same watch stream
    /// through a FIFO of kind `other` into its own store `other_writer`: the two informers'
    /// handoffs show what each pipeline hands a controller for the same events. The second
    /// one has no tap and no resync timer of its own; a resync is fed to both.
    pub fn start_compared<L: ListerWatcher<T>>(
        config: InformerConfig,
        lister_watcher: L,
        writer: IndexerWriter<T>,
        other: FifoKind,
        other_writer: IndexerWriter<T>,
    ) -> (Self, SharedIndexInformer<T>) {
        let (informer, process) =
            SharedIndexInformer::with_fifo(writer, None, config.tap.clone(), config.fifo);
        let (second, second_process) =
            SharedIndexInformer::with_fifo(other_writer, None, None, other);
        let store = TeeStore::new(informer.store().clone(), second.store().clone());
        let resync_period = config.resync_period.filter(|p| !p.is_zero());
        let mut running = Self::run_with(config, lister_watcher, informer, store.clone());
        running.tasks.spawn(process.run());
        running.tasks.spawn(second_process.run());
        let shutdown = {
            let second = second.clone();
            let cancel = running.cancel.clone();
            async move {
                cancel.cancelled().await;
                second.stop();
            }
        };
        running.tasks.spawn(shutdown);
        if let Some(period) = resync_period {
            running
                .tasks
                .spawn(resync_both::<T, _>(store, period, running.cancel.clone()));
        }
        (running, second)
    }

    fn run_with<L: ListerWatcher<T>, S: ReflectorStore<T> + 'static>(
        config: InformerConfig,
        lister_watcher: L,
        informer: SharedIndexInformer<T>,
        store: S,
    ) -> Self {
        let mut reflector = Reflector::new(config.resource, lister_watcher, store)
            .with_page_size(config.page_size)
            .with_backoff(config.backoff)
            .with_initial_list(config.initial_list);
        if let Some(tap) = config.tap {
            reflector = reflector.with_tap(tap);
        }
        let status = reflector.status();
        let metrics = reflector.metrics();
        let cancel = CancellationToken::new();
        let mut tasks = JoinSet::new();
        tasks.spawn(reflector.run(cancel.clone()));
        Self {
            informer,
            status,
            metrics,
            cancel,
            tasks,
        }
    }

    pub fn informer(&self) -> &SharedIndexInformer<T> {
        &self.informer
    }

    pub fn indexer(&self) -> &Indexer<T> {
        self.informer.indexer()
    }

    pub fn status(&self) -> watch::Receiver<ReflectorStatus> {
        self.status.clone()
    }

    pub fn metrics(&self) -> &ReflectorMetrics {
        &self.metrics
    }

    /// The informer's own metrics (queue, latency, store resourceVersion and lag).
    pub fn informer_metrics(&self) -> InformerMetricsSnapshot {
        self.informer.metrics()
    }

    pub fn fifo_kind(&self) -> FifoKind {
        self.informer.fifo_kind()
    }

    /// Waits until the first list is in the Indexer. Returns the Reflector's error instead if
    /// one that `gives_up` accepts happens before a list reached the store; others are
    /// retried as usual. Once a list reached the store, its objects are applied whatever the
    /// watch does next, and whether the store is still current is the caller's to check:
    /// else the result would race the store's drain against the watch's failure.
    pub async fn wait_for_sync(
        &self,
        gives_up: impl Fn(&ReflectorError) -> bool,
    ) -> Result<(), Arc<ReflectorError>> {
        let mut status = self.status.clone();
        let fatal = async {
            match status
                .wait_for(|s| !s.listed && s.last_error.as_deref().is_some_and(&gives_up))
                .await
            {
                Ok(s) => s.last_error.clone(),
                Err(_) => None,
            }
        };
        tokio::select! {
            _ = self.informer.wait_for_sync() => Ok(()),
            Some(err) = fatal => Err(err),
        }
    }

    /// Stops the Reflector's list and watch for good, keeping the store and what reads it:
    /// for a resource the server no longer serves, whose last objects stay readable.
    pub fn stop_watching(&self) {
        self.cancel.cancel();
    }

    /// Stops the Reflector, lets the process loop drain what is queued, and waits for both.
    pub async fn shutdown(mut self) {
        self.cancel.cancel();
        self.informer.stop();
        while self.tasks.join_next().await.is_some() {}
    }
}

/// One resync timer for both pipelines of a comparison, so both see it at the same point of
/// the stream.
async fn resync_both<T: Object, S: ReflectorStore<T>>(
    store: S,
    period: Duration,
    cancel: CancellationToken,
) {
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            _ = ticks.tick() => {
                // Keys come from the stores, which hold only keyed objects.
                let _ = store.resync();
            }
        }
    }
}

impl<T> Drop for RunningInformer<T> {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}
