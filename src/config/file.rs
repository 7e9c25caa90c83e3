//! One configuration file: its sections as written, parsed with their positions, and merged
//! into the configuration being built.

use std::fmt;
use std::path::PathBuf;

use serde::Deserialize;
use serde::de::{MapAccess, Visitor};
use serde_saphyr::{Location, Spanned};

use kscope_index_views::definitions::{IndexDefinition, IndexField, IndexSource, check_path_kinds};
use kscope_index_views::jsonpath::FieldPath;

use crate::error::ConfigError;
use crate::keys::{KeymapBuilder, Origin, Section};
use crate::settings::{ActionSettings, InformerSettings, LogSettings, WriteSettings};
use kscope_index_views::usage::UsageSettings;

/// Merges one file's sections into the configuration being built.
pub(crate) fn merge(
    indexes: &mut Vec<IndexDefinition>,
    keymap: &mut KeymapBuilder,
    (informers, logs, metrics, writes, actions): (
        &mut InformerSettings,
        &mut LogSettings,
        &mut UsageSettings,
        &mut WriteSettings,
        &mut ActionSettings,
    ),
    file: &str,
    text: &str,
) -> Result<(), ConfigError> {
    let parsed = parse(file, text)?;
    if let Some(readwrite) = parsed.readwrite {
        writes.readwrite = readwrite;
    }
    for (name, context) in parsed.contexts.map(|s| s.0).unwrap_or_default() {
        match context.readwrite {
            Some(readwrite) => writes.contexts.insert(name.value, readwrite),
            None => writes.contexts.remove(&name.value),
        };
    }
    if let Some(command) = parsed.shell.and_then(|s| s.command) {
        if command.value.is_empty() {
            return Err(ConfigError::Invalid {
                file: file.to_string(),
                line: command.referenced.line(),
                column: command.referenced.column(),
                key: Some("shell.command".to_string()),
                message: "needs at least one command".to_string(),
            });
        }
        actions.shell = command.value;
    }
    if let Some(section) = parsed.logs {
        section.merge(file, logs)?;
    }
    if let Some(section) = parsed.metrics {
        section.merge(file, metrics)?;
    }
    if let Some(section) = parsed.informers {
        let invalid = |at: Location, key: &str, message: String| ConfigError::Invalid {
            file: file.to_string(),
            line: at.line(),
            column: at.column(),
            key: Some(format!("informers.{key}")),
            message,
        };
        if let Some(fifo) = section.fifo {
            informers.fifo =
                fifo.value
                    .parse()
                    .map_err(|e: kscope_informers::fifo::UnknownFifo| {
                        invalid(fifo.referenced, "fifo", e.to_string())
                    })?;
        }
        if let Some(mode) = section.initial_list {
            informers.initial_list = mode.value.parse().map_err(
                |e: kscope_informers::reflector::UnknownInitialListMode| {
                    invalid(mode.referenced, "initialList", e.to_string())
                },
            )?;
        }
    }
    for (name, spec) in parsed.indexes.map(|s| s.0).unwrap_or_default() {
        // `name: null` removes the index (a built-in one, or one an earlier file added).
        let Some(spec) = spec else {
            indexes.retain(|d| d.name != name.value);
            continue;
        };
        let definition = spec.definition(file, text, &name)?;
        match indexes.iter_mut().find(|d| d.name == definition.name) {
            Some(existing) => *existing = definition,
            None => indexes.push(definition),
        }
    }
    keymap.next_layer();
    let origin = |at: Location| Origin {
        file: file.to_string(),
        line: at.line(),
        column: at.column(),
    };
    for (section, actions) in parsed.keys.map(KeysSection::sections).unwrap_or_default() {
        for (action, specs) in actions.0 {
            let specs = specs
                .into_iter()
                .map(|k| (k.value, origin(k.referenced)))
                .collect();
            keymap.bind(section, &action.value, origin(action.referenced), specs)?;
        }
    }
    Ok(())
}

/// One configuration file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    indexes: Option<Entries<Option<IndexSpec>>>,
    #[serde(default)]
    keys: Option<KeysSection>,
    #[serde(default)]
    informers: Option<InformersSection>,
    #[serde(default)]
    logs: Option<LogsSection>,
    #[serde(default)]
    metrics: Option<MetricsSection>,
    /// Whether kscope may write to clusters (default: no).
    #[serde(default)]
    readwrite: Option<bool>,
    /// Per kube context settings, over the file's own.
    #[serde(default)]
    contexts: Option<Entries<ContextSection>>,
    #[serde(default)]
    shell: Option<ShellSection>,
}

/// `contexts: NAME:` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ContextSection {
    /// This context's write mode; absent, the default's.
    readwrite: Option<bool>,
}

/// `metrics:` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MetricsSection {
    poll: Option<Spanned<String>>,
    timeout: Option<Spanned<String>>,
    scrape: Option<Spanned<String>>,
}

impl MetricsSection {
    fn merge(self, file: &str, metrics: &mut UsageSettings) -> Result<(), ConfigError> {
        let duration = |value: Spanned<String>, key: &str| {
            kscope_units::duration::parse_duration(&value.value).map_err(|message| {
                ConfigError::Invalid {
                    file: file.to_string(),
                    line: value.referenced.line(),
                    column: value.referenced.column(),
                    key: Some(format!("metrics.{key}")),
                    message,
                }
            })
        };
        if let Some(poll) = self.poll {
            metrics.poll = duration(poll, "poll")?;
        }
        if let Some(timeout) = self.timeout {
            metrics.timeout = duration(timeout, "timeout")?;
        }
        if let Some(scrape) = self.scrape {
            let (line, column) = (scrape.referenced.line(), scrape.referenced.column());
            let interval = duration(scrape, "scrape")?;
            if interval.is_zero() {
                return Err(ConfigError::Invalid {
                    file: file.to_string(),
                    line,
                    column,
                    key: Some("metrics.scrape".into()),
                    message: "a scrape interval must be more than zero".into(),
                });
            }
            metrics.scrape = interval;
        }
        Ok(())
    }
}

/// `shell:` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ShellSection {
    command: Option<Spanned<Vec<String>>>,
}

/// `logs:` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct LogsSection {
    capacity: Option<Spanned<u64>>,
    tail_lines: Option<Spanned<u64>>,
    max_line_bytes: Option<Spanned<u64>>,
    save_dir: Option<String>,
}

/// Bounds that keep a log view's memory within what a terminal needs: 10 million lines of
/// at most 1 MiB.
const MAX_LOG_CAPACITY: u64 = 10_000_000;
const MAX_LOG_LINE: u64 = 1 << 20;

impl LogsSection {
    fn merge(self, file: &str, logs: &mut LogSettings) -> Result<(), ConfigError> {
        let check = |value: Spanned<u64>, key: &str, max: u64| {
            if (1..=max).contains(&value.value) {
                Ok(value.value)
            } else {
                Err(ConfigError::Invalid {
                    file: file.to_string(),
                    line: value.referenced.line(),
                    column: value.referenced.column(),
                    key: Some(format!("logs.{key}")),
                    message: format!("must be between 1 and {max}"),
                })
            }
        };
        let to_usize = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        if let Some(v) = self.capacity {
            logs.capacity = to_usize(check(v, "capacity", MAX_LOG_CAPACITY)?);
        }
        if let Some(v) = self.tail_lines {
            logs.tail_lines = check(v, "tailLines", MAX_LOG_CAPACITY)?;
        }
        if let Some(v) = self.max_line_bytes {
            logs.max_line_bytes = to_usize(check(v, "maxLineBytes", MAX_LOG_LINE)?);
        }
        if let Some(dir) = self.save_dir {
            logs.save_dir = Some(PathBuf::from(dir));
        }
        Ok(())
    }
}

/// `informers:` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct InformersSection {
    fifo: Option<Spanned<String>>,
    initial_list: Option<Spanned<String>>,
}

/// A map in file order, with where each name was written.
#[derive(Debug)]
struct Entries<V>(Vec<(Spanned<String>, V)>);

impl<V> Default for Entries<V> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Entries<V> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct InOrder<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for InOrder<V> {
            type Value = Entries<V>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map of names to entries")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some(name) = map.next_key::<Spanned<String>>()? {
                    entries.push((name, map.next_value()?));
                }
                Ok(Entries(entries))
            }
        }
        d.deserialize_map(InOrder(std::marker::PhantomData))
    }
}

/// An action's keys as written: `down: [j, down]`.
type KeyList = Vec<Spanned<String>>;

/// `keys:`, one map of action name to keys per section.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeysSection {
    normal: Option<Entries<KeyList>>,
    deltas: Option<Entries<KeyList>>,
    filter: Option<Entries<KeyList>>,
    help: Option<Entries<KeyList>>,
    indexes: Option<Entries<KeyList>>,
    detail: Option<Entries<KeyList>>,
    command: Option<Entries<KeyList>>,
    logs: Option<Entries<KeyList>>,
    confirm: Option<Entries<KeyList>>,
    forwards: Option<Entries<KeyList>>,
}

impl KeysSection {
    fn sections(self) -> Vec<(Section, Entries<KeyList>)> {
        [
            (Section::Normal, self.normal),
            (Section::Deltas, self.deltas),
            (Section::Filter, self.filter),
            (Section::Help, self.help),
            (Section::Indexes, self.indexes),
            (Section::Detail, self.detail),
            (Section::Command, self.command),
            (Section::Logs, self.logs),
            (Section::Confirm, self.confirm),
            (Section::Forwards, self.forwards),
        ]
        .into_iter()
        .filter_map(|(section, entries)| Some((section, entries?)))
        .collect()
    }
}

/// One index: exactly one of the three sources, and the kinds it applies to.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct IndexSpec {
    label: Option<Spanned<String>>,
    annotation: Option<Spanned<String>>,
    field: Option<Spanned<String>>,
    kinds: Option<Spanned<Vec<Spanned<String>>>>,
}

impl IndexSpec {
    /// The definition this entry of `file` (whose text is `text`) writes.
    fn definition(
        self,
        file: &str,
        text: &str,
        name: &Spanned<String>,
    ) -> Result<IndexDefinition, ConfigError> {
        let key = |sub: &str| format!("indexes.{}{sub}", name.value);
        let invalid = |at: Location, key: String, message: String| ConfigError::Invalid {
            file: file.to_string(),
            line: at.line(),
            column: at.column(),
            key: Some(key),
            message,
        };
        if name.value.is_empty() {
            return Err(invalid(
                name.referenced,
                key(""),
                "an index needs a name".into(),
            ));
        }
        let sources = [
            self.label.map(|v| ("label", v)),
            self.annotation.map(|v| ("annotation", v)),
            self.field.map(|v| ("field", v)),
        ];
        let mut given = sources.into_iter().flatten();
        let (kind, value) = match (given.next(), given.next()) {
            (Some(one), None) => one,
            (None, _) => {
                return Err(invalid(
                    name.referenced,
                    key(""),
                    "expected one of label, annotation or field".into(),
                ));
            }
            (Some((first, _)), Some((second, v))) => {
                return Err(invalid(
                    v.referenced,
                    key(&format!(".{second}")),
                    format!("an index has one source; {first} is already set"),
                ));
            }
        };
        let at = value.referenced;
        if value.value.is_empty() {
            return Err(invalid(
                at,
                key(&format!(".{kind}")),
                format!("empty {kind}"),
            ));
        }
        let source = match kind {
            "label" => IndexSource::Label(value.value),
            "annotation" => IndexSource::Annotation(value.value),
            _ if !is_json_path(&value.value) => {
                IndexSource::Field(value.value.parse::<IndexField>().map_err(|e| {
                    invalid(
                        at,
                        key(".field"),
                        format!("{e}, or a JSONPath such as .spec.x"),
                    )
                })?)
            }
            _ => IndexSource::Path(FieldPath::parse(&value.value).map_err(|e| {
                let (line, column) = position_in_scalar(text, at, &value.value, e.offset);
                ConfigError::Invalid {
                    file: file.to_string(),
                    line,
                    column,
                    key: Some(key(".field")),
                    message: e.to_string(),
                }
            })?),
        };
        let definition = IndexDefinition::new(name.value.clone(), source);
        let Some(kinds) = self.kinds else {
            return Ok(definition);
        };
        if kinds.value.is_empty() {
            return Err(invalid(
                kinds.referenced,
                key(".kinds"),
                "an empty list applies to no kind; leave kinds out for every kind".into(),
            ));
        }
        let mut names = Vec::with_capacity(kinds.value.len());
        for kind in kinds.value {
            if kind.value.trim().is_empty() || kind.value.contains('/') {
                return Err(invalid(
                    kind.referenced,
                    key(".kinds"),
                    format!("{:?} is not a resource name", kind.value),
                ));
            }
            let name = kind.value.trim().to_string();
            check_path_kinds(&definition.source, std::slice::from_ref(&name))
                .map_err(|e| invalid(kind.referenced, key(".kinds"), e.to_string()))?;
            names.push(name);
        }
        Ok(definition.with_kinds(names))
    }
}

/// Whether a `field:` is a JSONPath (`.spec.x`, `{.spec.x}`, `$.spec.x`, `['x']`) rather than
/// the name of a projection field.
fn is_json_path(field: &str) -> bool {
    field.trim_start().starts_with(['.', '{', '$', '['])
}

/// The line and column in `text` of character `offset` of the scalar `value` written at
/// `at`: past the opening quote of a quoted scalar; a scalar whose text is not found as
/// written there (escapes, folding) is placed at its start.
fn position_in_scalar(text: &str, at: Location, value: &str, offset: usize) -> (u64, u64) {
    let line = at.line();
    let start = at.column();
    let written = usize::try_from(line)
        .ok()
        .and_then(|l| text.lines().nth(l.checked_sub(1)?))
        .and_then(|l| {
            let from = usize::try_from(start).ok()?.checked_sub(1)?;
            l.chars().skip(from).collect::<String>().into()
        })
        .unwrap_or_default();
    let quoted = written.starts_with(['"', '\'']);
    let inner = if quoted { &written[1..] } else { &written[..] };
    if !inner.starts_with(value) {
        return (line, start);
    }
    let shift = u64::try_from(offset).unwrap_or(0) + u64::from(quoted);
    (line, start + shift)
}

fn parse(file: &str, text: &str) -> Result<ConfigFile, ConfigError> {
    // An empty file (or only comments) is an empty configuration.
    if text
        .lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
    {
        return Ok(ConfigFile {
            indexes: None,
            keys: None,
            informers: None,
            logs: None,
            metrics: None,
            readwrite: None,
            contexts: None,
            shell: None,
        });
    }
    let options = serde_saphyr::options! { with_snippet: false };
    serde_saphyr::from_str_with_options(text, options).map_err(|e| {
        let at = e.location().unwrap_or(Location::UNKNOWN);
        ConfigError::Invalid {
            file: file.to_string(),
            line: at.line(),
            column: at.column(),
            key: None,
            message: e.without_snippet().to_string(),
        }
    })
}
