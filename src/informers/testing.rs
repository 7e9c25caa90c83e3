//! A minimal object type for the informer layer's unit tests, and a way to feed a tap.

use std::sync::Arc;

use super::object::Object;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestObj {
    pub namespace: Option<String>,
    pub name: String,
    pub resource_version: String,
    pub label: String,
}

impl Object for TestObj {
    fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn resource_version(&self) -> Option<&str> {
        Some(&self.resource_version)
    }
}

/// `ns/name` at resourceVersion `rv`, labelled `label`.
pub fn obj(key: &str, rv: u64, label: &str) -> Arc<TestObj> {
    let (namespace, name) = match key.split_once('/') {
        Some((ns, name)) => (Some(ns.to_string()), name.to_string()),
        None => (None, key.to_string()),
    };
    Arc::new(TestObj {
        namespace,
        name,
        resource_version: rv.to_string(),
        label: label.to_string(),
    })
}

/// [`obj`] with its key, as the Reflector hands a streamed object to a FIFO.
pub fn keyed(key: &str, rv: u64, label: &str) -> (super::keys::Key, Arc<TestObj>) {
    (key.into(), obj(key, rv, label))
}

/// Records a MODIFIED watch event of `raw` for `key` at `rv` into `tap`.
pub fn record_watch(tap: &super::instrument::tap::Tap, key: &str, rv: u64, raw: &str) {
    tap.record(
        super::instrument::tap::TapKind::Watch(super::lister_watcher::WatchEventType::Modified),
        super::instrument::tap::TapRecord {
            key: Some(key.into()),
            resource_version: Some(rv.to_string()),
            raw: Some(bytes::Bytes::from(raw.to_string())),
            message: None,
        },
    );
}

/// A recording's records of pods in namespace `ns`, for the record readers' tests here and
/// in the sim's replay.
pub mod records {
    #![allow(
        clippy::unwrap_used,
        reason = "fixtures of literal JSON, which always parses"
    )]

    use serde_json::value::RawValue;

    use crate::record::format::{Header, Record};

    /// A recording's header naming pods, as every such test writes it.
    pub fn header() -> Header {
        Header {
            format_version: 1,
            kscope_version: "test".into(),
            context: None,
            server: "https://127.0.0.1".into(),
            kinds: vec!["pods".into()],
            namespace: None,
            start_time: "2026-01-01T00:00:00Z".into(),
        }
    }

    /// Pod `ns/name` at resourceVersion `rv`.
    pub fn pod(name: &str, rv: u64) -> Box<RawValue> {
        RawValue::from_string(format!(
            r#"{{"metadata":{{"namespace":"ns","name":"{name}","resourceVersion":"{rv}"}}}}"#
        ))
        .unwrap()
    }

    /// A whole list of pods at `rv`, received at `at`.
    pub fn list(at: i64, rv: u64, items: Vec<Box<RawValue>>) -> Record {
        Record::List {
            kind: "pods".into(),
            at,
            requested: String::new(),
            continued: None,
            resource_version: rv.to_string(),
            next: None,
            items,
        }
    }

    /// A watch event on a pod.
    pub fn event(at: i64, event_type: &str, object: Box<RawValue>, rv: u64) -> Record {
        Record::Event {
            kind: "pods".into(),
            at,
            event_type: event_type.into(),
            resource_version: Some(rv.to_string()),
            object,
        }
    }
}
