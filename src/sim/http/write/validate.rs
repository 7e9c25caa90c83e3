//! The checks a real server makes before storing an object: the structural ones decoding
//! into typed objects makes (400), and per-kind validation (422).

use base64::Engine as _;
use serde_json::Value;

use crate::crd;
use crate::crd::schema::FieldError;
use crate::http::status::ApiError;
use crate::http::target::Target;
use crate::resources::Resource;

/// The structural checks decoding into typed objects does on the real server: metadata,
/// spec and status are objects, labels and annotations are maps of strings.
pub(super) fn check_shape(value: &Value) -> Result<(), ApiError> {
    let wrong = |field: &str, want: &str| {
        ApiError::bad_request(format!(
            "json: cannot unmarshal {} into Go struct field {field} of type {want}",
            json_type(field_value(value, field))
        ))
    };
    if !value.is_object() {
        return Err(ApiError::bad_request(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            json_type(value)
        )));
    }
    for field in ["metadata", "spec", "status"] {
        let v = &value[field];
        if !(v.is_null() || v.is_object()) {
            return Err(wrong(field, "object"));
        }
    }
    for field in ["labels", "annotations"] {
        let v = &value["metadata"][field];
        let ok = v.is_null()
            || v.as_object()
                .is_some_and(|m| m.values().all(|x| x.is_string()));
        if !ok {
            return Err(wrong(&format!("metadata.{field}"), "map[string]string"));
        }
    }
    Ok(())
}

fn field_value<'a>(value: &'a Value, path: &str) -> &'a Value {
    path.split('.').fold(value, |v, k| &v[k])
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

pub(super) fn check_kind(target: &Target, value: &Value) -> Result<(), ApiError> {
    let r = target.resource;
    if let Some(kind) = value["kind"].as_str().filter(|k| *k != r.kind()) {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({kind}) does not match the expected kind ({})",
            r.kind()
        )));
    }
    if let Some(av) = value["apiVersion"]
        .as_str()
        .filter(|v| *v != r.api_version())
    {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({av}) does not match the expected API version ({})",
            r.api_version()
        )));
    }
    Ok(())
}

/// DNS-1123 label (namespaces) or subdomain (everything else).
pub(super) fn validate_name(resource: Resource, name: &str) -> Result<(), ApiError> {
    let label = resource == Resource::Namespaces;
    let max = if label { 63 } else { 253 };
    let ok_char =
        |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || (!label && c == '.');
    let alnum = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if name.len() <= max
        && name.chars().all(ok_char)
        && alnum(name.chars().next())
        && alnum(name.chars().last())
    {
        return Ok(());
    }
    let what = if label {
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
    } else {
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
    };
    Err(ApiError::invalid(
        &qualified_kind(resource),
        name,
        "metadata.name",
        "FieldValueInvalid",
        &format!("\"{name}\": {what}"),
    ))
}

/// The per-kind validation the real server would fail with 422.
pub(super) fn validate(resource: Resource, name: &str, value: &Value) -> Result<(), ApiError> {
    validate_name(resource, name)?;
    let kind = qualified_kind(resource);
    let mut errors = Errors::default();
    errors.labels("metadata.labels", &value["metadata"]["labels"]);
    match resource {
        Resource::Pods => errors.pod_spec("spec", &value["spec"], None),
        Resource::Deployments
        | Resource::ReplicaSets
        | Resource::StatefulSets
        | Resource::DaemonSets => {
            errors.non_negative("spec.replicas", &value["spec"]["replicas"]);
            let template = &value["spec"]["template"];
            errors.labels(
                "spec.template.metadata.labels",
                &template["metadata"]["labels"],
            );
            errors.pod_spec("spec.template.spec", &template["spec"], Some(&["Always"]));
        }
        Resource::Jobs | Resource::CronJobs => {
            let template = match resource {
                Resource::Jobs => &value["spec"]["template"],
                _ => &value["spec"]["jobTemplate"]["spec"]["template"],
            };
            let path = match resource {
                Resource::Jobs => "spec.template.spec",
                _ => "spec.jobTemplate.spec.template.spec",
            };
            errors.pod_spec(path, &template["spec"], Some(&["OnFailure", "Never"]));
        }
        Resource::Services => errors.service_ports(&value["spec"]["ports"]),
        _ => {}
    }
    if !errors.0.is_empty() {
        return Err(ApiError::invalid_all(&kind, name, &errors.0));
    }
    let required = |field: &str| ApiError::invalid(&kind, name, field, "FieldValueRequired", "");
    match resource {
        Resource::Deployments
        | Resource::ReplicaSets
        | Resource::StatefulSets
        | Resource::DaemonSets => {
            let selector = &value["spec"]["selector"];
            if !selector.is_object() {
                return Err(required("spec.selector"));
            }
            let (match_labels, expressions) = selector_parts(selector);
            if match_labels.is_empty() && expressions.is_empty() {
                return Err(ApiError::invalid(
                    &kind,
                    name,
                    "spec.selector",
                    "FieldValueInvalid",
                    &format!(
                        "{}: empty selector is invalid for {}",
                        go_selector(selector),
                        resource.singular()
                    ),
                ));
            }
            let labels = &value["spec"]["template"]["metadata"]["labels"];
            if !selector_matches(selector, labels) {
                return Err(ApiError::invalid(
                    &kind,
                    name,
                    "spec.template.metadata.labels",
                    "FieldValueInvalid",
                    &format!(
                        "{}: `selector` does not match template `labels`",
                        go_string_map(labels)
                    ),
                ));
            }
        }
        Resource::CronJobs => {
            let schedule = value["spec"]["schedule"].as_str().unwrap_or("");
            if schedule.is_empty() {
                return Err(required("spec.schedule"));
            }
            if let Err(e) = crate::controllers::cronjob::parse_schedule(schedule) {
                return Err(ApiError::invalid(
                    &kind,
                    name,
                    "spec.schedule",
                    "FieldValueInvalid",
                    &format!("\"{schedule}\": {e}"),
                ));
            }
        }
        Resource::Secrets => {
            let not_base64 = value["data"].as_object().and_then(|data| {
                data.iter().find(|(_, v)| {
                    v.as_str().is_none_or(|s| {
                        base64::engine::general_purpose::STANDARD.decode(s).is_err()
                    })
                })
            });
            if let Some((key, _)) = not_base64 {
                return Err(ApiError::invalid(
                    &kind,
                    name,
                    &format!("data[{key}]"),
                    "FieldValueInvalid",
                    "illegal base64 data",
                ));
            }
        }
        Resource::CustomResourceDefinitions => {
            let errors = crd::validate_definition(name, value);
            if !errors.is_empty() {
                return Err(ApiError::invalid_all(
                    "CustomResourceDefinition.apiextensions.k8s.io",
                    name,
                    &errors,
                ));
            }
        }
        custom => {
            if let Some(schema) = custom.descriptor().custom {
                // The server defaults before it validates.
                let mut defaulted = value.clone();
                crd::schema::apply_defaults(&mut defaulted, &schema.schema);
                let mut errors = Vec::new();
                crd::schema::validate(&defaulted, &schema.schema, "", &mut errors);
                if !errors.is_empty() {
                    let kind = format!("{}.{}", custom.kind(), custom.group());
                    return Err(ApiError::invalid_all(&kind, name, &errors));
                }
            }
        }
    }
    Ok(())
}

/// The kind as the server names it in a 422: `Deployment.apps`, or `Pod` in the core group.
fn qualified_kind(resource: Resource) -> String {
    match resource.group() {
        "" => resource.kind().to_string(),
        group => format!("{}.{group}", resource.kind()),
    }
}

/// The checks of an update that depend on the stored object: a workload's selector cannot
/// change (its pods would be orphaned), which the real server refuses.
pub(super) fn validate_update(
    resource: Resource,
    name: &str,
    current: &Value,
    value: &Value,
) -> Result<(), ApiError> {
    if resource == Resource::Pods && !pod_update_allowed(&current["spec"], &value["spec"]) {
        return Err(ApiError::invalid(
            "Pod",
            name,
            "spec",
            "FieldValueForbidden",
            POD_UPDATES,
        ));
    }
    let immutable = matches!(
        resource,
        Resource::Deployments
            | Resource::ReplicaSets
            | Resource::StatefulSets
            | Resource::DaemonSets
            | Resource::Jobs
    );
    let (before, after) = (&current["spec"]["selector"], &value["spec"]["selector"]);
    if !immutable || selector_parts(before) == selector_parts(after) {
        return Ok(());
    }
    let kind = qualified_kind(resource);
    // A StatefulSet's spec is immutable but for a few fields, and the server says so.
    if resource == Resource::StatefulSets {
        return Err(ApiError::invalid(
            &kind,
            name,
            "spec",
            "FieldValueForbidden",
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ));
    }
    Err(ApiError::invalid(
        &kind,
        name,
        "spec.selector",
        "FieldValueInvalid",
        &format!("{}: field is immutable", go_selector(after)),
    ))
}

/// Why a pod's spec change is refused (the real message goes on with a diff of the specs).
const POD_UPDATES: &str = "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

/// Whether a pod's spec changed only where a pod may: images, the active deadline,
/// tolerations added, scheduling gates removed, and a negative grace period set to 1.
fn pod_update_allowed(before: &Value, after: &Value) -> bool {
    if before == after {
        return true;
    }
    let listed = |spec: &Value, field: &str| spec[field].as_array().cloned().unwrap_or_default();
    let (old, new) = (listed(before, "tolerations"), listed(after, "tolerations"));
    if !old.iter().all(|t| new.contains(t)) {
        return false;
    }
    let (old, new) = (
        listed(before, "schedulingGates"),
        listed(after, "schedulingGates"),
    );
    if !new.iter().all(|g| old.contains(g)) {
        return false;
    }
    let grace = |spec: &Value| spec["terminationGracePeriodSeconds"].as_i64();
    if grace(before) != grace(after)
        && !(grace(before).is_some_and(|g| g < 0) && grace(after) == Some(1))
    {
        return false;
    }
    let mask = |spec: &Value| {
        let mut masked = spec.clone();
        if let Some(map) = masked.as_object_mut() {
            for field in [
                "activeDeadlineSeconds",
                "tolerations",
                "schedulingGates",
                "terminationGracePeriodSeconds",
            ] {
                map.remove(field);
            }
        }
        for list in ["containers", "initContainers"] {
            if let Some(containers) = masked[list].as_array_mut() {
                for container in containers.iter_mut().filter_map(Value::as_object_mut) {
                    container.remove("image");
                }
            }
        }
        masked
    };
    mask(before) == mask(after)
}

/// A label selector's matchLabels and matchExpressions, absent ones as empty.
fn selector_parts(selector: &Value) -> (serde_json::Map<String, Value>, Vec<Value>) {
    (
        selector["matchLabels"]
            .as_object()
            .cloned()
            .unwrap_or_default(),
        selector["matchExpressions"]
            .as_array()
            .cloned()
            .unwrap_or_default(),
    )
}

/// Whether `labels` satisfy every term of `selector` (its labels and expressions).
fn selector_matches(selector: &Value, labels: &Value) -> bool {
    let (match_labels, expressions) = selector_parts(selector);
    match_labels.iter().all(|(k, v)| &labels[k] == v)
        && expressions.iter().all(|e| {
            let key = e["key"].as_str().unwrap_or("");
            let value = &labels[key];
            let listed = e["values"].as_array().is_some_and(|vs| vs.contains(value));
            match e["operator"].as_str() {
                Some("In") => listed,
                Some("NotIn") => !listed,
                Some("Exists") => !value.is_null(),
                Some("DoesNotExist") => value.is_null(),
                _ => false,
            }
        })
}

/// A label selector as Go's `%#v` prints a `v1.LabelSelector`, as the server's messages
/// quote it.
fn go_selector(selector: &Value) -> String {
    let labels = match &selector["matchLabels"] {
        Value::Null => "map[string]string(nil)".to_string(),
        labels => go_string_map(labels),
    };
    let expressions = match selector["matchExpressions"].as_array() {
        None => "[]v1.LabelSelectorRequirement(nil)".to_string(),
        Some(list) => {
            let each: Vec<String> = list
                .iter()
                .map(|e| {
                    let values = match e["values"].as_array() {
                        None => "[]string(nil)".to_string(),
                        Some(vs) => {
                            let quoted: Vec<String> = vs
                                .iter()
                                .map(|v| format!("{:?}", v.as_str().unwrap_or("")))
                                .collect();
                            format!("[]string{{{}}}", quoted.join(", "))
                        }
                    };
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{:?}, Operator:{:?}, Values:{values}}}",
                        e["key"].as_str().unwrap_or(""),
                        e["operator"].as_str().unwrap_or("")
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", each.join(", "))
        }
    };
    format!("v1.LabelSelector{{MatchLabels:{labels}, MatchExpressions:{expressions}}}")
}

/// A label map as Go's `%#v` prints a `map[string]string`, keys sorted, as the server's
/// messages quote it.
fn go_string_map(labels: &Value) -> String {
    let Some(map) = labels.as_object() else {
        return "map[string]string(nil)".to_string();
    };
    let mut pairs: Vec<(&String, &Value)> = map.iter().collect();
    pairs.sort_by_key(|(k, _)| *k);
    let inner: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k:?}:{:?}", v.as_str().unwrap_or("")))
        .collect();
    format!("map[string]string{{{}}}", inner.join(", "))
}

/// Field errors gathered over an object, reported together as the real server's
/// `field.ErrorList` is.
#[derive(Default)]
struct Errors(Vec<FieldError>);

/// What `IsValidPortNum` says of a port out of range.
const PORT_RANGE: &str = "must be between 1 and 65535, inclusive";

const QUALIFIED_NAME: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

const LABEL_VALUE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

impl Errors {
    fn push(&mut self, field: String, reason: &'static str, short: &'static str, detail: String) {
        self.0.push(FieldError {
            field,
            reason,
            short,
            detail,
        });
    }

    fn required(&mut self, field: String) {
        self.push(field, "FieldValueRequired", "Required value", String::new());
    }

    fn invalid(&mut self, field: String, value: &Value, detail: &str) {
        let shown = match value {
            Value::String(s) => format!("{s:?}"),
            other => other.to_string(),
        };
        self.push(
            field,
            "FieldValueInvalid",
            "Invalid value",
            format!("{shown}: {detail}"),
        );
    }

    /// `spec.replicas` and the like: a count cannot be negative.
    fn non_negative(&mut self, field: &str, value: &Value) {
        if value.as_i64().is_some_and(|n| n < 0) {
            self.invalid(
                field.to_string(),
                value,
                "must be greater than or equal to 0",
            );
        }
    }

    /// Label keys are qualified names and values at most 63 of a restricted alphabet, as
    /// `ValidateLabels` checks them.
    fn labels(&mut self, field: &str, labels: &Value) {
        let Some(labels) = labels.as_object() else {
            return;
        };
        for (key, value) in labels {
            for message in qualified_name_problems(key) {
                self.invalid(field.to_string(), &Value::String(key.clone()), message);
            }
            let text = value.as_str().unwrap_or("");
            if text.len() > 63 {
                self.invalid(
                    field.to_string(),
                    value,
                    "must be no more than 63 characters",
                );
            }
            if !text.is_empty() && !name_part_ok(text) {
                self.invalid(field.to_string(), value, LABEL_VALUE);
            }
        }
    }

    /// A pod spec (of a pod, or of a template at `path`): containers with names, images and
    /// ports in range, and a restart policy the owner supports (`allowed`, or any).
    fn pod_spec(&mut self, path: &str, spec: &Value, allowed: Option<&[&str]>) {
        if spec["containers"].as_array().is_none_or(Vec::is_empty) {
            self.required(format!("{path}.containers"));
        }
        for list in ["containers", "initContainers"] {
            let Some(containers) = spec[list].as_array() else {
                continue;
            };
            for (i, container) in containers.iter().enumerate() {
                let at = format!("{path}.{list}[{i}]");
                for field in ["name", "image"] {
                    if container[field].as_str().is_none_or(str::is_empty) {
                        self.required(format!("{at}.{field}"));
                    }
                }
                let Some(ports) = container["ports"].as_array() else {
                    continue;
                };
                for (j, port) in ports.iter().enumerate() {
                    let container_port = &port["containerPort"];
                    if container_port.as_i64().unwrap_or(0) == 0 {
                        self.required(format!("{at}.ports[{j}].containerPort"));
                    } else {
                        self.port(format!("{at}.ports[{j}].containerPort"), container_port);
                    }
                    if port["hostPort"].as_i64().is_some_and(|p| p != 0) {
                        self.port(format!("{at}.ports[{j}].hostPort"), &port["hostPort"]);
                    }
                }
            }
        }
        // An absent policy is defaulted to Always before validation.
        let policy = spec["restartPolicy"].as_str().unwrap_or("Always");
        let supported = allowed.unwrap_or(&["Always", "OnFailure", "Never"]);
        if !supported.contains(&policy) {
            let listed: Vec<String> = supported.iter().map(|p| format!("{p:?}")).collect();
            self.push(
                format!("{path}.restartPolicy"),
                "FieldValueNotSupported",
                "Unsupported value",
                format!("{policy:?}: supported values: {}", listed.join(", ")),
            );
        }
    }

    fn port(&mut self, field: String, value: &Value) {
        if value.as_i64().is_none_or(|p| !(1..=65535).contains(&p)) {
            self.invalid(field, value, PORT_RANGE);
        }
    }

    /// A Service's ports and their numeric target ports are ports in range.
    fn service_ports(&mut self, ports: &Value) {
        let Some(ports) = ports.as_array() else {
            return;
        };
        for (i, port) in ports.iter().enumerate() {
            self.port(format!("spec.ports[{i}].port"), &port["port"]);
            if port["targetPort"].is_number() {
                self.port(format!("spec.ports[{i}].targetPort"), &port["targetPort"]);
            }
        }
    }
}

/// A label value or a qualified name's name part: alphanumerics, `-`, `_` and `.`, starting
/// and ending with an alphanumeric.
fn name_part_ok(text: &str) -> bool {
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    edge(text.chars().next())
        && edge(text.chars().last())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// What `IsQualifiedName` says of a label key: an optional DNS subdomain prefix and `/`,
/// then a name part of at most 63 characters.
fn qualified_name_problems(key: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    let (prefix, name) = match key.split('/').collect::<Vec<_>>().as_slice() {
        [name] => (None, *name),
        [prefix, name] => (Some(*prefix), *name),
        _ => return vec![QUALIFIED_NAME_WHOLE],
    };
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            out.push("prefix part must be non-empty");
        } else if !subdomain_ok(prefix) {
            out.push(PREFIX_SUBDOMAIN);
        }
    }
    if name.is_empty() {
        out.push("name part must be non-empty");
    } else if name.len() > 63 {
        out.push("name part must be no more than 63 characters");
    }
    if !name.is_empty() && !name_part_ok(name) {
        out.push(QUALIFIED_NAME);
    }
    out
}

const QUALIFIED_NAME_WHOLE: &str = "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";

const PREFIX_SUBDOMAIN: &str = "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// A lowercase RFC 1123 subdomain of at most 253 characters.
fn subdomain_ok(text: &str) -> bool {
    text.len() <= 253
        && text.split('.').all(|label| {
            let edge =
                |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
            edge(label.chars().next())
                && edge(label.chars().last())
                && label
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        })
}

/// A JSON value as Go's `%+v` prints the map it decodes to (`map[a:1 b:[x y]]`, keys
/// sorted), as the real server shows a strategic merge patch in its errors.
pub(super) fn go_print(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".into(),
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let each: Vec<String> = items.iter().map(go_print).collect();
            format!("[{}]", each.join(" "))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let each: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", go_print(&map[k])))
                .collect();
            format!("map[{}]", each.join(" "))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_keys_are_qualified_names() {
        assert!(qualified_name_problems("app.kubernetes.io/name").is_empty());
        assert!(qualified_name_problems("A_b.c").is_empty());
        assert_eq!(qualified_name_problems("Example.com/x"), [PREFIX_SUBDOMAIN]);
        assert_eq!(
            qualified_name_problems("/x"),
            ["prefix part must be non-empty"]
        );
        assert_eq!(qualified_name_problems("a/b/c"), [QUALIFIED_NAME_WHOLE]);
        assert_eq!(
            qualified_name_problems(&"x".repeat(64)),
            ["name part must be no more than 63 characters"]
        );
        assert_eq!(qualified_name_problems("x-"), [QUALIFIED_NAME]);
    }

    #[test]
    fn pods_may_change_images_and_add_tolerations_only() {
        let pod = serde_json::json!({"containers": [{"name": "a", "image": "i:1"}],
            "tolerations": [{"key": "k"}]});
        let mut next = pod.clone();
        next["containers"][0]["image"] = "i:2".into();
        next["tolerations"] = serde_json::json!([{"key": "k"}, {"key": "l"}]);
        assert!(pod_update_allowed(&pod, &next));
        next["tolerations"] = serde_json::json!([]);
        assert!(!pod_update_allowed(&pod, &next));
        let mut moved = pod.clone();
        moved["nodeName"] = "node-1".into();
        assert!(!pod_update_allowed(&pod, &moved));
    }

    #[test]
    fn names_are_validated() {
        assert!(validate_name(Resource::Pods, "web-1.a").is_ok());
        assert!(validate_name(Resource::Namespaces, "web.a").is_err());
        assert_eq!(
            validate_name(Resource::Pods, "Web")
                .unwrap_err()
                .to_status()["code"],
            422
        );
    }
}
