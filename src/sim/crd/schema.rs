//! Structural OpenAPI v3 schemas as CustomResourceDefinitions declare them: the checks a
//! CRD's schema must pass, and validation, defaulting and pruning of custom resources
//! against it, with the real server's field paths and messages. Covered: `type`,
//! `properties`, `required`, `items`, `additionalProperties`, `enum`, `minimum`/`maximum`
//! (and their exclusive forms), `minLength`/`maxLength`, `minItems`/`maxItems`,
//! `nullable`, `default`, `x-kubernetes-int-or-string`, `x-kubernetes-preserve-unknown-fields`.
//! Not covered: `pattern`, `format`, `oneOf`/`anyOf`/`allOf`/`not`, CEL rules.

use serde_json::{Map, Value};

/// One field error, as `field.Error` renders: `field: Short: detail`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    /// The cause reason (`FieldValueRequired`, `FieldValueInvalid`...).
    pub reason: &'static str,
    /// `Required value`, `Invalid value`, `Unsupported value`...
    pub short: &'static str,
    pub detail: String,
}

impl FieldError {
    fn new(field: &str, reason: &'static str, short: &'static str, detail: String) -> Self {
        Self {
            field: field.to_string(),
            reason,
            short,
            detail,
        }
    }

    fn required(field: &str, detail: &str) -> Self {
        Self::new(
            field,
            "FieldValueRequired",
            "Required value",
            detail.to_string(),
        )
    }

    fn invalid(field: &str, value: &Value, detail: String) -> Self {
        Self::new(
            field,
            "FieldValueInvalid",
            "Invalid value",
            format!("{}: {detail}", shown(value)),
        )
    }

    fn unsupported(field: &str, value: &Value, supported: &[String]) -> Self {
        Self::new(
            field,
            "FieldValueNotSupported",
            "Unsupported value",
            format!(
                "{}: supported values: {}",
                shown(value),
                supported.join(", ")
            ),
        )
    }

    fn forbidden(field: &str, detail: &str) -> Self {
        Self::new(
            field,
            "FieldValueForbidden",
            "Forbidden",
            detail.to_string(),
        )
    }

    /// `field: Short: detail`, as in the Status message.
    pub fn render(&self) -> String {
        if self.detail.is_empty() {
            format!("{}: {}", self.field, self.short)
        } else {
            format!("{}: {}: {}", self.field, self.short, self.detail)
        }
    }
}

/// A value as field errors quote it: strings in quotes, the rest as JSON.
fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

const TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

fn flag(schema: &Value, name: &str) -> bool {
    schema[name].as_bool() == Some(true)
}

/// Whether `schema` leaves its node's type open (int-or-string, or anything preserved).
fn untyped_allowed(schema: &Value) -> bool {
    flag(schema, "x-kubernetes-int-or-string")
        || flag(schema, "x-kubernetes-preserve-unknown-fields")
}

/// Checks that `schema` (at `path`) is structural, as a CRD's `openAPIV3Schema` must be.
pub fn check_structural(schema: &Value, path: &str, out: &mut Vec<FieldError>) {
    let Some(node) = schema.as_object() else {
        out.push(FieldError::invalid(
            path,
            schema,
            "must be an object".to_string(),
        ));
        return;
    };
    match node.get("type").and_then(Value::as_str) {
        Some("object") => {}
        Some(other) if !TYPES.contains(&other) => {
            out.push(unsupported_type(&format!("{path}.type"), other));
        }
        Some(_) => out.push(FieldError::invalid(
            &format!("{path}.type"),
            &node["type"],
            "must be object at the root".to_string(),
        )),
        None => out.push(FieldError::required(
            &format!("{path}.type"),
            "must not be empty at the root",
        )),
    }
    check_node(schema, path, out);
}

fn unsupported_type(field: &str, t: &str) -> FieldError {
    let supported: Vec<String> = TYPES.iter().map(|t| format!("{t:?}")).collect();
    FieldError::unsupported(field, &Value::String(t.to_string()), &supported)
}

fn check_node(schema: &Value, path: &str, out: &mut Vec<FieldError>) {
    let kind = schema["type"].as_str();
    if let Some(t) = kind
        && !TYPES.contains(&t)
    {
        out.push(unsupported_type(&format!("{path}.type"), t));
    }
    if let Some(props) = schema["properties"].as_object() {
        if schema
            .get("additionalProperties")
            .is_some_and(|a| a != false)
        {
            out.push(FieldError::forbidden(
                &format!("{path}.additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        for (name, sub) in props {
            let at = format!("{path}.properties[{name}]");
            if sub["type"].as_str().is_none_or(str::is_empty) && !untyped_allowed(sub) {
                out.push(FieldError::required(
                    &format!("{at}.type"),
                    "must not be empty for specified object fields",
                ));
            }
            check_node(sub, &at, out);
        }
    }
    if let Some(extra) = schema.get("additionalProperties").filter(|a| a.is_object()) {
        let at = format!("{path}.additionalProperties");
        if extra["type"].as_str().is_none_or(str::is_empty) && !untyped_allowed(extra) {
            out.push(FieldError::required(
                &format!("{at}.type"),
                "must not be empty for specified object fields",
            ));
        }
        check_node(extra, &at, out);
    }
    if kind == Some("array") {
        match schema.get("items") {
            Some(items) if items.is_object() => {
                let at = format!("{path}.items");
                if items["type"].as_str().is_none_or(str::is_empty) && !untyped_allowed(items) {
                    out.push(FieldError::required(
                        &format!("{at}.type"),
                        "must not be empty for specified array items",
                    ));
                }
                check_node(items, &at, out);
            }
            _ => out.push(FieldError::required(
                &format!("{path}.items"),
                "must be specified",
            )),
        }
    }
    if let Some(default) = schema.get("default") {
        let mut errors = Vec::new();
        validate(default, schema, "", &mut errors);
        if let Some(first) = errors.into_iter().next() {
            out.push(FieldError {
                field: format!("{path}.default"),
                ..first
            });
        }
    }
}

fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `path.name`, or `name` at the root.
fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// Validates `value` at `path` against `schema`, collecting every error.
pub fn validate(value: &Value, schema: &Value, path: &str, out: &mut Vec<FieldError>) {
    let shown_path = if path.is_empty() { "<root>" } else { path };
    if value.is_null() {
        if !flag(schema, "nullable") && schema.get("type").is_some() {
            out.push(FieldError::invalid(
                shown_path,
                &Value::String("null".into()),
                format!(
                    "{shown_path} in body must be of type {}: \"null\"",
                    schema["type"].as_str().unwrap_or("object")
                ),
            ));
        }
        return;
    }
    let actual = type_of(value);
    if flag(schema, "x-kubernetes-int-or-string") {
        if !matches!(actual, "integer" | "string") {
            out.push(FieldError::invalid(
                shown_path,
                &Value::String(actual.into()),
                format!("{shown_path} in body must be of type integer or string: \"{actual}\""),
            ));
        }
    } else if let Some(want) = schema["type"].as_str() {
        let fits = want == actual || (want == "number" && actual == "integer");
        if !fits {
            out.push(FieldError::invalid(
                shown_path,
                &Value::String(actual.into()),
                format!("{shown_path} in body must be of type {want}: \"{actual}\""),
            ));
            return;
        }
    }
    if let Some(allowed) = schema["enum"].as_array()
        && !allowed.contains(value)
    {
        let supported: Vec<String> = allowed.iter().map(shown).collect();
        out.push(FieldError::unsupported(shown_path, value, &supported));
    }
    if let Some(n) = value.as_f64() {
        bounds(schema, value, n, shown_path, out);
    }
    if let Some(s) = value.as_str() {
        let len = s.chars().count() as u64;
        if let Some(max) = schema["maxLength"].as_u64()
            && len > max
        {
            out.push(FieldError::new(
                shown_path,
                "FieldValueTooLong",
                "Too long",
                format!("may not be more than {max} bytes"),
            ));
        }
        if let Some(min) = schema["minLength"].as_u64()
            && len < min
        {
            out.push(FieldError::invalid(
                shown_path,
                value,
                format!("{shown_path} in body should be at least {min} chars long"),
            ));
        }
    }
    match value {
        Value::Object(map) => validate_object(map, schema, path, out),
        Value::Array(items) => {
            let len = items.len() as u64;
            if let Some(max) = schema["maxItems"].as_u64()
                && len > max
            {
                out.push(FieldError::new(
                    shown_path,
                    "FieldValueTooMany",
                    "Too many",
                    format!("{len}: must have at most {max} items"),
                ));
            }
            if let Some(min) = schema["minItems"].as_u64()
                && len < min
            {
                out.push(FieldError::invalid(
                    shown_path,
                    value,
                    format!("{shown_path} in body should have at least {min} items"),
                ));
            }
            if let Some(item_schema) = schema.get("items").filter(|s| s.is_object()) {
                for (i, item) in items.iter().enumerate() {
                    validate(item, item_schema, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

fn bounds(schema: &Value, value: &Value, n: f64, path: &str, out: &mut Vec<FieldError>) {
    if let Some(max) = schema["maximum"].as_f64() {
        let exclusive = flag(schema, "exclusiveMaximum");
        if n > max || (exclusive && n >= max) {
            let how = if exclusive {
                "less than"
            } else {
                "less than or equal to"
            };
            out.push(FieldError::invalid(
                path,
                value,
                format!("{path} in body should be {how} {}", schema["maximum"]),
            ));
        }
    }
    if let Some(min) = schema["minimum"].as_f64() {
        let exclusive = flag(schema, "exclusiveMinimum");
        if n < min || (exclusive && n <= min) {
            let how = if exclusive {
                "greater than"
            } else {
                "greater than or equal to"
            };
            out.push(FieldError::invalid(
                path,
                value,
                format!("{path} in body should be {how} {}", schema["minimum"]),
            ));
        }
    }
}

fn validate_object(
    map: &Map<String, Value>,
    schema: &Value,
    path: &str,
    out: &mut Vec<FieldError>,
) {
    for name in schema["required"].as_array().into_iter().flatten() {
        if let Some(name) = name.as_str()
            && !map.contains_key(name)
        {
            out.push(FieldError::required(&child(path, name), ""));
        }
    }
    let props = schema["properties"].as_object();
    for (name, v) in map {
        // The root's metadata is the server's to validate, not the schema's.
        if path.is_empty() && matches!(name.as_str(), "apiVersion" | "kind" | "metadata") {
            continue;
        }
        if let Some(sub) = props.and_then(|p| p.get(name)) {
            validate(v, sub, &child(path, name), out);
        } else if let Some(extra) = schema.get("additionalProperties").filter(|a| a.is_object()) {
            validate(v, extra, &child(path, name), out);
        }
    }
}

/// Fills in the schema's defaults where `value` lacks the field, as the server does
/// on every write.
pub fn apply_defaults(value: &mut Value, schema: &Value) {
    match value {
        Value::Object(map) => {
            if let Some(props) = schema["properties"].as_object() {
                for (name, sub) in props {
                    if !map.contains_key(name)
                        && let Some(default) = sub.get("default")
                    {
                        map.insert(name.clone(), default.clone());
                    }
                    if let Some(v) = map.get_mut(name) {
                        apply_defaults(v, sub);
                    }
                }
            } else if let Some(extra) = schema.get("additionalProperties").filter(|a| a.is_object())
            {
                for v in map.values_mut() {
                    apply_defaults(v, extra);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items {
                    apply_defaults(item, item_schema);
                }
            }
        }
        _ => {}
    }
}

/// Drops the fields the schema does not declare (unless it preserves unknown fields
/// there), returning their paths: what the server prunes, and what Strict refuses.
pub fn prune(value: &mut Value, schema: &Value, path: &str) -> Vec<String> {
    let mut pruned = Vec::new();
    prune_into(value, schema, path, &mut pruned);
    pruned
}

fn prune_into(value: &mut Value, schema: &Value, path: &str, pruned: &mut Vec<String>) {
    if flag(schema, "x-kubernetes-preserve-unknown-fields") && schema.get("properties").is_none() {
        return;
    }
    match value {
        Value::Object(map) => {
            let props = schema["properties"].as_object();
            let extra = schema.get("additionalProperties").filter(|a| a.is_object());
            let preserve = flag(schema, "x-kubernetes-preserve-unknown-fields");
            map.retain(|name, v| {
                let at = child(path, name);
                if path.is_empty() && matches!(name.as_str(), "apiVersion" | "kind" | "metadata") {
                    return true;
                }
                match (props.and_then(|p| p.get(name)), extra) {
                    (Some(sub), _) | (None, Some(sub)) => {
                        prune_into(v, sub, &at, pruned);
                        true
                    }
                    (None, None) if preserve => true,
                    (None, None) => {
                        pruned.push(at);
                        false
                    }
                }
            });
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter_mut().enumerate() {
                    prune_into(item, item_schema, &format!("{path}[{i}]"), pruned);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn widget_schema() -> Value {
        json!({"type": "object", "properties": {
            "spec": {"type": "object", "required": ["size"], "properties": {
                "size": {"type": "string", "enum": ["small", "medium", "large"]},
                "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
                "color": {"type": "string", "default": "blue"},
                "tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}},
            }},
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        }})
    }

    #[test]
    fn custom_resources_are_validated_with_the_servers_messages() {
        let schema = widget_schema();
        let mut errors = Vec::new();
        let bad = json!({"spec": {"size": "huge", "replicas": 20, "tags": ["a", "b", "c"]}});
        validate(&bad, &schema, "", &mut errors);
        let rendered: Vec<String> = errors.iter().map(FieldError::render).collect();
        assert_eq!(
            rendered,
            [
                "spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10",
                "spec.size: Unsupported value: \"huge\": supported values: \"small\", \"medium\", \"large\"",
                "spec.tags: Too many: 3: must have at most 2 items",
            ]
        );
        let mut errors = Vec::new();
        validate(
            &json!({"spec": {"replicas": "x"}}),
            &schema,
            "",
            &mut errors,
        );
        let rendered: Vec<String> = errors.iter().map(FieldError::render).collect();
        assert_eq!(
            rendered,
            [
                "spec.size: Required value",
                "spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\"",
            ]
        );
        let mut ok = Vec::new();
        validate(&json!({"spec": {"size": "small"}}), &schema, "", &mut ok);
        assert!(ok.is_empty(), "{ok:?}");
    }

    #[test]
    fn defaults_and_pruning() {
        let schema = widget_schema();
        let mut w = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                           "spec": {"size": "small", "extra": 1}, "status": {"anything": true}, "junk": 2});
        apply_defaults(&mut w, &schema);
        assert_eq!(w["spec"]["replicas"], 1);
        assert_eq!(w["spec"]["color"], "blue");
        let pruned = prune(&mut w, &schema, "");
        assert_eq!(pruned, ["junk", "spec.extra"]);
        assert_eq!(w["status"]["anything"], true);
        assert_eq!(w["metadata"]["name"], "w");
    }

    #[test]
    fn structural_schemas() {
        let mut errors = Vec::new();
        check_structural(&widget_schema(), "s", &mut errors);
        assert!(errors.is_empty(), "{errors:?}");
        let mut errors = Vec::new();
        let bad = json!({"type": "object", "properties": {
            "spec": {"properties": {"n": {"type": "int"}, "l": {"type": "array"}}},
            "d": {"type": "integer", "default": "x"},
        }});
        check_structural(&bad, "s", &mut errors);
        let rendered: Vec<String> = errors.iter().map(FieldError::render).collect();
        assert_eq!(
            rendered,
            [
                "s.properties[d].default: Invalid value: \"string\": <root> in body must be of type integer: \"string\"",
                "s.properties[spec].type: Required value: must not be empty for specified object fields",
                "s.properties[spec].properties[l].items: Required value: must be specified",
                "s.properties[spec].properties[n].type: Unsupported value: \"int\": supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\"",
            ]
        );
    }
}
