//! Label and field selectors with the real server's grammar and its error messages, so a
//! client sees the same 400s here as against a cluster.

use serde_json::Value;

use super::object::StoredObject;
use super::resources::Resource;

/// Why a selector was refused; the text becomes the 400 Status message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    #[error("unable to parse requirement: {0}")]
    Label(String),
    #[error("field label not supported: {0}")]
    UnsupportedField(String),
    #[error("invalid selector: '{0}'; can't understand '{1}'")]
    Field(String, String),
}

/// One label requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

/// A parsed label selector; requirements are ANDed. Empty matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector(Vec<Requirement>);

impl LabelSelector {
    /// Parses `a=b,c!=d,e in (x,y),f notin (z),g,!h`.
    pub fn parse(text: &str) -> Result<Self, SelectorError> {
        let mut requirements = Vec::new();
        for part in split_top_level(text) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            requirements.push(parse_requirement(part)?);
        }
        Ok(Self(requirements))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn matches(&self, labels: &[(Box<str>, Box<str>)]) -> bool {
        let get = |key: &str| labels.iter().find(|(k, _)| &**k == key).map(|(_, v)| &**v);
        self.0.iter().all(|r| match r {
            Requirement::Equals(k, v) => get(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|x| vs.iter().all(|v| v != x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::DoesNotExist(k) => get(k).is_none(),
        })
    }
}

/// Splits on commas that are not inside `( )`.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

fn parse_requirement(part: &str) -> Result<Requirement, SelectorError> {
    let bad = || SelectorError::Label(part.to_string());
    if let Some(key) = part.strip_prefix('!') {
        let key = key.trim();
        validate_key(key).map_err(|_| bad())?;
        return Ok(Requirement::DoesNotExist(key.to_string()));
    }
    if let Some(open) = part.find('(') {
        let close = part.rfind(')').ok_or_else(bad)?;
        if close != part.len() - 1 || close < open {
            return Err(bad());
        }
        let head: Vec<&str> = part[..open].split_whitespace().collect();
        let [key, op] = head.as_slice() else {
            return Err(bad());
        };
        validate_key(key).map_err(|_| bad())?;
        let mut values = Vec::new();
        for v in part[open + 1..close].split(',') {
            let v = v.trim();
            validate_value(v).map_err(|_| bad())?;
            values.push(v.to_string());
        }
        return match *op {
            "in" => Ok(Requirement::In(key.to_string(), values)),
            "notin" => Ok(Requirement::NotIn(key.to_string(), values)),
            _ => Err(bad()),
        };
    }
    let (key, value, negated) = if let Some((k, v)) = part.split_once("!=") {
        (k, v, true)
    } else if let Some((k, v)) = part.split_once("==") {
        (k, v, false)
    } else if let Some((k, v)) = part.split_once('=') {
        (k, v, false)
    } else {
        validate_key(part).map_err(|_| bad())?;
        return Ok(Requirement::Exists(part.to_string()));
    };
    let (key, value) = (key.trim(), value.trim());
    validate_key(key).map_err(|_| bad())?;
    validate_value(value).map_err(|_| bad())?;
    Ok(if negated {
        Requirement::NotEquals(key.to_string(), value.to_string())
    } else {
        Requirement::Equals(key.to_string(), value.to_string())
    })
}

/// A qualified name: optional DNS-subdomain prefix and `/`, then a name of at most 63 chars.
fn validate_key(key: &str) -> Result<(), ()> {
    let name = match key.rsplit_once('/') {
        Some((prefix, name)) => {
            if prefix.is_empty()
                || prefix.len() > 253
                || !prefix
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
            {
                return Err(());
            }
            name
        }
        None => key,
    };
    if name.is_empty() {
        return Err(());
    }
    validate_value(name)
}

/// A label value: at most 63 chars of alphanumerics, `-`, `_`, `.`, alphanumeric at both ends.
fn validate_value(value: &str) -> Result<(), ()> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.';
    let edge = |c: Option<char>| c.is_none_or(|c| c.is_ascii_alphanumeric());
    if value.len() > 63
        || !value.chars().all(ok_char)
        || !edge(value.chars().next())
        || !edge(value.chars().last())
    {
        return Err(());
    }
    Ok(())
}

/// A field a selector may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Name,
    Namespace,
    NodeName,
    Phase,
    PodIp,
    /// Read from the object's JSON (the rarely selected ones, not kept beside each object):
    /// the path, and how a missing value reads (`false` for booleans, as the real server's
    /// field sets have it).
    Path(&'static [&'static str], &'static str),
}

/// The field selectors beyond name and namespace that kube-apiserver supports for
/// `resource`, as its descriptor lists them.
fn path_field(resource: Resource, field: &str) -> Option<Field> {
    resource
        .descriptor()
        .fields
        .iter()
        .find(|f| f.label == field)
        .map(|f| Field::Path(f.path, f.missing))
}

/// A parsed field selector: `field=value` / `field==value` / `field!=value`, ANDed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector(Vec<(Field, bool, String)>);

impl FieldSelector {
    /// Parses against the fields `resource` supports, as the real server's field label
    /// conversion functions do.
    pub fn parse(resource: Resource, text: &str) -> Result<Self, SelectorError> {
        let mut terms = Vec::new();
        for part in text.split(',') {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let (field, value, equal) = if let Some((f, v)) = part.split_once("!=") {
                (f, v, false)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, v, true)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, v, true)
            } else {
                return Err(SelectorError::Field(text.to_string(), part.to_string()));
            };
            let field = match (field.trim(), resource) {
                ("metadata.name", _) => Field::Name,
                ("metadata.namespace", _) => Field::Namespace,
                ("spec.nodeName", Resource::Pods) => Field::NodeName,
                ("status.phase", Resource::Pods) => Field::Phase,
                ("status.podIP", Resource::Pods) => Field::PodIp,
                (other, resource) => path_field(resource, other)
                    .ok_or_else(|| SelectorError::UnsupportedField(other.to_string()))?,
            };
            terms.push((field, equal, value.trim().to_string()));
        }
        Ok(Self(terms))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn matches(&self, namespace: &str, name: &str, obj: &StoredObject) -> bool {
        let mut decoded = None;
        self.0.iter().all(|(field, equal, value)| {
            let from_json;
            let actual = match field {
                Field::Name => name,
                Field::Namespace => namespace,
                Field::NodeName => obj.fields.node_name.as_deref().unwrap_or(""),
                Field::Phase => obj.fields.phase.as_deref().unwrap_or(""),
                Field::PodIp => obj.fields.pod_ip.as_deref().unwrap_or(""),
                Field::Path(path, missing) => {
                    let object = decoded.get_or_insert_with(|| obj.decode().unwrap_or_default());
                    from_json = match path.iter().fold(&*object, |v, k| &v[*k]) {
                        serde_json::Value::String(s) => s.clone(),
                        serde_json::Value::Bool(b) => b.to_string(),
                        serde_json::Value::Null => (*missing).to_string(),
                        other => other.to_string(),
                    };
                    &from_json
                }
            };
            (actual == value) == *equal
        })
    }
}

/// Whether `labels` satisfy a LabelSelector's `matchLabels` and `matchExpressions`; an empty
/// one selects nothing, as a controller's selector may not be empty.
pub(crate) fn selects(selector: &Value, labels: &[(Box<str>, Box<str>)]) -> bool {
    let get = |key: &str| labels.iter().find(|(k, _)| &**k == key).map(|(_, v)| &**v);
    let match_labels = selector["matchLabels"].as_object();
    let expressions = selector["matchExpressions"].as_array();
    if match_labels.is_none_or(|m| m.is_empty()) && expressions.is_none_or(|e| e.is_empty()) {
        return false;
    }
    let labels_match = match_labels
        .into_iter()
        .flatten()
        .all(|(k, v)| v.as_str().is_some_and(|v| get(k) == Some(v)));
    let expressions_match = expressions.into_iter().flatten().all(|e| {
        let key = e["key"].as_str().unwrap_or("");
        let values: Vec<&str> = e["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        match e["operator"].as_str() {
            Some("In") => get(key).is_some_and(|v| values.contains(&v)),
            Some("NotIn") => get(key).is_none_or(|v| !values.contains(&v)),
            Some("Exists") => get(key).is_some(),
            Some("DoesNotExist") => get(key).is_none(),
            _ => false,
        }
    });
    labels_match && expressions_match
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Vec<(Box<str>, Box<str>)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    #[test]
    fn label_operators() {
        let l = labels(&[("app", "web"), ("tier", "frontend")]);
        for (sel, expected) in [
            ("", true),
            ("app=web", true),
            ("app==web", true),
            ("app!=web", false),
            ("app!=db", true),
            ("app in (web, db)", true),
            ("app notin (web,db)", false),
            ("missing notin (x)", true),
            ("tier", true),
            ("!tier", false),
            ("!team", true),
            ("app=web,tier=backend", false),
            ("app in (web),tier in (frontend,backend),!team", true),
        ] {
            assert_eq!(
                LabelSelector::parse(sel).unwrap().matches(&l),
                expected,
                "{sel}"
            );
        }
    }

    #[test]
    fn invalid_label_selectors_are_refused() {
        for sel in [
            "app in web",
            "app=(x",
            "a b=c",
            "app=-x",
            "=x",
            "app in (a b)",
        ] {
            assert!(LabelSelector::parse(sel).is_err(), "{sel}");
        }
    }

    #[test]
    fn field_selectors_follow_the_resource() {
        assert!(
            FieldSelector::parse(Resource::Pods, "spec.nodeName=n1,status.phase!=Running").is_ok()
        );
        assert_eq!(
            FieldSelector::parse(Resource::Nodes, "spec.nodeName=n1"),
            Err(SelectorError::UnsupportedField("spec.nodeName".into()))
        );
        assert!(FieldSelector::parse(Resource::Pods, "nonsense").is_err());
        assert!(FieldSelector::parse(Resource::Secrets, "spec.restartPolicy=x").is_err());
        let secret = StoredObject::encode(&serde_json::json!({
            "metadata": {"name": "s", "resourceVersion": "1"}, "type": "kubernetes.io/tls"
        }))
        .unwrap();
        let tls = FieldSelector::parse(Resource::Secrets, "type=kubernetes.io/tls").unwrap();
        assert!(tls.matches("ns", "s", &secret));
        let node = StoredObject::encode(&serde_json::json!({
            "metadata": {"name": "n", "resourceVersion": "1"}, "spec": {}
        }))
        .unwrap();
        let schedulable =
            FieldSelector::parse(Resource::Nodes, "spec.unschedulable=false").unwrap();
        assert!(schedulable.matches("", "n", &node));
        let cordoned = FieldSelector::parse(Resource::Nodes, "spec.unschedulable==true").unwrap();
        assert!(!cordoned.matches("", "n", &node));
    }
}
