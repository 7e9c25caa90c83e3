//! `kubectl describe service`, with the endpoints of its EndpointSlices.

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::context::Ctx;
use super::printer::meta_head;
use super::writer::Out;

pub(super) fn service(ctx: &Ctx<'_>, out: &mut Out, service: &Service) {
    let meta = &service.metadata;
    let spec = service.spec.clone().unwrap_or_default();
    meta_head(out, meta);
    let selector = spec
        .selector
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    out.w(0, &format!("Selector:\t{selector}\n"));
    out.w(
        0,
        &format!("Type:\t{}\n", spec.type_.as_deref().unwrap_or("")),
    );
    if let Some(policy) = &spec.ip_family_policy {
        out.w(0, &format!("IP Family Policy:\t{policy}\n"));
    }
    match spec.ip_families.as_ref().filter(|f| !f.is_empty()) {
        Some(families) => out.w(0, &format!("IP Families:\t{}\n", families.join(","))),
        None => out.w(0, "IP Families:\t<none>\n"),
    }
    out.w(
        0,
        &format!("IP:\t{}\n", spec.cluster_ip.as_deref().unwrap_or("")),
    );
    match spec.cluster_ips.as_ref().filter(|f| !f.is_empty()) {
        Some(ips) => out.w(0, &format!("IPs:\t{}\n", ips.join(","))),
        None => out.w(0, "IPs:\t<none>\n"),
    }
    if let Some(ips) = spec.external_ips.as_ref().filter(|f| !f.is_empty()) {
        out.w(0, &format!("External IPs:\t{}\n", ips.join(",")));
    }
    if let Some(ip) = spec.load_balancer_ip.as_deref().filter(|s| !s.is_empty()) {
        out.w(0, &format!("Desired LoadBalancer IP:\t{ip}\n"));
    }
    if let Some(name) = spec.external_name.as_deref().filter(|s| !s.is_empty()) {
        out.w(0, &format!("External Name:\t{name}\n"));
    }
    let ingress = service
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.clone())
        .unwrap_or_default();
    if !ingress.is_empty() {
        let list: Vec<String> = ingress
            .iter()
            .map(|i| match i.ip.as_deref().filter(|s| !s.is_empty()) {
                Some(ip) => match &i.ip_mode {
                    Some(mode) => format!("{ip} ({mode})"),
                    None => ip.to_owned(),
                },
                None => i.hostname.clone().unwrap_or_default(),
            })
            .collect();
        out.w(0, &format!("LoadBalancer Ingress:\t{}\n", list.join(", ")));
    }
    let slices = ctx.related::<EndpointSlice>("endpointslices");
    for port in spec.ports.iter().flatten() {
        let name = port
            .name
            .as_deref()
            .filter(|s| !s.is_empty())
            .unwrap_or("<unset>");
        let protocol = port.protocol.as_deref().unwrap_or("TCP");
        out.w(0, &format!("Port:\t{name}\t{}/{protocol}\n", port.port));
        match &port.target_port {
            Some(IntOrString::Int(n)) => out.w(0, &format!("TargetPort:\t{n}/{protocol}\n")),
            Some(IntOrString::String(s)) => out.w(0, &format!("TargetPort:\t{s}/{protocol}\n")),
            // The API server defaults targetPort to port.
            None => out.w(0, &format!("TargetPort:\t{}/{protocol}\n", port.port)),
        }
        if let Some(node_port) = port.node_port.filter(|p| *p != 0) {
            out.w(0, &format!("NodePort:\t{name}\t{node_port}/{protocol}\n"));
        }
        let endpoints = match &slices {
            Ok(slices) => endpoints(slices, port.name.as_deref().unwrap_or("")),
            Err(err) => format!("<error: {err}>"),
        };
        out.w(0, &format!("Endpoints:\t{endpoints}\n"));
    }
    out.w(
        0,
        &format!(
            "Session Affinity:\t{}\n",
            spec.session_affinity.as_deref().unwrap_or("")
        ),
    );
    if let Some(policy) = spec
        .external_traffic_policy
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        out.w(0, &format!("External Traffic Policy:\t{policy}\n"));
    }
    if let Some(policy) = &spec.internal_traffic_policy {
        out.w(0, &format!("Internal Traffic Policy:\t{policy}\n"));
    }
    if let Some(port) = spec.health_check_node_port.filter(|p| *p != 0) {
        out.w(0, &format!("HealthCheck NodePort:\t{port}\n"));
    }
    if let Some(ranges) = spec
        .load_balancer_source_ranges
        .as_ref()
        .filter(|r| !r.is_empty())
    {
        out.w(
            0,
            &format!("LoadBalancer Source Ranges:\t{}\n", ranges.join(",")),
        );
    }
    ctx.events(out);
}

/// The ready endpoints serving port `port_name`: the first three, then "+ N more...".
fn endpoints(slices: &[EndpointSlice], port_name: &str) -> String {
    const MAX: usize = 3;
    if slices.is_empty() {
        return "<none>".to_owned();
    }
    let mut list: Vec<String> = Vec::new();
    let mut count = 0;
    let mut more = false;
    // Each ready endpoint counts; the first MAX are listed, as `address` or `address:port`.
    let mut take = |endpoints: &[k8s_openapi::api::discovery::v1::Endpoint], port: Option<i32>| {
        for e in endpoints {
            if list.len() == MAX {
                more = true;
            }
            if !e.conditions.as_ref().and_then(|c| c.ready).unwrap_or(true) {
                continue;
            }
            if !more && let Some(address) = e.addresses.first() {
                list.push(match (port, address.contains(':')) {
                    (None, _) => address.clone(),
                    (Some(number), true) => format!("[{address}]:{number}"),
                    (Some(number), false) => format!("{address}:{number}"),
                });
            }
            count += 1;
        }
    };
    for slice in slices {
        let endpoints = slice.endpoints.as_deref().unwrap_or_default();
        let ports = slice.ports.as_deref().unwrap_or_default();
        if ports.is_empty() {
            take(endpoints, None);
        }
        for port in ports {
            if port.name.as_deref().unwrap_or("") == port_name {
                take(endpoints, Some(port.port.unwrap_or(0)));
            }
        }
    }
    let joined = list.join(",");
    match more {
        true => format!("{joined} + {} more...", count - MAX),
        false => joined,
    }
}
