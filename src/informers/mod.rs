//! A port of client-go's informer pipeline: DeltaFIFO → Indexer → handlers → workqueue.
//! Nothing here knows about the UI.

pub mod backoff;
pub mod delta_fifo;
pub mod diff;
pub mod indexer;
pub mod informer;
pub mod keys;
pub mod lister_watcher;
pub mod object;
pub mod reflector;
pub mod running;
pub mod tap;
pub mod workqueue;

#[cfg(test)]
pub(crate) mod testing;
