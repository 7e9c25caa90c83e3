//! GET of collections (paginated lists at one snapshot) and of single objects. A list page
//! is the concatenation of the items' stored JSON: nothing is re-encoded.

use std::time::Duration;

use axum::response::Response;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::{BufMut, BytesMut};
use serde::{Deserialize, Serialize};

use super::params::Params;
use super::status::{ApiError, json_body};
use super::table::{self, IncludeObject};
use super::target::Target;
use crate::Shared;
use crate::object::StoredObject;
use crate::selectors::{FieldSelector, LabelSelector};
use crate::store::{ReadAt, StoreError};

/// How long a list for a not-yet-reached resourceVersion waits before a 504, as the real
/// server does.
const TOO_NEW_WAIT: Duration = Duration::from_secs(3);

/// The continue token: the snapshot RV and the first key of the next page.
#[derive(Serialize, Deserialize)]
struct ContinueToken {
    v: String,
    rv: u64,
    start: String,
}

fn encode_continue(rv: u64, start: &str) -> String {
    let token = ContinueToken {
        v: "meta.k8s.io/v1".into(),
        rv,
        start: start.to_string(),
    };
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(&token).unwrap_or_default())
}

fn decode_continue(text: &str) -> Result<ContinueToken, ApiError> {
    let bad = |why: String| ApiError::bad_request(format!("continue key is not valid: {why}"));
    let bytes = URL_SAFE_NO_PAD
        .decode(text.trim_end_matches('='))
        .map_err(|e| bad(e.to_string()))?;
    let token: ContinueToken = serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
    if token.v != "meta.k8s.io/v1" {
        return Err(bad(
            "incorrect encoded start resourceVersion (version meta.k8s.io/v1)".into(),
        ));
    }
    Ok(token)
}

/// Parses `resourceVersion`: `None` when unset.
pub(super) fn parse_rv(params: &Params) -> Result<Option<u64>, ApiError> {
    params
        .get("resourceVersion")
        .map(|rv| {
            rv.parse::<u64>()
                .map_err(|e| ApiError::bad_request(format!("invalid resource version: {e}")))
        })
        .transpose()
}

/// Label and field selectors as one filter over (key, object).
pub(super) struct Filter {
    labels: LabelSelector,
    fields: FieldSelector,
}

impl Filter {
    pub fn parse(target: &Target, params: &Params) -> Result<Self, ApiError> {
        let labels = LabelSelector::parse(params.get("labelSelector").unwrap_or(""))
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        let fields =
            FieldSelector::parse(target.resource, params.get("fieldSelector").unwrap_or(""))
                .map_err(|e| ApiError::bad_request(e.to_string()))?;
        Ok(Self { labels, fields })
    }

    pub fn matches(&self, key: &str, object: &StoredObject) -> bool {
        if !self.labels.is_empty() && !self.labels.matches(&object.labels) {
            return false;
        }
        if self.fields.is_empty() {
            return true;
        }
        let (namespace, name) = key.split_once('/').unwrap_or(("", key));
        self.fields.matches(namespace, name, object)
    }
}

fn read_at(params: &Params, limit: Option<usize>) -> Result<(ReadAt, Option<String>), ApiError> {
    let rv = parse_rv(params)?;
    let exact = match params.get("resourceVersionMatch") {
        None => None,
        Some("Exact") => Some(true),
        Some("NotOlderThan") => Some(false),
        Some(other) => {
            return Err(ApiError::invalid(
                "ListOptions",
                "",
                "resourceVersionMatch",
                "FieldValueNotSupported",
                &format!("\"{other}\": supported values: \"Exact\", \"NotOlderThan\""),
            ));
        }
    };
    if let Some(token) = params.get("continue") {
        if rv.is_some() {
            return Err(ApiError::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        let token = decode_continue(token)?;
        return Ok((ReadAt::Exact(token.rv), Some(token.start)));
    }
    let at = match (rv, exact) {
        (None, Some(_)) => {
            return Err(ApiError::invalid(
                "ListOptions",
                "",
                "resourceVersionMatch",
                "FieldValueForbidden",
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        (Some(0), Some(true)) => {
            return Err(ApiError::invalid(
                "ListOptions",
                "",
                "resourceVersionMatch",
                "FieldValueForbidden",
                "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
        (None | Some(0), _) => ReadAt::Latest,
        (Some(rv), Some(true)) => ReadAt::Exact(rv),
        (Some(rv), Some(false)) => ReadAt::NotOlderThan(rv),
        (Some(rv), None) if limit.is_some() => ReadAt::Exact(rv),
        (Some(rv), None) => ReadAt::NotOlderThan(rv),
    };
    Ok((at, None))
}

pub(crate) async fn list(
    shared: &Shared,
    target: &Target,
    params: &Params,
    as_table: Option<IncludeObject>,
    metadata_only: bool,
) -> Result<Response, ApiError> {
    let filter = Filter::parse(target, params)?;
    let limit = match params.get("limit") {
        None => None,
        Some(text) => match text.parse::<i64>() {
            Ok(n) if n > 0 => Some(n as usize),
            Ok(_) => None,
            Err(e) => return Err(ApiError::bad_request(format!("invalid limit: {e}"))),
        },
    };
    let (at, start) = read_at(params, limit)?;
    let delay = shared.faults.read().list_delay;
    if let Some(delay) = delay {
        tokio::time::sleep(delay).await;
    }
    let prefix = target.prefix();
    let run = || {
        shared.store.list(
            target.resource,
            at,
            &prefix,
            start.as_deref(),
            limit,
            &|k, o| filter.matches(k, o),
        )
    };
    let page = match run() {
        Err(StoreError::TooNew { .. }) => {
            let mut changes = shared.store.subscribe();
            let _ = tokio::time::timeout(TOO_NEW_WAIT, async {
                while run().is_err() {
                    if changes.changed().await.is_err() {
                        break;
                    }
                }
            })
            .await;
            run()
        }
        other => other,
    };
    let page = page.map_err(|e| match (e, start.is_some()) {
        (StoreError::TooOld { .. }, true) => ApiError::continue_expired(encode_continue(
            shared.store.position().rv,
            start.as_deref().unwrap_or(""),
        )),
        (StoreError::TooOld { requested, oldest }, false) => ApiError::expired(format!(
            "The resourceVersion for the provided list is too old: {requested} ({oldest})"
        )),
        (other, _) => other.into(),
    })?;
    let continue_token = page
        .next_key
        .as_deref()
        .map(|k| encode_continue(page.rv, k));
    if let Some(include) = as_table {
        let items: Vec<&StoredObject> = page.items.iter().map(|o| o.as_ref()).collect();
        return Ok(json_body(table::table(
            target.resource,
            include,
            &items,
            Some(page.rv),
            continue_token.as_deref(),
        )));
    }
    if metadata_only {
        let items = page
            .items
            .iter()
            .map(|o| partial_metadata(o))
            .collect::<Result<Vec<_>, _>>()?;
        let mut metadata = serde_json::json!({"resourceVersion": page.rv.to_string()});
        if let Some(token) = continue_token {
            metadata["continue"] = serde_json::json!(token);
        }
        let list = serde_json::json!({
            "kind": "PartialObjectMetadataList",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": metadata,
            "items": items,
        });
        return Ok(json_body(list.to_string()));
    }
    let size: usize = page.items.iter().map(|o| o.json.len() + 1).sum();
    let mut body = BytesMut::with_capacity(size + 256);
    body.put_slice(b"{\"kind\":\"");
    body.put_slice(target.resource.list_kind().as_bytes());
    body.put_slice(b"\",\"apiVersion\":\"");
    body.put_slice(target.resource.api_version().as_bytes());
    body.put_slice(b"\",\"metadata\":{\"resourceVersion\":\"");
    body.put_slice(page.rv.to_string().as_bytes());
    body.put_slice(b"\"");
    if let Some(token) = continue_token {
        body.put_slice(b",\"continue\":\"");
        body.put_slice(token.as_bytes());
        body.put_slice(b"\"");
    }
    body.put_slice(b"},\"items\":[");
    for (i, item) in page.items.iter().enumerate() {
        if i > 0 {
            body.put_u8(b',');
        }
        body.put_slice(&item.json);
    }
    body.put_slice(b"]}");
    Ok(json_body(body.freeze()))
}

pub(crate) fn get(
    shared: &Shared,
    target: &Target,
    as_table: Option<IncludeObject>,
    metadata_only: bool,
) -> Result<Response, ApiError> {
    let name = target.name.as_deref().unwrap_or("");
    let object = shared
        .store
        .get(target.resource, &target.key(name))
        .ok_or_else(|| ApiError::not_found(target.resource, name))?;
    if let Some(include) = as_table {
        return Ok(json_body(table::table(
            target.resource,
            include,
            &[&object],
            None,
            None,
        )));
    }
    if metadata_only {
        return Ok(json_body(partial_metadata(&object)?.to_string()));
    }
    Ok(json_body(object.json.clone()))
}

/// Only the metadata of an object: what `as=PartialObjectMetadata` asks for.
#[derive(Deserialize)]
struct OnlyMetadata<'a> {
    #[serde(borrow)]
    metadata: &'a serde_json::value::RawValue,
}

fn partial_metadata(object: &StoredObject) -> Result<serde_json::Value, ApiError> {
    let only: OnlyMetadata<'_> =
        serde_json::from_slice(&object.json).map_err(|e| ApiError::internal(&e.to_string()))?;
    let metadata: serde_json::Value = serde_json::from_str(only.metadata.get())
        .map_err(|e| ApiError::internal(&e.to_string()))?;
    Ok(serde_json::json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
    }))
}
