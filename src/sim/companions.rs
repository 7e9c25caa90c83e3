//! The objects a real cluster has around its workloads, seeded beside the generated
//! Deployments: each application's ServiceAccount, ConfigMap, Service with its Endpoints
//! and EndpointSlice (listing its pods), PodDisruptionBudget, HorizontalPodAutoscaler,
//! Ingress (front ends) and Events; each application namespace's StatefulSet with its
//! claims and volumes and its CronJob with the Jobs it ran; and the cluster's own
//! DaemonSets, node and control-plane Leases, `kubernetes` Service and root-CA ConfigMaps.
//!
//! The StatefulSets, DaemonSets and Jobs have their pods, as their controllers would have
//! made them (named, labelled and owned so, and at their current revision), so that those
//! controllers take the seeded workloads for their own; they come on top of the pod count
//! asked for, which is the Deployments', when asked for (see `SimConfig::workload_pods`).
//! Their statuses read as a healthy cluster's.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

use super::capacity::PodNetwork;
use super::manifests;
use super::resources::Resource;

/// A generated pod as the objects that list pods (Endpoints, EndpointSlices) see it.
#[derive(Debug, Clone)]
pub struct PodSummary {
    pub name: String,
    pub uid: String,
    pub node: String,
    pub ip: String,
    pub ready: bool,
    /// Why it is not ready, when it is not: `Pending` or `CrashLoopBackOff`.
    pub problem: Option<&'static str>,
}

/// One generated application, as its companions need it.
#[derive(Debug, Clone)]
pub struct AppSummary {
    pub namespace: String,
    pub name: String,
    pub team: String,
    pub tier: &'static str,
    /// Whether its pods have the mesh sidecar.
    pub sidecar: bool,
    pub replicas: usize,
    pub created: i64,
    pub deployment_uid: String,
    pub replicaset: String,
    pub seed: u64,
    pub pods: Vec<PodSummary>,
}

/// One companion object, not yet stamped with its resourceVersion.
pub struct Companion {
    pub resource: Resource,
    pub key: String,
    pub value: Value,
}

fn companion(resource: Resource, namespace: &str, value: Value) -> Companion {
    let name = value["metadata"]["name"].as_str().unwrap_or("").to_string();
    let key = if namespace.is_empty() {
        name
    } else {
        format!("{namespace}/{name}")
    };
    Companion {
        resource,
        key,
        value,
    }
}

/// Mixed into an application's seed for its companions' random stream.
const COMPANIONS_STREAM: u64 = 0xc0a1_fa11_0c0a_1fa1;
/// Mixed into the seed for the workload pods' own random stream, so that adding them left
/// the other companions as they were.
const PODS_STREAM: u64 = 0x90d5_90d5_90d5_90d5;

/// Mixed into the seed for the database Service's Endpoints and EndpointSlice, added after
/// the rest, so that the other companions stayed as they were.
const DB_ENDPOINTS_STREAM: u64 = 0xdb3d_b0e9_db3d_b0e9;

/// How many IPs a namespace's workload pods (StatefulSet and Job) number among them: its
/// `i`-th pod is the namespace's first plus `i`, on whichever node it runs.
pub const IPS_PER_NAMESPACE: u64 = 8;

/// The nodes pods are placed on.
pub struct Nodes<'a> {
    pub names: &'a [String],
    /// When the first node joined (node `i` joined 37·i seconds later).
    pub born: i64,
    /// Whether the workloads get their pods.
    pub pods: bool,
    /// The addresses each node hands out.
    pub network: PodNetwork,
    /// The first of each node's addresses left to these pods (the applications' take the
    /// ones before).
    pub first_ip: u64,
}

impl Nodes<'_> {
    /// A node picked at random.
    fn any(&self, rng: &mut StdRng) -> &str {
        match self.names.len() {
            0 => "",
            n => &self.names[rng.random_range(0..n)],
        }
    }

    /// A node of zone `zone` (node `i` is in zone `i % 3`), or any if none is.
    fn in_zone(&self, zone: usize, rng: &mut StdRng) -> &str {
        let in_zone = self.names.len().saturating_sub(zone).div_ceil(3);
        if in_zone == 0 {
            return self.any(rng);
        }
        &self.names[zone + 3 * rng.random_range(0..in_zone)]
    }

    /// The IP of the `n`-th of these pods, on `node`: from the node's own block, past the
    /// applications' pods.
    fn pod_ip(&self, node: &str, n: u64) -> String {
        let at = self.names.iter().position(|m| m == node).unwrap_or(0);
        self.network.pod_ip(at, self.first_ip + n)
    }
}

/// A running (or, with `ran`, completed) pod `name` of `owner` from `template`, on `node`.
#[allow(clippy::too_many_arguments)]
fn workload_pod(
    rng: &mut StdRng,
    owner: &Value,
    template: &Value,
    labels: &[(&str, String)],
    name: &str,
    node: &str,
    ip: &str,
    created: i64,
    state: manifests::PodState,
) -> Companion {
    let namespace = owner["metadata"]["namespace"].as_str().unwrap_or("");
    let factory = manifests::PodFactory::for_owner(owner, template, labels);
    let uid = manifests::uid(rng);
    let value = factory.pod(
        rng,
        name,
        &uid,
        node,
        &manifests::node_ip(node),
        ip,
        created,
        state,
    );
    companion(Resource::Pods, namespace, value)
}

/// A ClusterIP from 172.20.0.0/16 for service number `n`.
fn cluster_ip(n: u64) -> String {
    format!("172.20.{}.{}", (n / 250) % 250, n % 250 + 1)
}

fn meta(name: &str, namespace: &str, uid: &str, created: &str) -> Value {
    let mut m = json!({"name": name, "uid": uid, "creationTimestamp": created});
    if !namespace.is_empty() {
        m["namespace"] = json!(namespace);
    }
    m
}

fn owner(api_version: &str, kind: &str, name: &str, uid: &str) -> Value {
    json!([{"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "controller": true, "blockOwnerDeletion": true}])
}

/// A core/v1 Event about `about` (kind, name, uid, apiVersion).
#[allow(clippy::too_many_arguments)]
fn core_event(
    rng: &mut StdRng,
    namespace: &str,
    about: (&str, &str, &str, &str),
    kind: &str,
    reason: &str,
    message: &str,
    component: &str,
    at: i64,
    count: u64,
) -> Value {
    let (about_kind, about_name, about_uid, about_version) = about;
    let name = format!("{about_name}.{}", manifests::hex(rng, 16));
    let first = manifests::timestamp(at);
    let last = manifests::timestamp(at + (count.saturating_sub(1) * 300) as i64);
    json!({
        "kind": "Event",
        "apiVersion": "v1",
        "metadata": meta(&name, namespace, &manifests::uid(rng), &first),
        "involvedObject": {"kind": about_kind, "namespace": namespace, "name": about_name, "uid": about_uid, "apiVersion": about_version},
        "reason": reason,
        "message": message,
        "source": {"component": component},
        "firstTimestamp": first,
        "lastTimestamp": last,
        "count": count,
        "type": kind,
        "eventTime": null,
        "reportingComponent": component,
        "reportingInstance": "",
    })
}

/// How many companions [`for_app`] makes for `app`, known before they are built so that
/// they can be numbered in parallel.
pub fn count_for_app(app: &AppSummary) -> usize {
    5 + usize::from(app.replicas >= 2)
        + usize::from(app.replicas >= 3)
        + usize::from(matches!(app.tier, "frontend" | "edge"))
        + 1
        + app.pods.iter().filter(|p| p.problem.is_some()).count()
        + usize::from(!app.pods.is_empty())
}

/// The companions of one application, drawn from its own random stream.
pub fn for_app(app: &AppSummary, service_number: u64) -> Vec<Companion> {
    let mut rng = StdRng::seed_from_u64(app.seed ^ COMPANIONS_STREAM);
    let ns = app.namespace.as_str();
    let name = app.name.as_str();
    let created = manifests::timestamp(app.created);
    let later = manifests::timestamp(app.created + 3_600);
    let selector = json!({"app": name});
    let labels = json!({"app": name, "team": app.team});
    let mut out = Vec::new();

    out.push(companion(
        Resource::ServiceAccounts,
        ns,
        json!({
            "kind": "ServiceAccount",
            "apiVersion": "v1",
            "metadata": metadata(name, ns, &manifests::uid(&mut rng), &created, json!({"labels": labels})),
        }),
    ));
    out.push(companion(
        Resource::ConfigMaps,
        ns,
        json!({
            "kind": "ConfigMap",
            "apiVersion": "v1",
            "metadata": metadata(&format!("{name}-config"), ns, &manifests::uid(&mut rng), &created, json!({"labels": labels})),
            "data": {
                "LOG_FORMAT": "json",
                "HTTP_PORT": "8080",
                "METRICS_PORT": "9090",
                "application.yaml": format!("server:\n  port: 8080\nservice:\n  name: {name}\n  team: {}\nfeatures:\n  tracing: {}\n", app.team, rng.random_bool(0.5)),
            },
        }),
    ));
    let service_uid = manifests::uid(&mut rng);
    let ports = json!([
        {"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"},
        {"name": "metrics", "port": 9090, "targetPort": "metrics", "protocol": "TCP"},
    ]);
    let ip = cluster_ip(service_number);
    out.push(companion(
        Resource::Services,
        ns,
        json!({
            "kind": "Service",
            "apiVersion": "v1",
            "metadata": metadata(name, ns, &service_uid, &created, json!({"labels": labels})),
            "spec": {
                "type": "ClusterIP",
                "selector": selector,
                "ports": ports,
                "clusterIP": ip,
                "clusterIPs": [ip],
                "ipFamilies": ["IPv4"],
                "ipFamilyPolicy": "SingleStack",
                "sessionAffinity": "None",
                "internalTrafficPolicy": "Cluster",
            },
            "status": {"loadBalancer": {}},
        }),
    ));
    out.push(companion(
        Resource::Endpoints,
        ns,
        endpoints(app, &later, &mut rng),
    ));
    out.push(companion(
        Resource::EndpointSlices,
        ns,
        endpoint_slice(app, &service_uid, &later, &mut rng),
    ));
    if app.replicas >= 2 {
        let healthy = app.pods.iter().filter(|p| p.ready).count() as u64;
        let (spec, allowed) = if app.replicas >= 6 {
            (
                json!({"maxUnavailable": "25%", "selector": {"matchLabels": selector}}),
                (app.replicas as u64 / 4).min(healthy),
            )
        } else {
            let min = app.replicas as u64 - 1;
            (
                json!({"minAvailable": min, "selector": {"matchLabels": selector}}),
                healthy.saturating_sub(min),
            )
        };
        out.push(companion(
            Resource::PodDisruptionBudgets,
            ns,
            json!({
                "kind": "PodDisruptionBudget",
                "apiVersion": "policy/v1",
                "metadata": metadata(name, ns, &manifests::uid(&mut rng), &created, json!({"labels": labels, "generation": 1})),
                "spec": spec,
                "status": {
                    "observedGeneration": 1,
                    "disruptionsAllowed": allowed,
                    "currentHealthy": healthy,
                    "desiredHealthy": healthy - allowed.min(healthy),
                    "expectedPods": app.replicas,
                    "conditions": [{"type": "DisruptionAllowed", "status": if allowed > 0 { "True" } else { "False" }, "reason": if allowed > 0 { "SufficientPods" } else { "InsufficientPods" }, "message": "", "observedGeneration": 1, "lastTransitionTime": later}],
                },
            }),
        ));
    }
    if app.replicas >= 3 {
        let utilization: u64 = rng.random_range(20..95);
        out.push(companion(
            Resource::HorizontalPodAutoscalers,
            ns,
            json!({
                "kind": "HorizontalPodAutoscaler",
                "apiVersion": "autoscaling/v2",
                "metadata": metadata(name, ns, &manifests::uid(&mut rng), &created, json!({"labels": labels})),
                "spec": {
                    "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                    "minReplicas": (app.replicas / 2).max(1),
                    "maxReplicas": app.replicas * 2,
                    "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}],
                },
                "status": {
                    "currentReplicas": app.replicas,
                    "desiredReplicas": app.replicas,
                    "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": utilization, "averageValue": format!("{}m", utilization * 25 / 10)}}}],
                    "conditions": [
                        {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale", "message": "recommended size matches current size", "lastTransitionTime": later},
                        {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound", "message": "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)", "lastTransitionTime": later},
                    ],
                },
            }),
        ));
    }
    if matches!(app.tier, "frontend" | "edge") {
        let host = format!("{name}.{ns}.example.com");
        out.push(companion(
            Resource::Ingresses,
            ns,
            json!({
                "kind": "Ingress",
                "apiVersion": "networking.k8s.io/v1",
                "metadata": metadata(name, ns, &manifests::uid(&mut rng), &created, json!({"labels": labels, "generation": 1, "annotations": {"nginx.ingress.kubernetes.io/ssl-redirect": "true"}})),
                "spec": {
                    "ingressClassName": "nginx",
                    "tls": [{"hosts": [host], "secretName": format!("{}-tls", app.team)}],
                    "rules": [{"host": host, "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {"service": {"name": name, "port": {"name": "http"}}}}]}}],
                },
                "status": {"loadBalancer": {"ingress": [{"hostname": "a1b2c3d4e5f6-1234567890.eu-west-1.elb.amazonaws.com"}]}},
            }),
        ));
    }
    out.push(companion(
        Resource::Events,
        ns,
        core_event(
            &mut rng,
            ns,
            ("Deployment", name, &app.deployment_uid, "apps/v1"),
            "Normal",
            "ScalingReplicaSet",
            &format!(
                "Scaled up replica set {} to {} from 0",
                app.replicaset, app.replicas
            ),
            "deployment-controller",
            app.created + 3_600,
            1,
        ),
    ));
    for pod in &app.pods {
        let Some(problem) = pod.problem else {
            continue;
        };
        let (reason, message, component) = match problem {
            "Pending" => (
                "FailedScheduling",
                "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.".to_string(),
                "default-scheduler",
            ),
            _ => (
                "BackOff",
                "Back-off restarting failed container app in pod ".to_string() + &format!("{}_{ns}({})", pod.name, pod.uid),
                "kubelet",
            ),
        };
        let count = rng.random_range(3..60);
        out.push(companion(
            Resource::Events,
            ns,
            core_event(
                &mut rng,
                ns,
                ("Pod", &pod.name, &pod.uid, "v1"),
                "Warning",
                reason,
                &message,
                component,
                app.created + 3_700,
                count,
            ),
        ));
    }
    if let Some(pod) = app.pods.first() {
        let at = manifests::timestamp(app.created + 3_600);
        let event_name = format!("{}.{}", pod.name, manifests::hex(&mut rng, 16));
        let micro = format!(
            "{}.{:06}Z",
            at.trim_end_matches('Z'),
            rng.random_range(0..1_000_000)
        );
        out.push(companion(
            Resource::EventsV1,
            ns,
            json!({
                "kind": "Event",
                "apiVersion": "events.k8s.io/v1",
                "metadata": meta(&event_name, ns, &manifests::uid(&mut rng), &at),
                "eventTime": micro,
                "reportingController": "default-scheduler",
                "reportingInstance": "default-scheduler-ip-10-0-0-10",
                "action": "Binding",
                "reason": "Scheduled",
                "regarding": {"kind": "Pod", "namespace": ns, "name": pod.name, "uid": pod.uid, "apiVersion": "v1"},
                "note": format!("Successfully assigned {ns}/{} to {}", pod.name, pod.node),
                "type": "Normal",
            }),
        ));
    }
    out
}

/// `meta` with the members of `extra` (labels, annotations, owners...).
fn metadata(name: &str, namespace: &str, uid: &str, created: &str, extra: Value) -> Value {
    let mut m = meta(name, namespace, uid, created);
    if let (Some(m), Value::Object(extra)) = (m.as_object_mut(), extra) {
        m.extend(extra);
    }
    m
}

fn endpoints(app: &AppSummary, at: &str, rng: &mut StdRng) -> Value {
    let address = |p: &PodSummary| json!({"ip": p.ip, "nodeName": p.node, "targetRef": {"kind": "Pod", "namespace": app.namespace, "name": p.name, "uid": p.uid}});
    let ready: Vec<Value> = app.pods.iter().filter(|p| p.ready).map(address).collect();
    let not_ready: Vec<Value> = app.pods.iter().filter(|p| !p.ready).map(address).collect();
    let mut subset = json!({"ports": [
        {"name": "http", "port": 8080, "protocol": "TCP"},
        {"name": "metrics", "port": 9090, "protocol": "TCP"},
    ]});
    if !ready.is_empty() {
        subset["addresses"] = json!(ready);
    }
    if !not_ready.is_empty() {
        subset["notReadyAddresses"] = json!(not_ready);
    }
    json!({
        "kind": "Endpoints",
        "apiVersion": "v1",
        "metadata": metadata(&app.name, &app.namespace, &manifests::uid(rng), at, json!({"labels": {"app": app.name, "team": app.team},
            "annotations": {"endpoints.kubernetes.io/last-change-trigger-time": at}})),
        "subsets": if app.pods.is_empty() { json!([]) } else { json!([subset]) },
    })
}

fn endpoint_slice(app: &AppSummary, service_uid: &str, at: &str, rng: &mut StdRng) -> Value {
    let endpoints: Vec<Value> = app
        .pods
        .iter()
        .map(|p| {
            json!({
                "addresses": [p.ip],
                "conditions": {"ready": p.ready, "serving": p.ready, "terminating": false},
                "nodeName": p.node,
                "targetRef": {"kind": "Pod", "namespace": app.namespace, "name": p.name, "uid": p.uid},
            })
        })
        .collect();
    let name = format!("{}-{}", app.name, manifests::safe_suffix(rng, 5));
    json!({
        "kind": "EndpointSlice",
        "apiVersion": "discovery.k8s.io/v1",
        "metadata": metadata(&name, &app.namespace, &manifests::uid(rng), at, json!({"labels": {
                "app": app.name,
                "team": app.team,
                "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
                "kubernetes.io/service-name": app.name,
            },
            "annotations": {"endpoints.kubernetes.io/last-change-trigger-time": at},
            "generateName": format!("{}-", app.name),
            "generation": 1,
            "ownerReferences": owner("v1", "Service", &app.name, service_uid)})),
        "addressType": "IPv4",
        "endpoints": endpoints,
        "ports": [
            {"name": "http", "port": 8080, "protocol": "TCP"},
            {"name": "metrics", "port": 9090, "protocol": "TCP"},
        ],
    })
}

/// The Endpoints and EndpointSlice the controllers keep for the database's headless
/// Service: its `pods` (none unless the workload pods are seeded) by their IPs, ready ones
/// as addresses, as the sim's endpoints controller writes them once a pod changes.
fn db_endpoints(
    ns: &str,
    db: &str,
    team: &str,
    service_uid: &str,
    pods: &[&Value],
    at: &str,
    rng: &mut StdRng,
) -> (Value, Value) {
    let ready = |p: &Value| {
        p["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
    };
    let target = |p: &Value| json!({"kind": "Pod", "namespace": ns, "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]});
    let address = |p: &&Value| json!({"ip": p["status"]["podIP"], "hostname": p["spec"]["hostname"], "nodeName": p["spec"]["nodeName"], "targetRef": target(p)});
    let port = json!({"name": "postgres", "port": 5432, "protocol": "TCP"});
    let mut subset = json!({"ports": [port]});
    let addresses: Vec<Value> = pods.iter().filter(|p| ready(p)).map(address).collect();
    let not_ready: Vec<Value> = pods.iter().filter(|p| !ready(p)).map(address).collect();
    if !addresses.is_empty() {
        subset["addresses"] = json!(addresses);
    }
    if !not_ready.is_empty() {
        subset["notReadyAddresses"] = json!(not_ready);
    }
    let labels = json!({"app": db, "team": team, "service.kubernetes.io/headless": ""});
    let endpoints = json!({
        "kind": "Endpoints",
        "apiVersion": "v1",
        "metadata": metadata(db, ns, &manifests::uid(rng), at, json!({"labels": labels,
            "annotations": {"endpoints.kubernetes.io/last-change-trigger-time": at}})),
        "subsets": if pods.is_empty() { json!([]) } else { json!([subset]) },
    });
    let slice_endpoints: Vec<Value> = pods
        .iter()
        .map(|p| {
            json!({
                "addresses": [p["status"]["podIP"]],
                "conditions": {"ready": ready(p), "serving": ready(p), "terminating": false},
                "hostname": p["spec"]["hostname"],
                "nodeName": p["spec"]["nodeName"],
                "targetRef": target(p),
            })
        })
        .collect();
    let mut slice_labels = labels;
    slice_labels["endpointslice.kubernetes.io/managed-by"] =
        json!("endpointslice-controller.k8s.io");
    slice_labels["kubernetes.io/service-name"] = json!(db);
    let slice = json!({
        "kind": "EndpointSlice",
        "apiVersion": "discovery.k8s.io/v1",
        "metadata": metadata(&format!("{db}-{}", manifests::safe_suffix(rng, 5)), ns, &manifests::uid(rng), at, json!({
            "labels": slice_labels,
            "annotations": {"endpoints.kubernetes.io/last-change-trigger-time": at},
            "generateName": format!("{db}-"),
            "generation": 1,
            "ownerReferences": owner("v1", "Service", db, service_uid)})),
        "addressType": "IPv4",
        "endpoints": slice_endpoints,
        "ports": [port],
    });
    (endpoints, slice)
}

/// A simple pod template for the workloads whose pods are not generated.
fn template(labels: &Value, name: &str, image: &str, port: u16) -> Value {
    json!({
        "metadata": {"labels": labels},
        "spec": {
            "containers": [{
                "name": name,
                "image": image,
                "ports": [{"containerPort": port, "protocol": "TCP"}],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent",
            }],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "schedulerName": "default-scheduler",
            "securityContext": {},
        },
    })
}

/// A ControllerRevision of `owner` (StatefulSet or DaemonSet) holding its template, named by
/// the template's hash as the controllers name theirs.
fn controller_revision(
    rng: &mut StdRng,
    namespace: &str,
    owner_kind: &str,
    owner_name: &str,
    owner_uid: &str,
    template: &Value,
    created: &str,
) -> Value {
    let hash = manifests::template_hash(template);
    let name = format!("{owner_name}-{hash}");
    let mut labels = template["metadata"]["labels"].clone();
    labels["controller.kubernetes.io/hash"] = json!(hash);
    json!({
        "kind": "ControllerRevision",
        "apiVersion": "apps/v1",
        "metadata": metadata(&name, namespace, &manifests::uid(rng), created, json!({
            "labels": labels,
            "ownerReferences": owner("apps/v1", owner_kind, owner_name, owner_uid),
        })),
        "data": {"spec": {"template": {"$patch": "replace", "metadata": template["metadata"], "spec": template["spec"]}}},
        "revision": 1,
    })
}

/// An application namespace's database StatefulSet (with its headless Service, claims,
/// volumes and revision) and its nightly report CronJob with the two Jobs it last ran.
pub fn for_namespace(
    namespace: &str,
    team: &str,
    seed: u64,
    born: i64,
    nodes: &Nodes<'_>,
    ips: u64,
) -> Vec<Companion> {
    let mut rng = StdRng::seed_from_u64(seed ^ COMPANIONS_STREAM);
    let mut pods_rng = StdRng::seed_from_u64(seed ^ PODS_STREAM);
    let ns = namespace;
    let created = manifests::timestamp(born);
    let mut out = Vec::new();
    let db = format!("{team}-db");
    let labels = json!({"app": db, "team": team});
    let sts_uid = manifests::uid(&mut rng);
    let tpl = template(&labels, "postgres", "docker.io/library/postgres:16.4", 5432);
    let replicas = 3;
    let service_uid = manifests::uid(&mut rng);
    out.push(companion(
        Resource::Services,
        ns,
        json!({
            "kind": "Service",
            "apiVersion": "v1",
            "metadata": metadata(&db, ns, &service_uid, &created, json!({"labels": labels})),
            "spec": {"type": "ClusterIP", "clusterIP": "None", "clusterIPs": ["None"], "selector": {"app": db}, "ports": [{"name": "postgres", "port": 5432, "targetPort": 5432, "protocol": "TCP"}], "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "sessionAffinity": "None", "internalTrafficPolicy": "Cluster"},
            "status": {"loadBalancer": {}},
        }),
    ));
    let revision = controller_revision(&mut rng, ns, "StatefulSet", &db, &sts_uid, &tpl, &created);
    let revision_name = revision["metadata"]["name"]
        .as_str()
        .unwrap_or("")
        .to_string();
    // Its status counts the pods it has, all Running and Ready (none when the seed leaves
    // the StatefulSets' pods out).
    let pods = if nodes.pods { replicas } else { 0 };
    let sts = json!({
        "kind": "StatefulSet",
        "apiVersion": "apps/v1",
        "metadata": metadata(&db, ns, &sts_uid, &created, json!({"labels": labels, "generation": 1})),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": db}},
            "serviceName": db,
            "template": tpl,
            "volumeClaimTemplates": [{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "gp3", "resources": {"requests": {"storage": "20Gi"}}, "volumeMode": "Filesystem"}, "status": {"phase": "Pending"}}],
            "podManagementPolicy": "OrderedReady",
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            "minReadySeconds": 0,
            "revisionHistoryLimit": 10,
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
        },
        "status": {"observedGeneration": 1, "replicas": pods, "readyReplicas": pods, "currentReplicas": pods, "updatedReplicas": pods, "availableReplicas": pods, "currentRevision": revision_name, "updateRevision": revision_name, "collisionCount": 0},
    });
    out.push(companion(Resource::StatefulSets, ns, sts.clone()));
    out.push(companion(Resource::ControllerRevisions, ns, revision));
    // Its pods, each started once the one before was ready, each on a node in its
    // volume's zone (the volumes' zones go round as the nodes' do).
    for i in (0..replicas).filter(|_| nodes.pods) {
        let pod_name = format!("{db}-{i}");
        let template = manifests::stateful_pod_template(&sts, &pod_name);
        let labels = manifests::stateful_pod_labels(&revision_name, &pod_name, i as u64);
        let node = nodes.in_zone(i % 3, &mut pods_rng);
        out.push(workload_pod(
            &mut pods_rng,
            &sts,
            &template,
            &labels,
            &pod_name,
            node,
            &nodes.pod_ip(node, ips + i as u64),
            born + 30 + 40 * i as i64,
            manifests::PodState::Running,
        ));
    }
    let db_pods: Vec<&Value> = out
        .iter()
        .filter(|c| c.resource == Resource::Pods)
        .map(|c| &c.value)
        .collect();
    let mut endpoints_rng = StdRng::seed_from_u64(seed ^ DB_ENDPOINTS_STREAM);
    let (endpoints, slice) = db_endpoints(
        ns,
        &db,
        team,
        &service_uid,
        &db_pods,
        &created,
        &mut endpoints_rng,
    );
    out.push(companion(Resource::Endpoints, ns, endpoints));
    out.push(companion(Resource::EndpointSlices, ns, slice));
    for i in 0..replicas {
        let claim = format!("data-{db}-{i}");
        let claim_uid = manifests::uid(&mut rng);
        let volume = format!("pvc-{claim_uid}");
        out.push(companion(
            Resource::PersistentVolumeClaims,
            ns,
            json!({
                "kind": "PersistentVolumeClaim",
                "apiVersion": "v1",
                "metadata": metadata(&claim, ns, &claim_uid, &created, json!({
                    "labels": {"app": db},
                    "annotations": {"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes", "volume.kubernetes.io/storage-provisioner": "ebs.csi.aws.com"},
                    "finalizers": ["kubernetes.io/pvc-protection"],
                })),
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "20Gi"}}, "storageClassName": "gp3", "volumeMode": "Filesystem", "volumeName": volume},
                "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "20Gi"}},
            }),
        ));
        let zone = ["eu-west-1a", "eu-west-1b", "eu-west-1c"][i % 3];
        out.push(companion(
            Resource::PersistentVolumes,
            "",
            json!({
                "kind": "PersistentVolume",
                "apiVersion": "v1",
                "metadata": metadata(&volume, "", &manifests::uid(&mut rng), &created, json!({"annotations": {"pv.kubernetes.io/provisioned-by": "ebs.csi.aws.com", "volume.kubernetes.io/provisioner-deletion-secret-name": "", "volume.kubernetes.io/provisioner-deletion-secret-namespace": ""},
                    "finalizers": ["external-provisioner.volume.kubernetes.io/finalizer", "kubernetes.io/pv-protection"]})),
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "capacity": {"storage": "20Gi"},
                    "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": claim, "namespace": ns, "uid": claim_uid},
                    "csi": {"driver": "ebs.csi.aws.com", "fsType": "ext4", "volumeHandle": format!("vol-{}", manifests::hex(&mut rng, 17))},
                    "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}]}},
                    "persistentVolumeReclaimPolicy": "Delete",
                    "storageClassName": "gp3",
                    "volumeMode": "Filesystem",
                },
                "status": {"phase": "Bound", "lastPhaseTransitionTime": created},
            }),
        ));
    }
    let report = format!("{team}-report");
    let cron_uid = manifests::uid(&mut rng);
    let job_labels = json!({"app": report, "team": team});
    let job_template = template(
        &job_labels,
        "report",
        &format!("registry.example.com/{team}/report:1.0.0"),
        8080,
    );
    let mut job_template = job_template;
    job_template["spec"]["restartPolicy"] = json!("OnFailure");
    // The last two nightly runs, a day apart, before the birth time's midnight.
    let midnight = born - born.rem_euclid(86_400) + 86_400 * 20;
    let mut jobs = Vec::new();
    for day in [2i64, 1] {
        let start = midnight - day * 86_400 + 2 * 3_600;
        let job_name = format!("{report}-{}", start / 60);
        let job_uid = manifests::uid(&mut rng);
        let took = rng.random_range(40..400);
        let mut labels = job_labels.clone();
        labels["batch.kubernetes.io/controller-uid"] = json!(job_uid);
        labels["batch.kubernetes.io/job-name"] = json!(job_name);
        labels["controller-uid"] = json!(job_uid);
        labels["job-name"] = json!(job_name);
        let mut tpl = job_template.clone();
        tpl["metadata"]["labels"] = labels.clone();
        let started = manifests::timestamp(start);
        let done = manifests::timestamp(start + took);
        let job = json!({
            "kind": "Job",
            "apiVersion": "batch/v1",
            "metadata": metadata(&job_name, ns, &job_uid, &started, json!({"labels": labels,
                "annotations": {"batch.kubernetes.io/cronjob-scheduled-timestamp": started},
                "generation": 1,
                "ownerReferences": owner("batch/v1", "CronJob", &report, &cron_uid)})),
            "spec": {
                "parallelism": 1,
                "completions": 1,
                "backoffLimit": 6,
                "completionMode": "NonIndexed",
                "suspend": false,
                "podReplacementPolicy": "TerminatingOrFailed",
                "manualSelector": false,
                "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": job_uid}},
                "template": tpl,
            },
            "status": {
                "startTime": started,
                "completionTime": done,
                "succeeded": 1,
                "ready": 0,
                "terminating": 0,
                "uncountedTerminatedPods": {},
                "conditions": [
                    {"type": "SuccessCriteriaMet", "status": "True", "lastProbeTime": done, "lastTransitionTime": done, "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods"},
                    {"type": "Complete", "status": "True", "lastProbeTime": done, "lastTransitionTime": done, "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods"},
                ],
            },
        });
        jobs.push(companion(Resource::Jobs, ns, job.clone()));
        if !nodes.pods {
            continue;
        }
        // Its one pod, run to completion and left there, as the Job controller leaves it.
        let pod_name = format!("{job_name}-{}", manifests::safe_suffix(&mut pods_rng, 5));
        let node = nodes.any(&mut pods_rng);
        jobs.push(workload_pod(
            &mut pods_rng,
            &job,
            &tpl,
            &[],
            &pod_name,
            node,
            &nodes.pod_ip(node, ips + replicas as u64 + day as u64),
            start,
            manifests::PodState::Succeeded { ran: took - 8 },
        ));
    }
    let last = manifests::timestamp(midnight - 86_400 + 2 * 3_600);
    out.push(companion(
        Resource::CronJobs,
        ns,
        json!({
            "kind": "CronJob",
            "apiVersion": "batch/v1",
            "metadata": metadata(&report, ns, &cron_uid, &created, json!({"labels": job_labels, "generation": 1})),
            "spec": {
                "schedule": "0 2 * * *",
                "timeZone": "Etc/UTC",
                "concurrencyPolicy": "Forbid",
                "suspend": false,
                "successfulJobsHistoryLimit": 3,
                "failedJobsHistoryLimit": 1,
                "jobTemplate": {"metadata": {}, "spec": {"backoffLimit": 6, "template": job_template}},
            },
            "status": {"lastScheduleTime": last, "lastSuccessfulTime": last},
        }),
    ));
    out.extend(jobs);
    out
}

/// The cluster's own objects: the `kubernetes` Service and its endpoints, kube-dns,
/// kube-system's DaemonSets, each node's Lease and the control plane's, and in every
/// namespace the `default` ServiceAccount and the `kube-root-ca.crt` ConfigMap.
pub fn for_cluster(namespaces: &[&str], nodes: &Nodes<'_>, seed: u64, born: i64) -> Vec<Companion> {
    let mut rng = StdRng::seed_from_u64(seed ^ COMPANIONS_STREAM ^ 0x5157);
    let mut pods_rng = StdRng::seed_from_u64(seed ^ PODS_STREAM ^ 0x5157);
    let created = manifests::timestamp(born);
    let mut out = Vec::new();
    let root_ca = format!(
        "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
        manifests::hex(&mut rng, 64)
    );
    for ns in namespaces {
        out.push(companion(
            Resource::ServiceAccounts,
            ns,
            json!({"kind": "ServiceAccount", "apiVersion": "v1", "metadata": meta("default", ns, &manifests::uid(&mut rng), &created)}),
        ));
        out.push(companion(
            Resource::ConfigMaps,
            ns,
            json!({
                "kind": "ConfigMap",
                "apiVersion": "v1",
                "metadata": metadata("kube-root-ca.crt", ns, &manifests::uid(&mut rng), &created, json!({"annotations": {"kubernetes.io/description": "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."}})),
                "data": {"ca.crt": root_ca},
            }),
        ));
    }
    let api_ip = "172.20.0.1";
    out.push(companion(
        Resource::Services,
        "default",
        json!({
            "kind": "Service",
            "apiVersion": "v1",
            "metadata": metadata("kubernetes", "default", &manifests::uid(&mut rng), &created, json!({"labels": {"component": "apiserver", "provider": "kubernetes"}})),
            "spec": {"type": "ClusterIP", "clusterIP": api_ip, "clusterIPs": [api_ip], "ports": [{"name": "https", "port": 443, "targetPort": 443, "protocol": "TCP"}], "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "sessionAffinity": "None", "internalTrafficPolicy": "Cluster"},
            "status": {"loadBalancer": {}},
        }),
    ));
    out.push(companion(
        Resource::Endpoints,
        "default",
        json!({
            "kind": "Endpoints",
            "apiVersion": "v1",
            "metadata": metadata("kubernetes", "default", &manifests::uid(&mut rng), &created, json!({"labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}})),
            "subsets": [{"addresses": [{"ip": "10.0.0.10"}, {"ip": "10.0.1.10"}], "ports": [{"name": "https", "port": 443, "protocol": "TCP"}]}],
        }),
    ));
    out.push(companion(
        Resource::EndpointSlices,
        "default",
        json!({
            "kind": "EndpointSlice",
            "apiVersion": "discovery.k8s.io/v1",
            "metadata": metadata("kubernetes", "default", &manifests::uid(&mut rng), &created, json!({"labels": {"kubernetes.io/service-name": "kubernetes"}, "generation": 1})),
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.10"], "conditions": {"ready": true}}, {"addresses": ["10.0.1.10"], "conditions": {"ready": true}}],
            "ports": [{"name": "https", "port": 443, "protocol": "TCP"}],
        }),
    ));
    out.push(companion(
        Resource::Services,
        "kube-system",
        json!({
            "kind": "Service",
            "apiVersion": "v1",
            "metadata": metadata("kube-dns", "kube-system", &manifests::uid(&mut rng), &created, json!({"labels": {"k8s-app": "kube-dns", "kubernetes.io/name": "CoreDNS"}})),
            "spec": {"type": "ClusterIP", "clusterIP": "172.20.0.10", "clusterIPs": ["172.20.0.10"], "selector": {"k8s-app": "kube-dns"}, "ports": [{"name": "dns", "port": 53, "targetPort": 53, "protocol": "UDP"}, {"name": "dns-tcp", "port": 53, "targetPort": 53, "protocol": "TCP"}], "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "sessionAffinity": "None", "internalTrafficPolicy": "Cluster"},
            "status": {"loadBalancer": {}},
        }),
    ));
    let count = nodes.names.len();
    for (name, image, port) in [
        (
            "kube-proxy",
            "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/kube-proxy:v1.32.0-eksbuild.2",
            10249u16,
        ),
        (
            "aws-node",
            "602401143452.dkr.ecr.eu-west-1.amazonaws.com/amazon-k8s-cni:v1.19.2-eksbuild.1",
            61678,
        ),
    ] {
        let labels = json!({"k8s-app": name});
        let uid = manifests::uid(&mut rng);
        let mut tpl = template(&labels, name, image, port);
        tpl["spec"]["hostNetwork"] = json!(true);
        tpl["spec"]["priorityClassName"] = json!("system-node-critical");
        tpl["spec"]["nodeSelector"] = json!({"kubernetes.io/os": "linux"});
        out.push(companion(
            Resource::ControllerRevisions,
            "kube-system",
            controller_revision(
                &mut rng,
                "kube-system",
                "DaemonSet",
                name,
                &uid,
                &tpl,
                &created,
            ),
        ));
        let ds = json!({
            "kind": "DaemonSet",
            "apiVersion": "apps/v1",
            "metadata": metadata(name, "kube-system", &uid, &created, json!({"labels": labels, "generation": 1, "annotations": {"deprecated.daemonset.template.generation": "1"}})),
            "spec": {"selector": {"matchLabels": labels}, "template": tpl, "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%", "maxSurge": 0}}, "revisionHistoryLimit": 10},
            "status": {"currentNumberScheduled": count, "desiredNumberScheduled": count, "numberAvailable": count, "numberMisscheduled": 0, "numberReady": count, "observedGeneration": 1, "updatedNumberScheduled": count},
        });
        out.push(companion(Resource::DaemonSets, "kube-system", ds.clone()));
        // Its pod on every node, made once the node joined; on the host's network, so
        // with the node's IP.
        let labels = [
            ("controller-revision-hash", manifests::template_hash(&tpl)),
            ("pod-template-generation", "1".to_string()),
        ];
        for (i, node) in nodes.names.iter().enumerate().filter(|_| nodes.pods) {
            let pod_name = format!("{name}-{}", manifests::safe_suffix(&mut pods_rng, 5));
            out.push(workload_pod(
                &mut pods_rng,
                &ds,
                &manifests::daemon_pod_template(&tpl, node),
                &labels,
                &pod_name,
                node,
                &manifests::node_ip(node),
                nodes.born + 37 * i as i64 + 20,
                manifests::PodState::Running,
            ));
        }
    }
    let renew = manifests::timestamp(born + 86_400 * 20);
    for node in nodes.names {
        out.push(companion(
            Resource::Leases,
            "kube-node-lease",
            json!({
                "kind": "Lease",
                "apiVersion": "coordination.k8s.io/v1",
                "metadata": metadata(node, "kube-node-lease", &manifests::uid(&mut rng), &created, json!({"ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": node, "uid": manifests::uid(&mut rng)}]})),
                "spec": {"holderIdentity": node, "leaseDurationSeconds": 40, "renewTime": format!("{}.000000Z", renew.trim_end_matches('Z'))},
            }),
        ));
    }
    for name in [
        "kube-controller-manager",
        "kube-scheduler",
        "cloud-controller-manager",
    ] {
        let holder = format!(
            "ip-10-0-0-10.eu-west-1.compute.internal_{}",
            manifests::uid(&mut rng)
        );
        out.push(companion(
            Resource::Leases,
            "kube-system",
            json!({
                "kind": "Lease",
                "apiVersion": "coordination.k8s.io/v1",
                "metadata": meta(name, "kube-system", &manifests::uid(&mut rng), &created),
                "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15, "acquireTime": format!("{}.000000Z", created.trim_end_matches('Z')), "renewTime": format!("{}.000000Z", renew.trim_end_matches('Z')), "leaseTransitions": rng.random_range(0..5)},
            }),
        ));
    }
    out
}
