//! The replay's playback clock: where in the recording's time the served cluster is. It runs
//! at a speed, can be paused, stepped and moved; watches wait on it, so a pause holds every
//! open watch, a speed change takes effect at once, and a seek (which the clients' stores
//! cannot follow event by event) ends the open watches so their clients relist, as after a
//! server's restart.

use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// One reading of the clock: the recording's time at an instant, and how it goes on.
#[derive(Debug, Clone, Copy)]
struct Reading {
    /// The recording's time (µs since the epoch) at `since`.
    at: i64,
    /// When `at` held; `None` until playback starts (at the first list or watch).
    since: Option<Instant>,
    speed: f64,
    paused: bool,
    /// Seeks so far: a watch opened before the last one ends.
    seeks: u64,
}

impl Reading {
    fn position(&self, now: Instant) -> i64 {
        match self.since {
            Some(since) if !self.paused => {
                let played = now.saturating_duration_since(since).as_secs_f64() * 1e6 * self.speed;
                self.at.saturating_add(played as i64)
            }
            _ => self.at,
        }
    }

    /// When the clock reaches `at`, while it plays; one microsecond late rather than early,
    /// so the wait ends with the position at or past `at`.
    fn instant_of(&self, at: i64) -> Option<Instant> {
        let since = self.since.filter(|_| !self.paused)?;
        let micros = (at.saturating_sub(self.at).max(0) as f64) / self.speed;
        Some(since + Duration::from_secs_f64(micros / 1e6) + Duration::from_micros(1))
    }
}

/// The clock every request of a replay reads.
#[derive(Debug)]
pub struct Clock {
    reading: watch::Sender<Reading>,
}

/// What the clock says now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockState {
    pub at: i64,
    pub speed: f64,
    pub paused: bool,
}

impl Clock {
    pub fn new(first_at: i64, speed: f64) -> Self {
        let (reading, _) = watch::channel(Reading {
            at: first_at,
            since: None,
            speed,
            paused: false,
            seeks: 0,
        });
        Self { reading }
    }

    /// Starts playback if it has not started: a client's first request does.
    pub fn start(&self) {
        self.reading.send_if_modified(|r| {
            let start = r.since.is_none();
            r.since.get_or_insert_with(Instant::now);
            start
        });
    }

    /// Where playback is in the recording's time (µs since the epoch).
    pub fn position(&self) -> i64 {
        self.start();
        self.reading.borrow().position(Instant::now())
    }

    pub fn state(&self) -> ClockState {
        let r = *self.reading.borrow();
        ClockState {
            at: r.position(Instant::now()),
            speed: r.speed,
            paused: r.paused,
        }
    }

    /// The seeks so far, for a watch to tell [`Clock::wait_for`] when it opened.
    pub fn seeks(&self) -> u64 {
        self.reading.borrow().seeks
    }

    /// Waits until playback reaches `at`: true then, false once a seek after the
    /// `seeks`-th has moved the clock (the watch waiting must end).
    pub async fn wait_for(&self, at: i64, seeks: u64) -> bool {
        let mut changes = self.reading.subscribe();
        loop {
            let reading = *changes.borrow_and_update();
            if reading.seeks != seeks {
                return false;
            }
            if reading.since.is_some() && reading.position(Instant::now()) >= at {
                return true;
            }
            let changed = match reading.instant_of(at) {
                Some(when) => tokio::select! {
                    () = tokio::time::sleep_until(when) => Ok(()),
                    changed = changes.changed() => changed,
                },
                None => changes.changed().await,
            };
            if changed.is_err() {
                // The replay is gone: nothing will ever be reached.
                return false;
            }
        }
    }

    /// Waits for a seek after the `seeks`-th (forever once the replay is gone).
    pub async fn wait_for_seek(&self, seeks: u64) {
        let mut changes = self.reading.subscribe();
        while changes.borrow_and_update().seeks == seeks {
            if changes.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }

    /// Changes the reading from the position now, so that what was played stays played.
    fn rebase(&self, change: impl FnOnce(&mut Reading)) {
        self.reading.send_modify(|r| {
            let now = Instant::now();
            r.at = r.position(now);
            r.since = Some(now);
            change(r);
        });
    }

    pub fn set_paused(&self, paused: bool) {
        self.rebase(|r| r.paused = paused);
    }

    pub fn set_speed(&self, speed: f64) {
        self.rebase(|r| r.speed = speed);
    }

    /// Moves forward to `at` (nothing when it is behind): the open watches send what it
    /// passes, as if played.
    pub fn advance_to(&self, at: i64) {
        self.rebase(|r| r.at = r.at.max(at));
    }

    /// Moves to `at`, forward or back; open watches end.
    pub fn seek(&self, at: i64) {
        self.rebase(|r| {
            r.at = at;
            r.seeks += 1;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_paused_clock_holds_and_a_seek_ends_the_waits() {
        let clock = std::sync::Arc::new(Clock::new(1_000_000, 2.0));
        clock.start();
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(clock.position(), 3_000_000);
        clock.set_paused(true);
        tokio::time::advance(Duration::from_secs(5)).await;
        assert_eq!(clock.position(), 3_000_000);
        let waiting = tokio::spawn({
            let clock = clock.clone();
            async move { clock.wait_for(3_500_000, 0).await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        clock.advance_to(3_500_000);
        assert!(waiting.await.unwrap());
        let waiting = tokio::spawn({
            let clock = clock.clone();
            async move { clock.wait_for(9_000_000, 0).await }
        });
        tokio::task::yield_now().await;
        clock.seek(1_000_000);
        assert!(!waiting.await.unwrap());
        assert_eq!(clock.position(), 1_000_000);
        assert_eq!(clock.seeks(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_speed_change_keeps_what_was_played() {
        let clock = Clock::new(0, 1.0);
        clock.start();
        tokio::time::advance(Duration::from_secs(2)).await;
        clock.set_speed(10.0);
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(clock.position(), 12_000_000);
    }
}
