//! SPDY/3.1 frames and their codec. Every frame has an eight-byte head: a control frame
//! starts with the control bit, the version (3) and its type; a data frame with its stream
//! id; then eight bits of flags and a 24-bit length of what follows.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

use super::header_block::{Deflater, HeaderBlockError, Headers, Inflater};

pub(crate) const VERSION: u16 = 3;
/// The sender's last frame on a stream (DATA, SYN_STREAM, SYN_REPLY, HEADERS).
pub(crate) const FLAG_FIN: u8 = 0x01;
/// A frame's length field is 24 bits.
pub(crate) const MAX_LENGTH: usize = (1 << 24) - 1;
const HEAD: usize = 8;
const CONTROL: u32 = 0x8000_0000;
const STREAM_ID: u32 = 0x7fff_ffff;

const SYN_STREAM: u16 = 1;
const SYN_REPLY: u16 = 2;
const RST_STREAM: u16 = 3;
const SETTINGS: u16 = 4;
const PING: u16 = 6;
const GOAWAY: u16 = 7;
const HEADERS: u16 = 8;
const WINDOW_UPDATE: u16 = 9;

/// RST_STREAM's status codes that the sim sends.
pub(crate) mod rst {
    pub(crate) const PROTOCOL_ERROR: u32 = 1;
    pub(crate) const CANCEL: u32 = 5;
}

/// GOAWAY's status codes that the sim sends.
pub(crate) mod goaway {
    pub(crate) const OK: u32 = 0;
    pub(crate) const PROTOCOL_ERROR: u32 = 1;
}

/// One frame, its header block (if any) already inflated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Frame {
    SynStream {
        stream_id: u32,
        associated_to: u32,
        priority: u8,
        flags: u8,
        headers: Headers,
    },
    SynReply {
        stream_id: u32,
        fin: bool,
        headers: Headers,
    },
    RstStream {
        stream_id: u32,
        status: u32,
    },
    /// (flags, id, value) triples; the sim does no flow control, as spdystream does none.
    Settings {
        flags: u8,
        entries: Vec<(u8, u32, u32)>,
    },
    Ping {
        id: u32,
    },
    GoAway {
        last_good_stream_id: u32,
        status: u32,
    },
    Headers {
        stream_id: u32,
        fin: bool,
        headers: Headers,
    },
    WindowUpdate {
        stream_id: u32,
        delta: u32,
    },
    Data {
        stream_id: u32,
        fin: bool,
        data: Bytes,
    },
    /// A control frame type SPDY/3.1 does not define: the draft says to ignore it.
    Unknown {
        kind: u16,
    },
}

/// Why the byte stream is not SPDY/3.1 any more; the connection cannot go on after one.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FrameError {
    #[error("SPDY version {0} is not served (only 3)")]
    Version(u16),
    #[error("control frame type {kind} has length {length}, which it cannot have")]
    Length { kind: u16, length: usize },
    #[error("a frame of {0} bytes does not fit SPDY's 24-bit length")]
    TooLong(usize),
    #[error(transparent)]
    HeaderBlock(#[from] HeaderBlockError),
    #[error("the connection failed")]
    Io(#[from] std::io::Error),
}

/// Frames to and from one connection: the two zlib streams of its header blocks live here,
/// so one codec serves one connection from its first byte to its last.
pub(crate) struct Codec {
    inflater: Inflater,
    deflater: Deflater,
}

impl Codec {
    pub(crate) fn new() -> Result<Self, FrameError> {
        Ok(Self {
            inflater: Inflater::new(),
            deflater: Deflater::new()?,
        })
    }
}

impl Decoder for Codec {
    type Item = Frame;
    type Error = FrameError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        if src.len() < HEAD {
            return Ok(None);
        }
        let length = usize::from(src[5]) << 16 | usize::from(src[6]) << 8 | usize::from(src[7]);
        if src.len() < HEAD + length {
            src.reserve(HEAD + length - src.len());
            return Ok(None);
        }
        let mut head = src.split_to(HEAD);
        let body = src.split_to(length).freeze();
        let first = head.get_u32();
        let flags = head.get_u8();
        if first & CONTROL == 0 {
            return Ok(Some(Frame::Data {
                stream_id: first & STREAM_ID,
                fin: flags & FLAG_FIN != 0,
                data: body,
            }));
        }
        let version = ((first >> 16) & 0x7fff) as u16;
        if version != VERSION {
            return Err(FrameError::Version(version));
        }
        let kind = (first & 0xffff) as u16;
        self.control(kind, flags, body).map(Some)
    }
}

impl Codec {
    /// A control frame's body, checked against the length its type requires.
    fn control(&mut self, kind: u16, flags: u8, mut body: Bytes) -> Result<Frame, FrameError> {
        let length = body.len();
        let wrong = || FrameError::Length { kind, length };
        let fixed = match kind {
            SYN_STREAM => 10,
            SYN_REPLY | HEADERS => 4,
            RST_STREAM | GOAWAY | WINDOW_UPDATE => 8,
            SETTINGS | PING => 4,
            _ => return Ok(Frame::Unknown { kind }),
        };
        let exact = matches!(kind, RST_STREAM | GOAWAY | WINDOW_UPDATE | PING);
        if length < fixed || (exact && length != fixed) {
            return Err(wrong());
        }
        let fin = flags & FLAG_FIN != 0;
        Ok(match kind {
            SYN_STREAM => {
                let stream_id = body.get_u32() & STREAM_ID;
                let associated_to = body.get_u32() & STREAM_ID;
                let priority = body.get_u8() >> 5;
                body.advance(1); // the credential slot, unused
                Frame::SynStream {
                    stream_id,
                    associated_to,
                    priority,
                    flags,
                    headers: self.inflater.inflate(&body)?,
                }
            }
            SYN_REPLY | HEADERS => {
                let stream_id = body.get_u32() & STREAM_ID;
                let headers = self.inflater.inflate(&body)?;
                if kind == SYN_REPLY {
                    Frame::SynReply {
                        stream_id,
                        fin,
                        headers,
                    }
                } else {
                    Frame::Headers {
                        stream_id,
                        fin,
                        headers,
                    }
                }
            }
            RST_STREAM => Frame::RstStream {
                stream_id: body.get_u32() & STREAM_ID,
                status: body.get_u32(),
            },
            SETTINGS => {
                let count = body.get_u32() as usize;
                if count.checked_mul(8) != Some(body.len()) {
                    return Err(wrong());
                }
                let entries = (0..count)
                    .map(|_| {
                        let flag_id = body.get_u32();
                        ((flag_id >> 24) as u8, flag_id & 0x00ff_ffff, body.get_u32())
                    })
                    .collect();
                Frame::Settings { flags, entries }
            }
            PING => Frame::Ping { id: body.get_u32() },
            GOAWAY => Frame::GoAway {
                last_good_stream_id: body.get_u32() & STREAM_ID,
                status: body.get_u32(),
            },
            _ => Frame::WindowUpdate {
                stream_id: body.get_u32() & STREAM_ID,
                delta: body.get_u32() & STREAM_ID,
            },
        })
    }
}

impl Encoder<Frame> for Codec {
    type Error = FrameError;

    fn encode(&mut self, frame: Frame, dst: &mut BytesMut) -> Result<(), FrameError> {
        let (kind, flags, body): (u16, u8, Vec<u8>) = match frame {
            Frame::Data {
                stream_id,
                fin,
                data,
            } => {
                let length = frame_length(data.len())?;
                dst.reserve(HEAD + data.len());
                dst.put_u32(stream_id & STREAM_ID);
                dst.put_u32(u32::from(u8::from(fin)) << 24 | length);
                dst.put_slice(&data);
                return Ok(());
            }
            Frame::SynStream {
                stream_id,
                associated_to,
                priority,
                flags,
                headers,
            } => {
                let mut body = Vec::new();
                body.put_u32(stream_id & STREAM_ID);
                body.put_u32(associated_to & STREAM_ID);
                body.put_u8(priority << 5);
                body.put_u8(0);
                body.extend(self.deflater.deflate(&headers)?);
                (SYN_STREAM, flags, body)
            }
            Frame::SynReply {
                stream_id,
                fin,
                headers,
            } => (
                SYN_REPLY,
                u8::from(fin),
                self.with_headers(stream_id, &headers)?,
            ),
            Frame::Headers {
                stream_id,
                fin,
                headers,
            } => (
                HEADERS,
                u8::from(fin),
                self.with_headers(stream_id, &headers)?,
            ),
            Frame::RstStream { stream_id, status } => (RST_STREAM, 0, pair(stream_id, status)),
            Frame::Settings { flags, entries } => {
                let mut body = Vec::new();
                body.put_u32(u32::try_from(entries.len()).unwrap_or(u32::MAX));
                for (flag, id, value) in entries {
                    body.put_u32(u32::from(flag) << 24 | (id & 0x00ff_ffff));
                    body.put_u32(value);
                }
                (SETTINGS, flags, body)
            }
            Frame::Ping { id } => (PING, 0, id.to_be_bytes().to_vec()),
            Frame::GoAway {
                last_good_stream_id,
                status,
            } => (GOAWAY, 0, pair(last_good_stream_id, status)),
            Frame::WindowUpdate { stream_id, delta } => {
                (WINDOW_UPDATE, 0, pair(stream_id, delta & STREAM_ID))
            }
            Frame::Unknown { kind } => (kind, 0, Vec::new()),
        };
        let length = frame_length(body.len())?;
        dst.reserve(HEAD + body.len());
        dst.put_u32(CONTROL | u32::from(VERSION) << 16 | u32::from(kind));
        dst.put_u32(u32::from(flags) << 24 | length);
        dst.put_slice(&body);
        Ok(())
    }
}

impl Codec {
    fn with_headers(&mut self, stream_id: u32, headers: &Headers) -> Result<Vec<u8>, FrameError> {
        let mut body = Vec::new();
        body.put_u32(stream_id & STREAM_ID);
        body.extend(self.deflater.deflate(headers)?);
        Ok(body)
    }
}

/// A stream id (31 bits) then a 32-bit value: RST_STREAM, GOAWAY and WINDOW_UPDATE.
fn pair(stream_id: u32, value: u32) -> Vec<u8> {
    let mut body = Vec::with_capacity(8);
    body.put_u32(stream_id & STREAM_ID);
    body.put_u32(value);
    body
}

fn frame_length(len: usize) -> Result<u32, FrameError> {
    if len > MAX_LENGTH {
        return Err(FrameError::TooLong(len));
    }
    u32::try_from(len).map_err(|_| FrameError::TooLong(len))
}
