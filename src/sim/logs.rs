//! Container logs made up on demand: each container instance (pod uid, container, restart)
//! writes deterministic, plausible lines at its app's own rate from the moment it started,
//! so reading line `i` costs a hash and nothing is stored per pod. A kubelet keeps only the
//! newest lines (log rotation); so does this.

use std::hash::{Hash, Hasher};

/// The newest lines a container's log keeps, as after the kubelet's rotation.
pub(crate) const RETAINED_LINES: u64 = 5_000;

/// An app whose containers write far more than any other (`kscope sim --noisy-logs
/// APP=RATE`): what the log view is measured against, 50,000 lines a second by default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoisyLogs {
    /// The pods' `app` (or `app.kubernetes.io/name`) label.
    pub app: String,
    pub lines_per_second: u32,
}

/// What a noisy app writes unless told otherwise.
const NOISY_DEFAULT_RATE: u32 = 50_000;
/// A faster app could not be served: one line a microsecond.
const NOISY_MAX_RATE: u32 = 1_000_000;

impl std::str::FromStr for NoisyLogs {
    type Err = String;

    /// `APP` (50,000 lines a second) or `APP=RATE`.
    fn from_str(spec: &str) -> Result<Self, String> {
        let (app, rate) = match spec.split_once('=') {
            Some((app, rate)) => {
                let rate = rate
                    .parse::<u32>()
                    .ok()
                    .filter(|r| (1..=NOISY_MAX_RATE).contains(r))
                    .ok_or_else(|| {
                        format!("{rate:?}: lines per second must be 1 to {NOISY_MAX_RATE}")
                    })?;
                (app, rate)
            }
            None => (spec, NOISY_DEFAULT_RATE),
        };
        if app.is_empty() {
            return Err("expected APP or APP=LINES_PER_SECOND".into());
        }
        Ok(Self {
            app: app.to_string(),
            lines_per_second: rate,
        })
    }
}

/// How an app writes its log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// Structured JSON, one object a line (Go services with zap, say).
    Json,
    /// An nginx-style access log.
    Access,
    /// klog, as Kubernetes components and controllers write it.
    Klog,
}

/// One container instance's log.
#[derive(Debug, Clone)]
pub(crate) struct ContainerLog {
    seed: u64,
    style: Style,
    /// Microseconds between lines.
    period_us: i64,
    /// When the instance started and, for a terminated one, ended (Unix milliseconds).
    started_ms: i64,
    finished_ms: Option<i64>,
    /// Whether it ended by crashing: its last lines are then the crash's.
    crashed: bool,
}

fn hash(parts: impl Hash) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    parts.hash(&mut h);
    h.finish()
}

impl ContainerLog {
    /// The log of `container` of the pod with `uid` in app `app`, instance `restart` (0 for
    /// the first), running since `started_ms` (until `finished_ms` if it terminated).
    pub(crate) fn new(
        app: &str,
        uid: &str,
        container: &str,
        restart: u64,
        started_ms: i64,
        finished_ms: Option<i64>,
        crashed: bool,
    ) -> Self {
        let app_hash = hash((app, container));
        let style = match app_hash % 3 {
            0 => Style::Json,
            1 => Style::Access,
            _ => Style::Klog,
        };
        const PERIODS: [i64; 5] = [250_000, 500_000, 1_000_000, 2_000_000, 5_000_000];
        Self {
            seed: hash((uid, container, restart)),
            style,
            period_us: PERIODS[(app_hash / 3 % PERIODS.len() as u64) as usize],
            started_ms,
            finished_ms,
            crashed,
        }
    }

    /// The same log written at `noisy`'s rate when the app is the noisy one.
    pub(crate) fn noisy(mut self, app: &str, noisy: Option<&NoisyLogs>) -> Self {
        if let Some(noisy) = noisy.filter(|n| n.app == app) {
            self.period_us = (1_000_000 / i64::from(noisy.lines_per_second.max(1))).max(1);
        }
        self
    }

    /// When the instance started (Unix milliseconds), which tells one run of a container
    /// from the next.
    pub(crate) fn started_ms(&self) -> i64 {
        self.started_ms
    }

    /// When line `i` is written (Unix milliseconds).
    pub(crate) fn time_of(&self, i: u64) -> i64 {
        // A little jitter within the period keeps lines from ticking like a clock.
        let jitter = (hash((self.seed, i)) % (self.period_us as u64 / 2).max(1)) as i64;
        self.started_ms + (i as i64 * self.period_us + jitter) / 1_000
    }

    /// How many lines are written by `now_ms` (or by the end, for a terminated instance).
    pub(crate) fn written_by(&self, now_ms: i64) -> u64 {
        let end = self.finished_ms.map_or(now_ms, |f| f.min(now_ms));
        if end < self.started_ms {
            return 0;
        }
        // Line i falls in a millisecond up to `end` when i * period (plus a jitter under
        // half a period) is short of the next millisecond: many lines share a millisecond
        // of a fast log, and all of them are counted. Only the last candidate can be late.
        let next_ms_us = ((end - self.started_ms + 1) * 1_000) as u64;
        let mut n = next_ms_us.div_ceil(self.period_us as u64);
        while n > 0 && self.time_of(n - 1) > end {
            n -= 1;
        }
        n + u64::from(self.crashed && self.finished_ms.is_some_and(|f| f <= now_ms)) * CRASH_LINES
    }

    /// The first line the rotated log still holds, of `written` lines.
    pub(crate) fn first_retained(written: u64) -> u64 {
        written.saturating_sub(RETAINED_LINES)
    }

    /// Line `i` (without its newline) and when it was written. For a crashed instance the
    /// lines past its last regular one are the crash.
    pub(crate) fn line(&self, i: u64) -> (i64, String) {
        if let Some(finished) = self.finished_ms.filter(|_| self.crashed) {
            let regular = self.written_by(finished) - CRASH_LINES;
            if i >= regular {
                return (finished, crash_line(self.style, i - regular));
            }
        }
        let t = self.time_of(i);
        (t, self.regular_line(i, t))
    }

    fn regular_line(&self, i: u64, t: i64) -> String {
        let h = hash((self.seed, i, 1u8));
        const PATHS: [&str; 6] = [
            "/healthz",
            "/api/v1/items",
            "/api/v1/orders",
            "/metrics",
            "/api/v1/users/me",
            "/readyz",
        ];
        const METHODS: [&str; 4] = ["GET", "GET", "POST", "PUT"];
        let path = PATHS[(h % 6) as usize];
        let method = METHODS[(h / 7 % 4) as usize];
        let status = match h / 31 % 50 {
            0 => 500,
            1..=3 => 404,
            4 => 201,
            _ => 200,
        };
        let ms = h / 101 % 250 + 1;
        let client = format!(
            "10.{}.{}.{}",
            64 + h / 11 % 4,
            h / 13 % 256,
            h / 17 % 254 + 1
        );
        let ts = jiff::Timestamp::from_millisecond(t).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
        match self.style {
            Style::Json => {
                let level = if status >= 500 { "error" } else { "info" };
                format!(
                    r#"{{"level":"{level}","ts":"{ts}","logger":"http","msg":"request handled","method":"{method}","path":"{path}","status":{status},"duration_ms":{ms},"remote":"{client}"}}"#
                )
            }
            Style::Access => {
                let when = ts.strftime("%d/%b/%Y:%H:%M:%S +0000");
                let bytes = h / 7919 % 20_000;
                format!(
                    r#"{client} - - [{when}] "{method} {path} HTTP/1.1" {status} {bytes} "-" "Go-http-client/1.1""#
                )
            }
            Style::Klog => {
                let when = ts.strftime("%m%d %H:%M:%S%.6f");
                let (severity, text) = if status >= 500 {
                    ("E", r#""Reconciler error" err="context deadline exceeded""#)
                } else if i.is_multiple_of(10) {
                    ("I", r#""Starting workers" count=2"#)
                } else {
                    ("I", r#""Reconciled" result="ok""#)
                };
                format!(
                    "{severity}{when}       1 controller.go:{}] {text} duration=\"{ms}ms\"",
                    h / 3 % 400 + 100
                )
            }
        }
    }
}

/// How many lines a crash writes.
const CRASH_LINES: u64 = 5;

fn crash_line(style: Style, i: u64) -> String {
    const TRACE: [&str; 5] = [
        "panic: runtime error: invalid memory address or nil pointer dereference",
        "[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x6b3f2a]",
        "goroutine 1 [running]:",
        "main.(*Server).handle(0x0, {0x7f12c0, 0xc0001a2000})",
        "\t/app/server.go:142 +0x2a",
    ];
    let text = TRACE[(i as usize).min(TRACE.len() - 1)];
    match (style, i) {
        (Style::Json, 0) => {
            format!(r#"{{"level":"fatal","msg":"unrecoverable error","error":"{text}"}}"#)
        }
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_deterministic_and_in_time_order() {
        let log = ContainerLog::new("web", "uid-1", "app", 0, 1_000_000, None, false);
        let again = ContainerLog::new("web", "uid-1", "app", 0, 1_000_000, None, false);
        let n = log.written_by(1_000_000 + 60_000);
        assert!(n > 0);
        let mut last = i64::MIN;
        for i in 0..n {
            let (t, line) = log.line(i);
            assert_eq!((t, line.clone()), again.line(i));
            assert!(t >= last && !line.is_empty() && !line.contains('\n'));
            last = t;
        }
        assert!(last <= 1_000_000 + 60_000);
        let other = ContainerLog::new("web", "uid-2", "app", 0, 1_000_000, None, false);
        assert_ne!(log.line(3).1, other.line(3).1);
    }

    #[test]
    fn a_noisy_app_writes_at_its_rate() {
        let noisy: NoisyLogs = "web".parse().unwrap();
        assert_eq!(noisy.lines_per_second, 50_000);
        assert_eq!("web=10".parse::<NoisyLogs>().unwrap().lines_per_second, 10);
        assert!("web=0".parse::<NoisyLogs>().is_err());
        assert!("=5".parse::<NoisyLogs>().is_err());
        let log =
            ContainerLog::new("web", "u", "app", 0, 0, None, false).noisy("web", Some(&noisy));
        // By 1,000 ms: the first second's lines and those of millisecond 1,000 itself.
        let second = log.written_by(1_000);
        assert!((49_000..=50_050).contains(&second), "{second}");
        let quiet = ContainerLog::new("db", "u", "app", 0, 0, None, false).noisy("db", None);
        assert!(quiet.written_by(1_000) <= 5);
        let mut last = 0;
        for i in (0..second).step_by(997) {
            assert!(log.time_of(i) >= last);
            last = log.time_of(i);
        }
    }

    #[test]
    fn written_by_counts_every_line_of_the_millisecond() {
        let noisy: NoisyLogs = "web".parse().unwrap();
        let log =
            ContainerLog::new("web", "u", "app", 0, 0, None, false).noisy("web", Some(&noisy));
        for now in [0, 1, 2, 17, 999, 1_000, 123_457] {
            let n = log.written_by(now);
            assert!(log.time_of(n) > now, "line {n} is written by {now}");
            assert!(n == 0 || log.time_of(n - 1) <= now, "{now}: {n}");
        }
        assert!(log.written_by(2) - log.written_by(1) >= 49);
        let slow = ContainerLog::new("db", "u", "app", 0, 5_000, None, false);
        assert_eq!(slow.written_by(4_999), 0);
    }

    #[test]
    fn a_crashed_instance_ends_with_its_trace() {
        let log = ContainerLog::new("web", "u", "app", 0, 0, Some(30_000), true);
        let n = log.written_by(i64::MAX);
        assert_eq!(n, log.written_by(30_000));
        assert!(log.line(n - 1).1.contains("server.go"));
        assert!(log.line(n - CRASH_LINES).1.contains("nil pointer"));
        assert!(!log.line(0).1.contains("panic"));
    }
}
