//! What describes a served resource type: names, scope, subresources, Table columns and
//! selectable fields, and for a custom resource its schema. Built-in kinds' descriptors are
//! in [`super::kinds`]; [`super::resources`] hands them out by handle.

use serde_json::Value;

/// A Table column as the server prints it. Built-in kinds compute their cells in code;
/// a custom resource's come from its `jsonPath`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: &'static str,
    /// `string`, `integer`, `number`, `boolean` or `date`.
    pub type_: &'static str,
    pub format: &'static str,
    pub priority: u8,
    pub description: &'static str,
    /// For a custom resource's printer column: the JSONPath its cell is read from.
    pub json_path: &'static str,
}

impl Column {
    /// A built-in column of priority 0 (always shown).
    pub const fn new(name: &'static str, type_: &'static str, description: &'static str) -> Self {
        let format = if matches!(name.as_bytes(), b"Name") {
            "name"
        } else {
            ""
        };
        Self {
            name,
            type_,
            format,
            priority: 0,
            description,
            json_path: "",
        }
    }

    /// The same column shown only by `-o wide`.
    pub const fn wide(self) -> Self {
        Self {
            priority: 1,
            ..self
        }
    }
}

/// A field a field selector may name beyond `metadata.name`/`metadata.namespace`: its
/// label, where it is in the object, and what an absent value compares as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectableField {
    pub label: &'static str,
    pub path: &'static [&'static str],
    pub missing: &'static str,
}

impl SelectableField {
    pub const fn new(label: &'static str, path: &'static [&'static str]) -> Self {
        Self {
            label,
            path,
            missing: "",
        }
    }
}

/// What a custom resource's CustomResourceDefinition says about its objects' content.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomSchema {
    /// `metadata.name` of the CRD (`plural.group`).
    pub definition: &'static str,
    /// The served version's `openAPIV3Schema`, structural (validated when registered).
    pub schema: Value,
    /// Where its `/scale` subresource reads and writes, if the version declares one.
    pub scale: Option<ScalePaths>,
}

/// A custom resource's `subresources.scale`: the JSON paths (`.spec.replicas`) its Scale
/// maps to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalePaths {
    pub spec_replicas: String,
    pub status_replicas: String,
    pub label_selector: Option<String>,
}

/// Everything the server needs to know about one resource type.
#[derive(Debug, Clone, PartialEq)]
pub struct Descriptor {
    /// API group: "" for core.
    pub group: &'static str,
    pub version: &'static str,
    /// `group/version`, or the version alone for core.
    pub api_version: &'static str,
    pub plural: &'static str,
    pub singular: &'static str,
    pub kind: &'static str,
    pub list_kind: &'static str,
    pub short_names: &'static [&'static str],
    pub categories: &'static [&'static str],
    pub namespaced: bool,
    /// Whether it has a `/status` subresource.
    pub status: bool,
    /// Whether it has a `/scale` subresource (autoscaling/v1 Scale).
    pub scale: bool,
    pub columns: &'static [Column],
    pub fields: &'static [SelectableField],
    /// Set for custom resources.
    pub custom: Option<&'static CustomSchema>,
}

/// The verbs every served resource allows.
pub const VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
