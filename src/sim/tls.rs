//! HTTPS for the sim. kubectl (client-go's clientcmd) only sends a kubeconfig's bearer token
//! over TLS, so the sim serves TLS with a throwaway CA made at start; the kubeconfig it emits
//! carries that CA.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;
use tokio_util::sync::CancellationToken;

use super::SimError;

/// A client that has not finished its handshake by then is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The serving certificate and the CA clients must trust.
pub(crate) struct ServingCert {
    pub ca_pem: String,
    pub config: Arc<rustls::ServerConfig>,
}

fn cert_error(e: impl std::fmt::Display) -> SimError {
    SimError::Tls(e.to_string())
}

/// A fresh CA and a serving certificate for 127.0.0.1, ::1 and localhost.
pub(crate) fn serving_cert() -> Result<ServingCert, SimError> {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(cert_error)?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "kscope-sim-ca");
    ca_params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
    ];
    let ca_key = KeyPair::generate().map_err(cert_error)?;
    let ca_cert = ca_params.self_signed(&ca_key).map_err(cert_error)?;
    let issuer = Issuer::new(ca_params, ca_key);

    let mut params = CertificateParams::new(vec![
        "127.0.0.1".to_string(),
        "::1".to_string(),
        "localhost".to_string(),
    ])
    .map_err(cert_error)?;
    params
        .distinguished_name
        .push(DnType::CommonName, "kscope-sim");
    params.use_authority_key_identifier_extension = true;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let key = KeyPair::generate().map_err(cert_error)?;
    let cert = params.signed_by(&key, &issuer).map_err(cert_error)?;

    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(go_cipher_order()))
        .with_safe_default_protocol_versions()
        .map_err(cert_error)?
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone(), ca_cert.der().clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .map_err(cert_error)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config.ignore_client_order = true;
    Ok(ServingCert {
        ca_pem: ca_cert.pem(),
        config: Arc::new(config),
    })
}

/// ring's suites in the order a Go API server chooses them on a CPU with AES instructions
/// (crypto/tls `defaultCipherSuitesTLS13`, `cipherSuitesPreferenceOrder`) for a client that
/// prefers AES-GCM, as rustls clients do: AES-128-GCM first, although they list AES-256-GCM
/// first. (Go switches to ChaCha20 first for a client that lists it first; rustls has no
/// hook for that, and no client of the sim does.)
fn go_cipher_order() -> rustls::crypto::CryptoProvider {
    use rustls::crypto::ring::cipher_suite::*;
    rustls::crypto::CryptoProvider {
        cipher_suites: vec![
            TLS13_AES_128_GCM_SHA256,
            TLS13_AES_256_GCM_SHA384,
            TLS13_CHACHA20_POLY1305_SHA256,
            TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
            TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
            TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
            TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
            TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
            TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
        ],
        ..rustls::crypto::ring::default_provider()
    }
}

/// A listener handing axum finished TLS connections. Handshakes run concurrently, so one
/// slow client never holds up the others.
pub(crate) struct TlsListener {
    local: SocketAddr,
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
}

impl TlsListener {
    pub fn new(
        tcp: TcpListener,
        config: Arc<rustls::ServerConfig>,
        stop: CancellationToken,
    ) -> std::io::Result<Self> {
        let local = tcp.local_addr()?;
        let acceptor = TlsAcceptor::from(config);
        let (tx, ready) = mpsc::channel(64);
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    accepted = tcp.accept() => accepted,
                    () = stop.cancelled() => return,
                };
                let (stream, peer) = match accepted {
                    Ok(pair) => pair,
                    Err(e) => {
                        tracing::debug!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    }
                };
                let acceptor = acceptor.clone();
                let tx = tx.clone();
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                        Ok(Ok(tls)) => {
                            let _ = tx.send((tls, peer)).await;
                        }
                        Ok(Err(e)) => tracing::debug!(error = %e, %peer, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                });
            }
        });
        Ok(Self { local, ready })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(pair) => pair,
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}

#[cfg(test)]
mod tests {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName};
    use rustls::{CipherSuite, ClientConnection, RootCertStore, ServerConnection};

    use super::*;

    /// Runs a handshake in memory with a rustls client in its default order (AES-256 first).
    fn negotiated(cert: &ServingCert) -> Option<CipherSuite> {
        let mut roots = RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_slice(cert.ca_pem.as_bytes()).ok()?)
            .ok()?;
        let client_config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .ok()?
        .with_root_certificates(roots)
        .with_no_client_auth();
        let name = ServerName::try_from("localhost").ok()?;
        let mut client = ClientConnection::new(Arc::new(client_config), name).ok()?;
        let mut server = ServerConnection::new(cert.config.clone()).ok()?;
        let mut wire = Vec::new();
        while client.is_handshaking() || server.is_handshaking() {
            wire.clear();
            client.write_tls(&mut wire).ok()?;
            server.read_tls(&mut wire.as_slice()).ok()?;
            server.process_new_packets().ok()?;
            wire.clear();
            server.write_tls(&mut wire).ok()?;
            client.read_tls(&mut wire.as_slice()).ok()?;
            client.process_new_packets().ok()?;
        }
        client.negotiated_cipher_suite().map(|s| s.suite())
    }

    #[test]
    fn a_rustls_client_gets_aes_128_gcm_as_from_a_go_api_server() {
        let cert = serving_cert().unwrap();
        assert_eq!(
            negotiated(&cert),
            Some(CipherSuite::TLS13_AES_128_GCM_SHA256)
        );
    }

    #[test]
    fn without_the_go_order_the_same_client_would_get_aes_256_gcm() {
        let mut cert = serving_cert().unwrap();
        let mut config = (*cert.config).clone();
        config.ignore_client_order = false;
        cert.config = Arc::new(config);
        assert_eq!(
            negotiated(&cert),
            Some(CipherSuite::TLS13_AES_256_GCM_SHA384)
        );
    }
}
