//! `kscope tree`: an object's dependents down through ownerReferences (or with `--up` the
//! chain of owners up to its root), each with its health, read from informers on the kinds
//! asked for through their owner-uid indexes (see [`kscope_index_views::ownership`]).

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;

use kscope_client::cluster::ClusterArgs;
use kscope_client::discovery::Discovery;
use kscope_config::Config;
use kscope_index_views::columns::TableRow;
use kscope_index_views::ownership::{Forest, StoreOf, Tree};
use kscope_informers::running::RunningInformer;
use kscope_resources::{
    Deployment, GenericObject, Kind, Namespace, Node, Pod, ReplicaSet, ResourceKind, Secret,
};
use kscope_units::duration::parse_duration;

use super::object_args::{kind_and_name, table_or_json};
use super::{CommandError, InformerArgs, Resolved, prepare_informer, wait_for_sync_reporting};

/// The kinds watched unless `--kinds` names others: the workloads and what they own. Those
/// the server does not serve are left out.
pub(super) use kscope_index_views::ownership::TREE_KINDS as DEFAULT_KINDS;

/// Print an object's ownership tree: what it owns down through ownerReferences, or with
/// --up its owners up to the root, each with its health as its table shows it.
#[derive(Debug, Clone, clap::Args)]
pub struct TreeArgs {
    /// The object, KIND/NAME (`deploy/web`, `widget/w1`, `pod/web-7f9-abcde`).
    #[arg(value_name = "KIND/NAME")]
    pub object: String,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// The chain of owners up to the root, instead of the dependents.
    #[arg(long)]
    pub up: bool,
    /// The kinds whose objects can be in the tree, named as for kubectl, separated by
    /// commas (the object's own kind is always watched). Default: the workload kinds and
    /// what they own (pods, configmaps, services, endpointslices...).
    #[arg(long)]
    pub kinds: Option<String>,
    /// `json` for the tree as JSON (nested `children`); a table otherwise.
    #[arg(short = 'o', long = "output", value_name = "FORMAT")]
    pub output: Option<String>,
    /// How long to wait for each kind's first list.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION", default_value = "60s")]
    pub sync_timeout: Duration,
}

pub async fn run(args: &TreeArgs, out: &mut impl Write) -> Result<(), CommandError> {
    args.cluster.refuse_namespace_set()?;
    let json = table_or_json(args.output.as_deref(), "tree")?;
    let (kind_name, name) = kind_and_name(&args.object, "deploy/web")?;
    let config = Config::load(None)?;
    let cluster = args.cluster.connect().await?;
    let discovery = Discovery::run(&cluster.client).await?;
    let target = resolve_kind(&discovery, kind_name)?;
    let unique = tree_kinds(&discovery, &target, args.kinds.as_deref())?;
    let informer = InformerArgs {
        resource: String::new(),
        cluster: args.cluster.clone(),
        selector: None,
        field_selector: None,
        config: None,
        fifo: None,
        initial_list: None,
    };
    let namespace = args.cluster.scope(&cluster).namespace().map(str::to_string);
    let mut forest = Forest::new();
    let mut watching = Vec::new();
    for kind in unique {
        let resolved = Resolved {
            config: config.clone(),
            cluster: cluster.clone(),
            kind,
            discovery: discovery.clone(),
        };
        watching.push(watch(&informer, &resolved, args.sync_timeout, &mut forest)?);
    }
    let mut stops = Vec::with_capacity(watching.len());
    let mut tasks = Vec::with_capacity(watching.len());
    let mut failed = None;
    for w in watching {
        stops.push(w.stop);
        tasks.push(w.task);
        match w.synced.await {
            Ok(Ok(())) => {}
            Ok(Err(err)) => failed = failed.or(Some(err)),
            Err(_) => {
                let why = format!("{}: its informer stopped before its first list", w.resource);
                failed = failed.or(Some(CommandError::Usage(why)));
            }
        }
    }
    let tree = tree_in(&forest, &target, namespace.as_deref(), name, args.up);
    drop(stops);
    for task in tasks {
        // A task ends by shutting its informer down; one that panicked has nothing to add.
        let _ = task.await;
    }
    if let Some(err) = failed {
        return Err(err);
    }
    let tree = tree?;
    if json {
        serde_json::to_writer_pretty(&mut *out, &tree).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        let mut tw = tabwriter::TabWriter::new(&mut *out).padding(3);
        writeln!(tw, "NAMESPACE\tNAME\tHEALTH")?;
        for (prefix, node) in tree.lines() {
            writeln!(
                tw,
                "{}\t{prefix}{}/{}\t{}",
                node.namespace.as_deref().unwrap_or(""),
                node.kind,
                node.name,
                node.health
            )?;
        }
        tw.flush()?;
    }
    out.flush()?;
    Ok(())
}

/// The kinds a tree of `target` reads: `target`'s own, then those `kinds` names (commas
/// between) or, without it, the default ones the server serves; each once. Shared by
/// `kscope tree` and the MCP `tree` tool.
pub(super) fn tree_kinds(
    discovery: &Discovery,
    target: &Kind,
    kinds: Option<&str>,
) -> Result<Vec<Kind>, CommandError> {
    let resolve = |name: &str| resolve_kind(discovery, name);
    let mut all = vec![target.clone()];
    match kinds {
        Some(names) => {
            for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                all.push(resolve(name)?);
            }
        }
        None => all.extend(DEFAULT_KINDS.split(',').filter_map(|n| resolve(n).ok())),
    }
    let mut unique: Vec<Kind> = Vec::with_capacity(all.len());
    for kind in all {
        if !unique
            .iter()
            .any(|k| k.group() == kind.group() && k.plural() == kind.plural())
        {
            unique.push(kind);
        }
    }
    Ok(unique)
}

/// `name`'s tree in `forest`: its dependents, or with `up` its owners up to the root; not
/// found in the words `kscope tree` and the MCP `tree` tool both say it.
pub(super) fn tree_in(
    forest: &Forest,
    target: &Kind,
    namespace: Option<&str>,
    name: &str,
    up: bool,
) -> Result<Tree, CommandError> {
    let found = forest.find(target.kind(), namespace, name).or_else(|| {
        (!target.namespaced())
            .then(|| forest.find(target.kind(), None, name))
            .flatten()
    });
    let Some(node) = found else {
        return Err(CommandError::Usage(format!(
            "{} {name:?} not found{}",
            target.plural(),
            namespace
                .filter(|_| target.namespaced())
                .map(|ns| format!(" in namespace {ns}"))
                .unwrap_or_default()
        )));
    };
    Ok(if up {
        Tree::chain(forest.ancestors(node.clone())).unwrap_or(Tree {
            node,
            children: Vec::new(),
        })
    } else {
        forest.descendants(node)
    })
}

/// The kind `name` names, as kubectl resolves it: a kind with a hand-written projection by
/// its name alone, any other through discovery.
pub(super) fn resolve_kind(
    discovery: &Discovery,
    name: &str,
) -> Result<Kind, kscope_client::discovery::UnknownName> {
    match name.parse::<ResourceKind>() {
        Ok(kind) => Ok(Kind::BuiltIn(kind)),
        Err(_) => discovery.resolve(name),
    }
}

/// One kind watched: its first list's outcome, the stop that ends it, the task running it.
struct Watching {
    resource: String,
    synced: oneshot::Receiver<Result<(), CommandError>>,
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

/// Starts an informer on the resolved kind, its store added to `forest`.
fn watch(
    args: &InformerArgs,
    resolved: &Resolved,
    timeout: Duration,
    forest: &mut Forest,
) -> Result<Watching, CommandError> {
    match resolved.kind.built_in() {
        Some(ResourceKind::Pods) => spawn::<Pod>(args, resolved, timeout, forest),
        Some(ResourceKind::Nodes) => spawn::<Node>(args, resolved, timeout, forest),
        Some(ResourceKind::Namespaces) => spawn::<Namespace>(args, resolved, timeout, forest),
        Some(ResourceKind::Deployments) => spawn::<Deployment>(args, resolved, timeout, forest),
        Some(ResourceKind::ReplicaSets) => spawn::<ReplicaSet>(args, resolved, timeout, forest),
        Some(ResourceKind::Secrets) => spawn::<Secret>(args, resolved, timeout, forest),
        None => spawn::<GenericObject>(args, resolved, timeout, forest),
    }
}

fn spawn<T: TableRow>(
    args: &InformerArgs,
    resolved: &Resolved,
    timeout: Duration,
    forest: &mut Forest,
) -> Result<Watching, CommandError> {
    let prepared = prepare_informer::<T>(args, resolved, None)?;
    let kind = resolved.kind.kind().to_string();
    forest.add(Arc::new(StoreOf::new(kind, prepared.writer.reader())));
    let (synced_tx, synced) = oneshot::channel();
    let (stop, stopped) = oneshot::channel::<()>();
    let resource = resolved.kind.to_string();
    let named = resource.clone();
    let task = tokio::spawn(async move {
        let informer =
            RunningInformer::start(prepared.config, prepared.lister_watcher, prepared.writer);
        let result = wait_for_sync_reporting(&informer, &resource, timeout).await;
        let ok = result.is_ok();
        // The receiver is gone only when the command itself is ending.
        let _ = synced_tx.send(result);
        if ok {
            let _ = stopped.await;
        }
        informer.shutdown().await;
    });
    Ok(Watching {
        resource: named,
        synced,
        stop,
        task,
    })
}
