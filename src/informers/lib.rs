//! A port of client-go's informer pipeline: DeltaFIFO (or RealFIFO/AtomicFIFO) → Indexer → handlers → workqueue.
//! Nothing here knows about the UI. kscope's own instrumentation of it (the delta tap, diffs,
//! two pipelines compared) is apart in [`instrument`].

pub mod backoff;
pub mod delta_fifo;
pub mod fifo;
mod fifo_core;
pub mod indexer;
pub mod informer;
pub mod instrument;
pub mod keys;
pub mod lister_watcher;
pub mod metrics;
pub mod object;
pub mod real_fifo;
pub mod record;
pub mod reflector;
pub mod running;
pub mod workqueue;

/// Test objects and a tap feeder, for this crate's tests and (feature `testing`) the layers
/// above it.
#[cfg(any(test, feature = "testing"))]
pub mod testing;
