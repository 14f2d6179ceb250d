//! Certificates from Kubernetes TLS Secrets (`vcd-ccm.io/tls-secret`).
//!
//! Before the policy decides, each Secret the annotation names is read
//! through [`TlsSecrets`] (the controller's Kubernetes client; `lb` never
//! talks to Kubernetes itself) and checked: type `kubernetes.io/tls`, a PEM
//! certificate chain in `tls.crt` and its PEM private key in `tls.key`. The
//! policy sees it as the certificate `secret/<name>`. Only a Secret the
//! decision uses is uploaded, to the org's certificate library under an
//! alias derived from the Secret and its certificate's digest, with a tag
//! naming this cluster and the Secret; the virtual services point at that
//! upload. A changed Secret is a new digest, so a new upload; once no
//! virtual service uses an older upload of the Secret it is deleted.
//!
//! The private key is held in redacting wrappers from the Secret to the
//! upload body and appears in no log, Event, error or metric.

mod annotation;
mod check;
mod error;
pub(super) mod tag;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;

use crate::vcd::resources::certificate::NewCertificate;

pub use annotation::{TLS_SECRET_ANNOTATION, secret_keys, secret_names};
pub use check::CheckedSecret;
pub use error::TlsSecretError;

/// The Secret type whose data the CCM uploads.
pub const TLS_SECRET_TYPE: &str = "kubernetes.io/tls";
/// How the policy input names the certificate of Secret `<name>`.
pub const ALIAS_PREFIX: &str = "secret/";

/// A private key as read from a Secret: its `Debug` prints `<redacted>`.
#[derive(Clone, Default)]
pub struct KeyBytes(Vec<u8>);

impl KeyBytes {
    /// Wraps the key's bytes.
    pub fn new(bytes: Vec<u8>) -> Self {
        Self(bytes)
    }

    fn expose(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for KeyBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// What a Secret holds, as far as TLS goes.
#[derive(Debug, Clone, Default)]
pub struct SecretData {
    /// `type`; Kubernetes defaults it to `Opaque`.
    pub secret_type: String,
    /// `data["tls.crt"]`.
    pub certificate: Option<Vec<u8>>,
    /// `data["tls.key"]`.
    pub key: Option<KeyBytes>,
}

/// A read of a Secret failed (other than "not found").
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SecretReadError(pub String);

/// Reads a Secret of the Service's namespace by name: one GET, no list or
/// watch, so the role needs only `get` on Secrets.
pub trait TlsSecrets: Send + Sync {
    /// The Secret `namespace/name`; `None` when it does not exist.
    fn get<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<SecretData>, SecretReadError>>;
}

/// The uploads reconciles in progress are about to point virtual services
/// at: never deleted while pinned, so one Service's cleanup cannot remove
/// the upload another Service has just found.
#[derive(Debug, Default)]
pub struct UploadPins(Mutex<HashMap<String, usize>>);

impl UploadPins {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        self.0.lock().unwrap_or_else(|poison| poison.into_inner())
    }

    pub(in crate::lb) fn is_pinned(&self, id: &str) -> bool {
        self.lock().contains_key(id)
    }
}

/// A Secret's certificate a decision uses and the library lacks: the
/// upload a pass makes first.
#[derive(Debug, Clone)]
pub struct Upload {
    /// The Secret's `namespace/name`, for messages.
    pub secret: String,
    /// The library item to add, its private key included.
    pub item: NewCertificate,
}

/// An upload a reconcile in progress points (or is about to point) virtual
/// services at; unpinned when dropped.
#[derive(Debug)]
pub(in crate::lb) struct Pinned {
    pins: Arc<UploadPins>,
    id: String,
}

impl Pinned {
    pub(in crate::lb) fn new(pins: &Arc<UploadPins>, id: &str) -> Self {
        *pins.lock().entry(id.to_string()).or_default() += 1;
        Self {
            pins: pins.clone(),
            id: id.to_string(),
        }
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        let mut pins = self.pins.lock();
        if let Some(count) = pins.get_mut(&self.id) {
            *count -= 1;
            if *count == 0 {
                pins.remove(&self.id);
            }
        }
    }
}
