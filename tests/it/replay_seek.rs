//! A seek in a served recording (`kscope sim --replay`, `kscope replay FILE`): the list after
//! it, back or forth and whatever checkpoint it starts from, answers exactly the store a fold
//! of the recording from its start gives at that point, objects and resourceVersion.

use std::collections::BTreeMap;
use std::fs::File;
use std::net::{Ipv4Addr, SocketAddr};

use kscope_informers::record::format::{Header, Record, Writer};
use kscope_informers::record::state::State;
use kscope_sim::{ReplayConfig, ReplayServer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::common::cli::temp_dir;

const START: i64 = 1_767_225_600_000_000;
const EVENTS: u64 = 4_000;

fn pod(name: &str, rv: u64) -> Box<RawValue> {
    RawValue::from_string(format!(
        r#"{{"kind":"Pod","apiVersion":"v1","metadata":{{"namespace":"ns","name":"{name}","resourceVersion":"{rv}"}},"status":{{"phase":"Running","n":{rv}}}}}"#
    ))
    .expect("JSON")
}

/// A list of 30 pods, then `EVENTS` events on 45 names 1 ms apart: adds, changes, deletes
/// and bookmarks, enough for several checkpoints.
fn records() -> Vec<Record> {
    let mut records = vec![Record::List {
        kind: "pods".into(),
        at: START,
        requested: String::new(),
        continued: None,
        resource_version: "1".into(),
        next: None,
        items: (0..30).map(|i| pod(&format!("p{i}"), 1)).collect(),
    }];
    for n in 0..EVENTS {
        let rv = n + 2;
        let event_type = match n % 13 {
            4 => "DELETED",
            8 => "BOOKMARK",
            0 => "ADDED",
            _ => "MODIFIED",
        };
        let object = if event_type == "BOOKMARK" {
            RawValue::from_string(format!(
                r#"{{"kind":"Pod","apiVersion":"v1","metadata":{{"resourceVersion":"{rv}"}}}}"#
            ))
            .expect("JSON")
        } else {
            pod(&format!("p{}", (n * 7) % 45), rv)
        };
        records.push(Record::Event {
            kind: "pods".into(),
            at: START + 1_000 * (n as i64 + 1),
            event_type: event_type.into(),
            resource_version: Some(rv.to_string()),
            object,
        });
    }
    records
}

/// The store a fold from the start gives at `at`: objects by key, and its resourceVersion.
fn folded(records: &[Record], at: i64) -> (BTreeMap<String, Value>, String) {
    let mut state = State::default();
    for record in records.iter().take_while(|r| r.at() <= at) {
        state.apply(record);
    }
    let pods = &state.kinds["pods"];
    let objects = pods
        .objects
        .iter()
        .map(|(key, object)| {
            (
                key.clone(),
                serde_json::from_str(object.get()).expect("JSON"),
            )
        })
        .collect();
    (objects, pods.resource_version.clone())
}

async fn listed(client: &kube::Client) -> (BTreeMap<String, Value>, String) {
    let request = http::Request::get("/api/v1/pods")
        .body(Vec::new())
        .expect("a request");
    let list: Value =
        serde_json::from_str(&client.request_text(request).await.expect("a list")).expect("JSON");
    let objects = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|item| {
            let meta = &item["metadata"];
            let key = format!(
                "{}/{}",
                meta["namespace"].as_str().expect("a namespace"),
                meta["name"].as_str().expect("a name")
            );
            (key, item.clone())
        })
        .collect();
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .expect("a resourceVersion")
        .to_string();
    (objects, rv)
}

#[tokio::test]
async fn a_list_after_a_seek_back_or_forth_is_the_fold_from_the_start() {
    let dir = temp_dir("replay-seek");
    let file = dir.join("seek.ksr");
    let records = records();
    let header = Header {
        format_version: 1,
        kscope_version: "test".into(),
        context: None,
        server: "https://127.0.0.1".into(),
        kinds: vec!["pods".into()],
        namespace: None,
        start_time: "2026-01-01T00:00:00Z".into(),
    };
    let mut writer = Writer::new(File::create(&file).expect("a file"), &header).expect("a writer");
    for record in &records {
        writer.append(record).expect("written");
    }
    writer.finish().expect("finished");

    let server = ReplayServer::start(
        &file,
        1.0,
        ReplayConfig {
            listen: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            allow_remote: false,
            token: None,
            state_dir: None,
            kubeconfig_out: None,
        },
    )
    .await
    .expect("served");
    let controls = server.controls();
    controls.set_paused(true);
    let client =
        kube::Client::try_from(server.kube_config().await.expect("a config")).expect("a client");
    // Forth across checkpoints, back before the first, to the end, into the middle of an
    // interval and to the very start.
    let ms = |n: i64| START + 1_000 * n;
    for at in [
        ms(1_500),
        ms(3_333),
        ms(7),
        ms(EVENTS as i64),
        ms(2_001),
        ms(1_000),
        START,
    ] {
        controls.seek(at);
        assert_eq!(controls.state().at, at);
        let (objects, rv) = listed(&client).await;
        let (want, want_rv) = folded(&records, at);
        assert_eq!(rv, want_rv, "the resourceVersion at {}", at - START);
        assert_eq!(objects, want, "the objects at {}", at - START);
        assert_eq!(
            controls.state().resource_version.to_string(),
            want_rv,
            "the played resourceVersion at {}",
            at - START
        );
    }
    server.shutdown().await;
}
