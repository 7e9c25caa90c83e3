//! The recording file: a header, then append-only blocks of records, each compressed with
//! zstd and checked with a CRC-32, so that a file cut short by a crash or a kill is read up
//! to its last whole block and the damage is reported, not guessed past. `docs/recording.md`
//! is the byte-level description.

use std::io::{self, Read, Seek, SeekFrom, Write};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The first bytes of every recording.
pub const MAGIC: &[u8; 8] = b"KSCPREC\0";
/// The layout version this code writes and reads.
pub const FORMAT_VERSION: u16 = 1;
/// The zstd level blocks are written at. Measured on pod status churn (`benches/recording.rs`,
/// docs/benchmarks.md), level 1 wrote 13% fewer bytes per event than zstd's default 3 and was
/// no slower, so the recorder takes it.
pub const ZSTD_LEVEL: i32 = 1;
/// A block is written when this many uncompressed bytes are pending: large enough for zstd to
/// find the repetition between events of one object, small enough that a crash loses little.
pub const BLOCK_BYTES: usize = 512 * 1024;

/// The bounds a reader applies before allocating: a damaged length field must not ask for
/// gigabytes (a block's decompressed size is bounded while it is read).
const MAX_HEADER_BYTES: u32 = 1 << 20;
const MAX_COMPRESSED_BYTES: u32 = 1 << 30;
/// type(1) reserved(3) records(4) compressed(4) raw(4) first_at(8) last_at(8) max_rv(8).
const BLOCK_HEADER_BYTES: usize = 40;

/// What a recording says about itself, before any block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Header {
    /// The layout version ([`FORMAT_VERSION`]).
    pub format_version: u16,
    /// The kscope that wrote it.
    pub kscope_version: String,
    /// The kubeconfig context recorded, if one was named.
    pub context: Option<String>,
    /// The API server's URL.
    pub server: String,
    /// The resources recorded, as kscope names them (`pods`, `deployments.apps`).
    pub kinds: Vec<String>,
    /// The namespace recorded, or none for all namespaces.
    pub namespace: Option<String>,
    /// When the recording started, RFC 3339.
    pub start_time: String,
}

/// One thing that crossed the line between the Reflector and the API server. Times are
/// microseconds since the Unix epoch, when kscope received it. Externally tagged
/// (`{"event":{...}}`): an internal tag would have serde buffer every raw object.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Record {
    /// One page of a list (a relist, or the initial list). The list's state is whole once a
    /// page comes with no `next` continue token.
    #[serde(rename_all = "camelCase")]
    List {
        kind: String,
        at: i64,
        /// The resourceVersion asked for ("" for the most recent, "0" for any).
        requested: String,
        /// The continue token this page was asked with: none on the first page.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        continued: Option<String>,
        /// The list's resourceVersion.
        resource_version: String,
        /// The continue token of the page after this one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        next: Option<String>,
        items: Vec<Box<RawValue>>,
    },
    /// A watch was started from `resource_version` (a restart, when one ran before).
    #[serde(rename_all = "camelCase")]
    WatchStart {
        kind: String,
        at: i64,
        resource_version: String,
        /// A watch-list: the state comes first, as ADDED events, ended by a bookmark.
        #[serde(default)]
        send_initial_events: bool,
    },
    /// One watch event: ADDED, MODIFIED, DELETED, BOOKMARK or ERROR, with its object (the
    /// Status of an ERROR) as sent, but for Secret values.
    #[serde(rename_all = "camelCase")]
    Event {
        kind: String,
        at: i64,
        #[serde(rename = "type")]
        event_type: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resource_version: Option<String>,
        object: Box<RawValue>,
    },
    /// A watch stream ended: cleanly (the server's timeout, a closed connection), or with
    /// `error`.
    #[serde(rename_all = "camelCase")]
    WatchEnd {
        kind: String,
        at: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// A list or watch call failed; `code` is the HTTP status when the server answered (410:
    /// the resourceVersion is too old).
    #[serde(rename_all = "camelCase")]
    Error {
        kind: String,
        at: i64,
        verb: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<u16>,
        message: String,
    },
    /// The whole store of one kind at `at` (in keyframe blocks only): a reader seeking needs
    /// no block before it.
    #[serde(rename_all = "camelCase")]
    Keyframe {
        kind: String,
        at: i64,
        resource_version: String,
        objects: Vec<Box<RawValue>>,
    },
}

impl Record {
    pub fn kind(&self) -> &str {
        match self {
            Self::List { kind, .. }
            | Self::WatchStart { kind, .. }
            | Self::Event { kind, .. }
            | Self::WatchEnd { kind, .. }
            | Self::Error { kind, .. }
            | Self::Keyframe { kind, .. } => kind,
        }
    }

    pub fn at(&self) -> i64 {
        match self {
            Self::List { at, .. }
            | Self::WatchStart { at, .. }
            | Self::Event { at, .. }
            | Self::WatchEnd { at, .. }
            | Self::Error { at, .. }
            | Self::Keyframe { at, .. } => *at,
        }
    }

    /// The resourceVersion the record moves its kind to, if it moves it.
    pub fn resource_version(&self) -> Option<&str> {
        match self {
            Self::List {
                resource_version, ..
            }
            | Self::Keyframe {
                resource_version, ..
            } => Some(resource_version),
            Self::Event {
                resource_version, ..
            } => resource_version.as_deref(),
            _ => None,
        }
    }
}

/// Whether a block holds events or a keyframe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockType {
    Events = 1,
    Keyframe = 2,
}

/// A block's header, read without decompressing it: enough to pick the keyframe a seek
/// starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockInfo {
    /// Where the block starts in the file.
    pub offset: u64,
    pub block_type: BlockType,
    pub records: u32,
    pub compressed_len: u32,
    pub raw_len: u32,
    /// The first and last record's receive time (µs since the epoch).
    pub first_at: i64,
    pub last_at: i64,
    /// The highest resourceVersion in the block read as an integer (what kube-apiserver's
    /// are), 0 when none is.
    pub max_rv: u64,
    crc: u32,
}

/// What went wrong reading or writing a recording.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("reading or writing the recording: {0}")]
    Io(#[from] io::Error),
    #[error("not a kscope recording (its first bytes are not {MAGIC:?})")]
    NotARecording,
    #[error(
        "recording format version {0} is not one this kscope reads (it reads {FORMAT_VERSION})"
    )]
    UnsupportedVersion(u16),
    #[error("the recording's header is damaged: {0}")]
    BadHeader(String),
    #[error("the recording is damaged at byte {offset}: {reason}; everything before it was read")]
    Damaged { offset: u64, reason: String },
    #[error("encoding a record: {0}")]
    Encode(#[source] serde_json::Error),
}

/// Appends records to a recording, a block at a time.
pub struct Writer<W: Write> {
    out: W,
    pending: Vec<u8>,
    pending_records: u32,
    first_at: i64,
    last_at: i64,
    max_rv: u64,
    /// Bytes written so far, header included.
    written: u64,
    level: i32,
}

impl<W: Write> Writer<W> {
    /// Writes the header. Blocks follow as records are appended.
    pub fn new(out: W, header: &Header) -> Result<Self, RecordError> {
        Self::with_level(out, header, ZSTD_LEVEL)
    }

    /// As [`Writer::new`] at another zstd level (the benchmark compares them).
    pub fn with_level(mut out: W, header: &Header, level: i32) -> Result<Self, RecordError> {
        let json = serde_json::to_vec(header).map_err(RecordError::Encode)?;
        let len = u32::try_from(json.len())
            .map_err(|_| RecordError::BadHeader("header too large".into()))?;
        out.write_all(MAGIC)?;
        out.write_all(&FORMAT_VERSION.to_le_bytes())?;
        out.write_all(&len.to_le_bytes())?;
        out.write_all(&json)?;
        out.write_all(&crc32fast::hash(&json).to_le_bytes())?;
        out.flush()?;
        Ok(Self {
            out,
            pending: Vec::with_capacity(BLOCK_BYTES + BLOCK_BYTES / 4),
            pending_records: 0,
            first_at: 0,
            last_at: 0,
            max_rv: 0,
            written: (MAGIC.len() + 2 + 4 + json.len() + 4) as u64,
            level,
        })
    }

    /// Adds a record to the pending block, written once [`BLOCK_BYTES`] are pending.
    pub fn append(&mut self, record: &Record) -> Result<(), RecordError> {
        self.add(record)?;
        if self.pending.len() >= BLOCK_BYTES {
            self.flush_block(BlockType::Events)?;
        }
        Ok(())
    }

    /// Writes what is pending as a block of its own, so that it survives a crash.
    pub fn flush(&mut self) -> Result<(), RecordError> {
        self.flush_block(BlockType::Events)?;
        self.out.flush()?;
        Ok(())
    }

    /// Writes a keyframe block: the pending events first, then one [`Record::Keyframe`] per
    /// kind.
    pub fn keyframe(&mut self, keyframes: &[Record]) -> Result<(), RecordError> {
        self.flush_block(BlockType::Events)?;
        for record in keyframes {
            self.add(record)?;
        }
        self.flush_block(BlockType::Keyframe)?;
        self.out.flush()?;
        Ok(())
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Flushes and hands the output back.
    pub fn finish(mut self) -> Result<W, RecordError> {
        self.flush()?;
        Ok(self.out)
    }

    fn add(&mut self, record: &Record) -> Result<(), RecordError> {
        serde_json::to_writer(&mut self.pending, record).map_err(RecordError::Encode)?;
        self.pending.push(b'\n');
        let at = record.at();
        if self.pending_records == 0 {
            self.first_at = at;
        }
        self.last_at = at;
        if let Some(rv) = record
            .resource_version()
            .and_then(|rv| rv.parse::<u64>().ok())
        {
            self.max_rv = self.max_rv.max(rv);
        }
        self.pending_records += 1;
        Ok(())
    }

    fn flush_block(&mut self, block_type: BlockType) -> Result<(), RecordError> {
        if self.pending_records == 0 {
            return Ok(());
        }
        let compressed = zstd::bulk::compress(&self.pending, self.level)?;
        let too_large = |what: &str| RecordError::Io(io::Error::other(format!("{what} too large")));
        let mut header = [0u8; BLOCK_HEADER_BYTES];
        header[0] = block_type as u8;
        header[4..8].copy_from_slice(&self.pending_records.to_le_bytes());
        let compressed_len = u32::try_from(compressed.len()).map_err(|_| too_large("block"))?;
        header[8..12].copy_from_slice(&compressed_len.to_le_bytes());
        let raw_len = u32::try_from(self.pending.len()).map_err(|_| too_large("block"))?;
        header[12..16].copy_from_slice(&raw_len.to_le_bytes());
        header[16..24].copy_from_slice(&self.first_at.to_le_bytes());
        header[24..32].copy_from_slice(&self.last_at.to_le_bytes());
        header[32..40].copy_from_slice(&self.max_rv.to_le_bytes());
        let mut crc = crc32fast::Hasher::new();
        crc.update(&header);
        crc.update(&compressed);
        // One write per block, so a crash leaves at most the last block cut.
        let mut block = Vec::with_capacity(BLOCK_HEADER_BYTES + 4 + compressed.len());
        block.extend_from_slice(&header);
        block.extend_from_slice(&crc.finalize().to_le_bytes());
        block.extend_from_slice(&compressed);
        self.out.write_all(&block)?;
        self.written += block.len() as u64;
        self.pending.clear();
        self.pending_records = 0;
        self.max_rv = 0;
        Ok(())
    }
}

/// Reads a recording's blocks in order.
pub struct Reader<R: Read> {
    input: R,
    header: Header,
    offset: u64,
}

impl<R: Read> Reader<R> {
    /// Reads and checks the header.
    pub fn new(mut input: R) -> Result<Self, RecordError> {
        let mut magic = [0u8; 8];
        input
            .read_exact(&mut magic)
            .map_err(|_| RecordError::NotARecording)?;
        if &magic != MAGIC {
            return Err(RecordError::NotARecording);
        }
        let mut fixed = [0u8; 6];
        input
            .read_exact(&mut fixed)
            .map_err(|e| RecordError::BadHeader(e.to_string()))?;
        let version = u16::from_le_bytes([fixed[0], fixed[1]]);
        if version != FORMAT_VERSION {
            return Err(RecordError::UnsupportedVersion(version));
        }
        let len = u32::from_le_bytes([fixed[2], fixed[3], fixed[4], fixed[5]]);
        if len > MAX_HEADER_BYTES {
            return Err(RecordError::BadHeader(format!("{len} bytes long")));
        }
        let mut json = vec![0u8; len as usize];
        let mut crc = [0u8; 4];
        input
            .read_exact(&mut json)
            .and_then(|()| input.read_exact(&mut crc))
            .map_err(|e| RecordError::BadHeader(e.to_string()))?;
        if crc32fast::hash(&json) != u32::from_le_bytes(crc) {
            return Err(RecordError::BadHeader("checksum mismatch".into()));
        }
        let header: Header =
            serde_json::from_slice(&json).map_err(|e| RecordError::BadHeader(e.to_string()))?;
        Ok(Self {
            input,
            header,
            offset: (8 + 6 + json.len() + 4) as u64,
        })
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The next block's header and records; `None` at a clean end. A cut or corrupt block is
    /// [`RecordError::Damaged`], and every block before it was whole.
    pub fn next_block(&mut self) -> Result<Option<(BlockInfo, Vec<Record>)>, RecordError> {
        self.next_block_if(|_| true)
    }

    /// As [`Reader::next_block`], but a block `decode` refuses is only checked (its lengths
    /// and checksum), not decompressed, and comes with no records: a reader that folds the
    /// events itself skips the keyframes at the cost of a checksum.
    pub fn next_block_if(
        &mut self,
        decode: impl FnOnce(&BlockInfo) -> bool,
    ) -> Result<Option<(BlockInfo, Vec<Record>)>, RecordError> {
        let Some(info) = self.next_info()? else {
            return Ok(None);
        };
        let mut compressed = Vec::new();
        (&mut self.input)
            .take(u64::from(info.compressed_len))
            .read_to_end(&mut compressed)?;
        check_block(&info, &compressed)?;
        let records = if decode(&info) {
            decode_block(&info, &compressed)?
        } else {
            Vec::new()
        };
        self.offset += (BLOCK_HEADER_BYTES + 4) as u64 + u64::from(info.compressed_len);
        Ok(Some((info, records)))
    }

    fn next_info(&mut self) -> Result<Option<BlockInfo>, RecordError> {
        let mut bytes = [0u8; BLOCK_HEADER_BYTES + 4];
        let mut filled = 0;
        while filled < bytes.len() {
            match self.input.read(&mut bytes[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        if filled == 0 {
            return Ok(None);
        }
        if filled < bytes.len() {
            return Err(damaged(self.offset, "the file ends inside a block header"));
        }
        parse_info(self.offset, &bytes).map(Some)
    }
}

impl<R: Read + Seek> Reader<R> {
    /// Every block's header, reading no payload: the index a seek picks its keyframe from.
    /// Stops at the first damaged header, which it returns beside the blocks before it.
    pub fn index(&mut self) -> Result<(Vec<BlockInfo>, Option<RecordError>), RecordError> {
        let start = self.offset;
        let end = self.input.seek(SeekFrom::End(0))?;
        self.input.seek(SeekFrom::Start(start))?;
        let mut blocks = Vec::new();
        let damage = loop {
            match self.next_info() {
                Ok(None) => break None,
                Ok(Some(info)) => {
                    let next = info.offset
                        + (BLOCK_HEADER_BYTES + 4) as u64
                        + u64::from(info.compressed_len);
                    if next > end {
                        break Some(damaged(info.offset, "the file ends inside a block"));
                    }
                    blocks.push(info);
                    self.offset = next;
                    self.input.seek(SeekFrom::Start(next))?;
                }
                Err(e) => break Some(e),
            }
        };
        self.offset = start;
        self.input.seek(SeekFrom::Start(start))?;
        Ok((blocks, damage))
    }

    /// Moves to the block starting at `offset` (one from [`Reader::index`]).
    pub fn seek_block(&mut self, offset: u64) -> Result<(), RecordError> {
        self.input.seek(SeekFrom::Start(offset))?;
        self.offset = offset;
        Ok(())
    }
}

fn damaged(offset: u64, reason: impl Into<String>) -> RecordError {
    RecordError::Damaged {
        offset,
        reason: reason.into(),
    }
}

fn parse_info(offset: u64, bytes: &[u8; BLOCK_HEADER_BYTES + 4]) -> Result<BlockInfo, RecordError> {
    let u32_at =
        |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    let u64_at = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&bytes[i..i + 8]);
        u64::from_le_bytes(b)
    };
    let block_type = match bytes[0] {
        1 => BlockType::Events,
        2 => BlockType::Keyframe,
        other => return Err(damaged(offset, format!("unknown block type {other}"))),
    };
    let info = BlockInfo {
        offset,
        block_type,
        records: u32_at(4),
        compressed_len: u32_at(8),
        raw_len: u32_at(12),
        first_at: u64_at(16) as i64,
        last_at: u64_at(24) as i64,
        max_rv: u64_at(32),
        crc: u32_at(BLOCK_HEADER_BYTES),
    };
    if info.compressed_len > MAX_COMPRESSED_BYTES {
        return Err(damaged(offset, "a block length is out of bounds"));
    }
    Ok(info)
}

/// Checks one block's payload against its header: whole, and its checksum.
fn check_block(info: &BlockInfo, compressed: &[u8]) -> Result<(), RecordError> {
    if compressed.len() != info.compressed_len as usize {
        return Err(damaged(info.offset, "the file ends inside a block"));
    }
    let mut header = [0u8; BLOCK_HEADER_BYTES];
    header[0] = info.block_type as u8;
    header[4..8].copy_from_slice(&info.records.to_le_bytes());
    header[8..12].copy_from_slice(&info.compressed_len.to_le_bytes());
    header[12..16].copy_from_slice(&info.raw_len.to_le_bytes());
    header[16..24].copy_from_slice(&info.first_at.to_le_bytes());
    header[24..32].copy_from_slice(&info.last_at.to_le_bytes());
    header[32..40].copy_from_slice(&info.max_rv.to_le_bytes());
    let mut crc = crc32fast::Hasher::new();
    crc.update(&header);
    crc.update(compressed);
    if crc.finalize() != info.crc {
        return Err(damaged(info.offset, "block checksum mismatch"));
    }
    Ok(())
}

/// Decompresses one checked block's payload into its records.
fn decode_block(info: &BlockInfo, compressed: &[u8]) -> Result<Vec<Record>, RecordError> {
    // Read through a bound of the declared size, so a lying length cannot grow the buffer
    // past it.
    let mut raw = Vec::new();
    zstd::stream::read::Decoder::new(compressed)
        .and_then(|d| d.take(u64::from(info.raw_len) + 1).read_to_end(&mut raw))
        .map_err(|e| damaged(info.offset, format!("block does not decompress: {e}")))?;
    if raw.len() != info.raw_len as usize {
        return Err(damaged(info.offset, "block size differs from its header"));
    }
    let records = raw
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .map(serde_json::from_slice::<Record>)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| damaged(info.offset, format!("a record does not decode: {e}")))?;
    if records.len() != info.records as usize {
        return Err(damaged(info.offset, "record count differs from its header"));
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header {
            format_version: FORMAT_VERSION,
            kscope_version: "test".into(),
            context: None,
            server: "https://127.0.0.1:1".into(),
            kinds: vec!["pods".into()],
            namespace: None,
            start_time: "2026-01-01T00:00:00Z".into(),
        }
    }

    fn event(rv: u64) -> Record {
        Record::Event {
            kind: "pods".into(),
            at: rv as i64,
            event_type: "MODIFIED".into(),
            resource_version: Some(rv.to_string()),
            object: RawValue::from_string(format!(
                r#"{{"metadata":{{"namespace":"ns","name":"p","resourceVersion":"{rv}"}}}}"#
            ))
            .unwrap(),
        }
    }

    fn written(blocks: u64) -> Vec<u8> {
        let mut writer = Writer::new(Vec::new(), &header()).unwrap();
        for block in 0..blocks {
            writer.append(&event(block * 2 + 1)).unwrap();
            writer.append(&event(block * 2 + 2)).unwrap();
            writer.flush().unwrap();
        }
        writer.finish().unwrap()
    }

    fn read_all(bytes: &[u8]) -> (Vec<Record>, Option<RecordError>) {
        let mut reader = Reader::new(bytes).unwrap();
        let mut records = Vec::new();
        loop {
            match reader.next_block() {
                Ok(Some((_, block))) => records.extend(block),
                Ok(None) => return (records, None),
                Err(e) => return (records, Some(e)),
            }
        }
    }

    #[test]
    fn records_come_back_in_order_with_their_header() {
        let bytes = written(3);
        assert_eq!(Reader::new(&bytes[..]).unwrap().header(), &header());
        let (records, damage) = read_all(&bytes);
        assert!(damage.is_none());
        let rvs: Vec<_> = records
            .iter()
            .filter_map(Record::resource_version)
            .collect();
        assert_eq!(rvs, ["1", "2", "3", "4", "5", "6"]);
    }

    #[test]
    fn a_cut_tail_is_reported_and_the_blocks_before_it_are_read() {
        let bytes = written(3);
        let (blocks, _) = Reader::new(std::io::Cursor::new(&bytes))
            .unwrap()
            .index()
            .unwrap();
        for cut in [bytes.len() - 1, blocks[2].offset as usize + 10] {
            let (records, damage) = read_all(&bytes[..cut]);
            assert_eq!(records.len(), 4, "cut at {cut}");
            assert!(
                matches!(damage, Some(RecordError::Damaged { offset, .. }) if offset == blocks[2].offset)
            );
            let (index, damage) = Reader::new(std::io::Cursor::new(&bytes[..cut]))
                .unwrap()
                .index()
                .unwrap();
            assert_eq!(index.len(), 2);
            assert!(damage.is_some());
        }
    }

    #[test]
    fn a_flipped_byte_fails_the_checksum() {
        let mut bytes = written(2);
        let last = bytes.len() - 3;
        bytes[last] ^= 0x40;
        let (records, damage) = read_all(&bytes);
        assert_eq!(records.len(), 2);
        assert!(matches!(damage, Some(RecordError::Damaged { .. })));
    }

    #[test]
    fn a_skipped_block_is_checked_not_decoded() {
        let bytes = written(2);
        let mut reader = Reader::new(&bytes[..]).unwrap();
        let (_, skipped) = reader.next_block_if(|_| false).unwrap().unwrap();
        assert!(skipped.is_empty());
        let (_, read) = reader.next_block_if(|_| true).unwrap().unwrap();
        assert_eq!(read.len(), 2);
        let mut flipped = written(2);
        let first_payload_end = {
            let mut reader = Reader::new(std::io::Cursor::new(&flipped[..])).unwrap();
            let (blocks, _) = reader.index().unwrap();
            blocks[1].offset - 1
        };
        flipped[first_payload_end as usize] ^= 0x40;
        let mut reader = Reader::new(&flipped[..]).unwrap();
        assert!(matches!(
            reader.next_block_if(|_| false),
            Err(RecordError::Damaged { .. })
        ));
    }

    #[test]
    fn another_file_or_version_is_refused() {
        assert!(matches!(
            Reader::new(&b"{\"kind\":\"Pod\"}"[..]),
            Err(RecordError::NotARecording)
        ));
        let mut bytes = written(1);
        bytes[8] = 9;
        assert!(matches!(
            Reader::new(&bytes[..]),
            Err(RecordError::UnsupportedVersion(9))
        ));
    }
}
