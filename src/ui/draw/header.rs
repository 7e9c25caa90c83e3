//! Two header lines: where we are connected, and what the informer is doing (and why it
//! fails, when it does, on as many rows as that takes). Rows that are not current say so first, with since when, so a
//! narrow terminal cuts anything but that.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use std::time::SystemTime;

use crate::screen::{Header, Screen, Theme};
use kscope_resources::Timestamp;

/// A first list that has shown nothing for this long is said to be waited for: a big
/// cluster's list takes seconds, a server that never delivers takes forever.
const NOTHING_SHOWN_AFTER_SECS: i64 = 10;

/// The header's two lines for `total` rows at `now`, as wide as they need; a recording
/// played is said first, as it changes what every row means, then a recording written.
/// A sync too long for `width` columns is said briefly, where the header has a brief one.
fn lines(
    h: &Header,
    recording: Option<&str>,
    recorder: Option<&str>,
    total: usize,
    now: SystemTime,
    width: usize,
    theme: Theme,
) -> [Line<'static>; 2] {
    let mut first = vec![Span::styled("kscope ", theme.title())];
    if let Some(recording) = recording {
        first.push(Span::styled(format!("{recording}  "), theme.warn()));
    }
    if let Some(recorder) = recorder {
        first.push(Span::styled(format!("{recorder}  "), theme.error()));
    }
    first.extend([
        if h.readwrite {
            Span::styled("READ-WRITE ", theme.warn())
        } else {
            Span::styled("read-only ", theme.dim())
        },
        Span::raw(format!("ctx {} ", h.context)),
        Span::styled(h.server.clone(), theme.dim()),
    ]);
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
        let secs = now
            .duration_since(since)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        let age = Timestamp::from_seconds(0).human_since(Timestamp::from_seconds(secs));
        if h.listed {
            second.push(Span::styled(
                format!("STALE {age}, not watching"),
                theme.error(),
            ));
            second.push(Span::raw(" · "));
        } else if total == 0 && secs >= NOTHING_SHOWN_AFTER_SECS {
            // A server that accepts the list and never delivers it would otherwise look like
            // an empty namespace: the sync and the error that follow say how far it got.
            second.push(Span::styled(
                format!("DEGRADED {age} without rows, waiting for the initial list"),
                theme.warn(),
            ));
            second.push(Span::raw(" · "));
        }
    }
    second.push(Span::raw(super::text::counted(total, "row", "rows")));
    if !h.filter.is_empty() {
        second.push(Span::raw(" matching "));
        second.push(Span::styled(h.filter.clone(), theme.title()));
    }
    let status = |sync: &str| Span::raw(format!(" · {sync} · {:.0} ev/s", h.events_per_second));
    let full = status(&h.sync);
    let before: usize = second.iter().map(Span::width).sum();
    second.push(match &h.sync_short {
        Some(short) if before + full.width() > width => status(short),
        _ => full,
    });
    if h.undecodable > 0 {
        second.push(Span::styled(
            format!(" · {} list items undecodable, not shown", h.undecodable),
            theme.warn(),
        ));
    }
    if let Some(error) = &h.error {
        second.push(Span::styled(format!(" · {error}"), theme.error()));
    }
    if let Some(why) = &h.usage {
        second.push(Span::styled(format!(" · CPU/MEM n/a: {why}"), theme.warn()));
    }
    [first, Line::from(second)]
}

/// At most this many header rows: a long error (a new CA's cause) is read whole, the table
/// keeps the rest.
const MAX_ROWS: usize = 5;

/// The rows the header needs in `width` columns: two, more when an error does not fit on
/// the second (counted for a row count of up to seven digits). Without an error the second
/// line is cut, as the status comes first.
pub fn rows(h: &Header, width: u16, now: SystemTime) -> u16 {
    if h.error.is_none() {
        return 2;
    }
    let width = usize::from(width).max(1);
    let [_, second] = lines(h, None, None, 9_999_999, now, width, Theme { color: false });
    let needed = 1 + second.width().div_ceil(width).max(1);
    u16::try_from(needed.clamp(2, MAX_ROWS)).unwrap_or(2)
}

/// Draws the header in `area`; with an error, the second line goes on in the rows below
/// (cut by character: the rows taken are the rows [`rows`] counted).
pub fn draw(frame: &mut Frame, area: Rect, screen: &Screen, theme: Theme) {
    let [first, second] = lines(
        screen.header,
        screen.state.recording.as_deref(),
        screen.state.recorder.as_deref(),
        screen.window.total,
        screen.now,
        usize::from(area.width),
        theme,
    );
    let mut rows = vec![first];
    match screen.header.error {
        Some(_) => rows.extend(cut_rows(second, usize::from(area.width).max(1))),
        None => rows.push(second),
    }
    frame.render_widget(Paragraph::new(rows), area);
}

/// `line` in rows of `width` characters, each span keeping its style.
fn cut_rows(line: Line<'static>, width: usize) -> Vec<Line<'static>> {
    let mut rows = vec![Vec::new()];
    let mut used = 0;
    for span in line.spans {
        let mut text = span.content.as_ref();
        while !text.is_empty() {
            if used == width {
                rows.push(Vec::new());
                used = 0;
            }
            let take = text
                .char_indices()
                .nth(width - used)
                .map_or(text.len(), |(i, _)| i);
            let (head, rest) = text.split_at(take);
            used += head.chars().count();
            if let Some(row) = rows.last_mut() {
                row.push(Span::styled(head.to_owned(), span.style));
            }
            text = rest;
        }
    }
    rows.into_iter().map(Line::from).collect()
}
