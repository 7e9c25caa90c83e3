//! Field indexes evaluated while objects are decoded, the only time a projection sees the
//! whole object: a kind's lister-watcher wraps its decoding in [`decoding_with`], and the
//! projection keeps only the values, each under its index's name.

use std::cell::RefCell;
use std::sync::Arc;

/// A field index a projection evaluates on each object as it decodes it.
pub trait FieldIndex: Send + Sync {
    /// The index's name, under which its values are kept.
    fn name(&self) -> &str;

    /// The values `object` (the whole object, as the server sent it) has in this index;
    /// `None` when the path does not fit the object, which then leaves it out of the index.
    fn values(&self, object: &serde_json::Value) -> Option<Vec<String>>;
}

/// The field indexes of one kind's informer.
pub type FieldIndexes = Arc<[Arc<dyn FieldIndex>]>;

thread_local! {
    /// The field indexes of the decode running on this thread, if any (a decode runs on one
    /// thread, start to end, without awaiting).
    static DECODE_FIELDS: RefCell<Option<FieldIndexes>> = const { RefCell::new(None) };
}

/// Runs `decode` with `fields` evaluated on every object it decodes. Decoding is generic
/// over the stored type and cannot take them as an argument; the lister-watcher of a kind
/// with field indexes wraps its decoding in this.
pub fn decoding_with<R>(fields: Option<&FieldIndexes>, decode: impl FnOnce() -> R) -> R {
    let fields = fields.filter(|f| !f.is_empty()).cloned();
    let previous = DECODE_FIELDS.with(|cell| cell.replace(fields));
    let out = decode();
    DECODE_FIELDS.with(|cell| *cell.borrow_mut() = previous);
    out
}

/// The field indexes of the decode running on this thread.
pub(crate) fn decode_fields() -> Option<FieldIndexes> {
    DECODE_FIELDS.with(|cell| cell.borrow().clone())
}
