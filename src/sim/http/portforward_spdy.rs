//! `pods/NAME/portforward` over SPDY/3.1, as kubectl 1.32 speaks it: first tunnelled in a
//! WebSocket (subprotocol `SPDY/3.1+portforward.k8s.io`, the apiserver's PortForwardWebsockets
//! path), else a plain `Upgrade: SPDY/3.1` with `X-Stream-Protocol-Version: portforward.k8s.io`.
//! Either way the bytes are SPDY frames, and each local connection kubectl accepts opens a
//! pair of streams sharing a `requestid` header: an error stream (kubectl only reads it) and a
//! data stream carrying the connection's bytes both ways, both naming the pod's `port`. The
//! pairing and the messages follow the kubelet's httpstream handler, its wait for a pair's
//! second stream ([`PodPorts::stream_creation_timeout`]) included.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
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

/// The connection's writer is gone: nothing more can be said, the session ends.
type Sent = Result<(), mpsc::error::SendError<Frame>>;

/// One SPDY connection: reads frames, answers streams, pairs them and forwards each pair.
/// When it ends, the pods' connections close and a GOAWAY says why.
async fn session<T>(io: T, ports: PodPorts)
where
    T: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let Ok(codec) = Codec::new() else {
        return;
    };
    let (sink, mut frames) = Framed::new(io, codec).split();
    let (out, queued) = mpsc::channel::<Frame>(QUEUE);
    let writer = tokio::spawn(write_frames(sink, queued));
    let mut state = Session::new(ports, out);
    let status = state.run(&mut frames).await;
    let (out, last_stream) = state.finish();
    let last = Frame::GoAway {
        last_good_stream_id: last_stream,
        status,
    };
    let _ = out.send(last).await;
    drop(out);
    let _ = writer.await;
}

/// The connection's one writer: every task's frames go through it, and a burst of them
/// goes out with one flush, not one per frame.
async fn write_frames<S>(mut sink: S, mut queued: mpsc::Receiver<Frame>)
where
    S: futures::Sink<Frame> + Unpin,
{
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
}

/// What one session knows of its streams: the pairs still waiting for their second stream,
/// each data stream's way to its pod, and the ids used.
struct Session {
    ports: PodPorts,
    /// To the connection's writer.
    out: mpsc::Sender<Frame>,
    pairs: HashMap<String, Pair>,
    to_pod: HashMap<u32, ToPod>,
    deadlines: FuturesUnordered<Deadline>,
    serials: u64,
    /// This connection's number, for the timeout's message.
    conn: u64,
    last_stream: u32,
}

impl Session {
    fn new(ports: PodPorts, out: mpsc::Sender<Frame>) -> Self {
        Self {
            ports,
            out,
            pairs: HashMap::new(),
            to_pod: HashMap::new(),
            deadlines: FuturesUnordered::new(),
            serials: 0,
            conn: CONNECTIONS.fetch_add(1, Ordering::Relaxed),
            last_stream: 0,
        }
    }

    /// Ends the session's part: the ways to the pods close (and with them the pods'
    /// connections, and then the forwards, which hold the other senders to the writer).
    /// Returns the sender for the GOAWAY and the last stream id taken.
    fn finish(self) -> (mpsc::Sender<Frame>, u32) {
        let Self {
            out, last_stream, ..
        } = self;
        (out, last_stream)
    }

    /// Takes frames and deadlines until the client goes, the sim stops, the writer fails or
    /// the bytes are not SPDY/3.1; returns the GOAWAY status that says which.
    async fn run<F>(&mut self, frames: &mut F) -> u32
    where
        F: futures::Stream<Item = Result<Frame, crate::spdy::FrameError>> + Unpin,
    {
        loop {
            let wake = tokio::select! {
                () = self.ports.shutdown.cancelled() => Wake::Shutdown,
                frame = frames.next() => Wake::Frame(frame),
                Some((request_id, serial)) = self.deadlines.next() => {
                    Wake::Expired(request_id, serial)
                }
            };
            let sent = match wake {
                Wake::Shutdown | Wake::Frame(None) => return goaway::OK,
                Wake::Frame(Some(Err(e))) => {
                    tracing::debug!(error = %e, "port-forward: not SPDY/3.1");
                    return goaway::PROTOCOL_ERROR;
                }
                Wake::Frame(Some(Ok(Frame::GoAway { .. }))) => return goaway::OK,
                Wake::Frame(Some(Ok(frame))) => self.frame(frame).await,
                Wake::Expired(request_id, serial) => self.expired(request_id, serial).await,
            };
            if sent.is_err() {
                return goaway::OK;
            }
        }
    }

    /// One frame from the client.
    async fn frame(&mut self, frame: Frame) -> Sent {
        match frame {
            Frame::SynStream {
                stream_id, headers, ..
            } => self.syn_stream(stream_id, &headers).await,
            Frame::Data {
                stream_id,
                fin,
                data,
            } => {
                self.data(stream_id, fin, data).await;
                Ok(())
            }
            Frame::RstStream { stream_id, .. } => {
                // Dropping the way to the pod half-closes its connection; the pod's answer
                // then ends and the forward closes both streams.
                self.to_pod.remove(&stream_id);
                Ok(())
            }
            // Pings the client starts are odd; the sim starts none, so echo every one.
            Frame::Ping { id } if id % 2 == 1 => self.out.send(Frame::Ping { id }).await,
            Frame::Ping { .. }
            | Frame::GoAway { .. }
            | Frame::SynReply { .. }
            | Frame::Headers { .. }
            | Frame::Settings { .. }
            | Frame::WindowUpdate { .. }
            | Frame::Unknown { .. } => Ok(()),
        }
    }

    /// A new stream: reset if its id or headers are refused, else answered and paired.
    async fn syn_stream(&mut self, stream_id: u32, headers: &Headers) -> Sent {
        // Client streams are odd and rising; anything else is not a new stream.
        if stream_id.is_multiple_of(2) || stream_id <= self.last_stream {
            let status = rst::PROTOCOL_ERROR;
            return self.out.send(Frame::RstStream { stream_id, status }).await;
        }
        self.last_stream = stream_id;
        let Some(stream) = StreamHeaders::read(stream_id, headers) else {
            // The kubelet resets a stream whose headers it refuses.
            let status = rst::CANCEL;
            return self.out.send(Frame::RstStream { stream_id, status }).await;
        };
        let reply = Frame::SynReply {
            stream_id,
            fin: false,
            headers: Headers::default(),
        };
        self.out.send(reply).await?;
        self.pair(stream_id, stream).await;
        Ok(())
    }

    /// Puts the stream in its request's pair, the pair made (and its deadline set) by its
    /// first stream; a complete pair is forwarded and forgotten, so a later stream of the
    /// same request id starts another, as in the kubelet.
    async fn pair(&mut self, stream_id: u32, stream: StreamHeaders) {
        let pair = match self.pairs.entry(stream.request_id.clone()) {
            Entry::Occupied(pair) => pair.into_mut(),
            Entry::Vacant(vacant) => {
                self.serials += 1;
                let (request_id, serial) = (stream.request_id.clone(), self.serials);
                let wait = self.ports.stream_creation_timeout;
                self.deadlines.push(Box::pin(async move {
                    tokio::time::sleep(wait).await;
                    (request_id, serial)
                }));
                vacant.insert(Pair {
                    serial,
                    ..Pair::default()
                })
            }
        };
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
                let _ = self
                    .out
                    .send(data_frame(error, message.into(), false))
                    .await;
            }
            return;
        }
        *slot = Some(stream_id);
        if stream.data {
            self.to_pod
                .insert(stream_id, ToPod::Waiting(Vec::new(), false));
        }
        if let (Some(error), Some(data)) = (pair.error, pair.data) {
            self.pairs.remove(&stream.request_id);
            self.forward(Streams {
                error,
                data,
                port: stream.port,
            });
        }
    }

    /// A complete pair: what its data stream brought so far goes to the pod first, then
    /// the rest as it comes, on a task of its own.
    fn forward(&mut self, ids: Streams) {
        let (tx, rx) = mpsc::channel(QUEUE);
        if let Some(ToPod::Waiting(waiting, fin)) =
            self.to_pod.insert(ids.data, ToPod::Open(tx.clone()))
        {
            for chunk in waiting {
                let _ = tx.try_send(chunk);
            }
            if fin {
                self.to_pod.insert(ids.data, ToPod::Closed);
            }
        }
        tokio::spawn(forward(ids, rx, self.out.clone(), &self.ports));
    }

    /// Bytes from the client on a stream: to the pod's connection, or kept until the
    /// stream's pair is complete; a stream that is no data stream of a pair drops them.
    async fn data(&mut self, stream_id: u32, fin: bool, data: Bytes) {
        match self.to_pod.get_mut(&stream_id) {
            Some(ToPod::Open(tx)) => {
                let gone = !data.is_empty() && tx.send(data).await.is_err();
                if gone || fin {
                    self.to_pod.insert(stream_id, ToPod::Closed);
                }
            }
            Some(ToPod::Waiting(waiting, ended)) => {
                if !data.is_empty() && waiting.len() < QUEUE {
                    waiting.push(data);
                }
                *ended |= fin;
            }
            Some(ToPod::Closed) | None => {}
        }
    }

    /// A pair's deadline: if it still waits for a stream, it is forgotten (a stream of its
    /// request id later starts another) and its error stream, if it came, says why, as the
    /// kubelet's does. The kubelet leaves the streams open; so does the sim.
    async fn expired(&mut self, request_id: String, serial: u64) -> Sent {
        let pair = match self.pairs.entry(request_id) {
            Entry::Occupied(pair) if pair.get().serial == serial => pair,
            _ => return Ok(()),
        };
        let (request_id, pair) = pair.remove_entry();
        if let Some(data) = pair.data {
            self.to_pod.insert(data, ToPod::Closed);
        }
        let Some(error) = pair.error else {
            return Ok(());
        };
        let message = format!(
            "(conn=0x{:x}, request={request_id}) timed out waiting for streams",
            self.conn
        );
        self.out
            .send(data_frame(error, message.into(), false))
            .await
    }
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
