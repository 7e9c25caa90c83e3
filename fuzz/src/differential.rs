//! Differential checks of kscope's pod decode paths against serde_json: the fuzz target
//! (`fuzz/fuzz_targets/decode.rs`) and a bounded property test in `tests/it/resources_pod.rs`
//! run them. Each check panics on a finding.
//!
//! - [`check_bytes`] takes any bytes as a pod, a list page and a watch line: no path may panic,
//!   what serde_json accepts kscope must accept and read alike, and what both accept they
//!   must read alike (every field of the projection: `Pod` compares them all).
//! - [`check_structured`] builds a valid pod, list page or watch line from the realistic
//!   fixture (members edited, added and removed, numbers at their limits, escapes, random JSON
//!   whitespace), notes where every value the projection skips lies in the text, mutates a few
//!   bytes, and then also requires kscope to refuse what serde_json refuses unless every
//!   mutation is inside a skipped value (kscope checks those for structure only, by design),
//!   and a list page to keep exactly the items that decode on their own.
//!
//! The `Ref*` types mirror the wire types of `src/client/wire.rs` as serde_json reads them.

use std::cell::RefCell;
use std::ops::Range;

use bytes::Bytes;
use kscope_client::wire::{decode_list, decode_watch_line};
use kscope_informers::lister_watcher::WatchEvent;
use kscope_resources::{Pod, decode};
use serde::Deserialize;
use serde::de::{self, IntoDeserializer, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};

/// The realistic pod every structured case starts from.
pub const FIXTURE: &[u8] = include_bytes!("../../tests/fixtures/pod-realistic.json");

#[derive(Deserialize)]
struct RefList {
    metadata: Option<RefListMeta>,
    items: Option<Vec<Pod>>,
}

#[derive(Deserialize)]
struct RefListMeta {
    #[serde(rename = "resourceVersion")]
    resource_version: Option<String>,
    #[serde(rename = "continue")]
    continue_token: Option<String>,
}

#[derive(Deserialize)]
struct RefEvent<'a> {
    #[serde(rename = "type")]
    event_type: String,
    #[serde(borrow)]
    object: &'a RawValue,
}

/// Any bytes as a pod, a list page and a watch line (see the module doc).
pub fn check_bytes(data: &[u8]) {
    check_pod(data, false);
    check_list(data, false);
    check_watch_line(data, false);
}

/// One pod. `strict`: kscope must refuse what serde_json refuses.
fn check_pod(json: &[u8], strict: bool) {
    let text = || String::from_utf8_lossy(json).into_owned();
    let ours = decode::<Pod>(json);
    let skimmed = kscope_resources::decode::read::<Pod>(json);
    let theirs = serde_json::from_slice::<Pod>(json);
    if let Ok(skimmed) = &skimmed {
        assert_eq!(
            ours.as_ref().ok(),
            Some(skimmed),
            "decode differs from read: {}",
            text()
        );
    }
    match (&ours, &theirs) {
        (Ok(ours), Ok(theirs)) => assert_eq!(ours, theirs, "pod read differently: {}", text()),
        (Err(e), Ok(_)) => panic!("kscope refuses a pod serde_json reads ({e}): {}", text()),
        (Ok(_), Err(e)) if strict => {
            panic!(
                "kscope takes a pod serde_json refuses ({e}) outside any skipped value: {}",
                text()
            )
        }
        _ => {}
    }
}

/// One list page. `strict`: as [`check_pod`]'s.
fn check_list(body: &[u8], strict: bool) {
    let text = || String::from_utf8_lossy(body).into_owned();
    let ours = decode_list::<Pod>(body);
    match (ours, serde_json::from_slice::<RefList>(body)) {
        (Ok(page), Ok(theirs)) => {
            let meta = theirs.metadata;
            let rv = meta.as_ref().and_then(|m| m.resource_version.clone());
            let token = meta
                .and_then(|m| m.continue_token)
                .filter(|c| !c.is_empty());
            assert_eq!(page.resource_version, rv.unwrap_or_default(), "{}", text());
            assert_eq!(page.continue_token, token, "{}", text());
            assert!(
                page.malformed.is_empty(),
                "{:?}: {}",
                page.malformed,
                text()
            );
            let items: Vec<&Pod> = page.items.iter().map(|p| &**p).collect();
            let want: Vec<&Pod> = theirs.items.iter().flatten().collect();
            assert!(items == want, "list items read differently: {}", text());
        }
        (Err(e), Ok(_)) => panic!("kscope refuses a page serde_json reads ({e}): {}", text()),
        (Ok(page), Err(e)) if strict && page.malformed.is_empty() => {
            panic!(
                "kscope takes a page serde_json refuses ({e}) outside any skipped value: {}",
                text()
            )
        }
        _ => {}
    }
}

/// A page whose envelope is valid and whose items are `items`: it keeps, in order, exactly the
/// items that decode on their own, and counts the others; unless an item's brackets or strings
/// do not close, when the items cannot be told apart.
fn check_list_items(body: &[u8], items: &[Vec<u8>]) {
    let whole = items
        .iter()
        .all(|i| kscope_resources::decode::read::<de::IgnoredAny>(i).is_ok());
    let page = decode_list::<Pod>(body);
    if !whole {
        return;
    }
    let text = || String::from_utf8_lossy(body).into_owned();
    let page = match page {
        Ok(page) => page,
        Err(e) => panic!("a page of whole items fails ({e}): {}", text()),
    };
    let each: Vec<_> = items.iter().map(|i| decode::<Pod>(i)).collect();
    let kept: Vec<&Pod> = each.iter().filter_map(|r| r.as_ref().ok()).collect();
    let got: Vec<&Pod> = page.items.iter().map(|p| &**p).collect();
    assert!(
        got == kept,
        "the page keeps other items than decode alone: {}",
        text()
    );
    let bad = each.iter().filter(|r| r.is_err()).count();
    assert_eq!(
        page.malformed.len(),
        bad,
        "{:?}: {}",
        page.malformed,
        text()
    );
}

/// One watch line. `strict`: as [`check_pod`]'s.
fn check_watch_line(line: &[u8], strict: bool) {
    let text = || String::from_utf8_lossy(line).into_owned();
    let bytes = Bytes::copy_from_slice(line);
    let ours = decode_watch_line::<Pod>(&bytes);
    let theirs = serde_json::from_slice::<RefEvent<'_>>(line);
    let object_event = |t: &str| matches!(t, "ADDED" | "MODIFIED" | "DELETED");
    let their_pod = theirs
        .as_ref()
        .ok()
        .filter(|e| object_event(&e.event_type))
        .and_then(|e| serde_json::from_str::<Pod>(e.object.get()).ok());
    if let (Ok(theirs), Some(pod)) = (&theirs, &their_pod) {
        let event = match &ours {
            Ok(event) => event,
            Err(e) => panic!("kscope refuses a line serde_json reads ({e}): {}", text()),
        };
        let (kind, got) = object_of(&event.event);
        assert_eq!(kind, theirs.event_type, "{}", text());
        assert_eq!(
            got,
            Some(pod),
            "the line's pod read differently: {}",
            text()
        );
        assert_eq!(
            &event.raw_object[..],
            theirs.object.get().as_bytes(),
            "{}",
            text()
        );
    }
    let Ok(event) = &ours else { return };
    let (kind, got) = object_of(&event.event);
    let Some(got) = got else { return };
    // The envelope around the object must be JSON as serde_json reads it, whatever the object.
    let start = event.raw_object.as_ptr() as usize - bytes.as_ptr() as usize;
    let mut envelope = line[..start].to_vec();
    envelope.extend_from_slice(b"{}");
    envelope.extend_from_slice(&line[start + event.raw_object.len()..]);
    match serde_json::from_slice::<RefEvent<'_>>(&envelope) {
        Ok(e) => assert_eq!(e.event_type, kind, "{}", text()),
        Err(e) => panic!(
            "kscope takes a line whose envelope serde_json refuses ({e}): {}",
            text()
        ),
    }
    assert_eq!(
        decode::<Pod>(&event.raw_object).ok().as_ref(),
        Some(got),
        "{}",
        text()
    );
    if strict && their_pod.is_none() {
        panic!(
            "kscope takes a line serde_json refuses outside any skipped value: {}",
            text()
        );
    }
}

fn object_of(event: &WatchEvent<Pod>) -> (&'static str, Option<&Pod>) {
    match event {
        WatchEvent::Added(p) => ("ADDED", Some(p)),
        WatchEvent::Modified(p) => ("MODIFIED", Some(p)),
        WatchEvent::Deleted(p) => ("DELETED", Some(p)),
        WatchEvent::Bookmark { .. } => ("BOOKMARK", None),
        WatchEvent::Error(_) => ("ERROR", None),
    }
}

/// Choices: from the fuzzer's bytes while they last (so that its coverage guidance steers
/// them), then from a xorshift generator seeded by them.
pub struct Choices<'a> {
    data: &'a [u8],
    state: u64,
}

impl<'a> Choices<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for &b in data {
            state = (state ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        Self {
            data,
            state: state | 1,
        }
    }

    /// A number below `n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        if let Some((&b, rest)) = self.data.split_first() {
            self.data = rest;
            return usize::from(b) % n;
        }
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        (self.state % n as u64) as usize
    }

    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }

    fn pick<'t, T>(&mut self, from: &'t [T]) -> &'t T {
        &from[self.below(from.len())]
    }
}

/// One step of a path into a JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

/// A JSON text and where each value of it lies.
struct Written {
    text: Vec<u8>,
    spans: Vec<(Vec<Step>, Range<usize>)>,
}

/// Writes `value` with random JSON whitespace and random (valid) escapes, noting each value's
/// span.
fn write(value: &Value, c: &mut Choices<'_>) -> Written {
    let mut w = Written {
        text: Vec::new(),
        spans: Vec::new(),
    };
    write_value(value, &mut Vec::new(), &mut w, c);
    w
}

fn whitespace(out: &mut Vec<u8>, c: &mut Choices<'_>) {
    while c.chance(6) {
        out.push(*c.pick(b" \t\n\r"));
    }
}

fn write_value(value: &Value, path: &mut Vec<Step>, w: &mut Written, c: &mut Choices<'_>) {
    let start = w.text.len();
    match value {
        Value::Object(map) => {
            w.text.push(b'{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    w.text.push(b',');
                }
                whitespace(&mut w.text, c);
                write_string(k, &mut w.text, c);
                whitespace(&mut w.text, c);
                w.text.push(b':');
                whitespace(&mut w.text, c);
                path.push(Step::Key(k.clone()));
                write_value(v, path, w, c);
                path.pop();
                whitespace(&mut w.text, c);
            }
            w.text.push(b'}');
        }
        Value::Array(items) => {
            w.text.push(b'[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    w.text.push(b',');
                }
                whitespace(&mut w.text, c);
                path.push(Step::Index(i));
                write_value(v, path, w, c);
                path.pop();
                whitespace(&mut w.text, c);
            }
            w.text.push(b']');
        }
        Value::String(s) => write_string(s, &mut w.text, c),
        other => w.text.extend_from_slice(other.to_string().as_bytes()),
    }
    w.spans.push((path.clone(), start..w.text.len()));
}

fn write_string(s: &str, out: &mut Vec<u8>, c: &mut Choices<'_>) {
    out.push(b'"');
    for ch in s.chars() {
        match ch {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            ch if u32::from(ch) < 0x20 || c.chance(40) => {
                let mut units = [0u16; 2];
                for unit in ch.encode_utf16(&mut units) {
                    out.extend_from_slice(format!("\\u{unit:04x}").as_bytes());
                }
            }
            '/' if c.chance(4) => out.extend_from_slice(b"\\/"),
            ch => out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    out.push(b'"');
}

/// The paths of the values `T`'s `Deserialize` skips (hands to `deserialize_ignored_any`)
/// in `value`, the way serde's derive reads it; `None` when `T` does not read it.
fn skipped_paths<T: for<'de> Deserialize<'de>>(value: &Value) -> Option<Vec<Vec<Step>>> {
    let skipped = RefCell::new(Vec::new());
    let recorder = Recorder {
        value,
        path: Vec::new(),
        skipped: &skipped,
    };
    T::deserialize(recorder).ok()?;
    Some(skipped.into_inner())
}

/// A serde `Deserializer` over a [`Value`] that notes the path of every value skipped.
struct Recorder<'a> {
    value: &'a Value,
    path: Vec<Step>,
    skipped: &'a RefCell<Vec<Vec<Step>>>,
}

impl<'a> Recorder<'a> {
    fn at(&self, step: Step, value: &'a Value) -> Self {
        let mut path = self.path.clone();
        path.push(step);
        Self {
            value,
            path,
            skipped: self.skipped,
        }
    }
}

type RecordError = de::value::Error;

impl<'de> de::Deserializer<'de> for Recorder<'de> {
    type Error = RecordError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, RecordError> {
        match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => visitor.visit_u64(u),
                (_, Some(i), _) => visitor.visit_i64(i),
                (_, _, Some(f)) => visitor.visit_f64(f),
                _ => Err(de::Error::custom("a number past f64")),
            },
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => visitor.visit_seq(RecordedSeq {
                recorder: &self,
                items: items.iter().enumerate(),
            }),
            Value::Object(map) => visitor.visit_map(RecordedMap {
                recorder: &self,
                members: map.iter(),
                next: None,
            }),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, RecordError> {
        match self.value {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, RecordError> {
        self.skipped.borrow_mut().push(self.path);
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, RecordError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, RecordError> {
        match self.value {
            Value::String(s) => visitor.visit_enum(s.as_str().into_deserializer()),
            _ => Err(de::Error::custom("only unit variants")),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier
    }
}

struct RecordedSeq<'r, 'a> {
    recorder: &'r Recorder<'a>,
    items: std::iter::Enumerate<std::slice::Iter<'a, Value>>,
}

impl<'de> de::SeqAccess<'de> for RecordedSeq<'_, 'de> {
    type Error = RecordError;

    fn next_element_seed<T: de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, RecordError> {
        match self.items.next() {
            Some((i, v)) => seed
                .deserialize(self.recorder.at(Step::Index(i), v))
                .map(Some),
            None => Ok(None),
        }
    }
}

struct RecordedMap<'r, 'a> {
    recorder: &'r Recorder<'a>,
    members: serde_json::map::Iter<'a>,
    next: Option<(&'a String, &'a Value)>,
}

impl<'de> de::MapAccess<'de> for RecordedMap<'_, 'de> {
    type Error = RecordError;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, RecordError> {
        let Some((k, v)) = self.members.next() else {
            return Ok(None);
        };
        self.next = Some((k, v));
        let key = de::value::BorrowedStrDeserializer::new(k.as_str());
        seed.deserialize(key).map(Some)
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, RecordError> {
        let (k, v) = self
            .next
            .take()
            .ok_or_else(|| de::Error::custom("a value before its key"))?;
        seed.deserialize(self.recorder.at(Step::Key(k.clone()), v))
    }
}

/// The byte ranges, in `written`, of the values at `paths` with the whitespace around them (a
/// byte written there can join the value: `: null` -> `:nnull`), offset by `base`.
fn ranges(written: &Written, paths: &[Vec<Step>], base: usize) -> Vec<Range<usize>> {
    let text = &written.text;
    let space = |i: usize| matches!(text[i], b' ' | b'\t' | b'\n' | b'\r');
    written
        .spans
        .iter()
        .filter(|(path, _)| paths.contains(path))
        .map(|(_, r)| {
            let (mut start, mut end) = (r.start, r.end);
            while start > 0 && space(start - 1) {
                start -= 1;
            }
            while end < text.len() && space(end) {
                end += 1;
            }
            start + base..end + base
        })
        .collect()
}

/// Bytes a mutation writes: JSON's structure, the edges of numbers and literals, whitespace
/// JSON does not allow (form feed, vertical tab, NUL), controls and bytes that are not UTF-8.
const ODD_BYTES: &[u8] = b"\"\\{}[],:0-.eE+ntf \t\n\r\x0c\x0b\x00\x1f\x7f\x80\xc3\xff";

/// Mutates one to three bytes of `text`. True when the result must be refused where serde_json
/// refuses it: one mutation, outside every range of `lax` (the values the projection skips).
/// With more, one could rename a member so that the value after it is skipped, and another
/// break that value.
fn mutate(text: &mut Vec<u8>, lax: &[Range<usize>], c: &mut Choices<'_>) -> bool {
    let whole = 0..text.len();
    mutate_within(text, lax, std::slice::from_ref(&whole), c)
}

/// [`mutate`] at offsets within `spans` only (none empty).
fn mutate_within(
    text: &mut Vec<u8>,
    lax: &[Range<usize>],
    spans: &[Range<usize>],
    c: &mut Choices<'_>,
) -> bool {
    let spans: Vec<_> = spans.iter().filter(|r| !r.is_empty()).cloned().collect();
    if spans.is_empty() {
        return false;
    }
    let mut at: Vec<usize> = (0..1 + c.below(3))
        .map(|_| {
            let span = c.pick(&spans).clone();
            span.start + c.below(span.len())
        })
        .collect();
    at.sort_unstable();
    at.dedup();
    let mut strict = at.len() == 1;
    // From the end, so that the offsets before each mutation stay those of the original.
    for &i in at.iter().rev() {
        let op = c.below(3);
        // A byte inserted just before or after a skipped value joins it (`null` -> `nnull`).
        strict &= !lax.iter().any(|r| match op {
            0 => (r.start..=r.end).contains(&i),
            _ => r.contains(&i),
        });
        let byte = *c.pick(ODD_BYTES);
        match op {
            0 => text.insert(i, byte),
            1 => text[i] = byte,
            _ => {
                text.remove(i);
            }
        }
    }
    strict
}

/// A random small JSON value, for members nobody reads and replaced values.
fn odd_value(c: &mut Choices<'_>, depth: usize) -> Value {
    let scalars = [
        Value::Null,
        Value::Bool(true),
        Value::from(0),
        Value::from(-1),
        Value::from(i64::MAX),
        Value::from(i64::MIN),
        Value::from(u64::MAX),
        Value::from(i32::MAX),
        Number::from_f64(1.5).map_or(Value::Null, Value::Number),
        Number::from_f64(-0.0).map_or(Value::Null, Value::Number),
        Number::from_f64(1e300).map_or(Value::Null, Value::Number),
        Value::from(""),
        Value::from("é\u{1}\"\\/\u{10ffff}"),
        Value::from("x".repeat(40)),
        Value::from("2025-03-14T09:21:07Z"),
        Value::from("Always"),
    ];
    match c.below(if depth > 2 { 1 } else { 3 }) {
        0 => c.pick(&scalars).clone(),
        1 => Value::Array((0..c.below(4)).map(|_| odd_value(c, depth + 1)).collect()),
        _ => {
            let keys = ["a", "name", "type", "status", "restartCount", "k\"\\", "ü"];
            let mut map = Map::new();
            for _ in 0..c.below(4) {
                map.insert((*c.pick(&keys)).to_owned(), odd_value(c, depth + 1));
            }
            Value::Object(map)
        }
    }
}

/// Every path into `value`.
fn paths(value: &Value, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    out.push(path.clone());
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                path.push(Step::Key(k.clone()));
                paths(v, path, out);
                path.pop();
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                path.push(Step::Index(i));
                paths(v, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn at_path<'v>(value: &'v mut Value, path: &[Step]) -> Option<&'v mut Value> {
    path.iter().try_fold(value, |v, step| match step {
        Step::Key(k) => v.get_mut(k.as_str()),
        Step::Index(i) => v.get_mut(*i),
    })
}

/// The fixture with a few random edits: values replaced, members removed or added, every
/// restart count set to one number (their sum overflowed once).
fn random_pod(c: &mut Choices<'_>) -> Value {
    let mut pod: Value = serde_json::from_slice(FIXTURE).unwrap_or(Value::Null);
    if c.chance(4) {
        let count = *c.pick(&[i64::MAX, i64::MIN, i64::from(i32::MAX), 1 << 62, -1]);
        for key in ["containerStatuses", "initContainerStatuses"] {
            if let Some(Value::Array(statuses)) = pod.pointer_mut(&format!("/status/{key}")) {
                for s in statuses {
                    s["restartCount"] = Value::from(count);
                }
            }
        }
    }
    let mut all = Vec::new();
    paths(&pod, &mut Vec::new(), &mut all);
    for _ in 0..c.below(4) {
        let path = c.pick(&all).clone();
        let edit = c.below(4);
        let odd = odd_value(c, 0);
        let Some(slot) = at_path(&mut pod, &path) else {
            continue;
        };
        match (edit, slot) {
            (0, Value::Object(map)) => {
                let name = c.pick(&["name", "nodeName", "x", "phase", "reason", "started"]);
                map.insert((*name).to_owned(), odd);
            }
            (1, Value::Object(map)) if !map.is_empty() => {
                let key = map.keys().nth(c.below(map.len())).cloned();
                if let Some(key) = key {
                    map.remove(&key);
                }
            }
            (2, Value::Array(items)) if !items.is_empty() => {
                let i = c.below(items.len());
                items.insert(i, items[i].clone());
            }
            (_, slot) => *slot = odd,
        }
    }
    pod
}

/// A pod written out: its text and the ranges of the values its projection skips (`None` when
/// the projection does not read the pod).
fn written_pod(c: &mut Choices<'_>) -> (Written, Option<Vec<Vec<Step>>>) {
    let pod = random_pod(c);
    (write(&pod, c), skipped_paths::<Pod>(&pod))
}

/// One structured case (see the module doc): a pod, a watch line or a list page.
pub fn check_structured(c: &mut Choices<'_>) {
    match c.below(3) {
        0 => {
            let (mut pod, skipped) = written_pod(c);
            let lax = ranges(&pod, skipped.as_deref().unwrap_or_default(), 0);
            let strict = !c.chance(4) && mutate(&mut pod.text, &lax, c);
            check_pod(&pod.text, skipped.is_some() && strict);
        }
        1 => {
            let (pod, skipped) = written_pod(c);
            let mut line = Vec::new();
            for part in [&b"{"[..], b"\"type\"", b":"] {
                whitespace(&mut line, c);
                line.extend_from_slice(part);
            }
            whitespace(&mut line, c);
            let kind = c.pick(&["ADDED", "MODIFIED", "DELETED"]);
            line.extend_from_slice(format!("\"{kind}\"").as_bytes());
            for part in [&b","[..], b"\"object\"", b":"] {
                whitespace(&mut line, c);
                line.extend_from_slice(part);
            }
            whitespace(&mut line, c);
            let base = line.len();
            line.extend_from_slice(&pod.text);
            whitespace(&mut line, c);
            line.push(b'}');
            whitespace(&mut line, c);
            let lax = ranges(&pod, skipped.as_deref().unwrap_or_default(), base);
            // Half the time in the envelope, which is a few bytes of a 10 KB line.
            let envelope = [0..base, base + pod.text.len()..line.len()];
            let strict = match c.below(4) {
                0 => false,
                1 => mutate_within(&mut line, &lax, &envelope, c),
                _ => mutate(&mut line, &lax, c),
            };
            check_watch_line(&line, skipped.is_some() && strict);
        }
        _ => {
            let mut items = Vec::new();
            for _ in 0..1 + c.below(3) {
                let (mut pod, skipped) = written_pod(c);
                let lax = ranges(&pod, skipped.as_deref().unwrap_or_default(), 0);
                let strict = c.chance(2) && mutate(&mut pod.text, &lax, c);
                check_pod(&pod.text, skipped.is_some() && strict);
                items.push(pod.text);
            }
            // A member of the page nobody reads, before its metadata or its items.
            let extra = |c: &mut Choices<'_>| {
                let mut text = Vec::new();
                if c.chance(2) {
                    text.extend_from_slice(b"\"kind\":");
                    text.extend_from_slice(odd_value(c, 0).to_string().as_bytes());
                    text.push(b',');
                }
                text
            };
            let mut body = b"{".to_vec();
            body.extend(extra(c));
            body.extend_from_slice(br#""metadata":{"resourceVersion":"42","continue":"t"},"#);
            body.extend(extra(c));
            body.extend_from_slice(b"\"items\":[");
            body.extend_from_slice(&items.join(&b","[..]));
            body.extend_from_slice(b"]}");
            check_list_items(&body, &items);
            check_list(&body, false);
        }
    }
}
