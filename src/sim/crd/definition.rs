//! One CustomResourceDefinition: the checks the real server makes on it, what it fills in,
//! and the descriptor of the resource its storage version serves.

use serde_json::{Value, json};

use crate::resources::{Column, CustomSchema, Descriptor, ScalePaths, leak_str, leak_strs};

use super::schema::{self, FieldError};

/// The finalizer the real server puts on every CRD so that its objects go first.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

pub(super) fn text<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    path.iter().fold(v, |v, k| &v[*k]).as_str().unwrap_or("")
}

/// A lowercase RFC 1123 label, as plural and singular names must be.
fn is_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// The storage version's entry in `spec.versions`.
fn storage_version(crd: &Value) -> Option<&Value> {
    crd["spec"]["versions"]
        .as_array()?
        .iter()
        .find(|v| v["storage"] == true)
}

/// The checks the real server makes on a CRD (422 on any).
pub fn validate_definition(name: &str, crd: &Value) -> Vec<FieldError> {
    let mut out = Vec::new();
    let spec = &crd["spec"];
    let group = text(spec, &["group"]);
    let plural = text(spec, &["names", "plural"]);
    let kind = text(spec, &["names", "kind"]);
    let invalid = |field: &str, value: &str, detail: &str| FieldError {
        field: field.to_string(),
        reason: "FieldValueInvalid",
        short: "Invalid value",
        detail: format!("{value:?}: {detail}"),
    };
    let required = |field: &str, detail: &str| FieldError {
        field: field.to_string(),
        reason: "FieldValueRequired",
        short: "Required value",
        detail: detail.to_string(),
    };
    if group.is_empty() {
        out.push(required("spec.group", ""));
    } else if !group.contains('.') {
        out.push(invalid(
            "spec.group",
            group,
            "should be a domain with at least one dot",
        ));
    }
    if plural.is_empty() {
        out.push(required("spec.names.plural", ""));
    } else if !is_label(plural) {
        out.push(invalid(
            "spec.names.plural",
            plural,
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        ));
    }
    let singular = text(spec, &["names", "singular"]);
    if !singular.is_empty() && !is_label(singular) {
        out.push(invalid(
            "spec.names.singular",
            singular,
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        ));
    }
    if kind.is_empty() {
        out.push(required("spec.names.kind", ""));
    }
    if !group.is_empty() && !plural.is_empty() && name != format!("{plural}.{group}") {
        out.push(invalid(
            "metadata.name",
            name,
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    match text(spec, &["scope"]) {
        "Namespaced" | "Cluster" => {}
        other => out.push(FieldError {
            field: "spec.scope".into(),
            reason: "FieldValueNotSupported",
            short: "Unsupported value",
            detail: format!("{other:?}: supported values: \"Cluster\", \"Namespaced\""),
        }),
    }
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    if versions.is_empty() {
        out.push(invalid(
            "spec.versions",
            "null",
            "must have exactly one version marked as storage version",
        ));
    } else if versions.iter().filter(|v| v["storage"] == true).count() != 1 {
        out.push(invalid(
            "spec.versions",
            &Value::Array(versions.clone()).to_string(),
            "must have exactly one version marked as storage version",
        ));
    }
    for (i, v) in versions.iter().enumerate() {
        let at = format!("spec.versions[{i}]");
        if text(v, &["name"]).is_empty() {
            out.push(required(&format!("{at}.name"), ""));
        }
        let root = &v["schema"]["openAPIV3Schema"];
        if root.is_null() {
            out.push(required(
                &format!("{at}.schema.openAPIV3Schema"),
                "schemas are required",
            ));
        } else {
            schema::check_structural(root, &format!("{at}.schema.openAPIV3Schema"), &mut out);
        }
        for (j, c) in v["additionalPrinterColumns"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let col = format!("{at}.additionalPrinterColumns[{j}]");
            if text(c, &["name"]).is_empty() {
                out.push(required(&format!("{col}.name"), ""));
            }
            if text(c, &["jsonPath"]).is_empty() {
                out.push(required(&format!("{col}.jsonPath"), ""));
            }
            let t = text(c, &["type"]);
            if !matches!(t, "integer" | "number" | "string" | "boolean" | "date") {
                out.push(FieldError {
                    field: format!("{col}.type"),
                    reason: "FieldValueNotSupported",
                    short: "Unsupported value",
                    detail: format!(
                        "{t:?}: supported values: \"boolean\", \"date\", \"integer\", \"number\", \"string\""
                    ),
                });
            }
        }
    }
    out
}

/// What the server fills in on a new CRD: the names it derives, the cleanup finalizer,
/// and (as its naming and establishing controllers do at once) the status.
pub fn populate_new(crd: &mut Value) {
    let kind = text(crd, &["spec", "names", "kind"]).to_string();
    let names = &mut crd["spec"]["names"];
    if text(names, &["singular"]).is_empty() {
        names["singular"] = json!(kind.to_lowercase());
    }
    if text(names, &["listKind"]).is_empty() {
        names["listKind"] = json!(format!("{kind}List"));
    }
    if crd["spec"]["conversion"].is_null() {
        crd["spec"]["conversion"] = json!({"strategy": "None"});
    }
    let finalizers = crd["metadata"]["finalizers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if !finalizers.iter().any(|f| f == CLEANUP_FINALIZER) {
        let mut all = finalizers;
        all.push(json!(CLEANUP_FINALIZER));
        crd["metadata"]["finalizers"] = json!(all);
    }
    set_status(crd);
}

/// The status a CRD whose names are accepted has.
fn set_status(crd: &mut Value) {
    let at = crd["metadata"]["creationTimestamp"].clone();
    let stored: Vec<Value> = storage_version(crd)
        .map(|v| v["name"].clone())
        .into_iter()
        .collect();
    crd["status"] = json!({
        "acceptedNames": crd["spec"]["names"],
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "lastTransitionTime": at, "reason": "NoConflicts", "message": "no conflicts found"},
            {"type": "Established", "status": "True", "lastTransitionTime": at, "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"},
        ],
        "storedVersions": stored,
    });
}

/// The descriptor of a CRD's storage version.
pub(super) fn descriptor(name: &str, crd: &Value) -> Option<Descriptor> {
    let spec = &crd["spec"];
    let version = storage_version(crd)?;
    let group = text(spec, &["group"]);
    let v = text(version, &["name"]);
    let kind = text(spec, &["names", "kind"]);
    let strings = |field: &str| -> Vec<String> {
        spec["names"][field]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut columns = vec![Column {
        json_path: "",
        ..Column::new("Name", "string", "Name must be unique within a namespace.")
    }];
    let declared = version["additionalPrinterColumns"].as_array();
    let printer = declared.cloned().unwrap_or_else(|| {
        vec![json!({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"})]
    });
    for c in printer {
        columns.push(Column {
            name: leak_str(text(&c, &["name"])),
            type_: leak_str(text(&c, &["type"])),
            format: leak_str(text(&c, &["format"])),
            priority: c["priority"].as_u64().map_or(0, |p| p.min(255) as u8),
            description: leak_str(text(&c, &["description"])),
            json_path: leak_str(text(&c, &["jsonPath"])),
        });
    }
    let singular = match text(spec, &["names", "singular"]) {
        "" => kind.to_lowercase(),
        s => s.to_string(),
    };
    let list_kind = match text(spec, &["names", "listKind"]) {
        "" => format!("{kind}List"),
        s => s.to_string(),
    };
    let declared_scale = &version["subresources"]["scale"];
    let scale = declared_scale.is_object().then(|| ScalePaths {
        spec_replicas: text(declared_scale, &["specReplicasPath"]).to_string(),
        status_replicas: text(declared_scale, &["statusReplicasPath"]).to_string(),
        label_selector: declared_scale["labelSelectorPath"]
            .as_str()
            .map(str::to_string),
    });
    Some(Descriptor {
        group: leak_str(group),
        version: leak_str(v),
        api_version: leak_str(&format!("{group}/{v}")),
        plural: leak_str(text(spec, &["names", "plural"])),
        singular: leak_str(&singular),
        kind: leak_str(kind),
        list_kind: leak_str(&list_kind),
        short_names: leak_strs(&strings("shortNames")),
        categories: leak_strs(&strings("categories")),
        namespaced: text(spec, &["scope"]) == "Namespaced",
        status: version["subresources"]["status"].is_object(),
        scale: scale.is_some(),
        columns: Box::leak(columns.into_boxed_slice()),
        fields: &[],
        custom: Some(Box::leak(Box::new(CustomSchema {
            definition: leak_str(name),
            schema: version["schema"]["openAPIV3Schema"].clone(),
            scale,
        }))),
    })
}
