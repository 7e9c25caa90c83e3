//! A reader for hand-written decoders of the kinds whose events dominate a watch (pods).
//!
//! serde's derive reaches every member through generic visitor calls and moves each struct by
//! value through `Option` and `Result` at every level. A hand-written decoder walks the members
//! itself over the same [`Scan`], reads what it names and skips the rest as the serde path
//! does, in about a tenth fewer instructions for a pod (see docs/benchmarks.md). It is strict:
//! anything it does not expect (a `null` where serde's derive would refuse one, a duplicate
//! member, an escaped member name, a number that is not an integer) is an error, and its
//! caller then decodes the text through serde's derive, which reads it or reports it.

use std::borrow::Cow;

use smallvec::SmallVec;

use super::de::{Integer, Result, integer, literal, text};
use super::{Error, Malformed, Scan};
use crate::resources::packed::{Str, StrMap};
use crate::resources::time::Timestamp;

pub(crate) struct Reader<'a> {
    scan: Scan<'a>,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(json: &'a [u8]) -> Self {
        Self {
            scan: Scan::new(json),
        }
    }

    fn malformed(&self, what: &'static str) -> Malformed {
        self.scan.malformed(what)
    }

    fn next(&mut self) -> Result<u8> {
        self.scan.value_start().map_err(Into::into)
    }

    /// Only whitespace may follow the value.
    pub(crate) fn end(&mut self) -> Result<()> {
        self.scan.end().map_err(Into::into)
    }

    /// An object: `member` is called with each member's name, and reads or skips its value.
    /// A name with escapes or anything but printable ASCII is an error (no member a decoder
    /// names has one).
    pub(crate) fn object(
        &mut self,
        mut member: impl FnMut(&mut Self, &'a [u8]) -> Result<()>,
    ) -> Result<()> {
        self.members(|r| {
            let start = r.scan.pos + 1;
            let seen = r.scan.string()?;
            let name = &r.scan.json[start..r.scan.pos - 1];
            // The scan leaves `printable_ascii` unset near the end of the text.
            let printable = seen.printable_ascii || name.iter().all(|b| (0x20..0x80).contains(b));
            if seen.escapes || !printable {
                return Err(r
                    .malformed("a member name this reader does not match")
                    .into());
            }
            r.scan.expect(b':', "expected ':'")?;
            member(r, name)
        })
    }

    /// An object whose member names are data (labels, annotations): any valid string.
    fn object_any(
        &mut self,
        mut member: impl FnMut(&mut Self, Str<'a>) -> Result<()>,
    ) -> Result<()> {
        self.members(|r| {
            let name = Str::new(text(&mut r.scan)?);
            r.scan.expect(b':', "expected ':'")?;
            member(r, name)
        })
    }

    /// An object's members, each read by `member` from its name's opening quote.
    #[inline(always)]
    fn members(&mut self, mut member: impl FnMut(&mut Self) -> Result<()>) -> Result<()> {
        self.items(b'{', b'}', |r, first| {
            if first != b'"' {
                return Err(r.malformed("expected a member name").into());
            }
            member(r)
        })
    }

    /// An array: `element` reads each element.
    fn array(&mut self, mut element: impl FnMut(&mut Self) -> Result<()>) -> Result<()> {
        self.items(b'[', b']', |r, _| element(r))
    }

    /// The items between `open` and `close` (see [`Scan::next_item`]), each read by `item`
    /// from its first byte.
    #[inline(always)]
    fn items(
        &mut self,
        open: u8,
        close: u8,
        mut item: impl FnMut(&mut Self, u8) -> Result<()>,
    ) -> Result<()> {
        if self.next()? != open {
            return Err(self.malformed("expected an object or array").into());
        }
        self.scan.pos += 1;
        let mut first = true;
        while let Some(next) =
            self.scan
                .next_item(&mut first, close, "expected ',' or a bracket")?
        {
            item(self, next)?;
        }
        self.scan.pos += 1;
        Ok(())
    }

    /// Reads a `null` if one is next: what an `Option` member reads as `None`.
    fn null(&mut self) -> Result<bool> {
        if self.next()? == b'n' {
            literal(&mut self.scan, b"null")?;
            return Ok(true);
        }
        Ok(false)
    }

    /// A string (not `null`).
    fn str(&mut self) -> Result<Cow<'a, str>> {
        if self.next()? != b'"' {
            return Err(self.malformed("expected a string").into());
        }
        text(&mut self.scan)
    }

    pub(crate) fn bool(&mut self) -> Result<bool> {
        match self.next()? {
            b't' => literal(&mut self.scan, b"true").map(|()| true),
            b'f' => literal(&mut self.scan, b"false").map(|()| false),
            _ => Err(self.malformed("expected a boolean").into()),
        }
    }

    /// An integer that fits an `i64`, as serde reads one into an `i64`.
    pub(crate) fn i64(&mut self) -> Result<i64> {
        match self.next()? {
            b'-' | b'0'..=b'9' => match integer(&mut self.scan)? {
                Integer::Negative(n) => Ok(n),
                Integer::Unsigned(n) => {
                    i64::try_from(n).map_err(|_| Error::Data("an integer past i64".into()))
                }
            },
            _ => Err(self.malformed("expected an integer").into()),
        }
    }

    /// Any value, skipped as the serde path skips a member it does not read.
    pub(crate) fn skip(&mut self) -> Result<()> {
        self.scan.value().map_err(Into::into)
    }

    /// An `Option` member: `None` for `null`, else what `read` reads.
    pub(crate) fn opt<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<Option<T>> {
        if self.null()? {
            return Ok(None);
        }
        read(self).map(Some)
    }

    /// An `Option` list member: each element read by `read` and added with `push`.
    pub(crate) fn list<L: Default, T>(
        &mut self,
        read: impl Fn(&mut Self) -> Result<T>,
        push: impl Fn(&mut L, T),
    ) -> Result<Option<L>> {
        self.opt(|r| {
            let mut list = L::default();
            r.array(|r| {
                push(&mut list, read(r)?);
                Ok(())
            })?;
            Ok(list)
        })
    }

    pub(crate) fn opt_str(&mut self) -> Result<Option<Str<'a>>> {
        self.opt(|r| r.str().map(Str::new))
    }

    pub(crate) fn opt_bool(&mut self) -> Result<Option<bool>> {
        self.opt(Self::bool)
    }

    pub(crate) fn opt_timestamp(&mut self) -> Result<Option<Timestamp>> {
        self.opt(|r| {
            let text = r.str()?;
            Timestamp::parse(&text).map_err(|e| Error::Data(e.to_string()))
        })
    }

    /// A map of strings, as [`StrMap`]'s serde reading reads it.
    pub(crate) fn str_map<const SKIP: bool>(&mut self) -> Result<StrMap<'a, SKIP>> {
        let mut entries = SmallVec::new();
        self.object_any(|r, key| {
            if StrMap::<SKIP>::skips(&key) {
                return r.skip();
            }
            entries.push((key, Str::new(r.str()?)));
            Ok(())
        })?;
        Ok(StrMap::from_entries(entries))
    }
}

/// Reads an object's members by name, as serde's derive does: each arm reads the value of the
/// member it names; a member named twice is an error, and members no arm names are skipped.
///
/// `read_members!(reader, |r| { b"name" => self.name = r.opt_str()?, ... })`
macro_rules! read_members {
    ($reader:expr, |$r:ident| { $($name:literal => $read:expr),+ $(,)? }) => {{
        let mut seen = 0u64;
        $reader.object(|$r, name| {
            let mut bit = 1u64;
            $(
                if name == $name {
                    if seen & bit != 0 {
                        let duplicate = "duplicate member".to_owned();
                        return Err($crate::resources::decode::Error::Data(duplicate));
                    }
                    seen |= bit;
                    $read;
                    return Ok(());
                }
                bit <<= 1;
            )+
            let _ = bit;
            $r.skip()
        })
    }};
}
pub(crate) use read_members;
