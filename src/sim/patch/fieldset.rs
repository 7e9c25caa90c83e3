//! Field sets as managedFields records them (`fieldsV1`): `f:name` for a field, `k:{...}` for
//! an item of a list merged by key, `v:...` for an item of a set, `.` for the item itself.
//! Server-side apply asks which manager owns which leaf, and updates move ownership to
//! whoever changed a field.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::strategic::{ListStrategy, list_strategy};

/// A path to one owned leaf: the fieldsV1 keys from the root.
pub type Leaf = Vec<String>;

/// The leaves of `value` (an object): every scalar, atomic list and empty map, and the
/// items of keyed lists and sets. `path` holds field names for the list strategies.
pub fn leaves(value: &Value) -> BTreeSet<Leaf> {
    let mut out = BTreeSet::new();
    if let Value::Object(map) = value {
        walk_map(map, &mut Vec::new(), &mut Vec::new(), &mut out);
    }
    out
}

fn walk_map(
    map: &Map<String, Value>,
    fields: &mut Vec<String>,
    keys: &mut Leaf,
    out: &mut BTreeSet<Leaf>,
) {
    for (name, value) in map {
        fields.push(name.clone());
        keys.push(format!("f:{name}"));
        walk_value(value, fields, keys, out);
        keys.pop();
        fields.pop();
    }
}

fn walk_value(value: &Value, fields: &mut Vec<String>, keys: &mut Leaf, out: &mut BTreeSet<Leaf>) {
    match value {
        Value::Object(map) if !map.is_empty() => walk_map(map, fields, keys, out),
        Value::Array(items) => match list_strategy(fields) {
            ListStrategy::MergeKey(key) => {
                for item in items {
                    let Some(map) = item.as_object() else {
                        continue;
                    };
                    keys.push(format!("k:{}", json!({key: map.get(key)})));
                    out.insert(keys.clone());
                    walk_map(map, fields, keys, out);
                    keys.pop();
                }
            }
            ListStrategy::Set => {
                for item in items {
                    keys.push(format!("v:{item}"));
                    out.insert(keys.clone());
                    keys.pop();
                }
            }
            ListStrategy::Atomic => {
                out.insert(keys.clone());
            }
        },
        _ => {
            out.insert(keys.clone());
        }
    }
}

/// The value at `leaf` in `value`, if there is one.
pub fn value_at<'a>(value: &'a Value, leaf: &[String]) -> Option<&'a Value> {
    let mut at = value;
    for key in leaf {
        at = if let Some(field) = key.strip_prefix("f:") {
            at.get(field)?
        } else if let Some(wanted) = key.strip_prefix("k:") {
            let wanted: Map<String, Value> = serde_json::from_str(wanted).ok()?;
            at.as_array()?
                .iter()
                .find(|item| wanted.iter().all(|(k, v)| item.get(k) == Some(v)))?
        } else if let Some(wanted) = key.strip_prefix("v:") {
            let wanted: Value = serde_json::from_str(wanted).ok()?;
            at.as_array()?.iter().find(|item| **item == wanted)?
        } else {
            return None;
        };
    }
    Some(at)
}

/// Removes the value at `leaf` from `value` (a field, or a list item).
pub fn remove_at(value: &mut Value, leaf: &[String]) {
    let Some((last, parents)) = leaf.split_last() else {
        return;
    };
    let mut at = value;
    for key in parents {
        let next = if let Some(field) = key.strip_prefix("f:") {
            at.get_mut(field)
        } else {
            let index = value_index(at, key);
            index.and_then(move |i| at.get_mut(i))
        };
        let Some(next) = next else {
            return;
        };
        at = next;
    }
    if let Some(field) = last.strip_prefix("f:") {
        if let Some(map) = at.as_object_mut() {
            map.remove(field);
        }
    } else if let Some(i) = value_index(at, last)
        && let Some(items) = at.as_array_mut()
    {
        items.remove(i);
    }
}

fn value_index(list: &Value, key: &str) -> Option<usize> {
    let item = value_at(list, std::slice::from_ref(&key.to_string()))?;
    list.as_array()?
        .iter()
        .position(|candidate| std::ptr::eq(candidate, item))
}

/// A set of leaves as the fieldsV1 tree managedFields stores.
pub fn to_fields_v1(leaves: &BTreeSet<Leaf>) -> Value {
    fn insert(node: &mut Map<String, Value>, leaf: &[String]) {
        let Some((first, rest)) = leaf.split_first() else {
            return;
        };
        let entry = node
            .entry(first.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(child) = entry {
            if rest.is_empty() && first.starts_with("k:") {
                child.insert(".".into(), json!({}));
            }
            insert(child, rest);
        }
    }
    let mut root = Map::new();
    for leaf in leaves {
        insert(&mut root, leaf);
    }
    Value::Object(root)
}

/// The leaves a stored fieldsV1 tree names.
pub fn from_fields_v1(fields: &Value) -> BTreeSet<Leaf> {
    fn walk(node: &Map<String, Value>, path: &mut Leaf, out: &mut BTreeSet<Leaf>) {
        let children: Vec<_> = node.iter().filter(|(k, _)| *k != ".").collect();
        // A map's "." owns the map itself: a leaf for list items; for a field that has
        // children of its own, they are what is owned.
        let item = path.last().is_some_and(|k| !k.starts_with("f:"));
        if !path.is_empty() && (children.is_empty() || item) {
            out.insert(path.clone());
        }
        for (key, child) in children {
            path.push(key.clone());
            match child.as_object() {
                Some(map) => walk(map, path, out),
                None => {
                    out.insert(path.clone());
                }
            }
            path.pop();
        }
    }
    let mut out = BTreeSet::new();
    if let Some(map) = fields.as_object() {
        walk(map, &mut Vec::new(), &mut out);
    }
    out
}

/// A leaf as SSA's conflict messages print it: `.spec.replicas`,
/// `.spec.template.spec.containers[name="app"].image`.
pub fn display(leaf: &[String]) -> String {
    let mut out = String::new();
    for key in leaf {
        if let Some(field) = key.strip_prefix("f:") {
            out.push('.');
            out.push_str(field);
        } else if let Some(item) = key.strip_prefix("k:") {
            let item: Map<String, Value> = serde_json::from_str(item).unwrap_or_default();
            let parts: Vec<String> = item.iter().map(|(k, v)| format!("{k}={v}")).collect();
            out.push_str(&format!("[{}]", parts.join(",")));
        } else if let Some(value) = key.strip_prefix("v:") {
            out.push_str(&format!("[{value}]"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaves_round_trip_and_address_values() {
        let v = json!({"metadata": {"labels": {"a": "1"}, "finalizers": ["x"]},
            "spec": {"template": {"spec": {"containers": [{"name": "app", "image": "i"}]}}}});
        let leaves = leaves(&v);
        assert_eq!(from_fields_v1(&to_fields_v1(&leaves)), leaves);
        let image: Leaf = [
            "f:spec",
            "f:template",
            "f:spec",
            "f:containers",
            "k:{\"name\":\"app\"}",
            "f:image",
        ]
        .map(String::from)
        .to_vec();
        assert!(leaves.contains(&image));
        assert_eq!(value_at(&v, &image), Some(&json!("i")));
        assert_eq!(
            display(&image),
            ".spec.template.spec.containers[name=\"app\"].image"
        );
        let mut w = v.clone();
        remove_at(&mut w, &image);
        assert_eq!(
            w["spec"]["template"]["spec"]["containers"][0],
            json!({"name": "app"})
        );
        let finalizer: Leaf = ["f:metadata", "f:finalizers", "v:\"x\""]
            .map(String::from)
            .to_vec();
        remove_at(&mut w, &finalizer);
        assert_eq!(w["metadata"]["finalizers"], json!([]));
    }
}
