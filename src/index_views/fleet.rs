//! The rows of one kind across several clusters: each cluster keeps its own store, indexes
//! and live view (sorted and filtered there); the merged rows are an immutable snapshot,
//! [`FleetRows`], rebuilt off the UI thread by a [`FleetWorker`] from each cluster's sort
//! entries, with one CLUSTER column first. Cells are made only for the rows a frame shows,
//! by the cluster each row comes from.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::watch;

use super::columns::{ColumnKind, TableRow};
use super::live::{LiveView, Row, SortSpec, ViewColumn, Window};
use super::mixed::{
    Latest, MergedRows, MixedRows, ROW_CAP, Snapshot, SnapshotWorker, ViewRows, agreed_text,
};
use super::sorted::RowEntry;
use kscope_informers::keys::Key;
use kscope_resources::Timestamp;

/// The CLUSTER column's position: first, so a fleet's column `c` is its clusters' `c - 1`.
pub const CLUSTER: usize = 0;

/// A fleet table's columns: CLUSTER, then one cluster's view's.
pub fn columns(member: Vec<ViewColumn>) -> Vec<ViewColumn> {
    let cluster = ViewColumn {
        name: "CLUSTER".into(),
        kind: ColumnKind::Text,
        wide: false,
        namespace: false,
        index: false,
        usage: false,
        empty: false,
        cluster: true,
    };
    std::iter::once(cluster).chain(member).collect()
}

/// The sort each cluster's view takes for the fleet's `sort`: the same column less CLUSTER;
/// by CLUSTER, each cluster's rows by their first column.
pub fn member_sort(sort: SortSpec) -> SortSpec {
    SortSpec {
        column: sort.column.saturating_sub(1),
        descending: sort.descending,
    }
}

/// One cluster's rows, read off the UI thread by the fleet's worker.
pub trait ClusterRows: Send + Sync {
    /// The sort entries of the cluster's view on screen (its filter applied), in its order,
    /// at most `cap`.
    fn entries(&self, cap: usize) -> Vec<RowEntry>;

    /// The rows of `keys` still in the store, cells made for these alone.
    fn rows_of(&self, keys: &[Key], now: Timestamp) -> Vec<Row>;

    /// The free text the cluster's view has applied.
    fn text(&self) -> String;
}

impl<T: TableRow> ClusterRows for ViewRows<T> {
    fn entries(&self, cap: usize) -> Vec<RowEntry> {
        self.copy_out(cap, LiveView::entries)
    }

    fn rows_of(&self, keys: &[Key], now: Timestamp) -> Vec<Row> {
        self.view().lock().rows_of(keys, now)
    }

    fn text(&self) -> String {
        self.view().lock().text().to_string()
    }
}

/// One cluster's category rows (`:all`), as its mixed table's worker last rebuilt them.
impl ClusterRows for Latest<MixedRows> {
    fn entries(&self, cap: usize) -> Vec<RowEntry> {
        self.get().entries(cap)
    }

    fn rows_of(&self, keys: &[Key], now: Timestamp) -> Vec<Row> {
        self.get().rows_of(keys, now)
    }

    /// Empty while the cluster's kinds have not all applied the same text, as the
    /// category's own table says it.
    fn text(&self) -> String {
        self.get().text().unwrap_or_default().to_string()
    }
}

/// A cluster as the worker reads it: its name (the kubeconfig context), and its rows
/// unless the `cluster=` terms leave it out.
#[derive(Clone)]
pub struct ClusterInput {
    pub cluster: Arc<str>,
    pub rows: Option<Arc<dyn ClusterRows>>,
    /// Bumped when its rows may have changed.
    pub version: Option<watch::Receiver<u64>>,
}

/// One merged row: its cluster and that cluster's sort entry. Its id (`prod-eu/default/web`)
/// is made when asked for, not kept: a million rows would hold a million more strings.
struct FleetRow {
    member: u32,
    entry: RowEntry,
}

/// An immutable snapshot of a fleet table's rows, sorted.
#[derive(Default)]
pub struct FleetRows {
    clusters: Vec<Arc<str>>,
    sources: Vec<Option<Arc<dyn ClusterRows>>>,
    rows: Vec<FleetRow>,
    /// Every row as its cluster and key's hash (high half) and its position (low half),
    /// sorted: a row found by its id in a binary search, at 8 bytes a row where a map by
    /// id took about 50, and built by sorting integers, not strings.
    by_hash: Vec<u64>,
    /// Rows per cluster, in the order of `clusters`.
    counts: Vec<usize>,
    sort: SortSpec,
    text: Option<String>,
    dropped: usize,
}

impl FleetRows {
    /// Merges every cluster's rows by `sort`: by CLUSTER, cluster by cluster in the order
    /// given, each in its own view's order; else by the clusters' sort keys, ties by
    /// cluster, then key.
    pub fn build(members: &[ClusterInput], sort: SortSpec) -> Self {
        let mut rows: Vec<FleetRow> = Vec::new();
        let mut texts: Vec<String> = Vec::new();
        let mut counts = vec![0; members.len()];
        let mut dropped = 0;
        for (member, input) in (0u32..).zip(members) {
            let Some(source) = &input.rows else {
                continue;
            };
            texts.push(source.text());
            let room = ROW_CAP.saturating_sub(rows.len());
            let entries = source.entries(room.saturating_add(1));
            dropped += entries.len().saturating_sub(room);
            counts[member as usize] = entries.len().min(room);
            rows.extend(
                entries
                    .into_iter()
                    .take(room)
                    .map(|entry| FleetRow { member, entry }),
            );
        }
        if sort.column == CLUSTER {
            // Each cluster's rows are in its own order already: only the clusters move.
            if sort.descending {
                rows.sort_by_key(|row| std::cmp::Reverse(row.member));
            }
        } else {
            // Stable: each cluster's rows come in its own view's order, sorted runs that the
            // stable sort merges rather than sorting a million rows afresh.
            rows.sort_by(|a, b| {
                a.entry
                    .sort
                    .cmp(&b.entry.sort)
                    .then_with(|| a.member.cmp(&b.member))
                    .then_with(|| a.entry.key.cmp(&b.entry.key))
            });
            if sort.descending {
                rows.reverse();
            }
        }
        // ROW_CAP keeps every position within 32 bits.
        let mut by_hash: Vec<u64> = (0u32..)
            .zip(&rows)
            .map(|(at, row)| slot(row.member, &row.entry.key) | u64::from(at))
            .collect();
        by_hash.sort_unstable();
        let text = agreed_text(&texts);
        Self {
            clusters: members.iter().map(|m| m.cluster.clone()).collect(),
            sources: members.iter().map(|m| m.rows.clone()).collect(),
            rows,
            by_hash,
            counts,
            sort,
            text,
            dropped,
        }
    }

    /// The row id of `member`'s `key`: unique across clusters, since a key holds at most
    /// one `/` and a kind's keys all hold one or none.
    fn id_of(&self, member: u32, key: &str) -> Key {
        let cluster = self.clusters.get(member as usize).map_or("", |c| &**c);
        format!("{cluster}/{key}").into()
    }

    /// Where `member`'s row `key` is: among the rows of its hash, the one that is it.
    fn find(&self, member: u32, key: &str) -> Option<usize> {
        let slot = slot(member, key);
        let first = self.by_hash.partition_point(|&entry| entry < slot);
        self.by_hash[first..]
            .iter()
            .take_while(|&&entry| entry >> 32 == slot >> 32)
            .map(|&entry| (entry & u64::from(u32::MAX)) as usize)
            .find(|&at| {
                self.rows
                    .get(at)
                    .is_some_and(|row| row.member == member && *row.entry.key == *key)
            })
    }

    pub fn sort(&self) -> SortSpec {
        self.sort
    }

    /// The text the rows were read with, when every cluster had applied the same.
    pub fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// Rows left out over [`ROW_CAP`].
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    /// Each cluster with its rows in the snapshot: the `cluster` index's value counts.
    pub fn counts(&self) -> impl Iterator<Item = (&Arc<str>, usize)> {
        self.clusters.iter().zip(self.counts.iter().copied())
    }

    /// Copies out `height` rows from `offset`, their cells made by their clusters' views
    /// as of `now`, each led by `label(member)` (the cluster's name, and how current it
    /// is); `selected` is the selected row's id.
    pub fn window(
        &self,
        offset: usize,
        height: usize,
        now: Timestamp,
        selected: Option<&str>,
        label: impl Fn(usize) -> String,
    ) -> Window {
        let shown: Vec<&FleetRow> = self.rows.iter().skip(offset).take(height).collect();
        let mut wanted: Vec<Vec<Key>> = vec![Vec::new(); self.sources.len()];
        for row in &shown {
            wanted[row.member as usize].push(row.entry.key.clone());
        }
        let mut made: Vec<HashMap<Key, Row>> = wanted
            .iter()
            .zip(&self.sources)
            .map(|(keys, source)| match source {
                Some(source) if !keys.is_empty() => source
                    .rows_of(keys, now)
                    .into_iter()
                    .map(|row| (row.key.clone(), row))
                    .collect(),
                _ => HashMap::new(),
            })
            .collect();
        let labels: Vec<String> = (0..self.clusters.len()).map(label).collect();
        // A row whose object just left its store is skipped, as a kind's own window does.
        let rows = shown
            .iter()
            .filter_map(|row| {
                let made = made[row.member as usize].remove(&row.entry.key)?;
                let mut cells = Vec::with_capacity(made.cells.len() + 1);
                cells.push(labels[row.member as usize].clone());
                cells.extend(made.cells);
                Some(Row {
                    key: self.id_of(row.member, &row.entry.key),
                    cells,
                    health: made.health,
                })
            })
            .collect();
        Window {
            offset,
            total: self.rows.len(),
            rows,
            selected: selected.and_then(|id| self.position(id)),
        }
    }
}

/// A row's hash of its cluster and key, in the high half of a `by_hash` entry (a fixed
/// seed: the same in every snapshot).
fn slot(member: u32, key: &str) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::default().hash_one((member, key)) & !u64::from(u32::MAX)
}

impl MergedRows for FleetRows {
    fn len(&self) -> usize {
        self.rows.len()
    }

    /// A cluster's name may hold a `/` (or be another's prefix): each cluster whose name
    /// leads the id is tried.
    fn position(&self, id: &str) -> Option<usize> {
        (0u32..).zip(&self.clusters).find_map(|(member, cluster)| {
            let key = id.strip_prefix(&**cluster)?.strip_prefix('/')?;
            self.find(member, key)
        })
    }

    fn id(&self, position: usize) -> Option<Key> {
        let row = self.rows.get(position)?;
        Some(self.id_of(row.member, &row.entry.key))
    }

    fn member_key(&self, position: usize) -> Option<(usize, &Key)> {
        let row = self.rows.get(position)?;
        Some((row.member as usize, &row.entry.key))
    }
}

impl Snapshot for FleetRows {
    type Member = ClusterInput;

    fn build(members: &[ClusterInput], sort: SortSpec) -> Self {
        FleetRows::build(members, sort)
    }

    fn empty(sort: SortSpec) -> Self {
        FleetRows {
            sort,
            ..FleetRows::default()
        }
    }

    fn version(member: &ClusterInput) -> Option<watch::Receiver<u64>> {
        member.version.clone()
    }
}

/// A fleet table's worker: [`FleetRows`] kept current.
pub type FleetWorker = SnapshotWorker<FleetRows>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::columns::{RowHealth, SortValue};
    use std::borrow::Cow;

    /// A cluster whose rows are given: (name, sort text) in its order.
    struct Fixed(Vec<(&'static str, &'static str)>);

    impl ClusterRows for Fixed {
        fn entries(&self, cap: usize) -> Vec<RowEntry> {
            self.0
                .iter()
                .take(cap)
                .map(|(key, sort)| RowEntry {
                    sort: SortValue::Text(Cow::Borrowed(sort)).into_key(),
                    key: (*key).into(),
                })
                .collect()
        }
        fn rows_of(&self, keys: &[Key], _now: Timestamp) -> Vec<Row> {
            keys.iter()
                .map(|key| Row {
                    key: key.clone(),
                    cells: vec![key.to_string()],
                    health: RowHealth::Normal,
                })
                .collect()
        }
        fn text(&self) -> String {
            String::new()
        }
    }

    fn cluster(name: &str, rows: Vec<(&'static str, &'static str)>) -> ClusterInput {
        ClusterInput {
            cluster: name.into(),
            rows: Some(Arc::new(Fixed(rows))),
            version: None,
        }
    }

    fn cells(rows: &FleetRows) -> Vec<String> {
        let window = rows.window(0, usize::MAX, Timestamp::from_seconds(0), None, |m| {
            format!("c{}", m + 1)
        });
        window.rows.iter().map(|r| r.cells.join(" ")).collect()
    }

    #[test]
    fn clusters_merge_by_the_sort_key_and_by_cluster_first() {
        let members = vec![
            cluster("c1", vec![("a/web", "web"), ("a/db", "db")]),
            cluster("c2", vec![("a/api", "api")]),
            ClusterInput {
                rows: None,
                ..cluster("c3", Vec::new())
            },
        ];
        let by_cluster = FleetRows::build(&members, SortSpec::default());
        assert_eq!(cells(&by_cluster), ["c1 a/web", "c1 a/db", "c2 a/api"]);
        let by_name = FleetRows::build(
            &members,
            SortSpec {
                column: 1,
                descending: false,
            },
        );
        assert_eq!(cells(&by_name), ["c2 a/api", "c1 a/db", "c1 a/web"]);
        assert_eq!(by_name.member_of("c2/a/api"), Some((1, "a/api".into())));
        let counts: Vec<(String, usize)> =
            by_name.counts().map(|(c, n)| (c.to_string(), n)).collect();
        assert_eq!(
            counts,
            [("c1".into(), 2), ("c2".into(), 1), ("c3".into(), 0)]
        );
        let reversed = FleetRows::build(
            &members,
            SortSpec {
                column: CLUSTER,
                descending: true,
            },
        );
        assert_eq!(cells(&reversed)[0], "c2 a/api");
    }

    #[test]
    fn every_row_is_found_by_its_id_when_one_clusters_name_leads_anothers() {
        let many: Vec<(&'static str, &'static str)> = (0..500)
            .map(|i| {
                let key: &'static str = Box::leak(format!("ns/pod-{i}").into_boxed_str());
                (key, key)
            })
            .collect();
        let members = vec![
            cluster("prod", many.clone()),
            cluster("prod/eu", vec![("eu/web", "web"), ("ns/pod-7", "x")]),
            cluster("staging", many),
        ];
        for sort in [
            SortSpec::default(),
            SortSpec {
                column: 1,
                descending: true,
            },
        ] {
            let rows = FleetRows::build(&members, sort);
            assert_eq!(rows.len(), 1002);
            for at in 0..rows.len() {
                let id = rows.id(at).expect("a row");
                assert_eq!(rows.position(&id), Some(at), "{id}");
            }
            assert_eq!(
                rows.member_of("prod/eu/ns/pod-7"),
                Some((1, "ns/pod-7".into()))
            );
            assert_eq!(
                rows.member_of("prod/ns/pod-7"),
                Some((0, "ns/pod-7".into()))
            );
            assert_eq!(rows.position("prod/eu/web"), None, "no such row");
            assert_eq!(rows.position("prod/ns/pod-500"), None);
            assert_eq!(rows.position("elsewhere/ns/pod-1"), None);
        }
    }
}
