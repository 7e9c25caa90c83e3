//! Small JSON files in kscope's XDG state directory that carry what a person chose from one
//! run to the next (namespace favourites and sets, whether the delta panel is open). A convenience:
//! a file that cannot be read or written is logged, never a reason to stop the TUI.

use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Reads `path`; a missing file is the default, and an unreadable or malformed one is
/// logged and the default (replaced at the next save).
pub fn load<T: DeserializeOwned + Default>(path: &Path, what: &str) -> T {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|err| {
            tracing::warn!(
                "{}: not kscope's {what} ({err}); starting afresh",
                path.display()
            );
            T::default()
        }),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => T::default(),
        Err(err) => {
            tracing::warn!("{}: {err}; starting afresh", path.display());
            T::default()
        }
    }
}

/// Reads `path` as [`load`] does, but a malformed file is set aside (renamed to
/// `NAME.bad`) rather than replaced at the next save, and what went wrong is returned for
/// the person to see: for a file holding what they typed and named, which a save of the
/// default would lose.
pub fn load_or_set_aside<T: DeserializeOwned + Default>(
    path: &Path,
    what: &str,
) -> (T, Option<String>) {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return (T::default(), None),
        Err(err) => {
            let said = format!("cannot read {what} from {}: {err}", path.display());
            tracing::warn!("{said}");
            return (T::default(), Some(said));
        }
    };
    match serde_json::from_slice(&bytes) {
        Ok(value) => (value, None),
        Err(err) => {
            let aside = path.with_extension("json.bad");
            let said = match std::fs::rename(path, &aside) {
                Ok(()) => format!(
                    "{}: not kscope's {what} ({err}); set aside as {}, starting afresh",
                    path.display(),
                    aside.display()
                ),
                Err(rename) => format!(
                    "{}: not kscope's {what} ({err}), and not set aside ({rename}); starting afresh",
                    path.display()
                ),
            };
            tracing::warn!("{said}");
            (T::default(), Some(said))
        }
    }
}

/// Writes `value` to `path` whole, through a temporary file and a rename, so that a crash
/// never leaves half of it; a failure is logged.
pub fn save<T: Serialize>(path: &Path, value: &T, what: &str) {
    let result = (|| -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let json = serde_json::to_vec_pretty(value).map_err(std::io::Error::other)?;
        let temporary = path.with_extension("json.tmp");
        std::fs::write(&temporary, json)?;
        std::fs::rename(&temporary, path)
    })();
    if let Err(err) = result {
        tracing::warn!("cannot save {what} to {}: {err}", path.display());
    }
}
