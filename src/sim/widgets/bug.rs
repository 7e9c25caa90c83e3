//! How the demo's Widget controller misbehaves, on demand: each mode is a bug controller
//! authors meet, so the workbench has something real to find.

use std::time::Duration;

/// A misbehaviour of the Widget controller, set at start (`--widget-bug`) and at run time
/// (`PUT /sim/widget-bug`).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum WidgetBug {
    /// A healthy controller.
    #[default]
    None,
    /// Writes a changing timestamp into status every reconcile and, lacking a
    /// GenerationChangedPredicate, reconciles again on its own status write.
    Hotloop,
    /// A second field manager (`widget-tuner`) keeps setting the owned ConfigMap's
    /// `data.color`; the controller sets it back (flapping) and its writes from a stale
    /// cache meet 409 Conflicts.
    Conflict,
    /// Every reconcile takes seconds: the queue grows behind the one worker.
    Slow,
    /// Every reconcile fails and is retried with the queue's exponential back-off.
    Error,
}

impl WidgetBug {
    /// How long a reconcile spends on its API round trips (or on its slow work). The
    /// round trip bounds a hot loop's rate, as the API server's latency does for a real one.
    pub(super) fn reconcile_delay(self) -> Duration {
        match self {
            Self::None | Self::Error => Duration::ZERO,
            Self::Hotloop | Self::Conflict => Duration::from_millis(25),
            Self::Slow => Duration::from_secs(3),
        }
    }
}

impl std::fmt::Display for WidgetBug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::None => "none",
            Self::Hotloop => "hotloop",
            Self::Conflict => "conflict",
            Self::Slow => "slow",
            Self::Error => "error",
        })
    }
}
