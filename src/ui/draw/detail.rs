//! The detail overlay: everything below the header, with tabs for the object's describe, its
//! YAML and its tap history, the full diff of one history entry, and the detail's own key
//! list. Long lines scroll sideways or wrap.

use std::time::SystemTime;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};

use crate::action::Action;
use crate::component::{Component, Context};
use crate::detail::{Detail, DetailTab, DiffScreen, FetchState, diff_text};
use crate::effect::Effect;
use crate::screen::{Screen, Theme};
use crate::text_search::TextSearch;
use kscope_config::keys::{Keymap, Section};
use kscope_index_views::detail::{DiffSign, age};
use kscope_informers::instrument::tap::HistorySpan;

/// Draws the open detail over the table, panels and status line, in the layout's `area`
/// (below the header).
pub fn draw(
    frame: &mut Frame,
    area: Rect,
    detail: &Detail,
    keymap: &Keymap,
    now: SystemTime,
    color: bool,
) {
    let theme = Theme { color };
    let bottom = if detail.search.active() {
        search_line(detail, theme)
    } else if let Some(notice) = &detail.notice {
        Line::from(Span::styled(format!(" {notice} "), theme.title()))
    } else {
        Line::from(Span::styled(key_hint(keymap), theme.dim()))
    };
    let block = Block::bordered()
        .title(Span::styled(title(detail, now), theme.title()))
        .title_bottom(bottom);
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    let [bar, content] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(inner);
    let height = usize::from(content.height);
    fn text<'a>(detail: &Detail, lines: Vec<Line<'a>>) -> Paragraph<'a> {
        let paragraph = Paragraph::new(lines);
        match detail.wrap {
            true => paragraph.wrap(Wrap { trim: false }),
            false => paragraph.scroll((0, u16::try_from(detail.hscroll).unwrap_or(u16::MAX))),
        }
    }
    match &detail.diff {
        Some(diff) => {
            frame.render_widget(Paragraph::new(diff_bar(diff, now, theme)), bar);
            frame.render_widget(
                text(detail, diff_lines(diff, &detail.search, height, theme)),
                content,
            );
        }
        None => {
            let width = usize::from(content.width);
            frame.render_widget(Paragraph::new(tab_bar(detail, width, theme)), bar);
            match detail.tab {
                DetailTab::Describe => {
                    frame.render_widget(
                        text(detail, describe_lines(detail, height, theme)),
                        content,
                    );
                }
                DetailTab::Yaml => {
                    frame.render_widget(text(detail, yaml_lines(detail, height, theme)), content);
                }
                DetailTab::History => frame.render_widget(
                    Paragraph::new(history_lines(detail, height, now, theme)),
                    content,
                ),
            }
        }
    }
    if detail.help {
        draw_help(frame, area, keymap, theme);
    }
}

/// The search as typed (with its cursor) or kept, and where its match is: `/image 3/17
/// matches`.
fn search_line(detail: &Detail, theme: Theme) -> Line<'static> {
    let search = &detail.search;
    let mut spans = vec![Span::styled(" /", theme.title())];
    if search.typing {
        spans.extend(super::text::typed_spans(
            &search.input,
            &search.edit,
            detail.columns / 2,
            theme,
        ));
    } else {
        spans.push(Span::raw(search.input.clone()));
    }
    spans.push(Span::styled(format!("  {} ", search.count()), theme.dim()));
    Line::from(spans)
}

/// `text` with the search's matches at `ranges` reversed, the current match's underlined
/// too (visible without colour).
fn highlighted(text: &str, ranges: &[std::ops::Range<usize>], current: bool) -> Line<'static> {
    let mut style = Style::default().add_modifier(Modifier::REVERSED);
    if current {
        style = style.add_modifier(Modifier::BOLD | Modifier::UNDERLINED);
    }
    let mut spans = Vec::with_capacity(ranges.len() * 2 + 1);
    let mut at = 0;
    for range in ranges {
        let (Some(before), Some(found)) = (text.get(at..range.start), text.get(range.clone()))
        else {
            continue;
        };
        spans.push(Span::raw(before.to_owned()));
        spans.push(Span::styled(found.to_owned(), style));
        at = range.end;
    }
    spans.push(Span::raw(text.get(at..).unwrap_or_default().to_owned()));
    Line::from(spans)
}

/// ` Pod shop/web-1 · rv 42 by kubelet (Update), cache 2 behind at rv 40 · fetched 5s ago `.
fn title(detail: &Detail, now: SystemTime) -> String {
    let target = &detail.target;
    let state = match &detail.fetch {
        FetchState::Loading { since } if detail.yaml.lines.is_empty() => {
            format!("loading… {}", age(*since, now))
        }
        FetchState::Loading { since } => format!("refreshing… {}", age(*since, now)),
        FetchState::Loaded {
            resource_version,
            at,
        } => {
            let fresh = detail
                .freshness()
                .map_or_else(|| format!("rv {resource_version}"), |f| f.describe());
            format!("{fresh} · fetched {} ago", age(*at, now))
        }
        FetchState::Failed { at, .. } => format!("fetch failed {} ago", age(*at, now)),
    };
    format!(" {} {} · {state} ", target.kind.kind(), target.key)
}

fn tab_bar<'a>(detail: &Detail, width: usize, theme: Theme) -> Line<'a> {
    let tab = |label: String, on: bool| {
        if on {
            Span::styled(label, theme.selected())
        } else {
            Span::raw(label)
        }
    };
    let mut spans = vec![
        tab(" Describe ".into(), detail.tab == DetailTab::Describe),
        Span::raw(" "),
        tab(" YAML ".into(), detail.tab == DetailTab::Yaml),
        Span::raw(" "),
        tab(
            format!(" History ({}) ", detail.history.len()),
            detail.tab == DetailTab::History,
        ),
    ];
    let mut notes = Vec::new();
    let lines: &[String] = match detail.tab {
        DetailTab::Describe => &detail.describe,
        DetailTab::Yaml => &detail.yaml.lines,
        DetailTab::History => &[],
    };
    let widest = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    if detail.wrap {
        notes.push("wrapped (w)".to_owned());
    } else if detail.hscroll > 0 {
        notes.push(format!("→ col {} (←/→, w wraps)", detail.hscroll + 1));
    } else if widest > width {
        notes.push("long lines cut (→ scrolls, w wraps)".to_owned());
    }
    if detail.tab == DetailTab::Yaml
        && let Some(hidden) = detail.yaml.hidden_managed_fields
    {
        notes.push(format!("managedFields: {hidden} hidden (m)"));
    }
    if detail.tab == DetailTab::Yaml && detail.yaml.masked > 0 {
        notes.push(format!("{} secret values masked", detail.yaml.masked));
    }
    if !notes.is_empty() {
        spans.push(Span::styled(
            format!("  {}", notes.join(" · ")),
            theme.dim(),
        ));
    }
    Line::from(spans)
}

fn describe_lines<'a>(detail: &'a Detail, height: usize, theme: Theme) -> Vec<Line<'a>> {
    text_lines(
        detail,
        &detail.describe,
        detail.describe_scroll,
        height,
        theme,
        describe_line,
    )
}

/// `lines` from `scroll` on, each drawn by `line`; or why there are none yet: the fetch
/// failed, or is still running.
fn text_lines<'a>(
    detail: &'a Detail,
    lines: &'a [String],
    scroll: usize,
    height: usize,
    theme: Theme,
    line: fn(&'a str, Theme) -> Line<'a>,
) -> Vec<Line<'a>> {
    if let FetchState::Failed { error, .. } = &detail.fetch {
        return vec![
            Line::styled(error.as_str(), theme.error()),
            Line::styled("r fetches again", theme.dim()),
        ];
    }
    if lines.is_empty() {
        return vec![Line::styled("loading…", theme.dim())];
    }
    lines
        .iter()
        .enumerate()
        .skip(scroll)
        .take(height)
        .map(|(number, l)| match detail.search.ranges(number, l) {
            (ranges, _) if ranges.is_empty() => line(l, theme),
            (ranges, current) => highlighted(l, &ranges, current),
        })
        .collect()
}

/// Section titles (`Containers:`, `Events:`) in colour, field names dim-free, Warning
/// events marked.
fn describe_line(line: &str, theme: Theme) -> Line<'_> {
    let trimmed = line.trim_start();
    if trimmed.starts_with("Warning ") {
        return Line::styled(line, theme.fg(Color::Yellow));
    }
    if !line.starts_with(' ') && line.ends_with(':') {
        return Line::styled(line, theme.title());
    }
    match line.find(":  ").or_else(|| line.find(":\t")) {
        Some(colon) => Line::from(vec![
            Span::styled(&line[..=colon], theme.fg(Color::Cyan)),
            Span::raw(&line[colon + 1..]),
        ]),
        None => Line::raw(line),
    }
}

fn yaml_lines<'a>(detail: &'a Detail, height: usize, theme: Theme) -> Vec<Line<'a>> {
    text_lines(
        detail,
        &detail.yaml.lines,
        detail.yaml_scroll,
        height,
        theme,
        yaml_line,
    )
}

/// Keys in colour, values plain.
fn yaml_line(line: &str, theme: Theme) -> Line<'_> {
    let indent = line.len() - line.trim_start_matches([' ', '-']).len();
    let rest = &line[indent..];
    let key_end = rest
        .find(": ")
        .or_else(|| rest.ends_with(':').then(|| rest.len() - 1));
    match key_end {
        Some(colon) => Line::from(vec![
            Span::raw(&line[..indent]),
            Span::styled(&line[indent..indent + colon + 1], theme.fg(Color::Cyan)),
            Span::raw(&line[indent + colon + 1..]),
        ]),
        None => Line::raw(line),
    }
}

fn history_lines(detail: &Detail, height: usize, now: SystemTime, theme: Theme) -> Vec<Line<'_>> {
    let span = match detail.history_span {
        HistorySpan::Since(since) => format!(
            "every entry for this object since {} ago is kept (up to 256)",
            age(since, now)
        ),
        HistorySpan::Ring => {
            "only the tap's newest entries are kept for this object (select it to keep more)"
                .to_owned()
        }
    };
    if detail.history.is_empty() {
        return vec![Line::styled(format!("no entries yet: {span}"), theme.dim())];
    }
    // Scroll so the selected entry stays in view; the last line says how far back it goes.
    let height = height.saturating_sub(1).max(1);
    let first = (detail.history_selected + 1).saturating_sub(height);
    let mut lines: Vec<Line> = detail
        .history
        .iter()
        .enumerate()
        .skip(first)
        .take(height)
        .map(|(i, row)| {
            let line = Line::from(vec![
                Span::styled(format!("{:<9}", row.kind), theme.title()),
                Span::styled(
                    format!(
                        "rv {:<8} {:>6}  ",
                        Some(row.resource_version.as_str())
                            .filter(|rv| !rv.is_empty())
                            .unwrap_or("-"),
                        age(row.at, now)
                    ),
                    theme.dim(),
                ),
                Span::raw(row.summary.as_str()),
            ]);
            if i == detail.history_selected {
                line.style(theme.selected())
            } else {
                line
            }
        })
        .collect();
    lines.push(Line::styled(span, theme.dim()));
    lines
}

fn diff_bar<'a>(diff: &DiffScreen, now: SystemTime, theme: Theme) -> Line<'a> {
    let mut spans = vec![Span::styled(
        format!(
            "diff {} rv {} · {} ago",
            diff.row.kind,
            diff.row.resource_version,
            age(diff.row.at, now)
        ),
        theme.selected(),
    )];
    if let Some(via) = diff.via {
        spans.push(Span::styled(
            format!("  object from its {via} watch event"),
            theme.dim(),
        ));
    }
    if let Ok(doc) = &diff.doc
        && doc.hidden_managed_fields > 0
    {
        spans.push(Span::styled(
            format!(
                "  managedFields changes hidden: {} (m)",
                doc.hidden_managed_fields
            ),
            theme.dim(),
        ));
    }
    Line::from(spans)
}

fn diff_lines<'a>(
    diff: &'a DiffScreen,
    search: &TextSearch,
    height: usize,
    theme: Theme,
) -> Vec<Line<'a>> {
    let doc = match &diff.doc {
        Ok(doc) => doc,
        Err(why) => return vec![Line::styled(why.to_string(), theme.dim())],
    };
    if doc.lines.is_empty() {
        return vec![Line::styled("no field changed", theme.dim())];
    }
    let added = theme.fg(Color::Green);
    let removed = theme.fg(Color::Red);
    doc.lines
        .iter()
        .enumerate()
        .skip(diff.scroll)
        .take(height)
        .map(|(number, line)| {
            let text = diff_text(line);
            if let (ranges, current) = search.ranges(number, &text)
                && !ranges.is_empty()
            {
                return highlighted(&text, &ranges, current);
            }
            let mut spans = Vec::with_capacity(5);
            match line.sign {
                DiffSign::Added => spans.push(Span::styled("+ ", added)),
                DiffSign::Removed => spans.push(Span::styled("- ", removed)),
                DiffSign::Changed => spans.push(Span::styled("~ ", theme.fg(Color::Yellow))),
            }
            spans.push(Span::raw(format!("{}: ", line.path)));
            if let Some(old) = &line.old {
                spans.push(Span::styled(old.as_str(), removed));
            }
            if line.old.is_some() && line.new.is_some() {
                spans.push(Span::raw(" → "));
            }
            if let Some(new) = &line.new {
                spans.push(Span::styled(new.as_str(), added));
            }
            Line::from(spans)
        })
        .collect()
}

/// The bottom line's reminder, with the keys as bound: ` Tab yaml/history · m managedFields · … `.
fn key_hint(keymap: &Keymap) -> String {
    let hints: Vec<String> = [
        (Action::DetailTab, "describe/yaml/history"),
        (Action::ToggleManagedFields, "managedFields"),
        (Action::Refresh, "refresh"),
        (Action::Back, "back"),
        (Action::ToggleHelp, "keys"),
        (Action::ScrollRight, "scroll"),
        (Action::ToggleWrap, "wrap"),
        (Action::OpenTextSearch, "search"),
        (Action::SaveText, "save"),
    ]
    .iter()
    .filter_map(|(action, what)| {
        let keys = keymap.keys(Section::Detail, action);
        keys.first().map(|key| format!("{key} {what}"))
    })
    .collect();
    format!(" {} ", hints.join(" · "))
}

fn draw_help(frame: &mut Frame, area: Rect, keymap: &Keymap, theme: Theme) {
    let entries: Vec<(String, String)> = keymap
        .help(Section::Detail)
        .into_iter()
        .map(|(keys, what)| (keys, what.to_string()))
        .collect();
    super::help::draw_keys(frame, area, " detail keys (Esc closes) ", &entries, theme);
}

/// The open detail's keys and drawing; its [`DetailController`] follows the effects (a
/// close, a refresh) with the fetches it owns.
impl Component for Detail {
    fn handle(&mut self, action: &Action, _: &Context<'_>) -> Option<Effect> {
        self.apply(action)
    }

    fn draw(&self, frame: &mut Frame, area: Rect, screen: &Screen<'_>) {
        draw(
            frame,
            area,
            self,
            &screen.state.keymap,
            screen.now,
            screen.color,
        );
    }
}
