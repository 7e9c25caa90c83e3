//! The demo's Widget controller: a Deployment in `widget-system` whose pod runs a real
//! reconcile loop, as a controller-runtime operator does. kscope's own informers (a
//! Reflector, DeltaFIFO and Indexer over the sim's store) watch Widgets and ConfigMaps and
//! feed a rate-limited workqueue; each reconcile gives a Widget its owned ConfigMap and sets
//! its status from it. Some reconciles fail (a deterministic share of generations meet an
//! update conflict once or twice) and are retried with the queue's back-off. The pod serves
//! the queue's and the reconciler's metrics in the Prometheus text format under
//! controller-runtime's names, read through the pods/proxy subresource. It can misbehave on
//! demand ([`WidgetBug`]): a hot loop, a fight with a second field manager, slow reconciles,
//! or failing ones.

mod bug;
mod controller;
mod deployment;
mod metrics;
mod reconciler;
mod source;
mod tuner;

pub use bug::WidgetBug;
pub(crate) use controller::run;
pub(crate) use deployment::{METRICS_PORT, NAME, NAMESPACE};
pub(crate) use metrics::{WidgetMetrics, render};
