//! `kscope mcp`: a read-only Model Context Protocol server over kscope's live, indexed
//! stores, so an assistant asks kscope's memory instead of the API server. Stdout is the
//! protocol: everything else goes to kscope's log file.

mod tools;
mod warm;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;

use kscope_client::cluster::{Cluster, ClusterArgs, NamespaceScope};
use kscope_client::discovery::Discovery;
use kscope_client::fleet::{dedupe, read_each};
use kscope_config::Config;
use kscope_units::duration::parse_duration;

use super::CommandError;

pub use tools::Server;

/// Serve the Model Context Protocol over stdio: tools that answer from kscope's indexed
/// informer stores (list, get, describe, events, logs, deltas, indexes, hotloops, tree,
/// timeline). Read-only. Several contexts (--context repeated, --contexts, --all-contexts) are
/// served at once, each answer naming its cluster and whether its store is current.
/// Every call is logged to kscope's log file.
#[derive(Debug, Clone, clap::Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Configuration file merged over the built-in one (default:
    /// $XDG_CONFIG_HOME/kscope/config.yaml if it exists).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// How many kinds keep a warm informer; past it the least recently used is stopped.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub max_kinds: usize,
    /// Serve the streamable HTTP transport at http://ADDR/mcp instead of stdio; loopback
    /// addresses only (kscope holds a cluster's credentials).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,
    /// How long a kind's first use waits for its informer to sync.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION", default_value = "60s")]
    pub sync_timeout: Duration,
}

/// Why a tool call failed, in the words `kscope get` and the TUI use.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error(transparent)]
    Command(#[from] CommandError),
    #[error("filter {text:?}: {source}")]
    Filter {
        text: String,
        #[source]
        source: kscope_index_views::query::ParseError,
    },
    #[error("unknown column {column:?}; columns: {known}")]
    UnknownColumn { column: String, known: String },
    #[error(
        "namespace {asked:?} is outside the scope kscope mcp watches (namespace {scope:?}; start it with -A for all)"
    )]
    OutsideScope { asked: String, scope: String },
    #[error("unknown cluster {cluster:?}; the clusters served: {known}")]
    UnknownCluster { cluster: String, known: String },
    #[error("several clusters are served: name one as cluster ({0})")]
    ClusterNeeded(String),
    #[error("cluster {cluster}: unreachable: {why}")]
    Unreachable { cluster: String, why: String },
    #[error("cursor {0:?} is not one this server gave")]
    Cursor(String),
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Fetch(#[from] kscope_client::fetch::FetchError),
    #[error(transparent)]
    Log(#[from] kscope_client::logs::LogError),
    #[error(transparent)]
    Yaml(#[from] kscope_index_views::detail::YamlError),
    #[error(transparent)]
    Index(#[from] kscope_index_views::definitions::IndexCommandError),
}

impl From<kscope_client::discovery::UnknownName> for ToolError {
    fn from(err: kscope_client::discovery::UnknownName) -> Self {
        Self::Command(err.into())
    }
}

impl From<kscope_client::discovery::DiscoveryError> for ToolError {
    fn from(err: kscope_client::discovery::DiscoveryError) -> Self {
        Self::Command(err.into())
    }
}

/// What every tool shares: the flags, the clusters served and the subscriptions.
pub struct Shared {
    pub args: McpArgs,
    /// The clusters served, in the order their contexts were selected; one unless the flags
    /// name several contexts. A context that reaches a cluster already served is not here.
    members: Vec<Member>,
    /// Contexts left out because an earlier one reaches the same cluster.
    same: Vec<kscope_client::fleet::SameCluster>,
    /// The tables subscribed to: dropping one's sender ends its notifications.
    subscriptions:
        parking_lot::Mutex<std::collections::HashMap<String, tokio::sync::oneshot::Sender<()>>>,
}

/// One cluster served: its client, its scope and the kinds kept warm on it.
pub struct Member {
    /// The kubeconfig context it is read through: the name a `cluster` argument gives.
    pub context: String,
    /// The flags with this member's context alone, as its informers read them.
    pub cluster_args: ClusterArgs,
    /// Why not, when the context could not be connected within [`CONNECT_BOUND`]: every
    /// call on it says so.
    pub cluster: Result<Cluster, String>,
    config: Config,
    pub scope: NamespaceScope,
    /// Discovery, run once on the first name that is not a built-in kind.
    discovery: tokio::sync::OnceCell<Discovery>,
    /// Index definitions for informers started from here on (`indexes` adds to them).
    definitions: parking_lot::Mutex<Vec<kscope_index_views::definitions::IndexDefinition>>,
    warm: warm::WarmKinds,
}

/// How long a call waits for a kind's informer, and for what.
#[derive(Debug, Clone, Copy)]
pub struct Wait {
    pub timeout: Duration,
    /// Answer once the store holds its first objects (as the TUI shows them) instead of
    /// after the whole first list.
    pub first_rows: bool,
}

/// How long connecting to one context of several (and reading its identity) may take
/// before the server starts without it: the others must not wait on an unreachable one.
const CONNECT_BOUND: Duration = Duration::from_secs(10);

impl Shared {
    /// Reads the configuration (a bad one is reported before connecting) and connects to
    /// the context, or to each of several (`--context a --context b`, `--contexts GLOB`,
    /// `--all-contexts`) at once, each reachable or not.
    pub async fn connect(args: McpArgs) -> Result<Arc<Self>, CommandError> {
        args.cluster.refuse_namespace_set()?;
        let config = Config::load(args.config.as_deref())?;
        let member = |context: String, cluster: Result<Cluster, String>| {
            let cluster_args = args.cluster.with_context(&context);
            // A context that did not connect answers nothing: its scope is never read.
            let scope = cluster
                .as_ref()
                .map_or(NamespaceScope::All, |c| args.cluster.scope(c));
            Member {
                definitions: parking_lot::Mutex::new(config.indexes.clone()),
                config: config.clone(),
                warm: warm::WarmKinds::new(args.max_kinds),
                discovery: tokio::sync::OnceCell::new(),
                context,
                cluster_args,
                cluster,
                scope,
            }
        };
        let (members, same) = if args.cluster.several_contexts() {
            let readings = read_each(&args.cluster, CONNECT_BOUND, |_| async {}).await?;
            let (readings, same) = dedupe(readings);
            let members = readings
                .into_iter()
                .map(|r| {
                    let cluster = r.outcome.map(|c| c.cluster).map_err(|e| e.to_string());
                    member(r.context, cluster)
                })
                .collect();
            (members, same)
        } else {
            let cluster = args.cluster.connect().await?;
            (
                vec![member(cluster.context.clone(), Ok(cluster))],
                Vec::new(),
            )
        };
        Ok(Arc::new(Self {
            subscriptions: parking_lot::Mutex::new(std::collections::HashMap::new()),
            members,
            same,
            args,
        }))
    }

    /// Whether several clusters are served: results then name each row's cluster.
    pub fn is_fleet(&self) -> bool {
        self.members.len() > 1 || self.args.cluster.several_contexts()
    }

    /// The member a call names; the only one when it names none. Several clusters and none
    /// named is an error that lists them.
    fn member(&self, cluster: Option<&str>) -> Result<&Member, ToolError> {
        match cluster.filter(|c| !c.is_empty()) {
            Some(name) => self
                .members
                .iter()
                .find(|m| m.context == name)
                .ok_or_else(|| {
                    let kept = self.same.iter().find(|s| s.context == name);
                    match kept {
                        Some(s) => ToolError::Usage(format!(
                            "context {} reaches the same cluster as {} ({}): name {}",
                            s.context, s.kept, s.how, s.kept
                        )),
                        None => ToolError::UnknownCluster {
                            cluster: name.to_string(),
                            known: self.contexts().join(", "),
                        },
                    }
                }),
            None => match self.members.as_slice() {
                [only] => Ok(only),
                _ => Err(ToolError::ClusterNeeded(self.contexts().join(", "))),
            },
        }
    }

    /// The members a call that reads across clusters covers: the one it names, else all.
    fn members_named(&self, cluster: Option<&str>) -> Result<Vec<&Member>, ToolError> {
        match cluster.filter(|c| !c.is_empty()) {
            Some(_) => Ok(vec![self.member(cluster)?]),
            None => Ok(self.members.iter().collect()),
        }
    }

    /// Wait for the whole first list, as long as `--sync-timeout`.
    fn synced(&self) -> Wait {
        Wait {
            timeout: self.args.sync_timeout,
            first_rows: false,
        }
    }

    fn contexts(&self) -> Vec<String> {
        self.members.iter().map(|m| m.context.clone()).collect()
    }

    /// Every member with its warm kinds (what resources list).
    fn all_warm(&self) -> Vec<(&Member, kscope_resources::Kind)> {
        self.members
            .iter()
            .flat_map(|m| m.warm.all().into_iter().map(move |(k, _)| (m, k)))
            .collect()
    }
}

impl Member {
    fn cluster(&self) -> Result<&Cluster, ToolError> {
        self.cluster.as_ref().map_err(|why| ToolError::Unreachable {
            cluster: self.context.clone(),
            why: why.clone(),
        })
    }

    async fn discovery(&self) -> Result<&Discovery, ToolError> {
        let cluster = self.cluster()?;
        Ok(self
            .discovery
            .get_or_try_init(|| Discovery::run(&cluster.client))
            .await?)
    }

    /// `name` resolved as kubectl resolves it: a built-in kind by its names alone, any other
    /// through discovery.
    async fn resolve(&self, name: &str) -> Result<super::Resolved, ToolError> {
        let (kind, discovery) = match name.parse::<kscope_resources::ResourceKind>() {
            Ok(kind) => (
                kscope_resources::Kind::BuiltIn(kind),
                Discovery::built_ins(),
            ),
            Err(_) => {
                let discovery = self.discovery().await?;
                (discovery.resolve(name)?, discovery.clone())
            }
        };
        self.resolve_kind(kind, &discovery)
    }

    /// A kind already resolved (through `discovery`), with the configuration as `resolve`
    /// gives it.
    fn resolve_kind(
        &self,
        kind: kscope_resources::Kind,
        discovery: &Discovery,
    ) -> Result<super::Resolved, ToolError> {
        let mut config = self.config.clone();
        config.indexes = self.definitions.lock().clone();
        Ok(super::Resolved {
            config,
            cluster: self.cluster()?.clone(),
            kind,
            discovery: discovery.clone(),
        })
    }

    /// The warm informer of `name`'s kind, started on first use and synced as `wait` says.
    async fn warm(
        &self,
        name: &str,
        wait: Wait,
    ) -> Result<(super::Resolved, Arc<dyn warm::WarmKind>), ToolError> {
        let resolved = self.resolve(name).await?;
        let warm = self.warm_resolved(&resolved, wait).await?;
        Ok((resolved, warm))
    }

    /// The warm informer of a kind already resolved, started on first use and synced as
    /// `wait` says. One that does not sync is stopped, so that the next call tries anew.
    async fn warm_resolved(
        &self,
        resolved: &super::Resolved,
        wait: Wait,
    ) -> Result<Arc<dyn warm::WarmKind>, ToolError> {
        let warm = match self.warm.get(&resolved.kind) {
            Some(warm) => warm,
            None => {
                let definitions = kscope_index_views::definitions::indexes_for(
                    &resolved.kind,
                    &resolved.config.indexes,
                    &resolved.discovery,
                );
                tracing::info!(kind = %resolved.kind, cluster = %self.context, "mcp: starting an informer");
                let started = warm::start(resolved, definitions, &self.cluster_args)?;
                self.warm.insert(resolved.kind.clone(), started)
            }
        };
        if let Err(err) = warm.synced(wait.first_rows, wait.timeout).await {
            self.warm.remove(&resolved.kind);
            return Err(err);
        }
        Ok(warm)
    }

    /// The namespace a call names, checked against the scope watched; the scope's own when
    /// none is named.
    fn namespace(&self, asked: Option<&str>) -> Result<Option<String>, ToolError> {
        match (asked.filter(|a| !a.is_empty()), &self.scope) {
            (None, scope) => Ok(scope.namespace().map(str::to_string)),
            (Some(asked), NamespaceScope::All) => Ok(Some(asked.to_string())),
            (Some(asked), NamespaceScope::One(ns)) if asked == ns => Ok(Some(asked.to_string())),
            (Some(asked), NamespaceScope::One(ns)) => Err(ToolError::OutsideScope {
                asked: asked.to_string(),
                scope: ns.clone(),
            }),
            (Some(asked), NamespaceScope::Set(set))
                if set.namespaces().iter().any(|n| n == asked) =>
            {
                Ok(Some(asked.to_string()))
            }
            (Some(asked), NamespaceScope::Set(set)) => Err(ToolError::OutsideScope {
                asked: asked.to_string(),
                scope: set.to_string(),
            }),
        }
    }
}

/// Serves MCP on stdin/stdout until the client closes it, or on `--listen` until
/// interrupted.
pub async fn run(args: &McpArgs) -> Result<(), CommandError> {
    if let Some(addr) = args.listen.filter(|a| !a.ip().is_loopback()) {
        return Err(CommandError::Usage(format!(
            "--listen {addr}: kscope mcp listens on loopback addresses only"
        )));
    }
    let shared = Shared::connect(args.clone()).await?;
    if let Some(addr) = args.listen {
        return listen(addr, shared).await;
    }
    tracing::info!(
        clusters = %shared.contexts().join(","),
        "mcp: serving on stdio"
    );
    for s in &shared.same {
        tracing::info!(context = %s.context, kept = %s.kept, how = s.how, "mcp: same cluster, served once");
    }
    let service = Server::new(shared)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| CommandError::Usage(format!("mcp: the client's initialize failed: {e}")))?;
    let reason = service
        .waiting()
        .await
        .map_err(|e| CommandError::Usage(format!("mcp: the session failed: {e}")))?;
    tracing::info!(?reason, "mcp: the client closed the session");
    Ok(())
}

/// Serves the streamable HTTP transport at `/mcp` on `addr`, one session per client, until
/// SIGINT or SIGTERM.
async fn listen(addr: std::net::SocketAddr, shared: Arc<Shared>) -> Result<(), CommandError> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let service = StreamableHttpService::new(
        move || Ok(Server::new(shared.clone())),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    tracing::info!(%bound, "mcp: serving streamable HTTP");
    // Said on stderr: with --listen, stdout is not the protocol, and port 0 picks one.
    eprintln!("kscope mcp listening at http://{bound}/mcp");
    let stopped = async {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        let term = async {
            match term.as_mut() {
                Some(term) => term.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term => {}
        }
    };
    axum::serve(listener, router)
        .with_graceful_shutdown(stopped)
        .await?;
    Ok(())
}
