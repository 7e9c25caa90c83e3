//! The TUI's own state: the component of each mode (table, filter bar, command bar, index
//! browser, delta and workqueue panels, help), the mode and focus, and the keymap in force.
//! Rows live in the view; this holds only what the person did. Plain data, so it can be
//! built by hand in tests; page sizes come from the frame's layout, computed before drawing.

use std::sync::Arc;

use kscope_config::Config;
use kscope_config::keys::Keymap;
use kscope_index_views::definitions::Misfits;
use kscope_index_views::query::{ParseError, Query};
use kscope_index_views::registry::ValueCount;

use super::action::{Action, Focus, InputMode};
use super::command::CommandBar;
use super::containers::ContainerPicker;
use super::contexts::ContextPicker;
use super::deltas::DeltaPanel;
use super::effect::Effect;
use super::hot::HotView;
use super::line::LineEdit;
use super::logs::view::LogView;
use super::metrics::MetricsPanel;
use super::portforward::{ForwardDialog, ForwardList};
use super::queue::QueuePanel;
use super::table_pane::TablePane;
use super::timeline::TimelineView;
use super::tree::TreeView;
use super::writes::ConfirmDialog;

/// The filter bar: what is typed, where the cursor is, and whether it parses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilterBar {
    pub input: String,
    pub edit: LineEdit,
    /// Why the input cannot be used (a parse error names its column).
    pub error: Option<String>,
}

impl FilterBar {
    /// Parses the input; on failure records the error and returns `None`.
    pub fn parse(&mut self) -> Option<Query> {
        match Query::parse(&self.input) {
            Ok(query) => {
                self.error = None;
                Some(query)
            }
            Err(ParseError { column, message }) => {
                self.error = Some(format!("column {column}: {message}"));
                None
            }
        }
    }

    /// A key typed into the filter bar: an edit that changes the text refilters at once,
    /// Enter keeps the filter (and the line, for Up), Esc drops what was typed.
    pub fn handle_key(&mut self, action: &Action) -> Option<Effect> {
        match action {
            Action::FilterAccept => {
                self.edit.remember(&self.input);
                Some(Effect::Close)
            }
            Action::FilterClear => Some(Effect::ClearFilter),
            action => match self.edit.apply(&mut self.input, action) {
                Some(true) => Some(Effect::Refilter),
                Some(false) => None,
                None => Some(Effect::Pass),
            },
        }
    }
}

/// The index browser: one index's values with their counts, most frequent first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexBrowser {
    pub names: Vec<String>,
    /// Which of `names` is shown.
    pub current: usize,
    pub values: Vec<ValueCount>,
    pub selected: usize,
    /// Objects left out of a JSONPath index because the path does not fit them.
    pub misfits: Misfits,
}

impl IndexBrowser {
    pub fn name(&self) -> Option<&str> {
        self.names.get(self.current).map(String::as_str)
    }

    /// Moves the value selection by `delta`, clamped to the list.
    pub fn step(&mut self, delta: isize) {
        let last = self.values.len().saturating_sub(1);
        self.selected = self.selected.saturating_add_signed(delta).min(last);
    }

    /// A key in the browser, `page` values to a page: movement moves the selection, the
    /// index keys ask for another index's values, Enter filters by the value.
    pub fn handle_key(&mut self, action: &Action, page: usize) -> Option<Effect> {
        let page = isize::try_from(page).unwrap_or(isize::MAX);
        match action {
            Action::ToggleIndexes => return Some(Effect::Close),
            Action::NextIndex | Action::PrevIndex => {
                let count = self.names.len().max(1);
                let step = if *action == Action::NextIndex {
                    1
                } else {
                    count - 1
                };
                return Some(Effect::Browse((self.current + step) % count));
            }
            Action::ChooseValue => {
                let name = self.name()?;
                let value = self.values.get(self.selected)?;
                return Some(Effect::Filter(format!("{name}={}", value.value)));
            }
            Action::Up => self.step(-1),
            Action::Down => self.step(1),
            Action::PageUp => self.step(-page),
            Action::PageDown => self.step(page),
            Action::Top => self.selected = 0,
            Action::Bottom => self.step(isize::MAX),
            _ => return Some(Effect::Pass),
        }
        None
    }
}

/// The help overlay: the keys as bound, scrolled when taller than the screen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Help {
    /// First line shown; drawing clamps it to the last page.
    pub scroll: usize,
}

impl Help {
    /// A key in the help overlay, `page` lines to a page.
    pub fn handle_key(&mut self, action: &Action, page: usize) -> Option<Effect> {
        let scroll = self.scroll;
        self.scroll = match action {
            Action::ToggleHelp => {
                self.scroll = 0;
                return Some(Effect::Close);
            }
            Action::Up => scroll.saturating_sub(1),
            Action::Down => scroll + 1,
            Action::PageUp => scroll.saturating_sub(page),
            Action::PageDown => scroll + page,
            Action::Top => 0,
            Action::Bottom => usize::MAX,
            _ => return Some(Effect::Pass),
        };
        None
    }
}

/// Everything the person changed, apart from the rows themselves.
#[derive(Debug, Clone)]
pub struct UiState {
    pub mode: InputMode,
    pub table: TablePane,
    pub filter: FilterBar,
    pub panels: bool,
    pub focus: Focus,
    pub deltas: DeltaPanel,
    pub browser: IndexBrowser,
    pub queue: QueuePanel,
    pub keymap: Arc<Keymap>,
    /// The command bar (`:`).
    pub command: CommandBar,
    pub help: Help,
    /// The log view, while open (its readers are the app's).
    pub logs: Option<LogView>,
    /// The `:metrics` panel, while open (its scraping task is the app's).
    pub metrics: Option<MetricsPanel>,
    /// The `:ctx` picker.
    pub contexts: ContextPicker,
    /// The ownership tree, while open (its informers are the app's).
    pub tree: Option<TreeView>,
    /// The hot loops, while open (their informers and detector are the app's).
    pub hot: Option<HotView>,
    /// One object's timeline, while open (its informers are the app's).
    pub timeline: Option<TimelineView>,
    /// A word for the status line until the next key (a letter that is no key here).
    pub notice: Option<String>,
    /// The confirm dialog of a write, while one is asked for.
    pub confirm: ConfirmDialog,
    /// The port-forward dialog (`F`), while open.
    pub port_forward: ForwardDialog,
    /// The `:pf` list: the forwards' last snapshot (they run in the app).
    pub forwards: ForwardList,
    /// The container picker of a shell or attach, while open (its read is the app's).
    pub containers: Option<ContainerPicker>,
    /// The write keys the server says this user may not use on the table on screen (its
    /// SelfSubjectAccessReview answers), with why: help dims them, the key says so.
    pub forbidden: Vec<(Action, String)>,
    /// What the header says of the recording played (`kscope replay FILE`); `None` on a
    /// live cluster.
    pub recording: Option<String>,
    /// What the header says of the recording `ctrl-r` runs (`● REC 1.2MiB 340 ev/s`).
    pub recorder: Option<String>,
}

impl UiState {
    /// State with the built-in keymap (the configuration's replaces it in [`super::run`]).
    pub fn new(panels: bool) -> Self {
        Self {
            mode: InputMode::default(),
            table: TablePane::default(),
            filter: FilterBar::default(),
            panels,
            focus: Focus::default(),
            deltas: DeltaPanel::default(),
            browser: IndexBrowser::default(),
            queue: QueuePanel::default(),
            keymap: Arc::new(built_in_keymap()),
            command: CommandBar::default(),
            help: Help::default(),
            logs: None,
            metrics: None,
            contexts: ContextPicker::default(),
            tree: None,
            hot: None,
            timeline: None,
            notice: None,
            confirm: ConfirmDialog::default(),
            port_forward: ForwardDialog::default(),
            forwards: ForwardList::default(),
            containers: None,
            forbidden: Vec::new(),
            recording: None,
            recorder: None,
        }
    }
}

/// The keys of the built-in configuration. It is part of the binary and a unit test parses
/// it, so failing here is a build defect, not a user error.
#[expect(
    clippy::expect_used,
    reason = "the built-in configuration is compiled in and parsed by a unit test"
)]
fn built_in_keymap() -> Keymap {
    Config::built_in()
        .map(|c| c.keys)
        .expect("the built-in config/kscope.yaml is valid")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_bar_refilters_on_each_key_and_closes() {
        let mut bar = FilterBar::default();
        assert_eq!(
            bar.handle_key(&Action::FilterChar('a')),
            Some(Effect::Refilter)
        );
        assert_eq!(
            bar.handle_key(&Action::FilterBackspace),
            Some(Effect::Refilter)
        );
        assert_eq!(bar.input, "");
        assert_eq!(bar.handle_key(&Action::FilterAccept), Some(Effect::Close));
        assert_eq!(
            bar.handle_key(&Action::FilterClear),
            Some(Effect::ClearFilter)
        );
        assert_eq!(bar.handle_key(&Action::SortNext), Some(Effect::Pass));
    }

    #[test]
    fn the_index_browser_moves_browses_and_chooses() {
        let value = |v: &str, count| ValueCount {
            value: v.into(),
            count,
        };
        let mut browser = IndexBrowser {
            names: vec!["app".into(), "node".into()],
            current: 0,
            values: vec![value("web", 3), value("db", 2), value("cache", 1)],
            selected: 0,
            misfits: Misfits::default(),
        };
        assert_eq!(browser.handle_key(&Action::PageDown, 2), None);
        assert_eq!(browser.selected, 2);
        assert_eq!(browser.handle_key(&Action::Up, 2), None);
        assert_eq!(
            browser.handle_key(&Action::ChooseValue, 2),
            Some(Effect::Filter("app=db".into()))
        );
        assert_eq!(
            browser.handle_key(&Action::NextIndex, 2),
            Some(Effect::Browse(1))
        );
        assert_eq!(
            browser.handle_key(&Action::PrevIndex, 2),
            Some(Effect::Browse(1))
        );
        assert_eq!(
            browser.handle_key(&Action::ToggleIndexes, 2),
            Some(Effect::Close)
        );
        assert_eq!(browser.handle_key(&Action::SortNext, 2), Some(Effect::Pass));
    }

    #[test]
    fn help_scrolls_and_closes_at_the_top() {
        let mut help = Help::default();
        assert_eq!(help.handle_key(&Action::PageDown, 10), None);
        assert_eq!(help.handle_key(&Action::Up, 10), None);
        assert_eq!(help.scroll, 9);
        assert_eq!(help.handle_key(&Action::Bottom, 10), None);
        assert_eq!(help.scroll, usize::MAX);
        assert_eq!(
            help.handle_key(&Action::ToggleHelp, 10),
            Some(Effect::Close)
        );
        assert_eq!(help.scroll, 0);
        assert_eq!(help.handle_key(&Action::Quit, 10), Some(Effect::Pass));
    }

    #[test]
    fn filter_errors_name_the_column() {
        let mut bar = FilterBar {
            input: "app in a".into(),
            ..FilterBar::default()
        };
        assert!(bar.parse().is_none());
        assert!(bar.error.as_deref().is_some_and(|e| e.contains("column 8")));
        bar.input = "app=web api".into();
        assert_eq!(bar.parse().map(|q| q.text), Some("api".to_string()));
        assert_eq!(bar.error, None);
    }
}
