//! [`WireLimits`]: how long a server may make kscope wait and how much it may make it hold,
//! set with flags shared by every command that talks to a cluster (the TUI's too).

use std::time::Duration;

use kscope_units::duration::parse_duration;

/// Bounds on what a server may make kscope wait for or hold. The defaults are far from what a
/// 150,000-pod cluster needs (a page of 500 pods is ~5 MB, an object at most ~1.5 MB, and
/// API servers send a bookmark about every minute) and close enough to catch a server that
/// misbehaves. A server that breaks one gets an error (on stderr and in the log), and the
/// Reflector relists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::Args)]
pub struct WireLimits {
    /// A watch event (one line) longer than this ends the watch with an error, freeing
    /// what it held.
    #[arg(long = "max-watch-event", value_name = "SIZE", value_parser = parse_size, default_value = "16MiB")]
    pub max_watch_line: usize,
    /// A list response body larger than this fails the list.
    #[arg(long = "max-list-body", value_name = "SIZE", value_parser = parse_size, default_value = "3GiB")]
    pub max_list_body: usize,
    /// A list response that sends nothing for this long fails.
    #[arg(long = "list-stall-timeout", value_name = "DURATION", value_parser = parse_duration, default_value = "30s")]
    pub list_stall: Duration,
    /// A list response that takes longer than this in all fails (a server trickling bytes).
    #[arg(long = "list-timeout", value_name = "DURATION", value_parser = parse_duration, default_value = "5m")]
    pub list_deadline: Duration,
    /// A watch that delivers nothing, not even a bookmark, for this long is restarted.
    #[arg(long = "watch-idle-timeout", value_name = "DURATION", value_parser = parse_duration, default_value = "3m")]
    pub watch_idle: Duration,
}

impl Default for WireLimits {
    fn default() -> Self {
        Self {
            max_watch_line: 16 << 20,
            max_list_body: 3 << 30,
            list_stall: Duration::from_secs(30),
            list_deadline: Duration::from_secs(300),
            watch_idle: Duration::from_secs(180),
        }
    }
}

/// A size: bytes, or a number with KiB, MiB or GiB (Ki, Mi and Gi, as Kubernetes writes them,
/// too).
pub fn parse_size(text: &str) -> Result<usize, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: usize = number
        .parse()
        .map_err(|_| format!("not a size: {text:?} (try 4096, 512KiB, 16MiB or 1GiB)"))?;
    let shift = match unit.trim() {
        "" | "B" => 0,
        "Ki" | "KiB" => 10,
        "Mi" | "MiB" => 20,
        "Gi" | "GiB" => 30,
        other => {
            return Err(format!(
                "unknown size unit {other:?} in {text:?} (use KiB, MiB or GiB)"
            ));
        }
    };
    n.checked_mul(1 << shift)
        .filter(|size| *size > 0)
        .ok_or_else(|| format!("{text:?}: out of range"))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        limits: WireLimits,
    }

    #[test]
    fn the_flags_defaults_are_the_defaults() {
        let flags = Flags::try_parse_from(["kscope"]).unwrap();
        assert_eq!(flags.limits, WireLimits::default());
        let flags = Flags::try_parse_from([
            "kscope",
            "--max-watch-event",
            "64KiB",
            "--list-timeout",
            "10s",
        ])
        .unwrap();
        assert_eq!(flags.limits.max_watch_line, 64 << 10);
        assert_eq!(flags.limits.list_deadline, Duration::from_secs(10));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("16Mi"), Ok(16 << 20));
        assert_eq!(parse_size("3GiB"), Ok(3 << 30));
        assert!(parse_size("0").is_err());
        assert!(parse_size("1TB").unwrap_err().contains("unknown size unit"));
        assert!(parse_size("lots").unwrap_err().contains("not a size"));
    }
}
