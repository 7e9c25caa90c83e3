//! The informer `get` and `deltas` start: the flags they share resolved against the
//! configuration and the cluster, and the informer prepared or started from them.

use std::path::PathBuf;

use kscope_client::cluster::{Cluster, ClusterArgs, NamespaceScope};
use kscope_client::discovery::Discovery;
use kscope_client::lister_watcher::KubeListerWatcher;
use kscope_config::Config;
use kscope_index_views::definitions::{
    Indexable, decode_fields, index_funcs, indexes_for, path_indexes,
};
use kscope_index_views::printer_columns::KubectlPrinterColumns;
use kscope_informers::fifo::FifoKind;
use kscope_informers::indexer::IndexerWriter;
use kscope_informers::instrument::tap::Tap;
use kscope_informers::reflector::InitialListMode;
use kscope_informers::running::{InformerConfig, RunningInformer};
use kscope_resources::{Kind, ResourceKind};

use super::error::CommandError;

/// What `get` and `deltas` share: the resource, where it lives, its server-side selectors
/// and the configuration whose indexes the store gets.
#[derive(Debug, Clone, clap::Args)]
pub struct InformerArgs {
    /// Any resource the server serves, named as for kubectl: pods (po), svc, deploy.apps,
    /// widgets.example.com, widgets.v1.example.com... (`deltas --for-owner` alone takes
    /// none.)
    #[arg(default_value = "")]
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
        if self.resource.trim().is_empty() {
            return Err(CommandError::Usage(
                "name a resource type, e.g. pods, svc, deploy".into(),
            ));
        }
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
