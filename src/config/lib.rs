//! kscope's configuration: `config/kscope.yaml` is built in; the user's file
//! (`$XDG_CONFIG_HOME/kscope/config.yaml`, or `--config FILE`) is merged over it.
//!
//! Each section is a top-level key (`indexes:`, `keys:`; columns later). A section merges by
//! entry name: a user entry replaces the built-in one of the same name, a new name is added
//! after the built-in ones, and an index set to `null` (or `~`) is removed; under `keys:` the
//! entries are actions within a mode's section.
//! Unknown keys and bad values are errors that name the file, line and key.

pub mod keys;

mod error;
mod file;
mod merged;
mod settings;
mod xdg;

#[cfg(test)]
mod tests;

pub use error::ConfigError;
pub use merged::{Config, DEFAULT_CONFIG, DEFAULT_CONFIG_NAME};
pub use settings::{ActionSettings, InformerSettings, LogSettings, WriteSettings, WriteSource};
pub use xdg::{state_dir, user_config_path};
