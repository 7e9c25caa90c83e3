//! What the server-side printers share: ages as kubectl shows them, text cells, and a
//! pod template's containers, images and selector.

use serde_json::Value;

use crate::manifests::now_seconds;

/// Kubernetes' `duration.HumanDuration`, as the Age column shows it.
pub(super) fn human_duration(seconds: i64) -> String {
    let s = seconds.max(0);
    let (m, h, d) = (s / 60, s / 3600, s / 86_400);
    match s {
        _ if s < 120 => format!("{s}s"),
        _ if m < 10 => match s % 60 {
            0 => format!("{m}m"),
            rest => format!("{m}m{rest}s"),
        },
        _ if h < 3 => format!("{m}m"),
        _ if h < 8 => match m % 60 {
            0 => format!("{h}h"),
            rest => format!("{h}h{rest}m"),
        },
        _ if h < 48 => format!("{h}h"),
        _ if h < 192 => match h % 24 {
            0 => format!("{d}d"),
            rest => format!("{d}d{rest}h"),
        },
        _ if d < 365 * 2 => format!("{d}d"),
        _ if d < 365 * 8 => match d % 365 {
            0 => format!("{}y", d / 365),
            rest => format!("{}y{rest}d", d / 365),
        },
        _ => format!("{}y", d / 365),
    }
}

pub(super) fn age(obj: &Value) -> String {
    since(&obj["metadata"]["creationTimestamp"]).unwrap_or_else(|| "<unknown>".to_string())
}

/// How long ago the RFC 3339 timestamp `t` was, as kubectl prints ages; `None` if `t` is
/// not one.
pub(super) fn since(t: &Value) -> Option<String> {
    let t = t.as_str()?.parse::<jiff::Timestamp>().ok()?;
    Some(human_duration(now_seconds() - t.as_second()))
}

pub(super) fn text(v: &Value) -> String {
    v.as_str().unwrap_or("").to_string()
}

pub(super) fn template_columns(template: &Value, selector: &Value) -> [String; 3] {
    let containers = template["spec"]["containers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let join = |field: &str| {
        containers
            .iter()
            .map(|c| text(&c[field]))
            .collect::<Vec<_>>()
            .join(",")
    };
    let selector = selector["matchLabels"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", text(v)))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default();
    [join("name"), join("image"), selector]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_like_kubectl() {
        for (s, want) in [
            (5, "5s"),
            (150, "2m30s"),
            (3 * 3600, "3h"),
            (5 * 3600 + 60, "5h1m"),
            (3 * 86_400 + 7200, "3d2h"),
            (637 * 86_400, "637d"),
            (800 * 86_400, "2y70d"),
        ] {
            assert_eq!(human_duration(s), want);
        }
    }
}
