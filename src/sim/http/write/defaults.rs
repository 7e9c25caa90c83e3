//! What the server fills in: on create, the fields it owns (uid, timestamps, generation,
//! managedFields, a fresh status); on every write, Secret normalisation.

use base64::Engine as _;
use serde_json::{Value, json};

use crate::crd;
use crate::manifests;

use super::managed;
use crate::resources::Resource;

/// Fills what the server owns on create: uid, timestamps, generation, managedFields and
/// the status a fresh object starts with.
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
    match resource {
        Resource::Namespaces => {
            let name = value["metadata"]["name"].clone();
            value["metadata"]["labels"]["kubernetes.io/metadata.name"] = name;
            value["spec"] = json!({"finalizers": ["kubernetes"]});
            value["status"] = json!({"phase": "Active"});
        }
        Resource::Pods => {
            default_pod_spec(&mut value["spec"]);
            let spec = &mut value["spec"];
            set_default(spec, "serviceAccountName", json!("default"));
            set_default(spec, "serviceAccount", json!("default"));
            set_default(spec, "enableServiceLinks", json!(true));
            set_default(spec, "priority", json!(0));
            set_default(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
            value["status"] = json!({"phase": "Pending", "qosClass": "BestEffort"});
        }
        Resource::Deployments | Resource::ReplicaSets => {
            let spec = &mut value["spec"];
            set_default(spec, "replicas", json!(1));
            if resource == Resource::Deployments {
                set_default(
                    spec,
                    "strategy",
                    json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}),
                );
                set_default(spec, "revisionHistoryLimit", json!(10));
                set_default(spec, "progressDeadlineSeconds", json!(600));
            }
            default_pod_spec(&mut spec["template"]["spec"]);
            value["metadata"]["generation"] = json!(1);
            value["status"] = json!({});
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
            default_pod_spec(&mut spec["template"]["spec"]);
            value["metadata"]["generation"] = json!(1);
            value["status"] = json!({"replicas": 0, "availableReplicas": 0});
        }
        Resource::DaemonSets => {
            let spec = &mut value["spec"];
            set_default(
                spec,
                "updateStrategy",
                json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}),
            );
            set_default(spec, "revisionHistoryLimit", json!(10));
            default_pod_spec(&mut spec["template"]["spec"]);
            value["metadata"]["generation"] = json!(1);
            value["status"] = json!({"currentNumberScheduled": 0, "desiredNumberScheduled": 0, "numberMisscheduled": 0, "numberReady": 0});
        }
        Resource::Jobs => {
            default_pod_spec(&mut value["spec"]["template"]["spec"]);
            crate::controllers::job::default_new(value);
            value["metadata"]["generation"] = json!(1);
            value["status"] = json!({});
        }
        Resource::CronJobs => {
            let spec = &mut value["spec"];
            set_default(spec, "concurrencyPolicy", json!("Allow"));
            set_default(spec, "suspend", json!(false));
            set_default(spec, "successfulJobsHistoryLimit", json!(3));
            set_default(spec, "failedJobsHistoryLimit", json!(1));
            default_pod_spec(&mut spec["jobTemplate"]["spec"]["template"]["spec"]);
            value["metadata"]["generation"] = json!(1);
            value["status"] = json!({});
        }
        Resource::CustomResourceDefinitions => {
            value["metadata"]["generation"] = json!(1);
            crd::populate_new(value);
        }
        custom => {
            if let Some(schema) = custom.descriptor().custom {
                value["metadata"]["generation"] = json!(1);
                // With a status subresource, a create's status is the server's to set.
                if custom.descriptor().status
                    && let Some(object) = value.as_object_mut()
                {
                    object.remove("status");
                }
                crd::schema::apply_defaults(value, &schema.schema);
            }
        }
    }
    normalize(resource, value);
    // What the create set, defaults included, is its manager's, as the real server records.
    managed::record_create(value, manager);
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
fn default_pod_spec(spec: &mut Value) {
    if !spec.is_object() {
        return;
    }
    set_default(spec, "restartPolicy", json!("Always"));
    set_default(spec, "terminationGracePeriodSeconds", json!(30));
    set_default(spec, "dnsPolicy", json!("ClusterFirst"));
    set_default(spec, "schedulerName", json!("default-scheduler"));
    if spec["securityContext"].is_null() {
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

/// What the server does on every write: a Secret's write-only stringData is folded into
/// data (base64) and its type defaults to Opaque.
pub(super) fn normalize(resource: Resource, value: &mut Value) {
    if let Some(schema) = resource.descriptor().custom {
        crd::schema::apply_defaults(value, &schema.schema);
        return;
    }
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
