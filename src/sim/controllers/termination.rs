//! How a Terminating pod's containers stop, as its kubelet stops them: each container's
//! preStop hook runs first, then it is sent SIGTERM; one that ends on it (any but a shell
//! script, which as PID 1 ignores it) exits 0, the rest are killed (exit 137) when the grace
//! period is over. Shared by the kubelets the controllers play and by the churn's.

use serde_json::{Value, json};

use super::super::gc;
use super::super::manifests;
use super::pods;
use super::pods::{KILLED_EXIT, container_specs, number_after, set_conditions};

/// Reports each running container of Terminating `pod` whose stop (see [`stop_of`]) is due
/// at `now_ms` as terminated and unready; once none runs the pod is given its terminal
/// phase (see [`terminal_phase`]), and its conditions follow. Whether anything changed.
pub(crate) fn stop_containers(pod: &mut Value, now_ms: i64) -> bool {
    let Some(period) = Period::of(pod) else {
        return false;
    };
    let specs = container_specs(pod);
    let now = manifests::timestamp(now_ms.div_euclid(1000));
    let mut changed = false;
    for status in pod["status"]["containerStatuses"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        let running = &status["state"]["running"];
        if !running.is_object() {
            continue;
        }
        let spec = specs.iter().find(|c| c["name"] == status["name"]);
        let (at, code) = period.stop_of(spec);
        if at > now_ms {
            continue;
        }
        status["state"] = json!({"terminated": {
            "exitCode": code, "reason": if code == 0 { "Completed" } else { "Error" },
            "startedAt": running["startedAt"], "finishedAt": now,
            "containerID": status["containerID"],
        }});
        status["ready"] = json!(false);
        status["started"] = json!(false);
        changed = true;
    }
    if let Some(phase) = terminal_phase(pod) {
        pod["status"]["phase"] = json!(phase);
        changed = true;
    }
    if changed {
        set_conditions(pod, &now);
    }
    changed
}

/// When (Unix ms) the next of Terminating `pod`'s running containers stops; `None` once
/// none runs, when its kubelet removes the pod without waiting out the grace period.
pub(crate) fn next_stop(pod: &Value) -> Option<i64> {
    let period = Period::of(pod)?;
    let specs = container_specs(pod);
    pod["status"]["containerStatuses"]
        .as_array()?
        .iter()
        .filter(|s| s["state"]["running"].is_object())
        .map(|s| {
            period
                .stop_of(specs.iter().find(|c| c["name"] == s["name"]))
                .0
        })
        .min()
}

/// A Terminating pod's grace period, in Unix ms: from its delete to its deadline.
struct Period {
    deleted: i64,
    deadline: i64,
}

impl Period {
    fn of(pod: &Value) -> Option<Period> {
        let deadline = gc::deletion_deadline(pod)? * 1000;
        let grace = pod["metadata"]["deletionGracePeriodSeconds"]
            .as_i64()
            .unwrap_or(0)
            .max(0);
        Some(Period {
            deleted: deadline - grace * 1000,
            deadline,
        })
    }

    /// When a container stops and its exit code: SIGTERM once its preStop hook is done,
    /// which ends it (0) unless it ignores SIGTERM; SIGKILL (137) at the deadline for one
    /// still running then, a hook that outlasts the period included.
    fn stop_of(&self, container: Option<&Value>) -> (i64, i64) {
        let Some(container) = container else {
            return (self.deleted, 0);
        };
        let terminated = self.deleted + pre_stop_ms(container);
        if ignores_sigterm(container) || terminated >= self.deadline {
            (self.deadline, KILLED_EXIT)
        } else {
            (terminated, 0)
        }
    }
}

/// How long a container's preStop hook runs: a `sleep` action's seconds, or the `sleep N`
/// of an exec hook's command; an HTTP or TCP hook (or none) returns at once.
fn pre_stop_ms(container: &Value) -> i64 {
    let hook = &container["lifecycle"]["preStop"];
    if let Some(seconds) = hook["sleep"]["seconds"].as_i64() {
        return seconds.max(0).saturating_mul(1000);
    }
    let script: Vec<&str> = hook["exec"]["command"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    number_after(&script.join(" "), "sleep ").map_or(0, |s| (s * 1000.0) as i64)
}

/// The phase a Terminating pod on a node ends in once none of its containers runs, as
/// kubelets since 1.27 report it before their last delete (so a watch sees how the pod
/// ended): Succeeded if every container exited 0, Failed otherwise (one killed, or one
/// that never started). `None` while one runs, or if the pod already ended.
fn terminal_phase(pod: &Value) -> Option<&'static str> {
    if pods::finished(pod) || !pod["spec"]["nodeName"].is_string() {
        return None;
    }
    let statuses = pod["status"]["containerStatuses"].as_array();
    let statuses = statuses.map_or(&[][..], Vec::as_slice);
    if statuses.iter().any(|s| s["state"]["running"].is_object()) {
        return None;
    }
    // A container waiting to restart is reported by how its last run ended.
    let exit = |s: &Value| {
        s["state"]["terminated"]["exitCode"]
            .as_i64()
            .or_else(|| s["lastState"]["terminated"]["exitCode"].as_i64())
    };
    let succeeded = !statuses.is_empty() && statuses.iter().all(|s| exit(s) == Some(0));
    Some(if succeeded { "Succeeded" } else { "Failed" })
}

/// Whether a container's process is a shell running a script (`sh -c ...`): as PID 1 it
/// has no handler for SIGTERM, so only the SIGKILL at the end of the grace period stops it.
fn ignores_sigterm(container: &Value) -> bool {
    let first = container["command"][0]
        .as_str()
        .or_else(|| container["args"][0].as_str())
        .unwrap_or("");
    let program = first.rsplit('/').next().unwrap_or(first);
    matches!(program, "sh" | "bash" | "ash" | "dash")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(containers: Value) -> Value {
        let names: Vec<Value> = containers
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| json!({"name": c["name"], "state": {"running": {"startedAt": "2025-01-01T00:00:00Z"}}}))
            .collect();
        json!({
            "metadata": {"deletionTimestamp": "2025-01-01T00:00:30Z", "deletionGracePeriodSeconds": 30},
            "spec": {"nodeName": "node-1", "containers": containers},
            "status": {"phase": "Running", "containerStatuses": names},
        })
    }

    const DELETED: i64 = 1_735_689_600_000;

    #[test]
    fn a_container_stops_on_sigterm_once_its_pre_stop_hook_is_done() {
        let mut pod = pod(json!([
            {"name": "app", "image": "nginx"},
            {"name": "drain", "image": "nginx", "lifecycle": {"preStop": {"exec": {"command": ["sleep", "5"]}}}},
            {"name": "slept", "image": "nginx", "lifecycle": {"preStop": {"sleep": {"seconds": 8}}}},
            {"name": "script", "image": "busybox", "command": ["sh", "-c", "sleep 3600"]},
            {"name": "long", "image": "nginx", "lifecycle": {"preStop": {"exec": {"command": ["/bin/sh", "-c", "sleep 60"]}}}},
        ]));
        assert_eq!(next_stop(&pod), Some(DELETED));
        assert!(stop_containers(&mut pod, DELETED));
        assert_eq!(next_stop(&pod), Some(DELETED + 5_000));
        assert!(!stop_containers(&mut pod, DELETED + 4_999));
        assert!(stop_containers(&mut pod, DELETED + 5_000));
        assert_eq!(next_stop(&pod), Some(DELETED + 8_000));
        assert!(stop_containers(&mut pod, DELETED + 8_000));
        // The script and the hook that outlasts the period are killed at its end.
        assert_eq!(next_stop(&pod), Some(DELETED + 30_000));
        assert_eq!(pod["status"]["phase"], "Running");
        assert!(stop_containers(&mut pod, DELETED + 30_000));
        assert_eq!(next_stop(&pod), None);
        let codes: Vec<&Value> = pod["status"]["containerStatuses"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| &s["state"]["terminated"]["exitCode"])
            .collect();
        assert_eq!(
            codes,
            [&json!(0), &json!(0), &json!(0), &json!(137), &json!(137)]
        );
        assert_eq!(pod["status"]["phase"], "Failed");
    }

    #[test]
    fn containers_that_all_end_on_sigterm_leave_the_pod_succeeded_at_once() {
        let mut pod = pod(json!([{"name": "app", "image": "nginx"}]));
        assert!(stop_containers(&mut pod, DELETED));
        assert_eq!(next_stop(&pod), None);
        assert_eq!(pod["status"]["phase"], "Succeeded");
    }
}
