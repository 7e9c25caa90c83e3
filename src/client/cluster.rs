//! Connecting to a cluster the way kubectl does: `--kubeconfig`, else `KUBECONFIG`, else
//! `~/.kube/config`, else the in-cluster service account; `--context`; `-n` / `-A` scope.

use std::path::PathBuf;

use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError};

use super::limits::WireLimits;

/// The cluster flags shared by every command that talks to a cluster.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ClusterArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (default: its current-context).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// The namespace scope (default: the context's namespace, else "default").
    #[arg(short = 'n', long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// All namespaces.
    #[arg(short = 'A', long, conflicts_with = "namespace")]
    pub all_namespaces: bool,
    #[command(flatten)]
    pub limits: WireLimits,
}

/// Why kscope could not set up a client. Messages never include credentials.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("kubeconfig {path}: {}", first_line(.source))]
    Kubeconfig {
        path: String,
        #[source]
        source: KubeconfigError,
    },
    #[error(
        "kubeconfig {path}: no current-context is set{}; name one with --context or `kubectl config use-context NAME`",
        if .contexts.is_empty() { " and it has no contexts".to_string() } else { format!(" (its contexts: {})", .contexts.join(", ")) }
    )]
    NoCurrentContext { path: String, contexts: Vec<String> },
    #[error("context {0:?} does not exist in the kubeconfig")]
    UnknownContext(String),
    #[error(
        "no kubeconfig found (set --kubeconfig or KUBECONFIG) and not running in a cluster: {0}; try `kscope --demo` for a simulated cluster"
    )]
    NoConfiguration(String),
    #[error("cannot create a client: {0}")]
    Client(#[source] kube::Error),
}

/// Parser errors may add a multi-line excerpt of the file; the one-line error keeps the
/// message (with its line and column).
fn first_line(err: &KubeconfigError) -> String {
    // kube quotes the path with `'{:?}'`, which doubles the quotes: say it plainly, and
    // what to do when there is no kubeconfig at all.
    if let KubeconfigError::ReadConfig(io, path) = err {
        let hint = if io.kind() == std::io::ErrorKind::NotFound {
            "; try `kscope --demo` for a simulated cluster"
        } else {
            ""
        };
        return format!("cannot read {}: {io}{hint}", path.display());
    }
    let message = err.to_string();
    message
        .lines()
        .next()
        .unwrap_or_default()
        .trim_end()
        .to_string()
}

/// A client and what a person should see about where it points.
#[derive(Clone)]
pub struct Cluster {
    pub client: kube::Client,
    pub context: String,
    pub server: String,
    /// The namespace of the context (or "default", or the service account's).
    pub default_namespace: String,
    /// What the server may make lists and watches wait for or hold.
    pub limits: WireLimits,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("context", &self.context)
            .field("server", &self.server)
            .field("default_namespace", &self.default_namespace)
            .finish_non_exhaustive()
    }
}

/// The namespace scope of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NamespaceScope {
    All,
    One(String),
}

impl NamespaceScope {
    pub fn namespace(&self) -> Option<&str> {
        match self {
            Self::All => None,
            Self::One(ns) => Some(ns),
        }
    }
}

impl ClusterArgs {
    /// The namespace scope these flags ask for, given the context's namespace.
    pub fn scope(&self, cluster: &Cluster) -> NamespaceScope {
        if self.all_namespaces {
            NamespaceScope::All
        } else {
            NamespaceScope::One(
                self.namespace
                    .clone()
                    .unwrap_or_else(|| cluster.default_namespace.clone()),
            )
        }
    }

    /// Builds a client from these flags.
    pub async fn connect(&self) -> Result<Cluster, ClusterError> {
        let (kubeconfig, path) = match &self.kubeconfig {
            Some(path) => (
                Some(
                    Kubeconfig::read_from(path).map_err(|source| ClusterError::Kubeconfig {
                        path: path.display().to_string(),
                        source,
                    })?,
                ),
                path.display().to_string(),
            ),
            None => match Kubeconfig::read() {
                Ok(config) => (Some(config), kubeconfig_env_description()),
                // Nothing to read at all: in-cluster is the last resort, as for kubectl.
                Err(KubeconfigError::FindPath) | Err(KubeconfigError::ReadConfig(..))
                    if std::env::var_os("KUBECONFIG").is_none() =>
                {
                    (None, String::new())
                }
                Err(source) => {
                    return Err(ClusterError::Kubeconfig {
                        path: kubeconfig_env_description(),
                        source,
                    });
                }
            },
        };
        let Some(kubeconfig) = kubeconfig else {
            let config = kube::Config::incluster()
                .map_err(|e| ClusterError::NoConfiguration(e.to_string()))?;
            return Ok(Cluster::from_config(config, "in-cluster".into())?.with_limits(self.limits));
        };
        let context = match &self.context {
            Some(name) => {
                if !kubeconfig.contexts.iter().any(|c| &c.name == name) {
                    return Err(ClusterError::UnknownContext(name.clone()));
                }
                name.clone()
            }
            None => match kubeconfig.current_context.clone().filter(|c| !c.is_empty()) {
                Some(current) => current,
                None => {
                    return Err(ClusterError::NoCurrentContext {
                        path,
                        contexts: kubeconfig.contexts.iter().map(|c| c.name.clone()).collect(),
                    });
                }
            },
        };
        let options = KubeConfigOptions {
            context: Some(context.clone()).filter(|c| !c.is_empty()),
            ..KubeConfigOptions::default()
        };
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
            .await
            .map_err(|source| ClusterError::Kubeconfig { path, source })?;
        Ok(Cluster::from_config(config, context)?.with_limits(self.limits))
    }
}

impl ClusterArgs {
    /// The kubeconfig's context names, in its order, with its current one: what `:ctx`
    /// offers. Read again each time, so a context added meanwhile shows.
    pub fn context_names(&self) -> Result<(Vec<String>, Option<String>), ClusterError> {
        let (kubeconfig, path) = match &self.kubeconfig {
            Some(path) => (Kubeconfig::read_from(path), path.display().to_string()),
            None => (Kubeconfig::read(), kubeconfig_env_description()),
        };
        let kubeconfig = kubeconfig.map_err(|source| ClusterError::Kubeconfig { path, source })?;
        let names = kubeconfig.contexts.iter().map(|c| c.name.clone()).collect();
        Ok((names, kubeconfig.current_context.filter(|c| !c.is_empty())))
    }

    /// These flags with `context` instead of theirs: to connect to another context of the
    /// same kubeconfig. The namespace flag stays; the context's own namespace applies when
    /// there is none.
    pub fn with_context(&self, context: &str) -> Self {
        Self {
            context: Some(context.to_owned()),
            ..self.clone()
        }
    }
}

fn kubeconfig_env_description() -> String {
    match std::env::var("KUBECONFIG") {
        Ok(paths) if !paths.is_empty() => paths,
        _ => "~/.kube/config".into(),
    }
}

impl Cluster {
    /// A client for an already built kube `Config` (the simulated cluster, in-cluster).
    /// kube's own retrying of 429/503/504 is turned off: the Reflector backs off itself, as
    /// client-go's does, and its errors must be seen (and counted) rather than hidden.
    pub fn from_config(mut config: kube::Config, context: String) -> Result<Self, ClusterError> {
        config.default_retry = false;
        let server = config.cluster_url.to_string();
        let default_namespace = config.default_namespace.clone();
        let client = crate::transport::client(config).map_err(ClusterError::Client)?;
        Ok(Self {
            client,
            context,
            server,
            default_namespace,
            limits: WireLimits::default(),
        })
    }

    pub fn with_limits(mut self, limits: WireLimits) -> Self {
        self.limits = limits;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args_with(path: &std::path::Path) -> ClusterArgs {
        ClusterArgs {
            kubeconfig: Some(path.to_path_buf()),
            ..ClusterArgs::default()
        }
    }

    const KUBECONFIG: &str = r#"
apiVersion: v1
kind: Config
current-context: one
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: u
  user: {token: secret-token-value}
contexts:
- name: one
  context: {cluster: c, user: u, namespace: web}
- name: two
  context: {cluster: c, user: u}
"#;

    fn write(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kscope-cluster-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[tokio::test]
    async fn current_context_and_its_namespace() {
        let path = write("ok.yaml", KUBECONFIG);
        let cluster = args_with(&path).connect().await.unwrap();
        assert_eq!(cluster.context, "one");
        assert_eq!(cluster.default_namespace, "web");
        assert_eq!(cluster.server, "https://127.0.0.1:6443/");
        assert!(!format!("{cluster:?}").contains("secret-token-value"));
        let mut args = args_with(&path);
        args.context = Some("two".into());
        let two = args.connect().await.unwrap();
        assert_eq!(
            (two.context.as_str(), two.default_namespace.as_str()),
            ("two", "default")
        );
        args.all_namespaces = true;
        assert_eq!(args.scope(&two), NamespaceScope::All);
    }

    #[tokio::test]
    async fn bad_kubeconfig_and_unknown_context_are_clear_errors() {
        let path = write("bad.yaml", "clusters: [this is: not: valid");
        let err = args_with(&path).connect().await.unwrap_err();
        assert!(
            err.to_string()
                .starts_with(&format!("kubeconfig {}:", path.display())),
            "{err}"
        );

        let path = write("ok2.yaml", KUBECONFIG);
        let mut args = args_with(&path);
        args.context = Some("nope".into());
        let err = args.connect().await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "context \"nope\" does not exist in the kubeconfig"
        );

        let missing = args_with(std::path::Path::new("/nonexistent/kubeconfig"));
        let err = missing.connect().await.unwrap_err();
        assert!(err.to_string().contains("/nonexistent/kubeconfig"), "{err}");
        assert!(!err.to_string().contains("secret-token-value"));
    }
}
