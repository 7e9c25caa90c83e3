//! `kscope get -o custom-columns=HEADER:JSONPATH,...` and `-o custom-columns-file=FILE`, as
//! kubectl prints them: a header line, then one line per object, columns padded by Go's
//! tabwriter settings (at least six wide, three spaces apart), each cell the values its
//! JSONPath selects as Go's `fmt.Sprint` prints them, joined with commas, `<none>` when
//! it selects nothing. They are evaluated on the whole objects, read from the server (the
//! store keeps less); a Secret's values are masked before any path sees them.

use std::io::{self, Write};
use std::sync::Arc;

use serde_json::Value;

use kscope_client::cluster::NamespaceScope;
use kscope_client::fetch::{FetchError, fetch_list};
use kscope_index_views::jsonpath::{FieldPath, JsonPathSyntaxError, go_sprint};
use kscope_informers::keys::Key;
use kscope_resources::secret::mask_secret;
use kscope_resources::{Kind, ResourceKind};

use super::output::OutputFormat;

/// Why custom columns cannot be printed.
#[derive(Debug, thiserror::Error)]
pub enum CustomColumnsError {
    #[error("unexpected custom-columns spec: {0}, expected <header>:<json-path-expr>")]
    Spec(String),
    #[error("custom-columns {header}: {source}")]
    Path {
        header: String,
        #[source]
        source: JsonPathSyntaxError,
    },
    #[error("custom-columns-file {file}: {source}")]
    File {
        file: String,
        #[source]
        source: io::Error,
    },
    #[error(
        "custom-columns-file {file}: expected a line of headers and a line of as many \
         JSONPaths, found {headers} headers and {paths} paths"
    )]
    Template {
        file: String,
        headers: usize,
        paths: usize,
    },
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error("writing output: {0}")]
    Write(#[from] io::Error),
}

/// Columns: each a header and the JSONPath its cells come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomColumns {
    columns: Vec<(String, FieldPath)>,
}

impl CustomColumns {
    /// `NAME:.metadata.name,READY:.status...`; a path may be `{.a}`, `.a` or `a`, as
    /// kubectl's relaxed JSONPath takes it. Commas separate columns (as in kubectl, a path
    /// cannot hold one).
    pub fn parse(spec: &str) -> Result<Self, CustomColumnsError> {
        if spec.is_empty() {
            return Err(CustomColumnsError::Spec(spec.to_string()));
        }
        let columns = spec
            .split(',')
            .map(|part| {
                let (header, path) = part
                    .split_once(':')
                    .ok_or_else(|| CustomColumnsError::Spec(spec.to_string()))?;
                column(header, path)
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { columns })
    }

    /// A custom-columns file: a line of headers, then a line of as many paths, each
    /// separated by white space.
    pub fn from_template(file: &str, text: &str) -> Result<Self, CustomColumnsError> {
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        let headers: Vec<&str> = lines
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .collect();
        let paths: Vec<&str> = lines
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .collect();
        if headers.is_empty() || headers.len() != paths.len() {
            return Err(CustomColumnsError::Template {
                file: file.to_string(),
                headers: headers.len(),
                paths: paths.len(),
            });
        }
        let columns = headers
            .into_iter()
            .zip(paths)
            .map(|(header, path)| column(header, path))
            .collect::<Result<_, _>>()?;
        Ok(Self { columns })
    }

    /// The cells of `object`, in column order.
    pub fn cells(&self, object: &Value) -> Vec<String> {
        self.columns
            .iter()
            .map(|(_, path)| {
                // A path that does not fit the object (a member of a string) selects
                // nothing, as a missing member does.
                let values: Vec<String> = path
                    .find(object)
                    .unwrap_or_default()
                    .into_iter()
                    .map(go_sprint)
                    .collect();
                match values.is_empty() {
                    true => "<none>".to_string(),
                    false => values.join(","),
                }
            })
            .collect()
    }

    /// The header and a line per object, aligned as kubectl's tabwriter aligns them.
    pub fn write(&self, out: &mut impl Write, objects: &[Value]) -> io::Result<()> {
        // Go's tabwriter (minimum width 6 with the padding, padding 3) as this crate's.
        let mut tw = tabwriter::TabWriter::new(Vec::new()).minwidth(3).padding(3);
        let headers: Vec<&str> = self.columns.iter().map(|(h, _)| h.as_str()).collect();
        writeln!(tw, "{}", headers.join("\t"))?;
        for object in objects {
            // A tab or a line break in a cell would break the table.
            let cells: Vec<String> = self
                .cells(object)
                .into_iter()
                .map(|c| c.replace(['\t', '\n', '\r'], " "))
                .collect();
            writeln!(tw, "{}", cells.join("\t"))?;
        }
        tw.flush()?;
        let text = tw
            .into_inner()
            .map_err(|e| io::Error::other(e.error().to_string()))?;
        out.write_all(&text)
    }
}

fn column(header: &str, path: &str) -> Result<(String, FieldPath), CustomColumnsError> {
    let path = FieldPath::parse(path).map_err(|source| CustomColumnsError::Path {
        header: header.to_string(),
        source,
    })?;
    Ok((header.to_string(), path))
}

/// What `-o` asks `kscope get` for: a format, or custom columns (printed as a table is,
/// from the whole objects).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetOutput {
    pub format: OutputFormat,
    pub columns: Option<Arc<CustomColumns>>,
}

impl GetOutput {
    /// Parses `-o`: `table`, `wide`, `name`, `json`, `custom-columns=SPEC` or
    /// `custom-columns-file=FILE` (read now, so that a bad file fails before connecting).
    pub fn parse(value: &str) -> Result<Self, String> {
        let columns = if let Some(spec) = value.strip_prefix("custom-columns=") {
            CustomColumns::parse(spec)
        } else if let Some(file) = value.strip_prefix("custom-columns-file=") {
            std::fs::read_to_string(file)
                .map_err(|source| CustomColumnsError::File {
                    file: file.to_string(),
                    source,
                })
                .and_then(|text| CustomColumns::from_template(file, &text))
        } else {
            return <OutputFormat as clap::ValueEnum>::from_str(value, false).map(|format| Self {
                format,
                columns: None,
            });
        };
        columns.map_err(|e| e.to_string()).map(|c| Self {
            format: OutputFormat::Table,
            columns: Some(Arc::new(c)),
        })
    }
}

/// Reads the whole objects of `kind` in `scope` from the server (with the command's label
/// and field selectors), keeps those whose keys the store selected, in the order of `keys`,
/// and prints them in `columns`. Secrets are masked first.
pub async fn print_selected(
    out: &mut impl Write,
    columns: &CustomColumns,
    client: &kube::Client,
    (kind, scope): (&Kind, &NamespaceScope),
    selectors: (Option<&str>, Option<&str>),
    keys: &[Key],
) -> Result<(), CustomColumnsError> {
    let namespace = scope.namespace().filter(|_| kind.namespaced());
    let mut query = form_urlencoded::Serializer::new(String::new());
    if let Some(selector) = selectors.0.filter(|s| !s.is_empty()) {
        query.append_pair("labelSelector", selector);
    }
    if let Some(selector) = selectors.1.filter(|s| !s.is_empty()) {
        query.append_pair("fieldSelector", selector);
    }
    let query = query.finish();
    let mut uri = kind.list_path(namespace);
    if !query.is_empty() {
        uri = format!("{uri}?{query}");
    }
    let items = fetch_list(client, uri, kind.to_string()).await?;
    let mut by_key: std::collections::HashMap<String, Value> = items
        .into_iter()
        .map(|item| {
            let name = item.pointer("/metadata/name").and_then(Value::as_str);
            let ns = item.pointer("/metadata/namespace").and_then(Value::as_str);
            let key = match (ns, name) {
                (Some(ns), Some(name)) => format!("{ns}/{name}"),
                (None, Some(name)) => name.to_string(),
                _ => String::new(),
            };
            (key, item)
        })
        .collect();
    let mut objects: Vec<Value> = keys
        .iter()
        .filter_map(|key| by_key.remove(key.as_ref()))
        .collect();
    if *kind == ResourceKind::Secrets {
        for object in &mut objects {
            mask_secret(object);
        }
    }
    columns.write(out, &objects)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn printed(columns: &CustomColumns, objects: &[Value]) -> String {
        let mut out = Vec::new();
        columns.write(&mut out, objects).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn prints_as_kubectl_does() {
        let columns = CustomColumns::parse(
            "NAME:.metadata.name,R:{.status.conditions[?(@.type==\"Ready\")].status},IMAGES:.spec.containers[*].image,X:.spec.none",
        )
        .unwrap();
        let objects = [
            json!({"metadata": {"name": "web-1"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]},
                   "spec": {"containers": [{"image": "a:1"}, {"image": "b:2"}]}}),
            json!({"metadata": {"name": "db"}, "spec": {}}),
        ];
        assert_eq!(
            printed(&columns, &objects),
            "NAME    R        IMAGES    X\n\
             web-1   True     a:1,b:2   <none>\n\
             db      <none>   <none>    <none>\n"
        );
        // Maps and lists as Go's fmt prints them; numbers as kubectl decoded them.
        let columns = CustomColumns::parse("L:.metadata.labels,N:.spec.n,F:.spec.f").unwrap();
        let object =
            json!({"metadata": {"labels": {"b": "2", "a": "1"}}, "spec": {"n": 3, "f": 0.5}});
        assert_eq!(columns.cells(&object), ["map[a:1 b:2]", "3", "0.5"]);
    }

    #[test]
    fn specs_and_templates_that_do_not_parse() {
        assert!(matches!(
            CustomColumns::parse("NAME"),
            Err(CustomColumnsError::Spec(_))
        ));
        assert!(matches!(
            CustomColumns::parse("NAME:.metadata["),
            Err(CustomColumnsError::Path { .. })
        ));
        let t =
            CustomColumns::from_template("f", "NAME   NS\n.metadata.name .metadata.namespace\n")
                .unwrap();
        assert_eq!(
            t,
            CustomColumns::parse("NAME:.metadata.name,NS:.metadata.namespace").unwrap()
        );
        assert!(matches!(
            CustomColumns::from_template("f", "A B\n.a\n"),
            Err(CustomColumnsError::Template {
                headers: 2,
                paths: 1,
                ..
            })
        ));
        assert_eq!(GetOutput::parse("json").unwrap().format, OutputFormat::Json);
        assert!(
            GetOutput::parse("custom-columns=A:.a")
                .unwrap()
                .columns
                .is_some()
        );
        assert!(GetOutput::parse("jsn").is_err());
    }
}
