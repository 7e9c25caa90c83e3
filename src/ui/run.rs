//! The TUI's start and end: one terminal lifecycle around [`App::run`].

use std::io;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::future::join_all;

use crossterm::event::EventStream;

use kscope_client::cluster::{Cluster, ClusterArgs, ClusterError, NamespaceScope};
use kscope_client::discovery::Catalog;
use kscope_client::fleet::ServerIdentity;
use kscope_config::Config;
use kscope_index_views::query::QueryError;
use kscope_informers::indexer::IndexerError;
use kscope_resources::ResourceKind;

use crate::app::{App, Stop};
use crate::contexts::ContextSwitcher;
use crate::detail::DetailController;
use crate::favourites::Favourites;
use crate::namespace_sets::NamespaceSets;
use crate::nav::ViewSpec;
use crate::playback::Playback;
use crate::remembered::Remembered;
use crate::table::TableStarter;
use crate::terminal::{Keys, TerminalGuard};

/// Tap entries kept for the delta panel's history.
const TAP_CAPACITY: usize = 4096;

/// Why the TUI could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum UiError {
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error("indexes: {0}")]
    Index(#[from] IndexerError),
    #[error(transparent)]
    Query(#[from] QueryError),
    #[error("terminal: {0}")]
    Terminal(#[from] std::io::Error),
    #[error(
        "a set of namespaces is shown through the namespace index: add one reading the \
         namespace field to the configuration's indexes"
    )]
    NoNamespaceIndex,
}

/// A backend that cannot fail (ratatui's TestBackend) runs the same loop.
impl From<std::convert::Infallible> for UiError {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}

/// What the TUI opens on.
pub struct Launch {
    /// The cluster shown first, connected.
    pub cluster: Cluster,
    /// Its namespace scope.
    pub scope: NamespaceScope,
    /// How `:ctx` lists and reaches the other contexts.
    pub contexts: ContextSwitcher,
    /// What the message line says at start, if anything.
    pub notice: Option<String>,
    /// `--readwrite` (`Some(true)`) or `--readonly` (`Some(false)`): over the
    /// configuration's write settings.
    pub readwrite: Option<bool>,
    /// The playback controls when the cluster is a recording served (`kscope replay FILE`).
    pub playback: Option<Arc<dyn Playback>>,
    /// Whether `scope` is only the default (no `-n` or `-A` given): the scope the cluster
    /// group was last shown in then replaces it.
    pub restore_scope: bool,
}

impl Launch {
    /// The kube context the flags name, connected; `:ctx` reads the same kubeconfig.
    pub async fn connect(args: &ClusterArgs) -> Result<Self, ClusterError> {
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
        Ok(Self {
            cluster,
            scope,
            contexts,
            notice: None,
            readwrite: None,
            playback: None,
            restore_scope: args.namespace.is_none() && !args.all_namespaces,
        })
    }

    /// Every context the flags select (`--context a --context b`, `--contexts GLOB`,
    /// `--all-contexts`), each given a client at once, all at the same time: nothing here
    /// waits on a server, so a cluster that is down is found out by its own informers,
    /// and the others list meanwhile. Contexts that reach the same server URL with the same
    /// CA are one cluster, shown once (the kube-system UIDs, which need the servers, are
    /// compared once the TUI runs); a context that cannot be given a client (within
    /// `bound`: a credential plugin may hang) is left out and said at start. Gives the
    /// launch on the first cluster and every cluster, for [`run_fleet`].
    pub async fn connect_fleet(
        args: &ClusterArgs,
        bound: Duration,
    ) -> Result<(Self, Vec<Cluster>), ClusterError> {
        let contexts = args.selected_contexts()?;
        let connects = contexts.iter().map(|context| {
            let args = args.with_context(context);
            async move { tokio::time::timeout(bound, args.connect()).await }
        });
        let mut fleet: Vec<Cluster> = Vec::new();
        let mut said: Vec<String> = Vec::new();
        let mut failed: Option<ClusterError> = None;
        for (context, connected) in contexts.iter().zip(join_all(connects).await) {
            let cluster = match connected {
                Ok(Ok(cluster)) => cluster,
                Ok(Err(err)) => {
                    said.push(format!("{context}: {err}"));
                    failed.get_or_insert(err);
                    continue;
                }
                Err(_) => {
                    said.push(format!("{context}: no client within {}s", bound.as_secs()));
                    continue;
                }
            };
            let identity = |c: &Cluster| ServerIdentity {
                kube_system_uid: None,
                server: c.server.clone(),
                ca_sha256: c.ca_sha256.clone(),
            };
            match fleet
                .iter()
                .find(|kept| identity(kept).same_as(&identity(&cluster)).is_some())
            {
                Some(kept) => said.push(format!(
                    "{context} reaches the same cluster as {} (the same server URL and CA): shown once",
                    kept.context
                )),
                None => fleet.push(cluster),
            }
        }
        let Some(first) = fleet.first().cloned() else {
            return Err(failed.unwrap_or(ClusterError::NoClientWithin {
                contexts,
                secs: bound.as_secs(),
            }));
        };
        let mut launch = Self::connect(&args.with_context(&first.context)).await?;
        launch.cluster = first;
        launch.notice = (!said.is_empty()).then(|| said.join(" · "));
        Ok((launch, fleet))
    }
}

/// How the TUI ended: the person quit, or a signal ended it (the terminal restored either
/// way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Quit,
    /// SIGTERM (15), SIGINT (2) or SIGHUP (1).
    Signal(u8),
}

impl Exit {
    /// The process's exit status, as a shell expects it: 0 after `q`, 128 plus the signal's
    /// number after one (143 after SIGTERM).
    pub fn code(self) -> u8 {
        match self {
            Self::Quit => 0,
            Self::Signal(signal) => 128u8.saturating_add(signal),
        }
    }
}

/// Runs the TUI until the person quits or a signal ends it, and says which. Must run inside
/// a Tokio runtime. `config` is loaded by the caller, so that a bad one is reported before
/// anything is connected.
pub async fn run(launch: Launch, config: Config) -> Result<Exit, UiError> {
    run_fleet(launch, Vec::new(), config).await
}

/// [`run`] with every table across `fleet`'s clusters (two or more; `launch` is on the
/// first), each cluster's informers its own; with none, one cluster's.
pub async fn run_fleet(
    launch: Launch,
    fleet: Vec<Cluster>,
    config: Config,
) -> Result<Exit, UiError> {
    let Launch {
        cluster,
        scope,
        contexts,
        notice,
        readwrite,
        playback,
        restore_scope,
    } = launch;
    // Across clusters the write keys stay off: each write would have to go to its row's
    // cluster, which the write path does not know yet.
    let (readwrite, notice) = match fleet.is_empty() {
        true => (readwrite, notice),
        false => (
            Some(false),
            Some(match notice {
                Some(notice) => format!("read-only across clusters · {notice}"),
                None => "read-only across clusters".to_string(),
            }),
        ),
    };
    let mut detail = DetailController::new(cluster.client.clone(), None);
    // Ctrl-S in the detail saves where the log view saves, when a directory is configured.
    if let Some(dir) = &config.logs.save_dir {
        detail.set_save_dir(dir.clone());
    }
    let starter = TableStarter::new(cluster.clone(), config.indexes, TAP_CAPACITY)
        .with_pipeline(config.informers)
        .with_usage(config.metrics);
    // Across clusters each discovers in the background, so that none waits on another.
    let (starter, _catalog_watch) = match fleet.is_empty() {
        false => (starter.for_fleet(fleet), None),
        true => {
            let (catalog, watch, discovery_error) = Catalog::keep_current(&cluster).await;
            if let Some(err) = discovery_error {
                // The TUI still shows the built-in kinds; the log says why the others are
                // missing.
                tracing::warn!(error = %err, "discovery failed: only the built-in kinds are commands");
            }
            (starter.with_catalog(catalog), Some(watch))
        }
    };
    let app = App::new(
        starter,
        ViewSpec::new(ResourceKind::Pods, scope),
        false,
        detail,
    )?
    .with_keymap(config.keys)
    .with_log_settings(config.logs)
    .with_scrape_interval(config.metrics.scrape)
    .with_contexts(contexts)
    .with_actions(config.actions)
    .with_writes(config.writes, readwrite)
    .with_clipboard(Arc::new(crate::terminal::copy_to_clipboard));
    let app = match kscope_config::state_dir() {
        Some(dir) => app
            .with_favourites(Favourites::load(dir.join("namespaces.json")))
            .with_namespace_sets(
                NamespaceSets::load(dir.join("namespace-sets.json")),
                restore_scope,
            )
            .with_remembered(Remembered::load(dir.join("screen.json"))),
        None => app,
    };
    let app = match playback {
        Some(playback) => app.with_playback(playback),
        None => app,
    };
    let app = match notice {
        Some(notice) => app.with_notice(notice),
        None => app,
    };
    let mut guard = TerminalGuard::enter()?;
    crate::terminal::exit_on_hangup()?;
    let signals = Signals::new()?;
    let received = Arc::new(std::sync::atomic::AtomicU8::new(0));
    let seen = received.clone();
    let signals = futures::stream::unfold(signals, move |mut signals| {
        let seen = seen.clone();
        async move {
            let signal = signals.recv().await;
            seen.store(signal, std::sync::atomic::Ordering::Relaxed);
            Some(((), signals))
        }
    });
    let mut signals = Box::pin(signals);
    let mut app = app;
    let result = loop {
        // A new reader each time: the one before was dropped while a session had the keys.
        let events = EventStream::new();
        match app
            .run_until(guard.terminal(), events, &mut signals, &mut ())
            .await
        {
            Ok(Stop::Handover) => {
                // A signal during a session or an edit ends kscope, as it does in the table;
                // so does the terminal going away under them, which fails the way back.
                let signalled = || received.load(std::sync::atomic::Ordering::Relaxed) != 0;
                if let Some(request) = app.take_session() {
                    let session = unless_signalled(crate::session::run(request), &mut signals);
                    match guard.hand_over(Keys::Raw, session).await {
                        Ok(Some(ended)) => app.session_ended(&ended),
                        Ok(None) => break Ok(()),
                        Err(_) if signalled() => break Ok(()),
                        Err(err) => break Err(err.into()),
                    }
                }
                if let Some(request) = app.take_edit() {
                    let outcome = match crate::edit::fetch(&request).await {
                        Ok(object) => {
                            let edit =
                                unless_signalled(crate::edit::run(request, object), &mut signals);
                            match guard.hand_over(Keys::Cooked, edit).await {
                                Ok(Some(outcome)) => outcome,
                                Ok(None) => break Ok(()),
                                Err(_) if signalled() => break Ok(()),
                                Err(err) => break Err(err.into()),
                            }
                        }
                        Err(why) => Err(why),
                    };
                    app.edit_ended(outcome);
                }
            }
            Ok(Stop::Quit) => break Ok(()),
            Err(err) => break Err(err),
        }
    };
    app.shutdown().await;
    result?;
    Ok(match received.load(std::sync::atomic::Ordering::Relaxed) {
        0 => Exit::Quit,
        signal => Exit::Signal(signal),
    })
}

/// `work`'s output, or `None` when a signal comes first (dropping `work`).
async fn unless_signalled<F: Future>(
    work: F,
    signals: &mut (impl futures::Stream<Item = ()> + Unpin),
) -> Option<F::Output> {
    tokio::select! {
        output = work => Some(output),
        Some(()) = signals.next() => None,
    }
}

/// SIGTERM, SIGINT and SIGHUP end the loop like `q`, so the terminal is restored on the way
/// out (Ctrl-C itself arrives as a key in raw mode; SIGINT comes from `kill -INT`).
struct Signals {
    term: tokio::signal::unix::Signal,
    interrupt: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Self {
            term: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    /// The next signal's number. Cancel-safe, for the loop's `select!`.
    async fn recv(&mut self) -> u8 {
        tokio::select! {
            _ = self.term.recv() => 15,
            _ = self.interrupt.recv() => 2,
            _ = self.hangup.recv() => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Exit;

    #[test]
    fn a_signal_exits_128_plus_its_number() {
        assert_eq!(Exit::Signal(15).code(), 143);
        assert_eq!(Exit::Signal(2).code(), 130);
        assert_eq!(Exit::Signal(1).code(), 129);
        assert_eq!(Exit::Quit.code(), 0);
    }
}
