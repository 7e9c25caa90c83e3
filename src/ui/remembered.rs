//! What the screen looked like when the person left it, shown the same at the next start:
//! whether the delta and workqueue panels are open. A first run (no file yet) opens with
//! them closed, as a newcomer expects a plain table; `t` opens them and that is remembered.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::state_file;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Stored {
    #[serde(default)]
    panels: bool,
}

/// The choices and the file they are kept in (none: in memory only).
#[derive(Debug, Clone, Default)]
pub struct Remembered {
    path: Option<PathBuf>,
    stored: Stored,
}

impl Remembered {
    /// Reads `path`; a missing or unreadable file is a first run.
    pub fn load(path: PathBuf) -> Self {
        let stored = state_file::load(&path, "screen choices");
        Self {
            path: Some(path),
            stored,
        }
    }

    /// Whether the delta and workqueue panels were open when the person left.
    pub fn panels(&self) -> bool {
        self.stored.panels
    }

    /// The panels were opened or closed: saved at once.
    pub fn set_panels(&mut self, open: bool) {
        if self.stored.panels == open {
            return;
        }
        self.stored.panels = open;
        if let Some(path) = &self.path {
            state_file::save(path, &self.stored, "screen choices");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_on_a_first_run_and_as_left_after() {
        let dir = std::env::temp_dir().join(format!("kscope-remembered-{}", std::process::id()));
        let path = dir.join("screen.json");
        let _ = std::fs::remove_dir_all(&dir);
        let mut first = Remembered::load(path.clone());
        assert!(!first.panels());
        first.set_panels(true);
        assert!(Remembered::load(path.clone()).panels());
        first.set_panels(false);
        assert!(!Remembered::load(path.clone()).panels());
        std::fs::write(&path, "not json").unwrap();
        assert!(!Remembered::load(path).panels());
        let _ = std::fs::remove_dir_all(dir);
    }
}
