//! A patch of any format applied to an object: its type from the Content-Type, and why it
//! did not apply.

use serde_json::Value;

use super::merge::merge;
use super::strategic;

/// A patch format, from the request's Content-Type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    Json,
    Merge,
    Strategic,
    Apply,
}

impl PatchType {
    pub fn from_media_type(media: &str) -> Option<Self> {
        match media {
            "application/json-patch+json" => Some(PatchType::Json),
            "application/merge-patch+json" => Some(PatchType::Merge),
            "application/strategic-merge-patch+json" => Some(PatchType::Strategic),
            "application/apply-patch+yaml" => Some(PatchType::Apply),
            _ => None,
        }
    }

    /// What a 415 lists, as the real server's patch handler does.
    pub const ACCEPTED: &'static str = "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json";
}

/// Why a patch did not apply.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    /// The patch document itself is not valid (400).
    #[error("{0}")]
    Malformed(String),
    /// A JSON patch operation failed against the object (422).
    #[error("{0}")]
    NotApplicable(String),
    /// A strategic merge patch failed (400 or 500, see [`strategic::StrategicError`]).
    #[error(transparent)]
    Strategic(#[from] strategic::StrategicError),
}

/// Applies `body` (already known to be JSON) of type `kind` to `target`.
pub fn apply(kind: PatchType, target: &mut Value, body: &[u8]) -> Result<(), PatchError> {
    match kind {
        PatchType::Json => {
            // Through a Value, so that a field an operation repeats keeps its last value (as
            // the real server's decoding does; its strict pass reports the repeat).
            let patch: json_patch::Patch = serde_json::from_slice::<Value>(body)
                .and_then(serde_json::from_value)
                .map_err(|e| PatchError::Malformed(format!("error decoding patch: {e}")))?;
            // Applied to a copy, so a failed operation leaves `target` as it was.
            let mut patched = target.clone();
            json_patch::patch_unsafe(&mut patched, &patch)
                .map_err(|e| PatchError::NotApplicable(e.to_string()))?;
            *target = patched;
        }
        PatchType::Merge | PatchType::Strategic | PatchType::Apply => {
            let patch: Value = serde_json::from_slice(body)
                .map_err(|e| PatchError::Malformed(format!("error decoding patch: {e}")))?;
            if !patch.is_object() {
                return Err(PatchError::Malformed(
                    "error decoding patch: the patch is not a JSON object".into(),
                ));
            }
            if kind == PatchType::Strategic {
                strategic::apply(target, &patch)?;
            } else {
                merge(target, &patch);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn json_patch_is_all_or_nothing() {
        let mut v = json!({"spec": {"replicas": 1}});
        let ops = br#"[{"op":"replace","path":"/spec/replicas","value":3},{"op":"test","path":"/spec/replicas","value":9}]"#;
        assert!(matches!(
            apply(PatchType::Json, &mut v, ops),
            Err(PatchError::NotApplicable(_))
        ));
        assert_eq!(v, json!({"spec": {"replicas": 1}}));
        apply(
            PatchType::Json,
            &mut v,
            br#"[{"op":"add","path":"/spec/paused","value":true}]"#,
        )
        .unwrap();
        assert_eq!(v["spec"]["paused"], true);
        assert!(matches!(
            apply(PatchType::Json, &mut v, b"{}"),
            Err(PatchError::Malformed(_))
        ));
    }
}
