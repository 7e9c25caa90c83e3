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
    /// The kubeconfig context to use (default: its current-context). `kscope get` and
    /// `kscope mcp` take it repeated, to read several clusters at once.
    #[arg(long, value_name = "NAME")]
    pub context: Vec<String>,
    /// `kscope get` and `kscope mcp` only: every kubeconfig context whose name matches GLOB
    /// (`*` any run of characters, `?` one), read at once.
    #[arg(long, value_name = "GLOB", conflicts_with_all = ["context", "all_contexts"])]
    pub contexts: Option<String>,
    /// `kscope get` and `kscope mcp` only: every context of the kubeconfig, read at once.
    #[arg(long, conflicts_with = "context")]
    pub all_contexts: bool,
    /// The namespace scope (default: the context's namespace, else "default"); a comma
    /// list (`-n a,b`) is a set of namespaces, for the TUI and `kscope get`.
    #[arg(short = 'n', long, value_name = "NAMESPACE", value_parser = namespace_flag)]
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
    #[error("--contexts {0:?} matches none of the kubeconfig's contexts")]
    NoContextMatches(String),
    #[error(
        "this command reads one cluster: several contexts (--context repeated, --contexts, --all-contexts) are for `kscope get`, `kscope mcp` and the TUI"
    )]
    SeveralContexts,
    #[error("no client for any of the contexts {} within {secs}s", .contexts.join(", "))]
    NoClientWithin { contexts: Vec<String>, secs: u64 },
    #[error(
        "no kubeconfig found (set --kubeconfig or KUBECONFIG) and not running in a cluster: {0}; try `kscope --demo` for a simulated cluster"
    )]
    NoConfiguration(String),
    #[error(
        "-n {0}: this command reads one namespace or all (-A); a set of namespaces is for the TUI and `kscope get`"
    )]
    NamespaceSet(String),
    #[error("cannot create a client: {0}")]
    Client(#[source] kube::Error),
    #[error("cannot create a client: {0}")]
    CredentialPlugin(#[source] CredentialPluginFailed),
    #[error(
        "cluster {cluster:?}: server {server:?} is not a URL with a host (write it as https://HOST:PORT)"
    )]
    ServerUrl { cluster: String, server: String },
}

/// A kubeconfig user's credential plugin (`exec`) that failed: its exit status and what it
/// wrote to stderr, its message to the person, as kubectl shows them. Never its stdout,
/// which may hold a credential, nor kube's dump of the whole command and its output.
#[derive(Debug, thiserror::Error)]
#[error("getting credentials: the exec plugin failed with {status}{}", stderr_said(.stderr))]
pub struct CredentialPluginFailed {
    status: std::process::ExitStatus,
    stderr: String,
}

impl CredentialPluginFailed {
    /// The failed plugin run in `err`, if that is what it is.
    pub fn of(err: &kube::Error) -> Option<Self> {
        match err {
            kube::Error::Auth(kube::client::AuthError::AuthExecRun { out, .. }) => Some(Self {
                status: out.status,
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            }),
            _ => None,
        }
    }
}

/// What a plugin wrote to stderr, on one line and at most a few hundred characters.
fn stderr_said(stderr: &str) -> String {
    const MOST: usize = 300;
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let said = lines.join("; ");
    match said.char_indices().nth(MOST) {
        Some((cut, _)) => format!(": {}…", &said[..cut]),
        None => format!(": {said}"),
    }
}

/// kubectl's reading of a server without a scheme (`127.0.0.1:6443`): client-go's
/// `DefaultServerURL` prefixes `http://` when the transport is not yet known to be TLS,
/// which it is not when clientcmd asks (kubectl 1.32 sends `GET http://127.0.0.1:6443/api`
/// for such a kubeconfig, with or without a CA). kube instead panics inside its client on
/// a URL without a scheme, so each such server is given kubectl's.
fn default_scheme(kubeconfig: &mut Kubeconfig) -> Result<(), ClusterError> {
    for named in &mut kubeconfig.clusters {
        let Some(cluster) = named.cluster.as_mut() else {
            continue;
        };
        let Some(server) = cluster.server.as_mut() else {
            continue;
        };
        if !server.contains("://") {
            *server = format!("http://{server}");
        }
        let has_host = server
            .parse::<http::Uri>()
            .ok()
            .is_some_and(|uri| uri.scheme().is_some() && uri.host().is_some_and(|h| !h.is_empty()));
        if !has_host {
            return Err(ClusterError::ServerUrl {
                cluster: named.name.clone(),
                server: server.clone(),
            });
        }
    }
    Ok(())
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
    /// The SHA-256 of the CA bundle the context trusts (`None`: the system's roots): with
    /// the server URL, a cluster's identity when its own cannot be read.
    pub ca_sha256: Option<String>,
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
    /// Several namespaces (`-n a,b`, or a set saved by name): listed and watched across all
    /// namespaces, one list and watch per kind, the other namespaces' objects left out by
    /// the reader (through a namespace index, never a scan).
    Set(NamespaceSet),
}

impl NamespaceScope {
    /// The one namespace lists and watches are confined to; `None` across all of them (a
    /// set's too: one watch across namespaces costs less than one per member).
    pub fn namespace(&self) -> Option<&str> {
        match self {
            Self::All | Self::Set(_) => None,
            Self::One(ns) => Some(ns),
        }
    }

    /// The namespaces a set admits; `None` for one namespace or all.
    pub fn members(&self) -> Option<&[String]> {
        match self {
            Self::Set(set) => Some(set.namespaces()),
            Self::All | Self::One(_) => None,
        }
    }

    /// `-n`'s value: one namespace, or a comma list as an unnamed set (one name listed is
    /// that namespace). Every name must be a namespace name: a set is filtered here, not by
    /// the server, which would otherwise be the one to refuse a bad name.
    pub fn parse_list(text: &str) -> Result<Self, BadNamespace> {
        let names: Vec<String> = text.split(',').map(str::to_string).collect();
        if let Some(bad) = names.iter().find(|n| !is_namespace_name(n)) {
            return Err(BadNamespace(bad.clone()));
        }
        let set = NamespaceSet::new(None, names);
        Ok(match set.namespaces() {
            [one] => Self::One(one.clone()),
            _ => Self::Set(set),
        })
    }
}

/// A name that cannot be a namespace's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a valid namespace name (lowercase letters, digits and '-')")]
pub struct BadNamespace(pub String);

/// A DNS-1123 label, as namespace names must be (and as kscope names namespace sets).
pub fn is_namespace_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

/// Namespaces shown together: sorted and each once, so that the same members in another
/// order are the same scope (and reuse its running tables).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NamespaceSet {
    /// The name it was saved under (`:nsset team-a a,b`); `None` for a list typed as is.
    pub name: Option<String>,
    namespaces: Vec<String>,
}

impl NamespaceSet {
    pub fn new(name: Option<String>, namespaces: impl IntoIterator<Item = String>) -> Self {
        let mut namespaces: Vec<String> = namespaces.into_iter().collect();
        namespaces.sort();
        namespaces.dedup();
        Self { name, namespaces }
    }

    pub fn namespaces(&self) -> &[String] {
        &self.namespaces
    }
}

/// `team-a (a, b, c)` for a named set, `a, b, c` for a list.
impl std::fmt::Display for NamespaceSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let members = self.namespaces.join(", ");
        match &self.name {
            Some(name) => write!(f, "{name} ({members})"),
            None => f.write_str(&members),
        }
    }
}

/// clap's check of `-n`: a comma list must name namespaces only (one name is left to the
/// server to judge, as kubectl leaves it).
fn namespace_flag(text: &str) -> Result<String, BadNamespace> {
    if text.contains(',') {
        NamespaceScope::parse_list(text)?;
    }
    Ok(text.to_string())
}

impl ClusterArgs {
    /// The namespace scope these flags ask for, given the context's namespace.
    pub fn scope(&self, cluster: &Cluster) -> NamespaceScope {
        match (&self.namespace, self.all_namespaces) {
            (_, true) => NamespaceScope::All,
            (Some(list), false) if list.contains(',') => NamespaceScope::parse_list(list)
                // Flags built in code skip clap's check: the server judges a bad name.
                .unwrap_or_else(|_| NamespaceScope::One(list.clone())),
            (Some(ns), false) => NamespaceScope::One(ns.clone()),
            (None, false) => NamespaceScope::One(cluster.default_namespace.clone()),
        }
    }

    /// Refuses a set of namespaces (`-n a,b`) for a command that reads one namespace or
    /// all: listing every namespace instead would show what the person left out.
    pub fn refuse_namespace_set(&self) -> Result<(), ClusterError> {
        match &self.namespace {
            Some(list) if list.contains(',') && !self.all_namespaces => {
                Err(ClusterError::NamespaceSet(list.clone()))
            }
            _ => Ok(()),
        }
    }

    /// Builds a client from these flags. Several contexts are refused: only the commands
    /// that read a fleet ([`crate::fleet`]) take them.
    pub async fn connect(&self) -> Result<Cluster, ClusterError> {
        if self.several_contexts() {
            return Err(ClusterError::SeveralContexts);
        }
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
        let Some(mut kubeconfig) = kubeconfig else {
            let config = kube::Config::incluster()
                .map_err(|e| ClusterError::NoConfiguration(e.to_string()))?;
            return Ok(Cluster::from_config(config, "in-cluster".into())?.with_limits(self.limits));
        };
        let context = match self.context.first() {
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
        default_scheme(&mut kubeconfig)?;
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
    /// Whether these flags name several clusters (however many contexts they turn out to
    /// match): `--context` more than once, `--contexts` or `--all-contexts`.
    pub fn several_contexts(&self) -> bool {
        self.context.len() > 1 || self.contexts.is_some() || self.all_contexts
    }

    /// The contexts these flags select: each repeated `--context` once, in the order given
    /// (each must exist); `--contexts GLOB` and `--all-contexts` in the kubeconfig's order.
    pub fn selected_contexts(&self) -> Result<Vec<String>, ClusterError> {
        let (names, _) = self.context_names()?;
        if let Some(glob) = &self.contexts {
            let matching: Vec<String> = names
                .into_iter()
                .filter(|n| glob_matches(glob, n))
                .collect();
            if matching.is_empty() {
                return Err(ClusterError::NoContextMatches(glob.clone()));
            }
            return Ok(matching);
        }
        if self.all_contexts {
            return Ok(names);
        }
        let mut selected: Vec<String> = Vec::with_capacity(self.context.len());
        for name in &self.context {
            if !names.contains(name) {
                return Err(ClusterError::UnknownContext(name.clone()));
            }
            if !selected.contains(name) {
                selected.push(name.clone());
            }
        }
        Ok(selected)
    }

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

    /// These flags (a subcommand's) with those given before the subcommand (`outer`, as in
    /// `kscope --kubeconfig F get pods`, which kubectl takes) filled in where these have
    /// none, so that no flag is silently ignored. A flag given on both sides with different
    /// values is an error naming it.
    pub fn with_outer(mut self, outer: &ClusterArgs) -> Result<Self, String> {
        fn fill<T: PartialEq + Clone + std::fmt::Debug>(
            flag: &str,
            inner: &mut T,
            outer: &T,
            unset: &T,
        ) -> Result<(), String> {
            if outer == unset || inner == outer {
                return Ok(());
            }
            if inner != unset {
                return Err(format!(
                    "{flag} is given both before the command and after it, with different values"
                ));
            }
            *inner = outer.clone();
            Ok(())
        }
        let (none, defaults) = (ClusterArgs::default(), WireLimits::default());
        fill(
            "--kubeconfig",
            &mut self.kubeconfig,
            &outer.kubeconfig,
            &none.kubeconfig,
        )?;
        fill(
            "--context",
            &mut self.context,
            &outer.context,
            &none.context,
        )?;
        fill(
            "--contexts",
            &mut self.contexts,
            &outer.contexts,
            &none.contexts,
        )?;
        self.all_contexts |= outer.all_contexts;
        fill(
            "--namespace",
            &mut self.namespace,
            &outer.namespace,
            &none.namespace,
        )?;
        self.all_namespaces |= outer.all_namespaces;
        let (limits, theirs) = (&mut self.limits, &outer.limits);
        fill(
            "--max-watch-event",
            &mut limits.max_watch_line,
            &theirs.max_watch_line,
            &defaults.max_watch_line,
        )?;
        fill(
            "--max-list-body",
            &mut limits.max_list_body,
            &theirs.max_list_body,
            &defaults.max_list_body,
        )?;
        fill(
            "--list-stall-timeout",
            &mut limits.list_stall,
            &theirs.list_stall,
            &defaults.list_stall,
        )?;
        fill(
            "--list-timeout",
            &mut limits.list_deadline,
            &theirs.list_deadline,
            &defaults.list_deadline,
        )?;
        fill(
            "--watch-idle-timeout",
            &mut limits.watch_idle,
            &theirs.watch_idle,
            &defaults.watch_idle,
        )?;
        if self.all_namespaces && self.namespace.is_some() {
            return Err("--namespace and --all-namespaces cannot be used together".into());
        }
        Ok(self)
    }

    /// Whether any of these flags was given (differs from its default).
    pub fn any_given(&self) -> bool {
        self.kubeconfig.is_some()
            || !self.context.is_empty()
            || self.contexts.is_some()
            || self.all_contexts
            || self.namespace.is_some()
            || self.all_namespaces
            || self.limits != WireLimits::default()
    }

    /// These flags with `context` instead of theirs: to connect to another context of the
    /// same kubeconfig. The namespace flag stays; the context's own namespace applies when
    /// there is none.
    pub fn with_context(&self, context: &str) -> Self {
        Self {
            context: vec![context.to_owned()],
            contexts: None,
            all_contexts: false,
            ..self.clone()
        }
    }
}

/// Whether `name` matches a shell glob: `*` any run of characters, `?` one, anything else
/// itself (context names hold `.`, `_`, `@` and `:`, none of them special here).
fn glob_matches(glob: &str, name: &str) -> bool {
    let mut pattern = String::from("^");
    for c in glob.chars() {
        match c {
            '*' => pattern.push_str(".*"),
            '?' => pattern.push('.'),
            c => pattern.push_str(&regex::escape(c.encode_utf8(&mut [0; 4]))),
        }
    }
    pattern.push('$');
    regex::Regex::new(&pattern).is_ok_and(|re| re.is_match(name))
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
        let ca_sha256 = config.root_cert.as_ref().map(|certs| {
            let mut context = ring::digest::Context::new(&ring::digest::SHA256);
            for der in certs {
                context.update(der);
            }
            let hex: String = context
                .finish()
                .as_ref()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            format!("sha256:{hex}")
        });
        let default_namespace = config.default_namespace.clone();
        let client = crate::transport::client(config).map_err(|err| {
            match CredentialPluginFailed::of(&err) {
                Some(plugin) => ClusterError::CredentialPlugin(plugin),
                None => ClusterError::Client(err),
            }
        })?;
        Ok(Self {
            client,
            context,
            server,
            ca_sha256,
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

    #[test]
    fn a_comma_list_is_a_set_of_valid_namespace_names() {
        let set = |name: Option<&str>, members: &[&str]| {
            NamespaceScope::Set(NamespaceSet::new(
                name.map(str::to_string),
                members.iter().map(|m| m.to_string()),
            ))
        };
        assert_eq!(
            NamespaceScope::parse_list("b,a,b"),
            Ok(set(None, &["a", "b"]))
        );
        assert_eq!(
            NamespaceScope::parse_list("web"),
            Ok(NamespaceScope::One("web".into()))
        );
        assert_eq!(
            NamespaceScope::parse_list("a,a"),
            Ok(NamespaceScope::One("a".into()))
        );
        for bad in ["a,B", "a,,b", "a,", "a,-b", "a,b_c"] {
            assert!(NamespaceScope::parse_list(bad).is_err(), "{bad}");
        }
        assert_eq!(
            NamespaceScope::parse_list("a,Nope")
                .unwrap_err()
                .to_string(),
            "\"Nope\" is not a valid namespace name (lowercase letters, digits and '-')"
        );
        let named = set(Some("team-a"), &["c", "a"]);
        assert_eq!(named.namespace(), None, "listed across namespaces");
        assert_eq!(
            named.members(),
            Some(&["a".to_string(), "c".to_string()][..])
        );
        let NamespaceScope::Set(named) = named else {
            unreachable!()
        };
        assert_eq!(named.to_string(), "team-a (a, c)");
        assert!(namespace_flag("web,Bad").is_err());
        assert_eq!(
            namespace_flag("Bad").as_deref(),
            Ok("Bad"),
            "one name is the server's to judge"
        );
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
        args.context = vec!["two".into()];
        let two = args.connect().await.unwrap();
        assert_eq!(
            (two.context.as_str(), two.default_namespace.as_str()),
            ("two", "default")
        );
        args.all_namespaces = true;
        assert_eq!(args.scope(&two), NamespaceScope::All);
    }

    #[test]
    fn contexts_selected_by_repetition_glob_or_all() {
        let path = write(
            "select.yaml",
            &format!("{KUBECONFIG}- name: prod-eu\n  context: {{cluster: c, user: u}}\n"),
        );
        let mut args = args_with(&path);
        args.context = vec!["two".into(), "one".into(), "two".into()];
        assert!(args.several_contexts());
        assert_eq!(args.selected_contexts().unwrap(), ["two", "one"]);
        args.context = vec!["two".into(), "nope".into()];
        assert!(
            matches!(args.selected_contexts(), Err(ClusterError::UnknownContext(n)) if n == "nope")
        );
        args.context.clear();
        args.contexts = Some("*o*".into());
        assert_eq!(args.selected_contexts().unwrap(), ["one", "two", "prod-eu"]);
        args.contexts = Some("prod-?u".into());
        assert_eq!(args.selected_contexts().unwrap(), ["prod-eu"]);
        args.contexts = Some("prod.*".into());
        assert!(
            matches!(
                args.selected_contexts(),
                Err(ClusterError::NoContextMatches(_))
            ),
            "a dot is a dot"
        );
        args.contexts = None;
        args.all_contexts = true;
        assert_eq!(args.selected_contexts().unwrap(), ["one", "two", "prod-eu"]);
    }

    #[tokio::test]
    async fn several_contexts_are_refused_where_one_cluster_is_read() {
        let path = write("several.yaml", KUBECONFIG);
        let mut args = args_with(&path);
        args.context = vec!["one".into(), "two".into()];
        assert!(matches!(
            args.connect().await,
            Err(ClusterError::SeveralContexts)
        ));
        args.context = vec!["two".into()];
        assert!(!args.several_contexts());
        assert_eq!(args.connect().await.unwrap().context, "two");
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
        args.context = vec!["nope".into()];
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
