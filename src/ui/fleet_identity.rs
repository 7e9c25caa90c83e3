//! Which clusters of a fleet are one cluster reached twice (two URLs of one server, or a
//! second user): each cluster's kube-system namespace UID, read in the background once the
//! tables have started. At start only the server URL and CA can be compared, because nothing
//! there may wait on a server; reading the UID afterwards means an unreachable cluster never
//! delays the others' first rows, and a duplicate found is then left out of the fleet.

use std::collections::HashSet;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use kscope_client::cluster::Cluster;
use kscope_client::fleet::{Connected, Reading, SameCluster, ServerIdentity, dedupe, identify};

/// How long each cluster's kube-system may take to answer: past it the cluster keeps its
/// URL and CA as its identity. Only a background task waits this long.
pub const IDENTITY_BOUND: Duration = Duration::from_secs(10);

/// One cluster's identity read: its position in the fleet, and the identity.
#[derive(Debug)]
pub struct Identified {
    at: usize,
    identity: ServerIdentity,
}

/// The reads in flight for one fleet, and what they found so far.
pub struct IdentityCheck {
    /// The fleet's clusters in the order they were given: the first of a cluster is kept.
    clusters: Vec<Cluster>,
    identities: Vec<Option<ServerIdentity>>,
    /// Contexts already said to be another's cluster.
    left_out: HashSet<String>,
    /// Kept so that the channel never closes: with no read in flight the loop just waits.
    _tx: mpsc::UnboundedSender<Identified>,
    rx: mpsc::UnboundedReceiver<Identified>,
    tasks: Vec<JoinHandle<()>>,
}

impl IdentityCheck {
    /// Reads every cluster's identity at once, each within `bound`; for one cluster (no
    /// fleet) reads nothing. Must run inside a Tokio runtime when `clusters` has two or more.
    pub fn start(clusters: Vec<Cluster>, bound: Duration) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let tasks = match clusters.len() {
            0 | 1 => Vec::new(),
            _ => clusters
                .iter()
                .enumerate()
                .map(|(at, cluster)| {
                    let (cluster, tx) = (cluster.clone(), tx.clone());
                    tokio::spawn(async move {
                        let identity = identify(&cluster, bound).await;
                        // The receiver lives as long as the fleet; if it is gone, nobody waits.
                        let _ = tx.send(Identified { at, identity });
                    })
                })
                .collect(),
        };
        Self {
            identities: vec![None; clusters.len()],
            clusters,
            left_out: HashSet::new(),
            _tx: tx,
            rx,
            tasks,
        }
    }

    /// The next identity read. Cancel-safe, for the event loop's `select!`.
    pub async fn identified(&mut self) -> Option<Identified> {
        self.rx.recv().await
    }

    /// Takes an identity in, and says which clusters it shows to be an earlier one's:
    /// decided among those read so far, by the order the clusters were given, so the first
    /// context of a cluster is the one kept whichever answered first.
    pub fn take(&mut self, identified: Identified) -> Vec<SameCluster> {
        if let Some(slot) = self.identities.get_mut(identified.at) {
            *slot = Some(identified.identity);
        }
        let readings: Vec<Reading<()>> = self
            .clusters
            .iter()
            .zip(&self.identities)
            .filter(|(cluster, _)| !self.left_out.contains(&cluster.context))
            .filter_map(|(cluster, identity)| {
                Some(Reading {
                    context: cluster.context.clone(),
                    outcome: Ok(Connected {
                        cluster: cluster.clone(),
                        identity: identity.clone()?,
                        read: (),
                    }),
                })
            })
            .collect();
        let (_, same) = dedupe(readings);
        for found in &same {
            self.left_out.insert(found.context.clone());
        }
        same
    }
}

impl Drop for IdentityCheck {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}
