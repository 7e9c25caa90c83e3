//! Helpers shared by the integration tests.

pub mod act;
pub mod cli;
pub mod fake_api;
pub mod kubectl;
pub mod pod;
pub mod python;
pub mod tmux;
pub mod tools;
pub mod tui;
pub mod wait;

/// Held by the tests that run several churning sims and kscope processes at once, so that
/// they run one at a time: together they starve the other tests of the machine's cores
/// (on two cores, a convergence test saw three watches in ten seconds).
pub static HEAVY: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
