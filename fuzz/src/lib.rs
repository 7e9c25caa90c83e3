//! The checks the fuzz targets run: kscope's decoders against serde_json
//! (`tests/it/resources_pod.rs` runs them too), the recording reader (`tests/it/replay.rs`)
//! and the replay server's timeline over it (`tests/it/replay_reader.rs`).

pub mod differential;
pub mod recording;
pub mod timeline;
