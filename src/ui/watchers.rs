//! Informers the workbench views (the ownership tree, the hot loops) run beside the table:
//! one per kind they read, on the kind's own store with the owner-uid index, each in a task
//! that tells the view when its store changed and ends when the view drops it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{oneshot, watch};

use kscope_client::cluster::{Cluster, NamespaceScope};
use kscope_client::discovery::Discovery;
use kscope_client::lister_watcher::KubeListerWatcher;
use kscope_index_views::columns::TableRow;
use kscope_index_views::definitions::index_funcs;
use kscope_index_views::ownership::{OwnershipStore, StoreOf};
use kscope_index_views::printer_columns::KubectlPrinterColumns;
use kscope_informers::indexer::IndexerWriter;
use kscope_informers::instrument::tap::Tap;
use kscope_informers::running::{InformerConfig, RunningInformer};
use kscope_resources::{
    Deployment, GenericObject, Kind, Namespace, Node, Pod, ReplicaSet, ResourceKind, Secret,
};

use super::UiError;

/// The kinds `names` (comma-separated, as for kubectl) name that the server serves, each
/// once, after `first`: a view asks for what it can read and goes without the rest.
pub fn kinds(first: &[Kind], names: &str, discovery: &Discovery) -> Vec<Kind> {
    let named = names
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .filter_map(|name| match name.parse::<ResourceKind>() {
            Ok(kind) => Some(Kind::BuiltIn(kind)),
            Err(_) => discovery.resolve(name).ok(),
        });
    let mut out: Vec<Kind> = Vec::new();
    for kind in first.iter().cloned().chain(named) {
        if !out
            .iter()
            .any(|k| k.group() == kind.group() && k.plural() == kind.plural())
        {
            out.push(kind);
        }
    }
    out
}

/// Informers started for a view: their stores, and how many have listed. Dropping it
/// stops them.
pub struct Watchers {
    stores: Vec<Arc<dyn OwnershipStore>>,
    /// Bumped after each change applied to any store, and when one has listed.
    changed: watch::Receiver<u64>,
    notify: Arc<watch::Sender<u64>>,
    listed: Arc<AtomicUsize>,
    /// Dropped, each ends its informer's task.
    stops: Vec<oneshot::Sender<()>>,
}

impl Watchers {
    /// Starts an informer on each of `kinds` in `scope` (a cluster-scoped kind lists all of
    /// it), its watch events into `tap_of`'s tap for the kind if it gives one. Must run
    /// inside a Tokio runtime.
    pub fn start(
        cluster: &Cluster,
        kinds: &[Kind],
        scope: &NamespaceScope,
        mut tap_of: impl FnMut(&Kind) -> Option<Tap>,
    ) -> Result<Self, UiError> {
        let (notify, changed) = watch::channel(0);
        let mut watchers = Self {
            stores: Vec::with_capacity(kinds.len()),
            changed,
            notify: Arc::new(notify),
            listed: Arc::new(AtomicUsize::new(0)),
            stops: Vec::with_capacity(kinds.len()),
        };
        for kind in kinds {
            let tap = tap_of(kind);
            use ResourceKind as K;
            match kind.built_in() {
                Some(K::Pods) => watchers.spawn::<Pod>(cluster, kind, scope, tap)?,
                Some(K::Nodes) => watchers.spawn::<Node>(cluster, kind, scope, tap)?,
                Some(K::Namespaces) => watchers.spawn::<Namespace>(cluster, kind, scope, tap)?,
                Some(K::Deployments) => watchers.spawn::<Deployment>(cluster, kind, scope, tap)?,
                Some(K::ReplicaSets) => watchers.spawn::<ReplicaSet>(cluster, kind, scope, tap)?,
                Some(K::Secrets) => watchers.spawn::<Secret>(cluster, kind, scope, tap)?,
                None => watchers.spawn::<GenericObject>(cluster, kind, scope, tap)?,
            }
        }
        Ok(watchers)
    }

    fn spawn<T: TableRow>(
        &mut self,
        cluster: &Cluster,
        kind: &Kind,
        scope: &NamespaceScope,
        tap: Option<Tap>,
    ) -> Result<(), UiError> {
        let writer = IndexerWriter::new(index_funcs::<T>(&[]))?;
        self.stores
            .push(Arc::new(StoreOf::new(kind.kind(), writer.reader())));
        let lister_watcher = KubeListerWatcher::for_kind(cluster, kind.clone(), scope, None, None)
            .with_printer_columns(Arc::new(KubectlPrinterColumns));
        let mut config = InformerConfig::new(kind.to_string());
        config.tap = tap;
        let informer = RunningInformer::start(config, lister_watcher, writer);
        let (stop, mut stopped) = oneshot::channel::<()>();
        self.stops.push(stop);
        let (notify, listed) = (self.notify.clone(), self.listed.clone());
        tokio::spawn(async move {
            let shared = informer.informer().clone();
            // Registered before the first list is applied: each add is a change too.
            let mut events = shared.add_event_handler_without_replay();
            let synced = shared.wait_for_sync();
            tokio::pin!(synced);
            let mut waiting = true;
            loop {
                tokio::select! {
                    _ = &mut stopped => break,
                    done = &mut synced, if waiting => {
                        waiting = false;
                        if done {
                            listed.fetch_add(1, Ordering::Relaxed);
                        }
                        notify.send_modify(|n| *n += 1);
                    }
                    event = events.recv() => match event {
                        Some(_) => notify.send_modify(|n| *n += 1),
                        None => break,
                    },
                }
            }
            informer.shutdown().await;
        });
        Ok(())
    }

    /// The stores, one per kind, in the order the kinds were given.
    pub fn stores(&self) -> &[Arc<dyn OwnershipStore>] {
        &self.stores
    }

    /// How many kinds have listed, of how many watched.
    pub fn listed(&self) -> (usize, usize) {
        (self.listed.load(Ordering::Relaxed), self.stores.len())
    }

    /// Resolves when a store changed since the last call. Cancel-safe, for the event
    /// loop's `select!`.
    pub async fn changed(&mut self) {
        // The sender lives as long as `self`: an error cannot happen while it is awaited.
        let _ = self.changed.changed().await;
    }
}
