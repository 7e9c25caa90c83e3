//! `kubectl describe node`: conditions, addresses, capacity, system info, the pods on it
//! and what they request against what it can allocate.

use std::collections::BTreeMap;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, Pod};

use super::context::Ctx;
use super::pod::sorted_resources;
use super::printer::{annotations, labels, rfc1123z};
use super::writer::Out;
use kscope_units::quantity::{self, Amount, Format};

const ROLE_PREFIX: &str = "node-role.kubernetes.io/";

pub(super) fn node(ctx: &Ctx<'_>, out: &mut Out, node: &Node) {
    let meta = &node.metadata;
    let spec = node.spec.clone().unwrap_or_default();
    let status = node.status.clone().unwrap_or_default();
    let name = meta.name.as_deref().unwrap_or("");
    out.w(0, &format!("Name:\t{name}\n"));
    let mut roles: Vec<&str> = meta
        .labels
        .iter()
        .flatten()
        .filter_map(|(k, v)| match k.strip_prefix(ROLE_PREFIX) {
            Some(role) if !role.is_empty() => Some(role),
            _ if k == "kubernetes.io/role" && !v.is_empty() => Some(v.as_str()),
            _ => None,
        })
        .collect();
    roles.sort_unstable();
    roles.dedup();
    out.w(
        0,
        &format!(
            "Roles:\t{}\n",
            if roles.is_empty() {
                "<none>".to_owned()
            } else {
                roles.join(",")
            }
        ),
    );
    labels(out, "", "Labels", meta.labels.as_ref());
    annotations(out, "Annotations", meta.annotations.as_ref());
    out.w(
        0,
        &format!(
            "CreationTimestamp:\t{}\n",
            rfc1123z(meta.creation_timestamp.as_ref())
        ),
    );
    let mut taints = spec.taints.clone().unwrap_or_default();
    out.w(0, "Taints:\t");
    if taints.is_empty() {
        out.w(0, "<none>\n");
    }
    taints.sort_by(|a, b| (&a.effect, &a.key).cmp(&(&b.effect, &b.key)));
    for (i, t) in taints.iter().enumerate() {
        if i != 0 {
            out.w(0, "\t");
        }
        match t.value.as_deref().filter(|v| !v.is_empty()) {
            Some(value) => out.w(0, &format!("{}={value}:{}\n", t.key, t.effect)),
            None => out.w(0, &format!("{}:{}\n", t.key, t.effect)),
        }
    }
    out.w(
        0,
        &format!(
            "Unschedulable:\t{}\n",
            super::printer::go_bool(spec.unschedulable.unwrap_or(false))
        ),
    );
    match ctx.related::<Lease>("leases") {
        Ok(leases) => {
            let lease = leases.into_iter().next().and_then(|l| l.spec);
            out.w(0, "Lease:\n");
            let holder = lease.as_ref().and_then(|l| l.holder_identity.clone());
            out.w(
                1,
                &format!(
                    "HolderIdentity:\t{}\n",
                    holder.as_deref().unwrap_or("<unset>")
                ),
            );
            let time = |t: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime>| {
                t.map_or("<unset>".to_owned(), |t| {
                    t.0.strftime("%a, %d %b %Y %H:%M:%S +0000").to_string()
                })
            };
            out.w(
                1,
                &format!(
                    "AcquireTime:\t{}\n",
                    time(lease.as_ref().and_then(|l| l.acquire_time.as_ref()))
                ),
            );
            out.w(
                1,
                &format!(
                    "RenewTime:\t{}\n",
                    time(lease.as_ref().and_then(|l| l.renew_time.as_ref()))
                ),
            );
        }
        Err(err) => out.w(0, &format!("Lease:\tFailed to get lease: {err}\n")),
    }
    let conditions = status.conditions.clone().unwrap_or_default();
    if !conditions.is_empty() {
        out.w(
            0,
            "Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n",
        );
        out.w(
            1,
            "----\t------\t-----------------\t------------------\t------\t-------\n",
        );
        for c in &conditions {
            out.w(
                1,
                &format!(
                    "{} \t{} \t{} \t{} \t{} \t{}\n",
                    c.type_,
                    c.status,
                    rfc1123z(c.last_heartbeat_time.as_ref()),
                    rfc1123z(c.last_transition_time.as_ref()),
                    c.reason.as_deref().unwrap_or(""),
                    c.message.as_deref().unwrap_or("")
                ),
            );
        }
    }
    out.w(0, "Addresses:\n");
    for a in status.addresses.iter().flatten() {
        out.w(1, &format!("{}:\t{}\n", a.type_, a.address));
    }
    for (title, list) in [
        ("Capacity", &status.capacity),
        ("Allocatable", &status.allocatable),
    ] {
        if let Some(list) = list.as_ref().filter(|l| !l.is_empty()) {
            out.w(0, &format!("{title}:\n"));
            for (name, q) in sorted_resources(list) {
                out.w(0, &format!("  {name}:\t{}\n", quantity::canonical(&q.0)));
            }
        }
    }
    let info = status.node_info.clone().unwrap_or_default();
    out.w(0, "System Info:\n");
    for (label, value) in [
        ("Machine ID", &info.machine_id),
        ("System UUID", &info.system_uuid),
        ("Boot ID", &info.boot_id),
        ("Kernel Version", &info.kernel_version),
        ("OS Image", &info.os_image),
        ("Operating System", &info.operating_system),
        ("Architecture", &info.architecture),
        ("Container Runtime Version", &info.container_runtime_version),
        ("Kubelet Version", &info.kubelet_version),
        ("Kube-Proxy Version", &info.kube_proxy_version),
    ] {
        out.w(0, &format!("  {label}:\t{value}\n"));
    }
    if let Some(cidr) = spec.pod_cidr.as_deref().filter(|c| !c.is_empty()) {
        out.w(0, &format!("PodCIDR:\t{cidr}\n"));
    }
    if let Some(cidrs) = spec.pod_cidrs.as_ref().filter(|c| !c.is_empty()) {
        out.w(0, &format!("PodCIDRs:\t{}\n", cidrs.join(",")));
    }
    if let Some(id) = spec.provider_id.as_deref().filter(|c| !c.is_empty()) {
        out.w(0, &format!("ProviderID:\t{id}\n"));
    }
    match ctx.related::<Pod>("pods") {
        Ok(pods) => node_resources(ctx, out, node, &pods),
        Err(_) => out.w(0, "Pods:\tnot authorized\n"),
    }
    ctx.events(out);
}

/// Requests and limits of every resource a pod asks for: its containers' sums, or its
/// largest init container's when that is more (init containers run one at a time), plus
/// the pod's overhead.
fn pod_requests_and_limits(pod: &Pod) -> [BTreeMap<String, (Amount, Format)>; 2] {
    let mut totals = [BTreeMap::new(), BTreeMap::new()];
    let Some(spec) = &pod.spec else {
        return totals;
    };
    let lists = |c: &k8s_openapi::api::core::v1::Container| {
        let r = c.resources.clone().unwrap_or_default();
        [r.requests.unwrap_or_default(), r.limits.unwrap_or_default()]
    };
    let add = |into: &mut BTreeMap<String, (Amount, Format)>, name: &str, text: &str| {
        if let Some((amount, format)) = quantity::parse_with_format(text) {
            into.entry(name.to_owned())
                .and_modify(|(sum, _): &mut (Amount, Format)| *sum = sum.saturating_add(amount))
                .or_insert((amount, format));
        }
    };
    for c in &spec.containers {
        for (total, list) in totals.iter_mut().zip(lists(c)) {
            for (name, q) in &list {
                add(total, name, &q.0);
            }
        }
    }
    for c in spec.init_containers.iter().flatten() {
        for (total, list) in totals.iter_mut().zip(lists(c)) {
            for (name, q) in &list {
                if let Some((amount, format)) = quantity::parse_with_format(&q.0) {
                    let entry = total.entry(name.clone()).or_insert((Amount::ZERO, format));
                    if amount > entry.0 {
                        entry.0 = amount;
                    }
                }
            }
        }
    }
    for (name, q) in spec.overhead.iter().flatten() {
        for total in totals.iter_mut() {
            if total.contains_key(name) {
                add(total, name, &q.0);
            }
        }
    }
    totals
}

fn node_resources(ctx: &Ctx<'_>, out: &mut Out, node: &Node, pods: &[Pod]) {
    out.w(
        0,
        &format!("Non-terminated Pods:\t({} in total)\n", pods.len()),
    );
    out.w(
        1,
        "Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n",
    );
    out.w(
        1,
        "---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n",
    );
    let status = node.status.clone().unwrap_or_default();
    let allocatable = status
        .allocatable
        .filter(|a| !a.is_empty())
        .or(status.capacity)
        .unwrap_or_default();
    let alloc = |name: &str| {
        allocatable
            .get(name)
            .and_then(|q| quantity::parse(&q.0))
            .unwrap_or(Amount::ZERO)
    };
    let (cpu, memory, ephemeral) = (alloc("cpu"), alloc("memory"), alloc("ephemeral-storage"));
    let zero = (Amount::ZERO, Format::DecimalSi);
    let text = |entry: Option<&(Amount, Format)>| {
        let (amount, format) = entry.copied().unwrap_or(zero);
        amount.canonical(format)
    };
    // Go converts to float and truncates: `int64(float64(a) / float64(b) * 100)`.
    let percent = |entry: Option<&(Amount, Format)>, of: Amount, milli: bool| -> i64 {
        let a = entry.map_or(Amount::ZERO, |e| e.0);
        let (a, b) = match milli {
            true => (a.milli(), of.milli()),
            false => (a.value(), of.value()),
        };
        match b {
            0 => 0,
            b => (a as f64 / b as f64 * 100.0) as i64,
        }
    };
    let mut requests_total: BTreeMap<String, (Amount, Format)> = BTreeMap::new();
    let mut limits_total: BTreeMap<String, (Amount, Format)> = BTreeMap::new();
    for pod in pods {
        let [requests, limits] = pod_requests_and_limits(pod);
        out.w(
            1,
            &format!(
                "{}\t{}\t\t{} ({}%)\t{} ({}%)\t{} ({}%)\t{} ({}%)\t{}\n",
                pod.metadata.namespace.as_deref().unwrap_or(""),
                pod.metadata.name.as_deref().unwrap_or(""),
                text(requests.get("cpu")),
                percent(requests.get("cpu"), cpu, true),
                text(limits.get("cpu")),
                percent(limits.get("cpu"), cpu, true),
                text(requests.get("memory")),
                percent(requests.get("memory"), memory, false),
                text(limits.get("memory")),
                percent(limits.get("memory"), memory, false),
                ctx.since(pod.metadata.creation_timestamp.as_ref())
            ),
        );
        for (total, list) in [(&mut requests_total, requests), (&mut limits_total, limits)] {
            for (name, (amount, format)) in list {
                total
                    .entry(name)
                    .and_modify(|(sum, _)| *sum = sum.saturating_add(amount))
                    .or_insert((amount, format));
            }
        }
    }
    out.w(
        0,
        "Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n",
    );
    out.w(1, "Resource\tRequests\tLimits\n");
    out.w(1, "--------\t--------\t------\n");
    for (name, of, milli) in [
        ("cpu", cpu, true),
        ("memory", memory, false),
        ("ephemeral-storage", ephemeral, false),
    ] {
        out.w(
            1,
            &format!(
                "{name}\t{} ({}%)\t{} ({}%)\n",
                text(requests_total.get(name)),
                percent(requests_total.get(name), of, milli),
                text(limits_total.get(name)),
                percent(limits_total.get(name), of, milli)
            ),
        );
    }
    let mut huge: Vec<&String> = Vec::new();
    let mut extended: Vec<&String> = Vec::new();
    for name in allocatable.keys() {
        if name.starts_with("hugepages-") {
            huge.push(name);
        } else if name.contains('/') && !name.starts_with("requests.") && name != "pods" {
            extended.push(name);
        }
    }
    for name in huge {
        let of = alloc(name);
        out.w(
            1,
            &format!(
                "{name}\t{} ({}%)\t{} ({}%)\n",
                text(requests_total.get(name)),
                percent(requests_total.get(name), of, false),
                text(limits_total.get(name)),
                percent(limits_total.get(name), of, false)
            ),
        );
    }
    for name in extended {
        out.w(
            1,
            &format!(
                "{name}\t{}\t{}\n",
                text(requests_total.get(name)),
                text(limits_total.get(name))
            ),
        );
    }
}
