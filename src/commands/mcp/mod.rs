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
use kscope_config::Config;
use kscope_units::duration::parse_duration;

use super::CommandError;

pub use tools::Server;

/// Serve the Model Context Protocol over stdio: tools that answer from kscope's indexed
/// informer stores (list, get, describe, events, logs, deltas, indexes, hotloops, tree,
/// timeline). Read-only.
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

/// What every tool shares: the cluster, its scope, the configuration and the warm kinds.
pub struct Shared {
    pub args: McpArgs,
    pub config: Config,
    pub cluster: Cluster,
    pub scope: NamespaceScope,
    /// Discovery, run once on the first name that is not a built-in kind.
    discovery: tokio::sync::OnceCell<Discovery>,
    /// Index definitions for informers started from here on (`indexes` adds to them).
    definitions: parking_lot::Mutex<Vec<kscope_index_views::definitions::IndexDefinition>>,
    warm: warm::WarmKinds,
    /// The tables subscribed to: dropping one's sender ends its notifications.
    subscriptions:
        parking_lot::Mutex<std::collections::HashMap<String, tokio::sync::oneshot::Sender<()>>>,
}

impl Shared {
    /// Reads the configuration (a bad one is reported before connecting) and connects.
    pub async fn connect(args: McpArgs) -> Result<Arc<Self>, CommandError> {
        let config = Config::load(args.config.as_deref())?;
        let cluster = args.cluster.connect().await?;
        let scope = args.cluster.scope(&cluster);
        Ok(Arc::new(Self {
            definitions: parking_lot::Mutex::new(config.indexes.clone()),
            warm: warm::WarmKinds::new(args.max_kinds),
            discovery: tokio::sync::OnceCell::new(),
            subscriptions: parking_lot::Mutex::new(std::collections::HashMap::new()),
            args,
            config,
            cluster,
            scope,
        }))
    }

    async fn discovery(&self) -> Result<&Discovery, ToolError> {
        Ok(self
            .discovery
            .get_or_try_init(|| Discovery::run(&self.cluster.client))
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
        Ok(self.resolve_kind(kind, &discovery))
    }

    /// A kind already resolved (through `discovery`), with the configuration as `resolve`
    /// gives it.
    fn resolve_kind(&self, kind: kscope_resources::Kind, discovery: &Discovery) -> super::Resolved {
        let mut config = self.config.clone();
        config.indexes = self.definitions.lock().clone();
        super::Resolved {
            config,
            cluster: self.cluster.clone(),
            kind,
            discovery: discovery.clone(),
        }
    }

    /// The warm informer of `name`'s kind, started (and synced) on first use.
    async fn warm(
        &self,
        name: &str,
    ) -> Result<(super::Resolved, Arc<dyn warm::WarmKind>), ToolError> {
        let resolved = self.resolve(name).await?;
        let warm = self.warm_resolved(&resolved).await?;
        Ok((resolved, warm))
    }

    /// The warm informer of a kind already resolved, started (and synced) on first use.
    async fn warm_resolved(
        &self,
        resolved: &super::Resolved,
    ) -> Result<Arc<dyn warm::WarmKind>, ToolError> {
        if let Some(warm) = self.warm.get(&resolved.kind) {
            return Ok(warm);
        }
        let definitions = kscope_index_views::definitions::indexes_for(
            &resolved.kind,
            &resolved.config.indexes,
            &resolved.discovery,
        );
        tracing::info!(kind = %resolved.kind, "mcp: starting an informer");
        let started = warm::start(
            resolved,
            definitions,
            &self.args.cluster,
            self.args.sync_timeout,
        )
        .await?;
        Ok(self.warm.insert(resolved.kind.clone(), started))
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
        context = %shared.cluster.context,
        server = %shared.cluster.server,
        "mcp: serving on stdio"
    );
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
