//! `pods/NAME/portforward` over a WebSocket (`v4.channel.k8s.io`), as the kubelet serves it
//! to kube's `Api::portforward` and the Python client: per requested port a data channel
//! (2i) and an error channel (2i+1), each opened by the port number in two little-endian
//! bytes. Behind a port the pod's containers declare answers a small HTTP server (`/healthz`,
//! `/ready`, `/metrics`, and `/bytes/N` to measure a forward's throughput); any other port is
//! refused as the kubelet refuses a closed one.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Query;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::Response;
use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::Role;

use super::exec::{Upgrade, accept_key, close_normally, websocket_requested};
use super::pod_ports::{CHUNK, PodPorts, dial, refused};
use super::portforward_spdy;
use super::status::ApiError;
use super::target::Target;
use crate::Shared;
use crate::resources::Resource;

const PROTOCOL: &str = "v4.channel.k8s.io";
/// Answers a port-forward: the refusals, or 101 and one stream per requested port.
pub(super) fn serve(
    shared: Arc<Shared>,
    target: &Target,
    uri: &Uri,
    headers: &HeaderMap,
    upgrade: Upgrade,
) -> Result<Response, ApiError> {
    let name = target.name.as_deref().unwrap_or("");
    let pod = shared
        .store
        .get(Resource::Pods, &target.key(name))
        .ok_or_else(|| ApiError::not_found(Resource::Pods, name))?
        .decode()
        .map_err(|e| ApiError::internal(&e.to_string()))?;
    if pod["status"]["phase"] != "Running" {
        return Err(ApiError::bad_request(format!(
            "pod {name} is not running (phase {})",
            pod["status"]["phase"].as_str().unwrap_or("Pending")
        )));
    }
    let declared = declared_ports(&pod);
    let uid = pod["metadata"]["uid"].as_str().unwrap_or("").to_string();
    if let Some(transport) = portforward_spdy::requested(headers) {
        let ports = PodPorts {
            shutdown: shared.shutdown.clone(),
            pod: name.to_string(),
            uid,
            declared,
            stream_creation_timeout: shared.stream_creation_timeout,
        };
        return portforward_spdy::serve(ports, transport, headers, upgrade);
    }
    let ports = requested_ports(uri)?;
    if !websocket_requested(headers) {
        return Err(ApiError::bad_request("Upgrade request required"));
    }
    let offered = headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|p| p.trim() == PROTOCOL);
    let (Some(on_upgrade), Some(accept)) = (upgrade.0, accept_key(headers)) else {
        return Err(ApiError::bad_request("Upgrade request required"));
    };
    let pod_name = name.to_string();
    tokio::spawn(async move {
        if let Ok(upgraded) = on_upgrade.await {
            let ws =
                WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, None).await;
            forward(shared, ws, ports, declared, pod_name, uid).await;
        }
    });
    let mut response = Response::builder()
        .status(StatusCode::SWITCHING_PROTOCOLS)
        .header(header::UPGRADE, "websocket")
        .header(header::CONNECTION, "Upgrade")
        .header(header::SEC_WEBSOCKET_ACCEPT, accept);
    if offered {
        response = response.header(header::SEC_WEBSOCKET_PROTOCOL, PROTOCOL);
    }
    response
        .body(Body::empty())
        .map_err(|e| ApiError::internal(&e.to_string()))
}

/// `ports=` (repeated or comma-separated), each 1-65535.
fn requested_ports(uri: &Uri) -> Result<Vec<u16>, ApiError> {
    let pairs = Query::<Vec<(String, String)>>::try_from_uri(uri)
        .map_err(|e| ApiError::bad_request(format!("invalid query: {e}")))?
        .0;
    let ports: Vec<u16> = pairs
        .iter()
        .filter(|(k, _)| k == "ports")
        .flat_map(|(_, v)| v.split(','))
        .map(|p| {
            p.trim()
                .parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "unable to parse \"{p}\" as a port: invalid port"
                    ))
                })
        })
        .collect::<Result<_, _>>()?;
    if ports.is_empty() {
        return Err(ApiError::bad_request("at least 1 port must be specified"));
    }
    Ok(ports)
}

/// The ports the pod's containers declare: where its servers listen.
fn declared_ports(pod: &Value) -> Vec<u16> {
    pod["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["ports"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p["containerPort"].as_u64())
        .filter_map(|p| u16::try_from(p).ok())
        .collect()
}

/// One WebSocket's streams: each port's server (or its refusal) and the client's bytes to
/// it, until the client closes.
async fn forward<S>(
    shared: Arc<Shared>,
    ws: WebSocketStream<S>,
    ports: Vec<u16>,
    declared: Vec<u16>,
    pod: String,
    uid: String,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let (mut sink, mut incoming) = ws.split();
    let (out_tx, mut out_rx) = tokio::sync::mpsc::channel::<Bytes>(64);
    let mut to_servers = Vec::new();
    for (i, &port) in ports.iter().enumerate() {
        let data = (2 * i) as u8;
        for channel in [data, data + 1] {
            let [lo, hi] = port.to_le_bytes();
            if sink
                .send(Message::Binary(Bytes::from(vec![channel, lo, hi])))
                .await
                .is_err()
            {
                return;
            }
        }
        if !declared.contains(&port) {
            let mut framed = vec![data + 1];
            framed.extend_from_slice(refused(port, &uid).as_bytes());
            let _ = sink.send(Message::Binary(Bytes::from(framed))).await;
            to_servers.push(None);
            continue;
        }
        let client_end = dial(&pod, port);
        let (mut reader, writer) = tokio::io::split(client_end);
        let out = out_tx.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; CHUNK];
            loop {
                let n = match reader.read(&mut buf[1..]).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                buf[0] = data;
                if out.send(Bytes::copy_from_slice(&buf[..=n])).await.is_err() {
                    break;
                }
            }
        });
        to_servers.push(Some(writer));
    }
    drop(out_tx);
    loop {
        tokio::select! {
            () = shared.shutdown.cancelled() => break,
            message = incoming.next() => match message {
                Some(Ok(Message::Binary(data))) => {
                    let Some((&channel, payload)) = data.split_first() else { continue };
                    let index = usize::from(channel / 2);
                    if channel % 2 == 0
                        && let Some(Some(writer)) = to_servers.get_mut(index)
                        && writer.write_all(payload).await.is_err()
                    {
                        to_servers[index] = None;
                    }
                }
                Some(Ok(Message::Close(_)) | Err(_)) | None => break,
                Some(Ok(_)) => {}
            },
            out = out_rx.recv() => match out {
                Some(frame) => {
                    if sink.send(Message::Binary(frame)).await.is_err() {
                        break;
                    }
                }
                // Every port's connection has ended: the kubelet then ends the stream.
                None => break,
            },
        }
    }
    close_normally(&mut sink).await;
}
