//! The log view (`l`): one pod's containers, or every pod of a workload interleaved by time,
//! followed as they write.
//!
//! [`view::LogView`] is plain state in [`super::state::UiState`]; [`LogController`] runs
//! the background tasks that read it: one resolving which pods and containers to read (and,
//! for a workload, listing its pods again every few seconds, so pods that come are read and
//! pods that go are marked ended), and one per container reading its log. They hand lines
//! over in batches through a bounded channel the event loop drains, so a container writing
//! 50,000 lines a second never holds the UI thread for more than a batch, and a UI that falls
//! behind slows the readers instead of growing a queue.

mod controller;
pub mod matcher;
pub mod ring;
pub mod view;

pub use controller::{Arrival, LogController, LogTarget};
