//! `kscope sim --replay FILE`: a read-only API server serving a recording
//! (`kscope_informers::record`, `docs/recording.md`) instead of a generated cluster. Lists
//! answer the state the playback clock has reached; watches go on from any recorded
//! resourceVersion at the recorded pace (times `--speed`), with the recorded
//! resourceVersions and bookmarks, and a 410 for a resourceVersion the recording no longer
//! holds; so a client or a controller can be run against yesterday's stream.

mod serve;
mod timeline;

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
    let listener =
        tls::TlsListener::new(listener, identity.cert.config, stop.clone()).map_err(|source| {
            SimError::Bind {
                addr: args.listen,
                source,
            }
        })?;
    let app = serve::router(Arc::new(replay));
    let stopped = stop.clone();
    let server = tokio::spawn(async move {
        let serve = axum::serve(listener, app).with_graceful_shutdown(stop.cancelled_owned());
        if let Err(e) = serve.await {
            tracing::warn!(error = %e, "replay server stopped");
        }
    });
    println!("kscope sim ready at {url}");
    let _ = tokio::signal::ctrl_c().await;
    stopped.cancel();
    let _ = server.await;
    Ok(())
}
