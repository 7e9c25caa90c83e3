//! What kube-controller-manager, the scheduler and the kubelets do after a client's write:
//! a Deployment gets a ReplicaSet, the ReplicaSet pods, the pods nodes and then running
//! containers, and each status follows. Every step is its own write through the store, so a
//! watcher sees the cascade as a real cluster's, one resourceVersion at a time.
//!
//! The controllers react to client writes (the HTTP layer reports them): the seeded
//! workload is already consistent and the churn drives its Deployments, so a Deployment a
//! client touched is adopted here and left alone by the churn. The seeded StatefulSets,
//! DaemonSets and Jobs have the pods these controllers would have made, so a client's
//! scale, a deleted pod or a new node is reconciled as for a workload a client made.

pub(crate) mod cronjob;
mod daemonset;
mod deployment;
pub(crate) mod disruption;
mod endpoints;
mod events;
pub(crate) mod job;
mod kubelet;
mod manager;
pub(crate) mod namespace;
mod nodelifecycle;
mod objects;
mod pods;
mod replicaset;
mod revisions;
mod statefulset;
mod termination;
mod work;

pub(crate) use manager::{Controllers, run};
pub(crate) use termination::{next_stop, stop_containers};
