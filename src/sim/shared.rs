//! The state the HTTP handlers, the churn, the controllers and the handle share.

use std::time::Duration;

use parking_lot::RwLock;
use tokio_util::sync::CancellationToken;

use crate::churn::ChurnSettings;
use crate::faults::{FaultRolls, Faults, FaultsFired};
use crate::store::Store;
use crate::{controllers, logs, widgets};

/// State shared by the HTTP handlers, the churn task and the handle.
pub(crate) struct Shared {
    pub(crate) store: Store,
    pub(crate) faults: RwLock<Faults>,
    pub(crate) fired: FaultsFired,
    pub(crate) fault_rolls: FaultRolls,
    pub(crate) token: String,
    /// Who a bearer token stands for: the first is `token`'s.
    pub(crate) users: Vec<SimUser>,
    pub(crate) bookmark_interval: Duration,
    /// How long a SPDY port-forward request waits for its second stream.
    pub(crate) stream_creation_timeout: Duration,
    pub(crate) shutdown: CancellationToken,
    pub(crate) churn: tokio::sync::watch::Sender<ChurnSettings>,
    /// The history window the sim was started with, which faults without one restore.
    pub(crate) history: usize,
    /// What reacts to client writes (see [`controllers`]).
    pub(crate) controllers: controllers::Controllers,
    /// The app whose containers write logs very fast.
    pub(crate) noisy_logs: Option<logs::NoisyLogs>,
    /// What the demo's Widget controller serves at /metrics (see [`widgets`]).
    pub(crate) widget_metrics: widgets::WidgetMetrics,
    /// How the demo's Widget controller misbehaves; switchable at run time.
    pub(crate) widget_bug: RwLock<widgets::WidgetBug>,
    /// Each container run's filesystem as exec and `kubectl cp` left it, by
    /// `uid/container/restartCount`.
    pub(crate) container_files: parking_lot::Mutex<ContainerFiles>,
}

/// A user of the sim: the name RBAC messages and `kubectl auth whoami` give, its token, and
/// whether it may only read (the `viewer` of `--users admin,viewer`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SimUser {
    pub(crate) name: String,
    pub(crate) token: String,
    pub(crate) read_only: bool,
}

/// The name of the user who may only read: get, list and watch.
pub const VIEWER: &str = "viewer";
/// The filesystems of the containers exec'd into (see [`Shared::container_files`]).
pub(crate) type ContainerFiles =
    std::collections::HashMap<String, std::sync::Arc<parking_lot::Mutex<crate::shell::Fs>>>;

impl Shared {
    pub(crate) fn set_faults(&self, faults: Faults) {
        self.store
            .set_history_limit(faults.history.unwrap_or(self.history));
        *self.faults.write() = faults;
    }
}
