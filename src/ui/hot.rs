//! The hot loops (`H`, `:hot`): the field managers and the objects they write, by write rate
//! over the last ten seconds, status-only writes apart from spec writes, and the managers
//! that keep rewriting what they just wrote flagged with the fields that keep changing (see
//! [`kscope_index_views::hotloops`]). Read from informers on [`HOT_KINDS`] and the table's
//! kind, in the table's scope, started when the view opens and stopped when it closes.

use std::collections::BTreeMap;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph};
use tokio::sync::{broadcast, mpsc};
use tokio::time::Instant;

use kscope_client::cluster::{Cluster, NamespaceScope};
use kscope_client::discovery::Discovery;
use kscope_index_views::hotloops::{
    EventKind, HOT_KINDS, HotLoopDetector, HotObject, HotReport, LOOP_RATE, WINDOW_SECONDS,
};
use kscope_informers::instrument::tap::Tap;
use kscope_resources::Kind;

use super::UiError;
use super::action::Action;
use super::effect::Effect;
use super::effect::ObjectRef;
use super::table::moved_to;
use super::theme::Theme;
use super::watchers::{Watchers, kinds};

/// Watch events a kind's tap keeps for the detector to catch up on.
const TAP_CAPACITY: usize = 4096;

/// What the view shows: the detector's last report, for how long it has watched what.
#[derive(Debug, Clone, PartialEq)]
pub struct HotView {
    pub report: HotReport,
    /// The kinds watched, as kubectl names them.
    pub kinds: Vec<String>,
    /// Seconds watched so far: rates read over less than the window are low.
    pub seconds: u64,
    /// Which of the report's objects is selected.
    pub selected: usize,
}

impl HotView {
    pub fn new(kinds: Vec<String>) -> Self {
        Self {
            report: HotReport {
                objects: Vec::new(),
                loops: Vec::new(),
            },
            kinds,
            seconds: 0,
            selected: 0,
        }
    }

    /// Moves the selection, shows the selected object (`Effect::ShowObject`) or closes.
    pub fn handle_key(&mut self, action: &Action, page: usize) -> Option<Effect> {
        let rows = self.report.objects.len();
        match action {
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom => {
                self.selected =
                    moved_to(self.selected, action, page, rows).min(rows.saturating_sub(1));
            }
            Action::ChooseValue => {
                return self.report.objects.get(self.selected).map(|o| {
                    Effect::ShowObject(ObjectRef {
                        kind: o.kind.clone(),
                        namespace: (!o.namespace.is_empty()).then(|| o.namespace.clone()),
                        name: o.name.clone(),
                    })
                });
            }
            Action::Back | Action::ToggleIndexes => return Some(Effect::Close),
            _ => {}
        }
        None
    }

    /// A new report: the selection stays in range.
    fn take(&mut self, report: HotReport, seconds: u64) {
        self.report = report;
        self.seconds = seconds;
        self.selected = self
            .selected
            .min(self.report.objects.len().saturating_sub(1));
    }

    /// The managers by write rate: (manager, writes/s, objects, status writes, spec writes).
    fn managers(&self) -> Vec<(String, f64, usize, u64, u64)> {
        let mut by: BTreeMap<&str, (f64, usize, u64, u64)> = BTreeMap::new();
        for o in &self.report.objects {
            let m = by.entry(&o.manager).or_default();
            m.0 += o.writes_per_second;
            m.1 += 1;
            m.2 += o.status_writes;
            m.3 += o.spec_writes;
        }
        let mut out: Vec<_> = by
            .into_iter()
            .map(|(name, (rate, n, status, spec))| (name.to_string(), rate, n, status, spec))
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out
    }

    /// The view's lines for an area `width` columns wide and `height` high.
    fn lines(&self, width: usize, height: usize, theme: Theme) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        if self.report.loops.is_empty() {
            lines.push(Line::styled(
                format!(
                    "no hot loop: none writes ≥ {LOOP_RATE}/s for {WINDOW_SECONDS}s to what it just wrote"
                ),
                theme.dim(),
            ));
        }
        for found in &self.report.loops {
            lines.push(Line::styled(
                format!(
                    "HOT LOOP  {} rewrites what it just wrote, {:.1}/s",
                    found.manager, found.self_triggered_per_second,
                ),
                theme.error(),
            ));
            lines.push(Line::styled(
                format!("  keeps changing: {}", found.fields.join(", ")),
                theme.error(),
            ));
        }
        lines.push(Line::raw(""));
        let managers: Vec<Vec<String>> = self
            .managers()
            .into_iter()
            .map(|(name, rate, objects, status, spec)| {
                vec![
                    name,
                    format!("{rate:.1}"),
                    objects.to_string(),
                    format!("{status}/{spec}"),
                ]
            })
            .collect();
        let header = ["MANAGER", "WRITES/S", "OBJECTS", "STATUS/SPEC WRITES"];
        for (i, line) in aligned(&header, &managers).into_iter().enumerate() {
            let style = if i == 0 {
                theme.title()
            } else {
                Default::default()
            };
            lines.push(Line::styled(line, style));
        }
        lines.push(Line::raw(""));
        let objects: Vec<Vec<String>> = self.report.objects.iter().map(object_cells).collect();
        let kept = fitting(&OBJECT_COLUMNS, &objects, width);
        let header: Vec<&str> = kept.iter().map(|&c| OBJECT_COLUMNS[c]).collect();
        let objects: Vec<Vec<String>> = objects
            .into_iter()
            .map(|row| kept.iter().map(|&c| row[c].clone()).collect())
            .collect();
        let looping = |o: &HotObject| self.report.loops.iter().any(|l| l.manager == o.manager);
        let rows = aligned(&header, &objects);
        let above = lines.len() + 1;
        // Scroll the objects so the selected one stays in view.
        let room = height.saturating_sub(above).max(1);
        let first = (self.selected + 1).saturating_sub(room);
        let mut rows = rows.into_iter();
        if let Some(head) = rows.next() {
            lines.push(Line::styled(head, theme.title()));
        }
        for (i, (row, object)) in rows.zip(&self.report.objects).enumerate().skip(first) {
            let mut line = Line::raw(row);
            if looping(object) && object.self_triggered_per_second > 0.0 {
                line = line.style(theme.error());
            }
            if i == self.selected {
                line = line.style(theme.selected());
            }
            lines.push(line);
        }
        if self.report.objects.is_empty() {
            lines.push(Line::styled("no writes seen yet", theme.dim()));
        }
        lines
    }

    pub(crate) fn draw_into(&self, frame: &mut Frame, area: Rect, theme: Theme) {
        let width = usize::from(area.width.saturating_sub(2));
        let height = usize::from(area.height.saturating_sub(2));
        let title = format!(
            " hot loops · {} · {}s watched · Enter shows · Esc ",
            self.kinds.join(","),
            self.seconds
        );
        frame.render_widget(Clear, area);
        frame.render_widget(
            Paragraph::new(self.lines(width, height, theme)).block(Block::bordered().title(title)),
            area,
        );
    }
}

/// The objects' columns, as [`object_cells`] fills them.
const OBJECT_COLUMNS: [&str; 8] = [
    "MANAGER",
    "KIND",
    "NAMESPACE/NAME",
    "WRITES/S",
    "SELF/S",
    "STATUS/SPEC",
    "FIELDS",
    "PRECEDED BY",
];

/// The columns (of [`OBJECT_COLUMNS`]) that give way, first to last, when a row is wider
/// than the screen: the fields that keep changing are what a hot loop is read by, so they
/// stay, beside who writes which object how fast.
const GIVE_WAY: [usize; 4] = [7, 1, 5, 4];

/// The columns of `header` kept for rows `width` wide: all, or without those that give way
/// first until the rest fit (the last one kept may still be cut at the border).
fn fitting(header: &[&str], rows: &[Vec<String>], width: usize) -> Vec<usize> {
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|cell| cell.chars().count())
                .chain([header[c].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut kept: Vec<usize> = (0..header.len()).collect();
    let wide = |kept: &[usize]| {
        kept.iter()
            .map(|&c| widths[c] + 2)
            .sum::<usize>()
            .saturating_sub(2)
    };
    for column in GIVE_WAY {
        if wide(&kept) <= width {
            break;
        }
        kept.retain(|&c| c != column);
    }
    kept
}

/// One report row's cells, as the objects' header names them.
fn object_cells(o: &HotObject) -> Vec<String> {
    let none = || "<none>".to_string();
    vec![
        o.manager.clone(),
        o.kind.clone(),
        if o.namespace.is_empty() {
            o.name.clone()
        } else {
            format!("{}/{}", o.namespace, o.name)
        },
        format!("{:.1}", o.writes_per_second),
        format!("{:.1}", o.self_triggered_per_second),
        format!("{}/{}", o.status_writes, o.spec_writes),
        if o.fields.is_empty() {
            none()
        } else {
            o.fields.join(",")
        },
        o.preceded_by.first().cloned().unwrap_or_else(none),
    ]
}

/// `header` and `rows` in columns padded to their widest cell, as tabwriter pads them.
fn aligned(header: &[&str], rows: &[Vec<String>]) -> Vec<String> {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let last = cells.len().saturating_sub(1);
        cells
            .into_iter()
            .enumerate()
            .map(|(i, c)| match i == last {
                true => c.to_string(),
                false => format!("{c:<width$}  ", width = widths[i]),
            })
            .collect::<String>()
    };
    std::iter::once(line(header.to_vec()))
        .chain(
            rows.iter()
                .map(|r| line(r.iter().map(String::as_str).collect())),
        )
        .collect()
}

/// One watch event for the detector.
struct Seen {
    kind: String,
    event: EventKind,
    object: serde_json::Value,
}

/// The informers and the detector behind the view, while it is open.
pub struct HotWatch {
    _watchers: Watchers,
    seen: mpsc::Receiver<Seen>,
    detector: HotLoopDetector,
    started: Instant,
}

impl HotWatch {
    /// Watches `first` (the table's kind) and [`HOT_KINDS`] in `scope`; returns the view's
    /// kinds too.
    pub fn start(
        cluster: &Cluster,
        first: &[Kind],
        discovery: &Discovery,
        scope: &NamespaceScope,
    ) -> Result<(Self, Vec<String>), UiError> {
        let kinds = kinds(first, HOT_KINDS, discovery);
        let (sender, seen) = mpsc::channel(TAP_CAPACITY);
        let watchers = Watchers::start(cluster, &kinds, scope, |kind| {
            let tap = Tap::new(TAP_CAPACITY, kscope_resources::secret::keepable_raw);
            tokio::spawn(forward(kind.to_string(), tap.subscribe(), sender.clone()));
            Some(tap)
        })?;
        let names = kinds.iter().map(|k| k.plural().to_string()).collect();
        let watch = Self {
            _watchers: watchers,
            seen,
            detector: HotLoopDetector::new(),
            started: Instant::now(),
        };
        Ok((watch, names))
    }

    /// Takes the next watch event into the detector; never resolves once every informer
    /// has stopped. Cancel-safe.
    pub async fn next(&mut self) {
        match self.seen.recv().await {
            Some(seen) => {
                let second = self.started.elapsed().as_secs();
                self.detector
                    .observe(&seen.kind, seen.event, &seen.object, second);
            }
            None => std::future::pending().await,
        }
    }

    /// The detector's report as of now, into `view`.
    pub fn report_into(&self, view: &mut HotView) {
        let second = self.started.elapsed().as_secs();
        view.take(self.detector.report(second), second);
    }
}

/// Sends a kind's watch events from its tap to the detector until either side is gone.
async fn forward(
    kind: String,
    mut entries: broadcast::Receiver<std::sync::Arc<kscope_informers::instrument::tap::TapEntry>>,
    sender: mpsc::Sender<Seen>,
) {
    loop {
        let entry = match entries.recv().await {
            Ok(entry) => entry,
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::warn!(missed, %kind, ":hot fell behind the watch");
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let Some((event, object)) = EventKind::of_entry(&entry) else {
            continue;
        };
        let seen = Seen {
            kind: kind.clone(),
            event,
            object,
        };
        if sender.send(seen).await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kscope_index_views::hotloops::HotLoop;

    fn object(manager: &str, name: &str, rate: f64) -> HotObject {
        HotObject {
            manager: manager.into(),
            kind: "widgets.example.com".into(),
            namespace: "default".into(),
            name: name.into(),
            writes_per_second: rate,
            self_triggered_per_second: rate,
            status_writes: 10,
            spec_writes: 0,
            fields: vec!["status.lastReconcileTime".into()],
            preceded_by: vec![format!("{manager} (itself)")],
        }
    }

    #[test]
    fn managers_sum_their_objects_and_enter_shows_the_selected_object() {
        let mut view = HotView::new(vec!["widgets".into()]);
        view.take(
            HotReport {
                objects: vec![
                    object("widget-controller", "a", 2.0),
                    object("widget-controller", "b", 1.0),
                    object("kubectl", "c", 0.1),
                ],
                loops: vec![HotLoop {
                    manager: "widget-controller".into(),
                    self_triggered_per_second: 3.0,
                    fields: vec!["status.lastReconcileTime".into()],
                }],
            },
            12,
        );
        let managers = view.managers();
        assert_eq!(managers[0].0, "widget-controller");
        assert_eq!((managers[0].1, managers[0].2), (3.0, 2));
        view.handle_key(&Action::Bottom, 10);
        assert_eq!(view.selected, 2);
        assert_eq!(
            view.handle_key(&Action::ChooseValue, 10),
            Some(Effect::ShowObject(ObjectRef {
                kind: "widgets.example.com".into(),
                namespace: Some("default".into()),
                name: "c".into(),
            }))
        );
        assert_eq!(view.handle_key(&Action::Back, 10), Some(Effect::Close));
    }

    #[test]
    fn a_narrow_screen_keeps_the_changed_fields_and_drops_the_trigger_and_kind_first() {
        let rows = vec![object_cells(&object("widget-controller", "gadget", 2.0))];
        assert_eq!(
            fitting(&OBJECT_COLUMNS, &rows, 200),
            (0..8).collect::<Vec<_>>()
        );
        let at_80 = fitting(&OBJECT_COLUMNS, &rows, 78);
        let names: Vec<&str> = at_80.iter().map(|&c| OBJECT_COLUMNS[c]).collect();
        assert_eq!(
            names,
            ["MANAGER", "NAMESPACE/NAME", "WRITES/S", "SELF/S", "FIELDS"]
        );
        let kept = fitting(&OBJECT_COLUMNS, &rows, 20);
        assert!(
            kept.contains(&6),
            "the fields stay however narrow: {kept:?}"
        );
    }
}
