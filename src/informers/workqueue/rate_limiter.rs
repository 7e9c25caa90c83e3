//! Rate limiters deciding how long a failed item waits before it is retried (client-go's
//! `workqueue.RateLimiter` and its implementations). Time comes from `tokio::time::Instant`, so
//! paused test time applies.

use std::collections::HashMap;
use std::time::Duration;

use foldhash::fast::RandomState;
use parking_lot::Mutex;
use tokio::time::Instant;

use super::WorkqueueError;
use super::queue::Item;

/// Decides retry delays. Shared by all workers of a queue, hence `Send + Sync` and `&self`.
pub trait RateLimiter<T>: Send + Sync {
    /// How long to wait before the item's next retry; records the attempt.
    fn when(&self, item: &T) -> Duration;
    /// Forgets the item's failures, e.g. after it was processed successfully.
    fn forget(&self, item: &T);
    /// How many times the item has been retried since it was last forgotten.
    fn num_requeues(&self, item: &T) -> u32;
}

/// Per-item exponential backoff: `base · 2^failures`, capped at `max`.
pub struct ItemExponentialFailureRateLimiter<T> {
    base: Duration,
    max: Duration,
    failures: Mutex<HashMap<T, u32, RandomState>>,
}

impl<T: Item> ItemExponentialFailureRateLimiter<T> {
    pub fn new(base: Duration, max: Duration) -> Self {
        Self {
            base,
            max,
            failures: Mutex::new(HashMap::default()),
        }
    }
}

impl<T: Item> Default for ItemExponentialFailureRateLimiter<T> {
    /// client-go's controller default: 5 ms doubling up to 1000 s.
    fn default() -> Self {
        Self::new(Duration::from_millis(5), Duration::from_secs(1000))
    }
}

impl<T: Item> RateLimiter<T> for ItemExponentialFailureRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let exp = {
            let mut failures = self.failures.lock();
            let count = failures.entry(item.clone()).or_insert(0);
            let exp = *count;
            *count = count.saturating_add(1);
            exp
        };
        // 2^exp overflows u32 from exp = 32, the product may overflow Duration: both mean "max".
        1u32.checked_shl(exp)
            .and_then(|factor| self.base.checked_mul(factor))
            .map_or(self.max, |delay| delay.min(self.max))
    }

    fn forget(&self, item: &T) {
        self.failures.lock().remove(item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.failures.lock().get(item).copied().unwrap_or(0)
    }
}

/// Per-item: `fast` for the first `max_fast_attempts` retries, `slow` after that.
pub struct ItemFastSlowRateLimiter<T> {
    fast: Duration,
    slow: Duration,
    max_fast_attempts: u32,
    attempts: Mutex<HashMap<T, u32, RandomState>>,
}

impl<T: Item> ItemFastSlowRateLimiter<T> {
    pub fn new(fast: Duration, slow: Duration, max_fast_attempts: u32) -> Self {
        Self {
            fast,
            slow,
            max_fast_attempts,
            attempts: Mutex::new(HashMap::default()),
        }
    }
}

impl<T: Item> RateLimiter<T> for ItemFastSlowRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let mut attempts = self.attempts.lock();
        let count = attempts.entry(item.clone()).or_insert(0);
        *count = count.saturating_add(1);
        if *count <= self.max_fast_attempts {
            self.fast
        } else {
            self.slow
        }
    }

    fn forget(&self, item: &T) {
        self.attempts.lock().remove(item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.attempts.lock().get(item).copied().unwrap_or(0)
    }
}

/// One token bucket shared by all items (golang.org/x/time/rate's `Limiter`): `qps` tokens per
/// second, at most `burst` saved up. Each `when` takes a token, going into debt when none is
/// left, and returns how long until that token exists (`Reserve().Delay()`).
pub struct BucketRateLimiter {
    qps: f64,
    /// `burst` in nano-tokens.
    capacity: i128,
    bucket: Mutex<Bucket>,
}

/// Tokens are counted in billionths so that delays come out in exact nanoseconds.
struct Bucket {
    nano_tokens: i128,
    last: Instant,
}

const NANOS_PER_TOKEN: i128 = 1_000_000_000;

impl BucketRateLimiter {
    /// A full bucket. The rate must be finite and above zero, the burst at least one.
    pub fn new(qps: f64, burst: u32) -> Result<Self, WorkqueueError> {
        if !(qps.is_finite() && qps > 0.0) || burst == 0 {
            return Err(WorkqueueError::InvalidBucket { qps, burst });
        }
        Ok(Self::new_unchecked(qps, burst))
    }

    fn new_unchecked(qps: f64, burst: u32) -> Self {
        let capacity = i128::from(burst) * NANOS_PER_TOKEN;
        Self {
            qps,
            capacity,
            bucket: Mutex::new(Bucket {
                nano_tokens: capacity,
                last: Instant::now(),
            }),
        }
    }
}

impl Default for BucketRateLimiter {
    /// client-go's controller default: 10 per second, burst 100.
    fn default() -> Self {
        Self::new_unchecked(10.0, 100)
    }
}

impl<T> RateLimiter<T> for BucketRateLimiter {
    fn when(&self, _item: &T) -> Duration {
        let now = Instant::now();
        let mut bucket = self.bucket.lock();
        let elapsed = now.saturating_duration_since(bucket.last);
        // elapsed ns × tokens/s = nano-tokens; the float product saturates when cast.
        let refill = (elapsed.as_nanos() as f64 * self.qps) as i128;
        bucket.nano_tokens =
            bucket.nano_tokens.saturating_add(refill).min(self.capacity) - NANOS_PER_TOKEN;
        bucket.last = now;
        if bucket.nano_tokens >= 0 {
            return Duration::ZERO;
        }
        let wait_nanos = (-bucket.nano_tokens) as f64 / self.qps;
        Duration::from_nanos(wait_nanos.ceil() as u64)
    }

    fn forget(&self, _item: &T) {}

    fn num_requeues(&self, _item: &T) -> u32 {
        0
    }
}

/// Asks every limiter and waits for the longest answer.
pub struct MaxOfRateLimiter<T> {
    limiters: Vec<Box<dyn RateLimiter<T>>>,
}

impl<T> MaxOfRateLimiter<T> {
    pub fn new(limiters: Vec<Box<dyn RateLimiter<T>>>) -> Self {
        Self { limiters }
    }
}

impl<T> RateLimiter<T> for MaxOfRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        // Every limiter must record the attempt, so no short-circuit.
        self.limiters
            .iter()
            .map(|limiter| limiter.when(item))
            .max()
            .unwrap_or(Duration::ZERO)
    }

    fn forget(&self, item: &T) {
        for limiter in &self.limiters {
            limiter.forget(item);
        }
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.limiters
            .iter()
            .map(|limiter| limiter.num_requeues(item))
            .max()
            .unwrap_or(0)
    }
}

/// client-go's `DefaultControllerRateLimiter`: per-item exponential backoff (5 ms to 1000 s)
/// bounded overall by a 10 qps, burst 100 token bucket.
pub fn default_controller_rate_limiter<T: Item>() -> MaxOfRateLimiter<T> {
    MaxOfRateLimiter::new(vec![
        Box::new(ItemExponentialFailureRateLimiter::<T>::default()),
        Box::new(BucketRateLimiter::default()),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    type Key = Arc<str>;

    fn key(s: &str) -> Key {
        Key::from(s)
    }

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn exponential_doubles_and_caps() {
        let limiter = ItemExponentialFailureRateLimiter::<Key>::default();
        let a = key("a");
        let delays: Vec<_> = (0..5).map(|_| limiter.when(&a)).collect();
        assert_eq!(delays, [ms(5), ms(10), ms(20), ms(40), ms(80)]);
        assert_eq!(limiter.num_requeues(&a), 5);
        // 5 ms · 2^17 = 655 s, 2^18 would be 1310 s: capped from there on.
        for _ in 5..17 {
            limiter.when(&a);
        }
        assert_eq!(limiter.when(&a), Duration::from_millis(5 << 17));
        assert_eq!(limiter.when(&a), Duration::from_secs(1000));
        // Far past the point where 2^failures overflows.
        for _ in 0..100 {
            assert_eq!(limiter.when(&a), Duration::from_secs(1000));
        }
        assert_eq!(limiter.num_requeues(&key("b")), 0, "per item");
        limiter.forget(&a);
        assert_eq!(limiter.num_requeues(&a), 0);
        assert_eq!(limiter.when(&a), ms(5), "forget resets the backoff");
    }

    #[test]
    fn exponential_survives_duration_overflow() {
        let limiter =
            ItemExponentialFailureRateLimiter::<Key>::new(Duration::MAX / 3, Duration::MAX);
        let a = key("a");
        assert_eq!(limiter.when(&a), Duration::MAX / 3);
        assert_eq!(limiter.when(&a), Duration::MAX / 3 * 2);
        assert_eq!(limiter.when(&a), Duration::MAX, "overflow means max");
    }

    #[test]
    fn fast_slow_switches_after_max_fast_attempts() {
        let limiter = ItemFastSlowRateLimiter::<Key>::new(ms(5), Duration::from_secs(10), 3);
        let a = key("a");
        let delays: Vec<_> = (0..5).map(|_| limiter.when(&a)).collect();
        let slow = Duration::from_secs(10);
        assert_eq!(delays, [ms(5), ms(5), ms(5), slow, slow]);
        assert_eq!(limiter.num_requeues(&a), 5);
        limiter.forget(&a);
        assert_eq!(limiter.when(&a), ms(5));
    }

    #[test]
    fn bucket_rejects_bad_parameters() {
        assert!(BucketRateLimiter::new(0.0, 1).is_err());
        assert!(BucketRateLimiter::new(f64::NAN, 1).is_err());
        assert!(BucketRateLimiter::new(10.0, 0).is_err());
        assert!(BucketRateLimiter::new(0.5, 1).is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn bucket_bursts_then_paces_then_refills() {
        let limiter = BucketRateLimiter::default();
        let a = key("a");
        for i in 0..100 {
            assert_eq!(
                RateLimiter::<Key>::when(&limiter, &a),
                Duration::ZERO,
                "call {i}"
            );
        }
        assert_eq!(RateLimiter::<Key>::when(&limiter, &a), ms(100));
        assert_eq!(RateLimiter::<Key>::when(&limiter, &a), ms(200));
        assert_eq!(RateLimiter::<Key>::num_requeues(&limiter, &a), 0);
        // 1 s refills 10 tokens: 2 pay the debt, 8 are free.
        tokio::time::advance(Duration::from_secs(1)).await;
        for i in 0..8 {
            assert_eq!(
                RateLimiter::<Key>::when(&limiter, &a),
                Duration::ZERO,
                "call {i}"
            );
        }
        assert_eq!(RateLimiter::<Key>::when(&limiter, &a), ms(100));
        // A long pause refills up to the burst only.
        tokio::time::advance(Duration::from_secs(3600)).await;
        for _ in 0..100 {
            assert_eq!(RateLimiter::<Key>::when(&limiter, &a), Duration::ZERO);
        }
        assert_eq!(RateLimiter::<Key>::when(&limiter, &a), ms(100));
    }

    #[tokio::test(start_paused = true)]
    async fn default_controller_limiter_takes_the_max() {
        let limiter = default_controller_rate_limiter::<Key>();
        let a = key("a");
        // Bucket full: the per-item backoff decides.
        assert_eq!(limiter.when(&a), ms(5));
        assert_eq!(limiter.when(&a), ms(10));
        assert_eq!(limiter.num_requeues(&a), 2);
        // Drain the shared bucket with other items (98 tokens left).
        for i in 0..98 {
            assert_eq!(limiter.when(&key(&format!("k{i}"))), ms(5));
        }
        // Bucket empty: a fresh item waits for the bucket's 100 ms, not its own 5 ms.
        assert_eq!(limiter.when(&key("fresh")), ms(100));
        // The bucket's debt grows: 200 ms beats a's own 20 ms.
        assert_eq!(limiter.when(&a), ms(200));
        // Once a's backoff is the longer one, it wins: 5 ms · 2^10 = 5.12 s > the bucket's 1 s.
        for _ in 3..10 {
            limiter.when(&a);
        }
        assert_eq!(limiter.when(&a), ms(5 << 10));
        limiter.forget(&a);
        assert_eq!(limiter.num_requeues(&a), 0);
    }
}
