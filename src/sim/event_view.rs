//! One Event store, two APIs: as in the real server, an events.k8s.io/v1 Event is the
//! core/v1 Event of the same name seen with renamed fields (`note` for `message`,
//! `regarding` for `involvedObject`, `deprecated*` for the recorder's old counters…). The
//! store keeps each event under both resources at the same resourceVersion, converting the
//! one written into the other, so both lists and watches have the same items, names and
//! resourceVersions whichever API wrote them.

use serde_json::{Map, Value};

use crate::object::StoredObject;
use crate::resources::Resource;

/// Fields under their core/v1 name and their events.k8s.io/v1 name; the rest of an
/// Event's fields have the same name in both.
const RENAMED: [(&str, &str); 7] = [
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("reportingComponent", "reportingController"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
];

/// Fields both versions have under one name.
const SHARED: [&str; 8] = [
    "metadata",
    "reason",
    "type",
    "action",
    "related",
    "series",
    "eventTime",
    "reportingInstance",
];

/// The other API's resource for an Event resource; `None` for any other resource.
pub fn other(resource: Resource) -> Option<Resource> {
    match resource {
        Resource::Events => Some(Resource::EventsV1),
        Resource::EventsV1 => Some(Resource::Events),
        _ => None,
    }
}

/// `object`, an Event of `from`, as the other API serves it (same metadata, so the same
/// name and resourceVersion); `None` if `from` is not an Event resource or it cannot be
/// read.
pub fn convert(from: Resource, object: &StoredObject) -> Option<StoredObject> {
    let to_v1 = match from {
        Resource::Events => true,
        Resource::EventsV1 => false,
        _ => return None,
    };
    let value = object.decode().ok()?;
    let source = value.as_object()?;
    let mut out = Map::new();
    out.insert("kind".into(), Value::String("Event".into()));
    let api_version = if to_v1 { "events.k8s.io/v1" } else { "v1" };
    out.insert("apiVersion".into(), Value::String(api_version.into()));
    let pairs = RENAMED
        .iter()
        .map(|&(core, v1)| if to_v1 { (core, v1) } else { (v1, core) })
        .chain(SHARED.iter().map(|&f| (f, f)));
    for (from_name, to_name) in pairs {
        match source.get(from_name) {
            None | Some(Value::Null) => {}
            // The v1 API leaves out a zero count, as its omitempty does.
            Some(Value::Number(n)) if to_v1 && from_name == "count" && n.as_u64() == Some(0) => {}
            Some(v) => {
                out.insert(to_name.into(), v.clone());
            }
        }
    }
    StoredObject::encode(&Value::Object(out)).ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_event_reads_the_same_through_either_api_and_back() {
        let core = json!({
            "kind": "Event", "apiVersion": "v1",
            "metadata": {"name": "web-1.17", "namespace": "shop", "resourceVersion": "42"},
            "involvedObject": {"kind": "Pod", "name": "web-1"},
            "reason": "BackOff", "message": "Back-off restarting", "type": "Warning",
            "source": {"component": "kubelet", "host": "node-1"},
            "firstTimestamp": "2025-01-01T00:00:00Z", "lastTimestamp": "2025-01-01T00:05:00Z",
            "count": 7, "eventTime": null, "reportingComponent": "kubelet", "reportingInstance": "node-1",
        });
        let stored = StoredObject::encode(&core).unwrap();
        let v1 = convert(Resource::Events, &stored)
            .unwrap()
            .decode()
            .unwrap();
        assert_eq!(v1["apiVersion"], "events.k8s.io/v1");
        assert_eq!(v1["note"], "Back-off restarting");
        assert_eq!(v1["regarding"]["name"], "web-1");
        assert_eq!(v1["reportingController"], "kubelet");
        assert_eq!(v1["deprecatedCount"], 7);
        assert_eq!(v1["metadata"]["resourceVersion"], "42");
        assert!(v1.get("eventTime").is_none());
        let back = convert(Resource::EventsV1, &StoredObject::encode(&v1).unwrap())
            .unwrap()
            .decode()
            .unwrap();
        let mut expected = core.clone();
        expected.as_object_mut().unwrap().remove("eventTime");
        assert_eq!(back, expected);
        assert!(convert(Resource::Pods, &stored).is_none());
    }
}
