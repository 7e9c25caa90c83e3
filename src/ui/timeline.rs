//! One object's timeline (`:timeline`): the object as first read with each field's last
//! writer, every version the watch delivers while the view is open with the fields changed
//! and the manager (managedFields) that owns each now, and its Events, ordered by
//! resourceVersion — the model `kscope timeline` prints
//! ([`kscope_index_views::timeline::LiveTimeline`]). Read from an informer on the object's
//! kind and one on Events in its namespace, started when the view opens and stopped when it
//! closes, and one read of the object.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph};
use serde_json::Value;
use tokio::sync::{broadcast, mpsc};

use kscope_client::cluster::{Cluster, NamespaceScope};
use kscope_client::discovery::Discovery;
use kscope_client::fetch::fetch_object;
use kscope_index_views::hotloops::EventKind;
use kscope_index_views::timeline::{Change, Entry, LiveTimeline};
use kscope_informers::instrument::tap::{Tap, TapEntry};
use kscope_resources::Kind;

use super::UiError;
use super::action::Action;
use super::effect::Effect;
use super::effect::ObjectRef;
use super::table::moved_to;
use super::theme::Theme;
use super::watchers::{Watchers, kinds};

/// Watch events a kind's tap keeps for the timeline to catch up on.
const TAP_CAPACITY: usize = 1024;

/// The timeline on screen: its lines, the selected one, and whether the object was read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TimelineView {
    pub of: ObjectRef,
    pub entries: Vec<Entry>,
    /// Why the object could not be read, if it could not.
    pub error: Option<String>,
    /// Whether the object has been read: before, there is nothing to show.
    pub read: bool,
    /// The selected line (of [`TimelineView::rows`]); kept on the last while it is there,
    /// so new versions stay in view.
    pub selected: usize,
}

impl TimelineView {
    pub fn new(of: ObjectRef) -> Self {
        Self {
            of,
            ..Self::default()
        }
    }

    /// The lines as cells: resourceVersion, what, who, and the field or the Event — one
    /// line per changed field, the version's own cells on its first. Who comes before the
    /// field so a narrow screen cuts the long paths and Event messages, not the managers.
    pub fn rows(&self) -> Vec<[String; 4]> {
        self.cells(false)
    }

    /// The rows; `brief`, who is the manager alone, without the operation and time that
    /// would push the changed fields past a narrow screen's edge.
    fn cells(&self, brief: bool) -> Vec<[String; 4]> {
        let by = |change: &Change| match (brief, &change.manager) {
            (true, Some(manager)) => manager.clone(),
            _ => change.by(),
        };
        let mut rows = Vec::new();
        for entry in &self.entries {
            let rv = entry.resource_version.clone();
            if let Some(event) = &entry.event {
                rows.push([
                    rv,
                    entry.what.clone(),
                    event.source.clone(),
                    event.summary(),
                ]);
                continue;
            }
            if entry.changes.is_empty() {
                rows.push([rv.clone(), entry.what.clone(), String::new(), String::new()]);
            }
            for (i, change) in entry.changes.iter().enumerate() {
                let (rv, what) = match i {
                    0 => (rv.clone(), entry.what.clone()),
                    _ => (String::new(), String::new()),
                };
                rows.push([rv, what, by(change), change.path.clone()]);
            }
        }
        rows
    }

    /// New entries: the selection follows the end if it was there.
    fn take(&mut self, entries: Vec<Entry>) {
        let at_end = self.selected + 1 >= self.rows().len();
        self.entries = entries;
        self.read = true;
        let last = self.rows().len().saturating_sub(1);
        self.selected = if at_end {
            last
        } else {
            self.selected.min(last)
        };
    }

    /// Moves the selection or closes.
    pub fn handle_key(&mut self, action: &Action, page: usize) -> Option<Effect> {
        match action {
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom => {
                let rows = self.rows().len();
                self.selected =
                    moved_to(self.selected, action, page, rows).min(rows.saturating_sub(1));
            }
            Action::Back | Action::ToggleIndexes => return Some(Effect::Close),
            _ => {}
        }
        None
    }

    /// The view's lines for an area `width` columns wide and `height` high.
    fn lines(&self, width: usize, height: usize, theme: Theme) -> Vec<Line<'static>> {
        if let Some(error) = &self.error {
            return vec![Line::styled(format!("{}: {error}", self.of), theme.error())];
        }
        if !self.read {
            return vec![Line::styled(format!("{}: reading…", self.of), theme.dim())];
        }
        let header = ["RV", "WHAT", "BY", "FIELD / EVENT"];
        let widths_of = |rows: &[[String; 4]]| {
            let mut widths = header.map(|h| h.chars().count());
            for row in rows {
                for (w, cell) in widths.iter_mut().zip(row) {
                    *w = (*w).max(cell.chars().count());
                }
            }
            widths
        };
        let mut rows = self.cells(false);
        let mut widths = widths_of(&rows);
        if widths.iter().sum::<usize>() + 6 > width {
            rows = self.cells(true);
            widths = widths_of(&rows);
        }
        let line = |cells: [&str; 4]| {
            format!(
                "{:<a$}  {:<b$}  {:<c$}  {}",
                cells[0],
                cells[1],
                cells[2],
                cells[3],
                a = widths[0],
                b = widths[1],
                c = widths[2],
            )
        };
        let mut lines = vec![Line::styled(line(header), theme.title())];
        // Scroll so the selected line stays in view, under the header.
        let room = height.saturating_sub(1).max(1);
        let first = (self.selected + 1).saturating_sub(room);
        for (i, row) in rows.iter().enumerate().skip(first).take(room) {
            let text = line([&row[0], &row[1], &row[2], &row[3]]);
            let mut styled = match row[1].as_str() {
                "EVENT" if row[3].starts_with("Warning") => Line::styled(text, theme.error()),
                "EVENT" => Line::styled(text, theme.dim()),
                _ => Line::raw(text),
            };
            if i == self.selected {
                styled = styled.style(theme.selected());
            }
            lines.push(styled);
        }
        lines
    }

    pub(crate) fn draw_into(&self, frame: &mut Frame, area: Rect, theme: Theme) {
        let width = usize::from(area.width.saturating_sub(2));
        let height = usize::from(area.height.saturating_sub(2));
        let title = format!(" timeline of {} · Esc ", self.of);
        frame.render_widget(Clear, area);
        frame.render_widget(
            Paragraph::new(self.lines(width, height, theme)).block(Block::bordered().title(title)),
            area,
        );
    }
}

/// What reaches the timeline: the object's first read, or a watch event of its kind or of
/// Events.
enum Arrival {
    Read(Result<Value, String>),
    Version(EventKind, Value),
    Event(Value),
}

/// The informers and the read behind the view, while it is open.
pub struct TimelineWatch {
    _watchers: Watchers,
    arrivals: mpsc::Receiver<Arrival>,
    timeline: LiveTimeline,
    error: Option<String>,
}

impl TimelineWatch {
    /// Watches `kind` and Events in the object's namespace (every namespace for a
    /// cluster-scoped object), then reads the object: the watch starts first, so no version
    /// falls between the read and it.
    pub fn start(
        cluster: &Cluster,
        kind: &Kind,
        discovery: &Discovery,
        of: &ObjectRef,
    ) -> Result<Self, UiError> {
        let scope = match &of.namespace {
            Some(ns) => NamespaceScope::One(ns.clone()),
            None => NamespaceScope::All,
        };
        let kinds = kinds(std::slice::from_ref(kind), "events", discovery);
        let (sender, arrivals) = mpsc::channel(TAP_CAPACITY);
        let watchers = Watchers::start(cluster, &kinds, &scope, |watched| {
            let tap = Tap::new(TAP_CAPACITY, kscope_resources::secret::keepable_raw);
            let object_kind = watched.group() == kind.group() && watched.plural() == kind.plural();
            let wanted = object_kind.then(|| (of.namespace.clone(), of.name.clone()));
            tokio::spawn(forward(tap.subscribe(), wanted, sender.clone()));
            Some(tap)
        })?;
        let (client, kind, namespace, name) = (
            cluster.client.clone(),
            kind.clone(),
            of.namespace.clone(),
            of.name.clone(),
        );
        tokio::spawn(async move {
            let read = fetch_object(&client, kind, namespace.as_deref(), &name)
                .await
                .map_err(|e| e.to_string());
            // The view closed before the read came back: nobody to tell.
            let _ = sender.send(Arrival::Read(read)).await;
        });
        Ok(Self {
            _watchers: watchers,
            arrivals,
            timeline: LiveTimeline::new(),
            error: None,
        })
    }

    /// Takes the next arrival; true when it changed the timeline. Never resolves once
    /// every informer has stopped. Cancel-safe.
    pub async fn next(&mut self) -> bool {
        let Some(arrival) = self.arrivals.recv().await else {
            return std::future::pending().await;
        };
        match arrival {
            Arrival::Read(Ok(object)) => {
                self.timeline.first_read(object);
                true
            }
            Arrival::Read(Err(error)) => {
                self.error = Some(error);
                true
            }
            Arrival::Version(event, object) => {
                self.timeline.version(event.watch_type(), &object) && self.timeline.read()
            }
            Arrival::Event(event) => self.timeline.event(&event),
        }
    }

    /// The timeline as of now, into `view`.
    pub fn refresh(&self, view: &mut TimelineView) {
        view.error.clone_from(&self.error);
        if self.timeline.read() {
            view.take(self.timeline.entries());
        }
    }
}

/// Sends a kind's watch events from its tap to the timeline until either side is gone:
/// of the object's kind only those of `wanted` (namespace, name), of Events all of them.
async fn forward(
    mut entries: broadcast::Receiver<std::sync::Arc<TapEntry>>,
    wanted: Option<(Option<String>, String)>,
    sender: mpsc::Sender<Arrival>,
) {
    loop {
        let entry = match entries.recv().await {
            Ok(entry) => entry,
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::warn!(missed, ":timeline fell behind the watch");
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let Some((event, object)) = EventKind::of_entry(&entry) else {
            continue;
        };
        let arrival = match &wanted {
            None => Arrival::Event(object),
            Some((namespace, name)) => {
                let meta = &object["metadata"];
                if meta["name"].as_str() != Some(name.as_str())
                    || meta["namespace"].as_str() != namespace.as_deref()
                {
                    continue;
                }
                Arrival::Version(event, object)
            }
        };
        if sender.send(arrival).await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: &str, manager: &str) -> Change {
        Change {
            path: path.into(),
            manager: Some(manager.into()),
            operation: Some("Update".into()),
            subresource: None,
            time: Some("T".into()),
        }
    }

    #[test]
    fn each_changed_field_is_a_line_and_the_selection_follows_the_end() {
        let entry = |rv: &str, changes: Vec<Change>| Entry {
            resource_version: rv.into(),
            what: "MODIFIED".into(),
            changes,
            event: None,
        };
        let mut view = TimelineView::new(ObjectRef {
            kind: "Deployment".into(),
            namespace: Some("ns".into()),
            name: "web".into(),
        });
        view.take(vec![entry(
            "5",
            vec![
                change("spec.replicas", "kubectl"),
                change("metadata.labels.a", "kubectl-label"),
            ],
        )]);
        assert_eq!(view.selected, 1, "at the end");
        view.take(vec![
            entry("5", vec![change("spec.replicas", "kubectl")]),
            entry("7", vec![change("metadata.labels.b", "kubectl-label")]),
        ]);
        assert_eq!(view.selected, 1, "follows the end");
        assert_eq!(
            view.rows()[1],
            [
                "7".to_string(),
                "MODIFIED".into(),
                "kubectl-label (Update T)".into(),
                "metadata.labels.b".into()
            ]
        );
        view.handle_key(&Action::Top, 10);
        view.take(vec![
            entry("5", vec![change("spec.replicas", "kubectl")]),
            entry("7", vec![change("metadata.labels.b", "kubectl-label")]),
            entry("9", vec![change("spec.paused", "kubectl")]),
        ]);
        assert_eq!(view.selected, 0, "stays where it was moved to");
        assert_eq!(view.handle_key(&Action::Back, 10), Some(Effect::Close));
    }
}
