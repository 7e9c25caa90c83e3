//! Keys a YAML document repeats, as the real server's strict YAML decoding (go-yaml's)
//! reports them: server-side apply decodes its configuration leniently (the last value
//! wins) and then strictly, to warn of or refuse each repeated key by its line.

use std::collections::HashSet;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{DuplicateKeyPolicy, Options, Spanned};

use crate::http::params::Params;
use crate::http::status::ApiError;

/// Parse options that keep every key, so the last of repeated ones wins (go-yaml's lenient
/// decoding) or, walked by [`repeated_keys`], each is seen.
pub(super) fn keep_every_key() -> Options {
    let mut options = Options::default();
    options.duplicate_keys = DuplicateKeyPolicy::PassThrough;
    options
}

/// Each key `text` repeats within one mapping, in document order, worded as go-yaml words
/// it: `line 10: key "paused" already set in map`. Nothing for a document that does not
/// parse (its decoding reports that).
pub(super) fn repeated_keys(text: &str) -> Vec<String> {
    serde_saphyr::from_str_with_options::<Repeated>(text, keep_every_key())
        .map(|r| r.0)
        .unwrap_or_default()
}

/// The repeated keys of a document, gathered by [`Walk`].
struct Repeated(Vec<String>);

impl<'de> de::Deserialize<'de> for Repeated {
    fn deserialize<D: de::Deserializer<'de>>(decoder: D) -> Result<Self, D::Error> {
        let mut found = Vec::new();
        Walk { found: &mut found }.deserialize(decoder)?;
        Ok(Repeated(found))
    }
}

/// What `fieldValidation` makes of an apply configuration's repeated keys: Strict refuses
/// it (400, go-yaml's message), Warn (also when none is asked) warns of each, Ignore says
/// nothing. Returns the warnings.
pub(super) fn check_apply(params: &Params, repeated: &[String]) -> Result<Vec<String>, ApiError> {
    if repeated.is_empty() {
        return Ok(Vec::new());
    }
    match params.get("fieldValidation").unwrap_or("Warn") {
        "Strict" => Err(ApiError::bad_request(format!(
            "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  {}",
            repeated.join("\n  ")
        ))),
        "Warn" => Ok(repeated.to_vec()),
        _ => Ok(Vec::new()),
    }
}

/// Walks a document, noting the keys repeated within each mapping.
struct Walk<'a> {
    found: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, decoder: D) -> Result<(), D::Error> {
        decoder.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a YAML node")
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
        while seq
            .next_element_seed(Walk {
                found: &mut *self.found,
            })?
            .is_some()
        {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<Spanned<KeyText>>()? {
            if !seen.insert(key.value.0.clone()) {
                self.found.push(format!(
                    "line {}: key {} already set in map",
                    key.referenced.line(),
                    key.value.0
                ));
            }
            map.next_value_seed(Walk {
                found: &mut *self.found,
            })?;
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

    #[test]
    fn each_repeated_key_is_named_by_its_line() {
        let yaml = "spec:\n  paused: true\n  paused: false\n  template:\n    spec:\n      containers:\n      - name: a\n        image: x\n        image: y\n";
        assert_eq!(
            repeated_keys(yaml),
            [
                r#"line 3: key "paused" already set in map"#,
                r#"line 9: key "image" already set in map"#,
            ]
        );
        let json = "{\n\"data\": {\"a\": \"1\",\n\"a\": \"2\"}}";
        assert_eq!(
            repeated_keys(json),
            [r#"line 3: key "a" already set in map"#]
        );
        assert!(repeated_keys("a: 1\nb: {a: 1}\n").is_empty());
    }

    #[test]
    fn strict_refuses_warn_warns_ignore_is_silent() {
        let repeated = vec![r#"line 3: key "a" already set in map"#.to_string()];
        let params = |q: &str| {
            let uri: axum::http::Uri = format!("/x?{q}").parse().expect("a URI");
            Params::from_uri(&uri).expect("a query")
        };
        assert_eq!(
            check_apply(&params(""), &repeated).ok(),
            Some(repeated.clone())
        );
        assert_eq!(
            check_apply(&params("fieldValidation=Ignore"), &repeated).ok(),
            Some(Vec::new())
        );
        assert!(check_apply(&params("fieldValidation=Strict"), &repeated).is_err());
    }
}
