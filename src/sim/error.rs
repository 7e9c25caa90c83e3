//! Why the sim could not start or be reached.

use std::net::SocketAddr;

/// Why the sim could not start or be reached.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("refusing to listen on {0}: not a loopback address (pass --allow-remote to allow it)")]
    RemoteNotAllowed(SocketAddr),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("failed to set up TLS: {0}")]
    Tls(String),
    #[error("failed to generate the workload: {0}")]
    Workload(String),
    #[error("failed to write the kubeconfig: {0}")]
    Kubeconfig(String),
    #[error("failed to build a client for the sim: {0}")]
    Client(String),
    #[error("cannot replay {path}: {source}")]
    Replay {
        path: String,
        #[source]
        source: kscope_informers::record::format::RecordError,
    },
    /// A recording read to its end, or to damage before any kind's state was whole: a
    /// server of it would list nothing, which a client could not tell from an empty cluster.
    #[error(
        "cannot replay {path}: it holds no whole list of any kind to serve{}",
        .damage.as_ref().map(|d| format!(" ({d})")).unwrap_or_default()
    )]
    ReplayNothing {
        path: String,
        #[source]
        damage: Option<kscope_informers::record::format::RecordError>,
    },
    #[error("--speed must be a positive number, not {0}")]
    ReplaySpeed(f64),
    #[error("failed to write {path}: {source}")]
    WriteFile {
        path: String,
        source: std::io::Error,
    },
}
