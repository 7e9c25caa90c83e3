//! The settings of the `logs:` and `informers:` sections, as merged.

use std::path::PathBuf;

use kscope_informers::fifo::FifoKind;
use kscope_informers::reflector::InitialListMode;

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

/// `readwrite:` and `shell:`: whether kscope may change the cluster, and how it opens a shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionSettings {
    /// Off by default: kscope only reads unless asked to write.
    pub readwrite: bool,
    /// The commands a shell tries in turn (a container may have no bash).
    pub shell: Vec<String>,
}

impl Default for ActionSettings {
    fn default() -> Self {
        Self {
            readwrite: false,
            shell: vec!["bash".to_string(), "sh".to_string()],
        }
    }
}

/// `informers:`: the pipeline between the watch and the store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InformerSettings {
    pub fifo: FifoKind,
    pub initial_list: InitialListMode,
}
