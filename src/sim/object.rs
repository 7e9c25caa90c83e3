//! One stored object version: its JSON encoded once, plus the few fields selectors and
//! cascading deletes need, so that lists and watches never decode or re-encode it.

use bytes::Bytes;
use serde_json::Value;

/// Pod fields that field selectors may name (metadata ones come from the key).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SelectableFields {
    pub node_name: Option<Box<str>>,
    pub phase: Option<Box<str>>,
    pub pod_ip: Option<Box<str>>,
}

/// An immutable object version as served.
#[derive(Debug)]
pub struct StoredObject {
    /// The wire form, with `metadata.resourceVersion` already set.
    pub json: Bytes,
    pub labels: Box<[(Box<str>, Box<str>)]>,
    pub fields: SelectableFields,
    pub uid: Box<str>,
    /// UID of the controlling owner (ownerReferences with controller=true), for cascades.
    pub controller_uid: Option<Box<str>>,
}

impl StoredObject {
    /// Encodes `value` (which must already carry its resourceVersion).
    pub fn encode(value: &Value) -> Result<Self, serde_json::Error> {
        // Exact-size allocation: a growing Vec has up to twice the capacity it needs.
        let json = Bytes::from(serde_json::to_vec(value)?.into_boxed_slice());
        let meta = &value["metadata"];
        let labels = meta["labels"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.as_str().into(), v.as_str().unwrap_or("").into()))
                    .collect()
            })
            .unwrap_or_default();
        let text = |v: &Value| v.as_str().map(Box::from);
        let controller_uid = meta["ownerReferences"].as_array().and_then(|refs| {
            refs.iter()
                .find(|r| r["controller"].as_bool() == Some(true))
                .and_then(|r| text(&r["uid"]))
        });
        Ok(Self {
            json,
            labels,
            fields: SelectableFields {
                node_name: text(&value["spec"]["nodeName"]),
                phase: text(&value["status"]["phase"]),
                pod_ip: text(&value["status"]["podIP"]),
            },
            uid: text(&meta["uid"]).unwrap_or_default(),
            controller_uid,
        })
    }

    /// Decodes the stored wire form for a read-modify-write.
    pub fn decode(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_slice(&self.json)
    }
}
