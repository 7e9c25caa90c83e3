//! kubectl's JSONPath dialect for one field (`.spec.nodeName`, `{.spec.nodeName}`,
//! `.status.conditions[?(@.type=="Ready")].status`, `.spec.containers[*].image`,
//! `.metadata.labels['app.kubernetes.io/name']`), evaluated by jsonpath-rust (RFC 9535,
//! already in the tree under kube).
//!
//! kubectl's dialect differs from RFC 9535 in its names, not its structure: a dotted name
//! runs to the next `.`, `[` or operator, so it may hold `-` or `/` (and `\.` is a literal
//! dot), and the leading `$` and the braces of a template are optional. Each dotted name is
//! rewritten as a bracketed, quoted one (`.app-name` as `['app-name']`); the rest is RFC 9535
//! already. Values print as kubectl's `-o jsonpath` prints them: strings as they are, numbers
//! and booleans as Go's `fmt` does, objects and lists as compact JSON.

use std::fmt;

use jsonpath_rust::parser::errors::JsonPathError;
use jsonpath_rust::parser::model::{JpQuery, Segment, Selector};
use jsonpath_rust::parser::parse_json_path;
use jsonpath_rust::query::js_path_process;
use serde_json::Value;

use kscope_resources::Reach;

/// A field's JSONPath, parsed once. Two paths are equal when written alike.
#[derive(Clone)]
pub struct FieldPath {
    text: String,
    query: JpQuery,
}

/// A JSONPath that does not parse: where (in characters from the start of the text as
/// written) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid JSONPath at character {}: {message}", .offset + 1)]
pub struct JsonPathSyntaxError {
    /// Characters before the error, in the text as written.
    pub offset: usize,
    pub message: String,
}

/// A path that parsed but cannot be followed on one object: it asks a member of something
/// that is not an object, or an item of something that is not a list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {found} where {wanted} was expected")]
pub struct FieldTypeMismatch {
    /// The part of the path that was followed, up to the value of the wrong type.
    pub path: String,
    pub found: &'static str,
    pub wanted: &'static str,
}

impl FieldPath {
    /// Parses kubectl's dialect: `{.a.b}`, `.a.b`, `$.a.b` or `a.b`.
    pub fn parse(text: &str) -> Result<Self, JsonPathSyntaxError> {
        let (translated, origins) = translate(text)?;
        let query = parse_json_path(&translated).map_err(|e| syntax_error(e, text, &origins))?;
        Ok(Self {
            text: text.to_string(),
            query,
        })
    }

    /// The path as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Every value the path selects in `object`, in document order. A member that is absent
    /// selects nothing; one of the wrong type on the way is an error.
    pub fn find<'a>(&self, object: &'a Value) -> Result<Vec<&'a Value>, FieldTypeMismatch> {
        // Most field paths are members and items only (`.spec.nodeName`): followed directly,
        // at a fraction of the general evaluation's cost (which builds every node's path).
        if let Some(found) = follow_members(&self.query.segments, object) {
            return found.map(|v| v.into_iter().collect());
        }
        // Evaluating a parsed query only fails on a query that is not a path to values,
        // which the parser does not produce: that case reads as nothing selected.
        let found: Vec<&Value> = js_path_process(&self.query, object)
            .map(|refs| refs.into_iter().map(|r| r.val).collect())
            .unwrap_or_default();
        if found.is_empty()
            && let Some(mismatch) = first_mismatch(&self.query.segments, object)
        {
            return Err(mismatch);
        }
        Ok(found)
    }

    /// The parts of an object the path reads, for a projection to read only those: members
    /// named, each item of a list past a wildcard, an index or a slice, and whole what a
    /// filter or a descendant segment looks into. A path that may refer to the root inside a
    /// filter (`$` past its start) reads the whole object.
    pub fn reach(&self) -> Reach {
        let body = self.text.trim_start().trim_start_matches('{').trim_start();
        if body.strip_prefix('$').unwrap_or(body).contains('$') {
            return Reach::Whole;
        }
        segments_reach(&self.query.segments)
    }

    /// The index values of `object`: one per value selected (nulls select none), printed
    /// as kubectl's `-o jsonpath` prints each.
    pub fn values(&self, object: &Value) -> Result<Vec<String>, FieldTypeMismatch> {
        Ok(self
            .find(object)?
            .into_iter()
            .filter(|v| !v.is_null())
            .map(jsonpath_text)
            .collect())
    }
}

impl PartialEq for FieldPath {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for FieldPath {}

impl std::hash::Hash for FieldPath {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.text.hash(state);
    }
}

impl fmt::Debug for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("FieldPath").field(&self.text).finish()
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// One value as kubectl's `-o jsonpath` prints it: a string as it is, a number or boolean
/// as Go's `fmt.Sprint`, an object or list as compact JSON.
pub fn jsonpath_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => go_number(n),
        Value::Bool(b) => b.to_string(),
        Value::Null => "<nil>".to_string(),
        other => other.to_string(),
    }
}

/// One value as Go's `fmt.Sprint` prints what kubectl decoded from JSON (integers as
/// `int64`, other numbers as `float64`, maps sorted by key): how `-o custom-columns` prints
/// a cell.
pub fn go_sprint(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => go_number(n),
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(go_sprint).collect();
            format!("[{}]", items.join(" "))
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let entries: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{k}:{}", go_sprint(v)))
                .collect();
            format!("map[{}]", entries.join(" "))
        }
    }
}

/// An integer as written; any other number as Go's `%v` prints a `float64`: the shortest
/// digits, in exponent form below 1e-4 and from 1e6 up (strconv's `'g'` with the shortest
/// precision decides at six digits).
pub(crate) fn go_number(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    let Some(f) = n.as_f64() else {
        return n.to_string();
    };
    // Rust's `{:e}` gives the shortest digits that read back the same, as Go's does.
    let scientific = format!("{f:e}");
    let Some((mantissa, exponent)) = scientific.split_once('e') else {
        return scientific;
    };
    let Ok(exponent) = exponent.parse::<i32>() else {
        return scientific;
    };
    if !(-4..6).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs());
    }
    let plain = format!("{f}");
    plain.strip_suffix(".0").unwrap_or(&plain).to_string()
}

/// What `segments` read of the value they start from (see [`FieldPath::reach`]).
fn segments_reach(segments: &[Segment]) -> Reach {
    let Some((first, rest)) = segments.split_first() else {
        return Reach::Whole;
    };
    match first {
        Segment::Descendant(_) => Reach::Whole,
        Segment::Selector(selector) => selector_reach(selector, rest),
        Segment::Selectors(selectors) => selectors.iter().fold(Reach::Nothing, |reach, s| {
            reach.union(selector_reach(s, rest))
        }),
    }
}

fn selector_reach(selector: &Selector, rest: &[Segment]) -> Reach {
    match selector {
        Selector::Name(name) => Reach::member(name.clone(), segments_reach(rest)),
        Selector::Wildcard | Selector::Index(_) | Selector::Slice(..) => {
            Reach::every(segments_reach(rest))
        }
        Selector::Filter(_) => Reach::Whole,
    }
}

/// The value a path of members and items only selects (none when a member is absent or a
/// value on the way is null), or the mismatch it meets; `None` for any other path.
fn follow_members<'a>(
    segments: &[Segment],
    object: &'a Value,
) -> Option<Result<Option<&'a Value>, FieldTypeMismatch>> {
    let simple =
        |s: &Segment| matches!(s, Segment::Selector(Selector::Name(_) | Selector::Index(_)));
    if !segments.iter().all(simple) {
        return None;
    }
    let mut value = object;
    for segment in segments {
        let next = match (segment, value) {
            (Segment::Selector(Selector::Name(name)), Value::Object(map)) => map.get(name),
            (Segment::Selector(Selector::Index(i)), Value::Array(items)) => {
                let at = match usize::try_from(*i) {
                    Ok(at) => Some(at),
                    Err(_) => items.len().checked_sub(i.unsigned_abs() as usize),
                };
                at.and_then(|at| items.get(at))
            }
            (_, Value::Null) => None,
            _ => return Some(first_mismatch(segments, object).map_or(Ok(None), Err)),
        };
        match next {
            Some(next) => value = next,
            None => return Some(Ok(None)),
        }
    }
    Some(Ok(Some(value)))
}

/// Follows the path's leading members and items while each is one name or one index, to
/// tell a path that meets a value of the wrong type from one whose member is absent.
fn first_mismatch(segments: &[Segment], object: &Value) -> Option<FieldTypeMismatch> {
    let mut value = object;
    let mut path = String::from("$");
    for segment in segments {
        let Segment::Selector(selector) = segment else {
            return None;
        };
        let (next, wanted) = match (selector, value) {
            (_, Value::Null) => return None,
            (Selector::Name(name), Value::Object(map)) => {
                path.push_str(&format!("[{name:?}]"));
                (map.get(name)?, "")
            }
            (Selector::Name(_), _) => (value, "an object"),
            (Selector::Index(i), Value::Array(items)) => {
                path.push_str(&format!("[{i}]"));
                let at = if *i < 0 {
                    items.len().checked_sub(i.unsigned_abs() as usize)?
                } else {
                    usize::try_from(*i).ok()?
                };
                (items.get(at)?, "")
            }
            (Selector::Index(_), _) => (value, "a list"),
            // A wildcard, a slice or a filter on a scalar selects nothing, as in kubectl.
            _ => return None,
        };
        if !wanted.is_empty() {
            return Some(FieldTypeMismatch {
                path,
                found: type_name(next),
                wanted,
            });
        }
        value = next;
    }
    None
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Ends a dotted name in kubectl's dialect (besides the end of the text).
fn ends_name(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '.' | '[' | ']' | '(' | ')' | '=' | '!' | '<' | '>' | ',' | '&' | '|' | '}' | '{'
        )
}

/// The most segments (`.name`, `[…]`) a path may have, filters' included. The parser,
/// the evaluation and [`FieldPath::reach`] each recurse once a segment, so a path of
/// thousands (a hostile CRD's printer column, a typo'd config) would overflow the stack
/// and abort the process; real paths have a handful.
const MAX_SEGMENTS: usize = 64;

/// The deepest brackets and parentheses may nest (filters within filters), for the same
/// reason.
const MAX_NESTING: usize = 8;

/// Rewrites kubectl's dialect as RFC 9535, with the byte offset in `text` each byte of the
/// result comes from (so that a parse error points into the text as written). A path past
/// [`MAX_SEGMENTS`] or [`MAX_NESTING`] is an error at the character that crosses it.
fn translate(text: &str) -> Result<(String, Vec<usize>), JsonPathSyntaxError> {
    let error = |at: usize, message: &str| JsonPathSyntaxError {
        offset: text[..at].chars().count(),
        message: message.to_string(),
    };
    let trimmed_start = text.len() - text.trim_start().len();
    let mut body = text.trim();
    let mut start = trimmed_start;
    if body.is_empty() {
        return Err(error(trimmed_start, "empty path"));
    }
    if let Some(inner) = body.strip_prefix('{') {
        let Some(inner) = inner.strip_suffix('}') else {
            return Err(error(start + body.len(), "missing closing }"));
        };
        if let Some(at) = inner.find(['{', '}']) {
            return Err(error(
                start + 1 + at,
                "a field is one JSONPath expression, not a template",
            ));
        }
        start += 1;
        body = inner;
    }
    let mut out = String::with_capacity(body.len() + 8);
    let mut origins = Vec::with_capacity(body.len() + 8);
    let mut push = |out: &mut String, s: &str, from: usize| {
        out.push_str(s);
        origins.extend(std::iter::repeat_n(from, s.len()));
    };
    let mut chars = body.char_indices().peekable();
    match chars.peek() {
        Some((_, '$')) => {}
        Some((_, '.' | '[')) => push(&mut out, "$", start),
        Some(_) => push(&mut out, "$.", start),
        None => return Err(error(start, "empty path")),
    }
    let mut quote: Option<char> = None;
    let (mut segments, mut nesting) = (0, 0);
    while let Some((i, c)) = chars.next() {
        let at = start + i;
        if let Some(q) = quote {
            let mut buf = [0; 4];
            push(&mut out, c.encode_utf8(&mut buf), at);
            if c == '\\' {
                if let Some((j, escaped)) = chars.next() {
                    push(&mut out, escaped.encode_utf8(&mut buf), start + j);
                }
            } else if c == q {
                quote = None;
            }
            continue;
        }
        if matches!(c, '.' | '[') {
            segments += 1;
            if segments > MAX_SEGMENTS {
                return Err(error(
                    at,
                    &format!("more than {MAX_SEGMENTS} segments: a field path is a few"),
                ));
            }
        }
        match c {
            '[' | '(' => {
                nesting += 1;
                if nesting > MAX_NESTING {
                    return Err(error(
                        at,
                        &format!("brackets nested more than {MAX_NESTING} deep"),
                    ));
                }
            }
            ']' | ')' => nesting = nesting.saturating_sub(1),
            _ => {}
        }
        match c {
            '\'' | '"' => {
                quote = Some(c);
                push(&mut out, &c.to_string(), at);
            }
            '.' => {
                // `..` (descendants) and `.*` stay; a dotted name becomes `['name']`.
                if let Some((_, '.')) = chars.peek() {
                    chars.next();
                    push(&mut out, "..", at);
                    if !matches!(chars.peek(), Some((_, '[' | '*')) | None) {
                        let name = read_name(&mut chars);
                        push(&mut out, &bracketed(&name), at + 2);
                    }
                    continue;
                }
                match chars.peek() {
                    Some((_, '*')) | Some((_, '[')) | None => push(&mut out, ".", at),
                    Some(_) => {
                        let name = read_name(&mut chars);
                        if name.is_empty() {
                            push(&mut out, ".", at);
                        } else {
                            push(&mut out, &bracketed(&name), at);
                        }
                    }
                }
            }
            other => {
                let mut buf = [0; 4];
                push(&mut out, other.encode_utf8(&mut buf), at);
            }
        }
    }
    Ok((out, origins))
}

/// A dotted name up to its end; `\x` is a literal `x` (kubectl's `\.` in a label key).
fn read_name(chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>) -> String {
    let mut name = String::new();
    while let Some(&(_, c)) = chars.peek() {
        if c == '\\' {
            chars.next();
            if let Some((_, escaped)) = chars.next() {
                name.push(escaped);
            }
            continue;
        }
        if ends_name(c) {
            break;
        }
        name.push(c);
        chars.next();
    }
    name
}

/// `name` as an RFC 9535 name selector.
fn bracketed(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    out.push_str("['");
    for c in name.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push_str("']");
    out
}

/// A parse error of the translated text, placed in the text as written.
fn syntax_error(error: JsonPathError, text: &str, origins: &[usize]) -> JsonPathSyntaxError {
    let (at, message) = match &error {
        JsonPathError::PestError(pest) => {
            let at = match pest.location {
                pest::error::InputLocation::Pos(p) => p,
                pest::error::InputLocation::Span((p, _)) => p,
            };
            let message = pest.variant.message().into_owned();
            (origins.get(at).copied().unwrap_or(text.len()), message)
        }
        other => (text.len(), other.to_string()),
    };
    let at = at.min(text.len());
    JsonPathSyntaxError {
        offset: text[..floor_char_boundary(text, at)].chars().count(),
        message,
    }
}

fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn values(path: &str, object: &Value) -> Vec<String> {
        FieldPath::parse(path).unwrap().values(object).unwrap()
    }

    fn pod() -> Value {
        json!({
            "metadata": {"name": "p", "labels": {"app.kubernetes.io/name": "web", "tier-x": "fe"}},
            "spec": {"nodeName": "n1", "replicas": 3, "ratio": 0.5, "on": true,
                "containers": [{"image": "a:1"}, {"image": "b:2"}],
                "tiny": 0.00001, "big": 1234567.5, "small": 999999.5},
            "status": {"conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "Synced", "status": "False"}]}
        })
    }

    /// A path thousands of segments long, or nested deeper than any real one, is refused
    /// where it crosses the bound, rather than overflowing the stack when it is followed.
    #[test]
    fn a_path_past_the_bounds_is_an_error_where_it_crosses_them() {
        let long = ".a[*]".repeat(2000);
        let err = FieldPath::parse(&long).unwrap_err();
        assert_eq!(err.offset, 5 * 32, "{err}");
        assert!(err.message.contains("more than 64 segments"), "{err}");
        let fits = ".a[*]".repeat(32);
        let path = FieldPath::parse(&fits).unwrap();
        assert!(
            path.values(&serde_json::json!({"a": []}))
                .unwrap()
                .is_empty()
        );
        let nested = format!("{}@.x{}", ".a[?(".repeat(5), ")]".repeat(5));
        let err = FieldPath::parse(&nested).unwrap_err();
        assert!(err.message.contains("nested more than 8 deep"), "{err}");
    }

    #[test]
    fn kubectl_forms_of_a_path() {
        let pod = pod();
        for path in [
            ".spec.nodeName",
            "{.spec.nodeName}",
            "$.spec.nodeName",
            "spec.nodeName",
        ] {
            assert_eq!(values(path, &pod), ["n1"], "{path}");
        }
        assert_eq!(
            values(r#".status.conditions[?(@.type=="Ready")].status"#, &pod),
            ["True"]
        );
        assert_eq!(
            values(".status.conditions[?(@.type=='Synced')].status", &pod),
            ["False"]
        );
        assert_eq!(values(".spec.containers[*].image", &pod), ["a:1", "b:2"]);
        assert_eq!(values(".spec.containers[-1].image", &pod), ["b:2"]);
        assert_eq!(
            values(".metadata.labels['app.kubernetes.io/name']", &pod),
            ["web"]
        );
        assert_eq!(
            values(r".metadata.labels.app\.kubernetes\.io/name", &pod),
            ["web"]
        );
        assert_eq!(values(".metadata.labels.tier-x", &pod), ["fe"]);
        assert_eq!(values("..image", &pod), ["a:1", "b:2"]);
        assert!(values(".spec.absent", &pod).is_empty());
    }

    #[test]
    fn values_print_as_kubectl_prints_them() {
        let pod = pod();
        assert_eq!(values(".spec.replicas", &pod), ["3"]);
        assert_eq!(values(".spec.ratio", &pod), ["0.5"]);
        assert_eq!(values(".spec.tiny", &pod), ["1e-05"]);
        assert_eq!(values(".spec.big", &pod), ["1.2345675e+06"]);
        assert_eq!(values(".spec.small", &pod), ["999999.5"]);
        assert_eq!(values(".spec.on", &pod), ["true"]);
        assert_eq!(values(".spec.containers[0]", &pod), [r#"{"image":"a:1"}"#]);
        assert_eq!(
            go_sprint(&json!({"b": [1, "x"], "a": 2.5})),
            "map[a:2.5 b:[1 x]]"
        );
    }

    #[test]
    fn a_wrong_type_on_the_way_is_a_mismatch_and_absence_is_not() {
        let pod = pod();
        let err = FieldPath::parse(".spec.nodeName.first")
            .unwrap()
            .values(&pod)
            .unwrap_err();
        assert_eq!(err.found, "a string");
        assert_eq!(err.wanted, "an object");
        assert!(
            FieldPath::parse(".spec.replicas[0]")
                .unwrap()
                .values(&pod)
                .is_err()
        );
        assert!(
            FieldPath::parse(".spec.none.deeper")
                .unwrap()
                .values(&pod)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn members_and_items_followed_directly_select_what_the_general_evaluation_does() {
        let pod = pod();
        for path in [
            ".spec.nodeName",
            ".spec.containers[1].image",
            ".spec.containers[-2].image",
            ".spec.containers[5].image",
            ".spec.containers[-9].image",
            ".spec.absent.deeper",
            ".metadata.labels['app.kubernetes.io/name']",
            ".spec",
        ] {
            let parsed = FieldPath::parse(path).unwrap();
            let direct = follow_members(&parsed.query.segments, &pod)
                .expect("a path of members and items")
                .unwrap();
            let general: Vec<&Value> = js_path_process(&parsed.query, &pod)
                .unwrap()
                .into_iter()
                .map(|r| r.val)
                .collect();
            assert_eq!(direct.into_iter().collect::<Vec<_>>(), general, "{path}");
        }
        let parsed = FieldPath::parse(".spec.containers[*].image").unwrap();
        assert!(follow_members(&parsed.query.segments, &pod).is_none());
    }

    #[test]
    fn a_bad_path_says_where() {
        let err = |p: &str| FieldPath::parse(p).unwrap_err();
        assert_eq!(err(".spec[").offset, 6);
        let e = err(".status.conditions[?(@.type==)].status");
        assert!(e.offset >= 19 && e.offset <= 30, "{e:?}");
        assert_eq!(err("").message, "empty path");
        assert_eq!(err("{.a}{.b}").offset, 3);
        assert_eq!(err("{.a").message, "missing closing }");
    }
}
