//! Timestamps as whole seconds since the Unix epoch: 8 bytes instead of a parsed date-time,
//! and all a table needs (AGE, restart times) at the API's own one-second precision.

use std::fmt;

use k8s_openapi::jiff;
use serde::de::{self, Deserialize, Deserializer, Visitor};

/// Seconds since 1970-01-01T00:00:00Z (fractions, as in MicroTime, are truncated).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

/// A timestamp that is not RFC 3339.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid RFC 3339 timestamp {0:?}")]
pub struct TimestampError(pub String);

impl Timestamp {
    pub const fn from_seconds(seconds: i64) -> Self {
        Self(seconds)
    }

    pub const fn seconds(self) -> i64 {
        self.0
    }

    /// The current wall-clock time.
    pub fn now() -> Self {
        Self(jiff::Timestamp::now().as_second())
    }

    /// Parses RFC 3339, the format of every `metav1.Time` on the wire.
    pub fn parse(s: &str) -> Result<Self, TimestampError> {
        s.parse::<jiff::Timestamp>()
            .map(|t| Self(t.as_second()))
            .map_err(|_| TimestampError(s.to_owned()))
    }

    /// Time from `self` to `now` the way kubectl prints AGE (`HumanDuration`): `45s`, `3m12s`,
    /// `5h2m`, `3d4h`, `2y10d`, and `<invalid>` for times more than a second in the future.
    pub fn human_since(self, now: Timestamp) -> String {
        human_duration(now.0.saturating_sub(self.0))
    }
}

/// A port of apimachinery's `duration.HumanDuration`, on whole seconds.
fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let days = (hours / 24) % 365;
        return if days == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{days}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match jiff::Timestamp::from_second(self.0) {
            Ok(t) => write!(f, "{t}"),
            Err(_) => write!(f, "@{}", self.0),
        }
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Timestamp;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an RFC 3339 timestamp")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Timestamp, E> {
                Timestamp::parse(v).map_err(E::custom)
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rfc3339_and_micro_time() {
        let t = Timestamp::parse("2025-03-14T09:21:07Z").unwrap();
        assert_eq!(t.seconds(), 1_741_944_067);
        assert_eq!(Timestamp::parse("2025-03-14T09:21:07.123456Z").unwrap(), t);
        assert_eq!(Timestamp::parse("2025-03-14T10:21:07+01:00").unwrap(), t);
        assert_eq!(t.to_string(), "2025-03-14T09:21:07Z");
        assert!(Timestamp::parse("yesterday").is_err());
    }

    #[test]
    fn human_duration_matches_kubectl() {
        let cases = [
            (-5, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (185, "3m5s"),
            (600, "10m"),
            (179 * 60, "179m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 5 * 60, "3h5m"),
            (8 * 3600, "8h"),
            (47 * 3600, "47h"),
            (48 * 3600, "2d"),
            (3 * 86400 + 4 * 3600, "3d4h"),
            (8 * 86400, "8d"),
            (729 * 86400, "729d"),
            (730 * 86400, "2y"),
            (740 * 86400, "2y10d"),
            (8 * 365 * 86400, "8y"),
        ];
        for (secs, want) in cases {
            assert_eq!(human_duration(secs), want, "{secs}s");
        }
        let t = Timestamp::from_seconds(1000);
        assert_eq!(t.human_since(Timestamp::from_seconds(1030)), "30s");
    }
}
