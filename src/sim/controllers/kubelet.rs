//! The scheduler and the kubelets: an unscheduled pod is bound to the least loaded node that
//! its filters allow (cordons, taints, node affinity, room for its requests), then its
//! node's kubelet pulls the images and creates the containers (ContainerCreating), then
//! starts them (Running and ready). One step per reconcile, each after a short delay.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use rand::Rng;
use serde::Deserialize;
use serde_json::{Value, json};

use super::super::gc;
use super::super::manifests;
use super::super::manifests::{node_ip, pod_ip};
use super::super::object::StoredObject;
use super::super::resources::Resource;
use super::super::store::{Key, StoreError, Txn};
use super::objects::{decode, owner_work};
use super::pods::{KILLED_EXIT, container_specs, number_after, set_conditions};
use super::work::{FollowUps, STEP_DELAY, Work};
use super::{disruption, endpoints, events, pods, termination};
use kscope_units::quantity;

/// Pod IPs of the controllers' pods are drawn from here, clear of the seeded and churned ones.
const POD_IP_RANGE: std::ops::Range<u64> = 4_000_000..4_194_304;

/// Strips what the scheduler and kubelet fill in from a freshly made pod.
pub(super) fn unscheduled(pod: &mut Value) {
    if let Some(spec) = pod["spec"].as_object_mut() {
        spec.remove("nodeName");
    }
    let qos = crate::qos::class(&pod["spec"]);
    pod["status"] = json!({"phase": "Pending", "qosClass": qos});
    if let Some(managed) = pod["metadata"]["managedFields"].as_array_mut() {
        managed.retain(|m| m["manager"] != "kubelet");
    }
}

/// How far along a pod is: unscheduled 0, scheduled 1, creating containers 2, running but
/// not ready 3, ready 4, finished (Succeeded or Failed) 5.
pub(super) fn progress(pod: &Value) -> u8 {
    if pods::finished(pod) {
        5
    } else if pods::is_ready(pod) {
        4
    } else if pod["status"]["phase"] == "Running" {
        3
    } else if pod["status"]["containerStatuses"].is_array() {
        2
    } else if pod["spec"]["nodeName"]
        .as_str()
        .is_some_and(|n| !n.is_empty())
    {
        1
    } else {
        0
    }
}

fn containers(pod: &Value) -> Vec<(String, String)> {
    pod["spec"]["containers"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    (
                        c["name"].as_str().unwrap_or("").to_string(),
                        c["image"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The kubelet stops a pod's containers: a Killing event for each started one, and, for a
/// pod given a grace period, its removal when the period is over. The Services selecting
/// the pod are to recount their endpoints.
pub(super) fn kill(txn: &mut Txn<'_>, pod: &Value) -> Result<FollowUps, StoreError> {
    let mut services = endpoints::services_selecting(txn, pod);
    services.extend(disruption::covering(txn, pod));
    let grace = pod["metadata"]["deletionGracePeriodSeconds"]
        .as_u64()
        .unwrap_or(0);
    if grace > 0 {
        // Its kubelet sees the delete at its next sync and signals the containers.
        let key = format!(
            "{}/{}",
            pod["metadata"]["namespace"].as_str().unwrap_or(""),
            pod["metadata"]["name"].as_str().unwrap_or("")
        );
        services.push((Work::Pod(key.into()), Some(STEP_DELAY)));
    }
    let Some(node) = pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) else {
        return Ok(services);
    };
    if !matches!(progress(pod), 3 | 4) {
        return Ok(services);
    }
    for (name, _) in containers(pod) {
        events::normal(
            txn,
            pod,
            Some(&format!("spec.containers{{{name}}}")),
            "Killing",
            &format!("Stopping container {name}"),
            &events::kubelet(node),
        )?;
    }
    Ok(services)
}

/// Deletes `key` of `resource` and what it owns, as the garbage collector does, each pod
/// among them given its grace period and stopped by its kubelet.
pub(super) fn delete(
    txn: &mut Txn<'_>,
    resource: Resource,
    key: &str,
) -> Result<FollowUps, StoreError> {
    let mut follow = FollowUps::new();
    let mut on_pod = |txn: &mut Txn<'_>, pod: &Value| {
        follow.extend(kill(txn, pod)?);
        Ok(())
    };
    if resource == Resource::Pods {
        gc::delete_pod(txn, key, None, &mut on_pod)?;
    } else {
        gc::delete_reaping(txn, resource, key, false, &mut on_pod)?;
    }
    Ok(follow)
}

/// A Terminating pod: its kubelet stops the containers (see [`termination`]) and reports
/// them terminated, the pod no longer ready; once none runs (at the latest when the grace
/// period is over) its last delete (with no grace) removes it at its next sync, or leaves
/// it to its finalizers.
fn terminated(
    txn: &mut Txn<'_>,
    key: &str,
    mut pod: Value,
    scheduler: &mut Scheduler,
) -> Result<FollowUps, StoreError> {
    if pod["metadata"]["deletionGracePeriodSeconds"].as_i64() == Some(0)
        || gc::deletion_deadline(&pod).is_none()
    {
        return Ok(Vec::new());
    }
    let now = now_ms();
    let mut follow = FollowUps::new();
    let was_finished = pods::finished(&pod);
    let stopped = termination::stop_containers(&mut pod, now);
    if stopped {
        txn.put(Resource::Pods, key, &mut pod)?;
        if !was_finished && pods::finished(&pod) {
            // What it requested is free again, for the pods waiting for room.
            let node = pod["spec"]["nodeName"].as_str().unwrap_or("").to_string();
            scheduler.finished(&node, &pod);
            follow.extend(scheduler.retry());
        }
        // The Services selecting it see it stop serving, its controller sees it unready.
        follow.extend(endpoints::services_selecting(txn, &pod));
        follow.extend(owner_work(&pod).map(|w| (w, None)));
    }
    if let Some(at) = termination::next_stop(&pod) {
        let wait = Duration::from_millis((at - now).max(1).unsigned_abs());
        follow.push((Work::Pod(key.into()), Some(wait)));
        return Ok(follow);
    }
    if stopped {
        // Watchers see how it ended before it goes.
        follow.push((Work::Pod(key.into()), Some(STEP_DELAY)));
        return Ok(follow);
    }
    if gc::has_finalizers(&pod) {
        pod["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        txn.put(Resource::Pods, key, &mut pod)?;
    } else {
        // What the pod owns (a generic ephemeral volume's claim) goes with it.
        gc::delete_cascading(txn, Resource::Pods, key, false)?;
    }
    // Its controller (a StatefulSet waits for the name to be free) and the Services that
    // listed it look again, and the pods waiting for room try again.
    follow.extend(owner_work(&pod).map(|w| (w, None)));
    follow.extend(endpoints::services_selecting(txn, &pod));
    follow.extend(scheduler.retry());
    Ok(follow)
}

/// The next step for pod `key`.
pub(super) fn reconcile(
    txn: &mut Txn<'_>,
    key: &str,
    scheduler: &mut Scheduler,
) -> Result<FollowUps, StoreError> {
    let Some(stored) = txn.get(Resource::Pods, key) else {
        scheduler.pending.remove(key);
        return Ok(Vec::new());
    };
    let mut pod = decode(&stored)?;
    if pods::terminating(&pod) {
        return terminated(txn, key, pod, scheduler);
    }
    let now = manifests::timestamp(manifests::now_seconds());
    let condition = |t: &str| json!({"type": t, "status": "True", "lastProbeTime": null, "lastTransitionTime": now});
    let again = vec![(Work::Pod(key.into()), Some(STEP_DELAY))];
    match progress(&pod) {
        0 => {
            let node = match scheduler.place(txn, &pod) {
                Ok(node) => node,
                Err(message) => return unschedulable(txn, scheduler, key, pod, &message, &now),
            };
            pod["spec"]["nodeName"] = json!(node);
            pod["status"]["conditions"] = json!([condition("PodScheduled")]);
            txn.put(Resource::Pods, key, &mut pod)?;
            scheduler.bound(key, &node, &pod);
            let namespace = pod["metadata"]["namespace"].as_str().unwrap_or("");
            let name = pod["metadata"]["name"].as_str().unwrap_or("");
            let message = format!("Successfully assigned {namespace}/{name} to {node}");
            events::normal(txn, &pod, None, "Scheduled", &message, &events::SCHEDULER)?;
            Ok(again)
        }
        1 => {
            let node = pod["spec"]["nodeName"].as_str().unwrap_or("").to_string();
            let host_ip = node_ip(&node);
            let statuses: Vec<Value> = containers(&pod)
                .iter()
                .map(|(name, image)| {
                    json!({
                        "name": name, "image": image, "imageID": "", "ready": false,
                        "restartCount": 0, "started": false,
                        "state": {"waiting": {"reason": "ContainerCreating"}}, "lastState": {},
                    })
                })
                .collect();
            let status = &mut pod["status"];
            status["hostIP"] = json!(host_ip);
            status["hostIPs"] = json!([{"ip": host_ip}]);
            status["startTime"] = json!(now);
            status["containerStatuses"] = json!(statuses);
            status["conditions"] = json!([
                {"type": "PodReadyToStartContainers", "status": "False", "lastProbeTime": null, "lastTransitionTime": now},
                condition("Initialized"),
                {"type": "Ready", "status": "False", "lastProbeTime": null, "lastTransitionTime": now, "reason": "ContainersNotReady", "message": "containers with unready status"},
                {"type": "ContainersReady", "status": "False", "lastProbeTime": null, "lastTransitionTime": now, "reason": "ContainersNotReady", "message": "containers with unready status"},
                condition("PodScheduled"),
            ]);
            txn.put(Resource::Pods, key, &mut pod)?;
            let source = events::kubelet(&node);
            for (name, image) in containers(&pod) {
                let path = format!("spec.containers{{{name}}}");
                let pulling = format!("Pulling image \"{image}\"");
                events::normal(txn, &pod, Some(&path), "Pulling", &pulling, &source)?;
                let pulled = format!(
                    "Successfully pulled image \"{image}\" in 1.204s (1.204s including waiting). Image size: 28815021 bytes."
                );
                events::normal(txn, &pod, Some(&path), "Pulled", &pulled, &source)?;
            }
            Ok(again)
        }
        2 => {
            let node = pod["spec"]["nodeName"].as_str().unwrap_or("").to_string();
            let mut rng = rand::rng();
            // A pod on the host's network has its node's IP.
            let ip = if pod["spec"]["hostNetwork"] == true {
                node_ip(&node)
            } else {
                gc::node_pod_ip(txn, &node)
                    .unwrap_or_else(|| pod_ip(rng.random_range(POD_IP_RANGE)))
            };
            let specs = container_specs(&pod);
            let statuses: Vec<Value> = specs
                .iter()
                .map(|c| {
                    let image = c["image"].as_str().unwrap_or("");
                    json!({
                        "name": c["name"], "image": image,
                        "imageID": format!("{}@sha256:{}", image.split(':').next().unwrap_or(image), manifests::hex(&mut rng, 64)),
                        "containerID": format!("containerd://{}", manifests::hex(&mut rng, 64)),
                        "ready": Plan::of(c, "Always").probe_passes, "restartCount": 0, "started": true,
                        "state": {"running": {"startedAt": now}}, "lastState": {},
                    })
                })
                .collect();
            let status = &mut pod["status"];
            status["phase"] = json!("Running");
            status["podIP"] = json!(ip);
            status["podIPs"] = json!([{"ip": ip}]);
            status["containerStatuses"] = json!(statuses);
            set_conditions(&mut pod, &now);
            txn.put(Resource::Pods, key, &mut pod)?;
            let source = events::kubelet(&node);
            for (name, _) in containers(&pod) {
                let path = format!("spec.containers{{{name}}}");
                let created = format!("Created container: {name}");
                events::normal(txn, &pod, Some(&path), "Created", &created, &source)?;
                let started = format!("Started container {name}");
                events::normal(txn, &pod, Some(&path), "Started", &started, &source)?;
            }
            let mut follow = next_steps(&pod, key);
            follow.extend(owner_work(&pod).map(|w| (w, None)));
            follow.extend(endpoints::services_selecting(txn, &pod));
            Ok(follow)
        }
        3 | 4 => lifecycle(txn, key, pod, scheduler),
        _ => Ok(Vec::new()),
    }
}

/// What a container does once started, read from its spec as a kubelet would see it happen:
/// a script that says `exit N` (or is `false`) ends with N, after `sleep S` if it says so;
/// under a restartPolicy other than Always every container runs to an end (exit 0 unless
/// it says otherwise); a readiness probe whose command is `false` or exits non-zero fails.
struct Plan {
    /// How long it runs and how it ends, if it ends.
    ends: Option<(Duration, i64)>,
    probe_passes: bool,
    /// The readiness probe's period.
    probe_period: Duration,
    /// A failing liveness probe: its first failure after the start (initial delay and one
    /// period), its period, and when it has failed `failureThreshold` times and the
    /// container is killed.
    liveness: Option<Liveness>,
}

#[derive(Clone, Copy)]
struct Liveness {
    first_failure: Duration,
    period: Duration,
    killed_after: Duration,
}

/// What the kubelet says of a pod past its activeDeadlineSeconds.
const DEADLINE_MESSAGE: &str = "Pod was active on the node longer than the specified deadline";

/// How long a finite container runs when its script does not say.
const DEFAULT_RUN: Duration = Duration::from_secs(1);
/// The longest a script's `sleep` is taken at its word.
const MAX_RUN: Duration = Duration::from_secs(3_600);

impl Plan {
    fn of(container: &Value, restart_policy: &str) -> Plan {
        let words = |v: &Value| -> Vec<String> {
            v.as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|w| w.as_str())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        let mut script = words(&container["command"]);
        script.extend(words(&container["args"]));
        let script = script.join(" ");
        let exit = explicit_exit(&script);
        let run = number_after(&script, "sleep ")
            .map_or(DEFAULT_RUN, |s| Duration::from_secs_f64(s).min(MAX_RUN));
        let ends = match exit {
            Some(code) => Some((run, code)),
            None if restart_policy != "Always" => Some((run, 0)),
            None => None,
        };
        let passes = |probe: &Value| {
            let script = words(&probe["exec"]["command"]).join(" ");
            script.is_empty() || explicit_exit(&script).is_none_or(|c| c == 0)
        };
        let period = |probe: &Value| {
            Duration::from_secs(probe["periodSeconds"].as_u64().unwrap_or(10).max(1))
        };
        let probe = &container["readinessProbe"];
        let liveness = &container["livenessProbe"];
        let liveness = (liveness.is_object() && !passes(liveness)).then(|| {
            let delay = Duration::from_secs(liveness["initialDelaySeconds"].as_u64().unwrap_or(0));
            let threshold = liveness["failureThreshold"]
                .as_u64()
                .unwrap_or(3)
                .clamp(1, 1_000);
            Liveness {
                first_failure: delay + period(liveness),
                period: period(liveness),
                killed_after: delay + period(liveness) * threshold as u32,
            }
        });
        Plan {
            ends,
            probe_passes: passes(probe),
            probe_period: period(probe),
            liveness,
        }
    }
}

/// The exit code a script states: `exit N`, or a bare `false`.
fn explicit_exit(script: &str) -> Option<i64> {
    if let Some(code) = number_after(script, "exit ") {
        return Some(code as i64);
    }
    script
        .split(|c: char| c.is_whitespace() || c == ';' || c == '&' || c == '|')
        .any(|w| w == "false")
        .then_some(1)
}

fn restart_policy(pod: &Value) -> &str {
    pod["spec"]["restartPolicy"].as_str().unwrap_or("Always")
}

/// When the kubelet next looks at a started pod: when a container is due to end or to be
/// restarted, or its failing readiness probe runs again.
fn next_steps(pod: &Value, key: &str) -> FollowUps {
    let now = now_ms();
    let policy = restart_policy(pod);
    let specs = container_specs(pod);
    let mut due: Option<i64> = None;
    let mut soonest = |at: i64| due = Some(due.map_or(at, |d| d.min(at)));
    for status in pod["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let Some(spec) = specs.iter().find(|c| c["name"] == status["name"]) else {
            continue;
        };
        let plan = Plan::of(spec, policy);
        let state = &status["state"];
        if let Some(started) = millis(&state["running"]["startedAt"]) {
            if let Some((run, _)) = plan.ends {
                soonest(started + run.as_millis() as i64);
            }
            if let Some(liveness) = plan.liveness {
                // Each failure is seen, then the kill.
                let kill = started + liveness.killed_after.as_millis() as i64;
                let first = started + liveness.first_failure.as_millis() as i64;
                let next = (now + liveness.period.as_millis() as i64).max(first);
                soonest(next.min(kill));
            }
            if !plan.probe_passes {
                soonest(now + plan.probe_period.as_millis() as i64);
            }
        } else if let Some(at) = restart_at(status) {
            soonest(at);
        }
    }
    if let Some(deadline) = active_deadline(pod) {
        soonest(deadline);
    }
    due.map(|at| {
        let wait = Duration::from_millis(at.saturating_sub(now).max(0) as u64);
        vec![(Work::Pod(key.into()), Some(wait.max(STEP_DELAY)))]
    })
    .unwrap_or_default()
}

/// When a pod with `spec.activeDeadlineSeconds` has been active on its node that long
/// (Unix milliseconds).
fn active_deadline(pod: &Value) -> Option<i64> {
    let seconds = pod["spec"]["activeDeadlineSeconds"].as_i64()?;
    Some(millis(&pod["status"]["startTime"])? + seconds.saturating_mul(1_000))
}

/// The base of the kubelet's crash-loop back-off, doubled at each restart up to its cap.
const BACKOFF_BASE: Duration = Duration::from_secs(10);
const BACKOFF_CAP: Duration = Duration::from_secs(300);

/// How long the kubelet waits before restarting a container that has restarted `restarts`
/// times: the first restart is at once, then 10s, 20s, 40s... up to 5m.
fn backoff(restarts: u64) -> Duration {
    if restarts == 0 {
        return STEP_DELAY;
    }
    let doubled = BACKOFF_BASE.saturating_mul(1 << (restarts - 1).min(16) as u32);
    doubled.min(BACKOFF_CAP)
}

/// Go's spelling of a whole-second duration (`10s`, `1m20s`, `5m0s`).
fn go_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{s}s")
    } else {
        format!("{}m{}s", s / 60, s % 60)
    }
}

/// Whether the kubelet restarts a container that exited with `code` under `policy`.
fn restarts_after(policy: &str, code: i64) -> bool {
    policy == "Always" || (policy == "OnFailure" && code != 0)
}

/// The exit code of a container's last ended instance (0 if none ended).
fn last_exit(status: &Value) -> i64 {
    status["state"]["terminated"]["exitCode"]
        .as_i64()
        .or_else(|| status["lastState"]["terminated"]["exitCode"].as_i64())
        .unwrap_or(0)
}

/// When a container that ended and is to be restarted will be (Unix milliseconds).
fn restart_at(status: &Value) -> Option<i64> {
    let ended = &status["state"]["terminated"];
    let waiting = &status["state"]["waiting"];
    let finished = if ended.is_object() {
        millis(&ended["finishedAt"])?
    } else if waiting["reason"] == "CrashLoopBackOff" {
        millis(&status["lastState"]["terminated"]["finishedAt"])?
    } else {
        return None;
    };
    let restarts = status["restartCount"].as_u64().unwrap_or(0);
    Some(finished + backoff(restarts).as_millis() as i64)
}

fn millis(v: &Value) -> Option<i64> {
    v.as_str()?
        .parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_millisecond())
}

fn now_ms() -> i64 {
    jiff::Timestamp::now().as_millisecond()
}

/// A running pod's containers end, crash, wait in back-off and restart, as their plans say;
/// the pod finishes when they all ended and none is to restart.
fn lifecycle(
    txn: &mut Txn<'_>,
    key: &str,
    mut pod: Value,
    scheduler: &mut Scheduler,
) -> Result<FollowUps, StoreError> {
    let before = pod.clone();
    let now_at = now_ms();
    let now = manifests::timestamp(manifests::now_seconds());
    let node = pod["spec"]["nodeName"].as_str().unwrap_or("").to_string();
    let policy = restart_policy(&pod).to_string();
    let specs = container_specs(&pod);
    let pod_name = pod["metadata"]["name"].as_str().unwrap_or("").to_string();
    let namespace = pod["metadata"]["namespace"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let uid = pod["metadata"]["uid"].as_str().unwrap_or("").to_string();
    let mut statuses = pod["status"]["containerStatuses"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    // Events are recorded after the pod's write, so each names the pod's new version, in
    // the order they happened (whether a warning, the field, reason and message).
    let mut happened: Vec<(bool, String, &str, String)> = Vec::new();
    let mut rng = rand::rng();
    for status in &mut statuses {
        let Some(spec) = specs.iter().find(|c| c["name"] == status["name"]) else {
            continue;
        };
        let plan = Plan::of(spec, &policy);
        let name = status["name"].as_str().unwrap_or("").to_string();
        let path = format!("spec.containers{{{name}}}");
        let restarts = status["restartCount"].as_u64().unwrap_or(0);
        if let Some(started) = millis(&status["state"]["running"]["startedAt"]) {
            let due = |after: Duration| started + after.as_millis() as i64 <= now_at;
            // A failing liveness probe has the container killed (and restarted as a crashed
            // one is), unless it ends of itself first.
            let ends_first = plan.ends.is_some_and(|(run, _)| due(run));
            let failing = plan
                .liveness
                .filter(|l| due(l.first_failure) && !ends_first);
            if failing.is_some() {
                happened.push((
                    true,
                    path.clone(),
                    "Unhealthy",
                    "Liveness probe failed: ".to_string(),
                ));
            }
            let killed = failing.is_some_and(|l| due(l.killed_after));
            if killed {
                happened.push((
                    false,
                    path.clone(),
                    "Killing",
                    format!("Container {name} failed liveness probe, will be restarted"),
                ));
            }
            let ends = if killed {
                Some((Duration::ZERO, KILLED_EXIT))
            } else {
                plan.ends.filter(|(run, _)| due(*run))
            };
            if let Some((_, code)) = ends {
                let terminated = json!({"terminated": {
                    "exitCode": code, "reason": if code == 0 { "Completed" } else { "Error" },
                    "startedAt": status["state"]["running"]["startedAt"], "finishedAt": now,
                    "containerID": status["containerID"],
                }});
                let restart = restarts_after(&policy, code);
                status["ready"] = json!(false);
                status["started"] = json!(false);
                if restart && restarts > 0 {
                    let wait = go_duration(backoff(restarts));
                    status["lastState"] = terminated;
                    status["state"] = json!({"waiting": {
                        "reason": "CrashLoopBackOff",
                        "message": format!("back-off {wait} restarting failed container={name} pod={pod_name}_{namespace}({uid})"),
                    }});
                    happened.push((true, path, "BackOff", format!("Back-off restarting failed container {name} in pod {pod_name}_{namespace}({uid})")));
                } else {
                    status["state"] = terminated;
                }
            } else if !plan.probe_passes {
                happened.push((
                    true,
                    path,
                    "Unhealthy",
                    "Readiness probe failed: ".to_string(),
                ));
            }
        } else if let Some(at) = restart_at(status)
            && at <= now_at
            && restarts_after(&policy, last_exit(status))
        {
            let previous = if status["state"]["terminated"].is_object() {
                status["state"].clone()
            } else {
                status["lastState"].clone()
            };
            status["lastState"] = previous;
            status["restartCount"] = json!(restarts + 1);
            status["state"] = json!({"running": {"startedAt": now}});
            status["containerID"] = json!(format!("containerd://{}", manifests::hex(&mut rng, 64)));
            status["ready"] = json!(plan.probe_passes);
            status["started"] = json!(true);
            let image = status["image"].as_str().unwrap_or("").to_string();
            happened.push((
                false,
                path.clone(),
                "Pulled",
                format!("Container image \"{image}\" already present on machine"),
            ));
            happened.push((
                false,
                path.clone(),
                "Created",
                format!("Created container: {name}"),
            ));
            happened.push((false, path, "Started", format!("Started container {name}")));
        }
    }
    // Active longer than its deadline: the kubelet kills its containers and fails it.
    let past_deadline = active_deadline(&pod).is_some_and(|at| at <= now_at);
    if past_deadline {
        for status in &mut statuses {
            if status["state"]["terminated"].is_object() {
                continue;
            }
            let name = status["name"].as_str().unwrap_or("").to_string();
            if status["state"]["running"].is_object() {
                happened.push((
                    false,
                    format!("spec.containers{{{name}}}"),
                    "Killing",
                    format!("Stopping container {name}"),
                ));
            }
            let started = status["state"]["running"]["startedAt"].clone();
            status["state"] = json!({"terminated": {
                "exitCode": KILLED_EXIT, "reason": "Error", "startedAt": started,
                "finishedAt": now, "containerID": status["containerID"],
            }});
            status["ready"] = json!(false);
            status["started"] = json!(false);
        }
        happened.push((
            true,
            String::new(),
            "DeadlineExceeded",
            DEADLINE_MESSAGE.to_string(),
        ));
        pod["status"]["phase"] = json!("Failed");
        pod["status"]["reason"] = json!("DeadlineExceeded");
        pod["status"]["message"] = json!(DEADLINE_MESSAGE);
    }
    // Every container ended and none is to restart: the pod is done.
    let done = past_deadline
        || statuses.iter().all(|s| {
            s["state"]["terminated"].is_object() && !restarts_after(&policy, last_exit(s))
        });
    if done && !past_deadline {
        let failed = statuses
            .iter()
            .any(|s| s["state"]["terminated"]["exitCode"] != 0);
        pod["status"]["phase"] = json!(if failed { "Failed" } else { "Succeeded" });
    }
    pod["status"]["containerStatuses"] = json!(statuses);
    set_conditions(&mut pod, &now);
    if pod != before {
        txn.put(Resource::Pods, key, &mut pod)?;
    }
    if done {
        scheduler.finished(&node, &pod);
    }
    let source = events::kubelet(&node);
    // An event about the pod as a whole names no field.
    let field = |path: &String| (!path.is_empty()).then(|| path.clone());
    for (warning, path, reason, message) in &happened {
        let field = field(path);
        if *warning {
            events::warning(txn, &pod, field.as_deref(), reason, message, &source)?;
        } else {
            events::normal(txn, &pod, field.as_deref(), reason, message, &source)?;
        }
    }
    let mut follow = if done {
        Vec::new()
    } else {
        next_steps(&pod, key)
    };
    if pods::is_ready(&pod) != pods::is_ready(&before) || pods::finished(&pod) {
        follow.extend(owner_work(&pod).map(|w| (w, None)));
        follow.extend(endpoints::services_selecting(txn, &pod));
    }
    Ok(follow)
}

/// The scheduler's wait before it tries an unschedulable pod again: as long as the pod has
/// been unschedulable, from a second up to ten (the real scheduler's backoff, 1s doubling
/// to 10s). A node or a pod coming or going tries the waiting pods at once.
const RETRY_FIRST: Duration = Duration::from_secs(1);
const RETRY_CAP: Duration = Duration::from_secs(10);

/// What the scheduler says when there is no node at all.
const NO_NODES: &str = "no nodes available to schedule pods";

/// A pod that fits no node stays Pending: PodScheduled=False (rewritten only when the
/// reason changes), a FailedScheduling warning at every try (the recorder counts the
/// repeats), and another try after the backoff.
fn unschedulable(
    txn: &mut Txn<'_>,
    scheduler: &mut Scheduler,
    key: &str,
    mut pod: Value,
    message: &str,
    now: &str,
) -> Result<FollowUps, StoreError> {
    if pod["status"]["conditions"][0]["message"] != message {
        pod["status"]["conditions"] = json!([{
            "type": "PodScheduled", "status": "False", "lastProbeTime": null,
            "lastTransitionTime": now, "reason": "Unschedulable", "message": message,
        }]);
        txn.put(Resource::Pods, key, &mut pod)?;
    }
    events::warning(
        txn,
        &pod,
        None,
        "FailedScheduling",
        message,
        &events::SCHEDULER,
    )?;
    scheduler.pending.insert(key.into());
    let since = millis(&pod["status"]["conditions"][0]["lastTransitionTime"]).unwrap_or(now_ms());
    let waited = Duration::from_millis(u64::try_from(now_ms() - since).unwrap_or(0));
    Ok(vec![(
        Work::Pod(key.into()),
        Some(waited.clamp(RETRY_FIRST, RETRY_CAP)),
    )])
}

/// CPU (millicores) and memory (thousandths of a byte): what a pod requests or what a node
/// can hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Requests {
    cpu: i128,
    memory: i128,
}

impl Requests {
    fn plus(self, other: Requests) -> Requests {
        Requests {
            cpu: self.cpu.saturating_add(other.cpu),
            memory: self.memory.saturating_add(other.memory),
        }
    }

    fn minus(self, other: Requests) -> Requests {
        Requests {
            cpu: self.cpu.saturating_sub(other.cpu),
            memory: self.memory.saturating_sub(other.memory),
        }
    }

    fn max(self, other: Requests) -> Requests {
        Requests {
            cpu: self.cpu.max(other.cpu),
            memory: self.memory.max(other.memory),
        }
    }

    fn from_map(map: &BTreeMap<String, Value>) -> Requests {
        let amount = |name: &str| {
            let text = match map.get(name) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                _ => return 0,
            };
            quantity::parse(&text).map_or(0, |a| a.milli())
        };
        Requests {
            cpu: amount("cpu"),
            memory: amount("memory"),
        }
    }
}

/// The parts of a pod the scheduler sums, read without decoding the rest.
#[derive(Deserialize, Default)]
#[serde(default)]
struct PodRequests {
    spec: PodRequestsSpec,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct PodRequestsSpec {
    containers: Vec<ContainerRequests>,
    init_containers: Vec<ContainerRequests>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ContainerRequests {
    resources: ContainerResources,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ContainerResources {
    requests: BTreeMap<String, Value>,
}

impl PodRequests {
    /// The containers' requests added up, or the largest init container's where that is
    /// more (init containers run one at a time, before the others), as the real scheduler
    /// counts them.
    fn total(&self) -> Requests {
        let each = |cs: &[ContainerRequests]| {
            cs.iter()
                .map(|c| Requests::from_map(&c.resources.requests))
                .collect::<Vec<_>>()
        };
        let running = each(&self.spec.containers)
            .into_iter()
            .fold(Requests::default(), Requests::plus);
        each(&self.spec.init_containers)
            .into_iter()
            .fold(running, Requests::max)
    }
}

fn requests_of(pod: &Value) -> Requests {
    PodRequests::deserialize(pod)
        .map(|r| r.total())
        .unwrap_or_default()
}

/// A node as the scheduler's filters see it.
struct NodeFacts {
    labels: Arc<[(Box<str>, Box<str>)]>,
    unschedulable: bool,
    /// NoSchedule and NoExecute taints (PreferNoSchedule does not keep a pod off).
    taints: Vec<(String, String, String)>,
    /// What it can hold: cpu and memory, and pods; `None` where its status says nothing
    /// (a node a client made without one), which keeps nothing off it.
    allocatable: Option<(Requests, i128)>,
}

impl NodeFacts {
    fn of(stored: &StoredObject) -> NodeFacts {
        let node = stored.decode().unwrap_or_default();
        let text = |v: &Value| v.as_str().unwrap_or("").to_string();
        let taints = node["spec"]["taints"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t["effect"] == "NoSchedule" || t["effect"] == "NoExecute")
            .map(|t| (text(&t["key"]), text(&t["value"]), text(&t["effect"])))
            .collect();
        let allocatable = node["status"]["allocatable"].as_object().map(|a| {
            let map: BTreeMap<String, Value> =
                a.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            let pods = match a.get("pods") {
                Some(Value::String(s)) => quantity::parse(s).map_or(0, |q| q.milli() / 1000),
                Some(Value::Number(n)) => n.as_i64().map_or(0, i128::from),
                _ => 0,
            };
            (Requests::from_map(&map), pods)
        });
        NodeFacts {
            labels: stored.labels.clone(),
            unschedulable: node["spec"]["unschedulable"] == true,
            taints,
            allocatable,
        }
    }

    fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| &**k == key)
            .map(|(_, v)| &**v)
    }

    /// Why the pod may not go here whatever runs on the node, in the order of the real
    /// scheduler's filters (unschedulable, taints, node affinity); `None` if it may.
    fn refuses(&self, name: &str, pod: &Value) -> Option<String> {
        let tolerations = pod["spec"]["tolerations"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        let tolerated = |key: &str, value: &str, effect: &str| {
            tolerations.iter().any(|t| {
                let t_key = t["key"].as_str().unwrap_or("");
                let effect_ok = t["effect"]
                    .as_str()
                    .is_none_or(|e| e.is_empty() || e == effect);
                let key_ok = t_key == key || (t_key.is_empty() && t["operator"] == "Exists");
                let value_ok =
                    t["operator"] == "Exists" || t["value"].as_str().unwrap_or("") == value;
                effect_ok && key_ok && value_ok
            })
        };
        if self.unschedulable && !tolerated("node.kubernetes.io/unschedulable", "", "NoSchedule") {
            return Some("node(s) were unschedulable".into());
        }
        if let Some((key, value, _)) = self.taints.iter().find(|(k, v, e)| !tolerated(k, v, e)) {
            return Some(format!("node(s) had untolerated taint {{{key}: {value}}}"));
        }
        (!self.matches_affinity(name, pod))
            .then(|| "node(s) didn't match Pod's node affinity/selector".into())
    }

    /// The pod's nodeSelector and its required node affinity (any one term, all of its
    /// expressions and fields).
    fn matches_affinity(&self, name: &str, pod: &Value) -> bool {
        let selector_ok = pod["spec"]["nodeSelector"]
            .as_object()
            .is_none_or(|m| m.iter().all(|(k, v)| self.label(k) == v.as_str()));
        let terms = &pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            ["nodeSelectorTerms"];
        let Some(terms) = terms.as_array() else {
            return selector_ok;
        };
        let requirement = |r: &Value, actual: Option<&str>| {
            let values: Vec<&str> = r["values"]
                .as_array()
                .map(|vs| vs.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let number = |s: &str| s.parse::<i64>().ok();
            match r["operator"].as_str() {
                Some("In") => actual.is_some_and(|a| values.contains(&a)),
                Some("NotIn") => actual.is_none_or(|a| !values.contains(&a)),
                Some("Exists") => actual.is_some(),
                Some("DoesNotExist") => actual.is_none(),
                Some("Gt") => actual
                    .and_then(number)
                    .zip(values.first().copied().and_then(number))
                    .is_some_and(|(a, v)| a > v),
                Some("Lt") => actual
                    .and_then(number)
                    .zip(values.first().copied().and_then(number))
                    .is_some_and(|(a, v)| a < v),
                _ => false,
            }
        };
        let term_ok = |t: &Value| {
            let expressions = t["matchExpressions"]
                .as_array()
                .map_or(&[][..], Vec::as_slice);
            let fields = t["matchFields"].as_array().map_or(&[][..], Vec::as_slice);
            (!expressions.is_empty() || !fields.is_empty())
                && expressions
                    .iter()
                    .all(|r| requirement(r, r["key"].as_str().and_then(|k| self.label(k))))
                && fields.iter().all(|r| {
                    let actual = (r["key"] == "metadata.name").then_some(name);
                    requirement(r, actual)
                })
        };
        selector_ok && terms.iter().any(term_ok)
    }
}

/// The pods on a node as the scheduler counts them.
#[derive(Debug, Clone, Copy, Default)]
struct Bound {
    /// The pods the store's node index held when they were summed: when it holds another
    /// number, pods came or went behind the scheduler's back and the node is summed again.
    indexed: usize,
    /// The unfinished ones, and their requests (a finished pod holds nothing).
    live: i128,
    used: Requests,
}

/// What the scheduler keeps between decisions, so that none reads every pod of the
/// cluster: each node's facts, read again only when the node changes, and the requests of
/// the pods bound to it, summed once per node (the seeded pods come bound) and then kept
/// up to date as the scheduler binds pods and they finish.
#[derive(Default)]
pub(super) struct Scheduler {
    nodes: HashMap<Key, (Arc<StoredObject>, NodeFacts)>,
    usage: HashMap<Box<str>, Bound>,
    /// The requests of the pods of each template (see [`template_of`]).
    templates: HashMap<(Arc<str>, Box<str>), Requests>,
    /// Pods that fit nowhere at their last try.
    pending: HashSet<Key>,
    /// Whether every node has been read and summed once (see [`Scheduler::warm`]).
    warmed: bool,
}

impl Scheduler {
    /// The least loaded node the pod fits, or why none: the real scheduler's message, with
    /// every node's first failing filter counted.
    fn place(&mut self, txn: &Txn<'_>, pod: &Value) -> Result<String, String> {
        let wants = requests_of(pod);
        let nodes = txn.scan(Resource::Nodes, "");
        let mut reasons: HashMap<String, usize> = HashMap::new();
        let (mut resolvable, mut unresolvable) = (0, 0);
        let mut best: Option<(usize, &Key)> = None;
        for (name, stored) in &nodes {
            let facts = match self.nodes.get(name) {
                Some((seen, facts)) if Arc::ptr_eq(seen, stored) => facts,
                _ => {
                    let facts = NodeFacts::of(stored);
                    &self
                        .nodes
                        .entry(name.clone())
                        .insert_entry((stored.clone(), facts))
                        .into_mut()
                        .1
                }
            };
            if let Some(reason) = facts.refuses(name, pod) {
                *reasons.entry(reason).or_default() += 1;
                unresolvable += 1;
                continue;
            }
            let bound = bound_on(&mut self.usage, &mut self.templates, txn, name);
            let short = short_of(facts.allocatable, bound, wants);
            if !short.is_empty() {
                for reason in short {
                    *reasons.entry(reason.to_string()).or_default() += 1;
                }
                resolvable += 1;
                continue;
            }
            if best.is_none_or(|(count, _)| bound.indexed < count) {
                best = Some((bound.indexed, name));
            }
        }
        if let Some((_, name)) = best {
            return Ok(name.to_string());
        }
        if nodes.is_empty() {
            return Err(NO_NODES.into());
        }
        let total = nodes.len();
        let mut preemption = HashMap::new();
        if resolvable > 0 {
            preemption.insert(
                "No preemption victims found for incoming pod".to_string(),
                resolvable,
            );
        }
        if unresolvable > 0 {
            preemption.insert(
                "Preemption is not helpful for scheduling".to_string(),
                unresolvable,
            );
        }
        Err(format!(
            "0/{total} nodes are available: {}. preemption: 0/{total} nodes are available: {}..",
            histogram(&reasons),
            histogram(&preemption)
        ))
    }

    /// The scheduler bound pod `key` to `node`.
    fn bound(&mut self, key: &str, node: &str, pod: &Value) {
        self.pending.remove(key);
        if let Some(bound) = self.usage.get_mut(node) {
            bound.indexed += 1;
            bound.live += 1;
            bound.used = bound.used.plus(requests_of(pod));
        }
    }

    /// A pod on `node` finished: what it requested is free again.
    fn finished(&mut self, node: &str, pod: &Value) {
        if let Some(bound) = self.usage.get_mut(node) {
            bound.live -= 1;
            bound.used = bound.used.minus(requests_of(pod));
        }
    }

    /// Reads and sums up to `max` nodes not seen yet, while the controllers are idle, so
    /// that the first decision in a large cluster does not do thousands at once (holding
    /// the store all along); whether some are left.
    pub(super) fn warm(&mut self, txn: &Txn<'_>, max: usize) -> bool {
        if self.warmed {
            return false;
        }
        let mut done = 0;
        for (name, stored) in txn.scan(Resource::Nodes, "") {
            if self.usage.contains_key(&*name) && self.nodes.contains_key(&name) {
                continue;
            }
            if done == max {
                return true;
            }
            bound_on(&mut self.usage, &mut self.templates, txn, &name);
            let facts = NodeFacts::of(&stored);
            self.nodes.insert(name, (stored, facts));
            done += 1;
        }
        self.warmed = true;
        false
    }

    /// Room may have been made (a node came or changed, a pod went): the waiting pods try
    /// again now.
    pub(super) fn retry(&mut self) -> FollowUps {
        self.pending
            .drain()
            .map(|key| (Work::Pod(key), None))
            .collect()
    }
}

/// The pods on `node`, summed again if the store's index holds another number of them.
fn bound_on(
    usage: &mut HashMap<Box<str>, Bound>,
    templates: &mut HashMap<(Arc<str>, Box<str>), Requests>,
    txn: &Txn<'_>,
    node: &str,
) -> Bound {
    let indexed = txn.pod_count_on_node(node);
    if let Some(bound) = usage.get(node).filter(|b| b.indexed == indexed) {
        return *bound;
    }
    let mut bound = Bound {
        indexed,
        ..Bound::default()
    };
    for key in txn.pods_on_node(node) {
        let Some(stored) = txn.get(Resource::Pods, &key) else {
            continue;
        };
        if matches!(stored.fields.phase.as_deref(), Some("Succeeded" | "Failed")) {
            continue;
        }
        bound.live += 1;
        let requests = || {
            serde_json::from_slice::<PodRequests>(&stored.json)
                .map(|r| r.total())
                .unwrap_or_default()
        };
        let used = match template_of(&stored) {
            Some(template) => *templates.entry(template).or_insert_with(requests),
            None => requests(),
        };
        bound.used = bound.used.plus(used);
    }
    usage.insert(node.into(), bound);
    bound
}

/// What makes pods ask for the same: their controller and the hash of the template (or
/// revision) they were made from. A pod's requests cannot change, so the pods of one
/// template are read once, not each of the 150,000 of a large cluster.
fn template_of(stored: &StoredObject) -> Option<(Arc<str>, Box<str>)> {
    let owner = stored.controller_uid.clone()?;
    let hash = stored.labels.iter().find(|(k, _)| {
        matches!(
            &**k,
            "pod-template-hash" | "controller-revision-hash" | "batch.kubernetes.io/controller-uid"
        )
    })?;
    Some((owner, hash.1.clone()))
}

/// What the node lacks for the pod (the pod count first, then cpu and memory, as the real
/// NodeResourcesFit reports them).
fn short_of(
    allocatable: Option<(Requests, i128)>,
    bound: Bound,
    wants: Requests,
) -> Vec<&'static str> {
    let Some((room, pods)) = allocatable else {
        return Vec::new();
    };
    let mut short = Vec::new();
    if bound.live + 1 > pods {
        short.push("Too many pods");
    }
    if wants.cpu > 0 && wants.cpu > room.cpu - bound.used.cpu {
        short.push("Insufficient cpu");
    }
    if wants.memory > 0 && wants.memory > room.memory - bound.used.memory {
        short.push("Insufficient memory");
    }
    short
}

/// `count reason` for each reason, sorted as text and joined, as the scheduler's message
/// lists them.
fn histogram(counts: &HashMap<String, usize>) -> String {
    let mut each: Vec<String> = counts.iter().map(|(r, c)| format!("{c} {r}")).collect();
    each.sort();
    each.join(", ")
}

/// The node names a pod's required node affinity allows through `metadata.name` fields, if
/// it names any.
pub(super) fn required_node_names(pod: &Value) -> Option<Vec<String>> {
    let terms = pod["spec"]["affinity"]["nodeAffinity"]
        ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        .as_array()?;
    let names: Vec<String> = terms
        .iter()
        .flat_map(|t| t["matchFields"].as_array().cloned().unwrap_or_default())
        .filter(|f| f["key"] == "metadata.name" && f["operator"] == "In")
        .flat_map(|f| f["values"].as_array().cloned().unwrap_or_default())
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    (!names.is_empty()).then_some(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_containers_count_as_the_largest_of_them() {
        let pod = json!({"spec": {
            "containers": [
                {"resources": {"requests": {"cpu": "250m", "memory": "64Mi"}}},
                {"resources": {"requests": {"cpu": 1, "memory": "64Mi"}}},
            ],
            "initContainers": [
                {"resources": {"requests": {"cpu": "2", "memory": "1Mi"}}},
                {"resources": {"requests": {"cpu": "500m"}}},
            ],
        }});
        let requests = requests_of(&pod);
        assert_eq!(requests.cpu, 2_000);
        assert_eq!(requests.memory, 128 * 1024 * 1024 * 1000);
    }

    #[test]
    fn reasons_are_listed_as_sorted_text() {
        let counts = HashMap::from([
            (
                "node(s) didn't match Pod's node affinity/selector".to_string(),
                2988,
            ),
            ("Insufficient cpu".to_string(), 12),
        ]);
        assert_eq!(
            histogram(&counts),
            "12 Insufficient cpu, 2988 node(s) didn't match Pod's node affinity/selector"
        );
    }
}
