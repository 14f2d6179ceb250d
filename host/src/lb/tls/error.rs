//! Why a Service's TLS Secret cannot be used. Each message names the Secret
//! and what would work; none quotes the Secret's data.

use super::TLS_SECRET_TYPE;
use super::annotation::TLS_SECRET_ANNOTATION;

/// A Secret named by `vcd-ccm.io/tls-secret` that cannot be uploaded.
#[derive(Debug, thiserror::Error)]
pub enum TlsSecretError {
    #[error(
        "annotation {TLS_SECRET_ANNOTATION}: {entry:?} names no Secret; use <secret> or <port>=<secret>,… with Secret names of lower-case letters, digits, '-' and '.'"
    )]
    /// An annotation entry without a valid Secret name.
    Annotation {
        /// The entry, trimmed.
        entry: String,
    },
    #[error(
        "Secret {namespace}/{name} named by {TLS_SECRET_ANNOTATION} does not exist; create a {TLS_SECRET_TYPE} Secret of that name in the Service's namespace (a cert-manager Certificate does) or change the annotation"
    )]
    /// The Secret does not exist.
    Missing {
        /// The Service's namespace.
        namespace: String,
        /// The Secret's name.
        name: String,
    },
    #[error(
        "Secret {namespace}/{name} named by {TLS_SECRET_ANNOTATION} could not be read ({message}); the CCM's role needs get on secrets"
    )]
    /// Reading the Secret failed.
    Unreadable {
        /// The Service's namespace.
        namespace: String,
        /// The Secret's name.
        name: String,
        /// What the API server said.
        message: String,
    },
    #[error(
        "Secret {namespace}/{name} named by {TLS_SECRET_ANNOTATION} is of type {found:?}, not {TLS_SECRET_TYPE}; name a {TLS_SECRET_TYPE} Secret (tls.crt and tls.key)"
    )]
    /// The Secret is not a TLS Secret.
    WrongType {
        /// The Service's namespace.
        namespace: String,
        /// The Secret's name.
        name: String,
        /// Its type.
        found: String,
    },
    #[error(
        "Secret {namespace}/{name} named by {TLS_SECRET_ANNOTATION}: {field} {problem}; put the PEM certificate chain (leaf first) in tls.crt and its unencrypted PEM private key in tls.key"
    )]
    /// The Secret's data is not a usable certificate and key.
    Unusable {
        /// The Service's namespace.
        namespace: String,
        /// The Secret's name.
        name: String,
        /// `tls.crt` or `tls.key`.
        field: &'static str,
        /// What is wrong, in fixed words (never the data).
        problem: &'static str,
    },
}
