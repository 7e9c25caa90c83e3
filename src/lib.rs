//! kscope: client-go's informer pipeline in Rust, and a terminal explorer built on it.

pub mod client;
pub mod commands;
pub mod config;
pub mod duration;
pub mod index_views;
pub mod informers;
pub mod logging;
pub(crate) mod quantity;
pub mod resources;
pub mod sim;
pub mod ui;
