//! The wire format of lists and watches: list pages and watch lines decoded straight into
//! the stored type, skipping what the projection does not read (see
//! [`crate::resources::decode`]).

use std::sync::Arc;

use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::informers::lister_watcher::{ListPage, ListWatchError, RawWatchEvent, WatchEvent};
use crate::resources::KubeResource;
use crate::resources::decode::read;
use crate::resources::decode_object;

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
/// [`crate::resources::decode`]). The common case, every item valid, is one pass straight into
/// `T`; when that fails the items are split as raw JSON and decoded one by one, so a malformed
/// item is skipped (and reported) without losing the others.
pub fn decode_list<T: KubeResource>(body: &[u8]) -> Result<ListPage<T>, String> {
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

fn decode_list_item_by_item<T: KubeResource>(body: &[u8]) -> Result<ListPage<T>, String> {
    let wire: WireList<'_> = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let raw_items = wire.items.unwrap_or_default();
    let mut items = Vec::with_capacity(raw_items.len());
    let mut malformed = Vec::new();
    for (index, raw) in raw_items.into_iter().enumerate() {
        match decode_object::<T>(raw.get().as_bytes()) {
            Ok(obj) => items.push(Arc::new(obj)),
            Err(e) => malformed.push(format!("list item {index}: {e}")),
        }
    }
    let (resource_version, continue_token) = match wire.metadata {
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
        rest = rest.trim_ascii_start().strip_prefix(token)?;
    }
    let rest = rest.trim_ascii_start();
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
        rest = rest.trim_ascii_start().strip_prefix(token)?;
    }
    let object = rest.trim_ascii().strip_suffix(b"}")?.trim_ascii_end();
    let obj = decode_object::<T>(object).ok()?;
    Some(RawWatchEvent {
        event: event(Arc::new(obj)),
        raw_object: line.slice_ref(object),
    })
}

fn decode_any_watch_line<T: KubeResource>(
    line: &Bytes,
) -> Result<RawWatchEvent<T>, ListWatchError> {
    let malformed = |e: serde_json::Error| ListWatchError::MalformedEvent(e.to_string());
    let wire: WireEvent<'_> = serde_json::from_slice(line).map_err(malformed)?;
    let raw = wire.object.get();
    let raw_object = line.slice_ref(raw.as_bytes());
    let object = || {
        decode_object::<T>(raw.as_bytes())
            .map(Arc::new)
            .map_err(|e| ListWatchError::MalformedEvent(e.to_string()))
    };
    let event = match wire.event_type.as_ref() {
        "ADDED" => WatchEvent::Added(object()?),
        "MODIFIED" => WatchEvent::Modified(object()?),
        "DELETED" => WatchEvent::Deleted(object()?),
        "BOOKMARK" => {
            let bookmark: WireBookmark = serde_json::from_str(raw).map_err(malformed)?;
            WatchEvent::Bookmark {
                resource_version: bookmark.metadata.resource_version,
            }
        }
        "ERROR" => WatchEvent::Error(Box::new(serde_json::from_str(raw).map_err(malformed)?)),
        other => {
            return Err(ListWatchError::MalformedEvent(format!(
                "unknown watch event type {other:?}"
            )));
        }
    };
    Ok(RawWatchEvent { event, raw_object })
}
