//! The JSON shapes of the objects the sim serves, modelled on what a real cluster sends
//! (see `../shared/fixtures/pod-realistic.json`), managedFields included: clients have to cope
//! with their size.

use rand::Rng;
use serde_json::{Map, Value, json};

use super::capacity::{self, AppRequests};

/// Characters Kubernetes uses for generated name suffixes and template hashes
/// (`rand.SafeEncodeString`: no vowels, no look-alikes).
const SAFE_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// A random suffix as `generateName` and pod-template-hash use.
pub fn safe_suffix(rng: &mut impl Rng, len: usize) -> String {
    (0..len)
        .map(|_| SAFE_ALPHABET[rng.random_range(0..SAFE_ALPHABET.len())] as char)
        .collect()
}

/// A stable hash of a pod template, spelled as the controllers spell pod-template-hash and
/// controller-revision-hash (no vowels, so it never spells a word). The seeded workloads and
/// the controllers both name their revisions by it, so a controller finds a seeded
/// workload's revision its own.
pub fn template_hash(template: &Value) -> String {
    use std::hash::{Hash, Hasher};
    // A fixed-key hasher, so the same template gets the same name across restarts.
    let mut hasher = std::hash::DefaultHasher::new();
    template.to_string().hash(&mut hasher);
    let mut n = hasher.finish();
    (0..10)
        .map(|_| {
            let c = SAFE_ALPHABET[(n % SAFE_ALPHABET.len() as u64) as usize] as char;
            n /= SAFE_ALPHABET.len() as u64;
            c
        })
        .collect()
}

/// The tolerations the DaemonSet controller gives every daemon pod, so node conditions and
/// cordons do not keep it off its node.
const DAEMON_TOLERATIONS: [(&str, &str); 6] = [
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
];

/// A DaemonSet's template as its pod for `node` gets it: tied to the node by required node
/// affinity on `metadata.name`, with the daemon tolerations.
pub fn daemon_pod_template(template: &Value, node: &str) -> Value {
    let mut template = template.clone();
    template["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = json!({
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}],
    });
    let mut tolerations = template["spec"]["tolerations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for (key, effect) in DAEMON_TOLERATIONS {
        if !tolerations.iter().any(|t| t["key"] == key) {
            tolerations.push(json!({"key": key, "operator": "Exists", "effect": effect}));
        }
    }
    template["spec"]["tolerations"] = json!(tolerations);
    template
}

/// A StatefulSet's template as its pod `pod_name` gets it: a volume per claim template
/// (claim `CLAIM-POD`), its own hostname and the governing Service as subdomain.
pub fn stateful_pod_template(sts: &Value, pod_name: &str) -> Value {
    let mut template = sts["spec"]["template"].clone();
    for claim in sts["spec"]["volumeClaimTemplates"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let claim_name = claim["metadata"]["name"].as_str().unwrap_or("data");
        let volume = json!({"name": claim_name, "persistentVolumeClaim": {"claimName": format!("{claim_name}-{pod_name}")}});
        match template["spec"]["volumes"].as_array_mut() {
            Some(volumes) => {
                volumes.retain(|v| v["name"] != claim_name);
                volumes.push(volume);
            }
            None => template["spec"]["volumes"] = json!([volume]),
        }
    }
    template["spec"]["hostname"] = json!(pod_name);
    if let Some(service) = sts["spec"]["serviceName"]
        .as_str()
        .filter(|s| !s.is_empty())
    {
        template["spec"]["subdomain"] = json!(service);
    }
    template
}

/// The labels the StatefulSet controller adds to pod `ordinal` at `revision`.
pub fn stateful_pod_labels(
    revision: &str,
    pod_name: &str,
    ordinal: u64,
) -> [(&'static str, String); 3] {
    [
        ("controller-revision-hash", revision.to_string()),
        ("statefulset.kubernetes.io/pod-name", pod_name.to_string()),
        ("apps.kubernetes.io/pod-index", ordinal.to_string()),
    ]
}

/// The InternalIP of a generated node, from its name (`ip-10-a-b-c...`).
pub fn node_ip(node: &str) -> String {
    node.strip_prefix("ip-")
        .and_then(|rest| rest.split('.').next())
        .map(|ip| ip.replace('-', "."))
        .unwrap_or_else(|| "10.0.0.1".to_string())
}

/// Pod IPs are handed out from 10.64.0.0/10 in order, so they never collide.
pub fn pod_ip(n: u64) -> String {
    let n = n % (1 << 22);
    format!("10.{}.{}.{}", 64 + (n >> 16), (n >> 8) & 255, n & 255)
}

/// A version-4 UUID string.
pub fn uid(rng: &mut impl Rng) -> String {
    let b: [u8; 16] = rng.random();
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
        u16::from_be_bytes([b[4], b[5]]),
        u16::from_be_bytes([b[6], b[7]]) & 0x0fff,
        (u16::from_be_bytes([b[8], b[9]]) & 0x3fff) | 0x8000,
        u64::from_be_bytes([0, 0, b[10], b[11], b[12], b[13], b[14], b[15]]),
    )
}

/// `n` random hex digits (image digests, container IDs).
pub fn hex(rng: &mut impl Rng, n: usize) -> String {
    (0..n)
        .map(|_| char::from_digit(rng.random_range(0..16), 16).unwrap_or('0'))
        .collect()
}

/// RFC 3339 at whole seconds, as metav1.Time serializes.
pub fn timestamp(unix_seconds: i64) -> String {
    jiff::Timestamp::from_second(unix_seconds)
        .map(|t| t.to_string())
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".to_string())
}

/// Now, in whole seconds.
pub fn now_seconds() -> i64 {
    jiff::Timestamp::now().as_second()
}

/// The FieldsV1 set of every field present in `value`, the way field managers record
/// ownership (lists are recorded as owned wholesale, which is how atomic lists look).
pub fn fields_v1(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                let inner = fields_v1(v);
                out.insert(format!("f:{k}"), inner);
            }
            if !out.is_empty() {
                out.insert(".".into(), json!({}));
            }
            Value::Object(out)
        }
        _ => json!({}),
    }
}

/// One managedFields entry.
pub fn managed_entry(
    manager: &str,
    api_version: &str,
    time: &str,
    fields: Value,
    subresource: Option<&str>,
) -> Value {
    let mut entry = json!({
        "manager": manager,
        "operation": "Update",
        "apiVersion": api_version,
        "time": time,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    });
    if let Some(sub) = subresource {
        entry["subresource"] = json!(sub);
    }
    entry
}

pub fn namespace(name: &str, uid: &str, created: &str, labels: Value) -> Value {
    let mut all_labels = json!({"kubernetes.io/metadata.name": name});
    if let (Some(all), Some(extra)) = (all_labels.as_object_mut(), labels.as_object()) {
        all.extend(extra.clone());
    }
    let fields = json!({"f:metadata": {"f:labels": fields_v1(&all_labels)}});
    json!({
        "kind": "Namespace",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "uid": uid,
            "creationTimestamp": created,
            "labels": all_labels,
            "managedFields": [managed_entry("kubectl-create", "v1", created, fields, None)],
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    })
}

/// What describes a Secret; `data` holds the plain values, encoded here as the API does.
pub struct SecretSpec<'a> {
    pub namespace: &'a str,
    pub name: &'a str,
    pub uid: &'a str,
    pub created: &'a str,
    pub type_: &'a str,
    pub data: &'a [(&'a str, String)],
    pub annotations: Value,
    /// Written by `kubectl apply`, so it carries the last-applied annotation.
    pub applied: bool,
}

pub fn secret(s: &SecretSpec<'_>) -> Value {
    use base64::Engine as _;
    let b64 = &base64::engine::general_purpose::STANDARD;
    let data: Map<String, Value> = s
        .data
        .iter()
        .map(|(k, v)| ((*k).to_string(), json!(b64.encode(v))))
        .collect();
    let mut annotations = s.annotations.clone();
    if s.applied {
        // As kubectl apply records it: the whole manifest, values included.
        let applied = json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": s.name, "namespace": s.namespace},
            "type": s.type_,
            "data": data,
        });
        annotations["kubectl.kubernetes.io/last-applied-configuration"] =
            json!(format!("{applied}\n"));
    }
    let manager = if s.applied {
        "kubectl-client-side-apply"
    } else {
        "kubectl-create"
    };
    let fields = json!({
        "f:data": fields_v1(&Value::Object(data.clone())),
        "f:metadata": {"f:annotations": fields_v1(&annotations)},
        "f:type": {},
    });
    let mut value = json!({
        "kind": "Secret",
        "apiVersion": "v1",
        "metadata": {
            "name": s.name,
            "namespace": s.namespace,
            "uid": s.uid,
            "creationTimestamp": s.created,
            "managedFields": [managed_entry(manager, "v1", s.created, fields, None)],
        },
        "type": s.type_,
        "data": data,
    });
    if annotations.as_object().is_some_and(|a| !a.is_empty()) {
        value["metadata"]["annotations"] = annotations;
    }
    value
}

/// What describes a node apart from its name.
pub struct NodeSpec<'a> {
    pub name: &'a str,
    pub uid: &'a str,
    pub created: &'a str,
    pub internal_ip: &'a str,
    pub zone: &'a str,
    pub instance_type: &'a str,
    pub pod_cidr: &'a str,
    pub cpu: u32,
    pub memory_ki: u64,
    /// How many pods the kubelet takes (`--max-pods`).
    pub pods: u64,
    pub kubelet_version: &'a str,
}

pub fn node(n: &NodeSpec<'_>) -> Value {
    let labels = json!({
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": n.instance_type,
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": n.name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": n.instance_type,
        "topology.kubernetes.io/region": "eu-west-1",
        "topology.kubernetes.io/zone": n.zone,
    });
    let capacity = json!({
        "cpu": n.cpu.to_string(),
        "ephemeral-storage": "104845292Ki",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": format!("{}Ki", n.memory_ki),
        "pods": n.pods.to_string(),
    });
    let allocatable = json!({
        "cpu": format!("{}m", capacity::allocatable_cpu_milli(n.cpu)),
        "ephemeral-storage": "95551679124",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": format!("{}Ki", capacity::allocatable_memory_ki(n.memory_ki)),
        "pods": n.pods.to_string(),
    });
    let condition = |t: &str, status: &str, reason: &str, message: &str| {
        json!({
            "type": t,
            "status": status,
            "lastHeartbeatTime": n.created,
            "lastTransitionTime": n.created,
            "reason": reason,
            "message": message,
        })
    };
    let status = json!({
        "capacity": capacity,
        "allocatable": allocatable,
        "conditions": [
            condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
            condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
        ],
        "addresses": [
            {"type": "InternalIP", "address": n.internal_ip},
            {"type": "InternalDNS", "address": n.name},
            {"type": "Hostname", "address": n.name},
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "machineID": "ec2b8a4f1f6c2d3e4a5b6c7d8e9f0a1b",
            "systemUUID": "ec2b8a4f-1f6c-2d3e-4a5b-6c7d8e9f0a1b",
            "bootID": "5c1f0d6e-2b3a-4c5d-8e9f-0a1b2c3d4e5f",
            "kernelVersion": "6.1.112-124.190.amzn2023.x86_64",
            "osImage": "Amazon Linux 2023.6.20241010",
            "containerRuntimeVersion": "containerd://1.7.22",
            "kubeletVersion": n.kubelet_version,
            "kubeProxyVersion": "",
            "operatingSystem": "linux",
            "architecture": "amd64",
        },
    });
    let spec = json!({
        "podCIDR": n.pod_cidr,
        "podCIDRs": [n.pod_cidr],
        "providerID": format!("aws:///{}/i-0{}", n.zone, &n.uid[..8]),
    });
    let kubelet_fields = json!({
        "f:metadata": {"f:labels": fields_v1(&labels)},
        "f:spec": {"f:providerID": {}},
    });
    let status_fields = json!({"f:status": fields_v1(&status)});
    json!({
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": {
            "name": n.name,
            "uid": n.uid,
            "creationTimestamp": n.created,
            "labels": labels,
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            "managedFields": [
                managed_entry("kubelet", "v1", n.created, kubelet_fields, None),
                managed_entry("kube-controller-manager", "v1", n.created, json!({"f:spec": {"f:podCIDR": {}, "f:podCIDRs": {".": {}, format!("v:\"{}\"", n.pod_cidr): {}}}}), None),
                managed_entry("kubelet", "v1", n.created, status_fields, Some("status")),
            ],
        },
        "spec": spec,
        "status": status,
    })
}

/// What describes an application's Deployment.
pub struct AppSpec<'a> {
    pub namespace: &'a str,
    pub name: &'a str,
    pub team: &'a str,
    pub tier: &'a str,
    pub image: &'a str,
    pub version: &'a str,
    pub sidecar: bool,
    pub replicas: u32,
    pub uid: &'a str,
    pub created: &'a str,
    pub revision: u32,
    pub requests: AppRequests,
}

/// The pod template a Deployment carries; ReplicaSets copy it and add the hash label.
pub fn pod_template(app: &AppSpec<'_>) -> Value {
    let mut containers = vec![json!({
        "name": "app",
        "image": app.image,
        "ports": [
            {"name": "http", "containerPort": 8080, "protocol": "TCP"},
            {"name": "metrics", "containerPort": 9090, "protocol": "TCP"},
        ],
        "env": [
            {"name": "LOG_LEVEL", "value": "info"},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
            {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}},
        ],
        "resources": {"limits": {"memory": "1Gi"}, "requests": app.requests.app.to_json()},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"}, "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": "http", "scheme": "HTTP"}, "timeoutSeconds": 1, "periodSeconds": 5, "successThreshold": 1, "failureThreshold": 3},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent",
        "securityContext": {"runAsNonRoot": true, "readOnlyRootFilesystem": true, "allowPrivilegeEscalation": false},
    })];
    if app.sidecar {
        containers.push(json!({
            "name": "istio-proxy",
            "image": "docker.io/istio/proxyv2:1.22.3",
            "args": ["proxy", "sidecar", "--domain", "$(POD_NAMESPACE).svc.cluster.local", "--proxyLogLevel=warning"],
            "resources": {"limits": {"memory": "1Gi"}, "requests": app.requests.sidecar.to_json()},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "imagePullPolicy": "IfNotPresent",
        }));
    }
    json!({
        "metadata": {
            "labels": {
                "app": app.name,
                "app.kubernetes.io/name": app.name,
                "app.kubernetes.io/part-of": app.team,
                "app.kubernetes.io/version": app.version,
                "team": app.team,
                "tier": app.tier,
            },
            "annotations": {"prometheus.io/port": "9090", "prometheus.io/scrape": "true"},
        },
        "spec": {
            "containers": containers,
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": app.name,
            "serviceAccount": app.name,
            "securityContext": {"runAsUser": 10001, "fsGroup": 10001},
            "schedulerName": "default-scheduler",
        },
    })
}

fn rollout_status(replicas: u32, ready: u32) -> Value {
    json!({
        "observedGeneration": 1,
        "replicas": replicas,
        "updatedReplicas": replicas,
        "readyReplicas": ready,
        "availableReplicas": ready,
    })
}

pub fn deployment(app: &AppSpec<'_>, template: &Value, ready: u32) -> Value {
    let spec = json!({
        "replicas": app.replicas,
        "selector": {"matchLabels": {"app": app.name}},
        "template": template,
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
        "revisionHistoryLimit": 10,
        "progressDeadlineSeconds": 600,
    });
    let labels = json!({"app": app.name, "team": app.team});
    let apply_fields =
        json!({"f:metadata": {"f:labels": fields_v1(&labels)}, "f:spec": fields_v1(&spec)});
    let mut status = rollout_status(app.replicas, ready);
    status["conditions"] = json!([
        {"type": "Available", "status": "True", "lastUpdateTime": app.created, "lastTransitionTime": app.created, "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability."},
        {"type": "Progressing", "status": "True", "lastUpdateTime": app.created, "lastTransitionTime": app.created, "reason": "NewReplicaSetAvailable", "message": format!("ReplicaSet has successfully progressed.")},
    ]);
    json!({
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "metadata": {
            "name": app.name,
            "namespace": app.namespace,
            "uid": app.uid,
            "generation": 1,
            "creationTimestamp": app.created,
            "labels": labels,
            "annotations": {"deployment.kubernetes.io/revision": app.revision.to_string()},
            "managedFields": [
                managed_entry("kubectl-client-side-apply", "apps/v1", app.created, apply_fields, None),
                managed_entry("kube-controller-manager", "apps/v1", app.created, json!({"f:status": fields_v1(&status)}), Some("status")),
            ],
        },
        "spec": spec,
        "status": status,
    })
}

/// Sets a Deployment's or ReplicaSet's ready and available counts to the `ready` pods it
/// has, as its controller counts them (no minReadySeconds: ready is available); a
/// Deployment is Available while no more than its maxUnavailable (25%, rounded down) are
/// not. For the seed, and for the churn's recounts as pods come, crash and go.
pub fn count_ready(object: &mut Value, ready: u32) {
    object["status"]["readyReplicas"] = json!(ready);
    object["status"]["availableReplicas"] = json!(ready);
    if object["kind"] != "Deployment" {
        return;
    }
    let replicas = object["spec"]["replicas"].as_u64().unwrap_or(0);
    let unavailable = replicas.saturating_sub(u64::from(ready));
    if unavailable > 0 {
        object["status"]["unavailableReplicas"] = json!(unavailable);
    } else if let Some(status) = object["status"].as_object_mut() {
        status.remove("unavailableReplicas");
    }
    let (available, reason, message) = if unavailable <= replicas / 4 {
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
    let conditions = object["status"]["conditions"].as_array_mut();
    if let Some(condition) = conditions
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Available" && c["status"] != available)
    {
        condition["status"] = json!(available);
        condition["reason"] = json!(reason);
        condition["message"] = json!(message);
    }
}

/// A ReplicaSet owned by `deployment`, with its template and the pod-template-hash label.
pub fn replicaset(
    deployment: &Value,
    hash: &str,
    uid: &str,
    replicas: u32,
    revision: u32,
    created: &str,
) -> Value {
    let d = &deployment["metadata"];
    let name = format!("{}-{hash}", d["name"].as_str().unwrap_or("app"));
    let mut template = deployment["spec"]["template"].clone();
    template["metadata"]["labels"]["pod-template-hash"] = json!(hash);
    let mut selector = deployment["spec"]["selector"].clone();
    selector["matchLabels"]["pod-template-hash"] = json!(hash);
    let mut labels = template["metadata"]["labels"].clone();
    if let Some(l) = labels.as_object_mut() {
        l.retain(|k, _| k == "app" || k == "team" || k == "pod-template-hash");
    }
    let spec = json!({"replicas": replicas, "selector": selector, "template": template});
    let status = json!({
        "replicas": replicas,
        "fullyLabeledReplicas": replicas,
        "readyReplicas": replicas,
        "availableReplicas": replicas,
        "observedGeneration": 1,
    });
    let owner_fields = json!({
        "f:metadata": {
            "f:annotations": {".": {}, "f:deployment.kubernetes.io/desired-replicas": {}, "f:deployment.kubernetes.io/max-replicas": {}, "f:deployment.kubernetes.io/revision": {}},
            "f:labels": fields_v1(&labels),
            "f:ownerReferences": {".": {}, format!("k:{{\"uid\":\"{}\"}}", d["uid"].as_str().unwrap_or("")): {}},
        },
        "f:spec": fields_v1(&spec),
    });
    json!({
        "kind": "ReplicaSet",
        "apiVersion": "apps/v1",
        "metadata": {
            "name": name,
            "namespace": d["namespace"],
            "uid": uid,
            "generation": 1,
            "creationTimestamp": created,
            "labels": labels,
            "annotations": {
                "deployment.kubernetes.io/desired-replicas": deployment["spec"]["replicas"].as_u64().unwrap_or(0).to_string(),
                "deployment.kubernetes.io/max-replicas": (deployment["spec"]["replicas"].as_u64().unwrap_or(0) + 1).to_string(),
                "deployment.kubernetes.io/revision": revision.to_string(),
            },
            "ownerReferences": [{
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": d["name"],
                "uid": d["uid"],
                "controller": true,
                "blockOwnerDeletion": true,
            }],
            "managedFields": [
                managed_entry("kube-controller-manager", "apps/v1", created, owner_fields, None),
                managed_entry("kube-controller-manager", "apps/v1", created, json!({"f:status": fields_v1(&status)}), Some("status")),
            ],
        },
        "spec": spec,
        "status": status,
    })
}

/// The lifecycle state a pod is rendered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PodState {
    /// Scheduled, containers being created.
    Pending,
    Running,
    /// Running, but the app container is crash-looping.
    CrashLoop {
        restarts: u32,
    },
    /// Its containers ran for `ran` seconds and exited 0 (a Job's pod).
    Succeeded {
        ran: i64,
    },
}

/// Builds the pods of one ReplicaSet, as its controller and the kubelet would: the parts
/// every pod shares are prepared once.
pub struct PodFactory {
    base: Value,
    controller_fields: Value,
    images: Vec<(String, String)>,
}

impl PodFactory {
    /// The pods of a ReplicaSet, from its template.
    pub fn new(rs: &Value) -> Self {
        Self::for_owner(rs, &rs["spec"]["template"], &[])
    }

    /// The pods `owner` (a decoded workload with kind and apiVersion) makes from
    /// `template`, with `labels` added to the template's, as its controller makes them:
    /// named by it (a StatefulSet's) or generated from its name (the others').
    pub fn for_owner(owner: &Value, template: &Value, labels: &[(&str, String)]) -> Self {
        let owner_meta = &owner["metadata"];
        let kind = owner["kind"].as_str().unwrap_or("ReplicaSet");
        let owner_name = owner_meta["name"].as_str().unwrap_or("pod");
        let mut spec = template["spec"].clone();
        if spec["tolerations"].is_null() {
            spec["tolerations"] = json!([
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            ]);
        }
        spec["priority"] = json!(0);
        spec["enableServiceLinks"] = json!(true);
        spec["preemptionPolicy"] = json!("PreemptLowerPriority");
        let mut pod_labels = template["metadata"]["labels"].clone();
        if !labels.is_empty() && !pod_labels.is_object() {
            pod_labels = json!({});
        }
        for (k, v) in labels {
            pod_labels[*k] = json!(v);
        }
        let mut metadata = json!({
            "namespace": owner_meta["namespace"],
            "labels": pod_labels,
            "annotations": template["metadata"]["annotations"],
            "ownerReferences": [{
                "apiVersion": owner["apiVersion"].as_str().unwrap_or("apps/v1"),
                "kind": kind,
                "name": owner_name,
                "uid": owner_meta["uid"],
                "controller": true,
                "blockOwnerDeletion": true,
            }],
        });
        if kind != "StatefulSet" {
            metadata["generateName"] = json!(format!("{owner_name}-"));
        }
        let mut owned =
            json!({"f:metadata": fields_v1(&metadata), "f:spec": fields_v1(&template["spec"])});
        owned["f:metadata"]["f:ownerReferences"] = json!({".": {}, format!("k:{{\"uid\":\"{}\"}}", owner_meta["uid"].as_str().unwrap_or("")): {}});
        let images = spec["containers"]
            .as_array()
            .map(|cs| {
                cs.iter()
                    .map(|c| {
                        (
                            c["name"].as_str().unwrap_or("").to_string(),
                            c["image"].as_str().unwrap_or("").to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self {
            base: json!({"kind": "Pod", "apiVersion": "v1", "metadata": metadata, "spec": spec}),
            controller_fields: owned,
            images,
        }
    }

    /// One pod. `digest` seeds image digests and container IDs deterministically.
    #[allow(clippy::too_many_arguments)]
    pub fn pod(
        &self,
        rng: &mut impl Rng,
        name: &str,
        uid: &str,
        node: &str,
        host_ip: &str,
        pod_ip: &str,
        created: i64,
        state: PodState,
    ) -> Value {
        let mut pod = self.base.clone();
        let created_at = timestamp(created);
        let started_at = timestamp(created + 7);
        let ready_at = timestamp(created + 24);
        pod["metadata"]["name"] = json!(name);
        pod["metadata"]["uid"] = json!(uid);
        pod["metadata"]["creationTimestamp"] = json!(created_at);
        pod["spec"]["nodeName"] = json!(node);
        let succeeded = match state {
            PodState::Succeeded { ran } => Some(timestamp(created + 7 + ran)),
            _ => None,
        };
        let running = state != PodState::Pending;
        let ready = state == PodState::Running;
        let statuses: Vec<Value> = self
            .images
            .iter()
            .map(|(cname, image)| {
                let crashing = cname == "app" && matches!(state, PodState::CrashLoop { .. });
                let restarts = match state {
                    PodState::CrashLoop { restarts } if crashing => restarts,
                    _ => 0,
                };
                let (state_value, last_state) = if let Some(finished) = &succeeded {
                    (
                        json!({"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": started_at, "finishedAt": finished, "containerID": format!("containerd://{}", hex(rng, 64))}}),
                        json!({}),
                    )
                } else if !running {
                    (json!({"waiting": {"reason": "ContainerCreating"}}), json!({}))
                } else if crashing {
                    (
                        json!({"waiting": {"reason": "CrashLoopBackOff", "message": format!("back-off 5m0s restarting failed container={cname} pod={name}")}}),
                        json!({"terminated": {"exitCode": 1, "reason": "Error", "startedAt": started_at, "finishedAt": ready_at, "containerID": format!("containerd://{}", hex(rng, 64))}}),
                    )
                } else {
                    (json!({"running": {"startedAt": started_at}}), json!({}))
                };
                let mut status = json!({
                    "name": cname,
                    "state": state_value,
                    "lastState": last_state,
                    "ready": running && !crashing && succeeded.is_none(),
                    "restartCount": restarts,
                    "image": image,
                    "imageID": format!("{}@sha256:{}", image.split(':').next().unwrap_or(image), hex(rng, 64)),
                    "started": running && !crashing && succeeded.is_none(),
                });
                if running {
                    status["containerID"] = json!(format!("containerd://{}", hex(rng, 64)));
                }
                status
            })
            .collect();
        let condition = |t: &str, ok: bool, at: &str| json!({"type": t, "status": if ok { "True" } else { "False" }, "lastProbeTime": null, "lastTransitionTime": at});
        let conditions = match &succeeded {
            Some(finished) => {
                let completed = |t: &str, ok: bool, at: &str| {
                    let mut c = condition(t, ok, at);
                    c["reason"] = json!("PodCompleted");
                    c
                };
                json!([
                    condition("PodReadyToStartContainers", false, finished),
                    completed("Initialized", true, &created_at),
                    completed("Ready", false, finished),
                    completed("ContainersReady", false, finished),
                    condition("PodScheduled", true, &created_at),
                ])
            }
            None => json!([
                condition("PodReadyToStartContainers", running, &started_at),
                condition("Initialized", true, &created_at),
                condition("Ready", ready, &ready_at),
                condition("ContainersReady", ready, &ready_at),
                condition("PodScheduled", true, &created_at),
            ]),
        };
        let phase = match (&succeeded, running) {
            (Some(_), _) => "Succeeded",
            (None, true) => "Running",
            (None, false) => "Pending",
        };
        let mut status = json!({
            "phase": phase,
            "conditions": conditions,
            "hostIP": host_ip,
            "hostIPs": [{"ip": host_ip}],
            "startTime": created_at,
            "containerStatuses": statuses,
            "qosClass": "Burstable",
        });
        if running {
            status["podIP"] = json!(pod_ip);
            status["podIPs"] = json!([{"ip": pod_ip}]);
        }
        let kubelet_fields = json!({"f:status": {
            "f:conditions": {".": {}, "k:{\"type\":\"ContainersReady\"}": {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}, "k:{\"type\":\"Initialized\"}": {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}, "k:{\"type\":\"PodReadyToStartContainers\"}": {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}, "k:{\"type\":\"Ready\"}": {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}},
            "f:containerStatuses": {}, "f:hostIP": {}, "f:hostIPs": {}, "f:phase": {}, "f:podIP": {},
            "f:podIPs": {".": {}, format!("k:{{\"ip\":\"{pod_ip}\"}}"): {".": {}, "f:ip": {}}},
            "f:startTime": {},
        }});
        pod["metadata"]["managedFields"] = json!([
            managed_entry(
                "kube-controller-manager",
                "v1",
                &created_at,
                self.controller_fields.clone(),
                None
            ),
            managed_entry("kubelet", "v1", &ready_at, kubelet_fields, Some("status")),
        ]);
        pod["status"] = status;
        pod
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    use super::*;

    #[test]
    fn uids_and_timestamps_look_real() {
        let mut rng = StdRng::seed_from_u64(1);
        let u = uid(&mut rng);
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert_eq!(timestamp(1_741_944_067), "2025-03-14T09:21:07Z");
        assert_eq!(
            fields_v1(&json!({"a": {"b": 1}})),
            json!({"f:a": {".": {}, "f:b": {}}, ".": {}})
        );
    }
}
