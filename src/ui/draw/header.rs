//! Two header lines: where we are connected, and what the informer is doing (and why it
//! fails, when it does). Rows that are not current say so first, with since when, so a
//! narrow terminal cuts anything but that.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::screen::{Screen, Theme};
use kscope_resources::Timestamp;

/// A first list that has shown nothing for this long is said to be waited for: a big
/// cluster's list takes seconds, a server that never delivers takes forever.
const NOTHING_SHOWN_AFTER_SECS: i64 = 10;

pub fn draw(frame: &mut Frame, area: Rect, screen: &Screen, theme: Theme) {
    let h = screen.header;
    let mut first = vec![
        Span::styled("kscope ", theme.title()),
        if h.readwrite {
            Span::styled("READ-WRITE ", theme.warn())
        } else {
            Span::styled("read-only ", theme.dim())
        },
        Span::raw(format!("ctx {} ", h.context)),
        Span::styled(h.server.clone(), theme.dim()),
    ];
    if !h.favourites.is_empty() {
        // k9s's namespace keys: `0 all 1 shop 2 web`.
        let mut keys = String::from("  0 all");
        for (i, ns) in h.favourites.iter().enumerate() {
            keys.push_str(&format!(" {} {ns}", i + 1));
        }
        first.push(Span::styled(keys, theme.dim()));
    }
    let first = Line::from(first);
    let mut second = vec![
        Span::styled(h.resource.clone(), theme.title()),
        Span::raw(format!(" [{}] ", h.scope)),
    ];
    if let Some(since) = h.stale_since {
        let secs = screen
            .now
            .duration_since(since)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        let age = Timestamp::from_seconds(0).human_since(Timestamp::from_seconds(secs));
        if h.listed {
            second.push(Span::styled(
                format!("STALE {age}, not watching"),
                theme.error(),
            ));
            second.push(Span::raw(" · "));
        } else if screen.window.total == 0 && secs >= NOTHING_SHOWN_AFTER_SECS {
            // A server that accepts the list and never delivers it would otherwise look like
            // an empty namespace: the sync and the error that follow say how far it got.
            second.push(Span::styled(
                format!("DEGRADED {age} without rows, waiting for the initial list"),
                theme.warn(),
            ));
            second.push(Span::raw(" · "));
        }
    }
    second.push(Span::raw(super::text::counted(
        screen.window.total,
        "row",
        "rows",
    )));
    if !h.filter.is_empty() {
        second.push(Span::raw(" matching "));
        second.push(Span::styled(h.filter.clone(), theme.title()));
    }
    second.push(Span::raw(format!(
        " · {} · {:.0} ev/s",
        h.sync, h.events_per_second
    )));
    if h.undecodable > 0 {
        second.push(Span::styled(
            format!(" · {} list items undecodable, not shown", h.undecodable),
            theme.warn(),
        ));
    }
    if let Some(error) = &h.error {
        second.push(Span::styled(format!(" · {error}"), theme.error()));
    }
    let second = Line::from(second);
    frame.render_widget(Paragraph::new(vec![first, second]), area);
}
