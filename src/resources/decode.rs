//! `metadata.managedFields` cut out of the JSON before serde_json decodes it.
//!
//! A pod's managedFields are about 40% of its JSON (4 KB of the 10 KB of
//! `../shared/fixtures/pod-realistic.json`) and no projection keeps any of them, yet serde_json
//! reads every byte of them even into `IgnoredAny`: it tokenizes and validates the whole tree.
//! So before an object (or every item of a list page) is decoded, a structural scan walks the
//! members that lead to `metadata.managedFields`, skips that member's value, and the text handed
//! to serde_json is the JSON without it. Strings are skipped with `memchr` (to the next quote or
//! backslash), containers by matching brackets; only the few members before `metadata` and in
//! `metadata` before `managedFields` are walked one by one.
//!
//! Deliberate trade-off, as in simdjson's on-demand skipping: the skipped value is checked
//! for structure only. An unterminated string, or a bracket that is unbalanced or closes the
//! wrong kind of container, is an error ([`Malformed`]); anything else inside it (bad numbers
//! or literals, missing commas or colons, invalid escapes or UTF-8) goes unnoticed. Every byte
//! that is kept is still decoded and validated by serde_json as before. A `managedFields` key
//! written with escapes is not recognised, and is then simply decoded and ignored by serde.

use std::borrow::Cow;

use memchr::memchr2;
use smallvec::SmallVec;

/// The JSON is not well-formed where the scan needs it to be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed JSON at byte {at}: {what}")]
pub struct Malformed {
    pub at: usize,
    pub what: &'static str,
}

/// One object (a GET response, a watch event's object) without `metadata.managedFields`;
/// borrowed unchanged when it has none.
pub fn without_managed_fields(object: &[u8]) -> Result<Cow<'_, [u8]>, Malformed> {
    let mut scan = Scan::new(object);
    scan.ws();
    if scan.peek() == Some(b'{') {
        scan.members(Level::Object)?;
    }
    Ok(scan.splice())
}

/// A list body (`{"metadata":..., "items":[...]}`) with `metadata.managedFields` cut from
/// every item; borrowed unchanged when no item has them.
pub fn list_without_managed_fields(list: &[u8]) -> Result<Cow<'_, [u8]>, Malformed> {
    let mut scan = Scan::new(list);
    scan.ws();
    if scan.peek() == Some(b'{') {
        scan.members(Level::List)?;
    }
    Ok(scan.splice())
}

/// Where in the document an object's members are walked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    /// A list body: its `items` are walked, then the scan stops.
    List,
    /// A list item: its `metadata` is walked, the rest skipped to the item's end.
    Item,
    /// A single object: its `metadata` is walked, then the scan stops.
    Object,
    /// `metadata`: `managedFields` is cut.
    Metadata,
}

/// Bytes that matter when skipping a container outside strings.
const STRUCTURAL: [bool; 256] = {
    let mut table = [false; 256];
    table[b'"' as usize] = true;
    table[b'{' as usize] = true;
    table[b'}' as usize] = true;
    table[b'[' as usize] = true;
    table[b']' as usize] = true;
    table
};

struct Scan<'a> {
    json: &'a [u8],
    pos: usize,
    /// Byte ranges to leave out, in order.
    cuts: Vec<(usize, usize)>,
}

impl<'a> Scan<'a> {
    fn new(json: &'a [u8]) -> Self {
        Self {
            json,
            pos: 0,
            cuts: Vec::new(),
        }
    }

    fn malformed(&self, what: &'static str) -> Malformed {
        Malformed { at: self.pos, what }
    }

    fn peek(&self) -> Option<u8> {
        self.json.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while self
            .peek()
            .is_some_and(|b| matches!(b, b' ' | b'\n' | b'\r' | b'\t'))
        {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8, what: &'static str) -> Result<(), Malformed> {
        self.ws();
        if self.peek() != Some(byte) {
            return Err(self.malformed(what));
        }
        self.pos += 1;
        Ok(())
    }

    /// From the opening quote to just past the closing one.
    fn string(&mut self) -> Result<(), Malformed> {
        let mut at = self.pos + 1;
        loop {
            let found = self
                .json
                .get(at..)
                .and_then(|rest| memchr2(b'"', b'\\', rest));
            let Some(offset) = found else {
                return Err(self.malformed("unterminated string"));
            };
            at += offset;
            if self.json[at] == b'"' {
                self.pos = at + 1;
                return Ok(());
            }
            // A backslash: the escaped byte cannot end the string.
            at += 2;
        }
    }

    /// Any value, checked for structure only (see the module's doc).
    fn value(&mut self) -> Result<(), Malformed> {
        self.ws();
        match self.peek() {
            Some(b'"') => self.string(),
            Some(b'{' | b'[') => self.container(),
            Some(_) => {
                let start = self.pos;
                while self.peek().is_some_and(|b| {
                    !matches!(b, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')
                }) {
                    self.pos += 1;
                }
                if self.pos == start {
                    return Err(self.malformed("expected a value"));
                }
                Ok(())
            }
            None => Err(self.malformed("expected a value")),
        }
    }

    /// An object or array, by matching brackets outside strings.
    fn container(&mut self) -> Result<(), Malformed> {
        let mut open: SmallVec<[u8; 32]> = SmallVec::new();
        loop {
            while self.peek().is_some_and(|b| !STRUCTURAL[usize::from(b)]) {
                self.pos += 1;
            }
            match self.peek() {
                None => return Err(self.malformed("unbalanced brackets")),
                Some(b'"') => self.string()?,
                Some(b'{') => {
                    open.push(b'}');
                    self.pos += 1;
                }
                Some(b'[') => {
                    open.push(b']');
                    self.pos += 1;
                }
                Some(close) => {
                    if open.pop() != Some(close) {
                        return Err(self.malformed("mismatched bracket"));
                    }
                    self.pos += 1;
                    if open.is_empty() {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// The members of the object at `pos` (its `{`), walked as `level` says. Returns once
    /// the object is closed, or early where nothing more needs cutting.
    fn members(&mut self, level: Level) -> Result<(), Malformed> {
        self.pos += 1;
        self.ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        let mut first = true;
        // Where the comma before this member is, for cutting it with the member.
        let mut comma = 0;
        loop {
            self.ws();
            let key_start = self.pos;
            if self.peek() != Some(b'"') {
                return Err(self.malformed("expected a member name"));
            }
            self.string()?;
            let key = &self.json[key_start + 1..self.pos - 1];
            self.expect(b':', "expected ':'")?;
            self.ws();
            let nested = match (level, key) {
                (Level::List, b"items") => Some(Level::Item),
                (Level::Item | Level::Object, b"metadata") => Some(Level::Metadata),
                _ => None,
            };
            match nested {
                Some(Level::Item) if self.peek() == Some(b'[') => {
                    self.items()?;
                    return Ok(());
                }
                Some(Level::Metadata) if self.peek() == Some(b'{') => {
                    self.members(Level::Metadata)?;
                    if level == Level::Object {
                        return Ok(());
                    }
                }
                _ if level == Level::Metadata && key == b"managedFields" => {
                    self.value()?;
                    let end = self.pos;
                    if !first {
                        self.cuts.push((comma, end));
                    } else {
                        self.ws();
                        if self.peek() == Some(b',') {
                            self.pos += 1;
                            self.cuts.push((key_start, self.pos));
                            // The next member is now the first one.
                            self.ws();
                            if self.peek() == Some(b'}') {
                                return Err(self.malformed("expected a member name"));
                            }
                            continue;
                        }
                        self.cuts.push((key_start, end));
                    }
                }
                _ => self.value()?,
            }
            self.ws();
            match self.peek() {
                Some(b',') => {
                    comma = self.pos;
                    first = false;
                    self.pos += 1;
                }
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.malformed("expected ',' or '}'")),
            }
        }
    }

    /// The elements of `items` (at its `[`).
    fn items(&mut self) -> Result<(), Malformed> {
        self.pos += 1;
        self.ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.ws();
            if self.peek() == Some(b'{') {
                self.members(Level::Item)?;
            } else {
                self.value()?;
            }
            self.ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.malformed("expected ',' or ']'")),
            }
        }
    }

    /// The JSON without the cut ranges.
    fn splice(self) -> Cow<'a, [u8]> {
        if self.cuts.is_empty() {
            return Cow::Borrowed(self.json);
        }
        let removed: usize = self.cuts.iter().map(|(start, end)| end - start).sum();
        let mut out = Vec::with_capacity(self.json.len() - removed);
        let mut from = 0;
        for (start, end) in self.cuts {
            out.extend_from_slice(&self.json[from..start]);
            from = end;
        }
        out.extend_from_slice(&self.json[from..]);
        Cow::Owned(out)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn cut(json: &str) -> Result<Value, Malformed> {
        let out = without_managed_fields(json.as_bytes())?;
        Ok(serde_json::from_slice(&out).expect("the cut JSON is valid"))
    }

    #[test]
    fn managed_fields_last_in_metadata() {
        let got = cut(
            r#"{"kind":"Pod","metadata":{"name":"a","managedFields":[{"manager":"m","fieldsV1":{"f:spec":{}}}]},"spec":{"x":1}}"#,
        );
        assert_eq!(
            got.unwrap(),
            json!({"kind": "Pod", "metadata": {"name": "a"}, "spec": {"x": 1}})
        );
    }

    #[test]
    fn managed_fields_first_and_only_in_metadata() {
        let first = cut(r#"{"metadata": { "managedFields" : [ ] , "name":"a" }}"#);
        assert_eq!(first.unwrap(), json!({"metadata": {"name": "a"}}));
        let only = cut(r#"{"metadata":{"managedFields":[{"a":"b"}]}}"#);
        assert_eq!(only.unwrap(), json!({"metadata": {}}));
        let middle = cut(r#"{"metadata":{"name":"a","managedFields":[],"uid":"u"}}"#);
        assert_eq!(
            middle.unwrap(),
            json!({"metadata": {"name": "a", "uid": "u"}})
        );
    }

    #[test]
    fn absent_managed_fields_borrow_the_input() {
        let json = br#"{"kind":"Pod","metadata":{"name":"a"},"spec":{"managedFields":[1]}}"#;
        assert!(matches!(
            without_managed_fields(json),
            Ok(Cow::Borrowed(b)) if b == json
        ));
        assert!(matches!(
            without_managed_fields(b"[1,2]"),
            Ok(Cow::Borrowed(_))
        ));
    }

    #[test]
    fn strings_with_escaped_quotes_and_brackets_are_skipped_whole() {
        let got = cut(
            r#"{"a":"x\"}{","metadata":{"labels":{"k":"]\\"},"managedFields":[{"f:\"]}":{"s":"[{\\\"}"},"n":[[1,[2]],{"o":{}}]}],"uid":"u"}}"#,
        );
        assert_eq!(
            got.unwrap(),
            json!({"a": "x\"}{", "metadata": {"labels": {"k": "]\\"}, "uid": "u"}})
        );
    }

    #[test]
    fn unbalanced_or_unterminated_managed_fields_are_errors() {
        for bad in [
            r#"{"metadata":{"managedFields":[{"a":1}"#,
            r#"{"metadata":{"managedFields":[{"a":1]}],"name":"a"}}"#,
            r#"{"metadata":{"managedFields":[{"a":"1}]}}"#,
            r#"{"metadata":{"managedFields":[{"a":"1\"}]}}"#,
            r#"{"metadata":{"managedFields":"#,
            r#"{"metadata":{"managedFields":[],}}"#,
        ] {
            assert!(without_managed_fields(bad.as_bytes()).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_skipped_value_is_checked_for_structure_only() {
        let got = cut(r#"{"metadata":{"managedFields":[{"a":01 "b" tru}],"name":"a"}}"#);
        assert_eq!(got.unwrap(), json!({"metadata": {"name": "a"}}));
    }

    #[test]
    fn every_list_item_loses_its_managed_fields() {
        let list = br#"{"kind":"PodList","metadata":{"resourceVersion":"9"},"items":[
            {"metadata":{"name":"a","managedFields":[{"m":"x"}]},"spec":{"c":["[",{}]}},
            {"metadata":{"name":"b"}},
            "odd",
            {"status":{},"metadata":{"managedFields":[],"name":"c"}}
        ]}"#;
        let out = list_without_managed_fields(list).unwrap();
        let got: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            got,
            json!({"kind": "PodList", "metadata": {"resourceVersion": "9"}, "items": [
                {"metadata": {"name": "a"}, "spec": {"c": ["[", {}]}},
                {"metadata": {"name": "b"}},
                "odd",
                {"status": {}, "metadata": {"name": "c"}},
            ]})
        );
        assert!(
            list_without_managed_fields(br#"{"items":[{"metadata":{"managedFields":[}}]}"#)
                .is_err()
        );
    }

    #[test]
    fn the_realistic_pod_decodes_the_same_without_them() {
        let fixture = include_bytes!("../../tests/fixtures/pod-realistic.json");
        let out = without_managed_fields(fixture).unwrap();
        assert!(out.len() < fixture.len() * 7 / 10);
        let mut full: Value = serde_json::from_slice(fixture).unwrap();
        let cut: Value = serde_json::from_slice(&out).unwrap();
        full["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("managedFields");
        assert_eq!(cut, full);
    }
}
