//! What a projection does not read, cut out of the JSON before serde_json decodes it.
//!
//! serde_json reads every byte of a member it ignores, even into `IgnoredAny`: it tokenizes and
//! validates the whole tree. A pod's JSON is ~10 KB (`../shared/fixtures/pod-realistic.json`),
//! of which its projection reads ~2 KB: managedFields alone are 4 KB, and volumes, env, probes,
//! tolerations, affinity and most of the status are never read. So each projection declares its
//! [`Shape`] (the members it reads, nested), and before an object (or every item of a list
//! page) is decoded, a structural scan walks the members the shape names, skips every other
//! value, and the text handed to serde_json is the JSON without them. Kinds that declare no
//! shape of their own lose only `metadata.managedFields` ([`WITHOUT_MANAGED_FIELDS`]).
//!
//! Values are skipped 64 bytes at a time, as simdjson's first stage does: SSE2 or AVX2
//! comparisons give bitmasks of quotes, backslashes and brackets, the escapes and a prefix xor
//! of the quotes give the bytes inside strings, and the brackets outside them are counted until
//! the depth is back to zero. Member names and strings are read sixteen bytes at a time.
//!
//! Deliberate trade-off, as in simdjson's on-demand skipping: a skipped value is checked
//! for structure only. An unterminated string, or brackets that do not balance (per kind: as
//! many `}` as `{` and as many `]` as `[`), are an error ([`Malformed`]; [`from_slice`] then lets
//! serde_json read the whole text, so the error is reported as serde_json words it). Anything
//! else inside it goes unnoticed: bad numbers or literals, missing commas or colons, invalid
//! escapes or UTF-8, and brackets of the two kinds closed in crossed order (`[{]}`). Every byte
//! that is kept is still decoded and validated by serde_json as before. A member name written
//! with escapes is always kept, so serde_json decides what it is.

use std::borrow::Cow;

use memchr::memchr2;
use serde::de::DeserializeOwned;

/// The JSON is not well-formed where the scan needs it to be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed JSON at byte {at}: {what}")]
pub struct Malformed {
    pub at: usize,
    pub what: &'static str,
}

/// Which parts of an object's JSON a decoder reads. Whatever a shape cuts is skipped by the
/// scan and never reaches serde_json.
#[derive(Debug)]
pub enum Shape<'s> {
    /// Kept as it is, for serde_json to read.
    Whole,
    /// Cut out (only meaningful for an object's member).
    Cut,
    /// An object: each member named here has its own shape; every other member has
    /// `others` ([`Shape::Whole`], or [`Shape::Cut`] to keep only the named ones).
    Object {
        members: &'s [(&'s str, Shape<'s>)],
        others: &'s Shape<'s>,
    },
    /// An array whose elements each have this shape.
    Array(&'s Shape<'s>),
}

impl<'s> Shape<'s> {
    /// An object of which only `members` are kept.
    pub const fn only(members: &'s [(&'s str, Shape<'s>)]) -> Self {
        Self::Object {
            members,
            others: &Self::Cut,
        }
    }
}

/// Any object: everything is kept but `metadata.managedFields`, which no projection reads.
pub const WITHOUT_MANAGED_FIELDS: Shape<'static> = Shape::Object {
    members: &[(
        "metadata",
        Shape::Object {
            members: &[("managedFields", Shape::Cut)],
            others: &Shape::Whole,
        },
    )],
    others: &Shape::Whole,
};

/// Decodes one object into `T`, reading only what `shape` keeps. JSON the scan finds
/// malformed is handed to serde_json whole, so that the error is serde_json's own
/// (positions in an error found after the cut count from the cut text).
pub fn from_slice<T: DeserializeOwned>(json: &[u8], shape: &Shape) -> Result<T, serde_json::Error> {
    match cut(json, shape) {
        Ok(cut) => from_text(&cut),
        Err(_) => serde_json::from_slice(json),
    }
}

/// Decodes `json` after checking its UTF-8 once, as a whole: serde_json reading bytes checks
/// every string it borrows on its own, which costs more than the one pass over the text.
pub fn from_text<T: DeserializeOwned>(json: &[u8]) -> Result<T, serde_json::Error> {
    match std::str::from_utf8(json) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(json),
    }
}

/// One object (a GET response, a watch event's object) with what `shape` cuts left out;
/// borrowed unchanged when nothing is cut.
pub fn cut<'a>(object: &'a [u8], shape: &Shape) -> Result<Cow<'a, [u8]>, Malformed> {
    let mut scan = Scan::new(object);
    scan.ws();
    if matches!(shape, Shape::Object { .. }) && scan.peek() == Some(b'{') {
        scan.members(shape, true)?;
    }
    Ok(scan.splice())
}

/// A list body (`{"metadata":..., "items":[...]}`) with what `item` cuts left out of every
/// item; borrowed unchanged when nothing is cut.
pub fn cut_list<'a>(list: &'a [u8], item: &Shape) -> Result<Cow<'a, [u8]>, Malformed> {
    let items = [("items", Shape::Array(item))];
    let list_shape = Shape::Object {
        members: &items,
        others: &Shape::Whole,
    };
    cut(list, &list_shape)
}

/// Bit `i` of `x` xor all bits below it: set from an opening quote up to (not including) its
/// closing quote.
fn prefix_xor(mut x: u64) -> u64 {
    for shift in [1, 2, 4, 8, 16, 32] {
        x ^= x << shift;
    }
    x
}

/// Which bytes of a 64-byte block are quotes, backslashes and brackets: bit `i` for byte `i`.
#[derive(Debug, Default, PartialEq, Eq)]
struct Classes {
    quote: u64,
    backslash: u64,
    /// `{` or `[`.
    open: u64,
    /// `}` or `]`.
    close: u64,
    curly_open: u64,
    curly_close: u64,
}

impl Classes {
    #[cfg(target_arch = "x86_64")]
    fn of(block: &[u8; 64]) -> Self {
        // SAFETY: SSE2 is part of the x86_64 baseline; every x86_64 CPU has it.
        unsafe { Self::of_sse2(block) }
    }

    /// Sixteen bytes per comparison, so that skipping costs a fraction of serde_json's
    /// byte-by-byte reading.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "sse2")]
    fn of_sse2(block: &[u8; 64]) -> Self {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
            _mm_set1_epi8,
        };
        let mask = |v: __m128i, byte: u8| -> u64 {
            let bits = _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(byte as i8)));
            u64::from(bits as u16)
        };
        let mut c = Self::default();
        let (lanes, _) = block.as_chunks::<16>();
        for (i, lane) in lanes.iter().enumerate() {
            // SAFETY: `lane` is 16 readable bytes; the load has no alignment requirement.
            let v = unsafe { _mm_loadu_si128(lane.as_ptr().cast()) };
            let folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
            c.add_lane(16 * i, |byte, fold| {
                mask(if fold { folded } else { v }, byte)
            });
        }
        c
    }

    /// [`Classes::of_sse2`] thirty-two bytes per comparison.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[inline]
    fn of_avx2(block: &[u8; 64]) -> Self {
        use std::arch::x86_64::{
            __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_or_si256,
            _mm256_set1_epi8,
        };
        let mask = |v: __m256i, byte: u8| -> u64 {
            let bits = _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(byte as i8)));
            u64::from(bits as u32)
        };
        let mut c = Self::default();
        let (lanes, _) = block.as_chunks::<32>();
        for (i, lane) in lanes.iter().enumerate() {
            // SAFETY: `lane` is 32 readable bytes; the load has no alignment requirement.
            let v = unsafe { _mm256_loadu_si256(lane.as_ptr().cast()) };
            let folded = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
            c.add_lane(32 * i, |byte, fold| {
                mask(if fold { folded } else { v }, byte)
            });
        }
        c
    }

    /// Adds one lane's masks at bit `shift`. `eq(byte, folded)` is the lane's mask of the bytes
    /// equal to `byte`, compared with bit 5 set when `folded`: `[` and `]` are `{` and `}` with
    /// bit 5 clear, and no other byte folds onto them.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn add_lane(&mut self, shift: usize, eq: impl Fn(u8, bool) -> u64) {
        self.quote |= eq(b'"', false) << shift;
        self.backslash |= eq(b'\\', false) << shift;
        self.open |= eq(b'{', true) << shift;
        self.close |= eq(b'}', true) << shift;
        self.curly_open |= eq(b'{', false) << shift;
        self.curly_close |= eq(b'}', false) << shift;
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn of(block: &[u8; 64]) -> Self {
        let mut c = Self::default();
        for (i, &byte) in block.iter().enumerate() {
            let bit = 1 << i;
            match byte {
                b'"' => c.quote |= bit,
                b'\\' => c.backslash |= bit,
                b'{' => {
                    c.open |= bit;
                    c.curly_open |= bit;
                }
                b'}' => {
                    c.close |= bit;
                    c.curly_close |= bit;
                }
                b'[' => c.open |= bit,
                b']' => c.close |= bit,
                _ => {}
            }
        }
        c
    }
}

/// Which of sixteen bytes are quotes and which are backslashes: bit `i` for byte `i`.
#[cfg(target_arch = "x86_64")]
fn quotes_and_backslashes(lane: &[u8; 16]) -> (u32, u32) {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    // SAFETY: SSE2 is part of the x86_64 baseline, and `lane` is 16 readable bytes (the load
    // has no alignment requirement).
    unsafe {
        let v = _mm_loadu_si128(lane.as_ptr().cast());
        let quote = _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)));
        let backslash = _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)));
        (quote as u32, backslash as u32)
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn quotes_and_backslashes(lane: &[u8; 16]) -> (u32, u32) {
    let (mut quote, mut backslash) = (0, 0);
    for (i, &byte) in lane.iter().enumerate() {
        quote |= u32::from(byte == b'"') << i;
        backslash |= u32::from(byte == b'\\') << i;
    }
    (quote, backslash)
}

/// The instructions [`Scan::container`] may use, found once per scan.
#[derive(Clone, Copy)]
enum Simd {
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Popcnt,
    Baseline,
}

impl Simd {
    fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("popcnt")
            {
                return Self::Avx2;
            }
            if std::arch::is_x86_feature_detected!("popcnt") {
                return Self::Popcnt;
            }
        }
        Self::Baseline
    }
}

struct Scan<'a> {
    json: &'a [u8],
    pos: usize,
    simd: Simd,
    /// Byte ranges to leave out, in order.
    cuts: Vec<(usize, usize)>,
}

impl<'a> Scan<'a> {
    fn new(json: &'a [u8]) -> Self {
        Self {
            json,
            pos: 0,
            simd: Simd::detect(),
            cuts: Vec::new(),
        }
    }

    fn malformed(&self, what: &'static str) -> Malformed {
        Malformed { at: self.pos, what }
    }

    fn peek(&self) -> Option<u8> {
        self.json.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while self
            .peek()
            .is_some_and(|b| matches!(b, b' ' | b'\n' | b'\r' | b'\t'))
        {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8, what: &'static str) -> Result<(), Malformed> {
        self.ws();
        if self.peek() != Some(byte) {
            return Err(self.malformed(what));
        }
        self.pos += 1;
        Ok(())
    }

    /// From the opening quote to just past the closing one, sixteen bytes at a time; whether
    /// the string has escapes.
    fn string(&mut self) -> Result<bool, Malformed> {
        let mut at = self.pos + 1;
        let mut escapes = false;
        loop {
            let Some(lane) = self.json.get(at..).and_then(|rest| rest.first_chunk()) else {
                return self.string_tail(at, escapes);
            };
            let (quote, backslash) = quotes_and_backslashes(lane);
            let found = quote | backslash;
            if found == 0 {
                at += 16;
                continue;
            }
            let first = found.trailing_zeros() as usize;
            if quote & (1 << first) != 0 {
                self.pos = at + first + 1;
                return Ok(escapes);
            }
            // A backslash: the escaped byte cannot end the string.
            escapes = true;
            at += first + 2;
        }
    }

    /// [`Scan::string`] within the last sixteen bytes of the text.
    fn string_tail(&mut self, mut at: usize, mut escapes: bool) -> Result<bool, Malformed> {
        loop {
            let found = self
                .json
                .get(at..)
                .and_then(|rest| memchr2(b'"', b'\\', rest));
            let Some(offset) = found else {
                return Err(self.malformed("unterminated string"));
            };
            at += offset;
            if self.json[at] == b'"' {
                self.pos = at + 1;
                return Ok(escapes);
            }
            escapes = true;
            at += 2;
        }
    }

    /// Any value, checked for structure only (see the module's doc).
    fn value(&mut self) -> Result<(), Malformed> {
        self.ws();
        match self.peek() {
            Some(b'"') => self.string().map(drop),
            Some(b'{' | b'[') => self.container(),
            Some(_) => {
                let start = self.pos;
                while self.peek().is_some_and(|b| {
                    !matches!(b, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')
                }) {
                    self.pos += 1;
                }
                if self.pos == start {
                    return Err(self.malformed("expected a value"));
                }
                Ok(())
            }
            None => Err(self.malformed("expected a value")),
        }
    }

    /// An object or array (see [`Scan::blocks`]), with the CPU's AVX2 and POPCNT where it has
    /// them: x86_64's baseline lacks both; without POPCNT the counting is several times
    /// slower, and AVX2 classifies a block in half the instructions of SSE2.
    fn container(&mut self) -> Result<(), Malformed> {
        match self.simd {
            // SAFETY: `Simd::detect` found AVX2 and POPCNT on this CPU.
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => unsafe { self.blocks_avx2() },
            // SAFETY: `Simd::detect` found POPCNT on this CPU.
            #[cfg(target_arch = "x86_64")]
            Simd::Popcnt => unsafe { self.blocks_popcnt() },
            Simd::Baseline => self.blocks(Classes::of),
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,popcnt")]
    fn blocks_avx2(&mut self) -> Result<(), Malformed> {
        // The closure has this function's target features, so the call needs no `unsafe`.
        self.blocks(|block| Classes::of_avx2(block))
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn blocks_popcnt(&mut self) -> Result<(), Malformed> {
        self.blocks(Classes::of)
    }

    /// An object or array, 64 bytes at a time (see [`Classes`]): escapes and quotes give the
    /// bytes inside strings, and the brackets outside them are counted until the depth is
    /// back to zero. Only the block where it may end is walked bracket by bracket.
    #[inline(always)]
    fn blocks(&mut self, classify: impl Fn(&[u8; 64]) -> Classes) -> Result<(), Malformed> {
        let mut depth: u32 = 0;
        let mut curly: i64 = 0;
        // All ones when the previous block ended inside a string.
        let mut in_string = 0u64;
        let mut escape_next = false;
        let mut padded = [b' '; 64];
        let mut at = self.pos;
        while at < self.json.len() {
            let block: &[u8; 64] = match self.json.get(at..).and_then(|rest| rest.first_chunk()) {
                Some(block) => block,
                None => {
                    let tail = &self.json[at..];
                    padded[..tail.len()].copy_from_slice(tail);
                    &padded
                }
            };
            let c = classify(block);
            let mut escaped = u64::from(escape_next);
            escape_next = false;
            let mut backslashes = c.backslash & !escaped;
            while backslashes != 0 {
                let i = backslashes.trailing_zeros();
                if i == 63 {
                    escape_next = true;
                    break;
                }
                escaped |= 1 << (i + 1);
                backslashes &= !(0b11 << i);
            }
            let inside = prefix_xor(c.quote & !escaped) ^ in_string;
            in_string = ((inside as i64) >> 63) as u64;
            let (open, close) = (c.open & !inside, c.close & !inside);
            let (curly_open, curly_close) = (c.curly_open & !inside, c.curly_close & !inside);
            if close.count_ones() >= depth {
                let mut brackets = open | close;
                while brackets != 0 {
                    let i = brackets.trailing_zeros();
                    brackets &= brackets - 1;
                    if open & (1 << i) != 0 {
                        depth += 1;
                        continue;
                    }
                    depth -= 1;
                    if depth == 0 {
                        let upto = u64::MAX >> (63 - i);
                        curly += i64::from((curly_open & upto).count_ones())
                            - i64::from((curly_close & upto).count_ones());
                        self.pos = at + i as usize + 1;
                        if curly != 0 {
                            return Err(self.malformed("mismatched brackets"));
                        }
                        return Ok(());
                    }
                }
            } else {
                // Fewer closes than the depth: it stays above zero.
                depth += open.count_ones();
                depth -= close.count_ones();
            }
            curly += i64::from(curly_open.count_ones()) - i64::from(curly_close.count_ones());
            at += 64;
        }
        self.pos = self.json.len();
        Err(self.malformed(if in_string != 0 {
            "unterminated string"
        } else {
            "unbalanced brackets"
        }))
    }

    /// A value as `shape` says: objects and arrays with a shape are walked, anything else is
    /// skipped whole (a shape that does not fit the JSON leaves it to serde_json).
    fn shaped(&mut self, shape: &Shape) -> Result<(), Malformed> {
        self.ws();
        match (shape, self.peek()) {
            (Shape::Object { .. }, Some(b'{')) => self.members(shape, false),
            (Shape::Array(element), Some(b'[')) => self.elements(element),
            _ => self.value(),
        }
    }

    /// The members of the object at `pos` (its `{`), each kept, cut or walked as `shape`
    /// says. The `top` object may stop early, once every named member has been seen and the
    /// others are kept whole: nothing after it needs cutting.
    fn members(&mut self, shape: &Shape, top: bool) -> Result<(), Malformed> {
        let Shape::Object { members, others } = shape else {
            return self.value();
        };
        let mut named_left = members.len();
        self.pos += 1;
        self.ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        let mut first = true;
        // Where the comma before this member is, for cutting it with the member.
        let mut comma = 0;
        loop {
            self.ws();
            let key_start = self.pos;
            if self.peek() != Some(b'"') {
                return Err(self.malformed("expected a member name"));
            }
            let escapes = self.string()?;
            let key = &self.json[key_start + 1..self.pos - 1];
            self.expect(b':', "expected ':'")?;
            let named = members.iter().find(|(name, _)| name.as_bytes() == key);
            if named.is_some() {
                named_left = named_left.saturating_sub(1);
            }
            // A name written with escapes is kept for serde_json to read: it may be a member
            // the decoder wants.
            let member = match named {
                Some((_, shape)) => shape,
                None if escapes => &Shape::Whole,
                None => others,
            };
            if let Shape::Cut = member {
                self.value()?;
                let end = self.pos;
                if !first {
                    self.cuts.push((comma, end));
                } else {
                    self.ws();
                    if self.peek() == Some(b',') {
                        self.pos += 1;
                        self.cuts.push((key_start, self.pos));
                        // The next member is now the first one.
                        self.ws();
                        if self.peek() == Some(b'}') {
                            return Err(self.malformed("expected a member name"));
                        }
                        continue;
                    }
                    self.cuts.push((key_start, end));
                }
            } else {
                self.shaped(member)?;
            }
            if top && named_left == 0 && matches!(others, Shape::Whole) {
                return Ok(());
            }
            self.ws();
            match self.peek() {
                Some(b',') => {
                    comma = self.pos;
                    first = false;
                    self.pos += 1;
                }
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.malformed("expected ',' or '}'")),
            }
        }
    }

    /// The elements of the array at `pos` (its `[`), each walked as `element` says.
    fn elements(&mut self, element: &Shape) -> Result<(), Malformed> {
        self.pos += 1;
        self.ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.shaped(element)?;
            self.ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.malformed("expected ',' or ']'")),
            }
        }
    }

    /// The JSON without the cut ranges.
    fn splice(self) -> Cow<'a, [u8]> {
        if self.cuts.is_empty() {
            return Cow::Borrowed(self.json);
        }
        let removed: usize = self.cuts.iter().map(|(start, end)| end - start).sum();
        let mut out = Vec::with_capacity(self.json.len() - removed);
        let mut from = 0;
        for (start, end) in self.cuts {
            out.extend_from_slice(&self.json[from..start]);
            from = end;
        }
        out.extend_from_slice(&self.json[from..]);
        Cow::Owned(out)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn without_managed_fields(json: &[u8]) -> Result<Cow<'_, [u8]>, Malformed> {
        cut(json, &WITHOUT_MANAGED_FIELDS)
    }

    fn list_without_managed_fields(json: &[u8]) -> Result<Cow<'_, [u8]>, Malformed> {
        cut_list(json, &WITHOUT_MANAGED_FIELDS)
    }

    fn cut_text(json: &str) -> Result<Value, Malformed> {
        let out = without_managed_fields(json.as_bytes())?;
        Ok(serde_json::from_slice(&out).expect("the cut JSON is valid"))
    }

    #[test]
    fn managed_fields_last_in_metadata() {
        let got = cut_text(
            r#"{"kind":"Pod","metadata":{"name":"a","managedFields":[{"manager":"m","fieldsV1":{"f:spec":{}}}]},"spec":{"x":1}}"#,
        );
        assert_eq!(
            got.unwrap(),
            json!({"kind": "Pod", "metadata": {"name": "a"}, "spec": {"x": 1}})
        );
    }

    #[test]
    fn managed_fields_first_and_only_in_metadata() {
        let first = cut_text(r#"{"metadata": { "managedFields" : [ ] , "name":"a" }}"#);
        assert_eq!(first.unwrap(), json!({"metadata": {"name": "a"}}));
        let only = cut_text(r#"{"metadata":{"managedFields":[{"a":"b"}]}}"#);
        assert_eq!(only.unwrap(), json!({"metadata": {}}));
        let middle = cut_text(r#"{"metadata":{"name":"a","managedFields":[],"uid":"u"}}"#);
        assert_eq!(
            middle.unwrap(),
            json!({"metadata": {"name": "a", "uid": "u"}})
        );
    }

    #[test]
    fn absent_managed_fields_borrow_the_input() {
        let json = br#"{"kind":"Pod","metadata":{"name":"a"},"spec":{"managedFields":[1]}}"#;
        assert!(matches!(
            without_managed_fields(json),
            Ok(Cow::Borrowed(b)) if b == json
        ));
        assert!(matches!(
            without_managed_fields(b"[1,2]"),
            Ok(Cow::Borrowed(_))
        ));
    }

    #[test]
    fn strings_with_escaped_quotes_and_brackets_are_skipped_whole() {
        let got = cut_text(
            r#"{"a":"x\"}{","metadata":{"labels":{"k":"]\\"},"managedFields":[{"f:\"]}":{"s":"[{\\\"}"},"n":[[1,[2]],{"o":{}}]}],"uid":"u"}}"#,
        );
        assert_eq!(
            got.unwrap(),
            json!({"a": "x\"}{", "metadata": {"labels": {"k": "]\\"}, "uid": "u"}})
        );
    }

    #[test]
    fn unbalanced_or_unterminated_managed_fields_are_errors() {
        for bad in [
            r#"{"metadata":{"managedFields":[{"a":1}"#,
            r#"{"metadata":{"managedFields":[{"a":1]}],"name":"a"}}"#,
            r#"{"metadata":{"managedFields":[{"a":"1}]}}"#,
            r#"{"metadata":{"managedFields":[{"a":"1\"}]}}"#,
            r#"{"metadata":{"managedFields":"#,
            r#"{"metadata":{"managedFields":[],}}"#,
            r#"{"metadata":{"managedFields":[{"a":[1}}]}}"#,
            r#"{"metadata":{"managedFields":[{"a":1}]]}}"#,
        ] {
            assert!(without_managed_fields(bad.as_bytes()).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_skipped_value_is_checked_for_structure_only() {
        let got = cut_text(r#"{"metadata":{"managedFields":[{"a":01 "b" tru}],"name":"a"}}"#);
        assert_eq!(got.unwrap(), json!({"metadata": {"name": "a"}}));
    }

    #[test]
    fn every_list_item_loses_its_managed_fields() {
        let list = br#"{"kind":"PodList","metadata":{"resourceVersion":"9"},"items":[
            {"metadata":{"name":"a","managedFields":[{"m":"x"}]},"spec":{"c":["[",{}]}},
            {"metadata":{"name":"b"}},
            "odd",
            {"status":{},"metadata":{"managedFields":[],"name":"c"}}
        ]}"#;
        let out = list_without_managed_fields(list).unwrap();
        let got: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            got,
            json!({"kind": "PodList", "metadata": {"resourceVersion": "9"}, "items": [
                {"metadata": {"name": "a"}, "spec": {"c": ["[", {}]}},
                {"metadata": {"name": "b"}},
                "odd",
                {"status": {}, "metadata": {"name": "c"}},
            ]})
        );
        assert!(
            list_without_managed_fields(br#"{"items":[{"metadata":{"managedFields":[}}]}"#)
                .is_err()
        );
    }

    #[test]
    fn escapes_and_strings_across_block_boundaries() {
        let managed = r#"[{"manager":"kubelet","fieldsV1":{"f:status":{"k:{\"type\":\"Ready\"}":{".":{},"f:s":{}},"f:x\\":{"[":"]\\\"}{"}}},"time":"2025-01-01T00:00:00Z"},{"a":[[],[{}],"\\"]}]"#;
        for pad in 0..140 {
            let name = "x".repeat(pad);
            let json = format!(
                r#"{{"kind":"Pod","metadata":{{"name":"{name}","managedFields":{managed}}},"spec":{{"a":"{name}"}}}}"#
            );
            let mut want: Value = serde_json::from_str(&json).unwrap();
            want["metadata"]
                .as_object_mut()
                .unwrap()
                .remove("managedFields");
            assert_eq!(cut_text(&json).unwrap(), want, "pad {pad}");
            let truncated = format!(r#"{{"metadata":{{"name":"{name}","managedFields":{managed}"#);
            let unterminated = &truncated[..truncated.len() - 3];
            assert!(without_managed_fields(unterminated.as_bytes()).is_err());
        }
    }

    #[test]
    fn block_classes_match_a_byte_by_byte_reading() {
        let text = br#"{"a\":["x"]}",{}],"b":"\\"}[]{}"""\{[]}"#;
        let mut block = [b' '; 64];
        for start in 0..text.len() {
            let n = (text.len() - start).min(64);
            block[..n].copy_from_slice(&text[start..start + n]);
            let c = Classes::of(&block);
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2, as just checked.
                assert_eq!(unsafe { Classes::of_avx2(&block) }, c);
            }
            for (i, &byte) in block.iter().enumerate() {
                let bit = |m: u64| m & (1 << i) != 0;
                assert_eq!(bit(c.quote), byte == b'"');
                assert_eq!(bit(c.backslash), byte == b'\\');
                assert_eq!(bit(c.open), byte == b'{' || byte == b'[');
                assert_eq!(bit(c.close), byte == b'}' || byte == b']');
                assert_eq!(bit(c.curly_open), byte == b'{');
                assert_eq!(bit(c.curly_close), byte == b'}');
            }
        }
    }

    const SHAPE: Shape<'static> = Shape::only(&[
        ("metadata", Shape::only(&[("name", Shape::Whole)])),
        (
            "spec",
            Shape::only(&[(
                "containers",
                Shape::Array(&Shape::only(&[
                    ("name", Shape::Whole),
                    ("image", Shape::Whole),
                ])),
            )]),
        ),
        ("status", Shape::Whole),
    ]);

    fn shaped(json: &str) -> Value {
        serde_json::from_slice(&cut(json.as_bytes(), &SHAPE).unwrap()).unwrap()
    }

    #[test]
    fn a_shape_keeps_only_the_members_it_names() {
        let got = shaped(
            r#"{"kind":"Pod", "metadata":{"uid":"u","name":"a","labels":{"x":"}"}},
               "spec":{"volumes":[{"name":"v"}],"containers":[
                   {"env":[{"name":"E"}],"name":"c1","ports":[1],"image":"i1","args":["]"]},
                   {"name":"c2"},
                   "odd"
               ],"dnsPolicy":"x"},
               "status":{"phase":"Running","podIPs":[{"ip":"1"}]}, "extra":{"a":[]}}"#,
        );
        assert_eq!(
            got,
            json!({"metadata": {"name": "a"},
                   "spec": {"containers": [{"name": "c1", "image": "i1"}, {"name": "c2"}, "odd"]},
                   "status": {"phase": "Running", "podIPs": [{"ip": "1"}]}})
        );
    }

    #[test]
    fn a_shape_can_cut_every_member_and_leaves_misfits_to_serde() {
        assert_eq!(shaped(r#"{"a":1,"b":[2],"c":{}}"#), json!({}));
        assert_eq!(shaped(r#"{ "a" : 1 }"#), json!({}));
        assert_eq!(
            shaped(r#"{"metadata":null,"spec":"text","status":[1]}"#),
            json!({"metadata": null, "spec": "text", "status": [1]})
        );
        assert_eq!(
            shaped(r#"{"spec":{"containers":{"name":"not an array"}}}"#),
            json!({"spec": {"containers": {"name": "not an array"}}})
        );
    }

    #[test]
    fn a_member_name_with_escapes_is_kept_for_serde() {
        assert_eq!(
            shaped(r#"{"n\u0061me":1,"metadata":{"n\u0061me":"a","uid":"u"}}"#),
            json!({"name": 1, "metadata": {"name": "a"}})
        );
    }

    #[test]
    fn strings_are_walked_sixteen_bytes_at_a_time_across_escapes() {
        for pad in 0..40 {
            let x = "x".repeat(pad);
            let json = format!(
                r#"{{"{x}\"q":"{x}\\\"}}","metadata":{{"name":"{x}\\","uid":"{x}\""}},"spec":{{"a":"{x}"}}}}"#
            );
            // The escaped member name is kept for serde_json, whatever the shape says.
            let mut want = json!({"metadata": {"name": format!("{x}\\")}, "spec": {}});
            want[format!("{x}\"q")] = json!(format!("{x}\\\"}}"));
            assert_eq!(shaped(&json), want, "pad {pad}");
            let unterminated = format!(r#"{{"metadata":{{"name":"{x}\""#);
            assert!(cut(unterminated.as_bytes(), &SHAPE).is_err(), "pad {pad}");
        }
    }

    #[test]
    fn shaped_list_items_and_malformed_cut_values() {
        let list = br#"{"metadata":{},"items":[{"metadata":{"name":"a","uid":"u"},"spec":{"x":1}},{"status":{"s":1}}]}"#;
        let got: Value = serde_json::from_slice(&cut_list(list, &SHAPE).unwrap()).unwrap();
        assert_eq!(
            got,
            json!({"metadata": {}, "items": [{"metadata": {"name": "a"}, "spec": {}}, {"status": {"s": 1}}]})
        );
        assert!(cut(br#"{"spec":{"volumes":[{"a":1}}}"#, &SHAPE).is_err());
        assert!(cut(br#"{"spec":{"volumes":"x}}"#, &SHAPE).is_err());
    }

    #[test]
    fn the_realistic_pod_decodes_the_same_without_them() {
        let fixture = include_bytes!("../../tests/fixtures/pod-realistic.json");
        let out = without_managed_fields(fixture).unwrap();
        assert!(out.len() < fixture.len() * 7 / 10);
        let mut full: Value = serde_json::from_slice(fixture).unwrap();
        let cut: Value = serde_json::from_slice(&out).unwrap();
        full["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("managedFields");
        assert_eq!(cut, full);
    }
}
