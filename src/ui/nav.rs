//! Where the table is: which kind, in which namespace scope, with which filter; and where
//! Enter on a row leads (k9s's drill-down). Plain data and functions, tested without a cluster.

use std::collections::BTreeMap;

use kscope_client::cluster::NamespaceScope;
use kscope_client::discovery::Discovery;
use kscope_index_views::definitions::{IndexDefinition, IndexField, IndexSource};
use kscope_informers::keys::split_meta_namespace_key;
use kscope_resources::{Kind, ResourceKind};

/// The header's scope when every namespace is shown.
pub const ALL_NAMESPACES: &str = "all namespaces";

/// Views kept for Esc to go back to; older ones are forgotten.
pub const HISTORY: usize = 32;

/// One view of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewSpec {
    pub kind: Kind,
    /// The namespace scope. Cluster-scoped kinds keep it too, so that `:pods` after `:nodes`
    /// shows the namespace the person was in.
    pub scope: NamespaceScope,
    /// The filter bar's text.
    pub filter: String,
}

impl ViewSpec {
    pub fn new(kind: impl Into<Kind>, scope: NamespaceScope) -> Self {
        Self {
            kind: kind.into(),
            scope,
            filter: String::new(),
        }
    }

    /// What the header says about the scope.
    pub fn scope_label(&self) -> String {
        scope_label(&self.scope, self.kind.namespaced())
    }

    /// A namespaced kind across more than one namespace: rows need a NAMESPACE column.
    pub fn with_namespace(&self) -> bool {
        self.kind.namespaced() && !matches!(self.scope, NamespaceScope::One(_))
    }
}

/// What the header says about `scope` for a kind (or category) that is `namespaced` or not:
/// a set by its name and members, `namespaces team-a (a, b, c)`.
pub fn scope_label(scope: &NamespaceScope, namespaced: bool) -> String {
    match (scope, namespaced) {
        (_, false) => "cluster".into(),
        (NamespaceScope::All, true) => ALL_NAMESPACES.into(),
        (NamespaceScope::One(ns), true) => format!("namespace {ns}"),
        (NamespaceScope::Set(set), true) => format!("namespaces {set}"),
    }
}

/// A category shown as one table (`:all`): its name and its kinds, as discovery found them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Category {
    pub name: String,
    pub kinds: Vec<Kind>,
}

impl Category {
    /// The kinds a person may list that `discovery` puts in the category `name`, as
    /// kubectl's `get all` takes them; `None` when there are none.
    pub fn discovered(name: &str, discovery: &Discovery) -> Option<Self> {
        let kinds: Vec<Kind> = discovery
            .category(name)
            .into_iter()
            .filter(|r| r.listable())
            .map(|r| Kind::of(r.clone()))
            .collect();
        (!kinds.is_empty()).then(|| Self {
            name: name.to_ascii_lowercase(),
            kinds,
        })
    }
}

/// Why Enter on a row leads nowhere.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DrillError {
    #[error("no index reads the {0} field: add one to the config to drill down")]
    NoIndex(&'static str),
}

/// Where Enter on the row `key` of `from` leads: a namespace to its pods, a node to the pods
/// on it, a deployment to its replicasets, a replicaset, statefulset, daemonset or job to its
/// pods, a cronjob to its jobs. `None` for pods and every other kind (Enter shows the detail).
/// Owner and node filters use whichever configured index reads that field.
pub fn drill_down(
    from: &ViewSpec,
    key: &str,
    indexes: &[IndexDefinition],
    discovery: &Discovery,
) -> Result<Option<ViewSpec>, DrillError> {
    let (namespace, name) = split_meta_namespace_key(key);
    let index = |field: IndexField| {
        indexes
            .iter()
            .find(|d| d.source == IndexSource::Field(field))
            .map(|d| d.name.as_str())
            .ok_or(DrillError::NoIndex(field.as_str()))
    };
    let in_namespace = || match namespace {
        Some(ns) => NamespaceScope::One(ns.to_string()),
        None => from.scope.clone(),
    };
    let owned = |kind: Kind, owner: &str| -> Result<ViewSpec, DrillError> {
        Ok(ViewSpec {
            kind,
            scope: in_namespace(),
            filter: format!("{}={owner}/{name}", index(IndexField::Owner)?),
        })
    };
    let Some(kind) = from.kind.built_in() else {
        // The workloads whose controller owns pods (or, for a CronJob, Jobs); any other
        // discovered kind holds nothing to open, and Enter shows its detail.
        return match (from.kind.group(), from.kind.plural()) {
            ("apps", "statefulsets") => owned(ResourceKind::Pods.into(), "StatefulSet").map(Some),
            ("apps", "daemonsets") => owned(ResourceKind::Pods.into(), "DaemonSet").map(Some),
            ("batch", "jobs") => owned(ResourceKind::Pods.into(), "Job").map(Some),
            ("batch", "cronjobs") => match discovery.resolve("jobs.batch") {
                Ok(jobs) => owned(jobs, "CronJob").map(Some),
                Err(_) => Ok(None),
            },
            _ => Ok(None),
        };
    };
    let spec = match kind {
        ResourceKind::Pods | ResourceKind::Secrets => return Ok(None),
        ResourceKind::Namespaces => {
            ViewSpec::new(ResourceKind::Pods, NamespaceScope::One(name.to_string()))
        }
        ResourceKind::Nodes => ViewSpec {
            kind: ResourceKind::Pods.into(),
            scope: NamespaceScope::All,
            filter: format!("{}={name}", index(IndexField::Node)?),
        },
        ResourceKind::Deployments => owned(ResourceKind::ReplicaSets.into(), "Deployment")?,
        ResourceKind::ReplicaSets => owned(ResourceKind::Pods.into(), "ReplicaSet")?,
    };
    Ok(Some(spec))
}

/// Where Enter on a Service leads, once its selector is known: its namespace's pods with one
/// term per label of `selector`, each through an index that reads that label on pods. For a
/// label no such index reads, a new one (named after the label, scoped to pods) is returned,
/// to be added before the view is shown.
pub fn selected_pods(
    namespace: &str,
    selector: &BTreeMap<String, String>,
    indexes: &[IndexDefinition],
    discovery: &Discovery,
) -> (ViewSpec, Vec<IndexDefinition>) {
    let pods = Kind::from(ResourceKind::Pods);
    let on_pods = |d: &IndexDefinition| d.applies_to(&pods, discovery);
    let mut added: Vec<IndexDefinition> = Vec::new();
    let mut terms = Vec::new();
    for (label, value) in selector {
        let reads =
            |d: &&IndexDefinition| d.source == IndexSource::Label(label.clone()) && on_pods(d);
        let name = match indexes.iter().chain(&added).find(reads) {
            Some(d) => d.name.clone(),
            None => {
                let taken = |name: &str| indexes.iter().chain(&added).any(|d| d.name == name);
                let name = if taken(label) {
                    format!("label:{label}")
                } else {
                    label.clone()
                };
                let mut definition =
                    IndexDefinition::new(name.clone(), IndexSource::Label(label.clone()));
                definition.kinds = Some(vec!["pods".into()]);
                added.push(definition);
                name
            }
        };
        terms.push(format!("{name}={value}"));
    }
    let view = ViewSpec {
        kind: ResourceKind::Pods.into(),
        scope: NamespaceScope::One(namespace.to_string()),
        filter: terms.join(","),
    };
    (view, added)
}

/// Where Enter on a CustomResourceDefinition's row leads: the resources it defines (its
/// name is `plural.group`), in the scope the person was in, once discovery serves them.
/// `None` for any other kind's row, or a CRD not served (yet).
pub fn crd_resources(from: &ViewSpec, key: &str, discovery: &Discovery) -> Option<ViewSpec> {
    let is_crds = from.kind.group() == "apiextensions.k8s.io"
        && from.kind.plural() == "customresourcedefinitions";
    if !is_crds {
        return None;
    }
    let (_, name) = split_meta_namespace_key(key);
    let resource = discovery.resolve_resource(name)?;
    Some(ViewSpec::new(
        kscope_resources::Kind::of(resource.clone()),
        from.scope.clone(),
    ))
}
