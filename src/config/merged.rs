//! The merged configuration: the built-in file, then the user's merged over it.

use std::path::Path;

use kscope_index_views::definitions::IndexDefinition;
use kscope_index_views::usage::UsageSettings;

use crate::error::ConfigError;
use crate::file::merge;
use crate::keys::{Keymap, KeymapBuilder};
use crate::settings::{ActionSettings, InformerSettings, LogSettings, WriteSettings};
use crate::xdg::user_config_path;

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
    /// How often the usage columns are read from the metrics API.
    pub metrics: UsageSettings,
    /// Which contexts kscope may write to.
    pub writes: WriteSettings,
    /// Whether writes are allowed, and the shell's commands.
    pub actions: ActionSettings,
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
        let mut writes = WriteSettings::default();
        let mut actions = ActionSettings::default();
        let mut metrics = UsageSettings::default();
        merge(
            &mut indexes,
            &mut keys,
            (
                &mut informers,
                &mut logs,
                &mut metrics,
                &mut writes,
                &mut actions,
            ),
            DEFAULT_CONFIG_NAME,
            DEFAULT_CONFIG,
        )?;
        if let Some((file, text)) = user {
            merge(
                &mut indexes,
                &mut keys,
                (
                    &mut informers,
                    &mut logs,
                    &mut metrics,
                    &mut writes,
                    &mut actions,
                ),
                file,
                text,
            )?;
        }
        Ok(Config {
            indexes,
            keys: keys.build()?,
            informers,
            logs,
            metrics,
            writes,
            actions,
        })
    }
}
