//! The server's Table form (`meta.k8s.io/v1` Table, as `kubectl get` asks for it), which is
//! how built-in kinds without a hand-written projection are listed and watched: their
//! columns are Go printers in the API server, which only the server can print, so kscope
//! shows exactly what kubectl shows. Custom resources are read as plain JSON with their
//! printer columns evaluated client-side instead (see [`super::printer_columns`]), unless
//! their CRD cannot be read. Each row carries its whole object (`includeObject=Object`), of
//! which the generic projection keeps the metadata and the conditions. docs/benchmarks.md
//! has the measurements behind the choice.
//!
//! A list answer is one Table whose rows are the items; a watch event's object is a Table
//! of one row.

use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::sync::Arc;

use super::wire::DecodeFailure;
use kscope_informers::lister_watcher::ListPage;
use kscope_resources::{ApiResource, ColumnDefinition, KubeResource, decode_object};

/// kubectl's Accept for tables, with plain JSON as the fallback a server without Table
/// support answers in (a generic projection decodes that too, without cells).
pub const TABLE_ACCEPT: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

#[derive(Deserialize)]
struct WireTable<'a> {
    #[serde(default)]
    metadata: Option<WireListMeta>,
    #[serde(default, rename = "columnDefinitions")]
    column_definitions: Option<Vec<ColumnDefinition>>,
    #[serde(borrow, default)]
    rows: Option<Vec<&'a RawValue>>,
    /// A server that answered in plain JSON after all.
    #[serde(borrow, default)]
    items: Option<Vec<&'a RawValue>>,
}

#[derive(Deserialize)]
struct WireListMeta {
    #[serde(default, rename = "resourceVersion")]
    resource_version: Option<String>,
    #[serde(default, rename = "continue")]
    continue_token: Option<String>,
}

/// Decodes a list page in Table form: each row into `T` (one that does not decode is
/// skipped and reported, as in the plain form), the columns learned into `resource`.
pub fn decode_table_list<T: KubeResource>(
    body: &[u8],
    resource: &ApiResource,
) -> Result<ListPage<T>, serde_json::Error> {
    let table: WireTable<'_> = serde_json::from_slice(body)?;
    if let Some(columns) = &table.column_definitions {
        resource.learn_columns(columns);
    }
    let raw = table.rows.or(table.items).unwrap_or_default();
    let mut items = Vec::with_capacity(raw.len());
    let mut malformed = Vec::new();
    for (index, row) in raw.into_iter().enumerate() {
        match decode_object::<T>(row.get().as_bytes()) {
            Ok(obj) => items.push(Arc::new(obj)),
            Err(e) => malformed.push(format!("table row {index}: {}", DecodeFailure::from(e))),
        }
    }
    let meta = table.metadata;
    Ok(ListPage {
        items,
        resource_version: meta
            .as_ref()
            .and_then(|m| m.resource_version.clone())
            .unwrap_or_default(),
        continue_token: meta
            .and_then(|m| m.continue_token)
            .filter(|c| !c.is_empty()),
        malformed,
    })
}

#[derive(Deserialize)]
struct ColumnsOnly {
    #[serde(default, rename = "columnDefinitions")]
    column_definitions: Option<Vec<ColumnDefinition>>,
}

/// Learns the columns of a watch event's one-row Table into `resource` while none are
/// known (a watch-list starts with no list answer to learn them from).
pub fn learn_columns(table: &[u8], resource: &ApiResource) {
    if !resource.columns().is_empty() {
        return;
    }
    let read = kscope_resources::decode::from_slice::<ColumnsOnly>(table);
    if let Ok(ColumnsOnly {
        column_definitions: Some(columns),
    }) = read
    {
        resource.learn_columns(&columns);
    }
}

#[derive(Deserialize)]
struct OneRow<'a> {
    #[serde(borrow)]
    rows: Vec<RowObject<'a>>,
}

#[derive(Deserialize)]
struct RowObject<'a> {
    #[serde(borrow)]
    object: &'a RawValue,
}

/// The object of a one-row Table, as a slice of it: what the delta tap keeps of a watch
/// event in Table form. Anything else is kept whole.
pub fn row_object(table: &Bytes) -> Bytes {
    match serde_json::from_slice::<OneRow<'_>>(table) {
        Ok(one) if one.rows.len() == 1 => table.slice_ref(one.rows[0].object.get().as_bytes()),
        _ => table.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kscope_informers::object::Object as _;
    use kscope_resources::GenericObject;

    fn widgets() -> ApiResource {
        ApiResource::new(
            "example.com",
            "v1",
            "widgets",
            "widget",
            "Widget",
            true,
            vec![],
            vec![],
            vec![],
        )
    }

    #[test]
    fn a_table_page_gives_rows_columns_and_skips_a_bad_row() {
        let body = br#"{"kind":"Table","apiVersion":"meta.k8s.io/v1",
            "metadata":{"resourceVersion":"12","continue":"next"},
            "columnDefinitions":[{"name":"Name","type":"string","format":"name","priority":0},
                {"name":"Color","type":"string","priority":1}],
            "rows":[{"cells":["a","red"],"object":{"metadata":{"name":"a","namespace":"n"}}},
                {"cells":["b","blue"],"object":{"metadata":{"name":7}}}]}"#;
        let resource = widgets();
        let page = decode_table_list::<GenericObject>(body, &resource).unwrap();
        assert_eq!(page.items.len(), 1);
        assert_eq!(page.items[0].name(), "a");
        assert_eq!(page.items[0].cell(1), Some("red"));
        assert_eq!(page.malformed.len(), 1);
        assert_eq!(page.resource_version, "12");
        assert_eq!(page.continue_token.as_deref(), Some("next"));
        let columns = resource.columns();
        assert_eq!(columns.len(), 2);
        assert_eq!(
            (columns[1].name.as_str(), columns[1].priority),
            ("Color", 1)
        );
    }

    #[test]
    fn a_watch_event_keeps_its_row_object_and_teaches_the_columns() {
        let table = Bytes::from_static(
            br#"{"kind":"Table","columnDefinitions":[{"name":"Name","type":"string"}],"rows":[{"cells":["a"],"object":{"metadata":{"name":"a"}}}]}"#,
        );
        assert_eq!(&row_object(&table)[..], br#"{"metadata":{"name":"a"}}"#);
        let resource = widgets();
        learn_columns(&table, &resource);
        assert_eq!(resource.columns()[0].name, "Name");
        let plain = Bytes::from_static(br#"{"metadata":{"name":"a"}}"#);
        assert_eq!(row_object(&plain), plain);
    }
}
