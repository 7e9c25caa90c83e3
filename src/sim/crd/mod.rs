//! CustomResourceDefinitions (apiextensions.k8s.io/v1): what makes one valid, what the
//! server fills in (names, the cleanup finalizer, the NamesAccepted and Established
//! conditions), and keeping the served custom resources in step with the stored CRDs, in
//! the write that changed them: a CRD created or updated registers its resource (names,
//! scope, printer columns, schema of its storage version), one being deleted takes its
//! custom resources with it and stops being served.
//!
//! Only the storage version of a CRD is served (no conversion between versions).

mod definition;
mod demo;
pub mod schema;
mod serving;

pub use definition::{populate_new, validate_definition};
pub use demo::{bulk_widgets, demo, widget_status};
pub use serving::reconcile;
