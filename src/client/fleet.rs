//! Several clusters read at once: each selected context connected and read concurrently,
//! each within its own bound, so that an unreachable or slow cluster never holds up the
//! others; and contexts that reach the same cluster (two users of one server) told apart
//! from different clusters, so that it is counted once.

use std::future::Future;
use std::time::Duration;

use futures::future::join_all;
use kscope_informers::lister_watcher::ListWatchError;
use kscope_informers::reflector::ReflectorError;

use crate::cluster::{Cluster, ClusterArgs, ClusterError};
use crate::fetch::fetch_path_within;

/// Why one cluster of a fleet could not be read at all. The others are read regardless.
#[derive(Debug, thiserror::Error)]
pub enum MemberError {
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error("no client within {}s", .0.as_secs())]
    Timeout(Duration),
}

/// What a cluster is, as far as kscope can tell: the UID of its kube-system namespace
/// (created once per cluster, the same through every user and endpoint) when it can be
/// read, and always the server URL and the CA the context trusts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerIdentity {
    pub kube_system_uid: Option<String>,
    pub server: String,
    pub ca_sha256: Option<String>,
}

impl ServerIdentity {
    /// Whether two contexts reach the same cluster, and how that was told: by the
    /// kube-system UID when both were read (two URLs of one cluster match, two clusters
    /// behind one URL over time do not), else by the server URL and CA.
    pub fn same_as(&self, other: &Self) -> Option<&'static str> {
        match (&self.kube_system_uid, &other.kube_system_uid) {
            (Some(a), Some(b)) => (a == b).then_some("the same kube-system namespace UID"),
            _ => (self.server == other.server && self.ca_sha256 == other.ca_sha256)
                .then_some("the same server URL and CA"),
        }
    }
}

/// Reads the identity of the cluster behind `cluster`, waiting at most `bound` for the
/// kube-system namespace (a user that may not read it still has the URL and CA).
pub async fn identify(cluster: &Cluster, bound: Duration) -> ServerIdentity {
    let namespace = fetch_path_within(
        &cluster.client,
        "/api/v1/namespaces/kube-system".into(),
        "Namespace kube-system".into(),
        bound,
    )
    .await;
    let kube_system_uid = namespace.ok().and_then(|ns| {
        ns.pointer("/metadata/uid")
            .and_then(|uid| uid.as_str())
            .map(str::to_string)
    });
    ServerIdentity {
        kube_system_uid,
        server: cluster.server.clone(),
        ca_sha256: cluster.ca_sha256.clone(),
    }
}

/// One context of a fleet and what reading it gave.
pub struct Reading<R> {
    pub context: String,
    pub outcome: Result<Connected<R>, MemberError>,
}

/// A context that connected: its cluster, its identity and what was read from it.
pub struct Connected<R> {
    pub cluster: Cluster,
    pub identity: ServerIdentity,
    pub read: R,
}

/// A context left out because an earlier one reaches the same cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SameCluster {
    pub context: String,
    pub kept: String,
    pub how: &'static str,
}

/// Connects every context `args` select and runs `read` on each, all at once. Connecting
/// (and reading the identity) is bounded by `bound` per cluster; `read` bounds itself. No
/// cluster waits for another: the slowest only decides when the whole answer is ready.
/// Errors only when the selection itself is wrong (no kubeconfig, an unknown context).
pub async fn read_each<R, F, Fut>(
    args: &ClusterArgs,
    bound: Duration,
    read: F,
) -> Result<Vec<Reading<R>>, ClusterError>
where
    F: Fn(Cluster) -> Fut,
    Fut: Future<Output = R>,
{
    let contexts = args.selected_contexts()?;
    let read = &read;
    let readings = contexts.into_iter().map(|context| async move {
        let args = args.with_context(&context);
        let connected = tokio::time::timeout(bound, args.connect()).await;
        let outcome = match connected {
            Err(_) => Err(MemberError::Timeout(bound)),
            Ok(Err(err)) => Err(MemberError::Cluster(err)),
            Ok(Ok(cluster)) => {
                let (identity, read) =
                    tokio::join!(identify(&cluster, bound), read(cluster.clone()));
                Ok(Connected {
                    cluster,
                    identity,
                    read,
                })
            }
        };
        Reading { context, outcome }
    });
    Ok(join_all(readings).await)
}

/// Leaves out each reading whose cluster an earlier one already reached (the first context
/// of a cluster is kept), and says which were left out and why.
pub fn dedupe<R>(readings: Vec<Reading<R>>) -> (Vec<Reading<R>>, Vec<SameCluster>) {
    let mut kept: Vec<Reading<R>> = Vec::with_capacity(readings.len());
    let mut same = Vec::new();
    for reading in readings {
        let earlier = reading.outcome.as_ref().ok().and_then(|this| {
            kept.iter().find_map(|k| {
                let other = k.outcome.as_ref().ok()?;
                let how = other.identity.same_as(&this.identity)?;
                Some((k.context.clone(), how))
            })
        });
        match earlier {
            Some((kept_context, how)) => same.push(SameCluster {
                context: reading.context,
                kept: kept_context,
                how,
            }),
            None => kept.push(reading),
        }
    }
    (kept, same)
}

/// Why a cluster's store is not current, in the words of the header and of `get`'s
/// stderr: retrying will not help for the first three.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trouble {
    Unreachable,
    Forbidden,
    NotServed,
    /// Anything else: a failure the Reflector retries, or no first list within the bound.
    NotSynced,
}

impl Trouble {
    /// What a Reflector's error says about its cluster.
    pub fn of(err: &ReflectorError) -> Self {
        match err {
            ReflectorError::ListWatch(ListWatchError::Api { status, .. }) => match status.code {
                401 | 403 => Self::Forbidden,
                404 => Self::NotServed,
                _ => Self::NotSynced,
            },
            ReflectorError::ListWatch(ListWatchError::Transport { .. }) => Self::Unreachable,
            _ => Self::NotSynced,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Self::Unreachable => "unreachable",
            Self::Forbidden => "forbidden",
            Self::NotServed => "kind not served",
            Self::NotSynced => "not synced",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(uid: Option<&str>, server: &str) -> ServerIdentity {
        ServerIdentity {
            kube_system_uid: uid.map(str::to_string),
            server: server.into(),
            ca_sha256: Some("sha256:ca".into()),
        }
    }

    #[test]
    fn same_cluster_by_uid_first_then_by_endpoint() {
        let a = identity(Some("u1"), "https://a/");
        assert_eq!(
            a.same_as(&identity(Some("u1"), "https://b/")),
            Some("the same kube-system namespace UID"),
            "two URLs of one cluster"
        );
        assert_eq!(a.same_as(&identity(Some("u2"), "https://a/")), None);
        assert_eq!(
            a.same_as(&identity(None, "https://a/")),
            Some("the same server URL and CA"),
            "a user that may not read kube-system"
        );
        assert_eq!(a.same_as(&identity(None, "https://b/")), None);
        let mut other_ca = identity(None, "https://a/");
        other_ca.ca_sha256 = None;
        assert_eq!(a.same_as(&other_ca), None);
    }
}
