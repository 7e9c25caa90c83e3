//! The Deployment controller: the ReplicaSet whose template is the Deployment's (created,
//! or an old one taken back, at the next revision) is scaled to `spec.replicas`; once it is
//! all available the older ReplicaSets are scaled to zero, and those beyond
//! revisionHistoryLimit deleted. A paused Deployment only scales. The status sums them up,
//! with the Available and Progressing conditions (the progress deadline's among them)
//! `kubectl rollout status` reads.

use std::time::Duration;

use serde_json::{Value, json};

use super::super::gc;
use super::super::manifests;
use super::super::resources::Resource;
use super::super::store::{StoreError, Txn};
use super::objects::decode;
use super::work::{FollowUps, Work};
use super::{events, replicaset};

const REVISION: &str = "deployment.kubernetes.io/revision";
const REVISION_HISTORY: &str = "deployment.kubernetes.io/revision-history";
const DESIRED: &str = "deployment.kubernetes.io/desired-replicas";
const MAX_REPLICAS: &str = "deployment.kubernetes.io/max-replicas";
/// The Deployment's annotations its ReplicaSets do not take: kubectl apply's and the
/// controller's own.
const NOT_COPIED: [&str; 6] = [
    "kubectl.kubernetes.io/last-applied-configuration",
    REVISION,
    REVISION_HISTORY,
    DESIRED,
    MAX_REPLICAS,
    "deprecated.deployment.rollback.to",
];
/// The longest revision-history annotation (the real controller's default bound).
const HISTORY_CHARS: usize = 2000;
/// The Progressing condition's reasons these rules turn on.
const COMPLETE: &str = "NewReplicaSetAvailable";
const TIMED_OUT: &str = "ProgressDeadlineExceeded";
const PAUSED: &str = "DeploymentPaused";
/// How long after its progress deadline a stalled rollout is looked at again.
const DEADLINE_MARGIN: Duration = Duration::from_millis(100);

pub(super) fn reconcile(txn: &mut Txn<'_>, key: &str) -> Result<FollowUps, StoreError> {
    let Some(stored) = txn.get(Resource::Deployments, key) else {
        return Ok(Vec::new());
    };
    let d = decode(&stored)?;
    if d["metadata"]["deletionTimestamp"].is_string() {
        return Ok(Vec::new());
    }
    let desired = d["spec"]["replicas"].as_u64().unwrap_or(1);
    let uid = stored.uid.clone();
    adopt_replica_sets(txn, key, &d, &uid)?;
    let mut owned: Vec<(String, Value)> = txn
        .scan(Resource::ReplicaSets, &format!("{key}-"))
        .into_iter()
        .filter(|(_, o)| o.controller_uid.as_deref() == Some(&*uid))
        .filter_map(|(k, o)| Some((k.to_string(), o.decode().ok()?)))
        .collect();
    // Oldest first: the first with the template is the new one, as the real controller picks.
    owned.sort_by(|(a, x), (b, y)| created(x).cmp(created(y)).then(a.cmp(b)));
    let mut follow = FollowUps::new();
    let template = &d["spec"]["template"];
    let paused = d["spec"]["paused"] == true;
    let found = owned
        .iter()
        .position(|(_, rs)| same_template(&rs["spec"]["template"], template))
        .map(|i| owned.remove(i));
    // From here `owned` holds the old ReplicaSets only.
    let next_revision = owned.iter().map(|(_, rs)| revision(rs)).max().unwrap_or(0) + 1;
    let found = match found {
        Some((k, rs)) => {
            let rs = make_current(txn, &d, &k, rs, next_revision)?;
            Some((k, rs))
        }
        None => None,
    };
    // A changed spec.replicas is spread over the ReplicaSets before the rollout goes on.
    let scaling = owned
        .iter()
        .chain(&found)
        .any(|(_, rs)| spec(rs) > 0 && annotated(rs, DESIRED).is_some_and(|n| n != desired));
    let rolling_out = !paused && !scaling;
    let old_spec: u64 = owned.iter().map(|(_, rs)| spec(rs)).sum();
    let old_running: u64 = owned.iter().map(|(_, rs)| count(rs, "replicas")).sum();
    let recreate = d["spec"]["strategy"]["type"] == "Recreate";
    let (max_surge, max_unavailable) = limits(&d, desired);
    // What the new ReplicaSet may grow to now: Recreate waits for the old pods to be gone,
    // RollingUpdate keeps the total within desired + maxSurge.
    let allowed = |current: u64| {
        if current > desired {
            desired
        } else if recreate {
            if old_spec == 0 && old_running == 0 {
                desired
            } else {
                current
            }
        } else {
            desired.min(current + (desired + max_surge).saturating_sub(old_spec + current))
        }
    };
    let created_new = found.is_none() && rolling_out;
    let new = match found {
        Some(found) => Some(found),
        // Paused or being scaled, a new template waits for its ReplicaSet.
        None if !rolling_out => None,
        None => {
            let Some((rs_key, rs)) = create(txn, &d, next_revision, allowed(0))? else {
                return name_taken(txn, key, &d);
            };
            follow.push((Work::ReplicaSet(rs_key.as_str().into()), None));
            Some((rs_key, rs))
        }
    };
    if let Some((_, rs)) = &new
        && d["metadata"]["annotations"][REVISION] != rs["metadata"]["annotations"][REVISION]
    {
        let revision = rs["metadata"]["annotations"][REVISION].clone();
        txn.modify_member(Resource::Deployments, key, "metadata", |meta| {
            meta["annotations"][REVISION] = revision;
        })?;
    }
    let mut counts = Counts::default();
    for (_, rs) in owned.iter().chain(&new) {
        counts.total += count(rs, "replicas");
        counts.ready += count(rs, "readyReplicas");
        counts.available += count(rs, "availableReplicas");
    }
    counts.updated = new.as_ref().map_or(0, |(_, rs)| count(rs, "replicas"));
    let complete =
        counts.updated == desired && counts.total == desired && counts.available >= desired;
    match &new {
        Some((new_key, new_rs)) if rolling_out => {
            let new_replicas = spec(new_rs);
            if allowed(new_replicas) != new_replicas {
                resize(txn, &d, new_key, new_rs, allowed(new_replicas))?;
                follow.push((Work::ReplicaSet(new_key.as_str().into()), None));
            }
            // Old ReplicaSets shrink, oldest first: their unavailable pods while the new
            // ones not yet available leave room within desired - maxUnavailable, then any
            // while that many stay available (Recreate: all at once).
            let min_available = desired.saturating_sub(max_unavailable);
            let new_unavailable = new_replicas.saturating_sub(count(new_rs, "availableReplicas"));
            let mut unhealthy_room = (old_spec + new_replicas)
                .saturating_sub(min_available)
                .saturating_sub(new_unavailable);
            let mut removable = counts.available.saturating_sub(min_available);
            let mut old: Vec<&(String, Value)> = owned.iter().collect();
            old.sort_by_key(|(_, rs)| revision(rs));
            for (rs_key, rs) in old {
                let current = spec(rs);
                if current == 0 {
                    continue;
                }
                let target = if recreate {
                    0
                } else {
                    let unhealthy = current
                        .saturating_sub(count(rs, "availableReplicas"))
                        .min(unhealthy_room);
                    unhealthy_room -= unhealthy;
                    let more = (current - unhealthy).min(removable);
                    removable -= more;
                    current - unhealthy - more
                };
                if target != current {
                    resize(txn, &d, rs_key, rs, target)?;
                    follow.push((Work::ReplicaSet(rs_key.as_str().into()), None));
                }
            }
            if complete {
                prune(txn, &d, &owned)?;
            }
        }
        _ => {
            follow.extend(scale(txn, &d, new.as_ref(), &owned)?);
            if paused {
                prune(txn, &d, &owned)?;
            }
        }
    }
    let now = manifests::timestamp(manifests::now_seconds());
    let new_name = new
        .as_ref()
        .and_then(|(_, rs)| rs["metadata"]["name"].as_str())
        .unwrap_or("");
    let current = &d["status"];
    let previous = |kind: &str| {
        current["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == kind))
    };
    let deadline = d["spec"]["progressDeadlineSeconds"].as_i64();
    let mut progressing = previous("Progressing").cloned();
    // Pausing and resuming are told in the Progressing condition, unless the deadline had
    // already passed.
    if deadline.is_some() && !is(&progressing, TIMED_OUT) {
        let said = if paused && !is(&progressing, PAUSED) {
            Some((PAUSED, "Deployment is paused"))
        } else if !paused && is(&progressing, PAUSED) {
            Some(("DeploymentResumed", "Deployment is resumed"))
        } else {
            None
        };
        if let Some((reason, message)) = said {
            let c = condition(
                progressing.as_ref(),
                "Progressing",
                "Unknown",
                reason,
                message,
                &now,
                false,
            );
            progressing = Some(c);
        }
    }
    if rolling_out {
        let step = Step {
            before: Counts::of(current),
            after: &counts,
            complete,
            created_new,
            new_name,
            now: &now,
        };
        progressing = deadline.and_then(|deadline| after_step(progressing, &step, deadline));
        // A rollout not yet done is looked at again when its deadline would pass.
        if let (Some(deadline), Some(c)) = (deadline, &progressing)
            && !complete
            && !is(&progressing, TIMED_OUT)
            && previous("Progressing").is_none_or(|p| p["lastUpdateTime"] != c["lastUpdateTime"])
        {
            let wait = due_ms(c, deadline).saturating_sub(now_ms()).max(0) as u64;
            let wait = Duration::from_millis(wait) + DEADLINE_MARGIN;
            follow.push((Work::Deployment(key.into()), Some(wait)));
        }
    }
    let available = if counts.available >= desired.saturating_sub(max_unavailable) {
        (
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
        )
    } else {
        (
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
        )
    };
    let (ok, reason, message) = available;
    let mut conditions = vec![condition(
        previous("Available"),
        "Available",
        ok,
        reason,
        message,
        &now,
        false,
    )];
    conditions.extend(progressing);
    let mut status = json!({
        "observedGeneration": d["metadata"]["generation"].as_u64().unwrap_or(1),
        "replicas": counts.total,
        "updatedReplicas": counts.updated,
        "readyReplicas": counts.ready,
        "availableReplicas": counts.available,
        "unavailableReplicas": counts.total.saturating_sub(counts.available),
        "conditions": conditions,
    });
    if let Some(collisions) = d["status"].get("collisionCount") {
        status["collisionCount"] = collisions.clone();
    }
    if let Some(s) = status.as_object_mut() {
        // The real status omits zero counts.
        s.retain(|_, v| v.as_u64() != Some(0));
    }
    if d["status"] != status {
        txn.modify_member(Resource::Deployments, key, "status", |s| *s = status)?;
    }
    Ok(follow)
}

/// The replica counts a Deployment's status sums up from its ReplicaSets.
#[derive(Default)]
struct Counts {
    total: u64,
    updated: u64,
    ready: u64,
    available: u64,
}

impl Counts {
    fn of(status: &Value) -> Counts {
        let n = |field: &str| status[field].as_u64().unwrap_or(0);
        Counts {
            total: n("replicas"),
            updated: n("updatedReplicas"),
            ready: n("readyReplicas"),
            available: n("availableReplicas"),
        }
    }

    /// Whether `self` is further along than `before`: more updated, ready or available
    /// pods, or fewer old ones.
    fn moved_since(&self, before: &Counts) -> bool {
        self.updated > before.updated
            || self.total.saturating_sub(self.updated) < before.total.saturating_sub(before.updated)
            || self.ready > before.ready
            || self.available > before.available
    }
}

/// One rollout step, as the Progressing condition tells it.
struct Step<'a> {
    before: Counts,
    after: &'a Counts,
    complete: bool,
    created_new: bool,
    new_name: &'a str,
    now: &'a str,
}

/// The Progressing condition after a rollout step, by the real controller's rules: a new
/// ReplicaSet made, the rollout complete, progress since the last status (which restarts
/// the deadline's clock), or none by the deadline.
fn after_step(current: Option<Value>, step: &Step<'_>, deadline: i64) -> Option<Value> {
    let mut c = current;
    let name = step.new_name;
    if step.created_new {
        let message = format!("Created new replica set \"{name}\"");
        let reason = "NewReplicaSetCreated";
        c = Some(condition(
            c.as_ref(),
            "Progressing",
            "True",
            reason,
            &message,
            step.now,
            false,
        ));
    } else if c.is_none() {
        // A Deployment without the condition starts its deadline's clock now.
        let message = format!("Found new replica set \"{name}\"");
        c = Some(condition(
            None,
            "Progressing",
            "True",
            "FoundNewReplicaSet",
            &message,
            step.now,
            false,
        ));
    }
    if step.after.total == step.after.updated && is(&c, COMPLETE) {
        return c;
    }
    let (status, reason, message, refresh) = if step.complete {
        (
            "True",
            COMPLETE,
            format!("ReplicaSet \"{name}\" has successfully progressed."),
            false,
        )
    } else if step.after.moved_since(&step.before) {
        (
            "True",
            "ReplicaSetUpdated",
            format!("ReplicaSet \"{name}\" is progressing."),
            true,
        )
    } else if c.as_ref().is_some_and(|c| {
        c["reason"] != COMPLETE && (c["reason"] == TIMED_OUT || due_ms(c, deadline) < now_ms())
    }) {
        (
            "False",
            TIMED_OUT,
            format!("ReplicaSet \"{name}\" has timed out progressing."),
            false,
        )
    } else {
        return c;
    };
    Some(condition(
        c.as_ref(),
        "Progressing",
        status,
        reason,
        &message,
        step.now,
        refresh,
    ))
}

/// A condition of `kind`; unless `refresh`, `previous` stays as it is if its status and
/// reason are these, and its transition time stays while its status holds.
fn condition(
    previous: Option<&Value>,
    kind: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: &str,
    refresh: bool,
) -> Value {
    if !refresh
        && let Some(same) = previous.filter(|p| p["status"] == status && p["reason"] == reason)
    {
        return same.clone();
    }
    let transition = previous
        .filter(|p| p["status"] == status)
        .map_or(json!(now), |p| p["lastTransitionTime"].clone());
    json!({"type": kind, "status": status, "lastUpdateTime": now,
           "lastTransitionTime": transition, "reason": reason, "message": message})
}

fn is(condition: &Option<Value>, reason: &str) -> bool {
    condition.as_ref().is_some_and(|c| c["reason"] == reason)
}

/// When a condition's progress deadline passes, in Unix milliseconds (never, if its update
/// time does not parse).
fn due_ms(condition: &Value, deadline: i64) -> i64 {
    condition["lastUpdateTime"]
        .as_str()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map_or(i64::MAX, |t| {
            t.as_millisecond()
                .saturating_add(deadline.saturating_mul(1000))
        })
}

fn now_ms() -> i64 {
    jiff::Timestamp::now().as_millisecond()
}

/// Makes the ReplicaSet of the Deployment's template, at `revision`, with `replicas`;
/// `None` if its name is another's (see [`name_taken`]).
fn create(
    txn: &mut Txn<'_>,
    d: &Value,
    revision: u64,
    replicas: u64,
) -> Result<Option<(String, Value)>, StoreError> {
    let hash = pod_template_hash(d);
    let mut rng = rand::rng();
    let now = manifests::timestamp(manifests::now_seconds());
    let uid = manifests::uid(&mut rng);
    let mut rs = manifests::replicaset(d, &hash, &uid, replicas as u32, revision as u32, &now);
    rs["status"] = json!({"replicas": 0, "observedGeneration": 0});
    let desired = d["spec"]["replicas"].as_u64().unwrap_or(1);
    rs["metadata"]["annotations"][MAX_REPLICAS] =
        json!((desired + limits(d, desired).0).to_string());
    stamp(&mut rs, d, revision);
    let name = rs["metadata"]["name"].as_str().unwrap_or("").to_string();
    let namespace = rs["metadata"]["namespace"].as_str().unwrap_or("");
    let rs_key = format!("{namespace}/{name}");
    if txn.get(Resource::ReplicaSets, &rs_key).is_some() {
        return Ok(None);
    }
    txn.put(Resource::ReplicaSets, &rs_key, &mut rs)?;
    if replicas > 0 {
        scaling(
            txn,
            d,
            &format!("Scaled up replica set {name} from 0 to {replicas}"),
        )?;
    }
    Ok(Some((rs_key, rs)))
}

/// The template's existing ReplicaSet made the current one (see [`stamp`]).
fn make_current(
    txn: &mut Txn<'_>,
    d: &Value,
    rs_key: &str,
    rs: Value,
    revision: u64,
) -> Result<Value, StoreError> {
    let mut next = rs.clone();
    stamp(&mut next, d, revision);
    if next["spec"] != rs["spec"] {
        next["metadata"]["generation"] =
            json!(rs["metadata"]["generation"].as_u64().unwrap_or(1) + 1);
    }
    if next != rs {
        txn.put(Resource::ReplicaSets, rs_key, &mut next)?;
    }
    Ok(next)
}

/// What the Deployment gives its current ReplicaSet: its annotations (a change-cause among
/// them, which `kubectl rollout history` reads there), its minReadySeconds, and `revision`
/// if the ReplicaSet had an older one, which then joins its revision-history annotation.
fn stamp(rs: &mut Value, d: &Value, revision: u64) {
    if let Some(annotations) = d["metadata"]["annotations"].as_object() {
        for (k, v) in annotations
            .iter()
            .filter(|(k, _)| !NOT_COPIED.contains(&k.as_str()))
        {
            rs["metadata"]["annotations"][k] = v.clone();
        }
    }
    let had = rs["metadata"]["annotations"][REVISION]
        .as_str()
        .unwrap_or("")
        .to_string();
    if had.parse::<u64>().unwrap_or(0) < revision {
        rs["metadata"]["annotations"][REVISION] = json!(revision.to_string());
        if !had.is_empty() {
            let history = rs["metadata"]["annotations"][REVISION_HISTORY]
                .as_str()
                .unwrap_or("");
            let history = add_history(history, &had);
            rs["metadata"]["annotations"][REVISION_HISTORY] = json!(history);
        }
    }
    match d["spec"]["minReadySeconds"].as_u64().filter(|s| *s > 0) {
        Some(seconds) => rs["spec"]["minReadySeconds"] = json!(seconds),
        None => {
            if let Some(spec) = rs["spec"].as_object_mut() {
                spec.remove("minReadySeconds");
            }
        }
    }
}

/// `history` (former revisions, comma-separated) with `revision` added, its oldest ones
/// dropped to keep it within [`HISTORY_CHARS`].
fn add_history(history: &str, revision: &str) -> String {
    let mut revisions: Vec<&str> = history.split(',').filter(|r| !r.is_empty()).collect();
    revisions.push(revision);
    while revisions.len() > 1 && revisions.join(",").len() > HISTORY_CHARS {
        revisions.remove(0);
    }
    revisions.join(",")
}

/// A new spec.replicas spread over the ReplicaSets, as the real controller does when a
/// Deployment is scaled or paused: one active ReplicaSet (none active, the newest) takes it
/// whole; a saturated new one sees the old ones go; mid-rollout, each active one grows or
/// shrinks in proportion to its share, within desired + maxSurge.
fn scale(
    txn: &mut Txn<'_>,
    d: &Value,
    new: Option<&(String, Value)>,
    old: &[(String, Value)],
) -> Result<FollowUps, StoreError> {
    let desired = d["spec"]["replicas"].as_u64().unwrap_or(1);
    let mut follow = FollowUps::new();
    let mut set = |txn: &mut Txn<'_>, (k, rs): &(String, Value), replicas: u64| {
        if spec(rs) != replicas || annotated(rs, DESIRED) != Some(desired) {
            resize(txn, d, k, rs, replicas)?;
            follow.push((Work::ReplicaSet(k.as_str().into()), None));
        }
        Ok::<(), StoreError>(())
    };
    let mut active: Vec<&(String, Value)> = new
        .into_iter()
        .chain(old)
        .filter(|(_, rs)| spec(rs) > 0)
        .collect();
    let saturated = new.is_some_and(|(_, rs)| {
        spec(rs) == desired
            && annotated(rs, DESIRED) == Some(desired)
            && count(rs, "availableReplicas") == desired
    });
    if active.len() <= 1 {
        if let Some(only) = active.first().copied().or(new).or(old.last()) {
            set(txn, only, desired)?;
        }
    } else if saturated {
        for rs in old.iter().filter(|(_, rs)| spec(rs) > 0) {
            set(txn, rs, 0)?;
        }
    } else if d["spec"]["strategy"]["type"] != "Recreate" {
        let (max_surge, _) = limits(d, desired);
        let allowed = if desired > 0 { desired + max_surge } else { 0 } as i64;
        let to_add = allowed - active.iter().map(|(_, rs)| spec(rs)).sum::<u64>() as i64;
        // The largest first; on a tie the newest when growing, the oldest when shrinking.
        active.sort_by(|(_, a), (_, b)| {
            let by_age = created(a).cmp(created(b));
            let by_age = if to_add > 0 { by_age.reverse() } else { by_age };
            spec(b).cmp(&spec(a)).then(by_age)
        });
        let was = d["status"]["replicas"].as_u64().unwrap_or(0);
        let mut added = 0i64;
        let mut sizes = Vec::new();
        for (_, rs) in &active {
            let size = spec(rs) as i64;
            let rest = to_add - added;
            let share = if rest == 0 {
                0
            } else {
                let was = annotated(rs, MAX_REPLICAS)
                    .filter(|n| *n > 0)
                    .unwrap_or(was);
                let fraction = if desired == 0 {
                    -size
                } else if was == 0 {
                    0
                } else {
                    (size as f64 * (desired + max_surge) as f64 / was as f64).round() as i64 - size
                };
                if to_add > 0 {
                    fraction.min(rest)
                } else {
                    fraction.max(rest)
                }
            };
            added += share;
            sizes.push(size + share);
        }
        if let Some(first) = sizes.first_mut() {
            *first += to_add - added;
        }
        for (rs, size) in active.into_iter().zip(sizes) {
            set(txn, rs, size.max(0) as u64)?;
        }
    } else {
        // Recreate spreads nothing; the sizes stay, noted as seen, and the rollout goes on.
        for rs in active {
            set(txn, rs, spec(&rs.1))?;
        }
    }
    Ok(follow)
}

/// Deletes the old ReplicaSets beyond spec.revisionHistoryLimit, lowest revision first, as
/// the real controller does: of those over the limit, only the ones fully scaled down.
fn prune(txn: &mut Txn<'_>, d: &Value, old: &[(String, Value)]) -> Result<(), StoreError> {
    let Some(limit) = d["spec"]["revisionHistoryLimit"].as_u64() else {
        return Ok(());
    };
    let mut alive: Vec<&(String, Value)> = old
        .iter()
        .filter(|(_, rs)| !rs["metadata"]["deletionTimestamp"].is_string())
        .collect();
    let extra = alive
        .len()
        .saturating_sub(usize::try_from(limit).unwrap_or(usize::MAX));
    alive.sort_by(|(_, a), (_, b)| {
        revision(a)
            .cmp(&revision(b))
            .then(created(a).cmp(created(b)))
    });
    for (rs_key, rs) in alive.into_iter().take(extra) {
        let observed = rs["status"]["observedGeneration"].as_u64().unwrap_or(0)
            >= rs["metadata"]["generation"].as_u64().unwrap_or(0);
        if spec(rs) == 0 && count(rs, "replicas") == 0 && observed {
            gc::delete_cascading(txn, Resource::ReplicaSets, rs_key, false)?;
        }
    }
    Ok(())
}

/// Sets a ReplicaSet's replicas (and its desired- and max-replicas annotations), recording
/// the ScalingReplicaSet event the Deployment controller does when the size changes.
fn resize(
    txn: &mut Txn<'_>,
    d: &Value,
    rs_key: &str,
    rs: &Value,
    replicas: u64,
) -> Result<(), StoreError> {
    let from = spec(rs);
    let name = rs["metadata"]["name"].as_str().unwrap_or("");
    let desired = d["spec"]["replicas"].as_u64().unwrap_or(1);
    let mut next = rs.clone();
    next["spec"]["replicas"] = json!(replicas);
    next["metadata"]["annotations"][DESIRED] = json!(desired.to_string());
    next["metadata"]["annotations"][MAX_REPLICAS] =
        json!((desired + limits(d, desired).0).to_string());
    let generation = rs["metadata"]["generation"].as_u64().unwrap_or(1) + 1;
    next["metadata"]["generation"] = json!(generation);
    txn.put(Resource::ReplicaSets, rs_key, &mut next)?;
    if replicas == from {
        return Ok(());
    }
    let direction = if replicas > from { "up" } else { "down" };
    let message = format!("Scaled {direction} replica set {name} from {from} to {replicas}");
    scaling(txn, d, &message)
}

fn scaling(txn: &mut Txn<'_>, d: &Value, message: &str) -> Result<(), StoreError> {
    events::normal(
        txn,
        d,
        None,
        "ScalingReplicaSet",
        message,
        &events::DEPLOYMENT_CONTROLLER,
    )
}

/// maxSurge and maxUnavailable for `desired` replicas: a count or a percentage (surge
/// rounded up, unavailable down, 25% each by default), and never both zero.
fn limits(d: &Value, desired: u64) -> (u64, u64) {
    let rolling = &d["spec"]["strategy"]["rollingUpdate"];
    let resolve = |v: &Value, round_up: bool| match v {
        Value::Number(n) => n.as_u64().unwrap_or(0),
        Value::String(p) => {
            let percent = p.trim_end_matches('%').parse::<u64>().unwrap_or(25);
            let scaled = desired * percent;
            if round_up {
                scaled.div_ceil(100)
            } else {
                scaled / 100
            }
        }
        _ => {
            if round_up {
                (desired * 25).div_ceil(100)
            } else {
                desired * 25 / 100
            }
        }
    };
    let surge = resolve(&rolling["maxSurge"], true);
    let unavailable = resolve(&rolling["maxUnavailable"], false);
    if surge == 0 && unavailable == 0 {
        (0, 1)
    } else {
        (surge, unavailable)
    }
}

fn revision(rs: &Value) -> u64 {
    rs["metadata"]["annotations"][REVISION]
        .as_str()
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

/// Whether a ReplicaSet's template is the Deployment's, compared as the real controller
/// compares them once decoded and defaulted: the pod-template-hash label aside, with what
/// the API server would not keep (nulls, empty maps and lists, as kubectl's `rollout undo`
/// sends a null creationTimestamp) or would fill in (the pod spec's defaults, which the sim
/// fills on create only) made alike.
fn same_template(rs_template: &Value, template: &Value) -> bool {
    let mut ours = rs_template.clone();
    if let Some(labels) = ours["metadata"]["labels"].as_object_mut() {
        labels.remove("pod-template-hash");
    }
    canonical(ours) == canonical(template.clone())
}

fn canonical(mut template: Value) -> Value {
    if let Some(spec) = template.get_mut("spec").and_then(Value::as_object_mut) {
        drop_defaults(spec, &POD_DEFAULTS.map(|(k, v)| (k, json!(v))));
        drop_defaults(spec, &[("terminationGracePeriodSeconds", json!(30))]);
        for list in ["initContainers", "containers"] {
            let containers = spec.get_mut(list).and_then(Value::as_array_mut);
            for container in containers
                .into_iter()
                .flatten()
                .filter_map(Value::as_object_mut)
            {
                let pull = default_pull_policy(container.get("image").and_then(Value::as_str));
                drop_defaults(container, &[("imagePullPolicy", json!(pull))]);
                drop_defaults(container, &CONTAINER_DEFAULTS.map(|(k, v)| (k, json!(v))));
                let ports = container.get_mut("ports").and_then(Value::as_array_mut);
                for port in ports.into_iter().flatten().filter_map(Value::as_object_mut) {
                    drop_defaults(port, &[("protocol", json!("TCP"))]);
                }
            }
        }
    }
    drop_empty(&mut template);
    template
}

/// The pod spec's defaults the API server fills in.
const POD_DEFAULTS: [(&str, &str); 3] = [
    ("restartPolicy", "Always"),
    ("dnsPolicy", "ClusterFirst"),
    ("schedulerName", "default-scheduler"),
];
/// A container's defaults the API server fills in (imagePullPolicy aside, which depends
/// on the image).
const CONTAINER_DEFAULTS: [(&str, &str); 2] = [
    ("terminationMessagePath", "/dev/termination-log"),
    ("terminationMessagePolicy", "File"),
];

fn drop_defaults(object: &mut serde_json::Map<String, Value>, defaults: &[(&str, Value)]) {
    for (field, default) in defaults {
        if object.get(*field) == Some(default) {
            object.remove(*field);
        }
    }
}

/// Always for an image at `latest` (or untagged), IfNotPresent otherwise.
fn default_pull_policy(image: Option<&str>) -> &'static str {
    let image = image.unwrap_or("");
    let last = image.rsplit('/').next().unwrap_or(image);
    let tag = last.split_once(':').map(|(_, tag)| tag);
    if !image.contains('@') && tag.is_none_or(|t| t == "latest") {
        "Always"
    } else {
        "IfNotPresent"
    }
}

/// Removes nulls, and maps and lists left empty, from the maps within `value`.
fn drop_empty(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for v in map.values_mut() {
                drop_empty(v);
            }
            map.retain(|_, v| match v {
                Value::Null => false,
                Value::Object(m) => !m.is_empty(),
                Value::Array(a) => !a.is_empty(),
                _ => true,
            });
        }
        Value::Array(items) => items.iter_mut().for_each(drop_empty),
        _ => {}
    }
}

fn spec(rs: &Value) -> u64 {
    rs["spec"]["replicas"].as_u64().unwrap_or(0)
}

fn count(rs: &Value, field: &str) -> u64 {
    rs["status"][field].as_u64().unwrap_or(0)
}

/// A number a ReplicaSet's annotation `key` holds.
fn annotated(rs: &Value, key: &str) -> Option<u64> {
    rs["metadata"]["annotations"][key].as_str()?.parse().ok()
}

fn created(object: &Value) -> &str {
    object["metadata"]["creationTimestamp"]
        .as_str()
        .unwrap_or("")
}

/// Adopts the orphaned ReplicaSets named after Deployment `key` that its selector matches
/// (a controller reference added, each its own write), as the real controller claims them:
/// what an orphaning delete left then serves the Deployment made again in its place. Only
/// those named after it, the ones its reconcile lists.
fn adopt_replica_sets(
    txn: &mut Txn<'_>,
    key: &str,
    d: &Value,
    uid: &str,
) -> Result<(), StoreError> {
    for (rs_key, object) in txn.scan(Resource::ReplicaSets, &format!("{key}-")) {
        if object.controller_uid.is_some()
            || !crate::selectors::selects(&d["spec"]["selector"], &object.labels)
        {
            continue;
        }
        let mut rs = decode(&object)?;
        if rs["metadata"]["deletionTimestamp"].is_string() {
            continue;
        }
        replicaset::add_controller(&mut rs, d, uid);
        txn.put(Resource::ReplicaSets, &rs_key, &mut rs)?;
    }
    Ok(())
}

/// The pod-template-hash of the Deployment's template, which `status.collisionCount` (once
/// a name it gave was taken) changes.
fn pod_template_hash(d: &Value) -> String {
    let template = &d["spec"]["template"];
    match d["status"]["collisionCount"].as_u64() {
        None | Some(0) => manifests::template_hash(template),
        Some(n) => manifests::template_hash(&json!([template, n])),
    }
}

/// The new ReplicaSet's name is another's, which a create would be refused (409): as the
/// real controller, the Deployment counts a collision, so that the next name differs, and
/// tries again.
fn name_taken(txn: &mut Txn<'_>, key: &str, d: &Value) -> Result<FollowUps, StoreError> {
    let collisions = d["status"]["collisionCount"].as_u64().unwrap_or(0) + 1;
    txn.modify_member(Resource::Deployments, key, "status", |s| {
        s["collisionCount"] = json!(collisions);
    })?;
    Ok(vec![(Work::Deployment(key.into()), None)])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(image: &str) -> Value {
        json!({
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": image}]},
        })
    }

    /// What `kubectl rollout undo` sends back (a null creationTimestamp, the hash label
    /// gone) and what a later update leaves undefaulted both match the old ReplicaSet's.
    #[test]
    fn templates_compare_as_the_server_holds_them() {
        let mut stored = template("nginx:1.27");
        stored["metadata"]["labels"]["pod-template-hash"] = json!("5d8f");
        stored["spec"]["restartPolicy"] = json!("Always");
        stored["spec"]["securityContext"] = json!({});
        stored["spec"]["containers"][0]["imagePullPolicy"] = json!("IfNotPresent");
        stored["spec"]["containers"][0]["resources"] = json!({});
        stored["spec"]["containers"][0]["terminationMessagePolicy"] = json!("File");
        let mut undone = template("nginx:1.27");
        undone["metadata"]["creationTimestamp"] = Value::Null;
        assert!(same_template(&stored, &undone));
        assert!(same_template(&stored, &template("nginx:1.27")));
        assert!(!same_template(&stored, &template("nginx:1.28")));
        let mut pulled = template("nginx:1.27");
        pulled["spec"]["containers"][0]["imagePullPolicy"] = json!("Always");
        assert!(!same_template(&stored, &pulled));
    }

    #[test]
    fn revision_history_keeps_the_newest_within_its_bound() {
        assert_eq!(add_history("", "1"), "1");
        assert_eq!(add_history("1,3", "5"), "1,3,5");
        let long = vec!["9999"; 400].join(",");
        let kept = add_history(&long, "12345");
        assert!(
            kept.len() <= HISTORY_CHARS && kept.ends_with(",12345"),
            "{kept}"
        );
    }
}
