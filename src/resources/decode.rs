//! Decoding that skips what a projection does not read instead of tokenizing it.
//!
//! serde_json reads every byte of a member it ignores, even into `IgnoredAny`: it tokenizes and
//! validates the whole tree. A pod's JSON is ~10 KB (`../shared/fixtures/pod-realistic.json`),
//! of which its projection reads ~2 KB: managedFields alone are 4 KB, and volumes, env, probes,
//! tolerations, affinity and most of the status are never read. [`from_slice`] decodes with
//! this module's own serde `Deserializer` ([`de`]): serde's derive hands every member a type
//! does not name to `deserialize_ignored_any`, and there a structural scan skips the value
//! without reading it. What the type names is decoded as serde_json decodes it. So the
//! projection's `Wire*` structs are the only statement of what is read.
//!
//! Values are skipped 64 bytes at a time, as simdjson's first stage does: SSE2 or AVX2
//! comparisons give bitmasks of quotes, backslashes and brackets, the escapes and a prefix xor
//! of the quotes give the bytes inside strings, and the brackets outside them are counted until
//! the depth is back to zero. Member names and strings are read sixteen bytes at a time.
//!
//! Deliberate trade-off, as in simdjson's on-demand skipping: a skipped value is checked
//! for structure only. An unterminated string, or brackets that do not balance (per kind: as
//! many `}` as `{` and as many `]` as `[`), are an error; anything else inside it goes
//! unnoticed: bad numbers or literals, missing commas or colons, invalid escapes or UTF-8, and
//! brackets of the two kinds closed in crossed order (`[{]}`). Every value that is read is
//! validated as serde_json validates it. Any error hands the whole text to serde_json, so an
//! error is reported in serde_json's words, and anything this decoder does not read itself
//! (an enum written as an object) is still decoded.
//!
//! The one module where `unsafe` is allowed (Cargo.toml's `[lints]` deny it everywhere else):
//! the scan's SIMD loads, its calls into code built for the CPU features it detected, and a
//! string it has seen to be ASCII. Each unsafe block says why it is sound
//! (`clippy::undocumented_unsafe_blocks` is denied), and Miri runs this module's tests
//! (docs/fuzzing.md).
#![allow(unsafe_code)]

mod de;

use memchr::memchr2;
use serde::Deserialize;
use serde::de::{DeserializeOwned, DeserializeSeed};

/// The JSON is not well-formed where the scan needs it to be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed JSON at byte {at}: {what}")]
pub struct Malformed {
    pub at: usize,
    pub what: &'static str,
}

pub use de::Error;

/// Decodes one JSON value (an object, a list body) into `T`, skipping every member `T` does not
/// read. On any error serde_json reads the text instead, so that the error is its own.
pub fn from_slice<T: DeserializeOwned>(json: &[u8]) -> Result<T, serde_json::Error> {
    read(json).or_else(|_| serde_json::from_slice(json))
}

/// [`from_slice`] without serde_json's second reading: for a caller that has its own way on
/// when this fails.
pub fn read<'a, T: Deserialize<'a>>(json: &'a [u8]) -> Result<T, Error> {
    let mut de = de::Deserializer::new(json);
    let value = T::deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// The newtype name under which this module's deserializer hands a value's text whole,
/// borrowed and checked for structure only, to a visitor's `visit_borrowed_bytes`.
pub(crate) const RAW_TEXT: &str = "kscope::RawText";

/// [`read`] through `seed`.
pub fn read_seed<'a, S: DeserializeSeed<'a>>(json: &'a [u8], seed: S) -> Result<S::Value, Error> {
    let mut de = de::Deserializer::new(json);
    let value = seed.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// A list body, split so that its items can be decoded one by one.
pub struct ListParts<'a, M> {
    pub metadata: Option<M>,
    /// The text of each element of `items`; `None` when `items` is absent or `null`.
    pub items: Option<Vec<&'a [u8]>>,
}

/// Splits a list body: `metadata` decoded into `M`, each element of `items` kept as its text,
/// checked for structure only (as a skipped value is), and other members skipped. An item
/// whose unread members are malformed is then taken as a one-pass read of the page takes it,
/// and one item that does not decode loses only itself.
pub fn list_parts<'a, M: Deserialize<'a>>(json: &'a [u8]) -> Result<ListParts<'a, M>, Error> {
    let mut de = de::Deserializer::new(json);
    let parts = de.list_parts()?;
    de.end()?;
    Ok(parts)
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

/// Which of sixteen bytes are quotes, backslashes, and bytes a plain ASCII string has none of
/// (controls below 0x20, and 0x80 and up): bit `i` for byte `i`.
struct Lane {
    quote: u32,
    backslash: u32,
    unusual: u32,
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn lane(bytes: &[u8; 16]) -> Lane {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of the x86_64 baseline, and `bytes` is 16 readable bytes (the load
    // has no alignment requirement).
    unsafe {
        let v = _mm_loadu_si128(bytes.as_ptr().cast());
        let quote = _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)));
        let backslash = _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)));
        // A signed comparison: 0x80 and up are negative, so below 0x20 too.
        let unusual = _mm_movemask_epi8(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
        Lane {
            quote: quote as u32,
            backslash: backslash as u32,
            unusual: unusual as u32,
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn lane(bytes: &[u8; 16]) -> Lane {
    let mut lane = Lane {
        quote: 0,
        backslash: 0,
        unusual: 0,
    };
    for (i, &byte) in bytes.iter().enumerate() {
        lane.quote |= u32::from(byte == b'"') << i;
        lane.backslash |= u32::from(byte == b'\\') << i;
        lane.unusual |= u32::from(!(0x20..0x80).contains(&byte)) << i;
    }
    lane
}

/// What [`Scan::string`] saw of a string's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Text {
    escapes: bool,
    /// Only bytes from 0x20 to 0x7f: no control characters, and UTF-8 with nothing to check.
    printable_ascii: bool,
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
}

impl<'a> Scan<'a> {
    fn new(json: &'a [u8]) -> Self {
        Self {
            json,
            pos: 0,
            simd: Simd::detect(),
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

    /// The first byte of the next value, past whitespace.
    fn value_start(&mut self) -> Result<u8, Malformed> {
        self.ws();
        self.peek()
            .ok_or_else(|| self.malformed("expected a value"))
    }

    /// Only whitespace may follow the value.
    fn end(&mut self) -> Result<(), Malformed> {
        self.ws();
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.malformed("trailing characters")),
        }
    }

    /// Past the comma before an object's next member or an array's next element (none before
    /// the `first`): the item's first byte, or `None` at the `close`-ing bracket, which is left
    /// for the caller to read. Inlined: it runs per member and element, and a call costs a
    /// pod's decode ~5% more.
    #[inline]
    fn next_item(
        &mut self,
        first: &mut bool,
        close: u8,
        what: &'static str,
    ) -> Result<Option<u8>, Malformed> {
        let next = self.value_start()?;
        if next == close {
            return Ok(None);
        }
        if std::mem::take(first) {
            return Ok(Some(next));
        }
        if next != b',' {
            return Err(self.malformed(what));
        }
        self.pos += 1;
        self.value_start().map(Some)
    }

    fn expect(&mut self, byte: u8, what: &'static str) -> Result<(), Malformed> {
        self.ws();
        if self.peek() != Some(byte) {
            return Err(self.malformed(what));
        }
        self.pos += 1;
        Ok(())
    }

    /// From the opening quote to just past the closing one. Inlined for the usual string, a
    /// member name or a short value that ends within its first sixteen bytes with no escape;
    /// longer ones go on in [`Scan::string_lanes`].
    #[inline(always)]
    fn string(&mut self) -> Result<Text, Malformed> {
        if let Some(bytes) = self.json.get(self.pos + 1..).and_then(|r| r.first_chunk()) {
            let lane = lane(bytes);
            let found = lane.quote | lane.backslash;
            let first_found = found & found.wrapping_neg();
            if lane.quote & first_found != 0 {
                let len = found.trailing_zeros() as usize;
                self.pos += len + 2;
                return Ok(Text {
                    escapes: false,
                    printable_ascii: lane.unusual & (first_found - 1) == 0,
                });
            }
        }
        self.string_lanes()
    }

    /// [`Scan::string`], sixteen bytes at a time.
    #[inline(never)]
    fn string_lanes(&mut self) -> Result<Text, Malformed> {
        let mut at = self.pos + 1;
        let mut text = Text {
            escapes: false,
            printable_ascii: true,
        };
        loop {
            let Some(bytes) = self.json.get(at..).and_then(|rest| rest.first_chunk()) else {
                return self.string_tail(at, text.escapes);
            };
            let lane = lane(bytes);
            let found = lane.quote | lane.backslash;
            if found == 0 {
                text.printable_ascii &= lane.unusual == 0;
                at += 16;
                continue;
            }
            let first = found.trailing_zeros() as usize;
            text.printable_ascii &= lane.unusual & ((1 << first) - 1) == 0;
            if lane.quote & (1 << first) != 0 {
                self.pos = at + first + 1;
                return Ok(text);
            }
            // A backslash: the escaped byte cannot end the string, and is looked at here (it
            // may be in the next lane).
            text.escapes = true;
            text.printable_ascii &= self
                .json
                .get(at + first + 1)
                .is_some_and(|b| (0x20..0x80).contains(b));
            at += first + 2;
        }
    }

    /// [`Scan::string`] within the last sixteen bytes of the text, where its bytes are not
    /// looked at.
    fn string_tail(&mut self, mut at: usize, mut escapes: bool) -> Result<Text, Malformed> {
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
                return Ok(Text {
                    escapes,
                    printable_ascii: false,
                });
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
                // A number or a literal: only their bytes, so that a quote or bracket after one
                // (a missing comma) is seen by whoever reads on.
                let start = self.pos;
                while self
                    .peek()
                    .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
                {
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
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    /// This module's decoder alone, without serde_json's fallback.
    fn ours<'a, T: Deserialize<'a>>(json: &'a str) -> Result<T, Error> {
        read(json.as_bytes())
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Object {
        metadata: Meta,
        #[serde(default)]
        spec: Option<Spec>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Meta {
        name: String,
        #[serde(default)]
        uid: Option<String>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Spec {
        #[serde(default)]
        a: Option<String>,
        #[serde(default)]
        n: Vec<i64>,
    }

    fn object(json: &str) -> Object {
        let want: Object = serde_json::from_str(json).expect("serde_json decodes it");
        assert_eq!(ours::<Object>(json).unwrap(), want, "{json}");
        want
    }

    #[test]
    fn every_value_reads_as_serde_json_reads_it() {
        let fixture = include_str!("../../tests/fixtures/pod-realistic.json");
        for json in [
            fixture,
            r#"{"a":[1,-2,0,18446744073709551615,-9223372036854775808],"b":[true,false,null],"c":{}}"#,
            r#" [ ] "#,
            r#""\"\\\/\b\f\n\r\t\u00e9\u20ac\ud83d\ude00 é€😀""#,
            r#"{"":"", "k\u0041":{"x":[[],[{}]]}}"#,
            "0",
            "\t\n\r 12 ",
        ] {
            let want: Value = serde_json::from_str(json).unwrap();
            assert_eq!(ours::<Value>(json).unwrap(), want, "{json}");
        }
    }

    #[test]
    fn what_serde_json_refuses_is_refused() {
        for bad in [
            "",
            "{",
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r#"{"a":1 "b":2}"#,
            "[1,]",
            "[1 2]",
            "01",
            "-",
            "1.",
            "1e",
            ".5",
            "1e400",
            "tru",
            "nul",
            r#""\x""#,
            r#""\u12g4""#,
            r#""\ud800""#,
            r#""\udc00""#,
            r#""\ud800\u0041""#,
            "\"a\u{1}b\"",
            "\"tab\tinside\"",
            "{} {}",
            "[1] x",
            r#"{"a":"unterminated}"#,
        ] {
            assert!(
                serde_json::from_str::<Value>(bad).is_err(),
                "serde_json takes {bad:?}"
            );
            assert!(ours::<Value>(bad).is_err(), "{bad:?}");
        }
        assert!(read::<Value>(b"\"\xff\"").is_err());
        let nested = |n: usize| "[".repeat(n) + &"]".repeat(n);
        for (depth, ok) in [(127, true), (128, false), (200, false)] {
            assert_eq!(serde_json::from_str::<Value>(&nested(depth)).is_ok(), ok);
            assert_eq!(ours::<Value>(&nested(depth)).is_ok(), ok, "{depth}");
        }
    }

    #[test]
    fn floats_and_integers_past_64_bits_are_left_to_serde_json() {
        for json in [
            "-0",
            "3.5",
            "-1e3",
            "2E-2",
            "1.0e+2",
            "9007199254740993.0",
            "18446744073709551616",
            "18446744073709553665",
            "-9223372036854775809",
            "1.7976931348623158e308",
        ] {
            assert!(ours::<Value>(json).is_err(), "{json}");
            let want = serde_json::from_str::<Value>(json).map(|v| v.to_string());
            let got = from_slice::<Value>(json.as_bytes()).map(|v| v.to_string());
            assert_eq!(got.ok(), want.ok(), "{json}");
        }
    }

    #[test]
    fn an_escaped_byte_is_checked_in_every_lane_position() {
        for pad in 0..20 {
            for escaped in [0xff, 0x01, b'n'] {
                let mut json = format!("\"{}\\", "x".repeat(pad)).into_bytes();
                json.push(escaped);
                json.extend_from_slice(&[b'y'; 40]);
                json.push(b'"');
                let end = json.len();
                // Room for whole lanes past the string, so that its tail is not read bytewise.
                json.extend_from_slice(&[b' '; 16]);
                let mut scan = Scan::new(&json);
                let text = scan.string().unwrap();
                assert!(text.escapes);
                assert_eq!(
                    text.printable_ascii,
                    escaped == b'n',
                    "pad {pad}, {escaped}"
                );
                assert_eq!(scan.pos, end);
            }
        }
    }

    #[test]
    fn from_slice_reports_serde_json_errors_and_reads_what_it_does_not() {
        let err = from_slice::<Value>(br#"{"a":1,}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            serde_json::from_slice::<Value>(br#"{"a":1,}"#)
                .unwrap_err()
                .to_string()
        );
        #[derive(Debug, PartialEq, Deserialize)]
        enum Kind {
            Unit,
            Named { x: u8 },
        }
        assert_eq!(
            from_slice::<Vec<Kind>>(br#"["Unit"]"#).unwrap(),
            [Kind::Unit]
        );
        assert_eq!(
            from_slice::<Vec<Kind>>(br#"["Unit",{"Named":{"x":1}}]"#).unwrap(),
            [Kind::Unit, Kind::Named { x: 1 }]
        );
    }

    #[test]
    fn unread_members_are_skipped_whole() {
        let got = object(
            r#"{"a":"x\"}{","metadata":{"labels":{"k":"]\\"},"managedFields":[{"f:\"]}":{"s":"[{\\\"}"},"n":[[1,[2]],{"o":{}}]}],"name":"n","uid":"u"},"status":{"x":[1,{"y":null}]}}"#,
        );
        assert_eq!(got.metadata.name, "n");
        object(r#"{ "metadata" : { "name" : "a" , "x" : [ ] } , "spec" : { "n" : [ 1 , 2 ] } }"#);
        object(r#"{"metadata":{"name":"a"},"spec":null}"#);
    }

    #[test]
    fn a_list_splits_into_its_metadata_and_item_texts() {
        #[derive(Debug, PartialEq, Deserialize)]
        struct ListMeta {
            #[serde(rename = "resourceVersion")]
            resource_version: String,
        }
        let body = br#"{"kind":[1 2],"metadata":{"resourceVersion":"7","x":tru},"items":[ {"a":01} , 5,"s" ,{"b":[]}]}"#;
        let parts = list_parts::<ListMeta>(body).unwrap();
        let meta = ListMeta {
            resource_version: "7".into(),
        };
        assert_eq!(parts.metadata, Some(meta));
        let items: [&[u8]; 4] = [br#"{"a":01}"#, b"5", br#""s""#, br#"{"b":[]}"#];
        assert_eq!(parts.items.as_deref(), Some(&items[..]));
        let none = list_parts::<ListMeta>(br#"{"items":null}"#).unwrap();
        assert!(none.metadata.is_none() && none.items.is_none());
        for bad in [
            &br#"{"items":[{"a":1]}"#[..],
            br#"{"items":{}}"#,
            br#"{"items":[],"items":[]}"#,
            br#"{"metadata":{"resourceVersion":7}}"#,
            br#"{"items":[1 2]}"#,
            br#"{"items":[]} x"#,
            b"[]",
        ] {
            assert!(
                list_parts::<ListMeta>(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn an_unread_scalar_does_not_swallow_what_follows_it() {
        for bad in [
            r#"{"metadata":{"x":0"uid":"u","name":"a"}}"#,
            r#"{"metadata":{"x":true"uid":"u","name":"a"}}"#,
            r#"{"metadata":{"x":1{},"name":"a"}}"#,
            r#"{"metadata":{"x":null[],"name":"a"}}"#,
        ] {
            assert!(serde_json::from_str::<Object>(bad).is_err(), "{bad}");
            assert!(ours::<Object>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_unread_value_is_checked_for_structure_only() {
        let lax = r#"{"metadata":{"managedFields":[{"a":01 "b" tru}],"name":"a"}}"#;
        assert!(serde_json::from_str::<Object>(lax).is_err());
        assert_eq!(ours::<Object>(lax).unwrap().metadata.name, "a");
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
            assert!(ours::<Object>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn escapes_and_strings_across_block_boundaries() {
        let managed = r#"[{"manager":"kubelet","fieldsV1":{"f:status":{"k:{\"type\":\"Ready\"}":{".":{},"f:s":{}},"f:x\\":{"[":"]\\\"}{"}}},"time":"2025-01-01T00:00:00Z"},{"a":[[],[{}],"\\"]}]"#;
        for pad in 0..140 {
            let name = "x".repeat(pad);
            let json = format!(
                r#"{{"kind":"Pod","metadata":{{"name":"{name}","managedFields":{managed}}},"spec":{{"a":"{name}"}}}}"#
            );
            assert_eq!(object(&json).metadata.name, name, "pad {pad}");
            let truncated = format!(r#"{{"metadata":{{"name":"{name}","managedFields":{managed}"#);
            let unterminated = &truncated[..truncated.len() - 3];
            assert!(ours::<Object>(unterminated).is_err(), "pad {pad}");
        }
    }

    #[test]
    fn strings_are_walked_sixteen_bytes_at_a_time_across_escapes() {
        for pad in 0..40 {
            let x = "x".repeat(pad);
            let json = format!(
                r#"{{"{x}\"q":"{x}\\\"}}","metadata":{{"name":"{x}\\","uid":"{x}\"é\u00e9"}},"spec":{{"a":"{x}"}}}}"#
            );
            let got = object(&json);
            assert_eq!(
                got.metadata.uid.as_deref(),
                Some(format!("{x}\"éé").as_str())
            );
            let unterminated = format!(r#"{{"metadata":{{"name":"{x}\""#);
            assert!(ours::<Object>(&unterminated).is_err(), "pad {pad}");
        }
    }

    #[test]
    fn controls_and_non_ascii_are_checked_in_every_lane_position() {
        let tail = format!(r#", "{}é""#, "y".repeat(40));
        for pad in 0..40 {
            let x = "x".repeat(pad);
            for odd in [
                "", "\u{1}", "\t", "\u{7f}", "é", "😀", "\\n", "\\é", "\\\u{1}",
            ] {
                let json = format!(r#"["{x}{odd}{x}"{tail}]"#);
                match serde_json::from_str::<Value>(&json) {
                    Ok(want) => assert_eq!(ours::<Value>(&json).unwrap(), want, "{json:?}"),
                    Err(_) => assert!(ours::<Value>(&json).is_err(), "{json:?}"),
                }
            }
            let mut invalid = format!(r#"["{x}"#).into_bytes();
            invalid.push(0xc3);
            invalid.extend_from_slice(format!(r#"{x}"{tail}]"#).as_bytes());
            assert!(read::<Value>(&invalid).is_err(), "pad {pad}");
            let mut escaped = format!(r#"["{x}\"#).into_bytes();
            escaped.push(0xff);
            escaped.extend_from_slice(format!(r#"{x}"{tail}]"#).as_bytes());
            assert!(read::<Value>(&escaped).is_err(), "pad {pad}");
        }
    }

    #[test]
    fn the_inline_string_scan_agrees_with_the_lane_loop() {
        let prefixes: [&[u8]; 5] = [b"x", b"\x01", b"\xc3", b"\\\"", b"\x7f"];
        // After the closing quote: a byte the string must not be judged by, then either enough
        // text for a whole lane or nothing (the end of the input).
        let trailers: [&[u8]; 2] = [b"\xff,\"yyyyyyyyyyyyyyyyyyyy\"", b""];
        for len in 0..=17 {
            for prefix in prefixes {
                for trailer in trailers {
                    let mut json = b"\"".to_vec();
                    json.extend(prefix.iter().cycle().take(len));
                    json.push(b'"');
                    json.extend_from_slice(trailer);
                    let mut inline = Scan::new(&json);
                    let mut lanes = Scan::new(&json);
                    let got = (inline.string(), inline.pos);
                    let want = (lanes.string_lanes(), lanes.pos);
                    assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&json));
                }
            }
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
}
