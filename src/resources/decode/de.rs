//! A serde `Deserializer` over the structural [`Scan`]: members a type does not read reach
//! `deserialize_ignored_any` (serde's derive sends every unknown member there), and are skipped
//! by the scan's block skipper instead of being tokenized. What a type reads is decoded and
//! validated as serde_json would: strings (escapes, UTF-8, no raw control characters),
//! integers, literals and the punctuation between them. Other numbers are errors here, so that
//! serde_json (which [`super::from_slice`] falls back to) reads them and rounds them its way.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};

use super::{ListParts, Malformed, RAW_TEXT, Scan};

/// Objects and arrays nested deeper than this are refused, as serde_json refuses them, before
/// the stack runs out.
const MAX_DEPTH: u32 = 127;

/// Why a text did not decode; [`super::from_slice`] then lets serde_json say it in its words.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Syntax(#[from] Malformed),
    #[error("{0}")]
    Data(String),
}

impl de::Error for Error {
    fn custom<M: fmt::Display>(msg: M) -> Self {
        Self::Data(msg.to_string())
    }
}

type Result<T> = std::result::Result<T, Error>;

pub struct Deserializer<'de> {
    scan: Scan<'de>,
    depth: u32,
}

impl<'de> Deserializer<'de> {
    pub fn new(json: &'de [u8]) -> Self {
        Self {
            scan: Scan::new(json),
            depth: 0,
        }
    }

    /// Only whitespace may follow the value.
    pub fn end(&mut self) -> Result<()> {
        self.scan.end().map_err(Into::into)
    }

    fn next(&mut self) -> Result<u8> {
        self.scan.value_start().map_err(Into::into)
    }

    /// The string at `pos` (its opening quote): borrowed from the text unless it has escapes.
    fn string<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value> {
        match text(&mut self.scan)? {
            Cow::Borrowed(text) => visitor.visit_borrowed_str(text),
            Cow::Owned(text) => visitor.visit_string(text),
        }
    }

    /// An integer, as serde_json hands one to a visitor (see [`integer`]).
    fn number<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value> {
        match integer(&mut self.scan)? {
            Integer::Unsigned(n) => visitor.visit_u64(n),
            Integer::Negative(n) => visitor.visit_i64(n),
        }
    }

    fn nested<T>(&mut self, inner: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if self.depth >= MAX_DEPTH {
            return Err(self.scan.malformed("nested too deeply").into());
        }
        self.depth += 1;
        self.scan.pos += 1;
        let value = inner(self);
        self.depth -= 1;
        value
    }
}

impl<'de> Deserializer<'de> {
    /// A list body's `metadata` and its items' texts (see [`super::list_parts`]).
    pub fn list_parts<M: de::Deserialize<'de>>(&mut self) -> Result<ListParts<'de, M>> {
        if self.next()? != b'{' {
            return Err(self.scan.malformed("expected an object").into());
        }
        self.scan.pos += 1;
        let mut parts = ListParts {
            metadata: None,
            items: None,
        };
        let (mut metadata_seen, mut items_seen) = (false, false);
        let mut first = true;
        while let Some(next) = self
            .scan
            .next_item(&mut first, b'}', "expected ',' or '}'")?
        {
            if next != b'"' {
                return Err(self.scan.malformed("expected a member name").into());
            }
            let name = text(&mut self.scan)?;
            self.scan.expect(b':', "expected ':'")?;
            // A member named twice is an error, as serde's derive makes it.
            let seen = match name.as_ref() {
                "metadata" => &mut metadata_seen,
                "items" => &mut items_seen,
                _ => {
                    self.scan.value()?;
                    continue;
                }
            };
            if std::mem::replace(seen, true) {
                return Err(Error::Data(format!("duplicate member {name:?}")));
            }
            if name == "metadata" {
                parts.metadata = de::Deserialize::deserialize(&mut *self)?;
            } else {
                parts.items = self.item_texts()?;
            }
        }
        self.scan.pos += 1;
        Ok(parts)
    }

    /// `null`, or an array's elements as texts, each checked for structure only.
    fn item_texts(&mut self) -> Result<Option<Vec<&'de [u8]>>> {
        match self.next()? {
            b'n' => literal(&mut self.scan, b"null").map(|()| None),
            b'[' => {
                self.scan.pos += 1;
                let mut items = Vec::new();
                let mut first = true;
                while self
                    .scan
                    .next_item(&mut first, b']', "expected ',' or ']'")?
                    .is_some()
                {
                    let start = self.scan.pos;
                    self.scan.value()?;
                    items.push(&self.scan.json[start..self.scan.pos]);
                }
                self.scan.pos += 1;
                Ok(Some(items))
            }
            _ => Err(Error::Data("items is neither an array nor null".into())),
        }
    }
}

/// `word` (`null`, `true` or `false`) at `pos`.
fn literal(scan: &mut Scan<'_>, word: &'static [u8]) -> Result<()> {
    let at = scan.pos;
    if scan.json.get(at..at + word.len()) != Some(word) {
        return Err(scan.malformed("expected a literal").into());
    }
    scan.pos += word.len();
    Ok(())
}

/// The string at `pos` (its opening quote), validated as serde_json validates it: borrowed
/// from the text unless it has escapes.
fn text<'de>(scan: &mut Scan<'de>) -> Result<Cow<'de, str>> {
    let start = scan.pos + 1;
    let seen = scan.string()?;
    let raw = &scan.json[start..scan.pos - 1];
    let text = if seen.printable_ascii {
        debug_assert!(std::str::from_utf8(raw).is_ok());
        // SAFETY: `Scan::string` saw only bytes below 0x80, which are UTF-8 on their own.
        // Checked instead, every string and member name costs a call: +27% instructions for a
        // pod (docs/benchmarks.md).
        unsafe { std::str::from_utf8_unchecked(raw) }
    } else if raw.iter().any(|&b| b < 0x20) {
        return Err(scan.malformed("control character in a string").into());
    } else {
        std::str::from_utf8(raw).map_err(|_| scan.malformed("invalid UTF-8 in a string"))?
    };
    if seen.escapes {
        let unescaped = unescape(text).ok_or_else(|| scan.malformed("invalid escape"))?;
        Ok(Cow::Owned(unescaped))
    } else {
        Ok(Cow::Borrowed(text))
    }
}

/// A JSON integer as serde_json gives it to a visitor.
enum Integer {
    Unsigned(u64),
    /// Below zero.
    Negative(i64),
}

/// The integer at `pos`. Anything else (a fraction, an exponent, `-0`, more than 64 bits) is
/// an error, so that serde_json reads it and rounds it its own way; no projection reads one.
fn integer(scan: &mut Scan<'_>) -> Result<Integer> {
    let json = scan.json;
    let start = scan.pos;
    let negative = json.get(start) == Some(&b'-');
    let digits = &json[start + usize::from(negative)..];
    let len = digits.iter().take_while(|b| b.is_ascii_digit()).count();
    let end = start + usize::from(negative) + len;
    if len == 0 || (len > 1 && digits[0] == b'0') {
        return Err(scan.malformed("invalid number").into());
    }
    if matches!(json.get(end), Some(b'.' | b'e' | b'E')) {
        return Err(Error::Data("a number that is not an integer".into()));
    }
    scan.pos = end;
    // ASCII digits and a sign: always UTF-8.
    let text = std::str::from_utf8(&json[start..end]).unwrap_or_default();
    if negative {
        let Ok(n @ ..0) = text.parse::<i64>() else {
            return Err(Error::Data("-0 or an integer past 64 bits".into()));
        };
        Ok(Integer::Negative(n))
    } else {
        let Ok(n) = text.parse::<u64>() else {
            return Err(Error::Data("an integer past 64 bits".into()));
        };
        Ok(Integer::Unsigned(n))
    }
}

/// The text of a string with escapes, unescaped; `None` for an invalid escape or a lone
/// surrogate (serde_json refuses both).
fn unescape(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let bytes = rest.as_bytes();
        let escaped = *bytes.get(i + 1)?;
        if !escaped.is_ascii() {
            return None;
        }
        // Both bytes are ASCII, so `i + 2` is a char boundary.
        rest = &rest[i + 2..];
        match escaped {
            b'"' => out.push('"'),
            b'\\' => out.push('\\'),
            b'/' => out.push('/'),
            b'b' => out.push('\u{8}'),
            b'f' => out.push('\u{c}'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            b'u' => {
                let (unit, after) = hex4(rest)?;
                rest = after;
                let c = match unit {
                    0xD800..=0xDBFF => {
                        let (low, after) = rest.strip_prefix("\\u").and_then(hex4)?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return None;
                        }
                        rest = after;
                        0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00)
                    }
                    0xDC00..=0xDFFF => return None,
                    unit => u32::from(unit),
                };
                out.push(char::from_u32(c)?);
            }
            _ => return None,
        }
    }
    out.push_str(rest);
    Some(out)
}

fn hex4(text: &str) -> Option<(u16, &str)> {
    let digits = text.get(..4)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some((u16::from_str_radix(digits, 16).ok()?, &text[4..]))
}

impl<'de> de::Deserializer<'de> for &mut Deserializer<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.next()? {
            b'"' => self.string(visitor),
            b'{' => {
                let value = self.nested(|de| visitor.visit_map(Members { de, first: true }))?;
                self.scan.expect(b'}', "expected ',' or '}'")?;
                Ok(value)
            }
            b'[' => {
                let value = self.nested(|de| visitor.visit_seq(Elements { de, first: true }))?;
                self.scan.expect(b']', "expected ',' or ']'")?;
                Ok(value)
            }
            b'n' => {
                literal(&mut self.scan, b"null")?;
                visitor.visit_unit()
            }
            b't' => {
                literal(&mut self.scan, b"true")?;
                visitor.visit_bool(true)
            }
            b'f' => {
                literal(&mut self.scan, b"false")?;
                visitor.visit_bool(false)
            }
            b'-' | b'0'..=b'9' => self.number(visitor),
            _ => Err(self.scan.malformed("expected a value").into()),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.next()? == b'n' {
            literal(&mut self.scan, b"null")?;
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    /// What the type does not read: skipped, checked for structure only (see the module doc of
    /// [`super`]).
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.scan.value()?;
        visitor.visit_unit()
    }

    /// A newtype, or under [`RAW_TEXT`] the value's text, checked for structure only (as a
    /// skipped value is).
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        if name != RAW_TEXT {
            return visitor.visit_newtype_struct(self);
        }
        self.next()?;
        let start = self.scan.pos;
        self.scan.value()?;
        visitor.visit_borrowed_bytes(&self.scan.json[start..self.scan.pos])
    }

    /// Unit variants written as strings; any other enum is left to serde_json (an error here
    /// makes [`super::from_slice`] hand the text to it).
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        if self.next()? != b'"' {
            return Err(Error::Data("only unit variants are read here".into()));
        }
        match text(&mut self.scan)? {
            Cow::Borrowed(name) => {
                visitor.visit_enum(de::value::BorrowedStrDeserializer::new(name))
            }
            Cow::Owned(name) => visitor.visit_enum(name.into_deserializer()),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier
    }
}

/// An object's members, from just past its `{`; the `}` is read by the caller.
struct Members<'a, 'de> {
    de: &'a mut Deserializer<'de>,
    first: bool,
}

impl<'de> MapAccess<'de> for Members<'_, 'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        let item = self
            .de
            .scan
            .next_item(&mut self.first, b'}', "expected ',' or '}'")?;
        let Some(next) = item else {
            return Ok(None);
        };
        if next != b'"' {
            return Err(self.de.scan.malformed("expected a member name").into());
        }
        seed.deserialize(MemberName(&mut *self.de)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        self.de.scan.expect(b':', "expected ':'")?;
        seed.deserialize(&mut *self.de)
    }
}

/// A member name: always a string, whatever type the map's keys have.
struct MemberName<'a, 'de>(&'a mut Deserializer<'de>);

impl<'de> de::Deserializer<'de> for MemberName<'_, 'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.0.string(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// An array's elements, from just past its `[`; the `]` is read by the caller.
struct Elements<'a, 'de> {
    de: &'a mut Deserializer<'de>,
    first: bool,
}

impl<'de> SeqAccess<'de> for Elements<'_, 'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        let item = self
            .de
            .scan
            .next_item(&mut self.first, b']', "expected ',' or ']'")?;
        if item.is_none() {
            return Ok(None);
        }
        seed.deserialize(&mut *self.de).map(Some)
    }
}
