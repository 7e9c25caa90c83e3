//! Field numbers and JSON names of the protobuf messages the served kinds are made of.
//!
//! Generated, do not edit: `cargo run -p kscope-proto-schema > src/sim/http/write/proto/schema.rs`
//! (tools/proto-schema) reads the field numbers of k8s.io/api's and k8s.io/apimachinery's
//! `generated.proto` from the k8s-pb crate's sources and each field's JSON name from
//! k8s-openapi's, at the versions Cargo.lock holds. Fields Go embeds inline
//! (`LocalObjectReference` in a `SecretKeySelector`...) are `Label::Inline`.

use super::{Field, Label, Message, Ty};

pub(super) static APPS_V1_DEPLOYMENT: Message = Message {
    name: "Deployment",
    fields: &[
        Field(
            1,
            "metadata",
            Label::Single,
            Ty::Message(&META_V1_OBJECT_META),
        ),
        Field(
            2,
            "spec",
            Label::Single,
            Ty::Message(&APPS_V1_DEPLOYMENT_SPEC),
        ),
        Field(
            3,
            "status",
            Label::Single,
            Ty::Message(&APPS_V1_DEPLOYMENT_STATUS),
        ),
    ],
};

pub(super) static APPS_V1_DEPLOYMENT_CONDITION: Message = Message {
    name: "DeploymentCondition",
    fields: &[
        Field(1, "type", Label::Single, Ty::String),
        Field(2, "status", Label::Single, Ty::String),
        Field(4, "reason", Label::Single, Ty::String),
        Field(5, "message", Label::Single, Ty::String),
        Field(6, "lastUpdateTime", Label::Single, Ty::Time),
        Field(7, "lastTransitionTime", Label::Single, Ty::Time),
    ],
};

pub(super) static APPS_V1_DEPLOYMENT_SPEC: Message = Message {
    name: "DeploymentSpec",
    fields: &[
        Field(1, "replicas", Label::Single, Ty::Int32),
        Field(
            2,
            "selector",
            Label::Single,
            Ty::Message(&META_V1_LABEL_SELECTOR),
        ),
        Field(
            3,
            "template",
            Label::Single,
            Ty::Message(&CORE_V1_POD_TEMPLATE_SPEC),
        ),
        Field(
            4,
            "strategy",
            Label::Single,
            Ty::Message(&APPS_V1_DEPLOYMENT_STRATEGY),
        ),
        Field(5, "minReadySeconds", Label::Single, Ty::Int32),
        Field(6, "revisionHistoryLimit", Label::Single, Ty::Int32),
        Field(7, "paused", Label::Single, Ty::Bool),
        Field(9, "progressDeadlineSeconds", Label::Single, Ty::Int32),
    ],
};

pub(super) static APPS_V1_DEPLOYMENT_STATUS: Message = Message {
    name: "DeploymentStatus",
    fields: &[
        Field(1, "observedGeneration", Label::Single, Ty::Int64),
        Field(2, "replicas", Label::Single, Ty::Int32),
        Field(3, "updatedReplicas", Label::Single, Ty::Int32),
        Field(4, "availableReplicas", Label::Single, Ty::Int32),
        Field(5, "unavailableReplicas", Label::Single, Ty::Int32),
        Field(
            6,
            "conditions",
            Label::Repeated,
            Ty::Message(&APPS_V1_DEPLOYMENT_CONDITION),
        ),
        Field(7, "readyReplicas", Label::Single, Ty::Int32),
        Field(8, "collisionCount", Label::Single, Ty::Int32),
        Field(9, "terminatingReplicas", Label::Single, Ty::Int32),
    ],
};

pub(super) static APPS_V1_DEPLOYMENT_STRATEGY: Message = Message {
    name: "DeploymentStrategy",
    fields: &[
        Field(1, "type", Label::Single, Ty::String),
        Field(
            2,
            "rollingUpdate",
            Label::Single,
            Ty::Message(&APPS_V1_ROLLING_UPDATE_DEPLOYMENT),
        ),
    ],
};

pub(super) static APPS_V1_REPLICA_SET: Message = Message {
    name: "ReplicaSet",
    fields: &[
        Field(
            1,
            "metadata",
            Label::Single,
            Ty::Message(&META_V1_OBJECT_META),
        ),
        Field(
            2,
            "spec",
            Label::Single,
            Ty::Message(&APPS_V1_REPLICA_SET_SPEC),
        ),
        Field(
            3,
            "status",
            Label::Single,
            Ty::Message(&APPS_V1_REPLICA_SET_STATUS),
        ),
    ],
};

pub(super) static APPS_V1_REPLICA_SET_CONDITION: Message = Message {
    name: "ReplicaSetCondition",
    fields: &[
        Field(1, "type", Label::Single, Ty::String),
        Field(2, "status", Label::Single, Ty::String),
        Field(3, "lastTransitionTime", Label::Single, Ty::Time),
        Field(4, "reason", Label::Single, Ty::String),
        Field(5, "message", Label::Single, Ty::String),
    ],
};

pub(super) static APPS_V1_REPLICA_SET_SPEC: Message = Message {
    name: "ReplicaSetSpec",
    fields: &[
        Field(1, "replicas", Label::Single, Ty::Int32),
        Field(
            2,
            "selector",
            Label::Single,
            Ty::Message(&META_V1_LABEL_SELECTOR),
        ),
        Field(
            3,
            "template",
            Label::Single,
            Ty::Message(&CORE_V1_POD_TEMPLATE_SPEC),
        ),
        Field(4, "minReadySeconds", Label::Single, Ty::Int32),
    ],
};

pub(super) static APPS_V1_REPLICA_SET_STATUS: Message = Message {
    name: "ReplicaSetStatus",
    fields: &[
        Field(1, "replicas", Label::Single, Ty::Int32),
        Field(2, "fullyLabeledReplicas", Label::Single, Ty::Int32),
        Field(3, "observedGeneration", Label::Single, Ty::Int64),
        Field(4, "readyReplicas", Label::Single, Ty::Int32),
        Field(5, "availableReplicas", Label::Single, Ty::Int32),
        Field(
            6,
            "conditions",
            Label::Repeated,
            Ty::Message(&APPS_V1_REPLICA_SET_CONDITION),
        ),
        Field(7, "terminatingReplicas", Label::Single, Ty::Int32),
    ],
};

pub(super) static APPS_V1_ROLLING_UPDATE_DEPLOYMENT: Message = Message {
    name: "RollingUpdateDeployment",
    fields: &[
        Field(1, "maxUnavailable", Label::Single, Ty::IntOrString),
        Field(2, "maxSurge", Label::Single, Ty::IntOrString),
    ],
};

pub(super) static BATCH_V1_CRON_JOB: Message = Message {
    name: "CronJob",
    fields: &[
        Field(
            1,
            "metadata",
            Label::Single,
            Ty::Message(&META_V1_OBJECT_META),
        ),
        Field(
            2,
            "spec",
            Label::Single,
            Ty::Message(&BATCH_V1_CRON_JOB_SPEC),
        ),
        Field(
            3,
            "status",
            Label::Single,
            Ty::Message(&BATCH_V1_CRON_JOB_STATUS),
        ),
    ],
};

pub(super) static BATCH_V1_CRON_JOB_SPEC: Message = Message {
    name: "CronJobSpec",
    fields: &[
        Field(1, "schedule", Label::Single, Ty::String),
        Field(2, "startingDeadlineSeconds", Label::Single, Ty::Int64),
        Field(3, "concurrencyPolicy", Label::Single, Ty::String),
        Field(4, "suspend", Label::Single, Ty::Bool),
        Field(
            5,
            "jobTemplate",
            Label::Single,
            Ty::Message(&BATCH_V1_JOB_TEMPLATE_SPEC),
        ),
        Field(6, "successfulJobsHistoryLimit", Label::Single, Ty::Int32),
        Field(7, "failedJobsHistoryLimit", Label::Single, Ty::Int32),
        Field(8, "timeZone", Label::Single, Ty::String),
    ],
};

pub(super) static BATCH_V1_CRON_JOB_STATUS: Message = Message {
    name: "CronJobStatus",
    fields: &[
        Field(
            1,
            "active",
            Label::Repeated,
            Ty::Message(&CORE_V1_OBJECT_REFERENCE),
        ),
        Field(4, "lastScheduleTime", Label::Single, Ty::Time),
        Field(5, "lastSuccessfulTime", Label::Single, Ty::Time),
    ],
};

pub(super) static BATCH_V1_JOB: Message = Message {
    name: "Job",
    fields: &[
        Field(
            1,
            "metadata",
            Label::Single,
            Ty::Message(&META_V1_OBJECT_META),
        ),
        Field(2, "spec", Label::Single, Ty::Message(&BATCH_V1_JOB_SPEC)),
        Field(
            3,
            "status",
            Label::Single,
            Ty::Message(&BATCH_V1_JOB_STATUS),
        ),
    ],
};

pub(super) static BATCH_V1_JOB_CONDITION: Message = Message {
    name: "JobCondition",
    fields: &[
        Field(1, "type", Label::Single, Ty::String),
        Field(2, "status", Label::Single, Ty::String),
        Field(3, "lastProbeTime", Label::Single, Ty::Time),
        Field(4, "lastTransitionTime", Label::Single, Ty::Time),
        Field(5, "reason", Label::Single, Ty::String),
        Field(6, "message", Label::Single, Ty::String),
    ],
};

pub(super) static BATCH_V1_JOB_SPEC: Message = Message {
    name: "JobSpec",
    fields: &[
        Field(1, "parallelism", Label::Single, Ty::Int32),
        Field(2, "completions", Label::Single, Ty::Int32),
        Field(3, "activeDeadlineSeconds", Label::Single, Ty::Int64),
        Field(
            4,
            "selector",
            Label::Single,
            Ty::Message(&META_V1_LABEL_SELECTOR),
        ),
        Field(5, "manualSelector", Label::Single, Ty::Bool),
        Field(
            6,
            "template",
            Label::Single,
            Ty::Message(&CORE_V1_POD_TEMPLATE_SPEC),
        ),
        Field(7, "backoffLimit", Label::Single, Ty::Int32),
        Field(8, "ttlSecondsAfterFinished", Label::Single, Ty::Int32),
        Field(9, "completionMode", Label::Single, Ty::String),
        Field(10, "suspend", Label::Single, Ty::Bool),
        Field(
            11,
            "podFailurePolicy",
            Label::Single,
            Ty::Message(&BATCH_V1_POD_FAILURE_POLICY),
        ),
        Field(12, "backoffLimitPerIndex", Label::Single, Ty::Int32),
        Field(13, "maxFailedIndexes", Label::Single, Ty::Int32),
        Field(14, "podReplacementPolicy", Label::Single, Ty::String),
        Field(15, "managedBy", Label::Single, Ty::String),
        Field(
            16,
            "successPolicy",
            Label::Single,
            Ty::Message(&BATCH_V1_SUCCESS_POLICY),
        ),
    ],
};

pub(super) static BATCH_V1_JOB_STATUS: Message = Message {
    name: "JobStatus",
    fields: &[
        Field(
            1,
            "conditions",
            Label::Repeated,
            Ty::Message(&BATCH_V1_JOB_CONDITION),
        ),
        Field(2, "startTime", Label::Single, Ty::Time),
        Field(3, "completionTime", Label::Single, Ty::Time),
        Field(4, "active", Label::Single, Ty::Int32),
        Field(5, "succeeded", Label::Single, Ty::Int32),
        Field(6, "failed", Label::Single, Ty::Int32),
        Field(7, "completedIndexes", Label::Single, Ty::String),
        Field(
            8,
            "uncountedTerminatedPods",
            Label::Single,
            Ty::Message(&BATCH_V1_UNCOUNTED_TERMINATED_PODS),
        ),
        Field(9, "ready", Label::Single, Ty::Int32),
        Field(10, "failedIndexes", Label::Single, Ty::String),
        Field(11, "terminating", Label::Single, Ty::Int32),
    ],
};

pub(super) static BATCH_V1_JOB_TEMPLATE_SPEC: Message = Message {
    name: "JobTemplateSpec",
    fields: &[
        Field(
            1,
            "metadata",
            Label::Single,
            Ty::Message(&META_V1_OBJECT_META),
        ),
        Field(2, "spec", Label::Single, Ty::Message(&BATCH_V1_JOB_SPEC)),
    ],
};

pub(super) static BATCH_V1_POD_FAILURE_POLICY: Message = Message {
    name: "PodFailurePolicy",
    fields: &[Field(
        1,
        "rules",
        Label::Repeated,
        Ty::Message(&BATCH_V1_POD_FAILURE_POLICY_RULE),
    )],
};

pub(super) static BATCH_V1_POD_FAILURE_POLICY_ON_EXIT_CODES_REQUIREMENT: Message = Message {
    name: "PodFailurePolicyOnExitCodesRequirement",
    fields: &[
        Field(1, "containerName", Label::Single, Ty::String),
        Field(2, "operator", Label::Single, Ty::String),
        Field(3, "values", Label::Repeated, Ty::Int32),
    ],
};

pub(super) static BATCH_V1_POD_FAILURE_POLICY_ON_POD_CONDITIONS_PATTERN: Message = Message {
    name: "PodFailurePolicyOnPodConditionsPattern",
    fields: &[
        Field(1, "type", Label::Single, Ty::String),
        Field(2, "status", Label::Single, Ty::String),
    ],
};

pub(super) static BATCH_V1_POD_FAILURE_POLICY_RULE: Message = Message {
    name: "PodFailurePolicyRule",
    fields: &[
        Field(1, "action", Label::Single, Ty::String),
        Field(
            2,
            "onExitCodes",
            Label::Single,
            Ty::Message(&BATCH_V1_POD_FAILURE_POLICY_ON_EXIT_CODES_REQUIREMENT),
        ),
        Field(
            3,
            "onPodConditions",
            Label::Repeated,
            Ty::Message(&BATCH_V1_POD_FAILURE_POLICY_ON_POD_CONDITIONS_PATTERN),
        ),
    ],
};

pub(super) static BATCH_V1_SUCCESS_POLICY: Message = Message {
    name: "SuccessPolicy",
    fields: &[Field(
        1,
        "rules",
        Label::Repeated,
        Ty::Message(&BATCH_V1_SUCCESS_POLICY_RULE),
    )],
};

pub(super) static BATCH_V1_SUCCESS_POLICY_RULE: Message = Message {
    name: "SuccessPolicyRule",
    fields: &[
        Field(1, "succeededIndexes", Label::Single, Ty::String),
        Field(2, "succeededCount", Label::Single, Ty::Int32),
    ],
};

pub(super) static BATCH_V1_UNCOUNTED_TERMINATED_PODS: Message = Message {
    name: "UncountedTerminatedPods",
    fields: &[
        Field(1, "succeeded", Label::Repeated, Ty::String),
        Field(2, "failed", Label::Repeated, Ty::String),
    ],
};

pub(super) static CORE_V1_AFFINITY: Message = Message {
    name: "Affinity",
    fields: &[
        Field(
            1,
            "nodeAffinity",
            Label::Single,
            Ty::Message(&CORE_V1_NODE_AFFINITY),
        ),
        Field(
            2,
            "podAffinity",
            Label::Single,
            Ty::Message(&CORE_V1_POD_AFFINITY),
        ),
        Field(
            3,
            "podAntiAffinity",
            Label::Single,
            Ty::Message(&CORE_V1_POD_ANTI_AFFINITY),
        ),
    ],
};

pub(super) static CORE_V1_APP_ARMOR_PROFILE: Message = Message {
    name: "AppArmorProfile",
    fields: &[
        Field(1, "type", Label::Single, Ty::String),
        Field(2, "localhostProfile", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_ATTACHED_VOLUME: Message = Message {
    name: "AttachedVolume",
    fields: &[
        Field(1, "name", Label::Single, Ty::String),
        Field(2, "devicePath", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_AWS_ELASTIC_BLOCK_STORE_VOLUME_SOURCE: Message = Message {
    name: "AwsElasticBlockStoreVolumeSource",
    fields: &[
        Field(1, "volumeID", Label::Single, Ty::String),
        Field(2, "fsType", Label::Single, Ty::String),
        Field(3, "partition", Label::Single, Ty::Int32),
        Field(4, "readOnly", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_AZURE_DISK_VOLUME_SOURCE: Message = Message {
    name: "AzureDiskVolumeSource",
    fields: &[
        Field(1, "diskName", Label::Single, Ty::String),
        Field(2, "diskURI", Label::Single, Ty::String),
        Field(3, "cachingMode", Label::Single, Ty::String),
        Field(4, "fsType", Label::Single, Ty::String),
        Field(5, "readOnly", Label::Single, Ty::Bool),
        Field(6, "kind", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_AZURE_FILE_VOLUME_SOURCE: Message = Message {
    name: "AzureFileVolumeSource",
    fields: &[
        Field(1, "secretName", Label::Single, Ty::String),
        Field(2, "shareName", Label::Single, Ty::String),
        Field(3, "readOnly", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_CAPABILITIES: Message = Message {
    name: "Capabilities",
    fields: &[
        Field(1, "add", Label::Repeated, Ty::String),
        Field(2, "drop", Label::Repeated, Ty::String),
    ],
};

pub(super) static CORE_V1_CEPH_FS_VOLUME_SOURCE: Message = Message {
    name: "CephFsVolumeSource",
    fields: &[
        Field(1, "monitors", Label::Repeated, Ty::String),
        Field(2, "path", Label::Single, Ty::String),
        Field(3, "user", Label::Single, Ty::String),
        Field(4, "secretFile", Label::Single, Ty::String),
        Field(
            5,
            "secretRef",
            Label::Single,
            Ty::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE),
        ),
        Field(6, "readOnly", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_CINDER_VOLUME_SOURCE: Message = Message {
    name: "CinderVolumeSource",
    fields: &[
        Field(1, "volumeID", Label::Single, Ty::String),
        Field(2, "fsType", Label::Single, Ty::String),
        Field(3, "readOnly", Label::Single, Ty::Bool),
        Field(
            4,
            "secretRef",
            Label::Single,
            Ty::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE),
        ),
    ],
};

pub(super) static CORE_V1_CLUSTER_TRUST_BUNDLE_PROJECTION: Message = Message {
    name: "ClusterTrustBundleProjection",
    fields: &[
        Field(1, "name", Label::Single, Ty::String),
        Field(2, "signerName", Label::Single, Ty::String),
        Field(
            3,
            "labelSelector",
            Label::Single,
            Ty::Message(&META_V1_LABEL_SELECTOR),
        ),
        Field(4, "path", Label::Single, Ty::String),
        Field(5, "optional", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_CONFIG_MAP: Message = Message {
    name: "ConfigMap",
    fields: &[
        Field(
            1,
            "metadata",
            Label::Single,
            Ty::Message(&META_V1_OBJECT_META),
        ),
        Field(2, "data", Label::Map, Ty::String),
        Field(3, "binaryData", Label::Map, Ty::Bytes),
        Field(4, "immutable", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_CONFIG_MAP_ENV_SOURCE: Message = Message {
    name: "ConfigMapEnvSource",
    fields: &[
        Field(
            1,
            "",
            Label::Inline,
            Ty::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE),
        ),
        Field(2, "optional", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_CONFIG_MAP_KEY_SELECTOR: Message = Message {
    name: "ConfigMapKeySelector",
    fields: &[
        Field(
            1,
            "",
            Label::Inline,
            Ty::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE),
        ),
        Field(2, "key", Label::Single, Ty::String),
        Field(3, "optional", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_CONFIG_MAP_NODE_CONFIG_SOURCE: Message = Message {
    name: "ConfigMapNodeConfigSource",
    fields: &[
        Field(1, "namespace", Label::Single, Ty::String),
        Field(2, "name", Label::Single, Ty::String),
        Field(3, "uid", Label::Single, Ty::String),
        Field(4, "resourceVersion", Label::Single, Ty::String),
        Field(5, "kubeletConfigKey", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_CONFIG_MAP_PROJECTION: Message = Message {
    name: "ConfigMapProjection",
    fields: &[
        Field(
            1,
            "",
            Label::Inline,
            Ty::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE),
        ),
        Field(
            2,
            "items",
            Label::Repeated,
            Ty::Message(&CORE_V1_KEY_TO_PATH),
        ),
        Field(4, "optional", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_CONFIG_MAP_VOLUME_SOURCE: Message = Message {
    name: "ConfigMapVolumeSource",
    fields: &[
        Field(
            1,
            "",
            Label::Inline,
            Ty::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE),
        ),
        Field(
            2,
            "items",
            Label::Repeated,
            Ty::Message(&CORE_V1_KEY_TO_PATH),
        ),
        Field(3, "defaultMode", Label::Single, Ty::Int32),
        Field(4, "optional", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_CONTAINER: Message = Message {
    name: "Container",
    fields: &[
        Field(1, "name", Label::Single, Ty::String),
        Field(2, "image", Label::Single, Ty::String),
        Field(3, "command", Label::Repeated, Ty::String),
        Field(4, "args", Label::Repeated, Ty::String),
        Field(5, "workingDir", Label::Single, Ty::String),
        Field(
            6,
            "ports",
            Label::Repeated,
            Ty::Message(&CORE_V1_CONTAINER_PORT),
        ),
        Field(7, "env", Label::Repeated, Ty::Message(&CORE_V1_ENV_VAR)),
        Field(
            8,
            "resources",
            Label::Single,
            Ty::Message(&CORE_V1_RESOURCE_REQUIREMENTS),
        ),
        Field(
            9,
            "volumeMounts",
            Label::Repeated,
            Ty::Message(&CORE_V1_VOLUME_MOUNT),
        ),
        Field(
            10,
            "livenessProbe",
            Label::Single,
            Ty::Message(&CORE_V1_PROBE),
        ),
        Field(
            11,
            "readinessProbe",
            Label::Single,
            Ty::Message(&CORE_V1_PROBE),
        ),
        Field(
            12,
            "lifecycle",
            Label::Single,
            Ty::Message(&CORE_V1_LIFECYCLE),
        ),
        Field(13, "terminationMessagePath", Label::Single, Ty::String),
        Field(14, "imagePullPolicy", Label::Single, Ty::String),
        Field(
            15,
            "securityContext",
            Label::Single,
            Ty::Message(&CORE_V1_SECURITY_CONTEXT),
        ),
        Field(16, "stdin", Label::Single, Ty::Bool),
        Field(17, "stdinOnce", Label::Single, Ty::Bool),
        Field(18, "tty", Label::Single, Ty::Bool),
        Field(
            19,
            "envFrom",
            Label::Repeated,
            Ty::Message(&CORE_V1_ENV_FROM_SOURCE),
        ),
        Field(20, "terminationMessagePolicy", Label::Single, Ty::String),
        Field(
            21,
            "volumeDevices",
            Label::Repeated,
            Ty::Message(&CORE_V1_VOLUME_DEVICE),
        ),
        Field(
            22,
            "startupProbe",
            Label::Single,
            Ty::Message(&CORE_V1_PROBE),
        ),
        Field(
            23,
            "resizePolicy",
            Label::Repeated,
            Ty::Message(&CORE_V1_CONTAINER_RESIZE_POLICY),
        ),
        Field(24, "restartPolicy", Label::Single, Ty::String),
        Field(
            25,
            "restartPolicyRules",
            Label::Repeated,
            Ty::Message(&CORE_V1_CONTAINER_RESTART_RULE),
        ),
    ],
};

pub(super) static CORE_V1_CONTAINER_EXTENDED_RESOURCE_REQUEST: Message = Message {
    name: "ContainerExtendedResourceRequest",
    fields: &[
        Field(1, "containerName", Label::Single, Ty::String),
        Field(2, "resourceName", Label::Single, Ty::String),
        Field(3, "requestName", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_CONTAINER_IMAGE: Message = Message {
    name: "ContainerImage",
    fields: &[
        Field(1, "names", Label::Repeated, Ty::String),
        Field(2, "sizeBytes", Label::Single, Ty::Int64),
    ],
};

pub(super) static CORE_V1_CONTAINER_PORT: Message = Message {
    name: "ContainerPort",
    fields: &[
        Field(1, "name", Label::Single, Ty::String),
        Field(2, "hostPort", Label::Single, Ty::Int32),
        Field(3, "containerPort", Label::Single, Ty::Int32),
        Field(4, "protocol", Label::Single, Ty::String),
        Field(5, "hostIP", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_CONTAINER_RESIZE_POLICY: Message = Message {
    name: "ContainerResizePolicy",
    fields: &[
        Field(1, "resourceName", Label::Single, Ty::String),
        Field(2, "restartPolicy", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_CONTAINER_RESTART_RULE: Message = Message {
    name: "ContainerRestartRule",
    fields: &[
        Field(1, "action", Label::Single, Ty::String),
        Field(
            2,
            "exitCodes",
            Label::Single,
            Ty::Message(&CORE_V1_CONTAINER_RESTART_RULE_ON_EXIT_CODES),
        ),
    ],
};

pub(super) static CORE_V1_CONTAINER_RESTART_RULE_ON_EXIT_CODES: Message = Message {
    name: "ContainerRestartRuleOnExitCodes",
    fields: &[
        Field(1, "operator", Label::Single, Ty::String),
        Field(2, "values", Label::Repeated, Ty::Int32),
    ],
};

pub(super) static CORE_V1_CONTAINER_STATE: Message = Message {
    name: "ContainerState",
    fields: &[
        Field(
            1,
            "waiting",
            Label::Single,
            Ty::Message(&CORE_V1_CONTAINER_STATE_WAITING),
        ),
        Field(
            2,
            "running",
            Label::Single,
            Ty::Message(&CORE_V1_CONTAINER_STATE_RUNNING),
        ),
        Field(
            3,
            "terminated",
            Label::Single,
            Ty::Message(&CORE_V1_CONTAINER_STATE_TERMINATED),
        ),
    ],
};

pub(super) static CORE_V1_CONTAINER_STATE_RUNNING: Message = Message {
    name: "ContainerStateRunning",
    fields: &[Field(1, "startedAt", Label::Single, Ty::Time)],
};

pub(super) static CORE_V1_CONTAINER_STATE_TERMINATED: Message = Message {
    name: "ContainerStateTerminated",
    fields: &[
        Field(1, "exitCode", Label::Single, Ty::Int32),
        Field(2, "signal", Label::Single, Ty::Int32),
        Field(3, "reason", Label::Single, Ty::String),
        Field(4, "message", Label::Single, Ty::String),
        Field(5, "startedAt", Label::Single, Ty::Time),
        Field(6, "finishedAt", Label::Single, Ty::Time),
        Field(7, "containerID", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_CONTAINER_STATE_WAITING: Message = Message {
    name: "ContainerStateWaiting",
    fields: &[
        Field(1, "reason", Label::Single, Ty::String),
        Field(2, "message", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_CONTAINER_STATUS: Message = Message {
    name: "ContainerStatus",
    fields: &[
        Field(1, "name", Label::Single, Ty::String),
        Field(
            2,
            "state",
            Label::Single,
            Ty::Message(&CORE_V1_CONTAINER_STATE),
        ),
        Field(
            3,
            "lastState",
            Label::Single,
            Ty::Message(&CORE_V1_CONTAINER_STATE),
        ),
        Field(4, "ready", Label::Single, Ty::Bool),
        Field(5, "restartCount", Label::Single, Ty::Int32),
        Field(6, "image", Label::Single, Ty::String),
        Field(7, "imageID", Label::Single, Ty::String),
        Field(8, "containerID", Label::Single, Ty::String),
        Field(9, "started", Label::Single, Ty::Bool),
        Field(10, "allocatedResources", Label::Map, Ty::Quantity),
        Field(
            11,
            "resources",
            Label::Single,
            Ty::Message(&CORE_V1_RESOURCE_REQUIREMENTS),
        ),
        Field(
            12,
            "volumeMounts",
            Label::Repeated,
            Ty::Message(&CORE_V1_VOLUME_MOUNT_STATUS),
        ),
        Field(
            13,
            "user",
            Label::Single,
            Ty::Message(&CORE_V1_CONTAINER_USER),
        ),
        Field(
            14,
            "allocatedResourcesStatus",
            Label::Repeated,
            Ty::Message(&CORE_V1_RESOURCE_STATUS),
        ),
        Field(15, "stopSignal", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_CONTAINER_USER: Message = Message {
    name: "ContainerUser",
    fields: &[Field(
        1,
        "linux",
        Label::Single,
        Ty::Message(&CORE_V1_LINUX_CONTAINER_USER),
    )],
};

pub(super) static CORE_V1_CSI_VOLUME_SOURCE: Message = Message {
    name: "CSIVolumeSource",
    fields: &[
        Field(1, "driver", Label::Single, Ty::String),
        Field(2, "readOnly", Label::Single, Ty::Bool),
        Field(3, "fsType", Label::Single, Ty::String),
        Field(4, "volumeAttributes", Label::Map, Ty::String),
        Field(
            5,
            "nodePublishSecretRef",
            Label::Single,
            Ty::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE),
        ),
    ],
};

pub(super) static CORE_V1_DAEMON_ENDPOINT: Message = Message {
    name: "DaemonEndpoint",
    fields: &[Field(1, "Port", Label::Single, Ty::Int32)],
};

pub(super) static CORE_V1_DOWNWARD_API_PROJECTION: Message = Message {
    name: "DownwardAPIProjection",
    fields: &[Field(
        1,
        "items",
        Label::Repeated,
        Ty::Message(&CORE_V1_DOWNWARD_API_VOLUME_FILE),
    )],
};

pub(super) static CORE_V1_DOWNWARD_API_VOLUME_FILE: Message = Message {
    name: "DownwardAPIVolumeFile",
    fields: &[
        Field(1, "path", Label::Single, Ty::String),
        Field(
            2,
            "fieldRef",
            Label::Single,
            Ty::Message(&CORE_V1_OBJECT_FIELD_SELECTOR),
        ),
        Field(
            3,
            "resourceFieldRef",
            Label::Single,
            Ty::Message(&CORE_V1_RESOURCE_FIELD_SELECTOR),
        ),
        Field(4, "mode", Label::Single, Ty::Int32),
    ],
};

pub(super) static CORE_V1_DOWNWARD_API_VOLUME_SOURCE: Message = Message {
    name: "DownwardAPIVolumeSource",
    fields: &[
        Field(
            1,
            "items",
            Label::Repeated,
            Ty::Message(&CORE_V1_DOWNWARD_API_VOLUME_FILE),
        ),
        Field(2, "defaultMode", Label::Single, Ty::Int32),
    ],
};

pub(super) static CORE_V1_EMPTY_DIR_VOLUME_SOURCE: Message = Message {
    name: "EmptyDirVolumeSource",
    fields: &[
        Field(1, "medium", Label::Single, Ty::String),
        Field(2, "sizeLimit", Label::Single, Ty::Quantity),
    ],
};

pub(super) static CORE_V1_ENV_FROM_SOURCE: Message = Message {
    name: "EnvFromSource",
    fields: &[
        Field(1, "prefix", Label::Single, Ty::String),
        Field(
            2,
            "configMapRef",
            Label::Single,
            Ty::Message(&CORE_V1_CONFIG_MAP_ENV_SOURCE),
        ),
        Field(
            3,
            "secretRef",
            Label::Single,
            Ty::Message(&CORE_V1_SECRET_ENV_SOURCE),
        ),
    ],
};

pub(super) static CORE_V1_ENV_VAR: Message = Message {
    name: "EnvVar",
    fields: &[
        Field(1, "name", Label::Single, Ty::String),
        Field(2, "value", Label::Single, Ty::String),
        Field(
            3,
            "valueFrom",
            Label::Single,
            Ty::Message(&CORE_V1_ENV_VAR_SOURCE),
        ),
    ],
};

pub(super) static CORE_V1_ENV_VAR_SOURCE: Message = Message {
    name: "EnvVarSource",
    fields: &[
        Field(
            1,
            "fieldRef",
            Label::Single,
            Ty::Message(&CORE_V1_OBJECT_FIELD_SELECTOR),
        ),
        Field(
            2,
            "resourceFieldRef",
            Label::Single,
            Ty::Message(&CORE_V1_RESOURCE_FIELD_SELECTOR),
        ),
        Field(
            3,
            "configMapKeyRef",
            Label::Single,
            Ty::Message(&CORE_V1_CONFIG_MAP_KEY_SELECTOR),
        ),
        Field(
            4,
            "secretKeyRef",
            Label::Single,
            Ty::Message(&CORE_V1_SECRET_KEY_SELECTOR),
        ),
        Field(
            5,
            "fileKeyRef",
            Label::Single,
            Ty::Message(&CORE_V1_FILE_KEY_SELECTOR),
        ),
    ],
};

pub(super) static CORE_V1_EPHEMERAL_CONTAINER: Message = Message {
    name: "EphemeralContainer",
    fields: &[
        Field(
            1,
            "",
            Label::Inline,
            Ty::Message(&CORE_V1_EPHEMERAL_CONTAINER_COMMON),
        ),
        Field(2, "targetContainerName", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_EPHEMERAL_CONTAINER_COMMON: Message = Message {
    name: "EphemeralContainerCommon",
    fields: &[
        Field(1, "name", Label::Single, Ty::String),
        Field(2, "image", Label::Single, Ty::String),
        Field(3, "command", Label::Repeated, Ty::String),
        Field(4, "args", Label::Repeated, Ty::String),
        Field(5, "workingDir", Label::Single, Ty::String),
        Field(
            6,
            "ports",
            Label::Repeated,
            Ty::Message(&CORE_V1_CONTAINER_PORT),
        ),
        Field(7, "env", Label::Repeated, Ty::Message(&CORE_V1_ENV_VAR)),
        Field(
            8,
            "resources",
            Label::Single,
            Ty::Message(&CORE_V1_RESOURCE_REQUIREMENTS),
        ),
        Field(
            9,
            "volumeMounts",
            Label::Repeated,
            Ty::Message(&CORE_V1_VOLUME_MOUNT),
        ),
        Field(
            10,
            "livenessProbe",
            Label::Single,
            Ty::Message(&CORE_V1_PROBE),
        ),
        Field(
            11,
            "readinessProbe",
            Label::Single,
            Ty::Message(&CORE_V1_PROBE),
        ),
        Field(
            12,
            "lifecycle",
            Label::Single,
            Ty::Message(&CORE_V1_LIFECYCLE),
        ),
        Field(13, "terminationMessagePath", Label::Single, Ty::String),
        Field(14, "imagePullPolicy", Label::Single, Ty::String),
        Field(
            15,
            "securityContext",
            Label::Single,
            Ty::Message(&CORE_V1_SECURITY_CONTEXT),
        ),
        Field(16, "stdin", Label::Single, Ty::Bool),
        Field(17, "stdinOnce", Label::Single, Ty::Bool),
        Field(18, "tty", Label::Single, Ty::Bool),
        Field(
            19,
            "envFrom",
            Label::Repeated,
            Ty::Message(&CORE_V1_ENV_FROM_SOURCE),
        ),
        Field(20, "terminationMessagePolicy", Label::Single, Ty::String),
        Field(
            21,
            "volumeDevices",
            Label::Repeated,
            Ty::Message(&CORE_V1_VOLUME_DEVICE),
        ),
        Field(
            22,
            "startupProbe",
            Label::Single,
            Ty::Message(&CORE_V1_PROBE),
        ),
        Field(
            23,
            "resizePolicy",
            Label::Repeated,
            Ty::Message(&CORE_V1_CONTAINER_RESIZE_POLICY),
        ),
        Field(24, "restartPolicy", Label::Single, Ty::String),
        Field(
            25,
            "restartPolicyRules",
            Label::Repeated,
            Ty::Message(&CORE_V1_CONTAINER_RESTART_RULE),
        ),
    ],
};

pub(super) static CORE_V1_EPHEMERAL_VOLUME_SOURCE: Message = Message {
    name: "EphemeralVolumeSource",
    fields: &[Field(
        1,
        "volumeClaimTemplate",
        Label::Single,
        Ty::Message(&CORE_V1_PERSISTENT_VOLUME_CLAIM_TEMPLATE),
    )],
};

pub(super) static CORE_V1_EXEC_ACTION: Message = Message {
    name: "ExecAction",
    fields: &[Field(1, "command", Label::Repeated, Ty::String)],
};

pub(super) static CORE_V1_FC_VOLUME_SOURCE: Message = Message {
    name: "FcVolumeSource",
    fields: &[
        Field(1, "targetWWNs", Label::Repeated, Ty::String),
        Field(2, "lun", Label::Single, Ty::Int32),
        Field(3, "fsType", Label::Single, Ty::String),
        Field(4, "readOnly", Label::Single, Ty::Bool),
        Field(5, "wwids", Label::Repeated, Ty::String),
    ],
};

pub(super) static CORE_V1_FILE_KEY_SELECTOR: Message = Message {
    name: "FileKeySelector",
    fields: &[
        Field(1, "volumeName", Label::Single, Ty::String),
        Field(2, "path", Label::Single, Ty::String),
        Field(3, "key", Label::Single, Ty::String),
        Field(4, "optional", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_FLEX_VOLUME_SOURCE: Message = Message {
    name: "FlexVolumeSource",
    fields: &[
        Field(1, "driver", Label::Single, Ty::String),
        Field(2, "fsType", Label::Single, Ty::String),
        Field(
            3,
            "secretRef",
            Label::Single,
            Ty::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE),
        ),
        Field(4, "readOnly", Label::Single, Ty::Bool),
        Field(5, "options", Label::Map, Ty::String),
    ],
};

pub(super) static CORE_V1_FLOCKER_VOLUME_SOURCE: Message = Message {
    name: "FlockerVolumeSource",
    fields: &[
        Field(1, "datasetName", Label::Single, Ty::String),
        Field(2, "datasetUUID", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_GCE_PERSISTENT_DISK_VOLUME_SOURCE: Message = Message {
    name: "GcePersistentDiskVolumeSource",
    fields: &[
        Field(1, "pdName", Label::Single, Ty::String),
        Field(2, "fsType", Label::Single, Ty::String),
        Field(3, "partition", Label::Single, Ty::Int32),
        Field(4, "readOnly", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_GIT_REPO_VOLUME_SOURCE: Message = Message {
    name: "GitRepoVolumeSource",
    fields: &[
        Field(1, "repository", Label::Single, Ty::String),
        Field(2, "revision", Label::Single, Ty::String),
        Field(3, "directory", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_GLUSTERFS_VOLUME_SOURCE: Message = Message {
    name: "GlusterfsVolumeSource",
    fields: &[
        Field(1, "endpoints", Label::Single, Ty::String),
        Field(2, "path", Label::Single, Ty::String),
        Field(3, "readOnly", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_GRPC_ACTION: Message = Message {
    name: "GrpcAction",
    fields: &[
        Field(1, "port", Label::Single, Ty::Int32),
        Field(2, "service", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_HOST_ALIAS: Message = Message {
    name: "HostAlias",
    fields: &[
        Field(1, "ip", Label::Single, Ty::String),
        Field(2, "hostnames", Label::Repeated, Ty::String),
    ],
};

pub(super) static CORE_V1_HOST_IP: Message = Message {
    name: "HostIp",
    fields: &[Field(1, "ip", Label::Single, Ty::String)],
};

pub(super) static CORE_V1_HOST_PATH_VOLUME_SOURCE: Message = Message {
    name: "HostPathVolumeSource",
    fields: &[
        Field(1, "path", Label::Single, Ty::String),
        Field(2, "type", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_HTTP_GET_ACTION: Message = Message {
    name: "HttpGetAction",
    fields: &[
        Field(1, "path", Label::Single, Ty::String),
        Field(2, "port", Label::Single, Ty::IntOrString),
        Field(3, "host", Label::Single, Ty::String),
        Field(4, "scheme", Label::Single, Ty::String),
        Field(
            5,
            "httpHeaders",
            Label::Repeated,
            Ty::Message(&CORE_V1_HTTP_HEADER),
        ),
    ],
};

pub(super) static CORE_V1_HTTP_HEADER: Message = Message {
    name: "HttpHeader",
    fields: &[
        Field(1, "name", Label::Single, Ty::String),
        Field(2, "value", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_IMAGE_VOLUME_SOURCE: Message = Message {
    name: "ImageVolumeSource",
    fields: &[
        Field(1, "reference", Label::Single, Ty::String),
        Field(2, "pullPolicy", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_ISCSI_VOLUME_SOURCE: Message = Message {
    name: "IscsiVolumeSource",
    fields: &[
        Field(1, "targetPortal", Label::Single, Ty::String),
        Field(2, "iqn", Label::Single, Ty::String),
        Field(3, "lun", Label::Single, Ty::Int32),
        Field(4, "iscsiInterface", Label::Single, Ty::String),
        Field(5, "fsType", Label::Single, Ty::String),
        Field(6, "readOnly", Label::Single, Ty::Bool),
        Field(7, "portals", Label::Repeated, Ty::String),
        Field(8, "chapAuthDiscovery", Label::Single, Ty::Bool),
        Field(
            10,
            "secretRef",
            Label::Single,
            Ty::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE),
        ),
        Field(11, "chapAuthSession", Label::Single, Ty::Bool),
        Field(12, "initiatorName", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_KEY_TO_PATH: Message = Message {
    name: "KeyToPath",
    fields: &[
        Field(1, "key", Label::Single, Ty::String),
        Field(2, "path", Label::Single, Ty::String),
        Field(3, "mode", Label::Single, Ty::Int32),
    ],
};

pub(super) static CORE_V1_LIFECYCLE: Message = Message {
    name: "Lifecycle",
    fields: &[
        Field(
            1,
            "postStart",
            Label::Single,
            Ty::Message(&CORE_V1_LIFECYCLE_HANDLER),
        ),
        Field(
            2,
            "preStop",
            Label::Single,
            Ty::Message(&CORE_V1_LIFECYCLE_HANDLER),
        ),
        Field(3, "stopSignal", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_LIFECYCLE_HANDLER: Message = Message {
    name: "LifecycleHandler",
    fields: &[
        Field(1, "exec", Label::Single, Ty::Message(&CORE_V1_EXEC_ACTION)),
        Field(
            2,
            "httpGet",
            Label::Single,
            Ty::Message(&CORE_V1_HTTP_GET_ACTION),
        ),
        Field(
            3,
            "tcpSocket",
            Label::Single,
            Ty::Message(&CORE_V1_TCP_SOCKET_ACTION),
        ),
        Field(
            4,
            "sleep",
            Label::Single,
            Ty::Message(&CORE_V1_SLEEP_ACTION),
        ),
    ],
};

pub(super) static CORE_V1_LINUX_CONTAINER_USER: Message = Message {
    name: "LinuxContainerUser",
    fields: &[
        Field(1, "uid", Label::Single, Ty::Int64),
        Field(2, "gid", Label::Single, Ty::Int64),
        Field(3, "supplementalGroups", Label::Repeated, Ty::Int64),
    ],
};

pub(super) static CORE_V1_LOCAL_OBJECT_REFERENCE: Message = Message {
    name: "LocalObjectReference",
    fields: &[Field(1, "name", Label::Single, Ty::String)],
};

pub(super) static CORE_V1_NAMESPACE: Message = Message {
    name: "Namespace",
    fields: &[
        Field(
            1,
            "metadata",
            Label::Single,
            Ty::Message(&META_V1_OBJECT_META),
        ),
        Field(
            2,
            "spec",
            Label::Single,
            Ty::Message(&CORE_V1_NAMESPACE_SPEC),
        ),
        Field(
            3,
            "status",
            Label::Single,
            Ty::Message(&CORE_V1_NAMESPACE_STATUS),
        ),
    ],
};

pub(super) static CORE_V1_NAMESPACE_CONDITION: Message = Message {
    name: "NamespaceCondition",
    fields: &[
        Field(1, "type", Label::Single, Ty::String),
        Field(2, "status", Label::Single, Ty::String),
        Field(4, "lastTransitionTime", Label::Single, Ty::Time),
        Field(5, "reason", Label::Single, Ty::String),
        Field(6, "message", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_NAMESPACE_SPEC: Message = Message {
    name: "NamespaceSpec",
    fields: &[Field(1, "finalizers", Label::Repeated, Ty::String)],
};

pub(super) static CORE_V1_NAMESPACE_STATUS: Message = Message {
    name: "NamespaceStatus",
    fields: &[
        Field(1, "phase", Label::Single, Ty::String),
        Field(
            2,
            "conditions",
            Label::Repeated,
            Ty::Message(&CORE_V1_NAMESPACE_CONDITION),
        ),
    ],
};

pub(super) static CORE_V1_NFS_VOLUME_SOURCE: Message = Message {
    name: "NfsVolumeSource",
    fields: &[
        Field(1, "server", Label::Single, Ty::String),
        Field(2, "path", Label::Single, Ty::String),
        Field(3, "readOnly", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_NODE: Message = Message {
    name: "Node",
    fields: &[
        Field(
            1,
            "metadata",
            Label::Single,
            Ty::Message(&META_V1_OBJECT_META),
        ),
        Field(2, "spec", Label::Single, Ty::Message(&CORE_V1_NODE_SPEC)),
        Field(
            3,
            "status",
            Label::Single,
            Ty::Message(&CORE_V1_NODE_STATUS),
        ),
    ],
};

pub(super) static CORE_V1_NODE_ADDRESS: Message = Message {
    name: "NodeAddress",
    fields: &[
        Field(1, "type", Label::Single, Ty::String),
        Field(2, "address", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_NODE_AFFINITY: Message = Message {
    name: "NodeAffinity",
    fields: &[
        Field(
            1,
            "requiredDuringSchedulingIgnoredDuringExecution",
            Label::Single,
            Ty::Message(&CORE_V1_NODE_SELECTOR),
        ),
        Field(
            2,
            "preferredDuringSchedulingIgnoredDuringExecution",
            Label::Repeated,
            Ty::Message(&CORE_V1_PREFERRED_SCHEDULING_TERM),
        ),
    ],
};

pub(super) static CORE_V1_NODE_CONDITION: Message = Message {
    name: "NodeCondition",
    fields: &[
        Field(1, "type", Label::Single, Ty::String),
        Field(2, "status", Label::Single, Ty::String),
        Field(3, "lastHeartbeatTime", Label::Single, Ty::Time),
        Field(4, "lastTransitionTime", Label::Single, Ty::Time),
        Field(5, "reason", Label::Single, Ty::String),
        Field(6, "message", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_NODE_CONFIG_SOURCE: Message = Message {
    name: "NodeConfigSource",
    fields: &[Field(
        2,
        "configMap",
        Label::Single,
        Ty::Message(&CORE_V1_CONFIG_MAP_NODE_CONFIG_SOURCE),
    )],
};

pub(super) static CORE_V1_NODE_CONFIG_STATUS: Message = Message {
    name: "NodeConfigStatus",
    fields: &[
        Field(
            1,
            "assigned",
            Label::Single,
            Ty::Message(&CORE_V1_NODE_CONFIG_SOURCE),
        ),
        Field(
            2,
            "active",
            Label::Single,
            Ty::Message(&CORE_V1_NODE_CONFIG_SOURCE),
        ),
        Field(
            3,
            "lastKnownGood",
            Label::Single,
            Ty::Message(&CORE_V1_NODE_CONFIG_SOURCE),
        ),
        Field(4, "error", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_NODE_DAEMON_ENDPOINTS: Message = Message {
    name: "NodeDaemonEndpoints",
    fields: &[Field(
        1,
        "kubeletEndpoint",
        Label::Single,
        Ty::Message(&CORE_V1_DAEMON_ENDPOINT),
    )],
};

pub(super) static CORE_V1_NODE_FEATURES: Message = Message {
    name: "NodeFeatures",
    fields: &[Field(
        1,
        "supplementalGroupsPolicy",
        Label::Single,
        Ty::Bool,
    )],
};

pub(super) static CORE_V1_NODE_RUNTIME_HANDLER: Message = Message {
    name: "NodeRuntimeHandler",
    fields: &[
        Field(1, "name", Label::Single, Ty::String),
        Field(
            2,
            "features",
            Label::Single,
            Ty::Message(&CORE_V1_NODE_RUNTIME_HANDLER_FEATURES),
        ),
    ],
};

pub(super) static CORE_V1_NODE_RUNTIME_HANDLER_FEATURES: Message = Message {
    name: "NodeRuntimeHandlerFeatures",
    fields: &[
        Field(1, "recursiveReadOnlyMounts", Label::Single, Ty::Bool),
        Field(2, "userNamespaces", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_NODE_SELECTOR: Message = Message {
    name: "NodeSelector",
    fields: &[Field(
        1,
        "nodeSelectorTerms",
        Label::Repeated,
        Ty::Message(&CORE_V1_NODE_SELECTOR_TERM),
    )],
};

pub(super) static CORE_V1_NODE_SELECTOR_REQUIREMENT: Message = Message {
    name: "NodeSelectorRequirement",
    fields: &[
        Field(1, "key", Label::Single, Ty::String),
        Field(2, "operator", Label::Single, Ty::String),
        Field(3, "values", Label::Repeated, Ty::String),
    ],
};

pub(super) static CORE_V1_NODE_SELECTOR_TERM: Message = Message {
    name: "NodeSelectorTerm",
    fields: &[
        Field(
            1,
            "matchExpressions",
            Label::Repeated,
            Ty::Message(&CORE_V1_NODE_SELECTOR_REQUIREMENT),
        ),
        Field(
            2,
            "matchFields",
            Label::Repeated,
            Ty::Message(&CORE_V1_NODE_SELECTOR_REQUIREMENT),
        ),
    ],
};

pub(super) static CORE_V1_NODE_SPEC: Message = Message {
    name: "NodeSpec",
    fields: &[
        Field(1, "podCIDR", Label::Single, Ty::String),
        Field(2, "externalID", Label::Single, Ty::String),
        Field(3, "providerID", Label::Single, Ty::String),
        Field(4, "unschedulable", Label::Single, Ty::Bool),
        Field(5, "taints", Label::Repeated, Ty::Message(&CORE_V1_TAINT)),
        Field(
            6,
            "configSource",
            Label::Single,
            Ty::Message(&CORE_V1_NODE_CONFIG_SOURCE),
        ),
        Field(7, "podCIDRs", Label::Repeated, Ty::String),
    ],
};

pub(super) static CORE_V1_NODE_STATUS: Message = Message {
    name: "NodeStatus",
    fields: &[
        Field(1, "capacity", Label::Map, Ty::Quantity),
        Field(2, "allocatable", Label::Map, Ty::Quantity),
        Field(3, "phase", Label::Single, Ty::String),
        Field(
            4,
            "conditions",
            Label::Repeated,
            Ty::Message(&CORE_V1_NODE_CONDITION),
        ),
        Field(
            5,
            "addresses",
            Label::Repeated,
            Ty::Message(&CORE_V1_NODE_ADDRESS),
        ),
        Field(
            6,
            "daemonEndpoints",
            Label::Single,
            Ty::Message(&CORE_V1_NODE_DAEMON_ENDPOINTS),
        ),
        Field(
            7,
            "nodeInfo",
            Label::Single,
            Ty::Message(&CORE_V1_NODE_SYSTEM_INFO),
        ),
        Field(
            8,
            "images",
            Label::Repeated,
            Ty::Message(&CORE_V1_CONTAINER_IMAGE),
        ),
        Field(9, "volumesInUse", Label::Repeated, Ty::String),
        Field(
            10,
            "volumesAttached",
            Label::Repeated,
            Ty::Message(&CORE_V1_ATTACHED_VOLUME),
        ),
        Field(
            11,
            "config",
            Label::Single,
            Ty::Message(&CORE_V1_NODE_CONFIG_STATUS),
        ),
        Field(
            12,
            "runtimeHandlers",
            Label::Repeated,
            Ty::Message(&CORE_V1_NODE_RUNTIME_HANDLER),
        ),
        Field(
            13,
            "features",
            Label::Single,
            Ty::Message(&CORE_V1_NODE_FEATURES),
        ),
        Field(14, "declaredFeatures", Label::Repeated, Ty::String),
    ],
};

pub(super) static CORE_V1_NODE_SWAP_STATUS: Message = Message {
    name: "NodeSwapStatus",
    fields: &[Field(1, "capacity", Label::Single, Ty::Int64)],
};

pub(super) static CORE_V1_NODE_SYSTEM_INFO: Message = Message {
    name: "NodeSystemInfo",
    fields: &[
        Field(1, "machineID", Label::Single, Ty::String),
        Field(2, "systemUUID", Label::Single, Ty::String),
        Field(3, "bootID", Label::Single, Ty::String),
        Field(4, "kernelVersion", Label::Single, Ty::String),
        Field(5, "osImage", Label::Single, Ty::String),
        Field(6, "containerRuntimeVersion", Label::Single, Ty::String),
        Field(7, "kubeletVersion", Label::Single, Ty::String),
        Field(8, "kubeProxyVersion", Label::Single, Ty::String),
        Field(9, "operatingSystem", Label::Single, Ty::String),
        Field(10, "architecture", Label::Single, Ty::String),
        Field(
            11,
            "swap",
            Label::Single,
            Ty::Message(&CORE_V1_NODE_SWAP_STATUS),
        ),
    ],
};

pub(super) static CORE_V1_OBJECT_FIELD_SELECTOR: Message = Message {
    name: "ObjectFieldSelector",
    fields: &[
        Field(1, "apiVersion", Label::Single, Ty::String),
        Field(2, "fieldPath", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_OBJECT_REFERENCE: Message = Message {
    name: "ObjectReference",
    fields: &[
        Field(1, "kind", Label::Single, Ty::String),
        Field(2, "namespace", Label::Single, Ty::String),
        Field(3, "name", Label::Single, Ty::String),
        Field(4, "uid", Label::Single, Ty::String),
        Field(5, "apiVersion", Label::Single, Ty::String),
        Field(6, "resourceVersion", Label::Single, Ty::String),
        Field(7, "fieldPath", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_PERSISTENT_VOLUME_CLAIM_SPEC: Message = Message {
    name: "PersistentVolumeClaimSpec",
    fields: &[
        Field(1, "accessModes", Label::Repeated, Ty::String),
        Field(
            2,
            "resources",
            Label::Single,
            Ty::Message(&CORE_V1_VOLUME_RESOURCE_REQUIREMENTS),
        ),
        Field(3, "volumeName", Label::Single, Ty::String),
        Field(
            4,
            "selector",
            Label::Single,
            Ty::Message(&META_V1_LABEL_SELECTOR),
        ),
        Field(5, "storageClassName", Label::Single, Ty::String),
        Field(6, "volumeMode", Label::Single, Ty::String),
        Field(
            7,
            "dataSource",
            Label::Single,
            Ty::Message(&CORE_V1_TYPED_LOCAL_OBJECT_REFERENCE),
        ),
        Field(
            8,
            "dataSourceRef",
            Label::Single,
            Ty::Message(&CORE_V1_TYPED_OBJECT_REFERENCE),
        ),
        Field(9, "volumeAttributesClassName", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_PERSISTENT_VOLUME_CLAIM_TEMPLATE: Message = Message {
    name: "PersistentVolumeClaimTemplate",
    fields: &[
        Field(
            1,
            "metadata",
            Label::Single,
            Ty::Message(&META_V1_OBJECT_META),
        ),
        Field(
            2,
            "spec",
            Label::Single,
            Ty::Message(&CORE_V1_PERSISTENT_VOLUME_CLAIM_SPEC),
        ),
    ],
};

pub(super) static CORE_V1_PERSISTENT_VOLUME_CLAIM_VOLUME_SOURCE: Message = Message {
    name: "PersistentVolumeClaimVolumeSource",
    fields: &[
        Field(1, "claimName", Label::Single, Ty::String),
        Field(2, "readOnly", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_PHOTON_PERSISTENT_DISK_VOLUME_SOURCE: Message = Message {
    name: "PhotonPersistentDiskVolumeSource",
    fields: &[
        Field(1, "pdID", Label::Single, Ty::String),
        Field(2, "fsType", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_POD: Message = Message {
    name: "Pod",
    fields: &[
        Field(
            1,
            "metadata",
            Label::Single,
            Ty::Message(&META_V1_OBJECT_META),
        ),
        Field(2, "spec", Label::Single, Ty::Message(&CORE_V1_POD_SPEC)),
        Field(3, "status", Label::Single, Ty::Message(&CORE_V1_POD_STATUS)),
    ],
};

pub(super) static CORE_V1_POD_AFFINITY: Message = Message {
    name: "PodAffinity",
    fields: &[
        Field(
            1,
            "requiredDuringSchedulingIgnoredDuringExecution",
            Label::Repeated,
            Ty::Message(&CORE_V1_POD_AFFINITY_TERM),
        ),
        Field(
            2,
            "preferredDuringSchedulingIgnoredDuringExecution",
            Label::Repeated,
            Ty::Message(&CORE_V1_WEIGHTED_POD_AFFINITY_TERM),
        ),
    ],
};

pub(super) static CORE_V1_POD_AFFINITY_TERM: Message = Message {
    name: "PodAffinityTerm",
    fields: &[
        Field(
            1,
            "labelSelector",
            Label::Single,
            Ty::Message(&META_V1_LABEL_SELECTOR),
        ),
        Field(2, "namespaces", Label::Repeated, Ty::String),
        Field(3, "topologyKey", Label::Single, Ty::String),
        Field(
            4,
            "namespaceSelector",
            Label::Single,
            Ty::Message(&META_V1_LABEL_SELECTOR),
        ),
        Field(5, "matchLabelKeys", Label::Repeated, Ty::String),
        Field(6, "mismatchLabelKeys", Label::Repeated, Ty::String),
    ],
};

pub(super) static CORE_V1_POD_ANTI_AFFINITY: Message = Message {
    name: "PodAntiAffinity",
    fields: &[
        Field(
            1,
            "requiredDuringSchedulingIgnoredDuringExecution",
            Label::Repeated,
            Ty::Message(&CORE_V1_POD_AFFINITY_TERM),
        ),
        Field(
            2,
            "preferredDuringSchedulingIgnoredDuringExecution",
            Label::Repeated,
            Ty::Message(&CORE_V1_WEIGHTED_POD_AFFINITY_TERM),
        ),
    ],
};

pub(super) static CORE_V1_POD_CERTIFICATE_PROJECTION: Message = Message {
    name: "PodCertificateProjection",
    fields: &[
        Field(1, "signerName", Label::Single, Ty::String),
        Field(2, "keyType", Label::Single, Ty::String),
        Field(3, "maxExpirationSeconds", Label::Single, Ty::Int32),
        Field(4, "credentialBundlePath", Label::Single, Ty::String),
        Field(5, "keyPath", Label::Single, Ty::String),
        Field(6, "certificateChainPath", Label::Single, Ty::String),
        Field(7, "userAnnotations", Label::Map, Ty::String),
    ],
};

pub(super) static CORE_V1_POD_CONDITION: Message = Message {
    name: "PodCondition",
    fields: &[
        Field(1, "type", Label::Single, Ty::String),
        Field(2, "status", Label::Single, Ty::String),
        Field(3, "lastProbeTime", Label::Single, Ty::Time),
        Field(4, "lastTransitionTime", Label::Single, Ty::Time),
        Field(5, "reason", Label::Single, Ty::String),
        Field(6, "message", Label::Single, Ty::String),
        Field(7, "observedGeneration", Label::Single, Ty::Int64),
    ],
};

pub(super) static CORE_V1_POD_DNS_CONFIG: Message = Message {
    name: "PodDnsConfig",
    fields: &[
        Field(1, "nameservers", Label::Repeated, Ty::String),
        Field(2, "searches", Label::Repeated, Ty::String),
        Field(
            3,
            "options",
            Label::Repeated,
            Ty::Message(&CORE_V1_POD_DNS_CONFIG_OPTION),
        ),
    ],
};

pub(super) static CORE_V1_POD_DNS_CONFIG_OPTION: Message = Message {
    name: "PodDnsConfigOption",
    fields: &[
        Field(1, "name", Label::Single, Ty::String),
        Field(2, "value", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_POD_EXTENDED_RESOURCE_CLAIM_STATUS: Message = Message {
    name: "PodExtendedResourceClaimStatus",
    fields: &[
        Field(
            1,
            "requestMappings",
            Label::Repeated,
            Ty::Message(&CORE_V1_CONTAINER_EXTENDED_RESOURCE_REQUEST),
        ),
        Field(2, "resourceClaimName", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_POD_IP: Message = Message {
    name: "PodIp",
    fields: &[Field(1, "ip", Label::Single, Ty::String)],
};

pub(super) static CORE_V1_POD_OS: Message = Message {
    name: "PodOs",
    fields: &[Field(1, "name", Label::Single, Ty::String)],
};

pub(super) static CORE_V1_POD_READINESS_GATE: Message = Message {
    name: "PodReadinessGate",
    fields: &[Field(1, "conditionType", Label::Single, Ty::String)],
};

pub(super) static CORE_V1_POD_RESOURCE_CLAIM: Message = Message {
    name: "PodResourceClaim",
    fields: &[
        Field(1, "name", Label::Single, Ty::String),
        Field(3, "resourceClaimName", Label::Single, Ty::String),
        Field(4, "resourceClaimTemplateName", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_POD_RESOURCE_CLAIM_STATUS: Message = Message {
    name: "PodResourceClaimStatus",
    fields: &[
        Field(1, "name", Label::Single, Ty::String),
        Field(2, "resourceClaimName", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_POD_SCHEDULING_GATE: Message = Message {
    name: "PodSchedulingGate",
    fields: &[Field(1, "name", Label::Single, Ty::String)],
};

pub(super) static CORE_V1_POD_SECURITY_CONTEXT: Message = Message {
    name: "PodSecurityContext",
    fields: &[
        Field(
            1,
            "seLinuxOptions",
            Label::Single,
            Ty::Message(&CORE_V1_SE_LINUX_OPTIONS),
        ),
        Field(2, "runAsUser", Label::Single, Ty::Int64),
        Field(3, "runAsNonRoot", Label::Single, Ty::Bool),
        Field(4, "supplementalGroups", Label::Repeated, Ty::Int64),
        Field(5, "fsGroup", Label::Single, Ty::Int64),
        Field(6, "runAsGroup", Label::Single, Ty::Int64),
        Field(7, "sysctls", Label::Repeated, Ty::Message(&CORE_V1_SYSCTL)),
        Field(
            8,
            "windowsOptions",
            Label::Single,
            Ty::Message(&CORE_V1_WINDOWS_SECURITY_CONTEXT_OPTIONS),
        ),
        Field(9, "fsGroupChangePolicy", Label::Single, Ty::String),
        Field(
            10,
            "seccompProfile",
            Label::Single,
            Ty::Message(&CORE_V1_SECCOMP_PROFILE),
        ),
        Field(
            11,
            "appArmorProfile",
            Label::Single,
            Ty::Message(&CORE_V1_APP_ARMOR_PROFILE),
        ),
        Field(12, "supplementalGroupsPolicy", Label::Single, Ty::String),
        Field(13, "seLinuxChangePolicy", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_POD_SPEC: Message = Message {
    name: "PodSpec",
    fields: &[
        Field(1, "volumes", Label::Repeated, Ty::Message(&CORE_V1_VOLUME)),
        Field(
            2,
            "containers",
            Label::Repeated,
            Ty::Message(&CORE_V1_CONTAINER),
        ),
        Field(3, "restartPolicy", Label::Single, Ty::String),
        Field(4, "terminationGracePeriodSeconds", Label::Single, Ty::Int64),
        Field(5, "activeDeadlineSeconds", Label::Single, Ty::Int64),
        Field(6, "dnsPolicy", Label::Single, Ty::String),
        Field(7, "nodeSelector", Label::Map, Ty::String),
        Field(8, "serviceAccountName", Label::Single, Ty::String),
        Field(9, "serviceAccount", Label::Single, Ty::String),
        Field(10, "nodeName", Label::Single, Ty::String),
        Field(11, "hostNetwork", Label::Single, Ty::Bool),
        Field(12, "hostPID", Label::Single, Ty::Bool),
        Field(13, "hostIPC", Label::Single, Ty::Bool),
        Field(
            14,
            "securityContext",
            Label::Single,
            Ty::Message(&CORE_V1_POD_SECURITY_CONTEXT),
        ),
        Field(
            15,
            "imagePullSecrets",
            Label::Repeated,
            Ty::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE),
        ),
        Field(16, "hostname", Label::Single, Ty::String),
        Field(17, "subdomain", Label::Single, Ty::String),
        Field(
            18,
            "affinity",
            Label::Single,
            Ty::Message(&CORE_V1_AFFINITY),
        ),
        Field(19, "schedulerName", Label::Single, Ty::String),
        Field(
            20,
            "initContainers",
            Label::Repeated,
            Ty::Message(&CORE_V1_CONTAINER),
        ),
        Field(21, "automountServiceAccountToken", Label::Single, Ty::Bool),
        Field(
            22,
            "tolerations",
            Label::Repeated,
            Ty::Message(&CORE_V1_TOLERATION),
        ),
        Field(
            23,
            "hostAliases",
            Label::Repeated,
            Ty::Message(&CORE_V1_HOST_ALIAS),
        ),
        Field(24, "priorityClassName", Label::Single, Ty::String),
        Field(25, "priority", Label::Single, Ty::Int32),
        Field(
            26,
            "dnsConfig",
            Label::Single,
            Ty::Message(&CORE_V1_POD_DNS_CONFIG),
        ),
        Field(27, "shareProcessNamespace", Label::Single, Ty::Bool),
        Field(
            28,
            "readinessGates",
            Label::Repeated,
            Ty::Message(&CORE_V1_POD_READINESS_GATE),
        ),
        Field(29, "runtimeClassName", Label::Single, Ty::String),
        Field(30, "enableServiceLinks", Label::Single, Ty::Bool),
        Field(31, "preemptionPolicy", Label::Single, Ty::String),
        Field(32, "overhead", Label::Map, Ty::Quantity),
        Field(
            33,
            "topologySpreadConstraints",
            Label::Repeated,
            Ty::Message(&CORE_V1_TOPOLOGY_SPREAD_CONSTRAINT),
        ),
        Field(
            34,
            "ephemeralContainers",
            Label::Repeated,
            Ty::Message(&CORE_V1_EPHEMERAL_CONTAINER),
        ),
        Field(35, "setHostnameAsFQDN", Label::Single, Ty::Bool),
        Field(36, "os", Label::Single, Ty::Message(&CORE_V1_POD_OS)),
        Field(37, "hostUsers", Label::Single, Ty::Bool),
        Field(
            38,
            "schedulingGates",
            Label::Repeated,
            Ty::Message(&CORE_V1_POD_SCHEDULING_GATE),
        ),
        Field(
            39,
            "resourceClaims",
            Label::Repeated,
            Ty::Message(&CORE_V1_POD_RESOURCE_CLAIM),
        ),
        Field(
            40,
            "resources",
            Label::Single,
            Ty::Message(&CORE_V1_RESOURCE_REQUIREMENTS),
        ),
        Field(41, "hostnameOverride", Label::Single, Ty::String),
        Field(
            42,
            "workloadRef",
            Label::Single,
            Ty::Message(&CORE_V1_WORKLOAD_REFERENCE),
        ),
    ],
};

pub(super) static CORE_V1_POD_STATUS: Message = Message {
    name: "PodStatus",
    fields: &[
        Field(1, "phase", Label::Single, Ty::String),
        Field(
            2,
            "conditions",
            Label::Repeated,
            Ty::Message(&CORE_V1_POD_CONDITION),
        ),
        Field(3, "message", Label::Single, Ty::String),
        Field(4, "reason", Label::Single, Ty::String),
        Field(5, "hostIP", Label::Single, Ty::String),
        Field(6, "podIP", Label::Single, Ty::String),
        Field(7, "startTime", Label::Single, Ty::Time),
        Field(
            8,
            "containerStatuses",
            Label::Repeated,
            Ty::Message(&CORE_V1_CONTAINER_STATUS),
        ),
        Field(9, "qosClass", Label::Single, Ty::String),
        Field(
            10,
            "initContainerStatuses",
            Label::Repeated,
            Ty::Message(&CORE_V1_CONTAINER_STATUS),
        ),
        Field(11, "nominatedNodeName", Label::Single, Ty::String),
        Field(12, "podIPs", Label::Repeated, Ty::Message(&CORE_V1_POD_IP)),
        Field(
            13,
            "ephemeralContainerStatuses",
            Label::Repeated,
            Ty::Message(&CORE_V1_CONTAINER_STATUS),
        ),
        Field(14, "resize", Label::Single, Ty::String),
        Field(
            15,
            "resourceClaimStatuses",
            Label::Repeated,
            Ty::Message(&CORE_V1_POD_RESOURCE_CLAIM_STATUS),
        ),
        Field(
            16,
            "hostIPs",
            Label::Repeated,
            Ty::Message(&CORE_V1_HOST_IP),
        ),
        Field(17, "observedGeneration", Label::Single, Ty::Int64),
        Field(
            18,
            "extendedResourceClaimStatus",
            Label::Single,
            Ty::Message(&CORE_V1_POD_EXTENDED_RESOURCE_CLAIM_STATUS),
        ),
        Field(19, "allocatedResources", Label::Map, Ty::Quantity),
        Field(
            20,
            "resources",
            Label::Single,
            Ty::Message(&CORE_V1_RESOURCE_REQUIREMENTS),
        ),
    ],
};

pub(super) static CORE_V1_POD_TEMPLATE_SPEC: Message = Message {
    name: "PodTemplateSpec",
    fields: &[
        Field(
            1,
            "metadata",
            Label::Single,
            Ty::Message(&META_V1_OBJECT_META),
        ),
        Field(2, "spec", Label::Single, Ty::Message(&CORE_V1_POD_SPEC)),
    ],
};

pub(super) static CORE_V1_PORTWORX_VOLUME_SOURCE: Message = Message {
    name: "PortworxVolumeSource",
    fields: &[
        Field(1, "volumeID", Label::Single, Ty::String),
        Field(2, "fsType", Label::Single, Ty::String),
        Field(3, "readOnly", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_PREFERRED_SCHEDULING_TERM: Message = Message {
    name: "PreferredSchedulingTerm",
    fields: &[
        Field(1, "weight", Label::Single, Ty::Int32),
        Field(
            2,
            "preference",
            Label::Single,
            Ty::Message(&CORE_V1_NODE_SELECTOR_TERM),
        ),
    ],
};

pub(super) static CORE_V1_PROBE: Message = Message {
    name: "Probe",
    fields: &[
        Field(1, "", Label::Inline, Ty::Message(&CORE_V1_PROBE_HANDLER)),
        Field(2, "initialDelaySeconds", Label::Single, Ty::Int32),
        Field(3, "timeoutSeconds", Label::Single, Ty::Int32),
        Field(4, "periodSeconds", Label::Single, Ty::Int32),
        Field(5, "successThreshold", Label::Single, Ty::Int32),
        Field(6, "failureThreshold", Label::Single, Ty::Int32),
        Field(7, "terminationGracePeriodSeconds", Label::Single, Ty::Int64),
    ],
};

pub(super) static CORE_V1_PROBE_HANDLER: Message = Message {
    name: "ProbeHandler",
    fields: &[
        Field(1, "exec", Label::Single, Ty::Message(&CORE_V1_EXEC_ACTION)),
        Field(
            2,
            "httpGet",
            Label::Single,
            Ty::Message(&CORE_V1_HTTP_GET_ACTION),
        ),
        Field(
            3,
            "tcpSocket",
            Label::Single,
            Ty::Message(&CORE_V1_TCP_SOCKET_ACTION),
        ),
        Field(4, "grpc", Label::Single, Ty::Message(&CORE_V1_GRPC_ACTION)),
    ],
};

pub(super) static CORE_V1_PROJECTED_VOLUME_SOURCE: Message = Message {
    name: "ProjectedVolumeSource",
    fields: &[
        Field(
            1,
            "sources",
            Label::Repeated,
            Ty::Message(&CORE_V1_VOLUME_PROJECTION),
        ),
        Field(2, "defaultMode", Label::Single, Ty::Int32),
    ],
};

pub(super) static CORE_V1_QUOBYTE_VOLUME_SOURCE: Message = Message {
    name: "QuobyteVolumeSource",
    fields: &[
        Field(1, "registry", Label::Single, Ty::String),
        Field(2, "volume", Label::Single, Ty::String),
        Field(3, "readOnly", Label::Single, Ty::Bool),
        Field(4, "user", Label::Single, Ty::String),
        Field(5, "group", Label::Single, Ty::String),
        Field(6, "tenant", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_RBD_VOLUME_SOURCE: Message = Message {
    name: "RbdVolumeSource",
    fields: &[
        Field(1, "monitors", Label::Repeated, Ty::String),
        Field(2, "image", Label::Single, Ty::String),
        Field(3, "fsType", Label::Single, Ty::String),
        Field(4, "pool", Label::Single, Ty::String),
        Field(5, "user", Label::Single, Ty::String),
        Field(6, "keyring", Label::Single, Ty::String),
        Field(
            7,
            "secretRef",
            Label::Single,
            Ty::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE),
        ),
        Field(8, "readOnly", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_RESOURCE_CLAIM: Message = Message {
    name: "ResourceClaim",
    fields: &[
        Field(1, "name", Label::Single, Ty::String),
        Field(2, "request", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_RESOURCE_FIELD_SELECTOR: Message = Message {
    name: "ResourceFieldSelector",
    fields: &[
        Field(1, "containerName", Label::Single, Ty::String),
        Field(2, "resource", Label::Single, Ty::String),
        Field(3, "divisor", Label::Single, Ty::Quantity),
    ],
};

pub(super) static CORE_V1_RESOURCE_HEALTH: Message = Message {
    name: "ResourceHealth",
    fields: &[
        Field(1, "resourceID", Label::Single, Ty::String),
        Field(2, "health", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_RESOURCE_REQUIREMENTS: Message = Message {
    name: "ResourceRequirements",
    fields: &[
        Field(1, "limits", Label::Map, Ty::Quantity),
        Field(2, "requests", Label::Map, Ty::Quantity),
        Field(
            3,
            "claims",
            Label::Repeated,
            Ty::Message(&CORE_V1_RESOURCE_CLAIM),
        ),
    ],
};

pub(super) static CORE_V1_RESOURCE_STATUS: Message = Message {
    name: "ResourceStatus",
    fields: &[
        Field(1, "name", Label::Single, Ty::String),
        Field(
            2,
            "resources",
            Label::Repeated,
            Ty::Message(&CORE_V1_RESOURCE_HEALTH),
        ),
    ],
};

pub(super) static CORE_V1_SCALE_IO_VOLUME_SOURCE: Message = Message {
    name: "ScaleIoVolumeSource",
    fields: &[
        Field(1, "gateway", Label::Single, Ty::String),
        Field(2, "system", Label::Single, Ty::String),
        Field(
            3,
            "secretRef",
            Label::Single,
            Ty::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE),
        ),
        Field(4, "sslEnabled", Label::Single, Ty::Bool),
        Field(5, "protectionDomain", Label::Single, Ty::String),
        Field(6, "storagePool", Label::Single, Ty::String),
        Field(7, "storageMode", Label::Single, Ty::String),
        Field(8, "volumeName", Label::Single, Ty::String),
        Field(9, "fsType", Label::Single, Ty::String),
        Field(10, "readOnly", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_SECCOMP_PROFILE: Message = Message {
    name: "SeccompProfile",
    fields: &[
        Field(1, "type", Label::Single, Ty::String),
        Field(2, "localhostProfile", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_SECRET: Message = Message {
    name: "Secret",
    fields: &[
        Field(
            1,
            "metadata",
            Label::Single,
            Ty::Message(&META_V1_OBJECT_META),
        ),
        Field(2, "data", Label::Map, Ty::Bytes),
        Field(3, "type", Label::Single, Ty::String),
        Field(4, "stringData", Label::Map, Ty::String),
        Field(5, "immutable", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_SECRET_ENV_SOURCE: Message = Message {
    name: "SecretEnvSource",
    fields: &[
        Field(
            1,
            "",
            Label::Inline,
            Ty::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE),
        ),
        Field(2, "optional", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_SECRET_KEY_SELECTOR: Message = Message {
    name: "SecretKeySelector",
    fields: &[
        Field(
            1,
            "",
            Label::Inline,
            Ty::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE),
        ),
        Field(2, "key", Label::Single, Ty::String),
        Field(3, "optional", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_SECRET_PROJECTION: Message = Message {
    name: "SecretProjection",
    fields: &[
        Field(
            1,
            "",
            Label::Inline,
            Ty::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE),
        ),
        Field(
            2,
            "items",
            Label::Repeated,
            Ty::Message(&CORE_V1_KEY_TO_PATH),
        ),
        Field(4, "optional", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_SECRET_VOLUME_SOURCE: Message = Message {
    name: "SecretVolumeSource",
    fields: &[
        Field(1, "secretName", Label::Single, Ty::String),
        Field(
            2,
            "items",
            Label::Repeated,
            Ty::Message(&CORE_V1_KEY_TO_PATH),
        ),
        Field(3, "defaultMode", Label::Single, Ty::Int32),
        Field(4, "optional", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_SECURITY_CONTEXT: Message = Message {
    name: "SecurityContext",
    fields: &[
        Field(
            1,
            "capabilities",
            Label::Single,
            Ty::Message(&CORE_V1_CAPABILITIES),
        ),
        Field(2, "privileged", Label::Single, Ty::Bool),
        Field(
            3,
            "seLinuxOptions",
            Label::Single,
            Ty::Message(&CORE_V1_SE_LINUX_OPTIONS),
        ),
        Field(4, "runAsUser", Label::Single, Ty::Int64),
        Field(5, "runAsNonRoot", Label::Single, Ty::Bool),
        Field(6, "readOnlyRootFilesystem", Label::Single, Ty::Bool),
        Field(7, "allowPrivilegeEscalation", Label::Single, Ty::Bool),
        Field(8, "runAsGroup", Label::Single, Ty::Int64),
        Field(9, "procMount", Label::Single, Ty::String),
        Field(
            10,
            "windowsOptions",
            Label::Single,
            Ty::Message(&CORE_V1_WINDOWS_SECURITY_CONTEXT_OPTIONS),
        ),
        Field(
            11,
            "seccompProfile",
            Label::Single,
            Ty::Message(&CORE_V1_SECCOMP_PROFILE),
        ),
        Field(
            12,
            "appArmorProfile",
            Label::Single,
            Ty::Message(&CORE_V1_APP_ARMOR_PROFILE),
        ),
    ],
};

pub(super) static CORE_V1_SERVICE_ACCOUNT_TOKEN_PROJECTION: Message = Message {
    name: "ServiceAccountTokenProjection",
    fields: &[
        Field(1, "audience", Label::Single, Ty::String),
        Field(2, "expirationSeconds", Label::Single, Ty::Int64),
        Field(3, "path", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_SE_LINUX_OPTIONS: Message = Message {
    name: "SeLinuxOptions",
    fields: &[
        Field(1, "user", Label::Single, Ty::String),
        Field(2, "role", Label::Single, Ty::String),
        Field(3, "type", Label::Single, Ty::String),
        Field(4, "level", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_SLEEP_ACTION: Message = Message {
    name: "SleepAction",
    fields: &[Field(1, "seconds", Label::Single, Ty::Int64)],
};

pub(super) static CORE_V1_STORAGE_OS_VOLUME_SOURCE: Message = Message {
    name: "StorageOsVolumeSource",
    fields: &[
        Field(1, "volumeName", Label::Single, Ty::String),
        Field(2, "volumeNamespace", Label::Single, Ty::String),
        Field(3, "fsType", Label::Single, Ty::String),
        Field(4, "readOnly", Label::Single, Ty::Bool),
        Field(
            5,
            "secretRef",
            Label::Single,
            Ty::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE),
        ),
    ],
};

pub(super) static CORE_V1_SYSCTL: Message = Message {
    name: "Sysctl",
    fields: &[
        Field(1, "name", Label::Single, Ty::String),
        Field(2, "value", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_TAINT: Message = Message {
    name: "Taint",
    fields: &[
        Field(1, "key", Label::Single, Ty::String),
        Field(2, "value", Label::Single, Ty::String),
        Field(3, "effect", Label::Single, Ty::String),
        Field(4, "timeAdded", Label::Single, Ty::Time),
    ],
};

pub(super) static CORE_V1_TCP_SOCKET_ACTION: Message = Message {
    name: "TcpSocketAction",
    fields: &[
        Field(1, "port", Label::Single, Ty::IntOrString),
        Field(2, "host", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_TOLERATION: Message = Message {
    name: "Toleration",
    fields: &[
        Field(1, "key", Label::Single, Ty::String),
        Field(2, "operator", Label::Single, Ty::String),
        Field(3, "value", Label::Single, Ty::String),
        Field(4, "effect", Label::Single, Ty::String),
        Field(5, "tolerationSeconds", Label::Single, Ty::Int64),
    ],
};

pub(super) static CORE_V1_TOPOLOGY_SPREAD_CONSTRAINT: Message = Message {
    name: "TopologySpreadConstraint",
    fields: &[
        Field(1, "maxSkew", Label::Single, Ty::Int32),
        Field(2, "topologyKey", Label::Single, Ty::String),
        Field(3, "whenUnsatisfiable", Label::Single, Ty::String),
        Field(
            4,
            "labelSelector",
            Label::Single,
            Ty::Message(&META_V1_LABEL_SELECTOR),
        ),
        Field(5, "minDomains", Label::Single, Ty::Int32),
        Field(6, "nodeAffinityPolicy", Label::Single, Ty::String),
        Field(7, "nodeTaintsPolicy", Label::Single, Ty::String),
        Field(8, "matchLabelKeys", Label::Repeated, Ty::String),
    ],
};

pub(super) static CORE_V1_TYPED_LOCAL_OBJECT_REFERENCE: Message = Message {
    name: "TypedLocalObjectReference",
    fields: &[
        Field(1, "apiGroup", Label::Single, Ty::String),
        Field(2, "kind", Label::Single, Ty::String),
        Field(3, "name", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_TYPED_OBJECT_REFERENCE: Message = Message {
    name: "TypedObjectReference",
    fields: &[
        Field(1, "apiGroup", Label::Single, Ty::String),
        Field(2, "kind", Label::Single, Ty::String),
        Field(3, "name", Label::Single, Ty::String),
        Field(4, "namespace", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_VOLUME: Message = Message {
    name: "Volume",
    fields: &[
        Field(1, "name", Label::Single, Ty::String),
        Field(2, "", Label::Inline, Ty::Message(&CORE_V1_VOLUME_SOURCE)),
    ],
};

pub(super) static CORE_V1_VOLUME_DEVICE: Message = Message {
    name: "VolumeDevice",
    fields: &[
        Field(1, "name", Label::Single, Ty::String),
        Field(2, "devicePath", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_VOLUME_MOUNT: Message = Message {
    name: "VolumeMount",
    fields: &[
        Field(1, "name", Label::Single, Ty::String),
        Field(2, "readOnly", Label::Single, Ty::Bool),
        Field(3, "mountPath", Label::Single, Ty::String),
        Field(4, "subPath", Label::Single, Ty::String),
        Field(5, "mountPropagation", Label::Single, Ty::String),
        Field(6, "subPathExpr", Label::Single, Ty::String),
        Field(7, "recursiveReadOnly", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_VOLUME_MOUNT_STATUS: Message = Message {
    name: "VolumeMountStatus",
    fields: &[
        Field(1, "name", Label::Single, Ty::String),
        Field(2, "mountPath", Label::Single, Ty::String),
        Field(3, "readOnly", Label::Single, Ty::Bool),
        Field(4, "recursiveReadOnly", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_VOLUME_PROJECTION: Message = Message {
    name: "VolumeProjection",
    fields: &[
        Field(
            1,
            "secret",
            Label::Single,
            Ty::Message(&CORE_V1_SECRET_PROJECTION),
        ),
        Field(
            2,
            "downwardAPI",
            Label::Single,
            Ty::Message(&CORE_V1_DOWNWARD_API_PROJECTION),
        ),
        Field(
            3,
            "configMap",
            Label::Single,
            Ty::Message(&CORE_V1_CONFIG_MAP_PROJECTION),
        ),
        Field(
            4,
            "serviceAccountToken",
            Label::Single,
            Ty::Message(&CORE_V1_SERVICE_ACCOUNT_TOKEN_PROJECTION),
        ),
        Field(
            5,
            "clusterTrustBundle",
            Label::Single,
            Ty::Message(&CORE_V1_CLUSTER_TRUST_BUNDLE_PROJECTION),
        ),
        Field(
            6,
            "podCertificate",
            Label::Single,
            Ty::Message(&CORE_V1_POD_CERTIFICATE_PROJECTION),
        ),
    ],
};

pub(super) static CORE_V1_VOLUME_RESOURCE_REQUIREMENTS: Message = Message {
    name: "VolumeResourceRequirements",
    fields: &[
        Field(1, "limits", Label::Map, Ty::Quantity),
        Field(2, "requests", Label::Map, Ty::Quantity),
    ],
};

pub(super) static CORE_V1_VOLUME_SOURCE: Message = Message {
    name: "VolumeSource",
    fields: &[
        Field(
            1,
            "hostPath",
            Label::Single,
            Ty::Message(&CORE_V1_HOST_PATH_VOLUME_SOURCE),
        ),
        Field(
            2,
            "emptyDir",
            Label::Single,
            Ty::Message(&CORE_V1_EMPTY_DIR_VOLUME_SOURCE),
        ),
        Field(
            3,
            "gcePersistentDisk",
            Label::Single,
            Ty::Message(&CORE_V1_GCE_PERSISTENT_DISK_VOLUME_SOURCE),
        ),
        Field(
            4,
            "awsElasticBlockStore",
            Label::Single,
            Ty::Message(&CORE_V1_AWS_ELASTIC_BLOCK_STORE_VOLUME_SOURCE),
        ),
        Field(
            5,
            "gitRepo",
            Label::Single,
            Ty::Message(&CORE_V1_GIT_REPO_VOLUME_SOURCE),
        ),
        Field(
            6,
            "secret",
            Label::Single,
            Ty::Message(&CORE_V1_SECRET_VOLUME_SOURCE),
        ),
        Field(
            7,
            "nfs",
            Label::Single,
            Ty::Message(&CORE_V1_NFS_VOLUME_SOURCE),
        ),
        Field(
            8,
            "iscsi",
            Label::Single,
            Ty::Message(&CORE_V1_ISCSI_VOLUME_SOURCE),
        ),
        Field(
            9,
            "glusterfs",
            Label::Single,
            Ty::Message(&CORE_V1_GLUSTERFS_VOLUME_SOURCE),
        ),
        Field(
            10,
            "persistentVolumeClaim",
            Label::Single,
            Ty::Message(&CORE_V1_PERSISTENT_VOLUME_CLAIM_VOLUME_SOURCE),
        ),
        Field(
            11,
            "rbd",
            Label::Single,
            Ty::Message(&CORE_V1_RBD_VOLUME_SOURCE),
        ),
        Field(
            12,
            "flexVolume",
            Label::Single,
            Ty::Message(&CORE_V1_FLEX_VOLUME_SOURCE),
        ),
        Field(
            13,
            "cinder",
            Label::Single,
            Ty::Message(&CORE_V1_CINDER_VOLUME_SOURCE),
        ),
        Field(
            14,
            "cephfs",
            Label::Single,
            Ty::Message(&CORE_V1_CEPH_FS_VOLUME_SOURCE),
        ),
        Field(
            15,
            "flocker",
            Label::Single,
            Ty::Message(&CORE_V1_FLOCKER_VOLUME_SOURCE),
        ),
        Field(
            16,
            "downwardAPI",
            Label::Single,
            Ty::Message(&CORE_V1_DOWNWARD_API_VOLUME_SOURCE),
        ),
        Field(
            17,
            "fc",
            Label::Single,
            Ty::Message(&CORE_V1_FC_VOLUME_SOURCE),
        ),
        Field(
            18,
            "azureFile",
            Label::Single,
            Ty::Message(&CORE_V1_AZURE_FILE_VOLUME_SOURCE),
        ),
        Field(
            19,
            "configMap",
            Label::Single,
            Ty::Message(&CORE_V1_CONFIG_MAP_VOLUME_SOURCE),
        ),
        Field(
            20,
            "vsphereVolume",
            Label::Single,
            Ty::Message(&CORE_V1_VSPHERE_VIRTUAL_DISK_VOLUME_SOURCE),
        ),
        Field(
            21,
            "quobyte",
            Label::Single,
            Ty::Message(&CORE_V1_QUOBYTE_VOLUME_SOURCE),
        ),
        Field(
            22,
            "azureDisk",
            Label::Single,
            Ty::Message(&CORE_V1_AZURE_DISK_VOLUME_SOURCE),
        ),
        Field(
            23,
            "photonPersistentDisk",
            Label::Single,
            Ty::Message(&CORE_V1_PHOTON_PERSISTENT_DISK_VOLUME_SOURCE),
        ),
        Field(
            24,
            "portworxVolume",
            Label::Single,
            Ty::Message(&CORE_V1_PORTWORX_VOLUME_SOURCE),
        ),
        Field(
            25,
            "scaleIO",
            Label::Single,
            Ty::Message(&CORE_V1_SCALE_IO_VOLUME_SOURCE),
        ),
        Field(
            26,
            "projected",
            Label::Single,
            Ty::Message(&CORE_V1_PROJECTED_VOLUME_SOURCE),
        ),
        Field(
            27,
            "storageos",
            Label::Single,
            Ty::Message(&CORE_V1_STORAGE_OS_VOLUME_SOURCE),
        ),
        Field(
            28,
            "csi",
            Label::Single,
            Ty::Message(&CORE_V1_CSI_VOLUME_SOURCE),
        ),
        Field(
            29,
            "ephemeral",
            Label::Single,
            Ty::Message(&CORE_V1_EPHEMERAL_VOLUME_SOURCE),
        ),
        Field(
            30,
            "image",
            Label::Single,
            Ty::Message(&CORE_V1_IMAGE_VOLUME_SOURCE),
        ),
    ],
};

pub(super) static CORE_V1_VSPHERE_VIRTUAL_DISK_VOLUME_SOURCE: Message = Message {
    name: "VsphereVirtualDiskVolumeSource",
    fields: &[
        Field(1, "volumePath", Label::Single, Ty::String),
        Field(2, "fsType", Label::Single, Ty::String),
        Field(3, "storagePolicyName", Label::Single, Ty::String),
        Field(4, "storagePolicyID", Label::Single, Ty::String),
    ],
};

pub(super) static CORE_V1_WEIGHTED_POD_AFFINITY_TERM: Message = Message {
    name: "WeightedPodAffinityTerm",
    fields: &[
        Field(1, "weight", Label::Single, Ty::Int32),
        Field(
            2,
            "podAffinityTerm",
            Label::Single,
            Ty::Message(&CORE_V1_POD_AFFINITY_TERM),
        ),
    ],
};

pub(super) static CORE_V1_WINDOWS_SECURITY_CONTEXT_OPTIONS: Message = Message {
    name: "WindowsSecurityContextOptions",
    fields: &[
        Field(1, "gmsaCredentialSpecName", Label::Single, Ty::String),
        Field(2, "gmsaCredentialSpec", Label::Single, Ty::String),
        Field(3, "runAsUserName", Label::Single, Ty::String),
        Field(4, "hostProcess", Label::Single, Ty::Bool),
    ],
};

pub(super) static CORE_V1_WORKLOAD_REFERENCE: Message = Message {
    name: "WorkloadReference",
    fields: &[
        Field(1, "name", Label::Single, Ty::String),
        Field(2, "podGroup", Label::Single, Ty::String),
        Field(3, "podGroupReplicaKey", Label::Single, Ty::String),
    ],
};

pub(super) static META_V1_DELETE_OPTIONS: Message = Message {
    name: "DeleteOptions",
    fields: &[
        Field(1, "gracePeriodSeconds", Label::Single, Ty::Int64),
        Field(
            2,
            "preconditions",
            Label::Single,
            Ty::Message(&META_V1_PRECONDITIONS),
        ),
        Field(3, "orphanDependents", Label::Single, Ty::Bool),
        Field(4, "propagationPolicy", Label::Single, Ty::String),
        Field(5, "dryRun", Label::Repeated, Ty::String),
        Field(
            6,
            "ignoreStoreReadErrorWithClusterBreakingPotential",
            Label::Single,
            Ty::Bool,
        ),
    ],
};

pub(super) static META_V1_LABEL_SELECTOR: Message = Message {
    name: "LabelSelector",
    fields: &[
        Field(1, "matchLabels", Label::Map, Ty::String),
        Field(
            2,
            "matchExpressions",
            Label::Repeated,
            Ty::Message(&META_V1_LABEL_SELECTOR_REQUIREMENT),
        ),
    ],
};

pub(super) static META_V1_LABEL_SELECTOR_REQUIREMENT: Message = Message {
    name: "LabelSelectorRequirement",
    fields: &[
        Field(1, "key", Label::Single, Ty::String),
        Field(2, "operator", Label::Single, Ty::String),
        Field(3, "values", Label::Repeated, Ty::String),
    ],
};

pub(super) static META_V1_MANAGED_FIELDS_ENTRY: Message = Message {
    name: "ManagedFieldsEntry",
    fields: &[
        Field(1, "manager", Label::Single, Ty::String),
        Field(2, "operation", Label::Single, Ty::String),
        Field(3, "apiVersion", Label::Single, Ty::String),
        Field(4, "time", Label::Single, Ty::Time),
        Field(6, "fieldsType", Label::Single, Ty::String),
        Field(7, "fieldsV1", Label::Single, Ty::FieldsV1),
        Field(8, "subresource", Label::Single, Ty::String),
    ],
};

pub(super) static META_V1_OBJECT_META: Message = Message {
    name: "ObjectMeta",
    fields: &[
        Field(1, "name", Label::Single, Ty::String),
        Field(2, "generateName", Label::Single, Ty::String),
        Field(3, "namespace", Label::Single, Ty::String),
        Field(4, "selfLink", Label::Single, Ty::String),
        Field(5, "uid", Label::Single, Ty::String),
        Field(6, "resourceVersion", Label::Single, Ty::String),
        Field(7, "generation", Label::Single, Ty::Int64),
        Field(8, "creationTimestamp", Label::Single, Ty::Time),
        Field(9, "deletionTimestamp", Label::Single, Ty::Time),
        Field(10, "deletionGracePeriodSeconds", Label::Single, Ty::Int64),
        Field(11, "labels", Label::Map, Ty::String),
        Field(12, "annotations", Label::Map, Ty::String),
        Field(
            13,
            "ownerReferences",
            Label::Repeated,
            Ty::Message(&META_V1_OWNER_REFERENCE),
        ),
        Field(14, "finalizers", Label::Repeated, Ty::String),
        Field(
            17,
            "managedFields",
            Label::Repeated,
            Ty::Message(&META_V1_MANAGED_FIELDS_ENTRY),
        ),
    ],
};

pub(super) static META_V1_OWNER_REFERENCE: Message = Message {
    name: "OwnerReference",
    fields: &[
        Field(1, "kind", Label::Single, Ty::String),
        Field(3, "name", Label::Single, Ty::String),
        Field(4, "uid", Label::Single, Ty::String),
        Field(5, "apiVersion", Label::Single, Ty::String),
        Field(6, "controller", Label::Single, Ty::Bool),
        Field(7, "blockOwnerDeletion", Label::Single, Ty::Bool),
    ],
};

pub(super) static META_V1_PRECONDITIONS: Message = Message {
    name: "Preconditions",
    fields: &[
        Field(1, "uid", Label::Single, Ty::String),
        Field(2, "resourceVersion", Label::Single, Ty::String),
    ],
};

pub(super) static POLICY_V1_EVICTION: Message = Message {
    name: "Eviction",
    fields: &[
        Field(
            1,
            "metadata",
            Label::Single,
            Ty::Message(&META_V1_OBJECT_META),
        ),
        Field(
            2,
            "deleteOptions",
            Label::Single,
            Ty::Message(&META_V1_DELETE_OPTIONS),
        ),
    ],
};

/// `authorization.k8s.io/v1` SelfSubjectAccessReview: what `kubectl auth can-i` sends (its
/// status is the server's to fill, so it is not read).
pub(super) static AUTHORIZATION_V1_SELF_SUBJECT_ACCESS_REVIEW: Message = Message {
    name: "SelfSubjectAccessReview",
    fields: &[
        Field(
            1,
            "metadata",
            Label::Single,
            Ty::Message(&META_V1_OBJECT_META),
        ),
        Field(
            2,
            "spec",
            Label::Single,
            Ty::Message(&AUTHORIZATION_V1_SELF_SUBJECT_ACCESS_REVIEW_SPEC),
        ),
        Field(
            3,
            "status",
            Label::Single,
            Ty::Message(&AUTHORIZATION_V1_SUBJECT_ACCESS_REVIEW_STATUS),
        ),
    ],
};

/// Sent empty by clients; read so that a review is not refused for carrying it.
pub(super) static AUTHORIZATION_V1_SUBJECT_ACCESS_REVIEW_STATUS: Message = Message {
    name: "SubjectAccessReviewStatus",
    fields: &[
        Field(1, "allowed", Label::Single, Ty::Bool),
        Field(2, "reason", Label::Single, Ty::String),
        Field(3, "evaluationError", Label::Single, Ty::String),
        Field(4, "denied", Label::Single, Ty::Bool),
    ],
};

pub(super) static AUTHORIZATION_V1_SELF_SUBJECT_ACCESS_REVIEW_SPEC: Message = Message {
    name: "SelfSubjectAccessReviewSpec",
    fields: &[
        Field(
            1,
            "resourceAttributes",
            Label::Single,
            Ty::Message(&AUTHORIZATION_V1_RESOURCE_ATTRIBUTES),
        ),
        Field(
            2,
            "nonResourceAttributes",
            Label::Single,
            Ty::Message(&AUTHORIZATION_V1_NON_RESOURCE_ATTRIBUTES),
        ),
    ],
};

pub(super) static AUTHORIZATION_V1_RESOURCE_ATTRIBUTES: Message = Message {
    name: "ResourceAttributes",
    fields: &[
        Field(1, "namespace", Label::Single, Ty::String),
        Field(2, "verb", Label::Single, Ty::String),
        Field(3, "group", Label::Single, Ty::String),
        Field(4, "version", Label::Single, Ty::String),
        Field(5, "resource", Label::Single, Ty::String),
        Field(6, "subresource", Label::Single, Ty::String),
        Field(7, "name", Label::Single, Ty::String),
    ],
};

pub(super) static AUTHORIZATION_V1_NON_RESOURCE_ATTRIBUTES: Message = Message {
    name: "NonResourceAttributes",
    fields: &[
        Field(1, "path", Label::Single, Ty::String),
        Field(2, "verb", Label::Single, Ty::String),
    ],
};
