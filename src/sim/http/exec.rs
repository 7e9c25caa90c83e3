//! `pods/NAME/exec` and `pods/NAME/attach` over WebSockets, as kubectl 1.30+ and kube's
//! `ws` feature speak them: subprotocols `v5.channel.k8s.io` and `v4.channel.k8s.io`, each
//! binary message's first byte its channel (0 stdin, 1 stdout, 2 stderr, 3 the exit status as
//! a Status object, 4 terminal resizes, and in v5 255 to close a stream). Behind them runs the
//! sim's small shell ([`crate::shell`]) in the container, or for an attach to a container
//! that takes no stdin, its output as its log writes it.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{FromRequestParts, Query};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::Response;
use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role};

use super::logs::{self, Follow};
use super::status::ApiError;
use super::target::Target;
use crate::Shared;
use crate::resources::Resource;
use crate::shell::{self, Fs, Io, Output, Seed, Shell};

const STDIN: u8 = 0;
const STDOUT: u8 = 1;
const STDERR: u8 = 2;
const STATUS: u8 = 3;
/// Terminal size changes, `{"Width":W,"Height":H}`; the sim's shell has no use for them.
const RESIZE: u8 = 4;
/// v5: the client closes one of its streams (the byte after it), so far only stdin.
const CLOSE: u8 = 255;

/// How long a finished session waits for the client to answer its close.
const CLOSE_ANSWER: std::time::Duration = std::time::Duration::from_secs(5);

/// The subprotocols served, in the order of preference when a client offers both.
const PROTOCOLS: [&str; 2] = ["v5.channel.k8s.io", "v4.channel.k8s.io"];

/// The connection's upgrade, which hyper leaves in the request for whoever answers 101.
pub(super) struct Upgrade(pub(super) Option<OnUpgrade>);

impl<S: Sync> FromRequestParts<S> for Upgrade {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        Ok(Self(parts.extensions.remove::<OnUpgrade>()))
    }
}

/// Which subresource was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Exec,
    Attach,
}

/// What runs behind the streams.
enum Program {
    /// A command (exec), or the shell a container started with stdin (attach).
    Shell {
        container: shell::Container,
        argv: Vec<String>,
    },
    /// The output of a container that takes no stdin (attach).
    Output(Box<Follow>),
}

/// What the client asked for in the query.
struct Options {
    container: Option<String>,
    command: Vec<String>,
    stdin: bool,
    stdout: bool,
    stderr: bool,
    tty: bool,
}

impl Options {
    fn parse(uri: &Uri) -> Result<Self, ApiError> {
        let pairs = Query::<Vec<(String, String)>>::try_from_uri(uri)
            .map_err(|e| ApiError::bad_request(format!("invalid query: {e}")))?
            .0;
        let flag = |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .is_some_and(|(_, v)| matches!(v.as_str(), "true" | "1" | "True" | "TRUE" | "t"))
        };
        Ok(Self {
            container: pairs
                .iter()
                .find(|(k, v)| k == "container" && !v.is_empty())
                .map(|(_, v)| v.clone()),
            command: pairs
                .iter()
                .filter(|(k, _)| k == "command")
                .map(|(_, v)| v.clone())
                .collect(),
            stdin: flag("stdin"),
            stdout: flag("stdout"),
            stderr: flag("stderr"),
            tty: flag("tty"),
        })
    }
}

/// Answers an exec or attach: the real server's refusals, or 101 and the session.
pub(super) fn serve(
    shared: Arc<Shared>,
    target: &Target,
    kind: Kind,
    uri: &Uri,
    headers: &HeaderMap,
    upgrade: Upgrade,
) -> Result<Response, ApiError> {
    let options = Options::parse(uri)?;
    let name = target.name.as_deref().unwrap_or("");
    let key = target.key(name);
    let stored = shared
        .store
        .get(Resource::Pods, &key)
        .ok_or_else(|| ApiError::not_found(Resource::Pods, name))?;
    let pod = stored
        .decode()
        .map_err(|e| ApiError::internal(&e.to_string()))?;
    let container = logs::chosen_container(&pod, options.container.as_deref())?;
    if pod["spec"]["nodeName"].as_str().is_none_or(str::is_empty) {
        return Err(ApiError::bad_request(format!(
            "pod {name} does not have a host assigned"
        )));
    }
    if !(options.stdin || options.stdout || options.stderr) {
        return Err(ApiError::bad_request(
            "you must specify at least 1 of stdin, stdout, stderr",
        ));
    }
    if kind == Kind::Exec && options.command.is_empty() {
        return Err(ApiError::bad_request("you must specify at least 1 command"));
    }
    let spec = pod["spec"]["containers"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == container.as_str()));
    let status = pod["status"]["containerStatuses"]
        .as_array()
        .and_then(|ss| ss.iter().find(|s| s["name"] == container.as_str()));
    let (Some(spec), Some(status)) = (spec, status.filter(|s| s["state"]["running"].is_object()))
    else {
        // What the kubelet answers for a container it does not run (waiting, ended, init).
        return Err(ApiError::bad_request(format!(
            "container not found (\"{container}\")"
        )));
    };
    let protocol = negotiate(headers)?;
    let Some(on_upgrade) = upgrade.0 else {
        return Err(ApiError::bad_request("Upgrade request required"));
    };
    let program =
        match kind {
            Kind::Attach if spec["stdin"] != true => Program::Output(Box::new(
                logs::attached_output(shared.clone(), key, stored.clone(), &pod, &container)?,
            )),
            Kind::Attach => Program::Shell {
                container: in_container(&shared, &pod, spec, status, options.tty),
                argv: vec!["sh".to_string()],
            },
            Kind::Exec => Program::Shell {
                container: in_container(&shared, &pod, spec, status, options.tty),
                argv: options.command.clone(),
            },
        };
    let accept =
        accept_key(headers).ok_or_else(|| ApiError::bad_request("Upgrade request required"))?;
    // What the exit status names as the command: the exec's, or the attached PID 1's.
    let described = match kind {
        Kind::Exec => options.command.clone(),
        Kind::Attach => vec![command_line(spec)],
    };
    tokio::spawn(async move {
        match on_upgrade.await {
            Ok(upgraded) => {
                let ws =
                    WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, None)
                        .await;
                session(shared, ws, protocol, options, program, described).await;
            }
            Err(e) => tracing::debug!(error = %e, "exec upgrade failed"),
        }
    });
    Response::builder()
        .status(StatusCode::SWITCHING_PROTOCOLS)
        .header(header::UPGRADE, "websocket")
        .header(header::CONNECTION, "Upgrade")
        .header(header::SEC_WEBSOCKET_ACCEPT, accept)
        .header(header::SEC_WEBSOCKET_PROTOCOL, protocol)
        .body(Body::empty())
        .map_err(|e| ApiError::internal(&e.to_string()))
}

/// Whether the request asks for a WebSocket (not, say, SPDY).
pub(super) fn websocket_requested(headers: &HeaderMap) -> bool {
    headers
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

/// `Sec-WebSocket-Accept` for the request's key.
pub(super) fn accept_key(headers: &HeaderMap) -> Option<String> {
    headers
        .get(header::SEC_WEBSOCKET_KEY)
        .map(|k| derive_accept_key(k.as_bytes()))
}

/// Closes with a code: Go's client reads a close without one (1005) as an error.
pub(super) async fn close_normally<S>(sink: &mut S)
where
    S: futures::Sink<Message> + Unpin,
{
    let normal = CloseFrame {
        code: CloseCode::Normal,
        reason: "".into(),
    };
    let _ = sink.send(Message::Close(Some(normal))).await;
}

/// The first subprotocol the client offers that is served; a WebSocket upgrade is required
/// (an SPDY one is refused, so kubectl keeps to WebSockets).
fn negotiate(headers: &HeaderMap) -> Result<&'static str, ApiError> {
    if !websocket_requested(headers) {
        return Err(ApiError::bad_request("Upgrade request required"));
    }
    headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .find_map(|offered| PROTOCOLS.into_iter().find(|p| *p == offered))
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "unable to upgrade: unable to negotiate protocol: client supports {:?}, server supports {PROTOCOLS:?}",
                headers
                    .get(header::SEC_WEBSOCKET_PROTOCOL)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
            ))
        })
}

/// PID 1's command line: the spec's command and args, or the image's name.
fn command_line(spec: &Value) -> String {
    let words: Vec<&str> = ["command", "args"]
        .iter()
        .flat_map(|f| spec[*f].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .collect();
    if !words.is_empty() {
        return words.join(" ");
    }
    let image = spec["image"].as_str().unwrap_or("app");
    let base = image.rsplit('/').next().unwrap_or(image);
    format!("/{}", base.split([':', '@']).next().unwrap_or(base))
}

/// The shell's view of one running container: its environment and filesystem, the latter
/// kept per run of the container so what `kubectl cp` put there stays until it restarts.
fn in_container(
    shared: &Shared,
    pod: &Value,
    spec: &Value,
    status: &Value,
    tty: bool,
) -> shell::Container {
    let name = pod["metadata"]["name"].as_str().unwrap_or("");
    let mut env = vec![
        (
            "PATH".to_string(),
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string(),
        ),
        ("HOSTNAME".to_string(), name.to_string()),
    ];
    if tty {
        env.push(("TERM".to_string(), "xterm".to_string()));
    }
    for var in spec["env"].as_array().into_iter().flatten() {
        if let (Some(k), Some(v)) = (var["name"].as_str(), var["value"].as_str()) {
            env.push((k.to_string(), v.to_string()));
        }
    }
    env.extend(
        [
            ("KUBERNETES_SERVICE_HOST", "10.96.0.1"),
            ("KUBERNETES_SERVICE_PORT", "443"),
            ("HOME", "/root"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    let uid = pod["metadata"]["uid"].as_str().unwrap_or("");
    let container = spec["name"].as_str().unwrap_or("");
    let run = status["restartCount"].as_u64().unwrap_or(0);
    let ports: Vec<u16> = spec["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["containerPort"].as_u64())
        .filter_map(|p| u16::try_from(p).ok())
        .collect();
    let labels = &pod["metadata"]["labels"];
    let app = labels["app"]
        .as_str()
        .or(labels["app.kubernetes.io/name"].as_str())
        .unwrap_or(name);
    let fs = shared
        .container_files
        .lock()
        .entry(format!("{uid}/{container}/{run}"))
        .or_insert_with(|| {
            Arc::new(Mutex::new(Fs::seeded(&Seed {
                hostname: name,
                app,
                image: spec["image"].as_str().unwrap_or(""),
                ports: &ports,
            })))
        })
        .clone();
    shell::Container {
        pod: name.to_string(),
        env,
        main: command_line(spec),
        fs,
    }
}

/// The Status an exec ends with on the status channel, as the kubelet writes it.
fn exit_status(code: i32, argv: &[String]) -> Value {
    if code == 0 {
        return json!({"metadata": {}, "status": "Success"});
    }
    json!({
        "metadata": {},
        "status": "Failure",
        "message": format!(
            "command terminated with non-zero exit code: error executing command [{}], exit code {code}",
            argv.join(" ")
        ),
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": code.to_string()}]},
    })
}

/// Runs one session: the client's stdin and resizes in, the program's output out, then the
/// exit status and a close. A client that goes away stops the program.
async fn session<S>(
    shared: Arc<Shared>,
    ws: WebSocketStream<S>,
    protocol: &'static str,
    options: Options,
    program: Program,
    described: Vec<String>,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let (mut sink, mut incoming) = ws.split();
    let (stdin_tx, stdin_rx) = mpsc::unbounded_channel::<Bytes>();
    let (out_tx, mut out_rx) = mpsc::channel::<Output>(64);
    let cancel = shared.shutdown.child_token();
    let stdin = options.stdin.then_some(stdin_rx);
    let running = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            match program {
                Program::Shell { container, argv } => {
                    let mut io = Io::new(stdin, out_tx, options.tty);
                    Shell::new(&container, &mut io, cancel).exec(&argv).await
                }
                Program::Output(mut follow) => {
                    loop {
                        let chunk = tokio::select! {
                            chunk = follow.next_chunk() => chunk,
                            () = cancel.cancelled() => None,
                        };
                        let Some(chunk) = chunk else { break };
                        if out_tx.send(Output::Stdout(chunk)).await.is_err() {
                            break;
                        }
                    }
                    0
                }
            }
        })
    };
    let mut stdin_tx = options.stdin.then_some(stdin_tx);
    let v5 = protocol == PROTOCOLS[0];
    let finished = loop {
        tokio::select! {
            message = incoming.next() => match message {
                Some(Ok(Message::Binary(data))) => match data.first() {
                    Some(&STDIN) => {
                        if let Some(tx) = &stdin_tx {
                            let _ = tx.send(data.slice(1..));
                        }
                    }
                    Some(&CLOSE) if v5 && data.get(1) == Some(&STDIN) => stdin_tx = None,
                    Some(&RESIZE) | Some(_) | None => {}
                },
                Some(Ok(Message::Close(_)) | Err(_)) | None => break false,
                Some(Ok(_)) => {}
            },
            output = out_rx.recv() => {
                let frame = match output {
                    None => break true,
                    Some(Output::Stdout(data)) if options.stdout => frame(STDOUT, &data),
                    Some(Output::Stderr(data)) if options.stderr => frame(STDERR, &data),
                    Some(_) => continue,
                };
                if sink.send(Message::Binary(frame)).await.is_err() {
                    break false;
                }
            }
        }
    };
    if !finished {
        cancel.cancel();
        running.abort();
        return;
    }
    let code = running.await.unwrap_or(1);
    let status = exit_status(code, &described).to_string();
    let _ = sink
        .send(Message::Binary(frame(STATUS, status.as_bytes())))
        .await;
    close_normally(&mut sink).await;
    // The client answers the close; its frames meanwhile (late stdin) go unread.
    let answered = async {
        while let Some(Ok(message)) = incoming.next().await {
            if message.is_close() {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(CLOSE_ANSWER, answered).await;
}

fn frame(channel: u8, data: &[u8]) -> Bytes {
    let mut framed = Vec::with_capacity(data.len() + 1);
    framed.push(channel);
    framed.extend_from_slice(data);
    Bytes::from(framed)
}
