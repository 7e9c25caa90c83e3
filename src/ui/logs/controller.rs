//! The log view's readers: which pods and containers to read, a task per container, batches
//! to the event loop through a bounded channel, and saving what the view keeps.

use std::path::PathBuf;
use std::time::Duration;

use futures::FutureExt;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use kscope_client::logs::{LogError, LogLine, LogOptions, open_log};
use kscope_config::LogSettings;

use super::view::{LogRange, LogView, Picker, Source, SourceState};
use crate::effect::Effect;

/// Batches waiting for the event loop; readers wait when it is full.
const CHANNEL: usize = 64;
/// Lines a reader puts in one batch at most.
const BATCH_LINES: usize = 4096;
/// Lines the event loop takes in one wake at most, so keys are never kept waiting.
const DRAIN_LINES: usize = 50_000;
/// How often a workload's pods are listed again while its logs are shown.
const REPOLL: Duration = Duration::from_secs(5);
/// A connection that fails is tried again this many times, waiting longer each time.
const RETRIES: u32 = 5;
const RETRY_FIRST: Duration = Duration::from_millis(500);
/// A person is waiting on the pod or the workload's pods: past this, say so.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(15);

/// What the log view reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogTarget {
    Pod {
        namespace: String,
        name: String,
    },
    /// A Deployment, ReplicaSet or any object whose `spec.selector` picks its pods.
    Workload {
        /// `deployment shop/web`.
        what: String,
        namespace: String,
        /// The object's API path, for its selector.
        path: String,
    },
}

/// A pod to read and its containers, as resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PodContainers {
    name: String,
    containers: Vec<String>,
    /// The `kubectl.kubernetes.io/default-container` annotation's, if it names one of
    /// them: the picker offers it first.
    default: Option<usize>,
}

/// What a background task hands the event loop.
#[derive(Debug)]
enum Payload {
    Lines(Vec<LogLine>),
    State(SourceState),
    /// The pods to read now (for a workload, all of them on each poll).
    Pods(Vec<PodContainers>),
    /// The target could not be read at all.
    Unresolved(String),
    Saved(Result<PathBuf, String>),
}

#[derive(Debug)]
pub struct Arrival {
    generation: u64,
    source: u16,
    payload: Payload,
}

/// Owns the background tasks of the open log view.
pub struct LogController {
    client: kube::Client,
    settings: LogSettings,
    target: Option<LogTarget>,
    /// Counts requests, so what a task sent for an earlier one is dropped.
    generation: u64,
    /// The container the picker chose; `None` for all.
    chosen: Option<Option<String>>,
    tasks: Vec<AbortHandle>,
    tx: mpsc::Sender<Arrival>,
    rx: mpsc::Receiver<Arrival>,
}

impl Drop for LogController {
    fn drop(&mut self) {
        self.stop();
    }
}

impl LogController {
    pub fn new(client: kube::Client, settings: LogSettings) -> Self {
        let (tx, rx) = mpsc::channel(CHANNEL);
        Self {
            client,
            settings,
            target: None,
            generation: 0,
            chosen: None,
            tasks: Vec::new(),
            tx,
            rx,
        }
    }

    /// A controller with these settings reading from `client` (another context's).
    pub fn for_client(&self, client: kube::Client) -> Self {
        Self::new(client, self.settings.clone())
    }

    /// Opens the view of `target`; the view is the caller's to keep in the UI state. Must run
    /// inside a Tokio runtime.
    pub fn open(&mut self, target: LogTarget, previous: bool) -> LogView {
        let (title, namespace) = match &target {
            LogTarget::Pod { namespace, name } => (format!("pod {namespace}/{name}"), namespace),
            LogTarget::Workload {
                what, namespace, ..
            } => (what.clone(), namespace),
        };
        let mut view = LogView::new(
            title,
            namespace.clone(),
            self.settings.capacity,
            self.settings.tail_lines,
        );
        view.previous = previous;
        self.target = Some(target);
        self.chosen = None;
        self.restart(&mut view);
        view
    }

    /// Stops every task; the view is closed.
    pub fn stop(&mut self) {
        for task in self.tasks.drain(..) {
            task.abort();
        }
        self.generation += 1;
    }

    /// Closes the view's tasks and reads the target again (after previous or range changed).
    fn restart(&mut self, view: &mut LogView) {
        self.stop();
        view.restart();
        let Some(target) = self.target.clone() else {
            return;
        };
        let client = self.client.clone();
        let tx = self.tx.clone();
        let generation = self.generation;
        let task = tokio::spawn(async move {
            let send = |payload| {
                tx.send(Arrival {
                    generation,
                    source: 0,
                    payload,
                })
            };
            match target {
                LogTarget::Pod { namespace, name } => {
                    let path = format!("/api/v1/namespaces/{namespace}/pods/{name}");
                    let payload = match get_json(&client, &path).await {
                        Ok(pod) => Payload::Pods(vec![pod_containers(&pod)]),
                        Err(why) => Payload::Unresolved(format!("pod {namespace}/{name}: {why}")),
                    };
                    let _ = send(payload).await;
                }
                LogTarget::Workload {
                    what,
                    namespace,
                    path,
                } => {
                    let selector = match get_json(&client, &path).await.and_then(|o| selector(&o)) {
                        Ok(selector) => selector,
                        Err(why) => {
                            let _ = send(Payload::Unresolved(format!("{what}: {why}"))).await;
                            return;
                        }
                    };
                    let list = format!(
                        "/api/v1/namespaces/{namespace}/pods?{}",
                        form_urlencoded::Serializer::new(String::new())
                            .append_pair("labelSelector", &selector)
                            .finish()
                    );
                    loop {
                        let payload = match get_json(&client, &list).await {
                            Ok(pods) => Payload::Pods(
                                pods["items"]
                                    .as_array()
                                    .map(|items| items.iter().map(pod_containers).collect())
                                    .unwrap_or_default(),
                            ),
                            Err(why) => Payload::State(SourceState::Failed(format!(
                                "listing the pods of {what}: {why}"
                            ))),
                        };
                        if send(payload).await.is_err() {
                            return;
                        }
                        tokio::time::sleep(REPOLL).await;
                    }
                }
            }
        });
        self.tasks.push(task.abort_handle());
    }

    /// The next batch from a task. Cancel-safe, for the event loop's `select!`.
    pub async fn arrived(&mut self) -> Option<Arrival> {
        self.rx.recv().await
    }

    /// Takes `first` and what else is waiting (up to a bound) into `view`.
    pub fn take(&mut self, view: Option<&mut LogView>, first: Arrival) {
        let Some(view) = view else { return };
        let mut lines = 0;
        let mut next = Some(first);
        while let Some(arrival) = next.take() {
            if let Payload::Lines(batch) = &arrival.payload {
                lines += batch.len();
            }
            self.apply_arrival(view, arrival);
            if lines >= DRAIN_LINES {
                break;
            }
            next = self.rx.try_recv().ok();
        }
    }

    fn apply_arrival(&mut self, view: &mut LogView, arrival: Arrival) {
        if arrival.generation != self.generation {
            return;
        }
        match arrival.payload {
            Payload::Lines(lines) => view.take(arrival.source, lines),
            Payload::State(state) => match view.sources.get_mut(usize::from(arrival.source)) {
                Some(source) => source.state = state,
                None => {
                    if let SourceState::Failed(why) = state {
                        view.notice = Some(why);
                    }
                }
            },
            Payload::Unresolved(why) => view.notice = Some(why),
            Payload::Saved(Ok(path)) => {
                view.notice = Some(format!("saved to {}", path.display()));
            }
            Payload::Saved(Err(why)) => view.notice = Some(format!("not saved: {why}")),
            Payload::Pods(pods) => self.read_pods(view, pods),
        }
    }

    /// Starts reading the pods not read yet, and marks ended the sources of pods gone.
    fn read_pods(&mut self, view: &mut LogView, pods: Vec<PodContainers>) {
        let workload = matches!(self.target, Some(LogTarget::Workload { .. }));
        if let [pod] = pods.as_slice()
            && !workload
            && pod.containers.len() > 1
            && self.chosen.is_none()
        {
            view.picker = Some(Picker {
                pod: pod.name.clone(),
                containers: pod.containers.clone(),
                // 0 is every container, kept when no container is annotated.
                selected: pod.default.map_or(0, |at| at + 1),
            });
            return;
        }
        if !workload && pods.iter().all(|p| p.containers.is_empty()) {
            view.notice = Some(format!("{}: the pod has no containers", view.title));
        }
        for source in &mut view.sources {
            if !pods.iter().any(|p| p.name == source.pod)
                && !matches!(source.state, SourceState::Ended(_) | SourceState::Failed(_))
            {
                source.state = SourceState::Ended("the pod was deleted".into());
            }
        }
        let chosen = self.chosen.clone().flatten();
        for pod in pods {
            for container in pod.containers {
                if chosen.as_ref().is_some_and(|c| *c != container)
                    || view
                        .sources
                        .iter()
                        .any(|s| s.pod == pod.name && s.container == container)
                {
                    continue;
                }
                let Ok(index) = u16::try_from(view.sources.len()) else {
                    view.notice = Some(format!("more than {} containers: not all read", u16::MAX));
                    return;
                };
                view.sources.push(Source {
                    pod: pod.name.clone(),
                    container: container.clone(),
                    tag: String::new(),
                    state: SourceState::Connecting,
                });
                self.spawn_reader(view, index, &pod.name, container);
            }
        }
        // Tags only when lines could come from more than one container.
        let several = workload || view.sources.len() > 1;
        let pods: std::collections::BTreeSet<&str> =
            view.sources.iter().map(|s| s.pod.as_str()).collect();
        let one_pod = !workload && pods.len() == 1;
        for source in &mut view.sources {
            source.tag = match (several, one_pod) {
                (false, _) => String::new(),
                (true, true) => format!("[{}]", source.container),
                (true, false) => format!("[{}/{}]", source.pod, source.container),
            };
        }
    }

    fn spawn_reader(&mut self, view: &LogView, source: u16, pod: &str, container: String) {
        let options = LogOptions {
            container: Some(container),
            follow: !view.previous,
            previous: view.previous,
            tail_lines: (view.range == LogRange::Tail).then_some(view.tail_lines),
            since_seconds: match view.range {
                LogRange::Since(s) => Some(u64::from(s)),
                _ => None,
            },
            since_time: None,
            // Always: lines of several containers are put in time order by them, and the
            // view shows them or not.
            timestamps: true,
            limit_bytes: None,
        };
        let reader = Reader {
            client: self.client.clone(),
            namespace: view.namespace.clone(),
            pod: pod.to_string(),
            options,
            max_line: self.settings.max_line_bytes,
            tx: self.tx.clone(),
            generation: self.generation,
            source,
        };
        self.tasks.push(tokio::spawn(reader.run()).abort_handle());
    }

    /// Does what the log view's `effect` asks of its readers: stop once the view closes,
    /// read again (another container, range or instance), or save what it keeps.
    pub fn follow(&mut self, view: &mut LogView, effect: &Effect) {
        match effect {
            Effect::Close => self.stop(),
            Effect::Refresh => {
                if let Some(picker) = view.picker.take() {
                    self.chosen = Some(
                        picker
                            .selected
                            .checked_sub(1)
                            .and_then(|i| picker.containers.get(i).cloned()),
                    );
                }
                let chosen = self.chosen.clone();
                self.restart(view);
                self.chosen = chosen;
            }
            Effect::Save => self.save(view),
            _ => {}
        }
    }

    /// Writes what the view keeps to a file in a background task; the view says where.
    fn save(&mut self, view: &mut LogView) {
        let text = view.saved_text();
        let dir = self.settings.save_dir.clone().unwrap_or_else(save_dir);
        let name: String = view
            .title
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let stamp = jiff::Timestamp::now().strftime("%Y%m%dT%H%M%SZ");
        let path = dir.join(format!("{name}-{stamp}.log"));
        view.notice = Some(format!("saving to {}…", path.display()));
        let tx = self.tx.clone();
        let generation = self.generation;
        tokio::spawn(async move {
            let written = tokio::task::spawn_blocking(move || {
                std::fs::create_dir_all(&dir)
                    .and_then(|()| std::fs::write(&path, text))
                    .map(|()| path)
                    .map_err(|e| e.to_string())
            })
            .await
            .unwrap_or_else(|e| Err(e.to_string()));
            let _ = tx
                .send(Arrival {
                    generation,
                    source: 0,
                    payload: Payload::Saved(written),
                })
                .await;
        });
    }
}

/// Where saved logs go: `logs` in kscope's state directory, else in the temporary directory.
fn save_dir() -> PathBuf {
    kscope_config::state_dir()
        .unwrap_or_else(|| std::env::temp_dir().join("kscope"))
        .join("logs")
}

/// GETs a JSON object, within [`RESOLVE_TIMEOUT`]; the error in a person's words.
async fn get_json(client: &kube::Client, path: &str) -> Result<Value, String> {
    let request = http::Request::get(path)
        .header(http::header::ACCEPT, "application/json")
        .body(Vec::new())
        .map_err(|e| e.to_string())?;
    let text = match tokio::time::timeout(RESOLVE_TIMEOUT, client.request_text(request)).await {
        Err(_) => {
            return Err(format!(
                "no answer from the API server within {}s",
                RESOLVE_TIMEOUT.as_secs()
            ));
        }
        Ok(Err(kube::Error::Api(status))) => {
            return Err(match status.code {
                404 => "not found (404): it may have just been deleted".into(),
                403 => format!("forbidden (403): {}", status.message),
                code => format!("the API server answered {code}: {}", status.message),
            });
        }
        Ok(Err(e)) => return Err(format!("cannot reach the API server: {e}")),
        Ok(Ok(text)) => text,
    };
    serde_json::from_str(&text).map_err(|e| format!("malformed JSON from the API server: {e}"))
}

fn pod_containers(pod: &Value) -> PodContainers {
    let containers: Vec<String> = pod["spec"]["containers"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .filter_map(|c| c["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let annotated =
        pod["metadata"]["annotations"]["kubectl.kubernetes.io/default-container"].as_str();
    PodContainers {
        name: pod["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        default: annotated.and_then(|name| containers.iter().position(|c| c == name)),
        containers,
    }
}

/// A workload's `spec.selector` as a label selector string.
fn selector(object: &Value) -> Result<String, String> {
    let selector = &object["spec"]["selector"];
    let mut terms: Vec<String> = selector["matchLabels"]
        .as_object()
        .map(|labels| {
            labels
                .iter()
                .filter_map(|(k, v)| v.as_str().map(|v| format!("{k}={v}")))
                .collect()
        })
        .unwrap_or_default();
    for expression in selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let key = expression["key"].as_str().unwrap_or_default();
        let values: Vec<&str> = expression["values"]
            .as_array()
            .map(|vs| vs.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        terms.push(match expression["operator"].as_str() {
            Some("In") => format!("{key} in ({})", values.join(",")),
            Some("NotIn") => format!("{key} notin ({})", values.join(",")),
            Some("Exists") => key.to_string(),
            Some("DoesNotExist") => format!("!{key}"),
            other => return Err(format!("unknown selector operator {other:?}")),
        });
    }
    if terms.is_empty() {
        return Err("it selects no pods (no spec.selector)".into());
    }
    Ok(terms.join(","))
}

/// Reads one container's log into the channel, reconnecting after a failed connection
/// from the last line it had.
struct Reader {
    client: kube::Client,
    namespace: String,
    pod: String,
    options: LogOptions,
    max_line: usize,
    tx: mpsc::Sender<Arrival>,
    generation: u64,
    source: u16,
}

impl Reader {
    async fn send(&self, payload: Payload) -> bool {
        self.tx
            .send(Arrival {
                generation: self.generation,
                source: self.source,
                payload,
            })
            .await
            .is_ok()
    }

    async fn run(self) {
        let mut last: Option<i64> = None;
        let mut attempt = 0;
        loop {
            let mut options = self.options.clone();
            if let Some(last) = last {
                // From the second of the last line (the API's resolution); lines up to it
                // are dropped below.
                options.tail_lines = None;
                options.since_seconds = None;
                options.since_time = jiff::Timestamp::from_nanosecond(i128::from(last))
                    .ok()
                    .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string());
            }
            let failed = match open_log(
                &self.client,
                &self.namespace,
                &self.pod,
                &options,
                self.max_line,
            )
            .await
            {
                Err(err) => err,
                Ok(mut stream) => {
                    if !self.send(Payload::State(SourceState::Streaming)).await {
                        return;
                    }
                    attempt = 0;
                    match self.pump(&mut stream, &mut last).await {
                        Ok(true) => return,
                        Ok(false) => {
                            let why = if self.options.follow {
                                "the log ended: the container stopped or the pod went"
                            } else {
                                "end of the log"
                            };
                            let _ = self
                                .send(Payload::State(SourceState::Ended(why.into())))
                                .await;
                            return;
                        }
                        Err(err) => err,
                    }
                }
            };
            attempt += 1;
            if !failed.transient() || !self.options.follow || attempt > RETRIES {
                let _ = self
                    .send(Payload::State(SourceState::Failed(failed.to_string())))
                    .await;
                return;
            }
            let why = failed.to_string();
            if !self
                .send(Payload::State(SourceState::Reconnecting { attempt, why }))
                .await
            {
                return;
            }
            tokio::time::sleep(RETRY_FIRST * 2u32.pow(attempt - 1)).await;
        }
    }

    /// Sends the stream's lines in batches until it ends (`Ok(false)`), fails, or nobody
    /// listens any more (`Ok(true)`). Lines at or before `last` were sent already.
    async fn pump(
        &self,
        stream: &mut kscope_client::logs::LogStream,
        last: &mut Option<i64>,
    ) -> Result<bool, LogError> {
        let resumed_after = *last;
        loop {
            let Some(first) = stream.next_batch().await else {
                return Ok(false);
            };
            let mut batch = first?;
            // Whatever else has already arrived goes in the same batch.
            while batch.len() < BATCH_LINES {
                match stream.next_batch().now_or_never() {
                    Some(Some(Ok(more))) => batch.extend(more),
                    Some(Some(Err(err))) => return Err(err),
                    Some(None) | None => break,
                }
            }
            if let Some(after) = resumed_after {
                batch.retain(|l| l.time.is_none_or(|t| t > after));
            }
            if let Some(t) = batch.iter().rev().find_map(|l| l.time) {
                *last = Some(t);
            }
            if !batch.is_empty() && !self.send(Payload::Lines(batch)).await {
                return Ok(true);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_read_labels_and_expressions() {
        let object = serde_json::json!({"spec": {"selector": {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["a", "b"]},
                {"key": "canary", "operator": "DoesNotExist"}
            ]
        }}});
        assert_eq!(selector(&object).unwrap(), "app=web,tier in (a,b),!canary");
        assert!(selector(&serde_json::json!({"spec": {}})).is_err());
    }

    /// The default-container annotation names the container the picker offers first; one
    /// it does not name, or none, leaves every container offered.
    #[test]
    fn the_default_container_annotation_is_offered_first() {
        let pod = |annotation: &str| {
            serde_json::json!({
                "metadata": {"name": "web", "annotations": {
                    "kubectl.kubernetes.io/default-container": annotation}},
                "spec": {"containers": [{"name": "app"}, {"name": "console"}]},
            })
        };
        assert_eq!(pod_containers(&pod("console")).default, Some(1));
        assert_eq!(pod_containers(&pod("gone")).default, None);
        assert_eq!(
            pod_containers(&serde_json::json!({"spec": {"containers": [{"name": "app"}]}})),
            PodContainers {
                name: String::new(),
                containers: vec!["app".into()],
                default: None,
            }
        );
    }
}
