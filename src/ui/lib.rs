//! The terminal UI on a kube context (the binary connects it, or starts the demo's simulated
//! clusters and hands them over).
//!
//! Background tasks (informer, view worker, tap) only notify; the event loop in [`app`] pulls
//! a copy of what is visible and draws it with [`draw`], never holding a lock while drawing.
//! The table is one kind at a time ([`table`]); commands ([`command`]) and drill-downs
//! ([`nav`]) replace it.

pub mod action;
pub mod app;
pub mod command;
pub mod component;
pub mod containers;
mod context_session;
pub mod contexts;
pub mod deltas;
pub mod detail;
pub mod draw;
pub mod edit;
pub mod effect;
pub mod favourites;
mod fleet_identity;
pub mod fleet_table;
pub mod hot;
pub mod keymap;
pub mod layout;
pub mod line;
pub mod logs;
mod merged_selection;
pub mod metrics;
pub mod mixed_table;
pub mod namespace_check;
pub mod namespace_sets;
pub mod nav;
pub mod playback;
pub mod portforward;
pub mod queue;
pub mod record;
pub mod remembered;
mod run;
pub mod screen;
pub mod selectors;
pub mod session;
pub mod state;
mod state_file;
pub mod table;
pub mod table_pane;
pub mod tables;
pub mod terminal;
pub mod text_search;
pub mod theme;
pub mod timeline;
pub mod tree;
mod watchers;
pub mod writes;

pub use nav::ALL_NAMESPACES;
pub use run::{Exit, Launch, UiError, run, run_fleet};
