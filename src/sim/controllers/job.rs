//! The Job controller: up to `parallelism` pods at a time until `completions` succeeded
//! (Complete), or until more failed than `backoffLimit` allows (Failed, its pods stopped).
//! A failed pod's replacement waits the controller's back-off (10s doubling, up to 6m).

use std::time::Duration;

use serde_json::{Value, json};

use super::super::gc;
use super::super::manifests;
use super::super::resources::Resource;
use super::super::store::{StoreError, Txn};
use super::{
    BURST, FollowUps, STEP_DELAY, Work, decode, events, kubelet, owned, owner_key, pods, set_status,
};

const BACKOFF_BASE: Duration = Duration::from_secs(10);
const BACKOFF_CAP: Duration = Duration::from_secs(360);

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
    let on_failure = spec["template"]["spec"]["restartPolicy"] == "OnFailure";
    let now = manifests::timestamp(manifests::now_seconds());
    let all = owned(txn, Resource::Pods, &format!("{key}-"), &stored.uid);
    let active: Vec<&(String, Value)> = all
        .iter()
        .filter(|(_, p)| !pods::finished(p) && !pods::terminating(p))
        .collect();
    let phase = |phase: &str| {
        all.iter()
            .filter(|(_, p)| p["status"]["phase"] == phase)
            .count() as u64
    };
    let succeeded = phase("Succeeded");
    let failed = phase("Failed");
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
    let done = match completions {
        Some(c) => succeeded >= c,
        None => succeeded > 0 && active.is_empty(),
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
    if past_backoff || done {
        for (pod_key, pod) in &active {
            follow.extend(kubelet::kill(txn, pod)?);
            gc::delete_cascading(txn, Resource::Pods, pod_key, false)?;
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
        if done {
            let message = "Reached expected number of succeeded pods";
            conditions.push(condition(
                "SuccessCriteriaMet",
                "CompletionsReached",
                message,
            ));
            conditions.push(condition("Complete", "CompletionsReached", message));
            completion_time = json!(now);
        } else {
            let message = "Job has reached the specified backoff limit";
            conditions.push(condition("FailureTarget", "BackoffLimitExceeded", message));
            conditions.push(condition("Failed", "BackoffLimitExceeded", message));
        }
    } else if spec["suspend"] != true {
        let remaining = completions.map_or(parallelism, |c| c.saturating_sub(succeeded));
        let wanted = parallelism.min(remaining).saturating_sub(active_count);
        // A failed pod's replacement waits out the back-off from the newest failure.
        let wait = last_failure(&all)
            .map(|at| {
                let delay = BACKOFF_BASE
                    .saturating_mul(1 << (failed.saturating_sub(1)).min(16) as u32)
                    .min(BACKOFF_CAP);
                let due = at + delay.as_millis() as i64;
                due - jiff::Timestamp::now().as_millisecond()
            })
            .filter(|ms| *ms > 0);
        if let Some(ms) = wait.filter(|_| wanted > 0) {
            follow.push((
                Work::Job(key.into()),
                Some(Duration::from_millis(ms as u64)),
            ));
        } else {
            for _ in 0..wanted.min(BURST as u64) {
                let pod_key = create_pod(txn, &job)?;
                follow.push((Work::Pod(pod_key.as_str().into()), Some(STEP_DELAY)));
                active_count += 1;
            }
        }
    }
    let ready = active.iter().filter(|(_, p)| kubelet::is_ready(p)).count();
    let mut status = json!({
        "startTime": job["status"]["startTime"].as_str().map_or(json!(now), |s| json!(s)),
        "active": active_count,
        "ready": ready,
        "succeeded": succeeded,
        "failed": failed,
        "terminating": 0,
        "uncountedTerminatedPods": {},
    });
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
    let became_done = done || past_backoff;
    set_status(txn, Resource::Jobs, key, &job, status)?;
    if became_done {
        let updated = txn
            .get(Resource::Jobs, key)
            .map(|o| decode(&o))
            .transpose()?;
        if let Some(updated) = updated {
            if done {
                events::normal(
                    txn,
                    &updated,
                    None,
                    "Completed",
                    "Job completed",
                    &events::JOB_CONTROLLER,
                )?;
            } else {
                events::warning(
                    txn,
                    &updated,
                    None,
                    "BackoffLimitExceeded",
                    "Job has reached the specified backoff limit",
                    &events::JOB_CONTROLLER,
                )?;
            }
        }
    }
    follow.extend(owner);
    Ok(follow)
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

fn create_pod(txn: &mut Txn<'_>, job: &Value) -> Result<String, StoreError> {
    let name = job["metadata"]["name"].as_str().unwrap_or("");
    let namespace = job["metadata"]["namespace"].as_str().unwrap_or("");
    let pod_name = format!("{name}-{}", manifests::safe_suffix(&mut rand::rng(), 5));
    let mut pod = pods::from_template(job, &job["spec"]["template"], &pod_name, &[]);
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
