//! What DeltaFIFO, RealFIFO and AtomicFIFO share. In client-go each keeps its own copy of it
//! (a lock and a condition, `populated`, `initialPopulationCount`, `closed`, the Pop loop);
//! here it is written once, and each FIFO keeps only what it queues and how.

use std::collections::HashSet;
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};
use tokio::sync::{Notify, watch};

use super::keys::{Key, KeyError, meta_namespace_key};
use super::metrics::InformerMetrics;
use super::object::Object;

/// The hasher of the FIFOs' key sets.
pub type Hasher = foldhash::fast::RandomState;

/// What a FIFO queues, as the core counts it.
pub(crate) trait Queue {
    /// What the metrics show as queued: nothing left means the store has caught up.
    fn len(&self) -> usize;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The objects of a Replace with their keys, or the first object that has none.
pub(crate) fn keyed<T: Object>(list: Vec<Arc<T>>) -> Result<Vec<(Key, Arc<T>)>, KeyError> {
    list.into_iter()
        .map(|obj| Ok((meta_namespace_key(obj.as_ref())?, obj)))
        .collect()
}

/// A FIFO's state under its lock: its own `queue`, and what every FIFO counts beside it.
pub(crate) struct Locked<Q> {
    pub(crate) queue: Q,
    /// Set by the first Replace or any add/update/delete.
    pub(crate) populated: bool,
    /// Items of the first Replace not yet popped.
    pub(crate) initial_population_count: usize,
    closed: bool,
    pub(crate) last_replace_resource_version: Option<String>,
    /// A pop found nothing to take and waits: the next queued item must wake it. While pops
    /// find items, queueing skips the wake-up (a lock of its own per event otherwise).
    pop_waiting: bool,
}

impl<Q> Locked<Q> {
    /// client-go's HasSynced: the first Replace (or any add/update/delete) happened and every
    /// item it queued has been popped.
    pub(crate) fn has_synced(&self) -> bool {
        self.populated && self.initial_population_count == 0
    }
}

/// The lock, the pop wake-up, close and HasSynced of one FIFO queueing into a `Q`. Cloning is
/// cheap and shares the queue.
pub(crate) struct FifoCore<Q> {
    state: Arc<Mutex<Locked<Q>>>,
    notify: Arc<Notify>,
    synced: Arc<watch::Sender<bool>>,
    metrics: Arc<InformerMetrics>,
}

impl<Q> Clone for FifoCore<Q> {
    fn clone(&self) -> Self {
        Self {
            state: self.state.clone(),
            notify: self.notify.clone(),
            synced: self.synced.clone(),
            metrics: self.metrics.clone(),
        }
    }
}

impl<Q: Queue> FifoCore<Q> {
    pub(crate) fn new(queue: Q, metrics: Arc<InformerMetrics>) -> Self {
        Self {
            state: Arc::new(Mutex::new(Locked {
                queue,
                populated: false,
                initial_population_count: 0,
                closed: false,
                last_replace_resource_version: None,
                pop_waiting: false,
            })),
            notify: Arc::new(Notify::new()),
            synced: Arc::new(watch::channel(false).0),
            metrics,
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Locked<Q>> {
        self.state.lock()
    }

    pub(crate) fn metrics(&self) -> &InformerMetrics {
        &self.metrics
    }

    /// Something was queued: the metrics count it, and a pop waiting for it is woken.
    pub(crate) fn queued_locked(&self, state: &mut Locked<Q>) {
        self.metrics.set_queued(state.queue.len());
        if std::mem::take(&mut state.pop_waiting) {
            self.notify.notify_waiters();
        }
    }

    /// An add, update or delete counts the queue as populated.
    pub(crate) fn mark_populated_locked(&self, state: &mut Locked<Q>) {
        state.populated = true;
        self.publish_synced_locked(state);
    }

    /// A Replace (or a streamed initial state's end) at `resource_version`; if it is the first,
    /// `initial_population_count` of the items queued must be popped before the FIFO has
    /// synced.
    pub(crate) fn replaced_locked(
        &self,
        state: &mut Locked<Q>,
        resource_version: &str,
        initial_population_count: usize,
    ) {
        state.last_replace_resource_version = Some(resource_version.to_string());
        if !state.populated {
            state.populated = true;
            state.initial_population_count = initial_population_count;
        }
        self.publish_synced_locked(state);
    }

    fn publish_synced_locked(&self, state: &Locked<Q>) {
        if state.has_synced() && !*self.synced.borrow() {
            self.synced.send_replace(true);
        }
    }

    /// client-go's Pop loop: waits until `take` takes something from the queue and returns it
    /// with the lock still held, so the caller processes it as client-go does. Items left when
    /// the queue is closed are still taken; then `FifoClosed`.
    pub(crate) async fn pop<I>(
        &self,
        mut take: impl FnMut(&mut Locked<Q>) -> Option<I>,
    ) -> Result<(MutexGuard<'_, Locked<Q>>, I), FifoClosed> {
        loop {
            {
                let mut state = self.state.lock();
                if let Some(item) = take(&mut state) {
                    return Ok((state, item));
                }
                if state.closed {
                    return Err(FifoClosed);
                }
            }
            // Registered before the queue is looked at again, so an item queued in between
            // still wakes this pop.
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut state = self.state.lock();
                if let Some(item) = take(&mut state) {
                    return Ok((state, item));
                }
                if state.closed {
                    return Err(FifoClosed);
                }
                state.pop_waiting = true;
            }
            notified.await;
        }
    }

    /// `popped` items taken by [`FifoCore::pop`] are processed.
    pub(crate) fn popped_locked(&self, state: &mut Locked<Q>, popped: usize) {
        state.initial_population_count = state.initial_population_count.saturating_sub(popped);
        let queued = state.queue.len();
        self.metrics.set_queued(queued);
        if queued == 0 {
            self.metrics.caught_up();
        }
        self.publish_synced_locked(state);
    }

    /// A streamed initial state is complete at `resource_version`: `delete_missing` queues
    /// the deletions a Replace would make for what `listed` lacks (if it may lack anything)
    /// and says how many, and they count towards the initial population.
    pub(crate) fn finish_listed(
        &self,
        listed: &Listed,
        resource_version: &str,
        delete_missing: impl FnOnce(&mut Locked<Q>) -> usize,
    ) {
        self.metrics.saw_on_wire(Some(resource_version));
        let mut state = self.lock();
        let deletions = if listed.lacks_nothing() {
            0
        } else {
            delete_missing(&mut state)
        };
        if state.queue.is_empty() {
            self.metrics.caught_up();
        }
        let initial_population_count = state.initial_population_count + deletions;
        self.replaced_locked(&mut state, resource_version, initial_population_count);
    }

    /// Stops blocking pops once the queue is empty.
    pub(crate) fn close(&self) {
        self.state.lock().closed = true;
        self.notify.notify_waiters();
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.state.lock().closed
    }

    pub(crate) fn has_synced(&self) -> bool {
        self.state.lock().has_synced()
    }

    /// Resolves once [`Locked::has_synced`] is true, or at close if it never becomes so.
    pub(crate) async fn wait_for_sync(&self) -> bool {
        let mut rx = self.synced.subscribe();
        rx.wait_for(|synced| *synced).await.is_ok()
    }

    /// The resourceVersion of the last Replace, for display.
    pub(crate) fn last_replace_resource_version(&self) -> Option<String> {
        self.state.lock().last_replace_resource_version.clone()
    }
}

/// The DeltaFIFO was closed and has nothing left to pop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("DeltaFIFO: manipulating with closed queue")]
pub struct FifoClosed;

/// The keys a streamed initial state held, as [`crate::delta_fifo::ReflectorStore::finish_listed`] needs them to
/// queue the deletions a Replace would make.
#[derive(Debug)]
pub enum Listed {
    /// Every key the state held: the store knew objects, or had some queued, when it began.
    Keys(HashSet<Key, Hasher>),
    /// The store knew nothing and had nothing queued when the state began to stream
    /// ([`crate::delta_fifo::ReflectorStore::knows_nothing`]), so everything it holds at the end was streamed:
    /// only these keys, deleted while it streamed and not added since, are missing from the
    /// state. A first sync of 150,000 objects then keeps no set of their keys: a hash insert
    /// per object while they stream and a lookup per key at the end, saved.
    AllStreamedExcept(HashSet<Key, Hasher>),
}

impl Listed {
    /// Whether the state held `key`.
    pub fn contains(&self, key: &str) -> bool {
        match self {
            Self::Keys(keys) => keys.contains(key),
            Self::AllStreamedExcept(gone) => !gone.contains(key),
        }
    }

    /// Whether the state is known to lack nothing the store holds or has queued, so no
    /// deletion needs looking for.
    pub fn lacks_nothing(&self) -> bool {
        matches!(self, Self::AllStreamedExcept(gone) if gone.is_empty())
    }

    /// `key` arrived in the state.
    pub(super) fn streamed(&mut self, key: &Key) {
        match self {
            Self::Keys(keys) => {
                keys.insert(key.clone());
            }
            Self::AllStreamedExcept(gone) => {
                if !gone.is_empty() {
                    gone.remove(key);
                }
            }
        }
    }

    /// `key` was deleted while the state streamed.
    pub(super) fn unlisted(&mut self, key: &Key) {
        match self {
            Self::Keys(keys) => {
                keys.remove(key);
            }
            Self::AllStreamedExcept(gone) => {
                gone.insert(key.clone());
            }
        }
    }
}
