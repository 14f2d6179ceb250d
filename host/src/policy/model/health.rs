//! Tuned health checks: the settings of the tenant monitor a port's pool
//! gets. Contract 0.4.0.

use serde::{Deserialize, Serialize};
use wasmtime::component::{ComponentType, Lift, Lower};

use super::http::HttpMethod;

/// HTTP status codes `first` to `last`, both included.
#[derive(
    ComponentType, Lift, Lower, Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize,
)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct StatusRange {
    /// The lowest code, 100 or more.
    pub first: u16,
    /// The highest code, 599 or less.
    pub last: u16,
}

/// The request of an HTTP(S) check and its healthy answers.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct HttpCheck {
    /// The path requested.
    pub path: String,
    /// `get`, `head` or `post`.
    pub method: HttpMethod,
    /// The `Host` header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The status codes of a healthy answer.
    #[component(name = "expected-codes")]
    pub expected_codes: Vec<StatusRange>,
}

/// How a pool checks its members.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct MonitorSettings {
    /// Seconds between two checks.
    #[component(name = "interval-seconds")]
    pub interval_seconds: u32,
    /// Seconds a check waits for its answer.
    #[component(name = "timeout-seconds")]
    pub timeout_seconds: u32,
    /// Passing checks in a row before a member is up.
    #[component(name = "healthy-threshold")]
    pub healthy_threshold: u32,
    /// Failing checks in a row before a member is down.
    #[component(name = "unhealthy-threshold")]
    pub unhealthy_threshold: u32,
    /// The port checked; `None`: the member's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// The HTTP(S) request and healthy answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpCheck>,
}
