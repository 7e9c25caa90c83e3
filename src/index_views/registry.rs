//! An Indexer together with the definitions of its indexes, so that indexes can be added while
//! it runs and a live view can evaluate a query's terms on one object with the very functions
//! that built the indexes.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::RwLock;

use super::definitions::{IndexDefinition, IndexSource, Indexable, index_funcs};
use super::query::{Query, QueryError, Term};
use super::usage::UsageFeed;
use kscope_informers::indexer::{IndexFunc, Indexer, IndexerError, IndexerWriter, KeySet};
use kscope_resources::{BuiltIn, Kind};

/// One value of an index and how many objects have it: a line of the index browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueCount {
    pub value: Arc<str>,
    pub count: usize,
}

impl ValueCount {
    /// Counts of the same values read from several stores (a table merged from several
    /// kinds or clusters), added up and ordered as one store's are.
    pub fn summed(counts: impl IntoIterator<Item = ValueCount>) -> Vec<ValueCount> {
        let mut sums: HashMap<Arc<str>, usize> = HashMap::new();
        for count in counts {
            *sums.entry(count.value).or_default() += count.count;
        }
        let mut counts: Vec<ValueCount> = sums
            .into_iter()
            .map(|(value, count)| ValueCount { value, count })
            .collect();
        sort_by_count(&mut counts);
        counts
    }
}

/// Most frequent first, ties by value: the index browser's order.
fn sort_by_count(counts: &mut [ValueCount]) {
    counts.sort_unstable_by(|a, b| b.count.cmp(&a.count).then(a.value.cmp(&b.value)));
}

/// An Indexer and the definitions of its indexes, for a store of one kind. Cloning is cheap
/// and shares both.
pub struct IndexRegistry<T> {
    kind: Kind,
    indexer: Indexer<T>,
    definitions: Arc<RwLock<Vec<IndexDefinition>>>,
    /// The usage the views of this store show beside the objects, when it is read.
    usage: Option<Arc<UsageFeed>>,
}

impl<T> Clone for IndexRegistry<T> {
    fn clone(&self) -> Self {
        Self {
            kind: self.kind.clone(),
            indexer: self.indexer.clone(),
            definitions: self.definitions.clone(),
            usage: self.usage.clone(),
        }
    }
}

impl<T: Indexable + BuiltIn> IndexRegistry<T> {
    /// A new, empty store of the projection's own kind with `definitions` as its indexes:
    /// the registry reads it, and the writer returned with it goes to the informer that
    /// fills it.
    pub fn new(
        definitions: Vec<IndexDefinition>,
    ) -> Result<(Self, IndexerWriter<T>), IndexerError> {
        Self::for_kind(T::KIND.into(), definitions)
    }
}

impl<T: Indexable> IndexRegistry<T> {
    /// [`IndexRegistry::new`] for a store of `kind`, which a generic projection does not
    /// know by itself.
    pub fn for_kind(
        kind: Kind,
        definitions: Vec<IndexDefinition>,
    ) -> Result<(Self, IndexerWriter<T>), IndexerError> {
        let writer = IndexerWriter::new(index_funcs::<T>(&definitions))?;
        let registry = Self {
            kind,
            indexer: writer.reader(),
            definitions: Arc::new(RwLock::new(definitions)),
            usage: None,
        };
        Ok((registry, writer))
    }

    /// The views of this store show `feed`'s usage columns.
    pub fn with_usage(mut self, feed: Arc<UsageFeed>) -> Self {
        self.usage = Some(feed);
        self
    }

    /// The usage the views show, if any.
    pub fn usage(&self) -> Option<&Arc<UsageFeed>> {
        self.usage.as_ref()
    }

    /// The kind of the objects in the store.
    pub fn kind(&self) -> &Kind {
        &self.kind
    }

    /// The store, for readers.
    pub fn indexer(&self) -> &Indexer<T> {
        &self.indexer
    }

    /// Adds an index while the informer runs: the objects already stored are indexed at once,
    /// so queries can use it right away. A name in use is an error.
    pub fn add(&self, definition: IndexDefinition) -> Result<(), IndexerError> {
        let mut definitions = self.definitions.write();
        self.indexer
            .add_indexers([(definition.name.clone(), definition.index_func::<T>())])?;
        definitions.push(definition);
        Ok(())
    }

    pub fn definitions(&self) -> Vec<IndexDefinition> {
        self.definitions.read().clone()
    }

    /// The index function named `name`.
    fn index_func(&self, name: &str) -> Option<IndexFunc<T>> {
        self.definitions
            .read()
            .iter()
            .find(|d| d.name == name)
            .map(|d| d.index_func::<T>())
    }

    /// Every value of index `name` with how many objects have it, most frequent first (ties
    /// by value).
    pub fn value_counts(&self, name: &str) -> Result<Vec<ValueCount>, IndexerError> {
        let mut counts = self.indexer.with_index(name, |index| {
            index
                .iter()
                .map(|(value, keys)| ValueCount {
                    value: value.clone(),
                    count: KeySet::len(keys),
                })
                .collect::<Vec<_>>()
        })?;
        sort_by_count(&mut counts);
        Ok(counts)
    }

    /// The terms of `query` bound to their index functions, to test one object at a time.
    pub fn compile(&self, query: &Query) -> Result<TermMatcher<T>, QueryError> {
        let terms = query
            .terms
            .iter()
            .map(|term| {
                let func = self.index_func(term.index()).ok_or_else(|| {
                    let mut known: Vec<String> = self
                        .definitions
                        .read()
                        .iter()
                        .map(|d| d.name.clone())
                        .collect();
                    known.sort();
                    QueryError::UnknownIndex {
                        name: term.index().to_string(),
                        known: known.join(", "),
                    }
                })?;
                Ok((term.clone(), func))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let labels = query.labels.iter().map(|term| {
            let func = IndexDefinition::new(term.index(), IndexSource::Label(term.index().into()))
                .index_func::<T>();
            (term.clone(), func)
        });
        Ok(TermMatcher {
            terms: terms.into_iter().chain(labels).collect(),
        })
    }
}

/// A query's index terms, each with the function of its index: decides whether one object
/// matches without looking at any other object.
pub struct TermMatcher<T> {
    terms: Vec<(Term, IndexFunc<T>)>,
}

impl<T> TermMatcher<T> {
    /// Whether `obj` satisfies every term. An object whose index function fails has no values
    /// for that index, as in the Indexer.
    pub fn matches(&self, obj: &T) -> bool {
        self.terms.iter().all(|(term, func)| {
            let values = func(obj).unwrap_or_default();
            let has = |v: &String| values.iter().any(|x| x == v.as_str());
            match term {
                Term::Eq { value, .. } => has(value),
                Term::Ne { value, .. } => !has(value),
                Term::In { values, .. } => values.iter().any(has),
                Term::NotIn { values, .. } => !values.iter().any(has),
                Term::Missing { .. } => values.is_empty(),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definitions::{IndexSource, default_index_definitions};
    use kscope_resources::{Pod, decode};

    fn pod(ns: &str, name: &str, labels: &str) -> Arc<Pod> {
        Arc::new(
            decode(
                format!(
                    r#"{{"metadata":{{"name":"{name}","namespace":"{ns}","labels":{{{labels}}}}}}}"#
                )
                .as_bytes(),
            )
            .unwrap(),
        )
    }

    #[test]
    fn runtime_index_is_backfilled_counted_and_compiled() {
        let (registry, store) = IndexRegistry::<Pod>::new(default_index_definitions()).unwrap();
        store
            .add(pod("a", "p1", r#""team":"blue","app":"web""#))
            .unwrap();
        store.add(pod("a", "p2", r#""team":"blue""#)).unwrap();
        store.add(pod("b", "p3", r#""team":"red""#)).unwrap();
        let team = Query::parse("team=blue").unwrap();
        assert!(registry.compile(&team).is_err());
        registry
            .add(IndexDefinition::new(
                "team",
                IndexSource::Label("team".into()),
            ))
            .unwrap();
        assert!(
            registry
                .add(IndexDefinition::new("team", IndexSource::Label("x".into())))
                .is_err()
        );
        let mut keys: Vec<String> = team
            .select(&store)
            .unwrap()
            .iter()
            .map(|k| k.to_string())
            .collect();
        keys.sort();
        assert_eq!(keys, ["a/p1", "a/p2"]);
        assert_eq!(
            registry.value_counts("team").unwrap(),
            [
                ValueCount {
                    value: "blue".into(),
                    count: 2
                },
                ValueCount {
                    value: "red".into(),
                    count: 1
                }
            ]
        );
        let matcher = registry
            .compile(
                &Query::parse("team in (blue,red) app!=web !owner namespace notin (b)").unwrap(),
            )
            .unwrap();
        let hits: Vec<bool> = ["a/p1", "a/p2", "b/p3"]
            .iter()
            .map(|k| matcher.matches(&store.get_by_key(k).unwrap()))
            .collect();
        assert_eq!(hits, [false, true, false]);
    }
}
