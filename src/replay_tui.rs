//! `kscope replay FILE`: the TUI on a recording. The recording is served in this process by
//! the sim's replay server (as `kscope sim --replay` serves it) and the TUI connects to it as
//! to any cluster, so every table, index, filter, detail and panel reads what a client of
//! that cluster would; the server's playback controls are handed to the TUI for its replay
//! keys and `:seek` (docs/recording.md says why it is done this way).

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;

use kscope_client::cluster::{Cluster, ClusterError, NamespaceScope};
use kscope_sim::{ReplayConfig, ReplayControls, ReplayServer, SimError};
use kscope_ui::Launch;
use kscope_ui::contexts::ContextSwitcher;
use kscope_ui::playback::{Playback, PlaybackStatus, Seek};

/// The context the header names: the recording is no kubeconfig's.
const REPLAY_CONTEXT: &str = "replay";

/// Why the replay could not start.
#[derive(Debug, thiserror::Error)]
pub enum ReplayTuiError {
    #[error("serving the recording: {0}")]
    Sim(#[from] SimError),
    #[error(transparent)]
    Cluster(#[from] ClusterError),
}

/// The recording served while the TUI runs; [`ReplayTui::shutdown`] stops it.
pub struct ReplayTui {
    server: ReplayServer,
}

impl ReplayTui {
    /// Serves `file` on a loopback port, playing `speed` times as fast from its start (or
    /// from `at`, as `:seek` reads it), and the TUI's launch on it, read-only.
    pub async fn start(
        file: &Path,
        speed: f64,
        at: Option<&str>,
    ) -> Result<(Self, Launch), ReplayTuiError> {
        let server = ReplayServer::start(
            file,
            speed,
            ReplayConfig {
                listen: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
                allow_remote: false,
                token: None,
                state_dir: None,
                kubeconfig_out: None,
            },
        )
        .await?;
        let controls = Controls {
            controls: server.controls(),
            file: file.display().to_string(),
        };
        let mut notice = None;
        if let Some(at) = at {
            let moved = kscope_ui::playback::parse_seek(at, controls.status().at)
                .and_then(|to| controls.seek(to));
            if let Err(err) = moved {
                notice = Some(format!("--at {at}: {err}; playing from the start"));
            }
        }
        let cluster = Cluster::from_config(server.kube_config().await?, REPLAY_CONTEXT.into())?;
        let contexts = ContextSwitcher::single(REPLAY_CONTEXT.into(), cluster.clone());
        let launch = Launch {
            cluster,
            scope: NamespaceScope::All,
            contexts,
            notice,
            readwrite: Some(false),
            playback: Some(Arc::new(controls)),
            restore_scope: false,
        };
        Ok((Self { server }, launch))
    }

    pub async fn shutdown(self) {
        self.server.shutdown().await;
    }
}

/// The server's controls as the TUI drives them.
struct Controls {
    controls: ReplayControls,
    file: String,
}

impl Playback for Controls {
    fn status(&self) -> PlaybackStatus {
        let state = self.controls.state();
        PlaybackStatus {
            file: self.file.clone(),
            at: state.at,
            resource_version: state.resource_version,
            speed: state.speed,
            paused: state.paused,
        }
    }

    fn set_paused(&self, paused: bool) {
        self.controls.set_paused(paused);
    }

    fn set_speed(&self, speed: f64) {
        if let Err(err) = self.controls.set_speed(speed) {
            tracing::warn!(error = %err, "replay speed not changed");
        }
    }

    fn step(&self) -> bool {
        self.controls.step()
    }

    fn seek(&self, to: Seek) -> Result<(), String> {
        match to {
            Seek::Time(at) => {
                self.controls.seek(at);
                Ok(())
            }
            Seek::ResourceVersion(rv) if self.controls.seek_resource_version(rv) => Ok(()),
            Seek::ResourceVersion(rv) => {
                Err(format!("the recording starts above resourceVersion {rv}"))
            }
        }
    }
}
