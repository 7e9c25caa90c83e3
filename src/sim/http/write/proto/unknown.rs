//! The fields of an object its kind's schema does not declare: what `fieldValidation=Strict`
//! refuses, and what decoding into Go types drops otherwise.

use serde_json::Value;

use super::kinds::root;
use super::message::{Field, Label, Message, Ty};

/// The fields of `object` (of `kind`) its schema does not declare, as `spec.foo` or
/// `spec.containers[0].foo`: what `fieldValidation=Strict` refuses.
pub(in crate::http::write) fn unknown_fields(kind: &str, object: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let (Some(message), Value::Object(map)) = (root(kind), object) {
        for (key, value) in map {
            if key == "apiVersion" || key == "kind" {
                continue;
            }
            check_field(message, key, value, key.clone(), &mut out);
        }
    }
    out
}

/// Drops the fields of `object` (of `kind`) its schema does not declare, as decoding into
/// the Go types does when validation is not Strict.
pub(in crate::http::write) fn prune_unknown(kind: &str, object: &mut Value) {
    if let (Some(message), Value::Object(map)) = (root(kind), object) {
        map.retain(|key, value| {
            key == "apiVersion" || key == "kind" || prune_field(message, key, value)
        });
    }
}

/// Whether `name` is a field of `message`; prunes inside it when it is.
fn prune_field(message: &'static Message, name: &str, value: &mut Value) -> bool {
    let Some(Field(_, _, label, ty)) = find_field(message, name) else {
        return false;
    };
    let Ty::Message(inner) = ty else {
        return true;
    };
    let prune_object = |value: &mut Value| {
        if let Value::Object(map) = value {
            map.retain(|key, v| prune_field(inner, key, v));
        }
    };
    match (label, value) {
        (Label::Repeated, Value::Array(items)) => items.iter_mut().for_each(prune_object),
        (Label::Map, Value::Object(map)) => map.values_mut().for_each(prune_object),
        (_, value) => prune_object(value),
    }
    true
}

/// The field of `message` named `name`, looking into the Go structs it embeds.
fn find_field(message: &'static Message, name: &str) -> Option<&'static Field> {
    message.fields.iter().find_map(|field| match field {
        Field(_, n, _, _) if *n == name => Some(field),
        Field(_, _, Label::Inline, Ty::Message(inner)) => find_field(inner, name),
        _ => None,
    })
}

fn check_field(
    message: &'static Message,
    name: &str,
    value: &Value,
    path: String,
    out: &mut Vec<String>,
) {
    let Some(Field(_, _, label, ty)) = find_field(message, name) else {
        out.push(path);
        return;
    };
    let Ty::Message(inner) = ty else {
        return;
    };
    let check_object = |value: &Value, path: String, out: &mut Vec<String>| {
        if let Value::Object(map) = value {
            for (key, v) in map {
                check_field(inner, key, v, format!("{path}.{key}"), out);
            }
        }
    };
    match (label, value) {
        (Label::Repeated, Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                check_object(item, format!("{path}[{i}]"), out);
            }
        }
        (Label::Map, Value::Object(map)) => {
            for (key, item) in map {
                check_object(item, format!("{path}[{key}]"), out);
            }
        }
        _ => check_object(value, path, out),
    }
}
