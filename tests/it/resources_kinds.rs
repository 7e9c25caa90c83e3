//! Nodes, namespaces, deployments and replica sets; resource names and URL paths.

use kscope_client::wire::decode_list;
use kscope_informers::keys::meta_namespace_key;
use kscope_informers::object::Object;
use kscope_resources::{
    BuiltIn, ConditionStatus, Container, Deployment, KubeResource, Namespace, Node, OwnerRef,
    PathError, ReplicaSet, Replicas, ResourceKind, Timestamp, decode,
};
use serde_json::json;

fn node_json() -> serde_json::Value {
    json!({
        "kind": "Node", "apiVersion": "v1",
        "metadata": {
            "name": "ip-10-42-17-5.eu-west-1.compute.internal",
            "uid": "7c0d3a1e-1111-4c6e-9a1f-2b3c4d5e6f70",
            "resourceVersion": "918270001",
            "creationTimestamp": "2025-01-02T03:04:05Z",
            "labels": {
                "kubernetes.io/hostname": "ip-10-42-17-5",
                "node-role.kubernetes.io/worker": "",
                "node-role.kubernetes.io/control-plane": "",
                "node-role.kubernetes.io/": "",
                "kubernetes.io/role": "worker",
                "topology.kubernetes.io/zone": "eu-west-1a"
            },
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
            "managedFields": [{"manager": "kubelet", "fieldsV1": {"f:status": {}}}]
        },
        "spec": {"podCIDR": "10.42.17.0/24", "unschedulable": true,
                 "taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]},
        "status": {
            "capacity": {"cpu": "8", "memory": "32617024Ki", "pods": "110",
                         "ephemeral-storage": "104845292Ki"},
            "allocatable": {"cpu": "7910m", "memory": "31483456Ki", "pods": "110"},
            "conditions": [
                {"type": "MemoryPressure", "status": "False"},
                {"type": "Ready", "status": "True", "reason": "KubeletReady"}
            ],
            "addresses": [
                {"type": "Hostname", "address": "ip-10-42-17-5"},
                {"type": "InternalIP", "address": "10.42.17.5"},
                {"type": "ExternalIP", "address": "52.1.2.3"}
            ],
            "nodeInfo": {"kubeletVersion": "v1.31.4-eks", "osImage": "Bottlerocket"},
            "images": [{"names": ["docker.io/istio/proxyv2:1.22.3"], "sizeBytes": 1}]
        }
    })
}

#[test]
fn node_projection() {
    let v = node_json();
    let node: Node = serde_json::from_value(v.clone()).unwrap();
    let full: k8s_openapi::api::core::v1::Node = serde_json::from_value(v).unwrap();

    assert_eq!(Some(node.name()), full.metadata.name.as_deref());
    assert_eq!(node.namespace(), None);
    assert_eq!(Some(node.uid()), full.metadata.uid.as_deref());
    assert_eq!(node.resource_version(), Some("918270001"));
    assert_eq!(
        node.created().map(Timestamp::seconds),
        full.metadata.creation_timestamp.map(|t| t.0.as_second())
    );
    let labels: Vec<_> = full
        .metadata
        .labels
        .iter()
        .flatten()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(node.labels().iter().collect::<Vec<_>>(), labels);
    assert_eq!(
        node.label("topology.kubernetes.io/zone"),
        Some("eu-west-1a")
    );
    assert_eq!(
        node.roles().collect::<Vec<_>>(),
        ["control-plane", "worker"]
    );
    assert_eq!(node.ready(), Some(ConditionStatus::True));
    assert!(node.unschedulable());
    assert_eq!(node.status(), "Ready,SchedulingDisabled");
    assert_eq!(node.kubelet_version(), Some("v1.31.4-eks"));
    assert_eq!(node.internal_ip(), Some("10.42.17.5"));
    assert_eq!(node.cpu_capacity(), Some("8"));
    assert_eq!(node.memory_capacity(), Some("32617024Ki"));
    assert_eq!(node.cpu_allocatable(), Some("7910m"));
    assert_eq!(node.memory_allocatable(), Some("31483456Ki"));
    assert_eq!(node.controller_owner(), None);

    assert_eq!(
        meta_namespace_key(&node).unwrap().as_ref(),
        "ip-10-42-17-5.eu-west-1.compute.internal",
        "cluster-scoped objects key by name alone"
    );
    assert!(node.heap_bytes() < 600, "{} bytes", node.heap_bytes());
}

#[test]
fn node_status_column() {
    let status = |conditions: serde_json::Value, unschedulable: bool| {
        let node: Node = serde_json::from_value(json!({
            "metadata": {"name": "n"},
            "spec": {"unschedulable": unschedulable},
            "status": {"conditions": conditions}
        }))
        .unwrap();
        node.status()
    };
    assert_eq!(
        status(json!([{"type": "Ready", "status": "True"}]), false),
        "Ready"
    );
    assert_eq!(
        status(json!([{"type": "Ready", "status": "False"}]), false),
        "NotReady"
    );
    assert_eq!(
        status(json!([{"type": "Ready", "status": "Unknown"}]), false),
        "NotReady"
    );
    assert_eq!(status(json!([]), false), "Unknown");
    assert_eq!(status(json!([]), true), "Unknown,SchedulingDisabled");
    let bare: Node = decode(br#"{"metadata":{"name":"n"}}"#).unwrap();
    assert_eq!((bare.ready(), bare.roles().len()), (None, 0));
    assert_eq!(bare.internal_ip(), None);
}

#[test]
fn namespace_projection() {
    let ns: Namespace = decode(
        br#"{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"payments-prod",
            "uid":"u-1","resourceVersion":"7","creationTimestamp":"2024-06-01T00:00:00Z",
            "labels":{"kubernetes.io/metadata.name":"payments-prod","team":"payments"}},
            "spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}"#,
    )
    .unwrap();
    assert_eq!(ns.name(), "payments-prod");
    assert_eq!(ns.namespace(), None);
    assert_eq!(ns.uid(), "u-1");
    assert_eq!(ns.resource_version(), Some("7"));
    assert_eq!(ns.phase(), Some("Active"));
    assert_eq!(ns.label("team"), Some("payments"));
    assert_eq!(
        ns.created(),
        Some(Timestamp::parse("2024-06-01T00:00:00Z").unwrap())
    );
    assert_eq!(meta_namespace_key(&ns).unwrap().as_ref(), "payments-prod");
}

fn template(images: &[(&str, &str)]) -> serde_json::Value {
    let containers: Vec<_> = images
        .iter()
        .map(|(name, image)| {
            json!({"name": name, "image": image, "env": [{"name": "A", "value": "b"}]})
        })
        .collect();
    json!({"metadata": {"labels": {"app": "checkout-api"}}, "spec": {"containers": containers}})
}

#[test]
fn deployment_projection() {
    let v = json!({
        "kind": "Deployment", "apiVersion": "apps/v1",
        "metadata": {"name": "checkout-api", "namespace": "payments-prod", "uid": "d-1",
            "resourceVersion": "99", "creationTimestamp": "2025-03-01T00:00:00Z",
            "labels": {"app": "checkout-api"},
            "annotations": {"deployment.kubernetes.io/revision": "14"}},
        "spec": {"replicas": 3,
            "selector": {"matchLabels": {"app": "checkout-api", "tier": "backend"},
                         "matchExpressions": [{"key": "x", "operator": "Exists"}]},
            "template": template(&[("app", "checkout:2.14.3"), ("istio-proxy", "proxyv2:1.22.3")]),
            "strategy": {"type": "RollingUpdate"}},
        "status": {"replicas": 4, "readyReplicas": 2, "updatedReplicas": 1, "availableReplicas": 2,
                   "observedGeneration": 7}
    });
    let d: Deployment = serde_json::from_value(v.clone()).unwrap();
    let full: k8s_openapi::api::apps::v1::Deployment = serde_json::from_value(v).unwrap();
    let full_status = full.status.unwrap();

    assert_eq!(Some(d.name()), full.metadata.name.as_deref());
    assert_eq!(d.namespace(), Some("payments-prod"));
    assert_eq!(d.uid(), "d-1");
    assert_eq!(d.resource_version(), Some("99"));
    assert_eq!(d.label("app"), Some("checkout-api"));
    assert_eq!(
        d.selector().iter().collect::<Vec<_>>(),
        [("app", "checkout-api"), ("tier", "backend")]
    );
    assert_eq!(
        d.replicas(),
        Replicas {
            desired: full.spec.replicas.unwrap(),
            current: full_status.replicas.unwrap(),
            ready: full_status.ready_replicas.unwrap(),
            updated: full_status.updated_replicas.unwrap(),
            available: full_status.available_replicas.unwrap(),
        }
    );
    assert_eq!(
        d.containers().collect::<Vec<_>>(),
        [
            Container {
                name: "app",
                image: "checkout:2.14.3"
            },
            Container {
                name: "istio-proxy",
                image: "proxyv2:1.22.3"
            },
        ]
    );
    assert_eq!(d.owner_references().len(), 0);
    assert_eq!(d.controller_owner(), None);
    assert_eq!(
        meta_namespace_key(&d).unwrap().as_ref(),
        "payments-prod/checkout-api"
    );

    let bare: Deployment = decode(br#"{"metadata":{"name":"d","namespace":"n"}}"#).unwrap();
    assert_eq!(
        bare.replicas(),
        Replicas {
            desired: 1,
            ..Replicas::default()
        },
        "spec.replicas defaults to 1"
    );
}

#[test]
fn replicaset_projection() {
    let rs: ReplicaSet = serde_json::from_value(json!({
        "metadata": {"name": "checkout-api-7d9f8c6b5d", "namespace": "payments-prod",
            "uid": "rs-1", "resourceVersion": "100", "creationTimestamp": "2025-03-14T09:20:55Z",
            "labels": {"app": "checkout-api", "pod-template-hash": "7d9f8c6b5d"},
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "ConfigMap", "name": "other", "uid": "cm-1"},
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": "checkout-api",
                 "uid": "d-1", "controller": true, "blockOwnerDeletion": true}
            ]},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "checkout-api"}},
                 "template": template(&[("app", "checkout:2.14.3")])},
        "status": {"replicas": 2, "readyReplicas": 1, "availableReplicas": 1,
                   "fullyLabeledReplicas": 2}
    }))
    .unwrap();
    assert_eq!(rs.name(), "checkout-api-7d9f8c6b5d");
    assert_eq!(rs.uid(), "rs-1");
    assert_eq!(rs.label("pod-template-hash"), Some("7d9f8c6b5d"));
    assert_eq!(rs.selector().get("app"), Some("checkout-api"));
    let r = rs.replicas();
    assert_eq!((r.desired, r.current, r.ready, r.available), (2, 2, 1, 1));
    assert_eq!(
        rs.owner_references().collect::<Vec<_>>(),
        [
            OwnerRef {
                kind: "ConfigMap",
                name: "other",
                uid: "cm-1",
                controller: false
            },
            OwnerRef {
                kind: "Deployment",
                name: "checkout-api",
                uid: "d-1",
                controller: true
            },
        ]
    );
    assert_eq!(rs.controller_owner(), Some(("Deployment", "checkout-api")));
    assert_eq!(
        KubeResource::controller_owner(&rs),
        Some(("Deployment", "checkout-api"))
    );
    assert_eq!(
        rs.containers().map(|c| c.image).collect::<Vec<_>>(),
        ["checkout:2.14.3"]
    );
    assert_eq!(
        rs.age(Timestamp::parse("2025-03-14T09:25:00Z").unwrap()),
        "4m5s"
    );
}

#[test]
fn list_of_nodes() {
    let page = decode_list::<Node>(
        br#"{"kind":"NodeList","metadata":{"resourceVersion":"5"},
            "items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b","creationTimestamp":7}}]}"#,
    )
    .unwrap();
    assert_eq!(page.items.len(), 1);
    assert_eq!(page.items[0].name(), "a");
    assert_eq!(page.malformed.len(), 1);
    assert!(
        page.malformed[0].starts_with("list item 1:"),
        "{:?}",
        page.malformed
    );
}

#[test]
fn resource_kind_names() {
    let cases = [
        ("pods", ResourceKind::Pods),
        ("pod", ResourceKind::Pods),
        ("po", ResourceKind::Pods),
        ("PODS", ResourceKind::Pods),
        ("nodes", ResourceKind::Nodes),
        ("node", ResourceKind::Nodes),
        ("no", ResourceKind::Nodes),
        ("namespaces", ResourceKind::Namespaces),
        ("namespace", ResourceKind::Namespaces),
        ("ns", ResourceKind::Namespaces),
        ("deployments", ResourceKind::Deployments),
        ("deployment", ResourceKind::Deployments),
        ("deploy", ResourceKind::Deployments),
        ("deployments.apps", ResourceKind::Deployments),
        ("replicasets", ResourceKind::ReplicaSets),
        ("replicaset", ResourceKind::ReplicaSets),
        ("rs", ResourceKind::ReplicaSets),
        ("rs.apps", ResourceKind::ReplicaSets),
    ];
    for (name, want) in cases {
        assert_eq!(name.parse::<ResourceKind>(), Ok(want), "{name}");
    }
    for bad in ["services", "", "pods.apps", "deployments.batch", "po."] {
        let err = bad.parse::<ResourceKind>().unwrap_err();
        assert!(err.to_string().contains("unknown resource type"), "{err}");
    }
    for kind in ResourceKind::ALL {
        assert_eq!(kind.plural().parse::<ResourceKind>(), Ok(kind));
        assert_eq!(kind.short_name().parse::<ResourceKind>(), Ok(kind));
        assert_eq!(kind.to_string(), kind.plural());
    }
}

#[test]
fn resource_kind_paths() {
    use ResourceKind::*;
    assert_eq!(Pods.list_path(None), "/api/v1/pods");
    assert_eq!(Pods.list_path(Some("ns1")), "/api/v1/namespaces/ns1/pods");
    assert_eq!(
        Pods.object_path(Some("ns1"), "p"),
        Ok("/api/v1/namespaces/ns1/pods/p".to_owned())
    );
    assert_eq!(
        Pods.object_path(None, "p"),
        Err(PathError::NamespaceRequired("pods".into()))
    );
    assert_eq!(Nodes.list_path(Some("ignored")), "/api/v1/nodes");
    assert_eq!(
        Nodes.object_path(None, "n1"),
        Ok("/api/v1/nodes/n1".to_owned())
    );
    assert_eq!(
        Namespaces.object_path(None, "kube-system"),
        Ok("/api/v1/namespaces/kube-system".to_owned())
    );
    assert_eq!(Deployments.list_path(None), "/apis/apps/v1/deployments");
    assert_eq!(
        ReplicaSets.list_path(Some("ns1")),
        "/apis/apps/v1/namespaces/ns1/replicasets"
    );
    assert_eq!(
        Deployments.object_path(Some("ns1"), "web"),
        Ok("/apis/apps/v1/namespaces/ns1/deployments/web".to_owned())
    );
    assert_eq!((Deployments.group(), Deployments.version()), ("apps", "v1"));
    assert_eq!((Pods.group(), Pods.api_version()), ("", "v1"));
    assert_eq!(ReplicaSets.api_version(), "apps/v1");
    assert_eq!(ReplicaSets.kind(), "ReplicaSet");
    assert!(!Nodes.namespaced() && !Namespaces.namespaced());
    assert!(Pods.namespaced() && Deployments.namespaced() && ReplicaSets.namespaced());
    assert_eq!(Node::KIND, Nodes);
    assert_eq!(Namespace::KIND, Namespaces);
    assert_eq!(Deployment::KIND, Deployments);
    assert_eq!(ReplicaSet::KIND, ReplicaSets);
}
