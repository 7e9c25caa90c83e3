//! The sorted rows of a live view: a list of sorted blocks, so that inserting or removing
//! one row moves at most a block's worth of entries (not 150,000), and the rows at a
//! position are found by skipping whole blocks. Blocks are shared copy-on-write, so a
//! snapshot for a search off the view's lock costs one reference per block, and a change
//! after it copies only the block it touches.

use std::cmp::Ordering;
use std::sync::Arc;

use super::columns::SortKey;
use kscope_informers::keys::Key;

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

/// Rows in sort order, ascending or descending by sort key (ties always by key). Cloning
/// shares the blocks.
#[derive(Debug, Clone)]
pub struct SortedRows {
    blocks: Vec<Arc<Vec<RowEntry>>>,
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
        let rows = Self::new(descending);
        entries.sort_unstable_by(|a, b| rows.compare(a, b));
        Self::from_sorted(entries, descending)
    }

    /// Rows from entries in key order (as a `BTreeMap` of members yields them): a stable
    /// sort by sort key alone then leaves ties in key order, so keys are never compared.
    /// Texts are radix-sorted: names and IPs share long prefixes that a comparison sort
    /// would read again on every comparison.
    pub fn from_key_ordered(mut entries: Vec<RowEntry>, descending: bool) -> Self {
        // Descending by sort key with ties ascending by key: sort the reversed entries
        // ascending (ties then descend by key) and reverse the result.
        if descending {
            entries.reverse();
        }
        let texts: Option<Vec<&[u8]>> = entries
            .iter()
            .map(|e| match &e.sort {
                SortKey::Text(text) => Some(text.as_str().as_bytes()),
                SortKey::Number(_) => None,
            })
            .collect();
        match texts {
            Some(texts) if entries.len() > RADIX_MIN => {
                let mut order: Vec<u32> = (0..texts.len() as u32).collect();
                let mut scratch = vec![0; order.len()];
                radix_sort(&mut order, &mut scratch, &texts, 0);
                let mut slots: Vec<Option<RowEntry>> = entries.into_iter().map(Some).collect();
                entries = order
                    .iter()
                    .filter_map(|&i| slots.get_mut(i as usize).and_then(Option::take))
                    .collect();
            }
            _ => entries.sort_by(|a, b| a.sort.cmp(&b.sort)),
        }
        if descending {
            entries.reverse();
        }
        Self::from_sorted(entries, descending)
    }

    /// Rows already in this order, appended as they come (a filtered pass over other rows).
    pub fn from_sorted(entries: impl IntoIterator<Item = RowEntry>, descending: bool) -> Self {
        let mut rows = Self::new(descending);
        let mut block = Vec::with_capacity(MAX_BLOCK / 2);
        for entry in entries {
            block.push(entry);
            if block.len() == MAX_BLOCK / 2 {
                rows.len += block.len();
                rows.blocks.push(Arc::new(std::mem::replace(
                    &mut block,
                    Vec::with_capacity(MAX_BLOCK / 2),
                )));
            }
        }
        if !block.is_empty() {
            rows.len += block.len();
            rows.blocks.push(Arc::new(block));
        }
        rows
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn descending(&self) -> bool {
        self.descending
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
            self.blocks
                .push(Arc::new(Vec::with_capacity(MAX_BLOCK / 2)));
        }
        let b = self.block_of(&entry);
        let block = &self.blocks[b];
        let at = match block.binary_search_by(|e| self.compare(e, &entry)) {
            Ok(_) => return false,
            Err(at) => at,
        };
        let block = Arc::make_mut(&mut self.blocks[b]);
        block.insert(at, entry);
        self.len += 1;
        if block.len() > MAX_BLOCK {
            let tail = block.split_off(MAX_BLOCK / 2);
            self.blocks.insert(b + 1, Arc::new(tail));
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
        Arc::make_mut(&mut self.blocks[b]).remove(at);
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
        Some(self.blocks[..b].iter().map(|b| b.len()).sum::<usize>() + at)
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
        self.blocks[first..]
            .iter()
            .flat_map(|b| b.iter())
            .skip(skip)
            .take(count)
    }

    /// The row at `position`.
    pub fn get(&self, position: usize) -> Option<&RowEntry> {
        self.range(position, 1).next()
    }

    /// Every row, in order.
    pub fn iter(&self) -> impl Iterator<Item = &RowEntry> {
        self.blocks.iter().flat_map(|b| b.iter())
    }
}

/// Fewer rows than this are sorted by comparison.
const RADIX_MIN: usize = 64;

/// The radix bucket of `text` at `depth`: 0 once the text has ended (shorter sorts first),
/// else its byte there plus one.
fn bucket(text: &[u8], depth: usize) -> usize {
    text.get(depth).map_or(0, |&b| usize::from(b) + 1)
}

/// Sorts `order` (indices into `texts`) by their texts from byte `depth` on, stably: an MSD
/// radix sort that reads each byte about once. Recurses only into buckets that split, and
/// sorts small buckets by comparison.
fn radix_sort(order: &mut [u32], scratch: &mut [u32], texts: &[&[u8]], mut depth: usize) {
    let text = |i: u32| texts.get(i as usize).copied().unwrap_or_default();
    loop {
        if order.len() <= RADIX_MIN {
            order.sort_by(|&a, &b| {
                let a = text(a).get(depth..).unwrap_or_default();
                let b = text(b).get(depth..).unwrap_or_default();
                a.cmp(b)
            });
            return;
        }
        let mut counts = [0u32; 257];
        for &i in order.iter() {
            counts[bucket(text(i), depth)] += 1;
        }
        let len = order.len() as u32;
        if counts[0] == len {
            // Every text ended: they are equal, and already in order.
            return;
        }
        if counts.contains(&len) {
            // All share this byte: look at the next one without moving anything.
            depth += 1;
            continue;
        }
        let mut starts = [0usize; 257];
        let mut sum = 0usize;
        for (start, &count) in starts.iter_mut().zip(&counts) {
            *start = sum;
            sum += count as usize;
        }
        let mut next = starts;
        for &i in order.iter() {
            let b = bucket(text(i), depth);
            scratch[next[b]] = i;
            next[b] += 1;
        }
        order.copy_from_slice(&scratch[..order.len()]);
        for b in 1..257 {
            if counts[b] > 1 {
                let range = starts[b]..starts[b] + counts[b] as usize;
                radix_sort(
                    &mut order[range.clone()],
                    &mut scratch[range],
                    texts,
                    depth + 1,
                );
            }
        }
        return;
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
    fn key_ordered_texts_sort_as_by_comparison_with_ties_by_key() {
        // Texts sharing long prefixes, texts that are prefixes of others, equal, empty and
        // non-ASCII texts; enough rows for the radix sort to split buckets several levels deep.
        let words = [
            "web-7d9f8c-",
            "web-7d9f8c",
            "",
            "web-7d9f8c-a",
            "db",
            "ünï",
            "10.0.1",
        ];
        let entries: Vec<RowEntry> = (0..3000usize)
            .map(|i| {
                let word = words[(i * 7919) % words.len()];
                let suffix = if i % 5 == 0 {
                    String::new()
                } else {
                    ((i * 31) % 113).to_string()
                };
                RowEntry {
                    sort: SortKey::Text(format!("{word}{suffix}").as_str().into()),
                    key: Arc::from(format!("k{i:05}")),
                }
            })
            .collect();
        for descending in [false, true] {
            let rows = SortedRows::from_key_ordered(entries.clone(), descending);
            let mut expected = entries.clone();
            expected.sort_by(|a, b| {
                let by_sort = a.sort.cmp(&b.sort);
                let by_sort = if descending {
                    by_sort.reverse()
                } else {
                    by_sort
                };
                by_sort.then(a.key.cmp(&b.key))
            });
            assert_eq!(rows.len(), expected.len());
            assert!(rows.iter().eq(expected.iter()), "descending: {descending}");
        }
        let numbers: Vec<RowEntry> = (0..500)
            .map(|i| entry((i * 7) % 11, &format!("k{i:03}")))
            .collect();
        let rows = SortedRows::from_key_ordered(numbers.clone(), true);
        let mut expected = numbers;
        expected.sort_by(|a, b| b.sort.cmp(&a.sort).then(a.key.cmp(&b.key)));
        assert!(rows.iter().eq(expected.iter()));
    }

    #[test]
    fn a_clone_is_a_snapshot_that_later_changes_leave_alone() {
        let entries: Vec<RowEntry> = (0..3 * MAX_BLOCK as i64)
            .map(|i| entry(i, &format!("k{i:05}")))
            .collect();
        let mut rows = SortedRows::from_sorted(entries.clone(), false);
        let snapshot = rows.clone();
        assert!(rows.remove(&entries[10]));
        assert!(rows.insert(entry(-1, "new")));
        assert!(snapshot.iter().eq(entries.iter()));
        assert_eq!(rows.len(), entries.len());
        assert_eq!(rows.get(0), Some(&entry(-1, "new")));
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
