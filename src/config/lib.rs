//! kscope's configuration: `config/kscope.yaml` is built in; the user's file
//! (`$XDG_CONFIG_HOME/kscope/config.yaml`, or `--config FILE`) is merged over it.
//!
//! Each section is a top-level key (`indexes:`, `keys:`; columns later). A section merges by
//! entry name: a user entry replaces the built-in one of the same name, a new name is added
//! after the built-in ones, and an index set to `null` (or `~`) is removed; under `keys:` the
//! entries are actions within a mode's section.
//! Unknown keys and bad values are errors that name the file, line and key.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::{MapAccess, Visitor};
use serde_saphyr::{Location, Spanned};

pub mod keys;

use kscope_index_views::definitions::{IndexDefinition, IndexField, IndexSource, check_path_kinds};
use kscope_index_views::jsonpath::FieldPath;
use kscope_informers::fifo::FifoKind;
use kscope_informers::reflector::InitialListMode;

use self::keys::{Keymap, KeymapBuilder, Origin, Section};

/// The built-in configuration.
pub const DEFAULT_CONFIG: &str = include_str!("../../config/kscope.yaml");
/// How the built-in configuration is named in messages.
pub const DEFAULT_CONFIG_NAME: &str = "<built-in config/kscope.yaml>";

/// The merged configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Index definitions, built-in first, in file order.
    pub indexes: Vec<IndexDefinition>,
    /// Key bindings, checked for conflicts after every file is merged.
    pub keys: Keymap,
    /// How informers fill their stores.
    pub informers: InformerSettings,
    /// How much of a log the log view asks for and keeps.
    pub logs: LogSettings,
}

/// `logs:`: what the log view asks for and how much it keeps, so that a container writing
/// 50,000 lines a second cannot grow it without bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSettings {
    /// Lines kept; the oldest go first.
    pub capacity: usize,
    /// Lines asked for when the view opens (and on `0`).
    pub tail_lines: u64,
    /// A longer line is cut there, with a mark.
    pub max_line_bytes: usize,
    /// Where saved logs go (default: `$XDG_STATE_HOME/kscope/logs`).
    pub save_dir: Option<PathBuf>,
}

impl Default for LogSettings {
    fn default() -> Self {
        Self {
            capacity: 100_000,
            tail_lines: 1_000,
            max_line_bytes: 16 << 10,
            save_dir: None,
        }
    }
}

/// `informers:`: the pipeline between the watch and the store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InformerSettings {
    pub fifo: FifoKind,
    pub initial_list: InitialListMode,
}

/// Why a configuration file could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}: cannot read: {message}")]
    Read { file: String, message: String },
    /// Bad YAML, an unknown key or a bad value. `key` is the dotted path (`indexes.team.label`)
    /// when known.
    #[error("{file}:{line}:{column}: {}{message}", key.as_deref().map(|k| format!("{k}: ")).unwrap_or_default())]
    Invalid {
        file: String,
        line: u64,
        column: u64,
        key: Option<String>,
        message: String,
    },
}

impl Config {
    /// The built-in configuration alone.
    pub fn built_in() -> Result<Self, ConfigError> {
        Self::merged(None)
    }

    /// The built-in configuration with `file` merged over it, or else the user's file at
    /// `$XDG_CONFIG_HOME/kscope/config.yaml` if one exists. A `file` that cannot be read is an
    /// error; a missing default user file is not.
    pub fn load(file: Option<&Path>) -> Result<Self, ConfigError> {
        let path = match file {
            Some(path) => path.to_path_buf(),
            None => match user_config_path() {
                Some(path) if path.exists() => path,
                _ => return Self::built_in(),
            },
        };
        let text = std::fs::read_to_string(&path).map_err(|e| ConfigError::Read {
            file: path.display().to_string(),
            message: e.to_string(),
        })?;
        Self::merged(Some((&path.display().to_string(), &text)))
    }

    /// The built-in configuration with `user` (file name for messages, contents) merged over it.
    pub fn merged(user: Option<(&str, &str)>) -> Result<Self, ConfigError> {
        let mut indexes = Vec::new();
        let mut keys = KeymapBuilder::default();
        let mut informers = InformerSettings::default();
        let mut logs = LogSettings::default();
        merge(
            &mut indexes,
            &mut keys,
            (&mut informers, &mut logs),
            DEFAULT_CONFIG_NAME,
            DEFAULT_CONFIG,
        )?;
        if let Some((file, text)) = user {
            merge(
                &mut indexes,
                &mut keys,
                (&mut informers, &mut logs),
                file,
                text,
            )?;
        }
        Ok(Config {
            indexes,
            keys: keys.build()?,
            informers,
            logs,
        })
    }
}

/// Merges one file's sections into the configuration being built.
fn merge(
    indexes: &mut Vec<IndexDefinition>,
    keymap: &mut KeymapBuilder,
    (informers, logs): (&mut InformerSettings, &mut LogSettings),
    file: &str,
    text: &str,
) -> Result<(), ConfigError> {
    let parsed = parse(file, text)?;
    if let Some(section) = parsed.logs {
        section.merge(file, logs)?;
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

/// `$XDG_STATE_HOME/kscope`, else `~/.local/state/kscope`: logs, saved logs, favourites and
/// the demo's kubeconfig.
pub fn state_dir() -> Option<PathBuf> {
    match std::env::var_os("XDG_STATE_HOME") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir).join("kscope")),
        _ => std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/state/kscope")),
    }
}

/// `$XDG_CONFIG_HOME/kscope/config.yaml`, else `~/.config/kscope/config.yaml`.
pub fn user_config_path() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CONFIG_HOME") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(std::env::var_os("HOME")?).join(".config"),
    };
    Some(base.join("kscope").join("config.yaml"))
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

#[cfg(test)]
mod tests {
    use super::keys::{ACTIONS, Action, KeySpec};
    use super::*;
    use kscope_index_views::definitions::default_index_definitions;

    fn user(text: &str) -> Result<Config, ConfigError> {
        Config::merged(Some(("my.yaml", text)))
    }

    #[test]
    fn built_in_has_the_default_indexes() {
        let config = Config::built_in().unwrap();
        let names: Vec<&str> = config.indexes.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["namespace", "node", "phase", "owner", "app"]);
        assert_eq!(config.indexes, default_index_definitions());
    }

    #[test]
    fn logs_section_bounds_the_log_view() {
        let built_in = Config::built_in().unwrap().logs;
        assert_eq!(built_in, LogSettings::default());
        let mine = user("logs:\n  capacity: 500\n").unwrap().logs;
        assert_eq!(mine.capacity, 500);
        assert_eq!(mine.tail_lines, built_in.tail_lines);
        let err = user("logs:\n  capacity: 0\n").unwrap_err().to_string();
        assert!(err.contains("logs.capacity: must be between 1"), "{err}");
        assert!(user("logs:\n  size: 1\n").is_err());
    }

    #[test]
    fn informers_section_chooses_the_fifo_and_the_initial_list() {
        let built_in = Config::built_in().unwrap().informers;
        assert_eq!(
            built_in,
            InformerSettings {
                fifo: FifoKind::Classic,
                initial_list: InitialListMode::WatchList
            }
        );
        assert_eq!(
            built_in,
            InformerSettings::default(),
            "config and code agree"
        );
        let mine = user("informers:\n  fifo: atomic\n  initialList: list\n")
            .unwrap()
            .informers;
        assert_eq!(mine.fifo, FifoKind::Atomic);
        assert_eq!(mine.initial_list, InitialListMode::List);
        let only_fifo = user("informers:\n  fifo: real\n").unwrap().informers;
        assert_eq!(only_fifo.initial_list, InitialListMode::WatchList);
        let err = user("informers:\n  fifo: fast\n").unwrap_err().to_string();
        assert!(
            err.starts_with("my.yaml:2:9: informers.fifo: unknown FIFO"),
            "{err}"
        );
        assert!(user("informers:\n  pipeline: real\n").is_err());
    }

    #[test]
    fn user_file_adds_and_replaces_by_name() {
        let config = user(
            "# mine\nindexes:\n  team:\n    label: team\n  app:\n    label: app.kubernetes.io/name\n  images: {field: images}\n  commit: {annotation: example.com/commit}\n",
        )
        .unwrap();
        let names: Vec<&str> = config.indexes.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "namespace",
                "node",
                "phase",
                "owner",
                "app",
                "team",
                "images",
                "commit"
            ]
        );
        assert_eq!(
            config.indexes[4].source,
            IndexSource::Label("app.kubernetes.io/name".into())
        );
        assert_eq!(
            config.indexes[6].source,
            IndexSource::Field(IndexField::Images)
        );
        assert_eq!(
            config.indexes[7].source,
            IndexSource::Annotation("example.com/commit".into())
        );
        assert_eq!(user("").unwrap(), Config::built_in().unwrap());
        assert_eq!(user("# nothing\n").unwrap(), Config::built_in().unwrap());
        assert_eq!(user("indexes: {}\n").unwrap(), Config::built_in().unwrap());
    }

    #[test]
    fn errors_name_file_line_and_key() {
        let err = |text: &str| user(text).unwrap_err().to_string();
        let e = err("indexes:\n  team:\n    label: team\n    colour: blue\n");
        assert!(e.starts_with("my.yaml:4:"), "{e}");
        assert!(e.contains("colour"), "{e}");
        let e = err("indexs:\n  team: {label: team}\n");
        assert!(e.starts_with("my.yaml:1:"), "{e}");
        assert!(e.contains("indexs"), "{e}");
        assert_eq!(
            err("indexes:\n  node:\n    field: nodes\n"),
            "my.yaml:3:12: indexes.node.field: unknown field \"nodes\"; expected one of \
             namespace, node, phase, owner, images, or a JSONPath such as .spec.x"
        );
        assert_eq!(
            err("indexes:\n  team: {}\n"),
            "my.yaml:2:3: indexes.team: expected one of label, annotation or field"
        );
        assert_eq!(
            err("indexes:\n  team:\n    label: team\n    field: node\n"),
            "my.yaml:4:12: indexes.team.field: an index has one source; label is already set"
        );
        assert_eq!(
            err("indexes:\n  team:\n    label: \"\"\n"),
            "my.yaml:3:12: indexes.team.label: empty label"
        );
        let e = err("indexes:\n  team: [label]\n");
        assert!(e.starts_with("my.yaml:2:"), "{e}");
        let e = err("indexes: [\n");
        assert!(e.starts_with("my.yaml:"), "{e}");
    }

    #[test]
    fn field_indexes_by_json_path_scoped_to_kinds() {
        let config = user(
            "indexes:\n  ready:\n    kinds: [widgets.example.com, svc]\n    field: '.status.conditions[?(@.type==\"Ready\")].status'\n  colour: {field: .spec.colour}\n",
        )
        .unwrap();
        let ready = config.indexes.iter().find(|d| d.name == "ready").unwrap();
        assert_eq!(
            ready.kinds.as_deref(),
            Some(&["widgets.example.com".to_string(), "svc".to_string()][..])
        );
        match &ready.source {
            IndexSource::Path(path) => {
                assert_eq!(
                    path.as_str(),
                    ".status.conditions[?(@.type==\"Ready\")].status"
                )
            }
            other => panic!("{other:?}"),
        }
        let colour = config.indexes.iter().find(|d| d.name == "colour").unwrap();
        assert_eq!(colour.kinds, None);
        assert!(matches!(colour.source, IndexSource::Path(_)));
    }

    #[test]
    fn a_json_path_that_does_not_parse_is_placed_in_the_file() {
        let err = |text: &str| user(text).unwrap_err().to_string();
        // Plain: the column of the bad character itself.
        let e = err("indexes:\n  ready:\n    field: .status.conditions[?(@.type==)].status\n");
        assert!(
            e.starts_with("my.yaml:3:41: indexes.ready.field: invalid JSONPath at character 30"),
            "{e}"
        );
        // Quoted: past the quote.
        let e = err("indexes:\n  r: {field: '.spec['}\n");
        assert!(
            e.starts_with("my.yaml:2:21: indexes.r.field: invalid JSONPath at character 7"),
            "{e}"
        );
        let e = err("indexes:\n  r:\n    field: .data.token\n    kinds: [widgets, secrets]\n");
        assert!(
            e.starts_with("my.yaml:4:22: indexes.r.kinds: .data.token: a field index on secrets"),
            "{e}"
        );
        let e = err("indexes:\n  r: {field: .x, kinds: []}\n");
        assert!(e.starts_with("my.yaml:2:"), "{e}");
        assert!(e.contains("indexes.r.kinds: an empty list"), "{e}");
    }

    #[test]
    fn null_removes_an_index() {
        let config = user("indexes:\n  app: null\n  phase: ~\n  team: {label: team}\n").unwrap();
        let names: Vec<&str> = config.indexes.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["namespace", "node", "owner", "team"]);
        // Removing one that does not exist is not an error; re-adding it adds it at the end.
        let config = user("indexes:\n  nothing: null\n").unwrap();
        assert_eq!(config, Config::built_in().unwrap());
    }

    fn press(keys: &Keymap, section: Section, key: &str) -> Option<Action> {
        keys.action(section, None, key.parse::<KeySpec>().unwrap())
    }

    #[test]
    fn built_in_keys_bind_every_action() {
        let keys = Config::built_in().unwrap().keys;
        for (name, action, _) in ACTIONS {
            let bound = [
                Section::Normal,
                Section::Deltas,
                Section::Filter,
                Section::Help,
                Section::Indexes,
                Section::Detail,
                Section::Command,
                Section::Logs,
            ]
            .into_iter()
            .any(|s| !keys.keys(s, action).is_empty());
            assert!(bound, "{name} has no default key");
        }
        // Everything that applies on the main screen has a key there.
        let elsewhere = [
            Action::FilterAccept,
            Action::FilterBackspace,
            Action::NextIndex,
            Action::PrevIndex,
            Action::ChooseValue,
            Action::OpenDeltaFilter,
            Action::ClearDeltaFilter,
            Action::OpenDeltaDiff,
            Action::NextFifo,
            Action::ToggleSideBySide,
            Action::DetailTab,
            Action::ScrollLeft,
            Action::ScrollRight,
            Action::ToggleWrap,
            Action::ToggleManagedFields,
            Action::Refresh,
            Action::OpenDiff,
            Action::Back,
            Action::CommandBackspace,
            Action::CommandComplete,
            Action::CommandRun,
            Action::CommandCancel,
            Action::LineLeft,
            Action::LineRight,
            Action::LineStart,
            Action::LineEnd,
            Action::LineDelete,
            Action::LineDeleteWord,
            Action::LineDeleteToStart,
            Action::LineHistoryPrevious,
            Action::LineHistoryNext,
            Action::OpenLogSearch,
            Action::NextMatch,
            Action::PrevMatch,
            Action::ToggleLogFilter,
            Action::ToggleTimestamps,
            Action::TogglePrevious,
            Action::SaveLogs,
        ];
        let log_ranges = |a: &Action| matches!(a, Action::LogRange(_));
        for (name, action, _) in ACTIONS.iter().filter(|(_, a, _)| !log_ranges(a)) {
            if !elsewhere.contains(action) {
                assert!(
                    !keys.keys(Section::Normal, action).is_empty(),
                    "{name} has no key in normal"
                );
            }
        }
    }

    #[test]
    fn every_action_but_typing_has_a_name() {
        // A new Action variant fails to compile here until it is named in ACTIONS.
        let named = |action: &Action| match action {
            Action::FilterChar(_) | Action::CommandChar(_) => false,
            Action::Quit
            | Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom
            | Action::SortNext
            | Action::SortReverse
            | Action::OpenFilter
            | Action::FilterBackspace
            | Action::FilterAccept
            | Action::FilterClear
            | Action::TogglePanels
            | Action::FocusNext
            | Action::TogglePause
            | Action::ToggleHelp
            | Action::ToggleIndexes
            | Action::NextIndex
            | Action::PrevIndex
            | Action::ChooseValue
            | Action::OpenDeltaFilter
            | Action::ClearDeltaFilter
            | Action::OpenDeltaDiff
            | Action::NextFifo
            | Action::ToggleSideBySide
            | Action::OpenDetail
            | Action::Describe
            | Action::DetailTab
            | Action::ScrollLeft
            | Action::ScrollRight
            | Action::ToggleWrap
            | Action::ToggleManagedFields
            | Action::Refresh
            | Action::OpenDiff
            | Action::Back
            | Action::OpenCommand
            | Action::LineLeft
            | Action::LineRight
            | Action::LineStart
            | Action::LineEnd
            | Action::LineDelete
            | Action::LineDeleteWord
            | Action::LineDeleteToStart
            | Action::LineHistoryPrevious
            | Action::LineHistoryNext
            | Action::CommandBackspace
            | Action::CommandComplete
            | Action::CommandRun
            | Action::CommandCancel
            | Action::ToggleWide
            | Action::DrillDown
            | Action::JumpToOwner
            | Action::FavouriteNamespace(_)
            | Action::OpenLogs
            | Action::OpenPreviousLogs
            | Action::OpenLogSearch
            | Action::NextMatch
            | Action::PrevMatch
            | Action::ToggleLogFilter
            | Action::ToggleTimestamps
            | Action::TogglePrevious
            | Action::SaveLogs => true,
            // Each range the log view offers is named once.
            Action::LogRange(range) => ACTIONS
                .iter()
                .any(|(_, a, _)| *a == Action::LogRange(*range)),
        };
        assert_eq!(
            ACTIONS.iter().filter(|(_, a, _)| named(a)).count(),
            ACTIONS.len()
        );
        assert_eq!(ACTIONS.len(), 78);
    }

    #[test]
    fn user_keys_replace_only_the_actions_they_list() {
        let keys = user("keys:\n  normal:\n    down: [n, ctrl-n]\n    quit: [x, f10]\n")
            .unwrap()
            .keys;
        assert_eq!(press(&keys, Section::Normal, "n"), Some(Action::Down));
        assert_eq!(press(&keys, Section::Normal, "j"), None);
        assert_eq!(press(&keys, Section::Normal, "down"), None);
        assert_eq!(press(&keys, Section::Normal, "f10"), Some(Action::Quit));
        assert_eq!(press(&keys, Section::Normal, "k"), Some(Action::Up));
        assert_eq!(press(&keys, Section::Normal, "ctrl-n"), Some(Action::Down));
        // The index browser's own `down` is untouched; q freed in normal types nothing there.
        assert_eq!(press(&keys, Section::Indexes, "j"), Some(Action::Down));
        assert_eq!(press(&keys, Section::Normal, "q"), None);
        assert_eq!(press(&keys, Section::Normal, "ctrl-c"), Some(Action::Quit));
        // A bound key is no longer typed in the filter bar; the others still are.
        let keys = user("keys:\n  filter:\n    filter-accept: [enter, tab]\n")
            .unwrap()
            .keys;
        assert_eq!(
            press(&keys, Section::Filter, "tab"),
            Some(Action::FilterAccept)
        );
        assert_eq!(
            press(&keys, Section::Filter, "x"),
            Some(Action::FilterChar('x'))
        );
        assert_eq!(
            keys.help(Section::Normal)[0],
            ("q".to_string(), "quit (Ctrl-C always quits)")
        );
    }

    #[test]
    fn delta_focus_keys_come_before_normal_ones() {
        let keys = Config::built_in().unwrap().keys;
        let esc = "esc".parse::<KeySpec>().unwrap();
        assert_eq!(
            keys.action(Section::Normal, None, esc),
            Some(Action::FilterClear)
        );
        assert_eq!(
            keys.action(Section::Normal, Some(Section::Deltas), esc),
            Some(Action::ClearDeltaFilter)
        );
        let j = "j".parse::<KeySpec>().unwrap();
        assert_eq!(
            keys.action(Section::Normal, Some(Section::Deltas), j),
            Some(Action::Down)
        );
    }

    #[test]
    fn key_errors_name_file_line_column_and_key() {
        let err = |text: &str| user(text).unwrap_err().to_string();
        assert_eq!(
            err("keys:\n  normal:\n    jump: [j]\n"),
            format!(
                "my.yaml:3:5: keys.normal.jump: unknown action; expected one of {}",
                ACTIONS
                    .iter()
                    .map(|(n, ..)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        );
        let e = err("keys:\n  normal:\n    down: [j, hyper-j]\n");
        assert!(
            e.starts_with("my.yaml:3:15: keys.normal.down: unknown key \"hyper-j\""),
            "{e}"
        );
        assert_eq!(
            err("keys:\n  normal:\n    down: [s]\n"),
            "my.yaml:3:12: keys.normal.down: s is also bound to sort-next in normal"
        );
        assert_eq!(
            err("keys:\n  deltas:\n    open-delta-diff: [enter]\n    open-delta-filter: [enter]\n"),
            "my.yaml:4:25: keys.deltas.open-delta-filter: enter is also bound to \
             open-delta-diff in deltas"
        );
        assert_eq!(
            err("keys:\n  normal:\n    down: [ctrl-c]\n"),
            "my.yaml:3:12: keys.normal.down: ctrl-c always quits and cannot be bound"
        );
        let e = err("keys:\n  nromal:\n    down: [j]\n");
        assert!(e.starts_with("my.yaml:2:"), "{e}");
        assert!(e.contains("nromal"), "{e}");
        let e = err("keys:\n  normal:\n    down: j\n");
        assert!(e.starts_with("my.yaml:3:"), "{e}");
        // Rebinding both sides of a would-be conflict is fine.
        let keys = user("keys:\n  normal:\n    down: [s]\n    sort-next: [o]\n")
            .unwrap()
            .keys;
        assert_eq!(press(&keys, Section::Normal, "s"), Some(Action::Down));
    }

    #[test]
    fn unreadable_file_is_an_error() {
        let err = Config::load(Some(Path::new("/nonexistent/kscope.yaml"))).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("/nonexistent/kscope.yaml: cannot read"),
            "{err}"
        );
    }
}
