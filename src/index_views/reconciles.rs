//! Why did this reconcile run: the events on an object and on the objects it controls (mapped
//! to it through their controller ownerReference, as controller-runtime's `Owns()` maps
//! them), grouped into the reconciles a workqueue would run. A workqueue holds a key once:
//! an event while the key waits joins the waiting reconcile, an event while the key is being
//! reconciled marks it dirty so one more reconcile follows when this one ends, and an event
//! while idle starts one at once. The reconcile's duration is the one thing not seen from
//! outside, so it is the caller's to give.

use std::fmt::Write as _;

use kscope_informers::instrument::diff::changed_paths;
use serde_json::Value;

use super::hotloops::EventKind;
use super::managed_fields::is_noise;

/// One event that enqueued the owner.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Trigger {
    /// Seconds since watching began.
    pub at: f64,
    pub kind: String,
    pub name: String,
    /// `created`, `deleted`, or the part that changed: `status`, `spec`, `metadata`
    /// (several joined by `+`).
    pub change: String,
    pub resource_version: String,
}

/// A reconcile the workqueue would run, and the events it covers.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Reconcile {
    pub number: usize,
    /// Seconds since watching began.
    pub start: f64,
    pub triggers: Vec<Trigger>,
}

impl Reconcile {
    /// `ReplicaSet web-5d8f status changed 3 times, Deployment web created`: each object's
    /// change counted, in the order they first came.
    pub fn because(&self) -> String {
        let mut groups: Vec<(&Trigger, usize)> = Vec::new();
        for t in &self.triggers {
            match groups
                .iter_mut()
                .find(|(g, _)| g.kind == t.kind && g.name == t.name && g.change == t.change)
            {
                Some((_, n)) => *n += 1,
                None => groups.push((t, 1)),
            }
        }
        let mut out = String::new();
        for (i, (t, n)) in groups.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let _ = write!(out, "{} {} ", t.kind, t.name);
            match (t.change.as_str(), n) {
                ("created" | "deleted", 1) => out.push_str(&t.change),
                ("created" | "deleted", n) => {
                    let _ = write!(out, "{} {n} times", t.change);
                }
                (part, 1) => {
                    let _ = write!(out, "{part} changed");
                }
                (part, n) => {
                    let _ = write!(out, "{part} changed {n} times");
                }
            }
        }
        out
    }
}

/// What part of the object an event changed; `None` when nothing but metadata noise
/// (resourceVersion, managedFields) did, which an update predicate would drop.
pub fn change_of(event: EventKind, previous: Option<&Value>, object: &Value) -> Option<String> {
    match (event, previous) {
        (EventKind::Deleted, _) => Some("deleted".into()),
        (EventKind::Added, _) | (EventKind::Modified, None) => Some("created".into()),
        (EventKind::Modified, Some(previous)) => {
            let mut parts: Vec<&str> = changed_paths(previous, object, &is_noise)
                .iter()
                .map(|p| match p.split(['.', '[']).next() {
                    Some("status") => "status",
                    Some("metadata") => "metadata",
                    _ => "spec",
                })
                .collect();
            parts.sort_unstable();
            parts.dedup();
            (!parts.is_empty()).then(|| parts.join("+"))
        }
    }
}

/// The workqueue's reconciles of one key, as events come.
#[derive(Debug)]
pub struct ReconcileModel {
    duration: f64,
    reconciles: Vec<Reconcile>,
}

impl ReconcileModel {
    /// `duration`: how long each reconcile runs, in seconds.
    pub fn new(duration: f64) -> Self {
        Self {
            duration,
            reconciles: Vec::new(),
        }
    }

    /// One event that enqueues the key (events come in time order).
    pub fn add(&mut self, trigger: Trigger) {
        let at = trigger.at;
        match self.reconciles.last_mut() {
            // Waiting: the queue holds the key once.
            Some(last) if at < last.start => last.triggers.push(trigger),
            // Running: dirty, so one more reconcile when this one ends.
            Some(last) if at < last.start + self.duration => {
                let start = last.start + self.duration;
                self.push(start, trigger);
            }
            _ => self.push(at, trigger),
        }
    }

    fn push(&mut self, start: f64, trigger: Trigger) {
        self.reconciles.push(Reconcile {
            number: self.reconciles.len() + 1,
            start,
            triggers: vec![trigger],
        });
    }

    pub fn reconciles(&self) -> &[Reconcile] {
        &self.reconciles
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn t(at: f64, kind: &str, name: &str, change: &str) -> Trigger {
        Trigger {
            at,
            kind: kind.into(),
            name: name.into(),
            change: change.into(),
            resource_version: String::new(),
        }
    }

    #[test]
    fn events_while_running_make_one_more_reconcile_and_events_while_waiting_join_it() {
        let mut model = ReconcileModel::new(1.0);
        model.add(t(0.0, "Deployment", "web", "spec"));
        // While reconcile 1 runs: reconcile 2 waits for it, and takes all three.
        model.add(t(0.2, "ReplicaSet", "web-1", "status"));
        model.add(t(0.5, "ReplicaSet", "web-1", "status"));
        model.add(t(0.9, "ReplicaSet", "web-1", "status"));
        // Reconcile 2 runs from 1.0 to 2.0: this one makes reconcile 3.
        model.add(t(1.5, "ReplicaSet", "web-1", "spec"));
        // Idle after 3.0: starts at once.
        model.add(t(5.0, "Deployment", "web", "deleted"));
        let got: Vec<(usize, f64, String)> = model
            .reconciles()
            .iter()
            .map(|r| (r.number, r.start, r.because()))
            .collect();
        assert_eq!(
            got,
            [
                (1, 0.0, "Deployment web spec changed".to_string()),
                (
                    2,
                    1.0,
                    "ReplicaSet web-1 status changed 3 times".to_string()
                ),
                (3, 2.0, "ReplicaSet web-1 spec changed".to_string()),
                (4, 5.0, "Deployment web deleted".to_string()),
            ]
        );
    }

    #[test]
    fn a_change_is_named_by_the_part_it_touched_and_noise_is_none() {
        let old = json!({"metadata": {"resourceVersion": "1"}, "spec": {"replicas": 1}, "status": {"ready": 0}});
        let status = json!({"metadata": {"resourceVersion": "2"}, "spec": {"replicas": 1}, "status": {"ready": 1}});
        let both = json!({"metadata": {"resourceVersion": "3"}, "spec": {"replicas": 2}, "status": {"ready": 2}});
        let noise = json!({"metadata": {"resourceVersion": "4"}, "spec": {"replicas": 1}, "status": {"ready": 0}});
        let change = |new: &Value| change_of(EventKind::Modified, Some(&old), new);
        assert_eq!(change(&status).as_deref(), Some("status"));
        assert_eq!(change(&both).as_deref(), Some("spec+status"));
        assert_eq!(change(&noise), None);
        assert_eq!(
            change_of(EventKind::Added, None, &old).as_deref(),
            Some("created")
        );
    }
}
