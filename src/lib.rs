//! The `kscope` binary's library half: the headless commands (`get`, `deltas`), the demo's
//! clusters and logging, so the integration tests can call what `main` calls.

pub mod commands;
pub mod demo;
pub mod logging;
pub mod replay_tui;
