//! Optional HTTPS: a throw-away CA and a server certificate for `127.0.0.1`
//! and `localhost`, generated in-process, so clients can test verified TLS
//! against the CA's PEM (and refusal with any other CA).

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::{self, ServerConfig};
use tokio_rustls::server::TlsStream;

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot generate the test certificates: {0}")]
    Certificate(#[from] rcgen::Error),
    #[error("cannot configure TLS: {0}")]
    Rustls(#[from] rustls::Error),
}

/// The CA a client must trust, and the acceptor serving the certificate it signed.
pub struct TestPki {
    pub ca_pem: String,
    pub acceptor: TlsAcceptor,
}

impl TestPki {
    pub fn generate() -> Result<Self, TlsError> {
        let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "vcdsim test CA");
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate()?)?;

        let mut server_params =
            CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])?;
        server_params
            .distinguished_name
            .push(DnType::CommonName, "vcdsim");
        let server_key = KeyPair::generate()?;
        let server_cert = server_params.signed_by(&server_key, &ca)?;

        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der()));
        let config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(vec![server_cert.der().clone(), ca.der().clone()], key)?;
        Ok(Self {
            ca_pem: ca.pem(),
            acceptor: TlsAcceptor::from(Arc::new(config)),
        })
    }
}

/// A TCP listener that completes the TLS handshake before handing a
/// connection to axum; failed handshakes (e.g. a client that does not trust
/// the CA) are logged and skipped.
pub struct TlsListener {
    pub tcp: TcpListener,
    pub acceptor: TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let (stream, addr) = match self.tcp.accept().await {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!(%error, "vcdsim: accept failed");
                    continue;
                }
            };
            match self.acceptor.accept(stream).await {
                Ok(tls) => return (tls, addr),
                Err(error) => tracing::debug!(%error, %addr, "vcdsim: TLS handshake failed"),
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}
