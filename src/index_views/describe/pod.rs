//! `kubectl describe pod`, and the pod template that workloads describe.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Container, ContainerState, ContainerStatus, Pod, PodSpec, PodTemplateSpec, Probe,
    ResourceRequirements, Toleration, TopologySpreadConstraint, Volume,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::context::Ctx;
use super::printer::{
    annotations, controller, format_selector, go_bool, go_bool_ptr, labels, name_and_namespace,
    or_none, rfc1123z, title_bool,
};
use super::writer::Out;
use kscope_units::quantity::{self, Amount};

pub(super) fn pod(ctx: &Ctx<'_>, out: &mut Out, pod: &Pod) {
    let meta = &pod.metadata;
    let spec = pod.spec.clone().unwrap_or_default();
    let status = pod.status.clone().unwrap_or_default();
    name_and_namespace(out, meta);
    if let Some(priority) = spec.priority {
        out.w(0, &format!("Priority:\t{priority}\n"));
    }
    if let Some(class) = spec
        .priority_class_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        out.w(0, &format!("Priority Class Name:\t{class}\n"));
    }
    if let Some(class) = spec.runtime_class_name.as_deref().filter(|s| !s.is_empty()) {
        out.w(0, &format!("Runtime Class Name:\t{class}\n"));
    }
    if let Some(sa) = spec
        .service_account_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        out.w(0, &format!("Service Account:\t{sa}\n"));
    }
    match spec.node_name.as_deref().filter(|s| !s.is_empty()) {
        None => out.w(0, "Node:\t<none>\n"),
        Some(node) => out.w(
            0,
            &format!(
                "Node:\t{node}/{}\n",
                status.host_ip.as_deref().unwrap_or("")
            ),
        ),
    }
    if let Some(start) = &status.start_time {
        out.w(0, &format!("Start Time:\t{}\n", rfc1123z(Some(start))));
    }
    labels(out, "", "Labels", meta.labels.as_ref());
    annotations(out, "Annotations", meta.annotations.as_ref());
    let phase = status.phase.as_deref().unwrap_or("");
    match &meta.deletion_timestamp {
        Some(deleted) if phase != "Failed" && phase != "Succeeded" => {
            out.w(
                0,
                &format!(
                    "Status:\tTerminating (lasts {})\n",
                    ctx.since(Some(deleted))
                ),
            );
            out.w(
                0,
                &format!(
                    "Termination Grace Period:\t{}s\n",
                    meta.deletion_grace_period_seconds.unwrap_or(0)
                ),
            );
        }
        _ => out.w(0, &format!("Status:\t{phase}\n")),
    }
    if let Some(reason) = status.reason.as_deref().filter(|s| !s.is_empty()) {
        out.w(0, &format!("Reason:\t{reason}\n"));
    }
    if let Some(message) = status.message.as_deref().filter(|s| !s.is_empty()) {
        out.w(0, &format!("Message:\t{message}\n"));
    }
    if let Some(profile) = spec
        .security_context
        .as_ref()
        .and_then(|s| s.seccomp_profile.as_ref())
    {
        out.w(0, &format!("SeccompProfile:\t{}\n", profile.type_));
        if profile.type_ == "Localhost" {
            out.w(
                0,
                &format!(
                    "LocalhostProfile:\t{}\n",
                    profile.localhost_profile.as_deref().unwrap_or("")
                ),
            );
        }
    }
    out.w(
        0,
        &format!("IP:\t{}\n", status.pod_ip.as_deref().unwrap_or("")),
    );
    match status.pod_ips.as_deref().unwrap_or_default() {
        [] => out.w(0, "IPs:\t<none>\n"),
        ips => {
            out.w(0, "IPs:\n");
            for ip in ips {
                out.w(1, &format!("IP:\t{}\n", ip.ip));
            }
        }
    }
    if let Some(by) = controller(meta) {
        out.w(0, &format!("Controlled By:\t{by}\n"));
    }
    if let Some(node) = status
        .nominated_node_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        out.w(0, &format!("NominatedNodeName:\t{node}\n"));
    }
    if let Some(resources) = &spec.resources {
        out.w(0, "Resources:\n");
        describe_resources(out, resources, 1);
    }
    let env = EnvResolver { pod };
    if let Some(init) = spec.init_containers.as_deref().filter(|c| !c.is_empty()) {
        let statuses = status
            .init_container_statuses
            .as_deref()
            .unwrap_or_default();
        containers(out, "Init Containers", init, Some(statuses), Some(&env), "");
    }
    containers(
        out,
        "Containers",
        &spec.containers,
        Some(status.container_statuses.as_deref().unwrap_or_default()),
        Some(&env),
        "",
    );
    if let Some(ephemeral) = spec
        .ephemeral_containers
        .as_deref()
        .filter(|c| !c.is_empty())
    {
        let as_containers: Vec<Container> = ephemeral
            .iter()
            .map(|e| Container {
                name: e.name.clone(),
                image: e.image.clone(),
                command: e.command.clone(),
                args: e.args.clone(),
                env: e.env.clone(),
                env_from: e.env_from.clone(),
                ports: e.ports.clone(),
                resources: e.resources.clone(),
                volume_mounts: e.volume_mounts.clone(),
                volume_devices: e.volume_devices.clone(),
                liveness_probe: e.liveness_probe.clone(),
                readiness_probe: e.readiness_probe.clone(),
                startup_probe: e.startup_probe.clone(),
                security_context: e.security_context.clone(),
                ..Container::default()
            })
            .collect();
        let statuses = status
            .ephemeral_container_statuses
            .as_deref()
            .unwrap_or_default();
        containers(
            out,
            "Ephemeral Containers",
            &as_containers,
            Some(statuses),
            Some(&env),
            "",
        );
    }
    let conditions = status.conditions.as_deref().unwrap_or_default();
    if let Some(gates) = spec.readiness_gates.as_deref().filter(|g| !g.is_empty()) {
        out.w(0, "Readiness Gates:\n  Type\tStatus\n");
        for gate in gates {
            let status = conditions
                .iter()
                .find(|c| c.type_ == gate.condition_type)
                .map_or("<none>", |c| c.status.as_str());
            out.w(1, &format!("{} \t{status} \n", gate.condition_type));
        }
    }
    if !conditions.is_empty() {
        out.w(0, "Conditions:\n  Type\tStatus\n");
        for c in conditions {
            out.w(1, &format!("{} \t{} \n", c.type_, c.status));
        }
    }
    volumes(out, spec.volumes.as_deref().unwrap_or_default(), "");
    let qos = status
        .qos_class
        .clone()
        .filter(|q| !q.is_empty())
        .unwrap_or_else(|| qos_class(&spec).to_owned());
    out.w(0, &format!("QoS Class:\t{qos}\n"));
    labels(out, "", "Node-Selectors", spec.node_selector.as_ref());
    tolerations(
        out,
        "",
        "Tolerations",
        spec.tolerations.as_deref().unwrap_or_default(),
    );
    topology_spread(
        out,
        spec.topology_spread_constraints
            .as_deref()
            .unwrap_or_default(),
        "",
    );
    ctx.events(out);
}

/// The `Pod Template:` section of Deployments, ReplicaSets, StatefulSets and Jobs.
pub(super) fn pod_template(out: &mut Out, template: &PodTemplateSpec) {
    out.w(0, "Pod Template:\n");
    let meta = template.metadata.clone().unwrap_or_default();
    labels(out, "  ", "Labels", meta.labels.as_ref());
    if meta.annotations.as_ref().is_some_and(|a| !a.is_empty()) {
        annotations(out, "  Annotations", meta.annotations.as_ref());
    }
    let spec = template.spec.clone().unwrap_or_default();
    if let Some(sa) = spec
        .service_account_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        out.w(1, &format!("Service Account:\t{sa}\n"));
    }
    if let Some(init) = spec.init_containers.as_deref().filter(|c| !c.is_empty()) {
        containers(out, "Init Containers", init, None, None, "  ");
    }
    containers(out, "Containers", &spec.containers, None, None, "  ");
    volumes(out, spec.volumes.as_deref().unwrap_or_default(), "  ");
    topology_spread(
        out,
        spec.topology_spread_constraints
            .as_deref()
            .unwrap_or_default(),
        "  ",
    );
    if let Some(class) = spec
        .priority_class_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        out.w(1, &format!("Priority Class Name:\t{class}\n"));
    }
    labels(out, "  ", "Node-Selectors", spec.node_selector.as_ref());
    tolerations(
        out,
        "  ",
        "Tolerations",
        spec.tolerations.as_deref().unwrap_or_default(),
    );
}

/// Resolves `valueFrom.fieldRef` environment variables against the pod, as kubectl does.
struct EnvResolver<'a> {
    pod: &'a Pod,
}

impl EnvResolver<'_> {
    fn field(&self, path: &str) -> String {
        let meta = &self.pod.metadata;
        let spec = self.pod.spec.as_ref();
        let status = self.pod.status.as_ref();
        let keyed = |prefix: &str, map: Option<&BTreeMap<String, String>>| {
            let key = path.strip_prefix(prefix)?.strip_suffix("']")?;
            map.and_then(|m| m.get(key)).cloned()
        };
        let value = match path {
            "metadata.name" => meta.name.clone(),
            "metadata.namespace" => meta.namespace.clone(),
            "metadata.uid" => meta.uid.clone(),
            "spec.nodeName" => spec.and_then(|s| s.node_name.clone()),
            "spec.serviceAccountName" => spec.and_then(|s| s.service_account_name.clone()),
            "status.hostIP" => status.and_then(|s| s.host_ip.clone()),
            "status.podIP" => status.and_then(|s| s.pod_ip.clone()),
            "status.podIPs" => status.and_then(|s| {
                s.pod_ips.as_ref().map(|ips| {
                    ips.iter()
                        .map(|ip| ip.ip.clone())
                        .collect::<Vec<_>>()
                        .join(",")
                })
            }),
            "status.hostIPs" => status.and_then(|s| {
                s.host_ips.as_ref().map(|ips| {
                    ips.iter()
                        .map(|ip| ip.ip.clone())
                        .collect::<Vec<_>>()
                        .join(",")
                })
            }),
            _ => keyed("metadata.labels['", meta.labels.as_ref())
                .or_else(|| keyed("metadata.annotations['", meta.annotations.as_ref())),
        };
        value.unwrap_or_default()
    }
}

fn containers(
    out: &mut Out,
    label: &str,
    containers: &[Container],
    statuses: Option<&[ContainerStatus]>,
    env: Option<&EnvResolver<'_>>,
    space: &str,
) {
    let none = if containers.is_empty() { " <none>" } else { "" };
    out.w(0, &format!("{space}{label}:{none}\n"));
    let name_indent = if space.is_empty() { "" } else { " " };
    for container in containers {
        let status = statuses.and_then(|s| s.iter().find(|s| s.name == container.name));
        out.w(1, &format!("{name_indent}{}:\n", container.name));
        if let Some(status) = status {
            out.w(
                2,
                &format!(
                    "Container ID:\t{}\n",
                    status.container_id.as_deref().unwrap_or("")
                ),
            );
        }
        out.w(
            2,
            &format!("Image:\t{}\n", container.image.as_deref().unwrap_or("")),
        );
        if let Some(status) = status {
            out.w(2, &format!("Image ID:\t{}\n", status.image_id));
        }
        let ports = container.ports.as_deref().unwrap_or_default();
        // kubectl 1.32's form (1.34 adds the port's name).
        let port = |number: fn(&k8s_openapi::api::core::v1::ContainerPort) -> i32| {
            ports
                .iter()
                .map(|p| format!("{}/{}", number(p), p.protocol.as_deref().unwrap_or("TCP")))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let container_ports = port(|p| p.container_port);
        match container_ports.contains(',') {
            true => out.w(2, &format!("Ports:\t{container_ports}\n")),
            false => out.w(2, &format!("Port:\t{}\n", or_none(&container_ports))),
        }
        let host_ports = port(|p| p.host_port.unwrap_or(0));
        match host_ports.contains(',') {
            true => out.w(2, &format!("Host Ports:\t{host_ports}\n")),
            false => out.w(2, &format!("Host Port:\t{}\n", or_none(&host_ports))),
        }
        if let Some(profile) = container
            .security_context
            .as_ref()
            .and_then(|s| s.seccomp_profile.as_ref())
        {
            out.w(2, &format!("SeccompProfile:\t{}\n", profile.type_));
            if profile.type_ == "Localhost" {
                out.w(
                    3,
                    &format!(
                        "LocalhostProfile:\t{}\n",
                        profile.localhost_profile.as_deref().unwrap_or("")
                    ),
                );
            }
        }
        for (title, lines) in [("Command", &container.command), ("Args", &container.args)] {
            if let Some(lines) = lines.as_deref().filter(|l| !l.is_empty()) {
                out.w(2, &format!("{title}:\n"));
                for line in lines.iter().flat_map(|l| l.split('\n')) {
                    out.w(3, &format!("{line}\n"));
                }
            }
        }
        if let Some(status) = status {
            container_state(out, "State", status.state.as_ref());
            if let Some(last) = &status.last_state
                && last.terminated.is_some()
            {
                container_state(out, "Last State", Some(last));
            }
            out.w(2, &format!("Ready:\t{}\n", title_bool(status.ready)));
            out.w(2, &format!("Restart Count:\t{}\n", status.restart_count));
        }
        if let Some(resources) = &container.resources {
            describe_resources(out, resources, 2);
        }
        for (title, probe) in [
            ("Liveness", &container.liveness_probe),
            ("Readiness", &container.readiness_probe),
            ("Startup", &container.startup_probe),
        ] {
            if let Some(probe) = probe {
                out.w(2, &format!("{title}:\t{}\n", describe_probe(probe)));
            }
        }
        if let Some(env_from) = container.env_from.as_deref().filter(|e| !e.is_empty()) {
            out.w(2, "Environment Variables from:\n");
            for e in env_from {
                let (from, name, optional) = match (&e.config_map_ref, &e.secret_ref) {
                    (Some(cm), _) => ("ConfigMap", cm.name.as_str(), cm.optional),
                    (None, Some(s)) => ("Secret", s.name.as_str(), s.optional),
                    (None, None) => ("", "", None),
                };
                let optional = go_bool(optional.unwrap_or(false));
                match e.prefix.as_deref().filter(|p| !p.is_empty()) {
                    None => out.w(3, &format!("{name}\t{from}\tOptional: {optional}\n")),
                    Some(prefix) => out.w(
                        3,
                        &format!("{name}\t{from} with prefix '{prefix}'\tOptional: {optional}\n"),
                    ),
                }
            }
        }
        environment(out, container, env);
        let mut mounts = container.volume_mounts.clone().unwrap_or_default();
        let none = if mounts.is_empty() { "\t<none>" } else { "" };
        out.w(2, &format!("Mounts:{none}\n"));
        mounts.sort_by(|a, b| a.mount_path.cmp(&b.mount_path));
        for m in &mounts {
            let mut flags = vec![
                if m.read_only == Some(true) {
                    "ro"
                } else {
                    "rw"
                }
                .to_owned(),
            ];
            if let Some(sub) = m.sub_path.as_deref().filter(|s| !s.is_empty()) {
                flags.push(format!("path={sub:?}"));
            }
            out.w(
                3,
                &format!("{} from {} ({})\n", m.mount_path, m.name, flags.join(",")),
            );
        }
        if let Some(devices) = container
            .volume_devices
            .as_deref()
            .filter(|d| !d.is_empty())
        {
            let mut devices = devices.to_vec();
            devices.sort_by(|a, b| a.device_path.cmp(&b.device_path));
            out.w(2, &format!("Devices:{none}\n"));
            for d in &devices {
                out.w(3, &format!("{} from {}\n", d.device_path, d.name));
            }
        }
    }
}

fn environment(out: &mut Out, container: &Container, env: Option<&EnvResolver<'_>>) {
    let vars = container.env.as_deref().unwrap_or_default();
    let none = if vars.is_empty() { "\t<none>" } else { "" };
    out.w(2, &format!("Environment:{none}\n"));
    for e in vars {
        let Some(from) = &e.value_from else {
            for (i, line) in e.value.as_deref().unwrap_or("").split('\n').enumerate() {
                match i {
                    0 => out.w(3, &format!("{}:\t{line}\n", e.name)),
                    _ => out.w(3, &format!("\t{line}\n")),
                }
            }
            continue;
        };
        if let Some(field) = &from.field_ref {
            let value = env.map(|r| r.field(&field.field_path)).unwrap_or_default();
            let version = field.api_version.as_deref().unwrap_or("v1");
            out.w(
                3,
                &format!("{}:\t{value} ({version}:{})\n", e.name, field.field_path),
            );
        } else if let Some(field) = &from.resource_field_ref {
            let mut value =
                resource_field_value(container, &field.resource, field.divisor.as_ref());
            if value == "0" && matches!(field.resource.as_str(), "limits.cpu" | "limits.memory") {
                value = "node allocatable".to_owned();
            }
            out.w(3, &format!("{}:\t{value} ({})\n", e.name, field.resource));
        } else if let Some(key) = &from.secret_key_ref {
            out.w(
                3,
                &format!(
                    "{}:\t<set to the key '{}' in secret '{}'>\tOptional: {}\n",
                    e.name,
                    key.key,
                    key.name,
                    go_bool(key.optional.unwrap_or(false))
                ),
            );
        } else if let Some(key) = &from.config_map_key_ref {
            out.w(
                3,
                &format!(
                    "{}:\t<set to the key '{}' of config map '{}'>\tOptional: {}\n",
                    e.name,
                    key.key,
                    key.name,
                    go_bool(key.optional.unwrap_or(false))
                ),
            );
        }
    }
}

/// A container's resource, as the downward API would expose it: rounded up to the divisor
/// (1 core, 1 byte by default).
fn resource_field_value(
    container: &Container,
    resource: &str,
    divisor: Option<&Quantity>,
) -> String {
    let Some((section, name)) = resource.split_once('.') else {
        return String::new();
    };
    let resources = container.resources.as_ref();
    let list = match section {
        "limits" => resources.and_then(|r| r.limits.as_ref()),
        "requests" => resources.and_then(|r| r.requests.as_ref()),
        _ => None,
    };
    let amount = list
        .and_then(|l| l.get(name))
        .and_then(|q| quantity::parse(&q.0))
        .unwrap_or(Amount::ZERO);
    let divisor = divisor
        .and_then(|q| quantity::parse(&q.0))
        .filter(|d| !d.is_zero())
        .unwrap_or(Amount::ONE);
    amount.div_ceil(divisor).to_string()
}

fn container_state(out: &mut Out, name: &str, state: Option<&ContainerState>) {
    let state = state.cloned().unwrap_or_default();
    if let Some(running) = &state.running {
        out.w(2, &format!("{name}:\tRunning\n"));
        out.w(
            3,
            &format!("Started:\t{}\n", rfc1123z(running.started_at.as_ref())),
        );
    } else if let Some(waiting) = &state.waiting {
        out.w(2, &format!("{name}:\tWaiting\n"));
        if let Some(reason) = waiting.reason.as_deref().filter(|r| !r.is_empty()) {
            out.w(3, &format!("Reason:\t{reason}\n"));
        }
    } else if let Some(t) = &state.terminated {
        out.w(2, &format!("{name}:\tTerminated\n"));
        if let Some(reason) = t.reason.as_deref().filter(|r| !r.is_empty()) {
            out.w(3, &format!("Reason:\t{reason}\n"));
        }
        if let Some(message) = t.message.as_deref().filter(|r| !r.is_empty()) {
            out.w(3, &format!("Message:\t{message}\n"));
        }
        out.w(3, &format!("Exit Code:\t{}\n", t.exit_code));
        if let Some(signal) = t.signal.filter(|s| *s > 0) {
            out.w(3, &format!("Signal:\t{signal}\n"));
        }
        out.w(
            3,
            &format!("Started:\t{}\n", rfc1123z(t.started_at.as_ref())),
        );
        out.w(
            3,
            &format!("Finished:\t{}\n", rfc1123z(t.finished_at.as_ref())),
        );
    } else {
        out.w(2, &format!("{name}:\tWaiting\n"));
    }
}

fn describe_resources(out: &mut Out, resources: &ResourceRequirements, level: usize) {
    for (title, list) in [
        ("Limits", &resources.limits),
        ("Requests", &resources.requests),
    ] {
        let Some(list) = list.as_ref().filter(|l| !l.is_empty()) else {
            continue;
        };
        out.w(level, &format!("{title}:\n"));
        for (name, q) in sorted_resources(list) {
            out.w(
                level + 1,
                &format!("{name}:\t{}\n", quantity::canonical(&q.0)),
            );
        }
    }
}

/// Resource names in kubectl's order: alphabetical (`SortableResourceNames`).
pub(super) fn sorted_resources(list: &BTreeMap<String, Quantity>) -> Vec<(&String, &Quantity)> {
    list.iter().collect()
}

fn port_text(port: &IntOrString) -> String {
    match port {
        IntOrString::Int(n) => n.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

fn describe_probe(probe: &Probe) -> String {
    let attrs = format!(
        "delay={}s timeout={}s period={}s #success={} #failure={}",
        probe.initial_delay_seconds.unwrap_or(0),
        probe.timeout_seconds.unwrap_or(1),
        probe.period_seconds.unwrap_or(10),
        probe.success_threshold.unwrap_or(1),
        probe.failure_threshold.unwrap_or(3)
    );
    if let Some(exec) = &probe.exec {
        return format!(
            "exec [{}] {attrs}",
            exec.command.as_deref().unwrap_or_default().join(" ")
        );
    }
    if let Some(http) = &probe.http_get {
        let scheme = http
            .scheme
            .as_deref()
            .unwrap_or("HTTP")
            .to_ascii_lowercase();
        let host = http.host.as_deref().unwrap_or("");
        let port = port_text(&http.port);
        let host = match host.contains(':') {
            true => format!("[{host}]:{port}"),
            false => format!("{host}:{port}"),
        };
        let path = http.path.as_deref().unwrap_or("");
        return format!("http-get {scheme}://{host}{path} {attrs}");
    }
    if let Some(tcp) = &probe.tcp_socket {
        return format!(
            "tcp-socket {}:{} {attrs}",
            tcp.host.as_deref().unwrap_or(""),
            port_text(&tcp.port)
        );
    }
    if let Some(grpc) = &probe.grpc {
        return format!(
            "grpc <pod>:{} {} {attrs}",
            grpc.port,
            grpc.service.as_deref().unwrap_or("")
        );
    }
    format!("unknown {attrs}")
}

fn volumes(out: &mut Out, volumes: &[Volume], space: &str) {
    if volumes.is_empty() {
        out.w(0, &format!("{space}Volumes:\t<none>\n"));
        return;
    }
    out.w(0, &format!("{space}Volumes:\n"));
    let name_indent = if space.is_empty() { "" } else { " " };
    for v in volumes {
        out.w(1, &format!("{name_indent}{}:\n", v.name));
        if let Some(host) = &v.host_path {
            out.w(
                2,
                &format!(
                    "Type:\tHostPath (bare host directory volume)\n    Path:\t{}\n    HostPathType:\t{}\n",
                    host.path,
                    host.type_.as_deref().unwrap_or("<none>")
                ),
            );
        } else if let Some(dir) = &v.empty_dir {
            let size = dir
                .size_limit
                .as_ref()
                .filter(|q| quantity::parse(&q.0).is_some_and(|a| !a.is_zero()))
                .map_or("<unset>".to_owned(), |q| quantity::canonical(&q.0));
            out.w(
                2,
                &format!(
                    "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n    Medium:\t{}\n    SizeLimit:\t{size}\n",
                    dir.medium.as_deref().unwrap_or("")
                ),
            );
        } else if let Some(secret) = &v.secret {
            out.w(
                2,
                &format!(
                    "Type:\tSecret (a volume populated by a Secret)\n    SecretName:\t{}\n    Optional:\t{}\n",
                    secret.secret_name.as_deref().unwrap_or(""),
                    go_bool(secret.optional.unwrap_or(false))
                ),
            );
        } else if let Some(cm) = &v.config_map {
            out.w(
                2,
                &format!(
                    "Type:\tConfigMap (a volume populated by a ConfigMap)\n    Name:\t{}\n    Optional:\t{}\n",
                    cm.name,
                    go_bool(cm.optional.unwrap_or(false))
                ),
            );
        } else if let Some(claim) = &v.persistent_volume_claim {
            out.w(
                2,
                &format!(
                    "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n    ClaimName:\t{}\n    ReadOnly:\t{}\n",
                    claim.claim_name,
                    go_bool(claim.read_only.unwrap_or(false))
                ),
            );
        } else if let Some(projected) = &v.projected {
            out.w(
                2,
                "Type:\tProjected (a volume that contains injected data from multiple sources)\n",
            );
            for source in projected.sources.as_deref().unwrap_or_default() {
                if let Some(secret) = &source.secret {
                    out.w(
                        2,
                        &format!(
                            "SecretName:\t{}\n    SecretOptionalName:\t{}\n",
                            secret.name,
                            go_bool_ptr(secret.optional)
                        ),
                    );
                } else if source.downward_api.is_some() {
                    out.w(2, "DownwardAPI:\ttrue\n");
                } else if let Some(cm) = &source.config_map {
                    out.w(
                        2,
                        &format!(
                            "ConfigMapName:\t{}\n    ConfigMapOptional:\t{}\n",
                            cm.name,
                            go_bool_ptr(cm.optional)
                        ),
                    );
                } else if let Some(token) = &source.service_account_token {
                    out.w(
                        2,
                        &format!(
                            "TokenExpirationSeconds:\t{}\n",
                            token.expiration_seconds.unwrap_or(3600)
                        ),
                    );
                }
            }
        } else if let Some(downward) = &v.downward_api {
            out.w(
                2,
                "Type:\tDownwardAPI (a volume populated by information about the pod)\n    Items:\n",
            );
            for item in downward.items.as_deref().unwrap_or_default() {
                if let Some(field) = &item.field_ref {
                    out.w(3, &format!("{} -> {}\n", field.field_path, item.path));
                }
                if let Some(field) = &item.resource_field_ref {
                    out.w(3, &format!("{} -> {}\n", field.resource, item.path));
                }
            }
        } else {
            out.w(1, "<unknown>\n");
        }
    }
}

fn tolerations(out: &mut Out, indent: &str, title: &str, tolerations: &[Toleration]) {
    out.w(0, &format!("{indent}{title}:\t"));
    if tolerations.is_empty() {
        out.w(0, "<none>\n");
        return;
    }
    let mut sorted = tolerations.to_vec();
    sorted.sort_by(|a, b| a.key.cmp(&b.key));
    for (i, t) in sorted.iter().enumerate() {
        if i != 0 {
            out.w(0, &format!("{indent}\t"));
        }
        let key = t.key.as_deref().unwrap_or("");
        let value = t.value.as_deref().unwrap_or("");
        let effect = t.effect.as_deref().unwrap_or("");
        let mut text = key.to_owned();
        if !value.is_empty() {
            text.push_str(&format!("={value}"));
        }
        if !effect.is_empty() {
            text.push_str(&format!(":{effect}"));
        }
        if t.operator.as_deref() == Some("Exists") && value.is_empty() {
            match key.is_empty() && effect.is_empty() {
                true => text.push_str("op=Exists"),
                false => text.push_str(" op=Exists"),
            }
        }
        if let Some(seconds) = t.toleration_seconds {
            text.push_str(&format!(" for {seconds}s"));
        }
        out.w(0, &format!("{text}\n"));
    }
}

fn topology_spread(out: &mut Out, constraints: &[TopologySpreadConstraint], space: &str) {
    if constraints.is_empty() {
        return;
    }
    let mut sorted = constraints.to_vec();
    sorted.sort_by(|a, b| a.topology_key.cmp(&b.topology_key));
    out.w(0, &format!("{space}Topology Spread Constraints:\t"));
    for (i, c) in sorted.iter().enumerate() {
        if i != 0 {
            out.w(0, &format!("{space}\t"));
        }
        let mut text = format!(
            "{}:{} when max skew {} is exceeded",
            c.topology_key, c.when_unsatisfiable, c.max_skew
        );
        if let Some(selector) = c.label_selector.as_ref().and_then(format_selector) {
            text.push_str(&format!(
                " for selector {}",
                if selector.is_empty() {
                    "<none>"
                } else {
                    &selector
                }
            ));
        }
        out.w(0, &format!("{text}\n"));
    }
}

/// The QoS class the kubelet would give the pod (used when the status has none).
fn qos_class(spec: &PodSpec) -> &'static str {
    let all = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten());
    let mut any = false;
    let mut guaranteed = true;
    for c in all {
        let resources = c.resources.clone().unwrap_or_default();
        let requests = resources.requests.unwrap_or_default();
        let limits = resources.limits.unwrap_or_default();
        for name in ["cpu", "memory"] {
            let request = requests.get(name).and_then(|q| quantity::parse(&q.0));
            let limit = limits.get(name).and_then(|q| quantity::parse(&q.0));
            if request.is_some_and(|r| !r.is_zero()) || limit.is_some_and(|l| !l.is_zero()) {
                any = true;
            }
            match (request, limit) {
                (_, None) => guaranteed = false,
                (Some(r), Some(l)) if r != l => guaranteed = false,
                _ => {}
            }
        }
    }
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}
