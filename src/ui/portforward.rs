//! Port-forwards (`F` on a pod, a Service or the container picker's row, listed by `:pf`), as
//! `kubectl port-forward`:
//! a listener on 127.0.0.1 only, and per accepted connection one port-forward stream to the
//! pod (kube's `Api::portforward`, a WebSocket to `pods/NAME/portforward`).
//!
//! The forwards run here, in the app's runtime layer, not in a component: they outlive the
//! dialog and the list, each connection copies through fixed buffers, and the UI draws
//! [`ForwardRow`] snapshots. A forward opens nothing in the cluster's store (no object is
//! created or changed), so it is allowed without `--readwrite`, as logs are; the server
//! still asks for `create pods/portforward` and refuses a user without it.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::{FutureExt, StreamExt};
use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::Api;
use kube::api::{ListParams, WatchEvent, WatchParams};
use parking_lot::Mutex;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::{JoinHandle, JoinSet};

use super::action::Action;
use super::effect::Effect;

/// What one direction of a connection copies at a time: the most a forward holds per
/// connection and direction, whatever the peers' speeds.
const BUFFER: usize = 32 * 1024;
/// How long the watch on a forward's pod waits before it asks again after an error.
const RETRY: Duration = Duration::from_secs(1);
/// How many digits a port has at most.
const PORT_DIGITS: usize = 5;

/// Why a forward could not start.
#[derive(Debug, thiserror::Error)]
pub enum ForwardError {
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: io::Error,
    },
}

/// What `F` was pressed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForwardOf {
    Pod {
        namespace: String,
        name: String,
    },
    Service {
        namespace: String,
        name: String,
    },
    /// One container of a pod (the container picker's row): only its ports are offered.
    Container {
        namespace: String,
        pod: String,
        container: String,
    },
}

impl ForwardOf {
    fn label(&self) -> String {
        match self {
            Self::Pod { namespace, name } => format!("pod {namespace}/{name}"),
            Self::Service { namespace, name } => format!("service {namespace}/{name}"),
            Self::Container {
                namespace,
                pod,
                container,
            } => format!("container {container} of pod {namespace}/{pod}"),
        }
    }
}

/// What the dialog offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Offer {
    /// The ports declared, to choose from.
    Ports(Vec<PortChoice>),
    /// A container that declares no ports: its port (0 here) is typed, as `kubectl
    /// port-forward` forwards to any port; a container's `ports` only document its servers.
    Typed(PortChoice),
}

/// A port a forward can go to: a container's port of a pod (for a Service, the port its
/// targetPort names on the pod chosen), and the local port offered for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortChoice {
    pub namespace: String,
    pub pod: String,
    /// The pod's uid when read: a pod of the same name created later is another pod.
    pub uid: Option<String>,
    pub container: String,
    /// The port's name in the container spec, if it has one.
    pub name: Option<String>,
    pub port: u16,
    /// The Service's port this one serves, when `F` was on a Service.
    pub service_port: Option<u16>,
    /// Whether `F` was on the container's own row: the forward is then labelled with it.
    pub of_container: bool,
    /// The same port number if free on 127.0.0.1 (the Service's port for a Service, as
    /// kubectl's `svc/X 80` listens on 80), else one the system picked.
    pub local: u16,
}

impl PortChoice {
    /// One line of the dialog: `app/http 8080/TCP` or `svc 80 → web-1 app/http 8080`.
    pub fn label(&self) -> String {
        let named = match &self.name {
            Some(name) => format!("{}/{name} {}", self.container, self.port),
            None => format!("{} {}", self.container, self.port),
        };
        match self.service_port {
            Some(service) => format!("{service} → {} {named}", self.pod),
            None => named,
        }
    }
}

/// What a forward's tasks tell the event loop.
#[derive(Debug)]
pub enum ForwardEvent {
    /// The dialog's ports (of dialog `id`), or why there are none.
    Prepared {
        id: u64,
        result: Result<Offer, String>,
    },
    /// A forward ended on its own: its pod went away, or its listener failed.
    Ended,
}

/// Where a forward stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ForwardState {
    #[default]
    Active,
    /// Its pod went away (deleted, replaced, or no longer running): the local port closed.
    PodGone(String),
    /// The listener failed.
    Failed(String),
}

impl std::fmt::Display for ForwardState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Active => f.write_str("active"),
            Self::PodGone(why) => write!(f, "gone: {why}"),
            Self::Failed(why) => write!(f, "failed: {why}"),
        }
    }
}

/// A forward's counters, shared by its tasks and read by the snapshots.
#[derive(Debug, Default)]
struct Stats {
    open: AtomicU64,
    total: AtomicU64,
    /// From the pod to the local side.
    bytes_in: AtomicU64,
    /// From the local side to the pod.
    bytes_out: AtomicU64,
    state: Mutex<ForwardState>,
    /// What the pod's side said when it refused a connection last.
    last_error: Mutex<Option<String>>,
}

/// One forward as the `:pf` list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardRow {
    pub id: u64,
    /// The kube context it forwards into: a forward keeps running after `:ctx`.
    pub context: String,
    /// `namespace/name`, and `(container)` after it for a forward started on a container.
    pub pod: String,
    pub container: String,
    pub port: u16,
    pub local: SocketAddr,
    pub open: u64,
    pub total: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub state: ForwardState,
    pub last_error: Option<String>,
}

/// A running forward; its tasks end when it is dropped.
struct Forward {
    id: u64,
    context: String,
    choice: PortChoice,
    local: SocketAddr,
    stats: Arc<Stats>,
    task: JoinHandle<()>,
}

impl Drop for Forward {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The forwards, and the reads that fill the dialog.
pub struct ForwardController {
    client: kube::Client,
    /// The context `client` talks to, which new forwards are labelled with.
    context: String,
    sender: mpsc::UnboundedSender<ForwardEvent>,
    receiver: mpsc::UnboundedReceiver<ForwardEvent>,
    next_id: u64,
    forwards: Vec<Forward>,
}

impl ForwardController {
    pub fn new(client: kube::Client, context: String) -> Self {
        let (sender, receiver) = mpsc::unbounded_channel();
        Self {
            client,
            context,
            sender,
            receiver,
            next_id: 0,
            forwards: Vec::new(),
        }
    }

    /// New dialogs and forwards go to `context` through `client` (after `:ctx`). The
    /// forwards running keep their own client, and so their cluster, as a `kubectl
    /// port-forward` started before a context switch does: a tunnel in use is not cut
    /// because the person looks at another cluster. Their rows name their context. Returns
    /// how many forwards now run into a context other than `context`.
    pub fn set_client(&mut self, client: kube::Client, context: String) -> usize {
        self.client = client;
        self.context = context;
        self.forwards
            .iter()
            .filter(|f| f.context != self.context)
            .count()
    }

    /// The next event. Cancel-safe, for the event loop's `select!`.
    pub async fn next(&mut self) -> Option<ForwardEvent> {
        self.receiver.recv().await
    }

    /// Starts reading the ports of `of`; returns the dialog the answer fills.
    pub fn prepare(&mut self, of: ForwardOf) -> ForwardDialog {
        self.next_id += 1;
        let id = self.next_id;
        let client = self.client.clone();
        let sender = self.sender.clone();
        let what = of.label();
        tokio::spawn(async move {
            let result = choices(client, &of).await;
            // Nobody listens once the app is gone.
            let _ = sender.send(ForwardEvent::Prepared { id, result });
        });
        ForwardDialog {
            id,
            what,
            ..ForwardDialog::default()
        }
    }

    /// Listens on 127.0.0.1:`local` and forwards each connection to `choice`'s port.
    pub fn start(&mut self, choice: PortChoice, local: u16) -> Result<SocketAddr, ForwardError> {
        let addr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, local));
        let listener = std::net::TcpListener::bind(addr)
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .and_then(TcpListener::from_std)
            .map_err(|source| ForwardError::Bind { addr, source })?;
        // Port 0 asks the system for one: the row shows the one it gave.
        let addr = listener.local_addr().unwrap_or(addr);
        self.next_id += 1;
        let stats = Arc::new(Stats::default());
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), &choice.namespace);
        let task = tokio::spawn(serve(
            listener,
            pods,
            choice.clone(),
            stats.clone(),
            self.sender.clone(),
        ));
        self.forwards.push(Forward {
            id: self.next_id,
            context: self.context.clone(),
            choice,
            local: addr,
            stats,
            task,
        });
        Ok(addr)
    }

    /// Stops forward `id`: its port closes and its connections end. Returns what it was.
    pub fn stop(&mut self, id: u64) -> Option<ForwardRow> {
        let at = self.forwards.iter().position(|f| f.id == id)?;
        let forward = self.forwards.remove(at);
        Some(row(&forward))
    }

    /// Every forward, oldest first, as it stands now.
    pub fn rows(&self) -> Vec<ForwardRow> {
        self.forwards.iter().map(row).collect()
    }
}

fn row(forward: &Forward) -> ForwardRow {
    let stats = &forward.stats;
    let choice = &forward.choice;
    let mut pod = format!("{}/{}", choice.namespace, choice.pod);
    if choice.of_container {
        pod = format!("{pod} ({})", choice.container);
    }
    ForwardRow {
        id: forward.id,
        context: forward.context.clone(),
        pod,
        container: forward.choice.container.clone(),
        port: forward.choice.port,
        local: forward.local,
        open: stats.open.load(Ordering::Relaxed),
        total: stats.total.load(Ordering::Relaxed),
        bytes_in: stats.bytes_in.load(Ordering::Relaxed),
        bytes_out: stats.bytes_out.load(Ordering::Relaxed),
        state: stats.state.lock().clone(),
        last_error: stats.last_error.lock().clone(),
    }
}

/// The ports `of` offers: a pod's container ports, one container's (or, when it declares
/// none, a port to type), or a Service's ports resolved on one of its ready pods as kubectl
/// resolves them.
async fn choices(client: kube::Client, of: &ForwardOf) -> Result<Offer, String> {
    let found = match of {
        ForwardOf::Pod { namespace, name } => {
            let pods: Api<Pod> = Api::namespaced(client, namespace);
            let pod = pods.get(name).await.map_err(|e| e.to_string())?;
            pod_ports(&pod)
        }
        ForwardOf::Service { namespace, name } => service_ports(client, namespace, name).await?,
        ForwardOf::Container {
            namespace,
            pod,
            container,
        } => {
            let pods: Api<Pod> = Api::namespaced(client, namespace);
            let pod = pods.get(pod).await.map_err(|e| e.to_string())?;
            return container_ports(&pod, container);
        }
    };
    if found.is_empty() {
        return Err(format!("{} declares no ports to forward", of.label()));
    }
    Ok(Offer::Ports(found))
}

/// The ports container `name` of `pod` declares; when it declares none, the port to type.
fn container_ports(pod: &Pod, name: &str) -> Result<Offer, String> {
    let containers = pod.spec.iter().flat_map(|s| &s.containers);
    if !containers.clone().any(|c| c.name == name) {
        let pod_name = pod.metadata.name.as_deref().unwrap_or_default();
        return Err(format!("pod {pod_name} has no container {name}"));
    }
    let ports: Vec<PortChoice> = pod_ports(pod)
        .into_iter()
        .filter(|c| c.container == name)
        .map(|c| PortChoice {
            of_container: true,
            ..c
        })
        .collect();
    if ports.is_empty() {
        return Ok(Offer::Typed(PortChoice {
            namespace: pod.metadata.namespace.clone().unwrap_or_default(),
            pod: pod.metadata.name.clone().unwrap_or_default(),
            uid: pod.metadata.uid.clone(),
            container: name.to_string(),
            name: None,
            port: 0,
            service_port: None,
            of_container: true,
            local: 0,
        }));
    }
    Ok(Offer::Ports(ports))
}

/// Each port each container of `pod` declares, the default container's (as kubectl picks
/// it) first: the dialog's port list is also its container choice, and Enter takes the
/// port kubectl would.
fn pod_ports(pod: &Pod) -> Vec<PortChoice> {
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let name = pod.metadata.name.clone().unwrap_or_default();
    let containers = pod.spec.iter().flat_map(|s| &s.containers);
    let mut ports: Vec<PortChoice> = containers
        .flat_map(|c| c.ports.iter().flatten().map(move |p| (c, p)))
        .filter_map(|(c, p)| {
            let port = u16::try_from(p.container_port).ok()?;
            Some(PortChoice {
                namespace: namespace.clone(),
                pod: name.clone(),
                uid: pod.metadata.uid.clone(),
                container: c.name.clone(),
                name: p.name.clone(),
                port,
                service_port: None,
                of_container: false,
                local: free_port(port),
            })
        })
        .collect();
    if let Some(default) = super::session::default_container(pod) {
        // Stable: each container's ports stay in the order declared.
        ports.sort_by_key(|p| p.container != default);
    }
    ports
}

/// A Service's ports on the pod kubectl would pick: one of its selector's pods, running
/// and ready first; a targetPort by name is looked up in that pod's container ports.
async fn service_ports(
    client: kube::Client,
    namespace: &str,
    name: &str,
) -> Result<Vec<PortChoice>, String> {
    let services: Api<Service> = Api::namespaced(client.clone(), namespace);
    let service = services.get(name).await.map_err(|e| e.to_string())?;
    let spec = service.spec.unwrap_or_default();
    let selector = spec.selector.unwrap_or_default();
    if selector.is_empty() {
        return Err(format!(
            "service {namespace}/{name} has no selector: no pod to forward to"
        ));
    }
    let labels: Vec<String> = selector.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let pods: Api<Pod> = Api::namespaced(client, namespace);
    let listed = pods
        .list(&ListParams::default().labels(&labels.join(",")))
        .await
        .map_err(|e| e.to_string())?;
    let pod = listed
        .items
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .max_by_key(|p| (running(p), ready(p)))
        .filter(running)
        .ok_or_else(|| format!("service {namespace}/{name} has no running pod"))?;
    let offered = pod_ports(&pod);
    let mut found = Vec::new();
    for port in spec.ports.iter().flatten() {
        let Ok(service_port) = u16::try_from(port.port) else {
            continue;
        };
        let target = match &port.target_port {
            None => offered.iter().find(|c| c.port == service_port).cloned(),
            Some(IntOrString::Int(n)) => {
                let number = u16::try_from(*n).ok();
                offered.iter().find(|c| Some(c.port) == number).cloned()
            }
            Some(IntOrString::String(named)) => offered
                .iter()
                .find(|c| c.name.as_deref() == Some(named.as_str()))
                .cloned(),
        };
        if let Some(mut choice) = target {
            choice.service_port = Some(service_port);
            choice.local = free_port(service_port);
            found.push(choice);
        }
    }
    Ok(found)
}

fn running(pod: &Pod) -> bool {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
}

fn ready(pod: &Pod) -> bool {
    pod.status
        .iter()
        .flat_map(|s| s.conditions.iter().flatten())
        .any(|c| c.type_ == "Ready" && c.status == "True")
}

/// `port` if 127.0.0.1 can listen on it now, else one the system picks.
fn free_port(port: u16) -> u16 {
    let at = |p| std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, p));
    match at(port) {
        Ok(_) => port,
        Err(_) => at(0)
            .and_then(|l| l.local_addr())
            .map_or(port, |a| a.port()),
    }
}

/// Accepts connections until the pod goes away (or the forward is dropped, which aborts
/// this task and with it the connections).
async fn serve(
    listener: TcpListener,
    pods: Api<Pod>,
    choice: PortChoice,
    stats: Arc<Stats>,
    events: mpsc::UnboundedSender<ForwardEvent>,
) {
    let mut connections = JoinSet::new();
    let gone = pod_gone(pods.clone(), choice.pod.clone(), choice.uid.clone());
    tokio::pin!(gone);
    let ended = loop {
        tokio::select! {
            reason = &mut gone => break ForwardState::PodGone(reason),
            accepted = listener.accept() => match accepted {
                Ok((socket, _)) => {
                    stats.open.fetch_add(1, Ordering::Relaxed);
                    stats.total.fetch_add(1, Ordering::Relaxed);
                    connections.spawn(connection(
                        pods.clone(),
                        choice.pod.clone(),
                        choice.port,
                        socket,
                        stats.clone(),
                    ));
                }
                Err(err) => break ForwardState::Failed(format!("accept: {err}")),
            },
            Some(_) = connections.join_next() => {}
        }
    };
    *stats.state.lock() = ended;
    // The listener and the connections end with this task: the local port closes, as
    // kubectl's does when it loses the pod.
    drop(listener);
    connections.shutdown().await;
    let _ = events.send(ForwardEvent::Ended);
}

/// Counts a connection open until it ends, however it ends.
struct Open(Arc<Stats>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// One local connection through its own port-forward stream: bytes both ways until the
/// pod's side ends (the local side ending first only ends its direction, as a half-close).
async fn connection(pods: Api<Pod>, pod: String, port: u16, socket: TcpStream, stats: Arc<Stats>) {
    let _open = Open(stats.clone());
    let mut forwarder = match pods.portforward(&pod, &[port]).await {
        Ok(forwarder) => forwarder,
        Err(err) => {
            *stats.last_error.lock() = Some(err.to_string());
            return;
        }
    };
    let (Some(upstream), Some(refused)) = (forwarder.take_stream(port), forwarder.take_error(port))
    else {
        return;
    };
    let (mut from_local, mut to_local) = socket.into_split();
    let (mut from_pod, mut to_pod) = tokio::io::split(upstream);
    let outbound = pump(&mut from_local, &mut to_pod, &stats.bytes_out);
    let inbound = pump(&mut from_pod, &mut to_local, &stats.bytes_in);
    // Fused: once it has said nothing (the stream ended), the second select polls it again.
    let refused = refused.fuse();
    tokio::pin!(outbound, inbound, refused);
    tokio::select! {
        _ = &mut inbound => {}
        Some(message) = &mut refused => *stats.last_error.lock() = Some(message),
        _ = &mut outbound => {
            tokio::select! {
                _ = &mut inbound => {}
                Some(message) = &mut refused => *stats.last_error.lock() = Some(message),
            }
        }
    }
    forwarder.abort();
}

/// Copies `reader` to `writer` through one fixed buffer, counting the bytes; at the end
/// shuts `writer` down, so the other side sees the end too.
async fn pump<R, W>(reader: &mut R, writer: &mut W, counted: &AtomicU64) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buffer = vec![0u8; BUFFER];
    loop {
        let n = reader.read(&mut buffer).await?;
        if n == 0 {
            return writer.shutdown().await;
        }
        writer.write_all(&buffer[..n]).await?;
        counted.fetch_add(n as u64, Ordering::Relaxed);
    }
}

/// Resolves once pod `name` (of `uid`) is gone: deleted, replaced by another of the same
/// name, or finished. Watches it by name, listing again after a watch ends.
async fn pod_gone(pods: Api<Pod>, name: String, uid: Option<String>) -> String {
    loop {
        let version = match pods.get_opt(&name).await {
            Ok(None) => return format!("pod {name} was deleted"),
            Ok(Some(pod)) => match ended(&pod, uid.as_deref()) {
                Some(why) => return why,
                None => pod.metadata.resource_version.unwrap_or_default(),
            },
            Err(_) => {
                tokio::time::sleep(RETRY).await;
                continue;
            }
        };
        let params = WatchParams::default().fields(&format!("metadata.name={name}"));
        let Ok(stream) = pods.watch(&params, &version).await else {
            tokio::time::sleep(RETRY).await;
            continue;
        };
        let mut stream = std::pin::pin!(stream);
        while let Some(event) = stream.next().await {
            match event {
                Ok(WatchEvent::Deleted(_)) => return format!("pod {name} was deleted"),
                Ok(WatchEvent::Added(pod) | WatchEvent::Modified(pod)) => {
                    if let Some(why) = ended(&pod, uid.as_deref()) {
                        return why;
                    }
                }
                Ok(WatchEvent::Bookmark(_)) => {}
                Ok(WatchEvent::Error(_)) | Err(_) => break,
            }
        }
    }
}

/// Why a forward to `pod` can no longer work, if it cannot.
fn ended(pod: &Pod, uid: Option<&str>) -> Option<String> {
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    if uid.is_some() && pod.metadata.uid.as_deref() != uid {
        return Some(format!("pod {name} was replaced by another of its name"));
    }
    match pod.status.as_ref().and_then(|s| s.phase.as_deref()) {
        Some(phase @ ("Succeeded" | "Failed")) => Some(format!("pod {name} is {phase}")),
        _ => None,
    }
}

/// The port-forward dialog: the ports read, the one chosen and the local port typed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForwardDialog {
    /// Which [`ForwardController::prepare`] it waits for.
    pub id: u64,
    /// `pod default/web`.
    pub what: String,
    /// The ports, or why there are none; `None` while they are read.
    pub choices: Option<Result<Vec<PortChoice>, String>>,
    /// A container that declares no ports: the port is typed, into this choice.
    pub open: Option<PortChoice>,
    pub selected: usize,
    /// The local port as typed (the chosen port's free local port until a digit is typed);
    /// with [`Self::open`], the pod's port typed, which the local port is too.
    pub local: String,
    /// Whether a digit was typed since the choice changed: the first replaces the default.
    typed: bool,
}

impl ForwardDialog {
    /// The ports of dialog `id` arrived.
    pub fn prepared(&mut self, id: u64, result: Result<Offer, String>) {
        if id != self.id {
            return;
        }
        match result {
            Ok(Offer::Ports(ports)) => self.choices = Some(Ok(ports)),
            Ok(Offer::Typed(open)) => {
                self.choices = Some(Ok(Vec::new()));
                self.open = Some(open);
            }
            Err(why) => self.choices = Some(Err(why)),
        }
        self.choose(0);
    }

    fn ports(&self) -> &[PortChoice] {
        match &self.choices {
            Some(Ok(ports)) => ports,
            _ => &[],
        }
    }

    fn choose(&mut self, at: usize) {
        if self.open.is_some() {
            return;
        }
        let last = self.ports().len().saturating_sub(1);
        self.selected = at.min(last);
        self.local = self
            .ports()
            .get(self.selected)
            .map(|c| c.local.to_string())
            .unwrap_or_default();
        self.typed = false;
    }

    /// Whether the local port was typed, not the default offered: a default taken since
    /// it was offered gives way to a free one, a typed port does not. A typed pod's port
    /// only offers its number locally, as a default.
    pub fn typed(&self) -> bool {
        self.typed && self.open.is_none()
    }

    /// The chosen port and the local port, once both are valid.
    pub fn chosen(&self) -> Option<(PortChoice, u16)> {
        let local = self.local.parse::<u16>().ok().filter(|p| *p > 0)?;
        if let Some(open) = &self.open {
            let choice = PortChoice {
                port: local,
                local,
                ..open.clone()
            };
            return Some((choice, local));
        }
        let choice = self.ports().get(self.selected)?;
        Some((choice.clone(), local))
    }

    /// A key in the dialog (the confirm dialog's keys): up and down choose the port, digits
    /// type the local port, yes or Enter start the forward.
    pub fn handle_key(&mut self, action: &Action) -> Option<Effect> {
        match action {
            Action::Up => self.choose(self.selected.saturating_sub(1)),
            Action::Down => self.choose(self.selected + 1),
            Action::ConfirmChar(c) => {
                if !self.typed {
                    self.local.clear();
                    self.typed = true;
                }
                if self.local.len() < PORT_DIGITS {
                    self.local.push(*c);
                }
            }
            Action::ConfirmBackspace => {
                self.typed = true;
                self.local.pop();
            }
            Action::ConfirmYes | Action::ChooseValue if self.chosen().is_some() => {
                return Some(Effect::StartForward);
            }
            Action::ConfirmNo => return Some(Effect::Close),
            _ => {}
        }
        None
    }
}

/// The `:pf` list: the forwards' last snapshot and the selection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForwardList {
    pub rows: Vec<ForwardRow>,
    pub selected: usize,
}

impl ForwardList {
    /// Takes a new snapshot, the selection kept in range.
    pub fn show(&mut self, rows: Vec<ForwardRow>) {
        self.rows = rows;
        self.selected = self.selected.min(self.rows.len().saturating_sub(1));
    }

    /// A key in the list: movement, stop the selected forward, back.
    pub fn handle_key(&mut self, action: &Action, page: usize) -> Option<Effect> {
        let last = self.rows.len().saturating_sub(1);
        match action {
            Action::Back => return Some(Effect::Close),
            Action::StopForward => {
                return self
                    .rows
                    .get(self.selected)
                    .map(|r| Effect::StopForward(r.id));
            }
            Action::Up => self.selected = self.selected.saturating_sub(1),
            Action::Down => self.selected = (self.selected + 1).min(last),
            Action::PageUp => self.selected = self.selected.saturating_sub(page),
            Action::PageDown => self.selected = (self.selected + page).min(last),
            Action::Top => self.selected = 0,
            Action::Bottom => self.selected = last,
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice(port: u16, local: u16) -> PortChoice {
        PortChoice {
            namespace: "default".into(),
            pod: "web".into(),
            uid: None,
            container: "app".into(),
            name: Some("http".into()),
            port,
            service_port: None,
            of_container: false,
            local,
        }
    }

    /// Up and down choose the port and reset the local port to its default; the first digit
    /// typed replaces the default; an empty or zero local port cannot start.
    #[test]
    fn dialog_chooses_a_port_and_types_the_local_one() {
        let mut dialog = ForwardDialog {
            id: 1,
            ..ForwardDialog::default()
        };
        assert_eq!(
            dialog.handle_key(&Action::ConfirmYes),
            None,
            "nothing read yet"
        );
        dialog.prepared(2, Ok(Offer::Ports(vec![choice(1, 1)])));
        assert!(dialog.choices.is_none(), "another dialog's answer");
        dialog.prepared(
            1,
            Ok(Offer::Ports(vec![choice(8080, 8080), choice(9090, 40000)])),
        );
        assert_eq!(dialog.local, "8080");
        dialog.handle_key(&Action::Down);
        assert_eq!((dialog.selected, dialog.local.as_str()), (1, "40000"));
        dialog.handle_key(&Action::Down);
        assert_eq!(dialog.selected, 1);
        for c in ['9', '1', '9', '1', '7', '7'] {
            dialog.handle_key(&Action::ConfirmChar(c));
        }
        assert_eq!(dialog.local, "91917");
        assert_eq!(
            dialog.chosen().map(|(c, l)| (c.port, l)),
            None,
            "91917 is no port"
        );
        dialog.handle_key(&Action::ConfirmBackspace);
        dialog.handle_key(&Action::ConfirmBackspace);
        assert_eq!(dialog.chosen().map(|(c, l)| (c.port, l)), Some((9090, 919)));
        assert_eq!(
            dialog.handle_key(&Action::ChooseValue),
            Some(Effect::StartForward)
        );
        dialog.handle_key(&Action::Up);
        assert_eq!(dialog.local, "8080");
        assert_eq!(dialog.handle_key(&Action::ConfirmNo), Some(Effect::Close));
    }

    /// The annotated default container's ports come first, so the dialog offers them.
    #[test]
    fn the_default_containers_ports_are_offered_first() {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web", "namespace": "shop", "annotations": {
                "kubectl.kubernetes.io/default-container": "console"}},
            "spec": {"containers": [
                {"name": "app", "ports": [{"containerPort": 8080}, {"containerPort": 9090}]},
                {"name": "console", "ports": [{"containerPort": 7000}]},
            ]},
        }))
        .unwrap();
        let offered: Vec<(String, u16)> = pod_ports(&pod)
            .into_iter()
            .map(|c| (c.container, c.port))
            .collect();
        assert_eq!(
            offered,
            [
                ("console".to_string(), 7000),
                ("app".to_string(), 8080),
                ("app".to_string(), 9090)
            ]
        );
    }

    /// A container's own row offers only its ports, labelled with it; one that declares
    /// none offers a port to type, which is the local port too; a container the pod does
    /// not have says so.
    #[test]
    fn a_container_offers_its_own_ports_or_a_typed_one() {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web", "namespace": "shop", "uid": "u1"},
            "spec": {"containers": [
                {"name": "app", "ports": [{"containerPort": 8080, "name": "http"}]},
                {"name": "proxy", "ports": [{"containerPort": 15000}, {"containerPort": 15001}]},
                {"name": "console"},
            ]},
        }))
        .unwrap();
        let Ok(Offer::Ports(proxy)) = container_ports(&pod, "proxy") else {
            panic!("proxy declares ports");
        };
        let offered: Vec<(&str, u16, bool)> = proxy
            .iter()
            .map(|c| (c.container.as_str(), c.port, c.of_container))
            .collect();
        assert_eq!(offered, [("proxy", 15000, true), ("proxy", 15001, true)]);
        assert_eq!(
            container_ports(&pod, "sidecar"),
            Err("pod web has no container sidecar".into())
        );

        let typed = container_ports(&pod, "console").unwrap();
        let mut dialog = ForwardDialog {
            id: 1,
            ..ForwardDialog::default()
        };
        dialog.prepared(1, Ok(typed));
        assert_eq!(dialog.chosen(), None, "no port typed yet");
        dialog.handle_key(&Action::Down);
        for c in ['8', '0', '8', '0'] {
            dialog.handle_key(&Action::ConfirmChar(c));
        }
        let (chosen, local) = dialog.chosen().expect("a port typed");
        assert_eq!(
            (
                chosen.container.as_str(),
                chosen.port,
                chosen.uid.as_deref(),
                local
            ),
            ("console", 8080, Some("u1"), 8080)
        );
        assert!(
            !dialog.typed(),
            "a taken local port gives way to a free one"
        );
        assert_eq!(
            dialog.handle_key(&Action::ChooseValue),
            Some(Effect::StartForward)
        );
    }

    /// After `:ctx` a running forward keeps its context, and says so in its row; new ones
    /// are the new context's.
    #[tokio::test]
    async fn a_forward_keeps_its_context_after_a_switch() {
        let client = || {
            let config = kube::Config::new("http://127.0.0.1:9".parse().unwrap());
            kube::Client::try_from(config).unwrap()
        };
        let mut forwards = ForwardController::new(client(), "first".into());
        forwards.start(choice(8080, 0), 0).unwrap();
        assert_eq!(forwards.set_client(client(), "second".into()), 1);
        forwards.start(choice(8080, 0), 0).unwrap();
        let contexts: Vec<String> = forwards.rows().into_iter().map(|r| r.context).collect();
        assert_eq!(contexts, ["first", "second"]);
        assert_eq!(forwards.set_client(client(), "first".into()), 1);
    }

    /// A port taken on 127.0.0.1 is not offered as the local one.
    #[test]
    fn a_taken_local_port_is_replaced_by_a_free_one() {
        let taken = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = taken.local_addr().unwrap().port();
        assert_ne!(free_port(port), port);
        drop(taken);
        assert_eq!(free_port(port), port);
    }
}
