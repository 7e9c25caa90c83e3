//! A port of client-go's `util/workqueue`: the queue that carries keys from informer handlers to
//! workers.
//!
//! - [`Queue`]: fair (FIFO), stingy (an item is never processed by two workers at once, and
//!   adds while it is queued or processing collapse into one more run), many producers and
//!   consumers, shutdown with or without drain.
//! - [`DelayingQueue`]: plus `add_after`, keeping the earliest ready time per item.
//! - [`RateLimitingQueue`]: plus `add_rate_limited`/`forget`/`num_requeues` driven by a
//!   [`RateLimiter`]; [`default_controller_rate_limiter`] is client-go's default.
//! - [`WorkqueueMetrics`]: client-go's queue metrics plus kscope's, as a cheap snapshot.
//!
//! Everything is async (Tokio) and no lock is held across an `.await`.

mod delaying;
mod metrics;
mod queue;
mod rate_limiter;
mod rate_limiting;
mod waiting;

pub use delaying::DelayingQueue;
pub use metrics::{BUCKET_BOUNDS, Histogram, WorkqueueMetrics};
pub use queue::{Item, Queue};
pub use rate_limiter::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, ItemFastSlowRateLimiter,
    MaxOfRateLimiter, RateLimiter, default_controller_rate_limiter,
};
pub use rate_limiting::RateLimitingQueue;

/// Why a queue or limiter could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WorkqueueError {
    #[error("a delaying queue runs its timer on Tokio: create it inside a Tokio runtime")]
    NoRuntime,
    #[error(
        "a token bucket needs a finite rate above zero and a burst of at least one \
         (got {qps} per second, burst {burst})"
    )]
    InvalidBucket { qps: f64, burst: u32 },
}

#[cfg(test)]
mod test_support {
    use super::{Item, Queue};
    use std::time::Duration;

    /// `get`, failing the test instead of hanging when nothing comes: under paused time the
    /// runtime jumps to the timeout as soon as everything is idle.
    pub(super) async fn next<T: Item>(q: &Queue<T>) -> Option<T> {
        tokio::time::timeout(Duration::from_secs(3600), q.get())
            .await
            .expect("get hung: nothing within an hour")
    }
}
