use bytes::{BufMut, Bytes, BytesMut};
use rand::{Rng, SeedableRng};
use tokio_util::codec::{Decoder, Encoder};

use super::dictionary::dictionary;
use super::frame::{Codec, FLAG_FIN, Frame, FrameError};
use super::header_block::{Deflater, HeaderBlockError, Headers, Inflater};

fn headers(pairs: &[(&str, &str)]) -> Headers {
    Headers(
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
    )
}

fn port_forward_headers(kind: &str, request: &str) -> Headers {
    headers(&[
        ("streamtype", kind),
        ("port", "8080"),
        ("requestid", request),
    ])
}

/// zlib's checksum, written out so the test does not trust the code it checks.
fn adler32(bytes: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in bytes {
        a = (a + u32::from(byte)) % 65521;
        b = (b + a) % 65521;
    }
    b << 16 | a
}

#[test]
fn the_dictionary_is_spdy3s() {
    let dict = dictionary();
    assert_eq!(dict.len(), 1423);
    assert_eq!(&dict[..11], b"\0\0\0\x07options");
    assert!(dict.ends_with(b"utf-,*,enq=0."));
    // The id every SPDY/3 peer's first header block names (zlib's FDICT field).
    assert_eq!(adler32(dict), 0xe3c6_a7c2);
}

#[test]
fn header_blocks_round_trip_on_one_zlib_stream() {
    let mut deflater = Deflater::new().unwrap();
    let mut inflater = Inflater::new();
    let blocks = [
        port_forward_headers("error", "0"),
        port_forward_headers("data", "0"),
        Headers::default(),
        headers(&[("many", "a\0b"), ("x-long", &"v".repeat(5000))]),
        port_forward_headers("error", "1"),
    ];
    for (i, block) in blocks.iter().enumerate() {
        let compressed = deflater.deflate(block).unwrap();
        if i == 0 {
            // A zlib header with FDICT set, then the dictionary's id.
            assert_eq!(compressed[0] & 0x0f, 8, "deflate");
            assert_ne!(compressed[1] & 0x20, 0, "FDICT");
            let id =
                u32::from_be_bytes([compressed[2], compressed[3], compressed[4], compressed[5]]);
            assert_eq!(id, adler32(dictionary()));
        }
        // Each block ends in a sync flush, so it inflates without the next one.
        assert!(compressed.ends_with(&[0, 0, 0xff, 0xff]), "block {i}");
        assert_eq!(&inflater.inflate(&compressed).unwrap(), block, "block {i}");
    }
    assert_eq!(blocks[3].get("many"), Some("a"));
    assert_eq!(blocks[0].get("StreamType"), Some("error"));
}

#[test]
fn a_block_deflated_without_spdys_dictionary_is_refused() {
    let mut other = flate2::Compress::new(flate2::Compression::default(), true);
    other.set_dictionary(b"not the spdy dictionary").unwrap();
    let mut compressed = Vec::with_capacity(256);
    other
        .compress_vec(
            &port_forward_headers("data", "0").encode(),
            &mut compressed,
            flate2::FlushCompress::Sync,
        )
        .unwrap();
    let err = Inflater::new().inflate(&compressed).unwrap_err();
    assert!(
        matches!(err, HeaderBlockError::WrongDictionary(id) if id == adler32(b"not the spdy dictionary")),
        "{err:?}"
    );
}

#[test]
fn raw_header_blocks_check_every_length() {
    let block = port_forward_headers("data", "7").encode();
    assert_eq!(
        Headers::decode(&block).unwrap(),
        port_forward_headers("data", "7")
    );
    for cut in 0..block.len() {
        assert!(Headers::decode(&block[..cut]).is_err(), "cut at {cut}");
    }
    let mut huge = Vec::new();
    huge.put_u32(u32::MAX);
    assert!(matches!(
        Headers::decode(&huge),
        Err(HeaderBlockError::TooManyPairs(u32::MAX))
    ));
    let mut unnamed = Vec::new();
    unnamed.put_u32(1);
    unnamed.put_u32(0);
    unnamed.put_u32(0);
    assert!(matches!(
        Headers::decode(&unnamed),
        Err(HeaderBlockError::EmptyName)
    ));
}

fn every_frame() -> Vec<Frame> {
    vec![
        Frame::SynStream {
            stream_id: 1,
            associated_to: 0,
            priority: 3,
            flags: 0,
            headers: port_forward_headers("error", "0"),
        },
        Frame::SynStream {
            stream_id: 3,
            associated_to: 1,
            priority: 0,
            flags: FLAG_FIN,
            headers: port_forward_headers("data", "0"),
        },
        Frame::SynReply {
            stream_id: 1,
            fin: false,
            headers: Headers::default(),
        },
        Frame::Headers {
            stream_id: 3,
            fin: true,
            headers: headers(&[("trailer", "yes")]),
        },
        Frame::Data {
            stream_id: 3,
            fin: false,
            data: Bytes::from_static(b"GET /healthz HTTP/1.1\r\n\r\n"),
        },
        Frame::Data {
            stream_id: 3,
            fin: true,
            data: Bytes::new(),
        },
        Frame::RstStream {
            stream_id: 3,
            status: super::rst::CANCEL,
        },
        Frame::Settings {
            flags: 1,
            entries: vec![(0, 4, 100), (1, 7, 65536)],
        },
        Frame::Ping { id: 1 },
        Frame::GoAway {
            last_good_stream_id: 3,
            status: super::goaway::OK,
        },
        Frame::WindowUpdate {
            stream_id: 3,
            delta: 65536,
        },
    ]
}

#[test]
fn every_frame_round_trips_whole_and_byte_by_byte() {
    let mut sender = Codec::new().unwrap();
    let mut wire = BytesMut::new();
    for frame in every_frame() {
        sender.encode(frame, &mut wire).unwrap();
    }
    let mut whole = Codec::new().unwrap();
    let mut all = wire.clone();
    let mut decoded = Vec::new();
    while let Some(frame) = whole.decode(&mut all).unwrap() {
        decoded.push(frame);
    }
    assert_eq!(decoded, every_frame());
    assert!(all.is_empty());

    // A frame split anywhere waits for its rest.
    let mut trickle = Codec::new().unwrap();
    let mut buffer = BytesMut::new();
    let mut decoded = Vec::new();
    for byte in wire {
        buffer.put_u8(byte);
        if let Some(frame) = trickle.decode(&mut buffer).unwrap() {
            decoded.push(frame);
        }
    }
    assert_eq!(decoded, every_frame());
}

#[test]
fn the_wire_layout_is_spdys() {
    let mut codec = Codec::new().unwrap();
    let mut wire = BytesMut::new();
    codec.encode(Frame::Ping { id: 7 }, &mut wire).unwrap();
    assert_eq!(&wire[..], [0x80, 3, 0, 6, 0, 0, 0, 4, 0, 0, 0, 7]);
    wire.clear();
    let data = Frame::Data {
        stream_id: 5,
        fin: true,
        data: Bytes::from_static(b"ok"),
    };
    codec.encode(data, &mut wire).unwrap();
    assert_eq!(&wire[..], [0, 0, 0, 5, 1, 0, 0, 2, b'o', b'k']);
}

/// A control frame's head with the given version, type and body.
fn control(version: u16, kind: u16, body: &[u8]) -> BytesMut {
    let mut wire = BytesMut::new();
    wire.put_u16(0x8000 | version);
    wire.put_u16(kind);
    wire.put_u32(u32::try_from(body.len()).unwrap());
    wire.put_slice(body);
    wire
}

#[test]
fn malformed_frames_are_typed_errors() {
    let decode = |mut wire: BytesMut| Codec::new().unwrap().decode(&mut wire);
    assert!(matches!(
        decode(control(2, 6, &[0, 0, 0, 1])),
        Err(FrameError::Version(2))
    ));
    assert!(matches!(
        decode(control(3, 3, &[0, 0, 0, 1])),
        Err(FrameError::Length { kind: 3, length: 4 })
    ));
    assert!(matches!(
        decode(control(3, 1, &[0; 9])),
        Err(FrameError::Length { kind: 1, .. })
    ));
    assert!(matches!(
        decode(control(3, 4, &[0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1])),
        Err(FrameError::Length { kind: 4, .. })
    ));
    let mut garbage = vec![0, 0, 0, 1];
    garbage.extend_from_slice(b"not zlib at all");
    assert!(matches!(
        decode(control(3, 2, &garbage)),
        Err(FrameError::HeaderBlock(HeaderBlockError::Inflate(_)))
    ));
    // A type SPDY/3.1 does not define is passed on to be ignored.
    assert!(matches!(
        decode(control(3, 5, &[])),
        Ok(Some(Frame::Unknown { kind: 5 }))
    ));
    let too_long = Frame::Data {
        stream_id: 1,
        fin: false,
        data: Bytes::from(vec![0; super::frame::MAX_LENGTH + 1]),
    };
    assert!(matches!(
        Codec::new().unwrap().encode(too_long, &mut BytesMut::new()),
        Err(FrameError::TooLong(_))
    ));
}

#[test]
fn random_and_mangled_bytes_never_panic() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(34);
    let mut valid = BytesMut::new();
    let mut sender = Codec::new().unwrap();
    for frame in every_frame() {
        sender.encode(frame, &mut valid).unwrap();
    }
    for round in 0..2000 {
        let mut wire = if round % 2 == 0 {
            // Real frames with a few bytes flipped: headers and compressed blocks go wrong.
            let mut wire = valid.clone();
            for _ in 0..rng.random_range(1..4) {
                let at = rng.random_range(0..wire.len());
                wire[at] ^= rng.random::<u8>() | 1;
            }
            wire
        } else {
            let len = rng.random_range(0..64);
            let mut wire = BytesMut::from(&(0..len).map(|_| rng.random()).collect::<Vec<u8>>()[..]);
            if len > 1 && rng.random() {
                wire[0] = 0x80;
                wire[1] = 3;
            }
            wire
        };
        let mut codec = Codec::new().unwrap();
        while let Ok(Some(_)) = codec.decode(&mut wire) {}
    }
}
