//! The sim's list/watch protocol, checked over real loopback HTTPS with kube's client.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kscope_sim::{Faults, Resource, Sim, SimConfig, SimHandle};
use kube::api::{Api, ListParams, WatchEvent, WatchParams};
use kube::{Client, ResourceExt};

use crate::common::wait;

/// Starts a sim and a client for it. kube's default retry of 429/503/504 (15 tries,
/// backing off up to minutes) is off, so injected failures reach the test.
async fn start(config: SimConfig) -> (SimHandle, Client) {
    let sim = Sim::start(config).await.expect("sim starts");
    let mut kube_config = sim.kube_config().await.expect("kube config for the sim");
    kube_config.default_retry = false;
    let client = Client::try_from(kube_config).expect("client for the sim");
    (sim, client)
}

fn key(pod: &Pod) -> String {
    format!("{}/{}", pod.namespace().unwrap_or_default(), pod.name_any())
}

fn rv_of(list_rv: &Option<String>) -> u64 {
    list_rv
        .as_deref()
        .unwrap_or("0")
        .parse()
        .expect("numeric RV")
}

/// Pages of a list taken while churn runs are one snapshot: one RV, no duplicates, and
/// exactly the state at that RV as reconstructed independently from a watch.
// The sim's server and churn get threads of their own: on a loaded machine a single test
// thread shared with 400 writes/s made this test crawl.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paginated_list_under_churn_is_one_consistent_snapshot() {
    let (sim, client) = start(SimConfig::with_size(2_000, 10, 6).history(100_000)).await;
    let pods: Api<Pod> = Api::all(client);
    let initial = pods.list(&ListParams::default()).await.unwrap();
    let r0 = initial.metadata.resource_version.clone().unwrap();
    let mut state: BTreeMap<String, String> = initial
        .items
        .iter()
        .map(|p| (key(p), p.resource_version().unwrap()))
        .collect();
    let mut events = pods
        .watch(&WatchParams::default().timeout(60), &r0)
        .await
        .unwrap()
        .boxed();
    sim.set_churn_rate(400.0);
    tokio::time::sleep(Duration::from_millis(200)).await;

    let mut seen = BTreeMap::new();
    let mut snapshot_rvs = BTreeSet::new();
    let mut token: Option<String> = None;
    loop {
        let mut params = ListParams::default().limit(97);
        if let Some(t) = &token {
            params = params.continue_token(t);
        }
        let page = pods.list(&params).await.unwrap();
        snapshot_rvs.insert(page.metadata.resource_version.clone().unwrap());
        for pod in &page.items {
            assert!(
                seen.insert(key(pod), pod.resource_version().unwrap())
                    .is_none(),
                "duplicate {}",
                key(pod)
            );
        }
        tokio::time::sleep(Duration::from_millis(15)).await;
        token = page.metadata.continue_.filter(|t| !t.is_empty());
        if token.is_none() {
            break;
        }
    }
    assert_eq!(snapshot_rvs.len(), 1, "all pages at one RV");
    let snapshot: u64 = snapshot_rvs.into_iter().next().unwrap().parse().unwrap();
    assert!(
        snapshot > rv_of(&Some(r0)),
        "churn ran before the first page"
    );

    // Replay the watch up to the snapshot RV.
    while let Some(event) = events.try_next().await.unwrap() {
        let (pod, deleted) = match event {
            WatchEvent::Added(p) | WatchEvent::Modified(p) => (p, false),
            WatchEvent::Deleted(p) => (p, true),
            WatchEvent::Bookmark(_) => continue,
            WatchEvent::Error(e) => panic!("watch error {e:?}"),
        };
        let rv: u64 = pod.resource_version().unwrap().parse().unwrap();
        if rv > snapshot {
            break;
        }
        if deleted {
            state.remove(&key(&pod));
        } else {
            state.insert(key(&pod), pod.resource_version().unwrap());
        }
    }
    drop(events);
    assert_eq!(seen.len(), state.len(), "no gaps");
    assert_eq!(seen, state, "pages equal the state at the snapshot RV");
    sim.shutdown().await;
}

/// A watch from an RV older than the history gets HTTP 200 and one ERROR 410 event.
#[tokio::test]
async fn watch_from_compacted_rv_gets_410_error_event() {
    let (sim, client) = start(SimConfig::with_size(300, 4, 3).history(20)).await;
    let pods: Api<Pod> = Api::all(client);
    let old = pods.list(&ListParams::default()).await.unwrap();
    let old_rv = old.metadata.resource_version.unwrap();
    churn_past_history(&sim, rv_of(&Some(old_rv.clone()))).await;
    let mut stream = pods
        .watch(&WatchParams::default().timeout(10), &old_rv)
        .await
        .unwrap()
        .boxed();
    match stream.try_next().await.unwrap() {
        Some(WatchEvent::Error(status)) => {
            assert_eq!(status.code, 410);
            assert_eq!(status.reason, "Expired");
        }
        other => panic!("expected an ERROR event, got {other:?}"),
    }
    assert!(
        stream.try_next().await.unwrap().is_none(),
        "closed after the error"
    );

    // An expired continue token is HTTP 410 too.
    let page = pods.list(&ListParams::default().limit(10)).await.unwrap();
    churn_past_history(&sim, rv_of(&page.metadata.resource_version)).await;
    let err = pods
        .list(
            &ListParams::default()
                .limit(10)
                .continue_token(page.metadata.continue_.as_deref().unwrap()),
        )
        .await
        .unwrap_err();
    match err {
        kube::Error::Api(status) => {
            assert_eq!((status.code, status.reason.as_str()), (410, "Expired"))
        }
        other => panic!("expected 410, got {other}"),
    }
    sim.shutdown().await;
}

/// Churns until the sim's resourceVersion is well past `rv` (five times a 20-event
/// history), then stops: `rv` has left the history, however slowly the machine churns.
async fn churn_past_history(sim: &SimHandle, rv: u64) {
    sim.set_churn_rate(300.0);
    wait::until("the churn writes past the history", || {
        match sim.position().rv {
            now if now > rv + 100 => Ok(()),
            now => Err(format!("resourceVersion {now}, from {rv}")),
        }
    })
    .await;
    sim.set_churn_rate(0.0);
}

/// After an epoch restart (as after an etcd restore) every old RV is too old.
#[tokio::test]
async fn epoch_restart_makes_old_rvs_expire() {
    let (sim, client) = start(SimConfig::with_size(100, 2, 2)).await;
    let pods: Api<Pod> = Api::all(client);
    let old_rv = pods
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let position = sim.restart_epoch();
    assert_eq!(position.epoch, 1);
    let mut stream = pods
        .watch(&WatchParams::default().timeout(5), &old_rv)
        .await
        .unwrap()
        .boxed();
    assert!(
        matches!(stream.try_next().await.unwrap(), Some(WatchEvent::Error(s)) if s.code == 410)
    );
    let exact = ListParams::default()
        .at(&old_rv)
        .matching(kube::api::VersionMatch::Exact);
    assert!(matches!(pods.list(&exact).await, Err(kube::Error::Api(s)) if s.code == 410));
    let fresh = pods.list(&ListParams::default()).await.unwrap();
    assert_eq!(fresh.items.len(), 100);
    assert_eq!(rv_of(&fresh.metadata.resource_version), position.rv);
    sim.shutdown().await;
}

#[tokio::test]
async fn bookmarks_arrive_and_carry_only_the_rv() {
    let config = SimConfig::with_size(50, 2, 2).bookmark_interval(Duration::from_millis(200));
    let (sim, client) = start(config).await;
    let pods: Api<Pod> = Api::all(client);
    let rv = pods
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let mut stream = pods
        .watch(&WatchParams::default().timeout(5), &rv)
        .await
        .unwrap()
        .boxed();
    let event = tokio::time::timeout(Duration::from_secs(3), stream.try_next())
        .await
        .expect("a bookmark within 3s")
        .unwrap();
    match event {
        Some(WatchEvent::Bookmark(b)) => {
            assert_eq!(b.metadata.resource_version, rv);
            assert_eq!(b.types.kind, "Pod");
        }
        other => panic!("expected a bookmark, got {other:?}"),
    }
    sim.shutdown().await;
}

/// On paused time, so that when the watch ends says why it ended: at its timeoutSeconds,
/// whatever the machine's load.
#[tokio::test(start_paused = true)]
async fn timeout_seconds_ends_the_watch_cleanly() {
    let (sim, client) = start(SimConfig::with_size(20, 1, 1)).await;
    let pods: Api<Pod> = Api::all(client);
    let started = tokio::time::Instant::now();
    let stream = pods
        .watch(&WatchParams::default().timeout(1), "0")
        .await
        .unwrap();
    let events: Vec<_> = stream.try_collect().await.unwrap();
    assert_eq!(events.len(), 20, "initial state as ADDED");
    assert!(events.iter().all(|e| matches!(e, WatchEvent::Added(_))));
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_secs(1) && elapsed < Duration::from_secs(2),
        "the watch ends at its timeout: {elapsed:?}"
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn label_and_field_selectors_filter_lists_and_watches() {
    let (sim, client) = start(SimConfig::with_size(600, 5, 4)).await;
    let pods: Api<Pod> = Api::all(client);
    let all = pods.list(&ListParams::default()).await.unwrap().items;
    let label = |p: &Pod, k: &str| p.labels().get(k).cloned();
    type Check = Box<dyn Fn(&Pod) -> bool>;
    let node = all[0].spec.as_ref().unwrap().node_name.clone().unwrap();
    let ns = all[0].namespace().unwrap();
    let node_for_check = node.clone();
    let ns_for_check = ns.clone();
    let node_field = format!("spec.nodeName={node}");
    let ns_field = format!("metadata.namespace={ns},status.phase!=Pending");
    let cases: Vec<(&str, &str, Check)> = vec![
        (
            "tier=frontend",
            "",
            Box::new(move |p| label(p, "tier").as_deref() == Some("frontend")),
        ),
        (
            "tier!=frontend",
            "",
            Box::new(move |p| label(p, "tier").as_deref() != Some("frontend")),
        ),
        (
            "tier in (cache,edge)",
            "",
            Box::new(move |p| matches!(label(p, "tier").as_deref(), Some("cache" | "edge"))),
        ),
        (
            "tier notin (backend)",
            "",
            Box::new(move |p| label(p, "tier").as_deref() != Some("backend")),
        ),
        (
            "team,!missing",
            "",
            Box::new(move |p| label(p, "team").is_some()),
        ),
        (
            "",
            "status.phase=Pending",
            Box::new(|p| p.status.as_ref().unwrap().phase.as_deref() == Some("Pending")),
        ),
        (
            "",
            &node_field,
            Box::new(move |p| {
                p.spec.as_ref().unwrap().node_name.as_deref() == Some(node_for_check.as_str())
            }),
        ),
        (
            "tier==backend",
            &ns_field,
            Box::new(move |p| {
                label(p, "tier").as_deref() == Some("backend")
                    && p.namespace().as_deref() == Some(ns_for_check.as_str())
                    && p.status.as_ref().unwrap().phase.as_deref() != Some("Pending")
            }),
        ),
    ];
    for (labels, fields, check) in &cases {
        let got = pods
            .list(&ListParams::default().labels(labels).fields(fields))
            .await
            .unwrap()
            .items;
        let expected: BTreeSet<String> = all.iter().filter(|p| check(p)).map(key).collect();
        let got: BTreeSet<String> = got.iter().map(key).collect();
        assert!(
            !expected.is_empty(),
            "case {labels} {fields} selects something"
        );
        assert_eq!(got, expected, "labels {labels:?} fields {fields:?}");
    }

    // Watches filter too: with churn, only frontend pods come through.
    let mut stream = pods
        .watch(
            &WatchParams::default().labels("tier=frontend").timeout(3),
            "0",
        )
        .await
        .unwrap()
        .boxed();
    sim.set_churn_rate(500.0);
    let mut count = 0;
    while let Some(event) = stream.try_next().await.unwrap() {
        if let WatchEvent::Added(p) | WatchEvent::Modified(p) | WatchEvent::Deleted(p) = event {
            assert_eq!(label(&p, "tier").as_deref(), Some("frontend"));
            count += 1;
        }
    }
    assert!(count > 0);
    sim.shutdown().await;
}

#[tokio::test]
async fn same_seed_same_cluster() {
    let snapshot = |sim: &SimHandle| {
        Resource::ALL
            .into_iter()
            .map(|r| sim.truth(r))
            .collect::<Vec<_>>()
    };
    // The timeline follows the start time unless pinned; two starts may straddle a second.
    let born = 1_741_944_000;
    let (a, ca) = start(SimConfig::with_size(400, 6, 3).seed(42).born_at(born)).await;
    let (b, cb) = start(SimConfig::with_size(400, 6, 3).seed(42).born_at(born)).await;
    let (c, _) = start(SimConfig::with_size(400, 6, 3).seed(43).born_at(born)).await;
    assert_eq!(snapshot(&a), snapshot(&b));
    assert_ne!(snapshot(&a), snapshot(&c));
    let pods_a = Api::<Pod>::all(ca)
        .list(&ListParams::default())
        .await
        .unwrap();
    let pods_b = Api::<Pod>::all(cb)
        .list(&ListParams::default())
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&pods_a.items).unwrap(),
        serde_json::to_value(&pods_b.items).unwrap()
    );
    let pod = &pods_a.items[0];
    assert!(
        pod.metadata
            .managed_fields
            .as_ref()
            .is_some_and(|m| m.len() == 2)
    );
    assert!(pod.owner_references()[0].kind == "ReplicaSet");
    for sim in [a, b, c] {
        sim.shutdown().await;
    }
}

/// A client that lists, then watches while churn runs, ends with exactly the server's truth
/// once churn stops: the sim's state and its event stream agree. The sim and the client share
/// one thread on paused time, so the churn's 1.5 s pass only while both wait: on a loaded
/// machine a list slower than the churn left nothing for the watch to replay.
#[tokio::test(start_paused = true)]
async fn watch_replay_converges_to_truth_after_churn_for() {
    let config = SimConfig::with_size(800, 6, 4)
        .churn(600.0, Some(Duration::from_millis(1500)))
        .bookmark_interval(Duration::from_millis(100));
    let (sim, client) = start(config).await;
    let pods: Api<Pod> = Api::all(client);
    let list = pods.list(&ListParams::default().limit(100)).await.unwrap();
    let mut token = list.metadata.continue_.clone();
    let rv = list.metadata.resource_version.clone().unwrap();
    let mut cache: BTreeMap<String, String> = list
        .items
        .iter()
        .map(|p| (key(p), p.resource_version().unwrap()))
        .collect();
    while let Some(t) = token.filter(|t| !t.is_empty()) {
        let page = pods
            .list(&ListParams::default().limit(100).continue_token(&t))
            .await
            .unwrap();
        cache.extend(
            page.items
                .iter()
                .map(|p| (key(p), p.resource_version().unwrap())),
        );
        token = page.metadata.continue_;
    }
    let mut stream = pods
        .watch(&WatchParams::default().timeout(30), &rv)
        .await
        .unwrap()
        .boxed();
    loop {
        let done = sim.churn().paused;
        match stream.try_next().await.unwrap() {
            Some(WatchEvent::Added(p) | WatchEvent::Modified(p)) => {
                cache.insert(key(&p), p.resource_version().unwrap());
            }
            Some(WatchEvent::Deleted(p)) => {
                cache.remove(&key(&p));
            }
            Some(WatchEvent::Bookmark(b)) => {
                let at: u64 = b.metadata.resource_version.parse().unwrap();
                if done && at >= sim.position().rv {
                    break;
                }
            }
            Some(WatchEvent::Error(e)) => panic!("watch error {e:?}"),
            None => panic!("watch ended early"),
        }
    }
    assert!(sim.position().rv > rv.parse().unwrap(), "churn happened");
    assert_eq!(cache, sim.truth(Resource::Pods));
    sim.shutdown().await;
}

/// Injected faults: 500s and 429s with the real Status shapes, and a 410 ERROR on watches.
#[tokio::test]
async fn injected_faults_look_like_real_failures() {
    let (sim, client) = start(SimConfig::with_size(10, 1, 1)).await;
    let pods: Api<Pod> = Api::all(client);
    sim.set_faults(Faults {
        error_ratio: 1.0,
        ..Faults::default()
    });
    assert!(
        matches!(pods.list(&ListParams::default()).await, Err(kube::Error::Api(s)) if s.code == 500 && s.reason == "InternalError")
    );
    sim.set_faults(Faults {
        throttle_ratio: 1.0,
        ..Faults::default()
    });
    assert!(
        matches!(pods.list(&ListParams::default()).await, Err(kube::Error::Api(s)) if s.code == 429 && s.reason == "TooManyRequests")
    );
    sim.set_faults(Faults {
        watch_gone_ratio: 1.0,
        ..Faults::default()
    });
    let mut stream = pods
        .watch(&WatchParams::default().timeout(5), "0")
        .await
        .unwrap()
        .boxed();
    assert!(
        matches!(stream.try_next().await.unwrap(), Some(WatchEvent::Error(s)) if s.code == 410)
    );
    sim.shutdown().await;
}

/// A dropped watch: on paused time, so that the watch ending at the fault's interval, not at
/// its own timeout, is told apart whatever the machine's load.
#[tokio::test(start_paused = true)]
async fn an_injected_watch_drop_cuts_the_stream_at_its_interval() {
    let (sim, client) = start(SimConfig::with_size(10, 1, 1)).await;
    let pods: Api<Pod> = Api::all(client);
    sim.set_faults(Faults {
        drop_watch_every: Some(Duration::from_millis(300)),
        ..Faults::default()
    });
    let stream = pods
        .watch(&WatchParams::default().timeout(30), "0")
        .await
        .unwrap();
    let started = tokio::time::Instant::now();
    // kube reads the cut (an unexpected EOF in the chunked body) as the end of the stream,
    // so what shows is a 30 s watch ending at the fault's interval.
    let events: Vec<_> = stream.collect().await;
    assert_eq!(events.len(), 10, "initial state arrives before the cut");
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(300) && elapsed < Duration::from_secs(1),
        "{elapsed:?}"
    );
    sim.shutdown().await;
}

/// kube's discovery finds the served kinds; /version parses.
#[tokio::test]
async fn kube_discovery_finds_the_resources() {
    let (sim, client) = start(SimConfig::with_size(10, 1, 1)).await;
    let version = client.apiserver_version().await.unwrap();
    assert_eq!(version.major, "1");
    let discovery = kube::Discovery::new(client).run().await.unwrap();
    for (group, kind, namespaced) in [
        ("", "Pod", true),
        ("", "Node", false),
        ("", "Namespace", false),
        ("apps", "Deployment", true),
        ("apps", "ReplicaSet", true),
    ] {
        let gvk = kube::api::GroupVersionKind::gvk(group, "v1", kind);
        let (resource, caps) = discovery.resolve_gvk(&gvk).expect(kind);
        assert_eq!(resource.kind, kind);
        assert_eq!(
            caps.scope == kube::discovery::Scope::Namespaced,
            namespaced,
            "{kind}"
        );
    }
    sim.shutdown().await;
}

/// The streaming watch-list: initial state as ADDED, then a bookmark marked as its end.
#[tokio::test]
async fn watch_list_sends_initial_events_then_the_end_bookmark() {
    let (sim, client) = start(SimConfig::with_size(25, 2, 2)).await;
    let pods: Api<Pod> = Api::all(client);
    let mut stream = pods
        .watch(&WatchParams::default().initial_events().timeout(5), "")
        .await
        .unwrap()
        .boxed();
    let mut added = 0;
    loop {
        match stream.try_next().await.unwrap() {
            Some(WatchEvent::Added(_)) => added += 1,
            Some(WatchEvent::Bookmark(b)) => {
                assert_eq!(
                    b.metadata
                        .annotations
                        .get("k8s.io/initial-events-end")
                        .map(String::as_str),
                    Some("true")
                );
                assert_eq!(b.metadata.resource_version, sim.position().rv.to_string());
                break;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(added, 25);
    sim.shutdown().await;
}

/// kube's metadata-only calls cope with the full objects the sim answers them with.
#[tokio::test]
async fn metadata_only_list_and_watch_work() {
    let (sim, client) = start(SimConfig::with_size(15, 1, 1)).await;
    let pods: Api<Pod> = Api::all(client);
    let list = pods
        .list_metadata(&ListParams::default().limit(10))
        .await
        .unwrap();
    assert_eq!(list.items.len(), 10);
    assert!(list.items[0].metadata.name.is_some());
    let events: Vec<_> = pods
        .watch_metadata(&WatchParams::default().timeout(1), "0")
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(events.len(), 15);
    sim.shutdown().await;
}

/// Deleting a ReplicaSet's pod gets a replacement, as the ReplicaSet controller would make.
#[tokio::test]
async fn deleted_replicaset_pod_is_replaced() {
    let (sim, client) = start(SimConfig::with_size(30, 2, 1)).await;
    let pods: Api<Pod> = Api::all(client.clone());
    let victim = pods.list(&ListParams::default()).await.unwrap().items[0].clone();
    let owner = victim.owner_references()[0].uid.clone();
    let count = |items: &[Pod]| {
        items
            .iter()
            .filter(|p| p.owner_references().iter().any(|o| o.uid == owner))
            .count()
    };
    let before = count(&pods.list(&ListParams::default()).await.unwrap().items);
    let namespaced: Api<Pod> = Api::namespaced(client, &victim.namespace().unwrap());
    namespaced
        .delete(&victim.name_any(), &Default::default())
        .await
        .unwrap();
    // The victim is Terminating (until its kubelet has stopped it), its replacement
    // already made.
    let after = pods.list(&ListParams::default()).await.unwrap().items;
    let (terminating, live): (Vec<Pod>, Vec<Pod>) = after
        .into_iter()
        .partition(|p| p.metadata.deletion_timestamp.is_some());
    assert_eq!(count(&live), before);
    assert!(live.iter().all(|p| p.name_any() != victim.name_any()));
    assert!(
        terminating
            .iter()
            .all(|p| p.name_any() == victim.name_any()),
        "{terminating:?}"
    );
    assert_eq!(sim.truth(Resource::Pods).len(), 30 + terminating.len());
    sim.shutdown().await;
}

/// A watch-list from a resourceVersion waits until the sim has reached it and then sends the
/// state not older than it; one the sim never reaches is the real server's 504 "Too large
/// resource version" (after its 3 s wait), which client-go answers by starting again from "".
#[tokio::test]
async fn watch_list_from_a_resource_version_waits_for_it_or_answers_504() {
    use k8s_openapi::api::core::v1::ConfigMap;
    let (sim, client) = start(SimConfig::with_size(5, 1, 1)).await;
    let pods: Api<Pod> = Api::all(client.clone());
    let next = sim.position().rv + 1;
    let writer = {
        let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let cm: ConfigMap = serde_json::from_value(serde_json::json!({
                "metadata": {"name": "moves-the-resource-version"}
            }))
            .unwrap();
            config_maps.create(&Default::default(), &cm).await.unwrap();
        })
    };
    let mut stream = pods
        .watch(
            &WatchParams::default().initial_events().timeout(10),
            &next.to_string(),
        )
        .await
        .expect("a resourceVersion reached within the wait is served")
        .boxed();
    let mut added = 0;
    let end = loop {
        match stream.try_next().await.unwrap() {
            Some(WatchEvent::Added(_)) => added += 1,
            Some(WatchEvent::Bookmark(b)) => break b.metadata.resource_version,
            other => panic!("unexpected {other:?}"),
        }
    };
    writer.await.unwrap();
    assert_eq!(added, 5, "the whole state, not only what changed after it");
    assert!(
        end.parse::<u64>().unwrap() >= next,
        "state at {end}, asked for {next}"
    );

    let ahead = sim.position().rv + 1_000;
    let err = pods
        .watch(
            &WatchParams::default().initial_events().timeout(10),
            &ahead.to_string(),
        )
        .await
        .err()
        .expect("a resourceVersion the sim never reaches is refused");
    match err {
        kube::Error::Api(status) => {
            assert_eq!(status.code, 504);
            assert!(
                status.message.contains("Too large resource version"),
                "{}",
                status.message
            );
        }
        other => panic!("expected the 504 status, got {other}"),
    }
    sim.shutdown().await;
}

/// The combinations of sendInitialEvents, resourceVersionMatch and continue the real server
/// refuses get its 422 with its words, and sendInitialEvents=false sends changes only.
#[tokio::test]
async fn watch_options_are_checked_as_the_real_server_checks_them() {
    let (sim, client) = start(SimConfig::with_size(5, 1, 1)).await;
    let watch = |query: &str| {
        http::Request::get(format!("/api/v1/pods?watch=true&timeoutSeconds=1&{query}"))
            .body(Vec::new())
            .unwrap()
    };
    for (query, message) in [
        (
            "sendInitialEvents=true",
            "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ),
        (
            "resourceVersionMatch=NotOlderThan",
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        ),
        (
            "sendInitialEvents=true&resourceVersionMatch=Exact",
            r#"resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan""#,
        ),
    ] {
        match client.request_text(watch(query)).await {
            Err(kube::Error::Api(status)) => {
                assert_eq!(status.code, 422, "{query}");
                assert!(
                    status.message.contains(message),
                    "{query}: {}",
                    status.message
                );
            }
            other => panic!("{query}: expected a 422, got {other:?}"),
        }
    }
    let changes_only = client
        .request_text(watch(
            "sendInitialEvents=false&resourceVersionMatch=NotOlderThan",
        ))
        .await
        .unwrap();
    assert_eq!(changes_only.trim(), "", "no initial state was asked for");
    sim.shutdown().await;
}
