//! The lines every describer prints alike, as kubectl's describe printer writes them: labels,
//! annotations, the head of an object, selectors, times and Go's forms of values.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, ObjectMeta, OwnerReference, Time,
};

use super::writer::Out;

/// The annotation kubectl leaves out of describe: the last applied configuration.
pub(super) const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// Annotations longer than this are folded onto their own lines, as kubectl does.
pub(super) const MAX_ANNOTATION_LEN: usize = 140;

pub(super) fn empty_map() -> &'static BTreeMap<String, String> {
    static EMPTY: BTreeMap<String, String> = BTreeMap::new();
    &EMPTY
}

/// `Labels:  a=b` with one label a line, aligned under the first.
pub(super) fn labels(
    out: &mut Out,
    indent: &str,
    title: &str,
    labels: Option<&BTreeMap<String, String>>,
) {
    out.w(0, &format!("{indent}{title}:\t"));
    let labels = labels.unwrap_or(empty_map());
    if labels.is_empty() {
        out.w(0, "<none>\n");
        return;
    }
    for (i, (key, value)) in labels.iter().enumerate() {
        if i != 0 {
            out.w(0, &format!("{indent}\t"));
        }
        out.w(0, &format!("{key}={value}\n"));
    }
}

/// `Annotations:  key: value`, long or multi-line values folded and cut as kubectl does.
pub(super) fn annotations(
    out: &mut Out,
    title: &str,
    annotations: Option<&BTreeMap<String, String>>,
) {
    out.w(0, &format!("{title}:\t"));
    let keys: Vec<(&String, &String)> = annotations
        .unwrap_or(empty_map())
        .iter()
        .filter(|(key, _)| *key != LAST_APPLIED)
        .collect();
    if keys.is_empty() {
        out.w(0, "<none>\n");
        return;
    }
    for (i, (key, value)) in keys.into_iter().enumerate() {
        if i != 0 {
            out.w(0, "\t");
        }
        let value = value.strip_suffix('\n').unwrap_or(value);
        if value.len() + key.len() + 2 > MAX_ANNOTATION_LEN || value.contains('\n') {
            out.w(0, &format!("{key}:\n"));
            for line in value.split('\n') {
                out.w(
                    0,
                    &format!("\t  {}\n", shorten(line, MAX_ANNOTATION_LEN - 2)),
                );
            }
        } else {
            out.w(0, &format!("{key}: {value}\n"));
        }
    }
}

/// The first `max` bytes of `s` (on a character boundary) and "...", as kubectl cuts.
pub(super) fn shorten(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

/// `Name:` and `Namespace:`, as every describer starts.
pub(super) fn name_and_namespace(out: &mut Out, meta: &ObjectMeta) {
    out.w(
        0,
        &format!("Name:\t{}\n", meta.name.as_deref().unwrap_or("")),
    );
    out.w(
        0,
        &format!("Namespace:\t{}\n", meta.namespace.as_deref().unwrap_or("")),
    );
}

/// Name, namespace, labels and annotations: the head of most describers.
pub(super) fn meta_head(out: &mut Out, meta: &ObjectMeta) {
    name_and_namespace(out, meta);
    labels(out, "", "Labels", meta.labels.as_ref());
    annotations(out, "Annotations", meta.annotations.as_ref());
}

/// `Kind/name` of the managing controller, as kubectl's "Controlled By".
pub(super) fn controller(meta: &ObjectMeta) -> Option<String> {
    meta.owner_references
        .as_deref()?
        .iter()
        .find(|o: &&OwnerReference| o.controller == Some(true))
        .map(|o| format!("{}/{}", o.kind, o.name))
}

/// Go's `time.RFC1123Z`, in UTC: `Mon, 02 Jan 2006 15:04:05 +0000`.
pub(super) fn rfc1123z(t: Option<&Time>) -> String {
    match t {
        Some(t) => t.0.strftime("%a, %d %b %Y %H:%M:%S +0000").to_string(),
        // Go formats the zero time.
        None => "Mon, 01 Jan 0001 00:00:00 +0000".to_owned(),
    }
}

/// A label selector as kubectl prints one: `a=b,c in (d,e)`; `<none>` for none and
/// `<none>`... as `metav1.FormatLabelSelector`.
pub(super) fn format_selector(selector: &LabelSelector) -> Option<String> {
    let mut parts: Vec<String> = selector
        .match_labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    for e in selector.match_expressions.iter().flatten() {
        let values = e.values.clone().unwrap_or_default();
        let part = match e.operator.as_str() {
            "In" => format!("{} in ({})", e.key, values.join(",")),
            "NotIn" => format!("{} notin ({})", e.key, values.join(",")),
            "Exists" => e.key.clone(),
            "DoesNotExist" => format!("!{}", e.key),
            _ => return None,
        };
        parts.push(part);
    }
    Some(parts.join(","))
}

/// kubectl's `Selector:` line for an object's label selector (`<none>` when empty).
pub(super) fn selector_text(selector: Option<&LabelSelector>) -> String {
    match selector.and_then(format_selector) {
        Some(s) if !s.is_empty() => s,
        _ => "<none>".to_owned(),
    }
}

/// Go's `%v` of a bool.
pub(super) fn go_bool(b: bool) -> &'static str {
    if b { "true" } else { "false" }
}

/// kubectl's `printBool`: `True` or `False`.
pub(super) fn title_bool(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}

/// Go's `%v` of a `*bool`: `<nil>` when unset.
pub(super) fn go_bool_ptr(b: Option<bool>) -> String {
    match b {
        None => "<nil>".to_owned(),
        Some(b) => go_bool(b).to_owned(),
    }
}

/// `s`, or `<none>` when empty.
pub(super) fn or_none(s: &str) -> &str {
    if s.is_empty() { "<none>" } else { s }
}
