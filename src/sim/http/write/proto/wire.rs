//! The protobuf wire format: wire types, and a reader over a byte slice.

use super::error::ProtoError;

pub(super) const VARINT: u8 = 0;
const FIXED64: u8 = 1;
pub(super) const LENGTH: u8 = 2;
const FIXED32: u8 = 5;

/// The protobuf wire format over a byte slice.
pub(super) struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn new(buf: &'a [u8]) -> Self {
        Self { buf, at: 0 }
    }

    pub(super) fn done(&self) -> bool {
        self.at >= self.buf.len()
    }

    pub(super) fn varint(&mut self) -> Result<u64, ProtoError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.buf.get(self.at).ok_or(ProtoError::Truncated)?;
            self.at += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(ProtoError::Overflow)
    }

    /// The next field's number and wire type; `None` at the end.
    pub(super) fn key(&mut self) -> Result<Option<(u32, u8)>, ProtoError> {
        if self.done() {
            return Ok(None);
        }
        let key = self.varint()?;
        let wire = (key & 7) as u8;
        if !matches!(wire, VARINT | FIXED64 | LENGTH | FIXED32) {
            return Err(ProtoError::WireType(wire));
        }
        let field = u32::try_from(key >> 3).map_err(|_| ProtoError::Overflow)?;
        Ok(Some((field, wire)))
    }

    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8], ProtoError> {
        let end = self.at.checked_add(n).ok_or(ProtoError::Truncated)?;
        let bytes = self.buf.get(self.at..end).ok_or(ProtoError::Truncated)?;
        self.at = end;
        Ok(bytes)
    }

    pub(super) fn bytes(&mut self) -> Result<&'a [u8], ProtoError> {
        let len = usize::try_from(self.varint()?).map_err(|_| ProtoError::Truncated)?;
        self.take(len)
    }

    pub(super) fn skip(&mut self, wire: u8) -> Result<(), ProtoError> {
        match wire {
            VARINT => self.varint().map(drop),
            FIXED64 => self.take(8).map(drop),
            LENGTH => self.bytes().map(drop),
            FIXED32 => self.take(4).map(drop),
            other => Err(ProtoError::WireType(other)),
        }
    }
}
