//! The stored object a write starts from, and the resourceVersion precondition a body sets.

use serde_json::Value;

use crate::http::status::ApiError;
use crate::http::target::Target;
use crate::resources::Resource;
use crate::store::Txn;

/// Checks a body's resourceVersion precondition against the stored object.
pub(super) fn check_resource_version(
    resource: Resource,
    name: &str,
    value: &Value,
    current: &Value,
) -> Result<(), ApiError> {
    match value["metadata"]["resourceVersion"].as_str() {
        Some(rv)
            if !rv.is_empty() && Some(rv) != current["metadata"]["resourceVersion"].as_str() =>
        {
            Err(ApiError::conflict(resource, name))
        }
        _ => Ok(()),
    }
}

pub(super) fn current_value(txn: &Txn<'_>, target: &Target, name: &str) -> Result<Value, ApiError> {
    txn.get(target.resource, &target.key(name))
        .ok_or_else(|| ApiError::not_found(target.resource, name))?
        .decode()
        .map_err(|e| ApiError::internal(&e.to_string()))
}
