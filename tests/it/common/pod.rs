//! The tests' one pod fixture: a pod as the kubelet reports it once its one container `c`
//! runs and passes its readiness probe (READY 1/1, Running), so that a screen shows what a
//! healthy cluster shows; a test about another state says so ([`PodFixture::phase`],
//! [`PodFixture::waiting`]).

use std::sync::Arc;

use kscope_resources::{Pod, decode};
use serde_json::{Value, json};

/// 2026-01-01T00:00:00Z: the fixed "now" of the tests that draw ages.
pub const NOW: i64 = 1_767_225_600;

/// A pod under construction: [`pod`], the setters, then [`PodFixture::json`],
/// [`PodFixture::wire`] or [`PodFixture::decoded`].
#[derive(Clone)]
pub struct PodFixture {
    namespace: String,
    name: String,
    resource_version: u64,
    labels: Vec<(String, String)>,
    node: String,
    container: String,
    image: String,
    created: Option<i64>,
    phase: String,
    waiting: Option<String>,
    restarts: u32,
    last_exit: Option<i64>,
    pod_ip: Option<String>,
}

/// `namespace/name` on node-1, one nginx container `c`, Running and ready, at rv 1.
pub fn pod(namespace: &str, name: &str) -> PodFixture {
    PodFixture {
        namespace: namespace.into(),
        name: name.into(),
        resource_version: 1,
        labels: Vec::new(),
        node: "node-1".into(),
        container: "c".into(),
        image: "nginx".into(),
        created: None,
        phase: "Running".into(),
        waiting: None,
        restarts: 0,
        last_exit: None,
        pod_ip: None,
    }
}

impl PodFixture {
    pub fn rv(mut self, resource_version: u64) -> Self {
        self.resource_version = resource_version;
        self
    }

    /// The `app` label, the one most tests index or filter by.
    pub fn app(self, app: &str) -> Self {
        self.label("app", app)
    }

    pub fn label(mut self, key: &str, value: &str) -> Self {
        self.labels.push((key.into(), value.into()));
        self
    }

    pub fn node(mut self, node: &str) -> Self {
        node.clone_into(&mut self.node);
        self
    }

    pub fn container(mut self, name: &str) -> Self {
        name.clone_into(&mut self.container);
        self
    }

    pub fn image(mut self, image: &str) -> Self {
        image.clone_into(&mut self.image);
        self
    }

    /// Created at `seconds` since the epoch (see [`NOW`]); without it, no creationTimestamp.
    pub fn created(mut self, seconds: i64) -> Self {
        self.created = Some(seconds);
        self
    }

    /// Another phase: only Running pods have a running container, so any other is not ready.
    pub fn phase(mut self, phase: &str) -> Self {
        phase.clone_into(&mut self.phase);
        self
    }

    /// Its container waiting to run again for `reason` (CrashLoopBackOff, ImagePullBackOff),
    /// so not ready.
    pub fn waiting(mut self, reason: &str) -> Self {
        self.waiting = Some(reason.into());
        self
    }

    /// Its container's last run ended with exit code 1 at `seconds` since the epoch.
    pub fn last_exit(mut self, seconds: i64) -> Self {
        self.last_exit = Some(seconds);
        self
    }

    pub fn restarts(mut self, restarts: u32) -> Self {
        self.restarts = restarts;
        self
    }

    pub fn pod_ip(mut self, ip: &str) -> Self {
        self.pod_ip = Some(ip.into());
        self
    }

    /// The pod as the API server serves it.
    pub fn json(&self) -> Value {
        let mut metadata = json!({
            "name": self.name,
            "namespace": self.namespace,
            "resourceVersion": self.resource_version.to_string(),
        });
        if let Some(created) = self.created {
            metadata["creationTimestamp"] = json!(timestamp(created));
        }
        if !self.labels.is_empty() {
            metadata["labels"] = self.labels.iter().cloned().collect();
        }
        let running = self.phase == "Running";
        let ready = running && self.waiting.is_none();
        let since = timestamp(self.created.unwrap_or(NOW));
        let condition = |type_: &str, status: bool| json!({"type": type_, "status": if status { "True" } else { "False" }});
        let mut status = json!({
            "phase": self.phase,
            "conditions": [
                condition("PodScheduled", true),
                condition("Initialized", true),
                condition("ContainersReady", ready),
                condition("Ready", ready),
            ],
        });
        // Before Running the kubelet has reported no container yet, unless one is waiting.
        let state = match &self.waiting {
            Some(reason) => Some(json!({"waiting": {"reason": reason}})),
            None if running => Some(json!({"running": {"startedAt": since}})),
            None => None,
        };
        if let Some(state) = state {
            let mut container = json!({
                "name": self.container,
                "image": self.image,
                "ready": ready,
                "started": running && self.waiting.is_none(),
                "restartCount": self.restarts,
                "state": state,
            });
            if let Some(finished) = self.last_exit {
                container["lastState"] =
                    json!({"terminated": {"exitCode": 1, "finishedAt": timestamp(finished)}});
            }
            status["containerStatuses"] = json!([container]);
        }
        if let Some(ip) = &self.pod_ip {
            status["podIP"] = json!(ip);
        }
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": metadata,
            "spec": {
                "nodeName": self.node,
                "containers": [{"name": self.container, "image": self.image}],
            },
            "status": status,
        })
    }

    /// [`PodFixture::json`] as one line of text, for a hand-made server's responses.
    pub fn wire(&self) -> String {
        self.json().to_string()
    }

    /// The pod decoded as kscope's informers hold it.
    pub fn decoded(&self) -> Arc<Pod> {
        Arc::new(decode(self.wire().as_bytes()).expect("pod decodes"))
    }
}

/// RFC 3339 for `seconds` since the epoch.
fn timestamp(seconds: i64) -> String {
    jiff::Timestamp::from_second(seconds)
        .expect("valid time")
        .to_string()
}
