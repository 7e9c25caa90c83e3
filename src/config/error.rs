//! Why a configuration file could not be used.

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
