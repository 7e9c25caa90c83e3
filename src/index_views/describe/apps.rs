//! `kubectl describe` for the workloads: Deployments, ReplicaSets, StatefulSets and Jobs.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::context::Ctx;
use super::pod::pod_template;
use super::printer::{
    annotations, controller, go_bool, labels, name_and_namespace, rfc1123z, selector_text,
};
use super::writer::Out;

/// The label the Deployment controller adds to each ReplicaSet's template.
const POD_TEMPLATE_HASH: &str = "pod-template-hash";

fn int_or_string(v: Option<&IntOrString>) -> String {
    match v {
        Some(IntOrString::Int(n)) => n.to_string(),
        Some(IntOrString::String(s)) => s.clone(),
        None => String::new(),
    }
}

pub(super) fn deployment(ctx: &Ctx<'_>, out: &mut Out, d: &Deployment) {
    let meta = &d.metadata;
    let spec = d.spec.clone();
    let status = d.status.clone().unwrap_or_default();
    name_and_namespace(out, meta);
    out.w(
        0,
        &format!(
            "CreationTimestamp:\t{}\n",
            rfc1123z(meta.creation_timestamp.as_ref())
        ),
    );
    labels(out, "", "Labels", meta.labels.as_ref());
    annotations(out, "Annotations", meta.annotations.as_ref());
    out.w(
        0,
        &format!("Selector:\t{}\n", selector_text(Some(&spec.selector))),
    );
    out.w(
        0,
        &format!(
            "Replicas:\t{} desired | {} updated | {} total | {} available | {} unavailable\n",
            spec.replicas.unwrap_or(1),
            status.updated_replicas.unwrap_or(0),
            status.replicas.unwrap_or(0),
            status.available_replicas.unwrap_or(0),
            status.unavailable_replicas.unwrap_or(0)
        ),
    );
    let strategy = spec.strategy.clone().unwrap_or_default();
    out.w(
        0,
        &format!(
            "StrategyType:\t{}\n",
            strategy.type_.as_deref().unwrap_or("")
        ),
    );
    out.w(
        0,
        &format!(
            "MinReadySeconds:\t{}\n",
            spec.min_ready_seconds.unwrap_or(0)
        ),
    );
    if let Some(ru) = &strategy.rolling_update {
        out.w(
            0,
            &format!(
                "RollingUpdateStrategy:\t{} max unavailable, {} max surge\n",
                int_or_string(ru.max_unavailable.as_ref()),
                int_or_string(ru.max_surge.as_ref())
            ),
        );
    }
    pod_template(out, &spec.template);
    conditions(
        out,
        status.conditions.iter().flatten().map(|c| {
            (
                c.type_.as_deref().unwrap_or(""),
                c.status.as_deref().unwrap_or(""),
                c.reason.as_deref(),
            )
        }),
    );
    let (old, new) = replica_sets(ctx, d);
    if !old.is_empty() || new.is_some() {
        out.w(0, &format!("OldReplicaSets:\t{}\n", rs_list(&old)));
        out.w(0, &format!("NewReplicaSet:\t{}\n", rs_list(new.as_slice())));
    }
    ctx.events(out);
}

/// The Deployment's old ReplicaSets (all of them, scaled to zero too) and its new one (the
/// oldest whose template is the Deployment's), as kubectl finds them.
fn replica_sets(ctx: &Ctx<'_>, d: &Deployment) -> (Vec<ReplicaSet>, Option<ReplicaSet>) {
    let uid = d.metadata.uid.as_deref();
    let mut owned: Vec<ReplicaSet> = ctx
        .related::<ReplicaSet>("replicasets")
        .unwrap_or_default()
        .into_iter()
        .filter(|rs| {
            rs.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.controller == Some(true) && Some(o.uid.as_str()) == uid)
        })
        .collect();
    owned.sort_by(|a, b| {
        a.metadata
            .creation_timestamp
            .as_ref()
            .map(|t| t.0)
            .cmp(&b.metadata.creation_timestamp.as_ref().map(|t| t.0))
            .then_with(|| a.metadata.name.cmp(&b.metadata.name))
    });
    let template = Some(without_hash(&d.spec.template));
    let new_index = owned
        .iter()
        .position(|rs| rs.spec.template.as_ref().map(without_hash) == template);
    let new = new_index.map(|i| owned.remove(i));
    (owned, new)
}

fn without_hash(template: &PodTemplateSpec) -> PodTemplateSpec {
    let mut t = template.clone();
    if let Some(labels) = t.metadata.as_mut().and_then(|m| m.labels.as_mut()) {
        labels.remove(POD_TEMPLATE_HASH);
    }
    t
}

fn rs_list(sets: &[ReplicaSet]) -> String {
    let list: Vec<String> = sets
        .iter()
        .map(|rs| {
            format!(
                "{} ({}/{} replicas created)",
                rs.metadata.name.as_deref().unwrap_or(""),
                rs.status.as_ref().map_or(0, |s| s.replicas),
                rs.spec.replicas.unwrap_or(1)
            )
        })
        .collect();
    match list.is_empty() {
        true => "<none>".to_owned(),
        false => list.join(", "),
    }
}

fn conditions<'a>(
    out: &mut Out,
    conditions: impl Iterator<Item = (&'a str, &'a str, Option<&'a str>)>,
) {
    let mut conditions = conditions.peekable();
    if conditions.peek().is_none() {
        return;
    }
    out.w(0, "Conditions:\n  Type\tStatus\tReason\n");
    out.w(1, "----\t------\t------\n");
    for (type_, status, reason) in conditions {
        out.w(
            1,
            &format!("{type_} \t{status}\t{}\n", reason.unwrap_or("")),
        );
    }
}

/// kubectl's "Pods Status": the phases of the pods this object controls.
fn pods_status(ctx: &Ctx<'_>, uid: Option<&str>) -> Result<String, String> {
    let pods = ctx.related::<Pod>("pods")?;
    let mut counts = [0usize; 4];
    for pod in pods.iter().filter(|p| {
        p.metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.controller == Some(true) && Some(o.uid.as_str()) == uid)
    }) {
        match pod.status.as_ref().and_then(|s| s.phase.as_deref()) {
            Some("Running") => counts[0] += 1,
            Some("Pending") => counts[1] += 1,
            Some("Succeeded") => counts[2] += 1,
            Some("Failed") => counts[3] += 1,
            _ => {}
        }
    }
    Ok(format!(
        "{} Running / {} Waiting / {} Succeeded / {} Failed",
        counts[0], counts[1], counts[2], counts[3]
    ))
}

pub(super) fn replica_set(ctx: &Ctx<'_>, out: &mut Out, rs: &ReplicaSet) {
    let meta = &rs.metadata;
    let spec = rs.spec.clone();
    name_and_namespace(out, meta);
    out.w(
        0,
        &format!("Selector:\t{}\n", selector_text(Some(&spec.selector))),
    );
    labels(out, "", "Labels", meta.labels.as_ref());
    annotations(out, "Annotations", meta.annotations.as_ref());
    if let Some(by) = controller(meta) {
        out.w(0, &format!("Controlled By:\t{by}\n"));
    }
    out.w(
        0,
        &format!(
            "Replicas:\t{} current / {} desired\n",
            rs.status.as_ref().map_or(0, |s| s.replicas),
            spec.replicas.unwrap_or(1)
        ),
    );
    match pods_status(ctx, meta.uid.as_deref()) {
        Ok(status) => out.w(0, &format!("Pods Status:\t{status}\n")),
        Err(err) => out.w(0, &format!("Pods Status:\terror in fetching pods: {err}\n")),
    }
    pod_template(out, &spec.template.unwrap_or_default());
    conditions(
        out,
        rs.status
            .iter()
            .flat_map(|s| s.conditions.iter().flatten())
            .map(|c| {
                (
                    c.type_.as_deref().unwrap_or(""),
                    c.status.as_deref().unwrap_or(""),
                    c.reason.as_deref(),
                )
            }),
    );
    ctx.events(out);
}

pub(super) fn stateful_set(ctx: &Ctx<'_>, out: &mut Out, sts: &StatefulSet) {
    let meta = &sts.metadata;
    let spec = sts.spec.clone();
    name_and_namespace(out, meta);
    out.w(
        0,
        &format!(
            "CreationTimestamp:\t{}\n",
            rfc1123z(meta.creation_timestamp.as_ref())
        ),
    );
    out.w(
        0,
        &format!("Selector:\t{}\n", selector_text(Some(&spec.selector))),
    );
    labels(out, "", "Labels", meta.labels.as_ref());
    annotations(out, "Annotations", meta.annotations.as_ref());
    out.w(
        0,
        &format!(
            "Replicas:\t{} desired | {} total\n",
            spec.replicas.unwrap_or(1),
            sts.status.as_ref().map_or(0, |s| s.replicas)
        ),
    );
    let strategy = spec.update_strategy.clone().unwrap_or_default();
    out.w(
        0,
        &format!(
            "Update Strategy:\t{}\n",
            strategy.type_.as_deref().unwrap_or("")
        ),
    );
    if let Some(ru) = &strategy.rolling_update
        && let Some(partition) = ru.partition
    {
        out.w(1, &format!("Partition:\t{partition}\n"));
        if let Some(max) = &ru.max_unavailable {
            out.w(
                1,
                &format!("MaxUnavailable:\t{}\n", int_or_string(Some(max))),
            );
        }
    }
    let status = pods_status(ctx, meta.uid.as_deref())
        .unwrap_or_else(|_| "0 Running / 0 Waiting / 0 Succeeded / 0 Failed".to_owned());
    out.w(0, &format!("Pods Status:\t{status}\n"));
    pod_template(out, &spec.template);
    let claims = spec.volume_claim_templates.unwrap_or_default();
    if claims.is_empty() {
        out.w(0, "Volume Claims:\t<none>\n");
    } else {
        out.w(0, "Volume Claims:\n");
        for pvc in &claims {
            let pvc_meta = &pvc.metadata;
            let pvc_spec = pvc.spec.clone().unwrap_or_default();
            out.w(
                1,
                &format!("Name:\t{}\n", pvc_meta.name.as_deref().unwrap_or("")),
            );
            let class = pvc_meta
                .annotations
                .as_ref()
                .and_then(|a| a.get("volume.beta.kubernetes.io/storage-class").cloned())
                .or(pvc_spec.storage_class_name.clone())
                .unwrap_or_default();
            out.w(1, &format!("StorageClass:\t{class}\n"));
            labels(out, "  ", "Labels", pvc_meta.labels.as_ref());
            labels(out, "  ", "Annotations", pvc_meta.annotations.as_ref());
            let capacity = pvc_spec
                .resources
                .as_ref()
                .and_then(|r| r.requests.as_ref())
                .and_then(|r| r.get("storage"))
                .map_or("<default>".to_owned(), |q| {
                    kscope_units::quantity::canonical(&q.0)
                });
            out.w(1, &format!("Capacity:\t{capacity}\n"));
            out.w(
                1,
                &format!(
                    "Access Modes:\t[{}]\n",
                    pvc_spec.access_modes.unwrap_or_default().join(" ")
                ),
            );
        }
    }
    ctx.events(out);
}

pub(super) fn job(ctx: &Ctx<'_>, out: &mut Out, job: &Job) {
    let meta = &job.metadata;
    let spec = job.spec.clone().unwrap_or_default();
    let status = job.status.clone().unwrap_or_default();
    name_and_namespace(out, meta);
    out.w(
        0,
        &format!("Selector:\t{}\n", selector_text(spec.selector.as_ref())),
    );
    labels(out, "", "Labels", meta.labels.as_ref());
    annotations(out, "Annotations", meta.annotations.as_ref());
    if let Some(by) = controller(meta) {
        out.w(0, &format!("Controlled By:\t{by}\n"));
    }
    if let Some(p) = spec.parallelism {
        out.w(0, &format!("Parallelism:\t{p}\n"));
    }
    match spec.completions {
        Some(c) => out.w(0, &format!("Completions:\t{c}\n")),
        None => out.w(0, "Completions:\t<unset>\n"),
    }
    if let Some(mode) = &spec.completion_mode {
        out.w(0, &format!("Completion Mode:\t{mode}\n"));
    }
    if let Some(suspend) = spec.suspend {
        out.w(0, &format!("Suspend:\t{}\n", go_bool(suspend)));
    }
    if let Some(limit) = spec.backoff_limit {
        out.w(0, &format!("Backoff Limit:\t{limit}\n"));
    }
    if let Some(ttl) = spec.ttl_seconds_after_finished {
        out.w(0, &format!("TTL Seconds After Finished:\t{ttl}\n"));
    }
    if let Some(start) = &status.start_time {
        out.w(0, &format!("Start Time:\t{}\n", rfc1123z(Some(start))));
    }
    if let Some(done) = &status.completion_time {
        out.w(0, &format!("Completed At:\t{}\n", rfc1123z(Some(done))));
    }
    if let (Some(start), Some(done)) = (&status.start_time, &status.completion_time) {
        let seconds = done.0.as_second() - start.0.as_second();
        out.w(
            0,
            &format!(
                "Duration:\t{}\n",
                kscope_resources::Timestamp::from_seconds(0)
                    .human_since(kscope_resources::Timestamp::from_seconds(seconds))
            ),
        );
    }
    if let Some(deadline) = spec.active_deadline_seconds {
        out.w(0, &format!("Active Deadline Seconds:\t{deadline}s\n"));
    }
    let (active, succeeded, failed) = (
        status.active.unwrap_or(0),
        status.succeeded.unwrap_or(0),
        status.failed.unwrap_or(0),
    );
    match status.ready {
        None => out.w(
            0,
            &format!("Pods Statuses:\t{active} Active / {succeeded} Succeeded / {failed} Failed\n"),
        ),
        Some(ready) => out.w(
            0,
            &format!(
                "Pods Statuses:\t{active} Active ({ready} Ready) / {succeeded} Succeeded / {failed} Failed\n"
            ),
        ),
    }
    if spec.completion_mode.as_deref() == Some("Indexed") {
        let indexes = status.completed_indexes.as_deref().unwrap_or("");
        out.w(
            0,
            &format!(
                "Completed Indexes:\t{}\n",
                if indexes.is_empty() {
                    "<none>"
                } else {
                    indexes
                }
            ),
        );
    }
    pod_template(out, &spec.template);
    ctx.events(out);
}
