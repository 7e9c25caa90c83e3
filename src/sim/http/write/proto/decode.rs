//! Decoding a protobuf body: the `k8s\0` envelope, its `runtime.Unknown`, and the fields of
//! its object, field by field against the schema, into JSON.

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::manifests;

use super::error::ProtoError;
use super::kinds::root;
use super::message::{Field, Label, Message, Ty};
use super::wire::{LENGTH, Reader, VARINT};

/// The envelope every protobuf body starts with.
pub(super) const MAGIC: &[u8] = b"k8s\0";
/// A protobuf-encoded object as JSON, `apiVersion` and `kind` included.
pub(crate) fn decode(body: &[u8]) -> Result<Value, ProtoError> {
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
