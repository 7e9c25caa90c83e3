//! `GET /api/v1/namespaces/NS/pods/NAME/log`: what the kubelet serves through the API
//! server, with its options (container, previous, tailLines, sinceSeconds, sinceTime,
//! timestamps, limitBytes, follow) and its refusals, over logs made up on demand.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use serde_json::{Value, json};

use super::params::Params;
use super::status::ApiError;
use super::target::Target;
use crate::Shared;
use crate::logs::{ContainerLog, NoisyLogs};
use crate::object::StoredObject;
use crate::resources::Resource;

/// A follow re-reads the pod at least this often, so it ends soon after the container does.
const FOLLOW_RECHECK: Duration = Duration::from_secs(2);
/// The most lines one chunk of a follow holds, so a reader far behind a fast log is sent
/// bounded pieces rather than one buffer of everything it missed.
const FOLLOW_CHUNK_LINES: u64 = 4_096;

/// What a log request asks for.
struct Options {
    container: Option<String>,
    previous: bool,
    follow: bool,
    timestamps: bool,
    tail_lines: Option<u64>,
    since_ms: Option<i64>,
    limit_bytes: Option<u64>,
}

fn number(params: &Params, name: &str) -> Result<Option<i64>, ApiError> {
    params
        .get(name)
        .map(|v| {
            v.parse::<i64>().map_err(|_| {
                ApiError::bad_request(format!("invalid value for {name}: {v:?} is not a number"))
            })
        })
        .transpose()
}

impl Options {
    fn parse(params: &Params, now_ms: i64) -> Result<Self, ApiError> {
        let positive = |name: &str, v: Option<i64>| match v {
            Some(n) if n < 1 => Err(ApiError::invalid(
                "PodLogOptions",
                "",
                name,
                "FieldValueInvalid",
                "must be greater than 0",
            )),
            other => Ok(other),
        };
        let since_seconds = positive("sinceSeconds", number(params, "sinceSeconds")?)?;
        let since_time = params
            .get("sinceTime")
            .map(|t| {
                t.parse::<jiff::Timestamp>()
                    .map(|t| t.as_millisecond())
                    .map_err(|e| ApiError::bad_request(format!("invalid sinceTime {t:?}: {e}")))
            })
            .transpose()?;
        if since_seconds.is_some() && since_time.is_some() {
            return Err(ApiError::invalid(
                "PodLogOptions",
                "",
                "sinceSeconds",
                "FieldValueForbidden",
                "at most one of `sinceTime` or `sinceSeconds` may be specified",
            ));
        }
        let tail_lines = number(params, "tailLines")?;
        if tail_lines.is_some_and(|n| n < 0) {
            return Err(ApiError::invalid(
                "PodLogOptions",
                "",
                "tailLines",
                "FieldValueInvalid",
                "must be greater than or equal to 0",
            ));
        }
        Ok(Self {
            container: params.get("container").map(str::to_string),
            previous: params.flag("previous"),
            follow: params.flag("follow"),
            timestamps: params.flag("timestamps"),
            tail_lines: tail_lines.map(|n| n as u64),
            since_ms: since_seconds.map(|s| now_ms - s * 1_000).or(since_time),
            limit_bytes: positive("limitBytes", number(params, "limitBytes")?)?.map(|n| n as u64),
        })
    }
}

fn millis(value: &Value) -> Option<i64> {
    value
        .as_str()?
        .parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_millisecond())
}

/// How long an init container the kubelet kept no status of is taken to have run.
const INIT_RUN_MS: i64 = 10_000;

/// Init container `container`'s status: the pod's own, or, where the kubelet left none,
/// the one it had: run to completion from the pod's start until its containers started
/// (waiting for them to start, `PodInitializing`, until they have).
fn init_status(pod: &Value, container: &str) -> Option<Value> {
    let statuses = &pod["status"];
    if let Some(own) = statuses["initContainerStatuses"]
        .as_array()
        .and_then(|ss| ss.iter().find(|s| s["name"] == container))
    {
        return Some(own.clone());
    }
    let started = statuses["startTime"]
        .as_str()
        .or(pod["metadata"]["creationTimestamp"].as_str())?;
    let finished = statuses["containerStatuses"]
        .as_array()?
        .iter()
        .filter_map(|s| {
            s["state"]["running"]["startedAt"]
                .as_str()
                .or(s["lastState"]["terminated"]["startedAt"].as_str())
                .or(s["state"]["terminated"]["startedAt"].as_str())
        })
        .min();
    // It ran at least long enough to have written a few lines.
    let state = match finished.and_then(|f| Some((millis(&json!(f))?, f))) {
        Some((finished_ms, finished)) => {
            let begun = millis(&json!(started))
                .unwrap_or(finished_ms)
                .min(finished_ms - INIT_RUN_MS);
            let started = jiff::Timestamp::from_millisecond(begun)
                .map(|t| t.to_string())
                .unwrap_or_else(|_| started.to_string());
            json!({"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": started, "finishedAt": finished}})
        }
        None => json!({"waiting": {"reason": "PodInitializing"}}),
    };
    Some(json!({"name": container, "restartCount": 0, "state": state, "lastState": {}}))
}

/// The names of the pod's `field` containers (`containers`, `initContainers`).
fn container_names<'a>(pod: &'a Value, field: &str) -> Vec<&'a str> {
    pod["spec"][field]
        .as_array()
        .map(|cs| cs.iter().filter_map(|c| c["name"].as_str()).collect())
        .unwrap_or_default()
}

/// The container a request for a pod's container (its log, an exec, an attach) means: the
/// one named, or the pod's only one; otherwise the real server's refusal naming the choices.
pub(super) fn chosen_container(pod: &Value, requested: Option<&str>) -> Result<String, ApiError> {
    let name = pod["metadata"]["name"].as_str().unwrap_or("");
    let containers = container_names(pod, "containers");
    let init = container_names(pod, "initContainers");
    match requested {
        Some(c) if containers.contains(&c) || init.contains(&c) => Ok(c.to_string()),
        Some(c) => Err(ApiError::bad_request(format!(
            "container {c} is not valid for pod {name}"
        ))),
        None if containers.len() == 1 => Ok(containers[0].to_string()),
        None => {
            let init_choice = if init.is_empty() {
                String::new()
            } else {
                format!(" or one of the init containers: [{}]", init.join(" "))
            };
            Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {name}, choose one of: [{}]{init_choice}",
                containers.join(" ")
            )))
        }
    }
}

/// The instance of `container` of `pod` to read, or the real server's refusal.
fn instance(
    pod: &Value,
    options: &Options,
    noisy: Option<&NoisyLogs>,
) -> Result<(String, ContainerLog, bool), ApiError> {
    let name = pod["metadata"]["name"].as_str().unwrap_or("");
    let container = chosen_container(pod, options.container.as_deref())?;
    let init = container_names(pod, "initContainers");
    if pod["spec"]["nodeName"].as_str().is_none_or(str::is_empty) {
        return Err(ApiError::bad_request(format!(
            "pod {name} does not have a host assigned"
        )));
    }
    let status = if init.contains(&container.as_str()) {
        init_status(pod, &container)
    } else {
        pod["status"]["containerStatuses"]
            .as_array()
            .and_then(|ss| ss.iter().find(|s| s["name"] == container.as_str()))
            .cloned()
    };
    let waiting_reason = |s: Option<&Value>| {
        s.and_then(|s| s["state"]["waiting"]["reason"].as_str())
            .unwrap_or("ContainerCreating")
            .to_string()
    };
    let Some(status) = status.as_ref() else {
        return Err(ApiError::bad_request(format!(
            "container \"{container}\" in pod \"{name}\" is waiting to start: {}",
            waiting_reason(None)
        )));
    };
    let app = pod["metadata"]["labels"]["app"]
        .as_str()
        .or(pod["metadata"]["labels"]["app.kubernetes.io/name"].as_str())
        .unwrap_or(name);
    let uid = pod["metadata"]["uid"].as_str().unwrap_or("");
    let restarts = status["restartCount"].as_u64().unwrap_or(0);
    let last = &status["lastState"]["terminated"];
    let log = |restart: u64, started: i64, finished: Option<i64>, crashed: bool| {
        ContainerLog::new(app, uid, &container, restart, started, finished, crashed)
            .noisy(app, noisy)
    };
    let run = |state: &Value| {
        let crashed = state["exitCode"].as_i64().is_some_and(|c| c != 0);
        millis(&state["startedAt"])
            .zip(millis(&state["finishedAt"]))
            .map(|(started, finished)| (started, finished, crashed))
    };
    let running_since = millis(&status["state"]["running"]["startedAt"]);
    let ended = run(&status["state"]["terminated"]);
    let last_run = run(last);
    // A container that ended (and is not to restart, or not yet) serves its log, and one
    // waiting to restart serves its last run's, as the kubelet does.
    let current = match (running_since, ended, last_run) {
        (Some(started), _, _) => Some((restarts, started, None, false)),
        (None, Some((started, finished, crashed)), _) => {
            Some((restarts, started, Some(finished), crashed))
        }
        (None, None, Some((started, finished, crashed))) if restarts > 0 => {
            Some((restarts - 1, started, Some(finished), crashed))
        }
        _ => None,
    };
    if !options.previous {
        let Some((restart, started, finished, crashed)) = current else {
            let reason = waiting_reason(Some(status));
            if reason == "ErrImagePull" || reason == "ImagePullBackOff" {
                return Err(ApiError::bad_request(format!(
                    "container \"{container}\" in pod \"{name}\" is waiting to start: trying and failing to pull image"
                )));
            }
            return Err(ApiError::bad_request(format!(
                "container \"{container}\" in pod \"{name}\" is waiting to start: {reason}"
            )));
        };
        let live = finished.is_none();
        return Ok((
            container.clone(),
            log(restart, started, finished, crashed),
            live,
        ));
    }
    // The kubelet's previous container is the last terminated one, whatever runs now.
    let previous = last_run.map(|(s, f, crashed)| (restarts.saturating_sub(1), s, f, crashed));
    let Some((restart, s, f, crashed)) = previous else {
        return Err(ApiError::bad_request(format!(
            "previous terminated container \"{container}\" in pod \"{name}\" not found"
        )));
    };
    let log = log(restart, s, Some(f), crashed);
    Ok((container, log, false))
}

fn render(log: &ContainerLog, i: u64, timestamps: bool, out: &mut String) {
    let (t, line) = log.line(i);
    if timestamps {
        let ts = jiff::Timestamp::from_millisecond(t).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
        out.push_str(&format!("{ts:.9} "));
    }
    out.push_str(&line);
    out.push('\n');
}

pub(crate) async fn logs(
    shared: Arc<Shared>,
    target: &Target,
    params: &Params,
) -> Result<Response, ApiError> {
    let name = target.name.as_deref().unwrap_or("");
    let key = target.key(name);
    let now_ms = jiff::Timestamp::now().as_millisecond();
    let options = Options::parse(params, now_ms)?;
    let stored = shared
        .store
        .get(Resource::Pods, &key)
        .ok_or_else(|| ApiError::not_found(Resource::Pods, name))?;
    let pod = stored
        .decode()
        .map_err(|e| ApiError::internal(&e.to_string()))?;
    let (container, log, live) = instance(&pod, &options, shared.noisy_logs.as_ref())?;
    let written = log.written_by(now_ms);
    let mut first = ContainerLog::first_retained(written);
    if let Some(since) = options.since_ms {
        while first < written && log.line(first).0 < since {
            first += 1;
        }
    }
    if let Some(tail) = options.tail_lines {
        first = first.max(written.saturating_sub(tail));
    }
    let mut text = String::new();
    for i in first..written {
        render(&log, i, options.timestamps, &mut text);
    }
    let mut budget = options.limit_bytes.unwrap_or(u64::MAX);
    let head = cut(text, &mut budget);
    let response = Response::builder().header("content-type", "text/plain");
    if !(options.follow && live) || budget == 0 {
        return response
            .body(Body::from(head))
            .map_err(|e| ApiError::internal(&e.to_string()));
    }
    let follow = Follow {
        shared,
        key,
        running_in: stored,
        container,
        log,
        next: written,
        timestamps: options.timestamps,
        budget,
    };
    let head = futures::stream::once(async move { Ok::<_, std::io::Error>(head) });
    let rest = futures::stream::unfold(follow, |mut f| async move {
        f.next_chunk().await.map(|chunk| (Ok(chunk), f))
    });
    response
        .body(Body::from_stream(futures::StreamExt::chain(head, rest)))
        .map_err(|e| ApiError::internal(&e.to_string()))
}

/// What an attach to a container that takes no stdin sees: its output from now on, which
/// in the sim is its log's lines as they are written.
pub(super) fn attached_output(
    shared: Arc<Shared>,
    key: String,
    stored: Arc<StoredObject>,
    pod: &Value,
    container: &str,
) -> Result<Follow, ApiError> {
    let options = Options {
        container: Some(container.to_string()),
        previous: false,
        follow: true,
        timestamps: false,
        tail_lines: Some(0),
        since_ms: None,
        limit_bytes: None,
    };
    let (container, log, _) = instance(pod, &options, shared.noisy_logs.as_ref())?;
    let next = log.written_by(jiff::Timestamp::now().as_millisecond());
    Ok(Follow {
        shared,
        key,
        running_in: stored,
        container,
        log,
        next,
        timestamps: false,
        budget: u64::MAX,
    })
}

/// `text` cut to at most `budget` bytes (at a character boundary), the budget spent.
fn cut(mut text: String, budget: &mut u64) -> Bytes {
    if text.len() as u64 > *budget {
        let mut end = *budget as usize;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    *budget -= text.len() as u64;
    Bytes::from(text)
}

/// A followed log: new lines as the container writes them, until it stops running, the
/// pod goes, the byte limit is reached or the sim shuts down.
pub(super) struct Follow {
    shared: Arc<Shared>,
    key: String,
    /// The pod's version last seen running the container: while the pod is unchanged it is
    /// not decoded again.
    running_in: Arc<StoredObject>,
    container: String,
    log: ContainerLog,
    next: u64,
    timestamps: bool,
    budget: u64,
}

impl Follow {
    pub(super) async fn next_chunk(&mut self) -> Option<Bytes> {
        loop {
            if self.budget == 0 || !self.still_running() {
                return None;
            }
            let now = jiff::Timestamp::now().as_millisecond();
            let written = self.log.written_by(now);
            if written > self.next {
                let end = written.min(self.next + FOLLOW_CHUNK_LINES);
                let mut text = String::new();
                for i in self.next..end {
                    render(&self.log, i, self.timestamps, &mut text);
                }
                self.next = end;
                return Some(cut(text, &mut self.budget));
            }
            // Every line due by now is sent, so the next is due in a later millisecond.
            let due = self.log.time_of(self.next).saturating_sub(now).max(1);
            let wait = Duration::from_millis(due as u64).min(FOLLOW_RECHECK);
            tokio::select! {
                () = self.shared.shutdown.cancelled() => return None,
                () = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// Whether the followed run of the container still runs in the same pod (not ended,
    /// nor ended and restarted between two looks).
    fn still_running(&mut self) -> bool {
        let Some(pod) = self.shared.store.get(Resource::Pods, &self.key) else {
            return false;
        };
        if Arc::ptr_eq(&pod, &self.running_in) {
            return true;
        }
        if pod.uid != self.running_in.uid {
            return false;
        }
        let running = pod.decode().is_ok_and(|p| {
            p["status"]["containerStatuses"]
                .as_array()
                .and_then(|ss| ss.iter().find(|s| s["name"] == self.container.as_str()))
                .is_some_and(|s| {
                    millis(&s["state"]["running"]["startedAt"]) == Some(self.log.started_ms())
                })
        });
        if running {
            self.running_in = pod;
        }
        running
    }
}
