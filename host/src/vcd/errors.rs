//! Typed errors. Each names the logical operation and the HTTP call that
//! failed and carries what VCD said, so an operator can tell which object
//! and which endpoint to look at. Secrets never appear: requests carry them
//! only in headers and form bodies, which errors do not include.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde::Deserialize;

/// The logical operation and the HTTP request behind an error. Shared, so
/// that every error variant stays small and cloning it for retries and task
/// polls costs nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallSite(Arc<Site>);

#[derive(Debug, PartialEq, Eq)]
struct Site {
    operation: &'static str,
    method: Method,
    path: String,
}

impl CallSite {
    /// `operation` is e.g. `create_pool` (also the `operation` label of the
    /// metrics); `path` is the path and query, without scheme and host.
    pub fn new(operation: &'static str, method: Method, path: impl Into<String>) -> Self {
        Self(Arc::new(Site {
            operation,
            method,
            path: path.into(),
        }))
    }

    /// The logical operation.
    pub fn operation(&self) -> &'static str {
        self.0.operation
    }

    /// The HTTP method.
    pub fn method(&self) -> &Method {
        &self.0.method
    }

    /// Path and query, without scheme and host.
    pub fn path(&self) -> &str {
        &self.0.path
    }
}

impl fmt::Display for CallSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({} {})",
            self.0.operation, self.0.method, self.0.path
        )
    }
}

/// Why a VCD call failed.
#[derive(Debug, thiserror::Error)]
pub enum VcdError {
    /// VCD kept answering `BUSY_ENTITY` until the retries ran out.
    #[error(
        "{call}: VCD reports the object busy with another operation (BUSY_ENTITY) and retries gave up: {message}. Another writer (a second CCM replica, CAPVCD, a user) keeps the gateway busy; the next reconcile retries"
    )]
    BusyEntity {
        /// The operation and the request that failed.
        call: CallSite,
        /// VCD's own message.
        message: String,
    },
    /// HTTP 404.
    #[error("{call}: not found (HTTP 404 {minor}): {message}")]
    NotFound {
        /// The operation and the request that failed.
        call: CallSite,
        /// VCD's minor error code.
        minor: String,
        /// VCD's own message.
        message: String,
    },
    /// HTTP 403: a missing right, or an object that does not exist or is not ours.
    #[error(
        "{call}: forbidden (HTTP 403 {minor}): {message}. VCD answers 403 when the user lacks a right and when the object does not exist or belongs to another org: check the id and the user's role"
    )]
    Forbidden {
        /// The operation and the request that failed.
        call: CallSite,
        /// VCD's minor error code.
        minor: String,
        /// VCD's own message.
        message: String,
    },
    /// A delete refused with 403 while the object is still there: the role
    /// lacks the right. Nothing was deleted.
    #[error(
        "{call}: VCD refused the delete (HTTP 403 {minor}) and the object still exists: the role of the CCM's user lacks the right \"{right}\". Grant it; until then the object stays and so does the Service's finalizer. VCD said: {message}"
    )]
    DeleteForbidden {
        /// The operation and the request that failed.
        call: CallSite,
        /// The right the delete needs.
        right: &'static str,
        /// VCD's minor error code.
        minor: String,
        /// VCD's own message.
        message: String,
    },
    /// A create refused because an object with that name exists.
    #[error("{call}: an object with this name already exists (DUPLICATE_NAME): {message}")]
    DuplicateName {
        /// The operation and the request that failed.
        call: CallSite,
        /// VCD's own message.
        message: String,
    },
    /// HTTP 409 or 412: the object changed since it was read.
    #[error(
        "{call}: the object changed since it was read (HTTP {status}): {message}. Read it again and retry"
    )]
    Conflict {
        /// The operation and the request that failed.
        call: CallSite,
        /// The HTTP status.
        status: u16,
        /// VCD's own message.
        message: String,
    },
    /// HTTP 401: the credentials were refused.
    #[error(
        "{call}: VCD refused the credentials (HTTP 401): {message}. Check the username/password or refreshToken files, the org, and that the API token is not revoked"
    )]
    Unauthorized {
        /// The operation and the request that failed.
        call: CallSite,
        /// VCD's own message.
        message: String,
    },
    /// HTTP 429 until the retries ran out.
    #[error("{call}: VCD throttled the client (HTTP 429) and retries gave up: {message}")]
    Throttled {
        /// The operation and the request that failed.
        call: CallSite,
        /// VCD's own message.
        message: String,
        /// How long VCD asked the client to wait, when it said.
        retry_after: Option<Duration>,
    },
    /// Another 4xx answer.
    #[error("{call}: VCD rejected the request (HTTP {status} {minor}): {message}")]
    Rejected {
        /// The operation and the request that failed.
        call: CallSite,
        /// The HTTP status.
        status: u16,
        /// VCD's minor error code.
        minor: String,
        /// VCD's own message.
        message: String,
    },
    /// A 5xx answer that retries did not get past.
    #[error("{call}: VCD failed (HTTP {status} {minor}): {message}")]
    Server {
        /// The operation and the request that failed.
        call: CallSite,
        /// The HTTP status.
        status: u16,
        /// VCD's minor error code.
        minor: String,
        /// VCD's own message.
        message: String,
    },
    /// The request did not get an HTTP answer (connection refused or reset, DNS).
    #[error("{call}: cannot talk to VCD: {detail}")]
    Transport {
        /// The operation and the request that failed.
        call: CallSite,
        /// What went wrong, as the HTTP client reports it.
        detail: String,
    },
    /// VCD's certificate was not trusted.
    #[error(
        "{call}: VCD's TLS certificate is not trusted: {detail}. Point the CA bundle at the CA that signed VCD's certificate (the insecure switch skips verification, for labs only)"
    )]
    Tls {
        /// The operation and the request that failed.
        call: CallSite,
        /// What went wrong, as the HTTP client reports it.
        detail: String,
    },
    /// No answer within the request timeout.
    #[error("{call}: no answer within {after:?} (the request timeout)")]
    Timeout {
        /// The operation and the request that failed.
        call: CallSite,
        /// The request timeout.
        after: Duration,
    },
    /// The operation's task ended in error.
    #[error("{call}: VCD task {task} ended in error ({minor}): {message}")]
    TaskFailed {
        /// The operation and the request that failed.
        call: CallSite,
        /// The task's id.
        task: String,
        /// VCD's minor error code.
        minor: String,
        /// VCD's own message.
        message: String,
    },
    /// The operation's task did not finish in time.
    #[error(
        "{call}: VCD task {task} did not finish within {waited:?} (last status {status}); it may still complete in VCD, the next reconcile observes its result"
    )]
    TaskTimeout {
        /// The operation and the request that failed.
        call: CallSite,
        /// The task's id.
        task: String,
        /// The task's last status.
        status: String,
        /// How long the client waited.
        waited: Duration,
    },
    /// The answer was larger than the client reads for this kind of request.
    #[error(
        "{call}: VCD's answer is larger than {limit} bytes, the most this client reads for {kind}; reading stopped there (a proxy in front of VCD, or VCD itself, is sending far more than the API defines)"
    )]
    ResponseTooLarge {
        /// The operation and the request that failed.
        call: CallSite,
        /// The limit, in bytes.
        limit: usize,
        /// `one object` or `a collection (…)`.
        kind: &'static str,
    },
    /// VCD and this client share no API version.
    #[error(
        "VCD offers API versions [{offered}], none inside the range this client supports ({range}); widen the configured version range or upgrade"
    )]
    NoCommonVersion {
        /// The versions VCD offers.
        offered: String,
        /// The versions this client supports.
        range: String,
    },
    /// The credentials could not be read or used.
    #[error("credentials: {0}")]
    Credentials(String),
    /// The TLS settings (CA bundle) could not be used.
    #[error("TLS configuration: {0}")]
    TlsConfig(String),
    /// An answer that does not parse as the API defines it.
    #[error("{call}: unexpected answer from VCD: {detail}")]
    Unexpected {
        /// The operation and the request that failed.
        call: CallSite,
        /// What went wrong, as the HTTP client reports it.
        detail: String,
    },
    /// A named object (VDC, network, gateway, …) does not exist.
    #[error("{what} '{name}' not found {scope}")]
    Missing {
        /// The kind of object.
        what: &'static str,
        /// The name looked for.
        name: String,
        /// Where it was looked for.
        scope: String,
    },
    /// A VDC was asked for by the name or URN of a data-center group: the
    /// cluster's placement and zones name member VDCs.
    #[error(
        "'{name}' is a data-center group, not a VDC: write one of its member VDCs instead ({}); the group's networks and edge gateway are found from any member",
        members.join(", ")
    )]
    GroupNotVdc {
        /// The name or URN configured.
        name: String,
        /// The group's member VDCs, by name.
        members: Vec<String>,
    },
    /// A write a read-only client (`vcd-ccm plan`) did not send.
    #[error("{call}: not sent, this client only reads")]
    ReadOnly {
        /// The write that was asked for.
        call: CallSite,
    },
    /// A name matches several objects where one was expected.
    #[error("{count} {what} objects match '{name}' {scope}; expected exactly one")]
    Ambiguous {
        /// The kind of object.
        what: &'static str,
        /// The name looked for.
        name: String,
        /// Where it was looked for.
        scope: String,
        /// How many objects match.
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

    /// No answer came at all (connect error, reset, timeout, TLS failure):
    /// VCD, or the way to it, is down.
    pub fn is_unanswered(&self) -> bool {
        matches!(
            self,
            Self::Transport { .. } | Self::Tls { .. } | Self::Timeout { .. }
        )
    }

    /// VCD's `BUSY_ENTITY`: another operation holds the object.
    pub fn is_busy(&self) -> bool {
        matches!(self, Self::BusyEntity { .. })
    }

    /// The `outcome` label of the request metrics.
    pub fn outcome(&self) -> &'static str {
        match self {
            Self::BusyEntity { .. } => "busy",
            Self::NotFound { .. } | Self::Forbidden { .. } | Self::Missing { .. } => "not_found",
            Self::DeleteForbidden { .. } => "forbidden",
            Self::DuplicateName { .. } => "duplicate",
            Self::ResponseTooLarge { .. } => "too_large",
            Self::Conflict { .. } => "conflict",
            Self::Unauthorized { .. } => "unauthorized",
            Self::Throttled { .. } => "throttled",
            Self::Rejected { .. } | Self::Ambiguous { .. } | Self::GroupNotVdc { .. } => "rejected",
            Self::Server { .. } => "server_error",
            Self::Transport { .. } | Self::Tls { .. } => "transport",
            Self::Timeout { .. } | Self::TaskTimeout { .. } => "timeout",
            Self::TaskFailed { .. } => "task_failed",
            Self::NoCommonVersion { .. }
            | Self::Credentials(_)
            | Self::TlsConfig(_)
            | Self::Unexpected { .. } => "client_error",
            Self::ReadOnly { .. } => "read_only",
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
    let (minor, message) = match serde_json::from_slice::<ErrorBody>(body) {
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
    };
    (vcd_text(&minor), vcd_text(&message))
}

/// VCD's messages are a sentence or a few; a longer one is cut.
const MAX_MESSAGE: usize = 2048;

/// VCD's words as data: control characters escaped, at most
/// [`MAX_MESSAGE`] bytes, before they reach an error, a log line or an Event.
pub(crate) fn vcd_text(text: &str) -> String {
    crate::text::sanitize(text, MAX_MESSAGE)
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
        CallSite::new(
            "create_pool",
            Method::POST,
            "/cloudapi/1.0.0/loadBalancer/pools",
        )
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

    #[test]
    fn vcds_words_are_escaped_and_bounded() {
        let long = "x".repeat(10_000);
        let body =
            format!(r#"{{"minorErrorCode":"BAD\u001b[31m","message":"line\nbreak {long}"}}"#);
        let error = from_status(call(), StatusCode::BAD_REQUEST, body.as_bytes(), None);
        let VcdError::Rejected { minor, message, .. } = error else {
            panic!("{error}");
        };
        assert!(!minor.contains('\u{1b}'), "{minor}");
        assert!(
            !message.contains('\n') && message.starts_with("line"),
            "{message}"
        );
        assert!(message.len() <= MAX_MESSAGE + 16, "{}", message.len());
    }
}
