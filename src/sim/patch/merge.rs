//! RFC 7386 JSON merge patch.

use serde_json::{Map, Value};

/// RFC 7386: maps merge, `null` deletes, anything else replaces.
pub(super) fn merge(target: &mut Value, patch: &Value) {
    match patch {
        Value::Object(patch_map) => {
            if !target.is_object() {
                *target = Value::Object(Map::new());
            }
            if let Value::Object(map) = target {
                for (k, v) in patch_map {
                    if v.is_null() {
                        map.remove(k);
                    } else {
                        merge(map.entry(k.clone()).or_insert(Value::Null), v);
                    }
                }
            }
        }
        other => *target = other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn merge_patch_sets_and_removes() {
        let mut v = json!({"metadata": {"labels": {"a": "1", "b": "2"}}});
        merge(
            &mut v,
            &json!({"metadata": {"labels": {"a": null, "c": "3"}}}),
        );
        assert_eq!(v, json!({"metadata": {"labels": {"b": "2", "c": "3"}}}));
    }
}
