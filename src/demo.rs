//! `kscope --demo`: two simulated clusters started in this process, handed to the TUI as
//! contexts, with their kubeconfig written where kubectl can be pointed at it.

use std::path::PathBuf;
use std::sync::Arc;

use kscope_client::cluster::{Cluster, ClusterArgs, ClusterError, NamespaceScope};
use kscope_sim::{Sim, SimConfig, SimError, SimHandle};
use kscope_ui::Launch;
use kscope_ui::contexts::ContextSwitcher;

/// The demo's first simulated cluster's context; the second is `kscope-demo-2`.
const DEMO_CONTEXT: &str = "kscope-demo";

/// Why the demo could not start.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("starting the simulated cluster: {0}")]
    Sim(#[from] SimError),
    #[error(transparent)]
    Cluster(#[from] ClusterError),
}

/// The demo's running clusters; [`Demo::shutdown`] stops them.
pub struct Demo {
    sims: Vec<SimHandle>,
    kubeconfig: DemoKubeconfig,
}

impl Demo {
    /// Starts two clusters, so that `:ctx` has somewhere to go: a busy one, which runs the
    /// demo's Widget controller with its metrics, and a small one. All namespaces are shown
    /// unless `-n` narrows them.
    pub async fn start(args: &ClusterArgs) -> Result<(Self, Launch), DemoError> {
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
        let kubeconfig = kscope_sim::kubeconfig_for(&[
            (DEMO_CONTEXT, &sim),
            (second_context.as_str(), &second),
        ])?;
        let kubeconfig = DemoKubeconfig::write(&kubeconfig);
        let configs = [
            (DEMO_CONTEXT.to_owned(), sim.kube_config().await?),
            (second_context, second.kube_config().await?),
        ];
        let cluster = Cluster::from_config(configs[0].1.clone(), DEMO_CONTEXT.into())?;
        let scope = match &args.namespace {
            // One namespace, or a set of them (`-n a,b`).
            Some(_) => args.scope(&cluster),
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
        let launch = Launch {
            cluster,
            scope,
            contexts,
            notice: Some(kubeconfig.notice.clone()),
            readwrite: None,
            playback: None,
            restore_scope: false,
        };
        Ok((
            Self {
                sims: vec![sim, second],
                kubeconfig,
            },
            launch,
        ))
    }

    /// Stops the clusters and removes their kubeconfig: they are gone with this process.
    pub async fn shutdown(self) {
        for sim in self.sims {
            sim.shutdown().await;
        }
        if let Some(path) = self.kubeconfig.path
            && let Err(err) = std::fs::remove_file(&path)
        {
            tracing::warn!(path = %path.display(), error = %err, "could not remove the demo's kubeconfig");
        }
    }
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
    /// Writes `kubeconfig` to `demo-PID.kubeconfig` in kscope's state directory: named by
    /// this process, so that two demos running at once each have their own, and the first
    /// to stop removes only its own.
    fn write(kubeconfig: &str) -> Self {
        let name = format!("demo-{}.kubeconfig", std::process::id());
        let Some(path) = kscope_config::state_dir().map(|dir| dir.join(name)) else {
            return Self {
                path: None,
                notice:
                    "the demo's kubeconfig was not written: neither XDG_STATE_HOME nor HOME is set"
                        .into(),
            };
        };
        match kscope_sim::write_kubeconfig(&path, kubeconfig) {
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
