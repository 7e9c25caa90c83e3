//! CPU and memory usage beside a table's rows, from the resource metrics API: read only
//! while the table is drawn, never awaited by the rows (they show first, the usage fills in
//! when it comes), and `n/a` with the reason when the API is missing or refused.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use kscope_client::fetch::FetchError;
use kscope_client::metrics::{Usage, UsageKind, fetch_usage};
use kscope_resources::{Kind, ResourceKind};
use parking_lot::RwLock;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::columns::TableRow;

/// How often the usage is read and how long one read may take (`metrics:` in the
/// configuration). metrics-server scrapes every 15 s, so reading much more often shows
/// nothing new.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsageSettings {
    /// Between two reads; zero turns the usage columns off.
    pub poll: Duration,
    /// The bound on one read, so that a server that never answers leaves the cells as
    /// they were rather than a read pending for good.
    pub timeout: Duration,
    /// Between two scrapes of a controller's own /metrics while `:metrics` shows it
    /// (`metrics.scrape`): its rates and sparklines are over this step.
    pub scrape: Duration,
}

impl Default for UsageSettings {
    fn default() -> Self {
        Self {
            poll: Duration::from_secs(5),
            timeout: Duration::from_secs(3),
            scrape: Duration::from_secs(2),
        }
    }
}

/// What is known of the usage now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UsageState {
    /// Not read yet: the cells are blank.
    Waiting,
    /// The last read failed; why, in a person's words. The cells say `n/a`.
    Unavailable(String),
    /// Each object's usage, by namespace (empty for nodes) and name.
    Known(HashMap<String, HashMap<String, Usage>>),
}

impl UsageState {
    /// Usage column `column` of `obj`: `None` while nothing is read yet, `Some(None)` for
    /// `n/a` (no usage for it, or no request to take a percentage of).
    pub fn value<T: TableRow>(&self, obj: &T, column: usize) -> Option<Option<u128>> {
        match self {
            Self::Waiting => None,
            Self::Unavailable(_) => Some(None),
            Self::Known(map) => Some(
                map.get(obj.namespace().unwrap_or_default())
                    .and_then(|names| names.get(obj.name()))
                    .and_then(|usage| obj.usage_value(column, *usage)),
            ),
        }
    }

    /// Usage column `column`'s cell for `obj`: blank while waiting, `n/a` without a value.
    pub fn cell<T: TableRow>(&self, obj: &T, column: usize) -> String {
        match self.value(obj, column) {
            Some(Some(v)) => v.to_string(),
            Some(None) => "n/a".into(),
            None => String::new(),
        }
    }
}

/// The usage of one table's objects, shared by its views (which draw it) and its poller
/// (which reads it).
#[derive(Debug)]
pub struct UsageFeed {
    kind: UsageKind,
    state: RwLock<Arc<UsageState>>,
    version: watch::Sender<u64>,
    /// Bumped each time rows with usage are drawn: a table parked behind another is not,
    /// and its poller then stops reading.
    draws: AtomicU64,
}

impl UsageFeed {
    /// A feed for a table of `kind`, if the metrics API measures it (pods, nodes).
    pub fn for_kind(kind: &Kind) -> Option<Arc<Self>> {
        let kind = if *kind == ResourceKind::Pods {
            UsageKind::Pods
        } else if *kind == ResourceKind::Nodes {
            UsageKind::Nodes
        } else {
            return None;
        };
        Some(Arc::new(Self {
            kind,
            state: RwLock::new(Arc::new(UsageState::Waiting)),
            version: watch::channel(0).0,
            draws: AtomicU64::new(0),
        }))
    }

    pub fn state(&self) -> Arc<UsageState> {
        self.state.read().clone()
    }

    /// Why the cells say `n/a`, while they do: for the table's header.
    pub fn unavailable(&self) -> Option<String> {
        match &**self.state.read() {
            UsageState::Unavailable(why) => Some(why.clone()),
            _ => None,
        }
    }

    /// Records that rows with usage were drawn, so that the poller keeps reading.
    pub fn drawn(&self) {
        self.draws.fetch_add(1, Ordering::Relaxed);
    }

    /// Bumped whenever the state changes.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.version.subscribe()
    }

    fn set(&self, state: UsageState) {
        let mut current = self.state.write();
        if **current == state {
            return;
        }
        if let UsageState::Unavailable(why) = &state
            && !matches!(&**current, UsageState::Unavailable(was) if was == why)
        {
            tracing::warn!("usage columns show n/a: {why}");
        }
        *current = Arc::new(state);
        drop(current);
        self.version.send_modify(|v| *v += 1);
    }

    /// Reads the usage of the feed's kind (in `namespace`, or all) now and then every
    /// `settings.poll` while the rows are drawn, until the returned poller is dropped.
    pub fn poll(
        self: &Arc<Self>,
        client: kube::Client,
        namespace: Option<String>,
        settings: UsageSettings,
    ) -> UsagePoller {
        let feed = self.clone();
        UsagePoller(tokio::spawn(async move {
            let mut read_at_draw = None;
            loop {
                let draws = feed.draws.load(Ordering::Relaxed);
                if read_at_draw != Some(draws) {
                    read_at_draw = Some(draws);
                    let read =
                        fetch_usage(&client, feed.kind, namespace.as_deref(), settings.timeout);
                    feed.set(match read.await {
                        Ok(usage) => UsageState::Known(usage),
                        Err(e) => UsageState::Unavailable(unavailable(&e)),
                    });
                }
                tokio::time::sleep(settings.poll).await;
            }
        }))
    }
}

/// Why the usage could not be read, as the header says it.
fn unavailable(error: &FetchError) -> String {
    match error {
        FetchError::NotFound { .. } => {
            "metrics API not available (metrics.k8s.io is not served: no metrics-server?)".into()
        }
        FetchError::Forbidden { message, .. } => format!("metrics API forbidden: {message}"),
        other => format!("metrics API: {other}"),
    }
}

/// A feed's reads; dropping it stops them.
#[derive(Debug)]
pub struct UsagePoller(JoinHandle<()>);

impl Drop for UsagePoller {
    fn drop(&mut self) {
        self.0.abort();
    }
}
