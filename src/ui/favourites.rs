//! Namespace favourites, as k9s's 0–9 keys: the namespaces a person last looked at in each
//! context, newest first, remembered between runs in the XDG state directory. `1`–`9` show
//! the current kind in one of them, `0` in all namespaces.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::state_file;

/// Favourites kept per context: one for each of the keys 1–9.
pub const MAX_FAVOURITES: usize = 9;

/// The file's contents: each context's namespaces, most recently used first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Stored {
    #[serde(default)]
    contexts: BTreeMap<String, Vec<String>>,
}

/// The favourites and the file they are kept in (none in tests: kept in memory only).
#[derive(Debug, Clone, Default)]
pub struct Favourites {
    path: Option<PathBuf>,
    stored: Stored,
}

impl Favourites {
    /// Reads `path`; a missing file is no favourites yet, and an unreadable or malformed one
    /// is logged and replaced at the next save rather than stopping the TUI.
    pub fn load(path: PathBuf) -> Self {
        let stored = state_file::load(&path, "favourites");
        Self {
            path: Some(path),
            stored,
        }
    }

    /// The favourites of `context`, most recently used first.
    pub fn namespaces(&self, context: &str) -> &[String] {
        self.stored.contexts.get(context).map_or(&[], Vec::as_slice)
    }

    /// `namespace` was just shown in `context`: it becomes favourite 1, and the oldest beyond
    /// nine is dropped. Saved at once (a failure is logged: favourites are a convenience).
    pub fn used(&mut self, context: &str, namespace: &str) {
        let list = self.stored.contexts.entry(context.to_owned()).or_default();
        if list.first().is_some_and(|first| first == namespace) {
            return;
        }
        list.retain(|ns| ns != namespace);
        list.insert(0, namespace.to_owned());
        list.truncate(MAX_FAVOURITES);
        self.save();
    }

    /// `namespace` turned out not to exist in `context`: it is no favourite.
    pub fn forget(&mut self, context: &str, namespace: &str) {
        if let Some(list) = self.stored.contexts.get_mut(context)
            && list.iter().any(|ns| ns == namespace)
        {
            list.retain(|ns| ns != namespace);
            self.save();
        }
    }

    /// Writes the file whole, through a temporary file and a rename, so that a crash never
    /// leaves half of it.
    fn save(&self) {
        if let Some(path) = &self.path {
            state_file::save(path, &self.stored, "namespace favourites");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_namespace_comes_first_and_nine_are_kept_between_runs() {
        let dir = std::env::temp_dir().join(format!("kscope-favourites-{}", std::process::id()));
        let path = dir.join("namespaces.json");
        let _ = std::fs::remove_file(&path);
        let mut favourites = Favourites::load(path.clone());
        for ns in ["a", "b", "a", "c"] {
            favourites.used("prod", ns);
        }
        favourites.used("dev", "x");
        assert_eq!(favourites.namespaces("prod"), ["c", "a", "b"]);
        let again = Favourites::load(path.clone());
        assert_eq!(again.namespaces("prod"), ["c", "a", "b"], "read back");
        assert_eq!(again.namespaces("dev"), ["x"]);
        let mut many = again;
        for i in 0..12 {
            many.used("prod", &format!("ns{i}"));
        }
        assert_eq!(many.namespaces("prod").len(), MAX_FAVOURITES);
        assert_eq!(many.namespaces("prod")[0], "ns11");
        std::fs::write(&path, "not json").unwrap();
        assert!(Favourites::load(path.clone()).namespaces("prod").is_empty());
        let _ = std::fs::remove_dir_all(dir);
    }
}
