//! All the strings of one projected object, packed into one buffer.
//!
//! A projection stores every string it keeps (name, uid, labels, images, ...) in one `Box<str>`
//! plus one `Box<[u32]>` of end offsets: two heap blocks per object instead of one per string,
//! and 4 bytes of bookkeeping per string instead of 16. Strings are grouped in sections
//! (scalars, labels, owners, ...) whose bounds the projection keeps inline.
//!
//! Decoding borrows strings from the input where it can ([`Str`]) and copies each kept string
//! exactly once, into the packed buffer.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::marker::PhantomData;
use std::sync::{Arc, Weak};

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use smallvec::SmallVec;

/// The annotation `kubectl apply` writes: a full copy of the applied manifest, often several
/// KB. It is dropped at decode time; detail views GET the full object anyway.
pub const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The values of field indexes an object has, (index name, value), as its projection
/// keeps them (see [`Builder::push_field_values`]).
pub(crate) type FieldValues<'a> = [(&'a str, String)];

/// Packed strings: `text[ends[i-1]..ends[i]]` is string `i`.
#[derive(Clone, PartialEq, Eq, Default)]
pub(crate) struct PackedText {
    text: Box<str>,
    ends: Box<[u32]>,
}

impl PackedText {
    /// String `i`, or "" past the end (indices come from the projection's own layout).
    pub(crate) fn get(&self, i: usize) -> &str {
        let start = match i.checked_sub(1) {
            Some(prev) => self.ends.get(prev).copied().unwrap_or(0),
            None => 0,
        } as usize;
        let end = self.ends.get(i).copied().unwrap_or(0) as usize;
        self.text.get(start..end).unwrap_or("")
    }

    /// Heap bytes this table owns (for memory accounting in benches and tests).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.text.len() + std::mem::size_of_val(&*self.ends)
    }
}

impl fmt::Debug for PackedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries((0..self.ends.len()).map(|i| self.get(i)))
            .finish()
    }
}

/// Packed strings grouped in `N` sections; section 0 holds the fixed scalar slots.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) struct Packed<const N: usize> {
    strings: PackedText,
    sections: [u32; N],
}

impl<const N: usize> Packed<N> {
    /// Scalar slot `i` of section 0.
    pub(crate) fn get(&self, i: usize) -> &str {
        self.strings.get(i)
    }

    /// The rows of section `s`, each `W` strings wide.
    pub(crate) fn rows<const W: usize>(&self, s: usize) -> Rows<'_, W> {
        let start = match s.checked_sub(1) {
            Some(prev) => self.sections.get(prev).copied().unwrap_or(0),
            None => 0,
        } as usize;
        let end = (self.sections.get(s).copied().unwrap_or(0) as usize).max(start);
        Rows {
            strings: &self.strings,
            start,
            rows: (end - start) / W,
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.strings.heap_bytes()
    }

    /// The values of the field index `index`: the `[index name, value]` rows after the last
    /// section (see [`Builder::push_field_values`]).
    pub(crate) fn indexed_values(&self, index: &str) -> impl Iterator<Item = &str> {
        let start = self.sections.last().copied().unwrap_or(0) as usize;
        let end = self.strings.ends.len().max(start);
        Rows::<2> {
            strings: &self.strings,
            start,
            rows: (end - start) / 2,
        }
        .iter()
        .filter(move |[name, _]| *name == index)
        .map(|[_, value]| value)
    }
}

/// A section of packed strings read as rows of `W` strings (label pairs, owner triples, ...).
#[derive(Clone, Copy)]
pub(crate) struct Rows<'a, const W: usize> {
    strings: &'a PackedText,
    start: usize,
    rows: usize,
}

impl<'a, const W: usize> Rows<'a, W> {
    pub(crate) fn len(&self) -> usize {
        self.rows
    }

    pub(crate) fn row(&self, r: usize) -> [&'a str; W] {
        let strings = self.strings;
        let base = self.start + r * W;
        std::array::from_fn(|c| strings.get(base + c))
    }

    pub(crate) fn iter(self) -> impl ExactSizeIterator<Item = [&'a str; W]> + 'a {
        (0..self.rows).map(move |r| self.row(r))
    }

    /// Binary search on column 0; the rows must be sorted by it (maps are, see [`StrMap`]).
    pub(crate) fn find(&self, key: &str) -> Option<[&'a str; W]> {
        let (mut lo, mut hi) = (0, self.rows);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let row = self.row(mid);
            match row[0].cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(row),
            }
        }
        None
    }
}

/// Why strings could not be packed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PackError {
    #[error("object holds more than 4 GiB of strings")]
    TooLarge,
}

/// Collects the strings of one object, borrowed from its decoded wire form, then packs them.
pub(crate) struct Builder<'b, const N: usize> {
    parts: SmallVec<[Cow<'b, str>; 48]>,
    /// Parts that run on into the next one without ending a string (see `push_joined`).
    glued: SmallVec<[usize; 4]>,
    sections: [u32; N],
    filled: usize,
}

impl<'b, const N: usize> Builder<'b, N> {
    pub(crate) fn new() -> Self {
        Self {
            parts: SmallVec::new(),
            glued: SmallVec::new(),
            sections: [0; N],
            filled: 0,
        }
    }

    pub(crate) fn push(&mut self, s: &'b str) {
        self.parts.push(Cow::Borrowed(s));
    }

    pub(crate) fn push_opt(&mut self, s: Option<&'b Str<'_>>) {
        self.push(s.map_or("", Str::as_str));
    }

    pub(crate) fn push_cow(&mut self, s: Cow<'b, str>) {
        self.parts.push(s);
    }

    /// Pushes `a`, `sep` and `b` as one string, copied once at `finish` like any other.
    pub(crate) fn push_joined(&mut self, a: &'b str, sep: &'static str, b: &'b str) {
        let first = self.parts.len();
        self.glued.extend([first, first + 1]);
        self.parts
            .extend([Cow::Borrowed(a), Cow::Borrowed(sep), Cow::Borrowed(b)]);
    }

    /// Pushes a map's entries as (key, value) rows; [`StrMap`] keeps them sorted by key.
    pub(crate) fn push_map<const SKIP: bool>(&mut self, map: Option<&'b StrMap<'_, SKIP>>) {
        for (k, v) in map.map_or(&[][..], |m| &m.entries[..]) {
            self.push(k.as_str());
            self.push(v.as_str());
        }
    }

    /// Closes the current section (the first call closes the scalar section 0).
    pub(crate) fn end_section(&mut self) {
        if let Some(slot) = self.sections.get_mut(self.filled) {
            let strings = self.parts.len() - self.glued.len();
            *slot = u32::try_from(strings).unwrap_or(u32::MAX);
            self.filled += 1;
        }
    }

    /// Pushes field index values as `[index name, value]` rows after the last section, where
    /// they take no section bound: an object without them costs nothing more.
    pub(crate) fn push_field_values(&mut self, values: &'b FieldValues<'_>) {
        debug_assert_eq!(self.filled, N, "field index values follow every section");
        for (name, value) in values {
            self.push(name);
            self.push(value);
        }
    }

    pub(crate) fn finish(self) -> Result<Packed<N>, PackError> {
        let total: usize = self.parts.iter().map(|p| p.len()).sum();
        if u32::try_from(total).is_err() {
            return Err(PackError::TooLarge);
        }
        let mut text = String::with_capacity(total);
        let mut ends = Vec::with_capacity(self.parts.len() - self.glued.len());
        let mut glued = self.glued.iter().peekable();
        for (i, part) in self.parts.iter().enumerate() {
            text.push_str(part);
            if glued.next_if_eq(&&i).is_none() {
                // Cannot truncate: the total length was checked above.
                ends.push(text.len() as u32);
            }
        }
        Ok(Packed {
            strings: PackedText {
                text: text.into_boxed_str(),
                ends: ends.into_boxed_slice(),
            },
            sections: self.sections,
        })
    }
}

impl<'b, const N: usize> Builder<'b, N> {
    /// The end offsets `finish` would store, and the text's length; `None` past 4 GiB.
    fn ends(&self) -> Option<(SmallVec<[u32; 48]>, usize)> {
        let mut ends = SmallVec::with_capacity(self.parts.len() - self.glued.len());
        let mut glued = self.glued.iter().peekable();
        let mut len = 0usize;
        for (i, part) in self.parts.iter().enumerate() {
            len += part.len();
            if glued.next_if_eq(&&i).is_none() {
                ends.push(u32::try_from(len).ok()?);
            }
        }
        Some((ends, len))
    }

    /// Whether `packed` holds exactly what `finish` would make of these parts.
    fn same_as(&self, packed: &Packed<N>, ends: &[u32], len: usize) -> bool {
        if packed.sections != self.sections
            || &*packed.strings.ends != ends
            || packed.strings.text.len() != len
        {
            return false;
        }
        let mut rest = packed.strings.text.as_bytes();
        self.parts
            .iter()
            .all(|part| match rest.split_at_checked(part.len()) {
                Some((head, tail)) if head == part.as_bytes() => {
                    rest = tail;
                    true
                }
                _ => false,
            })
    }

    /// Like [`Builder::finish`], but shared: an equal set of strings that `interner` still
    /// holds is handed back instead of a new copy (and nothing is copied for it).
    pub(crate) fn finish_interned(
        self,
        interner: &Interner<N>,
    ) -> Result<Arc<Packed<N>>, PackError> {
        let (ends, len) = self.ends().ok_or(PackError::TooLarge)?;
        let mut hasher = interner.hash.build_hasher();
        for part in &self.parts {
            hasher.write(part.as_bytes());
        }
        for end in ends.iter().chain(&self.sections) {
            hasher.write_u32(*end);
        }
        let hash = hasher.finish();
        let mut table = interner.table.lock();
        if let Some(held) = table.entries.get(&hash).and_then(|candidates| {
            candidates
                .iter()
                .filter_map(Weak::upgrade)
                .find(|held| self.same_as(held, &ends, len))
        }) {
            return Ok(held);
        }
        let packed = Arc::new(self.finish()?);
        table.add(hash, Arc::downgrade(&packed));
        Ok(packed)
    }
}

/// Equal sets of packed strings shared between objects (the pods of one template have the
/// same labels, owners and containers). It holds them weakly, so an object's removal frees
/// its strings once no other object shares them; the emptied entries are swept whenever the
/// table has doubled since the last sweep, so it stays within twice the sets alive (plus 1,024).
pub(crate) struct Interner<const N: usize> {
    hash: foldhash::fast::RandomState,
    table: parking_lot::Mutex<InternTable<N>>,
}

struct InternTable<const N: usize> {
    entries: HashMap<u64, SmallVec<[Weak<Packed<N>>; 1]>, foldhash::fast::RandomState>,
    held: usize,
    sweep_at: usize,
}

impl<const N: usize> Default for Interner<N> {
    fn default() -> Self {
        Self {
            hash: foldhash::fast::RandomState::default(),
            table: parking_lot::Mutex::new(InternTable {
                entries: HashMap::default(),
                held: 0,
                sweep_at: SWEEP_FLOOR,
            }),
        }
    }
}

/// Entries an interner holds before its first sweep.
const SWEEP_FLOOR: usize = 1024;

impl<const N: usize> InternTable<N> {
    fn add(&mut self, hash: u64, weak: Weak<Packed<N>>) {
        self.entries.entry(hash).or_default().push(weak);
        self.held += 1;
        if self.held > self.sweep_at {
            self.entries.retain(|_, candidates| {
                candidates.retain(|w| w.strong_count() > 0);
                !candidates.is_empty()
            });
            self.held = self.entries.values().map(SmallVec::len).sum();
            self.sweep_at = (self.held * 2).max(SWEEP_FLOOR);
        }
    }
}

#[cfg(test)]
impl<const N: usize> Interner<N> {
    /// Entries held, live or not yet swept.
    fn held(&self) -> usize {
        self.table.lock().held
    }
}

/// A JSON string borrowed from the input when it has no escapes, owned otherwise.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Str<'a>(Cow<'a, str>);

impl<'a> Str<'a> {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Str<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V(PhantomData))
    }
}

/// A JSON object of strings (labels, annotations, matchLabels), sorted by key, duplicates
/// resolved last-wins like Go's decoder. With `SKIP_LAST_APPLIED` the
/// [`LAST_APPLIED_ANNOTATION`] value is skipped without being decoded.
#[derive(Debug, Default)]
pub(crate) struct StrMap<'a, const SKIP_LAST_APPLIED: bool> {
    entries: SmallVec<[(Str<'a>, Str<'a>); 8]>,
}

impl<'a, const SKIP: bool> StrMap<'a, SKIP> {
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Whether the member named `key` is skipped without being decoded.
    fn skips(key: &Str<'_>) -> bool {
        SKIP && key.as_str() == LAST_APPLIED_ANNOTATION
    }

    /// The map of `entries`, given in the order read: sorted by key, and of equal keys the one
    /// read last (last wins, as in Go).
    fn from_entries(mut entries: SmallVec<[(Str<'a>, Str<'a>); 8]>) -> Self {
        if !entries.is_sorted_by(|a, b| a.0 < b.0) {
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            let mut deduped: SmallVec<[(Str<'a>, Str<'a>); 8]> = SmallVec::new();
            for entry in entries {
                match deduped.last_mut() {
                    Some(last) if last.0 == entry.0 => *last = entry,
                    _ => deduped.push(entry),
                }
            }
            entries = deduped;
        }
        StrMap { entries }
    }
}

impl<'de: 'a, 'a, const SKIP: bool> Deserialize<'de> for StrMap<'a, SKIP> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a, const SKIP: bool>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a, const SKIP: bool> Visitor<'de> for V<'a, SKIP> {
            type Value = StrMap<'a, SKIP>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map of strings")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut entries = SmallVec::new();
                while let Some(key) = map.next_key::<Str<'a>>()? {
                    if StrMap::<SKIP>::skips(&key) {
                        map.next_value::<IgnoredAny>()?;
                        continue;
                    }
                    entries.push((key, map.next_value::<Str<'a>>()?));
                }
                Ok(StrMap::from_entries(entries))
            }
        }
        d.deserialize_map(V::<'a, SKIP>(PhantomData))
    }
}

/// A read-only view of a sorted string map kept by a projection (labels, annotations, a
/// selector's matchLabels), with `O(log n)` lookup.
#[derive(Clone, Copy)]
pub struct Labels<'a> {
    rows: Rows<'a, 2>,
}

impl<'a> Labels<'a> {
    pub(crate) fn new(rows: Rows<'a, 2>) -> Self {
        Self { rows }
    }

    /// The value for `key`, if present.
    pub fn get(&self, key: &str) -> Option<&'a str> {
        self.rows.find(key).map(|[_, v]| v)
    }

    /// Entries sorted by key.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&'a str, &'a str)> + 'a {
        self.rows.iter().map(|[k, v]| (k, v))
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.len() == 0
    }
}

impl fmt::Debug for Labels<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template<'b>(app: &'b str, owner: &'b str) -> Builder<'b, 2> {
        let mut b = Builder::<2>::new();
        b.push("app");
        b.push(app);
        b.end_section();
        b.push_joined("ReplicaSet", "/", owner);
        b.end_section();
        b
    }

    #[test]
    fn interned_equal_strings_are_one_allocation_and_unequal_ones_are_not() {
        let interner = Interner::<2>::default();
        let a = template("web", "web-7d9f")
            .finish_interned(&interner)
            .unwrap();
        let b = template("web", "web-7d9f")
            .finish_interned(&interner)
            .unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(*a, template("web", "web-7d9f").finish().unwrap());
        // The same text split or sectioned differently is not the same set of strings.
        let c = template("web", "web-7d9")
            .finish_interned(&interner)
            .unwrap();
        let d = template("webw", "eb-7d9f")
            .finish_interned(&interner)
            .unwrap();
        for other in [&c, &d] {
            assert!(!Arc::ptr_eq(&a, other));
            assert_ne!(**other, *a);
        }
        assert_eq!(d.rows::<2>(0).row(0), ["app", "webw"]);
        assert_eq!(a.rows::<1>(1).row(0), ["ReplicaSet/web-7d9f"]);
    }

    #[test]
    fn an_interner_lets_go_of_sets_no_object_holds_and_sweeps_their_entries() {
        let interner = Interner::<2>::default();
        let names: Vec<String> = (0..5_000).map(|i| format!("rs-{i}")).collect();
        let kept = template("kept", "kept-1")
            .finish_interned(&interner)
            .unwrap();
        for name in &names {
            drop(template("web", name).finish_interned(&interner).unwrap());
        }
        assert!(
            interner.held() <= 2 * SWEEP_FLOOR + 1,
            "{}",
            interner.held()
        );
        let again = template("kept", "kept-1")
            .finish_interned(&interner)
            .unwrap();
        assert!(Arc::ptr_eq(&kept, &again));
        assert_eq!(Arc::strong_count(&kept), 2);
    }

    #[test]
    fn a_joined_string_is_one_string_and_sections_count_strings() {
        let mut b = Builder::<3>::new();
        b.push("pod-a");
        b.end_section();
        b.push_joined("ReplicaSet", "/", "web-7d9f");
        b.push("uid-1");
        b.push_joined("", "/", "orphan");
        b.push("uid-2");
        b.end_section();
        b.push("tail");
        b.end_section();
        let packed = b.finish().unwrap();
        assert_eq!(packed.get(0), "pod-a");
        let owners: Vec<[&str; 2]> = packed.rows::<2>(1).iter().collect();
        assert_eq!(
            owners,
            [["ReplicaSet/web-7d9f", "uid-1"], ["/orphan", "uid-2"]]
        );
        assert_eq!(packed.rows::<1>(2).iter().collect::<Vec<_>>(), [["tail"]]);
    }
}
