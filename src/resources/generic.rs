//! The projection of any kind without a hand-written one: its metadata, the cells of the
//! server's Table row (kubectl's columns, for custom resources their
//! `additionalPrinterColumns`) and its health from `status.conditions`, never the rest of the
//! object. A Secret's data is never read (`data` is not a member this projection names).
//!
//! It decodes from three shapes: an object, a Table row (`{"cells": [...], "object": {...}}`,
//! a list page's item in Table form) and a one-row Table (a watch event's object in Table
//! form). Members of unexpected types in `status` are read as absent, not as an error: a
//! custom resource's status is whatever its controller writes.
//!
//! Field indexes by JSONPath that apply to the kind are evaluated while an object is decoded
//! (see [`super::decoding_with`]) and only their values are kept, each under its index's name.
//!
//! A custom resource is read as plain JSON with its CRD's printer columns evaluated here, as
//! the API server's table convertor evaluates them (see [`decoding_with_columns`]): only the
//! members the columns' and field indexes' paths reach ([`Reach`]) are built as JSON, the
//! rest of the object is skipped unread.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::field_index::{FieldIndexes, Reach, Reached, decode_fields};
use super::meta::{
    FIRST_KIND_SLOT, WireMeta, controller_owner, controller_owner_key, non_empty, owner_refs,
};
use super::packed::{Builder, Labels, PackError, Packed, Str};
use super::time::Timestamp;
use super::{ConditionStatus, OwnerRef};

const HEALTH_REASON: usize = FIRST_KIND_SLOT;
const LABELS: usize = 1;
const ANNOTATIONS: usize = 2;
const OWNERS: usize = 3;
const FINALIZERS: usize = 4;
const CELLS: usize = 5;
/// `[index name, value]` rows: the values of the field indexes evaluated at decode time.
const FIELDS: usize = 6;
const SECTIONS: usize = 7;

/// A custom resource's printer column (an `additionalPrinterColumns` entry), evaluated on
/// each object as it is decoded; the layer that knows kubectl's JSONPath dialect implements
/// it, with the API server's rules for the column's type.
pub trait PrinterColumn: Send + Sync {
    /// The parts of an object its path reads; only these are read for it.
    fn reach(&self) -> &Reach;

    /// The cell as kubectl prints the server's, `now` being when the object is read (a
    /// `date` column prints the time since); `None` for a nil cell.
    fn cell(&self, object: &Value, now: Timestamp) -> Option<String>;
}

/// Makes printer columns of `additionalPrinterColumns` entries: handed to the client layer
/// by the layer that knows kubectl's JSONPath dialect.
pub trait PrinterColumnCompiler: Send + Sync {
    /// The column of type `type_` (`string`, `integer`, `number`, `boolean`, `date`) whose
    /// value is at `json_path`; an error says why the path does not parse.
    fn compile(&self, type_: &str, json_path: &str) -> Result<Arc<dyn PrinterColumn>, String>;
}

/// How kubectl prints a nil cell, which a missing value or one of the wrong type gives:
/// as nothing (kubectl's table printer writes no `<none>` for it).
pub const NIL_CELL: &str = "";

/// What the decode of a custom resource read as plain JSON evaluates: its printer columns
/// (after the name, which is always the first cell) and the kind's field indexes, with the
/// members of the object they reach.
pub struct ClientColumns {
    columns: Vec<Arc<dyn PrinterColumn>>,
    fields: Option<FieldIndexes>,
    /// The members of the object's top kept for the columns and indexes.
    top: Reach,
    /// Those of `metadata` when a path reaches into it (with what the projection reads),
    /// `None` when none does and it is read straight into the projection.
    metadata: Option<Reach>,
    /// Those of `status`: the conditions (for the health) and what the paths reach.
    status: Reach,
}

impl ClientColumns {
    pub fn new(columns: Vec<Arc<dyn PrinterColumn>>, fields: Option<FieldIndexes>) -> Self {
        let reaches = columns.iter().map(|c| c.reach().clone()).chain(
            fields
                .iter()
                .flat_map(|f| f.iter())
                .map(|f| f.reach().clone()),
        );
        let top = reaches.fold(Reach::Nothing, Reach::union).settled();
        let metadata = top.child("metadata").map(|paths| {
            META_MEMBERS
                .iter()
                .fold(paths.clone(), |kept, member| {
                    kept.union(Reach::member(*member, Reach::Whole))
                })
                .settled()
        });
        let status = top
            .child("status")
            .cloned()
            .unwrap_or_default()
            .union(Reach::member("conditions", Reach::Whole))
            .settled();
        Self {
            columns,
            fields: fields.filter(|f| !f.is_empty()),
            top,
            metadata,
            status,
        }
    }

    /// The number of printer columns (the name not counted).
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }
}

/// The members of `metadata` the projection reads.
const META_MEMBERS: [&str; 11] = [
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
];

thread_local! {
    /// The printer columns of the decode running on this thread, if any.
    static DECODE_COLUMNS: RefCell<Option<Arc<ClientColumns>>> = const { RefCell::new(None) };
}

/// Runs `decode` with every generic object it decodes read as a plain custom resource with
/// `columns` evaluated on it (and its field indexes; [`decoding_with`]'s are then unused).
pub fn decoding_with_columns<R>(
    columns: Option<&Arc<ClientColumns>>,
    decode: impl FnOnce() -> R,
) -> R {
    let previous = DECODE_COLUMNS.with(|cell| cell.replace(columns.cloned()));
    let out = decode();
    DECODE_COLUMNS.with(|cell| *cell.borrow_mut() = previous);
    out
}

/// Which condition says how an object is doing, in the order they are looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HealthCondition {
    Ready,
    Available,
    Progressing,
}

impl HealthCondition {
    const ALL: [Self; 3] = [Self::Ready, Self::Available, Self::Progressing];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ready => "Ready",
            Self::Available => "Available",
            Self::Progressing => "Progressing",
        }
    }
}

/// The health an object's conditions give: the first of Ready, Available and Progressing it
/// has, with its status (and reason, kept apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Health {
    pub condition: HealthCondition,
    pub status: ConditionStatus,
}

/// Any kind's object as kscope keeps it when no hand-written projection exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenericObject {
    strings: Packed<SECTIONS>,
    created: Option<Timestamp>,
    deleted: Option<Timestamp>,
    generation: Option<i64>,
    controller: Option<u32>,
    health: Option<Health>,
    /// An Event's: when it was last seen (its series', else its last timestamp, else its
    /// event time), kept so that LAST SEEN ages on screen and sorts by time.
    last_seen: Option<Timestamp>,
    /// An Event of type Warning, highlighted.
    warning: bool,
    /// When the Table row's cells were read (`None` for an object not read in Table form):
    /// a cell printing a time since (a CronJob's LAST SCHEDULE, a `date` printer column)
    /// was the server's at that moment, and ages on screen from it.
    read_at: Option<Timestamp>,
}

impl GenericObject {
    /// When an Event was last seen; `None` for other kinds.
    pub fn last_seen(&self) -> Option<Timestamp> {
        self.last_seen
    }

    /// An Event of type Warning.
    pub fn is_warning(&self) -> bool {
        self.warning
    }

    /// When the cells were read from the server's Table.
    pub fn read_at(&self) -> Option<Timestamp> {
        self.read_at
    }

    pub fn annotations(&self) -> Labels<'_> {
        Labels::new(self.strings.rows(ANNOTATIONS))
    }

    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations().get(key)
    }

    pub fn owner_references(&self) -> impl ExactSizeIterator<Item = OwnerRef<'_>> {
        owner_refs(self.strings.rows(OWNERS), self.controller)
    }

    pub fn controller_owner_key(&self) -> Option<&str> {
        controller_owner_key(self.strings.rows(OWNERS), self.controller)
    }

    /// The managing controller as (kind, name).
    pub fn controller_owner(&self) -> Option<(&str, &str)> {
        controller_owner(self.strings.rows(OWNERS), self.controller)
    }

    pub fn finalizers(&self) -> impl ExactSizeIterator<Item = &str> {
        self.strings.rows::<1>(FINALIZERS).iter().map(|[f]| f)
    }

    pub fn generation(&self) -> Option<i64> {
        self.generation
    }

    pub fn deleted(&self) -> Option<Timestamp> {
        self.deleted
    }

    /// The cells of the server's Table row, in its columns' order; none when the object was
    /// not read from a Table.
    pub fn table_cells(&self) -> impl ExactSizeIterator<Item = &str> {
        self.strings.rows::<1>(CELLS).iter().map(|[c]| c)
    }

    /// Cell `i`, or `None` past the row's end.
    pub fn cell(&self, i: usize) -> Option<&str> {
        let cells = self.strings.rows::<1>(CELLS);
        (i < cells.len()).then(|| cells.row(i)[0])
    }

    pub fn health(&self) -> Option<Health> {
        self.health
    }

    /// The values of the field index `index`, as evaluated when the object was decoded.
    pub fn field_values(&self, index: &str) -> impl Iterator<Item = &str> {
        self.strings
            .rows::<2>(FIELDS)
            .iter()
            .filter(move |[name, _]| *name == index)
            .map(|[_, value]| value)
    }

    /// The reason of the condition [`GenericObject::health`] comes from, if it gave one.
    pub fn health_reason(&self) -> Option<&str> {
        non_empty(self.strings.get(HEALTH_REASON))
    }

    /// The projection of `w`, keeping `fields`' values (index name, value).
    fn from_wire(w: &WireGeneric<'_>, fields: Vec<(&str, String)>) -> Result<Self, PackError> {
        // A row's object is the object; a one-row Table's row is the row.
        let row = w.rows.as_ref().and_then(|rows| rows.first()).unwrap_or(w);
        let object = row.object.as_deref().unwrap_or(row);
        let last_seen = [
            object.series.as_ref().and_then(|s| s.0.as_deref()),
            object.last_timestamp.0.as_deref(),
            object.deprecated_last_timestamp.0.as_deref(),
            object.event_time.0.as_deref(),
        ]
        .into_iter()
        .flatten()
        .find_map(|t| Timestamp::parse(t).ok());
        let cells = row
            .cells
            .as_ref()
            .map(|cells| cells.iter().map(|c| c.0.as_str()));
        let event = EventParts {
            last_seen,
            warning: object.type_.0.as_deref() == Some("Warning"),
        };
        let parts = Parts {
            meta: object.metadata.as_ref(),
            status: object.status.as_ref(),
            event,
            fields,
        };
        Self::from_parts(parts, cells, Timestamp::now)
    }

    /// The projection of an object's parts; `cells` (`None`: not read in Table form) were
    /// read at `read_at`.
    fn from_parts<'c>(
        parts: Parts<'_, '_, '_>,
        cells: Option<impl Iterator<Item = &'c str>>,
        read_at: impl FnOnce() -> Timestamp,
    ) -> Result<Self, PackError> {
        let Parts {
            meta,
            status,
            event,
            fields,
        } = parts;
        let empty = WireMeta::default();
        let meta = meta.unwrap_or(&empty);
        let health = status.and_then(WireStatus::health);
        let mut b = Builder::<SECTIONS>::new();
        meta.push_scalars(&mut b);
        b.push(health.and_then(|(_, reason)| reason).unwrap_or(""));
        b.end_section();
        b.push_map(meta.labels.as_ref());
        b.end_section();
        b.push_map(meta.annotations.as_ref());
        b.end_section();
        let controller = meta.push_owners(&mut b);
        b.end_section();
        for finalizer in meta.finalizers.as_deref().unwrap_or_default() {
            b.push(finalizer.as_str());
        }
        b.end_section();
        let read_at = cells.map(|cells| {
            for cell in cells {
                b.push(cell);
            }
            read_at()
        });
        b.end_section();
        for (name, value) in fields {
            b.push(name);
            b.push_cow(value.into());
        }
        b.end_section();
        Ok(Self {
            strings: b.finish()?,
            created: meta.creation_timestamp,
            deleted: meta.deletion_timestamp,
            generation: meta.generation,
            controller,
            health: health.map(|(health, _)| health),
            last_seen: event.last_seen,
            warning: event.warning,
            read_at,
        })
    }

    /// A plain custom resource's projection with `columns` evaluated on what `map` (the
    /// object's members) holds, reading only the members they reach.
    fn read_custom<'de, M: MapAccess<'de>>(
        mut map: M,
        columns: &ClientColumns,
    ) -> Result<Self, M::Error> {
        let mut meta: Option<WireMeta<'de>> = None;
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<Str<'de>>()? {
            let wanted = match key.as_str() {
                "metadata" => match &columns.metadata {
                    None => {
                        meta = Some(map.next_value()?);
                        continue;
                    }
                    Some(wanted) => wanted,
                },
                "status" => &columns.status,
                other => match columns.top.child(other) {
                    Some(wanted) => wanted,
                    None => {
                        map.next_value::<IgnoredAny>()?;
                        continue;
                    }
                },
            };
            let value = map.next_value_seed(Reached(wanted))?;
            object.insert(key.as_str().to_string(), value);
        }
        // No path reaches the metadata, which went straight into the projection: the field
        // indexes still get the key, to count the objects their paths do not fit.
        if let (Some(meta), Some(_)) = (&meta, &columns.fields) {
            let text = |s: &Option<Str<'_>>| s.as_ref().map(|s| Value::from(s.as_str()));
            let mut key = serde_json::Map::new();
            key.extend(text(&meta.name).map(|name| ("name".to_string(), name)));
            key.extend(text(&meta.namespace).map(|ns| ("namespace".to_string(), ns)));
            object.insert("metadata".to_string(), Value::Object(key));
        }
        let object = Value::Object(object);
        let read = match (&meta, object.get("metadata")) {
            (None, Some(value)) => Some(WireMeta::deserialize(value).map_err(de::Error::custom)?),
            _ => None,
        };
        // Two lifetimes (the input's, the kept members'): one call each.
        match &meta {
            Some(meta) => Self::custom_from(Some(meta), &object, columns),
            None => Self::custom_from(read.as_ref(), &object, columns),
        }
        .map_err(de::Error::custom)
    }

    /// [`GenericObject::read_custom`]'s projection of `object`, the members kept.
    fn custom_from(
        meta: Option<&WireMeta<'_>>,
        object: &Value,
        columns: &ClientColumns,
    ) -> Result<Self, PackError> {
        let status = match object.get("status") {
            // Anything but an object reads as no status: this does not fail.
            Some(value) => WireStatus::deserialize(value).ok(),
            None => None,
        };
        let now = Timestamp::now();
        let name = meta.and_then(|m| m.name.as_ref()).map_or("", Str::as_str);
        let printed: Vec<Option<String>> = columns
            .columns
            .iter()
            .map(|c| c.cell(object, now))
            .collect();
        let printed: Vec<Cow<'_, str>> = printed
            .iter()
            .map(|c| c.as_deref().map_or(Cow::Borrowed(NIL_CELL), first_line))
            .collect();
        let cells = std::iter::once(name).chain(printed.iter().map(|c| c.as_ref()));
        let mut fields = Vec::new();
        for field in columns.fields.iter().flat_map(|f| f.iter()) {
            for value in field.values(object).unwrap_or_default() {
                fields.push((field.name(), value));
            }
        }
        let parts = Parts {
            meta,
            status: status.as_ref(),
            event: EventParts::default(),
            fields,
        };
        Self::from_parts(parts, Some(cells), || now)
    }
}

/// What [`GenericObject::from_parts`] builds a projection of.
struct Parts<'w, 'a, 'f> {
    meta: Option<&'w WireMeta<'a>>,
    status: Option<&'w WireStatus>,
    event: EventParts,
    /// The field indexes' values: (index name, value).
    fields: Vec<(&'f str, String)>,
}

/// An Event's: when it was last seen, and whether it is a Warning.
#[derive(Default)]
struct EventParts {
    last_seen: Option<Timestamp>,
    warning: bool,
}

object_impls!(@meta GenericObject, {
    fn controller_owner_key(&self) -> Option<&str> {
        GenericObject::controller_owner_key(self)
    }

    fn controller_owner(&self) -> Option<(&str, &str)> {
        GenericObject::controller_owner(self)
    }
});

impl<'de> Deserialize<'de> for GenericObject {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        if let Some(columns) = DECODE_COLUMNS.with(|cell| cell.borrow().clone()) {
            return d.deserialize_map(CustomResource(&columns));
        }
        let fields = decode_fields();
        let Some(fields) = fields else {
            let wire = WireGeneric::deserialize(d)?;
            return GenericObject::from_wire(&wire, Vec::new()).map_err(de::Error::custom);
        };
        let value = serde_json::Value::deserialize(d)?;
        let wire = WireGeneric::deserialize(&value).map_err(de::Error::custom)?;
        // The object: a row's, a one-row Table's row's, or the value itself.
        let row = value
            .get("rows")
            .and_then(|rows| rows.get(0))
            .unwrap_or(&value);
        let object = row.get("object").unwrap_or(row);
        let mut values = Vec::new();
        for field in fields.iter() {
            for v in field.values(object).unwrap_or_default() {
                values.push((field.name(), v));
            }
        }
        GenericObject::from_wire(&wire, values).map_err(de::Error::custom)
    }
}

/// A custom resource read as plain JSON, with its printer columns.
struct CustomResource<'c>(&'c ClientColumns);

impl<'de> Visitor<'de> for CustomResource<'_> {
    type Value = GenericObject;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a custom resource")
    }

    fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<GenericObject, M::Error> {
        GenericObject::read_custom(map, self.0)
    }
}

/// Every shape a generic object arrives in; see the module's documentation.
#[derive(Deserialize, Default)]
struct WireGeneric<'a> {
    #[serde(borrow, default)]
    metadata: Option<WireMeta<'a>>,
    #[serde(default)]
    status: Option<WireStatus>,
    #[serde(default)]
    cells: Option<Vec<Cell>>,
    #[serde(borrow, default)]
    object: Option<Box<WireGeneric<'a>>>,
    #[serde(borrow, default)]
    rows: Option<Vec<WireGeneric<'a>>>,
    // An Event's (core/v1 or events.k8s.io/v1); read leniently: in another kind a member of
    // the same name may hold anything.
    #[serde(default, rename = "type")]
    type_: LenientText,
    #[serde(default, rename = "lastTimestamp")]
    last_timestamp: LenientText,
    #[serde(default, rename = "deprecatedLastTimestamp")]
    deprecated_last_timestamp: LenientText,
    #[serde(default, rename = "eventTime")]
    event_time: LenientText,
    #[serde(default)]
    series: Option<LenientSeries>,
}

/// A string member, or `None` when it holds anything else.
#[derive(Default)]
struct LenientText(Option<String>);

impl<'de> Deserialize<'de> for LenientText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) => Self(Some(s)),
            _ => Self(None),
        })
    }
}

/// An Event series' `lastObservedTime`, or `None` for anything else.
struct LenientSeries(Option<String>);

impl<'de> Deserialize<'de> for LenientSeries {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self(
            match serde_json::Value::deserialize(d)?.get_mut("lastObservedTime") {
                Some(serde_json::Value::String(s)) => Some(std::mem::take(s)),
                _ => None,
            },
        ))
    }
}

/// `status`, of which only the conditions are read; anything but an object is no status.
#[derive(Default)]
struct WireStatus {
    conditions: Vec<WireCondition>,
}

struct WireCondition {
    type_: Option<String>,
    status: Option<String>,
    reason: Option<String>,
}

impl WireStatus {
    /// The first of Ready, Available and Progressing among the conditions, with its reason.
    fn health(&self) -> Option<(Health, Option<&str>)> {
        HealthCondition::ALL.into_iter().find_map(|condition| {
            let c = self
                .conditions
                .iter()
                .find(|c| c.type_.as_deref() == Some(condition.as_str()))?;
            let status = match c.status.as_deref() {
                Some("True") => ConditionStatus::True,
                Some("False") => ConditionStatus::False,
                _ => ConditionStatus::Unknown,
            };
            Some((Health { condition, status }, c.reason.as_deref()))
        })
    }
}

impl<'de> Deserialize<'de> for WireStatus {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = WireStatus;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a status")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<WireStatus, M::Error> {
                let mut status = WireStatus::default();
                while let Some(key) = map.next_key::<Str<'de>>()? {
                    if key.as_str() == "conditions" {
                        status.conditions = map.next_value::<Conditions>()?.0;
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(status)
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<WireStatus, S::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(WireStatus::default())
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<WireStatus, E> {
                Ok(WireStatus::default())
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<WireStatus, E> {
                Ok(WireStatus::default())
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<WireStatus, E> {
                Ok(WireStatus::default())
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<WireStatus, E> {
                Ok(WireStatus::default())
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<WireStatus, E> {
                Ok(WireStatus::default())
            }
            fn visit_unit<E: de::Error>(self) -> Result<WireStatus, E> {
                Ok(WireStatus::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// `status.conditions`: a list of objects; anything else in it is skipped.
struct Conditions(Vec<WireCondition>);

impl<'de> Deserialize<'de> for Conditions {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Conditions;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of conditions")
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Conditions, S::Error> {
                let mut out = Vec::new();
                while let Some(c) = seq.next_element::<Lenient<ConditionFields>>()? {
                    if let Some(ConditionFields(c)) = c.0 {
                        out.push(c);
                    }
                }
                Ok(Conditions(out))
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Conditions, M::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Conditions(Vec::new()))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Conditions, E> {
                Ok(Conditions(Vec::new()))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Conditions, E> {
                Ok(Conditions(Vec::new()))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Conditions, E> {
                Ok(Conditions(Vec::new()))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Conditions, E> {
                Ok(Conditions(Vec::new()))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Conditions, E> {
                Ok(Conditions(Vec::new()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Conditions, E> {
                Ok(Conditions(Vec::new()))
            }
        }
        d.deserialize_any(V)
    }
}

/// One condition's type, status and reason; members of other types read as absent.
struct ConditionFields(WireCondition);

impl<'de> Deserialize<'de> for ConditionFields {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ConditionFields;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a condition")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<ConditionFields, M::Error> {
                let mut c = WireCondition {
                    type_: None,
                    status: None,
                    reason: None,
                };
                while let Some(key) = map.next_key::<Str<'de>>()? {
                    let slot = match key.as_str() {
                        "type" => &mut c.type_,
                        "status" => &mut c.status,
                        "reason" => &mut c.reason,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    *slot = map.next_value::<Lenient<String>>()?.0;
                }
                Ok(ConditionFields(c))
            }
        }
        d.deserialize_map(V)
    }
}

/// A value of type `T`, or `None` when the JSON holds something else (which is skipped).
struct Lenient<T>(Option<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Buffered as a JSON value: conditions are small, and only a value that is there can
        // be tried as `T` and dropped if it is not one.
        let value = serde_json::Value::deserialize(d)?;
        Ok(Lenient(T::deserialize(value).ok()))
    }
}

/// A Table cell as kubectl prints it: a string up to its first line break (then `...`), a
/// number or boolean as written, nothing for null, and lists and objects as Go's `%v` does.
struct Cell(String);

impl<'de> Deserialize<'de> for Cell {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        Ok(Cell(match &value {
            serde_json::Value::String(s) => first_line(s).into_owned(),
            serde_json::Value::Null => NIL_CELL.to_string(),
            other => go_value(other),
        }))
    }
}

/// A string cell as kubectl prints it: up to its first line break, then `...`.
fn first_line(s: &str) -> Cow<'_, str> {
    match s.find(['\n', '\r', '\x0c']) {
        Some(at) => Cow::Owned(format!("{}...", &s[..at])),
        None => Cow::Borrowed(s),
    }
}

/// How Go's `fmt.Sprint` prints a decoded JSON value (maps sorted by key, as Go's `fmt`
/// sorts them).
fn go_value(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Null => "<nil>".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(go_value).collect();
            format!("[{}]", items.join(" "))
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let entries: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{k}:{}", go_value(v)))
                .collect();
            format!("map[{}]", entries.join(" "))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::KubeResource;
    use crate::decode::from_slice;
    use crate::field_index::{FieldIndex, FieldIndexes, decoding_with};
    use kscope_informers::object::Object;

    /// A kind with a slash (which no API server accepts, but a hostile one may send) and a
    /// name with one are each read back as they were sent.
    #[test]
    fn an_owners_kind_and_name_stay_apart_whatever_they_hold() {
        let object = br#"{"metadata":{"name":"w","ownerReferences":[
            {"kind":"a/b","name":"c","uid":"u1","controller":true},
            {"kind":"a","name":"b/c","uid":"u2"}]}}"#;
        let w: GenericObject = from_slice(object).unwrap();
        let owners: Vec<(&str, &str, &str, bool)> = w
            .owner_references()
            .map(|o| (o.kind, o.name, o.uid, o.controller))
            .collect();
        assert_eq!(
            owners,
            [("a/b", "c", "u1", true), ("a", "b/c", "u2", false)]
        );
        assert_eq!(KubeResource::controller_owner(&w), Some(("a/b", "c")));
    }

    #[test]
    fn a_table_row_keeps_metadata_cells_and_health_not_the_rest() {
        let row = br#"{"cells":["w1","blue",3,null,["a","b"],"two\nlines"],
            "object":{"kind":"Widget","metadata":{"name":"w1","namespace":"web","uid":"u1",
            "resourceVersion":"7","generation":2,"labels":{"app":"x"},"annotations":{"a":"b"},
            "finalizers":["f1"],"creationTimestamp":"2024-01-01T00:00:00Z",
            "ownerReferences":[{"kind":"Gadget","name":"g","uid":"u0","controller":true}]},
            "spec":{"secret":"never kept"},
            "status":{"conditions":[{"type":"Progressing","status":"True"},
                {"type":"Ready","status":"False","reason":"Broken"}]}}}"#;
        let w: GenericObject = from_slice(row).unwrap();
        assert_eq!(w.name(), "w1");
        assert_eq!(w.namespace(), Some("web"));
        assert_eq!(w.uid(), "u1");
        assert_eq!(w.resource_version(), Some("7"));
        assert_eq!(w.generation(), Some(2));
        assert_eq!(w.labels().get("app"), Some("x"));
        assert_eq!(w.annotation("a"), Some("b"));
        assert_eq!(w.finalizers().collect::<Vec<_>>(), ["f1"]);
        assert_eq!(w.controller_owner_key(), Some("Gadget/g"));
        assert_eq!(
            w.table_cells().collect::<Vec<_>>(),
            ["w1", "blue", "3", "", "[a b]", "two..."]
        );
        assert_eq!(
            w.health(),
            Some(Health {
                condition: HealthCondition::Ready,
                status: ConditionStatus::False
            })
        );
        assert_eq!(w.health_reason(), Some("Broken"));
        assert!(!format!("{w:?}").contains("never kept"));
    }

    /// A field index of the test's own: the string at `/spec/<member>`, if any.
    struct Member(&'static str);

    impl FieldIndex for Member {
        fn name(&self) -> &str {
            self.0
        }

        fn values(&self, object: &serde_json::Value) -> Option<Vec<String>> {
            match object.get("spec")?.get(self.0)? {
                serde_json::Value::String(s) => Some(vec![s.clone()]),
                _ => None,
            }
        }
    }

    #[test]
    fn field_indexes_are_evaluated_while_decoding_and_only_their_values_kept() {
        let fields: FieldIndexes = Arc::from([
            Arc::new(Member("colour")) as Arc<dyn FieldIndex>,
            Arc::new(Member("size")),
        ]);
        let row = br#"{"cells":["w1"],"object":{"metadata":{"name":"w1"},
            "spec":{"colour":"blue","size":3,"secret":"never kept"}}}"#;
        let table = br#"{"kind":"Table","rows":[{"cells":["w2"],
            "object":{"metadata":{"name":"w2"},"spec":{"colour":"red"}}}]}"#;
        let plain = br#"{"metadata":{"name":"w3"},"spec":{"colour":"green"}}"#;
        let decoded: Vec<GenericObject> = decoding_with(Some(&fields), || {
            [&row[..], &table[..], &plain[..]]
                .into_iter()
                .map(|json| from_slice(json).unwrap())
                .collect()
        });
        let colours: Vec<Vec<&str>> = decoded
            .iter()
            .map(|w| w.field_values("colour").collect())
            .collect();
        assert_eq!(colours, [["blue"], ["red"], ["green"]]);
        // A value the index does not fit (a number) is left out.
        assert_eq!(decoded[0].field_values("size").count(), 0);
        assert_eq!(decoded[0].cell(0), Some("w1"));
        assert!(!format!("{:?}", decoded[0]).contains("never kept"));
        // Outside `decoding_with` nothing is evaluated.
        let w: GenericObject = from_slice(plain).unwrap();
        assert_eq!(w.field_values("colour").count(), 0);
    }

    /// A field index that indexes the key it is shown, as `namespace/name`.
    struct Key;

    impl FieldIndex for Key {
        fn name(&self) -> &str {
            "key"
        }

        fn values(&self, object: &serde_json::Value) -> Option<Vec<String>> {
            let text = |p: &str| object.pointer(p)?.as_str().map(str::to_string);
            Some(vec![format!(
                "{}/{}",
                text("/metadata/namespace")?,
                text("/metadata/name")?
            )])
        }
    }

    #[test]
    fn a_custom_resources_field_indexes_see_its_key_though_no_path_reaches_metadata() {
        let fields: FieldIndexes = Arc::from([Arc::new(Key) as Arc<dyn FieldIndex>]);
        let columns = Arc::new(ClientColumns::new(Vec::new(), Some(fields)));
        let plain = br#"{"metadata":{"name":"w1","namespace":"web","uid":"u1"},"spec":{}}"#;
        let w: GenericObject = decoding_with_columns(Some(&columns), || from_slice(plain).unwrap());
        assert_eq!(w.field_values("key").collect::<Vec<_>>(), ["web/w1"]);
        assert_eq!(w.uid(), "u1", "the metadata still goes into the projection");
    }

    #[test]
    fn a_one_row_table_and_a_plain_object_decode_and_odd_statuses_are_no_status() {
        let table = br#"{"kind":"Table","columnDefinitions":[{"name":"Name","type":"string"}],
            "rows":[{"cells":["w2"],"object":{"metadata":{"name":"w2"}}}]}"#;
        let w: GenericObject = from_slice(table).unwrap();
        assert_eq!((w.name(), w.cell(0)), ("w2", Some("w2")));
        for status in [
            r#""ok""#,
            "3",
            "[1]",
            r#"{"conditions":"none"}"#,
            r#"{"conditions":[1,{"type":5,"status":"True"}]}"#,
        ] {
            let json = format!(r#"{{"metadata":{{"name":"w3"}},"status":{status}}}"#);
            let w: GenericObject = from_slice(json.as_bytes()).unwrap();
            assert_eq!((w.name(), w.health()), ("w3", None), "{status}");
        }
    }
}
