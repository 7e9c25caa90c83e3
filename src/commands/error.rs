//! Why a command failed.

use std::sync::Arc;
use std::time::Duration;

use kscope_client::cluster::ClusterError;
use kscope_client::discovery::{DiscoveryError, UnknownName};
use kscope_client::explain;
use kscope_config::ConfigError;
use kscope_index_views::query::{ParseError, QueryError};
use kscope_informers::indexer::IndexerError;
use kscope_informers::reflector::ReflectorError;
use kscope_resources::UnknownResource;

/// Why a command failed. One line each, for a person.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error(transparent)]
    UnknownResource(#[from] UnknownResource),
    #[error(transparent)]
    UnknownName(#[from] UnknownName),
    #[error(transparent)]
    Discovery(#[from] DiscoveryError),
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Indexes(#[from] IndexerError),
    #[error("--filter {text:?}: {source}")]
    Filter {
        text: String,
        #[source]
        source: ParseError,
    },
    #[error(transparent)]
    Query(#[from] QueryError),
    #[error("{}", explain::reflector_error(.0))]
    Sync(Arc<ReflectorError>),
    #[error(transparent)]
    Fetch(#[from] kscope_client::fetch::FetchError),
    #[error("{failed} of the resource types could not be read")]
    SomeKindsFailed { failed: usize },
    #[error(transparent)]
    Scrape(#[from] kscope_client::scrape::ScrapeError),
    #[error(transparent)]
    MetricsPage(#[from] kscope_index_views::metrics::MetricsParseError),
    #[error("hot loop found: {0}")]
    HotLoopFound(String),
    #[error("{missing} of the objects named were not found")]
    NotFound { missing: usize },
    #[error("writing output: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Recording(#[from] kscope_informers::record::format::RecordError),
    /// A recording whose file could not be written: named, since the same words come from
    /// any recording, with what of it can still be read.
    #[error("recording to {}: {source}{}", .path.display(), kept_text(*.kept))]
    RecordingTo {
        path: std::path::PathBuf,
        /// Bytes the recording holds whole, header included; none when even its header
        /// could not be written.
        kept: u64,
        #[source]
        source: kscope_informers::record::format::RecordError,
    },
    #[error(transparent)]
    Pipelines(#[from] kscope_informers::record::pipelines::PipelineError),
    #[error("{0}")]
    StoreMismatch(String),
    #[error(transparent)]
    CustomColumns(#[from] super::custom_columns::CustomColumnsError),
    #[error("{resource} did not sync within {}s{}", .waited.as_secs(), last_error_text(.last_error))]
    NotSynced {
        resource: String,
        waited: Duration,
        last_error: Option<Arc<ReflectorError>>,
    },
    #[error(
        "{resource} is not current: {state}{}; {}",
        last_error_text(.last_error),
        if *.printed { "printed anyway (--allow-stale)" } else { "printed nothing (--allow-stale prints it anyway)" }
    )]
    NotCurrent {
        resource: String,
        state: String,
        last_error: Option<Arc<ReflectorError>>,
        printed: bool,
    },
    #[error(
        "{} not current: {}; {}",
        if .clusters.len() == 1 { "1 cluster is" } else { "some clusters are" },
        .clusters.join(", "),
        if *.printed { "printed the others anyway (--allow-stale)" } else { "printed nothing (--allow-stale prints the others)" }
    )]
    ClustersNotCurrent {
        clusters: Vec<String>,
        printed: bool,
    },
}

impl CommandError {
    /// The process's exit code: 3 when the store never synced, 4 when it was not current at
    /// the moment it was read, or when some cluster of several was not (documented in
    /// `kscope get --help`), 1 for anything else.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::NotSynced { .. } => 3,
            Self::NotCurrent { .. } | Self::ClustersNotCurrent { .. } => 4,
            _ => 1,
        }
    }
}

/// What of a failed recording reads back, when anything does.
fn kept_text(kept: u64) -> String {
    match kept {
        0 => String::new(),
        n => format!("; the {n} bytes written before it are readable (kscope replay)"),
    }
}

fn last_error_text(err: &Option<Arc<ReflectorError>>) -> String {
    err.as_deref()
        .map(|e| format!(" (last error: {})", explain::reflector_error(e)))
        .unwrap_or_default()
}
