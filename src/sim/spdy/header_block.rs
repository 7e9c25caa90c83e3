//! SPDY/3 header blocks: name/value pairs, each length-prefixed with four big-endian bytes,
//! deflated on one zlib stream per direction for the whole connection (preset dictionary,
//! a sync flush after every block). Because the stream spans frames, every block must be
//! inflated in order, even one whose frame is then refused.

use bytes::{Buf, BufMut};
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress};

use super::dictionary::dictionary;

/// The most a header block may inflate to: a port-forward's blocks hold three short headers,
/// so anything near this is a mistake or a zip bomb.
const MAX_INFLATED: usize = 256 * 1024;

/// Why a header block could not be read or written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HeaderBlockError {
    #[error("header block is truncated")]
    Truncated,
    #[error("header block declares {0} pairs, more than its bytes can hold")]
    TooManyPairs(u32),
    #[error("header block inflates past {MAX_INFLATED} bytes")]
    TooLarge,
    #[error("header block has an empty header name")]
    EmptyName,
    #[error("header block is not UTF-8")]
    NotUtf8(#[source] std::string::FromUtf8Error),
    #[error("header block wants zlib dictionary {0:#010x}, not SPDY/3's")]
    WrongDictionary(u32),
    #[error("header block does not inflate")]
    Inflate(#[source] flate2::DecompressError),
    #[error("header block does not deflate")]
    Deflate(#[source] flate2::CompressError),
}

/// A stream's headers, in the order they came; several values of one name are joined by NUL
/// on the wire and kept so here.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Headers(pub(crate) Vec<(String, String)>);

impl Headers {
    /// The first value of `name` (names are lowercase on the wire; matched case-blind).
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| v.split('\0').next())
    }

    /// The uncompressed block.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_len(&mut out, self.0.len());
        for (name, value) in &self.0 {
            put_len(&mut out, name.len());
            out.put_slice(name.as_bytes());
            put_len(&mut out, value.len());
            out.put_slice(value.as_bytes());
        }
        out
    }

    /// Reads an uncompressed block; every count and length is checked against the bytes left.
    pub(crate) fn decode(mut block: &[u8]) -> Result<Self, HeaderBlockError> {
        let count = take_u32(&mut block)?;
        // Each pair takes at least its two length fields.
        if count as usize > block.len() / 8 {
            return Err(HeaderBlockError::TooManyPairs(count));
        }
        let mut pairs = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let name = take_string(&mut block)?;
            if name.is_empty() {
                return Err(HeaderBlockError::EmptyName);
            }
            let value = take_string(&mut block)?;
            pairs.push((name, value));
        }
        Ok(Self(pairs))
    }
}

fn put_len(out: &mut Vec<u8>, len: usize) {
    out.put_u32(u32::try_from(len).unwrap_or(u32::MAX));
}

fn take_u32(block: &mut &[u8]) -> Result<u32, HeaderBlockError> {
    if block.len() < 4 {
        return Err(HeaderBlockError::Truncated);
    }
    Ok(block.get_u32())
}

fn take_string(block: &mut &[u8]) -> Result<String, HeaderBlockError> {
    let len = take_u32(block)? as usize;
    if block.len() < len {
        return Err(HeaderBlockError::Truncated);
    }
    let (text, rest) = block.split_at(len);
    *block = rest;
    String::from_utf8(text.to_vec()).map_err(HeaderBlockError::NotUtf8)
}

/// One direction's deflate stream.
pub(crate) struct Deflater(Compress);

impl Deflater {
    pub(crate) fn new() -> Result<Self, HeaderBlockError> {
        let mut zlib = Compress::new(Compression::default(), true);
        zlib.set_dictionary(dictionary())
            .map_err(HeaderBlockError::Deflate)?;
        Ok(Self(zlib))
    }

    /// `headers` deflated and sync-flushed, ready to follow a frame's fixed fields.
    pub(crate) fn deflate(&mut self, headers: &Headers) -> Result<Vec<u8>, HeaderBlockError> {
        let raw = headers.encode();
        let start = self.0.total_in();
        let mut out = Vec::with_capacity(raw.len() + 64);
        loop {
            let done = consumed(self.0.total_in(), start);
            self.0
                .compress_vec(&raw[done..], &mut out, FlushCompress::Sync)
                .map_err(HeaderBlockError::Deflate)?;
            // A sync flush is complete once it stops short of filling the output.
            if consumed(self.0.total_in(), start) == raw.len() && out.len() < out.capacity() {
                return Ok(out);
            }
            out.reserve(out.capacity().max(64));
        }
    }
}

/// One direction's inflate stream.
pub(crate) struct Inflater(Decompress);

impl Inflater {
    pub(crate) fn new() -> Self {
        Self(Decompress::new(true))
    }

    /// The headers in the next compressed block of this direction.
    pub(crate) fn inflate(&mut self, block: &[u8]) -> Result<Headers, HeaderBlockError> {
        let start = self.0.total_in();
        let mut out = Vec::with_capacity((block.len() * 4).clamp(64, MAX_INFLATED));
        loop {
            let before = (consumed(self.0.total_in(), start), out.len());
            if let Err(e) =
                self.0
                    .decompress_vec(&block[before.0..], &mut out, FlushDecompress::Sync)
            {
                // The first block names its dictionary; zlib refuses any but SPDY/3's.
                match e.needs_dictionary() {
                    Some(wanted) => {
                        self.0
                            .set_dictionary(dictionary())
                            .map_err(|_| HeaderBlockError::WrongDictionary(wanted))?;
                        continue;
                    }
                    None => return Err(HeaderBlockError::Inflate(e)),
                }
            }
            let after = (consumed(self.0.total_in(), start), out.len());
            if after.0 == block.len() && out.len() < out.capacity() {
                return Headers::decode(&out);
            }
            if out.len() == out.capacity() {
                if out.len() >= MAX_INFLATED {
                    return Err(HeaderBlockError::TooLarge);
                }
                out.reserve(out.len());
            } else if after == before {
                return Err(HeaderBlockError::Truncated);
            }
        }
    }
}

/// Bytes of this block taken so far, from zlib's running total.
fn consumed(total: u64, start: u64) -> usize {
    usize::try_from(total - start).unwrap_or(usize::MAX)
}
