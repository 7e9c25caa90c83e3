//! Decoding one object's JSON into its projection.

use crate::resource::{BuiltIn, KubeResource};

/// Why an object could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("malformed {kind}: {source}")]
    Object {
        kind: &'static str,
        #[source]
        source: serde_json::Error,
    },
}

/// Decodes one object (a GET response, or a watch event's `object`), reading only what its
/// projection keeps (see [`decode`](mod@crate::decode)).
pub fn decode<T: BuiltIn>(json: &[u8]) -> Result<T, DecodeError> {
    decode_object(json).map_err(|source| DecodeError::Object {
        kind: T::KIND.kind(),
        source,
    })
}

/// [`crate::decode::from_slice`] into a projection: what a list item or a watch event's object goes
/// through.
pub fn decode_object<T: KubeResource>(json: &[u8]) -> Result<T, serde_json::Error> {
    crate::decode::from_slice(json)
}
