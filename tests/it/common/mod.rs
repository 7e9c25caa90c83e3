//! Helpers shared by the integration tests.

pub mod cli;
pub mod tools;
pub mod tmux;
