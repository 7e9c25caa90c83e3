//! kubectl-like printing: aligned tables and `kind/name` of stored objects, and the full
//! objects (fetched from the server) as `kubectl -o json|yaml` prints them, byte for byte.

use std::io::{self, Write};

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use kscope_index_views::columns::{HEALTH, TableRow};
use kscope_resources::{Kind, Timestamp};

/// `-o` formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Table,
    Wide,
    Name,
    Json,
    Yaml,
}

impl OutputFormat {
    /// Whether this format prints whole objects, which the store does not keep.
    pub fn prints_objects(self) -> bool {
        matches!(self, Self::Json | Self::Yaml)
    }
}

/// What kubectl prints for several objects (or none): a `v1` List of them.
pub fn list_of(items: Vec<Value>) -> Value {
    serde_json::json!({
        "apiVersion": "v1",
        "items": items,
        "kind": "List",
        "metadata": {"resourceVersion": ""},
    })
}

/// Prints `value` as `kubectl -o json` (`Json`) or `-o yaml` (`Yaml`) does.
pub fn write_object(out: &mut impl Write, value: &Value, format: OutputFormat) -> io::Result<()> {
    match format {
        OutputFormat::Yaml => out.write_all(super::yaml::to_yaml(value).as_bytes()),
        _ => {
            let mut serializer =
                serde_json::Serializer::with_formatter(&mut *out, GoJsonFormatter::default());
            SortedKeys(value)
                .serialize(&mut serializer)
                .map_err(io::Error::other)?;
            writeln!(out)
        }
    }
}

/// A JSON value whose object keys are written in byte order, as Go writes a map's, whatever
/// order `serde_json` keeps them in.
struct SortedKeys<'a>(&'a Value);

impl Serialize for SortedKeys<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(map) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                let mut m = serializer.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    m.serialize_entry(k, &SortedKeys(v))?;
                }
                m.end()
            }
            Value::Array(items) => serializer.collect_seq(items.iter().map(SortedKeys)),
            other => other.serialize(serializer),
        }
    }
}

/// Go's `json.MarshalIndent(v, "", "    ")`: four-space indentation, `<`, `>`, `&`, U+2028
/// and U+2029 escaped as `\u003c`..., floats in Go's shortest form.
struct GoJsonFormatter {
    pretty: serde_json::ser::PrettyFormatter<'static>,
}

impl Default for GoJsonFormatter {
    fn default() -> Self {
        Self {
            pretty: serde_json::ser::PrettyFormatter::with_indent(b"    "),
        }
    }
}

impl serde_json::ser::Formatter for GoJsonFormatter {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut rest = fragment;
        while let Some(at) = rest.find(['<', '>', '&', '\u{2028}', '\u{2029}']) {
            writer.write_all(&rest.as_bytes()[..at])?;
            let c = rest[at..].chars().next().unwrap_or('&');
            write!(writer, "\\u{:04x}", c as u32)?;
            rest = &rest[at + c.len_utf8()..];
        }
        writer.write_all(rest.as_bytes())
    }

    fn write_f64<W: ?Sized + Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        writer.write_all(super::go_numbers::go_json_float(value).as_bytes())
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.pretty.begin_array(w)
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.pretty.end_array(w)
    }
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.pretty.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.pretty.end_array_value(w)
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.pretty.begin_object(w)
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.pretty.end_object(w)
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.pretty.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.pretty.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.pretty.end_object_value(w)
    }
}

/// Prints rows under headers, columns padded like kubectl's tabwriter (3 spaces apart).
pub fn write_table(out: &mut impl Write, headers: &[&str], rows: &[Vec<String>]) -> io::Result<()> {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let header: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    let mut line = String::new();
    for row in std::iter::once(&header).chain(rows) {
        line.clear();
        for (i, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if i + 1 < row.len() {
                let pad = widths[i].saturating_sub(cell.chars().count()) + 3;
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// How a table is laid out beyond its kind's columns.
#[derive(Debug, Clone, Copy, Default)]
pub struct TableShape {
    /// kubectl's NAMESPACE column first.
    pub with_namespace: bool,
    /// Names as `kind.group/name`, as kubectl shows them when several kinds were asked for.
    pub with_kind: bool,
}

/// Prints `objects` of `kind` as a table or names (whole objects are printed by
/// [`write_object`]).
pub fn print_table<T: TableRow>(
    out: &mut impl Write,
    objects: &[std::sync::Arc<T>],
    kind: &Kind,
    format: OutputFormat,
    shape: TableShape,
) -> io::Result<()> {
    match table_cells(objects, kind, format, shape) {
        (None, names) => {
            for line in names {
                writeln!(out, "{}", line.concat())?;
            }
            Ok(())
        }
        (Some(headers), rows) => {
            let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
            write_table(out, &headers, &rows)
        }
    }
}

/// What [`print_table`] prints, before it is aligned: the headers and the cells of each
/// row, or for `-o name` no headers and one `kind/name` cell a row.
pub fn table_cells<T: TableRow>(
    objects: &[std::sync::Arc<T>],
    kind: &Kind,
    format: OutputFormat,
    shape: TableShape,
) -> (Option<Vec<String>>, Vec<Vec<String>>) {
    let prefix = kind.name_prefix();
    match format {
        OutputFormat::Name => {
            let names = objects
                .iter()
                .map(|obj| vec![format!("{prefix}/{}", obj.name())])
                .collect();
            (None, names)
        }
        OutputFormat::Table | OutputFormat::Wide | OutputFormat::Json | OutputFormat::Yaml => {
            let wide = format == OutputFormat::Wide;
            let now = Timestamp::now();
            let columns = T::columns(kind);
            // The health column is kscope's own, not one kubectl prints.
            let shown: Vec<bool> = columns
                .iter()
                .map(|c| (wide || !c.wide) && c.name != HEALTH)
                .collect();
            let name_column = columns
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case("name"));
            let mut headers: Vec<String> = Vec::new();
            if shape.with_namespace {
                headers.push("NAMESPACE".into());
            }
            headers.extend(
                columns
                    .iter()
                    .zip(&shown)
                    .filter(|(_, s)| **s)
                    .map(|(c, _)| c.name.to_string()),
            );
            let rows: Vec<Vec<String>> = objects
                .iter()
                .map(|obj| {
                    let mut row = Vec::with_capacity(headers.len());
                    if shape.with_namespace {
                        row.push(obj.namespace().unwrap_or_default().to_string());
                    }
                    let mut cells = obj.cells(&columns, now);
                    if shape.with_kind
                        && let Some(cell) = name_column.and_then(|i| cells.get_mut(i))
                    {
                        *cell = format!("{prefix}/{cell}");
                    }
                    row.extend(
                        cells
                            .into_iter()
                            .zip(&shown)
                            .filter(|(_, s)| **s)
                            .map(|(c, _)| c),
                    );
                    row
                })
                .collect();
            (Some(headers), rows)
        }
    }
}
