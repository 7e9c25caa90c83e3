//! Live views: the filtered, sorted rows of one open table, kept current one key at a time.
//!
//! A [`LiveView`] is built once from the indexes (a query's terms select its members), then
//! [`LiveView::apply`] re-reads one object and moves, inserts or removes just its row. A
//! [`ViewWorker`] feeds it: an informer handler puts keys on a workqueue (bursts for one key
//! coalesce), a worker pops them and applies each under a short lock, then bumps a version the
//! UI watches. The UI copies out only the visible window.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};

use parking_lot::Mutex;
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::columns::{Column, ColumnKind, RowHealth, SortKey, SortKeyBuilder, SortValue, TableRow};
use super::definitions::{IndexDefinition, IndexSource};
use super::fuzzy::TextPattern;
use super::query::{Query, QueryError};
use super::registry::{IndexRegistry, TermMatcher};
use super::sorted::{RowEntry, SortedRows};
use super::usage::UsageState;
use kscope_informers::indexer::{IndexFunc, Indexer};
use kscope_informers::informer::{Notification, SharedIndexInformer};
use kscope_informers::keys::{Key, meta_namespace_key};
use kscope_informers::workqueue::{Queue, WorkqueueMetrics};
use kscope_resources::Timestamp;

/// Which column a view sorts by (an index into [`LiveView::columns`]: the kind's
/// [`TableRow::columns`], then its index columns, then NAMESPACE) and which way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SortSpec {
    pub column: usize,
    pub descending: bool,
}

/// One visible row: the object's key, its cells and how it is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub key: Key,
    pub cells: Vec<String>,
    pub health: RowHealth,
}

/// The rows a table shows, copied out of the view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// Position of the first row in the whole view.
    pub offset: usize,
    /// Rows in the whole view.
    pub total: usize,
    pub rows: Vec<Row>,
    /// Position of the selected object in the whole view, if it is in it.
    pub selected: Option<usize>,
}

/// One column of a view, as a table titles it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewColumn {
    pub name: String,
    pub kind: ColumnKind,
    /// Shown only in wide mode, as `kubectl get -o wide` shows it.
    pub wide: bool,
    /// The NAMESPACE column of a namespaced kind: last in the cells, but drawn first and
    /// only when the view spans namespaces, as kubectl does.
    pub namespace: bool,
    /// A label, annotation or JSONPath index's column, after the kind's own.
    pub index: bool,
    /// A usage column (CPU, MEM...), read from the metrics API beside the object.
    pub usage: bool,
    /// An index column whose index has no value on any object of the store (an `app`
    /// label index on nodes): a column of `<none>` that tables leave out.
    pub empty: bool,
    /// The CLUSTER column of a table across clusters: drawn first, before NAMESPACE, since
    /// it names where the rest of the row comes from.
    pub cluster: bool,
}

/// Whether an index gets a column of its own: indexes read from a label, an annotation or a
/// JSONPath, whose values no kubectl column shows (projection field indexes repeat
/// NAMESPACE, NODE, STATUS...).
pub fn is_index_column(definition: &IndexDefinition) -> bool {
    matches!(
        definition.source,
        IndexSource::Label(_) | IndexSource::Annotation(_) | IndexSource::Path(_)
    )
}

/// An index shown as a column: its title and the function giving a row's values.
struct IndexColumn<T> {
    /// The index's name, as the registry knows it.
    name: String,
    title: String,
    values: IndexFunc<T>,
}

impl<T> IndexColumn<T> {
    /// The object's values, comma-joined; `<none>` without any.
    fn cell(&self, obj: &T) -> String {
        self.text(obj).into_owned()
    }

    /// The cell's text, borrowed from the object when it has one value (most do).
    fn text<'a>(&self, obj: &'a T) -> Cow<'a, str> {
        let mut values = (self.values)(obj).unwrap_or_default();
        match values.len() {
            0 => Cow::Borrowed("<none>"),
            1 => values.swap_remove(0),
            _ => Cow::Owned(values.join(",")),
        }
    }
}

/// The usage columns of `T` when `usage` is read: none otherwise.
fn usage_columns<T: TableRow>(usage: Option<&UsageState>) -> &'static [Column] {
    match usage {
        Some(_) => T::usage_columns(),
        None => &[],
    }
}

/// What `obj` sorts by in `column`: one of the kind's columns, a usage column, an index
/// column, or its namespace.
fn sort_value<'a, T: TableRow>(
    obj: &'a T,
    columns: &[Column],
    usage: Option<&UsageState>,
    column: usize,
    index_columns: &[IndexColumn<T>],
) -> SortValue<'a> {
    let usage_count = usage_columns::<T>(usage).len();
    match column.checked_sub(columns.len()) {
        None => obj.sort_value(columns, column),
        Some(u) if u < usage_count => SortValue::Number(
            usage
                .and_then(|state| state.value(obj, u).flatten())
                .map(|v| i64::try_from(v).unwrap_or(i64::MAX)),
        ),
        Some(i) => match index_columns.get(i - usage_count) {
            Some(c) => SortValue::Text(c.text(obj)),
            None if i - usage_count == index_columns.len() => {
                SortValue::Text(Cow::Borrowed(obj.namespace().unwrap_or("")))
            }
            None => SortValue::Number(None),
        },
    }
}

/// An object in the view: what its row sorts by now, and the object version that sort key
/// was read from.
struct Member<T> {
    sort: SortKey,
    obj: Arc<T>,
}

/// Rows, members or a text filter that a re-sort or a new text replaced, for the caller to
/// release where it costs no one a wait: releasing 150,000 rows costs as much as building
/// them.
pub struct ReplacedRows {
    _base: Option<SortedRows>,
    _members: Option<Box<dyn Send>>,
    _text: Option<TextFilter>,
}

impl ReplacedRows {
    fn none() -> Self {
        Self {
            _base: None,
            _members: None,
            _text: None,
        }
    }

    fn text(text: Option<TextFilter>) -> Self {
        Self {
            _text: text,
            ..Self::none()
        }
    }
}

/// Rows a text search reads between two looks at whether it was cancelled.
const TEXT_CHUNK: usize = 4096;

/// Free text narrowing the members, with the members whose row matches it.
pub struct TextFilter {
    text: String,
    pattern: TextPattern,
    rows: SortedRows,
}

/// What a text pass reads a row's cells with, off the view's lock: the store, the kind's
/// columns and the view's index columns. The cells are those a table shows.
struct RowCells<T> {
    indexer: Indexer<T>,
    columns: Vec<Column>,
    /// The usage as it was when these cells were asked for, when the view shows it.
    usage: Option<Arc<UsageState>>,
    index_columns: Arc<[IndexColumn<T>]>,
    namespaced: bool,
}

impl<T> Clone for RowCells<T> {
    fn clone(&self) -> Self {
        Self {
            indexer: self.indexer.clone(),
            columns: self.columns.clone(),
            usage: self.usage.clone(),
            index_columns: self.index_columns.clone(),
            namespaced: self.namespaced,
        }
    }
}

impl<T: TableRow> RowCells<T> {
    /// The cells of `obj` as a table shows them at `now`: the kind's, the usage columns',
    /// the index columns', then NAMESPACE.
    fn of(&self, obj: &T, now: Timestamp) -> Vec<String> {
        let mut cells = obj.cells(&self.columns, now);
        if let Some(usage) = &self.usage {
            cells.extend((0..T::usage_columns().len()).map(|u| usage.cell(obj, u)));
        }
        cells.extend(self.index_columns.iter().map(|c| c.cell(obj)));
        if self.namespaced {
            cells.push(obj.namespace().unwrap_or("").to_string());
        }
        cells
    }

    /// Whether the row of `key` is kept by `pattern`; a key gone from the store is not.
    fn matches(&self, key: &Key, pattern: &TextPattern, now: Timestamp) -> bool {
        self.indexer
            .get_by_key(key)
            .is_some_and(|obj| pattern.matches(key, || self.of(&obj, now)))
    }
}

/// Keys changed while a job works on a snapshot of the rows, each with the sort key its row
/// had when the snapshot was taken (`None`: it had no row), so that the job's result can be
/// brought up to date before it is swapped in.
type Changed = HashMap<Key, Option<SortKey>>;

/// A text pass to run off the view's lock: the rows it narrows, as they were when it was
/// asked for, and how to read their cells.
pub struct TextJob<T> {
    text: String,
    pattern: TextPattern,
    source: SortedRows,
    cells: RowCells<T>,
    /// The view's rows generation the source belongs to.
    generation: u64,
}

impl<T: TableRow> TextJob<T> {
    /// The members of the snapshot whose row matches the text; `None` as soon as
    /// `cancelled` says so (a later keystroke is waiting).
    pub fn run(self, cancelled: impl Fn() -> bool) -> Option<TextResult> {
        let now = Timestamp::now();
        let mut matched = Vec::new();
        let mut entries = self.source.iter().peekable();
        while entries.peek().is_some() {
            if cancelled() {
                return None;
            }
            matched.extend(
                entries
                    .by_ref()
                    .take(TEXT_CHUNK)
                    .filter(|e| self.cells.matches(&e.key, &self.pattern, now))
                    .cloned(),
            );
        }
        let rows = SortedRows::from_sorted(matched, self.source.descending());
        Some(TextResult {
            filter: TextFilter {
                text: self.text,
                pattern: self.pattern,
                rows,
            },
            generation: self.generation,
        })
    }
}

/// A finished fuzzy pass, to swap in with [`LiveView::finish_text`].
pub struct TextResult {
    filter: TextFilter,
    generation: u64,
}

/// A re-sort to run off the view's lock: the members' objects, copied out of the view a
/// chunk at a time ([`LiveView::copy_members`]), and what it needs to read their sort
/// values. The copy is in key order and holds the objects the view has applied, so the job
/// neither looks a key up in the store nor sorts keys.
pub struct SortJob<T> {
    objects: Vec<(Key, Arc<T>)>,
    cells: RowCells<T>,
    sort: SortSpec,
    /// The text narrowing the view, to narrow the re-sorted rows by too.
    text: Option<(String, TextPattern)>,
}

impl<T: TableRow> SortJob<T> {
    /// Sorts the copied objects. An object changed, added or gone since the copy began is
    /// put right when the result is swapped in (its key was recorded).
    pub fn run(self) -> SortResult<T> {
        let cells = &self.cells;
        let (members, base) = sorted(
            self.objects,
            self.sort,
            &cells.columns,
            cells.usage.as_deref(),
            &cells.index_columns,
        );
        let now = Timestamp::now();
        let text = self.text.map(|(text, pattern)| {
            let rows = SortedRows::from_sorted(
                base.iter()
                    .filter(|e| {
                        members
                            .get(&e.key)
                            .is_some_and(|m| pattern.matches(&e.key, || cells.of(&m.obj, now)))
                    })
                    .cloned(),
                self.sort.descending,
            );
            TextFilter {
                text,
                pattern,
                rows,
            }
        });
        SortResult {
            sort: self.sort,
            members,
            base,
            text,
        }
    }
}

/// A finished re-sort, to swap in with [`LiveView::finish_sort`].
pub struct SortResult<T> {
    sort: SortSpec,
    members: BTreeMap<Key, Member<T>>,
    base: SortedRows,
    text: Option<TextFilter>,
}

/// The members and their rows for objects in key order, sorted by `sort`.
fn sorted<T: TableRow>(
    objects: Vec<(Key, Arc<T>)>,
    sort: SortSpec,
    columns: &[Column],
    usage: Option<&UsageState>,
    index_columns: &[IndexColumn<T>],
) -> (BTreeMap<Key, Member<T>>, SortedRows) {
    let mut keys = SortKeyBuilder::with_capacity(objects.len());
    for (_, obj) in &objects {
        keys.push(sort_value(
            obj.as_ref(),
            columns,
            usage,
            sort.column,
            index_columns,
        ));
    }
    let mut entries = Vec::with_capacity(objects.len());
    let mut members = Vec::with_capacity(objects.len());
    for ((key, obj), sort) in objects.into_iter().zip(keys.finish()) {
        entries.push(RowEntry {
            sort: sort.clone(),
            key: key.clone(),
        });
        members.push((key, Member { sort, obj }));
    }
    // In key order already: the map is built without a search per key.
    let members = members.into_iter().collect();
    (
        members,
        SortedRows::from_key_ordered(entries, sort.descending),
    )
}

/// The rows of one table: the objects that match a query's terms (and free text), sorted.
///
/// A re-sort or a fuzzy pass over 150,000 rows takes tens of milliseconds: it runs off the
/// view's lock on a snapshot ([`LiveView::sort_job`], [`LiveView::text_job`]), while
/// changes keep applying and are recorded, and its result is swapped in and brought up to
/// date under the lock. The lock is held only as long as a few keys take.
pub struct LiveView<T> {
    registry: IndexRegistry<T>,
    query: Query,
    terms: TermMatcher<T>,
    /// The registry's label and annotation indexes, shown after the kind's columns.
    index_columns: Arc<[IndexColumn<T>]>,
    sort: SortSpec,
    /// Every object matching the terms, with its current sort key, in key order (which a
    /// re-sort keeps for ties).
    members: BTreeMap<Key, Member<T>>,
    /// The members in sort order.
    base: SortedRows,
    text: Option<TextFilter>,
    selected: Option<Key>,
    /// Keys changed since the running job's snapshot, while one runs.
    changed: Option<Changed>,
    /// Bumped when a re-sort replaces the rows: a text search over the rows before it is
    /// not swapped in.
    generation: u64,
    /// The usage changed since the rows were sorted by a usage column: a re-sort by the
    /// same column is not a no-op.
    usage_sort_stale: bool,
}

impl<T: TableRow> LiveView<T> {
    /// The view of `query` over the registry's store, sorted by `sort`. Free text in the query
    /// is matched here, synchronously; interactive typing goes through [`ViewWorker::set_text`].
    pub fn new(
        registry: IndexRegistry<T>,
        query: Query,
        sort: SortSpec,
    ) -> Result<Self, QueryError> {
        let terms = registry.compile(&query)?;
        let index_columns: Arc<[IndexColumn<T>]> = registry
            .definitions()
            .iter()
            .filter(|d| is_index_column(d))
            .map(|d| IndexColumn {
                name: d.name.clone(),
                title: d.name.to_uppercase(),
                values: d.index_func::<T>(),
            })
            .collect();
        let indexer = registry.indexer();
        let by_index = Query {
            labels: Vec::new(),
            ..query.selector()
        };
        let mut keys = by_index.select(indexer)?;
        keys.sort_unstable();
        keys.dedup();
        let objects = keys
            .into_iter()
            .filter_map(|key| {
                let obj = indexer.get_by_key(&key)?;
                // Label selector terms have no index to select by: tested here.
                (query.labels.is_empty() || terms.matches(&obj)).then_some((key, obj))
            })
            .collect();
        let columns = T::columns(registry.kind());
        let usage = registry.usage().map(|feed| feed.state());
        let (members, base) = sorted(objects, sort, &columns, usage.as_deref(), &index_columns);
        let text = query.text.clone();
        let mut view = Self {
            registry,
            query,
            terms,
            index_columns,
            sort,
            members,
            base,
            text: None,
            selected: None,
            changed: None,
            generation: 0,
            usage_sort_stale: false,
        };
        view.set_text(&text, || false);
        Ok(view)
    }

    pub fn query(&self) -> &Query {
        &self.query
    }

    pub fn sort(&self) -> SortSpec {
        self.sort
    }

    /// The kind's columns (wide ones included), then one per label or annotation index,
    /// then NAMESPACE for namespaced kinds.
    pub fn columns(&self) -> Vec<ViewColumn> {
        let column = |name: String, kind, wide| ViewColumn {
            name,
            kind,
            wide,
            namespace: false,
            index: false,
            usage: false,
            empty: false,
            cluster: false,
        };
        let indexer = self.registry.indexer();
        let kind = self.registry.kind();
        let usage = self.registry.usage().map(|feed| feed.state());
        let mut columns: Vec<ViewColumn> = T::columns(kind)
            .iter()
            .map(|c| column(c.name.to_string(), c.kind, c.wide))
            .chain(
                usage_columns::<T>(usage.as_deref())
                    .iter()
                    .map(|c| ViewColumn {
                        usage: true,
                        ..column(c.name.to_string(), c.kind, c.wide)
                    }),
            )
            .chain(self.index_columns.iter().map(|c| {
                ViewColumn {
                    index: true,
                    empty: indexer
                        .with_index(&c.name, |index| index.is_empty())
                        .unwrap_or(true),
                    ..column(c.title.clone(), ColumnKind::Text, false)
                }
            }))
            .collect();
        if kind.namespaced() {
            columns.push(ViewColumn {
                namespace: true,
                ..column("NAMESPACE".into(), ColumnKind::Text, false)
            });
        }
        columns
    }

    /// The free text currently narrowing the view.
    pub fn text(&self) -> &str {
        self.text.as_ref().map_or("", |t| t.text.as_str())
    }

    /// Whether the text narrowing the view keeps the row of `obj` (false without text).
    fn text_keeps(&self, key: &Key, obj: &T) -> bool {
        self.text.as_ref().is_some_and(|text| {
            text.pattern
                .matches(key, || self.row_cells().of(obj, Timestamp::now()))
        })
    }

    /// How a job reads a row's cells off the lock.
    fn row_cells(&self) -> RowCells<T> {
        let kind = self.registry.kind();
        RowCells {
            indexer: self.registry.indexer().clone(),
            columns: T::columns(kind).into_owned(),
            usage: self.registry.usage().map(|feed| feed.state()),
            index_columns: self.index_columns.clone(),
            namespaced: kind.namespaced(),
        }
    }

    fn rows(&self) -> &SortedRows {
        self.text.as_ref().map_or(&self.base, |t| &t.rows)
    }

    /// Rows in the view.
    pub fn len(&self) -> usize {
        self.rows().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Brings the row of `key` up to date with the store: re-reads the object, tests it
    /// against the terms (that object alone) and moves, inserts or removes its row. Returns
    /// whether the view's rows may look different.
    pub fn apply(&mut self, key: &Key) -> bool {
        if let Some(changed) = &mut self.changed
            && !changed.contains_key(key)
        {
            let before = self.members.get(key).map(|m| m.sort.clone());
            changed.insert(key.clone(), before);
        }
        let obj = self
            .registry
            .indexer()
            .get_by_key(key)
            .filter(|o| self.terms.matches(o));
        let columns = T::columns(self.registry.kind());
        let usage = self.registry.usage().map(|feed| feed.state());
        let new = obj.as_ref().map(|o| {
            let value = sort_value(
                o.as_ref(),
                &columns,
                usage.as_deref(),
                self.sort.column,
                &self.index_columns,
            );
            (value, o.clone())
        });
        // Most updates leave the sort value alone: keep the row, and its key unallocated.
        if let (Some((value, obj)), Some(member)) = (&new, self.members.get(key))
            && member.sort.is(value)
        {
            // Its row stays where it is, but what it shows may now match the text or not.
            let entry = RowEntry {
                sort: member.sort.clone(),
                key: key.clone(),
            };
            if self.text.is_some() {
                let keep = self.text_keeps(key, obj);
                if let Some(text) = &mut self.text {
                    if keep {
                        text.rows.insert(entry);
                    } else {
                        text.rows.remove(&entry);
                    }
                }
            }
            if let Some(member) = self.members.get_mut(key) {
                member.obj = obj.clone();
            }
            return true;
        }
        let new = new.map(|(value, obj)| (value.into_key(), obj));
        let old = self.members.get(key).map(|m| m.sort.clone());
        match (old, new) {
            (None, None) => false,
            (old, new) => {
                let selected_at = match (&old, &self.selected) {
                    (Some(sort), Some(selected)) if selected == key => {
                        self.rows().position(&RowEntry {
                            sort: sort.clone(),
                            key: key.clone(),
                        })
                    }
                    _ => None,
                };
                if let Some(sort) = old {
                    let entry = RowEntry {
                        sort,
                        key: key.clone(),
                    };
                    self.base.remove(&entry);
                    if let Some(text) = &mut self.text {
                        text.rows.remove(&entry);
                    }
                    self.members.remove(key);
                }
                match new {
                    Some((sort, obj)) => {
                        let entry = RowEntry {
                            sort: sort.clone(),
                            key: key.clone(),
                        };
                        let keep = self.text.is_some() && self.text_keeps(key, &obj);
                        self.members.insert(key.clone(), Member { sort, obj });
                        if let Some(text) = &mut self.text
                            && keep
                        {
                            text.rows.insert(entry.clone());
                        }
                        self.base.insert(entry);
                    }
                    None => {
                        // The selected object left: select what now sits where it was.
                        if let Some(at) = selected_at {
                            let rows = self.rows();
                            self.selected = rows
                                .get(at.min(rows.len().saturating_sub(1)))
                                .map(|e| e.key.clone());
                        }
                    }
                }
                true
            }
        }
    }

    /// Re-sorts by another column or direction, here and now; the selection stays on its
    /// object. Returns the rows it replaced. Interactive re-sorts go through
    /// [`ViewWorker::set_sort`], off the lock.
    pub fn set_sort(&mut self, sort: SortSpec) -> ReplacedRows {
        let Some(mut job) = self.sort_job(sort) else {
            return ReplacedRows::none();
        };
        while self.copy_members(&mut job, usize::MAX) {}
        self.finish_sort(job.run())
    }

    /// A re-sort by `sort` to run off the lock, or `None` when the rows are sorted so
    /// already. Changes from now on are recorded for [`LiveView::finish_sort`]; the
    /// members are copied into it with [`LiveView::copy_members`].
    pub fn sort_job(&mut self, sort: SortSpec) -> Option<SortJob<T>> {
        if sort == self.sort && !std::mem::take(&mut self.usage_sort_stale) {
            return None;
        }
        self.changed = Some(Changed::new());
        Some(SortJob {
            objects: Vec::with_capacity(self.members.len()),
            cells: self.row_cells(),
            sort,
            text: self
                .text
                .as_ref()
                .map(|t| (t.text.clone(), t.pattern.clone())),
        })
    }

    /// Copies up to `count` more members into `job`, in key order after the last one it
    /// has; false once every member is copied. Between two calls the lock may be released:
    /// a member added, changed or removed meanwhile is among the keys recorded since
    /// [`LiveView::sort_job`], and [`LiveView::finish_sort`] applies it again.
    pub fn copy_members(&self, job: &mut SortJob<T>, count: usize) -> bool {
        use std::ops::Bound;
        let after = match job.objects.last() {
            Some((key, _)) => Bound::Excluded(key.clone()),
            None => Bound::Unbounded,
        };
        let before = job.objects.len();
        job.objects.extend(
            self.members
                .range((after, Bound::Unbounded))
                .take(count)
                .map(|(key, member)| (key.clone(), member.obj.clone())),
        );
        job.objects.len() - before == count
    }

    /// Swaps in a finished re-sort and re-applies the keys changed while it ran. Returns
    /// what it replaced.
    pub fn finish_sort(&mut self, result: SortResult<T>) -> ReplacedRows {
        let changed = self.changed.take().unwrap_or_default();
        let SortResult {
            sort,
            members,
            base,
            text,
        } = result;
        // The text may have been cleared meanwhile; its rows then go with the rest.
        let (text, dropped_text) = match text {
            Some(t) if t.text == self.text() => (Some(t), None),
            other => (None, other),
        };
        self.sort = sort;
        self.generation += 1;
        let members = std::mem::replace(&mut self.members, members);
        let base = std::mem::replace(&mut self.base, base);
        let old_text = std::mem::replace(&mut self.text, text);
        for key in changed.keys() {
            self.apply(key);
        }
        ReplacedRows {
            _base: Some(base),
            _members: Some(Box::new(members)),
            _text: old_text.or(dropped_text),
        }
    }

    /// Notes that the usage changed; true when the rows are sorted by a usage column and so
    /// need a re-sort.
    pub fn usage_changed(&mut self) -> bool {
        let first = T::columns(self.registry.kind()).len();
        let usage = self.registry.usage().map(|feed| feed.state());
        let count = usage_columns::<T>(usage.as_deref()).len();
        let by_usage = (first..first + count).contains(&self.sort.column);
        self.usage_sort_stale |= by_usage;
        by_usage
    }

    /// Stops recording changes for a job whose result will not be swapped in.
    pub fn abandon_job(&mut self) {
        self.changed = None;
    }

    /// Narrows the view to the members whose row matches `text` (see [`TextPattern`]: its
    /// key fuzzily, a cell as shown, inverted, a regex), or shows every member again for
    /// empty text,
    /// here and now. Gives up, changing nothing, as soon as `cancelled` says so; returns
    /// `None` then, else the rows the text replaced. Typing goes through
    /// [`ViewWorker::set_text`], off the lock.
    pub fn set_text(&mut self, text: &str, cancelled: impl Fn() -> bool) -> Option<ReplacedRows> {
        let Some(job) = self.text_job(text) else {
            return Some(ReplacedRows::text(self.text.take()));
        };
        match job.run(cancelled) {
            Some(result) => self.finish_text(result),
            None => {
                self.abandon_job();
                None
            }
        }
    }

    /// A fuzzy pass for `text` to run off the lock: over the current rows when `text`
    /// extends the text they match, else over every member. `None` for empty text (clear
    /// it with [`LiveView::clear_text`]). Changes from now on are recorded for
    /// [`LiveView::finish_text`].
    pub fn text_job(&mut self, text: &str) -> Option<TextJob<T>> {
        // A regular expression that does not compile narrows nothing: the filter bar says
        // why before it sends one.
        let pattern = TextPattern::parse(text).ok().flatten()?;
        let source = match &self.text {
            Some(current) if TextPattern::narrows(text, &current.text) => &current.rows,
            _ => &self.base,
        };
        let job = TextJob {
            text: text.to_string(),
            pattern,
            source: source.clone(),
            cells: self.row_cells(),
            generation: self.generation,
        };
        self.changed = Some(Changed::new());
        Some(job)
    }

    /// Swaps in a finished fuzzy pass, with the keys changed while it ran put right: `None`
    /// (nothing changes) when a re-sort replaced the rows it read. Otherwise returns the
    /// rows it replaced.
    pub fn finish_text(&mut self, result: TextResult) -> Option<ReplacedRows> {
        let changed = self.changed.take().unwrap_or_default();
        if result.generation != self.generation {
            return None;
        }
        let mut filter = result.filter;
        for (key, before) in changed {
            if let Some(sort) = before {
                filter.rows.remove(&RowEntry {
                    sort,
                    key: key.clone(),
                });
            }
            let now = Timestamp::now();
            if let Some(member) = self.members.get(&key)
                && filter
                    .pattern
                    .matches(&key, || self.row_cells().of(&member.obj, now))
            {
                filter.rows.insert(RowEntry {
                    sort: member.sort.clone(),
                    key,
                });
            }
        }
        Some(ReplacedRows::text(self.text.replace(filter)))
    }

    /// Shows every member again: clearing the text needs no search.
    pub fn clear_text(&mut self) {
        self.text = None;
    }

    /// Selects the object `key` (kept across moves until it leaves the view).
    pub fn select(&mut self, key: Option<Key>) {
        self.selected = key;
    }

    /// Selects the row at `position` (clamped to the view).
    pub fn select_position(&mut self, position: usize) {
        let rows = self.rows();
        self.selected = rows
            .get(position.min(rows.len().saturating_sub(1)))
            .map(|e| e.key.clone());
    }

    pub fn selected(&self) -> Option<&Key> {
        self.selected.as_ref()
    }

    /// Where the selected object is now.
    pub fn selected_position(&self) -> Option<usize> {
        let key = self.selected.as_ref()?;
        let member = self.members.get(key)?;
        self.rows().position(&RowEntry {
            sort: member.sort.clone(),
            key: key.clone(),
        })
    }

    /// Keys of `count` rows from `offset`, in order.
    pub fn keys(&self, offset: usize, count: usize) -> Vec<Key> {
        self.rows()
            .range(offset, count)
            .map(|e| e.key.clone())
            .collect()
    }

    /// The sort entries of `count` rows from `offset`, in order: a table across clusters
    /// merges each cluster's by these keys.
    pub fn entries(&self, offset: usize, count: usize) -> Vec<RowEntry> {
        self.rows().range(offset, count).cloned().collect()
    }

    /// The rows of `keys` (those still in the store), cells made for these alone: a table
    /// across clusters copies its window out of each cluster's view this way.
    pub fn rows_of(&self, keys: &[Key], now: Timestamp) -> Vec<Row> {
        let row_cells = self.row_cells();
        keys.iter()
            .filter_map(|key| {
                let obj = row_cells.indexer.get_by_key(key)?;
                Some(Row {
                    key: key.clone(),
                    cells: row_cells.of(&obj, now),
                    health: obj.health(),
                })
            })
            .collect()
    }

    /// Copies out `height` rows from `offset`: cells, index columns' included, are made for
    /// these rows only.
    pub fn window(&self, offset: usize, height: usize, now: Timestamp) -> Window {
        if let Some(feed) = self.registry.usage() {
            feed.drawn();
        }
        let row_cells = self.row_cells();
        // A row whose object just left the store (its delete not yet applied to this view)
        // is skipped and the next one fills its place, so the window never comes up short.
        let rows: Vec<Row> = self
            .rows()
            .range(offset, usize::MAX)
            .filter_map(|e| {
                let obj = row_cells.indexer.get_by_key(&e.key)?;
                Some(Row {
                    key: e.key.clone(),
                    cells: row_cells.of(&obj, now),
                    health: obj.health(),
                })
            })
            .take(height)
            .collect();
        // The selection as the rows shown place it (skipped rows shift those below them).
        let selected = match self.selected() {
            Some(key) => rows
                .iter()
                .position(|r| &r.key == key)
                .map(|i| offset + i)
                .or_else(|| self.selected_position()),
            None => None,
        };
        Window {
            offset,
            total: self.len(),
            rows,
            selected,
        }
    }
}

/// What a view's job thread is asked to do; a newer ask replaces an older one not yet begun.
#[derive(Default)]
struct Asked {
    sort: Option<SortSpec>,
    /// The text, with the generation that asked for it.
    text: Option<(String, u64)>,
}

/// What the UI asked for last: a job for anything else is stale and is not swapped in.
/// Locked after the view.
struct Wanted {
    sort: SortSpec,
    text: String,
}

/// The thread that runs a view's re-sorts and fuzzy passes off the UI thread and off the
/// view's lock; it ends when the handle is dropped.
struct Jobs {
    asked: Arc<Mutex<Asked>>,
    doorbell: mpsc::Sender<()>,
    /// Bumped by each text asked for; a pass for an older one gives up between chunks.
    generation: Arc<AtomicU64>,
}

impl Jobs {
    fn spawn<T: TableRow>(
        view: Arc<Mutex<LiveView<T>>>,
        wanted: Arc<Mutex<Wanted>>,
        version: Arc<watch::Sender<u64>>,
    ) -> Self {
        let asked = Arc::new(Mutex::new(Asked::default()));
        let (doorbell, rings) = mpsc::channel();
        let generation = Arc::new(AtomicU64::new(0));
        let (thread_asked, current) = (asked.clone(), generation.clone());
        std::thread::Builder::new()
            .name("kscope-view".into())
            .spawn(move || {
                while rings.recv().is_ok() {
                    while rings.try_recv().is_ok() {}
                    let Asked { sort, text } = std::mem::take(&mut *thread_asked.lock());
                    if let Some(sort) = sort {
                        resort(&view, &wanted, &version, sort);
                    }
                    if let Some((text, generation)) = text {
                        let cancelled = || current.load(Ordering::SeqCst) != generation;
                        search(&view, &wanted, &version, &text, &cancelled);
                    }
                }
            })
            .map_err(|e| tracing::error!("cannot start a view's job thread: {e}"))
            .ok();
        Self {
            asked,
            doorbell,
            generation,
        }
    }

    fn ring(&self) {
        // The thread only ends with this handle.
        let _ = self.doorbell.send(());
    }
}

/// Members copied into a re-sort per hold of the view's lock: about 0.2 ms at 150,000 pods.
const COPY_CHUNK: usize = 4096;

/// Re-sorts a snapshot of the view and swaps it in, unless another sort was asked for since.
fn resort<T: TableRow>(
    view: &Mutex<LiveView<T>>,
    wanted: &Mutex<Wanted>,
    version: &watch::Sender<u64>,
    sort: SortSpec,
) {
    let Some(mut job) = view.lock().sort_job(sort) else {
        return;
    };
    // A chunk at a time, so the UI and the worker never wait for the whole copy.
    while view.lock().copy_members(&mut job, COPY_CHUNK) {}
    let result = job.run();
    let mut locked = view.lock();
    if wanted.lock().sort != sort {
        locked.abandon_job();
        return;
    }
    let replaced = locked.finish_sort(result);
    drop(locked);
    version.send_modify(|v| *v += 1);
    drop(replaced);
}

/// Runs a fuzzy pass over a snapshot of the view and swaps it in, unless a later keystroke
/// cancelled it.
fn search<T: TableRow>(
    view: &Mutex<LiveView<T>>,
    wanted: &Mutex<Wanted>,
    version: &watch::Sender<u64>,
    text: &str,
    cancelled: &dyn Fn() -> bool,
) {
    let job = {
        let mut locked = view.lock();
        if cancelled() || wanted.lock().text != text {
            return;
        }
        locked.text_job(text)
    };
    let Some(job) = job else {
        return;
    };
    let result = job.run(cancelled);
    let mut locked = view.lock();
    let replaced = match result {
        Some(result) if !cancelled() => locked.finish_text(result),
        _ => {
            locked.abandon_job();
            None
        }
    };
    drop(locked);
    if let Some(replaced) = replaced {
        version.send_modify(|v| *v += 1);
        drop(replaced);
    }
}

/// A live view kept current by a workqueue worker, re-sorted and narrowed by typed text on
/// a thread of its own. Dropping it stops its tasks.
pub struct ViewWorker<T> {
    view: Arc<Mutex<LiveView<T>>>,
    version: watch::Receiver<u64>,
    queue: Queue<Key>,
    jobs: Jobs,
    wanted: Arc<Mutex<Wanted>>,
    tasks: JoinSet<()>,
}

impl<T: TableRow> ViewWorker<T> {
    /// Builds the view of `query` over `informer`'s store (which `registry` must hold) and
    /// keeps it current from the informer's notifications. Runs on the current Tokio runtime.
    pub fn start(
        informer: &SharedIndexInformer<T>,
        registry: IndexRegistry<T>,
        query: Query,
        sort: SortSpec,
    ) -> Result<Self, QueryError> {
        // Register first, so nothing that happens while the view is built is missed; the
        // view reads every object from the store, so it needs no replay of them.
        let mut handler = informer.add_event_handler_without_replay();
        let wanted = Arc::new(Mutex::new(Wanted {
            sort,
            text: query.text.clone(),
        }));
        let view = Arc::new(Mutex::new(LiveView::new(registry, query, sort)?));
        let queue: Queue<Key> = Queue::new();
        let (version_tx, version) = watch::channel(0u64);
        let version_tx = Arc::new(version_tx);
        let mut tasks = JoinSet::new();

        let handler_queue = queue.clone();
        tasks.spawn(async move {
            while let Some(notification) = handler.recv().await {
                if notification.is_resync() {
                    continue;
                }
                let key = match &notification {
                    Notification::Add { obj, .. } => meta_namespace_key(obj.as_ref()),
                    Notification::Update { new, .. } => meta_namespace_key(new.as_ref()),
                    Notification::Delete { obj } => obj.key(),
                };
                // Stored objects always have keys; nothing to show for one without.
                if let Ok(key) = key {
                    handler_queue.add(key);
                }
            }
            handler_queue.shut_down();
        });

        let worker_queue = queue.clone();
        let worker_view = view.clone();
        let worker_version = version_tx.clone();
        tasks.spawn(async move {
            while let Some(key) = worker_queue.get().await {
                let changed = worker_view.lock().apply(&key);
                worker_queue.done(&key);
                if changed {
                    worker_version.send_modify(|v| *v += 1);
                }
            }
        });

        let usage_version = version_tx.clone();
        let jobs = Jobs::spawn(view.clone(), wanted.clone(), version_tx);
        // New usage shows in the cells at the next draw; rows sorted by it are re-sorted.
        let feed = view.lock().registry.usage().cloned();
        if let Some(feed) = feed {
            let mut changes = feed.changes();
            let (usage_view, usage_wanted) = (view.clone(), wanted.clone());
            let (asked, doorbell) = (jobs.asked.clone(), jobs.doorbell.clone());
            tasks.spawn(async move {
                while changes.changed().await.is_ok() {
                    if usage_view.lock().usage_changed() {
                        asked.lock().sort = Some(usage_wanted.lock().sort);
                        // The job thread ends only with the worker, which ends this task.
                        let _ = doorbell.send(());
                    }
                    usage_version.send_modify(|v| *v += 1);
                }
            });
        }

        Ok(Self {
            view,
            version,
            queue,
            jobs,
            wanted,
            tasks,
        })
    }

    /// The view, for short reads (a window, the selection) and the selection.
    pub fn view(&self) -> &Arc<Mutex<LiveView<T>>> {
        &self.view
    }

    /// Bumped whenever the rows may have changed.
    pub fn version(&self) -> watch::Receiver<u64> {
        self.version.clone()
    }

    /// Narrows the view to rows whose `namespace/name` fuzzy-matches `text`, off this thread;
    /// a search still running for the previous keystroke is cancelled.
    /// Empty text is cleared at once, so Esc shows every row in its own frame rather than
    /// the rows of an older search until an empty one comes back.
    pub fn set_text(&self, text: &str) {
        let mut view = self.view.lock();
        text.clone_into(&mut self.wanted.lock().text);
        let generation = self.jobs.generation.fetch_add(1, Ordering::SeqCst) + 1;
        if matches!(TextPattern::parse(text), Ok(None)) {
            view.clear_text();
            return;
        }
        drop(view);
        self.jobs.asked.lock().text = Some((text.to_string(), generation));
        self.jobs.ring();
    }

    /// Re-sorts the view off this thread; the rows show the new order once it is swapped
    /// in (the version is bumped then).
    pub fn set_sort(&self, sort: SortSpec) {
        self.wanted.lock().sort = sort;
        self.jobs.asked.lock().sort = Some(sort);
        self.jobs.ring();
    }

    /// The sort asked for last (the rows may still show the one before).
    pub fn sort(&self) -> SortSpec {
        self.wanted.lock().sort
    }

    /// The view's workqueue metrics (depth, adds, coalesced adds, latency).
    pub fn queue_metrics(&self) -> WorkqueueMetrics {
        self.queue.metrics()
    }

    /// Keys waiting to be applied.
    pub fn pending(&self) -> usize {
        self.queue.len()
    }
}

impl<T> Drop for ViewWorker<T> {
    fn drop(&mut self) {
        self.queue.shut_down();
        self.tasks.abort_all();
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::columns::POD_COLUMNS;
    use crate::definitions::default_index_definitions;
    use crate::fuzzy::text_matches;
    use kscope_informers::delta_fifo::ReflectorStore;
    use kscope_informers::indexer::IndexerWriter;
    use kscope_resources::{Pod, decode};

    /// A pod in namespace `ns` with label app=`app` (none when empty) and `restarts` restarts.
    fn pod(ns: &str, name: &str, app: &str, restarts: u32, rv: u64) -> Arc<Pod> {
        let labels = if app.is_empty() {
            String::new()
        } else {
            format!(r#""app":"{app}""#)
        };
        Arc::new(
            decode(
                format!(
                    r#"{{"metadata":{{"name":"{name}","namespace":"{ns}","resourceVersion":"{rv}","labels":{{{labels}}}}},
                    "spec":{{"containers":[{{"name":"c","image":"nginx"}}]}},
                    "status":{{"phase":"Running","containerStatuses":[{{"name":"c","ready":true,"restartCount":{restarts}}}]}}}}"#
                )
                .as_bytes(),
            )
            .unwrap(),
        )
    }

    /// A registry over an empty store, and the store's writer for the test to fill.
    fn registry() -> (IndexRegistry<Pod>, IndexerWriter<Pod>) {
        IndexRegistry::new(default_index_definitions()).unwrap()
    }

    fn names(view: &LiveView<Pod>) -> Vec<String> {
        view.keys(0, usize::MAX)
            .iter()
            .map(|k| k.to_string())
            .collect()
    }

    const RESTARTS: usize = 3;

    /// A pod whose container waits with `reason` (CrashLoopBackOff...), or runs without one.
    fn waiting_pod(name: &str, reason: &str, rv: u64) -> Arc<Pod> {
        let state = if reason.is_empty() {
            r#"{"running":{}}"#.to_string()
        } else {
            format!(r#"{{"waiting":{{"reason":"{reason}"}}}}"#)
        };
        Arc::new(
            decode(
                format!(
                    r#"{{"metadata":{{"name":"{name}","namespace":"shop","resourceVersion":"{rv}"}},
                    "spec":{{"containers":[{{"name":"c","image":"nginx"}}]}},
                    "status":{{"phase":"Running","containerStatuses":[{{"name":"c","ready":false,"restartCount":0,"state":{state}}}]}}}}"#
                )
                .as_bytes(),
            )
            .unwrap(),
        )
    }

    /// `/crash` finds the crashing pods by their STATUS, not their names; a pod that starts
    /// crashing joins the rows (its sort value unchanged) and leaves them when it recovers;
    /// `!crash` keeps the others.
    #[test]
    fn text_matches_the_row_as_shown_and_follows_its_status() {
        let (registry, store) = registry();
        store
            .add(waiting_pod("api", "CrashLoopBackOff", 1))
            .unwrap();
        store.add(waiting_pod("web", "", 1)).unwrap();
        let sort = SortSpec::default();
        let mut view = LiveView::new(registry.clone(), Query::default(), sort).unwrap();
        assert!(view.set_text("crash", || false).is_some());
        assert_eq!(names(&view), ["shop/api"]);
        store
            .add(waiting_pod("web", "CrashLoopBackOff", 2))
            .unwrap();
        view.apply(&"shop/web".into());
        assert_eq!(names(&view), ["shop/api", "shop/web"]);
        store.add(waiting_pod("api", "", 2)).unwrap();
        view.apply(&"shop/api".into());
        assert_eq!(names(&view), ["shop/web"]);
        let by_status = LiveView::new(
            registry.clone(),
            Query::parse("status=CrashLoopBackOff").unwrap(),
            sort,
        )
        .unwrap();
        assert_eq!(names(&by_status), ["shop/web"], "the status index");
        assert!(view.set_text("!crash", || false).is_some());
        assert_eq!(names(&view), ["shop/api"]);
        assert!(view.set_text("~^shop/(api|web)$", || false).is_some());
        assert_eq!(view.len(), 2);
        // A re-sort keeps the text and reads the rows again.
        drop(view.set_sort(SortSpec {
            column: 0,
            descending: true,
        }));
        assert!(view.set_text("crash", || false).is_some());
        assert_eq!(names(&view), ["shop/web"]);
    }

    /// `-l` selects by labels that no index reads, as kubectl's `-l`; `Query::select` alone
    /// (without the objects) refuses it.
    #[test]
    fn a_label_selector_needs_no_index() {
        let (registry, store) =
            IndexRegistry::<Pod>::new(vec![default_index_definitions().remove(0)]).unwrap();
        store.add(pod("a", "web-1", "web", 0, 1)).unwrap();
        store.add(pod("a", "db-1", "db", 0, 1)).unwrap();
        store.add(pod("b", "none", "", 0, 1)).unwrap();
        let sort = SortSpec::default();
        let view = |q: &str| {
            names(&LiveView::new(registry.clone(), Query::parse(q).unwrap(), sort).unwrap())
        };
        assert_eq!(view("-l app=web"), ["a/web-1"]);
        assert_eq!(view("-l app!=web"), ["a/db-1", "b/none"]);
        assert_eq!(view("namespace=a -l !app"), Vec::<String>::new());
        assert!(LiveView::new(registry.clone(), Query::parse("app=web").unwrap(), sort).is_err());
        let err = Query::parse("-l app=web")
            .unwrap()
            .select(registry.indexer())
            .unwrap_err();
        assert!(matches!(err, QueryError::LabelSelector { .. }), "{err}");
    }

    /// An object deleted from the store before its delete reaches the view: the window
    /// still fills its height, and the selection is where the rows shown put it (the "last
    /// row vanished after End then Up" newcomers saw).
    #[test]
    fn a_window_stays_full_while_a_delete_is_on_its_way() {
        let (registry, store) = registry();
        for name in ["a", "b", "c", "d", "e"] {
            store.add(pod("ns", name, "web", 0, 1)).unwrap();
        }
        let sort = SortSpec {
            column: 0,
            descending: false,
        };
        let mut view = LiveView::new(registry.clone(), Query::default(), sort).unwrap();
        view.select(Some("ns/d".into()));
        store.remove("ns/b");
        let window = view.window(0, 3, Timestamp::now());
        let keys: Vec<&str> = window.rows.iter().map(|r| &*r.key).collect();
        assert_eq!(keys, ["ns/a", "ns/c", "ns/d"]);
        assert_eq!(window.selected, Some(2), "d is the third row shown");
        assert!(view.apply(&"ns/b".into()));
        assert_eq!(view.window(0, 3, Timestamp::now()).selected, Some(2));
    }

    #[test]
    fn rows_follow_updates_one_key_at_a_time() {
        let (registry, store) = registry();
        for (name, app, restarts) in [
            ("a", "web", 5),
            ("b", "web", 1),
            ("c", "db", 9),
            ("d", "web", 3),
        ] {
            store.add(pod("ns", name, app, restarts, 1)).unwrap();
        }
        let sort = SortSpec {
            column: RESTARTS,
            descending: true,
        };
        let mut view =
            LiveView::new(registry.clone(), Query::parse("app=web").unwrap(), sort).unwrap();
        assert_eq!(names(&view), ["ns/a", "ns/d", "ns/b"]);
        view.select(Some("ns/d".into()));
        assert_eq!(view.selected_position(), Some(1));

        // A restart moves the selected row to the top; the selection follows it.
        store.add(pod("ns", "d", "web", 7, 2)).unwrap();
        assert!(view.apply(&"ns/d".into()));
        assert_eq!(names(&view), ["ns/d", "ns/a", "ns/b"]);
        assert_eq!(view.selected_position(), Some(0));

        // Relabelled into and out of the view; deleted; unrelated keys change nothing.
        store.add(pod("ns", "c", "web", 9, 2)).unwrap();
        store.add(pod("ns", "a", "db", 5, 2)).unwrap();
        store.remove("ns/b");
        for key in ["ns/c", "ns/a", "ns/b"] {
            assert!(view.apply(&key.into()));
        }
        assert!(!view.apply(&"ns/zzz".into()));
        assert_eq!(names(&view), ["ns/c", "ns/d"]);

        // The selected object leaves: the row now in its place is selected.
        view.select(Some("ns/c".into()));
        store.add(pod("ns", "c", "", 9, 3)).unwrap();
        view.apply(&"ns/c".into());
        assert_eq!(view.selected().map(|k| &**k), Some("ns/d"));

        // The window copies cells for the visible rows only.
        let window = view.window(0, 10, Timestamp::now());
        assert_eq!(window.total, 1);
        assert_eq!(window.rows[0].cells[..4], ["d", "0/1", "Running", "7"]);
        assert_eq!(window.selected, Some(0));

        // Re-sorting keeps the selection on its object.
        store.add(pod("ns", "e", "web", 0, 1)).unwrap();
        view.apply(&"ns/e".into());
        view.set_sort(SortSpec {
            column: 0,
            descending: false,
        });
        assert_eq!(names(&view), ["ns/d", "ns/e"]);
        assert_eq!(view.selected_position(), Some(0));
        view.set_sort(SortSpec {
            column: 0,
            descending: true,
        });
        assert_eq!(view.selected_position(), Some(1));
    }

    #[test]
    fn label_indexes_are_columns_with_cells_and_sort_keys() {
        let mut definitions = default_index_definitions();
        definitions.push(IndexDefinition::new(
            "tier",
            IndexSource::Label("app".into()),
        ));
        let (registry, store) = IndexRegistry::new(definitions).unwrap();
        store.add(pod("ns", "a", "web", 0, 1)).unwrap();
        store.add(pod("ns", "b", "", 0, 1)).unwrap();
        store.add(pod("ns", "c", "db", 0, 1)).unwrap();
        let columns = LiveView::new(registry.clone(), Query::default(), SortSpec::default())
            .unwrap()
            .columns();
        let titles: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            titles[POD_COLUMNS.len()..],
            ["APP", "TIER", "NAMESPACE"],
            "field indexes repeat kubectl columns and get none; NAMESPACE comes last"
        );
        let tier = SortSpec {
            column: POD_COLUMNS.len() + 1,
            descending: false,
        };
        let view = LiveView::new(registry, Query::default(), tier).unwrap();
        assert_eq!(names(&view), ["ns/b", "ns/c", "ns/a"]);
        let window = view.window(0, 3, Timestamp::now());
        let tiers: Vec<&str> = window
            .rows
            .iter()
            .map(|r| r.cells[POD_COLUMNS.len() + 1].as_str())
            .collect();
        assert_eq!(tiers, ["<none>", "db", "web"]);
    }

    #[test]
    fn free_text_narrows_and_follows_updates() {
        let (registry, store) = registry();
        for name in ["frontend-1", "frontend-2", "backend-1"] {
            store.add(pod("web", name, "web", 0, 1)).unwrap();
        }
        let mut view = LiveView::new(
            registry,
            Query::parse("app=web front").unwrap(),
            SortSpec::default(),
        )
        .unwrap();
        assert_eq!(names(&view), ["web/frontend-1", "web/frontend-2"]);
        assert_eq!(view.text(), "front");
        store.add(pod("web", "frontend-3", "web", 0, 1)).unwrap();
        view.apply(&"web/frontend-3".into());
        store.add(pod("web", "backend-2", "web", 0, 1)).unwrap();
        view.apply(&"web/backend-2".into());
        assert_eq!(view.len(), 3);
        assert_eq!(view.query().terms.len(), 1);
    }

    #[test]
    fn text_narrows_widens_follows_members_and_gives_up_when_cancelled() {
        let (registry, store) = registry();
        for i in 0..40 {
            let name = if i % 4 == 0 {
                format!("api-{i}")
            } else {
                format!("web-{i}")
            };
            store.add(pod("ns", &name, "x", i, 1)).unwrap();
        }
        let sort = SortSpec {
            column: RESTARTS,
            descending: false,
        };
        let mut view = LiveView::new(registry, Query::default(), sort).unwrap();
        let expect = |view: &LiveView<Pod>, text: &str, extra: &[u32]| {
            let mut want: Vec<(u32, String)> = (0..40)
                .map(|i| {
                    let name = if i % 4 == 0 { "api" } else { "web" };
                    (i, format!("ns/{name}-{i}"))
                })
                .chain(extra.iter().map(|&i| (i, format!("ns/api-{i}"))))
                .filter(|(_, k)| text_matches(k, text))
                .collect();
            // Restarts equal the number in the name: numeric order.
            want.sort();
            let want: Vec<String> = want.into_iter().map(|(_, k)| k).collect();
            assert_eq!(names(view), want, "{text}");
        };
        // A pass over the members, then narrowing from the rows, then a pass again.
        assert!(view.set_text("-f wb", || false).is_some());
        expect(&view, "wb", &[]);
        assert!(view.set_text("-f wb-", || false).is_some());
        expect(&view, "wb-", &[]);
        assert!(view.set_text("-f a1", || false).is_some());
        expect(&view, "a1", &[]);
        // Members joining and leaving while a text is set.
        store.add(pod("ns", "api-100", "x", 100, 1)).unwrap();
        view.apply(&"ns/api-100".into());
        store.remove("ns/api-16");
        view.apply(&"ns/api-16".into());
        assert_eq!(names(&view), ["ns/api-12", "ns/api-100"]);
        assert!(view.set_text("-f a10", || true).is_none(), "cancelled");
        assert_eq!(view.text(), "-f a1", "a cancelled search changes nothing");
        assert!(view.set_text("-f a10", || false).is_some());
        assert_eq!(names(&view), ["ns/api-100"]);
        view.set_sort(SortSpec {
            column: RESTARTS,
            descending: true,
        });
        assert_eq!(view.text(), "-f a10", "a re-sort keeps the text");
        assert!(view.set_text("", || true).is_some());
        assert_eq!(view.len(), 40);
    }

    #[test]
    fn jobs_on_a_snapshot_take_in_the_changes_made_while_they_ran() {
        let (registry, store) = registry();
        for (name, restarts) in [("a", 3), ("b", 1), ("c", 2), ("ab", 0)] {
            store.add(pod("ns", name, "web", restarts, 1)).unwrap();
        }
        let mut view = LiveView::new(registry, Query::default(), SortSpec::default()).unwrap();
        assert_eq!(names(&view), ["ns/a", "ns/ab", "ns/b", "ns/c"]);

        // A re-sort by restarts, copied two members at a time: after the first two are
        // copied, b moves, c goes, d comes, and aa comes before the copy's last key.
        let by_restarts = SortSpec {
            column: RESTARTS,
            descending: false,
        };
        let mut job = view.sort_job(by_restarts).expect("another order");
        assert!(
            view.copy_members(&mut job, 2),
            "a and ab copied, more to come"
        );
        store.add(pod("ns", "b", "web", 9, 2)).unwrap();
        store.remove("ns/c");
        store.add(pod("ns", "d", "web", 1, 2)).unwrap();
        store.add(pod("ns", "aa", "web", 4, 2)).unwrap();
        for key in ["ns/b", "ns/c", "ns/d", "ns/aa"] {
            view.apply(&key.into());
        }
        assert_eq!(
            names(&view),
            ["ns/a", "ns/aa", "ns/ab", "ns/b", "ns/d"],
            "old order meanwhile"
        );
        while view.copy_members(&mut job, 2) {}
        let result = job.run();
        drop(view.finish_sort(result));
        assert_eq!(names(&view), ["ns/ab", "ns/d", "ns/a", "ns/aa", "ns/b"]);
        assert_eq!(view.sort(), by_restarts);
        assert!(view.sort_job(by_restarts).is_none(), "sorted so already");

        // A fuzzy pass for "a", while ab moves and a2 comes.
        let job = view.text_job("a").expect("text");
        store.add(pod("ns", "ab", "web", 5, 3)).unwrap();
        store.add(pod("ns", "a2", "web", 0, 1)).unwrap();
        for key in ["ns/ab", "ns/a2"] {
            view.apply(&key.into());
        }
        let result = job.run(|| false).expect("not cancelled");
        drop(view.finish_text(result));
        assert_eq!(view.text(), "a");
        assert_eq!(names(&view), ["ns/a2", "ns/a", "ns/aa", "ns/ab"]);

        // A pass over rows a re-sort replaced is not swapped in.
        let job = view.text_job("ab").expect("text");
        let mut resort = view.sort_job(SortSpec::default()).expect("another order");
        while view.copy_members(&mut resort, usize::MAX) {}
        let sorted = resort.run();
        drop(view.finish_sort(sorted));
        let result = job.run(|| false).expect("not cancelled");
        assert!(view.finish_text(result).is_none());
        assert_eq!(view.text(), "a");
        assert_eq!(names(&view), ["ns/a", "ns/a2", "ns/aa", "ns/ab"]);
    }

    #[tokio::test]
    async fn worker_applies_notifications_and_text_through_the_queue() {
        let (registry, writer) = registry();
        let (informer, process) = SharedIndexInformer::new(writer, None, None);
        let fifo = informer.store().clone();
        fifo.replace(
            vec![
                pod("ns", "a", "web", 0, 1),
                pod("ns", "b", "web", 1, 1),
                pod("ns", "c", "db", 0, 1),
            ],
            "1",
        )
        .unwrap();
        let process = tokio::spawn(process.run());
        assert!(informer.wait_for_sync().await);
        let worker = ViewWorker::start(
            &informer,
            registry.clone(),
            Query::parse("app=web").unwrap(),
            SortSpec::default(),
        )
        .unwrap();
        let view = worker.view().clone();
        let mut version = worker.version();
        let wait_for = |want: Vec<&'static str>| {
            let view = view.clone();
            let mut version = version.clone();
            async move {
                tokio::time::timeout(Duration::from_secs(10), async {
                    loop {
                        if names(&view.lock()) == want {
                            return;
                        }
                        version.changed().await.unwrap();
                    }
                })
                .await
                .unwrap_or_else(|_| {
                    panic!("view never became {want:?}: {:?}", names(&view.lock()))
                });
            }
        };
        assert_eq!(names(&view.lock()), ["ns/a", "ns/b"]);

        // An added pod, a relabel out of the view, a delete, and a relist that drops a pod
        // (a tombstone) while adding one.
        fifo.add(pod("ns", "d", "web", 0, 2)).unwrap();
        fifo.update(pod("ns", "a", "db", 0, 3)).unwrap();
        wait_for(vec!["ns/b", "ns/d"]).await;
        fifo.delete(pod("ns", "d", "web", 0, 4)).unwrap();
        wait_for(vec!["ns/b"]).await;
        fifo.replace(
            vec![
                pod("ns", "a", "db", 0, 3),
                pod("ns", "c", "db", 0, 1),
                pod("ns", "e", "web", 0, 5),
            ],
            "5",
        )
        .unwrap();
        wait_for(vec!["ns/e"]).await;

        // A runtime index is usable by a new view at once.
        registry
            .add(IndexDefinition::new(
                "team",
                IndexSource::Label("app".into()),
            ))
            .unwrap();
        let team = LiveView::new(
            registry.clone(),
            Query::parse("team=db").unwrap(),
            SortSpec::default(),
        )
        .unwrap();
        assert_eq!(names(&team), ["ns/a", "ns/c"]);

        // Typed text narrows off-thread; clearing it restores the rows.
        for name in ["web-frontend", "web-backend"] {
            fifo.add(pod("ns", name, "web", 0, 6)).unwrap();
        }
        wait_for(vec!["ns/e", "ns/web-backend", "ns/web-frontend"]).await;
        worker.set_text("-f w");
        worker.set_text("-f wfr");
        wait_for(vec!["ns/web-frontend"]).await;
        assert_eq!(view.lock().text(), "-f wfr");
        // A pod that joins while text filters is matched by the view itself.
        fifo.add(pod("ns", "web-frontend-2", "web", 0, 7)).unwrap();
        wait_for(vec!["ns/web-frontend", "ns/web-frontend-2"]).await;
        worker.set_text("");
        assert_eq!(
            names(&view.lock()),
            [
                "ns/e",
                "ns/web-backend",
                "ns/web-frontend",
                "ns/web-frontend-2",
            ],
            "cleared at once"
        );
        // A re-sort runs off this thread; the rows follow once it is swapped in.
        let descending = SortSpec {
            column: 0,
            descending: true,
        };
        worker.set_sort(descending);
        assert_eq!(worker.sort(), descending);
        wait_for(vec![
            "ns/web-frontend-2",
            "ns/web-frontend",
            "ns/web-backend",
            "ns/e",
        ])
        .await;
        worker.set_sort(SortSpec::default());
        wait_for(vec![
            "ns/e",
            "ns/web-backend",
            "ns/web-frontend",
            "ns/web-frontend-2",
        ])
        .await;
        // A search overtaken by a later keystroke never shows: "web" then "" at once.
        worker.set_text("web");
        worker.set_text("");
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(view.lock().text(), "");
        assert_eq!(view.lock().len(), 4);
        version.borrow_and_update();
        assert!(worker.queue_metrics().adds > 0);
        assert_eq!(worker.pending(), 0);

        informer.stop();
        process.await.unwrap();
    }
}
