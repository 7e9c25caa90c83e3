//! One object's timeline: its versions as the watch delivered them, its Events, and for each
//! field that changed the managedFields entry (manager, operation, time) that owns it after
//! the change, all ordered by resourceVersion (etcd's revision, shared by the object and its
//! Events, so the two interleave as they happened).

use kscope_informers::instrument::diff::changed_paths;
use serde_json::Value;

use super::managed_fields::{field_paths, is_noise, owner_of};

/// A field that changed, and who owns it after the change.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Change {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manager: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subresource: Option<String>,
    /// When the manager last wrote (managedFields' `time`, whole seconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
}

/// An Event about the object.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EventNote {
    #[serde(rename = "type")]
    pub type_: String,
    pub reason: String,
    pub message: String,
    pub count: u64,
    /// Who reported it (`reportingController`, else `source.component`).
    pub source: String,
}

/// One line of the timeline.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub resource_version: String,
    /// `STATE` (the object as first read: each field with its last writer), a watch event's
    /// type (`ADDED`, `MODIFIED`, `DELETED`), or `EVENT`.
    pub what: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<Change>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<EventNote>,
}

fn text(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

fn change(path: String, entry: Option<&Value>) -> Change {
    Change {
        path,
        manager: entry.and_then(|e| text(&e["manager"])),
        operation: entry.and_then(|e| text(&e["operation"])),
        subresource: entry.and_then(|e| text(&e["subresource"])),
        time: entry.and_then(|e| text(&e["time"])),
    }
}

/// Builds a timeline from the object's versions and Events, in any order.
#[derive(Debug, Default)]
pub struct TimelineBuilder {
    previous: Option<Value>,
    entries: Vec<Entry>,
}

impl TimelineBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// A version of the object: `what` is `STATE` for the object as first read, else the
    /// watch event's type. The first version lists every field its managers own, oldest
    /// write first; a later one the fields that changed since the previous version.
    pub fn version(&mut self, what: &str, object: &Value) {
        let changes = match (&self.previous, what) {
            (_, "DELETED") => Vec::new(),
            (Some(previous), _) => changed_paths(previous, object, &is_noise)
                .into_iter()
                .map(|path| {
                    let owner = owner_of(object, &path);
                    change(path, owner)
                })
                .collect(),
            (None, _) => {
                let mut managers: Vec<&Value> = object["metadata"]["managedFields"]
                    .as_array()
                    .map(|all| all.iter().collect())
                    .unwrap_or_default();
                managers.sort_by(|a, b| a["time"].as_str().cmp(&b["time"].as_str()));
                managers
                    .into_iter()
                    .flat_map(|e| {
                        field_paths(&e["fieldsV1"])
                            .into_iter()
                            .map(move |path| change(path, Some(e)))
                    })
                    .collect()
            }
        };
        self.entries.push(Entry {
            resource_version: text(&object["metadata"]["resourceVersion"]).unwrap_or_default(),
            what: what.to_string(),
            changes,
            event: None,
        });
        self.previous = Some(object.clone());
    }

    /// An Event whose involvedObject is the object.
    pub fn event(&mut self, event: &Value) {
        let source = text(&event["reportingController"])
            .filter(|s| !s.is_empty())
            .or_else(|| text(&event["source"]["component"]))
            .unwrap_or_default();
        self.entries.push(Entry {
            resource_version: text(&event["metadata"]["resourceVersion"]).unwrap_or_default(),
            what: "EVENT".to_string(),
            changes: Vec::new(),
            event: Some(EventNote {
                type_: text(&event["type"]).unwrap_or_default(),
                reason: text(&event["reason"]).unwrap_or_default(),
                message: text(&event["note"])
                    .or_else(|| text(&event["message"]))
                    .unwrap_or_default(),
                count: event["count"]
                    .as_u64()
                    .or_else(|| event["series"]["count"].as_u64())
                    .unwrap_or(1),
                source,
            }),
        });
    }

    /// The entries by resourceVersion (those without a numeric one last, as they came).
    pub fn finish(mut self) -> Vec<Entry> {
        self.entries
            .sort_by_key(|e| e.resource_version.parse::<u64>().unwrap_or(u64::MAX));
        self.entries
    }
}

impl Change {
    /// Who changed the field, as the timeline prints it: `manager (Operation/subresource
    /// time)`, the manager alone without an operation, `<unknown>` without a manager.
    pub fn by(&self) -> String {
        match (&self.manager, &self.operation) {
            (Some(m), Some(op)) => {
                let sub = self
                    .subresource
                    .as_deref()
                    .map(|s| format!("/{s}"))
                    .unwrap_or_default();
                let at = self.time.as_deref().unwrap_or("");
                format!("{m} ({op}{sub} {at})")
            }
            (Some(m), None) => m.clone(),
            _ => "<unknown>".to_string(),
        }
    }
}

impl EventNote {
    /// The Event as one cell: `Normal ScalingReplicaSet: message (x2)`.
    pub fn summary(&self) -> String {
        format!(
            "{} {}: {} (x{})",
            self.type_, self.reason, self.message, self.count
        )
    }
}

fn resource_version(object: &Value) -> u64 {
    object["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0)
}

/// A timeline kept as its inputs arrive, for a view that follows the object (the CLI's
/// `--for`, the TUI's `:timeline`): the object as first read, the watch's versions of it,
/// and its Events, each Event at its latest version. Versions may arrive before the first
/// read (the watch starts first, so none falls between): those not newer than it are
/// dropped when the timeline is built.
#[derive(Debug, Default, Clone)]
pub struct LiveTimeline {
    first: Option<Value>,
    versions: Vec<(String, Value)>,
    /// Events by uid: a repeated Event comes back with its count bumped.
    events: Vec<Value>,
}

impl LiveTimeline {
    pub fn new() -> Self {
        Self::default()
    }

    /// The object as first read; whose uid the versions and Events must have.
    pub fn first_read(&mut self, object: Value) {
        self.first = Some(object);
    }

    /// Whether the object has been read.
    pub fn read(&self) -> bool {
        self.first.is_some()
    }

    /// A version from the watch, `what` its event type; false when it is of another
    /// object (by uid, once read) or no newer than the first read.
    pub fn version(&mut self, what: &str, object: &Value) -> bool {
        if let Some(first) = &self.first
            && (object["metadata"]["uid"] != first["metadata"]["uid"]
                || resource_version(object) <= resource_version(first))
        {
            return false;
        }
        self.versions.push((what.to_string(), object.clone()));
        true
    }

    /// An Event from a list or a watch; false when it is about another object (or the
    /// object is not read yet, so its uid is unknown).
    pub fn event(&mut self, event: &Value) -> bool {
        let Some(first) = &self.first else {
            return false;
        };
        let uid = &first["metadata"]["uid"];
        if event["involvedObject"]["uid"] != *uid && event["regarding"]["uid"] != *uid {
            return false;
        }
        let id = &event["metadata"]["uid"];
        match self.events.iter_mut().find(|e| e["metadata"]["uid"] == *id) {
            Some(kept) if resource_version(kept) >= resource_version(event) => return false,
            Some(kept) => *kept = event.clone(),
            None => self.events.push(event.clone()),
        }
        true
    }

    /// The entries by resourceVersion; none before the object is read.
    pub fn entries(&self) -> Vec<Entry> {
        let Some(first) = &self.first else {
            return Vec::new();
        };
        let mut builder = TimelineBuilder::new();
        builder.version("STATE", first);
        let uid = &first["metadata"]["uid"];
        let after = resource_version(first);
        for (what, object) in &self.versions {
            if object["metadata"]["uid"] == *uid && resource_version(object) > after {
                builder.version(what, object);
            }
        }
        for event in &self.events {
            builder.event(event);
        }
        builder.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn widget(rv: &str, replicas: u32, ready: bool, managers: Value) -> Value {
        json!({"metadata": {"name": "w", "resourceVersion": rv, "managedFields": managers},
            "spec": {"replicas": replicas}, "status": {"ready": ready}})
    }

    #[test]
    fn each_changed_field_is_named_with_its_writer_in_resource_version_order() {
        let create = json!({"manager": "kubectl-create", "operation": "Update", "time": "T1",
            "fieldsV1": {"f:spec": {"f:replicas": {}}}});
        let status = json!({"manager": "widget-controller", "operation": "Update", "subresource": "status",
            "time": "T2", "fieldsV1": {"f:status": {"f:ready": {}}}});
        let patch = json!({"manager": "kubectl-patch", "operation": "Update", "time": "T3",
            "fieldsV1": {"f:spec": {"f:replicas": {}}}});
        let mut b = TimelineBuilder::new();
        b.version("STATE", &widget("10", 1, false, json!([create])));
        b.version("MODIFIED", &widget("12", 1, true, json!([create, status])));
        b.event(
            &json!({"metadata": {"resourceVersion": "11"}, "type": "Normal",
            "reason": "Reconciled", "message": "ok", "source": {"component": "widget-controller"}}),
        );
        b.version("MODIFIED", &widget("13", 3, true, json!([status, patch])));
        let entries = b.finish();
        let rvs: Vec<&str> = entries
            .iter()
            .map(|e| e.resource_version.as_str())
            .collect();
        assert_eq!(rvs, ["10", "11", "12", "13"]);
        let who = |i: usize| -> Vec<(String, Option<String>)> {
            entries[i]
                .changes
                .iter()
                .map(|c| (c.path.clone(), c.manager.clone()))
                .collect()
        };
        assert_eq!(
            who(0),
            [("spec.replicas".into(), Some("kubectl-create".into()))]
        );
        assert_eq!(
            entries[1].event.as_ref().unwrap().source,
            "widget-controller"
        );
        assert_eq!(
            who(2),
            [("status.ready".into(), Some("widget-controller".into()))]
        );
        assert_eq!(
            who(3),
            [("spec.replicas".into(), Some("kubectl-patch".into()))]
        );
    }
    #[test]
    fn a_live_timeline_drops_versions_before_its_first_read_and_keeps_each_event_once() {
        let object = |rv: &str, uid: &str, replicas: u32| {
            json!({"metadata": {"name": "w", "uid": uid, "resourceVersion": rv, "managedFields": [
                {"manager": "kubectl", "operation": "Update", "subresource": "scale", "time": "T",
                 "fieldsV1": {"f:spec": {"f:replicas": {}}}}]},
                "spec": {"replicas": replicas}})
        };
        let event = |rv: &str, count: u64| {
            json!({"metadata": {"uid": "e1", "resourceVersion": rv}, "involvedObject": {"uid": "u"},
                "type": "Normal", "reason": "Scaled", "message": "m", "count": count})
        };
        let mut live = LiveTimeline::new();
        assert!(
            !live.event(&event("4", 1)),
            "no uid to match before the read"
        );
        assert!(live.version("MODIFIED", &object("5", "u", 2)));
        live.first_read(object("6", "u", 2));
        assert!(!live.version("MODIFIED", &object("6", "u", 2)), "not newer");
        assert!(
            !live.version("MODIFIED", &object("9", "other", 3)),
            "another object"
        );
        assert!(live.version("MODIFIED", &object("8", "u", 3)));
        assert!(live.event(&event("7", 1)));
        assert!(live.event(&event("9", 2)));
        assert!(!live.event(&event("7", 1)), "older than the kept one");
        let entries = live.entries();
        let rvs: Vec<&str> = entries
            .iter()
            .map(|e| e.resource_version.as_str())
            .collect();
        assert_eq!(rvs, ["6", "8", "9"]);
        assert_eq!(entries[1].changes[0].by(), "kubectl (Update/scale T)");
        assert_eq!(
            entries[2].event.as_ref().map(EventNote::summary).as_deref(),
            Some("Normal Scaled: m (x2)")
        );
    }
}
