//! A request's query parameters.

use std::collections::HashMap;

use axum::extract::Query;
use axum::http::Uri;

use super::status::ApiError;

/// Query parameters, first value of each wins.
pub(crate) struct Params(pub(super) HashMap<String, String>);

impl Params {
    pub(super) fn from_uri(uri: &Uri) -> Result<Self, ApiError> {
        let pairs = Query::<Vec<(String, String)>>::try_from_uri(uri)
            .map_err(|e| ApiError::bad_request(format!("invalid query: {e}")))?;
        let mut map = HashMap::new();
        for (k, v) in pairs.0 {
            map.entry(k).or_insert(v);
        }
        Ok(Self(map))
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// `true`, `1` (as Go's strconv.ParseBool accepts) are true.
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.get(name), Some("true" | "1" | "True" | "TRUE" | "t"))
    }
}
