//! Index definitions: a name, where its values come from (a label, an annotation, a
//! projection field or a JSONPath) and which kinds it applies to, turned into Indexer index
//! functions for the kinds that can answer them.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use smallvec::smallvec;

use super::jsonpath::FieldPath;
use crate::client::discovery::Discovery;
use crate::informers::indexer::{IndexFunc, IndexValues, index_func};
use crate::informers::object::Object;
use crate::resources::{
    Deployment, FieldIndex, FieldIndexes, GenericObject, Kind, KubeResource, Namespace, Node, Pod,
    ReplicaSet, ResourceKind, Secret,
};

/// A projection field an index can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IndexField {
    Namespace,
    /// The node a pod runs on (a node indexes under its own name).
    Node,
    Phase,
    /// `Kind/name` of the controlling owner.
    Owner,
    /// Every container image: one object, several values.
    Images,
}

impl IndexField {
    pub const ALL: [IndexField; 5] = [
        IndexField::Namespace,
        IndexField::Node,
        IndexField::Phase,
        IndexField::Owner,
        IndexField::Images,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Namespace => "namespace",
            Self::Node => "node",
            Self::Phase => "phase",
            Self::Owner => "owner",
            Self::Images => "images",
        }
    }
}

impl FromStr for IndexField {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| {
                let known: Vec<&str> = Self::ALL.iter().map(|f| f.as_str()).collect();
                format!("unknown field {s:?}; expected one of {}", known.join(", "))
            })
    }
}

/// Where an index takes its values from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IndexSource {
    Label(String),
    Annotation(String),
    Field(IndexField),
    /// A JSONPath into the object, evaluated when a discovered kind's object is decoded
    /// (the generic projection keeps only its values).
    Path(FieldPath),
}

impl fmt::Display for IndexSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Label(key) => write!(f, "label {key}"),
            Self::Annotation(key) => write!(f, "annotation {key}"),
            Self::Field(field) => write!(f, "field {}", field.as_str()),
            Self::Path(path) => write!(f, "field {path}"),
        }
    }
}

/// A named index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IndexDefinition {
    pub name: String,
    pub source: IndexSource,
    /// The kinds it applies to as written (`widgets.example.com`, `svc`), resolved through
    /// discovery as command names are; `None`: every kind that can answer its source.
    pub kinds: Option<Vec<String>>,
}

impl IndexDefinition {
    pub fn new(name: impl Into<String>, source: IndexSource) -> Self {
        Self {
            name: name.into(),
            source,
            kinds: None,
        }
    }

    /// The same index, on `kinds` only.
    pub fn with_kinds(mut self, kinds: Vec<String>) -> Self {
        self.kinds = Some(kinds);
        self
    }

    /// Whether `kind` gets this index: its source can have values on the kind (label indexes
    /// on every kind; annotation indexes on the projections keeping annotations, pods and
    /// every discovered kind; a projection field on the kinds whose projection has it;
    /// JSONPath on discovered kinds, whose projection evaluates it) and, when the index is
    /// scoped, one of its kinds names this one in `discovery`.
    pub fn applies_to(&self, kind: &Kind, discovery: &Discovery) -> bool {
        source_applies(&self.source, kind)
            && self.kinds.as_ref().is_none_or(|names| {
                names.iter().any(|name| {
                    discovery
                        .resolve(name)
                        .is_ok_and(|k| k.group() == kind.group() && k.plural() == kind.plural())
                })
            })
    }

    /// The Indexer function for this definition on kind `T`.
    pub fn index_func<T: Indexable>(&self) -> IndexFunc<T> {
        match self.source.clone() {
            IndexSource::Label(key) => index_func(move |obj: &T| {
                Ok(obj
                    .labels()
                    .get(&key)
                    .map(|v| smallvec![Cow::Borrowed(v)])
                    .unwrap_or_default())
            }),
            IndexSource::Annotation(key) => index_func(move |obj: &T| {
                Ok(obj
                    .annotation(&key)
                    .map(|v| smallvec![Cow::Borrowed(v)])
                    .unwrap_or_default())
            }),
            IndexSource::Field(field) => index_func(move |obj: &T| Ok(obj.field_values(field))),
            IndexSource::Path(_) => {
                let name = self.name.clone();
                index_func(move |obj: &T| Ok(obj.path_values(&name)))
            }
        }
    }
}

fn source_applies(source: &IndexSource, kind: &Kind) -> bool {
    use ResourceKind as K;
    let built_in = kind.built_in();
    match source {
        IndexSource::Label(_) => true,
        IndexSource::Annotation(_) => matches!(built_in, Some(K::Pods) | None),
        IndexSource::Field(field) => match field {
            IndexField::Namespace => kind.namespaced(),
            IndexField::Node => matches!(built_in, Some(K::Pods | K::Nodes)),
            IndexField::Phase => matches!(built_in, Some(K::Pods | K::Namespaces)),
            IndexField::Owner => {
                matches!(
                    built_in,
                    Some(K::Pods | K::Deployments | K::ReplicaSets) | None
                )
            }
            IndexField::Images => {
                matches!(built_in, Some(K::Pods | K::Deployments | K::ReplicaSets))
            }
        },
        IndexSource::Path(_) => built_in.is_none(),
    }
}

/// The definitions of `indexes` that apply to `kind` (see [`IndexDefinition::applies_to`]).
pub fn indexes_for(
    kind: &Kind,
    indexes: &[IndexDefinition],
    discovery: &Discovery,
) -> Vec<IndexDefinition> {
    indexes
        .iter()
        .filter(|d| d.applies_to(kind, discovery))
        .cloned()
        .collect()
}

/// A field index by JSONPath as a generic projection evaluates it while decoding. An object
/// the path does not fit (a member of a string...) is left out of the index and counted; the
/// first is logged, once per index, so that a path wrong for every object does not flood
/// the log.
pub struct PathIndex {
    name: String,
    path: FieldPath,
    misfits: AtomicU64,
}

impl PathIndex {
    pub fn new(name: impl Into<String>, path: FieldPath) -> Self {
        Self {
            name: name.into(),
            path,
            misfits: AtomicU64::new(0),
        }
    }

    /// Objects left out of the index because the path does not fit them.
    pub fn misfits(&self) -> u64 {
        self.misfits.load(Ordering::Relaxed)
    }
}

impl FieldIndex for PathIndex {
    fn name(&self) -> &str {
        &self.name
    }

    fn leading_names(&self) -> Option<Vec<String>> {
        Some(self.path.leading_names())
    }

    fn values(&self, object: &serde_json::Value) -> Option<Vec<String>> {
        match self.path.values(object) {
            Ok(values) => Some(values),
            Err(error) => {
                if self.misfits.fetch_add(1, Ordering::Relaxed) == 0 {
                    let name = object
                        .pointer("/metadata/name")
                        .and_then(|n| n.as_str())
                        .unwrap_or_default();
                    tracing::warn!(
                        index = %self.name,
                        path = %self.path,
                        object = name,
                        %error,
                        "an object left out of a field index: its path does not fit \
                         (logged for the first such object only)"
                    );
                }
                None
            }
        }
    }
}

/// The JSONPath indexes among `definitions`, for a generic projection to evaluate.
pub fn path_indexes(definitions: &[IndexDefinition]) -> Vec<Arc<PathIndex>> {
    definitions
        .iter()
        .filter_map(|d| match &d.source {
            IndexSource::Path(path) => Some(Arc::new(PathIndex::new(&d.name, path.clone()))),
            _ => None,
        })
        .collect()
}

/// `indexes` as the decoder takes them.
pub fn decode_fields(indexes: &[Arc<PathIndex>]) -> FieldIndexes {
    indexes
        .iter()
        .map(|i| i.clone() as Arc<dyn FieldIndex>)
        .collect()
}

/// Why `:index` cannot add the index it was given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexCommandError {
    #[error("index NAME label=KEY | annotation=KEY | field=JSONPATH [kinds=a,b]")]
    Usage,
    #[error("{0:?} is not a source: label=KEY, annotation=KEY or field=JSONPATH")]
    Source(String),
    #[error("empty {0}")]
    Empty(&'static str),
    #[error("field {field:?}: {message}")]
    Field { field: String, message: String },
    #[error("{0}")]
    HandWritten(HandWrittenKind),
}

/// A JSONPath index scoped to a kind with a hand-written projection, which keeps no
/// object to evaluate it on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{kind} have a hand-written projection, which does not evaluate JSONPath: index them by \
     label, annotation or a projection field (namespace, node, phase, owner, images)"
)]
pub struct HandWrittenKind {
    pub kind: String,
}

/// Refuses `kinds` naming a kind with a hand-written projection for a JSONPath `source`:
/// such an index would never be offered anywhere.
pub fn check_path_kinds(source: &IndexSource, kinds: &[String]) -> Result<(), HandWrittenKind> {
    if !matches!(source, IndexSource::Path(_)) {
        return Ok(());
    }
    match kinds.iter().find_map(|k| k.parse::<ResourceKind>().ok()) {
        Some(kind) => Err(HandWrittenKind {
            kind: kind.plural().to_string(),
        }),
        None => Ok(()),
    }
}

impl IndexDefinition {
    /// The index `:index` describes: `NAME label=KEY`, `NAME annotation=KEY`,
    /// `NAME field=JSONPATH` (or a projection field's name), each optionally followed by
    /// `kinds=a,b`. A JSONPath may hold spaces (`[?(@.type == "Ready")]`).
    pub fn parse_command(args: &str) -> Result<Self, IndexCommandError> {
        let args = args.trim();
        let (name, rest) = args
            .split_once(char::is_whitespace)
            .ok_or(IndexCommandError::Usage)?;
        let (source, kinds) = match rest.rsplit_once(" kinds=") {
            Some((source, kinds)) => (source.trim(), Some(kinds.trim())),
            None => (rest.trim(), None),
        };
        let (what, value) = source
            .split_once('=')
            .ok_or_else(|| IndexCommandError::Source(source.to_string()))?;
        let value = value.trim();
        if value.is_empty() {
            return Err(IndexCommandError::Empty("value"));
        }
        let source = match what.trim() {
            "label" => IndexSource::Label(value.to_string()),
            "annotation" => IndexSource::Annotation(value.to_string()),
            "field" => match value.parse::<IndexField>() {
                Ok(field) => IndexSource::Field(field),
                Err(_) => IndexSource::Path(FieldPath::parse(value).map_err(|e| {
                    IndexCommandError::Field {
                        field: value.to_string(),
                        message: e.to_string(),
                    }
                })?),
            },
            other => return Err(IndexCommandError::Source(other.to_string())),
        };
        let definition = IndexDefinition::new(name, source);
        match kinds {
            None => Ok(definition),
            Some(kinds) => {
                let kinds: Vec<String> = kinds
                    .split(',')
                    .map(str::trim)
                    .filter(|k| !k.is_empty())
                    .map(str::to_string)
                    .collect();
                if kinds.is_empty() {
                    return Err(IndexCommandError::Empty("kinds"));
                }
                check_path_kinds(&definition.source, &kinds)
                    .map_err(IndexCommandError::HandWritten)?;
                Ok(definition.with_kinds(kinds))
            }
        }
    }
}

/// The indexes every kind gets unless the configuration says otherwise (what the built-in
/// `config/kscope.yaml` says; a test keeps the two equal): namespace, node,
/// phase, owner, and `app` = label app.
pub fn default_index_definitions() -> Vec<IndexDefinition> {
    vec![
        IndexDefinition::new("namespace", IndexSource::Field(IndexField::Namespace)),
        IndexDefinition::new("node", IndexSource::Field(IndexField::Node)),
        IndexDefinition::new("phase", IndexSource::Field(IndexField::Phase)),
        IndexDefinition::new("owner", IndexSource::Field(IndexField::Owner)),
        IndexDefinition::new("app", IndexSource::Label("app".into())),
    ]
}

/// The index functions for `definitions` on kind `T`, ready for `Indexer::new`.
pub fn index_funcs<T: Indexable>(definitions: &[IndexDefinition]) -> Vec<(String, IndexFunc<T>)> {
    definitions
        .iter()
        .map(|d| (d.name.clone(), d.index_func::<T>()))
        .collect()
}

/// A kind whose objects can be indexed by annotation and by [`IndexField`].
pub trait Indexable: KubeResource {
    /// An annotation's value, for kinds that keep annotations.
    fn annotation(&self, _key: &str) -> Option<&str> {
        None
    }

    /// The values of `field`; none where the kind has no such field.
    fn field_values(&self, field: IndexField) -> IndexValues<'_>;

    /// The values of the JSONPath index `index`, for kinds that keep them.
    fn path_values(&self, _index: &str) -> IndexValues<'_> {
        IndexValues::new()
    }
}

fn one(value: Option<&str>) -> IndexValues<'_> {
    value
        .filter(|v| !v.is_empty())
        .map(|v| smallvec![Cow::Borrowed(v)])
        .unwrap_or_default()
}

fn owner(obj: &impl KubeResource) -> IndexValues<'_> {
    one(obj.controller_owner_key())
}

fn images<'a>(images: impl Iterator<Item = &'a str>) -> IndexValues<'a> {
    let mut values: IndexValues<'a> = IndexValues::new();
    for image in images {
        if !values.iter().any(|v| v == image) {
            values.push(Cow::Borrowed(image));
        }
    }
    values
}

impl Indexable for Pod {
    fn annotation(&self, key: &str) -> Option<&str> {
        Pod::annotation(self, key)
    }

    fn field_values(&self, field: IndexField) -> IndexValues<'_> {
        match field {
            IndexField::Namespace => one(self.namespace()),
            IndexField::Node => one(self.node_name()),
            IndexField::Phase => one(self.phase()),
            IndexField::Owner => owner(self),
            IndexField::Images => images(
                self.init_containers()
                    .chain(self.containers())
                    .map(|c| c.image),
            ),
        }
    }
}

impl Indexable for Node {
    fn field_values(&self, field: IndexField) -> IndexValues<'_> {
        match field {
            IndexField::Node => one(Some(self.name())),
            _ => IndexValues::new(),
        }
    }
}

impl Indexable for Namespace {
    fn field_values(&self, field: IndexField) -> IndexValues<'_> {
        match field {
            IndexField::Phase => one(self.phase()),
            _ => IndexValues::new(),
        }
    }
}

impl Indexable for Deployment {
    fn field_values(&self, field: IndexField) -> IndexValues<'_> {
        match field {
            IndexField::Namespace => one(self.namespace()),
            IndexField::Owner => owner(self),
            IndexField::Images => images(self.containers().map(|c| c.image)),
            _ => IndexValues::new(),
        }
    }
}

impl Indexable for ReplicaSet {
    fn field_values(&self, field: IndexField) -> IndexValues<'_> {
        match field {
            IndexField::Namespace => one(self.namespace()),
            IndexField::Owner => owner(self),
            IndexField::Images => images(self.containers().map(|c| c.image)),
            _ => IndexValues::new(),
        }
    }
}

impl Indexable for Secret {
    fn annotation(&self, key: &str) -> Option<&str> {
        Secret::annotation(self, key)
    }

    fn field_values(&self, field: IndexField) -> IndexValues<'_> {
        match field {
            IndexField::Namespace => one(self.namespace()),
            _ => IndexValues::new(),
        }
    }
}

/// A discovered kind keeps its annotations and owners, whatever else it has.
impl Indexable for GenericObject {
    fn annotation(&self, key: &str) -> Option<&str> {
        GenericObject::annotation(self, key)
    }

    fn field_values(&self, field: IndexField) -> IndexValues<'_> {
        match field {
            IndexField::Namespace => one(self.namespace()),
            IndexField::Owner => owner(self),
            _ => IndexValues::new(),
        }
    }

    fn path_values(&self, index: &str) -> IndexValues<'_> {
        let mut values = IndexValues::new();
        for value in GenericObject::field_values(self, index) {
            if !values.iter().any(|v| v == value) {
                values.push(Cow::Borrowed(value));
            }
        }
        values
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::informers::indexer::IndexerWriter;
    use crate::resources::decode;

    fn fixture_pod() -> Pod {
        decode(include_bytes!("../../tests/fixtures/pod-realistic.json")).unwrap()
    }

    #[test]
    fn default_indexes_on_a_realistic_pod() {
        let pod = fixture_pod();
        let indexer = IndexerWriter::new(index_funcs::<Pod>(&default_index_definitions())).unwrap();
        indexer.add(Arc::new(pod.clone())).unwrap();
        let values = |name: &str| {
            let mut v: Vec<String> = indexer
                .list_index_values(name)
                .unwrap()
                .iter()
                .map(|s| s.to_string())
                .collect();
            v.sort();
            v
        };
        assert_eq!(values("namespace"), [pod.namespace().unwrap().to_string()]);
        assert_eq!(values("node"), [pod.node_name().unwrap().to_string()]);
        assert_eq!(values("phase"), ["Running"]);
        let (kind, name) = pod.controller_owner().unwrap();
        assert_eq!(values("owner"), [format!("{kind}/{name}")]);
        assert_eq!(values("app"), [pod.label("app").unwrap().to_string()]);
    }

    #[test]
    fn images_index_is_multi_valued_and_annotations_index() {
        let pod = fixture_pod();
        let images: Vec<String> = pod
            .field_values(IndexField::Images)
            .iter()
            .map(|v| v.to_string())
            .collect();
        assert!(images.len() >= 2, "{images:?}");
        let (key, value) = pod.annotations().iter().next().unwrap();
        let def = IndexDefinition::new("a", IndexSource::Annotation(key.to_string()));
        let values = def.index_func::<Pod>()(&pod).unwrap();
        assert_eq!(values.as_slice(), [Cow::Borrowed(value)]);
    }

    #[test]
    fn index_commands_parse() {
        let parse = IndexDefinition::parse_command;
        assert_eq!(
            parse("team label=team"),
            Ok(IndexDefinition::new(
                "team",
                IndexSource::Label("team".into())
            ))
        );
        assert_eq!(
            parse("c annotation=example.com/commit kinds=svc, widgets"),
            Ok(
                IndexDefinition::new("c", IndexSource::Annotation("example.com/commit".into()))
                    .with_kinds(vec!["svc".into(), "widgets".into()])
            )
        );
        let ready =
            parse(r#"ready field=.status.conditions[?(@.type == "Ready")].status kinds=widgets"#)
                .unwrap();
        assert!(
            matches!(&ready.source, IndexSource::Path(p) if p.as_str().contains("== \"Ready\""))
        );
        assert_eq!(ready.kinds, Some(vec!["widgets".to_string()]));
        assert_eq!(
            parse("n field=node").map(|d| d.source),
            Ok(IndexSource::Field(IndexField::Node))
        );
        assert_eq!(parse("team"), Err(IndexCommandError::Usage));
        assert!(matches!(
            parse("t colour=x"),
            Err(IndexCommandError::Source(_))
        ));
        assert!(matches!(
            parse("t field=.spec["),
            Err(IndexCommandError::Field { .. })
        ));
        assert_eq!(parse("t label="), Err(IndexCommandError::Empty("value")));
        assert_eq!(
            parse("t label=x kinds=,"),
            Err(IndexCommandError::Empty("kinds"))
        );
        assert!(matches!(
            parse("t field=.spec.nodeName kinds=widgets,po"),
            Err(IndexCommandError::HandWritten(HandWrittenKind { kind })) if kind == "pods"
        ));
        assert!(parse("t label=x kinds=po").is_ok());
    }

    #[test]
    fn index_field_names_parse() {
        assert_eq!("owner".parse::<IndexField>(), Ok(IndexField::Owner));
        assert!(
            "nodes"
                .parse::<IndexField>()
                .unwrap_err()
                .contains("expected one of")
        );
    }
}
