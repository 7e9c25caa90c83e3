//! Recordings of watch streams (`kscope record`, `kscope replay`, `kscope sim --replay`): a
//! versioned file of the lists, watch events, bookmarks, errors and watch restarts of one or
//! more kinds, as the server sent them, so a bug seen once can be replayed. The layout is
//! documented in `docs/recording.md`; [`format`] reads and writes it, [`state`] folds the
//! records into the store each kind held, [`keyframed`] writes keyframes by their rule, and [`object`] is the object a recorder lists and
//! watches (its raw JSON, keyed as any other); [`pipelines`] runs a recording through the
//! FIFOs.

pub mod format;
pub mod keyframed;
pub mod object;
pub mod pipelines;
pub mod state;
