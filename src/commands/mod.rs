//! The non-interactive commands (`kscope get`, `kscope deltas`): start an informer on the
//! cluster, wait for it to sync, print. Shared set-up lives here.

pub mod custom_columns;
pub mod deltas;
pub mod get;
pub mod go_numbers;
pub mod output;
pub mod yaml;

use std::sync::Arc;
use std::time::Duration;

use std::path::PathBuf;

use kscope_client::cluster::{Cluster, ClusterArgs, ClusterError, NamespaceScope};
use kscope_client::discovery::{Discovery, DiscoveryError, UnknownName};
use kscope_client::explain;
use kscope_client::lister_watcher::KubeListerWatcher;
use kscope_config::{Config, ConfigError};
use kscope_index_views::definitions::{
    Indexable, decode_fields, index_funcs, indexes_for, path_indexes,
};
use kscope_index_views::printer_columns::KubectlPrinterColumns;
use kscope_index_views::query::{ParseError, QueryError};
use kscope_informers::fifo::FifoKind;
use kscope_informers::indexer::{IndexerError, IndexerWriter};
use kscope_informers::instrument::tap::Tap;
use kscope_informers::lister_watcher::ListWatchError;
use kscope_informers::object::Object;
use kscope_informers::reflector::{
    InitialListMode, ReflectorError, ReflectorPhase, ReflectorStatus,
};
use kscope_informers::running::{InformerConfig, RunningInformer};
use kscope_resources::{Kind, ResourceKind, UnknownResource};

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
    #[error("{missing} of the objects named were not found")]
    NotFound { missing: usize },
    #[error("writing output: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    CustomColumns(#[from] custom_columns::CustomColumnsError),
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
}

impl CommandError {
    /// The process's exit code: 3 when the store never synced, 4 when it was not current at
    /// the moment it was read (documented in `kscope get --help`), 1 for anything else.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::NotSynced { .. } => 3,
            Self::NotCurrent { .. } => 4,
            _ => 1,
        }
    }
}

fn last_error_text(err: &Option<Arc<ReflectorError>>) -> String {
    err.as_deref()
        .map(|e| format!(" (last error: {})", explain::reflector_error(e)))
        .unwrap_or_default()
}

/// Waits for the informer's first list, at most `timeout`. Each failed round is said on
/// stderr as it happens, so that a person knows what is being waited on; errors that
/// `gives_up` accepts end the wait at once.
pub async fn wait_for_sync_reporting<T: Object>(
    informer: &RunningInformer<T>,
    resource: &str,
    timeout: Duration,
) -> Result<(), CommandError> {
    let mut status = informer.status();
    let synced = informer.wait_for_sync(gives_up);
    tokio::pin!(synced);
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut reported = 0;
    loop {
        tokio::select! {
            result = &mut synced => return result.map_err(CommandError::Sync),
            changed = status.changed() => {
                if changed.is_err() {
                    // The Reflector is gone: the sync future says how it ended.
                    return (&mut synced).await.map_err(CommandError::Sync);
                }
                let now = status.borrow_and_update().clone();
                // An error that ends the wait is said once, by the caller.
                if now.failed_rounds > reported
                    && let Some(err) = now.last_error.as_deref().filter(|e| !gives_up(e))
                {
                    reported = now.failed_rounds;
                    eprintln!(
                        "kscope: {resource} not synced yet (attempt {} failed: {}); retrying",
                        now.failed_rounds,
                        explain::reflector_error(err)
                    );
                }
            }
            () = &mut deadline => {
                return Err(CommandError::NotSynced {
                    resource: resource.to_string(),
                    waited: timeout,
                    last_error: status.borrow().last_error.clone(),
                });
            }
        }
    }
}

/// Whether the store is current: the Reflector is watching, and what it queued has been
/// applied (given up to `drain` to be). The error says what it is doing instead.
pub async fn check_current<T: Object>(
    informer: &RunningInformer<T>,
    resource: &str,
    drain: Duration,
) -> Result<(), CommandError> {
    let not_current = |state: String, status: &ReflectorStatus| CommandError::NotCurrent {
        resource: resource.to_string(),
        state,
        last_error: status.last_error.clone(),
        printed: false,
    };
    let status = informer.status().borrow().clone();
    match &status.phase {
        ReflectorPhase::Watching => {}
        ReflectorPhase::BackingOff => {
            return Err(not_current(
                format!(
                    "its list and watch failed {} time(s) in a row and it is backing off",
                    status.failed_rounds
                ),
                &status,
            ));
        }
        ReflectorPhase::Listing { pages, objects } => {
            return Err(not_current(
                format!("it is relisting ({pages} pages, {objects} objects so far)"),
                &status,
            ));
        }
        ReflectorPhase::Starting => {
            return Err(not_current("it has not started".into(), &status));
        }
    }
    let queue = informer.informer().store();
    let drained = tokio::time::timeout(drain, async {
        while !queue.is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    if drained.is_err() {
        return Err(not_current(
            format!("{} changes received are not applied yet", queue.len()),
            &status,
        ));
    }
    Ok(())
}

/// Errors that will not go away by retrying, so a command should stop at once: refused
/// credentials or permissions, an unreachable server, an answer that is not the API.
pub fn gives_up(err: &ReflectorError) -> bool {
    match err {
        ReflectorError::ListWatch(e) => match e {
            ListWatchError::Api { status, .. } => {
                matches!(status.code, 300..=399 | 400 | 401 | 403 | 404 | 406 | 422)
            }
            ListWatchError::Transport { .. }
            | ListWatchError::MalformedResponse { .. }
            | ListWatchError::InvalidRequest { .. } => true,
            ListWatchError::MalformedEvent(_) => false,
        },
        ReflectorError::VeryShortWatch { .. }
        | ReflectorError::ResourceVersionWentBack { .. }
        | ReflectorError::ServerChanged { .. } => false,
    }
}

/// What `get` and `deltas` share: the resource, where it lives, its server-side selectors
/// and the configuration whose indexes the store gets.
#[derive(Debug, Clone, clap::Args)]
pub struct InformerArgs {
    /// Any resource the server serves, named as for kubectl: pods (po), svc, deploy.apps,
    /// widgets.example.com, widgets.v1.example.com...
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
    /// The FIFO between the watch and the store: classic (DeltaFIFO, merging per key),
    /// real (RealFIFO, every event in order) or atomic (AtomicFIFO). Default: the config's
    /// informers.fifo.
    #[arg(long, value_name = "FIFO")]
    pub fifo: Option<FifoKind>,
    /// How the initial state is read: watchList (streamed as watch events, falling back to
    /// list where client-go does) or list. Default: the config's informers.initialList.
    #[arg(long, value_name = "MODE")]
    pub initial_list: Option<InitialListMode>,
}

impl InformerArgs {
    /// Reads the configuration (a bad one is reported before connecting to anything),
    /// connects, and resolves the resource named on the command line: a kind with a
    /// hand-written projection by its name alone, any other through discovery, as kubectl
    /// resolves it.
    pub async fn resolve(&self) -> Result<Resolved, CommandError> {
        let config = Config::load(self.config.as_deref())?;
        let cluster = self.cluster.connect().await?;
        let (kind, discovery) = match self.resource.parse::<ResourceKind>() {
            Ok(kind) => (Kind::BuiltIn(kind), Discovery::built_ins()),
            Err(_) => {
                let discovery = Discovery::run(&cluster.client).await?;
                (discovery.resolve(&self.resource)?, discovery)
            }
        };
        Ok(Resolved {
            config,
            cluster,
            kind,
            discovery,
        })
    }

    /// As [`InformerArgs::resolve`], for what `kscope get` takes: one resource, several
    /// separated by commas (`pods,svc`), or a category (`all`) expanded to its resources in
    /// discovery order as kubectl expands it; each kind once. `several` is whether more than
    /// one was asked for (kubectl then names each row `kind.group/name`).
    pub async fn resolve_all(&self) -> Result<ResolvedKinds, CommandError> {
        let names: Vec<&str> = self
            .resource
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .collect();
        if names.is_empty() {
            return Err(CommandError::Usage(
                "name a resource type, e.g. pods, svc, all".into(),
            ));
        }
        let config = Config::load(self.config.as_deref())?;
        let cluster = self.cluster.connect().await?;
        let mut discovery: Option<Discovery> = None;
        let mut kinds: Vec<Kind> = Vec::new();
        let mut several = names.len() > 1;
        for name in names {
            if let Ok(kind) = name.parse::<ResourceKind>() {
                kinds.push(Kind::BuiltIn(kind));
                continue;
            }
            let discovered = match &mut discovery {
                Some(d) => d,
                None => discovery.insert(Discovery::run(&cluster.client).await?),
            };
            let category = discovered.category(name);
            if category.is_empty() {
                kinds.push(discovered.resolve(name)?);
            } else {
                several = true;
                kinds.extend(category.into_iter().map(|r| Kind::of(r.clone())));
            }
        }
        let mut unique: Vec<Kind> = Vec::with_capacity(kinds.len());
        for kind in kinds {
            if !unique.contains(&kind) {
                unique.push(kind);
            }
        }
        let discovery = discovery.unwrap_or_else(Discovery::built_ins);
        Ok(ResolvedKinds {
            resolved: unique
                .into_iter()
                .map(|kind| Resolved {
                    config: config.clone(),
                    cluster: cluster.clone(),
                    kind,
                    discovery: discovery.clone(),
                })
                .collect(),
            several,
        })
    }
}

/// What [`InformerArgs::resolve_all`] resolved: each kind, and whether several were asked
/// for.
pub struct ResolvedKinds {
    pub resolved: Vec<Resolved>,
    pub several: bool,
}

/// What `get` and `deltas` start from: the configuration, the cluster, the kind.
pub struct Resolved {
    pub config: Config,
    pub cluster: Cluster,
    pub kind: Kind,
    /// What the names in the indexes' `kinds` resolve against.
    pub discovery: Discovery,
}

/// Starts an informer on `kind` in the flags' scope with the configured indexes. Returns it
/// with the scope it watches.
pub async fn start_informer<T: Indexable>(
    args: &InformerArgs,
    resolved: &Resolved,
    tap: Option<Tap>,
) -> Result<(RunningInformer<T>, NamespaceScope), CommandError> {
    let prepared = prepare_informer::<T>(args, resolved, tap)?;
    Ok((
        RunningInformer::start(prepared.config, prepared.lister_watcher, prepared.writer),
        prepared.scope,
    ))
}

/// What an informer is started from: its settings (flags over the config file), how it
/// reaches the cluster, and its store's writer.
pub struct PreparedInformer<T> {
    pub config: InformerConfig,
    pub lister_watcher: KubeListerWatcher,
    pub writer: IndexerWriter<T>,
    /// A second writer with the same indexes, for a second pipeline to compare with.
    pub other_writer: IndexerWriter<T>,
    pub scope: NamespaceScope,
}

/// Prepares, without starting, an informer on `kind` in the flags' scope.
pub fn prepare_informer<T: Indexable>(
    args: &InformerArgs,
    resolved: &Resolved,
    tap: Option<Tap>,
) -> Result<PreparedInformer<T>, CommandError> {
    let Resolved {
        config,
        cluster,
        kind,
        discovery,
    } = resolved;
    let indexes = indexes_for(kind, &config.indexes, discovery);
    let paths = path_indexes(&indexes);
    let scope = args.cluster.scope(cluster);
    let lister_watcher = KubeListerWatcher::for_kind(
        cluster,
        kind.clone(),
        &scope,
        args.selector.clone(),
        args.field_selector.clone(),
    )
    .with_field_indexes(decode_fields(&paths))
    .with_printer_columns(std::sync::Arc::new(KubectlPrinterColumns));
    let writer = IndexerWriter::new(index_funcs::<T>(&indexes))?;
    let other_writer = IndexerWriter::new(index_funcs::<T>(&indexes))?;
    let mut informer_config = InformerConfig::new(kind.to_string());
    informer_config.tap = tap;
    informer_config.fifo = args.fifo.unwrap_or(config.informers.fifo);
    informer_config.initial_list = args.initial_list.unwrap_or(config.informers.initial_list);
    Ok(PreparedInformer {
        config: informer_config,
        lister_watcher,
        writer,
        other_writer,
        scope,
    })
}
