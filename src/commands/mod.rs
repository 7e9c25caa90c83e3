//! The non-interactive commands (`kscope get`, `kscope deltas`): start an informer on the
//! cluster, wait for it to sync, print. Shared set-up lives here.

pub mod deltas;
pub mod get;
pub mod output;

use std::sync::Arc;

use std::path::PathBuf;

use crate::client::cluster::{ClusterArgs, ClusterError, NamespaceScope};
use crate::client::lister_watcher::KubeListerWatcher;
use crate::config::{Config, ConfigError};
use crate::index_views::definitions::{Indexable, index_funcs};
use crate::index_views::query::{ParseError, QueryError};
use crate::informers::indexer::{IndexerError, IndexerWriter};
use crate::informers::lister_watcher::{ListWatchError, innermost_cause};
use crate::informers::reflector::ReflectorError;
use crate::informers::running::{InformerConfig, RunningInformer};
use crate::informers::tap::Tap;
use crate::resources::{ResourceKind, UnknownResource};

/// Why a command failed. One line each, for a person.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error(transparent)]
    UnknownResource(#[from] UnknownResource),
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
    #[error("{}", describe_reflector_error(.0))]
    Sync(Arc<ReflectorError>),
    #[error("writing output: {0}")]
    Io(#[from] std::io::Error),
}

fn describe_reflector_error(err: &ReflectorError) -> String {
    match err {
        ReflectorError::ListWatch(ListWatchError::Api {
            verb,
            resource,
            status,
        }) => match status.code {
            401 => format!(
                "unauthorized: the server refused our credentials to {verb} {resource} ({})",
                status.message
            ),
            403 => format!(
                "forbidden: not allowed to {verb} {resource}: {}",
                status.message
            ),
            _ => err.to_string(),
        },
        ReflectorError::ListWatch(ListWatchError::Transport { source, .. }) => {
            format!(
                "cannot reach the API server: {}",
                innermost_cause(source.as_ref())
            )
        }
        _ => err.to_string(),
    }
}

/// Errors that will not go away by retrying, so a command should stop at once: refused
/// credentials or permissions, an unreachable server, an answer that is not the API.
pub fn gives_up(err: &ReflectorError) -> bool {
    match err {
        ReflectorError::ListWatch(e) => match e {
            ListWatchError::Api { status, .. } => {
                matches!(status.code, 400 | 401 | 403 | 404 | 406 | 422)
            }
            ListWatchError::Transport { .. }
            | ListWatchError::MalformedResponse { .. }
            | ListWatchError::InvalidRequest { .. } => true,
            ListWatchError::MalformedEvent(_) => false,
        },
        ReflectorError::VeryShortWatch { .. } => false,
    }
}

/// What `get` and `deltas` share: the resource, where it lives, its server-side selectors
/// and the configuration whose indexes the store gets.
#[derive(Debug, Clone, clap::Args)]
pub struct InformerArgs {
    /// pods (po), nodes (no), namespaces (ns), deployments (deploy), replicasets (rs).
    pub resource: String,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Label selector sent to the server (`app=web,tier!=db`).
    #[arg(short = 'l', long)]
    pub selector: Option<String>,
    /// Field selector sent to the server (`spec.nodeName=node-1`).
    #[arg(long)]
    pub field_selector: Option<String>,
    /// Configuration file merged over the built-in one (default:
    /// $XDG_CONFIG_HOME/kscope/config.yaml if it exists).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

impl InformerArgs {
    /// The resource named on the command line.
    pub fn kind(&self) -> Result<ResourceKind, CommandError> {
        Ok(self.resource.parse()?)
    }
}

/// Connects, and starts an informer on `kind` in the flags' scope with the configured
/// indexes. Returns it with the scope it watches.
pub async fn start_informer<T: Indexable>(
    args: &InformerArgs,
    kind: ResourceKind,
    tap: Option<Tap>,
) -> Result<(RunningInformer<T>, NamespaceScope), CommandError> {
    let config = Config::load(args.config.as_deref())?;
    let cluster = args.cluster.connect().await?;
    let scope = args.cluster.scope(&cluster);
    let lister_watcher = KubeListerWatcher::for_kind(
        &cluster,
        kind,
        &scope,
        args.selector.clone(),
        args.field_selector.clone(),
    );
    let writer = IndexerWriter::new(index_funcs::<T>(&config.indexes))?;
    let mut informer_config = InformerConfig::new(kind.plural());
    informer_config.tap = tap;
    Ok((
        RunningInformer::start(informer_config, lister_watcher, writer),
        scope,
    ))
}
