//! client-go's exponential backoff manager, as the Reflector uses it between list-and-watch
//! rounds: 800 ms doubling to a 30 s cap, each delay jittered by up to +100%, and back to
//! 800 ms once two minutes pass without needing a backoff.

use std::time::Duration;

use rand::Rng;
use tokio::time::Instant;

#[derive(Debug, Clone)]
pub struct Backoff {
    initial: Duration,
    cap: Duration,
    reset_after: Duration,
    /// Each delay becomes `d + random(0..jitter·d)`.
    jitter: f64,
    next: Duration,
    last_start: Option<Instant>,
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new(
            Duration::from_millis(800),
            Duration::from_secs(30),
            Duration::from_secs(120),
            1.0,
        )
    }
}

impl Backoff {
    pub fn new(initial: Duration, cap: Duration, reset_after: Duration, jitter: f64) -> Self {
        Self {
            initial,
            cap,
            reset_after,
            jitter,
            next: initial,
            last_start: None,
        }
    }

    /// The next delay to wait.
    pub fn next_delay(&mut self) -> Duration {
        let now = Instant::now();
        if self
            .last_start
            .is_some_and(|start| now.duration_since(start) > self.reset_after)
        {
            self.next = self.initial;
        }
        self.last_start = Some(now);
        let delay = self.next;
        self.next = (delay * 2).min(self.cap);
        if self.jitter > 0.0 {
            delay + delay.mul_f64(rand::rng().random_range(0.0..self.jitter))
        } else {
            delay
        }
    }

    /// Waits the next delay.
    pub async fn wait(&mut self) {
        tokio::time::sleep(self.next_delay()).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unjittered() -> Backoff {
        Backoff::new(
            Duration::from_millis(800),
            Duration::from_secs(30),
            Duration::from_secs(120),
            0.0,
        )
    }

    #[tokio::test(start_paused = true)]
    async fn doubles_from_800ms_to_a_30s_cap() {
        let mut backoff = unjittered();
        let delays: Vec<u128> = (0..8).map(|_| backoff.next_delay().as_millis()).collect();
        assert_eq!(delays, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
    }

    #[tokio::test(start_paused = true)]
    async fn resets_after_two_quiet_minutes() {
        let mut backoff = unjittered();
        backoff.next_delay();
        backoff.next_delay();
        tokio::time::advance(Duration::from_secs(119)).await;
        assert_eq!(backoff.next_delay(), Duration::from_millis(3200));
        tokio::time::advance(Duration::from_secs(121)).await;
        assert_eq!(backoff.next_delay(), Duration::from_millis(800));
    }

    #[tokio::test(start_paused = true)]
    async fn jitter_adds_up_to_the_delay_again() {
        let mut backoff = Backoff::default();
        for base in [800u64, 1600, 3200] {
            let delay = backoff.next_delay();
            assert!(delay >= Duration::from_millis(base));
            assert!(delay < Duration::from_millis(2 * base));
        }
    }
}
