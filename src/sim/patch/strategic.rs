//! Strategic merge patch, as kube-apiserver applies it to built-in kinds: maps merge, and a
//! list merges by its merge key (containers by `name`, ports by `containerPort`, conditions by
//! `type`...) instead of being replaced, so a client-side `kubectl apply` that changes one
//! container leaves the others. The directives (`$patch`, `$setElementOrder/…`,
//! `$deleteFromPrimitiveList/…`, `$retainKeys`) steer the merge and are never stored.

use serde_json::{Map, Value};

/// How a list field merges, from the Go types' `patchStrategy`/`patchMergeKey` tags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListStrategy {
    /// Replaced whole (no patch strategy).
    Atomic,
    /// Items are maps merged by this key.
    MergeKey(&'static str),
    /// A list of scalars merged as a set (`finalizers`, `podCIDRs`).
    Set,
}

/// The strategy of the list at `path` (field names from the object's root; list items do
/// not add a segment). Paths not named here are atomic, as untagged lists are.
pub fn list_strategy(path: &[String]) -> ListStrategy {
    let field = path.last().map(String::as_str).unwrap_or("");
    let parent = path.len().checked_sub(2).map(|i| path[i].as_str());
    let in_container = matches!(
        parent,
        Some("containers" | "initContainers" | "ephemeralContainers")
    );
    match field {
        "containers" | "initContainers" | "ephemeralContainers" if !in_container => {
            ListStrategy::MergeKey("name")
        }
        "env" | "ports" | "volumeMounts" | "volumeDevices" if in_container => match field {
            "env" => ListStrategy::MergeKey("name"),
            "ports" => ListStrategy::MergeKey("containerPort"),
            "volumeMounts" => ListStrategy::MergeKey("mountPath"),
            _ => ListStrategy::MergeKey("devicePath"),
        },
        // ServiceSpec.ports.
        "ports" if path.len() == 2 && parent == Some("spec") => ListStrategy::MergeKey("port"),
        "volumes" | "imagePullSecrets" | "resourceClaims" if parent == Some("spec") => {
            ListStrategy::MergeKey("name")
        }
        "hostAliases" if parent == Some("spec") => ListStrategy::MergeKey("ip"),
        "topologySpreadConstraints" if parent == Some("spec") => {
            ListStrategy::MergeKey("topologyKey")
        }
        "ownerReferences" if parent == Some("metadata") => ListStrategy::MergeKey("uid"),
        "finalizers" if parent == Some("metadata") => ListStrategy::Set,
        "podCIDRs" if parent == Some("spec") => ListStrategy::Set,
        "conditions" if parent == Some("status") => ListStrategy::MergeKey("type"),
        "podIPs" | "hostIPs" if parent == Some("status") => ListStrategy::MergeKey("ip"),
        // NodeStatus.addresses.
        "addresses" if path.len() == 2 && parent == Some("status") => {
            ListStrategy::MergeKey("type")
        }
        _ => ListStrategy::Atomic,
    }
}

/// Why a strategic merge patch could not be applied. The variants are apimachinery's
/// `mergepatch` errors, worded as it words them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StrategicError {
    #[error("invalid JSON document")]
    BadJsonDoc,
    #[error("Unable to find api field in struct {0} for the json field \"{1}\"")]
    UnknownPatchType(String, String),
    #[error("map: {0} does not contain declared merge key: {1}")]
    NoMergeKey(String, &'static str),
    #[error("invalid list of setElementOrder: {0}")]
    BadElementOrder(String),
    #[error("invalid patch format of primitive list: {0}")]
    BadPrimitiveList(String),
    #[error("invalid patch format of retainKeys: {0}")]
    BadRetainKeys(String),
}

impl StrategicError {
    /// Whether the real server answers 400 (a malformed patch document) rather than 500.
    pub fn is_bad_request(&self) -> bool {
        !matches!(self, StrategicError::NoMergeKey(..))
    }
}

const SET_ORDER: &str = "$setElementOrder/";
const DELETE_FROM: &str = "$deleteFromPrimitiveList/";

/// Applies `patch` to `original` in place.
pub fn apply(original: &mut Value, patch: &Value) -> Result<(), StrategicError> {
    let Value::Object(patch) = patch else {
        return Err(StrategicError::BadJsonDoc);
    };
    if !original.is_object() {
        *original = Value::Object(Map::new());
    }
    let mut path = Vec::new();
    if let Value::Object(map) = original {
        merge_map(map, patch, &mut path)?;
    }
    Ok(())
}

/// What a map's `$patch` asks for.
enum MapDirective {
    Merge,
    Replace,
    Delete,
}

fn map_directive(patch: &Map<String, Value>) -> Result<MapDirective, StrategicError> {
    match patch.get("$patch") {
        None => Ok(MapDirective::Merge),
        Some(Value::String(s)) if s == "merge" => Ok(MapDirective::Merge),
        Some(Value::String(s)) if s == "replace" => Ok(MapDirective::Replace),
        Some(Value::String(s)) if s == "delete" => Ok(MapDirective::Delete),
        Some(other) => Err(StrategicError::UnknownPatchType(
            "map".into(),
            format!("$patch: {other}"),
        )),
    }
}

fn merge_map(
    original: &mut Map<String, Value>,
    patch: &Map<String, Value>,
    path: &mut Vec<String>,
) -> Result<(), StrategicError> {
    match map_directive(patch)? {
        MapDirective::Replace => {
            *original = Map::new();
            let mut rest = patch.clone();
            rest.remove("$patch");
            return merge_map(original, &rest, path);
        }
        // A `$patch: delete` map deletes its whole parent: the caller handles it.
        MapDirective::Delete | MapDirective::Merge => {}
    }
    if let Some(retain) = patch.get("$retainKeys") {
        let keys = retain
            .as_array()
            .filter(|keys| keys.iter().all(Value::is_string))
            .ok_or_else(|| StrategicError::BadRetainKeys(retain.to_string()))?;
        original.retain(|k, _| keys.iter().any(|key| key == k));
    }
    // Deletions from primitive lists come first, as apimachinery does them, so a patch that
    // deletes and adds the same value keeps it.
    for (key, value) in patch {
        if let Some(field) = key.strip_prefix(DELETE_FROM) {
            delete_from_primitive_list(original, field, value)?;
        }
    }
    let mut orders = Vec::new();
    for (key, value) in patch {
        if let Some(field) = key.strip_prefix(SET_ORDER) {
            orders.push((field, value));
            continue;
        }
        if key.starts_with('$') {
            continue;
        }
        path.push(key.clone());
        merge_field(original, key, value, path)?;
        path.pop();
    }
    for (field, order) in orders {
        path.push(field.to_string());
        let strategy = list_strategy(path);
        path.pop();
        if let Some(Value::Array(items)) = original.get_mut(field) {
            set_element_order(items, order, strategy)?;
        }
    }
    Ok(())
}

fn merge_field(
    original: &mut Map<String, Value>,
    key: &str,
    value: &Value,
    path: &mut Vec<String>,
) -> Result<(), StrategicError> {
    match value {
        Value::Null => {
            original.remove(key);
        }
        Value::Object(patch) => {
            if matches!(map_directive(patch)?, MapDirective::Delete) {
                original.remove(key);
                return Ok(());
            }
            let slot = original
                .entry(key.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if !slot.is_object() {
                *slot = Value::Object(Map::new());
            }
            if let Value::Object(map) = slot {
                merge_map(map, patch, path)?;
            }
        }
        Value::Array(items) => match list_strategy(path) {
            ListStrategy::Atomic => {
                original.insert(key.to_string(), strip_directives(value));
            }
            ListStrategy::Set => {
                let slot = original
                    .entry(key.to_string())
                    .or_insert_with(|| Value::Array(Vec::new()));
                merge_set(slot, items);
            }
            ListStrategy::MergeKey(merge_key) => {
                let slot = original
                    .entry(key.to_string())
                    .or_insert_with(|| Value::Array(Vec::new()));
                if !slot.is_array() {
                    *slot = Value::Array(Vec::new());
                }
                if let Value::Array(list) = slot {
                    merge_list(list, items, merge_key, path)?;
                }
            }
        },
        scalar => {
            original.insert(key.to_string(), scalar.clone());
        }
    }
    Ok(())
}

/// A set of scalars: the patch's items are added once each; `[{"$patch": "replace"}, …]`
/// replaces the set.
fn merge_set(slot: &mut Value, items: &[Value]) {
    let replace = items.iter().any(is_replace_marker);
    let wanted = items.iter().filter(|i| !is_replace_marker(i));
    if replace || !slot.is_array() {
        *slot = Value::Array(Vec::new());
    }
    if let Value::Array(list) = slot {
        for item in wanted {
            if !list.contains(item) {
                list.push(item.clone());
            }
        }
    }
}

fn is_replace_marker(item: &Value) -> bool {
    item.as_object()
        .is_some_and(|m| m.len() == 1 && m.get("$patch").and_then(Value::as_str) == Some("replace"))
}

fn merge_list(
    list: &mut Vec<Value>,
    items: &[Value],
    merge_key: &'static str,
    path: &mut Vec<String>,
) -> Result<(), StrategicError> {
    if items.iter().any(is_replace_marker) {
        list.clear();
    }
    for item in items.iter().filter(|i| !is_replace_marker(i)) {
        let Value::Object(patch) = item else {
            // A list declared as merging maps got a scalar: replace, as the real merge does
            // for a mismatched type, and let validation judge the result.
            *list = items.iter().map(strip_directives).collect();
            return Ok(());
        };
        let Some(key) = patch.get(merge_key) else {
            return Err(StrategicError::NoMergeKey(go_map(patch), merge_key));
        };
        let position = list.iter().position(|o| o.get(merge_key) == Some(key));
        if matches!(map_directive(patch)?, MapDirective::Delete) {
            list.retain(|o| o.get(merge_key) != Some(key));
            continue;
        }
        match position.and_then(|i| list.get_mut(i)) {
            Some(Value::Object(existing)) => merge_map(existing, patch, path)?,
            _ => {
                let mut fresh = Map::new();
                merge_map(&mut fresh, patch, path)?;
                list.push(Value::Object(fresh));
            }
        }
    }
    Ok(())
}

/// Orders `items` as `$setElementOrder` lists them; items the patch did not know about (only
/// on the server) keep their place relative to each other after the ordered ones.
fn set_element_order(
    items: &mut Vec<Value>,
    order: &Value,
    strategy: ListStrategy,
) -> Result<(), StrategicError> {
    let bad = || StrategicError::BadElementOrder(order.to_string());
    let order = order.as_array().ok_or_else(bad)?;
    let rank = |item: &Value| -> Option<usize> {
        order.iter().position(|o| match strategy {
            ListStrategy::MergeKey(key) => o.get(key).is_some() && o.get(key) == item.get(key),
            _ => o == item,
        })
    };
    if let ListStrategy::MergeKey(key) = strategy
        && order.iter().any(|o| o.get(key).is_none())
    {
        return Err(bad());
    }
    let (mut ranked, rest): (Vec<_>, Vec<_>) = std::mem::take(items)
        .into_iter()
        .map(|item| (rank(&item), item))
        .partition(|(r, _)| r.is_some());
    ranked.sort_by_key(|(r, _)| *r);
    items.extend(ranked.into_iter().map(|(_, item)| item));
    items.extend(rest.into_iter().map(|(_, item)| item));
    Ok(())
}

fn delete_from_primitive_list(
    original: &mut Map<String, Value>,
    field: &str,
    values: &Value,
) -> Result<(), StrategicError> {
    let values = values
        .as_array()
        .ok_or_else(|| StrategicError::BadPrimitiveList(values.to_string()))?;
    if let Some(Value::Array(list)) = original.get_mut(field) {
        list.retain(|item| !values.contains(item));
    }
    Ok(())
}

/// `value` with every `$`-directive removed, for values stored as they are (atomic lists).
fn strip_directives(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !k.starts_with('$'))
                .map(|(k, v)| (k.clone(), strip_directives(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip_directives).collect()),
        other => other.clone(),
    }
}

/// A map as Go's `%v` prints it, for the error text.
fn go_map(map: &Map<String, Value>) -> String {
    let inner: Vec<String> = map
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}:{s}"),
            other => format!("{k}:{other}"),
        })
        .collect();
    format!("map[{}]", inner.join(" "))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn patched(mut original: Value, patch: Value) -> Value {
        apply(&mut original, &patch).unwrap();
        original
    }

    fn deployment() -> Value {
        json!({"metadata": {"name": "web", "finalizers": ["a"]},
            "spec": {"replicas": 2, "template": {"spec": {"containers": [
                {"name": "app", "image": "app:1", "env": [{"name": "A", "value": "1"}]},
                {"name": "proxy", "image": "proxy:1"}]}}}})
    }

    #[test]
    fn containers_merge_by_name() {
        let out = patched(
            deployment(),
            json!({"spec": {"template": {"spec": {
                "$setElementOrder/containers": [{"name": "app"}, {"name": "proxy"}],
                "containers": [{"name": "app", "image": "app:2"}]}}}}),
        );
        assert_eq!(
            out["spec"]["template"]["spec"]["containers"],
            json!([
                {"name": "app", "image": "app:2", "env": [{"name": "A", "value": "1"}]},
                {"name": "proxy", "image": "proxy:1"}
            ])
        );
        assert!(!out.to_string().contains('$'), "{out}");
    }

    #[test]
    fn element_order_reorders_and_delete_removes() {
        let out = patched(
            deployment(),
            json!({"spec": {"template": {"spec": {
                "$setElementOrder/containers": [{"name": "proxy"}, {"name": "app"}],
                "containers": [{"name": "app", "env": [{"name": "A", "$patch": "delete"}]}]}}}}),
        );
        let containers = &out["spec"]["template"]["spec"]["containers"];
        assert_eq!(containers[0]["name"], "proxy");
        assert_eq!(containers[1]["env"], json!([]));
        let out = patched(
            deployment(),
            json!({"spec": {"template": {"spec": {"containers": [{"name": "proxy", "$patch": "delete"}]}}}}),
        );
        assert_eq!(
            out["spec"]["template"]["spec"]["containers"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn replace_directives_and_sets() {
        let out = patched(
            deployment(),
            json!({"spec": {"template": {"spec": {"containers": [{"$patch": "replace"}, {"name": "only", "image": "x"}]}}},
                "metadata": {"finalizers": ["b"], "$deleteFromPrimitiveList/finalizers": ["a"]}}),
        );
        assert_eq!(
            out["spec"]["template"]["spec"]["containers"],
            json!([{"name": "only", "image": "x"}])
        );
        assert_eq!(out["metadata"]["finalizers"], json!(["b"]));
        let out = patched(
            deployment(),
            json!({"spec": {"$patch": "replace", "replicas": 5}}),
        );
        assert_eq!(out["spec"], json!({"replicas": 5}));
        let out = patched(deployment(), json!({"spec": {"$retainKeys": ["replicas"]}}));
        assert_eq!(out["spec"], json!({"replicas": 2}));
    }

    #[test]
    fn a_list_item_without_its_merge_key_is_refused() {
        let mut v = deployment();
        let err = apply(
            &mut v,
            &json!({"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}}),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "map: map[image:x] does not contain declared merge key: name"
        );
        assert!(!err.is_bad_request());
        assert!(apply(&mut v, &json!({"spec": {"$patch": "explode"}})).is_err());
    }

    #[test]
    fn untagged_lists_are_replaced() {
        let out = patched(
            json!({"spec": {"tolerations": [{"key": "a"}, {"key": "b"}]}}),
            json!({"spec": {"tolerations": [{"key": "c"}]}}),
        );
        assert_eq!(out["spec"]["tolerations"], json!([{"key": "c"}]));
    }
}
