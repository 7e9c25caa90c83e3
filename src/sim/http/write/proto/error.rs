//! Why a protobuf body could not be decoded.

/// Why a protobuf body could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ProtoError {
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
