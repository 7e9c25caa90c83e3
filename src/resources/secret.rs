//! The Secret projection, and the masking of a Secret's values wherever its JSON is kept or
//! shown. The projection keeps what kubectl's table shows (type, number of data keys) and the
//! key names, never a value: `data` and `stringData` values are skipped unread, and the
//! last-applied annotation, which holds the values too, is dropped.

use std::fmt;
use std::marker::PhantomData;

use base64::Engine as _;
use bytes::Bytes;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

use super::meta::{FIRST_KIND_SLOT, WireMeta, non_empty};
use super::packed::{
    Builder, FieldValues, LAST_APPLIED_ANNOTATION, Labels, PackError, Packed, Str,
};
use super::time::Timestamp;
use super::{KubeResource, ResourceKind};

const TYPE: usize = FIRST_KIND_SLOT;
const LABELS: usize = 1;
const ANNOTATIONS: usize = 2;
const DATA_KEYS: usize = 3;
const SECTIONS: usize = 4;

/// A Secret as kscope stores it: metadata, type and the names of its data keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret {
    strings: Packed<SECTIONS>,
    created: Option<Timestamp>,
}

impl Secret {
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels().get(key)
    }

    /// `metadata.annotations`, without the last-applied configuration.
    pub fn annotations(&self) -> Labels<'_> {
        Labels::new(self.strings.rows(ANNOTATIONS))
    }

    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations().get(key)
    }

    /// `type` (`Opaque`, `kubernetes.io/tls`, ...); `None` when the server sent none.
    pub fn secret_type(&self) -> Option<&str> {
        non_empty(self.strings.get(TYPE))
    }

    /// The keys of `data` and `stringData`, sorted, each once.
    pub fn data_keys(&self) -> impl ExactSizeIterator<Item = &str> {
        self.strings.rows::<1>(DATA_KEYS).iter().map(|[k]| k)
    }

    /// kubectl's DATA column: how many keys.
    pub fn data_count(&self) -> usize {
        self.strings.rows::<1>(DATA_KEYS).len()
    }

    fn from_wire(w: &WireSecret<'_>, fields: &FieldValues<'_>) -> Result<Self, PackError> {
        let mut keys: Vec<&str> = w
            .data
            .iter()
            .chain(&w.string_data)
            .flat_map(|k| k.0.iter().map(Str::as_str))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let mut b = Builder::<SECTIONS>::new();
        w.metadata.push_scalars(&mut b);
        b.push_opt(w.type_.as_ref());
        b.end_section();
        b.push_map(w.metadata.labels.as_ref());
        b.end_section();
        b.push_map(w.metadata.annotations.as_ref());
        b.end_section();
        for key in keys {
            b.push(key);
        }
        b.end_section();
        b.push_field_values(fields);
        Ok(Self {
            strings: b.finish()?,
            created: w.metadata.creation_timestamp,
        })
    }
}

object_impls!(Secret, ResourceKind::Secrets);

/// True for a core `Secret`.
pub fn is_secret(object: &Value) -> bool {
    object.get("kind").and_then(Value::as_str) == Some("Secret")
        && object.get("apiVersion").and_then(Value::as_str) == Some("v1")
}

/// How every mask starts, so that masking what is already masked changes nothing.
const MASK: &str = "••••••••";

/// Whether a mask also tells one value from another (see [`fingerprint`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    SizeOnly,
    Fingerprinted,
}

/// A keyed digest of a secret value: SipHash under a random key made once per process and
/// never shown, so equal values within one run look equal (a rotation shows as a change in
/// the delta panel) while no one can test a guess against it.
fn fingerprint(value: &str) -> u32 {
    use std::hash::{BuildHasher, RandomState};
    static KEY: std::sync::OnceLock<RandomState> = std::sync::OnceLock::new();
    // Only 32 bits are shown: enough to see a change, too few to identify a value.
    KEY.get_or_init(RandomState::new).hash_one(value) as u32
}

/// Masks one value of `data` (base64: the size is the decoded one) or `stringData`.
fn mask_as(value: &Value, base64: bool, style: Style) -> Value {
    let text = match value {
        Value::String(s) if s.starts_with(MASK) => return value.clone(),
        Value::String(s) => std::borrow::Cow::Borrowed(s.as_str()),
        other => std::borrow::Cow::Owned(other.to_string()),
    };
    let bytes = match base64 {
        true => base64::engine::general_purpose::STANDARD
            .decode(text.as_bytes())
            .map_or(text.len(), |decoded| decoded.len()),
        false => text.len(),
    };
    Value::String(match style {
        Style::SizeOnly => format!("{MASK} ({bytes} bytes)"),
        Style::Fingerprinted => format!("{MASK} ({bytes} bytes, #{:08x})", fingerprint(&text)),
    })
}

/// Masks one value of `data` (base64: the size is the decoded one) or `stringData`; the
/// mask shows its size only.
pub fn mask_value(value: &Value, base64: bool) -> Value {
    mask_as(value, base64, Style::SizeOnly)
}

fn mask_map_as(map: &mut Map<String, Value>, base64: bool, style: Style) -> usize {
    for value in map.values_mut() {
        *value = mask_as(value, base64, style);
    }
    map.len()
}

pub fn mask_map(map: &mut Map<String, Value>, base64: bool) -> usize {
    mask_map_as(map, base64, Style::SizeOnly)
}

fn mask_secret_as(object: &mut Value, style: Style) -> usize {
    let mut masked = 0;
    for (field, base64) in [("data", true), ("stringData", false)] {
        if let Some(map) = object.get_mut(field).and_then(Value::as_object_mut) {
            masked += mask_map_as(map, base64, style);
        }
    }
    if let Some(annotations) = object
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
        && let Some(applied) = annotations.get_mut(LAST_APPLIED_ANNOTATION)
    {
        *applied = mask_as(applied, false, style);
        masked += 1;
    }
    masked
}

/// Masks every value under `data` and `stringData`, and the last-applied annotation, which
/// `kubectl apply` fills with the whole Secret in clear, by their sizes. Returns how many
/// were masked.
pub fn mask_secret(object: &mut Value) -> usize {
    mask_secret_as(object, Style::SizeOnly)
}

/// What of a raw watch object may be kept by anything that keeps raw JSON (the tap, and
/// through it the delta panel, history diffs and `kscope deltas`): a Secret with its values
/// masked, any other object as it is, nothing when an object that mentions `"Secret"` cannot
/// be parsed (it cannot be told apart from a Secret). Masks carry a fingerprint, so what
/// changed still shows. Only objects mentioning `"Secret"` are parsed, so other kinds cost
/// one substring search. What is returned is bytes of its own: `raw` is a slice of the body
/// frame it came in, and a kept slice would hold that whole frame.
pub fn keepable_raw(raw: Bytes) -> Option<Bytes> {
    if memchr::memmem::find(&raw, b"\"Secret\"").is_none() {
        return Some(Bytes::copy_from_slice(&raw));
    }
    let mut object: Value = serde_json::from_slice(&raw).ok()?;
    if !is_secret(&object) {
        return Some(Bytes::copy_from_slice(&raw));
    }
    mask_secret_as(&mut object, Style::Fingerprinted);
    serde_json::to_vec(&object).ok().map(Bytes::from)
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireSecret<'a> {
    #[serde(borrow, default)]
    metadata: WireMeta<'a>,
    #[serde(borrow, rename = "type")]
    type_: Option<Str<'a>>,
    #[serde(borrow)]
    data: Option<KeysOnly<'a>>,
    #[serde(borrow)]
    string_data: Option<KeysOnly<'a>>,
}

/// The keys of a JSON object whose values are skipped without being decoded.
struct KeysOnly<'a>(Vec<Str<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for KeysOnly<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = KeysOnly<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            /// Without this, serde's error would quote the string: a value, maybe secret.
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Err(E::custom("expected a map, found a string"))
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<Str<'a>>()? {
                    map.next_value::<IgnoredAny>()?;
                    keys.push(key);
                }
                Ok(KeysOnly(keys))
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode;
    use kscope_informers::instrument::tap::Tap;
    use kscope_informers::object::Object;
    use kscope_informers::testing::record_watch;

    const SECRET: &str = r#"{
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "db", "namespace": "shop", "uid": "u-1", "resourceVersion": "7",
            "creationTimestamp": "2025-03-14T09:21:07Z", "labels": {"app": "db"},
            "annotations": {"team": "payments",
                "kubectl.kubernetes.io/last-applied-configuration": "{\"data\":{\"password\":\"aHVudGVyMg==\"}}"},
            "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:data": {"f:password": {}}}}]},
        "type": "Opaque",
        "data": {"username": "YWRtaW4=", "password": "aHVudGVyMg=="},
        "stringData": {"extra": "plain-text-value", "password": "hunter2"}
    }"#;

    #[test]
    fn keeps_keys_and_metadata_never_values() {
        let secret: Secret = decode(SECRET.as_bytes()).unwrap();
        assert_eq!(secret.name(), "db");
        assert_eq!(secret.namespace(), Some("shop"));
        assert_eq!(secret.uid(), "u-1");
        assert_eq!(secret.resource_version(), Some("7"));
        assert_eq!(secret.secret_type(), Some("Opaque"));
        assert_eq!(
            secret.data_keys().collect::<Vec<_>>(),
            ["extra", "password", "username"]
        );
        assert_eq!(secret.data_count(), 3);
        assert_eq!(secret.label("app"), Some("db"));
        assert_eq!(secret.annotation("team"), Some("payments"));
        assert_eq!(secret.annotations().len(), 1);
        assert!(secret.created().is_some());
        let kept = format!("{secret:?}");
        for value in ["aHVudGVyMg", "YWRtaW4", "hunter2", "plain-text-value"] {
            assert!(!kept.contains(value), "{value} kept: {kept}");
        }
    }

    #[test]
    fn a_secret_without_data_or_type_decodes() {
        let secret: Secret = decode(br#"{"metadata":{"name":"empty","namespace":"a"}}"#).unwrap();
        assert_eq!(secret.data_count(), 0);
        assert_eq!(secret.secret_type(), None);
    }

    /// A Secret's values, and the last-applied annotation holding them, are masked before
    /// the ring keeps the raw object: the changed paths and the diff carry masks only.
    #[test]
    fn secret_values_are_masked_before_they_are_kept() {
        let tap = Tap::new(10, keepable_raw);
        let mut rx = tap.subscribe();
        let secret = |password: &str, token: &str| {
            serde_json::json!({
                "apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "db", "namespace": "ns", "resourceVersion": "1",
                    "annotations": {"kubectl.kubernetes.io/last-applied-configuration":
                        format!("{{\"data\":{{\"password\":\"{password}\"}}}}")}},
                "type": "Opaque",
                "data": {"password": password},
                "stringData": {"token": token},
            })
            .to_string()
        };
        record_watch(&tap, "ns/db", 1, &secret("c2VjcmV0LW9uZQ==", "plain-one"));
        record_watch(&tap, "ns/db", 2, &secret("c2VjcmV0LXR3b29v", "plain-twooo"));
        let entries = tap.snapshot();
        let broadcast = rx.try_recv().unwrap();
        for entry in entries.iter().chain([&broadcast]) {
            for raw in [&entry.raw, &entry.previous_raw].into_iter().flatten() {
                let text = String::from_utf8_lossy(raw);
                for value in ["c2VjcmV0", "plain-one", "plain-twooo"] {
                    assert!(!text.contains(value), "{value} kept in {text}");
                }
            }
        }
        let raw: Value = serde_json::from_slice(entries[1].raw.as_ref().unwrap()).unwrap();
        let mask = raw["data"]["password"].as_str().unwrap();
        assert!(mask.starts_with("•••••••• (12 bytes, #"), "{mask}");
        assert_eq!(raw["metadata"]["name"], "db");
        assert_eq!(
            entries[1].changed_paths().unwrap(),
            [
                "data.password",
                "metadata.annotations[\"kubectl.kubernetes.io/last-applied-configuration\"]",
                "stringData.token"
            ]
        );
        let diff = format!("{:?}", entries[1].diff().unwrap());
        assert!(
            !diff.contains("c2VjcmV0") && !diff.contains("plain-"),
            "{diff}"
        );
    }

    #[test]
    fn other_kinds_are_kept_byte_for_byte() {
        let tap = Tap::new(10, keepable_raw);
        let pod = r#"{"kind":"Pod","apiVersion":"v1","spec":{"volumes":[{"secret":{"secretName":"Secret"}}]}}"#;
        record_watch(&tap, "ns/p", 1, pod);
        assert_eq!(tap.snapshot()[0].raw.as_deref(), Some(pod.as_bytes()));
    }
}
