//! The session against a client made of the sim's own codec: what kubectl's spdystream does,
//! frame by frame, without kubectl.

use std::time::Duration;

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, DuplexStream};
use tokio::task::JoinHandle;
use tokio_util::codec::Framed;
use tokio_util::sync::CancellationToken;

use super::session;
use crate::http::pod_ports::PodPorts;
use crate::spdy::{Codec, Frame, Headers, goaway, rst};

mod pairs;

/// Only a hang reaches it.
const HANG_GUARD: Duration = Duration::from_secs(60);
/// The kubelet's wait for a pair's second stream.
const STREAM_CREATION_TIMEOUT: Duration = Duration::from_secs(30);

/// A client made of the sim's codec, on any byte stream (in memory, or an upgraded
/// connection).
struct Client<T>(Framed<T, Codec>);

/// A session for pod `web`, whose app listens on 8080, and a client connected to it.
fn start() -> (Client<DuplexStream>, JoinHandle<()>) {
    let (near, far) = tokio::io::duplex(64 * 1024);
    let ports = PodPorts {
        shutdown: CancellationToken::new(),
        pod: "web".into(),
        uid: "uid-1".into(),
        declared: vec![8080],
        stream_creation_timeout: STREAM_CREATION_TIMEOUT,
    };
    let task = tokio::spawn(session(far, ports));
    (Client(Framed::new(near, Codec::new().unwrap())), task)
}

fn stream_headers(pairs: &[(&str, &str)]) -> Headers {
    Headers(
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
    )
}

impl<T: AsyncRead + AsyncWrite + Unpin> Client<T> {
    async fn send(&mut self, frame: Frame) {
        self.0.send(frame).await.unwrap();
    }

    async fn next(&mut self) -> Frame {
        tokio::time::timeout(HANG_GUARD, self.0.next())
            .await
            .expect("a frame comes")
            .expect("the session is open")
            .unwrap()
    }

    /// Opens stream `id` as kubectl does, and takes the SYN_REPLY that must answer it.
    async fn open(&mut self, id: u32, kind: &str, port: &str, request: &str) {
        let headers =
            stream_headers(&[("streamtype", kind), ("port", port), ("requestid", request)]);
        self.send(Frame::SynStream {
            stream_id: id,
            associated_to: 0,
            priority: 0,
            flags: 0,
            headers,
        })
        .await;
        assert_eq!(
            self.next().await,
            Frame::SynReply {
                stream_id: id,
                fin: false,
                headers: Headers::default()
            }
        );
    }

    async fn data(&mut self, stream_id: u32, data: &'static [u8], fin: bool) {
        self.send(Frame::Data {
            stream_id,
            fin,
            data: Bytes::from_static(data),
        })
        .await;
    }

    /// Everything the server sends on `data` and `error` until it has closed both.
    async fn until_both_close(&mut self, data: u32, error: u32) -> (Vec<u8>, Vec<u8>) {
        let (mut on_data, mut on_error) = (Vec::new(), Vec::new());
        let (mut data_open, mut error_open) = (true, true);
        while data_open || error_open {
            match self.next().await {
                Frame::Data {
                    stream_id,
                    fin,
                    data: bytes,
                } if stream_id == data => {
                    on_data.extend_from_slice(&bytes);
                    data_open &= !fin;
                }
                Frame::Data {
                    stream_id,
                    fin,
                    data: bytes,
                } if stream_id == error => {
                    on_error.extend_from_slice(&bytes);
                    error_open &= !fin;
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        (on_data, on_error)
    }
}

#[tokio::test]
async fn a_stream_pair_carries_an_http_exchange_then_both_close() {
    let (mut client, _session) = start();
    client.open(1, "error", "8080", "0").await;
    // kubectl never writes to the error stream and says so at once.
    client.data(1, b"", true).await;
    client.open(3, "data", "8080", "0").await;
    client
        .data(3, b"GET /healthz HTTP/1.1\r\nHost: web\r\n\r\n", true)
        .await;
    let (answer, error) = client.until_both_close(3, 1).await;
    let answer = String::from_utf8(answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.ends_with("\r\n\r\nok\n"), "{answer}");
    assert!(error.is_empty());
}

#[tokio::test]
async fn two_pairs_at_once_each_reach_their_own_connection() {
    let (mut client, _session) = start();
    client.open(1, "error", "8080", "0").await;
    client.open(3, "error", "8080", "1").await;
    client.open(5, "data", "8080", "1").await;
    client.open(7, "data", "8080", "0").await;
    client
        .data(7, b"GET /ready HTTP/1.1\r\nHost: web\r\n\r\n", true)
        .await;
    client
        .data(5, b"GET /healthz HTTP/1.1\r\nHost: web\r\n\r\n", true)
        .await;
    let mut answers = std::collections::HashMap::<u32, Vec<u8>>::new();
    let mut finished = 0;
    while finished < 4 {
        let Frame::Data {
            stream_id,
            fin,
            data,
        } = client.next().await
        else {
            panic!("only data frames follow");
        };
        answers
            .entry(stream_id)
            .or_default()
            .extend_from_slice(&data);
        finished += usize::from(fin);
    }
    let text = |id| String::from_utf8_lossy(&answers[&id]).into_owned();
    assert!(text(7).ends_with("\r\n\r\nready\n"), "{}", text(7));
    assert!(text(5).ends_with("\r\n\r\nok\n"), "{}", text(5));
    assert_eq!(text(1), "");
    assert_eq!(text(3), "");
}

#[tokio::test]
async fn a_port_nothing_listens_on_gets_the_kubelets_error() {
    let (mut client, _session) = start();
    client.open(1, "error", "9999", "0").await;
    client.open(3, "data", "9999", "0").await;
    let (answer, error) = client.until_both_close(3, 1).await;
    assert!(answer.is_empty());
    let error = String::from_utf8(error).unwrap();
    assert!(
        error.starts_with("error forwarding port 9999 to pod uid-1, uid : ")
            && error.ends_with("dial tcp4 127.0.0.1:9999: connect: connection refused"),
        "{error}"
    );
}

#[tokio::test]
async fn streams_the_kubelet_refuses_are_reset() {
    let (mut client, _session) = start();
    for (id, headers) in [
        (
            1,
            stream_headers(&[("streamtype", "data"), ("requestid", "0")]),
        ),
        (3, stream_headers(&[("streamtype", "data"), ("port", "0")])),
        (
            5,
            stream_headers(&[("streamtype", "stdin"), ("port", "80")]),
        ),
    ] {
        client
            .send(Frame::SynStream {
                stream_id: id,
                associated_to: 0,
                priority: 0,
                flags: 0,
                headers,
            })
            .await;
        assert_eq!(
            client.next().await,
            Frame::RstStream {
                stream_id: id,
                status: rst::CANCEL
            }
        );
    }
    // A stream id the client may not use (even, or not rising) is a protocol error.
    for id in [8, 5] {
        client
            .send(Frame::SynStream {
                stream_id: id,
                associated_to: 0,
                priority: 0,
                flags: 0,
                headers: stream_headers(&[("streamtype", "data"), ("port", "80")]),
            })
            .await;
        assert_eq!(
            client.next().await,
            Frame::RstStream {
                stream_id: id,
                status: rst::PROTOCOL_ERROR
            }
        );
    }
}

#[tokio::test]
async fn pings_are_echoed_and_bytes_that_are_not_spdy_end_the_session() {
    let (mut client, session) = start();
    client.send(Frame::Ping { id: 1 }).await;
    assert_eq!(client.next().await, Frame::Ping { id: 1 });
    client.open(1, "error", "8080", "0").await;
    // A SPDY/2 control frame.
    client
        .0
        .get_mut()
        .write_all(&[0x80, 2, 0, 6, 0, 0, 0, 4, 0, 0, 0, 3])
        .await
        .unwrap();
    assert_eq!(
        client.next().await,
        Frame::GoAway {
            last_good_stream_id: 1,
            status: goaway::PROTOCOL_ERROR
        }
    );
    tokio::time::timeout(HANG_GUARD, session)
        .await
        .expect("the session ends")
        .unwrap();
}
