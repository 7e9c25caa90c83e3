//! Helpers shared by the integration tests.

pub mod cli;
pub mod kubectl;
pub mod tmux;
pub mod tools;
