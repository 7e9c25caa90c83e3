//! The items a delaying queue holds back: a min-heap by ready time, with each item's earliest
//! requested time. It lives beside the queue's state (`queue::Inner`) rather than in the
//! delaying queue, so that the plain queue's shutdown can close it without importing the
//! delaying queue.

use std::cmp::Ordering;
use std::collections::hash_map::Entry as MapEntry;
use std::collections::{BinaryHeap, HashMap};

use foldhash::fast::RandomState;
use tokio::time::Instant;

use std::hash::Hash;

/// Items waiting for their ready time. The heap may hold stale entries (an item moved to an
/// earlier time leaves its old entry behind); `ready_at` is the truth, and an entry counts only
/// if its sequence number matches.
pub(super) struct Waiting<T> {
    pub(super) heap: BinaryHeap<HeapEntry<T>>,
    ready_at: HashMap<T, (Instant, u64), RandomState>,
    next_seq: u64,
    /// Set on shutdown: later `add_after` calls are dropped instead of lingering.
    closed: bool,
}

impl<T> Default for Waiting<T> {
    fn default() -> Self {
        Self {
            heap: BinaryHeap::new(),
            ready_at: HashMap::default(),
            next_seq: 0,
            closed: false,
        }
    }
}

pub(super) struct HeapEntry<T> {
    ready_at: Instant,
    /// Breaks ties in insertion order and identifies stale entries.
    seq: u64,
    item: T,
}

impl<T> PartialEq for HeapEntry<T> {
    fn eq(&self, other: &Self) -> bool {
        self.seq == other.seq
    }
}

impl<T> Eq for HeapEntry<T> {}

impl<T> PartialOrd for HeapEntry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for HeapEntry<T> {
    /// Reversed, so that std's max-heap pops the earliest ready time first.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .ready_at
            .cmp(&self.ready_at)
            .then(other.seq.cmp(&self.seq))
    }
}

impl<T: Clone + Eq + Hash> Waiting<T> {
    /// Parks `item` until `at`, unless it already waits for an earlier time. Returns true when
    /// it became the earliest entry, i.e. when the timer must re-arm.
    pub(super) fn insert(&mut self, item: T, at: Instant) -> bool {
        if self.closed {
            return false;
        }
        let rearm = self.heap.peek().is_none_or(|head| at < head.ready_at);
        let seq = self.next_seq;
        match self.ready_at.entry(item) {
            MapEntry::Occupied(mut slot) => {
                if at >= slot.get().0 {
                    return false;
                }
                *slot.get_mut() = (at, seq);
                let item = slot.key().clone();
                self.heap.push(HeapEntry {
                    ready_at: at,
                    seq,
                    item,
                });
            }
            MapEntry::Vacant(slot) => {
                let item = slot.key().clone();
                slot.insert((at, seq));
                self.heap.push(HeapEntry {
                    ready_at: at,
                    seq,
                    item,
                });
            }
        }
        self.next_seq += 1;
        // Rebuild when stale entries dominate, so moved-up items cannot grow the heap forever.
        if self.heap.len() > 2 * self.ready_at.len() + 64 {
            self.heap = self
                .ready_at
                .iter()
                .map(|(item, &(ready_at, seq))| HeapEntry {
                    ready_at,
                    seq,
                    item: item.clone(),
                })
                .collect();
        }
        rearm
    }

    /// Removes the items ready at `now`, earliest first, and returns them with the next
    /// ready time, if any.
    pub(super) fn pop_ready(&mut self, now: Instant) -> (Vec<T>, Option<Instant>) {
        let mut ready = Vec::new();
        while let Some(head) = self.heap.peek() {
            let live = self
                .ready_at
                .get(&head.item)
                .is_some_and(|&(_, seq)| seq == head.seq);
            if live && head.ready_at > now {
                return (ready, Some(head.ready_at));
            }
            if let Some(entry) = self.heap.pop()
                && live
            {
                self.ready_at.remove(&entry.item);
                ready.push(entry.item);
            }
        }
        (ready, None)
    }

    pub(super) fn close(&mut self) {
        self.closed = true;
        self.heap.clear();
        self.ready_at.clear();
    }

    pub(super) fn len(&self) -> usize {
        self.ready_at.len()
    }
}
