//! A custom resource's printer columns (its CRD's `additionalPrinterColumns`) evaluated
//! client-side by the rules of the API server's table convertor for custom resources: the
//! first value the JSONPath selects (a missing member, a value of the wrong type on the way
//! or a path that selects nothing gives a nil cell), then printed by the column's type:
//!
//! - `string`: any value, as kubectl's JSONPath prints it (lists and objects as JSON; a null
//!   as `<no value>`);
//! - `integer`: an integer, or a float cut to one; `number`: any number, printed as kubectl
//!   prints the float the server sends; `boolean`: a boolean;
//! - `date`: a string, printed as the time since it (`<invalid>` when it is not RFC 3339,
//!   `<unknown>` when empty);
//!
//! and a value of another type gives a nil cell.

use std::sync::Arc;

use serde_json::Value;

use super::jsonpath::{FieldPath, go_number};
use kscope_resources::{PrinterColumn, PrinterColumnCompiler, Reach, Timestamp};

/// The type of a printer column, which decides which values it prints and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ColumnType {
    String,
    Integer,
    Number,
    Boolean,
    Date,
    /// A type the API server does not allow: every cell is nil, as there.
    Other,
}

impl ColumnType {
    fn of(type_: &str) -> Self {
        match type_ {
            "string" => Self::String,
            "integer" => Self::Integer,
            "number" => Self::Number,
            "boolean" => Self::Boolean,
            "date" => Self::Date,
            _ => Self::Other,
        }
    }
}

/// One printer column: its path in kubectl's dialect and its type.
pub struct CrdColumn {
    path: FieldPath,
    /// What the path reads of an object.
    reach: Reach,
    type_: ColumnType,
}

impl CrdColumn {
    pub fn new(type_: &str, json_path: &str) -> Result<Self, String> {
        let path = FieldPath::parse(json_path).map_err(|e| e.to_string())?;
        Ok(Self {
            reach: path.reach(),
            path,
            type_: ColumnType::of(type_),
        })
    }
}

impl PrinterColumn for CrdColumn {
    fn reach(&self) -> &Reach {
        &self.reach
    }

    fn cell(&self, object: &Value, now: Timestamp) -> Option<String> {
        // Of several values, the first: the server takes the first result.
        let found = self.path.find(object).ok()?;
        let value = *found.first()?;
        match (self.type_, value) {
            (ColumnType::String, value) => Some(jsonpath_print(value)),
            (ColumnType::Integer, Value::Number(n)) => Some(match n.as_i64() {
                Some(i) => i.to_string(),
                // A float, cut toward zero as Go's int64() does (saturating past the ends).
                None => (n.as_f64()? as i64).to_string(),
            }),
            (ColumnType::Number, Value::Number(n)) => Some(float_cell(n.as_f64()?)),
            (ColumnType::Boolean, Value::Bool(b)) => Some(b.to_string()),
            (ColumnType::Date, Value::String(s)) => Some(date_cell(s, now)),
            _ => None,
        }
    }
}

/// Compiles columns in kubectl's JSONPath dialect, for the client layer.
pub struct KubectlPrinterColumns;

impl PrinterColumnCompiler for KubectlPrinterColumns {
    fn compile(&self, type_: &str, json_path: &str) -> Result<Arc<dyn PrinterColumn>, String> {
        Ok(Arc::new(CrdColumn::new(type_, json_path)?))
    }
}

/// A value as kubectl's JSONPath printer prints it in a `string` column: a string as it is,
/// a number or boolean as Go's `fmt` does, a list or object as Go's `json.Marshal` does
/// (keys sorted, `<`, `>` and `&` escaped), a null as Go's template prints no value.
fn jsonpath_print(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => go_number(n),
        Value::Bool(b) => b.to_string(),
        Value::Null => "<no value>".to_string(),
        other => go_json_escape(&other.to_string()),
    }
}

/// Go's `json.Marshal` escapes these inside strings (the only place they occur in JSON).
fn go_json_escape(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// A `number` cell: the server sends a float, which Go's JSON writes without a fraction
/// when it has none (below 1e21), and which kubectl then reads back as an integer; any
/// other float kubectl prints with Go's `%v`.
fn float_cell(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e21 {
        // `-0` reads back as the integer 0.
        return format!("{:.0}", f + 0.0);
    }
    match serde_json::Number::from_f64(f) {
        Some(n) => go_number(&n),
        None => f.to_string(),
    }
}

/// A `date` cell: the time since an RFC 3339 time, as kubectl's `HumanDuration`.
fn date_cell(text: &str, now: Timestamp) -> String {
    if text.is_empty() || text == "null" {
        return "<unknown>".to_string();
    }
    match Timestamp::parse(text) {
        Ok(at) => at.human_since(now),
        Err(_) => "<invalid>".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cell(type_: &str, path: &str, object: &Value) -> Option<String> {
        let now = Timestamp::parse("2025-01-02T00:00:00Z").unwrap();
        CrdColumn::new(type_, path).unwrap().cell(object, now)
    }

    #[test]
    fn each_type_prints_its_values_and_nil_for_the_others() {
        let o = json!({"spec": {
            "s": "blue", "i": 3, "f": 2.7, "neg": -2.7, "big": 1234567.5, "whole": 4.0,
            "b": true, "d": "2025-01-01T00:00:00Z", "bad": "yesterday", "empty": "",
            "list": ["a", "b"], "map": {"z": 1, "a": "<&>"}, "null": null,
            "items": [{"n": "x"}, {"n": "y"}]
        }});
        let cases: &[(&str, &str, Option<&str>)] = &[
            ("string", ".spec.s", Some("blue")),
            ("string", ".spec.i", Some("3")),
            ("string", ".spec.f", Some("2.7")),
            ("string", ".spec.b", Some("true")),
            ("string", ".spec.list", Some(r#"["a","b"]"#)),
            (
                "string",
                ".spec.map",
                Some(r#"{"a":"\u003c\u0026\u003e","z":1}"#),
            ),
            ("string", ".spec.null", Some("<no value>")),
            ("string", ".spec.missing", None),
            ("string", ".spec.s.deeper", None),
            ("string", ".spec.items[*].n", Some("x")),
            ("string", ".spec.items[1].n", Some("y")),
            ("string", ".spec.items[5].n", None),
            ("integer", ".spec.i", Some("3")),
            ("integer", ".spec.f", Some("2")),
            ("integer", ".spec.neg", Some("-2")),
            ("integer", ".spec.s", None),
            ("integer", ".spec.null", None),
            ("number", ".spec.i", Some("3")),
            ("number", ".spec.f", Some("2.7")),
            ("number", ".spec.whole", Some("4")),
            ("number", ".spec.big", Some("1.2345675e+06")),
            ("number", ".spec.b", None),
            ("boolean", ".spec.b", Some("true")),
            ("boolean", ".spec.s", None),
            ("date", ".spec.d", Some("24h")),
            ("date", ".spec.bad", Some("<invalid>")),
            ("date", ".spec.empty", Some("<unknown>")),
            ("date", ".spec.i", None),
            ("other", ".spec.s", None),
        ];
        for (type_, path, want) in cases {
            assert_eq!(cell(type_, path, &o).as_deref(), *want, "{type_} {path}");
        }
    }

    #[test]
    fn a_column_reads_what_its_path_reaches() {
        let reach = |p: &str| CrdColumn::new("string", p).unwrap().reach().clone();
        assert_eq!(
            reach(".spec.size"),
            Reach::member("spec", Reach::member("size", Reach::Whole))
        );
        let ready = reach(r#".status.conditions[?(@.type=="Ready")].status"#);
        assert!(ready.reads(&["status", "conditions"]));
        assert!(!ready.reads(&["spec"]));
        assert_eq!(reach("..name"), Reach::Whole);
        assert!(CrdColumn::new("string", ".spec[").is_err());
    }
}
