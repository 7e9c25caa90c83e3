//! The checks the fuzz targets run: kscope's decoders against serde_json
//! (`tests/it/resources_pod.rs` runs them too) and the recording reader
//! (`tests/it/replay.rs`).

pub mod differential;
pub mod recording;
