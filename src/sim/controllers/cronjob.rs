//! The CronJob controller: at each time its schedule names (the latest one missed since
//! `status.lastScheduleTime`, or since its creation) it creates a Job from the template,
//! named after the scheduled minute, honouring suspend, startingDeadlineSeconds and the
//! concurrency policy; finished Jobs leave `status.active` and the oldest beyond the
//! history limits are deleted.

use std::time::Duration;

use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde_json::{Value, json};

use super::super::gc;
use super::super::manifests;
use super::super::resources::Resource;
use super::super::store::{StoreError, Txn};
use super::objects::{decode, owned, set_status};
use super::work::{FollowUps, Work};
use super::{events, job};

/// The most missed schedule times the controller looks through (as the real one, which
/// gives up past 100 and starts from now).
const MAX_MISSED: usize = 100;

/// Parses a schedule as the API server accepts it: five fields (or a macro such as
/// `@hourly`), no seconds or years.
pub(crate) fn parse_schedule(schedule: &str) -> Result<Cron, croner::errors::CronError> {
    CronParser::builder()
        .seconds(Seconds::Disallowed)
        .year(Year::Disallowed)
        .build()
        .parse(schedule)
}

pub(super) fn reconcile(txn: &mut Txn<'_>, key: &str) -> Result<FollowUps, StoreError> {
    let Some(stored) = txn.get(Resource::CronJobs, key) else {
        return Ok(Vec::new());
    };
    let cj = decode(&stored)?;
    if cj["metadata"]["deletionTimestamp"].is_string() {
        return Ok(Vec::new());
    }
    let name = cj["metadata"]["name"].as_str().unwrap_or("").to_string();
    let namespace = cj["metadata"]["namespace"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let mut jobs = owned(txn, Resource::Jobs, &format!("{key}-"), &stored.uid);
    jobs.sort_by_key(|(_, j)| scheduled_at(j));
    let mut status = cj["status"].clone();
    if !status.is_object() {
        status = json!({});
    }
    // Finished Jobs leave the active list, once each.
    let mut active: Vec<Value> = Vec::new();
    for (_, job_value) in &jobs {
        let job_name = job_value["metadata"]["name"].as_str().unwrap_or("");
        let listed = status["active"]
            .as_array()
            .is_some_and(|a| a.iter().any(|r| r["name"] == job_name));
        match job::finished(job_value) {
            None => active.push(reference(job_value)),
            Some(outcome) if listed => {
                events::normal(
                    txn,
                    &cj,
                    None,
                    "SawCompletedJob",
                    &format!("Saw completed job: {job_name}, status: {outcome}"),
                    &events::CRONJOB_CONTROLLER,
                )?;
                if outcome == "Complete" {
                    status["lastSuccessfulTime"] = job_value["status"]["completionTime"].clone();
                }
            }
            Some(_) => {}
        }
    }
    // History limits: the oldest finished Jobs beyond them go.
    for (outcome, limit_field, default) in [
        ("Complete", "successfulJobsHistoryLimit", 3),
        ("Failed", "failedJobsHistoryLimit", 1),
    ] {
        let limit = cj["spec"][limit_field].as_u64().unwrap_or(default) as usize;
        let done: Vec<&(String, Value)> = jobs
            .iter()
            .filter(|(_, j)| job::finished(j) == Some(outcome))
            .collect();
        for (job_key, job_value) in done.iter().take(done.len().saturating_sub(limit)) {
            delete_job(txn, &cj, job_key, job_value)?;
        }
    }
    let mut follow = FollowUps::new();
    let schedule = cj["spec"]["schedule"].as_str().unwrap_or("");
    let cron = match parse_schedule(schedule) {
        Ok(cron) => cron,
        Err(e) => {
            events::warning(
                txn,
                &cj,
                None,
                "UnparseableSchedule",
                &format!("unparseable schedule: {schedule:?} : {e}"),
                &events::CRONJOB_CONTROLLER,
            )?;
            return Ok(Vec::new());
        }
    };
    let zone = zone(&cj);
    let now = Timestamp::now();
    let since = cj["status"]["lastScheduleTime"]
        .as_str()
        .or_else(|| cj["metadata"]["creationTimestamp"].as_str())
        .and_then(|t| t.parse::<Timestamp>().ok())
        .unwrap_or(now);
    let due = latest_missed(&cron, since, now, &zone);
    let deadline_passed = |at: Timestamp| {
        cj["spec"]["startingDeadlineSeconds"]
            .as_i64()
            .is_some_and(|d| at.as_second() + d < now.as_second())
    };
    if let Some(at) = due.filter(|at| !deadline_passed(*at))
        && cj["spec"]["suspend"] != true
    {
        let policy = cj["spec"]["concurrencyPolicy"].as_str().unwrap_or("Allow");
        if policy == "Forbid" && !active.is_empty() {
            // Skipped: the next schedule time is tried again.
        } else {
            if policy == "Replace" {
                for (job_key, job_value) in &jobs {
                    if job::finished(job_value).is_none() {
                        delete_job(txn, &cj, job_key, job_value)?;
                    }
                }
                active.clear();
            }
            let job_name = format!("{name}-{}", at.as_second() / 60);
            let job_key = format!("{namespace}/{job_name}");
            if txn.get(Resource::Jobs, &job_key).is_none() {
                let mut new_job = job_from_template(&cj, &job_name, at);
                let created = txn.put(Resource::Jobs, &job_key, &mut new_job)?;
                let created = decode(&created)?;
                active.push(reference(&created));
                events::normal(
                    txn,
                    &cj,
                    None,
                    "SuccessfulCreate",
                    &format!("Created job {job_name}"),
                    &events::CRONJOB_CONTROLLER,
                )?;
                follow.push((Work::Job(job_key.as_str().into()), None));
            }
            status["lastScheduleTime"] = json!(manifests::timestamp(at.as_second()));
        }
    }
    if active.is_empty() {
        if let Some(s) = status.as_object_mut() {
            s.remove("active");
        }
    } else {
        status["active"] = json!(active);
    }
    let current = decode(&txn.get(Resource::CronJobs, key).unwrap_or(stored))?;
    set_status(txn, Resource::CronJobs, key, &current, status)?;
    // Look again at the next schedule time.
    if let Some(wait) = until_next(&cron, &zone, now) {
        follow.push((Work::CronJob(key.into()), Some(wait)));
    }
    Ok(follow)
}

/// Every CronJob's next look, at its next schedule time: what the controllers start with,
/// so that the seeded CronJobs run on their schedules with no client touching them. The
/// seeded ones' history stands as it is (no catch-up run at start).
pub(super) fn at_start(txn: &Txn<'_>) -> FollowUps {
    let now = Timestamp::now();
    txn.scan(Resource::CronJobs, "")
        .into_iter()
        .filter_map(|(key, stored)| {
            let cj = stored.decode().ok()?;
            let cron = parse_schedule(cj["spec"]["schedule"].as_str()?).ok()?;
            let wait = until_next(&cron, &zone(&cj), now)?;
            Some((Work::CronJob(key), Some(wait)))
        })
        .collect()
}

/// The CronJob's time zone (UTC unless it names a known one).
fn zone(cj: &Value) -> TimeZone {
    cj["spec"]["timeZone"]
        .as_str()
        .and_then(|z| TimeZone::get(z).ok())
        .unwrap_or(TimeZone::UTC)
}

/// How long from `now` until just past the next schedule time (just past, so that the
/// reconcile then finds it due).
fn until_next(cron: &Cron, zone: &TimeZone, now: Timestamp) -> Option<Duration> {
    let next = cron
        .find_next_occurrence(&now.to_zoned(zone.clone()), false)
        .ok()?;
    let wait = Duration::try_from(next.timestamp().duration_since(now)).unwrap_or_default();
    Some(wait + Duration::from_millis(10))
}

/// The latest schedule time in (`since`, `now`], if any.
fn latest_missed(
    cron: &Cron,
    since: Timestamp,
    now: Timestamp,
    zone: &TimeZone,
) -> Option<Timestamp> {
    let mut latest = None;
    let mut at = since.to_zoned(zone.clone());
    for _ in 0..MAX_MISSED {
        match cron.find_next_occurrence(&at, false) {
            Ok(next) if next.timestamp() <= now => {
                latest = Some(next.timestamp());
                at = next;
            }
            _ => return latest,
        }
    }
    // Too many missed: the newest time at or before now.
    cron.find_previous_occurrence(&now.to_zoned(zone.clone()), true)
        .ok()
        .map(|z| z.timestamp())
        .or(latest)
}

/// The Job a CronJob runs at `at`: its template, owned by it, with the scheduled time noted.
fn job_from_template(cj: &Value, job_name: &str, at: Timestamp) -> Value {
    let template = &cj["spec"]["jobTemplate"];
    let now = manifests::timestamp(manifests::now_seconds());
    let mut metadata = template["metadata"].clone();
    if !metadata.is_object() {
        metadata = json!({});
    }
    metadata["name"] = json!(job_name);
    metadata["namespace"] = cj["metadata"]["namespace"].clone();
    metadata["uid"] = json!(manifests::uid(&mut rand::rng()));
    metadata["creationTimestamp"] = json!(now);
    metadata["generation"] = json!(1);
    metadata["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"] =
        json!(manifests::timestamp(at.as_second()));
    metadata["ownerReferences"] = json!([{
        "apiVersion": "batch/v1", "kind": "CronJob", "name": cj["metadata"]["name"],
        "uid": cj["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true,
    }]);
    metadata["managedFields"] = json!([manifests::managed_entry(
        "kube-controller-manager",
        "batch/v1",
        &now,
        json!({"f:metadata": {"f:ownerReferences": {}}, "f:spec": {}}),
        None,
    )]);
    let mut value = json!({
        "kind": "Job",
        "apiVersion": "batch/v1",
        "metadata": metadata,
        "spec": template["spec"].clone(),
        "status": {},
    });
    job::default_new(&mut value);
    value
}

fn reference(job_value: &Value) -> Value {
    let meta = &job_value["metadata"];
    json!({
        "kind": "Job", "apiVersion": "batch/v1", "namespace": meta["namespace"],
        "name": meta["name"], "uid": meta["uid"], "resourceVersion": meta["resourceVersion"],
    })
}

fn scheduled_at(job_value: &Value) -> String {
    job_value["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"]
        .as_str()
        .or_else(|| job_value["metadata"]["creationTimestamp"].as_str())
        .unwrap_or("")
        .to_string()
}

fn delete_job(
    txn: &mut Txn<'_>,
    cj: &Value,
    job_key: &str,
    job_value: &Value,
) -> Result<(), StoreError> {
    gc::delete_cascading(txn, Resource::Jobs, job_key, false)?;
    let job_name = job_value["metadata"]["name"].as_str().unwrap_or("");
    events::normal(
        txn,
        cj,
        None,
        "SuccessfulDelete",
        &format!("Deleted job {job_name}"),
        &events::CRONJOB_CONTROLLER,
    )
}

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;

    use super::*;
    use crate::store::Store;
    use crate::{Sim, SimConfig};

    #[test]
    fn an_every_minute_cronjob_is_looked_at_within_the_minute() {
        let store = Store::new(100);
        store.write(|txn| {
            let mut cj = json!({
                "kind": "CronJob", "apiVersion": "batch/v1",
                "metadata": {"name": "tick", "namespace": "default", "uid": "u"},
                "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {}}},
            });
            txn.put(Resource::CronJobs, "default/tick", &mut cj)
                .expect("put");
        });
        let queued = store.write(|txn| at_start(txn));
        let [(Work::CronJob(key), Some(wait))] = queued.as_slice() else {
            panic!("{queued:?}");
        };
        assert_eq!(&**key, "default/tick");
        assert!(*wait <= Duration::from_millis(60_010), "{wait:?}");
    }

    #[tokio::test]
    async fn seeded_cronjobs_are_due_at_their_next_schedule_time() {
        let sim = Sim::start(SimConfig::with_size(40, 3, 2))
            .await
            .expect("sim starts");
        let seeded = sim.shared.store.truth(Resource::CronJobs);
        assert!(!seeded.is_empty());
        // The nightly `0 2 * * *` (Etc/UTC) runs next at the coming 02:00.
        let now = Timestamp::now();
        let today = now.to_zoned(TimeZone::UTC).date();
        let mut next = today
            .at(2, 0, 0, 0)
            .to_zoned(TimeZone::UTC)
            .expect("02:00")
            .timestamp();
        if next <= now {
            next += jiff::SignedDuration::from_hours(24);
        }
        let expected = Duration::try_from(next.duration_since(now)).expect("ahead");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let due: Vec<(String, Duration)> = {
                let queue = sim.shared.controllers.queue.lock();
                queue
                    .later
                    .iter()
                    .filter_map(|Reverse((at, _, work))| match work {
                        Work::CronJob(key) => Some((
                            key.to_string(),
                            at.saturating_duration_since(tokio::time::Instant::now()),
                        )),
                        _ => None,
                    })
                    .collect()
            };
            if due.len() == seeded.len() {
                for (key, wait) in &due {
                    assert!(seeded.contains_key(key), "{key}");
                    assert!(
                        wait.abs_diff(expected) < Duration::from_secs(5),
                        "{key}: {wait:?}, not {expected:?}"
                    );
                }
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "seeded CronJobs never queued: {due:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        sim.shutdown().await;
    }
}
