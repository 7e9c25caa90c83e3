//! What follows a write: its response, and the controllers' notice of the change.

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::Shared;
use crate::crd;
use crate::http::status::{ApiError, json_body};
use crate::http::target::Target;
use crate::resources::Resource;
use crate::store::Txn;

use super::body::WriteOptions;

pub(super) fn respond(code: StatusCode, json: Bytes) -> Response {
    (code, json_body(json)).into_response()
}

/// Tells the controllers a client changed `name` (a dry run changes nothing).
pub(super) fn wrote(shared: &Shared, target: &Target, options: &WriteOptions, name: &str) {
    if !options.dry_run {
        shared
            .controllers
            .client_wrote(target.resource, &target.key(name));
    }
}

/// A write to a CustomResourceDefinition changes what is served, in the same transaction.
pub(super) fn follow_definitions(
    txn: &mut Txn<'_>,
    target: &Target,
    name: &str,
) -> Result<(), ApiError> {
    if target.resource != Resource::CustomResourceDefinitions {
        return Ok(());
    }
    let cluster = txn.cluster();
    crd::reconcile(txn, cluster, name).map_err(|e| ApiError::internal(&e.to_string()))
}
