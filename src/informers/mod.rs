//! A port of client-go's informer pipeline: DeltaFIFO → Indexer → handlers → workqueue.
pub mod keys;
pub mod object;
pub mod workqueue;
