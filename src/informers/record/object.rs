//! The object a recorder's informer lists and watches: the raw JSON as the server sent it
//! (masked where the kind needs it), keyed and versioned like any other object, so the
//! Reflector drives the recording with all its relists, backoffs and restarts.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::object::Object;

/// One object's raw JSON and the identity the pipeline keys it by.
#[derive(Debug, Clone)]
pub struct RecordedObject {
    pub raw: Box<RawValue>,
    namespace: Option<String>,
    name: String,
    resource_version: Option<String>,
}

#[derive(Deserialize)]
struct Meta {
    #[serde(default)]
    metadata: MetaFields,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct MetaFields {
    namespace: Option<String>,
    #[serde(default)]
    name: String,
    resource_version: Option<String>,
}

impl RecordedObject {
    /// Reads the identity of `raw`, which must be a JSON object.
    pub fn new(raw: Box<RawValue>) -> Result<Self, serde_json::Error> {
        let meta: Meta = serde_json::from_str(raw.get())?;
        Ok(Self {
            raw,
            namespace: meta.metadata.namespace.filter(|ns| !ns.is_empty()),
            name: meta.metadata.name,
            resource_version: meta.metadata.resource_version,
        })
    }

    /// As [`RecordedObject::new`], from bytes.
    pub fn from_slice(raw: &[u8]) -> Result<Self, serde_json::Error> {
        Self::new(serde_json::from_slice(raw)?)
    }
}

impl Object for RecordedObject {
    fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn resource_version(&self) -> Option<&str> {
        self.resource_version.as_deref()
    }
}
