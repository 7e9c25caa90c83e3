//! Kinds known at run time: a resource as discovery describes it ([`ApiResource`]), and the
//! [`Kind`] a table, an informer or a command works on, which is either one of the kinds with a
//! hand-written projection or a discovered one stored generically.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use parking_lot::RwLock;

use super::{PathError, ResourceKind};

/// A resource the API server serves, as its discovery document describes it (subresources
/// are not resources and are never described by one).
#[derive(Debug)]
pub struct ApiResource {
    /// The API group; `""` for the core group.
    pub group: String,
    pub version: String,
    /// The name in URLs (`widgets`).
    pub plural: String,
    pub singular: String,
    /// The `kind` of its objects (`Widget`).
    pub kind: String,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub namespaced: bool,
    pub verbs: Vec<String>,
    /// The server's Table columns, learned from the first list in Table form: discovery does
    /// not describe them, and a table needs them for its headers.
    columns: RwLock<Arc<[ColumnDefinition]>>,
}

/// One column of the server's Table form (`meta.k8s.io/v1` `TableColumnDefinition`): for
/// custom resources, an `additionalPrinterColumns` entry.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct ColumnDefinition {
    pub name: String,
    #[serde(default, rename = "type")]
    pub type_: String,
    #[serde(default)]
    pub format: String,
    /// Above 0: shown only in wide output, as kubectl does.
    #[serde(default)]
    pub priority: i32,
}

impl ApiResource {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        group: impl Into<String>,
        version: impl Into<String>,
        plural: impl Into<String>,
        singular: impl Into<String>,
        kind: impl Into<String>,
        namespaced: bool,
        short_names: Vec<String>,
        categories: Vec<String>,
        verbs: Vec<String>,
    ) -> Self {
        Self {
            group: group.into(),
            version: version.into(),
            plural: plural.into(),
            singular: singular.into(),
            kind: kind.into(),
            short_names,
            categories,
            namespaced,
            verbs,
            columns: RwLock::new(Arc::from([])),
        }
    }

    /// `v1` or `example.com/v1`.
    pub fn api_version(&self) -> String {
        match self.group.is_empty() {
            true => self.version.clone(),
            false => format!("{}/{}", self.group, self.version),
        }
    }

    /// kubectl's name of the resource with its group: `services`, `widgets.example.com`.
    pub fn group_resource(&self) -> String {
        match self.group.is_empty() {
            true => self.plural.clone(),
            false => format!("{}.{}", self.plural, self.group),
        }
    }

    /// The kind with a hand-written projection this resource is, if any.
    pub fn built_in(&self) -> Option<ResourceKind> {
        ResourceKind::ALL
            .into_iter()
            .find(|k| k.group() == self.group && k.plural() == self.plural)
    }

    /// Whether a client may list and watch it.
    pub fn listable(&self) -> bool {
        ["list", "watch"]
            .iter()
            .all(|verb| self.verbs.iter().any(|v| v == verb))
    }

    /// The server's Table columns, as last learned (none before the first list).
    pub fn columns(&self) -> Arc<[ColumnDefinition]> {
        self.columns.read().clone()
    }

    /// Keeps the columns a Table answer carried, when they differ from those known.
    pub fn learn_columns(&self, columns: &[ColumnDefinition]) {
        if *self.columns.read().as_ref() != *columns {
            *self.columns.write() = Arc::from(columns);
        }
    }

    fn group_prefix(&self) -> String {
        match self.group.is_empty() {
            true => format!("/api/{}", self.version),
            false => format!("/apis/{}/{}", self.group, self.version),
        }
    }

    fn list_path(&self, namespace: Option<&str>) -> String {
        match namespace {
            Some(ns) if self.namespaced => {
                format!("{}/namespaces/{ns}/{}", self.group_prefix(), self.plural)
            }
            _ => format!("{}/{}", self.group_prefix(), self.plural),
        }
    }
}

/// The same resource: group, version and plural (what discovery says of it may change).
impl PartialEq for ApiResource {
    fn eq(&self, other: &Self) -> bool {
        (&self.group, &self.version, &self.plural) == (&other.group, &other.version, &other.plural)
    }
}

impl Eq for ApiResource {}

impl Hash for ApiResource {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (&self.group, &self.version, &self.plural).hash(state);
    }
}

/// What a table, informer or command shows: a kind with a hand-written projection, or a
/// discovered resource kept as a [`GenericObject`](super::GenericObject).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Kind {
    BuiltIn(ResourceKind),
    Api(Arc<ApiResource>),
}

impl From<ResourceKind> for Kind {
    fn from(kind: ResourceKind) -> Self {
        Self::BuiltIn(kind)
    }
}

impl PartialEq<ResourceKind> for Kind {
    fn eq(&self, other: &ResourceKind) -> bool {
        *self == Kind::BuiltIn(*other)
    }
}

impl Kind {
    /// The kind of a discovered resource: its hand-written projection's when it has one.
    pub fn of(resource: Arc<ApiResource>) -> Self {
        match resource.built_in() {
            Some(kind) => Self::BuiltIn(kind),
            None => Self::Api(resource),
        }
    }

    /// The built-in kind, if this is one.
    pub fn built_in(&self) -> Option<ResourceKind> {
        match self {
            Self::BuiltIn(kind) => Some(*kind),
            Self::Api(_) => None,
        }
    }

    /// The `kind` field (`Pod`, `Widget`).
    pub fn kind(&self) -> &str {
        match self {
            Self::BuiltIn(k) => k.kind(),
            Self::Api(r) => &r.kind,
        }
    }

    pub fn group(&self) -> &str {
        match self {
            Self::BuiltIn(k) => k.group(),
            Self::Api(r) => &r.group,
        }
    }

    /// The name in URLs (`pods`, `widgets`).
    pub fn plural(&self) -> &str {
        match self {
            Self::BuiltIn(k) => k.plural(),
            Self::Api(r) => &r.plural,
        }
    }

    pub fn namespaced(&self) -> bool {
        match self {
            Self::BuiltIn(k) => k.namespaced(),
            Self::Api(r) => r.namespaced,
        }
    }

    /// The list/watch path, within `namespace` when it is namespaced and one is given.
    pub fn list_path(&self, namespace: Option<&str>) -> String {
        match self {
            Self::BuiltIn(k) => k.list_path(namespace),
            Self::Api(r) => r.list_path(namespace),
        }
    }

    /// The path of one object; a namespaced kind needs its namespace.
    pub fn object_path(&self, namespace: Option<&str>, name: &str) -> Result<String, PathError> {
        match self {
            Self::BuiltIn(k) => k.object_path(namespace, name),
            Self::Api(r) => match namespace {
                None if r.namespaced => Err(PathError::NamespaceRequired(r.plural.clone())),
                _ => Ok(format!("{}/{name}", r.list_path(namespace))),
            },
        }
    }

    /// kubectl's `-o name` prefix: `pod`, `deployment.apps`, `widget.example.com`.
    pub fn name_prefix(&self) -> String {
        let singular = self.kind().to_lowercase();
        match self.group() {
            "" => singular,
            group => format!("{singular}.{group}"),
        }
    }
}

/// The plural, with the group for resources outside the core group that have no hand-written
/// projection (`widgets.example.com`): the name a person types to get them back.
impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BuiltIn(k) => f.write_str(k.plural()),
            Self::Api(r) => f.write_str(&r.group_resource()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widgets() -> ApiResource {
        ApiResource::new(
            "example.com",
            "v1",
            "widgets",
            "widget",
            "Widget",
            true,
            vec!["wd".into()],
            vec!["all".into()],
            vec!["list".into(), "watch".into(), "get".into()],
        )
    }

    #[test]
    fn discovered_kinds_have_paths_names_and_built_ins_stay_built_in() {
        let kind = Kind::of(Arc::new(widgets()));
        assert_eq!(kind.list_path(None), "/apis/example.com/v1/widgets");
        assert_eq!(
            kind.object_path(Some("web"), "w1").unwrap(),
            "/apis/example.com/v1/namespaces/web/widgets/w1"
        );
        assert!(kind.object_path(None, "w1").is_err());
        assert_eq!(kind.name_prefix(), "widget.example.com");
        assert_eq!(kind.to_string(), "widgets.example.com");
        let pods = ApiResource::new("", "v1", "pods", "pod", "Pod", true, vec![], vec![], vec![]);
        assert_eq!(Kind::of(Arc::new(pods)), ResourceKind::Pods);
        let columns = [ColumnDefinition {
            name: "Name".into(),
            type_: "string".into(),
            format: "name".into(),
            priority: 0,
        }];
        let w = widgets();
        w.learn_columns(&columns);
        assert_eq!(&*w.columns(), &columns);
        assert!(w.listable());
    }
}
