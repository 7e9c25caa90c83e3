//! The store each recorded kind held, folded from the records as a Reflector would have:
//! a whole list replaces it, a watch-list's initial events replace it at their closing
//! bookmark, watch events add, change and remove. The recorder keeps one to write keyframes;
//! a replay keeps one to print or serve the state at any point.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer as _};
use serde_json::value::RawValue;

use super::format::Record;

/// The annotation on the bookmark that ends a watch-list's initial events.
const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

/// One kind's store: objects by `namespace/name` key, and the last resourceVersion seen.
#[derive(Debug, Default, Clone)]
pub struct KindState {
    pub resource_version: String,
    pub objects: BTreeMap<String, Box<RawValue>>,
    /// A list's pages so far, until its last page.
    pending_list: Option<BTreeMap<String, Box<RawValue>>>,
    /// A watch-list's initial events so far, until its closing bookmark.
    pending_initial: Option<BTreeMap<String, Box<RawValue>>>,
}

/// Every recorded kind's store.
#[derive(Debug, Default, Clone)]
pub struct State {
    pub kinds: BTreeMap<String, KindState>,
}

#[derive(Deserialize)]
struct Meta<'a> {
    #[serde(borrow, default)]
    metadata: MetaFields<'a>,
}

#[derive(Deserialize, Default)]
struct MetaFields<'a> {
    #[serde(borrow, default)]
    annotations: Option<BTreeMap<&'a str, &'a str>>,
}

/// The `namespace/name` key of a raw object (`name` alone when cluster-scoped), as
/// client-go's MetaNamespaceKeyFunc makes it; `None` without a name.
///
/// Every recorded event is keyed so, and a pod's spec and status are most of its bytes: the
/// read stops once `metadata` has given both its name and namespace (a cluster-scoped
/// object's metadata is read to its end). The object is valid JSON already (a `RawValue`),
/// so what is left unread cannot make it invalid.
pub fn object_key(raw: &RawValue) -> Option<String> {
    let mut names = Names::default();
    let mut de = serde_json::Deserializer::from_str(raw.get());
    // Stopping early is an error to serde_json (the map is not at its end): what was read
    // is in `names`.
    let _ = de.deserialize_map(ObjectVisitor(&mut names));
    if !names.complete {
        return None;
    }
    let name = names.name.filter(|n| !n.is_empty())?;
    Some(match names.namespace.filter(|n| !n.is_empty()) {
        Some(ns) => format!("{ns}/{name}"),
        None => name.to_string(),
    })
}

/// What [`object_key`] read of `metadata`: `complete` once the name and namespace are known
/// (both read, or the whole of `metadata` read).
#[derive(Default)]
struct Names<'a> {
    name: Option<&'a str>,
    namespace: Option<&'a str>,
    complete: bool,
}

/// A field name among those [`object_key`] reads, whether escaped in the JSON or not.
#[derive(PartialEq)]
enum Field {
    Metadata,
    Name,
    Namespace,
    Other,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldVisitor;
        impl serde::de::Visitor<'_> for FieldVisitor {
            type Value = Field;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: serde::de::Error>(self, field: &str) -> Result<Field, E> {
                Ok(match field {
                    "metadata" => Field::Metadata,
                    "name" => Field::Name,
                    "namespace" => Field::Namespace,
                    _ => Field::Other,
                })
            }
        }
        deserializer.deserialize_identifier(FieldVisitor)
    }
}

/// The object's top level: skips to `metadata`, reads it, and stops.
struct ObjectVisitor<'n, 'a>(&'n mut Names<'a>);

impl<'de> serde::de::Visitor<'de> for ObjectVisitor<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(field) = map.next_key::<Field>()? {
            if field == Field::Metadata {
                return map.next_value_seed(MetadataSeed(self.0));
            }
            map.next_value::<serde::de::IgnoredAny>()?;
        }
        Ok(())
    }
}

/// `metadata`: its name and namespace, read until both are known.
struct MetadataSeed<'n, 'a>(&'n mut Names<'a>);

impl<'de> serde::de::DeserializeSeed<'de> for MetadataSeed<'_, 'de> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for MetadataSeed<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object's metadata")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let names = self.0;
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::Name => names.name = map.next_value()?,
                Field::Namespace => names.namespace = map.next_value()?,
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
            if names.name.is_some() && names.namespace.is_some() {
                break;
            }
        }
        names.complete = true;
        Ok(())
    }
}

/// Whether a BOOKMARK's object is the one closing a watch-list's initial events: a replay
/// serves the state up to it as a list.
pub fn ends_initial_events(raw: &RawValue) -> bool {
    serde_json::from_str::<Meta<'_>>(raw.get())
        .ok()
        .and_then(|m| m.metadata.annotations)
        .is_some_and(|a| a.get(INITIAL_EVENTS_END) == Some(&"true"))
}

fn keyed(items: &[Box<RawValue>]) -> BTreeMap<String, Box<RawValue>> {
    items
        .iter()
        .filter_map(|item| Some((object_key(item)?, item.clone())))
        .collect()
}

impl State {
    /// Whether no kind is in the middle of a list's pages or a watch-list's initial events.
    /// A keyframe is written only then: one written between them would hold the store
    /// before the list, and a reader starting from it would never see the list's objects
    /// gathered before the keyframe replace that store.
    pub fn settled(&self) -> bool {
        self.kinds
            .values()
            .all(|k| k.pending_list.is_none() && k.pending_initial.is_none())
    }

    /// Folds one record in.
    pub fn apply(&mut self, record: &Record) {
        let state = self.kinds.entry(record.kind().to_string()).or_default();
        match record {
            Record::List {
                continued,
                resource_version,
                next,
                items,
                ..
            } => {
                let pending = match continued {
                    None => state.pending_list.insert(BTreeMap::new()),
                    Some(_) => state.pending_list.get_or_insert_with(BTreeMap::new),
                };
                pending.extend(keyed(items));
                if next.is_none() {
                    state.objects = state.pending_list.take().unwrap_or_default();
                    state.resource_version.clone_from(resource_version);
                }
            }
            Record::WatchStart {
                send_initial_events,
                ..
            } => {
                state.pending_initial = send_initial_events.then(BTreeMap::new);
            }
            Record::Event {
                event_type,
                resource_version,
                object,
                ..
            } => {
                match event_type.as_str() {
                    "ADDED" | "MODIFIED" => {
                        if let Some(key) = object_key(object) {
                            let store =
                                state.pending_initial.as_mut().unwrap_or(&mut state.objects);
                            store.insert(key, object.clone());
                        }
                    }
                    "DELETED" => {
                        if let Some(key) = object_key(object) {
                            let store =
                                state.pending_initial.as_mut().unwrap_or(&mut state.objects);
                            store.remove(&key);
                        }
                    }
                    "BOOKMARK" => {
                        if ends_initial_events(object)
                            && let Some(initial) = state.pending_initial.take()
                        {
                            state.objects = initial;
                        }
                    }
                    _ => {
                        state.pending_initial = None;
                        return;
                    }
                }
                if let Some(rv) = resource_version
                    && state.pending_initial.is_none()
                {
                    state.resource_version.clone_from(rv);
                }
            }
            Record::WatchEnd { .. } | Record::Error { .. } => {
                state.pending_initial = None;
            }
            Record::Keyframe {
                resource_version,
                objects,
                ..
            } => {
                state.objects = keyed(objects);
                state.resource_version.clone_from(resource_version);
                state.pending_list = None;
                state.pending_initial = None;
            }
        }
    }

    /// One [`Record::Keyframe`] per kind, at `at`.
    pub fn keyframes(&self, at: i64) -> Vec<Record> {
        self.kinds
            .iter()
            .map(|(kind, state)| Record::Keyframe {
                kind: kind.clone(),
                at,
                resource_version: state.resource_version.clone(),
                objects: state.objects.values().cloned().collect(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_string()).unwrap()
    }

    fn pod(name: &str, rv: u64) -> Box<RawValue> {
        raw(&format!(
            r#"{{"metadata":{{"namespace":"ns","name":"{name}","resourceVersion":"{rv}"}}}}"#
        ))
    }

    fn event(event_type: &str, object: Box<RawValue>, rv: u64) -> Record {
        Record::Event {
            kind: "pods".into(),
            at: 0,
            event_type: event_type.into(),
            resource_version: Some(rv.to_string()),
            object,
        }
    }

    #[test]
    fn the_key_is_read_from_metadata_wherever_it_is_and_stops_at_it() {
        let key = |json: &str| object_key(&raw(json));
        // Metadata after the spec; the name before the namespace; a field name escaped.
        assert_eq!(
            key(
                r#"{"spec":{"name":"no","x":[1,{"a":"b"}]},"metadata":{"name":"web","namespace":"ns"}}"#
            ),
            Some("ns/web".into())
        );
        assert_eq!(
            key(r#"{"metadata":{"uid":"u","na\u006de":"web","namespace":"ns"},"status":{}}"#),
            Some("ns/web".into())
        );
        // Cluster-scoped: metadata read to its end; an empty namespace is none.
        assert_eq!(
            key(r#"{"metadata":{"name":"node-1","labels":{"namespace":"x"}}}"#),
            Some("node-1".into())
        );
        assert_eq!(
            key(r#"{"metadata":{"namespace":"","name":"node-1"}}"#),
            Some("node-1".into())
        );
        // No name, a name that is not a string, no metadata, not an object: no key.
        for json in [
            r#"{"metadata":{"namespace":"ns"}}"#,
            r#"{"metadata":{"name":"","namespace":"ns"}}"#,
            r#"{"metadata":{"name":null,"namespace":"ns"}}"#,
            r#"{"metadata":{"name":7,"namespace":"ns"}}"#,
            r#"{"metadata":null}"#,
            r#"{"kind":"Pod"}"#,
            r#"["metadata"]"#,
            r#""web""#,
        ] {
            assert_eq!(key(json), None, "{json}");
        }
    }

    fn keys(state: &State) -> Vec<&str> {
        state.kinds["pods"]
            .objects
            .keys()
            .map(String::as_str)
            .collect()
    }

    #[test]
    fn a_paged_list_replaces_the_store_at_its_last_page() {
        let mut state = State::default();
        state.apply(&event("ADDED", pod("old", 1), 1));
        let page = |continued: Option<&str>, next: Option<&str>, name| Record::List {
            kind: "pods".into(),
            at: 0,
            requested: String::new(),
            continued: continued.map(Into::into),
            resource_version: "9".into(),
            next: next.map(Into::into),
            items: vec![pod(name, 5)],
        };
        state.apply(&page(None, Some("c"), "a"));
        assert_eq!(keys(&state), ["ns/old"], "not whole yet");
        state.apply(&page(Some("c"), None, "b"));
        assert_eq!(keys(&state), ["ns/a", "ns/b"]);
        assert_eq!(state.kinds["pods"].resource_version, "9");
        state.apply(&event("DELETED", pod("a", 10), 10));
        assert_eq!(keys(&state), ["ns/b"]);
    }

    #[test]
    fn a_watch_list_replaces_the_store_at_its_closing_bookmark() {
        let mut state = State::default();
        state.apply(&event("ADDED", pod("gone", 1), 1));
        state.apply(&Record::WatchStart {
            kind: "pods".into(),
            at: 0,
            resource_version: String::new(),
            send_initial_events: true,
        });
        state.apply(&event("ADDED", pod("a", 4), 4));
        assert_eq!(keys(&state), ["ns/gone"]);
        state.apply(&event(
            "BOOKMARK",
            raw(r#"{"metadata":{"resourceVersion":"7","annotations":{"k8s.io/initial-events-end":"true"}}}"#),
            7,
        ));
        assert_eq!(keys(&state), ["ns/a"]);
        assert_eq!(state.kinds["pods"].resource_version, "7");
    }
}
