//! The non-interactive commands (`kscope get`, `kscope deltas`): start an informer on the
//! cluster, wait for it to sync, print. Shared set-up lives here.

pub mod custom_columns;
pub mod deltas;
mod error;
pub mod fleet;
pub mod for_owner;
pub mod get;
pub mod go_numbers;
pub mod hotloops;
mod informer;
pub mod mcp;
pub mod metrics;
mod object_args;
pub mod output;
pub mod record;
pub mod replay;
pub mod replay_fifo;
mod sync;
pub mod timeline;
pub mod tree;
pub mod yaml;

pub use error::CommandError;
pub use informer::{
    InformerArgs, PreparedInformer, Resolved, ResolvedKinds, prepare_informer, start_informer,
};
pub use sync::{check_current, gives_up, not_watching, wait_for_sync_reporting};
