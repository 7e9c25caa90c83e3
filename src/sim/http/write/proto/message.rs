//! The shape of a protobuf message as the schema declares it.

/// One message type: its name (for errors) and fields.
pub(super) struct Message {
    pub(super) name: &'static str,
    pub(super) fields: &'static [Field],
}

/// Field number, JSON name, cardinality, type.
pub(super) struct Field(
    pub(super) u32,
    pub(super) &'static str,
    pub(super) Label,
    pub(super) Ty,
);

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
