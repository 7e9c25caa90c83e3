//! The HTTP stack under kube's `Client`, assembled as kube assembles it with one difference:
//! reads from the TCP socket are buffered below TLS.
//!
//! rustls asks its socket for at most one TLS record (~16 KB) per read. A watch that streams
//! tens of megabytes a second then costs one `recv` system call per record: about 50,000 of
//! them to catch up on 150,000 pod events, with the kernel's per-call work (socket lock, the
//! receive backlog, a window update that wakes the sender) a sixth of kscope's CPU in that
//! drain. A 256 KiB buffer under rustls takes what the socket holds in one call.
//!
//! kube takes a custom TCP connector only through `ConfigExt`, not through
//! `Client::try_from`, so the layers above it are put together here from kube's public
//! parts, in kube's order. Left out:
//! - the retry layer (`default_retry`): the Reflector backs off itself, as client-go's does;
//! - the tracing layer, its spans and its "failed with status" error events: the Reflector
//!   logs a failed list or watch itself;
//! - gzip (`disable_compression`), which kscope does not build kube with;
//! - `Client::valid_until`, an exec plugin's certificate expiry, which kube reads privately
//!   and kscope never asks for.
//!
//! The buffer is allocated with the connection: 256 KiB for each open watch or pooled
//! connection, a few MiB for the explorer's watches.
//!
//! Each TLS connection also carries the fingerprint of the certificate the server presented
//! ([`PeerCertificate`], in every response's extensions), so that a client can tell when it
//! reconnected to another server than the one its cache came from.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::Uri;
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_rustls::MaybeHttpsStream;
use hyper_timeout::TimeoutConnector;
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::rt::{TokioExecutor, TokioIo};
use kube::client::ConfigExt;
use tokio::io::BufReader;
use tokio::net::TcpStream;
use tower::{BoxError, Service, ServiceBuilder};

/// How much one read from the socket may take: a few hundred TLS records.
const READ_BUFFER: usize = 256 * 1024;

/// A kube `Client` for `config` whose TCP reads are buffered (see the module doc). A proxied
/// configuration gets kube's own client, which handles (or refuses) the proxy.
pub fn client(config: kube::Config) -> Result<kube::Client, kube::Error> {
    if config.proxy_url.is_some() {
        return kube::Client::try_from(config);
    }
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    let https = config.rustls_https_connector_with_connector(BufferedConnector(http))?;
    let mut connector = TimeoutConnector::new(FingerprintingConnector(https));
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    connector.set_reset_reader_on_write(config.reset_reader_on_write);
    let hyper = hyper_util::client::legacy::Builder::new(TokioExecutor::new()).build(connector);
    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .map_err(BoxError::from)
        .service(hyper);
    Ok(kube::client::ClientBuilder::new(service, config.default_namespace).build())
}

/// The SHA-256 of the certificate a TLS server presented on a connection (`sha256:` and
/// hex), found in the extensions of every response that came over it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerCertificate(pub String);

impl PeerCertificate {
    fn of(der: &[u8]) -> Self {
        let digest = ring::digest::digest(&ring::digest::SHA256, der);
        let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
        Self(format!("sha256:{hex}"))
    }
}

/// The HTTPS connector, with each TLS connection labelled with its [`PeerCertificate`].
#[derive(Clone)]
struct FingerprintingConnector<C>(C);

impl<C> Service<Uri> for FingerprintingConnector<C>
where
    C: Service<Uri, Response = MaybeHttpsStream<BufferedTcp>>,
    C::Future: Send + 'static,
{
    type Response = Fingerprinted;
    type Error = C::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Fingerprinted, C::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let connecting = self.0.call(uri);
        Box::pin(async move {
            let stream = connecting.await?;
            let peer = match &stream {
                MaybeHttpsStream::Https(tls) => tls
                    .inner()
                    .get_ref()
                    .1
                    .peer_certificates()
                    .and_then(|chain| chain.first())
                    .map(|leaf| PeerCertificate::of(leaf)),
                MaybeHttpsStream::Http(_) => None,
            };
            Ok(Fingerprinted { stream, peer })
        })
    }
}

/// A connection and the certificate its server presented (none over plain HTTP).
struct Fingerprinted {
    stream: MaybeHttpsStream<BufferedTcp>,
    peer: Option<PeerCertificate>,
}

impl Connection for Fingerprinted {
    fn connected(&self) -> Connected {
        let connected = self.stream.connected();
        match &self.peer {
            Some(peer) => connected.extra(peer.clone()),
            None => connected,
        }
    }
}

impl Read for Fingerprinted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl Write for Fingerprinted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }
}

/// hyper's TCP connector, with each connection's reads buffered.
#[derive(Clone)]
struct BufferedConnector(HttpConnector);

impl Service<Uri> for BufferedConnector {
    type Response = BufferedTcp;
    type Error = <HttpConnector as Service<Uri>>::Error;
    type Future = Pin<Box<dyn Future<Output = Result<BufferedTcp, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let connecting = self.0.call(uri);
        Box::pin(async move {
            let tcp = connecting.await?.into_inner();
            Ok(BufferedTcp(TokioIo::new(BufReader::with_capacity(
                READ_BUFFER,
                tcp,
            ))))
        })
    }
}

/// A TCP connection read through a buffer; writes go straight to the socket.
struct BufferedTcp(TokioIo<BufReader<TcpStream>>);

impl Connection for BufferedTcp {
    fn connected(&self) -> Connected {
        self.0.inner().get_ref().connected()
    }
}

impl Read for BufferedTcp {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl Write for BufferedTcp {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write_vectored(cx, bufs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proxied_configuration_gets_kubes_own_answer() {
        let mut config = kube::Config::new("https://127.0.0.1:6443".parse().unwrap());
        config.proxy_url = Some("http://127.0.0.1:3128".parse().unwrap());
        let ours = client(config.clone()).err().map(|e| e.to_string());
        let kubes = kube::Client::try_from(config).err().map(|e| e.to_string());
        assert!(
            ours.is_some(),
            "kscope's kube has no proxy support to build with"
        );
        assert_eq!(ours, kubes);
    }
}
