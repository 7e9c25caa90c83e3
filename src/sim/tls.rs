//! HTTPS for the sim. kubectl (client-go's clientcmd) only sends a kubeconfig's bearer token
//! over TLS, so the sim serves TLS with a throwaway CA made at start; the kubeconfig it emits
//! carries that CA. With a state directory the CA, the serving certificate and key, and the
//! token are kept there, so a restarted sim is reachable with the kubeconfig of the last one.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
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

/// What a sim proves itself with and asks of its clients.
pub(crate) struct Identity {
    pub cert: ServingCert,
    pub token: String,
}

/// The files of a state directory: the CA clients trust and its key, the serving chain and
/// its key, and the bearer token.
const STATE_FILES: [&str; 5] = ["ca.crt", "ca.key", "tls.crt", "tls.key", "token"];
/// The serving certificate's files: without them (and with the rest), a state directory
/// gets a new serving certificate from its CA, as a server whose certificate was rotated.
const SERVING_FILES: [&str; 2] = ["tls.crt", "tls.key"];

/// The sim's identity: the one kept in `state_dir` if it holds one, else a fresh one (saved
/// there when a directory is given). A `token` given (KSCOPE_SIM_TOKEN) wins over the kept
/// one; a new state directory keeps it.
pub(crate) fn identity(
    state_dir: Option<&Path>,
    token: Option<String>,
    random_token: impl FnOnce() -> String,
) -> Result<Identity, SimError> {
    let Some(dir) = state_dir else {
        return Ok(Identity {
            cert: serving_cert()?.0,
            token: token.unwrap_or_else(random_token),
        });
    };
    let missing: Vec<&str> = STATE_FILES
        .into_iter()
        .filter(|f| !dir.join(f).exists())
        .collect();
    let read = |name: &str| {
        let path = dir.join(name);
        std::fs::read_to_string(&path).map_err(|source| state_error(path, source))
    };
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        write_private(&path, text).map_err(|source| state_error(path, source))
    };
    if missing.is_empty() {
        let chain = CertificateDer::pem_slice_iter(read("tls.crt")?.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| SimError::Tls(format!("{}: {e}", dir.join("tls.crt").display())))?;
        let key = PrivateKeyDer::from_pem_slice(read("tls.key")?.as_bytes())
            .map_err(|e| SimError::Tls(format!("{}: {e}", dir.join("tls.key").display())))?;
        let kept_token = read("token")?.trim().to_string();
        return Ok(Identity {
            cert: ServingCert {
                ca_pem: read("ca.crt")?,
                config: server_config(chain, key)?,
            },
            token: token.unwrap_or(kept_token),
        });
    }
    if missing == SERVING_FILES {
        let ca_pem = read("ca.crt")?;
        let ca_key = KeyPair::from_pem(&read("ca.key")?).map_err(cert_error)?;
        let (cert, pems) = issue(&ca_pem, ca_key)?;
        write("tls.crt", &pems.chain)?;
        write("tls.key", &pems.key)?;
        let kept_token = read("token")?.trim().to_string();
        return Ok(Identity {
            cert,
            token: token.unwrap_or(kept_token),
        });
    }
    if missing.len() < STATE_FILES.len() {
        return Err(SimError::Tls(format!(
            "state directory {} is incomplete (missing {}): remove it or restore the files",
            dir.display(),
            missing.join(", ")
        )));
    }
    std::fs::create_dir_all(dir).map_err(|source| state_error(dir.to_path_buf(), source))?;
    let (ca_pem, ca_key) = new_ca()?;
    write("ca.key", &ca_key.serialize_pem())?;
    let (cert, pems) = issue(&ca_pem, ca_key)?;
    let new_token = token.unwrap_or_else(random_token);
    write("ca.crt", &ca_pem)?;
    write("tls.crt", &pems.chain)?;
    write("tls.key", &pems.key)?;
    write("token", &new_token)?;
    Ok(Identity {
        cert,
        token: new_token,
    })
}

fn state_error(path: PathBuf, source: std::io::Error) -> SimError {
    SimError::WriteFile {
        path: path.display().to_string(),
        source,
    }
}

/// Writes a file only its owner can read: it holds a key or the token.
pub(crate) fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)?.write_all(text.as_bytes())
}

/// The serving chain and key of a fresh certificate, as PEM, to keep in a state directory.
pub(crate) struct ServingPems {
    chain: String,
    key: String,
}

/// A fresh CA and a serving certificate for 127.0.0.1, ::1 and localhost.
pub(crate) fn serving_cert() -> Result<(ServingCert, ServingPems), SimError> {
    let (ca_pem, ca_key) = new_ca()?;
    issue(&ca_pem, ca_key)
}

/// The CA's certificate fields; the same each time, so a kept CA key issues certificates
/// that chain to the kept CA certificate.
fn ca_params() -> Result<CertificateParams, SimError> {
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
    Ok(ca_params)
}

/// A fresh CA: its certificate (PEM) and key.
fn new_ca() -> Result<(String, KeyPair), SimError> {
    let ca_key = KeyPair::generate().map_err(cert_error)?;
    let ca_cert = ca_params()?.self_signed(&ca_key).map_err(cert_error)?;
    Ok((ca_cert.pem(), ca_key))
}

/// A serving certificate for 127.0.0.1, ::1 and localhost from the CA `ca_pem` whose key
/// is `ca_key`.
fn issue(ca_pem: &str, ca_key: KeyPair) -> Result<(ServingCert, ServingPems), SimError> {
    let ca_der = CertificateDer::from_pem_slice(ca_pem.as_bytes()).map_err(cert_error)?;
    let issuer = Issuer::new(ca_params()?, ca_key);
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
    let pems = ServingPems {
        chain: format!("{}{ca_pem}", cert.pem()),
        key: key.serialize_pem(),
    };
    let config = server_config(
        vec![cert.der().clone(), ca_der],
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
    )?;
    Ok((
        ServingCert {
            ca_pem: ca_pem.to_string(),
            config,
        },
        pems,
    ))
}

fn server_config(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<Arc<rustls::ServerConfig>, SimError> {
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(go_cipher_order()))
        .with_safe_default_protocol_versions()
        .map_err(cert_error)?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(cert_error)?;
    // HTTP/2 first, as kube-apiserver offers it: Go clients multiplex their watches and
    // requests on one connection; a client that offers only HTTP/1.1 still gets it.
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    config.ignore_client_order = true;
    Ok(Arc::new(config))
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
                // As Go's servers do by default (kube-apiserver's included): without it, the
                // last segment of a response on a kept-alive connection can wait for the
                // client's delayed ACK (40 ms on Linux), a quarter of a paged list's pages here.
                if let Err(e) = stream.set_nodelay(true) {
                    tracing::debug!(error = %e, %peer, "TCP_NODELAY not set");
                }
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
    use rustls::pki_types::ServerName;
    use rustls::{CipherSuite, ClientConnection, RootCertStore, ServerConnection};

    use super::*;

    /// Runs a handshake in memory with a rustls client in its default order (AES-256 first).
    fn negotiated(cert: &ServingCert) -> Option<CipherSuite> {
        handshake(cert, &[])?
            .negotiated_cipher_suite()
            .map(|s| s.suite())
    }

    /// The client's side of a finished in-memory handshake in which it offers `alpn`.
    fn handshake(cert: &ServingCert, alpn: &[&[u8]]) -> Option<ClientConnection> {
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
        let mut client_config = client_config;
        client_config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
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
        Some(client)
    }

    #[test]
    fn http2_is_chosen_by_alpn_and_http1_still_served_to_who_asks_for_it() {
        let cert = serving_cert().unwrap().0;
        let protocol = |offered: &[&[u8]]| {
            handshake(&cert, offered)
                .unwrap()
                .alpn_protocol()
                .map(<[u8]>::to_vec)
        };
        // Go's net/http offers h2 first; the server takes it.
        assert_eq!(protocol(&[b"h2", b"http/1.1"]), Some(b"h2".to_vec()));
        // Even when the client lists HTTP/1.1 first, as kube-apiserver prefers h2.
        assert_eq!(protocol(&[b"http/1.1", b"h2"]), Some(b"h2".to_vec()));
        assert_eq!(protocol(&[b"http/1.1"]), Some(b"http/1.1".to_vec()));
        assert_eq!(protocol(&[]), None);
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kscope-tls-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_state_directory_keeps_the_ca_certificate_and_token() {
        let dir = scratch("keeps");
        let first = identity(Some(&dir), None, || "tok-1".into()).unwrap();
        let again = identity(Some(&dir), None, || "tok-2".into()).unwrap();
        assert_eq!(again.token, "tok-1");
        assert_eq!(again.cert.ca_pem, first.cert.ca_pem);
        // The reloaded server is trusted by a client of the first one's CA.
        let trusted_by_first = ServingCert {
            ca_pem: first.cert.ca_pem.clone(),
            config: again.cert.config.clone(),
        };
        assert!(negotiated(&trusted_by_first).is_some());
        // Without the directory, another CA: the old one does not trust it.
        let fresh = identity(None, None, || "tok-3".into()).unwrap();
        assert_ne!(fresh.cert.ca_pem, first.cert.ca_pem);
        let not_trusted = ServingCert {
            ca_pem: first.cert.ca_pem.clone(),
            config: fresh.cert.config,
        };
        assert!(negotiated(&not_trusted).is_none());
        // KSCOPE_SIM_TOKEN wins over the kept token.
        let env = identity(Some(&dir), Some("from-env".into()), || "x".into()).unwrap();
        assert_eq!(env.token, "from-env");
        // Without its serving certificate, the kept CA issues another one that the first's
        // clients still trust.
        let chain = std::fs::read_to_string(dir.join("tls.crt")).unwrap();
        std::fs::remove_file(dir.join("tls.crt")).unwrap();
        std::fs::remove_file(dir.join("tls.key")).unwrap();
        let rotated = identity(Some(&dir), None, || "x".into()).unwrap();
        assert_eq!(rotated.token, "tok-1");
        assert_ne!(std::fs::read_to_string(dir.join("tls.crt")).unwrap(), chain);
        let trusted_by_first = ServingCert {
            ca_pem: first.cert.ca_pem.clone(),
            config: rotated.cert.config,
        };
        assert!(negotiated(&trusted_by_first).is_some());
        std::fs::remove_file(dir.join("token")).unwrap();
        let err = identity(Some(&dir), None, || "x".into()).err().unwrap();
        assert!(err.to_string().contains("missing token"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_rustls_client_gets_aes_128_gcm_as_from_a_go_api_server() {
        let cert = serving_cert().unwrap().0;
        assert_eq!(
            negotiated(&cert),
            Some(CipherSuite::TLS13_AES_128_GCM_SHA256)
        );
    }

    #[test]
    fn without_the_go_order_the_same_client_would_get_aes_256_gcm() {
        let mut cert = serving_cert().unwrap().0;
        let mut config = (*cert.config).clone();
        config.ignore_client_order = false;
        cert.config = Arc::new(config);
        assert_eq!(
            negotiated(&cert),
            Some(CipherSuite::TLS13_AES_256_GCM_SHA384)
        );
    }
}
