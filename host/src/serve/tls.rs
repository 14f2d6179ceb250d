//! The serving certificate (PEM files, or self-signed at start as upstream
//! does without `--tls-cert-file`) and a listener that completes TLS
//! handshakes concurrently, so one slow client cannot hold up the others.

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::pki_types::pem::{self, PemObject};
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::{self, ServerConfig};
use tokio_rustls::server::TlsStream;

use super::ServeError;
use super::conn::{self, Guarded};

/// A client that has not finished its handshake by then is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections handshaken but not yet taken by the server.
const HANDSHAKEN_BACKLOG: usize = 64;

/// Where the serving certificate comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Certificate {
    /// Generated in memory at start, for `localhost`, `127.0.0.1`, this
    /// host's name and the listen address.
    SelfSigned,
    /// PEM files: the certificate chain (leaf first) and its private key.
    Files {
        /// The certificate chain.
        cert: PathBuf,
        /// The private key.
        key: PathBuf,
    },
}

pub(super) fn acceptor(
    certificate: &Certificate,
    listen: SocketAddr,
) -> Result<TlsAcceptor, ServeError> {
    let (chain, key) = match certificate {
        Certificate::SelfSigned => self_signed(listen)?,
        Certificate::Files { cert, key } => (read_chain(cert)?, read_key(key)?),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(ServeError::Tls)?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|source| match certificate {
            Certificate::Files { cert, key } => ServeError::KeyPair {
                cert: cert.clone(),
                key: key.clone(),
                source,
            },
            Certificate::SelfSigned => ServeError::Tls(source),
        })?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

type CertifiedKey = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>);

fn self_signed(listen: SocketAddr) -> Result<CertifiedKey, ServeError> {
    let mut names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    if let Ok(host) = hostname::get() {
        names.push(host.to_string_lossy().into_owned());
    }
    if !listen.ip().is_unspecified() && !listen.ip().is_loopback() {
        names.push(listen.ip().to_string());
    }
    let generated = rcgen::generate_simple_self_signed(names)?;
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        generated.signing_key.serialize_der(),
    ));
    Ok((vec![generated.cert.der().clone()], key))
}

fn read_chain(path: &Path) -> Result<Vec<CertificateDer<'static>>, ServeError> {
    let unreadable = |source: pem::Error| ServeError::CertificateFile {
        path: path.to_path_buf(),
        reason: source.to_string(),
    };
    let chain = CertificateDer::pem_file_iter(path)
        .map_err(unreadable)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(unreadable)?;
    if chain.is_empty() {
        return Err(ServeError::CertificateFile {
            path: path.to_path_buf(),
            reason: "it holds no PEM CERTIFICATE block".into(),
        });
    }
    Ok(chain)
}

fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, ServeError> {
    PrivateKeyDer::from_pem_file(path).map_err(|source| ServeError::KeyFile {
        path: path.to_path_buf(),
        reason: match source {
            pem::Error::NoItemsFound => "it holds no PEM private key block".into(),
            other => other.to_string(),
        },
    })
}

/// Accepts TCP connections and hands axum those whose handshake succeeded.
pub(super) struct TlsListener {
    handshaken: mpsc::Receiver<(Guarded<TlsStream<TcpStream>>, SocketAddr)>,
    addr: SocketAddr,
}

impl TlsListener {
    /// Starts accepting; the accept task ends when the listener is dropped.
    pub(super) fn new(tcp: TcpListener, acceptor: TlsAcceptor) -> io::Result<TlsListener> {
        let addr = tcp.local_addr()?;
        let (sender, handshaken) = mpsc::channel(HANDSHAKEN_BACKLOG);
        tokio::spawn(accept_connections(tcp, acceptor, sender, conn::permits()));
        Ok(TlsListener { handshaken, addr })
    }
}

async fn accept_connections(
    tcp: TcpListener,
    acceptor: TlsAcceptor,
    sender: mpsc::Sender<(Guarded<TlsStream<TcpStream>>, SocketAddr)>,
    permits: Arc<Semaphore>,
) {
    loop {
        // A slot first: connections beyond the limit wait in the backlog, handshakes included.
        let slot = tokio::select! {
            () = sender.closed() => return,
            slot = conn::slot(&permits) => slot,
        };
        let (stream, peer) = tokio::select! {
            () = sender.closed() => return,
            accepted = tcp.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!(%error, "serving: accept failed");
                    // Out of file descriptors and the like: back off briefly.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let (acceptor, sender) = (acceptor.clone(), sender.clone());
        tokio::spawn(async move {
            match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                Ok(Ok(tls)) => {
                    // The server may have stopped meanwhile; the connection is dropped then.
                    let _ = sender.send((Guarded::new(tls, slot), peer)).await;
                }
                Ok(Err(error)) => tracing::debug!(%error, %peer, "serving: TLS handshake failed"),
                Err(_) => tracing::debug!(%peer, "serving: TLS handshake timed out"),
            }
        });
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = Guarded<TlsStream<TcpStream>>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.handshaken.recv().await {
            Some(connection) => connection,
            // The accept task only ends once this listener is gone.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.addr)
    }
}
