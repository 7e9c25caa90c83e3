//! The rows of a category (`:all`): every member kind's rows in one table, as `kubectl get
//! all` lists them, with one KIND column and a STATUS cell each kind fills its own way.
//!
//! Each member kind keeps its own store and live view (its filter, its label index); the
//! mixed rows are an immutable snapshot, [`MixedRows`], rebuilt off the UI thread by a
//! [`MixedWorker`] whenever a member's view changes, and swapped in whole: a frame copies out
//! a window of the snapshot it finds, never waiting for a rebuild.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::future::select_all;
use parking_lot::Mutex;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::columns::{Column, ColumnKind, HEALTH, RowHealth, SortKey, SortValue, TableRow};
use super::live::{LiveView, Row, SortSpec, ViewColumn, Window};
use super::sorted::RowEntry;
use kscope_informers::indexer::Indexer;
use kscope_informers::keys::{Key, split_meta_namespace_key};
use kscope_resources::{Kind, Timestamp};

/// The mixed table's columns, in cell order: NAMESPACE last (drawn first when the view spans
/// namespaces), as a kind's own view has it.
pub const KIND: usize = 0;
pub const NAME: usize = 1;
pub const STATUS: usize = 2;
pub const AGE: usize = 3;
pub const NAMESPACE: usize = 4;

/// The columns of a mixed table, as [`LiveView::columns`] describes a kind's.
pub fn columns() -> Vec<ViewColumn> {
    let column = |name: &str, kind| ViewColumn {
        name: name.into(),
        kind,
        wide: false,
        namespace: false,
        index: false,
        usage: false,
        empty: false,
        cluster: false,
    };
    vec![
        column("KIND", ColumnKind::Text),
        column("NAME", ColumnKind::Text),
        column("STATUS", ColumnKind::Text),
        column("AGE", ColumnKind::Age),
        ViewColumn {
            namespace: true,
            ..column("NAMESPACE", ColumnKind::Text)
        },
    ]
}

/// One object of a member kind, as the mixed table needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Its key in its own kind's store.
    pub key: Key,
    /// Its kind's status-like cell (STATUS, else READY, else HEALTH); empty without one.
    pub status: String,
    pub created: Option<Timestamp>,
    pub health: RowHealth,
}

/// A member kind's rows, read off the UI thread by the mixed table's worker.
pub trait MemberRows: Send + Sync {
    /// The objects of the member's view on screen (its filter applied), at most `cap`.
    fn summaries(&self, cap: usize) -> Vec<Summary>;

    /// The free text the member's view has applied.
    fn text(&self) -> String;
}

/// Keys copied out of a member's view per hold of its lock.
const KEY_CHUNK: usize = 4096;

/// A kind's live view and store, read as a member of a mixed table.
pub struct ViewRows<T> {
    view: Arc<Mutex<LiveView<T>>>,
    indexer: Indexer<T>,
    kind: Kind,
}

impl<T: TableRow> ViewRows<T> {
    pub fn new(view: Arc<Mutex<LiveView<T>>>, indexer: Indexer<T>, kind: &Kind) -> Self {
        Self {
            view,
            indexer,
            kind: kind.clone(),
        }
    }
}

/// The column a kind's summary reads: kubectl's STATUS, else READY, else kscope's HEALTH
/// (which every discovered kind has).
fn status_column(columns: &[Column]) -> Option<usize> {
    ["STATUS", "READY", HEALTH]
        .iter()
        .find_map(|name| columns.iter().position(|c| c.name == *name))
}

impl<T: TableRow> ViewRows<T> {
    pub(crate) fn view(&self) -> &Mutex<LiveView<T>> {
        &self.view
    }

    /// At most `cap` of what `read` copies out of the view from an offset, in order: a
    /// chunk per hold of the lock, so the view's worker never waits for the whole copy; a
    /// row moved meanwhile may be read twice or missed, until the next rebuild.
    pub(crate) fn copy_out<E>(
        &self,
        cap: usize,
        read: impl Fn(&LiveView<T>, usize, usize) -> Vec<E>,
    ) -> Vec<E> {
        let mut out: Vec<E> = Vec::new();
        loop {
            let chunk = read(&self.view.lock(), out.len(), KEY_CHUNK);
            let last = chunk.len() < KEY_CHUNK;
            out.extend(chunk);
            if last || out.len() >= cap {
                break;
            }
        }
        out.truncate(cap);
        out
    }
}

impl<T: TableRow> MemberRows for ViewRows<T> {
    fn summaries(&self, cap: usize) -> Vec<Summary> {
        let mut keys = self.copy_out(cap, LiveView::keys);
        keys.sort_unstable();
        keys.dedup();
        // Read each time: a discovered kind learns its columns from its first Table.
        let columns = T::columns(&self.kind);
        let status = status_column(&columns);
        let epoch = Timestamp::from_seconds(0);
        keys.into_iter()
            .filter_map(|key| {
                let obj = self.indexer.get_by_key(&key)?;
                let status = match status {
                    Some(at) => obj.cell(&columns, at, epoch),
                    None => String::new(),
                };
                Some(Summary {
                    key,
                    status,
                    created: obj.created(),
                    health: obj.health(),
                })
            })
            .collect()
    }

    fn text(&self) -> String {
        self.view.lock().text().to_string()
    }
}

/// A member kind as the worker reads it: its `kubectl get all` row prefix
/// (`deployment.apps`), and its rows unless the filter left it out.
#[derive(Clone)]
pub struct MemberInput {
    pub label: Arc<str>,
    pub rows: Option<Arc<dyn MemberRows>>,
    /// Bumped when its rows may have changed.
    pub version: Option<watch::Receiver<u64>>,
}

/// One row of a mixed table.
#[derive(Debug, Clone)]
struct MixedRow {
    member: usize,
    /// Unique across kinds: `deployment.apps/default/web`.
    id: Key,
    summary: Summary,
    sort: SortKey,
}

/// The rows most a merged table holds; more are left out, and the snapshot says so. Twice a
/// fleet of twenty clusters of 50,000 pods (about 56 bytes a fleet row, 120 MB at the cap).
pub const ROW_CAP: usize = 2_000_000;

/// A table merged from several members' rows (`:all`'s kinds, a fleet's clusters), each row
/// named by an id unique across them: what a selection on it follows.
pub trait MergedRows {
    fn len(&self) -> usize;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where the row `id` is.
    fn position(&self, id: &str) -> Option<usize>;

    /// The id of the row at `position`.
    fn id(&self, position: usize) -> Option<Key>;

    /// The row at `position`: its member, and the member's own key for it.
    fn member_key(&self, position: usize) -> Option<(usize, &Key)>;

    /// The row id at `position`, clamped to the rows.
    fn id_at(&self, position: usize) -> Option<Key> {
        let last = self.len().checked_sub(1)?;
        self.id(position.min(last))
    }

    /// The member and its own key of the row `id`.
    fn member_of(&self, id: &str) -> Option<(usize, Key)> {
        let (member, key) = self.member_key(self.position(id)?)?;
        Some((member, key.clone()))
    }
}

/// Each row's position by its id, for [`MergedRows::position`].
fn positions<R>(rows: &[R], id: impl Fn(&R) -> &Key) -> HashMap<Key, usize> {
    rows.iter()
        .enumerate()
        .map(|(at, row)| (id(row).clone(), at))
        .collect()
}

impl MergedRows for MixedRows {
    fn len(&self) -> usize {
        self.rows.len()
    }

    fn position(&self, id: &str) -> Option<usize> {
        self.positions.get(id).copied()
    }

    fn id(&self, position: usize) -> Option<Key> {
        self.rows.get(position).map(|row| row.id.clone())
    }

    fn member_key(&self, position: usize) -> Option<(usize, &Key)> {
        let row = self.rows.get(position)?;
        Some((row.member, &row.summary.key))
    }
}

/// The filter text every member's rows were read with, if they all agree (none read: the
/// empty text); `None` while a new filter has reached only some of them.
pub(crate) fn agreed_text(texts: &[String]) -> Option<String> {
    match texts.split_first() {
        Some((first, rest)) if rest.iter().all(|t| t == first) => Some(first.clone()),
        Some(_) => None,
        None => Some(String::new()),
    }
}

/// An immutable snapshot of a mixed table's rows, sorted.
#[derive(Default)]
pub struct MixedRows {
    labels: Vec<Arc<str>>,
    rows: Vec<MixedRow>,
    positions: HashMap<Key, usize>,
    sort: SortSpec,
    /// The text every member had applied when the snapshot was read, if they agreed.
    text: Option<String>,
    /// Rows left out over [`ROW_CAP`].
    dropped: usize,
}

impl MixedRows {
    /// Reads every member's rows and sorts them by `sort` (ties by kind, then key).
    pub fn build(members: &[MemberInput], sort: SortSpec) -> Self {
        let mut rows = Vec::new();
        let mut texts: Vec<String> = Vec::new();
        let mut dropped = 0;
        for (member, input) in members.iter().enumerate() {
            let Some(source) = &input.rows else {
                continue;
            };
            texts.push(source.text());
            let room = ROW_CAP.saturating_sub(rows.len());
            let summaries = source.summaries(room.saturating_add(1));
            dropped += summaries.len().saturating_sub(room);
            rows.extend(summaries.into_iter().take(room).map(|summary| {
                let sort = sort_key(&input.label, &summary, sort.column);
                MixedRow {
                    member,
                    id: format!("{}/{}", input.label, summary.key).into(),
                    summary,
                    sort,
                }
            }));
        }
        rows.sort_unstable_by(|a, b| a.sort.cmp(&b.sort).then_with(|| a.id.cmp(&b.id)));
        if sort.descending {
            rows.reverse();
        }
        let positions = positions(&rows, |row| &row.id);
        let text = agreed_text(&texts);
        Self {
            labels: members.iter().map(|m| m.label.clone()).collect(),
            rows,
            positions,
            sort,
            text,
            dropped,
        }
    }

    pub fn sort(&self) -> SortSpec {
        self.sort
    }

    /// The text the rows were read with, when every member had applied the same.
    pub fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// Rows left out because the table would pass [`ROW_CAP`].
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    /// Copies out `height` rows from `offset`, their ages as of `now`; `selected` is the
    /// selected row's id.
    pub fn window(
        &self,
        offset: usize,
        height: usize,
        now: Timestamp,
        selected: Option<&str>,
    ) -> Window {
        let rows = self
            .rows
            .iter()
            .skip(offset)
            .take(height)
            .map(|row| self.made(row, now))
            .collect();
        Window {
            offset,
            total: self.rows.len(),
            rows,
            selected: selected.and_then(|id| self.position(id)),
        }
    }

    /// The rows in order with what they sort by, at most `cap`: one cluster's category
    /// rows, for a table across clusters to merge.
    pub fn entries(&self, cap: usize) -> Vec<RowEntry> {
        self.rows
            .iter()
            .take(cap)
            .map(|row| RowEntry {
                sort: row.sort.clone(),
                key: row.id.clone(),
            })
            .collect()
    }

    /// The rows of `ids` still in the snapshot, their ages as of `now`.
    pub fn rows_of(&self, ids: &[Key], now: Timestamp) -> Vec<Row> {
        ids.iter()
            .filter_map(|id| self.rows.get(self.position(id)?))
            .map(|row| self.made(row, now))
            .collect()
    }

    /// A row's cells, its age as of `now`.
    fn made(&self, row: &MixedRow, now: Timestamp) -> Row {
        let label = self.labels.get(row.member).map_or("", |l| l.as_ref());
        let (namespace, name) = split_meta_namespace_key(&row.summary.key);
        let age = row
            .summary
            .created
            .map_or_else(|| "<unknown>".to_owned(), |t| t.human_since(now));
        Row {
            key: row.id.clone(),
            cells: vec![
                label.to_string(),
                name.to_string(),
                row.summary.status.clone(),
                age,
                namespace.unwrap_or("").to_string(),
            ],
            health: row.summary.health,
        }
    }
}

/// What a mixed row sorts by in `column`.
fn sort_key(label: &str, summary: &Summary, column: usize) -> SortKey {
    let (namespace, name) = split_meta_namespace_key(&summary.key);
    let value = match column {
        KIND => SortValue::Text(Cow::Borrowed(label)),
        NAME => SortValue::Text(Cow::Borrowed(name)),
        STATUS => SortValue::Text(Cow::Borrowed(summary.status.as_str())),
        AGE => SortValue::age(summary.created),
        _ => SortValue::Text(Cow::Borrowed(namespace.unwrap_or(""))),
    };
    value.into_key()
}

/// Rows rebuilt whole from members by a [`SnapshotWorker`]: a category's kinds
/// ([`MixedRows`]) or a fleet's clusters.
pub trait Snapshot: Send + Sync + Sized + 'static {
    /// What the worker reads of each member.
    type Member: Clone + Send + Sync + 'static;

    /// Reads every member's rows and sorts them by `sort`.
    fn build(members: &[Self::Member], sort: SortSpec) -> Self;

    /// The rows before the first build.
    fn empty(sort: SortSpec) -> Self;

    /// Bumped when the member's rows may have changed.
    fn version(member: &Self::Member) -> Option<watch::Receiver<u64>>;
}

impl Snapshot for MixedRows {
    type Member = MemberInput;

    fn build(members: &[MemberInput], sort: SortSpec) -> Self {
        MixedRows::build(members, sort)
    }

    fn empty(sort: SortSpec) -> Self {
        MixedRows {
            sort,
            text: None,
            ..MixedRows::default()
        }
    }

    fn version(member: &MemberInput) -> Option<watch::Receiver<u64>> {
        member.version.clone()
    }
}

/// What the worker reads: the members and the order asked for.
struct Inputs<S: Snapshot> {
    members: Vec<S::Member>,
    sort: SortSpec,
}

impl<S: Snapshot> Clone for Inputs<S> {
    fn clone(&self) -> Self {
        Self {
            members: self.members.clone(),
            sort: self.sort,
        }
    }
}

/// The longest pause between two rebuilds under churn.
const MAX_PAUSE: Duration = Duration::from_secs(1);

/// A category's worker: [`MixedRows`] kept current.
pub type MixedWorker = SnapshotWorker<MixedRows>;

/// Keeps a snapshot current: rebuilt on a blocking thread whenever a member's rows or the
/// inputs change, then swapped in and announced by a version bump. Under constant change it
/// pauses after each rebuild for as long as the rebuild took, so it spends at most about
/// half a core. Dropping it stops its task.
pub struct SnapshotWorker<S: Snapshot> {
    inputs: watch::Sender<Inputs<S>>,
    snapshot: Arc<Mutex<Arc<S>>>,
    version: watch::Receiver<u64>,
    task: JoinHandle<()>,
}

impl<S: Snapshot> SnapshotWorker<S> {
    /// Starts on the current Tokio runtime with `members`, sorted by `sort`.
    pub fn start(members: Vec<S::Member>, sort: SortSpec) -> Self {
        let (inputs, mut inputs_rx) = watch::channel(Inputs { members, sort });
        let snapshot = Arc::new(Mutex::new(Arc::new(S::empty(sort))));
        let (version_tx, version) = watch::channel(0u64);
        let shared = snapshot.clone();
        let task = tokio::spawn(async move {
            // The snapshot before the current one: a frame may still hold it when it is
            // replaced, so it is released at the next rebuild, off the UI thread (releasing
            // 150,000 rows costs as much as building them), and before that rebuild starts,
            // so no more than two snapshots are ever held.
            let mut previous: Option<Arc<S>> = None;
            loop {
                let inputs = inputs_rx.borrow_and_update().clone();
                let mut versions: Vec<Option<watch::Receiver<u64>>> =
                    inputs.members.iter().map(S::version).collect();
                for version in versions.iter_mut().flatten() {
                    version.mark_unchanged();
                }
                let started = tokio::time::Instant::now();
                let members = inputs.members;
                let sort = inputs.sort;
                let released = previous.take();
                let built = tokio::task::spawn_blocking(move || {
                    drop(released);
                    S::build(&members, sort)
                })
                .await;
                let Ok(built) = built else {
                    return;
                };
                let replaced = std::mem::replace(&mut *shared.lock(), Arc::new(built));
                version_tx.send_modify(|v| *v += 1);
                previous = Some(replaced);
                let pause = started.elapsed().min(MAX_PAUSE);
                tokio::select! {
                    changed = inputs_rx.changed() => if changed.is_err() { return },
                    () = any_changed(&mut versions) => {
                        tokio::time::sleep(pause).await;
                    }
                }
            }
        });
        Self {
            inputs,
            snapshot,
            version,
            task,
        }
    }

    /// The rows as last rebuilt.
    pub fn snapshot(&self) -> Arc<S> {
        self.snapshot.lock().clone()
    }

    /// A handle that reads the rows as last rebuilt, for a reader off the UI thread (a
    /// fleet table merging each cluster's category rows).
    pub fn latest(&self) -> Latest<S> {
        Latest(self.snapshot.clone())
    }

    /// Bumped when a rebuilt snapshot is swapped in.
    pub fn version(&self) -> watch::Receiver<u64> {
        self.version.clone()
    }

    /// Replaces the members (their views changed: a new filter).
    pub fn set_members(&self, members: Vec<S::Member>) {
        self.inputs.send_modify(|inputs| inputs.members = members);
    }

    /// Re-sorts from the next rebuild on, which this asks for.
    pub fn set_sort(&self, sort: SortSpec) {
        self.inputs.send_modify(|inputs| inputs.sort = sort);
    }

    /// The sort asked for last.
    pub fn sort(&self) -> SortSpec {
        self.inputs.borrow().sort
    }
}

/// The rows a [`SnapshotWorker`] last rebuilt, read wherever the handle is.
pub struct Latest<S>(Arc<Mutex<Arc<S>>>);

impl<S> Latest<S> {
    pub fn get(&self) -> Arc<S> {
        self.0.lock().clone()
    }
}

impl<S: Snapshot> Drop for SnapshotWorker<S> {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Waits until one of `versions` changes; one whose sender is gone is no longer waited on.
pub async fn any_changed<T>(versions: &mut [Option<watch::Receiver<T>>]) {
    loop {
        let waits: Vec<_> = versions
            .iter_mut()
            .enumerate()
            .filter_map(|(at, v)| {
                v.as_mut()
                    .map(|v| Box::pin(async move { (at, v.changed().await) }))
            })
            .collect();
        if waits.is_empty() {
            return std::future::pending().await;
        }
        let ((at, result), _, rest) = select_all(waits).await;
        drop(rest);
        match result {
            Ok(()) => return,
            Err(_) => versions[at] = None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A member whose rows are given.
    struct Fixed(Vec<Summary>, &'static str);

    impl MemberRows for Fixed {
        fn summaries(&self, cap: usize) -> Vec<Summary> {
            self.0.iter().take(cap).cloned().collect()
        }
        fn text(&self) -> String {
            self.1.to_string()
        }
    }

    fn summary(key: &str, status: &str, created: i64) -> Summary {
        Summary {
            key: key.into(),
            status: status.into(),
            created: Some(Timestamp::from_seconds(created)),
            health: RowHealth::Normal,
        }
    }

    fn member(label: &str, rows: Vec<Summary>, text: &'static str) -> MemberInput {
        MemberInput {
            label: label.into(),
            rows: Some(Arc::new(Fixed(rows, text))),
            version: None,
        }
    }

    fn names(rows: &MixedRows) -> Vec<String> {
        let window = rows.window(0, usize::MAX, Timestamp::from_seconds(100), None);
        window.rows.iter().map(|r| r.key.to_string()).collect()
    }

    #[test]
    fn kinds_mix_in_one_order_with_their_own_status_and_a_unique_id() {
        let members = vec![
            member(
                "pod",
                vec![
                    summary("a/web-1", "Running", 50),
                    summary("a/db", "Pending", 90),
                ],
                "",
            ),
            member("deployment.apps", vec![summary("a/web", "1/1", 10)], ""),
            member("service", vec![summary("a/web", "<none>", 70)], ""),
        ];
        let by_name = MixedRows::build(
            &members,
            SortSpec {
                column: NAME,
                descending: false,
            },
        );
        assert_eq!(
            names(&by_name),
            [
                "pod/a/db",
                "deployment.apps/a/web",
                "service/a/web",
                "pod/a/web-1"
            ]
        );
        let window = by_name.window(1, 1, Timestamp::from_seconds(100), Some("service/a/web"));
        assert_eq!(
            window.rows[0].cells,
            ["deployment.apps", "web", "1/1", "90s", "a"]
        );
        assert_eq!((window.total, window.selected), (4, Some(2)));
        assert_eq!(
            by_name.member_of("service/a/web"),
            Some((2, "a/web".into()))
        );

        // AGE: youngest first, as a kind's own table; reversed by `S`.
        let by_age = MixedRows::build(
            &members,
            SortSpec {
                column: AGE,
                descending: false,
            },
        );
        assert_eq!(names(&by_age)[0], "pod/a/db");
        let oldest = MixedRows::build(
            &members,
            SortSpec {
                column: AGE,
                descending: true,
            },
        );
        assert_eq!(names(&oldest)[0], "deployment.apps/a/web");
        let by_kind = MixedRows::build(
            &members,
            SortSpec {
                column: KIND,
                descending: false,
            },
        );
        assert_eq!(names(&by_kind)[0], "deployment.apps/a/web");
    }

    #[test]
    fn each_clusters_category_rows_merge_across_clusters_by_their_sort_keys() {
        use crate::fleet::{ClusterInput, FleetRows, member_sort};
        let sort = SortSpec {
            column: 2,
            descending: false,
        };
        let cluster = |name: &str, members: Vec<MemberInput>| {
            let rows = MixedRows::build(&members, member_sort(sort));
            ClusterInput {
                cluster: name.into(),
                rows: Some(Arc::new(Latest(Arc::new(Mutex::new(Arc::new(rows)))))),
                version: None,
            }
        };
        let clusters = [
            cluster(
                "c1",
                vec![
                    member("pod", vec![summary("a/web-1", "Running", 50)], ""),
                    member("service", vec![summary("a/db", "<none>", 70)], ""),
                ],
            ),
            cluster(
                "c2",
                vec![member(
                    "deployment.apps",
                    vec![summary("a/web", "1/1", 10)],
                    "",
                )],
            ),
        ];
        let merged = FleetRows::build(&clusters, sort);
        let window = merged.window(0, 10, Timestamp::from_seconds(100), None, |at| {
            format!("c{}", at + 1)
        });
        let cells: Vec<String> = window.rows.iter().map(|r| r.cells.join(" ")).collect();
        assert_eq!(
            cells,
            [
                "c1 service db <none> 30s a",
                "c2 deployment.apps web 1/1 90s a",
                "c1 pod web-1 Running 50s a"
            ]
        );
        assert_eq!(
            merged.member_of("c2/deployment.apps/a/web"),
            Some((1, "deployment.apps/a/web".into())),
            "the cluster's own id, which its category table resolves to its kind's key"
        );
    }

    #[test]
    fn a_member_left_out_adds_no_rows_and_texts_must_agree() {
        let mut members = vec![
            member("pod", vec![summary("a/p", "Running", 1)], "we"),
            member("service", vec![summary("a/s", "", 1)], "we"),
        ];
        let rows = MixedRows::build(&members, SortSpec::default());
        assert_eq!((rows.len(), rows.text()), (2, Some("we")));
        members[1].rows = None;
        let rows = MixedRows::build(&members, SortSpec::default());
        assert_eq!(names(&rows), ["pod/a/p"]);
        members.push(member("job.batch", vec![], "w"));
        assert_eq!(MixedRows::build(&members, SortSpec::default()).text(), None);
    }

    #[tokio::test]
    async fn the_worker_rebuilds_when_a_member_changes() {
        let (tx, rx) = watch::channel(0u64);
        let rows = Arc::new(Mutex::new(vec![summary("a/p", "Running", 1)]));
        struct Shared(Arc<Mutex<Vec<Summary>>>);
        impl MemberRows for Shared {
            fn summaries(&self, cap: usize) -> Vec<Summary> {
                self.0.lock().iter().take(cap).cloned().collect()
            }
            fn text(&self) -> String {
                String::new()
            }
        }
        let input = MemberInput {
            label: "pod".into(),
            rows: Some(Arc::new(Shared(rows.clone()))),
            version: Some(rx),
        };
        let worker = MixedWorker::start(vec![input], SortSpec::default());
        let mut version = worker.version();
        version.changed().await.expect("first build");
        assert_eq!(worker.snapshot().len(), 1);
        rows.lock().push(summary("a/q", "Running", 2));
        tx.send_modify(|v| *v += 1);
        version.changed().await.expect("rebuilt");
        assert_eq!(names(&worker.snapshot()), ["pod/a/p", "pod/a/q"]);
        worker.set_sort(SortSpec {
            column: AGE,
            descending: false,
        });
        version.changed().await.expect("re-sorted");
        assert_eq!(names(&worker.snapshot()), ["pod/a/q", "pod/a/p"]);
    }
}
