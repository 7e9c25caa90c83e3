//! The `:metrics` panel's scraping task: it finds the pod (a workload's ready pod) and its
//! metrics port, then reads its /metrics through the pod proxy every interval, and hands
//! each result to the event loop. It runs only while the panel is open: [`MetricsController::open`]
//! starts it and [`MetricsController::stop`] (the panel's close) aborts it.

use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use kscope_client::scrape::{find_target, scrape};

use super::{MetricsPanel, Scraped};

/// Results waiting for the event loop; one every interval, so a few are plenty.
const CHANNEL: usize = 8;

/// What to read: `kind` as kubectl names it (`pod`, `deployment`, …), the object, and the
/// port asked for (`None`: the container port named metrics, else the annotation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsRequest {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub port: Option<String>,
    /// The kind kscope's own informer on screen watches, shown beside the controller's.
    pub model_kind: String,
}

/// One result of the task, with the panel it was for.
#[derive(Debug)]
pub struct MetricsArrival {
    generation: u64,
    scraped: Scraped,
}

/// Owns the scraping task of the open panel.
pub struct MetricsController {
    client: kube::Client,
    interval: Duration,
    /// Counts panels opened, so what a task sent for an earlier one is dropped.
    generation: u64,
    task: Option<AbortHandle>,
    tx: mpsc::Sender<MetricsArrival>,
    rx: mpsc::Receiver<MetricsArrival>,
}

impl Drop for MetricsController {
    fn drop(&mut self) {
        self.stop();
    }
}

impl MetricsController {
    pub fn new(client: kube::Client, interval: Duration) -> Self {
        let (tx, rx) = mpsc::channel(CHANNEL);
        Self {
            client,
            interval,
            generation: 0,
            task: None,
            tx,
            rx,
        }
    }

    /// A controller scraping as often through `client` (another context's).
    pub fn for_client(&self, client: kube::Client) -> Self {
        Self::new(client, self.interval)
    }

    /// Whether a scraping task runs: only while a panel is open.
    pub fn scraping(&self) -> bool {
        self.task.as_ref().is_some_and(|task| !task.is_finished())
    }

    /// Opens the panel of `request` and starts scraping for it; the panel is the caller's
    /// to keep in the UI state. Must run inside a Tokio runtime.
    pub fn open(&mut self, request: MetricsRequest) -> MetricsPanel {
        self.stop();
        self.generation += 1;
        let asked = format!("{}/{} -n {}", request.kind, request.name, request.namespace);
        let panel = MetricsPanel::new(
            asked,
            request.model_kind.clone(),
            self.interval,
            Instant::now(),
        );
        let task = tokio::spawn(scrape_loop(
            self.client.clone(),
            request,
            self.interval,
            self.generation,
            self.tx.clone(),
        ));
        self.task = Some(task.abort_handle());
        panel
    }

    /// Stops scraping: the panel closed.
    pub fn stop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }

    /// The next result of the task. Cancel-safe, for the event loop's `select!`.
    pub async fn arrived(&mut self) -> Option<MetricsArrival> {
        self.rx.recv().await
    }

    /// Gives `arrival` to the open panel, unless it was for an earlier one.
    pub fn take(&self, panel: Option<&mut MetricsPanel>, arrival: MetricsArrival) {
        if let Some(panel) = panel
            && arrival.generation == self.generation
        {
            panel.take(arrival.scraped, Instant::now());
        }
    }
}

/// Finds the target, then scrapes it every `interval` until aborted. A target that cannot
/// be found yet (a Pending pod) is looked for again on each tick.
async fn scrape_loop(
    client: kube::Client,
    request: MetricsRequest,
    interval: Duration,
    generation: u64,
    tx: mpsc::Sender<MetricsArrival>,
) {
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut target = None;
    loop {
        tick.tick().await;
        let scraped = match &target {
            Some(target) => Scraped::Page(scrape(&client, target).await.map_err(|e| e.to_string())),
            None => match find_target(
                &client,
                &request.kind,
                &request.namespace,
                &request.name,
                request.port.as_deref(),
            )
            .await
            {
                Ok(found) => {
                    target = Some(found.clone());
                    // Scrape at once: the person is waiting for the first numbers.
                    tick.reset_immediately();
                    Scraped::Resolved(found)
                }
                Err(err) => Scraped::Unresolved(err.to_string()),
            },
        };
        let arrival = MetricsArrival {
            generation,
            scraped,
        };
        if tx.send(arrival).await.is_err() {
            return;
        }
    }
}
