//! Typed errors. Each names the logical operation and the HTTP call that
//! failed and carries what VCD said, so an operator can tell which object
//! and which endpoint to look at. Secrets never appear: requests carry them
//! only in headers and form bodies, which errors do not include.

use std::fmt;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde::Deserialize;

/// The logical operation and the HTTP request behind an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallSite {
    /// E.g. `create_pool`; also the `operation` label of the metrics.
    pub operation: &'static str,
    pub method: Method,
    /// Path and query, without scheme and host.
    pub path: String,
}

impl fmt::Display for CallSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({} {})", self.operation, self.method, self.path)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum VcdError {
    #[error(
        "{call}: VCD reports the object busy with another operation (BUSY_ENTITY) and retries gave up: {message}. Another writer (a second CCM replica, CAPVCD, a user) keeps the gateway busy; the next reconcile retries"
    )]
    BusyEntity { call: CallSite, message: String },
    #[error("{call}: not found (HTTP 404 {minor}): {message}")]
    NotFound {
        call: CallSite,
        minor: String,
        message: String,
    },
    #[error(
        "{call}: forbidden (HTTP 403 {minor}): {message}. VCD answers 403 when the user lacks a right and when the object does not exist or belongs to another org: check the id and the user's role"
    )]
    Forbidden {
        call: CallSite,
        minor: String,
        message: String,
    },
    #[error("{call}: an object with this name already exists (DUPLICATE_NAME): {message}")]
    DuplicateName { call: CallSite, message: String },
    #[error(
        "{call}: the object changed since it was read (HTTP {status}): {message}. Read it again and retry"
    )]
    Conflict {
        call: CallSite,
        status: u16,
        message: String,
    },
    #[error(
        "{call}: VCD refused the credentials (HTTP 401): {message}. Check the username/password or refreshToken files, the org, and that the API token is not revoked"
    )]
    Unauthorized { call: CallSite, message: String },
    #[error("{call}: VCD throttled the client (HTTP 429) and retries gave up: {message}")]
    Throttled {
        call: CallSite,
        message: String,
        retry_after: Option<Duration>,
    },
    #[error("{call}: VCD rejected the request (HTTP {status} {minor}): {message}")]
    Rejected {
        call: CallSite,
        status: u16,
        minor: String,
        message: String,
    },
    #[error("{call}: VCD failed (HTTP {status} {minor}): {message}")]
    Server {
        call: CallSite,
        status: u16,
        minor: String,
        message: String,
    },
    #[error("{call}: cannot talk to VCD: {detail}")]
    Transport { call: CallSite, detail: String },
    #[error(
        "{call}: VCD's TLS certificate is not trusted: {detail}. Point the CA bundle at the CA that signed VCD's certificate (the insecure switch skips verification, for labs only)"
    )]
    Tls { call: CallSite, detail: String },
    #[error("{call}: no answer within {after:?} (the request timeout)")]
    Timeout { call: CallSite, after: Duration },
    #[error("{call}: VCD task {task} ended in error ({minor}): {message}")]
    TaskFailed {
        call: CallSite,
        task: String,
        minor: String,
        message: String,
    },
    #[error(
        "{call}: VCD task {task} did not finish within {waited:?} (last status {status}); it may still complete in VCD, the next reconcile observes its result"
    )]
    TaskTimeout {
        call: CallSite,
        task: String,
        status: String,
        waited: Duration,
    },
    #[error(
        "VCD offers API versions [{offered}], none inside the range this client supports ({range}); widen the configured version range or upgrade"
    )]
    NoCommonVersion { offered: String, range: String },
    #[error("credentials: {0}")]
    Credentials(String),
    #[error("TLS configuration: {0}")]
    TlsConfig(String),
    #[error("{call}: unexpected answer from VCD: {detail}")]
    Unexpected { call: CallSite, detail: String },
    #[error("{what} '{name}' not found {scope}")]
    Missing {
        what: &'static str,
        name: String,
        scope: String,
    },
    #[error("{count} {what} objects match '{name}' {scope}; expected exactly one")]
    Ambiguous {
        what: &'static str,
        name: String,
        scope: String,
        count: usize,
    },
}

impl VcdError {
    /// 404, or VCD's 403 for an object that does not exist (or is not ours).
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            Self::NotFound { .. } | Self::Forbidden { .. } | Self::Missing { .. }
        )
    }

    pub fn is_busy(&self) -> bool {
        matches!(self, Self::BusyEntity { .. })
    }

    /// The `outcome` label of the request metrics.
    pub fn outcome(&self) -> &'static str {
        match self {
            Self::BusyEntity { .. } => "busy",
            Self::NotFound { .. } | Self::Forbidden { .. } | Self::Missing { .. } => "not_found",
            Self::DuplicateName { .. } => "duplicate",
            Self::Conflict { .. } => "conflict",
            Self::Unauthorized { .. } => "unauthorized",
            Self::Throttled { .. } => "throttled",
            Self::Rejected { .. } | Self::Ambiguous { .. } => "rejected",
            Self::Server { .. } => "server_error",
            Self::Transport { .. } | Self::Tls { .. } => "transport",
            Self::Timeout { .. } | Self::TaskTimeout { .. } => "timeout",
            Self::TaskFailed { .. } => "task_failed",
            Self::NoCommonVersion { .. }
            | Self::Credentials(_)
            | Self::TlsConfig(_)
            | Self::Unexpected { .. } => "client_error",
        }
    }
}

/// A CloudAPI or legacy error body, or an OAuth error.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ErrorBody {
    minor_error_code: Option<String>,
    message: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

/// Longest slice of a non-JSON error body kept in a message.
const MAX_TEXT: usize = 300;

fn parse_body(body: &[u8]) -> (String, String) {
    match serde_json::from_slice::<ErrorBody>(body) {
        Ok(parsed) if parsed.minor_error_code.is_some() || parsed.message.is_some() => (
            parsed.minor_error_code.unwrap_or_default(),
            parsed.message.unwrap_or_default(),
        ),
        Ok(parsed) if parsed.error.is_some() => (
            parsed.error.unwrap_or_default(),
            parsed.error_description.unwrap_or_default(),
        ),
        _ => {
            let text = String::from_utf8_lossy(body);
            let text: String = text.chars().take(MAX_TEXT).collect();
            (String::new(), text.trim().to_string())
        }
    }
}

/// Maps a non-2xx answer to its typed error.
pub(crate) fn from_status(
    call: CallSite,
    status: StatusCode,
    body: &[u8],
    retry_after: Option<Duration>,
) -> VcdError {
    let (minor, message) = parse_body(body);
    match (status.as_u16(), minor.as_str()) {
        (_, "BUSY_ENTITY") => VcdError::BusyEntity { call, message },
        (_, "DUPLICATE_NAME") => VcdError::DuplicateName { call, message },
        (401, _) => VcdError::Unauthorized { call, message },
        (403, _) => VcdError::Forbidden {
            call,
            minor,
            message,
        },
        (404, _) => VcdError::NotFound {
            call,
            minor,
            message,
        },
        (409 | 412, _) => VcdError::Conflict {
            call,
            status: status.as_u16(),
            message,
        },
        (429, _) => VcdError::Throttled {
            call,
            message,
            retry_after,
        },
        (code, _) if code >= 500 => VcdError::Server {
            call,
            status: code,
            minor,
            message,
        },
        (code, _) => VcdError::Rejected {
            call,
            status: code,
            minor,
            message,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call() -> CallSite {
        CallSite {
            operation: "create_pool",
            method: Method::POST,
            path: "/cloudapi/1.0.0/loadBalancer/pools".to_string(),
        }
    }

    #[test]
    fn cloudapi_bodies_map_to_typed_errors() {
        let busy = br#"{"minorErrorCode":"BUSY_ENTITY","message":"[ r ] busy","stackTrace":null}"#;
        let error = from_status(call(), StatusCode::BAD_REQUEST, busy, None);
        assert!(error.is_busy());
        let text = error.to_string();
        assert!(text.contains("create_pool (POST /cloudapi/1.0.0/loadBalancer/pools)"));
        assert!(text.contains("[ r ] busy"));

        let duplicate = br#"{"minorErrorCode":"DUPLICATE_NAME","message":"exists"}"#;
        assert!(matches!(
            from_status(call(), StatusCode::BAD_REQUEST, duplicate, None),
            VcdError::DuplicateName { .. }
        ));
        let forbidden = br#"{"minorErrorCode":"ACCESS_TO_RESOURCE_IS_FORBIDDEN","message":"no"}"#;
        assert!(from_status(call(), StatusCode::FORBIDDEN, forbidden, None).is_not_found());
        assert!(matches!(
            from_status(call(), StatusCode::PRECONDITION_FAILED, b"", None),
            VcdError::Conflict { status: 412, .. }
        ));
        assert!(matches!(
            from_status(call(), StatusCode::BAD_GATEWAY, b"<html>oops</html>", None),
            VcdError::Server { status: 502, .. }
        ));
    }

    #[test]
    fn oauth_errors_keep_their_code() {
        let body = br#"{"error":"invalid_grant","error_description":"revoked"}"#;
        let error = from_status(call(), StatusCode::BAD_REQUEST, body, None);
        assert!(matches!(error, VcdError::Rejected { ref minor, .. } if minor == "invalid_grant"));
    }
}
