//! The sorted rows of a live view: a list of sorted blocks, so that inserting or removing
//! one row moves at most a block's worth of entries (not 150,000), and the rows at a
//! position are found by skipping whole blocks.

use std::cmp::Ordering;

use super::columns::SortKey;
use crate::informers::keys::Key;

/// Rows per block: inserts move up to this many entries, position lookups step over
/// `len / MAX_BLOCK` blocks.
const MAX_BLOCK: usize = 1024;

/// One row: its sort key, then its object key to break ties (so the order is total and a
/// row is found by binary search).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowEntry {
    pub sort: SortKey,
    pub key: Key,
}

/// Rows in sort order, ascending or descending by sort key (ties always by key).
#[derive(Debug, Clone)]
pub struct SortedRows {
    blocks: Vec<Vec<RowEntry>>,
    len: usize,
    descending: bool,
}

impl SortedRows {
    pub fn new(descending: bool) -> Self {
        Self {
            blocks: Vec::new(),
            len: 0,
            descending,
        }
    }

    /// Rows from entries in any order.
    pub fn from_entries(mut entries: Vec<RowEntry>, descending: bool) -> Self {
        let mut rows = Self::new(descending);
        entries.sort_unstable_by(|a, b| rows.compare(a, b));
        rows.len = entries.len();
        let mut iter = entries.into_iter().peekable();
        while iter.peek().is_some() {
            rows.blocks
                .push(iter.by_ref().take(MAX_BLOCK / 2).collect());
        }
        rows
    }

    /// Rows already in this order, appended as they come (a filtered pass over other rows).
    pub fn from_sorted(entries: impl IntoIterator<Item = RowEntry>, descending: bool) -> Self {
        let mut rows = Self::new(descending);
        let mut block = Vec::with_capacity(MAX_BLOCK / 2);
        for entry in entries {
            block.push(entry);
            if block.len() == MAX_BLOCK / 2 {
                rows.len += block.len();
                rows.blocks.push(std::mem::replace(
                    &mut block,
                    Vec::with_capacity(MAX_BLOCK / 2),
                ));
            }
        }
        if !block.is_empty() {
            rows.len += block.len();
            rows.blocks.push(block);
        }
        rows
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn compare(&self, a: &RowEntry, b: &RowEntry) -> Ordering {
        let by_sort = a.sort.cmp(&b.sort);
        let by_sort = if self.descending {
            by_sort.reverse()
        } else {
            by_sort
        };
        by_sort.then_with(|| a.key.cmp(&b.key))
    }

    /// The block that holds `entry`, or would: the first whose last row is not before it.
    fn block_of(&self, entry: &RowEntry) -> usize {
        let i = self.blocks.partition_point(|b| {
            b.last()
                .is_some_and(|last| self.compare(last, entry) == Ordering::Less)
        });
        i.min(self.blocks.len().saturating_sub(1))
    }

    /// Inserts a row; false if it was there already.
    pub fn insert(&mut self, entry: RowEntry) -> bool {
        if self.blocks.is_empty() {
            self.blocks.push(Vec::with_capacity(MAX_BLOCK / 2));
        }
        let b = self.block_of(&entry);
        let block = &self.blocks[b];
        let at = match block.binary_search_by(|e| self.compare(e, &entry)) {
            Ok(_) => return false,
            Err(at) => at,
        };
        let block = &mut self.blocks[b];
        block.insert(at, entry);
        self.len += 1;
        if block.len() > MAX_BLOCK {
            let tail = block.split_off(MAX_BLOCK / 2);
            self.blocks.insert(b + 1, tail);
        }
        true
    }

    /// Removes a row; false if it was not there.
    pub fn remove(&mut self, entry: &RowEntry) -> bool {
        if self.blocks.is_empty() {
            return false;
        }
        let b = self.block_of(entry);
        let Ok(at) = self.blocks[b].binary_search_by(|e| self.compare(e, entry)) else {
            return false;
        };
        self.blocks[b].remove(at);
        self.len -= 1;
        if self.blocks[b].is_empty() {
            self.blocks.remove(b);
        }
        true
    }

    /// The position of a row, if present.
    pub fn position(&self, entry: &RowEntry) -> Option<usize> {
        if self.blocks.is_empty() {
            return None;
        }
        let b = self.block_of(entry);
        let at = self.blocks[b]
            .binary_search_by(|e| self.compare(e, entry))
            .ok()?;
        Some(self.blocks[..b].iter().map(Vec::len).sum::<usize>() + at)
    }

    /// Up to `count` rows from position `offset`, in order.
    pub fn range(&self, offset: usize, count: usize) -> impl Iterator<Item = &RowEntry> {
        let mut skip = offset;
        let mut first = self.blocks.len();
        for (i, block) in self.blocks.iter().enumerate() {
            if skip < block.len() {
                first = i;
                break;
            }
            skip -= block.len();
        }
        self.blocks[first..].iter().flatten().skip(skip).take(count)
    }

    /// The row at `position`.
    pub fn get(&self, position: usize) -> Option<&RowEntry> {
        self.range(position, 1).next()
    }

    /// Every row, in order.
    pub fn iter(&self) -> impl Iterator<Item = &RowEntry> {
        self.blocks.iter().flatten()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn entry(n: i64, key: &str) -> RowEntry {
        RowEntry {
            sort: SortKey::Number(Some(n)),
            key: Arc::from(key),
        }
    }

    #[test]
    fn stays_sorted_through_inserts_and_removes_across_blocks() {
        let mut rows = SortedRows::new(false);
        // A pseudo-random order, enough rows for several block splits.
        let n = 5 * MAX_BLOCK;
        let entries: Vec<RowEntry> = (0..n)
            .map(|i| {
                let v = (i * 7919) % n;
                entry((v % 97) as i64, &format!("k{v:06}"))
            })
            .collect();
        for e in &entries {
            assert!(rows.insert(e.clone()));
        }
        assert!(!rows.insert(entries[3].clone()));
        assert_eq!(rows.len(), n);
        let mut sorted = entries.clone();
        sorted.sort_by(|a, b| a.sort.cmp(&b.sort).then(a.key.cmp(&b.key)));
        assert!(rows.iter().eq(sorted.iter()));
        assert_eq!(rows.position(&sorted[1234]), Some(1234));
        assert_eq!(rows.get(4000), Some(&sorted[4000]));
        let window: Vec<_> = rows.range(n - 2, 10).cloned().collect();
        assert_eq!(window, sorted[n - 2..]);
        assert_eq!(rows.range(n, 10).count(), 0);
        for e in sorted.iter().step_by(2) {
            assert!(rows.remove(e));
        }
        assert!(!rows.remove(&sorted[0]));
        let rest: Vec<_> = sorted.iter().skip(1).step_by(2).cloned().collect();
        assert!(rows.iter().eq(rest.iter()));
        assert_eq!(rows.len(), rest.len());
        let rebuilt = SortedRows::from_entries(rest.clone(), false);
        assert!(rebuilt.iter().eq(rest.iter()));
        let appended = SortedRows::from_sorted(rest.clone(), false);
        assert_eq!(appended.position(&rest[700]), Some(700));
    }

    #[test]
    fn descending_reverses_sort_keys_but_not_ties() {
        let rows =
            SortedRows::from_entries(vec![entry(1, "b"), entry(2, "a"), entry(1, "a")], true);
        let keys: Vec<&str> = rows.iter().map(|e| &*e.key).collect();
        assert_eq!(keys, ["a", "a", "b"]);
        let sorts: Vec<_> = rows.iter().map(|e| e.sort.clone()).collect();
        assert_eq!(sorts[0], SortKey::Number(Some(2)));
    }
}
