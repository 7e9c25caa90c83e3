//! The ownership tree of the selected row (`x`, `:tree`): its owners up to the root and what
//! it owns down through ownerReferences, each with its health as its table shows it. The
//! tree is read from informers on the kinds it can hold ([`TREE_KINDS`], the row's kind and
//! its controller's), started when the tree opens and stopped when it closes, through their
//! owner-uid indexes: rebuilding it costs what it holds. It stays live without being rebuilt
//! once per change: a change to any of those stores marks it stale, and a stale tree is
//! rebuilt just before the next frame draws it — at most once a frame however fast a big
//! namespace churns, and never drawn older than its stores.

use std::collections::HashSet;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

use kscope_client::cluster::{Cluster, NamespaceScope};
use kscope_index_views::ownership::{Forest, TREE_KINDS, TreeNode};
use kscope_resources::Kind;

use super::UiError;
use super::action::Action;
use super::effect::{Effect, ObjectRef};
use super::table::moved_to;
use super::theme::Theme;
use super::watchers::Watchers;
use super::writes::Dependents;

impl ObjectRef {
    fn of(node: &TreeNode) -> Self {
        Self {
            kind: node.kind.clone(),
            namespace: node.namespace.clone(),
            name: node.name.clone(),
        }
    }
}

impl std::fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {ns}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// The tree on screen: its lines as drawn (`├─` prefixes), the selected one, and how far
/// its informers have listed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeView {
    pub of: ObjectRef,
    pub lines: Vec<(String, TreeNode)>,
    pub selected: usize,
    /// Kinds listed, of kinds watched.
    pub listed: (usize, usize),
    /// How many times the lines were built since the tree opened: once a frame at most.
    pub builds: u64,
}

impl TreeView {
    pub fn new(of: ObjectRef) -> Self {
        Self {
            of,
            ..Self::default()
        }
    }

    /// Rebuilds the lines from `forest`, the selection kept on the object it was on (on the
    /// tree's own object at first, or once the selected one is gone).
    pub fn refresh(&mut self, forest: &Forest, listed: (usize, usize)) {
        self.listed = listed;
        self.builds += 1;
        let kept = self.lines.get(self.selected).map(|(_, n)| n.uid.clone());
        let Some(node) = forest.find(&self.of.kind, self.of.namespace.as_deref(), &self.of.name)
        else {
            self.lines.clear();
            self.selected = 0;
            return;
        };
        let tree = forest.around(node);
        self.lines = tree
            .lines()
            .into_iter()
            .map(|(prefix, node)| (prefix, node.clone()))
            .collect();
        let at = |pick: &dyn Fn(&TreeNode) -> bool| self.lines.iter().position(|(_, n)| pick(n));
        self.selected = kept
            .and_then(|uid| at(&|n| n.uid == uid))
            .or_else(|| at(&|n| ObjectRef::of(n) == self.of))
            .unwrap_or(0);
    }

    /// Moves the selection, shows the selected object (`Effect::ShowObject`) or closes.
    pub fn handle_key(&mut self, action: &Action, page: usize) -> Option<Effect> {
        match action {
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom => {
                let last = self.lines.len().saturating_sub(1);
                self.selected = moved_to(self.selected, action, page, self.lines.len()).min(last);
            }
            Action::ChooseValue => {
                return self
                    .lines
                    .get(self.selected)
                    .map(|(_, node)| Effect::ShowObject(ObjectRef::of(node)));
            }
            Action::Back | Action::ToggleIndexes => return Some(Effect::Close),
            _ => {}
        }
        None
    }

    fn title(&self) -> String {
        let (listed, watched) = self.listed;
        let listing = if listed < watched {
            format!(" · listing {listed}/{watched} kinds")
        } else {
            String::new()
        };
        format!(" tree of {}{listing} · Enter shows · Esc ", self.of)
    }

    pub(crate) fn draw_into(&self, frame: &mut Frame, area: Rect, theme: Theme) {
        let height = usize::from(area.height.saturating_sub(2));
        let label = |(prefix, node): &(String, TreeNode)| {
            let ns = match (&node.namespace, &self.of.namespace) {
                (Some(ns), Some(of)) if ns == of => String::new(),
                (Some(ns), _) => format!("{ns}/"),
                (None, _) => String::new(),
            };
            format!("{prefix}{}/{ns}{}", node.kind, node.name)
        };
        let width = self
            .lines
            .iter()
            .map(|l| label(l).chars().count())
            .max()
            .unwrap_or(0);
        let lines: Vec<Line> = if self.lines.is_empty() {
            let why = if self.listed.0 < self.listed.1 {
                "listing…"
            } else {
                "not found: deleted, or in no kind watched"
            };
            vec![Line::styled(format!("{}: {why}", self.of), theme.dim())]
        } else {
            // Scroll so the selected line stays in view.
            let first = (self.selected + 1).saturating_sub(height);
            self.lines
                .iter()
                .enumerate()
                .skip(first)
                .take(height)
                .map(|(i, line)| {
                    let node = &line.1;
                    let text = format!("{:<width$}   ", label(line));
                    let mut name = theme.health(node.row_health);
                    if ObjectRef::of(node) == self.of {
                        name = name.add_modifier(ratatui::style::Modifier::BOLD);
                    }
                    let line = Line::from(vec![
                        Span::styled(text, name),
                        Span::styled(node.health.clone(), theme.health(node.row_health)),
                    ]);
                    if i == self.selected {
                        line.style(theme.selected())
                    } else {
                        line
                    }
                })
                .collect()
        };
        frame.render_widget(Clear, area);
        frame.render_widget(
            Paragraph::new(lines).block(Block::bordered().title(self.title())),
            area,
        );
    }
}

/// The informers a tree is read from, while it is open.
pub struct TreeWatch {
    watchers: Watchers,
    forest: Forest,
    /// A store changed since the tree was last built.
    stale: bool,
}

impl TreeWatch {
    /// Watches `first` (the row's kind, its controller's) and [`TREE_KINDS`] in `scope`:
    /// the object's namespace, or every namespace for a cluster-scoped object, whose
    /// dependents may be anywhere.
    pub fn start(
        cluster: &Cluster,
        first: &[Kind],
        discovery: &kscope_client::discovery::Discovery,
        scope: &NamespaceScope,
    ) -> Result<Self, UiError> {
        let kinds = super::watchers::kinds(first, TREE_KINDS, discovery);
        let watchers = Watchers::start(cluster, &kinds, scope, |_| None)?;
        let mut forest = Forest::new();
        for store in watchers.stores() {
            forest.add(store.clone());
        }
        Ok(Self {
            watchers,
            forest,
            stale: false,
        })
    }

    /// Rebuilds `view` from the stores as they are now.
    pub fn refresh(&mut self, view: &mut TreeView) {
        view.refresh(&self.forest, self.watchers.listed());
        self.stale = false;
    }

    /// What `roots` own, directly or not, as the stores have them now (each object once,
    /// depth first), and whether every kind watched has listed: a delete's dependents.
    pub fn dependents(&self, roots: &[ObjectRef]) -> Dependents {
        let mut seen = HashSet::new();
        let mut objects = Vec::new();
        for root in roots {
            let Some(node) = self
                .forest
                .find(&root.kind, root.namespace.as_deref(), &root.name)
            else {
                continue;
            };
            seen.insert(node.uid.clone());
            let tree = self.forest.descendants(node);
            for (_, node) in tree.lines().into_iter().skip(1) {
                if seen.insert(node.uid.clone()) {
                    objects.push(ObjectRef::of(node));
                }
            }
        }
        let (listed, watched) = self.watchers.listed();
        Dependents {
            objects,
            complete: listed >= watched,
        }
    }

    /// Rebuilds `view` if a store changed since it was last built: called before each
    /// frame, so the changes between two frames cost one rebuild.
    pub fn refresh_if_stale(&mut self, view: &mut TreeView) {
        if self.stale {
            self.refresh(view);
        }
    }

    /// Resolves when a store changed, and marks the tree stale. Cancel-safe.
    pub async fn changed(&mut self) {
        self.watchers.changed().await;
        self.stale = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(kind: &str, name: &str) -> TreeNode {
        TreeNode {
            kind: kind.into(),
            namespace: Some("ns".into()),
            name: name.into(),
            uid: format!("u-{name}"),
            health: String::new(),
            row_health: Default::default(),
            owners: Vec::new(),
        }
    }

    #[test]
    fn the_tree_moves_shows_the_selected_object_and_closes() {
        let mut view = TreeView::new(ObjectRef::of(&node("ReplicaSet", "web-1")));
        view.lines = vec![
            (String::new(), node("Deployment", "web")),
            ("└─".into(), node("ReplicaSet", "web-1")),
            ("  ├─".into(), node("Pod", "web-1-a")),
            ("  └─".into(), node("Pod", "web-1-b")),
        ];
        view.handle_key(&Action::PageDown, 10);
        assert_eq!(view.selected, 3, "stops at the last");
        view.handle_key(&Action::Up, 10);
        assert_eq!(
            view.handle_key(&Action::ChooseValue, 10),
            Some(Effect::ShowObject(ObjectRef::of(&node("Pod", "web-1-a"))))
        );
        assert_eq!(view.handle_key(&Action::Back, 10), Some(Effect::Close));
        assert!(view.title().contains("ReplicaSet ns/web-1"));
    }
}
