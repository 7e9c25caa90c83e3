//! The terminal UI: `kscope` on a kube context, `kscope --demo` on the simulated cluster.
//!
//! Background tasks (informer, view worker, tap) only notify; the event loop in [`app`] pulls
//! a copy of what is visible and draws it with [`draw`], never holding a lock while drawing.
//! The table is one kind at a time ([`table`]); commands ([`command`]) and drill-downs
//! ([`nav`]) replace it.

pub mod action;
pub mod app;
pub mod command;
pub mod contexts;
pub mod deltas;
pub mod detail;
pub mod draw;
pub mod effect;
pub mod favourites;
pub mod keymap;
pub mod layout;
pub mod line;
pub mod logs;
pub mod mixed_table;
pub mod nav;
pub mod queue;
pub mod selectors;
pub mod state;
pub mod table;
pub mod table_pane;
pub mod terminal;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crossterm::event::EventStream;

use crate::client::cluster::{Cluster, ClusterArgs, ClusterError, NamespaceScope};
use crate::config::{Config, ConfigError};
use crate::index_views::query::QueryError;
use crate::informers::indexer::IndexerError;
use crate::resources::ResourceKind;
use crate::sim::{Sim, SimConfig, SimError};

use self::app::App;
use self::contexts::ContextSwitcher;
use self::detail::DetailController;
use self::favourites::Favourites;
use self::nav::ViewSpec;
use self::table::TableStarter;
use self::terminal::TerminalGuard;
use crate::client::discovery::Catalog;

/// The header's scope when every namespace is shown.
pub const ALL_NAMESPACES: &str = "all namespaces";
/// The demo's first simulated cluster's context; the second is `kscope-demo-2`.
const DEMO_CONTEXT: &str = "kscope-demo";
/// Tap entries kept for the delta panel's history.
const TAP_CAPACITY: usize = 4096;

/// Why the TUI could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum UiError {
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error("starting the simulated cluster: {0}")]
    Sim(#[from] SimError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("indexes: {0}")]
    Index(#[from] IndexerError),
    #[error(transparent)]
    Query(#[from] QueryError),
    #[error("terminal: {0}")]
    Terminal(#[from] std::io::Error),
}

/// A backend that cannot fail (ratatui's TestBackend) runs the same loop.
impl From<std::convert::Infallible> for UiError {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}

/// Where the TUI gets its cluster from.
#[derive(Debug, Clone)]
pub enum Source {
    /// The kube context the flags name.
    Kube(ClusterArgs),
    /// A simulated cluster started in this process; all namespaces unless `-n` narrows it.
    Demo(ClusterArgs),
}

/// Runs the TUI until the person quits. Must run inside a Tokio runtime.
/// `config` is the `--config` file merged over the built-in configuration (default: the
/// user's file under `$XDG_CONFIG_HOME`, if there is one).
pub async fn run(source: Source, config: Option<&Path>) -> Result<(), UiError> {
    // A bad configuration (indexes or keys) is reported before connecting to anything.
    let config = Config::load(config)?;
    let mut demo_kubeconfig = None;
    let (cluster, scope, sims, contexts) = match &source {
        Source::Kube(args) => {
            let cluster = args.connect().await?;
            let scope = args.scope(&cluster);
            let list_args = args.clone();
            let connect_args = args.clone();
            let contexts = ContextSwitcher::new(
                Arc::new(move || list_args.context_names()),
                Arc::new(move |context| {
                    let args = connect_args.with_context(&context);
                    Box::pin(async move { args.connect().await })
                }),
            );
            (cluster, scope, Vec::new(), contexts)
        }
        Source::Demo(args) => {
            // Two clusters, so that `:ctx` has somewhere to go: a busy one and a small one.
            // The busy one runs the demo's Widget controller, with its metrics.
            let sim = Sim::start(
                SimConfig::with_size(3000, 30, 8)
                    .churn(5.0, None)
                    .workload_pods(true)
                    .widget_controller(true),
            )
            .await?;
            let second = Sim::start(
                SimConfig::with_size(400, 6, 3)
                    .seed(2)
                    .churn(1.0, None)
                    .workload_pods(true),
            )
            .await?;
            let second_context = format!("{DEMO_CONTEXT}-2");
            let kubeconfig = crate::sim::kubeconfig_for(&[
                (DEMO_CONTEXT, &sim),
                (second_context.as_str(), &second),
            ])?;
            demo_kubeconfig = Some(DemoKubeconfig::write(&kubeconfig));
            let configs = [
                (DEMO_CONTEXT.to_owned(), sim.kube_config().await?),
                (second_context, second.kube_config().await?),
            ];
            let cluster = Cluster::from_config(configs[0].1.clone(), DEMO_CONTEXT.into())?;
            let scope = match &args.namespace {
                Some(ns) => NamespaceScope::One(ns.clone()),
                None => NamespaceScope::All,
            };
            let names: Vec<String> = configs.iter().map(|(name, _)| name.clone()).collect();
            let contexts = ContextSwitcher::new(
                Arc::new(move || Ok((names.clone(), Some(DEMO_CONTEXT.to_owned())))),
                Arc::new(move |context| {
                    let config = configs.iter().find(|(name, _)| *name == context).cloned();
                    Box::pin(async move {
                        match config {
                            Some((name, config)) => Cluster::from_config(config, name),
                            None => Err(ClusterError::UnknownContext(context)),
                        }
                    })
                }),
            );
            (cluster, scope, vec![sim, second], contexts)
        }
    };
    let detail = DetailController::new(cluster.client.clone(), None);
    let (catalog, _catalog_watch, discovery_error) = Catalog::keep_current(&cluster).await;
    if let Some(err) = discovery_error {
        // The TUI still shows the built-in kinds; the log says why the others are missing.
        tracing::warn!(error = %err, "discovery failed: only the built-in kinds are commands");
    }
    let starter = TableStarter::new(cluster, config.indexes, TAP_CAPACITY)
        .with_pipeline(config.informers)
        .with_catalog(catalog);
    let app = App::new(
        starter,
        ViewSpec::new(ResourceKind::Pods, scope),
        true,
        detail,
    )?
    .with_keymap(config.keys)
    .with_log_settings(config.logs)
    .with_contexts(contexts);
    let app = match crate::logging::state_dir() {
        Some(dir) => app.with_favourites(Favourites::load(dir.join("namespaces.json"))),
        None => app,
    };
    let app = match &demo_kubeconfig {
        Some(demo) => app.with_notice(demo.notice.clone()),
        None => app,
    };
    let result = {
        let mut guard = TerminalGuard::enter()?;
        app.run(guard.terminal(), EventStream::new(), &mut ()).await
    };
    for sim in sims {
        sim.shutdown().await;
    }
    if let Some(DemoKubeconfig {
        path: Some(path), ..
    }) = demo_kubeconfig
    {
        // Its clusters are gone with this process.
        if let Err(err) = std::fs::remove_file(&path) {
            tracing::warn!(path = %path.display(), error = %err, "could not remove the demo's kubeconfig");
        }
    }
    result
}

/// The demo clusters' kubeconfig, written where kubectl can be pointed at it, so that a
/// person can start the cascades the demo shows (`kubectl create deployment …`).
struct DemoKubeconfig {
    /// Where it was written, if it was.
    path: Option<PathBuf>,
    /// What the message line says at start: how to use it, or why there is none.
    notice: String,
}

impl DemoKubeconfig {
    /// Writes `kubeconfig` to `demo.kubeconfig` in kscope's state directory.
    fn write(kubeconfig: &str) -> Self {
        let Some(path) = crate::logging::state_dir().map(|dir| dir.join("demo.kubeconfig")) else {
            return Self {
                path: None,
                notice:
                    "the demo's kubeconfig was not written: neither XDG_STATE_HOME nor HOME is set"
                        .into(),
            };
        };
        match crate::sim::write_kubeconfig(&path, kubeconfig) {
            Ok(()) => {
                tracing::info!(path = %path.display(), "wrote the demo clusters' kubeconfig");
                Self {
                    notice: format!(
                        "kubectl --kubeconfig {} get pods   (contexts {DEMO_CONTEXT}, {DEMO_CONTEXT}-2)",
                        path.display()
                    ),
                    path: Some(path),
                }
            }
            Err(err) => {
                tracing::warn!(error = %err, "could not write the demo's kubeconfig");
                Self {
                    path: None,
                    notice: format!("the demo's kubeconfig was not written: {err}"),
                }
            }
        }
    }
}
