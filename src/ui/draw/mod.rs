//! Drawing: pure functions from an immutable [`Screen`] to a frame. Nothing here locks,
//! awaits or reads a clock; `now` comes in with the screen, so tests are deterministic.
//! Each part of the screen is drawn by its component's [`crate::component::Component::draw`],
//! whose implementations live here beside the drawing code, so that a component's state
//! and keys (in its own module) never import the drawing.

pub(crate) mod confirm;
mod containers;
pub(crate) mod contexts;
pub(crate) mod detail;
mod frame;
pub(crate) mod header;
pub(crate) mod help;
pub(crate) mod indexes;
pub(crate) mod logs;
pub mod metrics;
pub(crate) mod panels;
pub(crate) mod portforward;
mod status;
pub(crate) mod table;
mod text;
mod workbench;

pub use crate::screen::{Header, Screen};
pub use frame::{Parts, draw, frame, no_color_requested};
