//! The kept lines of a log view: a ring of at most `capacity` lines in time order, the oldest
//! dropped as new ones come, so following a container that writes 50,000 lines a second
//! keeps memory flat (k9s #1188 grew to 30 GB in a log view).
//!
//! Lines are named by an id that survives the oldest being dropped: the id of the line at
//! position `i` is `dropped + i`. A line older than the newest (another container's, sent
//! late) is put in time order among the newest [`LOOKBACK`] lines, which moves the ids after
//! it up by one; [`Pushed`] says where, so positions kept elsewhere can follow.

use std::collections::VecDeque;

/// How far back a late line is sorted in; an older one goes at the end.
pub const LOOKBACK: usize = 4096;

/// One kept line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// Which source (pod and container) wrote it, an index into the view's sources.
    pub source: u16,
    /// Unix nanoseconds, when the log said.
    pub time: Option<i64>,
    pub text: Box<str>,
    /// The line was longer than the bound and is cut.
    pub cut: bool,
}

/// Where a pushed line went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pushed {
    /// The new line's id; the lines from there on had their ids moved up by one unless it
    /// went at the end.
    pub id: u64,
    /// Whether it went before newer lines.
    pub inserted: bool,
    /// Whether the oldest line was dropped to make room.
    pub dropped: bool,
}

#[derive(Debug, Clone)]
pub struct LogRing {
    lines: VecDeque<Line>,
    /// Lines dropped since the start: the id of the oldest kept line.
    dropped: u64,
    capacity: usize,
}

impl LogRing {
    pub fn new(capacity: usize) -> Self {
        Self {
            lines: VecDeque::new(),
            dropped: 0,
            capacity: capacity.max(1),
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The id of the oldest kept line.
    pub fn first(&self) -> u64 {
        self.dropped
    }

    /// One past the id of the newest line.
    pub fn end(&self) -> u64 {
        self.dropped + self.lines.len() as u64
    }

    pub fn get(&self, id: u64) -> Option<&Line> {
        let at = id.checked_sub(self.dropped)?;
        self.lines.get(usize::try_from(at).ok()?)
    }

    /// The kept lines with their ids, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (u64, &Line)> {
        let first = self.dropped;
        self.lines
            .iter()
            .enumerate()
            .map(move |(i, line)| (first + i as u64, line))
    }

    /// The lines at positions `range` (0 is the oldest kept) with their ids.
    pub fn range(
        &self,
        range: std::ops::Range<usize>,
    ) -> impl DoubleEndedIterator<Item = (u64, &Line)> {
        let first = self.dropped + range.start as u64;
        self.lines
            .range(range)
            .enumerate()
            .map(move |(i, line)| (first + i as u64, line))
    }

    /// Keeps `line` in time order (see the module's doc), dropping the oldest when full.
    pub fn push(&mut self, line: Line) -> Pushed {
        let dropped = self.lines.len() >= self.capacity;
        if dropped {
            self.lines.pop_front();
            self.dropped += 1;
        }
        let at = match line.time {
            Some(time)
                if self
                    .lines
                    .back()
                    .and_then(|l| l.time)
                    .is_some_and(|t| t > time) =>
            {
                let from = self.lines.len().saturating_sub(LOOKBACK);
                // The first of the newest lines written after it; lines without a time count
                // as written before, so they stay where they came.
                let after = |l: &Line| l.time.is_some_and(|t| t > time);
                let (mut low, mut high) = (from, self.lines.len());
                while low < high {
                    let mid = low + (high - low) / 2;
                    if after(&self.lines[mid]) {
                        high = mid;
                    } else {
                        low = mid + 1;
                    }
                }
                low
            }
            _ => self.lines.len(),
        };
        let inserted = at < self.lines.len();
        self.lines.insert(at, line);
        Pushed {
            id: self.dropped + at as u64,
            inserted,
            dropped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(time: i64, text: &str) -> Line {
        Line {
            source: 0,
            time: Some(time),
            text: text.into(),
            cut: false,
        }
    }

    #[test]
    fn the_oldest_lines_go_and_ids_stay() {
        let mut ring = LogRing::new(3);
        for i in 0..5 {
            ring.push(line(i, &i.to_string()));
        }
        assert_eq!((ring.first(), ring.end(), ring.len()), (2, 5, 3));
        assert_eq!(ring.get(2).map(|l| &*l.text), Some("2"));
        assert_eq!(ring.get(1), None);
        assert_eq!(ring.get(5), None);
    }

    #[test]
    fn a_late_line_is_sorted_in_among_the_newest() {
        let mut ring = LogRing::new(10);
        for t in [10, 20, 30] {
            ring.push(line(t, &t.to_string()));
        }
        let pushed = ring.push(line(15, "15"));
        assert_eq!(
            pushed,
            Pushed {
                id: 1,
                inserted: true,
                dropped: false
            }
        );
        let pushed = ring.push(line(30, "30b"));
        assert!(!pushed.inserted, "equal times keep arrival order");
        let texts: Vec<&str> = ring.iter().map(|(_, l)| &*l.text).collect();
        assert_eq!(texts, ["10", "15", "20", "30", "30b"]);
    }
}
