//! Protobuf request bodies, as client-go sends built-in kinds (`kubectl create namespace`,
//! `create deployment`, `create secret`...): the `k8s\0` envelope around a `runtime.Unknown`,
//! whose `raw` bytes are decoded field by field against [`schema`] into the JSON the rest of
//! the server works on. A field the schema does not know is refused rather than dropped, so
//! nothing is stored that differs from what the client sent.

mod schema;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::manifests;
use crate::resources::Resource;

/// One message type: its name (for errors) and fields.
pub(super) struct Message {
    name: &'static str,
    fields: &'static [Field],
}

/// Field number, JSON name, cardinality, type.
pub(super) struct Field(u32, &'static str, Label, Ty);

#[derive(Clone, Copy)]
pub(super) enum Label {
    Single,
    Repeated,
    /// `map<string, T>`: repeated entries of key 1 and value 2.
    Map,
    /// A Go struct embedded in its parent: its fields are the parent's in JSON.
    Inline,
}

/// A field's type; the apimachinery types with their own JSON forms are named.
#[derive(Clone, Copy)]
pub(super) enum Ty {
    String,
    Bool,
    Int32,
    Int64,
    /// Base64 in JSON.
    Bytes,
    Message(&'static Message),
    /// `metav1.Time`: seconds and nanos, an RFC 3339 string in JSON.
    Time,
    /// `resource.Quantity`: its string.
    Quantity,
    /// `intstr.IntOrString`: a number or a string.
    IntOrString,
    /// `metav1.FieldsV1`: its raw JSON.
    FieldsV1,
}

/// Why a protobuf body could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum ProtoError {
    #[error(
        "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
    )]
    NoEnvelope,
    #[error("proto: unexpected end of message")]
    Truncated,
    #[error("proto: varint overflows 64 bits")]
    Overflow,
    #[error("proto: illegal wireType {0}")]
    WireType(u8),
    #[error("proto: {message}: wiretype {found} for field {field}, want {want}")]
    WrongWireType {
        message: &'static str,
        field: u32,
        found: u8,
        want: u8,
    },
    #[error("proto: {0}: field {1} is not one the sim knows, refusing rather than dropping it")]
    UnknownField(&'static str, u32),
    #[error("proto: invalid UTF-8 in a string field")]
    Utf8,
    #[error("proto: content encoding {0:?} is not supported")]
    Encoding(String),
    #[error("proto: embedded JSON does not parse: {0}")]
    Json(String),
    #[error("no kind \"{0}\" is registered for the protobuf body")]
    UnknownKind(String),
}

const MAGIC: &[u8] = b"k8s\0";
const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LENGTH: u8 = 2;
const FIXED32: u8 = 5;

/// The message type of each served kind.
fn root(kind: &str) -> Option<&'static Message> {
    let resource = Resource::ALL.into_iter().find(|r| r.kind() == kind)?;
    Some(match resource {
        Resource::Namespaces => &schema::CORE_V1_NAMESPACE,
        Resource::Nodes => &schema::CORE_V1_NODE,
        Resource::Pods => &schema::CORE_V1_POD,
        Resource::Deployments => &schema::APPS_V1_DEPLOYMENT,
        Resource::ReplicaSets => &schema::APPS_V1_REPLICA_SET,
        Resource::Secrets => &schema::CORE_V1_SECRET,
        Resource::ConfigMaps => &schema::CORE_V1_CONFIG_MAP,
        Resource::Jobs => &schema::BATCH_V1_JOB,
        Resource::CronJobs => &schema::BATCH_V1_CRON_JOB,
        _ => return None,
    })
}

/// The fields of `object` (of `kind`) its schema does not declare, as `spec.foo` or
/// `spec.containers[0].foo`: what `fieldValidation=Strict` refuses.
pub(super) fn unknown_fields(kind: &str, object: &Value) -> Vec<String> {
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
pub(super) fn prune_unknown(kind: &str, object: &mut Value) {
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

/// A protobuf-encoded object as JSON, `apiVersion` and `kind` included.
pub(super) fn decode(body: &[u8]) -> Result<Value, ProtoError> {
    let unknown = body.strip_prefix(MAGIC).ok_or(ProtoError::NoEnvelope)?;
    let (mut api_version, mut kind, mut raw, mut encoding) = (None, None, None, None);
    let mut reader = Reader::new(unknown);
    while let Some((field, wire)) = reader.key()? {
        match (field, wire) {
            (1, LENGTH) => {
                let mut meta = Reader::new(reader.bytes()?);
                while let Some((f, w)) = meta.key()? {
                    match (f, w) {
                        (1, LENGTH) => api_version = Some(text(meta.bytes()?)?),
                        (2, LENGTH) => kind = Some(text(meta.bytes()?)?),
                        (_, w) => meta.skip(w)?,
                    }
                }
            }
            (2, LENGTH) => raw = Some(reader.bytes()?),
            (3, LENGTH) => encoding = Some(text(reader.bytes()?)?),
            (_, w) => reader.skip(w)?,
        }
    }
    if let Some(encoding) = encoding.filter(|e| !e.is_empty()) {
        return Err(ProtoError::Encoding(encoding));
    }
    let kind = kind.unwrap_or_default();
    let message = root(&kind).ok_or_else(|| ProtoError::UnknownKind(kind.clone()))?;
    let mut object = Map::new();
    object.insert("apiVersion".into(), json!(api_version.unwrap_or_default()));
    object.insert("kind".into(), json!(kind));
    decode_into(&mut object, raw.unwrap_or_default(), message)?;
    Ok(Value::Object(object))
}

fn text(bytes: &[u8]) -> Result<String, ProtoError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| ProtoError::Utf8)
}

/// Decodes the fields of one `message` in `buf` into `out`.
fn decode_into(
    out: &mut Map<String, Value>,
    buf: &[u8],
    message: &'static Message,
) -> Result<(), ProtoError> {
    let mut reader = Reader::new(buf);
    while let Some((number, wire)) = reader.key()? {
        let Some(Field(_, name, label, ty)) = message.fields.iter().find(|f| f.0 == number) else {
            return Err(ProtoError::UnknownField(message.name, number));
        };
        let name = *name;
        match label {
            Label::Single => {
                let value = read_value(&mut reader, wire, *ty, message.name, number)?;
                if !omitted(name, &value) {
                    out.insert(name.into(), value);
                }
            }
            Label::Repeated => {
                let items = out.entry(name).or_insert_with(|| Value::Array(Vec::new()));
                let Value::Array(items) = items else {
                    continue;
                };
                let packed = wire == LENGTH && matches!(ty, Ty::Bool | Ty::Int32 | Ty::Int64);
                if packed {
                    let mut inner = Reader::new(reader.bytes()?);
                    while !inner.done() {
                        items.push(read_value(&mut inner, VARINT, *ty, message.name, number)?);
                    }
                } else {
                    items.push(read_value(&mut reader, wire, *ty, message.name, number)?);
                }
            }
            Label::Map => {
                expect(wire, LENGTH, message.name, number)?;
                let mut entry = Reader::new(reader.bytes()?);
                let (mut key, mut value) = (String::new(), Value::Null);
                while let Some((f, w)) = entry.key()? {
                    match f {
                        1 => {
                            expect(w, LENGTH, message.name, number)?;
                            key = text(entry.bytes()?)?;
                        }
                        2 => value = read_value(&mut entry, w, *ty, message.name, number)?,
                        _ => entry.skip(w)?,
                    }
                }
                if value.is_null() {
                    value = empty(*ty);
                }
                let map = out.entry(name).or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(map) = map {
                    map.insert(key, value);
                }
            }
            Label::Inline => {
                expect(wire, LENGTH, message.name, number)?;
                let Ty::Message(inner) = ty else {
                    return Err(ProtoError::UnknownField(message.name, number));
                };
                decode_into(out, reader.bytes()?, inner)?;
            }
        }
    }
    Ok(())
}

/// Fields Go declares as pointers, whose zero value means something (`replicas: 0`,
/// `runAsUser: 0`, `automountServiceAccountToken: false`).
const MEANINGFUL_ZEROS: [&str; 24] = [
    "replicas",
    "maxUnavailable",
    "maxSurge",
    "runAsUser",
    "runAsGroup",
    "fsGroup",
    "runAsNonRoot",
    "readOnlyRootFilesystem",
    "privileged",
    "allowPrivilegeEscalation",
    "automountServiceAccountToken",
    "enableServiceLinks",
    "optional",
    "immutable",
    "revisionHistoryLimit",
    "progressDeadlineSeconds",
    "terminationGracePeriodSeconds",
    "activeDeadlineSeconds",
    "priority",
    "defaultMode",
    "mode",
    "hostUsers",
    "setHostnameAsFQDN",
    "shareProcessNamespace",
];

/// Go's encoder sends every non-pointer field, zero or not, and its JSON encoder leaves the
/// zero ones out (`omitempty`): so does this decoder, but for the pointer fields above.
fn omitted(name: &str, value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Bool(false) => !MEANINGFUL_ZEROS.contains(&name),
        Value::Number(n) => n.as_i64() == Some(0) && !MEANINGFUL_ZEROS.contains(&name),
        _ => false,
    }
}

/// A map value sent empty (its entry has no value field).
fn empty(ty: Ty) -> Value {
    match ty {
        Ty::String | Ty::Bytes | Ty::Quantity => json!(""),
        Ty::Message(_) => json!({}),
        Ty::Bool => json!(false),
        Ty::Int32 | Ty::Int64 | Ty::IntOrString => json!(0),
        Ty::Time | Ty::FieldsV1 => Value::Null,
    }
}

fn expect(found: u8, want: u8, message: &'static str, field: u32) -> Result<(), ProtoError> {
    if found == want {
        Ok(())
    } else {
        Err(ProtoError::WrongWireType {
            message,
            field,
            found,
            want,
        })
    }
}

fn read_value(
    reader: &mut Reader<'_>,
    wire: u8,
    ty: Ty,
    message: &'static str,
    field: u32,
) -> Result<Value, ProtoError> {
    let want = match ty {
        Ty::Bool | Ty::Int32 | Ty::Int64 => VARINT,
        _ => LENGTH,
    };
    expect(wire, want, message, field)?;
    Ok(match ty {
        Ty::String => json!(text(reader.bytes()?)?),
        Ty::Bool => json!(reader.varint()? != 0),
        // A negative int32 is sent sign-extended to 64 bits.
        Ty::Int32 => json!(reader.varint()? as i64 as i32),
        Ty::Int64 => json!(reader.varint()? as i64),
        Ty::Bytes => json!(base64::engine::general_purpose::STANDARD.encode(reader.bytes()?)),
        Ty::Message(inner) => {
            let mut map = Map::new();
            decode_into(&mut map, reader.bytes()?, inner)?;
            Value::Object(map)
        }
        Ty::Time => {
            let (mut seconds, mut inner) = (0i64, Reader::new(reader.bytes()?));
            while let Some((f, w)) = inner.key()? {
                match (f, w) {
                    (1, VARINT) => seconds = inner.varint()? as i64,
                    (_, w) => inner.skip(w)?,
                }
            }
            // Go's zero time (year 1, or nothing sent) is JSON null.
            if seconds <= 0 {
                Value::Null
            } else {
                json!(manifests::timestamp(seconds))
            }
        }
        Ty::Quantity => json!(single_string(reader.bytes()?)?),
        Ty::IntOrString => {
            let (mut is_string, mut int, mut string) = (false, 0i64, String::new());
            let mut inner = Reader::new(reader.bytes()?);
            while let Some((f, w)) = inner.key()? {
                match (f, w) {
                    (1, VARINT) => is_string = inner.varint()? == 1,
                    (2, VARINT) => int = i64::from(inner.varint()? as i64 as i32),
                    (3, LENGTH) => string = text(inner.bytes()?)?,
                    (_, w) => inner.skip(w)?,
                }
            }
            if is_string { json!(string) } else { json!(int) }
        }
        Ty::FieldsV1 => {
            let mut raw: &[u8] = b"{}";
            let mut inner = Reader::new(reader.bytes()?);
            while let Some((f, w)) = inner.key()? {
                match (f, w) {
                    (1, LENGTH) => raw = inner.bytes()?,
                    (_, w) => inner.skip(w)?,
                }
            }
            serde_json::from_slice(raw).map_err(|e| ProtoError::Json(e.to_string()))?
        }
    })
}

/// Field 1 of a message holding one string (`Quantity`).
fn single_string(buf: &[u8]) -> Result<String, ProtoError> {
    let mut inner = Reader::new(buf);
    let mut out = String::new();
    while let Some((f, w)) = inner.key()? {
        match (f, w) {
            (1, LENGTH) => out = text(inner.bytes()?)?,
            (_, w) => inner.skip(w)?,
        }
    }
    Ok(out)
}

/// The protobuf wire format over a byte slice.
struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Self { buf, at: 0 }
    }

    fn done(&self) -> bool {
        self.at >= self.buf.len()
    }

    fn varint(&mut self) -> Result<u64, ProtoError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.buf.get(self.at).ok_or(ProtoError::Truncated)?;
            self.at += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(ProtoError::Overflow)
    }

    /// The next field's number and wire type; `None` at the end.
    fn key(&mut self) -> Result<Option<(u32, u8)>, ProtoError> {
        if self.done() {
            return Ok(None);
        }
        let key = self.varint()?;
        let wire = (key & 7) as u8;
        if !matches!(wire, VARINT | FIXED64 | LENGTH | FIXED32) {
            return Err(ProtoError::WireType(wire));
        }
        let field = u32::try_from(key >> 3).map_err(|_| ProtoError::Overflow)?;
        Ok(Some((field, wire)))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], ProtoError> {
        let end = self.at.checked_add(n).ok_or(ProtoError::Truncated)?;
        let bytes = self.buf.get(self.at..end).ok_or(ProtoError::Truncated)?;
        self.at = end;
        Ok(bytes)
    }

    fn bytes(&mut self) -> Result<&'a [u8], ProtoError> {
        let len = usize::try_from(self.varint()?).map_err(|_| ProtoError::Truncated)?;
        self.take(len)
    }

    fn skip(&mut self, wire: u8) -> Result<(), ProtoError> {
        match wire {
            VARINT => self.varint().map(drop),
            FIXED64 => self.take(8).map(drop),
            LENGTH => self.bytes().map(drop),
            FIXED32 => self.take(4).map(drop),
            other => Err(ProtoError::WireType(other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varint(mut n: u64, out: &mut Vec<u8>) {
        while n >= 0x80 {
            out.push((n as u8) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
    }

    fn field(number: u32, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        varint(u64::from(number) << 3 | 2, &mut out);
        varint(payload.len() as u64, &mut out);
        out.extend_from_slice(payload);
        out
    }

    fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
        let type_meta = [field(1, api_version.as_bytes()), field(2, kind.as_bytes())].concat();
        [MAGIC.to_vec(), field(1, &type_meta), field(2, raw)].concat()
    }

    #[test]
    fn a_secret_decodes_with_its_bytes_as_base64() {
        let meta = [
            field(1, b"db"),
            field(11, &[field(1, b"app"), field(2, b"web")].concat()),
        ]
        .concat();
        let entry = [field(1, b"password"), field(2, b"hunter2")].concat();
        let raw = [field(1, &meta), field(2, &entry), field(3, b"Opaque")].concat();
        let value = decode(&envelope("v1", "Secret", &raw)).unwrap();
        assert_eq!(
            value,
            json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "db", "labels": {"app": "web"}},
                "data": {"password": "aHVudGVyMg=="}, "type": "Opaque"})
        );
    }

    /// Every object the sim generates is one its kind's schema declares in full, so Strict
    /// validation and pruning leave the seeded cluster's objects alone.
    #[test]
    fn the_seeded_cluster_declares_every_field() {
        let spec = crate::workload::WorkloadSpec {
            pods: 60,
            nodes: 2,
            namespaces: 2,
            seed: 3,
            birth: 1_741_944_000,
            workload_pods: true,
        };
        for generated in crate::workload::generate(&spec, 1).unwrap() {
            let object = generated.object.decode().unwrap();
            let kind = object["kind"].as_str().unwrap();
            assert_eq!(
                unknown_fields(kind, &object),
                Vec::<String>::new(),
                "{kind}"
            );
            let mut pruned = object.clone();
            prune_unknown(kind, &mut pruned);
            assert_eq!(pruned, object);
        }
        let mut typo =
            json!({"kind": "Pod", "spec": {"containers": [{"name": "a", "imagee": "x"}]}});
        assert_eq!(unknown_fields("Pod", &typo), ["spec.containers[0].imagee"]);
        prune_unknown("Pod", &mut typo);
        assert_eq!(typo["spec"]["containers"][0], json!({"name": "a"}));
    }

    #[test]
    fn bad_bodies_are_refused() {
        assert_eq!(decode(b"{}"), Err(ProtoError::NoEnvelope));
        let truncated = [MAGIC, &[0x0a, 0x05, 0x01][..]].concat();
        assert_eq!(decode(&truncated), Err(ProtoError::Truncated));
        let unknown_field = field(99, b"x");
        assert_eq!(
            decode(&envelope("v1", "Namespace", &unknown_field)),
            Err(ProtoError::UnknownField("Namespace", 99))
        );
        assert_eq!(
            decode(&envelope("v1", "Widget", b"")),
            Err(ProtoError::UnknownKind("Widget".into()))
        );
    }
}
