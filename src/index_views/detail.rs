//! What the detail view shows, as plain data: an object as YAML lines (managedFields hidden
//! unless asked for, a Secret's values always masked), an object's tap history, and one tap
//! entry's full diff. Pure functions, so they are tested without a terminal or a cluster.

use std::sync::Arc;
use std::time::SystemTime;

use serde_json::Value;

use kscope_informers::instrument::diff::Change;
use kscope_informers::instrument::tap::{DiffUnavailable, TapEntry, TapKind};
use kscope_informers::lister_watcher::WatchEventType;
pub use kscope_resources::secret::{is_secret, mask_secret};
use kscope_resources::secret::{mask_map, mask_value};
use kscope_resources::{LAST_APPLIED_ANNOTATION, Timestamp};

/// Why an object could not be shown as YAML.
#[derive(Debug, thiserror::Error)]
#[error("cannot render the object as YAML: {0}")]
pub struct YamlError(#[from] serde_saphyr::SerializeError);

/// An object ready to draw: one string per YAML line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct YamlDoc {
    pub lines: Vec<String>,
    /// Entries of `metadata.managedFields` left out, when they were hidden.
    pub hidden_managed_fields: Option<usize>,
    /// Secret values replaced by a mask.
    pub masked: usize,
}

/// `metadata.managedFields` is mostly server bookkeeping and often longer than the object;
/// it is left out unless `show_managed_fields`. A Secret's values never reach the screen:
/// kscope is read-only, and a terminal is often shared or recorded.
pub fn yaml(object: &Value, show_managed_fields: bool) -> Result<YamlDoc, YamlError> {
    let mut object = object.clone();
    let hidden_managed_fields = if show_managed_fields {
        None
    } else {
        object
            .get_mut("metadata")
            .and_then(Value::as_object_mut)
            .and_then(|meta| meta.remove("managedFields"))
            .map(|fields| fields.as_array().map_or(1, Vec::len))
    };
    let masked = if is_secret(&object) {
        mask_secret(&mut object)
    } else {
        0
    };
    let text = serde_saphyr::to_string(&object)?;
    Ok(YamlDoc {
        lines: text.lines().map(str::to_owned).collect(),
        hidden_managed_fields,
        masked,
    })
}

/// One line of an object's history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryRow {
    pub seq: u64,
    pub at: SystemTime,
    /// `MODIFIED`, `Updated`, ...
    pub kind: &'static str,
    pub resource_version: String,
    /// Changed field paths, the entry's message, or what the entry is.
    pub summary: String,
}

/// Rows for an object's tap entries, in the order given (the detail passes newest first).
pub fn history_rows(entries: &[Arc<TapEntry>]) -> Vec<HistoryRow> {
    entries.iter().map(|entry| history_row(entry)).collect()
}

pub fn history_row(entry: &TapEntry) -> HistoryRow {
    HistoryRow {
        seq: entry.seq,
        at: entry.at,
        kind: entry.kind.label(),
        resource_version: entry.resource_version.clone().unwrap_or_default(),
        summary: summary(entry),
    }
}

fn summary(entry: &TapEntry) -> String {
    if let Some(message) = &entry.message {
        return message.clone();
    }
    match (&entry.kind, entry.changed_paths()) {
        (_, Some(paths)) if paths.is_empty() => "no field changed".into(),
        (_, Some(paths)) => paths.join(" "),
        (TapKind::Watch(WatchEventType::Added), None) => "first version seen".into(),
        (TapKind::Watch(_), None) => "no earlier version kept".into(),
        (TapKind::Delta(_), None) => "applied to the store".into(),
        _ => String::new(),
    }
}

/// `5s`, `3m`, `2h` since `at`, as kubectl prints ages.
pub fn age(at: SystemTime, now: SystemTime) -> String {
    let secs = now
        .duration_since(at)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    Timestamp::from_seconds(0).human_since(Timestamp::from_seconds(secs))
}

/// How a diff line changed the field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffSign {
    Added,
    Removed,
    Changed,
}

/// One changed field: its path and compact JSON values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    pub sign: DiffSign,
    pub path: String,
    pub old: Option<String>,
    pub new: Option<String>,
}

/// An entry's full diff, ready to draw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffDoc {
    pub lines: Vec<DiffLine>,
    /// Changes under `metadata.managedFields` left out, when they were hidden.
    pub hidden_managed_fields: usize,
}

const MANAGED_FIELDS: &str = "metadata.managedFields";

/// The full diff of one tap entry against the previous version of its object.
pub fn diff_doc(entry: &TapEntry, show_managed_fields: bool) -> Result<DiffDoc, DiffUnavailable> {
    let changes = entry.diff()?;
    let secret = entry
        .raw
        .as_ref()
        .and_then(|raw| serde_json::from_slice::<Value>(raw).ok())
        .is_some_and(|object| is_secret(&object));
    let total = changes.len();
    let lines: Vec<DiffLine> = changes
        .into_iter()
        .filter(|c| show_managed_fields || !under(c.path(), MANAGED_FIELDS))
        .map(|change| diff_line(change, secret))
        .collect();
    Ok(DiffDoc {
        hidden_managed_fields: total - lines.len(),
        lines,
    })
}

/// True when `path` is `root` or a field below it.
fn under(path: &str, root: &str) -> bool {
    path.strip_prefix(root)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.') || rest.starts_with('['))
}

fn diff_line(change: Change, secret: bool) -> DiffLine {
    let show = |path: &str, value: &Value| {
        let value = if secret {
            mask_secret_field(path, value)
        } else {
            value.clone()
        };
        Some(value.to_string())
    };
    match change {
        Change::Added { path, new } => DiffLine {
            sign: DiffSign::Added,
            old: None,
            new: show(&path, &new),
            path,
        },
        Change::Removed { path, old } => DiffLine {
            sign: DiffSign::Removed,
            old: show(&path, &old),
            new: None,
            path,
        },
        Change::Changed { path, old, new } => DiffLine {
            sign: DiffSign::Changed,
            old: show(&path, &old),
            new: show(&path, &new),
            path,
        },
    }
}

/// A Secret's field at `path` with every secret value in it masked.
fn mask_secret_field(path: &str, value: &Value) -> Value {
    let last_applied = format!(
        "metadata.annotations[{}]",
        Value::from(LAST_APPLIED_ANNOTATION)
    );
    for (root, base64) in [("data", true), ("stringData", false)] {
        if path == root
            && let Value::Object(map) = value
        {
            let mut map = map.clone();
            mask_map(&mut map, base64);
            return Value::Object(map);
        }
        if under(path, root) {
            return mask_value(value, base64);
        }
    }
    if under(path, &last_applied) {
        return mask_value(value, false);
    }
    // A whole metadata or annotations map: mask inside a copy shaped like a Secret.
    let wrapped = match path {
        "metadata" => Some(serde_json::json!({ "metadata": value })),
        "metadata.annotations" => Some(serde_json::json!({ "metadata": { "annotations": value } })),
        _ => None,
    };
    match wrapped {
        Some(mut object) => {
            mask_secret(&mut object);
            let pointer = if path == "metadata" {
                "/metadata"
            } else {
                "/metadata/annotations"
            };
            object.pointer(pointer).cloned().unwrap_or(Value::Null)
        }
        None => value.clone(),
    }
}

/// One object's copy in kscope's cache against the server's (KEP-5647's per-object terms):
/// the resourceVersion the server sent, the manager whose write is newest in its
/// managedFields, and the resourceVersion of the last delta kscope's informer applied for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Freshness {
    pub server_resource_version: String,
    /// (manager, operation) of the newest managedFields entry.
    pub last_writer: Option<(String, String)>,
    /// `None` when no delta for the object is kept any more.
    pub cache_resource_version: Option<String>,
}

impl Freshness {
    /// Reads `object` (as the server sent it) and `entries` (the object's tap entries,
    /// newest first).
    pub fn of(object: &Value, entries: &[Arc<TapEntry>]) -> Self {
        let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
        // RFC 3339 times to the second sort as text; of equal times the later entry wins.
        let last_writer = object
            .pointer("/metadata/managedFields")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .max_by_key(|(i, e)| (text(e, "time").unwrap_or_default(), *i))
            .and_then(|(_, e)| Some((text(e, "manager")?, text(e, "operation")?)));
        let cache_resource_version = entries
            .iter()
            .find(|e| matches!(e.kind, TapKind::Delta(_)))
            .and_then(|e| e.resource_version.clone());
        Self {
            server_resource_version: object
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            last_writer,
            cache_resource_version,
        }
    }

    /// `rv 42 by kubelet (Update), cache 2 behind at rv 40`: short, as it fits a title at
    /// 80 columns. resourceVersions are compared as integers (what every API server sends);
    /// opaque ones only as equal or not.
    pub fn describe(&self) -> String {
        let mut said = format!("rv {}", self.server_resource_version);
        if let Some((manager, operation)) = &self.last_writer {
            said.push_str(&format!(" by {manager} ({operation})"));
        }
        let Some(cache) = &self.cache_resource_version else {
            return format!("{said}, cache rv unknown");
        };
        let number = |rv: &str| rv.parse::<u64>().ok();
        let verdict = match (number(cache), number(&self.server_resource_version)) {
            _ if *cache == self.server_resource_version => "cache current".to_string(),
            (Some(c), Some(s)) if c < s => format!("cache {} behind at rv {cache}", s - c),
            (Some(_), Some(_)) => format!("cache newer at rv {cache}"),
            _ => format!("cache at rv {cache} differs"),
        };
        format!("{said}, {verdict}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use kscope_informers::instrument::tap::{Tap, TapRecord};
    use serde_json::json;

    fn pod() -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "web-1",
                "namespace": "shop",
                "resourceVersion": "42",
                "managedFields": [
                    {"manager": "kubelet", "operation": "Update"},
                    {"manager": "kubectl", "operation": "Apply"}
                ]
            },
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]},
            "status": {"phase": "Running"}
        })
    }

    fn secret() -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": "db-creds",
                "namespace": "shop",
                "annotations": {
                    LAST_APPLIED_ANNOTATION: "{\"data\":{\"password\":\"aHVudGVyMg==\"}}",
                    "team": "payments"
                }
            },
            "type": "Opaque",
            "data": {"password": "aHVudGVyMg==", "user": "YWRtaW4="},
            "stringData": {"token": "plain-text-token"}
        })
    }

    #[test]
    fn yaml_hides_managed_fields_by_default_and_shows_them_on_request() {
        let doc = yaml(&pod(), false).unwrap();
        assert_eq!(doc.hidden_managed_fields, Some(2));
        let text = doc.lines.join("\n");
        assert!(!text.contains("managedFields"), "{text}");
        assert!(text.contains("name: web-1"), "{text}");
        assert!(text.contains("phase: Running"), "{text}");
        assert!(doc.lines.iter().any(|l| l.starts_with("apiVersion: v1")));

        let shown = yaml(&pod(), true).unwrap();
        assert_eq!(shown.hidden_managed_fields, None);
        let text = shown.lines.join("\n");
        assert!(text.contains("managedFields:"), "{text}");
        assert!(text.contains("manager: kubelet"), "{text}");
    }

    #[test]
    fn secret_values_are_masked_with_their_size_only() {
        for show_managed_fields in [false, true] {
            let doc = yaml(&secret(), show_managed_fields).unwrap();
            let text = doc.lines.join("\n");
            assert_eq!(doc.masked, 4);
            for clear in ["aHVudGVyMg", "hunter2", "YWRtaW4", "plain-text-token"] {
                assert!(!text.contains(clear), "{clear} leaked:\n{text}");
            }
            assert!(text.contains("password: •••••••• (7 bytes)"), "{text}");
            assert!(text.contains("user: •••••••• (5 bytes)"), "{text}");
            assert!(text.contains("token: •••••••• (16 bytes)"), "{text}");
            assert!(text.contains("team: payments"), "{text}");
        }
        assert_eq!(yaml(&pod(), false).unwrap().masked, 0);
    }

    fn watch(tap: &Tap, kind: WatchEventType, rv: u64, object: &Value) {
        tap.record(
            TapKind::Watch(kind),
            TapRecord {
                key: Some("shop/x".into()),
                resource_version: Some(rv.to_string()),
                raw: Some(Bytes::from(object.to_string())),
                message: None,
            },
        );
    }

    #[test]
    fn diff_lines_hide_managed_fields_changes_unless_asked() {
        let tap = Tap::new(8, kscope_resources::secret::keepable_raw);
        let old = pod();
        let mut new = pod();
        new["status"]["phase"] = json!("Succeeded");
        new["metadata"]["managedFields"][0]["time"] = json!("2026-01-01T00:00:00Z");
        new["metadata"]["labels"] = json!({"app": "web"});
        watch(&tap, WatchEventType::Added, 1, &old);
        watch(&tap, WatchEventType::Modified, 2, &new);
        let entries = tap.history("shop/x");
        let doc = diff_doc(&entries[1], false).unwrap();
        assert_eq!(doc.hidden_managed_fields, 1);
        assert_eq!(
            doc.lines,
            [
                DiffLine {
                    sign: DiffSign::Added,
                    path: "metadata.labels.app".into(),
                    old: None,
                    new: Some(r#""web""#.into()),
                },
                DiffLine {
                    sign: DiffSign::Changed,
                    path: "status.phase".into(),
                    old: Some(r#""Running""#.into()),
                    new: Some(r#""Succeeded""#.into()),
                },
            ]
        );
        assert_eq!(diff_doc(&entries[1], true).unwrap().lines.len(), 3);
        let added = diff_doc(&entries[0], false).unwrap();
        assert!(added.lines.iter().all(|l| l.sign == DiffSign::Added));
        assert_eq!(added.hidden_managed_fields, 4, "managedFields stay hidden");
    }

    #[test]
    fn secret_diffs_mask_old_and_new_values() {
        let tap = Tap::new(8, kscope_resources::secret::keepable_raw);
        let old = secret();
        let mut new = secret();
        new["data"]["password"] = json!("czNjcjN0LXBhc3M=");
        new["data"]["apikey"] = json!("a2V5");
        new["metadata"]["annotations"][LAST_APPLIED_ANNOTATION] = json!("{\"new\":\"c2VjcmV0\"}");
        new["type"] = json!("kubernetes.io/basic-auth");
        watch(&tap, WatchEventType::Added, 1, &old);
        watch(&tap, WatchEventType::Modified, 2, &new);
        let doc = diff_doc(&tap.history("shop/x")[1], false).unwrap();
        let text = format!("{:?}", doc.lines);
        for clear in ["czNjcjN0", "a2V5", "c2VjcmV0", "aHVudGVyMg"] {
            assert!(!text.contains(clear), "{clear} leaked: {text}");
        }
        assert_eq!(
            doc.lines
                .iter()
                .map(|l| l.path.as_str())
                .collect::<Vec<_>>(),
            [
                "data.apikey",
                "data.password",
                r#"metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]"#,
                "type"
            ]
        );
        // The tap masked them already, with a fingerprint that shows the value changed.
        let (old, new) = (&doc.lines[1].old, &doc.lines[1].new);
        assert!(
            new.as_deref()
                .is_some_and(|m| m.starts_with(r#""•••••••• (11 bytes, #"#)),
            "{new:?}"
        );
        assert_ne!(old, new);
        assert_eq!(
            doc.lines[3].new.as_deref(),
            Some(r#""kubernetes.io/basic-auth""#)
        );
        let whole = mask_secret_field("data", &json!({"k": "aGk="}));
        assert_eq!(whole, json!({"k": "•••••••• (2 bytes)"}));
        let annotations = mask_secret_field(
            "metadata.annotations",
            &json!({ LAST_APPLIED_ANNOTATION: "x", "a": "b" }),
        );
        assert_eq!(annotations["a"], json!("b"));
        assert_eq!(
            annotations[LAST_APPLIED_ANNOTATION],
            json!("•••••••• (1 bytes)")
        );
    }

    #[test]
    fn history_rows_summarize_each_entry() {
        let tap = Tap::new(8, kscope_resources::secret::keepable_raw);
        let mut new = pod();
        new["status"]["phase"] = json!("Failed");
        watch(&tap, WatchEventType::Added, 1, &pod());
        watch(&tap, WatchEventType::Modified, 2, &new);
        let mut entries = tap.history("shop/x");
        entries.reverse();
        let rows = history_rows(&entries);
        assert_eq!(
            rows.iter()
                .map(|r| (r.kind, r.resource_version.as_str(), r.summary.as_str()))
                .collect::<Vec<_>>(),
            [
                ("MODIFIED", "2", "status.phase"),
                ("ADDED", "1", "first version seen")
            ]
        );
        let now = rows[0].at + std::time::Duration::from_secs(125);
        assert_eq!(age(rows[0].at, now), "2m5s");
    }

    fn entry(seq: u64, kind: TapKind, rv: &str) -> Arc<TapEntry> {
        Arc::new(TapEntry {
            seq,
            at: SystemTime::UNIX_EPOCH,
            kind,
            key: Some("shop/web-1".into()),
            resource_version: Some(rv.into()),
            raw: None,
            previous_raw: None,
            message: None,
        })
    }

    #[test]
    fn freshness_names_the_last_writer_and_how_far_the_cache_is_behind() {
        use kscope_informers::delta_fifo::DeltaType;
        let mut object = pod();
        object["metadata"]["managedFields"] = json!([
            {"manager": "kubectl", "operation": "Apply", "time": "2026-01-01T10:00:00Z"},
            {"manager": "kubelet", "operation": "Update", "time": "2026-01-01T10:05:00Z"},
            {"manager": "hpa", "operation": "Update", "time": "2026-01-01T09:00:00Z"},
        ]);
        // Newest first: the watch event of 42 reached the tap, its delta is not applied yet.
        let entries = [
            entry(3, TapKind::Watch(WatchEventType::Modified), "42"),
            entry(2, TapKind::Delta(DeltaType::Updated), "40"),
            entry(1, TapKind::Delta(DeltaType::Added), "30"),
        ];
        let fresh = Freshness::of(&object, &entries);
        assert_eq!(
            fresh.last_writer,
            Some(("kubelet".to_string(), "Update".to_string()))
        );
        assert_eq!(
            fresh.describe(),
            "rv 42 by kubelet (Update), cache 2 behind at rv 40"
        );
        let describe = |entries: &[Arc<TapEntry>]| Freshness::of(&object, entries).describe();
        let applied = [entry(4, TapKind::Delta(DeltaType::Updated), "42")];
        assert!(describe(&applied).ends_with(", cache current"));
        let newer = [entry(5, TapKind::Delta(DeltaType::Updated), "44")];
        assert!(describe(&newer).ends_with(", cache newer at rv 44"));
        let opaque = [entry(6, TapKind::Delta(DeltaType::Updated), "a1b2")];
        assert!(describe(&opaque).ends_with(", cache at rv a1b2 differs"));
        assert!(describe(&[]).ends_with(", cache rv unknown"));
    }
}
