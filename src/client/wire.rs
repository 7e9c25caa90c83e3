//! The wire format of lists and watches: list pages and watch lines decoded straight into
//! the stored type, skipping what the projection does not read (see
//! [`kscope_resources::decode`]).

use std::sync::Arc;

use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;

use kscope_informers::lister_watcher::{ListPage, ListWatchError, RawWatchEvent, WatchEvent};
use kscope_resources::KubeResource;
use kscope_resources::decode::{ListParts, list_parts, read};
use kscope_resources::decode_object;

#[derive(Deserialize)]
struct WireList<'a> {
    #[serde(default, borrow)]
    metadata: Option<WireListMeta<'a>>,
    #[serde(default, borrow)]
    items: Option<Vec<&'a RawValue>>,
}

#[derive(Deserialize)]
struct WireListMeta<'a> {
    #[serde(default, rename = "resourceVersion")]
    resource_version: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, rename = "continue")]
    continue_token: Option<std::borrow::Cow<'a, str>>,
}

#[derive(Deserialize)]
struct WireEvent<'a> {
    #[serde(rename = "type")]
    event_type: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    object: &'a RawValue,
}

#[derive(Deserialize)]
struct WireBookmark {
    metadata: WireBookmarkMeta,
}

#[derive(Deserialize)]
struct WireBookmarkMeta {
    #[serde(rename = "resourceVersion")]
    resource_version: String,
    #[serde(default)]
    annotations: Option<WireBookmarkAnnotations>,
}

/// The one annotation a bookmark carries that a client reads.
#[derive(Deserialize)]
struct WireBookmarkAnnotations {
    #[serde(default, rename = "k8s.io/initial-events-end")]
    initial_events_end: Option<String>,
}

/// A list body decoded in one pass, straight into the stored type.
#[derive(Deserialize)]
struct TypedList<T> {
    metadata: Option<OwnedListMeta>,
    items: Option<Vec<T>>,
}

#[derive(Deserialize)]
struct OwnedListMeta {
    #[serde(rename = "resourceVersion")]
    resource_version: Option<String>,
    #[serde(rename = "continue")]
    continue_token: Option<String>,
}

/// Decodes one list body, skipping what the projection does not read (see
/// [`kscope_resources::decode`]). The common case, every item valid, is one pass straight into
/// `T`; when that fails the items are split as raw JSON and decoded one by one, so a malformed
/// item is skipped (and reported) without losing the others.
pub fn decode_list<T: KubeResource>(body: &[u8]) -> Result<ListPage<T>, serde_json::Error> {
    let typed = read::<TypedList<T>>(body).ok();
    if let Some(list) = typed {
        let (resource_version, continue_token) = list.metadata.map_or_else(
            || (String::new(), None),
            |meta| {
                (
                    meta.resource_version.unwrap_or_default(),
                    meta.continue_token.filter(|c| !c.is_empty()),
                )
            },
        );
        return Ok(ListPage {
            items: list
                .items
                .unwrap_or_default()
                .into_iter()
                .map(Arc::new)
                .collect(),
            resource_version,
            continue_token,
            malformed: Vec::new(),
        });
    }
    decode_list_item_by_item(body)
}

/// The items are split with the skipping scan, as laxly as the one-pass read takes them (an
/// item with a malformed member no projection reads is kept); serde_json splits what the scan
/// refuses, and its error is the page's.
fn decode_list_item_by_item<T: KubeResource>(
    body: &[u8],
) -> Result<ListPage<T>, serde_json::Error> {
    let parts = match list_parts::<WireListMeta<'_>>(body) {
        Ok(parts) => parts,
        Err(_) => {
            let wire: WireList<'_> = serde_json::from_slice(body)?;
            let items = wire.items.map(|raw| {
                let texts = raw.into_iter().map(|item| item.get().as_bytes());
                texts.collect()
            });
            ListParts {
                metadata: wire.metadata,
                items,
            }
        }
    };
    let raw_items = parts.items.unwrap_or_default();
    let mut items = Vec::with_capacity(raw_items.len());
    let mut malformed = Vec::new();
    for (index, raw) in raw_items.into_iter().enumerate() {
        match decode_object::<T>(raw) {
            Ok(obj) => items.push(Arc::new(obj)),
            Err(e) => malformed.push(format!("list item {index}: {}", DecodeFailure::from(e))),
        }
    }
    let (resource_version, continue_token) = match parts.metadata {
        Some(meta) => (
            meta.resource_version
                .map(|rv| rv.into_owned())
                .unwrap_or_default(),
            meta.continue_token
                .filter(|c| !c.is_empty())
                .map(|c| c.into_owned()),
        ),
        None => (String::new(), None),
    };
    Ok(ListPage {
        items,
        resource_version,
        continue_token,
        malformed,
    })
}

/// The continue token of a list body whose metadata comes before its items (as API servers
/// send it), read without scanning the items.
pub(super) fn peek_continue_token(body: &[u8]) -> Option<String> {
    struct Head<'a>(&'a mut Option<String>);

    impl<'de> serde::de::Visitor<'de> for Head<'_> {
        type Value = ();

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list")
        }

        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            use serde::de::Error;
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                match key.as_ref() {
                    "metadata" => {
                        let meta: OwnedListMeta = map.next_value()?;
                        *self.0 = meta.continue_token.filter(|c| !c.is_empty());
                        // Stop here: the items need not be read.
                        return Err(A::Error::custom("metadata read"));
                    }
                    "items" => return Err(A::Error::custom("items before metadata")),
                    _ => {
                        map.next_value::<serde::de::IgnoredAny>()?;
                    }
                }
            }
            Ok(())
        }
    }

    let mut token = None;
    let mut de = serde_json::Deserializer::from_slice(body);
    // The early stop is an error by design; only the captured token matters.
    let _ = serde::Deserializer::deserialize_map(&mut de, Head(&mut token));
    token
}

/// Decodes one watch line (`{"type": ..., "object": ...}`).
pub fn decode_watch_line<T: KubeResource>(
    line: &Bytes,
) -> Result<RawWatchEvent<T>, ListWatchError> {
    match decode_object_event(line) {
        Some(event) => Ok(event),
        None => decode_any_watch_line(line),
    }
}

/// Makes the event of one object event type.
type ObjectEvent<T> = fn(Arc<T>) -> WatchEvent<T>;

/// The shape every API server sends an object event in, `{"type":"MODIFIED","object":{...}}`,
/// decoded in one pass: the object's span is found by matching the prefix, then the object
/// is decoded straight into `T` (instead of a raw-JSON split and a second parse). `None` for
/// anything else (other event types, other key orders, a malformed object), which the
/// general decoder then handles and reports.
fn decode_object_event<T: KubeResource>(line: &Bytes) -> Option<RawWatchEvent<T>> {
    let mut rest: &[u8] = line;
    for token in [&b"{"[..], b"\"type\"", b":"] {
        rest = trim_start(rest).strip_prefix(token)?;
    }
    let rest = trim_start(rest);
    let (event, mut rest): (ObjectEvent<T>, &[u8]) =
        if let Some(r) = rest.strip_prefix(b"\"MODIFIED\"") {
            (WatchEvent::Modified, r)
        } else if let Some(r) = rest.strip_prefix(b"\"ADDED\"") {
            (WatchEvent::Added, r)
        } else if let Some(r) = rest.strip_prefix(b"\"DELETED\"") {
            (WatchEvent::Deleted, r)
        } else {
            return None;
        };
    for token in [&b","[..], b"\"object\"", b":"] {
        rest = trim_start(rest).strip_prefix(token)?;
    }
    let object = trim_end(trim_end(trim_start(rest)).strip_suffix(b"}")?);
    let obj = decode_object::<T>(object).ok()?;
    Some(RawWatchEvent {
        event: event(Arc::new(obj)),
        raw_object: line.slice_ref(object),
    })
}

/// JSON's whitespace: space, tab, line feed and carriage return. (`trim_ascii` also trims a
/// form feed, which serde_json refuses.)
fn is_json_whitespace(byte: &u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

fn trim_start(text: &[u8]) -> &[u8] {
    let start = text.iter().position(|b| !is_json_whitespace(b));
    &text[start.unwrap_or(text.len())..]
}

fn trim_end(text: &[u8]) -> &[u8] {
    let end = text.iter().rposition(|b| !is_json_whitespace(b));
    &text[..end.map_or(0, |i| i + 1)]
}

fn decode_any_watch_line<T: KubeResource>(
    line: &Bytes,
) -> Result<RawWatchEvent<T>, ListWatchError> {
    let malformed =
        |e: serde_json::Error| ListWatchError::MalformedEvent(DecodeFailure::from(e).into());
    let wire: WireEvent<'_> = serde_json::from_slice(line).map_err(malformed)?;
    let raw = wire.object.get();
    let raw_object = line.slice_ref(raw.as_bytes());
    let object = || {
        decode_object::<T>(raw.as_bytes())
            .map(Arc::new)
            .map_err(|e| ListWatchError::MalformedEvent(DecodeFailure::from(e).into()))
    };
    let event = match wire.event_type.as_ref() {
        "ADDED" => WatchEvent::Added(object()?),
        "MODIFIED" => WatchEvent::Modified(object()?),
        "DELETED" => WatchEvent::Deleted(object()?),
        "BOOKMARK" => {
            let bookmark: WireBookmark = serde_json::from_str(raw).map_err(malformed)?;
            let initial_events_end = bookmark
                .metadata
                .annotations
                .and_then(|a| a.initial_events_end)
                .is_some_and(|v| v == "true");
            WatchEvent::Bookmark {
                resource_version: bookmark.metadata.resource_version,
                initial_events_end,
            }
        }
        "ERROR" => WatchEvent::Error(Box::new(serde_json::from_str(raw).map_err(malformed)?)),
        other => {
            return Err(ListWatchError::MalformedEvent(
                UnknownEventType(other.to_string()).into(),
            ));
        }
    };
    Ok(RawWatchEvent { event, raw_object })
}

/// A watch event whose type is none of ADDED, MODIFIED, DELETED, BOOKMARK and ERROR.
#[derive(Debug, thiserror::Error)]
#[error("unknown watch event type {0:?}")]
pub struct UnknownEventType(pub String);

/// Why an object did not decode, with every quoted value in serde's message masked: serde
/// quotes the offending value (`invalid type: string "c2VjcmV0", expected a map`), and for a
/// Secret that value is its payload. The serde error itself is not kept as a source, since
/// whoever printed the chain would print the value.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct DecodeFailure {
    message: String,
}

impl From<serde_json::Error> for DecodeFailure {
    fn from(err: serde_json::Error) -> Self {
        Self {
            message: mask_quoted(&err.to_string()),
        }
    }
}

/// `text` with what is between each pair of double quotes replaced by `…`.
fn mask_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut parts = text.split('"');
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    let mut inside = true;
    for part in parts {
        out.push('"');
        out.push_str(if inside { "…" } else { part });
        inside = !inside;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use kscope_resources::Secret;

    /// A Secret whose `data` arrives as a string: the decode error must not carry it.
    #[test]
    fn decode_errors_never_carry_a_secret_value() {
        let value = "c3VwZXItc2VjcmV0LXZhbHVl";
        let object = format!(
            r#"{{"apiVersion":"v1","kind":"Secret","metadata":{{"name":"db","namespace":"shop","resourceVersion":"3"}},"type":"Opaque","data":"{value}"}}"#
        );
        let line = Bytes::from(format!(r#"{{"type":"MODIFIED","object":{object}}}"#));
        let err = decode_watch_line::<Secret>(&line).expect_err("data as a string does not decode");
        let mut text = err.to_string();
        let mut source = std::error::Error::source(&err);
        while let Some(cause) = source {
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        assert!(!text.contains(value), "{text}");
        assert!(text.contains("malformed watch event"), "{text}");

        let list = format!(r#"{{"metadata":{{"resourceVersion":"3"}},"items":[{object}]}}"#);
        let page = decode_list::<Secret>(list.as_bytes()).expect("the page decodes");
        assert!(page.items.is_empty());
        assert_eq!(page.malformed.len(), 1);
        assert!(!page.malformed[0].contains(value), "{}", page.malformed[0]);
    }

    #[test]
    fn every_quoted_span_is_masked() {
        assert_eq!(
            mask_quoted(r#"invalid type: string "abc", expected a map at line 1"#),
            r#"invalid type: string "…", expected a map at line 1"#
        );
        assert_eq!(mask_quoted(r#"a "b" c "d"#), r#"a "…" c "…"#);
        assert_eq!(mask_quoted("no quotes"), "no quotes");
    }
}
