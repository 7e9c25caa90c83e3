//! `pods/NAME/portforward` over SPDY/3.1, as kubectl 1.32 speaks it: first tunnelled in a
//! WebSocket (subprotocol `SPDY/3.1+portforward.k8s.io`, the apiserver's PortForwardWebsockets
//! path), else a plain `Upgrade: SPDY/3.1` with `X-Stream-Protocol-Version: portforward.k8s.io`.
//! Either way the bytes are SPDY frames, and each local connection kubectl accepts opens a
//! pair of streams sharing a `requestid` header: an error stream (kubectl only reads it) and a
//! data stream carrying the connection's bytes both ways, both naming the pod's `port`. The
//! pairing and the messages follow the kubelet's httpstream handler, its wait for a pair's
//! second stream ([`PodPorts::stream_creation_timeout`]) included.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use futures::stream::FuturesUnordered;
use futures::{SinkExt, StreamExt};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_util::codec::Framed;

use super::exec::{Upgrade, accept_key, close_normally, websocket_requested};
use super::pod_ports::{CHUNK, PodPorts, dial, refused};
use super::status::ApiError;
use crate::spdy::{Codec, Frame, Headers, goaway, rst};

/// The port-forward protocol inside SPDY, the only one the kubelet serves.
const PROTOCOL: &str = "portforward.k8s.io";
/// The WebSocket subprotocol that tunnels it.
const TUNNEL: &str = "SPDY/3.1+portforward.k8s.io";
const UPGRADE_SPDY: &str = "SPDY/3.1";
const PROTOCOL_VERSION: &str = "X-Stream-Protocol-Version";
/// Frames queued for the connection's writer before their senders wait.
const QUEUE: usize = 64;
/// Numbers the sessions, for the timeout's message: the kubelet names the connection there
/// by its Go value, which no client reads.
static CONNECTIONS: AtomicU64 = AtomicU64::new(1);

/// How the client carries SPDY.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Transport {
    /// Binary WebSocket messages whose payloads, end to end, are the SPDY byte stream.
    Tunnel,
    /// The upgraded HTTP/1.1 connection itself.
    Upgrade,
}

/// Whether the request asks for SPDY, and how; `None` leaves it to the WebSocket v4 path.
pub(super) fn requested(headers: &HeaderMap) -> Option<Transport> {
    if websocket_requested(headers) {
        let tunnel = headers
            .get_all(header::SEC_WEBSOCKET_PROTOCOL)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|p| p.trim() == TUNNEL);
        return tunnel.then_some(Transport::Tunnel);
    }
    headers
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case(UPGRADE_SPDY))
        .then_some(Transport::Upgrade)
}

/// Answers 101 in the transport's terms and runs the SPDY session on the upgraded connection.
pub(super) fn serve(
    ports: PodPorts,
    transport: Transport,
    headers: &HeaderMap,
    upgrade: Upgrade,
) -> Result<Response, ApiError> {
    let response = match transport {
        Transport::Tunnel => {
            let Some(accept) = accept_key(headers) else {
                return Err(ApiError::bad_request("Upgrade request required"));
            };
            Response::builder()
                .status(StatusCode::SWITCHING_PROTOCOLS)
                .header(header::UPGRADE, "websocket")
                .header(header::CONNECTION, "Upgrade")
                .header(header::SEC_WEBSOCKET_ACCEPT, accept)
                .header(header::SEC_WEBSOCKET_PROTOCOL, TUNNEL)
        }
        Transport::Upgrade => {
            let offered: Vec<&str> = headers
                .get_all(PROTOCOL_VERSION)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .map(str::trim)
                .collect();
            if !offered.contains(&PROTOCOL) {
                return Ok(not_negotiated(&offered));
            }
            Response::builder()
                .status(StatusCode::SWITCHING_PROTOCOLS)
                .header(header::UPGRADE, UPGRADE_SPDY)
                .header(header::CONNECTION, "Upgrade")
                .header(PROTOCOL_VERSION, PROTOCOL)
        }
    };
    let Some(on_upgrade) = upgrade.0 else {
        return Err(ApiError::bad_request("Upgrade request required"));
    };
    tokio::spawn(async move {
        let Ok(upgraded) = on_upgrade.await else {
            return;
        };
        let io = TokioIo::new(upgraded);
        match transport {
            Transport::Upgrade => session(io, ports).await,
            Transport::Tunnel => {
                let ws = WebSocketStream::from_raw_socket(io, Role::Server, None).await;
                let (near, far) = tokio::io::duplex(CHUNK * 2);
                tokio::join!(tunnel(ws, far), session(near, ports));
            }
        }
    });
    response
        .body(Body::empty())
        .map_err(|e| ApiError::internal(&e.to_string()))
}

/// The kubelet's refusal when the client offers no protocol it serves (httpstream.Handshake),
/// plain text as the kubelet writes it.
fn not_negotiated(offered: &[&str]) -> Response {
    let message = if offered.is_empty() {
        format!("unable to upgrade: {PROTOCOL_VERSION} is required")
    } else {
        format!(
            "unable to upgrade: unable to negotiate protocol: client supports [{}], server supports [{PROTOCOL}]",
            offered.join(" ")
        )
    };
    let mut response = Response::new(Body::from(format!("{message}\n")));
    *response.status_mut() = StatusCode::FORBIDDEN;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        "X-Accepted-Stream-Protocol-Versions",
        header::HeaderValue::from_static(PROTOCOL),
    );
    response
}

/// Moves bytes between the WebSocket's binary messages and `far`, the other end of the
/// session's byte stream, until either side ends.
async fn tunnel<S, T>(ws: WebSocketStream<S>, far: T)
where
    S: AsyncRead + AsyncWrite + Unpin,
    T: AsyncRead + AsyncWrite + Unpin,
{
    let (mut sink, mut incoming) = ws.split();
    let (mut from_session, mut to_session) = tokio::io::split(far);
    let mut buf = vec![0u8; CHUNK];
    loop {
        tokio::select! {
            message = incoming.next() => match message {
                Some(Ok(Message::Binary(data))) => {
                    if to_session.write_all(&data).await.is_err() {
                        break;
                    }
                }
                Some(Ok(Message::Close(_)) | Err(_)) | None => break,
                Some(Ok(_)) => {}
            },
            read = from_session.read(&mut buf) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let data = Bytes::copy_from_slice(&buf[..n]);
                    if sink.send(Message::Binary(data)).await.is_err() {
                        break;
                    }
                }
            },
        }
    }
    let _ = to_session.shutdown().await;
    close_normally(&mut sink).await;
}

/// One port-forward request: its two streams as they arrive.
#[derive(Default)]
struct Pair {
    error: Option<u32>,
    data: Option<u32>,
    /// Tells this pair from a later one of the same request id, whose deadline is its own.
    serial: u64,
}

/// When a pair (request id, serial) stops waiting for its second stream.
type Deadline = Pin<Box<dyn std::future::Future<Output = (String, u64)> + Send>>;

/// What the session's loop wakes for.
enum Wake {
    Frame(Option<Result<Frame, crate::spdy::FrameError>>),
    /// A pair's deadline passed.
    Expired(String, u64),
    Shutdown,
}

/// A data stream's way to the pod's port, once its pair is complete; until then what the
/// client sends waits here.
enum ToPod {
    Waiting(Vec<Bytes>, bool),
    Open(mpsc::Sender<Bytes>),
    Closed,
}

/// One SPDY connection: reads frames, answers streams, pairs them and forwards each pair.
async fn session<T>(io: T, ports: PodPorts)
where
    T: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let Ok(codec) = Codec::new() else {
        return;
    };
    let (mut sink, mut frames) = Framed::new(io, codec).split();
    let (out, mut queued) = mpsc::channel::<Frame>(QUEUE);
    let writer = tokio::spawn(async move {
        while let Some(frame) = queued.recv().await {
            if sink.feed(frame).await.is_err() {
                return;
            }
            while let Ok(more) = queued.try_recv() {
                if sink.feed(more).await.is_err() {
                    return;
                }
            }
            if sink.flush().await.is_err() {
                return;
            }
        }
        let _ = sink.close().await;
    });
    let mut pairs: HashMap<String, Pair> = HashMap::new();
    let mut to_pod: HashMap<u32, ToPod> = HashMap::new();
    let mut deadlines: FuturesUnordered<Deadline> = FuturesUnordered::new();
    let mut serials = 0;
    let conn = CONNECTIONS.fetch_add(1, Ordering::Relaxed);
    let mut last_stream = 0;
    let mut status = goaway::OK;
    loop {
        let wake = tokio::select! {
            () = ports.shutdown.cancelled() => Wake::Shutdown,
            frame = frames.next() => Wake::Frame(frame),
            Some((request_id, serial)) = deadlines.next() => Wake::Expired(request_id, serial),
        };
        let frame = match wake {
            Wake::Shutdown => break,
            Wake::Expired(request_id, serial) => {
                // As the kubelet: the pair is forgotten (a stream of its request id later
                // starts another), and its error stream, if it came, says why.
                if pairs.get(&request_id).is_some_and(|p| p.serial == serial)
                    && let Some(pair) = pairs.remove(&request_id)
                {
                    if let Some(data) = pair.data {
                        to_pod.insert(data, ToPod::Closed);
                    }
                    if let Some(error) = pair.error {
                        let message = format!(
                            "(conn=0x{conn:x}, request={request_id}) timed out waiting for streams"
                        );
                        if out
                            .send(data_frame(error, message.into(), false))
                            .await
                            .is_err()
                        {
                            break;
                        }
                    }
                }
                continue;
            }
            Wake::Frame(frame) => frame,
        };
        let frame = match frame {
            Some(Ok(frame)) => frame,
            Some(Err(e)) => {
                tracing::debug!(error = %e, "port-forward: not SPDY/3.1");
                status = goaway::PROTOCOL_ERROR;
                break;
            }
            None => break,
        };
        match frame {
            Frame::SynStream {
                stream_id, headers, ..
            } => {
                // Client streams are odd and rising; anything else is not a new stream.
                if stream_id % 2 == 0 || stream_id <= last_stream {
                    let reset = Frame::RstStream {
                        stream_id,
                        status: rst::PROTOCOL_ERROR,
                    };
                    if out.send(reset).await.is_err() {
                        break;
                    }
                    continue;
                }
                last_stream = stream_id;
                let Some(stream) = StreamHeaders::read(stream_id, &headers) else {
                    // The kubelet resets a stream whose headers it refuses.
                    let reset = Frame::RstStream {
                        stream_id,
                        status: rst::CANCEL,
                    };
                    if out.send(reset).await.is_err() {
                        break;
                    }
                    continue;
                };
                let reply = Frame::SynReply {
                    stream_id,
                    fin: false,
                    headers: Headers::default(),
                };
                if out.send(reply).await.is_err() {
                    break;
                }
                let pair = pairs.entry(stream.request_id.clone()).or_insert_with(|| {
                    serials += 1;
                    let (request_id, serial) = (stream.request_id.clone(), serials);
                    let wait = ports.stream_creation_timeout;
                    deadlines.push(Box::pin(async move {
                        tokio::time::sleep(wait).await;
                        (request_id, serial)
                    }));
                    Pair {
                        serial,
                        ..Pair::default()
                    }
                });
                let slot = if stream.data {
                    &mut pair.data
                } else {
                    &mut pair.error
                };
                if slot.is_some() {
                    let kind = if stream.data { "data" } else { "error" };
                    let message = format!(
                        "error processing stream for request {}: {kind} stream already assigned",
                        stream.request_id
                    );
                    if let Some(error) = pair.error {
                        let _ = out.send(data_frame(error, message.into(), false)).await;
                    }
                    continue;
                }
                *slot = Some(stream_id);
                if stream.data {
                    to_pod.insert(stream_id, ToPod::Waiting(Vec::new(), false));
                }
                if let (Some(error), Some(data)) = (pair.error, pair.data) {
                    pairs.remove(&stream.request_id);
                    let (tx, rx) = mpsc::channel(QUEUE);
                    if let Some(ToPod::Waiting(waiting, fin)) =
                        to_pod.insert(data, ToPod::Open(tx.clone()))
                    {
                        for chunk in waiting {
                            let _ = tx.try_send(chunk);
                        }
                        if fin {
                            to_pod.insert(data, ToPod::Closed);
                        }
                    }
                    let streams = Streams {
                        error,
                        data,
                        port: stream.port,
                    };
                    tokio::spawn(forward(streams, rx, out.clone(), &ports));
                }
            }
            Frame::Data {
                stream_id,
                fin,
                data,
            } => match to_pod.get_mut(&stream_id) {
                Some(ToPod::Open(tx)) => {
                    let gone = !data.is_empty() && tx.send(data).await.is_err();
                    if gone || fin {
                        to_pod.insert(stream_id, ToPod::Closed);
                    }
                }
                Some(ToPod::Waiting(waiting, ended)) => {
                    if !data.is_empty() && waiting.len() < QUEUE {
                        waiting.push(data);
                    }
                    *ended |= fin;
                }
                Some(ToPod::Closed) | None => {}
            },
            Frame::RstStream { stream_id, .. } => {
                // Dropping the way to the pod half-closes its connection; the pod's answer
                // then ends and the forward closes both streams.
                to_pod.remove(&stream_id);
            }
            Frame::Ping { id } => {
                // Pings the client starts are odd; the sim starts none, so echo every one.
                if id % 2 == 1 && out.send(Frame::Ping { id }).await.is_err() {
                    break;
                }
            }
            Frame::GoAway { .. } => break,
            Frame::SynReply { .. }
            | Frame::Headers { .. }
            | Frame::Settings { .. }
            | Frame::WindowUpdate { .. }
            | Frame::Unknown { .. } => {}
        }
    }
    // The pods' connections end as their ways in close; the writer ends with the last sender.
    drop(to_pod);
    let last = Frame::GoAway {
        last_good_stream_id: last_stream,
        status,
    };
    let _ = out.send(last).await;
    drop(out);
    let _ = writer.await;
}

/// The headers kubectl puts on each stream of a pair.
struct StreamHeaders {
    port: u16,
    data: bool,
    request_id: String,
}

impl StreamHeaders {
    /// As the kubelet checks them: a port 1-65535 and a known stream type. A missing
    /// `requestid` (clients before 1.6) is made from the stream id, as the kubelet does.
    fn read(stream_id: u32, headers: &Headers) -> Option<Self> {
        let port = headers
            .get("port")
            .and_then(|p| p.parse::<u16>().ok())
            .filter(|p| *p > 0)?;
        let data = match headers.get("streamtype")? {
            "data" => true,
            "error" => false,
            _ => return None,
        };
        let request_id = match headers.get("requestid").filter(|r| !r.is_empty()) {
            Some(id) => id.to_string(),
            None if data => stream_id.saturating_sub(2).to_string(),
            None => stream_id.to_string(),
        };
        Some(Self {
            port,
            data,
            request_id,
        })
    }
}

/// The stream ids of one complete pair and the port they name.
struct Streams {
    error: u32,
    data: u32,
    port: u16,
}

fn data_frame(stream_id: u32, data: Bytes, fin: bool) -> Frame {
    Frame::Data {
        stream_id,
        fin,
        data,
    }
}

/// One forwarded connection: the pod's answer on the data stream until its server closes,
/// then both streams closed; a port nothing listens on gets the kubelet's error instead.
fn forward(
    streams: Streams,
    mut from_client: mpsc::Receiver<Bytes>,
    out: mpsc::Sender<Frame>,
    ports: &PodPorts,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    let listening = ports.declared.contains(&streams.port);
    let message = refused(streams.port, &ports.uid);
    let pod = ports.pod.clone();
    async move {
        let Streams {
            error,
            data: id,
            port,
        } = streams;
        if !listening {
            let _ = out.send(data_frame(error, message.into(), false)).await;
        } else {
            let (mut reader, mut writer) = tokio::io::split(dial(&pod, port));
            tokio::spawn(async move {
                while let Some(chunk) = from_client.recv().await {
                    if writer.write_all(&chunk).await.is_err() {
                        break;
                    }
                }
                let _ = writer.shutdown().await;
            });
            let mut buf = vec![0u8; CHUNK];
            loop {
                let n = match reader.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                let chunk = Bytes::copy_from_slice(&buf[..n]);
                if out.send(data_frame(id, chunk, false)).await.is_err() {
                    return;
                }
            }
        }
        let _ = out.send(data_frame(id, Bytes::new(), true)).await;
        let _ = out.send(data_frame(error, Bytes::new(), true)).await;
    }
}

#[cfg(test)]
mod tests;
