//! The protobuf message type of each served kind.

use crate::resources::Resource;

use super::message::Message;
use super::schema;

/// The message type of each served kind, and of the bodies that are no kind's (a DELETE's
/// options, a pod's eviction).
pub(super) fn root(kind: &str) -> Option<&'static Message> {
    match kind {
        "DeleteOptions" => return Some(&schema::META_V1_DELETE_OPTIONS),
        "Eviction" => return Some(&schema::POLICY_V1_EVICTION),
        "SelfSubjectAccessReview" => {
            return Some(&schema::AUTHORIZATION_V1_SELF_SUBJECT_ACCESS_REVIEW);
        }
        _ => {}
    }
    let resource = Resource::ALL.into_iter().find(|r| r.kind() == kind)?;
    Some(match resource {
        Resource::Namespaces => &schema::CORE_V1_NAMESPACE,
        Resource::Nodes => &schema::CORE_V1_NODE,
        Resource::Pods => &schema::CORE_V1_POD,
        Resource::Deployments => &schema::APPS_V1_DEPLOYMENT,
        Resource::ReplicaSets => &schema::APPS_V1_REPLICA_SET,
        Resource::Secrets => &schema::CORE_V1_SECRET,
        Resource::ConfigMaps => &schema::CORE_V1_CONFIG_MAP,
        Resource::Jobs => &schema::BATCH_V1_JOB,
        Resource::CronJobs => &schema::BATCH_V1_CRON_JOB,
        _ => return None,
    })
}
