//! The pods' simulated ports as a port-forward reaches them, whichever protocol carries the
//! bytes (the v4 WebSocket channels or SPDY): behind a port the pod's containers declare
//! answers a small HTTP server (`/healthz`, `/ready`, `/metrics`, and `/bytes/N` to measure a
//! forward's throughput); any other port is refused in the kubelet's words.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::http::{StatusCode, header};
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use hyper_util::rt::TokioIo;

/// How much one read from a port's server carries to the client at most.
pub(super) const CHUNK: usize = 32 * 1024;
/// What `/bytes/N` sends, a chunk at a time.
static ZEROS: [u8; CHUNK] = [0; CHUNK];
/// The most `/bytes/N` sends: 1 GiB.
const MAX_BYTES: u64 = 1 << 30;

/// A pod's ports as a forward reaches them, whichever protocol carries the bytes.
pub(super) struct PodPorts {
    /// The sim's: a forward ends with the sim.
    pub(super) shutdown: tokio_util::sync::CancellationToken,
    pub(super) pod: String,
    pub(super) uid: String,
    /// The ports the pod's containers declare: the only ones with a server behind them.
    pub(super) declared: Vec<u16>,
    /// How long a SPDY request waits for the second stream of its pair.
    pub(super) stream_creation_timeout: std::time::Duration,
}

/// What the kubelet (containerd) says of a port nothing listens on.
pub(super) fn refused(port: u16, uid: &str) -> String {
    format!(
        "error forwarding port {port} to pod {uid}, uid : failed to execute portforward in network namespace: failed to connect to localhost:{port} inside namespace, IPv4: dial tcp4 127.0.0.1:{port}: connect: connection refused"
    )
}

/// A new connection to the app's HTTP server on `port` of `pod`: the client's end of it.
pub(super) fn dial(pod: &str, port: u16) -> tokio::io::DuplexStream {
    let (client_end, server_end) = tokio::io::duplex(CHUNK * 2);
    let served = Arc::new(Served {
        pod: pod.to_string(),
        port,
        requests: AtomicU64::new(0),
    });
    let service = hyper::service::service_fn(move |request| {
        let served = served.clone();
        async move { Ok::<_, Infallible>(served.answer(&request)) }
    });
    // A client may send its request and close its side at once (kubectl passes that on as
    // the data stream's FIN): the app still answers, as a Go or nginx server does.
    tokio::spawn(
        hyper::server::conn::http1::Builder::new()
            .half_close(true)
            .serve_connection(TokioIo::new(server_end), service),
    );
    client_end
}

/// A port's HTTP server in a pod: what the app answers.
struct Served {
    pod: String,
    port: u16,
    requests: AtomicU64,
}

impl Served {
    fn answer<B>(
        &self,
        request: &hyper::Request<B>,
    ) -> hyper::Response<BoxBody<Bytes, Infallible>> {
        let served = self.requests.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(size) = request
            .uri()
            .path()
            .strip_prefix("/bytes/")
            .and_then(|n| n.parse::<u64>().ok())
            .filter(|n| *n <= MAX_BYTES)
        {
            return zeros(size);
        }
        let (status, content_type, body) = match request.uri().path() {
            "/healthz" | "/livez" => (
                StatusCode::OK,
                "text/plain; charset=utf-8",
                "ok\n".to_string(),
            ),
            "/ready" | "/readyz" => (
                StatusCode::OK,
                "text/plain; charset=utf-8",
                "ready\n".to_string(),
            ),
            "/metrics" => (
                StatusCode::OK,
                "text/plain; version=0.0.4; charset=utf-8",
                format!(
                    "# HELP http_requests_total Requests served on this port.\n# TYPE http_requests_total counter\nhttp_requests_total{{pod=\"{}\",port=\"{}\"}} {served}\n",
                    self.pod, self.port
                ),
            ),
            _ => (
                StatusCode::NOT_FOUND,
                "text/plain; charset=utf-8",
                "404 page not found\n".to_string(),
            ),
        };
        let mut response = hyper::Response::new(Full::new(Bytes::from(body)).boxed());
        *response.status_mut() = status;
        if let Ok(value) = header::HeaderValue::from_str(content_type) {
            response.headers_mut().insert(header::CONTENT_TYPE, value);
        }
        response
    }
}

/// `size` zero bytes, streamed a chunk at a time (as httpbin's `/bytes/N`): a download as
/// large as a throughput measurement needs, never held in memory at once.
fn zeros(size: u64) -> hyper::Response<BoxBody<Bytes, Infallible>> {
    let chunk = CHUNK as u64;
    let frames = (0..size.div_ceil(chunk)).map(move |i| {
        let len = usize::try_from((size - i * chunk).min(chunk)).unwrap_or(CHUNK);
        Ok::<_, Infallible>(Frame::data(Bytes::from_static(&ZEROS[..len])))
    });
    let mut response = hyper::Response::new(BodyExt::boxed(StreamBody::new(
        futures::stream::iter(frames),
    )));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/octet-stream"),
    );
    headers.insert(header::CONTENT_LENGTH, header::HeaderValue::from(size));
    response
}
