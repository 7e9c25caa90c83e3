//! kubectl-like printing of stored objects: aligned tables, `kind/name`, and a JSON List of
//! what kscope keeps of each object.

use std::io::{self, Write};

use serde_json::{Map, Value, json};

use crate::index_views::columns::TableRow;
use crate::resources::{
    Deployment, GenericObject, Kind, KubeResource, Labels, Namespace, Node, OwnerRef, Pod,
    ReplicaSet, Secret, Timestamp,
};

/// `-o` formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Table,
    Wide,
    Name,
    Json,
}

/// Prints rows under headers, columns padded like kubectl's tabwriter (3 spaces apart).
pub fn write_table(out: &mut impl Write, headers: &[&str], rows: &[Vec<String>]) -> io::Result<()> {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let header: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    let mut line = String::new();
    for row in std::iter::once(&header).chain(rows) {
        line.clear();
        for (i, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if i + 1 < row.len() {
                let pad = widths[i].saturating_sub(cell.chars().count()) + 3;
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// What `-o json` shows of a stored object: the fields kscope keeps, in the API's shape,
/// plus kubectl's derived columns under `kscope`.
pub trait ToJson: KubeResource {
    /// The object as a member of a List of `kind`.
    fn to_json(&self, kind: &Kind) -> Value;
}

fn labels_json(labels: Labels<'_>) -> Value {
    Value::Object(
        labels
            .iter()
            .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
            .collect(),
    )
}

fn metadata(obj: &impl KubeResource, extra: impl FnOnce(&mut Map<String, Value>)) -> Value {
    let mut meta = Map::new();
    meta.insert("name".into(), json!(obj.name()));
    if let Some(ns) = obj.namespace() {
        meta.insert("namespace".into(), json!(ns));
    }
    meta.insert("uid".into(), json!(obj.uid()));
    if let Some(rv) = obj.resource_version() {
        meta.insert("resourceVersion".into(), json!(rv));
    }
    if let Some(created) = obj.created() {
        meta.insert("creationTimestamp".into(), json!(created.to_string()));
    }
    if !obj.labels().is_empty() {
        meta.insert("labels".into(), labels_json(obj.labels()));
    }
    extra(&mut meta);
    Value::Object(meta)
}

fn owners_json<'a>(owners: impl ExactSizeIterator<Item = OwnerRef<'a>>) -> Option<Value> {
    (owners.len() > 0).then(|| {
        Value::Array(
            owners
                .map(|o| json!({"kind": o.kind, "name": o.name, "uid": o.uid, "controller": o.controller}))
                .collect(),
        )
    })
}

impl ToJson for Pod {
    fn to_json(&self, _: &Kind) -> Value {
        let containers = |cs: Vec<(&str, &str)>| -> Value {
            cs.into_iter()
                .map(|(name, image)| json!({"name": name, "image": image}))
                .collect()
        };
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": metadata(self, |m| {
                if !self.annotations().is_empty() {
                    m.insert("annotations".into(), labels_json(self.annotations()));
                }
                if let Some(owners) = owners_json(self.owner_references()) {
                    m.insert("ownerReferences".into(), owners);
                }
                if let Some(deleted) = self.deleted() {
                    m.insert("deletionTimestamp".into(), json!(deleted.to_string()));
                }
            }),
            "spec": {
                "nodeName": self.node_name(),
                "initContainers": containers(self.init_containers().map(|c| (c.name, c.image)).collect()),
                "containers": containers(self.containers().map(|c| (c.name, c.image)).collect()),
            },
            "status": {
                "phase": self.phase(),
                "podIP": self.pod_ip(),
                "hostIP": self.host_ip(),
            },
            "kscope": {
                "status": self.status(),
                "ready": format!("{}/{}", self.ready_containers(), self.total_containers()),
                "restarts": self.restarts(),
                "lastRestart": self.last_restart().map(|t| t.to_string()),
            },
        })
    }
}

impl ToJson for Node {
    fn to_json(&self, _: &Kind) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": metadata(self, |_| {}),
            "spec": {"unschedulable": self.unschedulable()},
            "status": {
                "nodeInfo": {"kubeletVersion": self.kubelet_version()},
                "capacity": {"cpu": self.cpu_capacity(), "memory": self.memory_capacity()},
                "allocatable": {"cpu": self.cpu_allocatable(), "memory": self.memory_allocatable()},
                "internalIP": self.internal_ip(),
            },
            "kscope": {"status": self.status(), "roles": self.roles().collect::<Vec<_>>()},
        })
    }
}

impl ToJson for Namespace {
    fn to_json(&self, _: &Kind) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": metadata(self, |_| {}),
            "status": {"phase": self.phase()},
        })
    }
}

/// What a Secret's value is printed as. kscope never keeps a value, and an empty one (as
/// this once was) applied back with kubectl blanks the Secret; this is not base64, so an API
/// server refuses it and applying the output back fails, changing nothing.
pub const REDACTED_SECRET_VALUE: &str = "<redacted by kscope: not base64, cannot be applied>";

/// The keys of `data`, each with [`REDACTED_SECRET_VALUE`]: kscope never keeps a Secret's
/// values.
impl ToJson for Secret {
    fn to_json(&self, _: &Kind) -> Value {
        let keys: Map<String, Value> = self
            .data_keys()
            .map(|k| (k.to_string(), Value::String(REDACTED_SECRET_VALUE.into())))
            .collect();
        json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": metadata(self, |m| {
                if !self.annotations().is_empty() {
                    m.insert("annotations".into(), labels_json(self.annotations()));
                }
            }),
            "type": self.secret_type(),
            "data": keys,
        })
    }
}

macro_rules! workload_json {
    ($ty:ty, $kind:literal) => {
        impl ToJson for $ty {
            fn to_json(&self, _: &Kind) -> Value {
                let r = self.replicas();
                json!({
                    "apiVersion": "apps/v1",
                    "kind": $kind,
                    "metadata": metadata(self, |m| {
                        if let Some(owners) = owners_json(self.owner_references()) {
                            m.insert("ownerReferences".into(), owners);
                        }
                    }),
                    "spec": {
                        "replicas": r.desired,
                        "selector": {"matchLabels": labels_json(self.selector())},
                        "template": {"spec": {"containers": self.containers()
                            .map(|c| json!({"name": c.name, "image": c.image}))
                            .collect::<Vec<_>>()}},
                    },
                    "status": {
                        "replicas": r.current,
                        "readyReplicas": r.ready,
                        "updatedReplicas": r.updated,
                        "availableReplicas": r.available,
                    },
                })
            }
        }
    };
}

workload_json!(Deployment, "Deployment");
workload_json!(ReplicaSet, "ReplicaSet");

/// What kscope keeps of a discovered kind's object: its metadata, and its Table cells under
/// `kscope` (the rest of the object is never kept).
impl ToJson for GenericObject {
    fn to_json(&self, kind: &Kind) -> Value {
        let api_version = match kind {
            Kind::Api(resource) => resource.api_version(),
            Kind::BuiltIn(k) => k.api_version().to_string(),
        };
        json!({
            "apiVersion": api_version,
            "kind": kind.kind(),
            "metadata": metadata(self, |m| {
                if let Some(generation) = self.generation() {
                    m.insert("generation".into(), json!(generation));
                }
                if !self.annotations().is_empty() {
                    m.insert("annotations".into(), labels_json(self.annotations()));
                }
                if let Some(owners) = owners_json(self.owner_references()) {
                    m.insert("ownerReferences".into(), owners);
                }
                if self.finalizers().len() > 0 {
                    m.insert("finalizers".into(), json!(self.finalizers().collect::<Vec<_>>()));
                }
                if let Some(deleted) = self.deleted() {
                    m.insert("deletionTimestamp".into(), json!(deleted.to_string()));
                }
            }),
            "kscope": {"cells": self.table_cells().collect::<Vec<_>>()},
        })
    }
}

/// Prints `objects` of `kind` in `format`. `with_namespace` adds kubectl's NAMESPACE column.
pub fn print_objects<T: TableRow + ToJson>(
    out: &mut impl Write,
    objects: &[std::sync::Arc<T>],
    kind: &Kind,
    format: OutputFormat,
    with_namespace: bool,
) -> io::Result<()> {
    match format {
        OutputFormat::Name => {
            let prefix = kind.name_prefix();
            for obj in objects {
                writeln!(out, "{prefix}/{}", obj.name())?;
            }
            Ok(())
        }
        OutputFormat::Json => {
            let list = json!({
                "apiVersion": "v1",
                "kind": "List",
                "metadata": {"resourceVersion": ""},
                "items": objects.iter().map(|o| o.to_json(kind)).collect::<Vec<_>>(),
            });
            serde_json::to_writer_pretty(&mut *out, &list)?;
            writeln!(out)
        }
        OutputFormat::Table | OutputFormat::Wide => {
            let wide = format == OutputFormat::Wide;
            let now = Timestamp::now();
            let columns = T::columns(kind);
            let shown: Vec<bool> = columns.iter().map(|c| wide || !c.wide).collect();
            let mut headers: Vec<&str> = Vec::new();
            if with_namespace {
                headers.push("NAMESPACE");
            }
            headers.extend(
                columns
                    .iter()
                    .zip(&shown)
                    .filter(|(_, s)| **s)
                    .map(|(c, _)| c.name.as_ref()),
            );
            let rows: Vec<Vec<String>> = objects
                .iter()
                .map(|obj| {
                    let mut row = Vec::with_capacity(headers.len());
                    if with_namespace {
                        row.push(obj.namespace().unwrap_or_default().to_string());
                    }
                    row.extend(
                        obj.cells(&columns, now)
                            .into_iter()
                            .zip(&shown)
                            .filter(|(_, s)| **s)
                            .map(|(c, _)| c),
                    );
                    row
                })
                .collect();
            write_table(out, &headers, &rows)
        }
    }
}
