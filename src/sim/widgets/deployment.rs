//! Where the controller runs: its namespace and Deployment as its installer writes them, and
//! the pods of that Deployment that run.

use serde_json::json;

use crate::Shared;
use crate::manifests;
use crate::resources::Resource;
use crate::store::{StoreError, Txn};

/// Where the controller runs.
pub(crate) const NAMESPACE: &str = "widget-system";
pub(crate) const NAME: &str = "widget-controller";
/// The port its pod serves /metrics on (controller-runtime's `--metrics-bind-address`).
pub(crate) const METRICS_PORT: u16 = 8080;

/// The uids of the controller's pods that are Running and not being deleted, oldest first.
pub(super) fn running_pods(shared: &Shared) -> Vec<String> {
    shared.store.write(|txn| {
        txn.scan(Resource::Pods, &format!("{NAMESPACE}/"))
            .into_iter()
            .filter_map(|(_, pod)| pod.decode().ok())
            .filter(|pod| {
                pod["metadata"]["labels"]["control-plane"] == NAME
                    && pod["status"]["phase"] == "Running"
                    && !pod["metadata"]["deletionTimestamp"].is_string()
            })
            .filter_map(|pod| pod["metadata"]["uid"].as_str().map(str::to_string))
            .collect()
    })
}

/// The controller's namespace and Deployment, written as its installer's `kubectl apply`
/// would; the Deployment controller takes it from there.
pub(super) fn install(txn: &mut Txn<'_>) -> Result<(), StoreError> {
    let now = manifests::timestamp(manifests::now_seconds());
    let mut rng = rand::rng();
    if txn.get(Resource::Namespaces, NAMESPACE).is_none() {
        let mut ns = manifests::namespace(
            NAMESPACE,
            &manifests::uid(&mut rng),
            &now,
            json!({"kubernetes.io/metadata.name": NAMESPACE, "control-plane": NAME}),
        );
        txn.put(Resource::Namespaces, NAMESPACE, &mut ns)?;
    }
    let key = format!("{NAMESPACE}/{NAME}");
    if txn.get(Resource::Deployments, &key).is_some() {
        return Ok(());
    }
    let labels = json!({"app.kubernetes.io/name": NAME, "control-plane": NAME});
    let mut deployment = json!({
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "metadata": {
            "name": NAME, "namespace": NAMESPACE, "uid": manifests::uid(&mut rng),
            "creationTimestamp": now, "generation": 1, "labels": labels,
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "template": {
                "metadata": {"labels": labels, "annotations": {"kubectl.kubernetes.io/default-container": "manager"}},
                "spec": {
                    "containers": [{
                        "name": "manager",
                        "image": "registry.example.com/widget-controller:v0.4.2",
                        "args": ["--leader-elect", format!("--metrics-bind-address=:{METRICS_PORT}"), "--health-probe-bind-address=:8081"],
                        "ports": [{"name": "metrics", "containerPort": METRICS_PORT, "protocol": "TCP"}],
                        "resources": {"requests": {"cpu": "10m", "memory": "64Mi"}, "limits": {"cpu": "500m", "memory": "128Mi"}},
                        "imagePullPolicy": "IfNotPresent",
                        "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File",
                    }],
                    "serviceAccountName": NAME,
                    "restartPolicy": "Always",
                    "terminationGracePeriodSeconds": 10,
                    "dnsPolicy": "ClusterFirst",
                    "schedulerName": "default-scheduler",
                    "securityContext": {"runAsNonRoot": true},
                },
            },
        },
        "status": {},
    });
    txn.put(Resource::Deployments, &key, &mut deployment)?;
    Ok(())
}
