//! A recording played instead of a live cluster (`kscope replay FILE`): the TUI runs on a
//! server that serves the recording, and these are that server's playback controls, which
//! the replay keys and `:seek` drive and the header reads. The UI knows only this trait, so
//! it does not depend on the server that plays.

use jiff::civil::Time;
use jiff::tz::TimeZone;

/// The speeds the replay keys step through (`<` slower, `>` faster).
pub const SPEEDS: [f64; 10] = [0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 25.0, 50.0, 100.0];

/// Where a playback is.
#[derive(Debug, Clone, PartialEq)]
pub struct PlaybackStatus {
    /// The recording's file, as given.
    pub file: String,
    /// The recording's time reached, µs since the epoch.
    pub at: i64,
    /// The highest resourceVersion played.
    pub resource_version: u64,
    pub speed: f64,
    pub paused: bool,
}

/// Where `:seek` moves to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seek {
    /// µs since the epoch.
    Time(i64),
    /// Just after the event that carried it, as `kscope replay --print --at RV`.
    ResourceVersion(u64),
}

/// A recording's playback controls.
pub trait Playback: Send + Sync {
    fn status(&self) -> PlaybackStatus;
    fn set_paused(&self, paused: bool);
    /// One of [`SPEEDS`].
    fn set_speed(&self, speed: f64);
    /// Pauses and plays the next recorded event; false at the end of the recording.
    fn step(&self) -> bool;
    /// Moves the playback; the message says why it cannot.
    fn seek(&self, to: Seek) -> Result<(), String>;
}

/// The next speed up (`faster`) or down from `speed`, within [`SPEEDS`].
pub fn next_speed(speed: f64, faster: bool) -> f64 {
    let next = if faster {
        SPEEDS.iter().find(|s| **s > speed * 1.0001)
    } else {
        SPEEDS.iter().rev().find(|s| **s < speed * 0.9999)
    };
    next.copied().unwrap_or(speed)
}

/// `:seek`'s argument: `rv=N` (or a bare number), an RFC 3339 time, or a time of day
/// (`10:32:05`, UTC) on the day the playback is at (`at`).
pub fn parse_seek(arg: &str, at: i64) -> Result<Seek, String> {
    let arg = arg.trim();
    let rv = arg.strip_prefix("rv=").unwrap_or(arg);
    if let Ok(rv) = rv.parse::<u64>() {
        return Ok(Seek::ResourceVersion(rv));
    }
    if let Ok(time) = arg.parse::<jiff::Timestamp>() {
        return Ok(Seek::Time(time.as_microsecond()));
    }
    let time: Time = arg.parse().map_err(|_| {
        format!("seek to a time (10:32:05, UTC, or RFC 3339) or a resourceVersion (rv=12345), not {arg:?}")
    })?;
    let day = jiff::Timestamp::from_microsecond(at)
        .map_err(|e| e.to_string())?
        .to_zoned(TimeZone::UTC)
        .date();
    day.to_datetime(time)
        .to_zoned(TimeZone::UTC)
        .map(|zoned| Seek::Time(zoned.timestamp().as_microsecond()))
        .map_err(|e| e.to_string())
}

/// What the header says of a playback: `recording FILE at 2026-01-01 10:32:05Z (rv 123)
/// ×1, playing`.
pub fn describe(status: &PlaybackStatus) -> String {
    let at = jiff::Timestamp::from_microsecond(status.at).map_or_else(
        |_| "?".to_string(),
        |t| t.strftime("%Y-%m-%d %H:%M:%SZ").to_string(),
    );
    format!(
        "recording {} at {at} (rv {}) ×{}, {}",
        status.file,
        status.resource_version,
        status.speed,
        if status.paused { "paused" } else { "playing" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speeds_step_within_the_range() {
        assert_eq!(next_speed(1.0, true), 2.0);
        assert_eq!(next_speed(1.0, false), 0.5);
        assert_eq!(next_speed(100.0, true), 100.0);
        assert_eq!(next_speed(0.1, false), 0.1);
        assert_eq!(next_speed(3.0, true), 5.0);
    }

    #[test]
    fn a_seek_is_a_resource_version_or_a_time() {
        // 2026-01-01T08:00:00Z
        let at = 1_767_254_400_000_000;
        assert_eq!(parse_seek("rv=42", at), Ok(Seek::ResourceVersion(42)));
        assert_eq!(parse_seek("42", at), Ok(Seek::ResourceVersion(42)));
        assert_eq!(
            parse_seek("10:32:05", at),
            Ok(Seek::Time(at + (2 * 3600 + 32 * 60 + 5) * 1_000_000))
        );
        assert_eq!(
            parse_seek("2026-01-01T08:00:01Z", at),
            Ok(Seek::Time(at + 1_000_000))
        );
        assert!(parse_seek("soon", at).is_err());
    }

    #[test]
    fn the_header_says_where_and_how() {
        let status = PlaybackStatus {
            file: "c.ksr".into(),
            at: 1_767_254_400_000_000,
            resource_version: 7,
            speed: 0.5,
            paused: true,
        };
        assert_eq!(
            describe(&status),
            "recording c.ksr at 2026-01-01 08:00:00Z (rv 7) ×0.5, paused"
        );
    }
}
