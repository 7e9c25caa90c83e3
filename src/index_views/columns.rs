//! Table columns per kind, as kubectl prints them (`-o wide` adds the wide ones), shared by
//! `kscope get` and the TUI tables.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Range;
use std::sync::Arc;

use kscope_client::metrics::Usage;
use kscope_informers::object::Object;
use kscope_resources::{
    ConditionStatus, ContainerResources, Deployment, GenericObject, HealthCondition, Kind,
    KubeResource, Namespace, Node, Pod, ReplicaSet, Secret, Timestamp,
};

use super::definitions::Indexable;

/// How a column's cells compare when a table is sorted by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    Text,
    /// Leading integer (`3`, `2/3`, `7 (5m ago)`).
    Number,
    /// Sorted by creation time, not by the printed text.
    Age,
    /// A time since something other than creation, as the server printed it when the row
    /// was read (a CronJob's LAST SCHEDULE, a printer column of type `date`): shown aging
    /// from then, and sorted by that time.
    Since,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: Cow<'static, str>,
    pub kind: ColumnKind,
    /// Shown only with `-o wide` (and in the TUI's wide mode).
    pub wide: bool,
}

const fn text(name: &'static str) -> Column {
    Column {
        name: Cow::Borrowed(name),
        kind: ColumnKind::Text,
        wide: false,
    }
}

const fn number(name: &'static str) -> Column {
    Column {
        name: Cow::Borrowed(name),
        kind: ColumnKind::Number,
        wide: false,
    }
}

const fn wide(name: &'static str) -> Column {
    Column {
        name: Cow::Borrowed(name),
        kind: ColumnKind::Text,
        wide: true,
    }
}

const AGE: Column = Column {
    name: Cow::Borrowed("AGE"),
    kind: ColumnKind::Age,
    wide: false,
};

/// What a row sorts by in one column, computed once per row and object version so that
/// sorted views compare without formatting cells.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SortKey {
    /// Numbers and ages (an age sorts by negated creation time: youngest first); `None`
    /// (`<none>`, `<unknown>`) sorts first.
    Number(Option<i64>),
    Text(SortText),
}

impl SortKey {
    /// The sort key of a printed cell in a column of `kind`.
    pub fn from_cell(kind: ColumnKind, cell: &str) -> Self {
        SortValue::from_cell(kind, cell.to_string()).into_key()
    }

    /// Whether this key is what `value` would make: a row whose object changed but not its
    /// sort value keeps its key without allocating a new one.
    pub fn is(&self, value: &SortValue<'_>) -> bool {
        match (self, value) {
            (Self::Number(a), SortValue::Number(b)) => a == b,
            (Self::Text(a), SortValue::Text(b)) => a.as_str() == b,
            _ => false,
        }
    }
}

/// A sort key that may still borrow its text from the object: a re-sort of every row reads
/// the text in place and copies it into one buffer for all rows ([`SortKeyBuilder`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SortValue<'a> {
    Number(Option<i64>),
    Text(Cow<'a, str>),
}

impl<'a> SortValue<'a> {
    /// The sort value of a printed cell in a column of `kind`.
    pub fn from_cell(kind: ColumnKind, cell: String) -> Self {
        match kind {
            ColumnKind::Text | ColumnKind::Age | ColumnKind::Since => Self::Text(Cow::Owned(cell)),
            ColumnKind::Number => {
                let digits =
                    cell.len() - cell.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                Self::Number(cell[..digits].parse().ok())
            }
        }
    }

    /// The sort value of an AGE cell: youngest first.
    pub fn age(created: Option<Timestamp>) -> Self {
        Self::Number(created.map(|t| -t.seconds()))
    }

    /// Text, or `<none>` without any.
    pub fn text_or_none(text: Option<&'a str>) -> Self {
        Self::Text(Cow::Borrowed(text.unwrap_or("<none>")))
    }

    pub fn into_key(self) -> SortKey {
        match self {
            Self::Number(n) => SortKey::Number(n),
            Self::Text(t) => SortKey::Text(SortText::new(&t)),
        }
    }
}

/// The text a row sorts by: a range of a buffer that a re-sort of every row fills once, so
/// building 150,000 keys makes one allocation, not one each. Compares as its text.
#[derive(Clone)]
pub struct SortText {
    buffer: Arc<str>,
    start: u32,
    end: u32,
}

impl SortText {
    /// A text with a buffer of its own (a row added or moved between re-sorts).
    pub fn new(text: &str) -> Self {
        Self::in_buffer(Arc::from(text), 0..text.len())
    }

    fn in_buffer(buffer: Arc<str>, range: Range<usize>) -> Self {
        let offset = |at: usize| u32::try_from(at).unwrap_or(u32::MAX);
        Self {
            buffer,
            start: offset(range.start),
            end: offset(range.end),
        }
    }

    pub fn as_str(&self) -> &str {
        self.buffer
            .get(self.start as usize..self.end as usize)
            .unwrap_or_default()
    }
}

impl fmt::Debug for SortText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl From<&str> for SortText {
    fn from(text: &str) -> Self {
        Self::new(text)
    }
}

impl PartialEq for SortText {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for SortText {}

impl PartialOrd for SortText {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SortText {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for SortText {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

/// Builds the sort keys of every row of a view at once, their texts in one buffer.
#[derive(Debug, Default)]
pub struct SortKeyBuilder {
    buffer: String,
    slots: Vec<Slot>,
}

#[derive(Debug)]
enum Slot {
    Number(Option<i64>),
    Text(Range<usize>),
}

impl SortKeyBuilder {
    pub fn with_capacity(rows: usize) -> Self {
        Self {
            buffer: String::new(),
            slots: Vec::with_capacity(rows),
        }
    }

    /// Adds the next row's value.
    pub fn push(&mut self, value: SortValue<'_>) {
        let slot = match value {
            SortValue::Number(n) => Slot::Number(n),
            SortValue::Text(text) => {
                let start = self.buffer.len();
                self.buffer.push_str(&text);
                Slot::Text(start..self.buffer.len())
            }
        };
        self.slots.push(slot);
    }

    /// The keys, in the order their values were pushed.
    pub fn finish(self) -> impl Iterator<Item = SortKey> {
        let buffer: Arc<str> = Arc::from(self.buffer);
        self.slots.into_iter().map(move |slot| match slot {
            Slot::Number(n) => SortKey::Number(n),
            Slot::Text(range) => SortKey::Text(SortText::in_buffer(buffer.clone(), range)),
        })
    }
}

/// How a row is doing, for its colour: what a k9s user reads at a glance (a crashing pod
/// among running ones).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RowHealth {
    #[default]
    Normal,
    /// Failing: CrashLoopBackOff, an image that does not pull, a NotReady node.
    Failing,
    /// Not there yet: pending, creating, not all ready.
    Pending,
    /// Being deleted.
    Terminating,
    /// A Warning Event.
    Warning,
    /// Done (a Completed or Succeeded pod): nothing to watch.
    Completed,
}

/// kubectl's STATUS words for a pod that is failing rather than starting.
fn pod_status_fails(status: &str) -> bool {
    let reason = status.strip_prefix("Init:").unwrap_or(status);
    reason.contains("BackOff")
        || reason.contains("Err")
        || matches!(
            reason,
            "OOMKilled"
                | "Evicted"
                | "Failed"
                | "Unknown"
                | "NodeLost"
                | "DeadlineExceeded"
                | "InvalidImageName"
        )
        || reason.starts_with("Signal:")
        || reason.starts_with("ExitCode:")
}

/// A kind that renders as a table row.
pub trait TableRow: Indexable {
    /// Every column of a table of `kind` after NAMESPACE (which callers add for
    /// all-namespace views of namespaced kinds) in order, the wide ones included: a
    /// hand-written projection's own, or the server's for a discovered kind.
    fn columns(kind: &Kind) -> Cow<'static, [Column]>;

    /// One cell per entry of `columns` (what [`TableRow::columns`] gave).
    fn cells(&self, columns: &[Column], now: Timestamp) -> Vec<String>;

    /// The cell of `column` alone, as [`TableRow::cells`] prints it; empty past the last.
    /// Kinds with many rows override this so that one cell does not cost a whole row.
    fn cell(&self, columns: &[Column], column: usize, now: Timestamp) -> String {
        let mut cells = self.cells(columns, now);
        if column < cells.len() {
            cells.swap_remove(column)
        } else {
            String::new()
        }
    }

    /// What the row sorts by in `column` of `columns`. Kinds with many rows override this to
    /// read the value in place instead of formatting every cell.
    fn sort_value(&self, columns: &[Column], column: usize) -> SortValue<'_> {
        match columns.get(column) {
            Some(c) if c.kind == ColumnKind::Age => SortValue::age(self.created()),
            Some(c) if column == 0 && c.name == "NAME" => {
                SortValue::Text(Cow::Borrowed(self.name()))
            }
            // Ages are handled above, so `now` does not change the result.
            Some(c) => SortValue::from_cell(
                c.kind,
                self.cell(columns, column, Timestamp::from_seconds(0)),
            ),
            None => SortValue::Number(None),
        }
    }

    fn sort_key(&self, columns: &[Column], column: usize) -> SortKey {
        self.sort_value(columns, column).into_key()
    }

    /// How the row is doing, for its colour.
    fn health(&self) -> RowHealth {
        RowHealth::Normal
    }

    /// The usage columns a table of this kind shows after its own when the metrics API
    /// is read (k9s's CPU, MEM and percentages): none for kinds it does not measure.
    fn usage_columns() -> &'static [Column] {
        &[]
    }

    /// Usage column `column`'s value given the object's `usage`; `None` where there is
    /// nothing to show (a percentage of no request).
    fn usage_value(&self, _column: usize, _usage: Usage) -> Option<u128> {
        None
    }
}

/// `part` as a whole percentage of `of`, rounded down as k9s and kubectl top do; `None`
/// of nothing.
fn percent(part: u128, of: u128) -> Option<u128> {
    (of > 0).then(|| part.saturating_mul(100) / of)
}

/// A quantity's thousandths (millicores, thousandths of a byte); unreadable ones count as
/// none.
fn milli(quantity: Option<&str>) -> u128 {
    quantity
        .and_then(kscope_units::quantity::parse)
        .and_then(|q| u128::try_from(q.milli()).ok())
        .unwrap_or(0)
}

/// The pod usage columns, as k9s shows them: millicores, MiB, and percentages of the
/// containers' summed requests and limits.
pub const POD_USAGE_COLUMNS: &[Column] = &[
    number("CPU"),
    number("MEM"),
    number("%CPU/R"),
    number("%CPU/L"),
    number("%MEM/R"),
    number("%MEM/L"),
];

/// The node usage columns, as `kubectl top node` shows them: percentages of allocatable.
pub const NODE_USAGE_COLUMNS: &[Column] =
    &[number("CPU"), number("MEM"), number("%CPU"), number("%MEM")];

fn age(obj: &impl KubeResource, now: Timestamp) -> String {
    obj.age(now)
}

fn or_none(value: Option<&str>) -> String {
    match value {
        Some(v) if !v.is_empty() => v.to_string(),
        _ => "<none>".into(),
    }
}

/// kubectl's node info cells: `<unknown>` where the kubelet reported nothing.
fn or_unknown(value: Option<&str>) -> String {
    value.unwrap_or("<unknown>").to_string()
}

fn joined<'a>(values: impl Iterator<Item = &'a str>) -> String {
    let joined: Vec<&str> = values.collect();
    if joined.is_empty() {
        "<none>".into()
    } else {
        joined.join(",")
    }
}

/// kubectl's columns for Pods.
pub const POD_COLUMNS: &[Column] = &[
    text("NAME"),
    number("READY"),
    text("STATUS"),
    number("RESTARTS"),
    AGE,
    wide("IP"),
    wide("NODE"),
    wide("NOMINATED NODE"),
    wide("READINESS GATES"),
];

impl TableRow for Pod {
    fn columns(_: &Kind) -> Cow<'static, [Column]> {
        Cow::Borrowed(POD_COLUMNS)
    }

    fn sort_value(&self, _: &[Column], column: usize) -> SortValue<'_> {
        match column {
            0 => SortValue::Text(Cow::Borrowed(self.name())),
            1 => SortValue::Number(Some(self.ready_containers().into())),
            2 => SortValue::Text(Cow::Borrowed(self.status())),
            3 => SortValue::Number(Some(self.restarts().into())),
            4 => SortValue::age(self.created()),
            5 => SortValue::text_or_none(self.pod_ip()),
            6 => SortValue::text_or_none(self.node_name()),
            7 => SortValue::text_or_none(self.nominated_node()),
            8 => SortValue::Number(self.readiness_gates().map(|(ready, _)| ready.into())),
            _ => SortValue::Number(None),
        }
    }

    fn usage_columns() -> &'static [Column] {
        POD_USAGE_COLUMNS
    }

    fn usage_value(&self, column: usize, usage: Usage) -> Option<u128> {
        let summed = |read: fn(ContainerResources<'_>) -> Option<&str>| -> u128 {
            self.container_resources().map(|c| milli(read(c))).sum()
        };
        // Usage in nanocores against requests in millicores; bytes against thousandths.
        let cpu = |of: u128| percent(usage.cpu_nanocores, of.saturating_mul(1_000_000));
        let memory = |of: u128| percent(usage.memory_bytes.saturating_mul(1000), of);
        match column {
            0 => Some(usage.cpu_millicores()),
            1 => Some(usage.memory_mebibytes()),
            2 => cpu(summed(|c| c.cpu_request)),
            3 => cpu(summed(|c| c.cpu_limit)),
            4 => memory(summed(|c| c.memory_request)),
            5 => memory(summed(|c| c.memory_limit)),
            _ => None,
        }
    }

    fn health(&self) -> RowHealth {
        let status = self.status();
        match status {
            "Terminating" => RowHealth::Terminating,
            "Completed" | "Succeeded" => RowHealth::Completed,
            _ if pod_status_fails(status) => RowHealth::Failing,
            "Running" if self.ready_containers() >= self.total_containers() => RowHealth::Normal,
            _ => RowHealth::Pending,
        }
    }

    fn cells(&self, columns: &[Column], now: Timestamp) -> Vec<String> {
        (0..POD_COLUMNS.len())
            .map(|column| self.cell(columns, column, now))
            .collect()
    }

    fn cell(&self, _: &[Column], column: usize, now: Timestamp) -> String {
        match column {
            0 => self.name().to_string(),
            1 => format!("{}/{}", self.ready_containers(), self.total_containers()),
            2 => self.status().to_string(),
            3 => self.restarts_column(now),
            4 => age(self, now),
            5 => or_none(self.pod_ip()),
            6 => or_none(self.node_name()),
            7 => or_none(self.nominated_node()),
            8 => self
                .readiness_gates()
                .map_or_else(|| "<none>".into(), |(ready, all)| format!("{ready}/{all}")),
            _ => String::new(),
        }
    }
}

/// kubectl's columns for Nodes.
pub const NODE_COLUMNS: &[Column] = &[
    text("NAME"),
    text("STATUS"),
    text("ROLES"),
    AGE,
    text("VERSION"),
    wide("INTERNAL-IP"),
    wide("EXTERNAL-IP"),
    wide("OS-IMAGE"),
    wide("KERNEL-VERSION"),
    wide("CONTAINER-RUNTIME"),
];

impl TableRow for Node {
    fn columns(_: &Kind) -> Cow<'static, [Column]> {
        Cow::Borrowed(NODE_COLUMNS)
    }

    fn usage_columns() -> &'static [Column] {
        NODE_USAGE_COLUMNS
    }

    /// As `kubectl top node` works them out: millicores of millicores, bytes of bytes.
    fn usage_value(&self, column: usize, usage: Usage) -> Option<u128> {
        match column {
            0 => Some(usage.cpu_millicores()),
            1 => Some(usage.memory_mebibytes()),
            2 => percent(usage.cpu_millicores(), milli(self.cpu_allocatable())),
            3 => percent(
                usage.memory_bytes,
                milli(self.memory_allocatable()).div_ceil(1000),
            ),
            _ => None,
        }
    }

    fn health(&self) -> RowHealth {
        match self.status() {
            "Ready" => RowHealth::Normal,
            "Ready,SchedulingDisabled" => RowHealth::Pending,
            _ => RowHealth::Failing,
        }
    }

    fn cells(&self, _: &[Column], now: Timestamp) -> Vec<String> {
        vec![
            self.name().to_string(),
            self.status().to_string(),
            joined(self.roles()),
            age(self, now),
            or_none(self.kubelet_version()),
            or_none(self.internal_ip()),
            or_none(self.external_ip()),
            or_unknown(self.os_image()),
            or_unknown(self.kernel_version()),
            or_unknown(self.container_runtime()),
        ]
    }
}

/// kubectl's columns for Namespaces.
pub const NAMESPACE_COLUMNS: &[Column] = &[text("NAME"), text("STATUS"), AGE];

impl TableRow for Namespace {
    fn columns(_: &Kind) -> Cow<'static, [Column]> {
        Cow::Borrowed(NAMESPACE_COLUMNS)
    }

    fn health(&self) -> RowHealth {
        match self.phase() {
            Some("Terminating") => RowHealth::Terminating,
            _ => RowHealth::Normal,
        }
    }

    fn cells(&self, _: &[Column], now: Timestamp) -> Vec<String> {
        vec![
            self.name().to_string(),
            or_none(self.phase()),
            age(self, now),
        ]
    }
}

/// kubectl's columns for Deployments.
pub const DEPLOYMENT_COLUMNS: &[Column] = &[
    text("NAME"),
    number("READY"),
    number("UP-TO-DATE"),
    number("AVAILABLE"),
    AGE,
    wide("CONTAINERS"),
    wide("IMAGES"),
    wide("SELECTOR"),
];

impl TableRow for Deployment {
    fn columns(_: &Kind) -> Cow<'static, [Column]> {
        Cow::Borrowed(DEPLOYMENT_COLUMNS)
    }

    fn health(&self) -> RowHealth {
        let replicas = self.replicas();
        if replicas.ready < replicas.desired {
            RowHealth::Pending
        } else {
            RowHealth::Normal
        }
    }

    fn cells(&self, _: &[Column], now: Timestamp) -> Vec<String> {
        let replicas = self.replicas();
        vec![
            self.name().to_string(),
            format!("{}/{}", replicas.ready, replicas.desired),
            replicas.updated.to_string(),
            replicas.available.to_string(),
            age(self, now),
            joined(self.containers().map(|c| c.name)),
            joined(self.containers().map(|c| c.image)),
            selector(self.selector().iter()),
        ]
    }
}

/// kubectl's columns for ReplicaSets.
pub const REPLICASET_COLUMNS: &[Column] = &[
    text("NAME"),
    number("DESIRED"),
    number("CURRENT"),
    number("READY"),
    AGE,
    wide("CONTAINERS"),
    wide("IMAGES"),
    wide("SELECTOR"),
];

impl TableRow for ReplicaSet {
    fn columns(_: &Kind) -> Cow<'static, [Column]> {
        Cow::Borrowed(REPLICASET_COLUMNS)
    }

    fn health(&self) -> RowHealth {
        let replicas = self.replicas();
        if replicas.ready < replicas.desired {
            RowHealth::Pending
        } else {
            RowHealth::Normal
        }
    }

    fn cells(&self, _: &[Column], now: Timestamp) -> Vec<String> {
        let replicas = self.replicas();
        vec![
            self.name().to_string(),
            replicas.desired.to_string(),
            replicas.current.to_string(),
            replicas.ready.to_string(),
            age(self, now),
            joined(self.containers().map(|c| c.name)),
            joined(self.containers().map(|c| c.image)),
            selector(self.selector().iter()),
        ]
    }
}

/// kubectl's columns for Secrets.
pub const SECRET_COLUMNS: &[Column] = &[text("NAME"), text("TYPE"), number("DATA"), AGE];

impl TableRow for Secret {
    fn columns(_: &Kind) -> Cow<'static, [Column]> {
        Cow::Borrowed(SECRET_COLUMNS)
    }

    fn cells(&self, _: &[Column], now: Timestamp) -> Vec<String> {
        vec![
            self.name().to_string(),
            self.secret_type().unwrap_or_default().to_string(),
            self.data_count().to_string(),
            age(self, now),
        ]
    }
}

/// The title of the health column every discovered kind gets, after the server's columns.
pub const HEALTH: &str = "HEALTH";

/// A server Table column as a table column: kubectl uppercases the names, prints
/// priority > 0 columns only in wide output, and the `Age` column (its value rendered at the
/// time of the request) is computed here from the creation time, so it ages on screen.
fn server_column(definition: &kscope_resources::ColumnDefinition) -> Column {
    let name = definition.name.to_uppercase();
    let kind = match definition.type_.as_str() {
        _ if name == "AGE" => ColumnKind::Age,
        "date" => ColumnKind::Since,
        _ if definition.format == "date" || SINCE_COLUMNS.contains(&name.as_str()) => {
            ColumnKind::Since
        }
        "integer" | "number" => ColumnKind::Number,
        _ => ColumnKind::Text,
    };
    Column {
        name: Cow::Owned(name),
        kind,
        wide: definition.priority > 0,
    }
}

/// Built-in kinds' columns that print a time since (the server types them `string`).
/// DURATION is not one: a finished Job's stays what it is.
const SINCE_COLUMNS: [&str; 3] = ["LAST SCHEDULE", "LAST SUCCESSFUL", "LAST ACTIVITY"];

/// A printed time since (`45s`, `3m12s`, `5h2m`, `3d4h`, `2y10d`, kubectl's
/// `HumanDuration`) in seconds; `None` for anything else (`<none>`, `<invalid>`).
fn parse_human_duration(text: &str) -> Option<i64> {
    let mut total: i64 = 0;
    let mut number: Option<i64> = None;
    for c in text.chars() {
        match c {
            '0'..='9' => {
                let digit = i64::from(c as u8 - b'0');
                number = Some(number.unwrap_or(0).checked_mul(10)?.checked_add(digit)?);
            }
            's' | 'm' | 'h' | 'd' | 'y' => {
                let unit = match c {
                    's' => 1,
                    'm' => 60,
                    'h' => 3600,
                    'd' => 86_400,
                    _ => 365 * 86_400,
                };
                total = total.checked_add(number.take()?.checked_mul(unit)?)?;
            }
            _ => return None,
        }
    }
    (number.is_none() && !text.is_empty()).then_some(total)
}

/// When a [`ColumnKind::Since`] cell's time was: the row's read time less what it printed.
fn since_time(obj: &GenericObject, printed: &str) -> Option<Timestamp> {
    let read_at = obj.read_at()?;
    let since = parse_human_duration(printed)?;
    Some(Timestamp::from_seconds(
        read_at.seconds().saturating_sub(since),
    ))
}

/// A discovered kind's columns are the server's; rows keep the cells it printed.
impl TableRow for GenericObject {
    fn columns(kind: &Kind) -> Cow<'static, [Column]> {
        let mut columns: Vec<Column> = match kind {
            Kind::Api(resource) => resource.columns().iter().map(server_column).collect(),
            Kind::BuiltIn(_) => Vec::new(),
        };
        if columns.is_empty() {
            // No list answered yet: what every kind has.
            columns.extend([text("NAME"), AGE]);
        }
        columns.push(wide(HEALTH));
        Cow::Owned(columns)
    }

    fn cells(&self, columns: &[Column], now: Timestamp) -> Vec<String> {
        let server = columns.len().saturating_sub(1);
        let mut cells: Vec<String> = columns[..server]
            .iter()
            .enumerate()
            .map(|(i, c)| match (c.kind, self.cell(i)) {
                (ColumnKind::Age, _) => age(self, now),
                // An Event's LAST SEEN ages on screen too (the server printed it once); its
                // repeats `(x4 over 20m)` are the server's.
                (_, cell) if c.name == LAST_SEEN && self.last_seen().is_some() => {
                    last_seen_cell(self, cell, now)
                }
                // What the server printed ages from when it was read.
                (ColumnKind::Since, Some(cell)) => match since_time(self, cell) {
                    Some(at) => at.human_since(now),
                    None => cell.to_string(),
                },
                (_, Some(cell)) => cell.to_string(),
                // No Table cells yet (an object not read in Table form): its name at least.
                (_, None) if i == 0 => self.name().to_string(),
                (_, None) => String::new(),
            })
            .collect();
        if columns.len() > server {
            cells.push(health_cell(self));
        }
        cells
    }

    /// An Event's LAST SEEN sorts by time, newest first, events of the same second by
    /// resourceVersion (newest first too), so that rows of one second never reshuffle.
    fn sort_value(&self, columns: &[Column], column: usize) -> SortValue<'_> {
        match (columns.get(column), self.last_seen()) {
            (Some(c), Some(seen)) if c.name == LAST_SEEN => {
                let rv = self
                    .resource_version()
                    .and_then(|rv| rv.parse::<u64>().ok())
                    .unwrap_or(0);
                // Seconds in the high half and the resourceVersion's low 32 bits below: two
                // events a second apart never tie, and 2^32 writes within one second do
                // not happen. Saturating: times past 2038 (or malformed ones) all sort as
                // the newest rather than overflow.
                let key = seen
                    .seconds()
                    .saturating_mul(1 << 32)
                    .saturating_add(i64::from(rv as u32));
                SortValue::Number(Some(key.saturating_neg()))
            }
            (Some(c), _) if c.kind == ColumnKind::Age => SortValue::age(self.created()),
            (Some(c), _) if c.kind == ColumnKind::Since => {
                SortValue::age(self.cell(column).and_then(|cell| since_time(self, cell)))
            }
            (Some(c), _) if column == 0 && c.name == "NAME" => {
                SortValue::Text(Cow::Borrowed(self.name()))
            }
            (Some(c), _) => {
                let mut cells = self.cells(columns, Timestamp::from_seconds(0));
                let cell = if column < cells.len() {
                    cells.swap_remove(column)
                } else {
                    String::new()
                };
                SortValue::from_cell(c.kind, cell)
            }
            (None, _) => SortValue::Number(None),
        }
    }

    fn health(&self) -> RowHealth {
        if self.deleted().is_some() {
            return RowHealth::Terminating;
        }
        if self.is_warning() {
            return RowHealth::Warning;
        }
        match self.health() {
            Some(h) => match (h.condition, h.status) {
                (_, ConditionStatus::True) => RowHealth::Normal,
                (HealthCondition::Progressing, ConditionStatus::False) => RowHealth::Failing,
                (HealthCondition::Progressing, _) => RowHealth::Pending,
                (_, ConditionStatus::False) => RowHealth::Failing,
                (_, ConditionStatus::Unknown) => RowHealth::Pending,
            },
            None => RowHealth::Normal,
        }
    }
}

/// The server's name of an Event's last-seen column.
const LAST_SEEN: &str = "LAST SEEN";

/// `3m`, or `3m (x4 over 20m)` keeping the server's repeats: the time since the event was
/// last seen, at `now`. An event dated after `now` (the server's clock ahead of this one)
/// is `0s`, as `kubectl get events` shows it: the server prints that cell by its own clock,
/// while kscope ages it by the local one.
fn last_seen_cell(obj: &GenericObject, printed: Option<&str>, now: Timestamp) -> String {
    let since = obj
        .last_seen()
        .map_or_else(|| "<unknown>".to_owned(), |t| t.min(now).human_since(now));
    match printed.and_then(|p| p.find(" (x")) {
        Some(at) => format!("{since}{}", &printed.unwrap_or_default()[at..]),
        None => since,
    }
}

/// `Ready=False (Broken)`: the condition the health comes from, its status and reason.
fn health_cell(obj: &GenericObject) -> String {
    match obj.health() {
        None => "<none>".into(),
        Some(h) => {
            let status = match h.status {
                ConditionStatus::True => "True",
                ConditionStatus::False => "False",
                ConditionStatus::Unknown => "Unknown",
            };
            match obj.health_reason() {
                Some(reason) => format!("{}={status} ({reason})", h.condition.as_str()),
                None => format!("{}={status}", h.condition.as_str()),
            }
        }
    }
}

fn selector<'a>(pairs: impl Iterator<Item = (&'a str, &'a str)>) -> String {
    let parts: Vec<String> = pairs.map(|(k, v)| format!("{k}={v}")).collect();
    if parts.is_empty() {
        "<none>".into()
    } else {
        parts.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kscope_resources::decode;

    /// A `date` printer column and a CronJob's LAST SCHEDULE age from when the row was read;
    /// a DURATION stays what the server printed.
    #[test]
    fn times_since_age_on_screen_and_durations_stay() {
        use kscope_resources::{ApiResource, ColumnDefinition};
        let resource = ApiResource::new(
            "example.com",
            "v1",
            "runs",
            "run",
            "Run",
            true,
            vec![],
            vec![],
            vec![],
        );
        let def = |name: &str, type_: &str| ColumnDefinition {
            name: name.into(),
            type_: type_.into(),
            format: String::new(),
            priority: 0,
        };
        resource.learn_columns(&[
            def("Name", "string"),
            def("Finished", "date"),
            def("Last Schedule", "string"),
            def("Duration", "string"),
        ]);
        let kind = Kind::Api(std::sync::Arc::new(resource));
        let columns = GenericObject::columns(&kind);
        let kinds: Vec<ColumnKind> = columns.iter().map(|c| c.kind).collect();
        assert_eq!(
            kinds[..4],
            [
                ColumnKind::Text,
                ColumnKind::Since,
                ColumnKind::Since,
                ColumnKind::Text
            ]
        );
        let row = br#"{"cells":["r1","5m","2d3h","52s"],"object":{"metadata":{"name":"r1"}}}"#;
        let r: GenericObject = decode::from_slice(row).unwrap();
        let read = r.read_at().expect("read from a Table row");
        let later = Timestamp::from_seconds(read.seconds() + 3600);
        let cells = r.cells(&columns, later);
        assert_eq!(cells[1..4], ["65m", "2d4h", "52s"]);
        let older: GenericObject =
            decode::from_slice(br#"{"cells":["r0","2d3h","<none>","1s"],"object":{}}"#).unwrap();
        // Sorted by the time each printed, youngest first; `<none>` is no time.
        assert!(r.sort_key(&columns, 1) < older.sort_key(&columns, 1));
        assert_eq!(older.cells(&columns, later)[2], "<none>");
        for (text, seconds) in [
            ("45s", 45),
            ("3m12s", 192),
            ("5h2m", 18120),
            ("2y10d", 63936000),
        ] {
            assert_eq!(parse_human_duration(text), Some(seconds), "{text}");
        }
        for text in ["", "<none>", "5", "m", "1.5h"] {
            assert_eq!(parse_human_duration(text), None, "{text}");
        }
    }

    #[test]
    fn discovered_kinds_show_the_server_columns_an_age_and_a_health_cell() {
        use kscope_resources::{ApiResource, ColumnDefinition};
        let resource = ApiResource::new(
            "example.com",
            "v1",
            "widgets",
            "widget",
            "Widget",
            true,
            vec![],
            vec![],
            vec![],
        );
        let def = |name: &str, type_: &str, priority| ColumnDefinition {
            name: name.into(),
            type_: type_.into(),
            format: String::new(),
            priority,
        };
        resource.learn_columns(&[
            def("Name", "string", 0),
            def("Size", "integer", 0),
            def("Age", "date", 0),
            def("Color", "string", 1),
        ]);
        let kind = Kind::Api(std::sync::Arc::new(resource));
        let columns = GenericObject::columns(&kind);
        let names: Vec<&str> = columns.iter().map(|c| c.name.as_ref()).collect();
        assert_eq!(names, ["NAME", "SIZE", "AGE", "COLOR", "HEALTH"]);
        assert_eq!(columns[1].kind, ColumnKind::Number);
        assert!(columns[3].wide && columns[4].wide && !columns[2].wide);
        let row = br#"{"cells":["w1",3,"5m","blue"],"object":{"metadata":{"name":"w1",
            "creationTimestamp":"2024-01-01T00:00:00Z"},
            "status":{"conditions":[{"type":"Ready","status":"False","reason":"Broken"}]}}}"#;
        let w: GenericObject = decode::from_slice(row).unwrap();
        let now = Timestamp::parse("2024-01-01T00:10:00Z").unwrap();
        assert_eq!(
            w.cells(&columns, now),
            ["w1", "3", "10m", "blue", "Ready=False (Broken)"]
        );
        assert_eq!(w.sort_key(&columns, 1), SortKey::Number(Some(3)));
        assert_eq!(TableRow::health(&w), RowHealth::Failing);
    }

    #[test]
    fn rows_say_how_they_are_doing() {
        let pod = |phase: &str, waiting: Option<&str>, ready: bool| -> Pod {
            let state = match waiting {
                Some(reason) => format!(r#"{{"waiting":{{"reason":"{reason}"}}}}"#),
                None => r#"{"running":{}}"#.to_string(),
            };
            let json = format!(
                r#"{{"metadata":{{"name":"p","namespace":"n"}},
                    "spec":{{"containers":[{{"name":"c","image":"i"}}]}},
                    "status":{{"phase":"{phase}","containerStatuses":[{{"name":"c","ready":{ready},
                    "restartCount":0,"state":{state}}}]}}}}"#
            );
            decode(json.as_bytes()).unwrap()
        };
        assert_eq!(pod("Running", None, true).health(), RowHealth::Normal);
        assert_eq!(pod("Running", None, false).health(), RowHealth::Pending);
        assert_eq!(
            pod("Running", Some("CrashLoopBackOff"), false).health(),
            RowHealth::Failing
        );
        assert_eq!(
            pod("Pending", Some("ErrImagePull"), false).health(),
            RowHealth::Failing
        );
        assert_eq!(
            pod("Pending", Some("ContainerCreating"), false).health(),
            RowHealth::Pending
        );
        let succeeded: Pod =
            decode(br#"{"metadata":{"name":"j"},"status":{"phase":"Succeeded"}}"#).unwrap();
        assert_eq!(succeeded.health(), RowHealth::Completed);
        let not_ready: Node = decode(
            br#"{"metadata":{"name":"n"},"status":{"conditions":[{"type":"Ready","status":"False"}]}}"#,
        )
        .unwrap();
        assert_eq!(not_ready.health(), RowHealth::Failing);
        let terminating: Namespace =
            decode(br#"{"metadata":{"name":"x"},"status":{"phase":"Terminating"}}"#).unwrap();
        assert_eq!(terminating.health(), RowHealth::Terminating);
    }

    #[test]
    fn every_kind_has_one_cell_per_column() {
        let now = Timestamp::now();
        let pod: Pod = decode(include_bytes!("../../tests/fixtures/pod-realistic.json")).unwrap();
        assert_eq!(pod.cells(POD_COLUMNS, now).len(), POD_COLUMNS.len());
        let node: Node = decode(
            br#"{"metadata":{"name":"n1","labels":{"node-role.kubernetes.io/control-plane":""}}}"#,
        )
        .unwrap();
        let cells = node.cells(NODE_COLUMNS, now);
        assert_eq!(cells.len(), NODE_COLUMNS.len());
        assert_eq!(cells[..3], ["n1", "Unknown", "control-plane"]);
        let ns: Namespace =
            decode(br#"{"metadata":{"name":"web"},"status":{"phase":"Active"}}"#).unwrap();
        assert_eq!(ns.cells(NAMESPACE_COLUMNS, now)[..2], ["web", "Active"]);
        let deploy: Deployment = decode(
            br#"{"metadata":{"name":"d","namespace":"web"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},
                "template":{"spec":{"containers":[{"name":"c","image":"nginx:1"}]}}},
                "status":{"readyReplicas":2,"updatedReplicas":3,"availableReplicas":2}}"#,
        )
        .unwrap();
        assert_eq!(
            deploy.cells(DEPLOYMENT_COLUMNS, now),
            ["d", "2/3", "3", "2", "<unknown>", "c", "nginx:1", "app=web"]
        );
        assert_eq!(
            deploy.sort_key(DEPLOYMENT_COLUMNS, 1),
            SortKey::Number(Some(2))
        );
        assert_eq!(
            deploy.sort_key(DEPLOYMENT_COLUMNS, 0),
            SortKey::Text("d".into())
        );
        let mut builder = SortKeyBuilder::with_capacity(3);
        for text in ["Running", "Pending", "Running"] {
            builder.push(SortValue::Text(Cow::Borrowed(text)));
        }
        builder.push(SortValue::Number(Some(2)));
        let keys: Vec<SortKey> = builder.finish().collect();
        assert_eq!(keys[0], SortKey::Text("Running".into()));
        assert_eq!(keys[1], SortKey::Text("Pending".into()));
        assert_eq!(keys[0].cmp(&keys[2]), Ordering::Equal);
        assert_eq!(keys[1].cmp(&keys[0]), Ordering::Less);
        assert!(keys[0].is(&SortValue::Text(Cow::Borrowed("Running"))));
        assert!(!keys[0].is(&SortValue::Text(Cow::Borrowed("Pending"))));
        assert!(keys[3].is(&SortValue::Number(Some(2))));
        assert!(!keys[3].is(&SortValue::Text(Cow::Borrowed("2"))));
        assert_eq!(keys[3], SortKey::Number(Some(2)));
        assert_eq!(
            deploy.sort_key(DEPLOYMENT_COLUMNS, 4),
            SortKey::Number(None)
        );
        assert_eq!(
            pod.sort_key(POD_COLUMNS, 3),
            SortKey::Number(Some(pod.restarts().into()))
        );
        assert_eq!(
            SortKey::from_cell(ColumnKind::Number, "7 (5m ago)"),
            SortKey::Number(Some(7))
        );
        assert_eq!(
            SortKey::from_cell(ColumnKind::Number, "<none>"),
            SortKey::Number(None)
        );
        let rs: ReplicaSet = decode(br#"{"metadata":{"name":"r","namespace":"web"},"spec":{"replicas":2},"status":{"replicas":2,"readyReplicas":1}}"#).unwrap();
        assert_eq!(rs.cells(REPLICASET_COLUMNS, now)[..4], ["r", "2", "2", "1"]);
    }
}
