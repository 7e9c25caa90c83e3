use serde_json::{Value, json};

use kscope_resources::Timestamp;

use super::*;

fn now() -> Timestamp {
    Timestamp::parse("2026-12-01T12:00:00Z").unwrap()
}

fn pod() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": "web-1", "namespace": "shop", "uid": "u1",
            "labels": {"app": "web", "tier": "front"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc", "uid": "r1", "controller": true}]
        },
        "spec": {
            "nodeName": "n1", "serviceAccountName": "web", "priority": 0,
            "containers": [{
                "name": "app", "image": "nginx:1.27",
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "resources": {"requests": {"cpu": "250m", "memory": "1024Mi"}},
                "env": [{"name": "POD", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                        {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}}]
            }]
        },
        "status": {
            "phase": "Running", "hostIP": "10.0.0.1", "podIP": "10.1.0.5",
            "podIPs": [{"ip": "10.1.0.5"}],
            "startTime": "2026-12-01T11:00:00Z",
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [{
                "name": "app", "ready": true, "restartCount": 2, "image": "nginx:1.27",
                "imageID": "nginx@sha256:1", "containerID": "containerd://c1",
                "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                "lastState": {"terminated": {"exitCode": 1, "reason": "Error",
                    "startedAt": "2026-12-01T11:50:00Z", "finishedAt": "2026-12-01T11:51:00Z"}}
            }]
        }
    })
}

#[test]
fn a_pod_reads_as_kubectl_describe_prints_it() {
    let sources = DescribeSources {
        object: pod(),
        events: Some(Ok(vec![json!({
            "type": "Warning", "reason": "BackOff", "count": 5,
            "message": "Back-off restarting failed container app\n",
            "source": {"component": "kubelet"},
            "firstTimestamp": "2026-12-01T11:40:00Z", "lastTimestamp": "2026-12-01T11:58:00Z",
            "involvedObject": {"kind": "Pod", "name": "web-1"}
        })])),
        related: Vec::new(),
    };
    let text = describe(&sources, now()).join("\n");
    let expected = "\
Name:             web-1
Namespace:        shop
Priority:         0
Service Account:  web
Node:             n1/10.0.0.1
Start Time:       Tue, 01 Dec 2026 11:00:00 +0000
Labels:           app=web
                  tier=front
Annotations:      <none>
Status:           Running
IP:               10.1.0.5
IPs:
  IP:           10.1.0.5
Controlled By:  ReplicaSet/web-abc
Containers:
  app:
    Container ID:   containerd://c1
    Image:          nginx:1.27
    Image ID:       nginx@sha256:1
    Port:           80/TCP
    Host Port:      0/TCP
    State:          Waiting
      Reason:       CrashLoopBackOff
    Last State:     Terminated
      Reason:       Error
      Exit Code:    1
      Started:      Tue, 01 Dec 2026 11:50:00 +0000
      Finished:     Tue, 01 Dec 2026 11:51:00 +0000
    Ready:          True
    Restart Count:  2
    Requests:
      cpu:     250m
      memory:  1Gi
    Environment:
      POD:       web-1 (v1:metadata.name)
      PASSWORD:  <set to the key 'password' in secret 'db'>  Optional: false
    Mounts:      <none>
Conditions:
  Type           Status
  Ready          True 
Volumes:         <none>
QoS Class:       Burstable
Node-Selectors:  <none>
Tolerations:     <none>
Events:
  Type     Reason   Age               From     Message
  ----     ------   ----              ----     -------
  Warning  BackOff  2m (x5 over 20m)  kubelet  Back-off restarting failed container app";
    assert_eq!(text, expected);
}

#[test]
fn a_secret_shows_sizes_never_values() {
    let sources = DescribeSources {
        object: json!({
            "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": "db", "namespace": "shop"},
            "data": {"password": "aHVudGVyMg=="}
        }),
        events: None,
        related: Vec::new(),
    };
    let text = describe(&sources, now()).join("\n");
    assert!(text.contains("password:  7 bytes"), "{text}");
    assert!(
        !text.contains("hunter2") && !text.contains("aHVudGVyMg"),
        "{text}"
    );
}

#[test]
fn a_custom_resource_goes_through_the_generic_describer() {
    let sources = DescribeSources {
        object: json!({
            "apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w1", "namespace": "shop", "uid": "w", "managedFields": [{"manager": "x"}]},
            "spec": {"size": 3, "colour": "blue"},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "observedGeneration": 2}
        }),
        events: Some(Ok(Vec::new())),
        related: Vec::new(),
    };
    let text = describe(&sources, now()).join("\n");
    let fields: Vec<(usize, Vec<&str>)> = text
        .lines()
        .map(|l| {
            (
                l.len() - l.trim_start().len(),
                l.split_whitespace().collect(),
            )
        })
        .collect();
    for (indent, words) in [
        (0, vec!["API", "Version:", "example.com/v1"]),
        (2, vec!["Colour:", "blue"]),
        (4, vec!["Type:", "Ready"]),
        (2, vec!["Observed", "Generation:", "2"]),
    ] {
        assert!(
            fields.contains(&(indent, words.clone())),
            "{words:?} in {text}"
        );
    }
    assert!(
        !text.contains("managedFields") && !text.contains("Managed Fields"),
        "{text}"
    );
    assert_eq!(
        fields.last(),
        Some(&(0, vec!["Events:", "<none>"])),
        "{text}"
    );
}

#[test]
fn requests_follow_the_kind() {
    let events = events_request(&pod()).unwrap();
    assert_eq!(
        events.uri(),
        "/api/v1/namespaces/shop/events?fieldSelector=involvedObject.name%3Dweb-1%2CinvolvedObject.namespace%3Dshop%2CinvolvedObject.kind%3DPod%2CinvolvedObject.uid%3Du1"
    );
    assert!(related(&pod()).is_empty());
    let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}}});
    let related = related(&deploy);
    assert_eq!(
        related[0].uri(),
        "/apis/apps/v1/namespaces/shop/replicasets?labelSelector=app%3Dweb"
    );
}
