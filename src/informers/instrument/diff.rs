//! Field-level differences between two versions of an object's JSON: what the delta panel's
//! "full diff" shows. Objects compare key by key, arrays index by index (extra elements are
//! added or removed), anything else by value.

use serde_json::Value;

/// One difference, at a field path such as `status.containerStatuses[0].ready` or
/// `metadata.labels["app.kubernetes.io/name"]`.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    Added {
        path: String,
        new: Value,
    },
    Removed {
        path: String,
        old: Value,
    },
    Changed {
        path: String,
        old: Value,
        new: Value,
    },
}

impl Change {
    pub fn path(&self) -> &str {
        match self {
            Self::Added { path, .. } | Self::Removed { path, .. } | Self::Changed { path, .. } => {
                path
            }
        }
    }
}

/// Every difference from `old` to `new`, in key order (object keys sorted, array indexes
/// ascending). A map or list added or removed whole is reported leaf by leaf.
pub fn diff(old: &Value, new: &Value) -> Vec<Change> {
    let mut walk = Walk {
        compact: false,
        skip: &|_| false,
        out: Vec::new(),
    };
    walk.values(old, new, &mut String::new());
    walk.out
}

/// The paths that differ, compactly, for a one-line summary: a map or list added or removed
/// whole, or a list whose length changed, is one path; paths `skip` accepts (and everything
/// under them) are left out.
pub fn changed_paths(old: &Value, new: &Value, skip: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut walk = Walk {
        compact: true,
        skip,
        out: Vec::new(),
    };
    walk.values(old, new, &mut String::new());
    walk.out.into_iter().map(|c| c.path().to_owned()).collect()
}

/// One walk over two versions, collecting changes.
struct Walk<'a> {
    /// Report whole additions, removals and resized lists as one change.
    compact: bool,
    skip: &'a dyn Fn(&str) -> bool,
    out: Vec<Change>,
}

impl Walk<'_> {
    fn values(&mut self, old: &Value, new: &Value, path: &mut String) {
        if old == new || (self.skip)(path) {
            return;
        }
        match (old, new) {
            (Value::Object(a), Value::Object(b)) => {
                let mut keys: Vec<&String> = a
                    .keys()
                    .chain(b.keys().filter(|k| !a.contains_key(*k)))
                    .collect();
                keys.sort();
                for key in keys {
                    let len = path.len();
                    push_key(path, key);
                    self.one_side(a.get(key), b.get(key), path);
                    path.truncate(len);
                }
            }
            (Value::Array(a), Value::Array(b)) if !self.compact || a.len() == b.len() => {
                for i in 0..a.len().max(b.len()) {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    self.one_side(a.get(i), b.get(i), path);
                    path.truncate(len);
                }
            }
            _ => self.out.push(Change::Changed {
                path: path.clone(),
                old: old.clone(),
                new: new.clone(),
            }),
        }
    }

    /// One field or element that may exist on one side only.
    fn one_side(&mut self, old: Option<&Value>, new: Option<&Value>, path: &mut String) {
        if (self.skip)(path) {
            return;
        }
        match (old, new) {
            (Some(x), Some(y)) => self.values(x, y, path),
            (None, Some(y)) => match self.empty_like(y) {
                Some(empty) => self.values(&empty, y, path),
                None => self.out.push(Change::Added {
                    path: path.clone(),
                    new: y.clone(),
                }),
            },
            (Some(x), None) => match self.empty_like(x) {
                Some(empty) => self.values(x, &empty, path),
                None => self.out.push(Change::Removed {
                    path: path.clone(),
                    old: x.clone(),
                }),
            },
            (None, None) => {}
        }
    }

    /// An empty map or list of the same type as a non-empty `value`, to walk it against;
    /// `None` when it is reported whole.
    fn empty_like(&self, value: &Value) -> Option<Value> {
        match value {
            _ if self.compact => None,
            Value::Object(map) if !map.is_empty() => Some(Value::Object(serde_json::Map::new())),
            Value::Array(list) if !list.is_empty() => Some(Value::Array(Vec::new())),
            _ => None,
        }
    }
}

/// Appends `.key`, or `["key"]` when the key would be ambiguous in a dotted path (label and
/// annotation keys such as `app.kubernetes.io/name`).
fn push_key(path: &mut String, key: &str) {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain {
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
    } else {
        path.push('[');
        path.push_str(&Value::String(key.to_owned()).to_string());
        path.push(']');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn added_removed_and_changed_scalars() {
        let old = json!({"a": 1, "b": "x", "c": true});
        let new = json!({"a": 2, "c": true, "d": null});
        assert_eq!(
            diff(&old, &new),
            [
                Change::Changed {
                    path: "a".into(),
                    old: json!(1),
                    new: json!(2)
                },
                Change::Removed {
                    path: "b".into(),
                    old: json!("x")
                },
                Change::Added {
                    path: "d".into(),
                    new: json!(null)
                },
            ]
        );
    }

    #[test]
    fn nested_maps_report_leaf_paths_and_quote_dotted_keys() {
        let old = json!({"metadata": {"labels": {"app": "web"}}, "status": {"phase": "Pending"}});
        let new = json!({
            "metadata": {"labels": {"app": "web", "app.kubernetes.io/name": "shop"}},
            "status": {"phase": "Running", "podIP": "10.0.0.1"}
        });
        let changes = diff(&old, &new);
        let paths: Vec<&str> = changes.iter().map(Change::path).collect();
        assert_eq!(
            paths,
            [
                r#"metadata.labels["app.kubernetes.io/name"]"#,
                "status.phase",
                "status.podIP"
            ]
        );
    }

    #[test]
    fn arrays_compare_by_index_and_extra_elements_are_added_or_removed() {
        let old = json!({"s": [{"ready": false}, {"ready": true}, 3]});
        let new = json!({"s": [{"ready": true}, {"ready": true}]});
        assert_eq!(
            diff(&old, &new),
            [
                Change::Changed {
                    path: "s[0].ready".into(),
                    old: json!(false),
                    new: json!(true)
                },
                Change::Removed {
                    path: "s[2]".into(),
                    old: json!(3)
                },
            ]
        );
        let grown = diff(&json!([1]), &json!([1, {"a": 1}]));
        assert_eq!(
            grown,
            [Change::Added {
                path: "[1].a".into(),
                new: json!(1)
            }]
        );
    }

    #[test]
    fn a_type_change_is_one_change_and_equal_values_none() {
        let changes = diff(&json!({"x": {"a": 1}}), &json!({"x": [1]}));
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].path(), "x");
        assert!(diff(&json!({"a": [1, 2]}), &json!({"a": [1, 2]})).is_empty());
    }
}
