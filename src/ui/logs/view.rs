//! The log view's state: the kept lines and where they came from, the scroll position
//! (following the newest until the person scrolls up), the search and its matches, and the
//! view's toggles. Plain data, built by hand in tests; the frame lays out only the lines on
//! screen ([`LogView::prepare`]).

use std::collections::VecDeque;

use unicode_width::UnicodeWidthStr;

use kscope_client::logs::LogLine;
pub use kscope_config::keys::LogRange;

use super::super::action::{Action, InputMode};
use super::super::effect::Effect;
use super::super::line::LineEdit;
use super::matcher::Matcher;
use super::ring::{Line, LogRing};

/// Where one source's stream stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceState {
    Connecting,
    Streaming,
    /// The connection failed; trying again.
    Reconnecting {
        attempt: u32,
        why: String,
    },
    /// The log ended: the container stopped, the pod went, or the request did not follow.
    Ended(String),
    /// The kubelet or the API server refused, in its words.
    Failed(String),
}

/// One container of one pod whose log the view shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub pod: String,
    pub container: String,
    /// What each of its lines is tagged with (empty when the view has one source).
    pub tag: String,
    pub state: SourceState,
}

/// The container picker of a pod with several containers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picker {
    pub pod: String,
    /// The pod's containers; the first choice shown is "all containers".
    pub containers: Vec<String>,
    /// 0 is "all containers", `i` is `containers[i - 1]`.
    pub selected: usize,
}

/// The search typed after `/`, and the ids of the kept lines that match it, oldest first.
#[derive(Debug, Clone, Default)]
pub struct Search {
    pub input: String,
    pub edit: LineEdit,
    /// The search in force (`None`: nothing typed). Lower-case text matches either case;
    /// text with a capital matches exactly ("smart case").
    pub matcher: Option<Matcher>,
    pub matches: VecDeque<u64>,
    /// The match n/N moved to.
    pub current: Option<u64>,
}

impl Search {
    fn is_match(&self, text: &str) -> bool {
        self.matcher.as_ref().is_some_and(|m| m.is_match(text))
    }
}

/// What the view shows: either every kept line or, filtering, only the matches.
#[derive(Debug, Clone)]
pub struct LogView {
    /// `pod shop/web-1`, `deployment shop/web`.
    pub title: String,
    pub namespace: String,
    pub sources: Vec<Source>,
    pub ring: LogRing,
    /// Showing the newest lines as they come; scrolling up pauses it, End resumes it.
    pub follow: bool,
    /// While paused, the first line shown.
    pub top: u64,
    pub range: LogRange,
    pub tail_lines: u64,
    /// The previous (terminated) instance of each container.
    pub previous: bool,
    pub timestamps: bool,
    pub wrap: bool,
    pub search: Search,
    /// Only lines that match the search.
    pub filter: bool,
    pub picker: Option<Picker>,
    /// Why there is nothing to show (the pod or workload could not be read), or what the
    /// last action did (where the log was saved).
    pub notice: Option<String>,
    /// The lines laid out for this frame, oldest first, as (id, rows taken).
    pub shown: Vec<(u64, usize)>,
    /// Content rows last frame: what PgUp/PgDn move by.
    pub page: usize,
    /// The log view's own keys shown over it (`?`).
    pub help: bool,
}

impl LogView {
    pub fn new(title: String, namespace: String, capacity: usize, tail_lines: u64) -> Self {
        Self {
            title,
            namespace,
            sources: Vec::new(),
            ring: LogRing::new(capacity),
            follow: true,
            top: 0,
            range: LogRange::Tail,
            tail_lines,
            previous: false,
            timestamps: false,
            wrap: false,
            search: Search::default(),
            filter: false,
            picker: None,
            notice: None,
            shown: Vec::new(),
            page: 1,
            help: false,
        }
    }

    /// Forgets the kept lines and sources, for a new request (previous, range).
    pub fn restart(&mut self) {
        self.ring = LogRing::new(self.ring.capacity());
        self.sources.clear();
        self.search.matches.clear();
        self.search.current = None;
        self.follow = true;
        self.top = 0;
        self.notice = None;
    }

    /// Takes lines of source `source` into the ring, keeping the matches, the paused
    /// position and the current match on the same lines.
    pub fn take(&mut self, source: u16, lines: Vec<LogLine>) {
        for line in lines {
            let matches = self.search.is_match(&line.text);
            let pushed = self.ring.push(Line {
                source,
                time: line.time,
                text: line.text.into_boxed_str(),
                cut: line.cut,
            });
            let first = self.ring.first();
            let found = &mut self.search.matches;
            if pushed.dropped {
                while found.front().is_some_and(|&id| id < first) {
                    found.pop_front();
                }
            }
            if pushed.inserted {
                for id in found.iter_mut().rev() {
                    if *id < pushed.id {
                        break;
                    }
                    *id += 1;
                }
                let moved = |id: &mut u64| {
                    if *id >= pushed.id {
                        *id += 1;
                    }
                };
                moved(&mut self.top);
                if let Some(current) = &mut self.search.current {
                    moved(current);
                }
            }
            if matches {
                let at = found.partition_point(|&id| id < pushed.id);
                found.insert(at, pushed.id);
            }
        }
        let first = self.ring.first();
        self.top = self.top.max(first);
        if self.search.current.is_some_and(|c| c < first) {
            self.search.current = None;
        }
    }

    /// Sets the search to `input` and finds its matches among the kept lines.
    pub fn set_search(&mut self, input: &str) {
        self.search.current = None;
        self.search.matches.clear();
        self.search.matcher = None;
        if input.is_empty() {
            self.filter = false;
            return;
        }
        let Some(matcher) = Matcher::new(input) else {
            return;
        };
        self.search.matches = matcher.matches(&self.ring).into();
        self.search.matcher = Some(matcher);
    }

    /// Lines in the view (all kept, or the matches when filtering).
    pub fn view_len(&self) -> usize {
        if self.filter {
            self.search.matches.len()
        } else {
            self.ring.len()
        }
    }

    fn view_at(&self, index: usize) -> Option<u64> {
        if self.filter {
            self.search.matches.get(index).copied()
        } else {
            (index < self.ring.len()).then(|| self.ring.first() + index as u64)
        }
    }

    /// The position in the view of line `id`, or of the first line after it.
    fn view_index(&self, id: u64) -> usize {
        if self.filter {
            self.search.matches.partition_point(|&m| m < id)
        } else {
            usize::try_from(id.saturating_sub(self.ring.first()))
                .unwrap_or(usize::MAX)
                .min(self.ring.len())
        }
    }

    /// When a line was written, as shown while timestamps are on.
    pub fn time_label(&self, line: &Line) -> Option<String> {
        if !self.timestamps {
            return None;
        }
        Some(match line.time {
            Some(t) => {
                let ts = jiff::Timestamp::from_nanosecond(i128::from(t))
                    .unwrap_or(jiff::Timestamp::UNIX_EPOCH);
                format!("{ts:.3} ")
            }
            None => format!("{:25}", "-"),
        })
    }

    /// The tag of a line's source, empty when the view has one source.
    pub fn tag(&self, line: &Line) -> &str {
        self.sources
            .get(usize::from(line.source))
            .map_or("", |s| s.tag.as_str())
    }

    /// What a line is prefixed with: its time (when shown) and its source's tag.
    pub fn prefix(&self, line: &Line) -> String {
        let mut prefix = self.time_label(line).unwrap_or_default();
        let tag = self.tag(line);
        if !tag.is_empty() {
            prefix.push_str(tag);
            prefix.push(' ');
        }
        prefix
    }

    /// Screen rows line `line` takes in `width` columns.
    fn rows_of(&self, line: &Line, width: usize) -> usize {
        if !self.wrap || width == 0 {
            return 1;
        }
        let cells = self.prefix(line).width() + line.text.width() + usize::from(line.cut);
        cells.div_ceil(width).max(1)
    }

    /// Lays out the lines that fit in `rows` x `width` (the newest while following) into
    /// [`LogView::shown`]; only those lines are looked at.
    pub fn prepare(&mut self, rows: usize, width: usize) {
        self.page = rows.max(1);
        let mut shown = Vec::new();
        let mut used = 0;
        let len = self.view_len();
        if self.follow {
            let mut index = len;
            while index > 0 && used < rows {
                index -= 1;
                let Some(id) = self.view_at(index) else { break };
                let Some(line) = self.ring.get(id) else { break };
                let taken = self.rows_of(line, width);
                if used + taken > rows && !shown.is_empty() {
                    break;
                }
                used += taken;
                shown.push((id, taken));
            }
            shown.reverse();
        } else {
            let start = self.view_index(self.top);
            let mut index = start;
            while index < len && used < rows {
                let Some(id) = self.view_at(index) else { break };
                let Some(line) = self.ring.get(id) else { break };
                let taken = self.rows_of(line, width);
                used += taken;
                shown.push((id, taken));
                index += 1;
            }
            // No blank space after the last line while there are lines above to show.
            let mut before = Vec::new();
            let mut index = start;
            while index > 0 && used < rows {
                index -= 1;
                let Some(id) = self.view_at(index) else { break };
                let Some(line) = self.ring.get(id) else { break };
                let taken = self.rows_of(line, width);
                if used + taken > rows {
                    break;
                }
                used += taken;
                before.push((id, taken));
            }
            before.reverse();
            before.append(&mut shown);
            shown = before;
            if let Some(&(id, _)) = shown.first() {
                self.top = id;
            }
        }
        self.shown = shown;
    }

    /// The first line on screen (the top of the last frame).
    fn shown_top(&self) -> Option<u64> {
        self.shown.first().map(|&(id, _)| id)
    }

    /// Scrolls by `delta` lines; scrolling up pauses following.
    fn scroll(&mut self, delta: isize) {
        let len = self.view_len();
        if len == 0 {
            return;
        }
        let from = self
            .shown_top()
            .map_or(len.saturating_sub(1), |id| self.view_index(id));
        if delta < 0 {
            self.follow = false;
        } else if self.follow {
            return;
        }
        let to = from.saturating_add_signed(delta).min(len - 1);
        if let Some(id) = self.view_at(to) {
            self.top = id;
        }
    }

    /// Moves to the next (or previous) match after the one shown, and pauses there.
    fn step_match(&mut self, forward: bool) {
        let found = &self.search.matches;
        let from = self.search.current.or(self.shown_top());
        let next = match (from, forward) {
            (None, true) => found.front().copied(),
            (None, false) => found.back().copied(),
            (Some(from), true) => {
                let at = found.partition_point(|&id| id <= from);
                found.get(at).or(found.front()).copied()
            }
            (Some(from), false) => {
                let at = found.partition_point(|&id| id < from);
                at.checked_sub(1)
                    .and_then(|i| found.get(i))
                    .or(found.back())
                    .copied()
            }
        };
        let Some(id) = next else { return };
        self.search.current = Some(id);
        self.follow = false;
        // The match a third of the page down, with what led to it above.
        let index = self.view_index(id);
        let above = self.page / 3;
        self.top = self.view_at(index.saturating_sub(above)).unwrap_or(id);
    }

    /// A key in the log view. Returns what the controller must do: close the view, ask
    /// for the log again ([`Effect::Refresh`]), save it ([`Effect::Save`]), or open the
    /// search bar.
    pub fn handle_key(&mut self, action: &Action) -> Option<Effect> {
        if self.help {
            // Any key closes the help; only Esc and ? are spent on it.
            self.help = false;
            if matches!(action, Action::ToggleHelp | Action::Back) {
                return None;
            }
        }
        if *action == Action::ToggleHelp {
            self.help = true;
            return None;
        }
        if let Some(picker) = &mut self.picker {
            let choices = picker.containers.len() + 1;
            match action {
                Action::Up => picker.selected = picker.selected.saturating_sub(1),
                Action::Down => picker.selected = (picker.selected + 1).min(choices - 1),
                Action::Top => picker.selected = 0,
                Action::Bottom => picker.selected = choices - 1,
                Action::ChooseValue => return Some(Effect::Refresh),
                Action::Back => return Some(Effect::Close),
                _ => {}
            }
            return None;
        }
        let page = isize::try_from(self.page).unwrap_or(isize::MAX);
        match action {
            Action::Back if self.search.matcher.is_some() => {
                self.search.input.clear();
                self.set_search("");
            }
            Action::Back => return Some(Effect::Close),
            Action::Up => self.scroll(-1),
            Action::Down => self.scroll(1),
            Action::PageUp => self.scroll(-page),
            Action::PageDown => self.scroll(page),
            Action::Top => {
                self.follow = false;
                self.top = self.view_at(0).unwrap_or(0);
            }
            Action::Bottom => {
                self.follow = true;
                self.search.current = None;
            }
            Action::OpenLogSearch => return Some(Effect::Mode(InputMode::LogSearch)),
            Action::NextMatch => self.step_match(true),
            Action::PrevMatch => self.step_match(false),
            Action::ToggleLogFilter if self.search.matcher.is_some() => {
                self.filter = !self.filter;
            }
            Action::ToggleTimestamps => self.timestamps = !self.timestamps,
            Action::ToggleWrap => self.wrap = !self.wrap,
            Action::TogglePrevious => {
                self.previous = !self.previous;
                return Some(Effect::Refresh);
            }
            Action::LogRange(range) => {
                self.range = *range;
                return Some(Effect::Refresh);
            }
            Action::SaveLogs => return Some(Effect::Save),
            _ => {}
        }
        None
    }

    /// A key typed into the search bar: each edit searches again; Enter keeps the search,
    /// Esc drops it, both back to the view's keys.
    pub fn handle_search(&mut self, action: &Action) -> Option<Effect> {
        match action {
            Action::FilterAccept => {
                self.search.edit.remember(&self.search.input);
                Some(Effect::Mode(InputMode::Logs))
            }
            Action::FilterClear => {
                self.search.input.clear();
                self.set_search("");
                Some(Effect::Mode(InputMode::Logs))
            }
            action => {
                let mut input = std::mem::take(&mut self.search.input);
                let changed = self.search.edit.apply(&mut input, action);
                if changed == Some(true) {
                    self.set_search(&input);
                }
                self.search.input = input;
                None
            }
        }
    }

    /// The text saved to a file: the view's lines (only the matches when filtering), with
    /// the prefix they are shown with.
    pub fn saved_text(&self) -> String {
        let mut text = String::new();
        let mut push = |line: &Line| {
            text.push_str(&self.prefix(line));
            text.push_str(&line.text);
            text.push('\n');
        };
        if self.filter {
            for id in &self.search.matches {
                if let Some(line) = self.ring.get(*id) {
                    push(line);
                }
            }
        } else {
            for (_, line) in self.ring.iter() {
                push(line);
            }
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(texts: &[&str]) -> Vec<LogLine> {
        lines_from(0, texts)
    }

    /// Lines written 10 ns apart from `start`.
    fn lines_from(start: i64, texts: &[&str]) -> Vec<LogLine> {
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| LogLine {
                time: Some(start + i as i64 * 10),
                text: t.to_string(),
                cut: false,
            })
            .collect()
    }

    fn shown_texts(view: &LogView) -> Vec<String> {
        view.shown
            .iter()
            .map(|(id, _)| view.ring.get(*id).unwrap().text.to_string())
            .collect()
    }

    fn view(capacity: usize) -> LogView {
        let mut view = LogView::new("pod a/b".into(), "a".into(), capacity, 100);
        view.take(
            0,
            lines(&["GET /a", "POST /b", "get /c", "PUT /d", "GET /e"]),
        );
        view
    }

    /// `/` opens the search bar, Enter or Esc in it goes back to the view's keys: the log
    /// view asks the app for its other mode rather than setting it.
    #[test]
    fn the_search_bar_is_the_views_other_mode() {
        let mut view = view(100);
        assert_eq!(
            view.handle_key(&Action::OpenLogSearch),
            Some(Effect::Mode(InputMode::LogSearch))
        );
        assert_eq!(view.handle_search(&Action::FilterChar('g')), None);
        assert_eq!(
            view.handle_search(&Action::FilterAccept),
            Some(Effect::Mode(InputMode::Logs))
        );
        assert_eq!(view.search.input, "g");
        assert_eq!(
            view.handle_search(&Action::FilterClear),
            Some(Effect::Mode(InputMode::Logs))
        );
        assert_eq!(view.search.input, "");
    }

    #[test]
    fn follows_until_scrolled_up_and_resumes_at_the_end() {
        let mut view = view(100);
        view.prepare(2, 80);
        assert_eq!(shown_texts(&view), ["PUT /d", "GET /e"]);
        view.handle_key(&Action::Up);
        assert!(!view.follow);
        view.prepare(2, 80);
        assert_eq!(shown_texts(&view), ["get /c", "PUT /d"]);
        view.take(0, lines_from(100, &["new"]));
        view.prepare(2, 80);
        assert_eq!(shown_texts(&view), ["get /c", "PUT /d"], "paused stays put");
        view.handle_key(&Action::Bottom);
        view.prepare(2, 80);
        assert_eq!(shown_texts(&view), ["GET /e", "new"]);
    }

    #[test]
    fn smart_case_search_steps_through_matches_and_filters() {
        let mut view = view(100);
        view.set_search("get");
        assert_eq!(view.search.matches, [0, 2, 4]);
        view.set_search("GET");
        assert_eq!(view.search.matches, [0, 4]);
        view.prepare(2, 80);
        view.handle_key(&Action::NextMatch);
        assert_eq!(
            view.search.current,
            Some(4),
            "the next after the screen's top"
        );
        view.handle_key(&Action::NextMatch);
        assert_eq!(view.search.current, Some(0), "wraps to the first");
        view.handle_key(&Action::PrevMatch);
        assert_eq!(view.search.current, Some(4), "wraps to the last");
        view.handle_key(&Action::ToggleLogFilter);
        view.handle_key(&Action::Bottom);
        view.prepare(5, 80);
        assert_eq!(shown_texts(&view), ["GET /a", "GET /e"]);
        view.take(0, lines_from(100, &["GET /f"]));
        view.prepare(5, 80);
        assert_eq!(shown_texts(&view), ["GET /a", "GET /e", "GET /f"]);
    }

    #[test]
    fn matches_follow_dropped_and_late_lines() {
        let mut view = view(5);
        view.set_search("GET");
        view.take(0, lines(&["GET /late"])); // time 0: sorted in near the front
        assert_eq!(view.ring.first(), 1);
        let found: Vec<&str> = view
            .search
            .matches
            .iter()
            .map(|id| &*view.ring.get(*id).unwrap().text)
            .collect();
        assert_eq!(found, ["GET /late", "GET /e"]);
    }

    #[test]
    fn wrapped_lines_take_their_rows() {
        let mut view = LogView::new("pod a/b".into(), "a".into(), 10, 100);
        view.wrap = true;
        view.take(0, lines(&["0123456789", "ab", "0123456789abcdefghij"]));
        view.prepare(3, 10);
        assert_eq!(view.shown.iter().map(|s| s.1).collect::<Vec<_>>(), [1, 2]);
    }

    #[test]
    fn the_picker_chooses_and_esc_clears_the_search_first() {
        let mut view = view(10);
        view.picker = Some(Picker {
            pod: "b".into(),
            containers: vec!["app".into(), "sidecar".into()],
            selected: 0,
        });
        view.handle_key(&Action::Down);
        view.handle_key(&Action::Down);
        assert_eq!(view.picker.as_ref().unwrap().selected, 2);
        assert_eq!(view.handle_key(&Action::ChooseValue), Some(Effect::Refresh));
        view.picker = None;
        view.set_search("GET");
        assert_eq!(view.handle_key(&Action::Back), None);
        assert!(view.search.matcher.is_none());
        assert_eq!(view.handle_key(&Action::Back), Some(Effect::Close));
    }

    /// `?` shows the log view's own keys; Esc closes them, not the view.
    #[test]
    fn question_mark_shows_the_log_keys_and_esc_closes_them() {
        let mut view = view(10);
        assert_eq!(view.handle_key(&Action::ToggleHelp), None);
        assert!(view.help);
        assert_eq!(view.handle_key(&Action::Back), None, "the view stays");
        assert!(!view.help);
        assert_eq!(view.handle_key(&Action::Back), Some(Effect::Close));
    }
}
