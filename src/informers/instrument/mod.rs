//! kscope's own instrumentation of the pipeline, kept apart from the port of client-go so
//! that the port reads like client-go and these additions can change without touching it:
//! the delta [`tap`] (raw watch events, deltas and relists as they flow), the field-level
//! [`diff`] it shows on demand, and [`compare`]'s two pipelines fed from one watch stream.

pub mod compare;
pub mod diff;
pub mod tap;
