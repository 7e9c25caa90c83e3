//! The checks the fuzz targets run: kscope's decoders against serde_json
//! (`tests/it/resources_pod.rs` runs them too), the recording reader (`tests/it/replay.rs`)
//! the replay server's timeline over it (`tests/it/replay_reader.rs`) and a controller's
//! /metrics page (`tests/it/metrics_page_fuzz.rs`).

pub mod differential;
pub mod metrics_page;
pub mod recording;
pub mod timeline;
