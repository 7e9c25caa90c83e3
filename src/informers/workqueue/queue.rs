//! The plain work queue, client-go's `workqueue.Type`: a FIFO plus a dirty set (items that need
//! processing) and a processing set (items a worker holds). An item sits in the FIFO only while
//! it is dirty and not being processed, which gives the two guarantees controllers rely on: no
//! item is processed by two workers at once, and any number of adds while an item is queued or
//! being processed collapse into one (more) run.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use foldhash::fast::RandomState;
use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::metrics::{Histogram, WorkqueueMetrics};
use super::waiting::Waiting;

/// What a work queue can hold. Items are cloned into the sets (cheap for kscope's `Arc<str>`
/// keys) and handed between tasks.
pub trait Item: Clone + Eq + Hash + Send + Sync + 'static {}
impl<T: Clone + Eq + Hash + Send + Sync + 'static> Item for T {}

/// A work queue handle. Clones share one queue, so hand one to every producer and worker.
pub struct Queue<T: Item> {
    pub(super) inner: Arc<Inner<T>>,
}

impl<T: Item> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<T: Item> Default for Queue<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// State shared by all handles of one queue (and by the delaying queue's timer task).
pub(super) struct Inner<T> {
    state: Mutex<State<T>>,
    /// Wakes getters: one per pushed item, all of them on shutdown.
    item_ready: Notify,
    /// Wakes `shut_down_with_drain` callers when the last in-flight item is done.
    drained: Notify,
    /// Delayed items, used only through `DelayingQueue`; kept here so that shutdown clears
    /// them and the metrics snapshot can count them.
    pub(super) waiting: Mutex<Waiting<T>>,
    /// Wakes the delaying queue's timer task. Its own `Arc` so the task can sleep on it without
    /// keeping the queue alive.
    pub(super) timer_wake: Arc<Notify>,
    /// Atomic rather than in `state`: retries are counted on the `add_after` path, which does
    /// not take the state lock.
    retries: AtomicU64,
}

struct State<T> {
    queue: VecDeque<T>,
    /// Items that need processing, with the time they became dirty (for queue latency).
    dirty: HashMap<T, Instant, RandomState>,
    /// Items workers hold.
    processing: HashMap<T, Processing, RandomState>,
    shutting_down: bool,
    /// Set by `shut_down_with_drain`: getters keep receiving queued items until none is left.
    drain: bool,
    adds: u64,
    coalesced_adds: u64,
    queue_latency: Histogram,
    work_duration: Histogram,
}

/// An item a worker holds.
struct Processing {
    /// When `get` handed it out (for work duration and unfinished work).
    started: Instant,
    /// Added again meanwhile, so `done` re-queues it. Mirrors "also in `dirty`" without a
    /// second lookup in the (large) dirty map on every `done`.
    dirty_again: bool,
}

/// What a non-blocking get found.
enum Got<T> {
    Item(T),
    Empty,
    ShutDown,
}

impl<T: Item> State<T> {
    /// Returns true when the item was pushed onto the FIFO (so one getter should be woken).
    /// The clock is read only for an add that is not coalesced.
    fn add(&mut self, item: T, now: impl FnOnce() -> Instant) -> bool {
        if self.shutting_down {
            return false;
        }
        match self.dirty.entry(item) {
            Entry::Occupied(_) => {
                self.coalesced_adds += 1;
                false
            }
            Entry::Vacant(slot) => {
                self.adds += 1;
                // An item being processed is re-queued by `done`, never pushed twice.
                let pushed = match self.processing.get_mut(slot.key()) {
                    Some(processing) => {
                        processing.dirty_again = true;
                        false
                    }
                    None => {
                        self.queue.push_back(slot.key().clone());
                        true
                    }
                };
                slot.insert(now());
                pushed
            }
        }
    }

    fn try_get(&mut self, now: Instant) -> Got<T> {
        match self.queue.pop_front() {
            Some(item) => {
                if let Some(added) = self.dirty.remove(&item) {
                    self.queue_latency
                        .observe(now.saturating_duration_since(added));
                }
                self.processing.insert(
                    item.clone(),
                    Processing {
                        started: now,
                        dirty_again: false,
                    },
                );
                Got::Item(item)
            }
            None if self.shutting_down => Got::ShutDown,
            None => Got::Empty,
        }
    }

    /// Whether a draining shutdown may return: nothing in flight, and nothing left to hand out
    /// (unless a plain shutdown since cancelled the drain).
    fn drained(&self) -> bool {
        self.processing.is_empty() && (self.queue.is_empty() || !self.drain)
    }
}

impl<T: Item> Inner<T> {
    fn new() -> Self {
        Self {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                dirty: HashMap::default(),
                processing: HashMap::default(),
                shutting_down: false,
                drain: false,
                adds: 0,
                coalesced_adds: 0,
                queue_latency: Histogram::default(),
                work_duration: Histogram::default(),
            }),
            item_ready: Notify::new(),
            drained: Notify::new(),
            waiting: Mutex::new(Waiting::default()),
            timer_wake: Arc::new(Notify::new()),
            retries: AtomicU64::new(0),
        }
    }

    /// Adds several items under one lock: the timer task releases all ready items at once.
    pub(super) fn add_all(&self, items: impl IntoIterator<Item = T>) {
        let now = Instant::now();
        let pushed = {
            let mut state = self.state.lock();
            let mut pushed = 0usize;
            for item in items {
                pushed += usize::from(state.add(item, || now));
            }
            pushed
        };
        for _ in 0..pushed {
            self.item_ready.notify_one();
        }
    }

    pub(super) fn is_shutting_down(&self) -> bool {
        self.state.lock().shutting_down
    }

    pub(super) fn count_retry(&self) {
        self.retries.fetch_add(1, Ordering::Relaxed);
    }
}

impl<T> Drop for Inner<T> {
    fn drop(&mut self) {
        // The timer task holds only a weak reference; wake it so it sees the queue is gone.
        self.timer_wake.notify_one();
    }
}

impl<T: Item> Queue<T> {
    /// An empty queue. Needs no runtime: nothing runs in the background.
    pub fn new() -> Self {
        Self {
            inner: Arc::new(Inner::new()),
        }
    }

    /// Marks the item as needing processing. An add that finds the item already dirty changes
    /// nothing (a coalesced add); an add for an item being processed makes `done` re-queue it.
    /// Ignored once shutting down.
    pub fn add(&self, item: T) {
        let pushed = self.inner.state.lock().add(item, Instant::now);
        if pushed {
            self.inner.item_ready.notify_one();
        }
    }

    /// Waits for the next item and marks it as being processed; the caller must call
    /// [`done`](Self::done) with it afterwards. `None` once the queue is shut down (after a
    /// draining shutdown: once no queued item is left). Cancel-safe: an item is taken only in
    /// the poll that returns it.
    pub async fn get(&self) -> Option<T> {
        let inner = &*self.inner;
        // Fast path: no waiter registration when an item is ready.
        if let Some(got) = self.try_get() {
            return got;
        }
        loop {
            let mut notified = pin!(inner.item_ready.notified());
            // Register before looking, so an add between the look and the await still wakes us.
            notified.as_mut().enable();
            if let Some(got) = self.try_get() {
                return got;
            }
            notified.await;
        }
    }

    /// `Some(item)` or `Some(None)` (shut down) when `get` can return, `None` when it must wait.
    fn try_get(&self) -> Option<Option<T>> {
        let now = Instant::now();
        match self.inner.state.lock().try_get(now) {
            Got::Item(item) => Some(Some(item)),
            Got::ShutDown => Some(None),
            Got::Empty => None,
        }
    }

    /// Ends the processing of an item got from [`get`](Self::get). If it was added again
    /// meanwhile it goes back on the queue, once. A no-op for an item not being processed.
    pub fn done(&self, item: &T) {
        let now = Instant::now();
        let (requeued, drained) = {
            let mut state = self.inner.state.lock();
            let Some((item, processing)) = state.processing.remove_entry(item) else {
                return;
            };
            state
                .work_duration
                .observe(now.saturating_duration_since(processing.started));
            let requeued = processing.dirty_again;
            if requeued {
                state.queue.push_back(item);
            }
            (requeued, state.shutting_down && state.drained())
        };
        if requeued {
            self.inner.item_ready.notify_one();
        }
        if drained {
            self.inner.drained.notify_waiters();
        }
    }

    /// Number of items waiting for a worker (client-go's `Len`).
    pub fn len(&self) -> usize {
        self.inner.state.lock().queue.len()
    }

    /// Whether no item is waiting for a worker.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stops the queue, as client-go's `ShutDown`: adds are ignored and delayed items dropped;
    /// `get` still hands out what is queued, then returns `None` (waking idle workers).
    /// Items being processed may still be marked done.
    pub fn shut_down(&self) {
        {
            let mut state = self.inner.state.lock();
            state.shutting_down = true;
            state.drain = false;
        }
        self.after_shutdown();
    }

    /// Stops accepting adds, lets workers take the items still queued, and returns once none is
    /// queued or in flight. Like client-go, it waits forever if no worker calls `get`/`done`.
    pub async fn shut_down_with_drain(&self) {
        {
            let mut state = self.inner.state.lock();
            if !state.shutting_down {
                state.shutting_down = true;
                state.drain = true;
            }
        }
        self.after_shutdown();
        loop {
            let mut notified = pin!(self.inner.drained.notified());
            notified.as_mut().enable();
            if self.inner.state.lock().drained() {
                return;
            }
            notified.await;
        }
    }

    fn after_shutdown(&self) {
        self.inner.waiting.lock().close();
        // Idle getters must see the shutdown; drain waiters must recheck (a plain shutdown
        // cancels a drain); the timer task must stop.
        self.inner.item_ready.notify_waiters();
        self.inner.drained.notify_waiters();
        self.inner.timer_wake.notify_one();
    }

    /// Whether `shut_down` or `shut_down_with_drain` was called.
    pub fn is_shutting_down(&self) -> bool {
        self.inner.is_shutting_down()
    }

    /// A snapshot of the queue's metrics.
    pub fn metrics(&self) -> WorkqueueMetrics {
        let now = Instant::now();
        let mut metrics = {
            let state = self.inner.state.lock();
            let (mut unfinished, mut longest) = (0.0, 0.0f64);
            for processing in state.processing.values() {
                let age = now
                    .saturating_duration_since(processing.started)
                    .as_secs_f64();
                unfinished += age;
                longest = longest.max(age);
            }
            WorkqueueMetrics {
                depth: state.dirty.len(),
                adds: state.adds,
                coalesced_adds: state.coalesced_adds,
                retries: 0,
                queue_latency: state.queue_latency.clone(),
                work_duration: state.work_duration.clone(),
                unfinished_work_seconds: unfinished,
                longest_running_processor_seconds: longest,
                in_flight: state.processing.len(),
                waiting: 0,
            }
        };
        metrics.retries = self.inner.retries.load(Ordering::Relaxed);
        metrics.waiting = self.inner.waiting.lock().len();
        metrics
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workqueue::test_support::next;
    use std::collections::HashSet;
    use std::time::Duration;

    type Key = Arc<str>;

    fn key(s: &str) -> Key {
        Key::from(s)
    }

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// Whether `get` would block: a zero-time poll, so no time passes even when paused.
    async fn blocks(q: &Queue<Key>) -> bool {
        futures::FutureExt::now_or_never(q.get()).is_none()
    }

    #[tokio::test]
    async fn fifo_order() {
        let q = Queue::new();
        for name in ["c", "a", "b"] {
            q.add(key(name));
        }
        assert_eq!(q.len(), 3);
        for name in ["c", "a", "b"] {
            let item = next(&q).await.unwrap();
            assert_eq!(item, key(name));
            q.done(&item);
        }
        assert!(q.is_empty());
    }

    #[tokio::test]
    async fn adds_while_queued_are_coalesced() {
        let q = Queue::new();
        q.add(key("a"));
        q.add(key("b"));
        q.add(key("a"));
        q.add(key("a"));
        assert_eq!(q.len(), 2);
        assert_eq!(next(&q).await, Some(key("a")));
        assert_eq!(next(&q).await, Some(key("b")));
        assert!(blocks(&q).await, "a was handed out once only");
        let m = q.metrics();
        assert_eq!((m.adds, m.coalesced_adds), (2, 2));
    }

    #[tokio::test]
    async fn adds_during_processing_collapse_into_one_more_run() {
        let q = Queue::new();
        q.add(key("a"));
        let a = next(&q).await.unwrap();
        q.add(key("a"));
        q.add(key("a"));
        q.add(key("a"));
        assert_eq!(q.len(), 0, "not queued while a worker holds it");
        assert!(blocks(&q).await, "a second worker must not get it");
        q.done(&a);
        assert_eq!(q.len(), 1);
        let again = next(&q).await.unwrap();
        assert_eq!(again, a);
        q.done(&again);
        assert!(blocks(&q).await, "exactly one more run");
        let m = q.metrics();
        assert_eq!((m.adds, m.coalesced_adds), (2, 2));
    }

    #[tokio::test]
    async fn done_for_an_item_not_processing_is_a_no_op() {
        let q = Queue::new();
        q.add(key("a"));
        q.done(&key("a"));
        q.done(&key("zzz"));
        assert_eq!(q.len(), 1, "a is queued once, not pushed again");
        assert_eq!(next(&q).await, Some(key("a")));
        assert!(blocks(&q).await);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn an_item_is_never_processed_by_two_workers_at_once() {
        const KEYS: usize = 8;
        const ROUNDS: usize = 2_000;
        let q = Queue::<Key>::new();
        let in_flight = Arc::new(Mutex::new(HashSet::<Key>::new()));
        let overlaps = Arc::new(AtomicU64::new(0));
        let runs = Arc::new(AtomicU64::new(0));
        let workers: Vec<_> = (0..8)
            .map(|_| {
                let (q, in_flight) = (q.clone(), in_flight.clone());
                let (overlaps, runs) = (overlaps.clone(), runs.clone());
                tokio::spawn(async move {
                    while let Some(item) = next(&q).await {
                        if !in_flight.lock().insert(item.clone()) {
                            overlaps.fetch_add(1, Ordering::Relaxed);
                        }
                        runs.fetch_add(1, Ordering::Relaxed);
                        tokio::task::yield_now().await;
                        in_flight.lock().remove(&item);
                        q.done(&item);
                    }
                })
            })
            .collect();
        let producers: Vec<_> = (0..4)
            .map(|p| {
                let q = q.clone();
                tokio::spawn(async move {
                    for round in 0..ROUNDS {
                        q.add(Key::from(format!("k{}", (round + p) % KEYS)));
                        if round % 16 == 0 {
                            tokio::task::yield_now().await;
                        }
                    }
                })
            })
            .collect();
        for p in producers {
            p.await.unwrap();
        }
        tokio::time::timeout(Duration::from_secs(30), q.shut_down_with_drain())
            .await
            .expect("drained");
        for w in workers {
            w.await.unwrap();
        }
        assert_eq!(overlaps.load(Ordering::Relaxed), 0);
        let m = q.metrics();
        assert_eq!(m.in_flight, 0);
        assert_eq!(m.depth, 0, "drained");
        assert_eq!(
            runs.load(Ordering::Relaxed),
            m.adds,
            "one run per effective add"
        );
        assert_eq!(m.adds + m.coalesced_adds, (4 * ROUNDS) as u64);
    }

    #[tokio::test]
    async fn shut_down_hands_out_what_is_queued_then_returns_none() {
        let q = Queue::<Key>::new();
        q.add(key("held"));
        let held = next(&q).await;
        q.add(key("queued"));
        q.shut_down();
        assert!(q.is_shutting_down());
        assert_eq!(
            next(&q).await,
            Some(key("queued")),
            "queued items are still handed out"
        );
        assert_eq!(next(&q).await, None, "then get says the queue is shut down");
        q.add(key("late"));
        assert_eq!(q.metrics().adds, 2, "adds after shutdown are ignored");
        assert_eq!(q.metrics().in_flight, 2);
        if let Some(held) = held {
            q.done(&held);
        }
        q.done(&key("queued"));
        assert_eq!(q.metrics().in_flight, 0);
    }

    #[tokio::test]
    async fn shut_down_wakes_idle_workers() {
        let q = Queue::<Key>::new();
        let idle = tokio::spawn({
            let q = q.clone();
            async move { next(&q).await }
        });
        tokio::task::yield_now().await;
        q.shut_down();
        assert_eq!(idle.await.unwrap(), None, "a blocked get is woken");
    }

    #[tokio::test(start_paused = true)]
    async fn shut_down_with_drain_waits_for_in_flight_items() {
        let q = Queue::<Key>::new();
        for name in ["a", "b"] {
            q.add(key(name));
        }
        let start = Instant::now();
        let worker = tokio::spawn({
            let q = q.clone();
            async move {
                let mut seen = Vec::new();
                while let Some(item) = next(&q).await {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    seen.push(item.clone());
                    q.done(&item);
                }
                seen
            }
        });
        tokio::task::yield_now().await;
        assert_eq!(q.metrics().in_flight, 1);
        q.shut_down_with_drain().await;
        assert_eq!(
            start.elapsed(),
            Duration::from_secs(2),
            "returned only after both items were done"
        );
        assert_eq!(worker.await.unwrap(), [key("a"), key("b")]);
        q.add(key("late"));
        assert_eq!(next(&q).await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn drain_rejects_adds_and_plain_shutdown_cancels_it() {
        let q = Queue::<Key>::new();
        q.add(key("a"));
        q.add(key("b"));
        let a = next(&q).await.unwrap();
        let drain = tokio::spawn({
            let q = q.clone();
            async move { q.shut_down_with_drain().await }
        });
        tokio::time::sleep(ms(10)).await;
        q.add(key("c"));
        assert_eq!(q.len(), 1, "c rejected, b still queued");
        assert!(!drain.is_finished());
        // A plain shutdown abandons b: the drain only waits for a now.
        q.shut_down();
        tokio::time::sleep(ms(10)).await;
        assert!(!drain.is_finished(), "a is still in flight");
        q.done(&a);
        // Paused time jumps ahead when the test would hang, so this fails fast instead.
        tokio::time::timeout(Duration::from_secs(60), drain)
            .await
            .expect("drain returns once a is done")
            .unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn drain_waits_for_in_flight_items_even_with_nothing_queued() {
        let q = Queue::<Key>::new();
        q.add(key("a"));
        let a = next(&q).await.unwrap();
        let start = Instant::now();
        let worker = tokio::spawn({
            let q = q.clone();
            async move {
                tokio::time::sleep(Duration::from_secs(1)).await;
                q.done(&a);
                next(&q).await
            }
        });
        tokio::time::timeout(Duration::from_secs(60), q.shut_down_with_drain())
            .await
            .expect("drain returns once a is done");
        assert_eq!(start.elapsed(), Duration::from_secs(1));
        assert_eq!(worker.await.unwrap(), None);
    }

    #[tokio::test]
    async fn drain_of_an_idle_queue_returns_at_once() {
        let q = Queue::<Key>::new();
        q.shut_down_with_drain().await;
        assert_eq!(next(&q).await, None);
    }

    #[tokio::test]
    async fn cancelled_get_does_not_lose_a_wake_up() {
        let q = Queue::<Key>::new();
        let patient = tokio::spawn({
            let q = q.clone();
            async move { next(&q).await }
        });
        // A get that gives up after registering must pass its wake-up on.
        let hasty = tokio::time::timeout(ms(1), q.get()).await;
        assert!(hasty.is_err());
        tokio::task::yield_now().await;
        q.add(key("a"));
        let got = tokio::time::timeout(Duration::from_secs(5), patient).await;
        assert_eq!(got.unwrap().unwrap(), Some(key("a")));
    }

    #[tokio::test(start_paused = true)]
    async fn metrics_track_adds_depth_latency_and_work() {
        let q = Queue::<Key>::new();
        q.add(key("a"));
        q.add(key("b"));
        q.add(key("a"));
        let m = q.metrics();
        assert_eq!((m.adds, m.coalesced_adds, m.depth), (2, 1, 2));

        tokio::time::advance(ms(3)).await;
        let a = next(&q).await.unwrap();
        tokio::time::advance(ms(2)).await;
        let b = next(&q).await.unwrap();
        let m = q.metrics();
        assert_eq!((m.depth, m.in_flight), (0, 2));
        assert_eq!(m.queue_latency.count(), 2);
        assert!((m.queue_latency.sum() - 0.008).abs() < 1e-9, "3 ms + 5 ms");

        tokio::time::advance(ms(10)).await;
        let m = q.metrics();
        assert!(
            (m.unfinished_work_seconds - 0.022).abs() < 1e-9,
            "12 ms + 10 ms"
        );
        assert!((m.longest_running_processor_seconds - 0.012).abs() < 1e-9);

        // Re-added while processing: counted in depth, latency runs from this add.
        q.add(key("a"));
        assert_eq!(q.metrics().depth, 1);
        q.done(&a);
        q.done(&b);
        let m = q.metrics();
        assert_eq!(m.work_duration.count(), 2);
        assert!((m.work_duration.sum() - 0.022).abs() < 1e-9);
        assert_eq!((m.in_flight, m.unfinished_work_seconds), (0, 0.0));
        tokio::time::advance(ms(1)).await;
        next(&q).await.unwrap();
        let m = q.metrics();
        assert_eq!(m.queue_latency.count(), 3);
        assert!((m.queue_latency.sum() - 0.009).abs() < 1e-9);
        assert_eq!((m.adds, m.depth, m.retries, m.waiting), (3, 0, 0, 0));
    }
}
