//! The Job controller: up to `parallelism` pods at a time until `completions` succeeded
//! (Complete), or until more failed than `backoffLimit` allows (Failed, its pods stopped).
//! A failed pod's replacement waits the controller's back-off (10s doubling, up to 6m).
//! Past `activeDeadlineSeconds` it fails (DeadlineExceeded, its pods stopped). Its pods
//! carry the tracking finalizer until they are counted into the status, which keeps the
//! counts (a deleted pod is still counted). An Indexed Job runs one pod per index, each
//! knowing its index, and lists the indexes done in `completedIndexes`.

use std::time::Duration;

use serde_json::{Value, json};

use super::super::gc;
use super::super::manifests;
use super::super::resources::Resource;
use super::super::store::{StoreError, Txn};
use super::objects::{decode, owned, owner_key, set_status};
use super::work::{BURST, FollowUps, STEP_DELAY, Work};
use super::{events, kubelet, pods};

const BACKOFF_BASE: Duration = Duration::from_secs(10);
const BACKOFF_CAP: Duration = Duration::from_secs(360);
/// An Indexed Job's pod's index, as annotation and label.
const COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";

/// What the API server fills into a new Job: the selector and template labels that tie its
/// pods to its uid (unless `manualSelector`), and the spec's defaults.
pub(crate) fn default_new(job: &mut Value) {
    let uid = job["metadata"]["uid"].as_str().unwrap_or("").to_string();
    let name = job["metadata"]["name"].as_str().unwrap_or("").to_string();
    let spec = &mut job["spec"];
    if !spec.is_object() {
        return;
    }
    if spec["manualSelector"] != true {
        spec["selector"] = json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}});
        let labels = &mut spec["template"]["metadata"]["labels"];
        if !labels.is_object() {
            *labels = json!({});
        }
        for (k, v) in [
            ("batch.kubernetes.io/controller-uid", &uid),
            ("batch.kubernetes.io/job-name", &name),
            ("controller-uid", &uid),
            ("job-name", &name),
        ] {
            labels[k] = json!(v);
        }
    }
    if spec["completions"].is_null() && spec["parallelism"].is_null() {
        spec["completions"] = json!(1);
    }
    for (field, value) in [
        ("parallelism", json!(1)),
        ("backoffLimit", json!(6)),
        ("completionMode", json!("NonIndexed")),
        ("suspend", json!(false)),
        ("podReplacementPolicy", json!("TerminatingOrFailed")),
        ("manualSelector", Value::Null),
    ] {
        if spec[field].is_null() && !value.is_null() {
            spec[field] = value;
        }
    }
}

/// Whether a Job has finished: a Complete or Failed condition is True.
pub(super) fn finished(job: &Value) -> Option<&'static str> {
    let conditions = job["status"]["conditions"].as_array()?;
    ["Complete", "Failed"].into_iter().find(|kind| {
        conditions
            .iter()
            .any(|c| c["type"] == *kind && c["status"] == "True")
    })
}

pub(super) fn reconcile(txn: &mut Txn<'_>, key: &str) -> Result<FollowUps, StoreError> {
    let Some(stored) = txn.get(Resource::Jobs, key) else {
        return Ok(Vec::new());
    };
    let job = decode(&stored)?;
    if job["metadata"]["deletionTimestamp"].is_string() {
        return Ok(Vec::new());
    }
    let owner = owner_key(&job, "CronJob").map(|k| (Work::CronJob(k), None));
    if finished(&job).is_some() {
        return Ok(owner.into_iter().collect());
    }
    let spec = &job["spec"];
    let completions = spec["completions"].as_u64();
    let parallelism = spec["parallelism"].as_u64().unwrap_or(1);
    let backoff_limit = spec["backoffLimit"].as_u64().unwrap_or(6);
    let indexed = spec["completionMode"] == "Indexed";
    let on_failure = spec["template"]["spec"]["restartPolicy"] == "OnFailure";
    let now = manifests::timestamp(manifests::now_seconds());
    let start = job["status"]["startTime"]
        .as_str()
        .map_or_else(|| now.clone(), str::to_string);
    // Finished (or deleted) pods still carrying the tracking finalizer are counted into the
    // status now, and let go.
    let mut succeeded = job["status"]["succeeded"].as_u64().unwrap_or(0);
    let mut failed = job["status"]["failed"].as_u64().unwrap_or(0);
    let mut completed = parse_indexes(job["status"]["completedIndexes"].as_str().unwrap_or(""));
    for (pod_key, pod) in owned(txn, Resource::Pods, &format!("{key}-"), &stored.uid) {
        if !tracked(&pod) || !(pods::finished(&pod) || pods::terminating(&pod)) {
            continue;
        }
        if pod["status"]["phase"] == "Succeeded" {
            succeeded += 1;
            if let Some(index) = completion_index(&pod) {
                completed.insert(index);
            }
        } else {
            failed += 1;
        }
        count_out(txn, &pod_key)?;
    }
    let all = owned(txn, Resource::Pods, &format!("{key}-"), &stored.uid);
    let active: Vec<&(String, Value)> = all
        .iter()
        .filter(|(_, p)| !pods::finished(p) && !pods::terminating(p))
        .collect();
    let restarts: u64 = active
        .iter()
        .flat_map(|(_, p)| {
            p["status"]["containerStatuses"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|s| s["restartCount"].as_u64())
        .sum();
    let past_backoff = if on_failure {
        if backoff_limit == 0 {
            restarts > 0
        } else {
            restarts >= backoff_limit
        }
    } else {
        failed > backoff_limit
    };
    let deadline = spec["activeDeadlineSeconds"].as_i64().and_then(|seconds| {
        let started = start.parse::<jiff::Timestamp>().ok()?.as_millisecond();
        Some(started + seconds.saturating_mul(1_000))
    });
    let now_ms = jiff::Timestamp::now().as_millisecond();
    let past_deadline = deadline.is_some_and(|at| at <= now_ms);
    let done = match (completions, indexed) {
        (Some(c), true) => completed.len() as u64 >= c,
        (Some(c), false) => succeeded >= c,
        (None, _) => succeeded > 0 && active.is_empty(),
    };
    let failure = if done {
        None
    } else if past_deadline {
        Some((
            "DeadlineExceeded",
            "Job was active longer than specified deadline",
        ))
    } else if past_backoff {
        Some((
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
        ))
    } else {
        None
    };
    let mut follow = FollowUps::new();
    let mut conditions = job["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let condition = |kind: &str, reason: &str, message: &str| {
        json!({"type": kind, "status": "True", "lastProbeTime": now, "lastTransitionTime": now,
               "reason": reason, "message": message})
    };
    let mut completion_time = job["status"]["completionTime"].clone();
    let mut active_count = active.len() as u64;
    if done || failure.is_some() {
        for (pod_key, pod) in &active {
            follow.extend(kubelet::delete(txn, Resource::Pods, pod_key)?);
            // Counted here, it is let go: its kubelet removes it when it has stopped.
            count_out(txn, pod_key)?;
            if failure.is_some() {
                failed += 1;
            }
            let name = pod["metadata"]["name"].as_str().unwrap_or("");
            events::normal(
                txn,
                &job,
                None,
                "SuccessfulDelete",
                &format!("Deleted pod: {name}"),
                &events::JOB_CONTROLLER,
            )?;
        }
        active_count = 0;
        match failure {
            None => {
                let message = "Reached expected number of succeeded pods";
                conditions.push(condition(
                    "SuccessCriteriaMet",
                    "CompletionsReached",
                    message,
                ));
                conditions.push(condition("Complete", "CompletionsReached", message));
                completion_time = json!(now);
            }
            Some((reason, message)) => {
                conditions.push(condition("FailureTarget", reason, message));
                conditions.push(condition("Failed", reason, message));
            }
        }
    } else if spec["suspend"] != true {
        let remaining = match (completions, indexed) {
            (Some(c), true) => c.saturating_sub(completed.len() as u64),
            (Some(c), false) => c.saturating_sub(succeeded),
            (None, _) => parallelism,
        };
        let wanted = parallelism.min(remaining).saturating_sub(active_count);
        // A failed pod's replacement waits out the back-off from the newest failure.
        let wait = last_failure(&all)
            .map(|at| {
                let delay = BACKOFF_BASE
                    .saturating_mul(1 << (failed.saturating_sub(1)).min(16) as u32)
                    .min(BACKOFF_CAP);
                let due = at + delay.as_millis() as i64;
                due - now_ms
            })
            .filter(|ms| *ms > 0);
        if let Some(ms) = wait.filter(|_| wanted > 0) {
            follow.push((
                Work::Job(key.into()),
                Some(Duration::from_millis(ms as u64)),
            ));
        } else {
            // An Indexed Job's pods are for the indexes neither done nor running.
            let mut free = (0..completions.unwrap_or(0)).filter(|i| {
                !completed.contains(i)
                    && !active.iter().any(|(_, p)| completion_index(p) == Some(*i))
            });
            let creates = if txn.namespace_terminating(key) {
                0
            } else {
                wanted.min(BURST as u64)
            };
            for _ in 0..creates {
                let index = if indexed {
                    let Some(index) = free.next() else { break };
                    Some(index)
                } else {
                    None
                };
                let pod_key = create_pod(txn, &job, index)?;
                follow.push((Work::Pod(pod_key.as_str().into()), Some(STEP_DELAY)));
                active_count += 1;
            }
        }
        if let Some(at) = deadline {
            let wait = Duration::from_millis(at.saturating_sub(now_ms).max(0) as u64);
            follow.push((Work::Job(key.into()), Some(wait.max(STEP_DELAY))));
        }
    }
    let ready = active.iter().filter(|(_, p)| pods::is_ready(p)).count();
    let mut status = json!({
        "startTime": start,
        "active": active_count,
        "ready": ready,
        "succeeded": succeeded,
        "failed": failed,
        "terminating": 0,
        "uncountedTerminatedPods": {},
    });
    if indexed {
        status["completedIndexes"] = json!(format_indexes(&completed));
    }
    if !conditions.is_empty() {
        status["conditions"] = json!(conditions);
    }
    if !completion_time.is_null() {
        status["completionTime"] = completion_time;
    }
    if let Some(s) = status.as_object_mut() {
        for k in ["active", "succeeded", "failed"] {
            if s.get(k).and_then(Value::as_u64) == Some(0) {
                s.remove(k);
            }
        }
    }
    set_status(txn, Resource::Jobs, key, &job, status)?;
    if done || failure.is_some() {
        let updated = txn
            .get(Resource::Jobs, key)
            .map(|o| decode(&o))
            .transpose()?;
        if let Some(updated) = updated {
            match failure {
                None => events::normal(
                    txn,
                    &updated,
                    None,
                    "Completed",
                    "Job completed",
                    &events::JOB_CONTROLLER,
                )?,
                Some((reason, message)) => events::warning(
                    txn,
                    &updated,
                    None,
                    reason,
                    message,
                    &events::JOB_CONTROLLER,
                )?,
            }
        }
    }
    follow.extend(owner);
    Ok(follow)
}

/// Whether a pod still carries the Job controller's tracking finalizer.
fn tracked(pod: &Value) -> bool {
    pod["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| f.iter().any(|f| f == gc::JOB_TRACKING))
}

/// Removes the tracking finalizer from a counted pod; a pod being deleted then goes.
fn count_out(txn: &mut Txn<'_>, pod_key: &str) -> Result<(), StoreError> {
    let Some(stored) = txn.get(Resource::Pods, pod_key) else {
        return Ok(());
    };
    let mut pod = decode(&stored)?;
    if let Some(f) = pod["metadata"]["finalizers"].as_array_mut() {
        f.retain(|f| f != gc::JOB_TRACKING);
    }
    if pod["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| f.is_empty())
        && let Some(meta) = pod["metadata"].as_object_mut()
    {
        meta.remove("finalizers");
    }
    txn.put(Resource::Pods, pod_key, &mut pod)?;
    // One its kubelet is done with (no grace left) goes now; one still stopping goes
    // when its grace period is over.
    let stopped = pod["metadata"]["deletionGracePeriodSeconds"].as_i64() == Some(0);
    if pods::terminating(&pod) && stopped && !gc::has_finalizers(&pod) {
        txn.delete(Resource::Pods, pod_key)?;
    }
    Ok(())
}

/// An Indexed Job's pod's completion index.
fn completion_index(pod: &Value) -> Option<u64> {
    pod["metadata"]["annotations"][COMPLETION_INDEX]
        .as_str()?
        .parse()
        .ok()
}

/// `1,3-5,7` as the set it names.
fn parse_indexes(text: &str) -> std::collections::BTreeSet<u64> {
    text.split(',')
        .filter_map(|part| match part.split_once('-') {
            Some((a, b)) => Some(a.parse().ok()?..=b.parse().ok()?),
            None => part.parse().ok().map(|n| n..=n),
        })
        .flatten()
        .collect()
}

/// A set of indexes as the Job's status spells it: ascending runs, `first-last` for runs
/// of more than one.
fn format_indexes(indexes: &std::collections::BTreeSet<u64>) -> String {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for &i in indexes {
        match runs.last_mut() {
            Some((_, last)) if *last + 1 == i => *last = i,
            _ => runs.push((i, i)),
        }
    }
    runs.iter()
        .map(|(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// When the newest failed pod's containers ended (Unix milliseconds).
fn last_failure(pods: &[(String, Value)]) -> Option<i64> {
    pods.iter()
        .filter(|(_, p)| p["status"]["phase"] == "Failed")
        .flat_map(|(_, p)| {
            p["status"]["containerStatuses"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|s| {
            s["state"]["terminated"]["finishedAt"]
                .as_str()
                .map(str::to_string)
        })
        .filter_map(|t| t.parse::<jiff::Timestamp>().ok())
        .map(|t| t.as_millisecond())
        .max()
}

fn create_pod(txn: &mut Txn<'_>, job: &Value, index: Option<u64>) -> Result<String, StoreError> {
    let name = job["metadata"]["name"].as_str().unwrap_or("");
    let namespace = job["metadata"]["namespace"].as_str().unwrap_or("");
    let suffix = manifests::safe_suffix(&mut rand::rng(), 5);
    let mut template = job["spec"]["template"].clone();
    let mut labels = Vec::new();
    let pod_name = match index {
        // An Indexed Job's pod carries its index (annotation, label, environment) and is
        // reachable as NAME-INDEX.
        Some(index) => {
            let annotations = &mut template["metadata"]["annotations"];
            if !annotations.is_object() {
                *annotations = json!({});
            }
            annotations[COMPLETION_INDEX] = json!(index.to_string());
            labels.push((COMPLETION_INDEX, index.to_string()));
            template["spec"]["hostname"] = json!(format!("{name}-{index}"));
            for container in template["spec"]["containers"]
                .as_array_mut()
                .into_iter()
                .flatten()
            {
                let env = json!({"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
                    "apiVersion": "v1",
                    "fieldPath": format!("metadata.annotations['{COMPLETION_INDEX}']"),
                }}});
                match container["env"].as_array_mut() {
                    Some(all) => all.push(env),
                    None => container["env"] = json!([env]),
                }
            }
            format!("{name}-{index}-{suffix}")
        }
        None => format!("{name}-{suffix}"),
    };
    let mut pod = pods::from_template(job, &template, &pod_name, &labels);
    pod["metadata"]["finalizers"] = json!([gc::JOB_TRACKING]);
    kubelet::unscheduled(&mut pod);
    let pod_key = format!("{namespace}/{pod_name}");
    txn.put(Resource::Pods, &pod_key, &mut pod)?;
    events::normal(
        txn,
        job,
        None,
        "SuccessfulCreate",
        &format!("Created pod: {pod_name}"),
        &events::JOB_CONTROLLER,
    )?;
    Ok(pod_key)
}
