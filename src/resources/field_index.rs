//! Field indexes evaluated while objects are decoded, the only time a projection sees the
//! whole object: a kind's lister-watcher wraps its decoding in [`decoding_with`], and the
//! projection keeps only the values, each under its index's name.
//!
//! The generic projection reads each object whole into JSON to evaluate them. A
//! hand-written projection (pods, nodes, ...) is tuned to read only what it keeps, so it
//! reads the object twice instead: its own members as without field indexes, and then only
//! the parts of the object the indexes' paths can reach ([`Reach`]), into a JSON value that
//! holds nothing else. Without field indexes its decoding is as it was.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::decode::{RAW_TEXT, read, read_seed};
use super::packed::{FieldValues, PackError, Str};

/// A field index a projection evaluates on each object as it decodes it.
pub trait FieldIndex: Send + Sync {
    /// The index's name, under which its values are kept.
    fn name(&self) -> &str;

    /// The values `object` (the whole object, as the server sent it, or of it at least
    /// what [`FieldIndex::reach`] says) has in this index; `None` when the path does not fit
    /// the object, which then leaves it out of the index.
    fn values(&self, object: &Value) -> Option<Vec<String>>;

    /// The parts of an object [`FieldIndex::values`] reads: a hand-written projection reads
    /// only these.
    fn reach(&self) -> &Reach {
        static WHOLE: Reach = Reach::Whole;
        &WHOLE
    }
}

/// The field indexes of one kind's informer.
pub type FieldIndexes = Arc<[Arc<dyn FieldIndex>]>;

/// The parts of a JSON value something reads.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Reach {
    /// The value, whole.
    Whole,
    /// Of an object, the members named (each in part) and, with `every`, every member; of a
    /// list, each item through `every` (or none). A scalar is read as it is.
    Part {
        members: BTreeMap<String, Reach>,
        every: Option<Box<Reach>>,
    },
    /// Nothing.
    #[default]
    Nothing,
}

impl Reach {
    /// Member `name` of an object, read as `then` says.
    pub fn member(name: impl Into<String>, then: Reach) -> Self {
        Self::Part {
            members: BTreeMap::from([(name.into(), then)]),
            every: None,
        }
    }

    /// Every member of an object or item of a list, read as `then` says.
    pub fn every(then: Reach) -> Self {
        Self::Part {
            members: BTreeMap::new(),
            every: Some(Box::new(then)),
        }
    }

    /// What `self` or `other` reads.
    pub fn union(self, other: Reach) -> Reach {
        match (self, other) {
            (Self::Whole, _) | (_, Self::Whole) => Self::Whole,
            (Self::Nothing, r) | (r, Self::Nothing) => r,
            (
                Self::Part { members, every },
                Self::Part {
                    members: other_members,
                    every: other_every,
                },
            ) => {
                let mut members = members;
                for (name, reach) in other_members {
                    let merged = match members.remove(&name) {
                        Some(mine) => mine.union(reach),
                        None => reach,
                    };
                    members.insert(name, merged);
                }
                let every = match (every, other_every) {
                    (Some(a), Some(b)) => Some(Box::new(a.union(*b))),
                    (a, b) => a.or(b),
                };
                Self::Part { members, every }
            }
        }
    }

    /// Whether anything at or under the member path `path` is read (`["data"]`: the
    /// object's `data`, or a part of it).
    pub fn reads(&self, path: &[&str]) -> bool {
        let Some((first, rest)) = path.split_first() else {
            return !matches!(self, Self::Nothing);
        };
        match self {
            Self::Whole => true,
            Self::Nothing => false,
            Self::Part { members, every } => {
                members.get(*first).is_some_and(|r| r.reads(rest))
                    || every.as_deref().is_some_and(|r| r.reads(rest))
            }
        }
    }

    /// What is read of member `name` of an object: of a [`Reach::settled`] reach, by one
    /// look-up; `None` when nothing is.
    pub(crate) fn child(&self, name: &str) -> Option<&Reach> {
        static WHOLE: Reach = Reach::Whole;
        match self {
            Self::Whole => Some(&WHOLE),
            Self::Nothing => None,
            Self::Part { members, every } => members.get(name).or(every.as_deref()),
        }
    }

    /// The same reach with `every` folded into each named member, so that a member's
    /// reach is found by one look-up while reading.
    pub(crate) fn settled(self) -> Self {
        match self {
            Self::Part { members, every } => {
                let every = every.map(|e| Box::new(e.settled()));
                let members = members
                    .into_iter()
                    .map(|(name, reach)| {
                        let reach = match &every {
                            Some(e) => reach.union((**e).clone()),
                            None => reach,
                        };
                        (name, reach.settled())
                    })
                    .collect();
                Self::Part { members, every }
            }
            other => other,
        }
    }
}

/// The field indexes of a decode, with what they read together.
#[derive(Clone)]
pub(crate) struct ActiveFields {
    fields: FieldIndexes,
    reach: Arc<Reach>,
}

thread_local! {
    /// The field indexes of the decode running on this thread, if any (a decode runs on one
    /// thread, start to end, without awaiting).
    static DECODE_FIELDS: RefCell<Option<ActiveFields>> = const { RefCell::new(None) };
    /// The last field indexes decoded with on this thread and their reach, so that a watch
    /// line (one object per `decoding_with`) does not work out the reach again.
    static LAST_REACH: RefCell<Option<ActiveFields>> = const { RefCell::new(None) };
}

/// Runs `decode` with `fields` evaluated on every object it decodes. Decoding is generic
/// over the stored type and cannot take them as an argument; the lister-watcher of a kind
/// with field indexes wraps its decoding in this.
pub fn decoding_with<R>(fields: Option<&FieldIndexes>, decode: impl FnOnce() -> R) -> R {
    let active = fields.filter(|f| !f.is_empty()).map(active);
    let previous = DECODE_FIELDS.with(|cell| cell.replace(active));
    let out = decode();
    DECODE_FIELDS.with(|cell| *cell.borrow_mut() = previous);
    out
}

/// `fields` with their reach: the last one worked out on this thread when they are the same.
fn active(fields: &FieldIndexes) -> ActiveFields {
    LAST_REACH.with(|cell| {
        let mut last = cell.borrow_mut();
        if let Some(known) = last.as_ref().filter(|l| Arc::ptr_eq(&l.fields, fields)) {
            return known.clone();
        }
        // The key, for counting misfits by object and for a misfit's log line.
        let name = Reach::member("metadata", Reach::member("name", Reach::Whole)).union(
            Reach::member("metadata", Reach::member("namespace", Reach::Whole)),
        );
        let reach = fields
            .iter()
            .fold(name, |reach, field| reach.union(field.reach().clone()));
        let known = ActiveFields {
            fields: fields.clone(),
            reach: Arc::new(reach.settled()),
        };
        *last = Some(known.clone());
        known
    })
}

/// The field indexes of the decode running on this thread.
pub(crate) fn decode_fields() -> Option<FieldIndexes> {
    DECODE_FIELDS.with(|cell| cell.borrow().as_ref().map(|a| a.fields.clone()))
}

/// Whether the decode running on this thread has field indexes: a cheap test, for the
/// projections whose decoding without them must stay as fast as it is.
pub(crate) fn active_fields() -> Option<ActiveFields> {
    DECODE_FIELDS.with(|cell| cell.borrow().clone())
}

/// Decodes an object with its field indexes' values: its text is taken whole, read into the
/// projection's wire type `W` as without field indexes, and read again for the indexes,
/// keeping only what they reach. `project` makes the projection of the two.
pub(crate) fn decode_with_fields<'de, D, W, T>(
    d: D,
    active: &ActiveFields,
    project: impl FnOnce(&W, &FieldValues<'_>) -> Result<T, PackError>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    W: Deserialize<'de>,
{
    let RawText(text) = RawText::deserialize(d)?;
    let wire: W = read(text)
        .or_else(|_| serde_json::from_slice(text))
        .map_err(de::Error::custom)?;
    let object = reached(text, &active.reach).map_err(de::Error::custom)?;
    let mut values = Vec::new();
    for field in active.fields.iter() {
        for value in field.values(&object).unwrap_or_default() {
            values.push((field.name(), value));
        }
    }
    project(&wire, &values).map_err(de::Error::custom)
}

/// Of the object `text`, only what `reach` reads.
pub fn reached(text: &[u8], reach: &Reach) -> Result<Value, serde_json::Error> {
    match read_seed(text, Reached(reach)) {
        Ok(value) => Ok(value),
        // Read by serde_json, in its words if it fails too (see `decode::from_slice`).
        Err(_) => {
            let mut de = serde_json::Deserializer::from_slice(text);
            let value = Reached(reach).deserialize(&mut de)?;
            de.end()?;
            Ok(value)
        }
    }
}

/// A value's text, borrowed from the input: from [`super::decode`]'s deserializer, which
/// knows [`RAW_TEXT`], or from serde_json's, as its raw value.
struct RawText<'de>(&'de [u8]);

impl<'de> Deserialize<'de> for RawText<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawText<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object's text")
            }
            fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<RawText<'de>, E> {
                Ok(RawText(v))
            }
            fn visit_newtype_struct<D: Deserializer<'de>>(
                self,
                d: D,
            ) -> Result<RawText<'de>, D::Error> {
                let raw = <&'de RawValue>::deserialize(d)?;
                Ok(RawText(raw.get().as_bytes()))
            }
        }
        d.deserialize_newtype_struct(RAW_TEXT, V)
    }
}

/// Reads a JSON value into what `0` reaches of it, skipping the rest unread. A value of
/// another type than the reach expects (a string where members are named) is kept as it is
/// (a list or an object: empty), so that a path can still tell it does not fit.
pub(crate) struct Reached<'r>(pub(crate) &'r Reach);

impl<'de> DeserializeSeed<'de> for Reached<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        match self.0 {
            Reach::Whole => Value::deserialize(d),
            Reach::Nothing => IgnoredAny::deserialize(d).map(|_| Value::Null),
            Reach::Part { members, every } => d.deserialize_any(InPart {
                members,
                every: every.as_deref(),
            }),
        }
    }
}

/// [`Reached`] on a value of which a part is read.
struct InPart<'r> {
    members: &'r BTreeMap<String, Reach>,
    every: Option<&'r Reach>,
}

impl<'de> Visitor<'de> for InPart<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Value, M::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<Str<'de>>()? {
            match self.members.get(key.as_str()).or(self.every) {
                Some(reach) => {
                    let value = map.next_value_seed(Reached(reach))?;
                    out.insert(key.as_str().to_string(), value);
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(out))
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Value, S::Error> {
        let mut out = Vec::new();
        match self.every {
            Some(every) => {
                while let Some(item) = seq.next_element_seed(Reached(every))? {
                    out.push(item);
                }
            }
            None => while seq.next_element::<IgnoredAny>()?.is_some() {},
        }
        Ok(Value::Array(out))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reaches_unite_and_read_only_what_they_name() {
        let images = Reach::member(
            "spec",
            Reach::member(
                "containers",
                Reach::every(Reach::member("image", Reach::Whole)),
            ),
        );
        let names = Reach::member("spec", Reach::every(Reach::member("name", Reach::Whole)));
        let both = images.clone().union(names).settled();
        assert!(both.reads(&["spec", "containers"]));
        assert!(both.reads(&["spec", "volumes"]));
        assert!(!both.reads(&["status"]));
        assert_eq!(images.clone().union(Reach::Whole), Reach::Whole);
        assert_eq!(Reach::Nothing.union(images.clone()), images);
        let pod = br#"{"metadata":{"name":"p","uid":"u"},"spec":{"nodeName":"n1",
            "containers":[{"name":"app","image":"a:1","env":[{"name":"X","value":"y"}]},
                {"name":"sidecar","image":"s:2"}],"volumes":[{"name":"v","emptyDir":{}}]}}"#;
        let read = reached(pod, &both).unwrap();
        // Every member of spec is read for its `name`, which a list has none of (a list's
        // items are read only past a wildcard or an index); a scalar is kept as it is.
        assert_eq!(
            read,
            serde_json::json!({"spec":{"nodeName":"n1",
                "containers":[{"image":"a:1"},{"image":"s:2"}],
                "volumes":[]}})
        );
    }
}
