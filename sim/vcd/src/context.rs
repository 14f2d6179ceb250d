//! Per-request context carried in a task-local: the request id that error
//! messages quote, the API family, the negotiated version and a fault that
//! asks the next task of this request to fail.

use std::sync::Arc;

use crate::faults::TaskFailure;

/// The API versions whose bodies vcdsim models: VCD 10.4.2 (37.2), 10.5
/// (38.0, 38.1) and 10.6 (39.0, 39.1). Older versions a scenario lists are
/// served with 37.2's bodies minus the fields added since.
pub const MODELLED_VERSIONS: [&str; 5] = ["37.2", "38.0", "38.1", "39.0", "39.1"];

/// The version used when a request names none; the CPI pins 37.2.
pub const DEFAULT_API_VERSION: &str = "37.2";

#[derive(Debug, Clone)]
pub struct RequestContext {
    pub request_id: String,
    /// `/api/...` answers legacy JSON error bodies and media types.
    pub legacy: bool,
    pub api_version: String,
    pub fail_task: Option<Arc<TaskFailure>>,
}

impl Default for RequestContext {
    fn default() -> Self {
        Self {
            request_id: "00000000-0000-0000-0000-000000000000".to_string(),
            legacy: false,
            api_version: DEFAULT_API_VERSION.to_string(),
            fail_task: None,
        }
    }
}

tokio::task_local! {
    static REQUEST: RequestContext;
}

/// The context of the request being served, or a default outside a request.
pub fn current() -> RequestContext {
    REQUEST.try_with(Clone::clone).unwrap_or_default()
}

/// Whether the request's API version is `major.minor` or later (an
/// unparsable version counts as the newest).
pub fn api_at_least(major: u32, minor: u32) -> bool {
    let version = current().api_version;
    let mut parts = version.split('.').map(|p| p.parse::<u32>());
    match (parts.next(), parts.next()) {
        (Some(Ok(have_major)), Some(Ok(have_minor))) => (have_major, have_minor) >= (major, minor),
        _ => true,
    }
}

pub async fn scope<F: Future>(ctx: RequestContext, fut: F) -> F::Output {
    REQUEST.scope(ctx, fut).await
}
