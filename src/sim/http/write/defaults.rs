//! What the server fills in: on create, the fields it owns (uid, timestamps, generation,
//! managedFields, a fresh status, a Service's ClusterIP, a pod's token volume and QoS
//! class); on every write, each kind's defaults and Secret normalisation.

use base64::Engine as _;
use rand::Rng as _;
use serde_json::{Value, json};

use crate::crd;
use crate::manifests;

use super::managed;
use crate::resources::Resource;

/// Fills what the server owns on create: uid, timestamps, generation, managedFields and
/// the status a fresh object starts with, after the defaults every write gets.
pub(super) fn populate_new(resource: Resource, value: &mut Value, manager: &str) {
    let now = manifests::timestamp(manifests::now_seconds());
    let meta = &mut value["metadata"];
    meta["uid"] = json!(manifests::uid(&mut rand::rng()));
    meta["creationTimestamp"] = json!(now);
    if let Some(m) = meta.as_object_mut() {
        m.remove("deletionTimestamp");
    }
    value["kind"] = json!(resource.kind());
    value["apiVersion"] = json!(resource.api_version());
    normalize_write(resource, value, true);
    match resource {
        Resource::Namespaces => {
            let name = value["metadata"]["name"].clone();
            value["metadata"]["labels"]["kubernetes.io/metadata.name"] = name;
            value["spec"] = json!({"finalizers": ["kubernetes"]});
            value["status"] = json!({"phase": "Active"});
        }
        Resource::Pods => {
            mount_service_account_token(&mut value["spec"]);
            let qos = crate::qos::class(&value["spec"]);
            value["status"] = json!({"phase": "Pending", "qosClass": qos});
        }
        Resource::Services => {
            value["status"] = json!({"loadBalancer": {}});
        }
        Resource::Jobs => {
            // The Job's selector and its pods' labels name its uid, known from now on.
            crate::controllers::job::default_new(value);
            value["metadata"]["generation"] = json!(1);
            value["status"] = json!({});
        }
        Resource::Deployments | Resource::ReplicaSets | Resource::CronJobs => {
            value["metadata"]["generation"] = json!(1);
            value["status"] = json!({});
        }
        Resource::StatefulSets => {
            value["metadata"]["generation"] = json!(1);
            value["status"] = json!({"replicas": 0, "availableReplicas": 0});
        }
        Resource::DaemonSets => {
            value["metadata"]["generation"] = json!(1);
            value["status"] = json!({"currentNumberScheduled": 0, "desiredNumberScheduled": 0, "numberMisscheduled": 0, "numberReady": 0});
        }
        Resource::CustomResourceDefinitions => {
            value["metadata"]["generation"] = json!(1);
            crd::populate_new(value);
        }
        custom => {
            if custom.descriptor().custom.is_some() {
                value["metadata"]["generation"] = json!(1);
                // With a status subresource, a create's status is the server's to set.
                if custom.descriptor().status
                    && let Some(object) = value.as_object_mut()
                {
                    object.remove("status");
                }
            }
        }
    }
    // What the create set, defaults included, is its manager's, as the real server records.
    managed::record_create(value, manager);
}

/// The defaults the API server's defaulting functions give a built-in kind's spec, which
/// it applies to every object it decodes: a create's, and an update's or a patch's result,
/// so a container a patch adds is defaulted as one created with the pod.
fn default_spec(resource: Resource, value: &mut Value, creating: bool) {
    match resource {
        Resource::Pods => {
            let spec = &mut value["spec"];
            default_pod_spec(spec, creating);
            set_default(spec, "serviceAccountName", json!("default"));
            let account = spec["serviceAccountName"].clone();
            set_default(spec, "serviceAccount", account);
            set_default(spec, "enableServiceLinks", json!(true));
            set_default(spec, "priority", json!(0));
            set_default(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
        }
        Resource::Deployments | Resource::ReplicaSets => {
            let spec = &mut value["spec"];
            set_default(spec, "replicas", json!(1));
            if resource == Resource::Deployments {
                set_default(spec, "strategy", json!({"type": "RollingUpdate"}));
                let strategy = &mut spec["strategy"];
                set_default(strategy, "type", json!("RollingUpdate"));
                if strategy["type"] == "RollingUpdate" {
                    if !strategy["rollingUpdate"].is_object() {
                        strategy["rollingUpdate"] = json!({});
                    }
                    let rolling = &mut strategy["rollingUpdate"];
                    set_default(rolling, "maxUnavailable", json!("25%"));
                    set_default(rolling, "maxSurge", json!("25%"));
                }
                set_default(spec, "revisionHistoryLimit", json!(10));
                set_default(spec, "progressDeadlineSeconds", json!(600));
            }
            default_pod_spec(&mut spec["template"]["spec"], creating);
        }
        Resource::StatefulSets => {
            let spec = &mut value["spec"];
            set_default(spec, "replicas", json!(1));
            set_default(spec, "podManagementPolicy", json!("OrderedReady"));
            set_default(
                spec,
                "updateStrategy",
                json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}),
            );
            set_default(spec, "revisionHistoryLimit", json!(10));
            set_default(spec, "minReadySeconds", json!(0));
            set_default(
                spec,
                "persistentVolumeClaimRetentionPolicy",
                json!({"whenDeleted": "Retain", "whenScaled": "Retain"}),
            );
            default_pod_spec(&mut spec["template"]["spec"], creating);
        }
        Resource::DaemonSets => {
            let spec = &mut value["spec"];
            set_default(
                spec,
                "updateStrategy",
                json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}),
            );
            set_default(spec, "revisionHistoryLimit", json!(10));
            default_pod_spec(&mut spec["template"]["spec"], creating);
        }
        Resource::Jobs => default_pod_spec(&mut value["spec"]["template"]["spec"], creating),
        Resource::CronJobs => {
            let spec = &mut value["spec"];
            set_default(spec, "concurrencyPolicy", json!("Allow"));
            set_default(spec, "suspend", json!(false));
            set_default(spec, "successfulJobsHistoryLimit", json!(3));
            set_default(spec, "failedJobsHistoryLimit", json!(1));
            default_pod_spec(
                &mut spec["jobTemplate"]["spec"]["template"]["spec"],
                creating,
            );
        }
        Resource::Services => default_service(&mut value["spec"]),
        _ => {}
    }
}

/// A Service's defaults: its type, session affinity and traffic policy, ports' protocol
/// and target port, and the IP family of a ClusterIP (the address is allocated on create).
fn default_service(spec: &mut Value) {
    if !spec.is_object() {
        return;
    }
    set_default(spec, "type", json!("ClusterIP"));
    set_default(spec, "sessionAffinity", json!("None"));
    if spec["type"] != "ExternalName" {
        set_default(spec, "internalTrafficPolicy", json!("Cluster"));
        set_default(spec, "ipFamilies", json!(["IPv4"]));
        set_default(spec, "ipFamilyPolicy", json!("SingleStack"));
    }
    if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for port in ports.iter_mut().filter(|p| p.is_object()) {
            set_default(port, "protocol", json!("TCP"));
            let number = port["port"].clone();
            set_default(port, "targetPort", number);
        }
    }
}

/// A ClusterIP for a new Service of `spec` that asks for one, from the service CIDR
/// (172.20.0.0/16): the seeded Services number theirs from the bottom, so a client's comes
/// at random from the top of the range, one no Service in `taken` holds.
pub(super) fn allocate_cluster_ip(spec: &mut Value, taken: &[String]) {
    let wants = matches!(
        spec["type"].as_str(),
        Some("ClusterIP" | "NodePort" | "LoadBalancer")
    );
    if !wants {
        return;
    }
    if spec["clusterIP"].as_str().is_some_and(|ip| !ip.is_empty()) {
        let ip = spec["clusterIP"].clone();
        set_default(spec, "clusterIPs", json!([ip]));
        return;
    }
    let mut rng = rand::rng();
    let ip = loop {
        let candidate = format!(
            "172.20.{}.{}",
            rng.random_range(250..=255),
            rng.random_range(1..=254)
        );
        if !taken.contains(&candidate) {
            break candidate;
        }
    };
    spec["clusterIP"] = json!(ip);
    spec["clusterIPs"] = json!([ip]);
}

/// The ServiceAccount admission plugin's projected token volume, mounted in every
/// container, unless the pod opts out or mounts something there already.
fn mount_service_account_token(spec: &mut Value) {
    const MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
    if spec["automountServiceAccountToken"] == false {
        return;
    }
    let mounted = |c: &Value| {
        c["volumeMounts"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["mountPath"] == MOUNT_PATH))
    };
    if spec["containers"]
        .as_array()
        .is_some_and(|cs| cs.iter().any(mounted))
    {
        return;
    }
    let name = format!(
        "kube-api-access-{}",
        manifests::safe_suffix(&mut rand::rng(), 5)
    );
    let volume = json!({"name": name, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
    ]}});
    if !spec["volumes"].is_array() {
        spec["volumes"] = json!([]);
    }
    if let Some(volumes) = spec["volumes"].as_array_mut() {
        volumes.push(volume);
    }
    for list in ["initContainers", "containers"] {
        let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut) else {
            continue;
        };
        for container in containers.iter_mut().filter(|c| c.is_object()) {
            if !container["volumeMounts"].is_array() {
                container["volumeMounts"] = json!([]);
            }
            if let Some(mounts) = container["volumeMounts"].as_array_mut() {
                mounts.push(json!({"name": name, "readOnly": true, "mountPath": MOUNT_PATH}));
            }
        }
    }
}

/// Sets `field` of `object` unless it is there (an empty object counts as absent, as a
/// strategy with only an empty type does).
fn set_default(object: &mut Value, field: &str, default: Value) {
    let Some(map) = object.as_object_mut() else {
        return;
    };
    let present = map
        .get(field)
        .is_some_and(|v| !v.is_null() && !v.as_object().is_some_and(|o| o.is_empty()));
    if !present {
        map.insert(field.to_string(), default);
    }
}

/// The defaults the API server's defaulting functions give a pod spec and its containers.
/// An empty `securityContext` is added on create alone: seeded templates were made
/// without one, and their controllers would see an update's addition as a new revision.
fn default_pod_spec(spec: &mut Value, creating: bool) {
    if !spec.is_object() {
        return;
    }
    set_default(spec, "restartPolicy", json!("Always"));
    set_default(spec, "terminationGracePeriodSeconds", json!(30));
    set_default(spec, "dnsPolicy", json!("ClusterFirst"));
    set_default(spec, "schedulerName", json!("default-scheduler"));
    if creating && spec["securityContext"].is_null() {
        spec["securityContext"] = json!({});
    }
    for list in ["initContainers", "containers"] {
        let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut) else {
            continue;
        };
        for container in containers.iter_mut().filter(|c| c.is_object()) {
            let image = container["image"].as_str().unwrap_or("");
            let latest = image
                .rsplit('/')
                .next()
                .is_none_or(|last| !last.contains(':') || last.ends_with(":latest"))
                && !image.contains('@');
            let pull = if latest { "Always" } else { "IfNotPresent" };
            set_default(container, "imagePullPolicy", json!(pull));
            set_default(
                container,
                "terminationMessagePath",
                json!("/dev/termination-log"),
            );
            set_default(container, "terminationMessagePolicy", json!("File"));
            if container["resources"].is_null() {
                container["resources"] = json!({});
            }
            if let Some(ports) = container.get_mut("ports").and_then(Value::as_array_mut) {
                for port in ports.iter_mut().filter(|p| p.is_object()) {
                    set_default(port, "protocol", json!("TCP"));
                }
            }
        }
    }
}

/// What the server does on every write: built-in kinds' defaults, a custom resource's
/// schema defaults, and a Secret's write-only stringData folded into data (base64) and its
/// type defaulted to Opaque.
pub(super) fn normalize(resource: Resource, value: &mut Value) {
    normalize_write(resource, value, false);
}

fn normalize_write(resource: Resource, value: &mut Value, creating: bool) {
    if let Some(schema) = resource.descriptor().custom {
        crd::schema::apply_defaults(value, &schema.schema);
        return;
    }
    default_spec(resource, value, creating);
    if resource != Resource::Secrets {
        return;
    }
    if let Some(Value::Object(plain)) = value.get_mut("stringData").map(Value::take) {
        for (key, v) in plain {
            let encoded =
                base64::engine::general_purpose::STANDARD.encode(v.as_str().unwrap_or_default());
            value["data"][key] = json!(encoded);
        }
    }
    if let Some(object) = value.as_object_mut() {
        object.remove("stringData");
    }
    if value["type"].as_str().is_none_or(str::is_empty) {
        value["type"] = json!("Opaque");
    }
}
