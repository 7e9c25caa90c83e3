//! The delaying queue, client-go's `delayingType`: `add_after` parks an item in a min-heap by
//! ready time, and a timer task moves it onto the queue when that time comes. An item waits at
//! most once, with its earliest requested ready time.

use std::ops::Deref;
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use super::WorkqueueError;
use super::queue::{Inner, Item, Queue};

/// A ready time far enough ahead to mean "never" when `now + delay` overflows.
const FAR_FUTURE: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

/// A work queue with `add_after`. Dereferences to [`Queue`] for everything else, as client-go's
/// `DelayingInterface` embeds `Interface`. Clones share one queue and one timer task.
pub struct DelayingQueue<T: Item> {
    queue: Queue<T>,
}

impl<T: Item> Clone for DelayingQueue<T> {
    fn clone(&self) -> Self {
        Self {
            queue: self.queue.clone(),
        }
    }
}

impl<T: Item> Deref for DelayingQueue<T> {
    type Target = Queue<T>;

    fn deref(&self) -> &Queue<T> {
        &self.queue
    }
}

impl<T: Item> DelayingQueue<T> {
    /// A new queue whose timer task runs on the current Tokio runtime (so paused test time
    /// drives it). The task ends on shutdown or when the last handle is dropped.
    pub fn new() -> Result<Self, WorkqueueError> {
        let runtime =
            tokio::runtime::Handle::try_current().map_err(|_| WorkqueueError::NoRuntime)?;
        let queue = Queue::new();
        runtime.spawn(waiting_loop(
            Arc::downgrade(&queue.inner),
            Arc::clone(&queue.inner.timer_wake),
        ));
        Ok(Self { queue })
    }

    /// Adds the item once `delay` has passed; at once if `delay` is zero. If the item already
    /// waits, it keeps the earlier of the two ready times. Ignored once shutting down.
    pub fn add_after(&self, item: T, delay: Duration) {
        if delay.is_zero() {
            self.queue.add(item);
            return;
        }
        let now = Instant::now();
        let at = now.checked_add(delay).unwrap_or_else(|| now + FAR_FUTURE);
        let rearm = self.queue.inner.waiting.lock().insert(item, at);
        if rearm {
            self.queue.inner.timer_wake.notify_one();
        }
    }
}

/// Moves ready items onto the queue, then sleeps until the next ready time or a wake-up (an
/// earlier item, shutdown, or the queue being dropped). It is the only waiter on `wake`, so
/// `notify_one`'s stored permit covers a wake-up sent while it is busy.
async fn waiting_loop<T: Item>(queue: Weak<Inner<T>>, wake: Arc<Notify>) {
    loop {
        let next = {
            let Some(inner) = queue.upgrade() else {
                return;
            };
            if inner.is_shutting_down() {
                return;
            }
            let (ready, next) = inner.waiting.lock().pop_ready(Instant::now());
            if !ready.is_empty() {
                inner.add_all(ready);
            }
            next
        };
        match next {
            Some(deadline) => {
                tokio::select! {
                    () = wake.notified() => {}
                    () = tokio::time::sleep_until(deadline) => {}
                }
            }
            None => wake.notified().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workqueue::test_support::next;
    use std::sync::Arc;

    type Key = Arc<str>;

    fn key(s: &str) -> Key {
        Key::from(s)
    }

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn new_outside_a_runtime_is_an_error() {
        assert!(matches!(
            DelayingQueue::<Key>::new(),
            Err(WorkqueueError::NoRuntime)
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn zero_delay_adds_at_once() {
        let q = DelayingQueue::new().unwrap();
        q.add_after(key("a"), Duration::ZERO);
        assert_eq!(q.len(), 1);
        assert_eq!(q.metrics().waiting, 0);
    }

    #[tokio::test(start_paused = true)]
    async fn not_before_ready_time() {
        let q = DelayingQueue::new().unwrap();
        let start = Instant::now();
        q.add_after(key("a"), ms(50));
        assert_eq!(q.len(), 0);
        assert_eq!(q.metrics().waiting, 1);
        assert!(
            tokio::time::timeout(ms(49), q.get()).await.is_err(),
            "came out early"
        );
        assert_eq!(next(&q).await, Some(key("a")));
        assert_eq!(start.elapsed(), ms(50));
        assert_eq!(q.metrics().waiting, 0);
    }

    #[tokio::test(start_paused = true)]
    async fn earliest_ready_time_is_kept() {
        let q = DelayingQueue::new().unwrap();
        let start = Instant::now();
        tokio::task::yield_now().await; // the timer task now sleeps with nothing to wait for
        // A later request does not postpone an item...
        q.add_after(key("a"), ms(10));
        q.add_after(key("a"), ms(100));
        // ...and an earlier one moves it up.
        q.add_after(key("b"), ms(100));
        q.add_after(key("b"), ms(20));
        assert_eq!(q.metrics().waiting, 2);

        assert_eq!(next(&q).await, Some(key("a")));
        assert_eq!(start.elapsed(), ms(10));
        assert_eq!(next(&q).await, Some(key("b")));
        assert_eq!(start.elapsed(), ms(20));
        q.done(&key("a"));
        q.done(&key("b"));

        // The superseded 100 ms entries must not resurface.
        assert!(tokio::time::timeout(ms(500), q.get()).await.is_err());
        assert_eq!(q.metrics().waiting, 0);
        assert_eq!(q.metrics().adds, 2);
    }

    #[tokio::test(start_paused = true)]
    async fn items_come_out_in_ready_time_order() {
        let q = DelayingQueue::new().unwrap();
        let start = Instant::now();
        for (name, delay) in [("c", 30), ("a", 10), ("d", 30), ("b", 20)] {
            q.add_after(key(name), ms(delay));
            // Let the timer task arm for the head, so an earlier item must re-arm it.
            tokio::task::yield_now().await;
        }
        let mut order = Vec::new();
        for _ in 0..4 {
            let item = next(&q).await.unwrap();
            order.push((item.to_string(), start.elapsed().as_millis()));
            q.done(&item);
        }
        let expected = [("a", 10), ("b", 20), ("c", 30), ("d", 30)];
        assert_eq!(
            order,
            expected.map(|(n, t)| (n.to_string(), t)).to_vec(),
            "ties keep insertion order"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn advancing_time_releases_items() {
        let q = DelayingQueue::new().unwrap();
        q.add_after(key("a"), ms(10));
        q.add_after(key("b"), ms(30));
        tokio::time::advance(ms(15)).await;
        tokio::task::yield_now().await;
        assert_eq!(q.len(), 1);
        tokio::time::advance(ms(15)).await;
        tokio::task::yield_now().await;
        assert_eq!(q.len(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn moved_up_items_do_not_grow_the_heap() {
        let q = DelayingQueue::new().unwrap();
        for i in (1..10_000u64).rev() {
            q.add_after(key("a"), ms(i));
        }
        assert!(q.inner.waiting.lock().heap.len() <= 2 + 64);
        assert_eq!(next(&q).await, Some(key("a")));
    }

    #[tokio::test(start_paused = true)]
    async fn shutdown_drops_waiting_items_and_stops_the_timer() {
        let q = DelayingQueue::new().unwrap();
        let runtime = tokio::runtime::Handle::current();
        q.add_after(key("a"), ms(10));
        tokio::task::yield_now().await;
        assert_eq!(runtime.metrics().num_alive_tasks(), 1);
        q.shut_down();
        assert_eq!(q.metrics().waiting, 0);
        q.add_after(key("b"), ms(10));
        assert_eq!(
            q.metrics().waiting,
            0,
            "add_after after shutdown is ignored"
        );
        tokio::task::yield_now().await;
        assert_eq!(runtime.metrics().num_alive_tasks(), 0);
        assert_eq!(next(&q).await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn dropping_every_handle_stops_the_timer() {
        let q = DelayingQueue::<Key>::new().unwrap();
        let runtime = tokio::runtime::Handle::current();
        q.add_after(key("a"), Duration::from_secs(3600));
        tokio::task::yield_now().await;
        assert_eq!(runtime.metrics().num_alive_tasks(), 1);
        drop(q);
        tokio::task::yield_now().await;
        assert_eq!(runtime.metrics().num_alive_tasks(), 0);
    }
}
