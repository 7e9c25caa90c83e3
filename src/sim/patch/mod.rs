//! The three patch formats a real server accepts on an existing object, as pure functions
//! over JSON: RFC 7386 merge patch, RFC 6902 JSON patch, and strategic merge patch (built-in
//! kinds only, as on a real server).

mod apply;
pub mod fieldset;
mod merge;
pub mod strategic;

pub use apply::{PatchError, PatchType, apply};
