//! The three FIFOs client-go has had between its Reflector and its store, chosen per
//! informer: the classic DeltaFIFO (per-key merging), the in-order RealFIFO and the AtomicFIFO.
//! The process loop pops [`FifoItem`]s from a [`Fifo`] whichever it is, and can publish each
//! pop as a [`Handoff`]: what a controller's handlers are handed, and in what groups.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use super::delta_fifo::{DeltaFifo, DeltaType, FifoClosed, Listed, ReflectorStore};
use super::indexer::Indexer;
use super::keys::{Key, KeyError};
use super::metrics::InformerMetrics;
use super::object::Object;
pub use super::real_fifo::FifoItem;
use super::real_fifo::{DEFAULT_BATCH_SIZE, RealFifo};

/// Which FIFO an informer runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FifoKind {
    /// client-go's DeltaFIFO: one queue entry per key, its deltas accumulated.
    #[default]
    Classic,
    /// RealFIFO (InOrderInformers): every event in order; a relist as Replaced + Deleted.
    Real,
    /// AtomicFIFO: RealFIFO with a relist as one ReplacedAll and a resync as one SyncAll.
    Atomic,
}

impl FifoKind {
    pub const ALL: [FifoKind; 3] = [Self::Classic, Self::Real, Self::Atomic];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Classic => "classic",
            Self::Real => "real",
            Self::Atomic => "atomic",
        }
    }

    /// How many items one pop may hand over: the in-order FIFOs batch as
    /// InOrderInformersBatchProcess does; the classic one pops one key.
    pub fn batch_size(self) -> usize {
        match self {
            Self::Classic => 1,
            Self::Real | Self::Atomic => DEFAULT_BATCH_SIZE,
        }
    }
}

impl fmt::Display for FifoKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A FIFO name that is none of classic, real and atomic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown FIFO {0:?}: expected classic, real or atomic")]
pub struct UnknownFifo(pub String);

impl FromStr for FifoKind {
    type Err = UnknownFifo;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "classic" | "delta" | "deltafifo" => Ok(Self::Classic),
            "real" | "realfifo" | "inorder" => Ok(Self::Real),
            "atomic" | "atomicfifo" => Ok(Self::Atomic),
            other => Err(UnknownFifo(other.to_string())),
        }
    }
}

/// The informer's FIFO, whichever kind. Cloning is cheap and shares the queue.
pub enum Fifo<T> {
    Classic(DeltaFifo<T>),
    /// RealFIFO or AtomicFIFO.
    InOrder(RealFifo<T>),
}

impl<T> Clone for Fifo<T> {
    fn clone(&self) -> Self {
        match self {
            Self::Classic(f) => Self::Classic(f.clone()),
            Self::InOrder(f) => Self::InOrder(f.clone()),
        }
    }
}

impl<T: Object> Fifo<T> {
    /// A FIFO of `kind` in front of `store`, counting into `metrics`.
    pub fn new(kind: FifoKind, store: Indexer<T>, metrics: Arc<InformerMetrics>) -> Self {
        match kind {
            FifoKind::Classic => Self::Classic(DeltaFifo::with_metrics(Some(store), metrics)),
            FifoKind::Real => Self::InOrder(RealFifo::new(store, metrics)),
            FifoKind::Atomic => Self::InOrder(RealFifo::atomic(store, metrics)),
        }
    }

    pub fn kind(&self) -> FifoKind {
        match self {
            Self::Classic(_) => FifoKind::Classic,
            Self::InOrder(f) if f.is_atomic() => FifoKind::Atomic,
            Self::InOrder(_) => FifoKind::Real,
        }
    }

    /// Pops the next key's deltas (classic) or up to `batch_size` in-order items, and hands
    /// them to `process` with whether they belong to the first list. See
    /// [`DeltaFifo::pop`] and [`RealFifo::pop`] for which lock `process` runs under.
    pub async fn pop<R>(
        &self,
        batch_size: usize,
        process: impl FnOnce(Vec<FifoItem<T>>, bool) -> R,
    ) -> Result<R, FifoClosed> {
        match self {
            Self::Classic(f) => {
                f.pop(|key, deltas, initial| {
                    process(vec![FifoItem::Deltas { key, deltas }], initial)
                })
                .await
            }
            Self::InOrder(f) => f.pop(batch_size, process).await,
        }
    }

    pub fn close(&self) {
        match self {
            Self::Classic(f) => f.close(),
            Self::InOrder(f) => f.close(),
        }
    }

    pub fn is_closed(&self) -> bool {
        match self {
            Self::Classic(f) => f.is_closed(),
            Self::InOrder(f) => f.is_closed(),
        }
    }

    pub fn has_synced(&self) -> bool {
        match self {
            Self::Classic(f) => f.has_synced(),
            Self::InOrder(f) => f.has_synced(),
        }
    }

    pub async fn wait_for_sync(&self) -> bool {
        match self {
            Self::Classic(f) => f.wait_for_sync().await,
            Self::InOrder(f) => f.wait_for_sync().await,
        }
    }

    /// Keys queued (classic), or items queued and in flight (in order).
    pub fn len(&self) -> usize {
        match self {
            Self::Classic(f) => f.len(),
            Self::InOrder(f) => f.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn list_keys(&self) -> Vec<Key> {
        match self {
            Self::Classic(f) => f.list_keys(),
            Self::InOrder(f) => f.list_keys(),
        }
    }

    pub fn last_replace_resource_version(&self) -> Option<String> {
        match self {
            Self::Classic(f) => f.last_replace_resource_version(),
            Self::InOrder(f) => f.last_replace_resource_version(),
        }
    }
}

impl<T: Object> ReflectorStore<T> for Fifo<T> {
    fn add(&self, obj: Arc<T>) -> Result<(), KeyError> {
        match self {
            Self::Classic(f) => f.add(obj),
            Self::InOrder(f) => f.add(obj),
        }
    }

    fn update(&self, obj: Arc<T>) -> Result<(), KeyError> {
        match self {
            Self::Classic(f) => f.update(obj),
            Self::InOrder(f) => f.update(obj),
        }
    }

    fn delete(&self, obj: Arc<T>) -> Result<(), KeyError> {
        match self {
            Self::Classic(f) => f.delete(obj),
            Self::InOrder(f) => f.delete(obj),
        }
    }

    fn replace(&self, list: Vec<Arc<T>>, resource_version: &str) -> Result<(), KeyError> {
        match self {
            Self::Classic(f) => f.replace(list, resource_version),
            Self::InOrder(f) => f.replace(list, resource_version),
        }
    }

    fn resync(&self) -> Result<(), KeyError> {
        match self {
            Self::Classic(f) => f.resync(),
            Self::InOrder(f) => f.resync(),
        }
    }

    fn bookmark(&self, resource_version: &str) {
        match self {
            Self::Classic(f) => f.bookmark(resource_version),
            Self::InOrder(f) => f.bookmark(resource_version),
        }
    }

    fn known_copy(&self, key: &str, obj: &T) -> Option<Arc<T>> {
        match self {
            Self::Classic(f) => f.known_copy(key, obj),
            Self::InOrder(f) => f.known_copy(key, obj),
        }
    }

    fn streams_listed(&self) -> bool {
        match self {
            Self::Classic(f) => f.streams_listed(),
            Self::InOrder(f) => f.streams_listed(),
        }
    }

    fn add_listed(&self, objs: Vec<(Key, Arc<T>)>) {
        match self {
            Self::Classic(f) => f.add_listed(objs),
            Self::InOrder(f) => f.add_listed(objs),
        }
    }

    fn finish_listed(&self, listed: &Listed, resource_version: &str) {
        match self {
            Self::Classic(f) => f.finish_listed(listed, resource_version),
            Self::InOrder(f) => f.finish_listed(listed, resource_version),
        }
    }

    fn knows_nothing(&self) -> bool {
        match self {
            Self::Classic(f) => f.knows_nothing(),
            Self::InOrder(f) => f.knows_nothing(),
        }
    }
}

/// One delta as a controller sees it handed over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandedDelta {
    pub delta_type: DeltaType,
    pub resource_version: Option<String>,
    /// A deletion inferred from a relist (DeletedFinalStateUnknown).
    pub tombstone: bool,
}

/// One item of a [`Handoff`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandedItem {
    /// A key and its deltas, oldest first: more than one means they were merged (classic).
    Deltas {
        key: Key,
        deltas: Vec<HandedDelta>,
    },
    ReplacedAll {
        resource_version: String,
        objects: usize,
    },
    SyncAll,
    Bookmark {
        resource_version: String,
    },
}

impl HandedItem {
    pub fn of<T: Object>(item: &FifoItem<T>) -> Self {
        match item {
            FifoItem::Deltas { key, deltas } => Self::Deltas {
                key: key.clone(),
                deltas: deltas
                    .iter()
                    .map(|d| HandedDelta {
                        delta_type: d.delta_type(),
                        resource_version: d
                            .object()
                            .and_then(|o| o.resource_version())
                            .map(str::to_string),
                        tombstone: d.is_tombstone(),
                    })
                    .collect(),
            },
            FifoItem::ReplacedAll {
                resource_version,
                objects,
            } => Self::ReplacedAll {
                resource_version: resource_version.clone(),
                objects: objects.len(),
            },
            FifoItem::SyncAll => Self::SyncAll,
            FifoItem::Bookmark { resource_version } => Self::Bookmark {
                resource_version: resource_version.clone(),
            },
        }
    }
}

/// What one pop handed the informer's process loop (and so its handlers), in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handoff {
    /// Increasing per informer.
    pub seq: u64,
    pub fifo: FifoKind,
    pub is_in_initial_list: bool,
    /// One item (a key's deltas, or a whole-store item), or a batch of in-order deltas with
    /// distinct keys.
    pub items: Vec<HandedItem>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_kinds_parse_and_print() {
        for kind in FifoKind::ALL {
            assert_eq!(kind.as_str().parse::<FifoKind>(), Ok(kind));
        }
        assert_eq!("fast".parse::<FifoKind>(), Err(UnknownFifo("fast".into())));
        assert_eq!(FifoKind::default(), FifoKind::Classic);
    }
}
