//! The settings of the `logs:`, `informers:` and write (`readwrite:`, `contexts:`) sections,
//! as merged.

use std::collections::BTreeMap;
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
    /// The commands a shell tries in turn (a container may have no bash).
    pub shell: Vec<String>,
}

impl Default for ActionSettings {
    fn default() -> Self {
        Self {
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

/// Whether kscope may write to a cluster: off unless asked for, so that opening kscope on a
/// production context can change nothing by a stray key (k9s's `readOnly`, the other way
/// round).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteSettings {
    /// `readwrite:`: every context's default.
    pub readwrite: bool,
    /// `contexts: NAME: readwrite:`: a context's own, over the default.
    pub contexts: BTreeMap<String, bool>,
}

/// Where a context's write mode came from, so that a refusal can say how to change it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteSource {
    /// `--readwrite` or `--readonly` on the command line.
    Flag,
    /// `contexts: NAME: readwrite:` in the configuration.
    Context,
    /// `readwrite:` in the configuration, or its default (off).
    Default,
}

impl WriteSettings {
    /// Whether `context` may be written to, and why: the command line's flag first (`Some`
    /// when one was given), then the context's own setting, then the default.
    pub fn for_context(&self, context: &str, flag: Option<bool>) -> (bool, WriteSource) {
        if let Some(on) = flag {
            return (on, WriteSource::Flag);
        }
        match self.contexts.get(context) {
            Some(on) => (*on, WriteSource::Context),
            None => (self.readwrite, WriteSource::Default),
        }
    }
}
