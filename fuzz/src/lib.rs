//! The differential checks of kscope's decoders; `tests/it/resources_pod.rs` runs them too.

pub mod differential;
