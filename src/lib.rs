//! kscope: client-go's informer pipeline in Rust, and a terminal explorer built on it.

pub mod informers;
pub mod sim;
