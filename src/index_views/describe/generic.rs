//! kubectl's generic describer, for every kind without its own (CustomResources included),
//! and its Secret describer, which prints the sizes of a Secret's values, never the values.

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use serde_json::{Map, Value};

use super::context::Ctx;
use super::printer::{annotations, labels, meta_head};
use super::writer::Out;

/// Fields the generic describer prints above, or never.
const SKIP: [&str; 5] = [
    ".metadata.managedFields",
    ".metadata.name",
    ".metadata.namespace",
    ".metadata.labels",
    ".metadata.annotations",
];

pub(super) fn generic(ctx: &Ctx<'_>, out: &mut Out) {
    let object = &ctx.sources.object;
    let meta = object.get("metadata");
    let text = |field: &str| {
        meta.and_then(|m| m.get(field))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let map = |field: &str| {
        meta.and_then(|m| m.get(field))
            .and_then(|v| serde_json::from_value(v.clone()).ok())
    };
    out.w(0, &format!("Name:\t{}\n", text("name")));
    out.w(0, &format!("Namespace:\t{}\n", text("namespace")));
    labels(out, "", "Labels", map("labels").as_ref());
    annotations(out, "Annotations", map("annotations").as_ref());
    match object {
        // A Secret that did not decode as one still shows no values.
        Value::Object(fields) if object.get("kind") == Some(&Value::from("Secret")) => {
            let mut masked = fields.clone();
            for field in ["data", "stringData"] {
                if let Some(Value::Object(values)) = masked.get_mut(field) {
                    for value in values.values_mut() {
                        *value = Value::from("<masked>");
                    }
                }
            }
            content(out, 0, &masked, "");
        }
        Value::Object(fields) => content(out, 0, fields, ""),
        _ => {}
    }
    ctx.events(out);
}

/// kubectl's `printUnstructuredContent`: fields sorted, maps and lists nested a level.
fn content(out: &mut Out, level: usize, fields: &Map<String, Value>, prefix: &str) {
    let mut names: Vec<&String> = fields.keys().collect();
    names.sort();
    for name in names {
        let path = format!("{prefix}.{name}");
        if SKIP.contains(&path.as_str()) {
            continue;
        }
        match &fields[name] {
            Value::Object(map) => {
                out.w(level, &format!("{}:\n", smart_label(name)));
                content(out, level + 1, map, &path);
            }
            Value::Array(items) => {
                out.w(level, &format!("{}:\n", smart_label(name)));
                for item in items {
                    match item {
                        Value::Object(map) => content(out, level + 1, map, &path),
                        other => out.w(level + 1, &format!("{}\n", go_value(other))),
                    }
                }
            }
            other => out.w(
                level,
                &format!("{}:\t{}\n", smart_label(name), go_value(other)),
            ),
        }
    }
}

/// A JSON scalar as Go's `%v` prints it after decoding (`<nil>` for null; floats without
/// a trailing `.0`).
fn go_value(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".to_owned(),
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => n.as_f64().map_or_else(|| n.to_string(), go_float),
        },
        other => other.to_string(),
    }
}

/// Go's `%v` of a float64 (`%g` with the shortest representation).
fn go_float(f: f64) -> String {
    match f.fract() == 0.0 && f.abs() < 1e21 {
        true => format!("{f:.0}"),
        false => format!("{f}"),
    }
}

/// kubectl's `smartLabelFor`: `clusterIP` → `Cluster IP`, `apiVersion` → `API Version`;
/// names with characters other than letters and `-` unchanged.
fn smart_label(field: &str) -> String {
    if field.chars().any(|c| !c.is_alphabetic() && c != '-') {
        return field.to_owned();
    }
    const ACRONYMS: [&str; 5] = ["API", "URL", "UID", "OSB", "GUID"];
    camel_split(field)
        .into_iter()
        .filter(|part| part != "_")
        .map(|part| {
            let upper = part.to_uppercase();
            if ACRONYMS.contains(&upper.as_str()) {
                upper
            } else {
                let mut chars = part.chars();
                match chars.next() {
                    Some(first) => first.to_uppercase().chain(chars).collect(),
                    None => part,
                }
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Splits camelCase as Go's `camelcase.Split`: runs of lowercase, of uppercase (the last
/// uppercase letter of a run before lowercase starts the next word), and of other
/// characters.
fn camel_split(s: &str) -> Vec<String> {
    #[derive(PartialEq, Clone, Copy)]
    enum Class {
        Lower,
        Upper,
        Other,
    }
    let class = |c: char| {
        if c.is_lowercase() {
            Class::Lower
        } else if c.is_uppercase() {
            Class::Upper
        } else {
            Class::Other
        }
    };
    let mut runs: Vec<(Class, Vec<char>)> = Vec::new();
    for c in s.chars() {
        let k = class(c);
        match runs.last_mut() {
            Some((last, chars)) if *last == k => chars.push(c),
            _ => runs.push((k, vec![c])),
        }
    }
    // An uppercase run followed by lowercase gives its last letter to the lowercase run.
    for i in 0..runs.len().saturating_sub(1) {
        if runs[i].0 == Class::Upper
            && runs[i + 1].0 == Class::Lower
            && let Some(c) = runs[i].1.pop()
        {
            runs[i + 1].1.insert(0, c);
        }
    }
    runs.into_iter()
        .filter(|(_, chars)| !chars.is_empty())
        .map(|(_, chars)| chars.into_iter().collect())
        .collect()
}

pub(super) fn secret(_ctx: &Ctx<'_>, out: &mut Out, secret: &Secret) {
    let meta = &secret.metadata;
    meta_head(out, meta);
    out.w(
        0,
        &format!("\nType:\t{}\n", secret.type_.as_deref().unwrap_or("")),
    );
    out.w(0, "\nData\n====\n");
    for (key, value) in secret.data.iter().flatten() {
        // Sizes only, as kubectl prints: the values never reach the screen. (kubectl prints a
        // service-account token itself; kscope does not.)
        out.w(0, &format!("{key}:\t{} bytes\n", value.0.len()));
    }
    // stringData is write-only: the API server never returns it, but a malformed answer
    // might, and it is sized the same way.
    for (key, value) in secret.string_data.iter().flatten() {
        out.w(0, &format!("{key}:\t{} bytes\n", value.len()));
    }
}

/// kubectl's ConfigMap describer: every value in full, binary ones by size.
pub(super) fn config_map(ctx: &Ctx<'_>, out: &mut Out, cm: &ConfigMap) {
    let meta = &cm.metadata;
    meta_head(out, meta);
    out.w(0, "\nData\n====\n");
    for (key, value) in cm.data.iter().flatten() {
        out.w(0, &format!("{key}:\n----\n{value}\n\n"));
    }
    out.w(0, "\nBinaryData\n====\n");
    for (key, value) in cm.binary_data.iter().flatten() {
        out.w(0, &format!("{key}: {} bytes\n", value.0.len()));
    }
    out.w(0, "\n");
    ctx.events(out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smart_labels_read_as_kubectl_prints_them() {
        assert_eq!(smart_label("clusterIP"), "Cluster IP");
        assert_eq!(smart_label("apiVersion"), "API Version");
        assert_eq!(smart_label("observedGeneration"), "Observed Generation");
        assert_eq!(smart_label("uid"), "UID");
        assert_eq!(smart_label("spec"), "Spec");
        assert_eq!(smart_label("k8s.io/x"), "k8s.io/x");
    }
}
