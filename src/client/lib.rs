//! Talking to an API server: kubeconfig and kube's client stack, the Reflector's lists and
//! watches over HTTP and their wire format (objects, or the server's Table form), discovery,
//! GETs of full objects, and the writes a person asks for.
//!
//! This layer sits above `informers` (whose `ListerWatcher` it implements) and `resources`
//! (whose projections it decodes into).

pub mod cluster;
pub mod discovery;
pub mod explain;
pub mod fetch;
pub mod fleet;
pub mod limits;
pub mod lister_watcher;
pub mod logs;
pub mod metrics;
pub mod printer_columns;
pub mod record;
pub mod scrape;
pub mod table_form;
pub mod transport;
pub mod wire;
pub mod write;
