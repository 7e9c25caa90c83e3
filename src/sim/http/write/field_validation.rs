//! `fieldValidation` as kube-apiserver applies it: strict decoding finds the fields a body
//! repeats and those its kind does not declare; `Strict` refuses the write, `Warn` (what a
//! server takes when a client asks nothing, since 1.23) writes it with a `Warning` header
//! for each, `Ignore` says nothing. Whatever the directive, the last of repeated fields wins
//! and unknown fields are dropped, as decoding into the Go types does.

use std::collections::HashSet;
use std::marker::PhantomData;

use axum::http::header::WARNING;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::Response;
use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_saphyr::{DuplicateKeyPolicy, Options, Spanned};

use crate::crd;
use crate::http::params::Params;
use crate::http::status::ApiError;
use crate::http::target::Target;
use crate::patch::PatchType;
use crate::patch::fieldset;

use super::media_type::media_type;
use super::proto;

/// What a write asks of strict decoding (`fieldValidation`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum FieldValidation {
    Ignore,
    #[default]
    Warn,
    Strict,
}

impl FieldValidation {
    /// The query's directive; `options_kind` (CreateOptions...) names the 422 for a value
    /// the server does not know, as `ValidateFieldValidation` words it.
    pub fn parse(params: &Params, options_kind: &str) -> Result<Self, ApiError> {
        match params.get("fieldValidation").unwrap_or("") {
            "" | "Warn" => Ok(Self::Warn),
            "Strict" => Ok(Self::Strict),
            "Ignore" => Ok(Self::Ignore),
            other => Err(ApiError::invalid(
                &format!("{options_kind}.meta.k8s.io"),
                "",
                "fieldValidation",
                "FieldValueNotSupported",
                &format!("{other:?}: supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""),
            )),
        }
    }

    /// What a create or update makes of its body's strict errors: Strict refuses it (400,
    /// the decoder's words), Warn returns a warning each, Ignore none.
    pub fn on_decode(self, target: &Target, errors: StrictErrors) -> Result<Vec<String>, ApiError> {
        self.judge(errors, |message| {
            let kind = target.resource.kind();
            ApiError::bad_request(format!(
                "{kind} in version \"{}\" cannot be handled as a {kind}: {message}",
                target.resource.version()
            ))
        })
    }

    /// What a JSON, merge or strategic merge patch makes of its strict errors: Strict refuses
    /// it with a 422 on the field `patch`, whose value (`shown`) is the patched object for a
    /// merge or JSON patch and the patch itself for a strategic one.
    pub fn on_patch(
        self,
        errors: StrictErrors,
        shown: impl FnOnce() -> String,
    ) -> Result<Vec<String>, ApiError> {
        self.judge(errors, |message| {
            ApiError::invalid(
                "",
                "",
                "patch",
                "FieldValueInvalid",
                &format!("{:?}: {message}", shown()),
            )
        })
    }

    /// What server-side apply makes of the keys its configuration repeats (`repeated`, in
    /// go-yaml's words): it decodes the configuration strictly once applied, and under
    /// Strict refuses it with go-yaml's whole error.
    pub fn on_apply(self, repeated: Vec<String>) -> Result<Vec<String>, ApiError> {
        match self {
            Self::Strict if !repeated.is_empty() => Err(ApiError::bad_request(format!(
                "error strict decoding YAML: error converting YAML to JSON: {}",
                yaml_error(&repeated)
            ))),
            Self::Warn => Ok(repeated),
            Self::Strict | Self::Ignore => Ok(Vec::new()),
        }
    }

    fn judge(
        self,
        errors: StrictErrors,
        refuse: impl FnOnce(String) -> ApiError,
    ) -> Result<Vec<String>, ApiError> {
        if errors.is_empty() {
            return Ok(Vec::new());
        }
        match self {
            Self::Strict => Err(refuse(errors.message())),
            Self::Warn => Ok(errors.warnings()),
            Self::Ignore => Ok(Vec::new()),
        }
    }
}

/// What strict decoding found in a body, in the two forms the server words them.
#[derive(Debug, Default)]
pub(super) struct StrictErrors {
    /// Keys a YAML body repeats, as go-yaml says them: `line 8: key "a" already set in map`.
    yaml: Vec<String>,
    /// What the JSON decoder says: `duplicate field "data.a"`, `unknown field "spec.foo"`.
    fields: Vec<String>,
}

impl StrictErrors {
    fn is_empty(&self) -> bool {
        self.yaml.is_empty() && self.fields.is_empty()
    }

    /// `strict decoding error: ` and each error, go-yaml's as one multi-line error.
    fn message(&self) -> String {
        let yaml = (!self.yaml.is_empty()).then(|| yaml_error(&self.yaml));
        let all: Vec<String> = yaml.into_iter().chain(self.fields.clone()).collect();
        format!("strict decoding error: {}", all.join(", "))
    }

    /// One warning for each error: the server splits go-yaml's error into its lines.
    fn warnings(self) -> Vec<String> {
        self.yaml.into_iter().chain(self.fields).collect()
    }

    /// Adds the fields the decoded object held that its kind does not declare.
    pub fn add_unknown(&mut self, unknown: Vec<String>) {
        self.fields
            .extend(unknown.iter().map(|f| format!("unknown field \"{f}\"")));
    }
}

/// go-yaml's error for repeated keys, one line each.
fn yaml_error(repeated: &[String]) -> String {
    format!("yaml: unmarshal errors:\n  {}", repeated.join("\n  "))
}

/// The strict errors of an object body (a create's or an update's) and the object as the
/// server keeps it: repeated keys by their path (JSON) or line (YAML), and the fields the
/// kind does not declare, which are dropped from `value`. Protobuf repeats nothing.
pub(super) fn object_body(
    target: &Target,
    headers: &HeaderMap,
    raw: &[u8],
    value: &mut Value,
) -> StrictErrors {
    let mut errors = StrictErrors::default();
    match media_type(headers).as_str() {
        "application/json" => errors.fields = duplicate_fields(raw, "duplicate field"),
        "application/yaml" => errors.yaml = repeated_yaml_keys(raw),
        _ => {}
    }
    errors.add_unknown(drop_unknown(target, value));
    errors
}

/// The repeated fields of a JSON, merge or strategic merge patch (the patch is decoded
/// strictly before it is applied; a JSON patch's operations say so).
pub(super) fn patch_body(kind: PatchType, raw: &[u8]) -> StrictErrors {
    let fields = match kind {
        PatchType::Json => duplicate_fields(raw, "json patch duplicate field"),
        PatchType::Merge | PatchType::Strategic => duplicate_fields(raw, "duplicate field"),
        PatchType::Apply => Vec::new(),
    };
    StrictErrors {
        yaml: Vec::new(),
        fields,
    }
}

/// Drops the fields of `value` its kind does not declare (a custom resource's schema, or a
/// built-in kind's Go type) and returns them as paths, `spec.template.spec.containers[0].foo`.
pub(super) fn drop_unknown(target: &Target, value: &mut Value) -> Vec<String> {
    match target.resource.descriptor().custom {
        Some(custom) => crd::schema::prune(value, &custom.schema, ""),
        None => {
            let kind = target.resource.kind();
            let unknown = proto::unknown_fields(kind, value);
            if !unknown.is_empty() {
                proto::prune_unknown(kind, value);
            }
            unknown
        }
    }
}

/// Server-side apply types its configuration against the kind's schema whatever the
/// directive, and a field the schema does not declare fails it: a 500 (the field manager's
/// error is not a Status) naming each field as structured-merge-diff paths it.
pub(super) fn typed_apply_configuration(target: &Target, config: &Value) -> Result<(), ApiError> {
    let mut known = config.clone();
    if drop_unknown(target, &mut known).is_empty() {
        return Ok(());
    }
    // Where an unknown field is a whole object, the schema fails at the field itself.
    let mut fields: Vec<String> = fieldset::leaves(config)
        .difference(&fieldset::leaves(&known))
        .filter_map(|leaf| {
            (1..=leaf.len())
                .map(|n| &leaf[..n])
                .find(|prefix| fieldset::value_at(&known, prefix).is_none())
                .map(fieldset::display)
        })
        .collect();
    fields.dedup();
    let each: Vec<String> = fields
        .iter()
        .map(|f| format!("{f}: field not declared in schema"))
        .collect();
    let said = match each.as_slice() {
        [one] => one.clone(),
        many => format!("errors:\n  {}", many.join("\n  ")),
    };
    let r = target.resource;
    let group_version = match r.group() {
        "" => format!("/{}", r.version()),
        group => format!("{group}/{}", r.version()),
    };
    Err(ApiError::unclassified(
        500,
        format!(
            "failed to create typed patch object ({}/{}; {group_version}, Kind={}): {said}",
            config["metadata"]["namespace"].as_str().unwrap_or(""),
            config["metadata"]["name"].as_str().unwrap_or(""),
            r.kind()
        ),
    ))
}

/// Adds a `Warning: 299 - "..."` header for each warning, as the real server sends them:
/// its recorder sends a warning said twice (a field repeated three times) once.
pub(super) fn with_warnings(mut response: Response, warnings: &[String]) -> Response {
    let mut sent = HashSet::new();
    for warning in warnings.iter().filter(|w| sent.insert(w.as_str())) {
        let text = format!("299 - {warning:?}");
        if let Ok(value) = HeaderValue::from_str(&text) {
            response.headers_mut().append(WARNING, value);
        }
    }
    response
}

/// Parse options that keep every key, so the last of repeated ones wins (go-yaml's lenient
/// decoding) or, walked by [`repeated_yaml_keys`], each is seen.
pub(super) fn keep_every_key() -> Options {
    let mut options = Options::default();
    options.duplicate_keys = DuplicateKeyPolicy::PassThrough;
    options
}

/// Each key a YAML document repeats within one mapping, in document order, as go-yaml's
/// strict decoding words it: `line 10: key "paused" already set in map`. Nothing for a
/// document that does not parse (its decoding reports that).
pub(super) fn repeated_yaml_keys(raw: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(raw);
    serde_saphyr::from_str_with_options::<Repeated<YamlKey>>(&text, keep_every_key())
        .map(|r| r.found)
        .unwrap_or_default()
}

/// Each field a JSON document repeats within one object, by its path (`spec.replicas`,
/// `l[1].x`) after `said`, as the strict JSON decoder words it. Nothing for a document that
/// does not parse (its decoding reports that).
fn duplicate_fields(raw: &[u8], said: &str) -> Vec<String> {
    let found = serde_json::from_slice::<Repeated<JsonKey>>(raw)
        .map(|r| r.found)
        .unwrap_or_default();
    found
        .into_iter()
        .map(|path| format!("{said} \"{path}\""))
        .collect()
}

/// The keys a document repeats, as `K` says them, gathered by [`Walk`].
struct Repeated<K> {
    found: Vec<String>,
    key: PhantomData<K>,
}

impl<'de, K: RepeatedKey> de::Deserialize<'de> for Repeated<K> {
    fn deserialize<D: de::Deserializer<'de>>(decoder: D) -> Result<Self, D::Error> {
        let mut found = Vec::new();
        Walk::<K>::new(&mut found).deserialize(decoder)?;
        Ok(Self {
            found,
            key: PhantomData,
        })
    }
}

/// How one decoder's repeated key is said: the JSON decoder by the field's path, go-yaml by
/// the key's line.
trait RepeatedKey: DeserializeOwned {
    /// The key as it is compared with its mapping's other keys and joins a path.
    fn name(&self) -> &str;
    fn said(&self, path: &str) -> String;
}

struct JsonKey(String);

impl<'de> de::Deserialize<'de> for JsonKey {
    fn deserialize<D: de::Deserializer<'de>>(decoder: D) -> Result<Self, D::Error> {
        String::deserialize(decoder).map(JsonKey)
    }
}

impl RepeatedKey for JsonKey {
    fn name(&self) -> &str {
        &self.0
    }

    fn said(&self, path: &str) -> String {
        path.to_string()
    }
}

/// A YAML mapping key with its line, printed as Go's `%#v` prints it (a string quoted,
/// anything else as it reads).
struct YamlKey(Spanned<KeyText>);

impl<'de> de::Deserialize<'de> for YamlKey {
    fn deserialize<D: de::Deserializer<'de>>(decoder: D) -> Result<Self, D::Error> {
        Spanned::<KeyText>::deserialize(decoder).map(YamlKey)
    }
}

impl RepeatedKey for YamlKey {
    fn name(&self) -> &str {
        &self.0.value.0
    }

    fn said(&self, _: &str) -> String {
        format!(
            "line {}: key {} already set in map",
            self.0.referenced.line(),
            self.0.value.0
        )
    }
}

/// Walks a document, noting each key repeated within one mapping as `K` says it.
struct Walk<'a, K> {
    path: String,
    found: &'a mut Vec<String>,
    key: PhantomData<K>,
}

impl<'a, K> Walk<'a, K> {
    fn new(found: &'a mut Vec<String>) -> Self {
        Self::at(String::new(), found)
    }

    fn at(path: String, found: &'a mut Vec<String>) -> Self {
        Self {
            path,
            found,
            key: PhantomData,
        }
    }
}

impl<'de, K: RepeatedKey> DeserializeSeed<'de> for Walk<'_, K> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, decoder: D) -> Result<(), D::Error> {
        decoder.deserialize_any(self)
    }
}

impl<'de, K: RepeatedKey> Visitor<'de> for Walk<'_, K> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a document")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        for index in 0.. {
            let item = Walk::<K>::at(format!("{}[{index}]", self.path), &mut *self.found);
            if seq.next_element_seed(item)?.is_none() {
                break;
            }
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<K>()? {
            let path = match self.path.as_str() {
                "" => key.name().to_string(),
                parent => format!("{parent}.{}", key.name()),
            };
            if !seen.insert(key.name().to_string()) {
                self.found.push(key.said(&path));
            }
            map.next_value_seed(Walk::<K>::at(path, &mut *self.found))?;
        }
        Ok(())
    }
}

/// A mapping key as Go's `%#v` prints it: a string quoted, anything else as it reads.
struct KeyText(String);

impl<'de> de::Deserialize<'de> for KeyText {
    fn deserialize<D: de::Deserializer<'de>>(decoder: D) -> Result<Self, D::Error> {
        decoder.deserialize_any(KeyVisitor)
    }
}

struct KeyVisitor;

impl Visitor<'_> for KeyVisitor {
    type Value = KeyText;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a scalar key")
    }

    fn visit_str<E>(self, key: &str) -> Result<KeyText, E> {
        Ok(KeyText(format!("{key:?}")))
    }

    fn visit_bool<E>(self, key: bool) -> Result<KeyText, E> {
        Ok(KeyText(key.to_string()))
    }

    fn visit_i64<E>(self, key: i64) -> Result<KeyText, E> {
        Ok(KeyText(key.to_string()))
    }

    fn visit_u64<E>(self, key: u64) -> Result<KeyText, E> {
        Ok(KeyText(key.to_string()))
    }

    fn visit_f64<E>(self, key: f64) -> Result<KeyText, E> {
        Ok(KeyText(key.to_string()))
    }

    fn visit_unit<E>(self) -> Result<KeyText, E> {
        Ok(KeyText("<nil>".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(query: &str) -> Params {
        let uri: axum::http::Uri = format!("/x?{query}").parse().expect("a URI");
        Params::from_uri(&uri).expect("a query")
    }

    #[test]
    fn each_repeated_yaml_key_is_named_by_its_line() {
        let yaml = "spec:\n  paused: true\n  paused: false\n  template:\n    spec:\n      containers:\n      - name: a\n        image: x\n        image: y\n";
        assert_eq!(
            repeated_yaml_keys(yaml.as_bytes()),
            [
                r#"line 3: key "paused" already set in map"#,
                r#"line 9: key "image" already set in map"#,
            ]
        );
        let json = "{\n\"data\": {\"a\": \"1\",\n\"a\": \"2\"}}";
        assert_eq!(
            repeated_yaml_keys(json.as_bytes()),
            [r#"line 3: key "a" already set in map"#]
        );
        assert!(repeated_yaml_keys(b"a: 1\nb: {a: 1}\n").is_empty());
    }

    #[test]
    fn repeated_json_fields_are_named_by_their_paths() {
        let body = br#"{"a":1,"a":2,"l":[{"x":1},{"x":1,"x":2}]}"#;
        assert_eq!(
            duplicate_fields(body, "duplicate field"),
            [r#"duplicate field "a""#, r#"duplicate field "l[1].x""#]
        );
    }

    #[test]
    fn no_directive_is_warn_and_an_unknown_one_is_refused() {
        assert_eq!(
            FieldValidation::parse(&params(""), "CreateOptions").ok(),
            Some(FieldValidation::Warn)
        );
        let refused = FieldValidation::parse(&params("fieldValidation=strict"), "CreateOptions");
        assert_eq!(refused.map_err(|e| e.code()).err(), Some(422));
    }

    #[test]
    fn strict_refuses_warn_warns_ignore_is_silent() {
        let repeated = vec![r#"line 3: key "a" already set in map"#.to_string()];
        assert_eq!(
            FieldValidation::Warn.on_apply(repeated.clone()).ok(),
            Some(repeated.clone())
        );
        assert_eq!(
            FieldValidation::Ignore.on_apply(repeated.clone()).ok(),
            Some(Vec::new())
        );
        assert!(FieldValidation::Strict.on_apply(repeated).is_err());
    }

    #[test]
    fn a_warning_said_twice_is_sent_once() {
        let warnings = duplicate_fields(br#"{"a":1,"a":2,"a":3}"#, "duplicate field");
        assert_eq!(warnings.len(), 2);
        let response = with_warnings(Response::default(), &warnings);
        let sent: Vec<_> = response.headers().get_all(WARNING).iter().collect();
        assert_eq!(sent, [r#"299 - "duplicate field \"a\"""#]);
    }

    #[test]
    fn apply_names_each_undeclared_field_where_the_schema_fails() {
        let target = Target {
            resource: crate::resources::Resource::Deployments,
            namespace: Some("default".into()),
            name: Some("web".into()),
            subresource: None,
        };
        let config = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"foo": {"a": 1, "b": 2}, "template": {"spec": {"containers": [
                {"name": "main", "image": "i", "imagee": "x"}]}}}});
        let refused = typed_apply_configuration(&target, &config).map_err(|e| e.to_status());
        let status = refused.expect_err("refused");
        assert_eq!(status["code"], 500);
        assert!(status.get("reason").is_none(), "{status:#}");
        assert_eq!(
            status["message"],
            "failed to create typed patch object (default/web; apps/v1, Kind=Deployment): errors:\n  .spec.foo: field not declared in schema\n  .spec.template.spec.containers[name=\"main\"].imagee: field not declared in schema"
        );
        let mut known = config.clone();
        drop_unknown(&target, &mut known);
        assert!(typed_apply_configuration(&target, &known).is_ok());
    }

    #[test]
    fn yaml_and_json_errors_join_as_the_strict_decoding_error_prints_them() {
        let mut errors = StrictErrors {
            yaml: vec![
                r#"line 3: key "a" already set in map"#.into(),
                r#"line 5: key "b" already set in map"#.into(),
            ],
            fields: Vec::new(),
        };
        errors.add_unknown(vec!["spec.foo".into()]);
        assert_eq!(
            errors.message(),
            "strict decoding error: yaml: unmarshal errors:\n  line 3: key \"a\" already set in map\n  line 5: key \"b\" already set in map, unknown field \"spec.foo\""
        );
        assert_eq!(errors.warnings().len(), 3);
    }
}
