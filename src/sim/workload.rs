//! The deterministic cluster generator: the same seed gives the same namespaces, nodes,
//! Deployments, ReplicaSets and pods, byte for byte.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

use super::companions::{self, AppSummary, Companion, PodSummary};
use std::collections::HashMap;

use super::capacity::{self, AppRequests, Load, PodNetwork};
use super::manifests::{self, AppSpec, NodeSpec, PodFactory, PodState};
use super::object::StoredObject;
use super::resources::Resource;

/// The size and seed of a generated cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkloadSpec {
    pub pods: usize,
    pub nodes: usize,
    /// Application namespaces; `default` and the `kube-*` ones always exist on top.
    pub namespaces: usize,
    pub seed: u64,
    /// Unix seconds the timeline is laid out from: namespaces are 90 days older, nodes 30,
    /// applications up to 20, and their pods an hour younger than their application. A
    /// parameter rather than the clock, so the same spec gives the same bytes.
    pub birth: i64,
    /// Whether the StatefulSets, DaemonSets and Jobs get their pods.
    pub workload_pods: bool,
}

/// How long before the birth time the first node joined (node `i` 37·i seconds later).
const NODES_AGE: i64 = 30 * 86_400;

/// Mixed into the seed for the Secrets' own random stream.
const SECRETS_STREAM: u64 = 0x5ec2_e75e_c2e7_5ec2;

const TEAMS: [&str; 16] = [
    "payments",
    "checkout",
    "search",
    "identity",
    "platform",
    "data",
    "ml",
    "growth",
    "billing",
    "notifications",
    "catalog",
    "orders",
    "shipping",
    "inventory",
    "analytics",
    "messaging",
];
const ENVS: [&str; 6] = ["prod", "staging", "dev", "qa", "perf", "sandbox"];
const COMPONENTS: [(&str, &str); 12] = [
    ("api", "backend"),
    ("web", "frontend"),
    ("worker", "backend"),
    ("gateway", "edge"),
    ("consumer", "backend"),
    ("scheduler", "backend"),
    ("cache", "cache"),
    ("indexer", "backend"),
    ("frontend", "frontend"),
    ("db-proxy", "data"),
    ("exporter", "monitoring"),
    ("sync", "backend"),
];
const REPLICAS: [usize; 14] = [1, 2, 2, 3, 3, 3, 4, 5, 6, 8, 10, 12, 16, 24];
const ZONES: [&str; 3] = ["eu-west-1a", "eu-west-1b", "eu-west-1c"];
pub const SYSTEM_NAMESPACES: [&str; 4] =
    ["default", "kube-node-lease", "kube-public", "kube-system"];

/// One generated object, encoded with its resourceVersion, in creation order.
pub struct Generated {
    pub resource: Resource,
    pub key: String,
    pub rv: u64,
    pub object: StoredObject,
}

/// A node as pods are placed on it.
#[derive(Debug, Clone)]
pub struct NodeSlot {
    pub name: String,
    pub ip: String,
}

/// The node name and internal IP of node `i`.
pub fn node_slot(i: usize) -> NodeSlot {
    let (a, b, c) = (40 + i / 62_500, (i / 250) % 250, i % 250 + 1);
    NodeSlot {
        name: format!("ip-10-{a}-{b}-{c}.eu-west-1.compute.internal"),
        ip: format!("10.{a}.{b}.{c}"),
    }
}

/// What the sequential pass decides about one application; its objects are then built
/// (in parallel) from its own seed, so the output does not depend on the thread count.
struct AppPlan {
    namespace: String,
    sidecar: bool,
    name: String,
    team: String,
    tier: &'static str,
    replicas: usize,
    has_old: bool,
    seed: u64,
    birth: i64,
    /// resourceVersion of its first object and number of its first pod.
    first_rv: u64,
    first_pod: u64,
}

impl AppPlan {
    fn objects(&self) -> u64 {
        2 + u64::from(self.has_old) + self.replicas as u64
    }
}

/// Stamps the resourceVersion and encodes.
fn encode(
    resource: Resource,
    key: String,
    rv: u64,
    mut value: Value,
) -> Result<Generated, serde_json::Error> {
    value["metadata"]["resourceVersion"] = Value::String(rv.to_string());
    Ok(Generated {
        resource,
        key,
        rv,
        object: StoredObject::encode(&value)?,
    })
}

/// Generates the whole cluster, resourceVersions counting up from `first_rv`. Objects are
/// encoded as they are built, so the decoded form of the whole cluster never exists at once.
pub fn generate(spec: &WorkloadSpec, first_rv: u64) -> Result<Vec<Generated>, serde_json::Error> {
    let mut rng = StdRng::seed_from_u64(spec.seed);
    let mut out = Vec::with_capacity(spec.pods + spec.pods / 3 + spec.nodes + spec.namespaces + 8);
    let mut rv = first_rv;
    let namespaces = namespace_names(spec.namespaces);
    for (i, name) in SYSTEM_NAMESPACES
        .iter()
        .map(|s| s.to_string())
        .chain(namespaces.iter().cloned())
        .enumerate()
    {
        let labels = if i >= SYSTEM_NAMESPACES.len() && i % 2 == 0 {
            json!({"istio-injection": "enabled"})
        } else {
            json!({})
        };
        let created = manifests::timestamp(spec.birth - 90 * 86_400 + i as i64 * 60);
        let uid = manifests::uid(&mut rng);
        let value = manifests::namespace(&name, &uid, &created, labels);
        out.push(encode(Resource::Namespaces, name, rv, value)?);
        rv += 1;
    }
    let nodes: Vec<NodeSlot> = (0..spec.nodes.max(1)).map(node_slot).collect();
    // The nodes' uids are drawn now, their objects made once the pods on them are known
    // (so their machines fit them), and put here in the order of their resourceVersions.
    let node_uids: Vec<String> = nodes.iter().map(|_| manifests::uid(&mut rng)).collect();
    let (nodes_at, nodes_rv) = (out.len(), rv);
    rv += nodes.len() as u64;
    let per_node = (spec.pods as u64).div_ceil(nodes.len() as u64);
    let requests = capacity::app_requests(per_node);
    let others = companions::IPS_PER_NAMESPACE * spec.namespaces as u64;
    let network = PodNetwork::new(nodes.len(), per_node + others);
    let plans = plan_apps(spec, &namespaces, &mut rng, rv);
    let placement = Placement {
        nodes: &nodes,
        network,
        requests,
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let built = in_parallel(plans.iter().collect(), threads, |_, plan| {
        let mut objects = Vec::new();
        let app = build_app(plan, &placement, &mut objects)?;
        Ok((objects, app))
    })?;
    let mut apps = Vec::with_capacity(plans.len());
    for (objects, app) in built {
        out.extend(objects);
        apps.push(app);
    }
    let next_rv = out.last().map_or(first_rv, |g| g.rv + 1);
    secrets(spec, &namespaces, next_rv, &mut out)?;
    let node_names: Vec<String> = nodes.iter().map(|n| n.name.clone()).collect();
    let companions_at = out.len();
    add_companions(
        spec,
        &namespaces,
        &node_names,
        network,
        &apps,
        threads,
        &mut out,
    )?;
    let loads = node_loads(&apps, requests, &node_names, &out[companions_at..]);
    let shapes = capacity::node_shapes(capacity::busiest(&loads), nodes.len());
    let mut node_objects = Vec::with_capacity(nodes.len());
    for (i, ((slot, uid), shape)) in nodes.iter().zip(&node_uids).zip(shapes).enumerate() {
        let created = manifests::timestamp(spec.birth - NODES_AGE + i as i64 * 37);
        let value = manifests::node(&NodeSpec {
            name: &slot.name,
            uid,
            created: &created,
            internal_ip: &slot.ip,
            zone: ZONES[i % ZONES.len()],
            instance_type: &shape.instance_type,
            pod_cidr: &network.cidr(i),
            cpu: shape.cpu,
            memory_ki: shape.memory_ki,
            pods: shape.pods,
            kubelet_version: "v1.32.3-eks-1234567",
        });
        node_objects.push(encode(
            Resource::Nodes,
            slot.name.clone(),
            nodes_rv + i as u64,
            value,
        )?);
    }
    out.splice(nodes_at..nodes_at, node_objects);
    Ok(out)
}

/// Where an application's pods go and what they ask for.
struct Placement<'a> {
    nodes: &'a [NodeSlot],
    network: PodNetwork,
    requests: AppRequests,
}

/// What the pods on each node (by its position) request: the applications' pods, whose
/// requests are known, and the companions' few, read from their objects.
fn node_loads(
    apps: &[AppSummary],
    requests: AppRequests,
    nodes: &[String],
    companions: &[Generated],
) -> HashMap<usize, Load> {
    let position: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let mut loads: HashMap<usize, Load> = HashMap::new();
    for app in apps {
        let each = requests.total(app.sidecar);
        for pod in &app.pods {
            if let Some(&i) = position.get(pod.node.as_str()) {
                loads.entry(i).or_default().add(each);
            }
        }
    }
    for pod in companions.iter().filter(|g| g.resource == Resource::Pods) {
        let Ok(value) = pod.object.decode() else {
            continue;
        };
        let Some(&i) = value["spec"]["nodeName"]
            .as_str()
            .and_then(|n| position.get(n))
        else {
            continue;
        };
        let load = loads.entry(i).or_default();
        load.pods += 1;
        for c in value["spec"]["containers"].as_array().into_iter().flatten() {
            let amount = |name: &str| {
                c["resources"]["requests"][name]
                    .as_str()
                    .and_then(kscope_units::quantity::parse)
                    .map_or(0, |q| u64::try_from(q.milli()).unwrap_or(0))
            };
            load.cpu_milli += amount("cpu");
            load.memory_mi += amount("memory") / 1000 / (1 << 20);
        }
    }
    loads
}

/// The objects around the workloads (see [`companions`]), after everything else and from
/// their own random streams, so the rest of the cluster is as it was without them. Built
/// and encoded on every core, numbered in order.
fn add_companions(
    spec: &WorkloadSpec,
    namespaces: &[String],
    nodes: &[String],
    network: PodNetwork,
    apps: &[AppSummary],
    threads: usize,
    out: &mut Vec<Generated>,
) -> Result<(), serde_json::Error> {
    let all: Vec<&str> = SYSTEM_NAMESPACES
        .iter()
        .copied()
        .chain(namespaces.iter().map(String::as_str))
        .collect();
    let mut rv = out.last().map_or(1, |g| g.rv + 1);
    let mut number = |group: Vec<Companion>, out: &mut Vec<Generated>| {
        for c in group {
            out.push(encode(c.resource, c.key, rv, c.value)?);
            rv += 1;
        }
        Ok::<_, serde_json::Error>(())
    };
    let nodes = companions::Nodes {
        names: nodes,
        born: spec.birth - NODES_AGE,
        pods: spec.workload_pods,
        network,
        first_ip: (spec.pods as u64).div_ceil(nodes.len().max(1) as u64),
    };
    number(
        companions::for_cluster(&all, &nodes, spec.seed, spec.birth - 90 * 86_400),
        out,
    )?;
    for (i, ns) in namespaces.iter().enumerate() {
        let team = ns.split('-').next().unwrap_or("platform");
        let group = companions::for_namespace(
            ns,
            team,
            spec.seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
            spec.birth - 30 * 86_400 + i as i64 * 97,
            &nodes,
            i as u64 * companions::IPS_PER_NAMESPACE,
        );
        number(group, out)?;
    }
    // Each application's companions are built and encoded by one worker, so only a few
    // applications' JSON trees exist at once; their numbers are known beforehand.
    let mut numbered = Vec::with_capacity(apps.len());
    for app in apps {
        numbered.push((rv, app));
        rv += companions::count_for_app(app) as u64;
    }
    let encoded = in_parallel(numbered, threads, |i, (start, app)| {
        let group = companions::for_app(app, 20 + i as u64);
        if group.len() != companions::count_for_app(app) {
            return Err(serde::de::Error::custom("companion count mismatch"));
        }
        group
            .into_iter()
            .zip(start..)
            .map(|(c, rv)| encode(c.resource, c.key, rv, c.value))
            .collect::<Result<Vec<_>, _>>()
    })?;
    out.extend(encoded.into_iter().flatten());
    Ok(())
}

/// `f` of each of `items` (with its position) on up to `threads` threads, the results in
/// the items' order, so the output does not depend on the thread count.
fn in_parallel<T: Send, R: Send>(
    items: Vec<T>,
    threads: usize,
    f: impl Fn(usize, T) -> Result<R, serde_json::Error> + Sync,
) -> Result<Vec<R>, serde_json::Error> {
    let chunk = items.len().div_ceil(threads.max(1)).max(1);
    let mut parts: Vec<Vec<(usize, T)>> = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        if i % chunk == 0 {
            parts.push(Vec::with_capacity(chunk));
        }
        if let Some(part) = parts.last_mut() {
            part.push((i, item));
        }
    }
    let f = &f;
    let done: Vec<Result<Vec<R>, serde_json::Error>> = std::thread::scope(|s| {
        let workers: Vec<_> = parts
            .into_iter()
            .map(|part| s.spawn(move || part.into_iter().map(|(i, t)| f(i, t)).collect()))
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|_| Err(serde::de::Error::custom("generator thread panicked")))
            })
            .collect()
    });
    let mut out = Vec::new();
    for part in done {
        out.extend(part?);
    }
    Ok(out)
}

/// A service-account token Secret in every namespace; an application namespace also gets
/// database credentials (applied with kubectl, so with the last-applied annotation), a TLS
/// pair and registry credentials. Drawn from their own random stream, so adding them left
/// the rest of the cluster as it was.
fn secrets(
    spec: &WorkloadSpec,
    namespaces: &[String],
    mut rv: u64,
    out: &mut Vec<Generated>,
) -> Result<(), serde_json::Error> {
    let mut rng = StdRng::seed_from_u64(spec.seed ^ SECRETS_STREAM);
    let all = SYSTEM_NAMESPACES
        .iter()
        .copied()
        .chain(namespaces.iter().map(String::as_str));
    for (i, ns) in all.enumerate() {
        let created = manifests::timestamp(spec.birth - 90 * 86_400 + i as i64 * 60 + 5);
        let sa_uid = manifests::uid(&mut rng);
        let token = format!(
            "eyJhbGciOiJSUzI1NiIsImtpZCI6IiJ9.{}.{}",
            manifests::hex(&mut rng, 64),
            manifests::hex(&mut rng, 86)
        );
        let mut specs = vec![(
            format!("default-token-{}", manifests::safe_suffix(&mut rng, 5)),
            "kubernetes.io/service-account-token",
            vec![
                ("ca.crt", pem("CERTIFICATE", &mut rng)),
                ("namespace", ns.to_string()),
                ("token", token),
            ],
            json!({
                "kubernetes.io/service-account.name": "default",
                "kubernetes.io/service-account.uid": sa_uid,
            }),
            false,
        )];
        if i >= SYSTEM_NAMESPACES.len() {
            let team = ns.split('-').next().unwrap_or("platform");
            let registry = format!(
                r#"{{"auths":{{"registry.example.com":{{"username":"{team}-ci","password":"{}"}}}}}}"#,
                manifests::hex(&mut rng, 32)
            );
            specs.extend([
                (
                    format!("{team}-db-credentials"),
                    "Opaque",
                    vec![
                        ("password", manifests::hex(&mut rng, 24)),
                        ("username", format!("{team}_app")),
                    ],
                    json!({}),
                    true,
                ),
                (
                    format!("{team}-tls"),
                    "kubernetes.io/tls",
                    vec![
                        ("tls.crt", pem("CERTIFICATE", &mut rng)),
                        ("tls.key", pem("PRIVATE KEY", &mut rng)),
                    ],
                    json!({}),
                    false,
                ),
                (
                    "registry-credentials".to_string(),
                    "kubernetes.io/dockerconfigjson",
                    vec![(".dockerconfigjson", registry)],
                    json!({}),
                    false,
                ),
            ]);
        }
        for (name, type_, data, annotations, applied) in specs {
            let uid = manifests::uid(&mut rng);
            let value = manifests::secret(&manifests::SecretSpec {
                namespace: ns,
                name: &name,
                uid: &uid,
                created: &created,
                type_,
                data: &data,
                annotations,
                applied,
            });
            out.push(encode(
                Resource::Secrets,
                format!("{ns}/{name}"),
                rv,
                value,
            )?);
            rv += 1;
        }
    }
    Ok(())
}

/// A PEM block of random bytes: looks like a certificate or key, is neither.
fn pem(label: &str, rng: &mut StdRng) -> String {
    use base64::Engine as _;
    let body: Vec<u8> = (0..96).map(|_| rng.random()).collect();
    let text = base64::engine::general_purpose::STANDARD.encode(body);
    format!("-----BEGIN {label}-----\n{text}\n-----END {label}-----\n")
}

/// Decides the applications: namespace, name, size and seed of each, until the pods add up.
fn plan_apps(
    spec: &WorkloadSpec,
    namespaces: &[String],
    rng: &mut StdRng,
    mut rv: u64,
) -> Vec<AppPlan> {
    let mut plans = Vec::new();
    let mut per_namespace = vec![0usize; namespaces.len()];
    let mut remaining = spec.pods;
    let mut pod_number = 0u64;
    while remaining > 0 && !namespaces.is_empty() {
        let ns_index = rng.random_range(0..namespaces.len());
        let ns = &namespaces[ns_index];
        let ordinal = per_namespace[ns_index];
        per_namespace[ns_index] += 1;
        let team = ns.split('-').next().unwrap_or("platform");
        let (component, tier) = COMPONENTS[ordinal % COMPONENTS.len()];
        let name = match ordinal / COMPONENTS.len() {
            0 => format!("{team}-{component}"),
            n => format!("{team}-{component}-{n}"),
        };
        let replicas = REPLICAS[rng.random_range(0..REPLICAS.len())].min(remaining);
        remaining -= replicas;
        let plan = AppPlan {
            namespace: ns.clone(),
            sidecar: ns_index % 2 == 0,
            name,
            team: team.to_string(),
            tier,
            replicas,
            has_old: rng.random_bool(0.3),
            seed: rng.random(),
            birth: spec.birth,
            first_rv: rv,
            first_pod: pod_number,
        };
        rv += plan.objects();
        pod_number += replicas as u64;
        plans.push(plan);
    }
    plans
}

/// Builds one application's Deployment, ReplicaSets and pods; returns what its
/// companions need to know of it.
fn build_app(
    plan: &AppPlan,
    placement: &Placement<'_>,
    out: &mut Vec<Generated>,
) -> Result<AppSummary, serde_json::Error> {
    let mut rng = StdRng::seed_from_u64(plan.seed);
    let mut rv = plan.first_rv;
    let mut next_rv = || {
        rv += 1;
        rv - 1
    };
    let version = format!(
        "{}.{}.{}",
        rng.random_range(1..4),
        rng.random_range(0..30),
        rng.random_range(0..10)
    );
    let image = format!("registry.example.com/{}/{}:{version}", plan.team, plan.name);
    let created_secs = plan.birth - rng.random_range(0..20 * 86_400);
    let created = manifests::timestamp(created_secs);
    let uid = manifests::uid(&mut rng);
    let app = AppSpec {
        namespace: &plan.namespace,
        name: &plan.name,
        team: &plan.team,
        tier: plan.tier,
        image: &image,
        version: &version,
        sidecar: plan.sidecar,
        replicas: plan.replicas as u32,
        uid: &uid,
        created: &created,
        revision: if plan.has_old { 2 } else { 1 },
        requests: placement.requests,
    };
    let template = manifests::pod_template(&app);
    let deployment = manifests::deployment(&app, &template, plan.replicas as u32);
    let ns = &plan.namespace;
    let rs_key = |rs: &Value| format!("{ns}/{}", rs["metadata"]["name"].as_str().unwrap_or(""));
    if plan.has_old {
        let hash = manifests::safe_suffix(&mut rng, 10);
        let rs_uid = manifests::uid(&mut rng);
        // The revision before: the same app at the previous version, so the Deployment owns
        // one ReplicaSet per pod template, as the Deployment controller leaves it.
        let previous = previous_version(&version);
        let old_app = AppSpec {
            image: &format!(
                "registry.example.com/{}/{}:{previous}",
                plan.team, plan.name
            ),
            version: &previous,
            ..app
        };
        let old = manifests::deployment(
            &old_app,
            &manifests::pod_template(&old_app),
            plan.replicas as u32,
        );
        let rs = manifests::replicaset(&old, &hash, &rs_uid, 0, 1, &created);
        out.push(encode(Resource::ReplicaSets, rs_key(&rs), next_rv(), rs)?);
    }
    let hash = manifests::safe_suffix(&mut rng, 10);
    let rs_uid = manifests::uid(&mut rng);
    let rs_created = manifests::timestamp(created_secs + 3_600);
    let rs = manifests::replicaset(
        &deployment,
        &hash,
        &rs_uid,
        plan.replicas as u32,
        app.revision,
        &rs_created,
    );
    let factory = PodFactory::new(&rs);
    let rs_name = rs["metadata"]["name"].as_str().unwrap_or("").to_string();
    // The Deployment and its ReplicaSet come before their pods, their statuses counted
    // from the pods once these are made.
    let (at, deployment_rv, rs_rv) = (out.len(), next_rv(), next_rv());
    let mut summary = AppSummary {
        namespace: plan.namespace.clone(),
        name: plan.name.clone(),
        team: plan.team.clone(),
        tier: plan.tier,
        sidecar: plan.sidecar,
        replicas: plan.replicas,
        created: created_secs,
        deployment_uid: uid.clone(),
        replicaset: rs_name.clone(),
        seed: plan.seed,
        pods: Vec::with_capacity(plan.replicas),
    };
    for i in 0..plan.replicas {
        let pod_name = format!("{rs_name}-{}", manifests::safe_suffix(&mut rng, 5));
        // Spread evenly, as the scheduler's balanced allocation leaves them: pod `n` of the
        // cluster on node `n mod nodes`, the `n / nodes`-th there.
        let number = plan.first_pod + i as u64;
        let count = placement.nodes.len() as u64;
        let on = (number % count) as usize;
        let node = &placement.nodes[on];
        let roll: f64 = rng.random();
        let state = if roll < 0.02 {
            PodState::Pending
        } else if roll < 0.04 {
            PodState::CrashLoop {
                restarts: rng.random_range(1..40),
            }
        } else {
            PodState::Running
        };
        let pod_uid = manifests::uid(&mut rng);
        let created = created_secs + 3_600 + rng.random_range(0..600);
        let ip = placement.network.pod_ip(on, number / count);
        let pod = factory.pod(
            &mut rng, &pod_name, &pod_uid, &node.name, &node.ip, &ip, created, state,
        );
        summary.pods.push(PodSummary {
            name: pod_name.clone(),
            uid: pod_uid,
            node: node.name.clone(),
            ip,
            ready: state == PodState::Running,
            problem: match state {
                PodState::Pending => Some("Pending"),
                PodState::CrashLoop { .. } => Some("CrashLoopBackOff"),
                _ => None,
            },
        });
        out.push(encode(
            Resource::Pods,
            format!("{ns}/{pod_name}"),
            next_rv(),
            pod,
        )?);
    }
    let ready = summary.pods.iter().filter(|p| p.ready).count() as u32;
    let mut deployment = deployment;
    manifests::count_ready(&mut deployment, ready);
    let mut rs = rs;
    manifests::count_ready(&mut rs, ready);
    let deployment = encode(
        Resource::Deployments,
        format!("{ns}/{}", plan.name),
        deployment_rv,
        deployment,
    )?;
    let rs = encode(Resource::ReplicaSets, rs_key(&rs), rs_rv, rs)?;
    out.splice(at..at, [deployment, rs]);
    Ok(summary)
}

/// The release before `version` (`1.4.2` → `1.4.1`, `1.4.0` → `1.3.9`, `1.0.0` → `0.9.9`).
fn previous_version(version: &str) -> String {
    let parts: Vec<u32> = version.split('.').filter_map(|p| p.parse().ok()).collect();
    let [major, minor, patch] = parts.as_slice() else {
        return format!("{version}-previous");
    };
    match (major, minor, patch) {
        (_, _, p) if *p > 0 => format!("{major}.{minor}.{}", p - 1),
        (_, m, _) if *m > 0 => format!("{major}.{}.9", m - 1),
        (0, 0, 0) => "0.0.0-previous".to_string(),
        _ => format!("{}.9.9", major - 1),
    }
}

/// `team-env` names, numbered once every combination is used.
fn namespace_names(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let team = TEAMS[i % TEAMS.len()];
            let env = ENVS[(i / TEAMS.len()) % ENVS.len()];
            match i / (TEAMS.len() * ENVS.len()) {
                0 => format!("{team}-{env}"),
                round => format!("{team}-{env}-{round}"),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_counts_and_deterministic() {
        let spec = WorkloadSpec {
            pods: 103,
            nodes: 4,
            namespaces: 3,
            seed: 7,
            birth: 1_741_944_000,
            workload_pods: true,
        };
        let a = generate(&spec, 1).unwrap();
        let count = |r| a.iter().filter(|g| g.resource == r).count();
        // The Deployments' pods as asked, then the DaemonSets' (two per node), the
        // StatefulSets' (three per namespace) and the Jobs' (two per namespace).
        assert_eq!(count(Resource::Pods), 103 + 2 * 4 + 3 * 3 + 3 * 2);
        let decoded = |r| {
            a.iter()
                .filter(move |g| g.resource == r)
                .map(|g| g.object.decode().unwrap())
        };
        let pods: Vec<Value> = decoded(Resource::Pods).collect();
        let owned_by = |kind: &str| {
            pods.iter()
                .filter(|p| p["metadata"]["ownerReferences"][0]["kind"] == kind)
                .collect::<Vec<_>>()
        };
        assert_eq!(owned_by("ReplicaSet").len(), 103);
        // Each seeded workload's pods are its controller's: owned by uid, at the revision
        // its status and ControllerRevision name.
        let revisions: Vec<String> = decoded(Resource::ControllerRevisions)
            .map(|r| r["metadata"]["name"].as_str().unwrap().to_string())
            .collect();
        for sts in decoded(Resource::StatefulSets) {
            let revision = sts["status"]["updateRevision"].as_str().unwrap();
            assert!(revisions.iter().any(|r| r == revision));
            let name = sts["metadata"]["name"].as_str().unwrap();
            let mine: Vec<_> = owned_by("StatefulSet")
                .into_iter()
                .filter(|p| p["metadata"]["ownerReferences"][0]["uid"] == sts["metadata"]["uid"])
                .collect();
            let names: Vec<&str> = mine
                .iter()
                .map(|p| p["metadata"]["name"].as_str().unwrap())
                .collect();
            assert_eq!(names, [0, 1, 2].map(|i| format!("{name}-{i}")));
            for pod in mine {
                assert_eq!(
                    pod["metadata"]["labels"]["controller-revision-hash"],
                    revision
                );
                assert_eq!(pod["status"]["phase"], "Running");
                assert_eq!(pod["spec"]["hostname"], pod["metadata"]["name"]);
            }
        }
        for ds in decoded(Resource::DaemonSets) {
            let mut nodes: Vec<&str> = owned_by("DaemonSet")
                .into_iter()
                .filter(|p| p["metadata"]["ownerReferences"][0]["uid"] == ds["metadata"]["uid"])
                .map(|p| p["spec"]["nodeName"].as_str().unwrap())
                .collect();
            nodes.sort();
            nodes.dedup();
            assert_eq!(nodes.len(), 4, "one pod on each node");
        }
        let jobs = owned_by("Job");
        assert_eq!(jobs.len(), 6);
        assert!(jobs.iter().all(|p| p["status"]["phase"] == "Succeeded"));
        assert!(jobs.iter().all(|p| {
            p["status"]["containerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
        }));
        assert_eq!(count(Resource::Nodes), 4);
        assert_eq!(count(Resource::Namespaces), 7);
        assert_eq!(count(Resource::Secrets), 7 + 3 * 3);
        // Companions: per application, per application namespace, per cluster.
        let apps = count(Resource::Deployments);
        assert_eq!(count(Resource::Services), apps + 3 + 2);
        assert_eq!(count(Resource::ServiceAccounts), apps + 7);
        assert_eq!(count(Resource::Endpoints), apps + 1 + 3);
        assert_eq!(count(Resource::StatefulSets), 3);
        assert_eq!(count(Resource::PersistentVolumeClaims), 9);
        assert_eq!(count(Resource::PersistentVolumes), 9);
        assert_eq!(count(Resource::Jobs), 6);
        assert_eq!(count(Resource::Leases), 4 + 3);
        let listed: usize = a
            .iter()
            .filter(|g| g.resource == Resource::Endpoints)
            .map(|g| {
                let e = g.object.decode().unwrap();
                ["addresses", "notReadyAddresses"]
                    .iter()
                    .map(|f| e["subsets"][0][f].as_array().map_or(0, Vec::len))
                    .sum::<usize>()
            })
            .sum();
        assert_eq!(
            listed,
            103 + 2 + 9,
            "every Deployment pod, the API server's two, and the databases' pods"
        );
        assert!(a.iter().enumerate().all(|(i, g)| g.rv == i as u64 + 1));
        // A Deployment's ReplicaSets each have their own pod template.
        let mut templates = std::collections::BTreeMap::new();
        for g in a.iter().filter(|g| g.resource == Resource::ReplicaSets) {
            let rs = g.object.decode().unwrap();
            let owner = rs["metadata"]["ownerReferences"][0]["uid"].to_string();
            let mut template = rs["spec"]["template"].clone();
            template["metadata"]["labels"]
                .as_object_mut()
                .unwrap()
                .remove("pod-template-hash");
            let seen = templates.entry(owner).or_insert_with(Vec::new);
            assert!(
                !seen.contains(&template),
                "two ReplicaSets share a template"
            );
            seen.push(template);
        }
        assert!(templates.values().any(|t| t.len() == 2));
        assert_eq!(previous_version("1.4.0"), "1.3.9");
        let b = generate(&spec, 1).unwrap();
        assert!(
            a.iter()
                .zip(&b)
                .all(|(x, y)| x.key == y.key && x.object.json == y.object.json)
        );
        let other = generate(&WorkloadSpec { seed: 8, ..spec }, 1).unwrap();
        assert!(
            a.iter()
                .zip(&other)
                .any(|(x, y)| x.object.json != y.object.json)
        );
    }
}
