//! `kscope sim --replay FILE`: a read-only API server serving a recording
//! (`kscope_informers::record`, `docs/recording.md`) instead of a generated cluster. Lists
//! answer the state the playback clock has reached; watches go on from any recorded
//! resourceVersion at the recorded pace (times `--speed`), with the recorded
//! resourceVersions and bookmarks, and a 410 for a resourceVersion the recording no longer
//! holds; so a client or a controller can be run against yesterday's stream.

mod clock;
mod serve;
mod timeline;

pub use timeline::{Segment, Timeline};

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::error::SimError;
use crate::{kubeconfig, tls};

/// Where and how a replay is served: the part of `kscope sim`'s arguments it uses.
pub struct ReplayConfig<'a> {
    pub listen: SocketAddr,
    pub allow_remote: bool,
    pub token: Option<String>,
    pub state_dir: Option<&'a Path>,
    pub kubeconfig_out: Option<&'a PathBuf>,
}

/// Reads the recording, serves it until Ctrl-C, after writing the kubeconfig and the ready
/// line as `kscope sim` does.
pub async fn run(path: &Path, speed: f64, args: ReplayConfig<'_>) -> Result<(), SimError> {
    let server = ReplayServer::start(path, speed, args).await?;
    println!("kscope sim ready at {}", server.url);
    let _ = tokio::signal::ctrl_c().await;
    server.shutdown().await;
    Ok(())
}

/// A recording served on loopback, with its playback controls: what `kscope sim --replay`
/// runs until Ctrl-C, and what `kscope replay FILE` points its TUI at.
pub struct ReplayServer {
    replay: Arc<serve::Replay>,
    url: String,
    kubeconfig: String,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

/// What the playback shows now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlaybackState {
    /// The recording's time reached, µs since the epoch.
    pub at: i64,
    /// The highest resourceVersion played, over the kinds.
    pub resource_version: u64,
    pub speed: f64,
    pub paused: bool,
}

impl ReplayServer {
    /// Reads the recording and serves it (reporting a damaged tail and the kinds it cannot
    /// serve on stderr), after writing the kubeconfig if asked. A recording with no whole
    /// state of any kind (empty, or damaged before its first list) is refused.
    pub async fn start(path: &Path, speed: f64, args: ReplayConfig<'_>) -> Result<Self, SimError> {
        if !(speed.is_finite() && speed > 0.0) {
            return Err(SimError::ReplaySpeed(speed));
        }
        let file = path.to_path_buf();
        let timeline = tokio::task::spawn_blocking(move || timeline::Timeline::read(&file))
            .await
            .map_err(|e| SimError::Workload(e.to_string()))?
            .map_err(|source| SimError::Replay {
                path: path.display().to_string(),
                source,
            })?;
        if timeline.kinds.is_empty() {
            return Err(SimError::ReplayNothing {
                path: path.display().to_string(),
                damage: timeline.damage,
            });
        }
        if let Some(damage) = &timeline.damage {
            eprintln!("kscope: {}: {damage}", path.display());
        }
        if !args.allow_remote && !args.listen.ip().is_loopback() {
            return Err(SimError::RemoteNotAllowed(args.listen));
        }
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .map_err(|source| SimError::Bind {
                addr: args.listen,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| SimError::Bind {
            addr: args.listen,
            source,
        })?;
        let identity = tls::identity(args.state_dir, args.token, crate::server::random_token)?;
        let (replay, unknown) = serve::Replay::new(timeline, speed, identity.token.clone());
        for kind in unknown {
            eprintln!("kscope: {kind} is recorded but not served: the sim does not know its URLs");
        }
        let url = format!("https://{addr}");
        let kubeconfig = kubeconfig::kubeconfig_yaml(&url, &identity.cert.ca_pem, &identity.token)?;
        if let Some(out) = args.kubeconfig_out {
            kubeconfig::write_kubeconfig(out, &kubeconfig)?;
        }
        let stop = CancellationToken::new();
        let listener = tls::TlsListener::new(listener, identity.cert.config, stop.clone())
            .map_err(|source| SimError::Bind {
                addr: args.listen,
                source,
            })?;
        let replay = Arc::new(replay);
        let app = serve::router(replay.clone());
        let stopped = stop.clone();
        let task = tokio::spawn(async move {
            let serve =
                axum::serve(listener, app).with_graceful_shutdown(stopped.cancelled_owned());
            if let Err(e) = serve.await {
                tracing::warn!(error = %e, "replay server stopped");
            }
        });
        Ok(Self {
            replay,
            url,
            kubeconfig,
            stop,
            task,
        })
    }

    /// `https://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A client configuration for the server (its CA and token).
    pub async fn kube_config(&self) -> Result<kube::Config, SimError> {
        kubeconfig::kube_config(&self.kubeconfig).await
    }

    /// The playback's controls, for as long as anyone holds them.
    pub fn controls(&self) -> ReplayControls {
        ReplayControls {
            replay: self.replay.clone(),
        }
    }

    /// Stops serving.
    pub async fn shutdown(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

/// Play, pause, speed, step and seek of a served recording.
#[derive(Clone)]
pub struct ReplayControls {
    replay: Arc<serve::Replay>,
}

impl ReplayControls {
    pub fn state(&self) -> PlaybackState {
        let clock = self.replay.clock.state();
        PlaybackState {
            at: clock.at,
            resource_version: self.replay.resource_version_at(clock.at),
            speed: clock.speed,
            paused: clock.paused,
        }
    }

    pub fn set_paused(&self, paused: bool) {
        self.replay.clock.set_paused(paused);
    }

    /// Sets the playback speed; one that is not a positive number is refused.
    pub fn set_speed(&self, speed: f64) -> Result<(), SimError> {
        if !(speed.is_finite() && speed > 0.0) {
            return Err(SimError::ReplaySpeed(speed));
        }
        self.replay.clock.set_speed(speed);
        Ok(())
    }

    /// Pauses, and plays the next recorded event (or relist) of any kind; false at the end
    /// of the recording.
    pub fn step(&self) -> bool {
        self.replay.clock.set_paused(true);
        let at = self.replay.clock.position();
        match self.replay.next_after(at) {
            Some(next) => {
                self.replay.clock.advance_to(next);
                true
            }
            None => false,
        }
    }

    /// Moves playback to `at` (µs since the epoch); the open watches end with a 410 and
    /// their clients relist there.
    pub fn seek(&self, at: i64) {
        self.replay.clock.seek(at);
    }

    /// Moves playback to just after the event that carried resourceVersion `rv` (the last
    /// at or below it); false, and nothing moved, when the recording starts above it.
    pub fn seek_resource_version(&self, rv: u64) -> bool {
        match self.replay.time_of_resource_version(rv) {
            Some(at) => {
                self.replay.clock.seek(at);
                true
            }
            None => false,
        }
    }
}
