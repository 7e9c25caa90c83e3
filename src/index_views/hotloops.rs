//! Hot-loop detection from a watch stream: who writes what, how often, and what preceded
//! each write. A write is diffed against the previous version of its object, attributed to
//! a field manager through `managedFields`, classed as status-only or spec, and tied to the
//! event that came before it on the object itself or on an object it controls (through
//! controller ownerReferences, as controller-runtime's `Owns()` maps them). A manager that
//! keeps writing at 1/s or more, for 10 s, to objects whose previous event was its own write
//! is flagged as a self-triggering loop, with the fields that keep changing.

use std::collections::{BTreeMap, HashMap};

use kscope_informers::instrument::diff::changed_paths;
use kscope_informers::instrument::tap::{TapEntry, TapKind};
use kscope_informers::lister_watcher::WatchEventType;

use super::managed_fields::{is_noise, owns};
use serde_json::Value;

/// The kinds watched unless told otherwise, named as for kubectl: the demo's Widgets and
/// the workloads. `kscope hotloops` and the TUI's `:hot` read the same list.
pub const HOT_KINDS: &str = "widgets.example.com,deployments,replicasets,pods,configmaps";

/// Seconds a loop must be sustained, and the window rates are read over.
pub const WINDOW_SECONDS: u64 = 10;
/// The self-triggered write rate (per second) that makes a loop.
pub const LOOP_RATE: f64 = 1.0;
/// Objects tracked at most: beyond it, new objects are counted but not followed.
const MAX_OBJECTS: usize = 50_000;
/// (manager, object) rows kept at most.
const MAX_ROWS: usize = 10_000;
/// Changing fields remembered per row.
const MAX_FIELDS: usize = 16;

/// A watch event's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    Added,
    Modified,
    Deleted,
}

impl EventKind {
    /// The watch event a tap entry carries, with its object: what the detector takes. Other
    /// entries (deltas, relists, bookmarks) and objects that do not parse give `None`.
    pub fn of_entry(entry: &TapEntry) -> Option<(Self, Value)> {
        let event = match entry.kind {
            TapKind::Watch(WatchEventType::Added) => Self::Added,
            TapKind::Watch(WatchEventType::Modified) => Self::Modified,
            TapKind::Watch(WatchEventType::Deleted) => Self::Deleted,
            _ => return None,
        };
        let object = serde_json::from_slice(entry.raw.as_ref()?).ok()?;
        Some((event, object))
    }

    /// The watch event's type as the API names it (`ADDED`, `MODIFIED`, `DELETED`).
    pub fn watch_type(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
        }
    }
}

/// Writes counted in one-second buckets over the last [`WINDOW_SECONDS`].
#[derive(Debug, Clone, Default)]
struct Window {
    buckets: [(u64, u32); WINDOW_SECONDS as usize],
}

impl Window {
    fn add(&mut self, second: u64) {
        let slot = &mut self.buckets[(second % WINDOW_SECONDS) as usize];
        if slot.0 != second {
            *slot = (second, 0);
        }
        slot.1 += 1;
    }

    /// Writes in the window ending at `second`, and how many of its seconds had any.
    fn read(&self, second: u64) -> (u32, u32) {
        let oldest = second.saturating_sub(WINDOW_SECONDS - 1);
        self.buckets
            .iter()
            .filter(|(s, n)| *s >= oldest && *s <= second && *n > 0)
            .fold((0, 0), |(sum, busy), (_, n)| (sum + n, busy + 1))
    }
}

/// The last event seen on an object, or on an object it controls.
#[derive(Debug, Clone)]
struct Last {
    seq: u64,
    manager: Option<String>,
    /// The object it happened on (`Kind/namespace/name`).
    on: String,
}

impl Last {
    /// How a report names it: who wrote, and where unless on the written object itself.
    fn label(&self, written: &str) -> String {
        let who = self.manager.as_deref().unwrap_or("(unknown)");
        if self.on == written {
            format!("{who} (itself)")
        } else {
            format!("{who} on {}", self.on)
        }
    }
}

struct Tracked {
    previous: Value,
    own: Option<Last>,
    owned: Option<Last>,
}

/// One manager's writes to one object.
#[derive(Debug, Default)]
struct Row {
    writes: Window,
    self_triggered: Window,
    status_writes: u64,
    spec_writes: u64,
    /// Changed field paths of the self-triggered writes, and how often each changed.
    fields: BTreeMap<String, u64>,
    /// The events that preceded its writes, and how often each did.
    preceded_by: BTreeMap<String, u64>,
}

/// One write, as counted.
struct Write<'a> {
    changed: &'a [String],
    self_triggered: bool,
    preceded_by: String,
}

/// What the detector reports for one manager and object.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HotObject {
    pub manager: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub writes_per_second: f64,
    /// Writes in the window whose previous event was this manager's own write.
    pub self_triggered_per_second: f64,
    pub status_writes: u64,
    pub spec_writes: u64,
    /// The fields its self-triggered writes keep changing, most often first.
    pub fields: Vec<String>,
    /// What preceded its writes, most often first: `MANAGER (itself)` for a write on the
    /// object itself, `MANAGER on Kind/namespace/name` for one on an object it controls.
    pub preceded_by: Vec<String>,
}

/// A manager flagged as triggering itself.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HotLoop {
    pub manager: String,
    pub self_triggered_per_second: f64,
    pub fields: Vec<String>,
}

/// The detector's picture: objects by write rate, and the loops found so far.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HotReport {
    pub objects: Vec<HotObject>,
    pub loops: Vec<HotLoop>,
}

/// Follows watch events of any kinds and finds the managers that trigger themselves.
#[derive(Default)]
pub struct HotLoopDetector {
    seq: u64,
    objects: HashMap<String, Tracked>,
    by_uid: HashMap<String, String>,
    rows: HashMap<(String, String), Row>,
    managers: HashMap<String, Window>,
    /// Loops found, by manager: kept once found, with their fields.
    loops: BTreeMap<String, HotLoop>,
}

fn text(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

/// The uid of the object's controller (the ownerReference with `controller: true`).
fn controller_uid(object: &Value) -> Option<String> {
    object["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .find(|r| r["controller"] == true)
        .and_then(|r| text(&r["uid"]))
}

/// The manager that made the change from `old` to `new`: the managedFields entry that is
/// new or changed (stamp or set), newest first; else the one owning the most of the changed
/// fields (a stamp only has whole seconds, so a fast writer's entry may not change).
fn writer(old: &Value, new: &Value, changed: &[String]) -> Option<String> {
    let empty = Vec::new();
    let before = old["metadata"]["managedFields"]
        .as_array()
        .unwrap_or(&empty);
    let after = new["metadata"]["managedFields"].as_array()?;
    let same_entry = |a: &Value, b: &Value| {
        a["manager"] == b["manager"]
            && a["operation"] == b["operation"]
            && a["subresource"] == b["subresource"]
    };
    let touched = after
        .iter()
        .filter(|e| {
            !before.iter().any(|b| {
                same_entry(b, e) && b["time"] == e["time"] && b["fieldsV1"] == e["fieldsV1"]
            })
        })
        .max_by(|a, b| a["time"].as_str().cmp(&b["time"].as_str()));
    if let Some(entry) = touched {
        return text(&entry["manager"]);
    }
    after
        .iter()
        .map(|e| {
            let score: usize = changed.iter().map(|p| owns(&e["fieldsV1"], p)).sum();
            (score, e["time"].as_str().unwrap_or(""), e)
        })
        .filter(|(score, _, _)| *score > 0)
        .max_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)))
        .and_then(|(_, _, e)| text(&e["manager"]))
}

fn rate(count: u32) -> f64 {
    f64::from(count) / WINDOW_SECONDS as f64
}

impl HotLoopDetector {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one watch event of `kind` at `second` (seconds on any monotonic clock).
    pub fn observe(&mut self, kind: &str, event: EventKind, object: &Value, second: u64) {
        let meta = &object["metadata"];
        let key = format!(
            "{kind}/{}/{}",
            meta["namespace"].as_str().unwrap_or(""),
            meta["name"].as_str().unwrap_or("")
        );
        self.seq += 1;
        let seq = self.seq;
        let mut manager = None;
        match event {
            EventKind::Added => {
                manager = meta["managedFields"]
                    .as_array()
                    .and_then(|all| all.first())
                    .and_then(|e| text(&e["manager"]));
                self.track(&key, object, manager.clone(), seq);
            }
            EventKind::Deleted => {
                if let Some(gone) = self.objects.remove(&key)
                    && let Some(uid) = text(&gone.previous["metadata"]["uid"])
                {
                    self.by_uid.remove(&uid);
                }
            }
            EventKind::Modified => {
                let Some(tracked) = self.objects.get(&key) else {
                    self.track(&key, object, None, seq);
                    return self.tell_owner(controller_uid(object), None, &key, seq);
                };
                let changed = changed_paths(&tracked.previous, object, &is_noise);
                if changed.is_empty() {
                    return;
                }
                manager = writer(&tracked.previous, object, &changed);
                let trigger = match (&tracked.own, &tracked.owned) {
                    (Some(own), Some(owned)) if owned.seq > own.seq => Some(owned),
                    (own, _) => own.as_ref(),
                };
                let self_triggered = manager.is_some()
                    && trigger.is_some_and(|t| t.on == key && t.manager == manager);
                let preceded_by =
                    trigger.map_or_else(|| "(none seen)".to_string(), |t| t.label(&key));
                let name = manager.clone().unwrap_or_else(|| "(unknown)".to_string());
                let write = Write {
                    changed: &changed,
                    self_triggered,
                    preceded_by,
                };
                self.count(&name, &key, &write, second);
                self.track(&key, object, manager.clone(), seq);
            }
        }
        self.tell_owner(controller_uid(object), manager, &key, seq);
    }

    fn track(&mut self, key: &str, object: &Value, manager: Option<String>, seq: u64) {
        let uid = text(&object["metadata"]["uid"]);
        if !self.objects.contains_key(key) && self.objects.len() >= MAX_OBJECTS {
            return;
        }
        let tracked = self.objects.entry(key.to_string()).or_insert(Tracked {
            previous: Value::Null,
            own: None,
            owned: None,
        });
        tracked.previous = object.clone();
        tracked.own = Some(Last {
            seq,
            manager,
            on: key.to_string(),
        });
        if let Some(uid) = uid {
            self.by_uid.insert(uid, key.to_string());
        }
    }

    /// Records an event on an owned object as its controller's latest owned event.
    fn tell_owner(
        &mut self,
        owner_uid: Option<String>,
        manager: Option<String>,
        on: &str,
        seq: u64,
    ) {
        let Some(owner) = owner_uid.and_then(|uid| self.by_uid.get(&uid)) else {
            return;
        };
        if let Some(t) = self.objects.get_mut(owner) {
            t.owned = Some(Last {
                seq,
                manager,
                on: on.to_string(),
            });
        }
    }

    fn count(&mut self, manager: &str, key: &str, write: &Write<'_>, second: u64) {
        let (changed, own) = (write.changed, write.self_triggered);
        let id = (manager.to_string(), key.to_string());
        if !self.rows.contains_key(&id) && self.rows.len() >= MAX_ROWS {
            return;
        }
        let row = self.rows.entry(id).or_default();
        row.writes.add(second);
        if row.preceded_by.len() < MAX_FIELDS || row.preceded_by.contains_key(&write.preceded_by) {
            *row.preceded_by
                .entry(write.preceded_by.clone())
                .or_default() += 1;
        }
        if changed.iter().all(|p| p.starts_with("status")) {
            row.status_writes += 1;
        } else {
            row.spec_writes += 1;
        }
        if !own {
            return;
        }
        row.self_triggered.add(second);
        for path in changed {
            if row.fields.len() < MAX_FIELDS || row.fields.contains_key(path) {
                *row.fields.entry(path.clone()).or_default() += 1;
            }
        }
        let window = self.managers.entry(manager.to_string()).or_default();
        window.add(second);
        let (sum, busy) = window.read(second);
        // Sustained: the rate over the window, and writes in (nearly) every second of it.
        if rate(sum) >= LOOP_RATE && busy + 1 >= WINDOW_SECONDS as u32 {
            let fields = top_fields(
                self.rows
                    .iter()
                    .filter(|((m, _), _)| m == manager)
                    .flat_map(|(_, r)| r.fields.iter()),
            );
            self.loops.insert(
                manager.to_string(),
                HotLoop {
                    manager: manager.to_string(),
                    self_triggered_per_second: rate(sum),
                    fields,
                },
            );
        }
    }

    /// Rows by write rate over the window ending at `second`, and the loops found.
    pub fn report(&self, second: u64) -> HotReport {
        let mut objects: Vec<HotObject> = self
            .rows
            .iter()
            .map(|((manager, key), row)| {
                let mut parts = key.splitn(3, '/');
                let kind = parts.next().unwrap_or("").to_string();
                let namespace = parts.next().unwrap_or("").to_string();
                let name = parts.next().unwrap_or("").to_string();
                HotObject {
                    manager: manager.clone(),
                    kind,
                    namespace,
                    name,
                    writes_per_second: rate(row.writes.read(second).0),
                    self_triggered_per_second: rate(row.self_triggered.read(second).0),
                    status_writes: row.status_writes,
                    spec_writes: row.spec_writes,
                    fields: top_fields(row.fields.iter()),
                    preceded_by: top_fields(row.preceded_by.iter()),
                }
            })
            .collect();
        objects.sort_by(|a, b| {
            b.writes_per_second
                .total_cmp(&a.writes_per_second)
                .then_with(|| {
                    (&a.manager, &a.kind, &a.namespace, &a.name).cmp(&(
                        &b.manager,
                        &b.kind,
                        &b.namespace,
                        &b.name,
                    ))
                })
        });
        HotReport {
            objects,
            loops: self.loops.values().cloned().collect(),
        }
    }
}

/// Names (field paths, triggers) by how often they were counted, most first, merged across
/// rows.
fn top_fields<'a>(fields: impl Iterator<Item = (&'a String, &'a u64)>) -> Vec<String> {
    let mut merged: BTreeMap<&str, u64> = BTreeMap::new();
    for (path, n) in fields {
        *merged.entry(path).or_default() += n;
    }
    let mut all: Vec<(&str, u64)> = merged.into_iter().collect();
    all.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    all.into_iter()
        .take(MAX_FIELDS)
        .map(|(p, _)| p.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn widget(status_time: &str, manager: &str, stamp: &str) -> Value {
        json!({
            "metadata": {"name": "w", "namespace": "ns", "uid": "u1", "managedFields": [
                {"manager": manager, "operation": "Update", "subresource": "status", "time": stamp,
                 "fieldsV1": {"f:status": {"f:lastReconcileTime": {}}}}
            ]},
            "spec": {"size": "small"},
            "status": {"lastReconcileTime": status_time},
        })
    }

    #[test]
    fn a_manager_rewriting_its_own_status_is_a_loop_after_ten_seconds() {
        let mut d = HotLoopDetector::new();
        d.observe("Widget", EventKind::Added, &widget("t0", "ctl", "s0"), 0);
        let mut n = 0;
        for second in 0..12u64 {
            for _ in 0..3 {
                n += 1;
                d.observe(
                    "Widget",
                    EventKind::Modified,
                    &widget(&format!("t{n}"), "ctl", "s0"),
                    second,
                );
            }
            if second < 8 {
                assert!(d.report(second).loops.is_empty(), "flagged at {second}s");
            }
        }
        let report = d.report(11);
        assert_eq!(report.loops.len(), 1);
        assert_eq!(report.loops[0].manager, "ctl");
        assert_eq!(report.loops[0].fields, vec!["status.lastReconcileTime"]);
        assert_eq!(report.objects[0].writes_per_second, 3.0);
        assert_eq!(report.objects[0].status_writes, 36);
        assert_eq!(report.objects[0].preceded_by, vec!["ctl (itself)"]);
    }

    #[test]
    fn writes_answering_another_managers_are_not_a_loop() {
        let mut d = HotLoopDetector::new();
        d.observe("Widget", EventKind::Added, &widget("t0", "a", "s0"), 0);
        for n in 1..60u64 {
            let manager = if n % 2 == 0 { "a" } else { "b" };
            d.observe(
                "Widget",
                EventKind::Modified,
                &widget(&format!("t{n}"), manager, &format!("s{n}")),
                n / 4,
            );
        }
        let report = d.report(15);
        assert!(report.loops.is_empty(), "{report:?}");
        assert!(
            report
                .objects
                .iter()
                .all(|o| o.self_triggered_per_second == 0.0)
        );
    }

    #[test]
    fn an_owned_objects_event_is_the_trigger_of_its_controllers_write() {
        let mut d = HotLoopDetector::new();
        d.observe("Widget", EventKind::Added, &widget("t0", "ctl", "s0"), 0);
        let config = |v: &str| {
            json!({"metadata": {"name": "c", "namespace": "ns", "uid": "u2",
                "ownerReferences": [{"uid": "u1", "controller": true}],
                "managedFields": [{"manager": "tuner", "operation": "Update", "time": v, "fieldsV1": {"f:data": {}}}]},
                "data": {"v": v}})
        };
        d.observe("ConfigMap", EventKind::Added, &config("x0"), 0);
        for n in 1..40u64 {
            d.observe(
                "ConfigMap",
                EventKind::Modified,
                &config(&format!("x{n}")),
                n / 3,
            );
            d.observe(
                "Widget",
                EventKind::Modified,
                &widget(&format!("t{n}"), "ctl", "s0"),
                n / 3,
            );
        }
        let report = d.report(13);
        assert!(
            !report.loops.iter().any(|l| l.manager == "ctl"),
            "{report:?}"
        );
    }
}
