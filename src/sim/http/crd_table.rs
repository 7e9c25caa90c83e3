//! A custom resource's Table cells, as the apiextensions server's table convertor prints
//! them from its CRD's `additionalPrinterColumns`.

use serde_json::{Value, json};

use super::printing::{human_duration, text};
use crate::manifests::now_seconds;
use crate::resources::Resource;

/// A custom resource's cells as the apiextensions server's table convertor prints them:
/// its name, then each printer column's first JSONPath result by the column's type (see
/// [`custom_cell`]); nothing found, or a value of the wrong type, is a nil cell.
pub(crate) fn custom_cells(resource: Resource, obj: &Value) -> Vec<Value> {
    resource
        .descriptor()
        .columns
        .iter()
        .map(|c| match c.json_path {
            "" => json!(text(&obj["metadata"]["name"])),
            path => match crd_path(obj, path).first() {
                Some(value) => custom_cell(c.type_, value, now_seconds()),
                None => Value::Null,
            },
        })
        .collect()
}

/// One printer column's cell of `value`: a `string` column prints any value as kubectl's
/// JSONPath does, `integer` takes an integer or cuts a float, `number` any number, `boolean`
/// a boolean, `date` a string printed as the time since it; anything else is nil.
fn custom_cell(type_: &str, value: &Value, now: i64) -> Value {
    match (type_, value) {
        ("string", Value::String(s)) => json!(s),
        ("string", Value::Number(n)) => json!(go_float_text(n)),
        ("string", Value::Bool(b)) => json!(b.to_string()),
        ("string", Value::Null) => json!("<no value>"),
        ("string", other) => json!(go_escaped(&other.to_string())),
        ("integer", Value::Number(n)) => match n.as_i64() {
            Some(i) => json!(i),
            None => json!(n.as_f64().map_or(0, |f| f as i64)),
        },
        ("number", Value::Number(n)) => go_json_float(n.as_f64().unwrap_or(0.0)),
        ("boolean", Value::Bool(b)) => json!(b),
        ("date", Value::String(s)) if s.is_empty() => json!("<unknown>"),
        ("date", Value::String(s)) => match s.parse::<jiff::Timestamp>() {
            Ok(at) if now - at.as_second() < -1 => json!("<invalid>"),
            Ok(at) => json!(human_duration(now - at.as_second())),
            Err(_) => json!("<invalid>"),
        },
        _ => Value::Null,
    }
}

/// A float as Go's encoding/json writes it: without a fraction when it has none (below
/// 1e21), which a reader takes for an integer.
fn go_json_float(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 1e21 {
        return json!(f as i128 as i64);
    }
    json!(f)
}

/// A number as Go's `fmt.Sprint` prints the `int64` or `float64` it decodes to: `%v` of a
/// float is the shortest digits, with an exponent below 1e-4 and from 1e6 up.
fn go_float_text(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    let exponent = if f == 0.0 {
        0
    } else {
        f.abs().log10().floor() as i32
    };
    if (-4..6).contains(&exponent) {
        return format!("{f}");
    }
    let text = format!("{f:e}");
    match text.split_once('e') {
        Some((mantissa, e)) => match e.strip_prefix('-') {
            Some(digits) => format!("{mantissa}e-{digits:0>2}"),
            None => format!("{mantissa}e+{e:0>2}"),
        },
        None => text,
    }
}

/// Go's `json.Marshal` escapes `<`, `>` and `&` (which occur only inside strings).
fn go_escaped(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// Every value `path` selects in `obj`, for the JSONPath printer columns use: `.a.b`,
/// `['a.b']`, `[0]`, `[-1]`, `[*]`, `.*` and `[?(@.a.b=="x")]` (also `!=`, numbers).
/// Missing members and values of the wrong type select nothing; a null is not followed.
pub(crate) fn crd_path<'a>(obj: &'a Value, path: &str) -> Vec<&'a Value> {
    let mut at = vec![obj];
    let mut rest = path.trim();
    rest = rest.strip_prefix('{').unwrap_or(rest);
    rest = rest.strip_suffix('}').unwrap_or(rest);
    rest = rest.strip_prefix('$').unwrap_or(rest);
    while !rest.is_empty() {
        let (step, after) = match next_step(rest) {
            Some(step) => step,
            None => return Vec::new(),
        };
        at = at
            .into_iter()
            .filter(|v| !v.is_null())
            .flat_map(|v| step.select(v))
            .collect();
        rest = after;
    }
    at
}

enum Step<'p> {
    Member(&'p str),
    Index(i64),
    All,
    Filter {
        path: &'p str,
        equal: bool,
        literal: Value,
    },
}

impl Step<'_> {
    fn select<'a>(&self, v: &'a Value) -> Vec<&'a Value> {
        match (self, v) {
            (Step::Member(name), Value::Object(map)) => map.get(*name).into_iter().collect(),
            (Step::Index(i), Value::Array(items)) => {
                let at = if *i < 0 { items.len() as i64 + i } else { *i };
                usize::try_from(at)
                    .ok()
                    .and_then(|at| items.get(at))
                    .into_iter()
                    .collect()
            }
            (Step::All, Value::Array(items)) => items.iter().collect(),
            (Step::All, Value::Object(map)) => map.values().collect(),
            (
                Step::Filter {
                    path,
                    equal,
                    literal,
                },
                Value::Array(items),
            ) => items
                .iter()
                .filter(|item| {
                    crd_path(item, path)
                        .first()
                        .is_some_and(|found| (*found == literal) == *equal)
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// The first step of `rest` and what follows it.
fn next_step(rest: &str) -> Option<(Step<'_>, &str)> {
    if let Some(after) = rest.strip_prefix("[?(@") {
        let end = after.find(")]")?;
        let (test, after) = (&after[..end], &after[end + 2..]);
        let (path, equal, literal) = match test.split_once("==") {
            Some((p, l)) => (p, true, l),
            None => {
                let (p, l) = test.split_once("!=")?;
                (p, false, l)
            }
        };
        let literal = literal.trim();
        let literal = match literal.strip_prefix('"').and_then(|l| l.strip_suffix('"')) {
            Some(s) => json!(s),
            None => match literal
                .strip_prefix('\'')
                .and_then(|l| l.strip_suffix('\''))
            {
                Some(s) => json!(s),
                None => serde_json::from_str(literal).ok()?,
            },
        };
        let filter = Step::Filter {
            path: path.trim(),
            equal,
            literal,
        };
        return Some((filter, after));
    }
    for quote in ["['", "[\""] {
        if let Some(after) = rest.strip_prefix(quote) {
            let close = if quote == "['" { "']" } else { "\"]" };
            let end = after.find(close)?;
            return Some((Step::Member(&after[..end]), &after[end + 2..]));
        }
    }
    if let Some(after) = rest.strip_prefix('[') {
        let end = after.find(']')?;
        let step = match after[..end].trim() {
            "*" => Step::All,
            index => Step::Index(index.parse().ok()?),
        };
        return Some((step, &after[end + 1..]));
    }
    let after = rest.strip_prefix('.')?;
    let end = after.find(['.', '[']).unwrap_or(after.len());
    let step = match &after[..end] {
        "*" => Step::All,
        name => Step::Member(name),
    };
    Some((step, &after[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printer_column_paths_select_as_kubectl_does() {
        let obj = json!({"status": {"conditions": [{"type": "Ready", "status": "True"},
                                                   {"type": "Synced", "status": "False"}]},
                         "metadata": {"labels": {"a.b/c": "x"}},
                         "spec": {"tags": ["t1", "t2"], "gone": null}});
        let one = |p: &str| crd_path(&obj, p).first().map(|v| (*v).clone());
        assert_eq!(one(".status.conditions[0].status"), Some(json!("True")));
        assert_eq!(one(".status.conditions[-1].type"), Some(json!("Synced")));
        assert_eq!(
            one(r#".status.conditions[?(@.type=="Synced")].status"#),
            Some(json!("False"))
        );
        assert_eq!(one(".metadata.labels['a.b/c']"), Some(json!("x")));
        assert_eq!(crd_path(&obj, ".spec.tags[*]").len(), 2);
        assert_eq!(one(".spec.gone"), Some(Value::Null));
        assert_eq!(one(".spec.gone.deeper"), None);
        assert_eq!(one(".status.conditions[2]"), None);
        assert_eq!(one(".spec.tags.name"), None);
        assert_eq!(one("status"), None);
    }

    #[test]
    fn printer_cells_follow_the_column_type() {
        let now = 1_000_000;
        let cases = [
            ("string", json!(3), json!("3")),
            ("string", json!(2.5), json!("2.5")),
            ("string", json!(1e22), json!("1e+22")),
            ("string", json!(1234567.5), json!("1.2345675e+06")),
            (
                "string",
                json!({"b": 1, "a": "<"}),
                json!(r#"{"a":"\u003c","b":1}"#),
            ),
            ("string", Value::Null, json!("<no value>")),
            ("integer", json!(2.9), json!(2)),
            ("integer", json!("7"), Value::Null),
            ("number", json!(4.0), json!(4)),
            ("number", json!(4.5), json!(4.5)),
            ("boolean", json!("true"), Value::Null),
            ("date", json!("1970-01-01T00:00:00Z"), json!("11d")),
            ("date", json!("soon"), json!("<invalid>")),
            ("date", json!(""), json!("<unknown>")),
            ("date", json!(5), Value::Null),
        ];
        for (type_, value, want) in cases {
            assert_eq!(custom_cell(type_, &value, now), want, "{type_} {value}");
        }
    }
}
