//! A custom resource's printer columns, read from its CustomResourceDefinition: the CRD's
//! `additionalPrinterColumns` for the version served (or, when it declares none, the API
//! server's default AGE column), after the NAME column every custom resource's table has.
//! With them kscope lists and watches custom resources as plain JSON and prints their
//! cells itself (see [`kscope_resources::ClientColumns`]), rather than have the server
//! print Tables: docs/benchmarks.md has the measurements behind the choice.

use std::sync::Arc;

use serde::Deserialize;

use kscope_resources::{
    ApiResource, ClientColumns, ColumnDefinition, FieldIndexes, PrinterColumn,
    PrinterColumnCompiler,
};

/// The CRD of a custom resource, of which only the printer columns are read.
#[derive(Deserialize)]
struct WireCrd {
    spec: WireSpec,
}

#[derive(Deserialize)]
struct WireSpec {
    group: String,
    names: WireNames,
    #[serde(default)]
    versions: Vec<WireVersion>,
}

#[derive(Deserialize)]
struct WireNames {
    plural: String,
}

#[derive(Deserialize)]
struct WireVersion {
    name: String,
    #[serde(default, rename = "additionalPrinterColumns")]
    columns: Option<Vec<WireColumn>>,
}

#[derive(Deserialize)]
struct WireColumn {
    name: String,
    #[serde(rename = "type")]
    type_: String,
    #[serde(default)]
    format: String,
    #[serde(default)]
    priority: i32,
    #[serde(rename = "jsonPath")]
    json_path: String,
}

/// The path of the CRD that would serve `resource`: `{plural}.{group}`. None for the core
/// group, which no CRD serves.
pub(crate) fn crd_path(resource: &ApiResource) -> Option<String> {
    (!resource.group.is_empty()).then(|| {
        format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{}.{}",
            resource.plural, resource.group
        )
    })
}

/// Why a CRD's printer columns cannot be evaluated client-side.
#[derive(Debug, thiserror::Error)]
pub enum PrinterColumnsError {
    #[error("the CRD does not decode: {0}")]
    Malformed(#[source] serde_json::Error),
    #[error("the CRD is for {found}, not {wanted}")]
    OtherResource { found: String, wanted: String },
    #[error("the CRD does not serve version {0}")]
    NoSuchVersion(String),
    #[error("printer column {column:?}: its JSONPath {path:?} does not parse: {message}")]
    Path {
        column: String,
        path: String,
        message: String,
    },
}

/// The Table's column definitions (NAME first) and the columns evaluated after the name.
struct CrdColumns {
    definitions: Vec<ColumnDefinition>,
    columns: Vec<Arc<dyn PrinterColumn>>,
}

/// What decoding `resource`'s objects evaluates, from its CRD (`crd`, as JSON): its printer
/// columns compiled with `compiler`, and `fields`. The columns' definitions are learned
/// into `resource`, for the table's headers.
pub fn client_columns(
    crd: &[u8],
    resource: &ApiResource,
    compiler: &dyn PrinterColumnCompiler,
    fields: Option<FieldIndexes>,
) -> Result<Arc<ClientColumns>, PrinterColumnsError> {
    let crd = crd_columns(crd, resource, compiler)?;
    resource.learn_columns(&crd.definitions);
    Ok(Arc::new(ClientColumns::new(crd.columns, fields)))
}

/// The printer columns `crd` (a CRD's JSON) gives `resource`'s version, compiled with
/// `compiler`.
fn crd_columns(
    crd: &[u8],
    resource: &ApiResource,
    compiler: &dyn PrinterColumnCompiler,
) -> Result<CrdColumns, PrinterColumnsError> {
    let crd: WireCrd = serde_json::from_slice(crd).map_err(PrinterColumnsError::Malformed)?;
    if (crd.spec.group.as_str(), crd.spec.names.plural.as_str())
        != (resource.group.as_str(), resource.plural.as_str())
    {
        return Err(PrinterColumnsError::OtherResource {
            found: format!("{}.{}", crd.spec.names.plural, crd.spec.group),
            wanted: resource.group_resource(),
        });
    }
    let version = crd
        .spec
        .versions
        .into_iter()
        .find(|v| v.name == resource.version)
        .ok_or_else(|| PrinterColumnsError::NoSuchVersion(resource.version.clone()))?;
    let declared = version.columns.filter(|c| !c.is_empty());
    // The API server's default when a version declares none.
    let declared = declared.unwrap_or_else(|| {
        vec![WireColumn {
            name: "Age".into(),
            type_: "date".into(),
            format: String::new(),
            priority: 0,
            json_path: ".metadata.creationTimestamp".into(),
        }]
    });
    let mut definitions = vec![ColumnDefinition {
        name: "Name".into(),
        type_: "string".into(),
        format: "name".into(),
        priority: 0,
    }];
    let mut columns = Vec::with_capacity(declared.len());
    for c in declared {
        let column = compiler
            .compile(&c.type_, &c.json_path)
            .map_err(|message| PrinterColumnsError::Path {
                column: c.name.clone(),
                path: c.json_path.clone(),
                message,
            })?;
        columns.push(column);
        definitions.push(ColumnDefinition {
            name: c.name,
            type_: c.type_,
            format: c.format,
            priority: c.priority,
        });
    }
    Ok(CrdColumns {
        definitions,
        columns,
    })
}
