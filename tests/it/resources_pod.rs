//! The pod projection against the realistic fixture, a full k8s-openapi decode of the same
//! bytes, and kubectl's STATUS column logic.

use kscope_client::wire::{decode_list, decode_watch_line};
use kscope_informers::keys::meta_namespace_key;
use kscope_informers::object::Object;
use kscope_resources::{
    BuiltIn, Container, DecodeError, KubeResource, LAST_APPLIED_ANNOTATION, OwnerRef, Pod,
    ResourceKind, Timestamp, decode,
};
use serde_json::{Value, json};

const FIXTURE: &[u8] = include_bytes!("../fixtures/pod-realistic.json");

fn fixture_value() -> Value {
    serde_json::from_slice(FIXTURE).unwrap()
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap()
}

#[test]
fn fixture_fields_match_the_json() {
    let v = fixture_value();
    let pod: Pod = decode(FIXTURE).unwrap();

    assert_eq!(pod.name(), str_at(&v, "/metadata/name"));
    assert_eq!(pod.namespace(), Some(str_at(&v, "/metadata/namespace")));
    assert_eq!(pod.uid(), str_at(&v, "/metadata/uid"));
    assert_eq!(
        pod.resource_version(),
        Some(str_at(&v, "/metadata/resourceVersion"))
    );
    assert_eq!(
        pod.created(),
        Some(Timestamp::parse(str_at(&v, "/metadata/creationTimestamp")).unwrap())
    );
    assert_eq!(pod.deleted(), None);

    let labels = v["metadata"]["labels"].as_object().unwrap();
    assert_eq!(pod.labels().len(), labels.len());
    for (k, want) in labels {
        assert_eq!(pod.label(k), want.as_str(), "label {k}");
    }
    let keys: Vec<_> = pod.labels().iter().map(|(k, _)| k).collect();
    assert!(keys.is_sorted(), "labels sorted: {keys:?}");
    assert_eq!(pod.label("no-such-label"), None);

    let annotations = v["metadata"]["annotations"].as_object().unwrap();
    assert_eq!(pod.annotations().len(), annotations.len());
    for (k, want) in annotations {
        assert_eq!(pod.annotation(k), want.as_str(), "annotation {k}");
    }

    let owner = &v["metadata"]["ownerReferences"][0];
    let owners: Vec<_> = pod.owner_references().collect();
    assert_eq!(
        owners,
        [OwnerRef {
            kind: str_at(owner, "/kind"),
            name: str_at(owner, "/name"),
            uid: str_at(owner, "/uid"),
            controller: true,
        }]
    );
    assert_eq!(
        pod.controller_owner(),
        Some(("ReplicaSet", "checkout-api-7d9f8c6b5d"))
    );
    assert_eq!(KubeResource::controller_owner(&pod), pod.controller_owner());

    assert_eq!(pod.node_name(), Some(str_at(&v, "/spec/nodeName")));
    assert_eq!(pod.phase(), Some("Running"));
    assert_eq!(pod.status(), "Running");
    assert_eq!((pod.ready_containers(), pod.total_containers()), (2, 2));
    assert_eq!(pod.restarts(), 0);
    assert_eq!(pod.last_restart(), None);
    assert_eq!(pod.restarts_column(Timestamp::now()), "0");
    assert_eq!(pod.pod_ip(), Some(str_at(&v, "/status/podIP")));
    assert_eq!(pod.host_ip(), Some(str_at(&v, "/status/hostIP")));

    let containers: Vec<_> = pod.containers().collect();
    let want: Vec<_> = v["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| Container {
            name: str_at(c, "/name"),
            image: str_at(c, "/image"),
        })
        .collect();
    assert_eq!(containers, want);
    assert_eq!(pod.init_containers().len(), 0);

    assert_eq!(
        meta_namespace_key(&pod).unwrap().as_ref(),
        "payments-prod/checkout-api-7d9f8c6b5d-x2k4p"
    );
    let now = Timestamp::parse("2025-03-16T10:00:00Z").unwrap();
    assert_eq!(pod.age(now), "2d");
}

#[test]
fn projection_agrees_with_a_full_k8s_openapi_decode() {
    let full: k8s_openapi::api::core::v1::Pod = serde_json::from_slice(FIXTURE).unwrap();
    let pod: Pod = decode(FIXTURE).unwrap();
    let meta = &full.metadata;
    let spec = full.spec.as_ref().unwrap();
    let status = full.status.as_ref().unwrap();

    assert_eq!(Some(pod.name()), meta.name.as_deref());
    assert_eq!(pod.namespace(), meta.namespace.as_deref());
    assert_eq!(Some(pod.uid()), meta.uid.as_deref());
    assert_eq!(pod.resource_version(), meta.resource_version.as_deref());
    assert_eq!(
        pod.created().map(Timestamp::seconds),
        meta.creation_timestamp.as_ref().map(|t| t.0.as_second())
    );
    let labels: Vec<_> = meta
        .labels
        .iter()
        .flatten()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(pod.labels().iter().collect::<Vec<_>>(), labels);
    let annotations: Vec<_> = meta
        .annotations
        .iter()
        .flatten()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(pod.annotations().iter().collect::<Vec<_>>(), annotations);
    let owners: Vec<_> = meta
        .owner_references
        .iter()
        .flatten()
        .map(|o| OwnerRef {
            kind: &o.kind,
            name: &o.name,
            uid: &o.uid,
            controller: o.controller == Some(true),
        })
        .collect();
    assert_eq!(pod.owner_references().collect::<Vec<_>>(), owners);
    assert_eq!(pod.node_name(), spec.node_name.as_deref());
    assert_eq!(pod.phase(), status.phase.as_deref());
    assert_eq!(pod.pod_ip(), status.pod_ip.as_deref());
    assert_eq!(pod.host_ip(), status.host_ip.as_deref());
    let containers: Vec<_> = spec
        .containers
        .iter()
        .map(|c| Container {
            name: &c.name,
            image: c.image.as_deref().unwrap_or_default(),
        })
        .collect();
    assert_eq!(pod.containers().collect::<Vec<_>>(), containers);
    let statuses = status.container_statuses.as_deref().unwrap_or_default();
    let ready = statuses.iter().filter(|c| c.ready).count();
    let restarts: i32 = statuses.iter().map(|c| c.restart_count).sum();
    assert_eq!(usize::from(pod.ready_containers()), ready);
    assert_eq!(pod.restarts(), restarts as u32);
}

#[test]
fn fits_the_memory_budget() {
    let pod: Pod = decode(FIXTURE).unwrap();
    let total = pod.heap_bytes() + std::mem::size_of::<Pod>();
    assert!(total <= 1024, "pod projection holds {total} bytes");
}

#[test]
fn last_applied_configuration_is_dropped() {
    let mut v = fixture_value();
    v["metadata"]["annotations"][LAST_APPLIED_ANNOTATION] =
        json!("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\"}}");
    let pod: Pod = serde_json::from_value(v).unwrap();
    assert_eq!(pod.annotation(LAST_APPLIED_ANNOTATION), None);
    assert_eq!(pod.annotations().len(), 4);
}

#[test]
fn escaped_strings_and_unsorted_duplicate_keys() {
    let json = br#"{"metadata":{"name":"a\u0062c","labels":{"z":"1","a":"x\"y","z":"2"}}}"#;
    let pod: Pod = kscope_resources::decode::read(json).unwrap();
    assert_eq!(pod, decode::<Pod>(json).unwrap());
    assert_eq!(pod, serde_json::from_slice::<Pod>(json).unwrap());
    assert_eq!(pod.name(), "abc");
    assert_eq!(
        pod.labels().iter().collect::<Vec<_>>(),
        [("a", "x\"y"), ("z", "2")]
    );
    assert_eq!(pod.namespace(), None);
    assert_eq!(pod.status(), "");
}

/// Decodes a pod made of a base (name, namespace) and `extra` merged over it, checking that
/// kscope's skipping decoder (without serde_json's fallback) reads it as serde_json does.
fn pod(extra: Value) -> Pod {
    let mut v = json!({"metadata": {"name": "p", "namespace": "ns"}});
    merge(&mut v, extra);
    let json = serde_json::to_vec(&v).unwrap();
    let skimmed: Pod = kscope_resources::decode::read(&json).unwrap();
    let whole: Pod = serde_json::from_slice(&json).unwrap();
    assert_eq!(skimmed, whole, "{v}");
    skimmed
}

#[test]
fn nulls_escapes_and_unread_members_read_as_serde_json_reads_them() {
    // Nulls where the wire form has an Option, escapes in values and in label keys, members
    // no projection reads (at every level), unsorted labels, the last-applied annotation,
    // non-ASCII text.
    let p = pod(json!({
        "kind": "Pod",
        "metadata": {
            "uid": null, "resourceVersion": "7", "generateName": "p-",
            "labels": {"z\"A": "1", "app": "w\"eb", "b": "ü", "a\\b": "2"},
            "annotations": {(LAST_APPLIED_ANNOTATION): "{\"big\": true}", "note": "日本"},
            "ownerReferences": [{"kind": "ReplicaSet", "name": "rs", "uid": "u",
                                 "controller": null, "blockOwnerDeletion": true}],
            "managedFields": [{"manager": "m", "fieldsV1": {"f:a": {}, "f:b": {"k:{\"x\":1}": {}}}}],
        },
        "spec": {"nodeName": null, "extra": [1, {"a": []}],
                 "containers": [{"name": "c", "image": null, "ports": [{"containerPort": 80}]}],
                 "initContainers": null},
        "status": {
            "phase": "Running", "reason": null, "podIP": "10.0.0.1", "hostIP": null,
            "conditions": [{"type": "Ready", "status": "True", "reason": null,
                            "lastTransitionTime": "2025-01-01T00:00:00Z"}],
            "containerStatuses": [{"name": "c", "ready": true, "restartCount": 3,
                                   "started": null, "state": {"running": {"startedAt": "x"}},
                                   "lastState": {"terminated": {"reason": "Error",
                                       "exitCode": -1, "signal": 9,
                                       "finishedAt": "2025-01-01T00:00:00Z"}},
                                   "imageID": "sha256:abc"}],
            "initContainerStatuses": null,
        },
    }));
    assert_eq!(p.label("z\"A"), Some("1"));
    assert_eq!(p.label("a\\b"), Some("2"));
    assert_eq!(p.label("app"), Some("w\"eb"));
    assert_eq!(p.annotation(LAST_APPLIED_ANNOTATION), None);
    assert_eq!(p.restarts(), 3);
}

#[test]
fn what_the_skipping_decoder_does_not_read_goes_to_serde_json() {
    for json in [
        // An escaped member name: serde reads it as `name`.
        &br#"{"metadata":{"n\u0061me":"x"}}"#[..],
        // A duplicate member, a null where the derive wants a value, a fraction.
        br#"{"metadata":{"name":"a","name":"b"}}"#,
        br#"{"status":{"containerStatuses":[{"name":"c","ready":null}]}}"#,
        br#"{"status":{"containerStatuses":[{"name":"c","restartCount":1.5}]}}"#,
        br#"{"metadata":null}"#,
        br#"{"metadata":{}} trailing"#,
        // A member name no projection reads, not ASCII.
        "{\"metadata\":{\"name\":\"p\",\"ñ\":1}}".as_bytes(),
        // Refused by both.
        br#"{"metadata":{},"metadata":{}}"#,
        br#"{"metadata":{"labels":{"a":null}}}"#,
        br#"{"metadata":{"creationTimestamp":"yesterday"}}"#,
        br#"{"status":{"containerStatuses":[{"name":"c","ready":"true"}]}}"#,
        br#"{"status":{"containerStatuses":[{"name":"c","restartCount":9223372036854775808}]}}"#,
    ] {
        let text = String::from_utf8_lossy(json);
        let by_serde = serde_json::from_slice::<Pod>(json).ok();
        assert_eq!(decode::<Pod>(json).ok(), by_serde, "{text}");
    }
    let escaped: Pod = decode(br#"{"metadata":{"n\u0061me":"x"}}"#).unwrap();
    assert_eq!(escaped.name(), "x");
}

#[test]
fn a_member_name_in_the_last_sixteen_bytes_is_read() {
    // The scan does not classify the text's last sixteen bytes by lanes.
    let json = br#"{"metadata":{"name":"p"},"status":{"initContainerStatuses":null}}"#;
    let skimmed = kscope_resources::decode::read::<Pod>(json).unwrap();
    assert_eq!(skimmed, serde_json::from_slice::<Pod>(json).unwrap());
    assert_eq!(skimmed.name(), "p");
}

#[test]
fn the_skipping_decoder_reads_the_projection_as_serde_json_does() {
    let whole: Pod = serde_json::from_slice(FIXTURE).unwrap();
    assert_eq!(
        kscope_resources::decode::read::<Pod>(FIXTURE).unwrap(),
        whole
    );
    assert_eq!(decode::<Pod>(FIXTURE).unwrap(), whole);
    let mut terminating = fixture_value();
    merge(
        &mut terminating,
        json!({
            "metadata": {"deletionTimestamp": "2025-03-14T10:00:00Z",
                         "annotations": {"a": "b"}},
            "status": {"reason": "NodeLost", "podIP": "10.0.0.9", "hostIP": "10.1.0.1"},
        }),
    );
    let p = pod(terminating);
    assert_eq!(p.status(), "Unknown");
    assert_eq!(p.annotation("a"), Some("b"));
}

fn merge(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k).or_insert(Value::Null), v);
            }
        }
        (slot, v) => *slot = v,
    }
}

fn containers(names: &[&str]) -> Value {
    names
        .iter()
        .map(|n| json!({"name": n, "image": format!("img/{n}")}))
        .collect()
}

#[test]
fn status_crash_loop_back_off() {
    let p = pod(json!({
        "spec": {"containers": containers(&["app"])},
        "status": {"phase": "Running", "containerStatuses": [{
            "name": "app", "ready": false, "restartCount": 7,
            "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}},
            "lastState": {"terminated": {"exitCode": 1, "reason": "Error",
                "finishedAt": "2025-03-14T10:00:00Z"}}
        }]}
    }));
    assert_eq!(p.status(), "CrashLoopBackOff");
    assert_eq!((p.ready_containers(), p.total_containers()), (0, 1));
    assert_eq!(p.restarts(), 7);
    assert_eq!(
        p.last_restart(),
        Some(Timestamp::parse("2025-03-14T10:00:00Z").unwrap())
    );
    let now = Timestamp::parse("2025-03-14T10:05:00Z").unwrap();
    assert_eq!(p.restarts_column(now), "7 (5m ago)");
}

#[test]
fn status_waiting_and_terminated_reasons() {
    let cases = [
        (
            json!({"waiting": {"reason": "ContainerCreating"}}),
            "Pending",
            "ContainerCreating",
        ),
        (
            json!({"waiting": {"reason": "ImagePullBackOff"}}),
            "Pending",
            "ImagePullBackOff",
        ),
        (
            json!({"terminated": {"exitCode": 0, "reason": "Completed"}}),
            "Succeeded",
            "Completed",
        ),
        (
            json!({"terminated": {"exitCode": 137, "reason": "OOMKilled"}}),
            "Running",
            "OOMKilled",
        ),
        (
            json!({"terminated": {"exitCode": 1, "reason": "Error"}}),
            "Failed",
            "Error",
        ),
        (
            json!({"terminated": {"exitCode": 3}}),
            "Failed",
            "ExitCode:3",
        ),
        (
            json!({"terminated": {"exitCode": 137, "signal": 9}}),
            "Failed",
            "Signal:9",
        ),
        (json!({"waiting": {}}), "Pending", "Pending"),
        (
            json!({"running": {"startedAt": "2025-03-14T09:21:14Z"}}),
            "Running",
            "Running",
        ),
    ];
    for (state, phase, want) in cases {
        let p = pod(json!({
            "spec": {"containers": containers(&["app"])},
            "status": {"phase": phase, "containerStatuses": [
                {"name": "app", "ready": false, "restartCount": 0, "state": state}
            ]}
        }));
        assert_eq!(p.status(), want, "{state}");
    }
}

#[test]
fn status_completed_with_a_running_container() {
    let status = |ready_condition: &str| {
        json!({"phase": "Running",
        "conditions": [{"type": "Ready", "status": ready_condition}],
        "containerStatuses": [
            {"name": "a", "ready": true, "restartCount": 0, "state": {"running": {}}},
            {"name": "b", "ready": false, "restartCount": 1,
             "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
        ]})
    };
    let spec = json!({"containers": containers(&["a", "b"])});
    let p = pod(json!({"spec": spec, "status": status("True")}));
    assert_eq!(p.status(), "Running");
    assert_eq!((p.ready_containers(), p.total_containers()), (1, 2));
    let p = pod(json!({"spec": spec, "status": status("False")}));
    assert_eq!(p.status(), "NotReady");
}

#[test]
fn status_terminating_and_node_lost() {
    let running = json!({"phase": "Running", "containerStatuses": [
        {"name": "app", "ready": true, "restartCount": 0, "state": {"running": {}}}
    ]});
    let p = pod(json!({
        "metadata": {"deletionTimestamp": "2025-03-14T11:00:00Z"},
        "spec": {"containers": containers(&["app"])},
        "status": running,
    }));
    assert_eq!(p.status(), "Terminating");
    assert_eq!(
        p.deleted(),
        Some(Timestamp::parse("2025-03-14T11:00:00Z").unwrap())
    );

    let mut lost = running.clone();
    lost["reason"] = json!("NodeLost");
    let p = pod(json!({
        "metadata": {"deletionTimestamp": "2025-03-14T11:00:00Z"},
        "spec": {"containers": containers(&["app"])},
        "status": lost,
    }));
    assert_eq!(p.status(), "Unknown");

    let p = pod(json!({
        "metadata": {"deletionTimestamp": "2025-03-14T11:00:00Z"},
        "spec": {"containers": containers(&["app"])},
        "status": {"phase": "Succeeded", "containerStatuses": [{"name": "app", "ready": false,
            "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]},
    }));
    assert_eq!(p.status(), "Completed", "terminal pods are not Terminating");
}

#[test]
fn status_pod_reason_and_scheduling_gates() {
    let p = pod(json!({"status": {"phase": "Failed", "reason": "Evicted"}}));
    assert_eq!(p.status(), "Evicted");
    let p = pod(json!({"status": {"phase": "Pending", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}
    ]}}));
    assert_eq!(p.status(), "SchedulingGated");
}

fn init_pod(init_state: Value, restart_count: i32) -> Pod {
    pod(json!({
        "spec": {
            "initContainers": containers(&["setup", "migrate"]),
            "containers": containers(&["app"]),
        },
        "status": {
            "phase": "Pending",
            "conditions": [{"type": "Initialized", "status": "False"}],
            "initContainerStatuses": [
                {"name": "setup", "ready": false, "restartCount": 0,
                 "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
                {"name": "migrate", "ready": false, "restartCount": restart_count,
                 "state": init_state},
            ],
            "containerStatuses": [{"name": "app", "ready": false, "restartCount": 0,
                "state": {"waiting": {"reason": "PodInitializing"}}}],
        }
    }))
}

#[test]
fn status_init_containers() {
    let cases = [
        (
            json!({"waiting": {"reason": "PodInitializing"}}),
            "Init:1/2",
        ),
        (json!({"running": {}}), "Init:1/2"),
        (
            json!({"waiting": {"reason": "CrashLoopBackOff"}}),
            "Init:CrashLoopBackOff",
        ),
        (
            json!({"terminated": {"exitCode": 1, "reason": "Error"}}),
            "Init:Error",
        ),
        (json!({"terminated": {"exitCode": 2}}), "Init:ExitCode:2"),
        (
            json!({"terminated": {"exitCode": 137, "signal": 9}}),
            "Init:Signal:9",
        ),
    ];
    for (state, want) in cases {
        let p = init_pod(state.clone(), 3);
        assert_eq!(p.status(), want, "{state}");
        assert_eq!(p.restarts(), 3, "init restarts count while initializing");
        assert_eq!((p.ready_containers(), p.total_containers()), (0, 1));
    }
    let p = init_pod(
        json!({"terminated": {"exitCode": 0, "reason": "Completed"}}),
        0,
    );
    assert_eq!(p.status(), "PodInitializing");
    assert_eq!(
        p.init_containers().map(|c| c.name).collect::<Vec<_>>(),
        ["setup", "migrate"]
    );
}

#[test]
fn status_sidecar_init_containers() {
    let p = pod(json!({
        "spec": {
            "initContainers": [{"name": "proxy", "image": "envoy", "restartPolicy": "Always"}],
            "containers": containers(&["app"]),
        },
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Initialized", "status": "True"},
                           {"type": "Ready", "status": "True"}],
            "initContainerStatuses": [{"name": "proxy", "ready": true, "started": true,
                "restartCount": 2, "state": {"running": {}},
                "lastState": {"terminated": {"exitCode": 1,
                    "finishedAt": "2025-03-14T09:00:00Z"}}}],
            "containerStatuses": [{"name": "app", "ready": true, "restartCount": 1,
                "state": {"running": {}},
                "lastState": {"terminated": {"exitCode": 1,
                    "finishedAt": "2025-03-14T08:00:00Z"}}}],
        }
    }));
    assert_eq!(p.status(), "Running");
    assert_eq!((p.ready_containers(), p.total_containers()), (2, 2));
    assert_eq!(p.restarts(), 3);
    assert_eq!(
        p.last_restart(),
        Some(Timestamp::parse("2025-03-14T09:00:00Z").unwrap())
    );
}

#[test]
fn restart_counts_past_any_sum_saturate() {
    // A server's numbers, summed: this overflowed (a panic in a debug build, RESTARTS 0 in a
    // release build).
    let max = i64::MAX;
    let app = |name: &str, count: i64| json!({"name": name, "ready": true, "restartCount": count});
    let p = pod(json!({
        "spec": {"containers": containers(&["a", "b"])},
        "status": {"containerStatuses": [app("a", max), app("b", max)]},
    }));
    assert_eq!(p.restarts(), u32::MAX);
    let sidecars = pod(json!({
        "spec": {
            "initContainers": [{"name": "s", "restartPolicy": "Always"},
                               {"name": "t", "restartPolicy": "Always"}],
            "containers": containers(&["a"]),
        },
        "status": {
            "conditions": [{"type": "Initialized", "status": "True"}],
            "initContainerStatuses": [
                {"name": "s", "ready": true, "started": true, "restartCount": max},
                {"name": "t", "ready": true, "started": true, "restartCount": max},
            ],
            "containerStatuses": [app("a", max)],
        },
    }));
    assert_eq!(sidecars.restarts(), u32::MAX);
    let negative = pod(json!({
        "spec": {"containers": containers(&["a", "b"])},
        "status": {"containerStatuses": [app("a", i64::MIN), app("b", i64::MIN)]},
    }));
    assert_eq!(negative.restarts(), 0);
}

#[test]
fn malformed_pods_are_typed_errors() {
    for bad in [
        &b"{"[..],
        b"[]",
        b"null",
        br#"{"metadata":{"name":5}}"#,
        br#"{"metadata":{"creationTimestamp":"yesterday"}}"#,
        br#"{"metadata":{"labels":{"a":1}}}"#,
        br#"{"status":{"containerStatuses":[{"restartCount":"x"}]}}"#,
    ] {
        let err = decode::<Pod>(bad).unwrap_err();
        assert!(
            matches!(err, DecodeError::Object { kind: "Pod", .. }),
            "{err}"
        );
    }
}

#[test]
fn a_malformed_list_item_fails_alone() {
    let fixture = std::str::from_utf8(FIXTURE).unwrap().trim();
    let list = format!(
        r#"{{"kind":"PodList","apiVersion":"v1",
            "metadata":{{"resourceVersion":"42","continue":"tok"}},
            "items":[{fixture},
                {{"metadata":{{"name":["not","a","string"]}}}},
                {{"metadata":{{"name":"b"}}}}]}}"#
    );
    let page = decode_list::<Pod>(list.as_bytes()).unwrap();
    assert_eq!(page.resource_version, "42");
    assert_eq!(page.continue_token.as_deref(), Some("tok"));
    assert_eq!(page.items.len(), 2);
    assert_eq!(page.items[0].name(), "checkout-api-7d9f8c6b5d-x2k4p");
    assert_eq!(page.items[1].name(), "b");
    assert_eq!(page.malformed.len(), 1);
    assert!(page.malformed[0].starts_with("list item 1:"));

    let empty = decode_list::<Pod>(br#"{"metadata":{"continue":""},"items":null}"#).unwrap();
    assert!(empty.items.is_empty() && empty.continue_token.is_none());
    assert!(decode_list::<Pod>(br#"{"items":[{}"#).is_err());
}

#[test]
fn a_list_item_with_a_malformed_unread_member_is_kept_when_another_fails() {
    // The first item reads (its managedFields are skipped, checked for structure only), the
    // second does not: the page is read item by item, and that must keep the first.
    let fixture = std::str::from_utf8(FIXTURE).unwrap().trim();
    let lax = fixture.replacen(
        r#""managedFields":["#,
        r#""managedFields":[{"a":01 "b" tru},"#,
        1,
    );
    assert!(lax != fixture, "the fixture has managedFields");
    assert!(decode::<Pod>(lax.as_bytes()).is_ok());
    let list = format!(
        r#"{{"kind":"PodList","x":[1 2],"metadata":{{"resourceVersion":"42","y":tru}},
            "items":[{lax},{{"metadata":{{"name":5}}}},{{"metadata":{{"name":"b"}}}}]}}"#
    );
    let page = decode_list::<Pod>(list.as_bytes()).unwrap();
    assert_eq!(page.resource_version, "42");
    let names: Vec<_> = page.items.iter().map(|p| p.name()).collect();
    assert_eq!(names, ["checkout-api-7d9f8c6b5d-x2k4p", "b"]);
    assert_eq!(page.malformed.len(), 1);
    assert!(
        page.malformed[0].starts_with("list item 1:"),
        "{:?}",
        page.malformed
    );
    // Brackets that do not balance still lose the page: its items cannot be told apart.
    let broken = format!(r#"{{"items":[{lax},{{"metadata":{{"name":5]}}]}}"#);
    assert!(decode_list::<Pod>(broken.as_bytes()).is_err());
}

#[test]
fn a_watch_line_takes_json_whitespace_only() {
    let fixture = std::str::from_utf8(FIXTURE).unwrap().trim();
    let line = |a: &str, b: &str, c: &str| {
        bytes::Bytes::from(format!(
            r#"{a}{{{b}"type"{b}:{b}"ADDED"{b},{b}"object"{b}:{b}{fixture}{c}}}{a}"#
        ))
    };
    for ws in [" ", "\t", "\n", "\r", " \r\n\t"] {
        assert!(
            decode_watch_line::<Pod>(&line(ws, ws, ws)).is_ok(),
            "{ws:?}"
        );
    }
    // A form feed is ASCII whitespace, not JSON whitespace (nor is a vertical tab).
    for odd in ["\u{c}", "\u{b}"] {
        for (a, b, c) in [(odd, "", ""), ("", odd, ""), ("", "", odd)] {
            let text = line(a, b, c);
            assert!(serde_json::from_slice::<serde_json::Value>(&text).is_err());
            assert!(
                decode_watch_line::<Pod>(&text).is_err(),
                "{a:?} {b:?} {c:?}"
            );
        }
    }
}

/// The fuzz target's checks (docs/fuzzing.md), shared so that `cargo test` runs them too.
#[path = "../../fuzz/src/differential.rs"]
mod differential;

#[test]
fn the_decoders_agree_with_serde_json_on_mutated_pods_pages_and_lines() {
    // Bounded to a few seconds of a debug build; the fuzz target runs these without end.
    let fixture = std::str::from_utf8(FIXTURE).unwrap().trim();
    let list = format!(r#"{{"metadata":{{"resourceVersion":"1"}},"items":[{fixture},{fixture}]}}"#);
    let line = format!(r#"{{"type":"MODIFIED","object":{fixture}}}"#);
    for seed in [FIXTURE, list.as_bytes(), line.as_bytes(), b"", b"{}", b"[]"] {
        differential::check_bytes(seed);
    }
    for seed in 0u64..600 {
        let seed = seed.to_le_bytes();
        differential::check_structured(&mut differential::Choices::new(&seed));
    }
}

#[test]
fn pod_kind_paths() {
    assert_eq!(Pod::KIND, ResourceKind::Pods);
    assert_eq!(Pod::KIND.list_path(None), "/api/v1/pods");
    assert_eq!(
        Pod::KIND.object_path(Some("payments-prod"), "p").unwrap(),
        "/api/v1/namespaces/payments-prod/pods/p"
    );
}

#[test]
fn truncated_or_corrupted_input_never_panics() {
    for end in (0..FIXTURE.len()).step_by(13) {
        assert!(
            decode::<Pod>(&FIXTURE[..end]).is_err(),
            "prefix of {end} bytes"
        );
    }
    let mut bytes = FIXTURE.to_vec();
    for i in (0..bytes.len()).step_by(29) {
        let saved = bytes[i];
        for b in [b'"', b'{', b']', b'0', b'\\', 0xff] {
            bytes[i] = b;
            let _ = decode::<Pod>(&bytes);
            // Where both decoders take the text, they read the same pod (kscope's may also
            // take it where the corruption is in a part the projection skips).
            let skimmed = kscope_resources::decode::read::<Pod>(&bytes);
            if let (Ok(skimmed), Ok(whole)) = (skimmed, serde_json::from_slice::<Pod>(&bytes)) {
                assert_eq!(skimmed, whole, "byte {i} set to {b}");
            }
        }
        bytes[i] = saved;
    }
}
