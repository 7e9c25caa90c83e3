//! The owner-uid index every store gets: from each owner's uid to the objects naming it in
//! `metadata.ownerReferences`, and each kind's health in its table's words. Apart from the
//! trees ([`crate::ownership`]) so that the index definitions need not know tables.

use std::borrow::Cow;

use smallvec::SmallVec;

use kscope_informers::indexer::{IndexFunc, index_func};
use kscope_resources::{
    ConditionStatus, Deployment, GenericObject, KubeResource, Namespace, Node, OwnerRef, Pod,
    ReplicaSet, Secret,
};

/// The name of the owner-uid index every store gets.
pub const OWNER_UID_INDEX: &str = "owner-uid";

/// The owners an object names, and its health as its kind's table shows it.
pub trait Owned: KubeResource {
    /// `metadata.ownerReferences`; none for kinds whose projection keeps no owners.
    fn owners(&self) -> SmallVec<[OwnerRef<'_>; 2]> {
        SmallVec::new()
    }

    /// The object's health in its table's words (`1/1 Running`, `2/2 ready`, `Ready=True`);
    /// its colour is the table's ([`TableRow::health`]).
    fn summary(&self) -> String;
}

/// The owner-uid index: one value per ownerReference, controller or not, since a tree shows
/// every dependent the garbage collector would delete with its owner.
pub fn owner_uid_index<T: Owned>() -> IndexFunc<T> {
    index_func(|obj: &T| {
        let mut values = SmallVec::new();
        for owner in obj.owners() {
            if !owner.uid.is_empty() && !values.iter().any(|v: &Cow<'_, str>| v == owner.uid) {
                values.push(Cow::Borrowed(owner.uid));
            }
        }
        Ok(values)
    })
}

fn replicas_summary(ready: i32, desired: i32) -> String {
    format!("{ready}/{desired} ready")
}

impl Owned for Pod {
    fn owners(&self) -> SmallVec<[OwnerRef<'_>; 2]> {
        self.owner_references().collect()
    }

    fn summary(&self) -> String {
        let (ready, total) = (self.ready_containers(), self.total_containers());
        format!("{ready}/{total} {}", self.status())
    }
}

impl Owned for Deployment {
    fn owners(&self) -> SmallVec<[OwnerRef<'_>; 2]> {
        self.owner_references().collect()
    }

    fn summary(&self) -> String {
        let r = self.replicas();
        replicas_summary(r.ready, r.desired)
    }
}

impl Owned for ReplicaSet {
    fn owners(&self) -> SmallVec<[OwnerRef<'_>; 2]> {
        self.owner_references().collect()
    }

    fn summary(&self) -> String {
        let r = self.replicas();
        replicas_summary(r.ready, r.desired)
    }
}

impl Owned for GenericObject {
    fn owners(&self) -> SmallVec<[OwnerRef<'_>; 2]> {
        self.owner_references().collect()
    }

    fn summary(&self) -> String {
        match GenericObject::health(self) {
            None => String::new(),
            Some(h) => {
                let status = match h.status {
                    ConditionStatus::True => "True",
                    ConditionStatus::False => "False",
                    ConditionStatus::Unknown => "Unknown",
                };
                match self.health_reason() {
                    Some(reason) => format!("{}={status} ({reason})", h.condition.as_str()),
                    None => format!("{}={status}", h.condition.as_str()),
                }
            }
        }
    }
}

impl Owned for Node {
    fn summary(&self) -> String {
        self.status().to_string()
    }
}

impl Owned for Namespace {
    fn summary(&self) -> String {
        self.phase().unwrap_or_default().to_string()
    }
}

impl Owned for Secret {
    fn summary(&self) -> String {
        String::new()
    }
}
