//! The built-in kinds the sim serves, as static descriptors: their names for URLs and
//! discovery, their Table columns as kubectl prints them (pkg/printers), and the field
//! selectors the real server supports for each beyond `metadata.name`/`metadata.namespace`.

use super::descriptor::{Column, Descriptor, SelectableField};

const NAMESPACES_COLUMNS: &[Column] = &[
    Column::new("Name", "string", "Name must be unique within a namespace."),
    Column::new("Status", "string", "The status of the namespace"),
    Column::new(
        "Age",
        "string",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
    ),
];

const NODES_COLUMNS: &[Column] = &[
    Column::new("Name", "string", "Name must be unique within a namespace."),
    Column::new("Status", "string", "The status of the node"),
    Column::new("Roles", "string", "The roles of the node"),
    Column::new("Age", "string", "CreationTimestamp is a timestamp representing the server time when this object was created."),
    Column::new("Version", "string", "Kubelet Version reported by the node."),
    Column::new("Internal-IP", "string", "List of addresses reachable to the node. Queried from cloud provider, if available.").wide(),
    Column::new("External-IP", "string", "List of addresses reachable to the node. Queried from cloud provider, if available.").wide(),
    Column::new("OS-Image", "string", "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).").wide(),
    Column::new("Kernel-Version", "string", "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).").wide(),
    Column::new("Container-Runtime", "string", "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).").wide(),
];

const PODS_COLUMNS: &[Column] = &[
    Column::new("Name", "string", "Name must be unique within a namespace."),
    Column::new("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
    Column::new("Status", "string", "The aggregate status of the containers in this pod."),
    Column::new("Restarts", "string", "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
    Column::new("Age", "string", "CreationTimestamp is a timestamp representing the server time when this object was created."),
    Column::new("IP", "string", "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.").wide(),
    Column::new("Node", "string", "NodeName is a request to schedule this pod onto a specific node.").wide(),
    Column::new("Nominated Node", "string", "nominatedNodeName is set only when this pod preempts other pods on the node.").wide(),
    Column::new("Readiness Gates", "string", "If specified, all readiness gates will be evaluated for pod readiness.").wide(),
];

const DEPLOYMENTS_COLUMNS: &[Column] = &[
    Column::new("Name", "string", "Name must be unique within a namespace."),
    Column::new("Ready", "string", "Number of the pod with ready state"),
    Column::new(
        "Up-to-date",
        "string",
        "Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
    ),
    Column::new(
        "Available",
        "string",
        "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
    ),
    Column::new(
        "Age",
        "string",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
    ),
    Column::new(
        "Containers",
        "string",
        "Names of each container in the template.",
    )
    .wide(),
    Column::new(
        "Images",
        "string",
        "Images referenced by each container in the template.",
    )
    .wide(),
    Column::new("Selector", "string", "Label selector for pods.").wide(),
];

const REPLICA_SETS_COLUMNS: &[Column] = &[
    Column::new("Name", "string", "Name must be unique within a namespace."),
    Column::new(
        "Desired",
        "integer",
        "Replicas is the number of desired replicas.",
    ),
    Column::new(
        "Current",
        "integer",
        "Replicas is the most recently observed number of replicas.",
    ),
    Column::new(
        "Ready",
        "integer",
        "The number of ready replicas for this replica set.",
    ),
    Column::new(
        "Age",
        "string",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
    ),
    Column::new(
        "Containers",
        "string",
        "Names of each container in the template.",
    )
    .wide(),
    Column::new(
        "Images",
        "string",
        "Images referenced by each container in the template.",
    )
    .wide(),
    Column::new("Selector", "string", "Label selector for pods.").wide(),
];

const SECRETS_COLUMNS: &[Column] = &[
    Column::new("Name", "string", "Name must be unique within a namespace."),
    Column::new(
        "Type",
        "string",
        "Used to facilitate programmatic handling of secret data.",
    ),
    Column::new(
        "Data",
        "string",
        "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'.",
    ),
    Column::new(
        "Age",
        "string",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
    ),
];

const SERVICES_COLUMNS: &[Column] = &[
    Column::new("Name", "string", "Name must be unique within a namespace."),
    Column::new(
        "Type",
        "string",
        "type determines how the Service is exposed.",
    ),
    Column::new(
        "Cluster-IP",
        "string",
        "clusterIP is the IP address of the service.",
    ),
    Column::new(
        "External-IP",
        "string",
        "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.",
    ),
    Column::new(
        "Port(s)",
        "string",
        "The list of ports that are exposed by this service.",
    ),
    Column::new(
        "Age",
        "string",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
    ),
    Column::new(
        "Selector",
        "string",
        "Route service traffic to pods with label keys and values matching this selector.",
    )
    .wide(),
];

const ENDPOINTS_COLUMNS: &[Column] = &[
    Column::new("Name", "string", "Name must be unique within a namespace."),
    Column::new(
        "Endpoints",
        "string",
        "The set of all endpoints is the union of all subsets.",
    ),
    Column::new(
        "Age",
        "string",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
    ),
];

const CONFIG_MAPS_COLUMNS: &[Column] = &[
    Column::new("Name", "string", "Name must be unique within a namespace."),
    Column::new("Data", "string", "Data contains the configuration data."),
    Column::new(
        "Age",
        "string",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
    ),
];

const EVENTS_COLUMNS: &[Column] = &[
    Column::new("Last Seen", "string", "The time at which the most recent occurrence of this event was recorded."),
    Column::new("Type", "string", "Type of this event (Normal, Warning), new types could be added in the future"),
    Column::new("Reason", "string", "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
    Column::new("Object", "string", "The object that this event is about."),
    Column::new("Subobject", "string", "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement.").wide(),
    Column::new("Source", "string", "The component reporting this event.").wide(),
    Column::new("Message", "string", "A human-readable description of the status of this operation."),
    Column::new("First Seen", "string", "The time at which the event was first recorded.").wide(),
    Column::new("Count", "string", "The number of times this event has occurred.").wide(),
    Column::new("Name", "string", "Name must be unique within a namespace.").wide(),
];

const SERVICE_ACCOUNTS_COLUMNS: &[Column] = &[
    Column::new("Name", "string", "Name must be unique within a namespace."),
    Column::new(
        "Secrets",
        "string",
        "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.",
    ),
    Column::new(
        "Age",
        "string",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
    ),
];

const PERSISTENT_VOLUME_CLAIMS_COLUMNS: &[Column] = &[
    Column::new("Name", "string", "Name must be unique within a namespace."),
    Column::new(
        "Status",
        "string",
        "phase represents the current phase of PersistentVolumeClaim.",
    ),
    Column::new(
        "Volume",
        "string",
        "volumeName is the binding reference to the PersistentVolume backing this claim.",
    ),
    Column::new(
        "Capacity",
        "string",
        "capacity represents the actual resources of the underlying volume.",
    ),
    Column::new(
        "Access Modes",
        "string",
        "accessModes contains the actual access modes the volume backing the PVC has.",
    ),
    Column::new("StorageClass", "string", "StorageClass of the pvc"),
    Column::new(
        "VolumeAttributesClass",
        "string",
        "VolumeAttributesClass of the pvc",
    ),
    Column::new(
        "Age",
        "string",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
    ),
    Column::new(
        "VolumeMode",
        "string",
        "volumeMode defines what type of volume is required by the claim.",
    )
    .wide(),
];

const PERSISTENT_VOLUMES_COLUMNS: &[Column] = &[
    Column::new("Name", "string", "Name must be unique within a namespace."),
    Column::new("Capacity", "string", "capacity is the description of the persistent volume's resources and capacity."),
    Column::new("Access Modes", "string", "accessModes contains all ways the volume can be mounted."),
    Column::new("Reclaim Policy", "string", "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim."),
    Column::new("Status", "string", "phase indicates if a volume is available, bound to a claim, or released by a claim."),
    Column::new("Claim", "string", "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim."),
    Column::new("StorageClass", "string", "StorageClass of the pv"),
    Column::new("VolumeAttributesClass", "string", "VolumeAttributesClass of the pv"),
    Column::new("Reason", "string", "reason is a brief CamelCase string that describes any failure."),
    Column::new("Age", "string", "CreationTimestamp is a timestamp representing the server time when this object was created."),
    Column::new("VolumeMode", "string", "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state.").wide(),
];

const ENDPOINT_SLICES_COLUMNS: &[Column] = &[
    Column::new("Name", "string", "Name must be unique within a namespace."),
    Column::new(
        "AddressType",
        "string",
        "addressType specifies the type of address carried by this EndpointSlice.",
    ),
    Column::new(
        "Ports",
        "string",
        "ports specifies the list of network ports exposed by each endpoint in this slice.",
    ),
    Column::new(
        "Endpoints",
        "string",
        "endpoints is a list of unique endpoints in this slice.",
    ),
    Column::new(
        "Age",
        "string",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
    ),
];

const STATEFUL_SETS_COLUMNS: &[Column] = &[
    Column::new("Name", "string", "Name must be unique within a namespace."),
    Column::new("Ready", "string", "Number of the pod with ready state"),
    Column::new(
        "Age",
        "string",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
    ),
    Column::new(
        "Containers",
        "string",
        "Names of each container in the template.",
    )
    .wide(),
    Column::new(
        "Images",
        "string",
        "Images referenced by each container in the template.",
    )
    .wide(),
];

const DAEMON_SETS_COLUMNS: &[Column] = &[
    Column::new("Name", "string", "Name must be unique within a namespace."),
    Column::new(
        "Desired",
        "integer",
        "The total number of nodes that should be running the daemon pod.",
    ),
    Column::new(
        "Current",
        "integer",
        "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.",
    ),
    Column::new(
        "Ready",
        "integer",
        "numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.",
    ),
    Column::new(
        "Up-to-date",
        "integer",
        "The total number of nodes that are running updated daemon pod",
    ),
    Column::new(
        "Available",
        "integer",
        "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available.",
    ),
    Column::new(
        "Node Selector",
        "string",
        "NodeSelector is a selector which must be true for the pod to fit on a node.",
    ),
    Column::new(
        "Age",
        "string",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
    ),
    Column::new(
        "Containers",
        "string",
        "Names of each container in the template.",
    )
    .wide(),
    Column::new(
        "Images",
        "string",
        "Images referenced by each container in the template.",
    )
    .wide(),
    Column::new(
        "Selector",
        "string",
        "A label query over pods that are managed by the daemon set.",
    )
    .wide(),
];

const CONTROLLER_REVISIONS_COLUMNS: &[Column] = &[
    Column::new("Name", "string", "Name must be unique within a namespace."),
    Column::new("Controller", "string", "Controller of the object"),
    Column::new(
        "Revision",
        "string",
        "Revision indicates the revision of the state represented by Data.",
    ),
    Column::new(
        "Age",
        "string",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
    ),
];

const JOBS_COLUMNS: &[Column] = &[
    Column::new("Name", "string", "Name must be unique within a namespace."),
    Column::new("Status", "string", "Status of the job."),
    Column::new(
        "Completions",
        "string",
        "The number of pods which reached phase Succeeded.",
    ),
    Column::new("Duration", "string", "Time required to complete the job."),
    Column::new(
        "Age",
        "string",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
    ),
    Column::new(
        "Containers",
        "string",
        "Names of each container in the template.",
    )
    .wide(),
    Column::new(
        "Images",
        "string",
        "Images referenced by each container in the template.",
    )
    .wide(),
    Column::new(
        "Selector",
        "string",
        "A label query over pods that should match the pod count.",
    )
    .wide(),
];

const CRON_JOBS_COLUMNS: &[Column] = &[
    Column::new("Name", "string", "Name must be unique within a namespace."),
    Column::new(
        "Schedule",
        "string",
        "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.",
    ),
    Column::new(
        "Timezone",
        "string",
        "The time zone name for the given schedule.",
    ),
    Column::new(
        "Suspend",
        "boolean",
        "This flag tells the controller to suspend subsequent executions.",
    ),
    Column::new(
        "Active",
        "integer",
        "A list of pointers to currently running jobs.",
    ),
    Column::new(
        "Last Schedule",
        "string",
        "Information when was the last time the job was successfully scheduled.",
    ),
    Column::new(
        "Age",
        "string",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
    ),
    Column::new(
        "Containers",
        "string",
        "Names of each container in the template.",
    )
    .wide(),
    Column::new(
        "Images",
        "string",
        "Images referenced by each container in the template.",
    )
    .wide(),
    Column::new(
        "Selector",
        "string",
        "A label query over pods that should match the pod count.",
    )
    .wide(),
];

const LEASES_COLUMNS: &[Column] = &[
    Column::new("Name", "string", "Name must be unique within a namespace."),
    Column::new(
        "Holder",
        "string",
        "holderIdentity contains the identity of the holder of a current lease.",
    ),
    Column::new(
        "Age",
        "string",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
    ),
];

const INGRESSES_COLUMNS: &[Column] = &[
    Column::new("Name", "string", "Name must be unique within a namespace."),
    Column::new(
        "Class",
        "string",
        "The name of the IngressClass resource that should be used for additional configuration",
    ),
    Column::new(
        "Hosts",
        "string",
        "Hosts that incoming requests are matched against before the ingress rule",
    ),
    Column::new(
        "Address",
        "string",
        "Address is a list containing ingress points for the load-balancer",
    ),
    Column::new("Ports", "string", "Ports of TLS configurations that open"),
    Column::new(
        "Age",
        "string",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
    ),
];

const POD_DISRUPTION_BUDGETS_COLUMNS: &[Column] = &[
    Column::new("Name", "string", "Name must be unique within a namespace."),
    Column::new(
        "Min Available",
        "string",
        "The minimum number of pods that must be available.",
    ),
    Column::new(
        "Max Unavailable",
        "string",
        "The maximum number of pods that may be unavailable.",
    ),
    Column::new(
        "Allowed Disruptions",
        "integer",
        "Calculated number of pods that may be disrupted at this time.",
    ),
    Column::new(
        "Age",
        "string",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
    ),
];

const HORIZONTAL_POD_AUTOSCALERS_COLUMNS: &[Column] = &[
    Column::new("Name", "string", "Name must be unique within a namespace."),
    Column::new(
        "Reference",
        "string",
        "reference to scaled resource; horizontal pod autoscaler will learn the current resource consumption and will set the desired number of pods by using its Scale subresource.",
    ),
    Column::new(
        "Targets",
        "string",
        "the specifications for which to use to calculate the desired replica count.",
    ),
    Column::new(
        "MinPods",
        "string",
        "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.",
    ),
    Column::new(
        "MaxPods",
        "string",
        "maxReplicas is the upper limit for the number of pods that can be set by the autoscaler.",
    ),
    Column::new(
        "Replicas",
        "string",
        "current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.",
    ),
    Column::new(
        "Age",
        "string",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
    ),
];

const CUSTOM_RESOURCE_DEFINITIONS_COLUMNS: &[Column] = &[
    Column::new("Name", "string", "Name must be unique within a namespace."),
    Column::new(
        "Created At",
        "date",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
    ),
];

const NAMESPACES_FIELDS: &[SelectableField] =
    &[SelectableField::new("status.phase", &["status", "phase"])];

const NODES_FIELDS: &[SelectableField] = &[SelectableField {
    missing: "false",
    ..SelectableField::new("spec.unschedulable", &["spec", "unschedulable"])
}];

const PODS_FIELDS: &[SelectableField] = &[
    SelectableField::new("spec.nodeName", &["spec", "nodeName"]),
    SelectableField::new("status.phase", &["status", "phase"]),
    SelectableField::new("status.podIP", &["status", "podIP"]),
    SelectableField::new("spec.restartPolicy", &["spec", "restartPolicy"]),
    SelectableField::new("spec.schedulerName", &["spec", "schedulerName"]),
    SelectableField::new("spec.serviceAccountName", &["spec", "serviceAccountName"]),
    SelectableField {
        missing: "false",
        ..SelectableField::new("spec.hostNetwork", &["spec", "hostNetwork"])
    },
    SelectableField::new("status.nominatedNodeName", &["status", "nominatedNodeName"]),
];

const REPLICA_SETS_FIELDS: &[SelectableField] = &[SelectableField {
    missing: "0",
    ..SelectableField::new("status.replicas", &["status", "replicas"])
}];

const SECRETS_FIELDS: &[SelectableField] = &[SelectableField::new("type", &["type"])];

const SERVICES_FIELDS: &[SelectableField] = &[
    SelectableField::new("spec.clusterIP", &["spec", "clusterIP"]),
    SelectableField::new("spec.type", &["spec", "type"]),
];

const EVENTS_FIELDS: &[SelectableField] = &[
    SelectableField::new("involvedObject.kind", &["involvedObject", "kind"]),
    SelectableField::new("involvedObject.namespace", &["involvedObject", "namespace"]),
    SelectableField::new("involvedObject.name", &["involvedObject", "name"]),
    SelectableField::new("involvedObject.uid", &["involvedObject", "uid"]),
    SelectableField::new(
        "involvedObject.apiVersion",
        &["involvedObject", "apiVersion"],
    ),
    SelectableField::new(
        "involvedObject.resourceVersion",
        &["involvedObject", "resourceVersion"],
    ),
    SelectableField::new("involvedObject.fieldPath", &["involvedObject", "fieldPath"]),
    SelectableField::new("reason", &["reason"]),
    SelectableField::new("reportingComponent", &["reportingComponent"]),
    SelectableField::new("source", &["source", "component"]),
    SelectableField::new("type", &["type"]),
];

const JOBS_FIELDS: &[SelectableField] = &[SelectableField {
    missing: "0",
    ..SelectableField::new("status.successful", &["status", "succeeded"])
}];

const EVENTS_V1_FIELDS: &[SelectableField] = &[
    SelectableField::new("regarding.kind", &["regarding", "kind"]),
    SelectableField::new("regarding.namespace", &["regarding", "namespace"]),
    SelectableField::new("regarding.name", &["regarding", "name"]),
    SelectableField::new("regarding.uid", &["regarding", "uid"]),
    SelectableField::new("regarding.apiVersion", &["regarding", "apiVersion"]),
    SelectableField::new(
        "regarding.resourceVersion",
        &["regarding", "resourceVersion"],
    ),
    SelectableField::new("regarding.fieldPath", &["regarding", "fieldPath"]),
    SelectableField::new("reason", &["reason"]),
    SelectableField::new("reportingController", &["reportingController"]),
    SelectableField::new("type", &["type"]),
];

/// How many built-in kinds there are.
pub const COUNT: usize = 25;

/// Every built-in kind, in the order of the handles above.
pub static BUILT_IN: [Descriptor; COUNT] = [
    Descriptor {
        group: "",
        version: "v1",
        api_version: "v1",
        plural: "namespaces",
        singular: "namespace",
        kind: "Namespace",
        list_kind: "NamespaceList",
        short_names: &["ns"],
        categories: &[],
        namespaced: false,
        status: true,
        scale: false,
        columns: NAMESPACES_COLUMNS,
        fields: NAMESPACES_FIELDS,
        custom: None,
    },
    Descriptor {
        group: "",
        version: "v1",
        api_version: "v1",
        plural: "nodes",
        singular: "node",
        kind: "Node",
        list_kind: "NodeList",
        short_names: &["no"],
        categories: &[],
        namespaced: false,
        status: true,
        scale: false,
        columns: NODES_COLUMNS,
        fields: NODES_FIELDS,
        custom: None,
    },
    Descriptor {
        group: "",
        version: "v1",
        api_version: "v1",
        plural: "pods",
        singular: "pod",
        kind: "Pod",
        list_kind: "PodList",
        short_names: &["po"],
        categories: &["all"],
        namespaced: true,
        status: true,
        scale: false,
        columns: PODS_COLUMNS,
        fields: PODS_FIELDS,
        custom: None,
    },
    Descriptor {
        group: "apps",
        version: "v1",
        api_version: "apps/v1",
        plural: "deployments",
        singular: "deployment",
        kind: "Deployment",
        list_kind: "DeploymentList",
        short_names: &["deploy"],
        categories: &["all"],
        namespaced: true,
        status: true,
        scale: true,
        columns: DEPLOYMENTS_COLUMNS,
        fields: &[],
        custom: None,
    },
    Descriptor {
        group: "apps",
        version: "v1",
        api_version: "apps/v1",
        plural: "replicasets",
        singular: "replicaset",
        kind: "ReplicaSet",
        list_kind: "ReplicaSetList",
        short_names: &["rs"],
        categories: &["all"],
        namespaced: true,
        status: true,
        scale: true,
        columns: REPLICA_SETS_COLUMNS,
        fields: REPLICA_SETS_FIELDS,
        custom: None,
    },
    Descriptor {
        group: "",
        version: "v1",
        api_version: "v1",
        plural: "secrets",
        singular: "secret",
        kind: "Secret",
        list_kind: "SecretList",
        short_names: &[],
        categories: &[],
        namespaced: true,
        status: false,
        scale: false,
        columns: SECRETS_COLUMNS,
        fields: SECRETS_FIELDS,
        custom: None,
    },
    Descriptor {
        group: "",
        version: "v1",
        api_version: "v1",
        plural: "services",
        singular: "service",
        kind: "Service",
        list_kind: "ServiceList",
        short_names: &["svc"],
        categories: &["all"],
        namespaced: true,
        status: true,
        scale: false,
        columns: SERVICES_COLUMNS,
        fields: SERVICES_FIELDS,
        custom: None,
    },
    Descriptor {
        group: "",
        version: "v1",
        api_version: "v1",
        plural: "endpoints",
        singular: "endpoints",
        kind: "Endpoints",
        list_kind: "EndpointsList",
        short_names: &["ep"],
        categories: &[],
        namespaced: true,
        status: false,
        scale: false,
        columns: ENDPOINTS_COLUMNS,
        fields: &[],
        custom: None,
    },
    Descriptor {
        group: "",
        version: "v1",
        api_version: "v1",
        plural: "configmaps",
        singular: "configmap",
        kind: "ConfigMap",
        list_kind: "ConfigMapList",
        short_names: &["cm"],
        categories: &[],
        namespaced: true,
        status: false,
        scale: false,
        columns: CONFIG_MAPS_COLUMNS,
        fields: &[],
        custom: None,
    },
    Descriptor {
        group: "",
        version: "v1",
        api_version: "v1",
        plural: "events",
        singular: "event",
        kind: "Event",
        list_kind: "EventList",
        short_names: &["ev"],
        categories: &[],
        namespaced: true,
        status: false,
        scale: false,
        columns: EVENTS_COLUMNS,
        fields: EVENTS_FIELDS,
        custom: None,
    },
    Descriptor {
        group: "",
        version: "v1",
        api_version: "v1",
        plural: "serviceaccounts",
        singular: "serviceaccount",
        kind: "ServiceAccount",
        list_kind: "ServiceAccountList",
        short_names: &["sa"],
        categories: &[],
        namespaced: true,
        status: false,
        scale: false,
        columns: SERVICE_ACCOUNTS_COLUMNS,
        fields: &[],
        custom: None,
    },
    Descriptor {
        group: "",
        version: "v1",
        api_version: "v1",
        plural: "persistentvolumeclaims",
        singular: "persistentvolumeclaim",
        kind: "PersistentVolumeClaim",
        list_kind: "PersistentVolumeClaimList",
        short_names: &["pvc"],
        categories: &[],
        namespaced: true,
        status: true,
        scale: false,
        columns: PERSISTENT_VOLUME_CLAIMS_COLUMNS,
        fields: &[],
        custom: None,
    },
    Descriptor {
        group: "",
        version: "v1",
        api_version: "v1",
        plural: "persistentvolumes",
        singular: "persistentvolume",
        kind: "PersistentVolume",
        list_kind: "PersistentVolumeList",
        short_names: &["pv"],
        categories: &[],
        namespaced: false,
        status: true,
        scale: false,
        columns: PERSISTENT_VOLUMES_COLUMNS,
        fields: &[],
        custom: None,
    },
    Descriptor {
        group: "discovery.k8s.io",
        version: "v1",
        api_version: "discovery.k8s.io/v1",
        plural: "endpointslices",
        singular: "endpointslice",
        kind: "EndpointSlice",
        list_kind: "EndpointSliceList",
        short_names: &[],
        categories: &[],
        namespaced: true,
        status: false,
        scale: false,
        columns: ENDPOINT_SLICES_COLUMNS,
        fields: &[],
        custom: None,
    },
    Descriptor {
        group: "apps",
        version: "v1",
        api_version: "apps/v1",
        plural: "statefulsets",
        singular: "statefulset",
        kind: "StatefulSet",
        list_kind: "StatefulSetList",
        short_names: &["sts"],
        categories: &["all"],
        namespaced: true,
        status: true,
        scale: true,
        columns: STATEFUL_SETS_COLUMNS,
        fields: &[],
        custom: None,
    },
    Descriptor {
        group: "apps",
        version: "v1",
        api_version: "apps/v1",
        plural: "daemonsets",
        singular: "daemonset",
        kind: "DaemonSet",
        list_kind: "DaemonSetList",
        short_names: &["ds"],
        categories: &["all"],
        namespaced: true,
        status: true,
        scale: false,
        columns: DAEMON_SETS_COLUMNS,
        fields: &[],
        custom: None,
    },
    Descriptor {
        group: "apps",
        version: "v1",
        api_version: "apps/v1",
        plural: "controllerrevisions",
        singular: "controllerrevision",
        kind: "ControllerRevision",
        list_kind: "ControllerRevisionList",
        short_names: &[],
        categories: &[],
        namespaced: true,
        status: false,
        scale: false,
        columns: CONTROLLER_REVISIONS_COLUMNS,
        fields: &[],
        custom: None,
    },
    Descriptor {
        group: "batch",
        version: "v1",
        api_version: "batch/v1",
        plural: "jobs",
        singular: "job",
        kind: "Job",
        list_kind: "JobList",
        short_names: &[],
        categories: &["all"],
        namespaced: true,
        status: true,
        scale: false,
        columns: JOBS_COLUMNS,
        fields: JOBS_FIELDS,
        custom: None,
    },
    Descriptor {
        group: "batch",
        version: "v1",
        api_version: "batch/v1",
        plural: "cronjobs",
        singular: "cronjob",
        kind: "CronJob",
        list_kind: "CronJobList",
        short_names: &["cj"],
        categories: &["all"],
        namespaced: true,
        status: true,
        scale: false,
        columns: CRON_JOBS_COLUMNS,
        fields: &[],
        custom: None,
    },
    Descriptor {
        group: "coordination.k8s.io",
        version: "v1",
        api_version: "coordination.k8s.io/v1",
        plural: "leases",
        singular: "lease",
        kind: "Lease",
        list_kind: "LeaseList",
        short_names: &[],
        categories: &[],
        namespaced: true,
        status: false,
        scale: false,
        columns: LEASES_COLUMNS,
        fields: &[],
        custom: None,
    },
    Descriptor {
        group: "events.k8s.io",
        version: "v1",
        api_version: "events.k8s.io/v1",
        plural: "events",
        singular: "event",
        kind: "Event",
        list_kind: "EventList",
        short_names: &["ev"],
        categories: &[],
        namespaced: true,
        status: false,
        scale: false,
        columns: EVENTS_COLUMNS,
        fields: EVENTS_V1_FIELDS,
        custom: None,
    },
    Descriptor {
        group: "networking.k8s.io",
        version: "v1",
        api_version: "networking.k8s.io/v1",
        plural: "ingresses",
        singular: "ingress",
        kind: "Ingress",
        list_kind: "IngressList",
        short_names: &["ing"],
        categories: &[],
        namespaced: true,
        status: true,
        scale: false,
        columns: INGRESSES_COLUMNS,
        fields: &[],
        custom: None,
    },
    Descriptor {
        group: "policy",
        version: "v1",
        api_version: "policy/v1",
        plural: "poddisruptionbudgets",
        singular: "poddisruptionbudget",
        kind: "PodDisruptionBudget",
        list_kind: "PodDisruptionBudgetList",
        short_names: &["pdb"],
        categories: &[],
        namespaced: true,
        status: true,
        scale: false,
        columns: POD_DISRUPTION_BUDGETS_COLUMNS,
        fields: &[],
        custom: None,
    },
    Descriptor {
        group: "autoscaling",
        version: "v2",
        api_version: "autoscaling/v2",
        plural: "horizontalpodautoscalers",
        singular: "horizontalpodautoscaler",
        kind: "HorizontalPodAutoscaler",
        list_kind: "HorizontalPodAutoscalerList",
        short_names: &["hpa"],
        categories: &["all"],
        namespaced: true,
        status: true,
        scale: false,
        columns: HORIZONTAL_POD_AUTOSCALERS_COLUMNS,
        fields: &[],
        custom: None,
    },
    Descriptor {
        group: "apiextensions.k8s.io",
        version: "v1",
        api_version: "apiextensions.k8s.io/v1",
        plural: "customresourcedefinitions",
        singular: "customresourcedefinition",
        kind: "CustomResourceDefinition",
        list_kind: "CustomResourceDefinitionList",
        short_names: &["crd", "crds"],
        categories: &["api-extensions"],
        namespaced: false,
        status: true,
        scale: false,
        columns: CUSTOM_RESOURCE_DEFINITIONS_COLUMNS,
        fields: &[],
        custom: None,
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::Resource;

    #[test]
    fn handles_name_their_descriptors() {
        assert_eq!(Resource::Pods.plural(), "pods");
        assert_eq!(Resource::EventsV1.api_version(), "events.k8s.io/v1");
        assert_eq!(Resource::Events.api_version(), "v1");
        assert_eq!(
            Resource::HorizontalPodAutoscalers.kind(),
            "HorizontalPodAutoscaler"
        );
        assert_eq!(
            Resource::CustomResourceDefinitions.group(),
            "apiextensions.k8s.io"
        );
        for d in &BUILT_IN {
            assert!(d.columns.iter().any(|c| c.name == "Name"), "{}", d.plural);
        }
    }
}
