//! Logs go to a file under the XDG state directory, never to the terminal: the TUI owns the
//! screen, and the commands' stdout is data.

use std::path::PathBuf;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;

/// Why logging is off.
#[derive(Debug, thiserror::Error)]
pub enum LoggingError {
    #[error("neither XDG_STATE_HOME nor HOME is set")]
    NoStateDir,
    #[error("cannot create {}: {source}", .dir.display())]
    CreateDir {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("a global logger is already set: {0}")]
    AlreadySet(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Starts logging to `kscope.log` in the state directory, at the level `KSCOPE_LOG` asks
/// (default `info`). Keep the guard alive: dropping it flushes the log. Returns why logging
/// is off when the directory cannot be made.
pub fn init() -> Result<(WorkerGuard, PathBuf), LoggingError> {
    let dir = kscope_config::state_dir().ok_or(LoggingError::NoStateDir)?;
    std::fs::create_dir_all(&dir).map_err(|source| LoggingError::CreateDir {
        dir: dir.clone(),
        source,
    })?;
    let appender = tracing_appender::rolling::never(&dir, "kscope.log");
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let filter = EnvFilter::try_from_env("KSCOPE_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false)
        .try_init()
        .map_err(LoggingError::AlreadySet)?;
    Ok((guard, dir.join("kscope.log")))
}
