//! One stored object version: its JSON encoded once, plus the few fields selectors and
//! cascading deletes need, so that lists and watches never decode or re-encode it.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;
use serde_json::value::RawValue;

/// Pod fields that field selectors may name (metadata ones come from the key), and the two
/// the endpoints and status counts read of every pod of an app or a Deployment on each
/// change to one of them: decoding each of those pods whole again was most of the churn's
/// core at 150,000 pods.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SelectableFields {
    pub node_name: Option<Box<str>>,
    pub phase: Option<Box<str>>,
    pub pod_ip: Option<Box<str>>,
    /// Its `Ready` condition is `True`.
    pub ready: bool,
    /// It carries a `deletionTimestamp`.
    pub terminating: bool,
}

/// An immutable object version as served.
#[derive(Debug)]
pub struct StoredObject {
    /// The wire form, with `metadata.resourceVersion` already set.
    pub json: Bytes,
    /// Where the resourceVersion's digits sit in `json`, when they can be found unambiguously:
    /// a version that differs only in its resourceVersion (a DELETED event's last state) is
    /// then a splice instead of a decode and re-encode of the whole object.
    rv_span: Option<(usize, usize)>,
    /// Shared, as is the uid and the owner's: the versions of one object (and the pods of
    /// one template) have the same ones, and a version is made per write.
    pub labels: Arc<[(Box<str>, Box<str>)]>,
    pub fields: SelectableFields,
    pub uid: Arc<str>,
    /// UID of the controlling owner (ownerReferences with controller=true), for cascades.
    pub controller_uid: Option<Arc<str>>,
    /// The UIDs of all its owners (every ownerReference), so that the garbage collector
    /// finds an owner's dependents without reading every object's JSON.
    pub owner_uids: Arc<[Arc<str>]>,
}

impl StoredObject {
    /// Encodes `value` (which must already carry its resourceVersion).
    pub fn encode(value: &Value) -> Result<Self, serde_json::Error> {
        // Exact-size allocation: a growing Vec has up to twice the capacity it needs.
        let json = Bytes::from(serde_json::to_vec(value)?.into_boxed_slice());
        let meta = &value["metadata"];
        let rv_span = meta["resourceVersion"]
            .as_str()
            .and_then(|rv| resource_version_span(&json, rv));
        let labels = meta["labels"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.as_str().into(), v.as_str().unwrap_or("").into()))
                    .collect()
            })
            .unwrap_or_default();
        let references = meta["ownerReferences"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        let controller_uid: Option<Arc<str>> = references
            .iter()
            .find(|r| r["controller"].as_bool() == Some(true))
            .and_then(|r| r["uid"].as_str().map(Arc::from));
        let owner_uids = references
            .iter()
            .filter_map(|r| r["uid"].as_str())
            .map(|uid| match &controller_uid {
                Some(controller) if **controller == *uid => controller.clone(),
                _ => Arc::from(uid),
            })
            .collect();
        Ok(Self {
            json,
            rv_span,
            labels,
            fields: SelectableFields {
                node_name: text(&value["spec"]["nodeName"]),
                phase: text(&value["status"]["phase"]),
                pod_ip: text(&value["status"]["podIP"]),
                ready: ready(&value["status"]),
                terminating: meta["deletionTimestamp"].is_string(),
            },
            uid: meta["uid"].as_str().map(Arc::from).unwrap_or_default(),
            controller_uid,
            owner_uids,
        })
    }

    /// An object whose JSON was written directly (pods rendered from a template): the caller
    /// vouches that `json` matches the other fields and that `rv_span` holds its
    /// resourceVersion.
    pub fn from_encoded(
        json: Vec<u8>,
        rv_span: (usize, usize),
        like: &StoredObject,
        uid: Arc<str>,
        fields: SelectableFields,
    ) -> Self {
        Self {
            json: Bytes::from(json),
            rv_span: Some(rv_span),
            labels: like.labels.clone(),
            fields,
            uid,
            controller_uid: like.controller_uid.clone(),
            owner_uids: like.owner_uids.clone(),
        }
    }

    /// This version stamped with another resourceVersion.
    pub fn with_resource_version(&self, rv: u64) -> Result<Self, serde_json::Error> {
        let Some((start, end)) = self.rv_span else {
            let mut value = self.decode()?;
            value["metadata"]["resourceVersion"] = Value::String(rv.to_string());
            return Self::encode(&value);
        };
        let rv = rv.to_string();
        let mut json = Vec::with_capacity(self.json.len() - (end - start) + rv.len());
        json.extend_from_slice(&self.json[..start]);
        json.extend_from_slice(rv.as_bytes());
        json.extend_from_slice(&self.json[end..]);
        Ok(Self {
            json: Bytes::from(json),
            rv_span: Some((start, start + rv.len())),
            labels: self.labels.clone(),
            fields: self.fields.clone(),
            uid: self.uid.clone(),
            controller_uid: self.controller_uid.clone(),
            owner_uids: self.owner_uids.clone(),
        })
    }

    /// This version with its top-level `member` (such as `status`) changed by `f` and the
    /// resourceVersion `rv`. Only that member is decoded and re-encoded; the rest of the JSON
    /// (metadata with its managedFields, spec) is copied as it is, in one pass, so keys stay
    /// in the order they were stored in (a full encode's).
    pub fn with_member(
        &self,
        member: &str,
        rv: u64,
        f: impl FnOnce(&mut Value),
    ) -> Result<Self, serde_json::Error> {
        let top: BTreeMap<&str, &RawValue> = match serde_json::from_slice(&self.json) {
            Ok(top) => top,
            // Escaped keys cannot be borrowed: take the long way.
            Err(_) => return self.with_member_decoded(member, rv, f),
        };
        let (Some(raw), Some((rv_start, rv_end))) = (top.get(member), self.rv_span) else {
            return self.with_member_decoded(member, rv, f);
        };
        // The raw value borrows from the stored text: its offset there is where the new one
        // goes.
        let start = (raw.get().as_ptr() as usize).wrapping_sub(self.json.as_ptr() as usize);
        let end = start + raw.get().len();
        if end > self.json.len() || (rv_start < end && start < rv_end) {
            return self.with_member_decoded(member, rv, f);
        }
        let mut value: Value = serde_json::from_str(raw.get())?;
        f(&mut value);
        let encoded = serde_json::to_vec(&value)?;
        let rv_text = rv.to_string();
        // Both changes spliced in one copy of the rest of the text.
        let mut splices = [
            (start, end, encoded.as_slice()),
            (rv_start, rv_end, rv_text.as_bytes()),
        ];
        splices.sort_by_key(|(at, _, _)| *at);
        let size =
            self.json.len() + encoded.len() + rv_text.len() - (end - start) - (rv_end - rv_start);
        let mut json = Vec::with_capacity(size);
        let mut rv_span = (0, 0);
        let mut from = 0;
        for (at, to, text) in splices {
            json.extend_from_slice(&self.json[from..at]);
            if at == rv_start {
                rv_span = (json.len(), json.len() + text.len());
            }
            json.extend_from_slice(text);
            from = to;
        }
        json.extend_from_slice(&self.json[from..]);
        let mut fields = self.fields.clone();
        match member {
            "spec" => fields.node_name = text(&value["nodeName"]),
            "status" => {
                fields.phase = text(&value["phase"]);
                fields.pod_ip = text(&value["podIP"]);
                fields.ready = ready(&value);
            }
            _ => {}
        }
        Ok(Self {
            json: Bytes::from(json),
            rv_span: Some(rv_span),
            labels: self.labels.clone(),
            fields,
            uid: self.uid.clone(),
            controller_uid: self.controller_uid.clone(),
            owner_uids: self.owner_uids.clone(),
        })
    }

    fn with_member_decoded(
        &self,
        member: &str,
        rv: u64,
        f: impl FnOnce(&mut Value),
    ) -> Result<Self, serde_json::Error> {
        let mut value = self.decode()?;
        f(&mut value[member]);
        value["metadata"]["resourceVersion"] = Value::String(rv.to_string());
        Self::encode(&value)
    }

    /// Decodes the stored wire form for a read-modify-write.
    pub fn decode(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_slice(&self.json)
    }
}

fn text(v: &Value) -> Option<Box<str>> {
    v.as_str().map(Box::from)
}

/// Whether `status` holds a `Ready` condition that is `True`.
fn ready(status: &Value) -> bool {
    status["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
    })
}

/// The span of `rv` in `"resourceVersion":"<rv>"` when that text occurs exactly once in
/// `json`: then it is `metadata.resourceVersion` (which the encoded value carries) and
/// nothing else.
fn resource_version_span(json: &[u8], rv: &str) -> Option<(usize, usize)> {
    let needle = format!("\"resourceVersion\":\"{rv}\"");
    let mut found = memchr::memmem::find_iter(json, needle.as_bytes());
    let at = found.next()?;
    if found.next().is_some() {
        return None;
    }
    let start = at + needle.len() - rv.len() - 1;
    Some((start, start + rv.len()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_member_changed_alone_is_what_a_full_encode_gives() {
        let mut value = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"labels": {"app": "web"}, "name": "a", "resourceVersion": "5", "uid": "u1"},
            "spec": {"nodeName": "n1"},
            "status": {"phase": "Pending"},
        });
        let stored = StoredObject::encode(&value).unwrap();
        let changed = stored
            .with_member("status", 6, |s| {
                s["phase"] = json!("Running");
                s["podIP"] = json!("10.0.0.1");
                s["conditions"] = json!([{"type": "Ready", "status": "True"}]);
            })
            .unwrap();
        assert!(!stored.fields.ready && changed.fields.ready);
        value["status"]["phase"] = json!("Running");
        value["status"]["podIP"] = json!("10.0.0.1");
        value["status"]["conditions"] = json!([{"type": "Ready", "status": "True"}]);
        value["metadata"]["resourceVersion"] = json!("6");
        let want = StoredObject::encode(&value).unwrap();
        assert_eq!(changed.json, want.json);
        assert_eq!(changed.fields, want.fields);
        assert_eq!(changed.labels, want.labels);
        assert_eq!(changed.rv_span, want.rv_span);
        // Marked for deletion (metadata holds the resourceVersion, so this takes the full
        // encode): Terminating.
        let marked = changed
            .with_member("metadata", 7, |m| {
                m["deletionTimestamp"] = json!("2025-01-01T00:00:30Z");
            })
            .unwrap();
        value["metadata"]["deletionTimestamp"] = json!("2025-01-01T00:00:30Z");
        value["metadata"]["resourceVersion"] = json!("7");
        assert!(!changed.fields.terminating && marked.fields.terminating);
        assert_eq!(marked.fields, StoredObject::encode(&value).unwrap().fields);
        let deleted = changed.with_resource_version(1234).unwrap();
        assert_eq!(
            deleted.decode().unwrap()["metadata"]["resourceVersion"],
            "1234"
        );
    }
}
