//! Where kscope's files go by default: the XDG base directories.

use std::path::PathBuf;

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
