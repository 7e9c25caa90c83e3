//! Index definitions: a name, where its values come from (a label, an annotation, a
//! projection field or a JSONPath) and which kinds it applies to, turned into Indexer index
//! functions for the kinds that can answer them.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;
use smallvec::smallvec;

use super::jsonpath::FieldPath;
use super::owner_index::{OWNER_UID_INDEX, Owned, owner_uid_index};
use super::query::Term;
use kscope_client::discovery::Discovery;
use kscope_informers::indexer::{IndexFunc, IndexValues, index_func};
use kscope_informers::object::Object;
use kscope_resources::{
    Deployment, FieldIndex, FieldIndexes, GenericObject, Kind, KubeResource,
    LAST_APPLIED_ANNOTATION, Namespace, Node, Pod, Reach, ReplicaSet, ResourceKind, Secret,
};

/// A projection field an index can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IndexField {
    Namespace,
    /// The node a pod runs on (a node indexes under its own name).
    Node,
    Phase,
    /// kubectl's STATUS column of a pod (`CrashLoopBackOff`, `Init:0/1`, `Terminating`...)
    /// or a node (`Ready`, `NotReady`): what `/crash` finds, as an index (`status=...`).
    Status,
    /// `Kind/name` of the controlling owner.
    Owner,
    /// Every container image: one object, several values.
    Images,
}

impl IndexField {
    pub const ALL: [IndexField; 6] = [
        IndexField::Namespace,
        IndexField::Node,
        IndexField::Phase,
        IndexField::Status,
        IndexField::Owner,
        IndexField::Images,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Namespace => "namespace",
            Self::Node => "node",
            Self::Phase => "phase",
            Self::Status => "status",
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
    /// A JSONPath into the object, evaluated when the object is decoded (the projection,
    /// generic or hand-written, keeps only its values). Never into a Secret's values.
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
    /// JSONPath on every kind, its projection evaluating it while decoding, except Secrets
    /// when the path reads their values) and, when the index is scoped, one of its kinds
    /// names this one in `discovery`.
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
            IndexField::Status => matches!(built_in, Some(K::Pods | K::Nodes)),
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
        IndexSource::Path(path) => match built_in {
            Some(K::Secrets) => !reads_secret_values(&path.reach()),
            _ => true,
        },
    }
}

/// Whether `reach` reads any of a Secret's values: its `data`, its `stringData` or the
/// last-applied annotation, which holds them too.
fn reads_secret_values(reach: &Reach) -> bool {
    reach.reads(&["data"])
        || reach.reads(&["stringData"])
        || reach.reads(&["metadata", "annotations", LAST_APPLIED_ANNOTATION])
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

/// The term keeping the objects of a set of `namespaces` (`-n a,b`, a saved set): an `in` on
/// whichever of `indexes` reads the namespace field, so that the set's objects are the
/// union of a lookup per member, never a scan; `None` when no index reads it.
pub fn namespaces_term(namespaces: &[String], indexes: &[IndexDefinition]) -> Option<Term> {
    let index = indexes
        .iter()
        .find(|d| d.source == IndexSource::Field(IndexField::Namespace))?;
    Some(Term::In {
        index: index.name.clone(),
        values: namespaces.to_vec(),
    })
}

/// A field index by JSONPath as a projection evaluates it while decoding. An object
/// the path does not fit (a member of a string...) is left out of the index and counted, by
/// its key; the first is logged, once per index, so that a path wrong for every object does
/// not flood the log.
pub struct PathIndex {
    name: String,
    path: FieldPath,
    /// What the path reads, worked out once.
    reach: Reach,
    /// Keys of the objects the path did not fit when they were last decoded (an object
    /// that fits again leaves); at most [`MISFITS_KEPT`].
    misfits: Mutex<HashSet<String>>,
    logged: AtomicBool,
}

/// Misfit keys a path index keeps at most: a path wrong for every object of a large kind
/// costs no more than this many keys.
pub const MISFITS_KEPT: usize = 100_000;

/// How many objects of a store a path index leaves out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Misfits {
    pub count: usize,
    /// More were left out than [`MISFITS_KEPT`]: `count` is a floor.
    pub more: bool,
}

/// The misfits of several indexes (of one name, on several kinds) together.
impl std::iter::Sum for Misfits {
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Self::default(), |all, m| Self {
            count: all.count + m.count,
            more: all.more || m.more,
        })
    }
}

impl PathIndex {
    pub fn new(name: impl Into<String>, path: FieldPath) -> Self {
        Self {
            name: name.into(),
            reach: path.reach(),
            path,
            misfits: Mutex::default(),
            logged: AtomicBool::new(false),
        }
    }

    /// Objects left out of the index because the path does not fit them, of those for which
    /// `held` says the store holds their key (a deleted object's key may linger here until
    /// the kept keys are full, when such keys are dropped).
    pub fn misfits(&self, held: impl Fn(&str) -> bool) -> Misfits {
        let mut keys = self.misfits.lock();
        let more = keys.len() >= MISFITS_KEPT;
        if more {
            keys.retain(|k| held(k));
        }
        Misfits {
            count: keys.iter().filter(|k| held(k)).count(),
            more: more && keys.len() >= MISFITS_KEPT,
        }
    }
}

/// An object's store key (`namespace/name`, or the name of a cluster-scoped one), from
/// what the decode reached of its metadata.
fn object_key(object: &serde_json::Value) -> String {
    let text = |path: &str| object.pointer(path).and_then(|v| v.as_str());
    let name = text("/metadata/name").unwrap_or_default();
    match text("/metadata/namespace") {
        Some(namespace) if !namespace.is_empty() => format!("{namespace}/{name}"),
        _ => name.to_string(),
    }
}

impl FieldIndex for PathIndex {
    fn name(&self) -> &str {
        &self.name
    }

    fn reach(&self) -> &Reach {
        &self.reach
    }

    fn values(&self, object: &serde_json::Value) -> Option<Vec<String>> {
        match self.path.values(object) {
            Ok(values) => {
                let mut misfits = self.misfits.lock();
                if !misfits.is_empty() {
                    misfits.remove(&object_key(object));
                }
                Some(values)
            }
            Err(error) => {
                let key = object_key(object);
                if !self.logged.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        index = %self.name,
                        path = %self.path,
                        object = key,
                        %error,
                        "an object left out of a field index: its path does not fit \
                         (logged for the first such object only)"
                    );
                }
                let mut misfits = self.misfits.lock();
                if misfits.len() < MISFITS_KEPT {
                    misfits.insert(key);
                }
                None
            }
        }
    }
}

/// The JSONPath indexes among `definitions`, for a projection to evaluate.
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
    SecretValues(SecretValuesPath),
}

/// A JSONPath index on Secrets whose path reads their values, which kscope never reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{path}: a field index on secrets may not read their values (data, stringData or the \
     last-applied annotation); index them by label, annotation or a metadata path"
)]
pub struct SecretValuesPath {
    pub path: String,
}

/// Refuses a JSONPath `source` that reads a Secret's values when `kinds` names secrets:
/// such an index would never be offered there.
pub fn check_path_kinds(source: &IndexSource, kinds: &[String]) -> Result<(), SecretValuesPath> {
    let IndexSource::Path(path) = source else {
        return Ok(());
    };
    let secrets = kinds
        .iter()
        .any(|k| k.parse::<ResourceKind>() == Ok(ResourceKind::Secrets));
    if secrets && reads_secret_values(&path.reach()) {
        return Err(SecretValuesPath {
            path: path.to_string(),
        });
    }
    Ok(())
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
                    .map_err(IndexCommandError::SecretValues)?;
                Ok(definition.with_kinds(kinds))
            }
        }
    }
}

/// The indexes every kind gets unless the configuration says otherwise (what the built-in
/// `config/kscope.yaml` says; a test keeps the two equal): namespace, node,
/// phase, status, owner, and `app` = label app.
pub fn default_index_definitions() -> Vec<IndexDefinition> {
    vec![
        IndexDefinition::new("namespace", IndexSource::Field(IndexField::Namespace)),
        IndexDefinition::new("node", IndexSource::Field(IndexField::Node)),
        IndexDefinition::new("phase", IndexSource::Field(IndexField::Phase)),
        IndexDefinition::new("status", IndexSource::Field(IndexField::Status)),
        IndexDefinition::new("owner", IndexSource::Field(IndexField::Owner)),
        IndexDefinition::new("app", IndexSource::Label("app".into())),
    ]
}

/// The index functions for `definitions` on kind `T`, ready for `Indexer::new`, and the
/// owner-uid index every store gets (not a definition: no one filters by a uid, and the
/// index browser does not list it), which makes ownership trees hash lookups.
pub fn index_funcs<T: Indexable>(definitions: &[IndexDefinition]) -> Vec<(String, IndexFunc<T>)> {
    definitions
        .iter()
        .map(|d| (d.name.clone(), d.index_func::<T>()))
        .chain([(OWNER_UID_INDEX.to_string(), owner_uid_index::<T>())])
        .collect()
}

/// A kind whose objects can be indexed by annotation, by [`IndexField`], by JSONPath and by
/// their owners' uids.
pub trait Indexable: Owned {
    /// An annotation's value, for kinds that keep annotations.
    fn annotation(&self, _key: &str) -> Option<&str> {
        None
    }

    /// The values of `field`; none where the kind has no such field.
    fn field_values(&self, field: IndexField) -> IndexValues<'_>;

    /// The values of the JSONPath index `index`, as the object's projection kept them when
    /// it was decoded.
    fn path_values(&self, index: &str) -> IndexValues<'_>;
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

/// `values`, each once, in their first order (an index holds an object once per value).
fn distinct<'a>(values: impl Iterator<Item = &'a str>) -> IndexValues<'a> {
    let mut out: IndexValues<'a> = IndexValues::new();
    for value in values {
        if !out.iter().any(|v| v == value) {
            out.push(Cow::Borrowed(value));
        }
    }
    out
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
            IndexField::Status => one(Some(self.status())),
            IndexField::Owner => owner(self),
            IndexField::Images => distinct(
                self.init_containers()
                    .chain(self.containers())
                    .map(|c| c.image),
            ),
        }
    }

    fn path_values(&self, index: &str) -> IndexValues<'_> {
        distinct(self.indexed_values(index))
    }
}

impl Indexable for Node {
    fn field_values(&self, field: IndexField) -> IndexValues<'_> {
        match field {
            IndexField::Node => one(Some(self.name())),
            IndexField::Status => one(Some(self.status())),
            _ => IndexValues::new(),
        }
    }

    fn path_values(&self, index: &str) -> IndexValues<'_> {
        distinct(self.indexed_values(index))
    }
}

impl Indexable for Namespace {
    fn field_values(&self, field: IndexField) -> IndexValues<'_> {
        match field {
            IndexField::Phase => one(self.phase()),
            _ => IndexValues::new(),
        }
    }

    fn path_values(&self, index: &str) -> IndexValues<'_> {
        distinct(self.indexed_values(index))
    }
}

impl Indexable for Deployment {
    fn field_values(&self, field: IndexField) -> IndexValues<'_> {
        match field {
            IndexField::Namespace => one(self.namespace()),
            IndexField::Owner => owner(self),
            IndexField::Images => distinct(self.containers().map(|c| c.image)),
            _ => IndexValues::new(),
        }
    }

    fn path_values(&self, index: &str) -> IndexValues<'_> {
        distinct(self.indexed_values(index))
    }
}

impl Indexable for ReplicaSet {
    fn field_values(&self, field: IndexField) -> IndexValues<'_> {
        match field {
            IndexField::Namespace => one(self.namespace()),
            IndexField::Owner => owner(self),
            IndexField::Images => distinct(self.containers().map(|c| c.image)),
            _ => IndexValues::new(),
        }
    }

    fn path_values(&self, index: &str) -> IndexValues<'_> {
        distinct(self.indexed_values(index))
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

    fn path_values(&self, index: &str) -> IndexValues<'_> {
        distinct(self.indexed_values(index))
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
        distinct(GenericObject::field_values(self, index))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use kscope_informers::indexer::IndexerWriter;
    use kscope_resources::{decode, decoding_with};

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
        assert_eq!(values("status"), [pod.status().to_string()]);
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

    const FIXTURE: &[u8] = include_bytes!("../../tests/fixtures/pod-realistic.json");

    #[test]
    fn misfits_are_counted_by_object_and_leave_once_the_path_fits() {
        let index = PathIndex::new("zone", FieldPath::parse(".spec.zone.name").unwrap());
        let object = |zone: serde_json::Value| serde_json::json!({"metadata": {"namespace": "web", "name": "a"}, "spec": {"zone": zone}});
        let flat = object(serde_json::json!("flat"));
        // Decoded on every event and at every relist: still one object.
        for _ in 0..3 {
            assert_eq!(index.values(&flat), None);
        }
        let cluster_scoped = serde_json::json!({"metadata": {"name": "n1"}, "spec": {"zone": 7}});
        assert_eq!(index.values(&cluster_scoped), None);
        let held = |key: &str| ["web/a", "n1"].contains(&key);
        assert_eq!(
            index.misfits(held),
            Misfits {
                count: 2,
                more: false
            }
        );
        // Deleted from the store: not counted.
        assert_eq!(index.misfits(|key| key == "web/a").count, 1);
        // Its path fits now: it leaves.
        let nested = object(serde_json::json!({"name": "z1"}));
        assert_eq!(index.values(&nested), Some(vec!["z1".to_string()]));
        assert_eq!(index.misfits(held).count, 1);
    }

    fn path_definitions(paths: &[(&str, &str)]) -> Vec<IndexDefinition> {
        paths
            .iter()
            .map(|(name, path)| {
                IndexDefinition::new(*name, IndexSource::Path(FieldPath::parse(path).unwrap()))
            })
            .collect()
    }

    fn values_of<T: Indexable>(obj: &T, index: &str) -> Vec<String> {
        obj.path_values(index)
            .iter()
            .map(|v| v.to_string())
            .collect()
    }

    #[test]
    fn path_indexes_on_a_pod_are_evaluated_while_decoding() {
        let definitions = path_definitions(&[
            ("images", ".spec.containers[*].image"),
            ("ready", r#".status.conditions[?(@.type=="Ready")].status"#),
            ("sa", ".spec.serviceAccountName"),
            ("qos", "{.status.qosClass}"),
            ("app", ".metadata.labels.app"),
            ("ports", ".spec.containers[0].ports[*].containerPort"),
            ("misfit", ".spec.nodeName.zone"),
        ]);
        let paths = path_indexes(&definitions);
        let fields = decode_fields(&paths);
        // Through kscope's decoder, and through serde_json's (its fallback).
        let pods: [Pod; 2] = decoding_with(Some(&fields), || {
            [
                decode::<Pod>(FIXTURE).unwrap(),
                serde_json::from_slice::<Pod>(FIXTURE).unwrap(),
            ]
        });
        let plain: Pod = decode(FIXTURE).unwrap();
        for pod in &pods {
            assert_eq!(
                values_of(pod, "images"),
                [
                    "registry.example.com/payments/checkout-api:2.14.3",
                    "docker.io/istio/proxyv2:1.22.3"
                ]
            );
            assert_eq!(values_of(pod, "ready"), ["True"]);
            assert_eq!(values_of(pod, "sa"), ["checkout-api"]);
            assert_eq!(values_of(pod, "qos"), ["Burstable"]);
            assert_eq!(values_of(pod, "app"), ["checkout-api"]);
            assert_eq!(values_of(pod, "ports"), ["8080", "9090"]);
            assert!(values_of(pod, "misfit").is_empty());
            // The rest of the projection is what it is without indexes.
            assert_eq!(pod.name(), plain.name());
            assert_eq!(pod.status(), plain.status());
            assert_eq!(
                pod.annotations().iter().count(),
                plain.annotations().iter().count()
            );
            assert_eq!(pod.node_name(), plain.node_name());
        }
        // Decoded twice, one object: one misfit, while the store holds it.
        let held =
            |key: &str| key == format!("{}/{}", plain.namespace().unwrap_or(""), plain.name());
        assert_eq!(
            paths[6].misfits(held),
            Misfits {
                count: 1,
                more: false
            }
        );
        assert_eq!(
            paths[6].misfits(|_| false).count,
            0,
            "not in the store, not counted"
        );
        assert!(values_of(&plain, "images").is_empty());
        // The Indexer answers from them.
        let indexer = IndexerWriter::new(index_funcs::<Pod>(&definitions)).unwrap();
        indexer.add(Arc::new(pods[0].clone())).unwrap();
        let mut images: Vec<String> = indexer
            .list_index_values("images")
            .unwrap()
            .iter()
            .map(|s| s.to_string())
            .collect();
        images.sort();
        assert_eq!(images.len(), 2);
    }

    /// What a path reads of an object, read alone, selects what the whole object gives.
    #[test]
    fn a_path_selects_the_same_from_what_it_reaches_as_from_the_whole_object() {
        let whole: serde_json::Value = serde_json::from_slice(FIXTURE).unwrap();
        for path in [
            ".spec.containers[*].image",
            ".spec.containers[-1].name",
            ".spec.containers[0:1].env[*].name",
            r#".status.conditions[?(@.type=="Ready")].status"#,
            r#".spec.containers[?(@.name=="app")].resources.limits.memory"#,
            ".metadata.labels['app.kubernetes.io/name']",
            ".metadata.ownerReferences[*]['kind','name']",
            ".spec.volumes[*].projected.sources[*].configMap.items[*].key",
            "..fieldPath",
            ".spec.*.podAntiAffinity",
            ".status",
            ".spec.nodeName.zone",
            ".spec.containers.image",
            ".metadata.missing.deeper",
        ] {
            let path = FieldPath::parse(path).unwrap();
            let reached = kscope_resources::field_index_reached(FIXTURE, &path.reach()).unwrap();
            assert_eq!(path.values(&reached), path.values(&whole), "{path}");
            if !matches!(path.reach(), Reach::Whole) {
                assert!(
                    reached.to_string().len() < whole.to_string().len() / 2,
                    "{path}"
                );
            }
        }
    }

    #[test]
    fn a_secret_path_index_reads_metadata_never_values() {
        let secret = br#"{"kind":"Secret","apiVersion":"v1","type":"Opaque",
            "metadata":{"name":"db","annotations":{"team":"payments",
            "kubectl.kubernetes.io/last-applied-configuration":"{\"data\":{\"password\":\"aHVudGVyMg==\"}}"}},
            "data":{"password":"aHVudGVyMg=="},"stringData":{"token":"hunter2"}}"#;
        let definitions =
            path_definitions(&[("team", ".metadata.annotations.team"), ("type", ".type")]);
        let secrets = Kind::BuiltIn(ResourceKind::Secrets);
        let discovery = Discovery::default();
        for d in &definitions {
            assert!(d.applies_to(&secrets, &discovery), "{}", d.name);
        }
        for values in [
            ".data.password",
            ".stringData",
            "..password",
            ".metadata.annotations",
        ] {
            let d = &path_definitions(&[("v", values)])[0];
            assert!(!d.applies_to(&secrets, &discovery), "{values}");
            assert!(d.applies_to(&Kind::BuiltIn(ResourceKind::Pods), &discovery));
        }
        let paths = path_indexes(&definitions);
        let reach = paths
            .iter()
            .fold(Reach::Nothing, |r, p| r.union(p.reach().clone()));
        let reached = kscope_resources::field_index_reached(secret, &reach).unwrap();
        let text = reached.to_string();
        assert!(
            !text.contains("aHVudGVyMg") && !text.contains("hunter2"),
            "{text}"
        );
        let fields = decode_fields(&paths);
        let decoded: Secret = decoding_with(Some(&fields), || decode(secret).unwrap());
        assert_eq!(values_of(&decoded, "team"), ["payments"]);
        assert_eq!(values_of(&decoded, "type"), ["Opaque"]);
        let debug = format!("{decoded:?}");
        assert!(
            !debug.contains("aHVudGVyMg") && !debug.contains("hunter2"),
            "{debug}"
        );
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
        assert!(parse("t field=.spec.nodeName kinds=widgets,po").is_ok());
        for values in [
            ".data.token",
            ".stringData",
            "{.data['ca.crt']}",
            "$..token",
            ".*",
            ".metadata.annotations",
            ".metadata['annotations'][*]",
            ".metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']",
        ] {
            assert!(
                matches!(
                    parse(&format!("t field={values} kinds=secret")),
                    Err(IndexCommandError::SecretValues(SecretValuesPath { path })) if path == values
                ),
                "{values}"
            );
            assert!(parse(&format!("t field={values} kinds=po")).is_ok());
        }
        assert!(parse("t field=.metadata.annotations.team kinds=secrets").is_ok());
        assert!(parse("t field=.type kinds=secrets").is_ok());
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
