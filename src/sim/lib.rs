//! A simulated Kubernetes API server: real list/watch protocol over loopback HTTP, backed by
//! an in-memory MVCC store, a deterministic workload and optional churn and faults. It is the
//! demo's cluster and the ground truth every integration test talks to.
//!
//! ```no_run
//! # async fn demo() -> Result<(), kscope_sim::SimError> {
//! use kscope_sim::{Sim, SimConfig};
//! let sim = Sim::start(SimConfig::with_size(500, 10, 4).churn(20.0, None)).await?;
//! let client = sim.client().await?;
//! # drop(client);
//! sim.shutdown().await;
//! # Ok(()) }
//! ```

mod admin;
mod capacity;
mod churn;
mod churn_kinds;
pub mod cli;
mod companions;
mod config;
mod controllers;
mod crd;
mod descriptor;
mod error;
mod event_view;
mod faults;
mod gc;
mod http;
mod kinds;
mod kubeconfig;
mod logs;
mod manifests;
mod object;
mod patch;
mod qos;
mod replay;
mod resources;
mod selectors;
mod server;
mod shared;
mod shell;
mod spdy;
mod store;
mod tls;
pub(crate) mod widgets;
mod workload;

pub use churn::ChurnSettings;
pub use config::SimConfig;
pub use error::SimError;
pub use faults::{FaultParseError, FaultSpec, Faults, FaultsFiredSnapshot};
pub use kubeconfig::write_kubeconfig;
pub use logs::NoisyLogs;
pub use replay::{PlaybackState, ReplayConfig, ReplayControls, ReplayServer, Segment, Timeline};
pub use resources::Resource;
pub use server::{Sim, SimHandle, kubeconfig_for};
pub(crate) use shared::Shared;
pub use store::Position;
pub use widgets::WidgetBug;
