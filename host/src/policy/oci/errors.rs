//! What can go wrong talking to a registry. Text a registry sent is outside
//! input: it is escaped and bounded ([`registry_text`]) before it is kept.

use crate::text::sanitize;

/// The most of a registry's error text kept in a message.
pub const REGISTRY_TEXT_BYTES: usize = 256;

/// A registry's text made safe for logs, Events and terminals.
pub fn registry_text(text: &str) -> String {
    sanitize(text.trim(), REGISTRY_TEXT_BYTES)
}

/// Why a pull or a push failed. No variant holds a credential.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// No HTTP exchange with the registry completed.
    #[error("registry {registry} cannot be reached: {cause}")]
    Unreachable {
        /// `host[:port]`.
        registry: String,
        /// The connection's failure, escaped.
        cause: String,
        /// The HTTP client's error.
        #[source]
        source: reqwest::Error,
    },
    /// The registry refused the credentials, or wants some and none were given.
    #[error("registry {registry} refused access to {repository} ({status}{}): {message}", if *.with_credentials { ", with credentials" } else { ", anonymously" })]
    Unauthorized {
        /// `host[:port]`.
        registry: String,
        /// The repository asked for.
        repository: String,
        /// 401 or 403.
        status: u16,
        /// Whether credentials were sent.
        with_credentials: bool,
        /// The registry's text, escaped and bounded.
        message: String,
    },
    /// The manifest or blob does not exist in the repository.
    #[error("{what} not found in {repository}")]
    NotFound {
        /// The manifest or blob, by digest or tag.
        what: String,
        /// `registry/repository`.
        repository: String,
    },
    /// Any other refusal.
    #[error("{what}: registry answered {status}: {message}")]
    Status {
        /// The request, such as `GET manifest sha256:…`.
        what: String,
        /// The HTTP status.
        status: u16,
        /// The registry's text, escaped and bounded.
        message: String,
    },
    /// A manifest, blob or token is larger than what is read of it.
    #[error("{what} is {size} bytes, over the limit of {limit} bytes")]
    TooLarge {
        /// The manifest or layer.
        what: String,
        /// Its size as declared or as read so far.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// Bytes whose sha256 is not the one they were asked for by.
    #[error("{what} has sha256:{actual}, not the sha256:{expected} it was asked for by")]
    DigestMismatch {
        /// The manifest or layer.
        what: String,
        /// The digest asked for.
        expected: String,
        /// The digest of what came.
        actual: String,
    },
    /// The manifest is not a wasm artifact as `vcd-ccm policy push` publishes.
    #[error("{reference} is not a wasm component artifact: {reason}")]
    NotWasm {
        /// The reference pulled.
        reference: String,
        /// What differs from one `application/wasm` layer in an OCI image manifest.
        reason: String,
    },
    /// A token service answered something unusable.
    #[error("registry {registry}: token service: {message}")]
    Token {
        /// `host[:port]`.
        registry: String,
        /// What was wrong, escaped and bounded.
        message: String,
    },
    /// The answer to a request broke the distribution protocol.
    #[error("{what}: {message}")]
    Protocol {
        /// The request.
        what: String,
        /// What was wrong, escaped and bounded.
        message: String,
    },
}

impl RegistryError {
    /// A failed exchange with `registry`, its cause chain escaped.
    pub fn unreachable(registry: &str, source: reqwest::Error) -> RegistryError {
        let mut cause = String::new();
        let mut next: Option<&dyn std::error::Error> = std::error::Error::source(&source);
        while let Some(error) = next {
            if !cause.is_empty() {
                cause.push_str(": ");
            }
            cause.push_str(&error.to_string());
            next = error.source();
        }
        if cause.is_empty() {
            cause = source.to_string();
        }
        RegistryError::Unreachable {
            registry: registry.to_string(),
            cause: registry_text(&cause),
            source,
        }
    }
}
