//! Reading `metadata.managedFields`: which entry (manager, operation, time) owns a field, as
//! server-side apply records it in `fieldsV1` (`f:spec` → `f:replicas`, `k:{...}` for a list
//! item by key, `v:...` for a set member).

use serde_json::Value;

/// Metadata every write changes, or that says who wrote rather than what.
pub(crate) fn is_noise(path: &str) -> bool {
    path.starts_with("metadata.resourceVersion")
        || path.starts_with("metadata.managedFields")
        || path.starts_with("metadata.generation")
}

/// How deep a managedFields set holds the field at `path` (`spec.replicas`,
/// `status.conditions[0]`): 0 when it holds none of it.
pub(crate) fn owns(fields: &Value, path: &str) -> usize {
    let mut at = fields;
    let mut depth = 0;
    for segment in path.split('.') {
        let name = segment.split('[').next().unwrap_or(segment);
        match at.get(format!("f:{name}")) {
            Some(next) => {
                at = next;
                depth += 1;
            }
            None => break,
        }
        if segment.contains('[') {
            break;
        }
    }
    depth
}

/// The managedFields entry of `object` owning `path` most closely; of entries owning it
/// equally, the newest (a field moves to its last writer).
pub(crate) fn owner_of<'a>(object: &'a Value, path: &str) -> Option<&'a Value> {
    object["metadata"]["managedFields"]
        .as_array()?
        .iter()
        .map(|e| {
            (
                owns(&e["fieldsV1"], path),
                e["time"].as_str().unwrap_or(""),
                e,
            )
        })
        .filter(|(depth, _, _)| *depth > 0)
        .max_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)))
        .map(|(_, _, e)| e)
}

/// The fields a `fieldsV1` set names, as dotted paths down to the first list item or leaf
/// (`spec.replicas`, `metadata.labels.app`, `spec.containers[name=app]`).
pub(crate) fn field_paths(fields: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(fields, "", &mut out);
    out
}

fn walk(fields: &Value, prefix: &str, out: &mut Vec<String>) {
    let Some(map) = fields.as_object() else {
        return;
    };
    let mut leaf = true;
    for (key, below) in map {
        if key == "." {
            continue;
        }
        leaf = false;
        if let Some(name) = key.strip_prefix("f:") {
            let path = if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix}.{name}")
            };
            walk(below, &path, out);
        } else if let Some(item) = key.strip_prefix("k:") {
            let item: Value = serde_json::from_str(item).unwrap_or(Value::Null);
            let keys: Vec<String> = item
                .as_object()
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| {
                            format!(
                                "{k}={}",
                                v.as_str().map_or_else(|| v.to_string(), str::to_string)
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            out.push(format!("{prefix}[{}]", keys.join(",")));
        } else if let Some(value) = key.strip_prefix("v:") {
            out.push(format!("{prefix}[{value}]"));
        }
    }
    if leaf && !prefix.is_empty() {
        out.push(prefix.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_field_belongs_to_its_newest_closest_owner() {
        let object = json!({"metadata": {"managedFields": [
            {"manager": "kubectl-client-side-apply", "operation": "Update", "time": "2026-01-01T00:00:00Z",
             "fieldsV1": {"f:spec": {".": {}, "f:size": {}, "f:replicas": {}}}},
            {"manager": "kubectl-patch", "operation": "Update", "time": "2026-01-01T00:00:05Z",
             "fieldsV1": {"f:spec": {"f:replicas": {}}}},
            {"manager": "widget-controller", "operation": "Update", "subresource": "status",
             "time": "2026-01-01T00:00:02Z", "fieldsV1": {"f:status": {"f:ready": {}}}},
        ]}});
        let manager = |path: &str| owner_of(&object, path).map(|e| e["manager"].clone());
        assert_eq!(manager("spec.replicas"), Some(json!("kubectl-patch")));
        assert_eq!(
            manager("spec.size"),
            Some(json!("kubectl-client-side-apply"))
        );
        assert_eq!(manager("status.ready"), Some(json!("widget-controller")));
        assert_eq!(manager("metadata.labels"), None);
    }

    #[test]
    fn field_paths_name_leaves_and_list_items() {
        let fields = json!({"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:image": {}}},
                       "f:finalizers": {"v:\"x\"": {}}}});
        assert_eq!(
            field_paths(&fields),
            [
                "metadata.labels.app",
                "spec.containers[name=app]",
                "spec.finalizers[\"x\"]"
            ]
        );
    }
}
