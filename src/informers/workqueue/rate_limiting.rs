//! The rate-limited queue, client-go's `rateLimitingType`: a delaying queue whose retries wait
//! as long as a [`RateLimiter`] says.

use std::ops::Deref;
use std::sync::Arc;

use super::WorkqueueError;
use super::delaying::DelayingQueue;
use super::queue::Item;
use super::rate_limiter::{MaxOfRateLimiter, RateLimiter, default_controller_rate_limiter};

/// A delaying queue with rate-limited retries. Dereferences to [`DelayingQueue`] (and so to
/// [`Queue`](super::Queue)). Clones share the queue and the limiter.
pub struct RateLimitingQueue<T: Item, R = MaxOfRateLimiter<T>> {
    queue: DelayingQueue<T>,
    limiter: Arc<R>,
}

impl<T: Item, R> Clone for RateLimitingQueue<T, R> {
    fn clone(&self) -> Self {
        Self {
            queue: self.queue.clone(),
            limiter: Arc::clone(&self.limiter),
        }
    }
}

impl<T: Item, R> Deref for RateLimitingQueue<T, R> {
    type Target = DelayingQueue<T>;

    fn deref(&self) -> &DelayingQueue<T> {
        &self.queue
    }
}

impl<T: Item> RateLimitingQueue<T> {
    /// A queue with [`default_controller_rate_limiter`], as client-go controllers use.
    pub fn with_default_rate_limiter() -> Result<Self, WorkqueueError> {
        Self::new(default_controller_rate_limiter())
    }
}

impl<T: Item, R: RateLimiter<T>> RateLimitingQueue<T, R> {
    /// A queue retrying at the pace `limiter` sets. Needs a Tokio runtime, like
    /// [`DelayingQueue::new`].
    pub fn new(limiter: R) -> Result<Self, WorkqueueError> {
        Ok(Self {
            queue: DelayingQueue::new()?,
            limiter: Arc::new(limiter),
        })
    }

    /// Re-adds a failed item once the limiter allows it, and counts a retry.
    pub fn add_rate_limited(&self, item: T) {
        self.queue.inner.count_retry();
        let delay = self.limiter.when(&item);
        self.queue.add_after(item, delay);
    }

    /// Stops tracking the item's failures (call after it succeeded). It does not remove the
    /// item from the queue.
    pub fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }

    /// How many times the item was retried since it was last forgotten.
    pub fn num_requeues(&self, item: &T) -> u32 {
        self.limiter.num_requeues(item)
    }

    /// The limiter, e.g. to share its state with a status panel.
    pub fn rate_limiter(&self) -> &R {
        &self.limiter
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workqueue::test_support::next;
    use std::time::Duration;
    use tokio::time::Instant;

    type Key = Arc<str>;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[tokio::test(start_paused = true)]
    async fn retries_back_off_and_forget_resets() {
        let q = RateLimitingQueue::<Key>::with_default_rate_limiter().unwrap();
        let a: Key = Key::from("a");
        let mut started = Instant::now();
        for expected in [ms(5), ms(10), ms(20)] {
            q.add_rate_limited(a.clone());
            assert_eq!(q.len(), 0, "not before its delay");
            assert_eq!(next(&q).await, Some(a.clone()));
            assert_eq!(started.elapsed(), expected);
            q.done(&a);
            started = Instant::now();
        }
        assert_eq!(q.num_requeues(&a), 3);
        assert_eq!(q.metrics().retries, 3);
        q.forget(&a);
        assert_eq!(q.num_requeues(&a), 0);
        q.add_rate_limited(a.clone());
        assert_eq!(next(&q).await, Some(a.clone()));
        assert_eq!(started.elapsed(), ms(5), "forget restarts the backoff");
        assert_eq!(q.metrics().retries, 4);
    }

    #[tokio::test(start_paused = true)]
    async fn custom_limiter() {
        let limiter =
            crate::workqueue::ItemFastSlowRateLimiter::new(ms(1), Duration::from_secs(1), 1);
        let q = RateLimitingQueue::new(limiter).unwrap();
        let started = Instant::now();
        q.add_rate_limited(7u32);
        assert_eq!(next(&q).await, Some(7));
        assert_eq!(started.elapsed(), ms(1));
        q.done(&7);
        q.add_rate_limited(7);
        assert_eq!(next(&q).await, Some(7));
        assert_eq!(started.elapsed(), ms(1001));
        assert_eq!(q.rate_limiter().num_requeues(&7), 2);
    }
}
